#!/usr/bin/python3
"""Catalogue mechanisms against NEURON 8.2 on the same .mod files (issue 20, part 3).

tests/data/mod/*.mod (real files, provenance in its README) are compiled twice: by
`cablesim build-catalogue` (CPU only here) and by NEURON's `nrnivmodl`. Each model of
tests/data/nmodl_models/ (which loads the catalogue with "catalogues") is then run in NEURON
coarse, NEURON fine (dt/10, 9x the CVs) and cablesim, with the checks of
tests/test_neuron_agreement.py: spike counts equal, spike times and traces (RMS and max) within
NEURON's own coarse-vs-fine difference.

Usage: test_nmodl_neuron.py --cablesim PATH --source-dir DIR --work-dir DIR [--models a,b]
Exit: 0 all passed, 1 a check failed, 77 skipped (no NEURON / h5py / nrnivmodl).
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys

MODELS = ["mainen_na_kv", "mainen_km", "kole_ih", "kole_ih_derivimplicit", "exp2syn_ring", "na_accumulate", "hay_soma", "hhkin_soma",
          "tpulse_two_synapses"]
NEURON_BUILTIN = {"exp2syn.mod"}


def debian_nrnivmodl(path, work):
    """Debian 12's neuron-dev installs nrnmech_makefile and libnrniv.so in /usr/lib/nrn, where its
    nrnivmodl (which looks in /usr/bin and /usr/lib) does not find them: run a copy that names
    the right places. Returns the command (a list)."""
    d = os.path.dirname(os.path.realpath(path))
    fixed = "/usr/lib/nrn/nrnmech_makefile"
    if os.path.exists(os.path.join(d, "nrnmech_makefile")) or not os.path.exists(fixed):
        return [path]
    with open(path) as f:
        text = f.read()
    out = os.path.join(work, "nrnivmodl")
    with open(out, "w") as f:
        f.write(text.replace('"${bindir}/nrnmech_makefile"', '"%s"' % fixed))
    os.chmod(out, 0o755)
    return [out, "-loadflags", "-L/usr/lib/nrn -Wl,-rpath,/usr/lib/nrn"]


def load_nrn_mods(h, nrnivmodl, mods, work):
    """Compile .mod files (absolute paths) with NEURON's nrnivmodl in WORK/nrn and load the
    library into h; False after printing why it failed."""
    nrn_dir = os.path.join(work, "nrn")
    os.makedirs(nrn_dir)
    p = subprocess.run(debian_nrnivmodl(nrnivmodl, work) + mods, cwd=nrn_dir, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    # the library is what the test loads (Debian's `special` executable may fail to link: its
    # InterViews header is not packaged)
    lib = glob.glob(os.path.join(nrn_dir, "*", ".libs", "libnrnmech.so")) + \
        glob.glob(os.path.join(nrn_dir, "*", "libnrnmech.so"))
    if not lib:
        print(p.stdout[-3000:])
        print("FAIL: nrnivmodl exited %d" % p.returncode)
        return False
    h.nrn_load_dll(lib[0])
    return True


def neuron_tools():
    """(neuron_models, NEURON's hoc interpreter, nrnivmodl's path) for the NEURON comparisons of
    NMODL files (tests/ on sys.path), or None after the line saying why the test is skipped."""
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
        import neuron_models as nm
        h = nm.neuron_h()
    except Exception as e:  # noqa: BLE001
        print("SKIP: NEURON / h5py / numpy not importable: %s" % e)
        return None
    nrnivmodl = shutil.which("nrnivmodl")
    if not nrnivmodl:
        print("SKIP: nrnivmodl not found (Debian package neuron-dev; scripts/deps.sh test installs it)")
        return None
    return nm, h, nrnivmodl


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.source_dir, "tests"))
    tools = neuron_tools()
    if not tools:
        return 77
    nm, h, nrnivmodl = tools
    import test_neuron_agreement as agree
    work = os.path.abspath(args.work_dir)
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    mod_dir = os.path.join(work, "mod")
    os.makedirs(mod_dir)
    for f in glob.glob(os.path.join(args.source_dir, "tests", "data", "mod", "*.mod")):
        shutil.copy(f, mod_dir)

    p = subprocess.run([args.cablesim, "build-catalogue", mod_dir, "-o", os.path.join(work, "nmodl.so"),
                        "--cuda", "off"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout.strip())
    if p.returncode != 0:
        print("FAIL: cablesim build-catalogue exited %d" % p.returncode)
        return 1
    # exp2syn.mod is NEURON's own src/nrnoc/exp2syn.mod, built into NEURON: nrnivmodl takes the others
    nrn_mods = [f for f in sorted(glob.glob(os.path.join(mod_dir, "*.mod"))) if os.path.basename(f) not in NEURON_BUILTIN]
    if not load_nrn_mods(h, nrnivmodl, nrn_mods, work):
        return 1

    checks, spike_rows, trace_rows = [], [], []
    for name in args.models.split(","):
        src = os.path.join(args.source_dir, "tests", "data", "nmodl_models", name + ".json")
        path = os.path.join(work, name + ".json")  # beside nmodl.so, which it names
        shutil.copy(src, path)
        agree.run_model(name, args, nm, checks, spike_rows, trace_rows, path=path)
    table = agree.format_tables(spike_rows, trace_rows, checks)
    print(table)
    with open(os.path.join(work, "nmodl_neuron.md"), "w") as f:
        f.write(table)
    nfail = sum(1 for c in checks if not c[2])
    print("%d passed, %d failed" % (len(checks) - nfail, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
