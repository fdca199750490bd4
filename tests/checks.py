"""What the Python tests of the CLI share: their command line (--cablesim, --source-dir,
--work-dir, as tests/CMakeLists.txt passes them) and a tally of named checks."""
import argparse
import os
import re
import shutil
import subprocess
import sys


def arguments():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    return ap.parse_args()


def generate_c(source_dir, work, mods):
    """The NMODL compiler's C files for mods ({name: .mod text}, written to work/mod after work is
    emptied) into work/gen (no CUDA, nothing compiled): the finished process (its returncode,
    stderr) and the folder."""
    shutil.rmtree(work, ignore_errors=True)
    mod_dir, gen = os.path.join(work, "mod"), os.path.join(work, "gen")
    os.makedirs(mod_dir)
    for name, text in mods.items():
        with open(os.path.join(mod_dir, name + ".mod"), "w") as f:
            f.write(text)
    r = subprocess.run([sys.executable, os.path.join(source_dir, "nmodl", "cs_nmodl.py"), mod_dir,
                        "-o", os.path.join(work, "gen.so"), "--gen-only", gen, "--cuda", "off",
                        "--include", os.path.join(source_dir, "mechanisms")], capture_output=True, text=True)
    return r, gen


def generated_function(t, source_dir, work, name, mod, start):
    """One function of a mechanism's generated NAME_body.h (generate_c): its text from the line
    that starts with `start` to its closing brace, checked by the tally t to generate, and {state
    slot: its STATE or ASSIGNED variable's name} from INITIAL's zeroing; None when it did not
    generate."""
    r, gen = generate_c(source_dir, work, {name: mod})
    t(r.returncode == 0, "the mechanism generates (%s)" % r.stderr.strip()[:200])
    if r.returncode:
        return None
    with open(os.path.join(gen, name + "_body.h")) as f:
        text = f.read()
    init = text[text.index("_init_one"):]
    body = text[text.index(start):]
    return body[:body.index("\n}\n")], {int(j): n for j, n in re.findall(r"_S\((\d+)\) = 0\.0; /\* (\w+) \*/", init)}


def h5py_numpy():
    """(h5py, numpy), or None after printing why the test is skipped (its exit status is 77)."""
    try:
        import h5py
        import numpy as np
    except ImportError:
        print("skipped: h5py/numpy missing")
        return None
    return h5py, np


class Tally:
    """check(ok, what) prints PASS or FAIL and counts; summary() prints the counts and gives the
    exit status (1 when a check failed)."""

    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, ok, what):
        print(("PASS " if ok else "FAIL ") + what)
        self.passed, self.failed = self.passed + bool(ok), self.failed + (not ok)

    def summary(self):
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0
