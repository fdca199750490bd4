#!/usr/bin/python3
"""Probes of mechanism states and currents (issue 20, item 4) against NEURON 8.2.

Two small models, each run once in cablesim (`probes.variables`, float64 reports) and in NEURON
with the same dt and CVs (tests/neuron_models.py builds it; the probed variables are recorded
there with Vector.record):
  - builtin: a ball and stick, hh on the soma, pas on the dendrite, an expsyn on the dendrite
    driven by events, an iclamp on the soma; variables v, hh.m, hh.h, hh.n, hh.i (NEURON:
    ina + ik + il_hh, its three currents), syn.g (NEURON: ExpSyn g);
  - catalogue: Mainen's na and kv (tests/data/mod, compiled by `cablesim build-catalogue` and
    by nrnivmodl) on a soma; variables v, na.m, na.h, ina, ik, i_membrane;
  - imem: a ball and stick with hh everywhere, a clamp on the soma and a synapse on the
    dendrite, i_membrane at the soma and three places along the dendrite (NEURON:
    seg.i_membrane_ with cvode.use_fast_imem(1)); i_membrane is also in "builtin" (at the soma).
Each variable's report must exist with its unit, the voltage's layout (time axis, node ids,
element ids), and agree with NEURON: max |ours - NEURON| <= TOL[variable] over the samples at
t > 0 of the whole run, spikes included (currents at t = 0 are those of no step yet: cablesim
reports 0 there, see docs/model-format.md). Both run the same algorithm (backward Euler,
cnexp), so the differences are rounding's. Prints a table of max |diff| and the variable's
range per variable, and 'N passed, N failed'.

Usage: test_probe_variables.py --cablesim PATH --source-dir DIR --work-dir DIR
Exit: 0 all passed, 1 a check failed, 77 skipped (no NEURON / h5py / nrnivmodl).
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

# max |ours - NEURON| per variable, in its unit (the measured figures are a few orders below:
# see the printed table)
TOL = {"v": 1e-6, "hh.m": 1e-8, "hh.h": 1e-8, "hh.n": 1e-8, "hh.i": 1e-8, "syn.g": 1e-10,
       "na.m": 1e-8, "na.h": 1e-8, "ina": 1e-7, "ik": 1e-7, "i_membrane": 1e-8}
UNITS = {"v": "mV", "hh.m": "1", "hh.h": "1", "hh.n": "1", "hh.i": "mA/cm2", "syn.g": "uS",
         "na.m": "1", "na.h": "1", "ina": "mA/cm2", "ik": "mA/cm2", "i_membrane": "nA"}

SOMA = {"branch": 0, "pos": 0.5}
BUILTIN = {
    "run": {"tfinal": 20.0, "dt": 0.025, "seed": 1, "report_precision": "double"},
    "populations": [{
        "name": "cell", "count": 2,
        "morphology": {"generator": "ball_and_stick", "soma_radius": 9.0, "dend_length": 200.0,
                       "dend_radius": 1.0, "dend_cvs": 4},
        "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0,
                       "mechanisms": [{"name": "hh", "region": "soma"},
                                      {"name": "pas", "region": "dend", "params": {"g": 0.0001, "e": -65.0}}]},
        "synapses": [{"name": "syn", "mechanism": "expsyn", "location": {"branch": 1, "pos": 0.3},
                      "params": {"tau": 2.0, "e": 0.0}}],
        "stimuli": [{"mechanism": "iclamp", "location": SOMA, "cells": [0],
                     "params": {"delay": 2.0, "duration": 15.0, "amplitude": 0.1}}],
        "detector": {"location": SOMA, "threshold": -10.0},
        "probes": {"cells": "all", "locations": [SOMA], "interval": 0.05,
                   "variables": ["v", "hh.m", "hh.h", "hh.n", "hh.i", "syn.g", "i_membrane"]}}],
    "events": [{"target": {"population": "cell", "cell": 1, "synapse": "syn"}, "time": 1.0, "weight": 0.004},
               {"target": {"population": "cell", "cell": 1, "synapse": "syn"}, "time": 6.0, "weight": 0.003},
               {"target": {"population": "cell", "cell": 0, "synapse": "syn"}, "time": 4.0, "weight": 0.002}]}

CATALOGUE = {
    "catalogues": ["nmodl.so"],
    "run": {"tfinal": 20.0, "dt": 0.025, "celsius": 37.0, "report_precision": "double"},
    "populations": [{
        "name": "cell", "count": 1,
        "morphology": {"generator": "soma", "radius": 10.0},
        "biophysics": {"cm": 1.0, "Ra": 150.0, "v_init": -70.0,
                       "mechanisms": [{"name": "pas", "params": {"g": 3.3e-5, "e": -70.0}},
                                      {"name": "na", "params": {"gbar": 2000.0}},
                                      {"name": "kv", "params": {"gbar": 400.0}}],
                       "ions": [{"ion": "na", "e": 50.0}, {"ion": "k", "e": -90.0}]},
        "stimuli": [{"mechanism": "iclamp", "location": SOMA, "cells": "all",
                     "params": {"delay": 2.0, "duration": 50.0, "amplitude": 0.1}}],
        "probes": {"cells": "all", "locations": [SOMA], "interval": 0.025,
                   "variables": ["v", "na.m", "na.h", "ina", "ik", "i_membrane"]}}]}

# i_membrane along a cell: hh everywhere, a clamp on the soma, a synapse on the dendrite, probes
# at the soma and along the dendrite (axial currents from both sides)
IMEM = {
    "run": {"tfinal": 20.0, "dt": 0.025, "seed": 1, "report_precision": "double"},
    "populations": [{
        "name": "cell", "count": 1,
        "morphology": {"generator": "ball_and_stick", "soma_radius": 9.0, "dend_length": 300.0,
                       "dend_radius": 1.0, "dend_cvs": 5},
        "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0, "mechanisms": [{"name": "hh"}]},
        "synapses": [{"name": "syn", "mechanism": "expsyn", "location": {"branch": 1, "pos": 0.5},
                      "params": {"tau": 2.0, "e": 0.0}}],
        "stimuli": [{"mechanism": "iclamp", "location": SOMA, "cells": "all",
                     "params": {"delay": 2.0, "duration": 15.0, "amplitude": 0.2}}],
        "probes": {"cells": "all", "interval": 0.025,
                   "locations": [SOMA, {"branch": 1, "pos": 0.1}, {"branch": 1, "pos": 0.5},
                                 {"branch": 1, "pos": 0.9}],
                   "variables": ["v", "i_membrane"]}}],
    "events": [{"target": {"population": "cell", "cell": 0, "synapse": "syn"}, "time": 1.0, "weight": 0.01}]}


def neuron_refs(h, seg, name, syns):
    """NEURON pointers whose sum is variable `name` at segment seg."""
    if name == "v":
        return [seg._ref_v]
    if name == "hh.i":
        return [seg._ref_ina, seg._ref_ik, seg.hh._ref_il]
    if name == "syn.g":
        return [syns["syn"]._ref_g]
    if name == "i_membrane":
        return [seg._ref_i_membrane_]
    if name in ("ina", "ik"):
        return [getattr(seg, "_ref_" + name)]
    mech, state = name.split(".")
    return [getattr(getattr(seg, mech), "_ref_" + state)]


def run_neuron(nm, model):
    import numpy as np
    net = nm.NeuronNetwork(model, with_probes=False)
    h = net.h
    h.cvode.use_fast_imem(1)
    pop = model["populations"][0]
    P = net.pops[pop["name"]]
    recs = {}  # variable -> [per probe: [vectors to sum]]
    for var in pop["probes"]["variables"]:
        cols = []
        for ci in range(int(pop["count"])):
            for loc in pop["probes"]["locations"]:
                sec, x = net.loc(P, ci, loc)
                vecs = []
                for ref in neuron_refs(h, sec(x), var, P["syn"][ci] if P["syn"] else {}):
                    vec = h.Vector()
                    vec.record(ref, sec=sec)
                    vecs.append(vec)
                cols.append(vecs)
        recs[var] = cols
    net.init()
    net.advance()
    t = np.array(net.tvec.to_python())
    out = {var: np.array([sum(np.array(v.to_python()) for v in vecs) for vecs in cols]).T
           for var, cols in recs.items()}
    net.close()
    h.cvode.use_fast_imem(0)
    return t, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.source_dir, "tests"))
    import test_nmodl_neuron as tn
    tools = tn.neuron_tools()
    if not tools:
        return 77
    nm, h, nrnivmodl = tools
    import h5py
    import numpy as np
    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "mod"))
    for f in ("na.mod", "kv.mod"):
        shutil.copy(os.path.join(args.source_dir, "tests", "data", "mod", f), os.path.join(work, "mod"))
    p = subprocess.run([args.cablesim, "build-catalogue", os.path.join(work, "mod"), "-o",
                        os.path.join(work, "nmodl.so"), "--cuda", "off"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        print(p.stdout[-3000:])
        print("FAIL: cablesim build-catalogue exited %d" % p.returncode)
        return 1
    os.makedirs(os.path.join(work, "nrn"))
    p = subprocess.run(tn.debian_nrnivmodl(nrnivmodl, work) + sorted(glob.glob(os.path.join(work, "mod", "*.mod"))),
                       cwd=os.path.join(work, "nrn"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lib = glob.glob(os.path.join(work, "nrn", "*", ".libs", "libnrnmech.so")) + \
        glob.glob(os.path.join(work, "nrn", "*", "libnrnmech.so"))
    if not lib:
        print(p.stdout[-3000:])
        print("FAIL: nrnivmodl exited %d" % p.returncode)
        return 1
    h.nrn_load_dll(lib[0])

    checks, table = [], []

    def check(what, ok, detail=""):
        checks.append(bool(ok))
        print("%s %s %s" % ("PASS" if ok else "FAIL", what, detail), flush=True)
        return ok

    for name, model in (("builtin", BUILTIN), ("catalogue", CATALOGUE), ("imem", IMEM)):
        path = os.path.join(work, name + ".json")
        with open(path, "w") as f:
            json.dump(model, f, indent=1)
        out = os.path.join(work, name + ".h5")
        p = subprocess.run([args.cablesim, "run", path, "-o", out, "--quiet"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if not check("%s: cablesim exit 0" % name, p.returncode == 0, "(%d)" % p.returncode):
            print(p.stdout[-3000:])
            continue
        # probes observe: the same model without its variables gives the same voltages, bit for bit
        bare = json.loads(json.dumps(model))
        del bare["populations"][0]["probes"]["variables"]
        with open(path[:-5] + "_bare.json", "w") as f:
            json.dump(bare, f)
        p = subprocess.run([args.cablesim, "run", path[:-5] + "_bare.json", "-o", out[:-3] + "_bare.h5", "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if check("%s: cablesim exit 0 without variables" % name, p.returncode == 0, "(%d)" % p.returncode):
            with h5py.File(out, "r") as f, h5py.File(out[:-3] + "_bare.h5", "r") as g:
                pname = model["populations"][0]["name"]
                same = f["report"][pname]["data"][()].tobytes() == g["report"][pname]["data"][()].tobytes()
                same &= all(f["spikes"][pname][k][()].tobytes() == g["spikes"][pname][k][()].tobytes()
                            for k in ("timestamps", "node_ids"))
                check("%s: the voltages and spikes without the variables' probes are the same bit for bit" % name,
                      same)
        t_nrn, ref = run_neuron(nm, model)
        pop = model["populations"][0]
        pname = pop["name"]
        dt = float(model["run"]["dt"])
        stride = int(round(float(pop["probes"]["interval"]) / dt))
        with h5py.File(out, "r") as f:
            vmap = f["report"][pname]["mapping"]
            for var in pop["probes"]["variables"]:
                g = f["report"][pname] if var == "v" else f["report"][pname].get(var)
                if not check("%s: report of %s present" % (name, var), g is not None and "data" in g):
                    continue
                unit = g["data"].attrs.get("units")
                unit = unit.decode() if isinstance(unit, bytes) else unit
                check("%s: %s units" % (name, var), unit == UNITS[var], "(%r, expected %r)" % (unit, UNITS[var]))
                same = all(np.array_equal(g["mapping"][k][()], vmap[k][()])
                           for k in ("node_ids", "index_pointers", "element_ids", "time"))
                if var == "syn.g":  # element ids name the synapse's CV (the mapping's others the voltage's)
                    same = all(np.array_equal(g["mapping"][k][()], vmap[k][()])
                               for k in ("node_ids", "index_pointers", "time"))
                check("%s: %s mapping as the voltage's" % (name, var), same)
                ours = np.array(g["data"][()], dtype=float)
                theirs = ref[var][::stride][:ours.shape[0]]
                t = t_nrn[::stride][:ours.shape[0]]
                keep = t > 0
                d = float(np.abs(ours[keep] - theirs[keep]).max())
                rng = float(theirs[keep].max() - theirs[keep].min())
                table.append((name, var, UNITS[var], d, rng, TOL[var]))
                check("%s: %s vs NEURON" % (name, var), d <= TOL[var] and rng > 0,
                      "(max |diff| %.3g <= %.3g %s; range %.3g)" % (d, TOL[var], UNITS[var], rng))
    print("\n| model | variable | unit | max abs diff vs NEURON | range | tolerance |")
    print("|---|---|---|---|---|---|")
    for r in table:
        print("| %s | %s | %s | %.3g | %.3g | %.3g |" % r)
    nfail = checks.count(False)
    print("%d passed, %d failed" % (len(checks) - nfail, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
