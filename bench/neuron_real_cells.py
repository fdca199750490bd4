#!/usr/bin/env python3
"""cablesim's CPU path against NEURON, per core, on the real-cell networks of bench/real_cells.py.

  /usr/bin/python3 bench/neuron_real_cells.py --models DIR --cablesim EXE [--only REGEX]
                                              [--reps 3] [--tfinal 20] [--md OUT.md] [--json OUT.json]

DIR is a folder written by `real_cells.py generate` (models + morph/ + networks.json). Every
network is built in NEURON from the same model JSON: tests/neuron_models.py's NeuronNetwork (the
builder the NEURON agreement test uses), with SWC morphologies added here. The SWC file is read
by bench/swc_branches.py, a port of cablesim's reader, so NEURON gets cablesim's branches: one
section per branch, its 3-D points as pt3d (radii as diameters), nseg = cablesim's CVs of the
branch (max_cv_length), children at the parent's distal end; cablesim's root branches (parent -1,
which share the zero-area root node) are joined at the first root section's x=0 end. FlyWire's
labels 5 and 6 count in the region "all".

Timed (median of --reps): NEURON 8.2, 1 thread, `cvode.cache_efficient(1)`, `ParallelContext.psolve`
alone (build and finitialize outside the timer); cablesim `--threads 1`, `/metadata wall_seconds`.
Compartments are counted identically for both (cablesim's node count = NEURON's sum of nseg + 1
plus one root node per cell; asserted). Spike counts are compared (NEURON records the step's grid
time of a threshold crossing, cablesim interpolates inside the step: times differ by < dt when
the runs agree).
"""
import argparse
import datetime
import json
import os
import re
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
import neuron_models as nm  # noqa: E402
import real_cells  # noqa: E402
import swc_branches  # noqa: E402


class RealNetwork(nm.NeuronNetwork):
    """NeuronNetwork with SWC morphologies (paths relative to model_dir)."""

    def __init__(self, model, model_dir, **kw):
        orig_mb, orig_all = nm.morphology_branches, nm.REGION_TAGS["all"]

        def morphology_branches(morph):
            if "swc" not in morph:
                return orig_mb(morph)
            br = swc_branches.read_swc(os.path.join(model_dir, morph["swc"]), float(morph.get("scale", 1.0)),
                                       float(morph.get("min_radius", 0.0)))
            return [{"parent": b["parent"], "length": swc_branches.branch_length(b), "radius": 1.0, "tag": b["tag"],
                     "cvs": 0, "points": b["points"]} for b in br]

        nm.morphology_branches = morphology_branches
        nm.REGION_TAGS["all"] = set(range(256))
        try:
            super().__init__(model, **kw)
        finally:
            nm.morphology_branches = orig_mb
            nm.REGION_TAGS["all"] = orig_all

    def _build_cell(self, pname, ci, branches, ncv, bio):
        secs = super()._build_cell(pname, ci, branches, ncv, bio)
        root = None
        for bi, (b, sec) in enumerate(zip(branches, secs)):
            if "points" in b:
                sec.pt3dclear()
                for x, y, z, r in b["points"]:
                    sec.pt3dadd(x, y, z, 2.0 * r)
                sec.nseg = ncv[bi] * self.refine
            if b["parent"] < 0:
                if root is None:
                    root = sec
                else:
                    sec.connect(root(0), 0)  # cablesim: every root branch starts at the root node
        return secs


def neuron_time(model, model_dir, reps, usetable=False):
    net = RealNetwork(model, model_dir, nthread=1, cache_efficient=True, with_probes=False)
    net.h.usetable_hh = 1 if usetable else 0  # NEURON's default is 1 (rate tables); the builder sets 0
    nodes = net.nodes()
    assert nodes == net.neuron_nodes(), (nodes, net.neuron_nodes())
    walls, times = [], None
    for _ in range(reps):
        net.init()
        net.pc.set_maxstep(10)
        t0 = time.perf_counter()
        net.pc.psolve(net.tfinal)
        walls.append(time.perf_counter() - t0)
        res = net.results()
        t = sorted(x for name in net.pops for s in res[name]["spikes"] for x in s.tolist())
        if times is not None and t != times:
            raise RuntimeError("NEURON spikes differ between repetitions")
        times = t
    nstep = int(round(net.h.t / net.dt))
    net.close()
    del net
    return {"wall_seconds": statistics.median(walls), "wall_all": walls, "compartments": nodes, "steps": nstep,
            "cs_per_s": nodes * nstep / statistics.median(walls), "spikes": len(times), "spike_times": times}


