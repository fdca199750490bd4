#!/usr/bin/python3
"""The five Allen perisomatic cells of bmtk's examples against NEURON through bmtk (issue 27),
and one all-active fit file.

Each cell (tests/data/allen: morphology + *_fit.json, provenance in its PROVENANCE.md) is loaded
by cablesim's Allen importer (an "allen" population, bmtk's discretisation bmtk_dl 20 µm),
driven by a current step at the soma, and run for 1 s (the all-active one 300 ms) at
dt = 0.025 ms. The reference is NEURON 9 with the cell built by bmtk's own code
(tests/allen_neuron_ref.py in the venv of scripts/ref-venv.sh) at dt and dt/2. Checks per cell:
  - spike counts equal, spike times within 0.1 ms (both interpolated at -10 mV);
  - v and cai at the soma: RMS and max of ours − NEURON(dt) within NEURON's own dt-refinement
    spread, NEURON(dt) − NEURON(dt/2) (RMS and max).
CABLESIM_ALLEN_CELLS=name,name... picks cells (default all six; about 4 minutes on 2 cores, most of it
NEURON: nrnivmodl of the 15 channels the genomes name, and two runs per cell).
Exit: 0 all passed, 1 a check failed, 77 skipped (no reference venv / h5py).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

P, A = "aibs_perisomatic", "aibs_allactive"
# (name, morphology, fit file, step amplitude [nA], processing, run length [ms]); the last: an
# all-active fit file (per-section Ra, cm, e_pas; axon stubs as thick as the axon, at soma(1)) on
# one of the perisomatic cells' morphologies, 300 ms (its NaV everywhere makes it slow)
CELLS = [("Scnn1a", "Scnn1a_473845048_m.swc", "472363762_fit.json", 0.2, P, 1000.0),
         ("Rorb", "Rorb_325404214_m.swc", "473863510_fit.json", 0.2, P, 1000.0),
         ("Nr5a1", "Nr5a1_471087815_m.swc", "473863035_fit.json", 0.2, P, 1000.0),
         ("PV1", "Pvalb_470522102_m.swc", "472912177_fit.json", 0.3, P, 1000.0),
         ("PV2", "Pvalb_469628681_m.swc", "473862421_fit.json", 0.3, P, 1000.0),
         ("allactive", "Rorb_325404214_m.swc", "318331342_fit.json", 0.8, A, 300.0)]
DT, DELAY, DUR, DL = 0.025, 100.0, 800.0, 20.0  # [ms], [µm]
INTERVAL = 0.1   # [ms] probe interval
SPIKE_TOL = 0.1  # [ms] the tolerance on spike times


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()
    try:
        import h5py
        import numpy as np
    except ImportError as e:
        print("SKIP: h5py / numpy not importable: %s" % e)
        return 77
    p = run([os.path.join(a.source_dir, "scripts", "ref-venv.sh")])
    py = p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip() else ""
    if not py or not os.path.exists(py):
        print(p.stdout[-2000:])
        print("SKIP: the reference venv (bmtk, NEURON 9) could not be made")
        return 77
    work = os.path.abspath(a.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "mod"))
    data = os.path.join(os.path.abspath(a.source_dir), "tests", "data")
    # the channels the cells' genomes name (15 of bmtk's 25 files: both compilers take less time)
    pick = os.environ.get("CABLESIM_ALLEN_CELLS")
    cells = [c for c in CELLS if not pick or c[0] in pick.split(",")]
    needed = set()
    for c in cells:
        with open(os.path.join(data, "allen", c[2])) as f:
            needed |= {g["mechanism"] for g in json.load(f)["genome"] if g.get("mechanism")}
    for m in sorted(needed):
        shutil.copy(os.path.join(data, "mod_bmtk", m + ".mod"), os.path.join(work, "mod"))
    p = run([a.cablesim, "build-catalogue", os.path.join(work, "mod"), "-o", os.path.join(work, "mech.so"),
             "--cuda", "off"])
    if p.returncode != 0:
        print(p.stdout)
        print("FAIL: cablesim build-catalogue")
        return 1
    nrn = os.path.join(work, "nrn")
    os.makedirs(nrn)
    env = dict(os.environ, PATH=os.path.dirname(py) + os.pathsep + os.environ.get("PATH", ""))
    p = run(["nrnivmodl", os.path.join(work, "mod")], cwd=nrn, env=env)
    if p.returncode != 0:
        print(p.stdout[-3000:])
        print("SKIP: NEURON 9's nrnivmodl failed (a compiler for NEURON's mechanisms is missing?)")
        return 77

    fails, rows = [], []

    def check(cell, what, ok, detail):
        print("%s %s: %s %s" % ("PASS" if ok else "FAIL", cell, what, detail), flush=True)
        if not ok:
            fails.append((cell, what, detail))

    for name, swc, fit, amp, proc, tstop in cells:
        model = {"catalogues": [os.path.join(work, "mech.so")],
                 "run": {"tfinal": tstop, "dt": DT, "report_precision": "double"},
                 "discretization": {"bmtk_dl": DL},
                 "populations": [{
                     "name": "cell", "count": 1,
                     "allen": {"fit": os.path.join(data, "allen", fit), "morphology": os.path.join(data, "allen", swc),
                               "processing": proc},
                     "stimuli": [{"mechanism": "iclamp", "location": {"branch": 0, "pos": 0.5}, "cells": "all",
                                  "params": {"delay": DELAY, "duration": DUR, "amplitude": amp}}],
                     "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0},
                     "probes": {"cells": "all", "locations": [{"branch": 0, "pos": 0.5}], "interval": INTERVAL,
                                "variables": ["v", "cai"]}}]}
        mpath, out = os.path.join(work, name + ".json"), os.path.join(work, name + ".h5")
        with open(mpath, "w") as f:
            json.dump(model, f, indent=1)
        p = run([a.cablesim, "run", mpath, "-o", out])
        if p.returncode != 0:
            check(name, "cablesim runs", False, p.stdout.strip().splitlines()[-1:])
            continue
        ref = os.path.join(work, name + "_neuron.json")
        p = run([py, os.path.join(a.source_dir, "tests", "allen_neuron_ref.py"), "--mechanisms", nrn,
                 "--fit", os.path.join(data, "allen", fit), "--swc", os.path.join(data, "allen", swc),
                 "--processing", proc, "--amp", str(amp), "--delay", str(DELAY), "--dur", str(DUR),
                 "--tstop", str(tstop), "--dt", str(DT), "--dl", str(DL), "--out", ref], env=env)
        if p.returncode != 0:
            print(p.stdout[-3000:])
            check(name, "NEURON through bmtk runs", False, "")
            continue
        with open(ref) as f:
            co, fi = json.load(f)["runs"]
        with h5py.File(out, "r") as f:
            ts = np.array(f["spikes/cell/timestamps"][()], dtype=float)
            ours = {"v": np.array(f["report/cell/data"][()], dtype=float)[:, 0],
                    "cai": np.array(f["report/cell/cai/data"][()], dtype=float)[:, 0]}
        sc, sf = np.array(co["spikes"]), np.array(fi["spikes"])
        check(name, "spike counts", len(ts) == len(sc) and len(sc) > 0,
              "(ours %d, NEURON dt %d, NEURON dt/2 %d)" % (len(ts), len(sc), len(sf)))
        n = min(len(ts), len(sc))
        d = float(np.abs(ts[:n] - sc[:n]).max()) if n else float("nan")
        dcf = float(np.abs(sc[:min(len(sc), len(sf))] - sf[:min(len(sc), len(sf))]).max()) if len(sf) else float("nan")
        check(name, "spike times", n > 0 and d <= SPIKE_TOL,
              "(max |ours - NEURON| %.3g ms <= %g ms; NEURON dt vs dt/2 %.3g ms)" % (d, SPIKE_TOL, dcf))
        row = {"cell": name, "spikes": len(ts), "d_spike": d, "d_spike_nrn": dcf}
        for var in ("v", "cai"):
            k1, k2 = int(round(INTERVAL / DT)), int(round(INTERVAL / (DT / 2)))
            ref_c = np.array(co[var])[::k1]
            ref_f = np.array(fi[var])[::k2]
            m = min(len(ours[var]), len(ref_c), len(ref_f))
            x, c, fn = ours[var][:m], ref_c[:m], ref_f[:m]
            floor = 1e-9 * float(np.abs(c).max())
            rms_o, rms_s = float(np.sqrt(np.mean((x - c) ** 2))), max(float(np.sqrt(np.mean((c - fn) ** 2))), floor)
            max_o, max_s = float(np.abs(x - c).max()), max(float(np.abs(c - fn).max()), floor)
            unit = "mV" if var == "v" else "mM"
            check(name, "%s RMS" % var, rms_o <= rms_s,
                  "(ours - NEURON %.3g %s <= NEURON dt vs dt/2 %.3g %s)" % (rms_o, unit, rms_s, unit))
            check(name, "%s max" % var, max_o <= max_s,
                  "(ours - NEURON %.3g %s <= NEURON dt vs dt/2 %.3g %s)" % (max_o, unit, max_s, unit))
            row.update({"rms_" + var: rms_o, "rms_nrn_" + var: rms_s, "max_" + var: max_o, "max_nrn_" + var: max_s})
        rows.append(row)

    print("\n| cell | spikes | max Δt spike [ms] | NEURON dt vs dt/2 [ms] | v RMS / NEURON's [mV] | "
          "v max / NEURON's [mV] | cai RMS / NEURON's [mM] | cai max / NEURON's [mM] |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %d | %.2g | %.2g | %.2g / %.2g | %.2g / %.2g | %.2g / %.2g | %.2g / %.2g |" % (
            r["cell"], r["spikes"], r["d_spike"], r["d_spike_nrn"], r["rms_v"], r["rms_nrn_v"], r["max_v"],
            r["max_nrn_v"], r["rms_cai"], r["rms_nrn_cai"], r["max_cai"], r["max_nrn_cai"]))
    print("%d cells, %d failed checks" % (len(cells), len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
