#!/usr/bin/python3
"""Artificial cells and event constructs against NEURON on the same models (issue 27).

Models (tests/data/artificial_models/):
  builtin_net    NEURON's NetStim, VecStim (times from a file), IntFire1, IntFire2 and IntFire4,
                 built into cablesim, in a network that ends on an hh soma (expsyn);
  catalogue_net  tests/data/mod_events/*.mod compiled by `cablesim build-catalogue` and by
                 NEURON's nrnivmodl: an ARTIFICIAL_CELL with net_send flags (ArtBurst), one
                 with a weight vector and NET_RECEIVE's INITIAL (ArtFacil, "weight" lists), a
                 density mechanism that reads t (tpulse) on the hh soma.
NEURON runs the same model (tests/neuron_models.py; VecStim from NEURON's vecevent.mod,
tests/data/mod_events/neuron_only/), with cablesim's spike convention for the soma (the crossing
time interpolated inside the step: NeuronNetwork's interpolated_spikes), fixed step, secondorder 0.

Checks, per population and cell: the same number of spikes; artificial cells' spike times
equal to NEURON's within 1e-9 ms (both deliver events at their exact times: the same
arithmetic); the soma's within SOMA_TOL ms, and its voltage within V_TOL mV over the run.

Usage: test_artificial_neuron.py --cablesim PATH --source-dir DIR --work-dir DIR
Exit: 0 all passed, 1 a check failed, 77 skipped (no NEURON / h5py / nrnivmodl).
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys

MODELS = ["builtin_net", "catalogue_net"]
ART_TOL = 1e-9    # [ms] artificial cells: event times, the same arithmetic as NEURON's
SOMA_TOL = 1e-6   # [ms] the hh soma's interpolated crossing times
V_TOL = 1e-6      # [mV] the soma's voltage


def spikes_by_cell(path, pop, count):
    import h5py
    out = [[] for _ in range(count)]
    with h5py.File(path, "r") as f:
        if pop in f["spikes"]:
            g = f["spikes"][pop]
            for i, t in zip(g["node_ids"][:], g["timestamps"][:]):
                out[int(i)].append(float(t))
    return [sorted(x) for x in out]


def voltage(path, pop):
    import h5py
    with h5py.File(path, "r") as f:
        return f["report"][pop]["data"][:, 0].astype(float)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.source_dir, "tests"))
    import test_nmodl_neuron as tnn
    tools = tnn.neuron_tools()
    if not tools:
        return 77
    nm, h, nrnivmodl = tools
    import numpy as np
    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data = os.path.join(os.path.abspath(args.source_dir), "tests", "data")
    mods = os.path.join(data, "mod_events")
    p = subprocess.run([args.cablesim, "build-catalogue", mods, "-o", os.path.join(work, "ev.so"), "--cuda", "off"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout.strip())
    if p.returncode:
        print("FAIL: cablesim build-catalogue exited %d" % p.returncode)
        return 1
    nrn_mods = sorted(glob.glob(os.path.join(mods, "*.mod"))) + [os.path.join(mods, "neuron_only", "vecevent.mod")]
    if not tnn.load_nrn_mods(h, nrnivmodl, nrn_mods, work):
        return 1

    nfail = nchecks = 0

    def check(ok, what):
        nonlocal nfail, nchecks
        nchecks += 1
        nfail += 0 if ok else 1
        print("%s: %s" % ("ok  " if ok else "FAIL", what))
        return ok

    for name in MODELS:
        src = os.path.join(data, "artificial_models", name + ".json")
        path = os.path.join(work, name + ".json")  # beside ev.so and the times file it names
        shutil.copy(src, path)
        shutil.copy(os.path.join(data, "artificial_models", "vecstim_times.txt"), work)
        out = os.path.join(work, name + ".h5")
        p = subprocess.run([args.cablesim, "run", path, "-o", out, "-q"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode:
            check(False, "%s: cablesim exit code %d: %s" % (name, p.returncode, p.stdout.strip()[-500:]))
            continue
        model = nm.load_model(path)
        model["_dir"] = work
        net = nm.NeuronNetwork(model, interpolated_spikes=True)
        net.init()
        net.advance()
        res = net.results()
        net.close()
        del net
        for pop in model["populations"]:
            pn, count = pop["name"], int(pop["count"])
            ours = spikes_by_cell(out, pn, count)
            ref = [sorted(x.tolist()) for x in res[pn]["spikes"]]
            art = "artificial" in pop
            tol = ART_TOL if art else SOMA_TOL
            counts = ([len(x) for x in ours], [len(x) for x in ref])
            if not check(counts[0] == counts[1] and sum(counts[0]) > 0,
                         "%s/%s: spike counts (ours %s, NEURON %s)" % (name, pn, counts[0], counts[1])):
                continue
            d = max((abs(a - b) for o, r in zip(ours, ref) for a, b in zip(o, r)), default=0.0)
            check(d <= tol, "%s/%s: %d spike times, max |ours - NEURON| = %.3g ms <= %g ms"
                  % (name, pn, sum(counts[0]), d, tol))
            if not art:
                v = voltage(out, pn)
                vr = res[pn]["v"][:, 0]
                n = min(len(v), len(vr))
                dv = float(np.abs(v[:n] - vr[:n]).max())
                check(dv <= V_TOL, "%s/%s: voltage over %d samples, max |ours - NEURON| = %.3g mV <= %g mV"
                      % (name, pn, n, dv, V_TOL))
    print("%d passed, %d failed" % (nchecks - nfail, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
