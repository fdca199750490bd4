#!/usr/bin/python3
"""CPU benchmark: cablesim against NEURON 8.2 on an Arbor-busyring-style ring network.

Each cell: a soma (radius 6.3 µm, hh) and a full binary tree of passive dendrites (radius 0.5 µm,
pas g 0.001 S/cm², e -65 mV) grown by cablesim's random_tree generator with branch_probability
[1.0, 1.0], so that both simulators build the identical tree deterministically: `depth` levels,
level 0 = the soma's two children, every later tip two children; branch length and CVs interpolate
linearly over the levels from --length and --cvs. An expsyn (tau 2 ms, e 0 mV) on the soma; a
detector at the soma centre (-10 mV); a ring (cell i -> cell i+1 mod N, weight 0.05 µS, delay 5 ms);
one kick event onto cell 0's synapse at t = 1 ms. Fixed step dt 0.025 ms, secondorder 0, 6.3 °C.

Compartments are counted as cablesim counts nodes (models/cs_geometry.h), the same way in both:
per cell one zero-area root node + for every branch (NEURON section) its nseg centre nodes + one
zero-area distal node. That is NEURON's own node count (h.allsec: sum of nseg + 1, plus one root
node per cell).

Timed: the run phase only, median of --reps repetitions:
  NEURON   h.finitialize + events outside the timer, then pc.psolve(tfinal) timed
           (cvode.cache_efficient(1); 1 thread, and pc.nthread(ncores) for reference);
  cablesim the time loop's wall time it records in the output (/metadata attribute wall_seconds;
           else the "run time X s" it prints; else the wall time of the whole process minus that
           of the same model with tfinal = dt, i.e. set-up only).
Reports compartment-steps per second and ratios, checks the two simulators' spike counts, and
appends a results table to bench/README.md (unless --no-readme).

Usage: bench_cpu_vs_neuron.py [--cablesim build/cablesim] [--cells 128] [--depth 5]
       [--tfinal 100] [--reps 3] [--threads N] [--no-readme] [--skip-neuron] [--skip-cablesim]
"""

import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))


def busyring_model(cells, depth, tfinal, length, cvs, threads, dt=0.025):
    return {
        "run": {"tfinal": tfinal, "dt": dt, "seed": 1, "threads": threads},
        "discretization": {"max_cv_length": 20.0},
        "populations": [{
            "name": "ring",
            "count": cells,
            "morphology": {"generator": "random_tree", "soma_radius": 6.3, "dend_radius": 0.5,
                           "depth": depth, "branch_probability": [1.0, 1.0], "length": list(length),
                           "cvs": list(cvs)},
            "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0, "mechanisms": [
                {"name": "hh", "region": "soma"},
                {"name": "pas", "region": "dend", "params": {"g": 0.001, "e": -65.0}}]},
            "synapses": [{"name": "syn", "mechanism": "expsyn", "location": {"branch": 0, "pos": 0.5},
                          "params": {"tau": 2.0, "e": 0.0}}],
            "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0},
        }],
        "connections": [{"type": "ring", "population": "ring", "synapse": "syn", "weight": 0.05,
                         "delay": 5.0}],
        "events": [{"target": {"population": "ring", "cell": 0, "synapse": "syn"}, "time": 1.0,
                    "weight": 0.05}],
    }


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return os.cpu_count() or 1, model


# --- NEURON -----------------------------------------------------------------------------------

def neuron_once(model, nthread):
    import neuron_models as nm
    net = nm.NeuronNetwork(model, nthread=nthread, cache_efficient=True, with_probes=False)
    nodes = net.nodes()
    assert nodes == net.neuron_nodes(), (nodes, net.neuron_nodes())
    net.init()
    net.pc.set_maxstep(10)
    t0 = time.perf_counter()
    net.pc.psolve(net.tfinal)
    el = time.perf_counter() - t0
    nstep = int(round(net.h.t / net.dt))
    res = net.results()
    times = sorted(t for s in res["ring"]["spikes"] for t in s.tolist())
    net.close()
    del net
    return el, nodes, nstep, times


