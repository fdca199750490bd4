#!/usr/bin/env python3
"""The full simulation step on the GPU against our OpenMP backend, NEURON and Arbor.

The busyring network of bench_cpu_vs_neuron.py (deterministic full binary trees, so every
simulator builds the same cells) at growing sizes. For each run: compartment-steps per second
of the time loop, the per-phase profile with the solver's share (cablesim), the device memory
per compartment (cablesim cuda), and the spike count (which every simulator must agree on for
the same network). NEURON's and Arbor's throughput does not grow with the network, so they run
at the smallest size only (a 1-core NEURON run of 65 536 cells would take an hour).

Usage (on the GPU machine, via scripts/gpu_bench.sh):
  python3 bench/bench_full_step.py --cablesim build-gpu/cablesim --out results.json
Prints a markdown table and writes every figure to --out (JSON) for bench/report.py."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_cpu_vs_neuron import busyring_model, machine, neuron_once  # noqa: E402

PHASE = re.compile(r"^\s{2}([a-z][a-z ]+?)\s{2,}([0-9.]+)\s+([0-9.]+)%\s+([0-9.]+%|-)\s*$", re.M)
RUN = re.compile(r"run time ([0-9.eE+-]+) s")
COMP = re.compile(r"(\d+) compartments")
SPIKES = re.compile(r"(\d+) spikes")
MEM = re.compile(r"([0-9.]+) MiB of device memory \(([0-9.]+) B per compartment\)")
SOLVER = re.compile(r"Hines solver '([a-z_]+)'")


def cablesim_run(exe, model, workdir, tag, args):
    path = os.path.join(workdir, tag + ".json")
    with open(path, "w") as f:
        json.dump(model, f)
    p = subprocess.run([exe, "run", path, "--no-output"] + args, capture_output=True, text=True, timeout=3000)
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-500:]}
    out = p.stdout
    r = {"seconds": float(RUN.search(out).group(1)), "compartments": int(COMP.search(out).group(1)),
         "spikes": int(SPIKES.search(out).group(1)),
         "phases": {m.group(1): float(m.group(2)) for m in PHASE.finditer(out)}}
    m = MEM.search(out)
    if m:
        r["device_mib"], r["bytes_per_compartment"] = float(m.group(1)), float(m.group(2))
    m = SOLVER.search(out)
    if m:
        r["solver"] = m.group(1)
    return r


def median_of(runs):
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]
    ok.sort(key=lambda r: r["seconds"])
    return ok[len(ok) // 2]


def main():
    ncores, cpu = machine()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--gpu-cells", type=int, nargs="+", default=[1024, 4096, 16384, 65536, 262144])
    ap.add_argument("--gpu-solvers", nargs="+", default=["auto"],
                    help="Hines solver variants to run at every GPU size (auto first: the headline figures)")
    ap.add_argument("--cpu-cells", type=int, nargs="*", default=[1024, 4096, 16384],
                    help="OpenMP backend sizes (none: skip the CPU runs)")
    ap.add_argument("--ref-cells", type=int, default=1024, help="network size for NEURON and Arbor")
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--tfinal", type=float, default=20.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=ncores)
    ap.add_argument("--skip-neuron", action="store_true")
    ap.add_argument("--arbor", action="store_true", help="also run Arbor (bench/arbor_models.py)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cs_full_step_")
    res = {"machine": {"cores": ncores, "cpu": cpu}, "tfinal": a.tfinal, "depth": a.depth, "reps": a.reps, "runs": []}
    try:
        res["machine"]["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                               capture_output=True, text=True).stdout.strip()
    except OSError:
        res["machine"]["gpu"] = "none"

    def model(cells, threads):
        return busyring_model(cells, a.depth, a.tfinal, [200.0, 20.0], [9, 3], threads)

    def record(sim, cells, threads, r):
        r.update({"sim": sim, "cells": cells, "threads": threads})
        if "seconds" in r and r.get("compartments"):
            steps = round(a.tfinal / 0.025)
            r["cs_per_s"] = r["compartments"] * steps / r["seconds"]
        res["runs"].append(r)
        print(json.dumps(r), flush=True)
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)

    for cells in a.gpu_cells:
        fits = True
        for solver in a.gpu_solvers:
            args = ["--backend", "cuda", "--threads", "1", "--solver", solver]
            runs = [cablesim_run(a.cablesim, model(cells, 1), work, f"gpu{cells}", args)]
            if "error" not in runs[0]:
                runs += [cablesim_run(a.cablesim, model(cells, 1), work, f"gpu{cells}", args) for _ in range(a.reps - 1)]
            r = median_of(runs)
            r["solver_requested"] = solver
            record("cablesim cuda" if solver == "auto" else f"cablesim cuda ({solver})", cells, 1, r)
            fits = fits and "error" not in runs[0]
        if not fits:
            break  # the largest size that fits was the previous one
    for cells in a.cpu_cells:
        runs = [cablesim_run(a.cablesim, model(cells, a.threads), work, f"cpu{cells}",
                             ["--backend", "cpu", "--threads", str(a.threads)]) for _ in range(a.reps)]
        record("cablesim cpu", cells, a.threads, median_of(runs))
    ref = model(a.ref_cells, 1)
    if not a.skip_neuron:
        for threads in (1, a.threads):
            times = []
            for _ in range(a.reps):
                el, nodes, nstep, spikes = neuron_once(json.loads(json.dumps(ref)), threads)
                times.append(el)
            times.sort()
            record("NEURON", a.ref_cells, threads, {"seconds": times[len(times) // 2], "compartments": nodes,
                                                      "spikes": len(spikes)})
    if a.arbor:
        import arbor_models
        for threads in (1, a.threads):
            rs = [arbor_models.run_arbor(json.loads(json.dumps(ref)), threads) for _ in range(a.reps)]
            rs.sort(key=lambda r: r["seconds"])
            r = rs[len(rs) // 2]
            record("Arbor", a.ref_cells, threads, {"seconds": r["seconds"], "compartments": r["compartments"],
                                                    "spikes": r["spikes"]})
    # the correctness check of every timed run: the same network size by size, so every simulator
    # and every size must produce the same spikes (the ring's one travelling kick)
    counts = sorted({r["spikes"] for r in res["runs"] if "error" not in r})
    res["spikes_agree"] = len(counts) <= 1
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print("\n| simulator | cells | threads | compartments | run [s] | compartment-steps/s | spikes |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in res["runs"]:
        if "error" in r:
            print(f"| {r['sim']} | {r['cells']} | {r['threads']} | - | - | {r['error'][:60]} | - |")
        else:
            print(f"| {r['sim']} | {r['cells']} | {r['threads']} | {r['compartments']} | {r['seconds']:.4g} | "
                  f"{r.get('cs_per_s', 0):.3g} | {r['spikes']} |")
    if not res["spikes_agree"]:
        print(f"CHECK FAILED: the runs disagree on the spike count: {counts}")
        return 1
    print(f"check: every run produced {counts[0] if counts else 0} spikes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
