#!/usr/bin/python3
"""The large Allen-network benchmark (issue 31, item 6): the network that
bench/sonata_allen_network.py writes, run by bmtk + NEURON and by cablesim, side by side.

    sonata_allen_bench.py neuron  --net DIR --ranks 1[,2,...] [--ref-python PY]
        bmtk + NEURON on 1 core and, with mpirun, on N ranks (mpi4py in the reference venv:
        `PY -m pip install mpi4py`, built against the machine's OpenMPI)
    sonata_allen_bench.py cablesim --net DIR --cablesim PATH --backend cpu|cuda [--threads N] [--solver S]
        `cablesim run DIR/config_cs.json`, after a 1 ms run that compiles and caches the
        mechanisms_dir's catalogue (not timed)
    sonata_allen_bench.py table --net DIR [--md FILE] [--json FILE]
        every run so far as a markdown table, the speed-ups against NEURON and the rate check;
        exit 1 when a cell type's rate in a cablesim run differs from NEURON's by > 10 % (where
        NEURON has >= 400 spikes of that type; on a network too large for bmtk here, from
        cablesim's CPU run)

Each run adds one entry to DIR/results.json (so NEURON's entries, measured where bmtk is, travel
with DIR to the GPU machine): the machine (cores, CPU, GPU), the wall time of the simulation
[s] (bmtk: sim.run(), not the build; cablesim: the summary's time loop, and the whole process),
the simulated ms per wall second, spikes and the firing rate of each cell type [Hz].
"""
import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

TOL_RATE = 0.10  # relative: a cablesim run's rate per cell type against NEURON's (1 rank)
MIN_SPIKES = 400  # a type's rate is checked where the reference has this many spikes: the Poisson
                  # spread of the count alone is then ≤ 5 %, half the tolerance
HERE = os.path.dirname(os.path.abspath(__file__))


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
    gpu = ""
    if shutil.which("nvidia-smi"):
        r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True)
        gpu = r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else ""
    return {"host": platform.node(), "cores": os.cpu_count(), "cpu": cpu, "gpu": gpu,
            "load_avg": round(os.getloadavg()[0], 2)}  # the machine's load as the run starts: a shared one slows it


def node_types(net):
    """node id → cell type (pop_name) of population v1."""
    import csv
    import h5py
    with open(os.path.join(net, "network", "v1_node_types.csv")) as f:
        names = {int(r["node_type_id"]): r["pop_name"] for r in csv.DictReader(f, delimiter=" ")}
    with h5py.File(os.path.join(net, "network", "v1_nodes.h5"), "r") as f:
        return [names[int(t)] for t in f["nodes/v1/node_type_id"][()]]


def rates(net, spikes_h5, tstop):
    """spikes and mean rate [Hz] per cell type, from a SONATA spikes file."""
    import h5py
    types = node_types(net)
    count = {t: 0 for t in types}
    cells = {t: types.count(t) for t in count}
    with h5py.File(spikes_h5, "r") as f:
        ids = f["spikes/v1/node_ids"][()] if "v1" in f["spikes"] else f["spikes/gids"][()]
    for i in ids:
        count[types[int(i)]] += 1
    return {"spikes": int(len(ids)), "by_type": {t: {"cells": cells[t], "spikes": count[t],
                                                      "rate_hz": count[t] / cells[t] / (tstop / 1000.0)} for t in count}}


def load(net):
    p = os.path.join(net, "results.json")
    return json.load(open(p)) if os.path.exists(p) else {}