# --- cablesim ---------------------------------------------------------------------------------

RUN_TIME = re.compile(r"\brun time\s+([0-9.]+(?:e[-+]?\d+)?)\s*s\b", re.I)


def parse_run_seconds(text):
    """The time loop's wall time from the summary cablesim prints ("run time X s"), or None."""
    m = RUN_TIME.search(text)
    return float(m.group(1)) if m else None


def read_wall_seconds(h5path):
    """The time loop's wall time from the output's /metadata attribute wall_seconds, or None."""
    import h5py
    try:
        with h5py.File(h5path, "r") as f:
            if "metadata" in f and "wall_seconds" in f["metadata"].attrs:
                return float(f["metadata"].attrs["wall_seconds"])
    except OSError:
        pass
    return None


def cablesim_process(exe, model, workdir, tag, extra=()):
    path = os.path.join(workdir, tag + ".json")
    out = os.path.join(workdir, tag + ".h5")
    with open(path, "w") as f:
        json.dump(model, f, indent=1)
    if os.path.exists(out):
        os.remove(out)
    cmd = [exe, "run", path, "-o", out] + list(extra)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    el = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError("%s failed (rc %d):\n%s" % (" ".join(cmd), p.returncode, p.stdout[-3000:]))
    return el, p.stdout, out


def read_spike_times(h5path):
    import h5py
    with h5py.File(h5path, "r") as f:
        if "spikes" in f and "ring" in f["spikes"]:
            return sorted(float(t) for t in f["spikes"]["ring"]["timestamps"][()])
    return []


COMPARTMENTS = re.compile(r"(\d+) compartments")


def cablesim_once(exe, model, workdir, threads):
    m = json.loads(json.dumps(model))
    m["run"]["threads"] = threads
    el, log, out = cablesim_process(exe, m, workdir, "busyring_t%d" % threads, ["--threads", str(threads)])
    run_s, how = read_wall_seconds(out), "/metadata wall_seconds"
    if run_s is None:
        run_s, how = parse_run_seconds(log), "printed run time"
    if run_s is None:
        m0 = json.loads(json.dumps(m))
        m0["run"]["tfinal"] = m0["run"]["dt"]
        el0, _, _ = cablesim_process(exe, m0, workdir, "busyring_setup_t%d" % threads,
                                     ["--threads", str(threads)])
        run_s = el - el0
        how = "process - setup"
    m = COMPARTMENTS.search(log)
    ncomp = int(m.group(1)) if m else None
    return run_s, how, read_spike_times(out), ncomp


# --- main -------------------------------------------------------------------------------------

