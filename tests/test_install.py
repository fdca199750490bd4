#!/usr/bin/python3
"""`cmake --install` gives another project a usable solver library: installs into a temporary
prefix, then builds and runs the installed example twice, once through CMake's
find_package(cablesim_solver) and once through pkg-config, checking its output. The installed
CLI's `build-catalogue` compiles a .mod file with the installed NMODL compiler."""
import argparse
import os
import shutil
import subprocess
import sys

CONSUMER = """cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(cablesim_solver 0.1 REQUIRED)
add_executable(app {example})
target_link_libraries(app PRIVATE cablesim::cablesim_solver m)
"""


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    return r.returncode, r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()
    build = os.path.dirname(os.path.abspath(a.cablesim))
    work = os.path.abspath(a.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, "prefix")
    passed = failed = 0

    def check(ok, what, detail=""):
        nonlocal passed, failed
        print(("ok   " if ok else "FAIL ") + what + ("" if ok else ": " + detail[-2000:]))
        passed, failed = passed + bool(ok), failed + (not ok)
        return ok

    rc, out = sh(["cmake", "--install", build, "--prefix", prefix])
    if not check(rc == 0, "cmake --install", out):
        print(f"{passed} passed, {failed} failed")
        return 1
    inc = os.path.join(prefix, "include", "cablesim")
    for h in ("cs_solver.h", "cs_thomas_gpu.h", "cs_hines_gpu.h"):
        check(os.path.isfile(os.path.join(inc, h)), "installed header " + h)
    libdir = next((os.path.join(prefix, d) for d in ("lib", "lib64", "lib/x86_64-linux-gnu")
                   if os.path.isdir(os.path.join(prefix, d, "cmake", "cablesim_solver"))), None)
    check(libdir is not None, "installed CMake package config")
    example = os.path.join(prefix, "share", "cablesim", "example", "solver_example.c")
    check(os.path.isfile(example), "installed example")

    # 1. CMake find_package
    proj = os.path.join(work, "consumer")
    os.makedirs(proj)
    with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
        f.write(CONSUMER.format(example=example))
    rc, out = sh(["cmake", "-S", proj, "-B", os.path.join(proj, "build"), "-DCMAKE_PREFIX_PATH=" + prefix])
    if check(rc == 0, "consumer configures with find_package(cablesim_solver)", out):
        rc, out = sh(["cmake", "--build", os.path.join(proj, "build")])
        if check(rc == 0, "consumer builds", out):
            rc, out = sh([os.path.join(proj, "build", "app")])
            check(rc == 0 and "thomas cpu: max |x - 1|" in out and "hines cpu: x[0]" in out,
                  "consumer (CMake) runs and solves", out)
            print("     " + out.strip().replace("\n", "\n     "))

    # 2. pkg-config
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir or prefix, "pkgconfig"))
    rc, flags = sh(["pkg-config", "--cflags", "--libs", "cablesim_solver"], env=env)
    if check(rc == 0 and "-lcablesim_solver" in flags, "pkg-config --cflags --libs cablesim_solver", flags):
        exe = os.path.join(work, "app_pc")
        rc, out = sh(["cc", "-std=c11", example, "-o", exe] + flags.split() + ["-lm"])
        if check(rc == 0, "consumer builds with pkg-config", out):
            rc, out = sh([exe])
            check(rc == 0 and "hines cpu: x[0]" in out, "consumer (pkg-config) runs and solves", out)
    # 3. the installed CLI's NMODL compiler (PREFIX/share/cablesim/nmodl and .../include)
    share = os.path.join(prefix, "share", "cablesim")
    check(os.path.isfile(os.path.join(share, "nmodl", "cs_nmodl.py")) and
          os.path.isfile(os.path.join(share, "include", "cs_mech.h")), "installed NMODL compiler and cs_mech.h")
    mods = os.path.join(work, "mods")
    os.makedirs(mods)
    shutil.copy(os.path.join(a.source_dir, "tests", "data", "mod", "Ih.mod"), mods)
    cat = os.path.join(work, "ih.so")
    rc, out = sh([os.path.join(prefix, "bin", "cablesim"), "build-catalogue", mods, "-o", cat, "--cuda", "off"],
                 env=dict({k: v for k, v in os.environ.items() if k != "CABLESIM_NMODL_DIR"},
                          LD_LIBRARY_PATH=libdir or os.path.join(prefix, "lib")))
    check(rc == 0 and os.path.isfile(cat) and "Ih" in out, "installed cablesim build-catalogue", out)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