def save(net, label, entry):
    res = load(net)
    res[label] = entry
    with open(os.path.join(net, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"{label}: simulation {entry['sim_s']:.2f} s, {entry['ms_per_s']:.3g} simulated ms per s, "
          f"{entry['spikes']} spikes; " + ", ".join(f"{t} {v['rate_hz']:.1f} Hz" for t, v in (entry["by_type"] or {}).items()))


def tstop_of(net, tag):
    with open(os.path.join(net, f"config_{tag}.json")) as f:
        return float(json.load(f)["run"]["tstop"])


def ref_python(a):
    if a.ref_python:
        return a.ref_python
    out = subprocess.run([os.path.join(os.path.dirname(HERE), "scripts/ref-venv.sh")], check=True, capture_output=True,
                         text=True).stdout.strip().splitlines()
    return out[-1]


def cmd_neuron(a):
    net = os.path.abspath(a.net)
    py = ref_python(a)
    tstop = tstop_of(net, "bmtk")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for n in (int(x) for x in a.ranks.split(",")):
        timing = os.path.join(net, f"timing-neuron-{n}.json")
        cmd = [py, os.path.join(HERE, "sonata_allen_network.py"), "run", os.path.join(net, "config_bmtk.json"), timing]
        if n > 1:
            cmd = [shutil.which("mpirun") or "mpirun", "--oversubscribe", "-np", str(n)] + cmd
        where = machine()
        t0 = time.time()
        with open(os.path.join(net, f"neuron-{n}.log"), "w") as log:
            r = subprocess.run(cmd, cwd=net, env=env, stdout=log, stderr=subprocess.STDOUT)
        if r.returncode:
            print(f"NEURON on {n} rank(s) failed (exit {r.returncode}): {net}/neuron-{n}.log")
            return 1
        t = json.load(open(timing))
        spikes = os.path.join(net, f"spikes-neuron-{n}.h5")
        shutil.copy(os.path.join(net, "output_bmtk", "spikes.h5"), spikes)
        entry = {"who": "NEURON", "ranks": n, "machine": where, "tstop_ms": tstop, "sim_s": t["run_s"],
                 "sim_cpu_s": t["run_cpu_s"], "build_s": t["build_s"], "total_s": time.time() - t0,
                 "ms_per_s": tstop / t["run_s"]}
        entry.update(rates(net, spikes, tstop))
        save(net, f"neuron-{n}", entry)
    return 0


def cmd_cablesim(a):
    net = os.path.abspath(a.net)
    tstop = tstop_of(net, "cs")
    cfg = os.path.join(net, "config_cs.json")
    env = dict(os.environ, CABLESIM_CACHE_DIR=a.cache or os.path.join(net, ".catalogues"))
    base = [a.cablesim, "run", cfg, "--backend", a.backend] + (["--threads", str(a.threads)] if a.threads else []) \
        + (["--solver", a.solver] if a.solver else [])
    # the catalogue of mechanisms_dir is compiled on the first run: not part of the timing
    r = subprocess.run(base + ["--tfinal", "1", "--no-output", "-q"], env=env, capture_output=True, text=True)
    if r.returncode:
        print(f"cablesim {a.backend}: the 1 ms warm-up failed (exit {r.returncode}): {r.stderr.strip()[-300:]}")
        return 1
    label = a.label or f"cablesim-{a.backend}-{a.threads or os.cpu_count()}"
    out = os.path.join(net, f"spikes-{label}.h5")
    where = machine()
    t0 = time.time()
    r = subprocess.run(base + ["-o", out], env=env, capture_output=True, text=True)
    total = time.time() - t0
    with open(os.path.join(net, f"{label}.log"), "w") as f:
        f.write(r.stdout + r.stderr)
    if r.returncode:
        print(f"{label} failed (exit {r.returncode}): {r.stderr.strip()[-300:]}")
        return 1
    m = re.search(r"run time ([0-9.]+) s: ([0-9.e+]+) compartment-steps", r.stdout)
    comp = re.search(r"(\d+) cells, (\d+) compartments", r.stdout)
    solver = re.search(r"Hines solve[^\n]*|solver[: ]+\S+", r.stdout)
    entry = {"who": "cablesim", "backend": a.backend, "threads": a.threads or os.cpu_count(), "machine": where,
             "tstop_ms": tstop, "sim_s": float(m.group(1)), "cs_per_s": float(m.group(2)), "total_s": total,
             "ms_per_s": tstop / float(m.group(1)), "cells": int(comp.group(1)), "compartments": int(comp.group(2)),
             "solver": solver.group(0) if solver else ""}
    entry.update(rates(net, out, tstop))
    save(net, label, entry)
    return 0


def cmd_neuron_scaled(a):
    """NEURON's entries of a smaller network of the same density (--from), scaled by the number of
    cells: an estimate, where bmtk cannot build the large network in the time or memory at hand."""
    net, small = os.path.abspath(a.net), os.path.abspath(a.source)
    big_n = json.load(open(os.path.join(net, "network_info.json")))["cells"]
    small_n = json.load(open(os.path.join(small, "network_info.json")))["cells"]
    for label, e in load(small).items():
        if e["who"] != "NEURON":
            continue
        f = big_n / small_n
        est = dict(e, estimated_from=f"{small_n} cells × {f:g}", sim_s=e["sim_s"] * f,
                   sim_cpu_s=e["sim_cpu_s"] * f, ms_per_s=e["ms_per_s"] / f, spikes=None, by_type=None,
                   build_s=None, total_s=None)
        save(net, label + "-est", est)
    return 0


def cmd_table(a):
    net = os.path.abspath(a.net)
    res = load(net)
    info = json.load(open(os.path.join(net, "network_info.json")))
    types = list(info["types"])
    speed_ref = res.get("neuron-1") or res.get("neuron-1-est")          # NEURON, 1 core
    # NEURON's time for the ratios: its CPU time on one rank (what a shared, loaded machine does not
    # inflate; for one rank the same as the wall time on an idle core)
    t_ref = (speed_ref.get("sim_cpu_s") or speed_ref["sim_s"]) if speed_ref else None
    multi = [e for k, e in res.items() if e["who"] == "NEURON" and e["ranks"] > 1]
    many = max(multi, key=lambda e: e["ranks"]) if multi else None     # NEURON on all cores of its machine
    # rates: against NEURON on this very network, else against cablesim's CPU (a GPU run on a
    # network too large for bmtk here: the CPU's rates were checked against NEURON on a smaller one)
    rate_label = "neuron-1" if "neuron-1" in res else next((k for k, e in res.items() if e.get("backend") == "cpu"), None)
    rate_ref = res.get(rate_label)
    rows, bad = [], []
    head = ["run", "machine", "simulation [s] (NEURON: CPU time of the busiest rank)",
            "whole run [s] (bmtk: with its build)", "sim. ms per wall s", "× real time", "vs NEURON 1 core",
            "spikes"] + [f"{t} [Hz]" for t in types]
    for label, e in res.items():
        m = e["machine"]
        where = (f"{m['gpu']}, " if e.get("backend") == "cuda" else "") + f"{m['cores']} cores (load {m.get('load_avg', '?')})"
        if e["who"] == "NEURON":
            what = f"bmtk + NEURON, {e['ranks']} rank{'s' if e['ranks'] > 1 else ''}"
            if e.get("estimated_from"):
                what += f" (**estimate**: {e['estimated_from']})"
        else:
            what = f"cablesim {e['backend']}" + (f", {e['threads']} thread{'s' if e['threads'] != 1 else ''}" if e["backend"] == "cpu" else "")
        cells = []
        for t in types:
            if not e.get("by_type"):
                cells.append("-")
                continue
            r = e["by_type"][t]["rate_hz"]
            cell = f"{r:.1f}"
            if rate_ref and e["who"] == "cablesim" and label != rate_label:
                r0 = rate_ref["by_type"][t]["rate_hz"]
                rel = (r - r0) / r0 if r0 else float("inf")
                few = rate_ref["by_type"][t]["spikes"] < MIN_SPIKES
                cell += f" ({100 * rel:+.1f} %{', not checked: < ' + str(MIN_SPIKES) + ' spikes' if few else ''})"
                if abs(rel) > TOL_RATE and not few:
                    bad.append(f"{label} {t}: {r:.2f} Hz against {r0:.2f} ({rate_label}; {100 * rel:+.1f} %)")
            cells.append(cell)
        sim = f"{e['sim_s']:.3g}" + (f" (CPU {e['sim_cpu_s']:.3g})" if e.get("sim_cpu_s") else "")
        rows.append([what, where, sim, f"{e['total_s']:.3g}" if e.get("total_s") else "-", f"{e['ms_per_s']:.3g}", f"{e['ms_per_s'] / 1000:.3g}",
                     f"{t_ref / (e.get('sim_cpu_s') or e['sim_s']):.3g}×" if t_ref else "-",
                     "-" if e["spikes"] is None else str(e["spikes"])] + cells)
    md = [f"Network: {info['cells']} cells ({', '.join(f'{t} {n}' for t, n in info['types'].items())}), "
          f"{info['inputs']} virtual inputs, edges {info.get('edges', {})}; tstop {info['tstop_ms']:g} ms, "
          f"dt 0.025 ms; {info.get('carried_mb', '?')} MB on disk.", "",
          "| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    md += ["", f"Rates (in brackets: against {rate_label}; types with ≥ {MIN_SPIKES} spikes there) within {100 * TOL_RATE:.0f} %: "
           + ("yes" if not bad and rate_ref else ("no reference" if not rate_ref else "**NO**: " + "; ".join(bad)))]
    for label, e in res.items():
        if e.get("backend") != "cuda" or not speed_ref:
            continue
        line = f"{label}: {t_ref / e['sim_s']:.0f}× NEURON on 1 core (target 1 000×)"
        if many:
            # NEURON on 16 cores, estimated from its run on `many` ranks at perfect scaling (its best case)
            t16 = (many.get("sim_cpu_s") or many["sim_s"]) * many["ranks"] / 16
            line += (f"; ~{t16 / e['sim_s']:.0f}× NEURON on 16 cores (target 100×; estimated as NEURON on "
                     f"{many['ranks']} ranks × {many['ranks']}/16, perfect scaling)")
        md.append(line + f"; {e['ms_per_s'] / 1000:.3g}× real time")
    text = "\n".join(md) + "\n"
    print(text)
    if a.md:
        open(a.md, "w").write(text)
    if a.json:
        json.dump({"network": info, "runs": res, "rate_mismatches": bad}, open(a.json, "w"), indent=1)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    n = sub.add_parser("neuron")
    n.add_argument("--net", required=True)
    n.add_argument("--ranks", default="1")
    n.add_argument("--ref-python")
    s = sub.add_parser("neuron-scaled")
    s.add_argument("--net", required=True)
    s.add_argument("--from", dest="source", required=True)
    c = sub.add_parser("cablesim")
    c.add_argument("--net", required=True)
    c.add_argument("--cablesim", required=True)
    c.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    c.add_argument("--threads", type=int)
    c.add_argument("--solver")
    c.add_argument("--label")
    c.add_argument("--cache", help="CABLESIM_CACHE_DIR (default DIR/.catalogues)")
    t = sub.add_parser("table")
    t.add_argument("--net", required=True)
    t.add_argument("--md")
    t.add_argument("--json")
    a = ap.parse_args()
    return {"neuron": cmd_neuron, "neuron-scaled": cmd_neuron_scaled, "cablesim": cmd_cablesim,
            "table": cmd_table}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