def main():
    ncores, cpu = machine()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cablesim", default=os.path.join(ROOT, "build", "cablesim"))
    ap.add_argument("--cells", type=int, default=128)
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--tfinal", type=float, default=100.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=ncores, help="'all cores' thread count (default nproc)")
    ap.add_argument("--length", type=float, nargs=2, default=[200.0, 20.0])
    ap.add_argument("--cvs", type=int, nargs=2, default=[9, 3])
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--no-readme", action="store_true", help="do not append the results to bench/README.md")
    ap.add_argument("--skip-neuron", action="store_true")
    ap.add_argument("--skip-cablesim", action="store_true")
    args = ap.parse_args()

    model = busyring_model(args.cells, args.depth, args.tfinal, args.length, args.cvs, 1)
    import neuron_models as nm
    pop = model["populations"][0]
    branches = nm.morphology_branches(pop["morphology"])
    per_cell = nm.node_count(branches, model["discretization"])
    nodes = per_cell * args.cells
    nstep = int(round(args.tfinal / model["run"]["dt"]))
    print("busyring: %d cells x %d nodes = %d compartments (per cell: 1 root node + %d branches x "
          "(nseg + 1 distal node); %d centre nodes), %d steps of %g ms, %d reps"
          % (args.cells, per_cell, nodes, len(branches),
             sum(nm.branch_cvs(b, model["discretization"]) for b in branches), nstep, model["run"]["dt"],
             args.reps))
    print("machine: %d cores, %s" % (ncores, cpu), flush=True)

    rows = []  # (label, median s, spike count, note)
    spike_times = {}

    def measure(label, fn):
        times, spikes, note = [], None, ""
        for r in range(args.reps):
            out = fn()
            times.append(out[0])
            spikes = len(out[1])
            spike_times[label] = out[1]
            note = out[2]
            print("  %-28s rep %d: %.3f s, %d spikes %s" % (label, r + 1, out[0], spikes, note), flush=True)
        rows.append((label, statistics.median(times), spikes, note))

    if not args.skip_neuron:
        for nt in sorted({1, args.threads}):
            def fn(nt=nt):
                el, nn, ns, spk = neuron_once(model, nt)
                assert nn == nodes, (nn, nodes)
                assert ns == nstep, (ns, nstep)
                return el, spk, "(%d steps)" % ns
            measure("NEURON %d thread%s" % (nt, "s" if nt > 1 else ""), fn)

    if not args.skip_cablesim:
        if not os.access(args.cablesim, os.X_OK):
            print("cablesim CLI not found at %s: skipping its runs" % args.cablesim)
        else:
            workdir = args.workdir or tempfile.mkdtemp(prefix="cs_bench_")
            os.makedirs(workdir, exist_ok=True)
            for nt in sorted({1, args.threads}):
                def fn(nt=nt):
                    run_s, how, spk, ncomp = cablesim_once(args.cablesim, model, workdir, nt)
                    if ncomp is not None and ncomp != nodes:
                        raise SystemExit("cablesim reports %d compartments, NEURON has %d: the trees differ"
                                         % (ncomp, nodes))
                    return run_s, spk, "(%s)" % how
                measure("cablesim --threads %d" % nt, fn)

    ref = next((r[1] for r in rows if r[0] == "NEURON 1 thread"), None)
    lines = []
    lines.append("| run | median run time [s] | compartment-steps/s | vs NEURON 1 thread | spikes |")
    lines.append("|---|---:|---:|---:|---:|")
    for label, med, spk, note in rows:
        rate = nodes * nstep / med if med > 0 else float("nan")
        ratio = "%.2fx" % (ref / med) if ref and med > 0 else "-"
        lines.append("| %s | %.3f | %.3g | %s | %d |" % (label, med, rate, ratio, spk))
    spk = {r[2] for r in rows}
    agree = len(spk) <= 1
    nrn = spike_times.get("NEURON 1 thread")
    cs1 = spike_times.get("cablesim --threads 1")
    spike_note = ""
    if agree and nrn and cs1:
        # NEURON records the grid time of the first sample above threshold, cablesim the
        # interpolated crossing: identical runs differ by less than dt.
        spike_note = " (max |cablesim - NEURON| spike time %.4f ms)" % max(abs(a - b) for a, b in zip(nrn, cs1))
    table = "\n".join(lines)
    print()
    print(table)
    print("spike counts %s: %s%s" % ("agree" if agree else "DIFFER",
                                     ", ".join("%s %d" % (r[0], r[2]) for r in rows), spike_note))

    if not args.no_readme and rows:
        readme = os.path.join(HERE, "README.md")
        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        with open(readme, "a") as f:
            f.write("\n### %s, %d cores, %s\n\n" % (stamp, ncores, cpu))
            f.write("%d cells x %d compartments = %d compartments, depth %d, length %s µm, cvs %s, "
                    "tfinal %g ms, dt %g ms (%d steps), median of %d. cablesim run time: %s.\n\n"
                    % (args.cells, per_cell, nodes, args.depth, args.length, args.cvs, args.tfinal,
                       model["run"]["dt"], nstep, args.reps,
                       ", ".join(sorted({r[3].strip("()") for r in rows if r[0].startswith("cablesim")})) or "-"))
            f.write(table + "\n\n")
            f.write("Spike counts %s%s.\n" % ("agree" if agree else "DIFFER", spike_note))
        print("appended to %s" % readme)
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