def cablesim_time(exe, model_path, tfinal, reps, work):
    r = real_cells.timed(exe, model_path, "cpu", None, 1, tfinal, work, 3600, reps, 1e9)
    if r["status"] != "ok":
        raise RuntimeError("cablesim: " + r["message"])
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True)
    ap.add_argument("--cablesim", default=os.path.join(ROOT, "build", "cablesim"))
    ap.add_argument("--only", help="regex on network names (default: the alone-* and mixed-* networks)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tfinal", type=float, default=real_cells.TFINAL)
    ap.add_argument("--md")
    ap.add_argument("--json")
    a = ap.parse_args()
    with open(os.path.join(a.models, "networks.json")) as f:
        nets = json.load(f)["networks"]
    pat = re.compile(a.only or r"^(alone|mixed)-")
    nets = [n for n in nets if pat.search(n["name"])]
    work = tempfile.mkdtemp(prefix="neuron_real_")
    mach = real_cells.machine()
    rows, bad = [], []
    for n in nets:
        path = os.path.join(a.models, n["file"])
        with open(path) as f:
            model = json.load(f)
        model["run"]["tfinal"] = a.tfinal
        # interleave: NEURON, cablesim (a shared machine drifts; both see the same drift)
        ne = neuron_time(model, a.models, a.reps)
        nt = neuron_time(model, a.models, a.reps, usetable=True)  # NEURON's default: hh rate tables
        cs = cablesim_time(a.cablesim, path, a.tfinal, a.reps, work)
        if cs["compartments"] != ne["compartments"]:
            bad.append("%s: compartments cablesim %d, NEURON %d" % (n["name"], cs["compartments"], ne["compartments"]))
        row = {"network": n["name"], "cells": n["cells"], "compartments": ne["compartments"], "steps": ne["steps"],
               "neuron": {k: v for k, v in ne.items() if k != "spike_times"},
               "neuron_tables": {k: v for k, v in nt.items() if k != "spike_times"},
               "cablesim": {k: v for k, v in cs.items() if k != "spike_times"},
               "ratio": cs["cs_per_s"] / ne["cs_per_s"], "ratio_tables": cs["cs_per_s"] / nt["cs_per_s"]}
        if ne["spikes"] == cs["spikes"]:
            row["max_spike_dt_ms"] = max((abs(x - y) for x, y in zip(ne["spike_times"], cs["spike_times"])), default=0.0)
        else:
            bad.append("%s: spikes NEURON %d, cablesim %d" % (n["name"], ne["spikes"], cs["spikes"]))
        rows.append(row)
        print("%-28s %8d comp  NEURON %.4f s %.3g cs/s (tables %.3g)  cablesim %.4f s %.3g cs/s  ratio %.2f (%.2f)  "
              "spikes %d/%d" % (n["name"], ne["compartments"], ne["wall_seconds"], ne["cs_per_s"], nt["cs_per_s"],
                                cs["wall_seconds"], cs["cs_per_s"], row["ratio"], row["ratio_tables"], ne["spikes"],
                                cs["spikes"]), flush=True)
    lines = ["### %s, %s (%d cores), 1 thread each" % (datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
                                                       mach["cpu"], mach["cores"]),
             "",
             "tfinal %g ms, dt %g ms; median of %d (NEURON: psolve alone, cache_efficient; cablesim: --threads 1, "
             "/metadata wall_seconds). cs/s = compartment-steps per second (same compartment count for both). "
             "NEURON runs with `usetable_hh = 0` (hh's rates from the formulas, as cablesim computes them, the "
             "setting of the agreement tests) and, in the tables columns, with NEURON's default `usetable_hh = 1` "
             "(rates interpolated in a table of 200 intervals over -100..100 mV)."
             % (a.tfinal, real_cells.DT, a.reps),
             "",
             "| network | cells | compartments | NEURON 1 thread [s] | NEURON cs/s | NEURON tables cs/s | cablesim 1 thread [s] | cablesim cs/s | cablesim / NEURON | cablesim / NEURON tables | spikes NEURON / cablesim | max spike-time diff [ms] |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append("| %s | %d | %d | %.4f | %.3g | %.3g | %.4f | %.3g | %.2fx | %.2fx | %d / %d | %s |" % (
            r["network"], r["cells"], r["compartments"], r["neuron"]["wall_seconds"], r["neuron"]["cs_per_s"],
            r["neuron_tables"]["cs_per_s"], r["cablesim"]["wall_seconds"], r["cablesim"]["cs_per_s"], r["ratio"],
            r["ratio_tables"], r["neuron"]["spikes"],
            r["cablesim"]["spikes"], "%.4f" % r["max_spike_dt_ms"] if "max_spike_dt_ms" in r else "**differ**"))
    lines.append("")
    lines.append("Problems: " + "; ".join(bad) if bad else "Spike counts and compartment counts agree on every network.")
    md = "\n".join(lines) + "\n"
    print(md)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": mach, "rows": rows, "problems": bad}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
