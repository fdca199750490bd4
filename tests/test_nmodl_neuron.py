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

MODELS = {"mod": ["mainen_na_kv", "mainen_km", "kole_ih", "kole_ih_derivimplicit", "exp2syn_ring", "na_accumulate",
                  "hay_soma", "hhkin_soma", "cplsyn_ring", "tpulse_two_synapses"],
          "mod_bmtk": ["bmtk_allen_soma", "bmtk_nav_soma", "bmtk_stp2syn"]}
# files cablesim does not compile yet, with the words of their one-line error
NOT_YET = {}
# NEURON's own copies of cells cablesim has built in: the folder compiles, the file is skipped
# with one note (bmtk's vecevent.mod is NEURON's VecStim, built into both)
SKIPPED_BUILTIN = {"vecevent.mod": "VecStim"}
NEURON_BUILTIN = {"exp2syn.mod", "vecevent.mod"}


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


def check_variables(name, path, args, nm, res, checks):
    """Traces of the probes' other variables (cai, eca, ...): ours against NEURON coarse, RMS and
    max within NEURON's own coarse-fine difference (or 1e-9 of the trace's scale, for a variable
    that the refinement leaves unchanged)."""
    import h5py
    import numpy as np
    import test_neuron_agreement as agree
    model = nm.load_model(path)
    pop = model["populations"][0]
    pname = pop["name"]
    co, fi = res
    dt = float(model["run"]["dt"])
    stride = int(round(float(pop["probes"].get("interval", dt)) / dt))
    t_co = co["t"][::stride]
    for var, ref_all in co[pname]["vars"].items():
        with h5py.File(os.path.join(args.work_dir, name + ".h5"), "r") as f:
            ours_all = np.array(f["report"][pname][var]["data"][()], dtype=float)
        n = min(len(t_co), ours_all.shape[0])
        for k in range(ours_all.shape[1]):
            ours, ref = ours_all[:n, k], ref_all[::stride][:n, k]
            fine = np.interp(t_co[:n], fi["t"], fi[pname]["vars"][var][:, k])
            floor = 1e-9 * float(np.abs(ref).max())
            d, dcf = ours - ref, ref - fine
            rms_o, rms_cf = float(np.sqrt(np.mean(d ** 2))), max(float(np.sqrt(np.mean(dcf ** 2))), floor)
            max_o, max_cf = float(np.abs(d).max()), max(float(np.abs(dcf).max()), floor)
            agree.check(checks, name, "%s probe %d RMS" % (var, k), rms_o <= rms_cf,
                        "(ours-NEURON %.3g <= NEURON coarse-fine %.3g; range %.4g..%.4g)" % (
                            rms_o, rms_cf, float(ref.min()), float(ref.max())))
            agree.check(checks, name, "%s probe %d max" % (var, k), max_o <= max_cf,
                        "(ours-NEURON %.3g <= NEURON coarse-fine %.3g)" % (max_o, max_cf))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--mod-subdir", default="mod", help="the folder of tests/data with the .mod files")
    ap.add_argument("--models", default=None)
    args = ap.parse_args(argv)
    args.models = args.models or ",".join(MODELS[args.mod_subdir])
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
    all_mods = sorted(glob.glob(os.path.join(args.source_dir, "tests", "data", args.mod_subdir, "*.mod")))
    for f in all_mods:
        if os.path.basename(f) not in NOT_YET:
            shutil.copy(f, mod_dir)

    p = subprocess.run([args.cablesim, "build-catalogue", mod_dir, "-o", os.path.join(work, "nmodl.so"),
                        "--cuda", "off"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout.strip())
    if p.returncode != 0:
        print("FAIL: cablesim build-catalogue exited %d" % p.returncode)
        return 1
    for f, cell in SKIPPED_BUILTIN.items():
        if os.path.exists(os.path.join(mod_dir, f)):
            note = "%s: defines %s, which is built into cablesim: skipped" % (os.path.join(mod_dir, f), cell)
            if note not in p.stdout:
                print("FAIL: %s: no note '%s'" % (f, note))
                return 1
            print("PASS: %s: the built-in %s serves (one note)" % (f, cell))
    print("PASS: cablesim build-catalogue compiles the %d files of tests/data/%s" % (
        len(os.listdir(mod_dir)), args.mod_subdir))
    for f in all_mods:  # the others each end with their one line
        words = NOT_YET.get(os.path.basename(f))
        if not words:
            continue
        d = os.path.join(work, "not_yet_" + os.path.basename(f))
        os.makedirs(d)
        shutil.copy(f, d)
        p = subprocess.run([args.cablesim, "build-catalogue", d, "-o", os.path.join(d, "x.so"), "--cuda", "off"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        err = p.stderr.strip()
        if p.returncode != 1 or "\n" in err or not all(w in err for w in words):
            print("FAIL: %s: expected one line with %s, got rc %d: %r" % (os.path.basename(f), words, p.returncode, err))
            return 1
        print("PASS: %s: not yet (%s)" % (os.path.basename(f), err))
    # exp2syn.mod is NEURON's own src/nrnoc/exp2syn.mod, built into NEURON: nrnivmodl takes the others
    nrn_mods = [f for f in sorted(glob.glob(os.path.join(mod_dir, "*.mod"))) if os.path.basename(f) not in NEURON_BUILTIN]
    if not load_nrn_mods(h, nrnivmodl, nrn_mods, work):
        return 1

    checks, spike_rows, trace_rows = [], [], []
    for name in args.models.split(","):
        src = os.path.join(args.source_dir, "tests", "data", "nmodl_models", name + ".json")
        path = os.path.join(work, name + ".json")  # beside nmodl.so, which it names
        shutil.copy(src, path)
        res = agree.run_model(name, args, nm, checks, spike_rows, trace_rows, path=path)
        if res:
            check_variables(name, path, args, nm, res, checks)
    table = agree.format_tables(spike_rows, trace_rows, checks)
    print(table)
    with open(os.path.join(work, "nmodl_neuron.md"), "w") as f:
        f.write(table)
    nfail = sum(1 for c in checks if not c[2])
    print("%d passed, %d failed" % (len(checks) - nfail, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
