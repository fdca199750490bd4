#!/usr/bin/python3
"""Write a CoreNEURON dataset of a cablesim JSON model (issue 17, P4: CoreNEURON on the GPU).

    /usr/bin/python3 bench/coreneuron_dataset.py MODEL.json OUTDIR [--nthread N]

builds the network in NEURON exactly as tests/neuron_models.py does for the agreement tests and
bench/bench_cpu_vs_neuron.py for the CPU benchmark (the same cells, compartments, mechanisms,
synapses, connections and events as cablesim's), initialises it, and writes it with
ParallelContext.nrncore_write(OUTDIR). CoreNEURON then runs it on its own:

    nrniv-core --datpath OUTDIR --tstop 20 [--gpu] [--cell-permute 2]

(the `neuron-gpu` 8.2.2 wheel's bin/nrniv-core: its built-in mechanisms are hh, pas, ExpSyn and
IClamp, all a busyring needs). The dataset is written with Debian's NEURON 8.2.2, the wheel's
version. Prints one JSON line: cells, compartments, steps, the dataset's path.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import neuron_models as nm  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("outdir")
    ap.add_argument("--nthread", type=int, default=1, help="NEURON threads: CoreNEURON's cell groups")
    a = ap.parse_args()
    with open(a.model) as f:
        model = json.load(f)
    # the cells from the shared builder; connections and events here, through gids (CoreNEURON
    # needs every cell's spike source registered, and events as an artificial cell's spikes)
    bare = dict(model, connections=[], events=[])
    net = nm.NeuronNetwork(bare, nthread=a.nthread, cache_efficient=True, with_probes=False)
    h, pc = net.h, net.pc
    gid0, keep = {}, []
    g = 0
    for spec in model["populations"]:
        P = net.pops[spec["name"]]
        gid0[spec["name"]] = g
        det = spec["detector"]
        for ci in range(len(P["cells"])):
            sec, x = net.loc(P, ci, det["location"])
            pc.set_gid2node(g, pc.id())
            nc = h.NetCon(sec(x)._ref_v, None, sec=sec)
            nc.threshold = float(det.get("threshold", -10.0))
            pc.cell(g, nc)
            keep.append(nc)
            g += 1

    def syn_of(pop, cell, name):
        return net.pops[pop]["syn"][cell][name]

    for c in model.get("connections", []):
        if c["type"] != "ring":
            raise NotImplementedError("connection type %r" % c["type"])
        n = len(net.pops[c["population"]]["cells"])
        for i in range(n):
            nc = pc.gid_connect(gid0[c["population"]] + i, syn_of(c["population"], (i + 1) % n, c["synapse"]))
            nc.weight[0] = float(c["weight"])
            nc.delay = float(c["delay"])
            keep.append(nc)
    for e in model.get("events", []):  # one NetStim spike per event, a step early, delivered a step later
        ns = h.NetStim()
        ns.start, ns.number, ns.interval, ns.noise = float(e["time"]) - net.dt, 1, 1e9, 0
        pc.set_gid2node(g, pc.id())
        src = h.NetCon(ns, None)
        pc.cell(g, src)
        t = e["target"]
        nc = pc.gid_connect(g, syn_of(t["population"], int(t["cell"]), t["synapse"]))
        nc.weight[0] = float(e["weight"])
        nc.delay = net.dt  # NetCon delays must be > 0
        keep += [ns, src, nc]
        g += 1
    pc.set_maxstep(10)
    h.finitialize(net.v_init)
    os.makedirs(a.outdir, exist_ok=True)
    pc.nrncore_write(a.outdir)
    cells = sum(p["count"] for p in model["populations"])
    print(json.dumps({"cells": cells, "compartments": net.nodes(), "dt": net.dt, "tfinal": net.tfinal,
                      "datpath": os.path.abspath(a.outdir)}))
    net.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
