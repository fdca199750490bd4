#!/usr/bin/env python3
"""Real-cell benchmark (issue 17, item 1): networks of the nine shared SWC cells and of synthetic
big cells, written as cablesim models, and a runner that times them on the CPU and on the GPU
with every GPU solver.

  real_cells.py generate --out DIR [--morph-dir DIR] [--alone N] [--mixed 128,2048] [--largest K]
                         [--big-compartments C] [--single 100000] [--cablesim EXE]
  real_cells.py run --models DIR --cablesim EXE [--backends cpu,cuda] [--solvers auto,...]
                    [--threads N] [--tfinal MS] [--reps R] [--bound CS_PER_S]
                    [--json OUT.json] [--md OUT.md] [--only REGEX]
  real_cells.py arbor --busyring EXE --cablesim EXE --work DIR [--cells 1024,16384] [--md OUT.md]

generate: copies the nine SWC files into DIR/morph/ (models name them relative to DIR, so DIR
travels with a run on another machine), writes one model JSON per network and DIR/networks.json
(the list the runner reads), and prints each network's compartment count: counted exactly from
the SWC files by bench/swc_branches.py (a port of cablesim's reader, checked against cablesim's
own count for every cell) and, with --cablesim, from cablesim's summary (the random trees of the
synthetic cells can only be counted that way).

run: for each network, `cablesim run MODEL -o OUT.h5 -q --backend B [--solver S] --tfinal T`;
reads /metadata (wall_seconds: the time loop; compartments; backend_detail: the solver the GPU
chose) and /spikes from the output; compartment-steps/s = compartments x steps / wall_seconds;
% of the bandwidth bound (--bound, 8.8e10 cs/s: 48 B per compartment-step at ~4.2 TB/s on an
H200); GPU/CPU = cs/s of the GPU run over that of the CPU run of the same network. A solver that
refuses the network is recorded with its one-line message ("refused"); a missing GPU gives
"skipped: no GPU". Every variant's spike count must equal the CPU run's: a mismatch is printed
loudly and the exit status is 1.

arbor: Arbor's GPU busyring (the peer binary, `busyring-gpu PARAMS.json OUTDIR`) against cablesim's
GPU on the busyring trees of bench/busyring_json.py (depth 5, lengths [200, 20] µm, cvs [9, 3];
'full' = branch probabilities [1, 1], identical cells; 'rand' = [1, 0.5], distinct cells). Arbor's
time is its meter's `model-run`; its compartments are its own CV count ("Cell stats").
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import swc_branches  # noqa: E402

# The nine real cells of ../shared/data/morphologies (PROVENANCE.md there). key: population name.
# amplitude [nA]: the soma clamp (from 1 ms to the end), chosen on the CPU (`real_cells.py tune`)
# away from the thresholds in spike count. Each cell alone fires 2 spikes in 20 ms (the small cells)
# or 1 (tc200, flywire and the big cells, whose soma goes into depolarisation block after the first:
# hh is only in soma and axon, 6.3 °C; no amplitude gives them a second spike in 20 ms).
CELLS = [
    # key,          file,                                            scale, amplitude [nA], what
    ("l1_sm0903",   "SM090312A1-5-IDC.CNG.swc",                       1.0,   0.10, "rat neocortex L1 interneuron, dendrites only (NeuroMorpho)"),
    ("l1_c121005",  "C121005C.CNG.swc",                               1.0,   0.20, "rat neocortex L1, axon + few dendrites (NeuroMorpho)"),
    ("dg_granule",  "mp_ma_40984_gc2.CNG.swc",                        1.0,   0.50, "dentate gyrus granule cell (NeuroMorpho, via brian2)"),
    ("tc200",       "tc200.CNG.swc",                                  1.0,   2.00, "thalamocortical cell, branched soma (NeuroMorpho, via brian2)"),
    ("flywire",     "flywire_720575940661205633.swc",                 0.001, 0.20, "Drosophila EM skeleton, file in nm, scale 0.001 (FlyWire, via arbor)"),
    ("ds_10_2012", "10-2012-02-09-001.CNG.swc",                      1.0,   2.00, "De Schutter archive cell, 392 branch points (NeuroMorpho, via MorphIO)"),
    ("allen_scnn1a", "allen_Scnn1a_177300.01.02.01_nrn_ordering.swc", 1.0,   1.00, "Allen Cell Types Scnn1a cell (via MorphIO)"),
    ("ca1_pyr",     "arbor_pyramidal_NMO_49821.swc",                  1.0,   2.00, "rat CA1 pyramidal cell (NeuroMorpho NMO_49821, via arbor)"),
    ("bbp_pyr",     "tkb061126a4_ch0_cc2_h_zk_60x_1.swc",             1.0,   1.00, "rat cortical pyramidal cell, long axon (Blue Brain, via morph-tool)"),
]
CELL = {c[0]: c for c in CELLS}

# Synthetic big cells: cablesim's random_tree (Arbor busyring's generator), depth 10, branch
# probability 1 at the soma's children falling to 0.7 at the last level (so trees differ per cell,
# ~555 branches on average), lengths and CVs per branch chosen for the mean compartment count
# (measured over 256 cells: 2 020, 4 972, 9 979, 30 019).
BIG = [
    # target, length [µm] first/last level, cvs first/last level, clamp [nA]
    (2000,  [200.0, 50.0],  [6, 2],    0.5),
    (5000,  [300.0, 100.0], [17, 6],   0.5),
    (10000, [400.0, 100.0], [35, 13],  0.5),
    (30000, [600.0, 200.0], [110, 40], 0.5),
]   # 0.5 nA: cell 0 of each fires 2 spikes in 20 ms alone (0.3-1 nA too); in the networks 1-2 per cell
# Single very large cells (issue 28: one cell of 100 000+ compartments over the whole GPU), the same
# generator with longer branches (~5× big30000's CVs: 118 000 compartments; the cablesim
# summary gives the count). Written by `generate --single`, one cell per network.
SINGLE = [
    (100000, [2800.0, 1000.0], [560, 200], 0.5),
]
GIANT_AMPLITUDE = 1.0e4  # [nA] the unscaled FlyWire cell (29 050 compartments; its soma, radius 1 467 µm, has
                         # 2.7e7 µm² of membrane): 2 spikes

DT = 0.025          # [ms]
TFINAL = 20.0       # [ms]
MAX_CV_LENGTH = 20.0  # [µm]
MIN_RADIUS = 0.1    # [µm]
RING_WEIGHT = 0.01  # [µS]
DELAY = 5.0         # [ms] every connection: the network's min delay, as busyring's
PAS = {"g": 0.0001, "e": -65.0}  # [S/cm²], [mV]
SOLVERS = ["auto", "interleaved", "variable", "fine", "warp", "staged"]
BOUND = 8.8e10      # [compartment-steps/s] 48 B per compartment-step at ~4.2 TB/s (H200)


# --- models ---------------------------------------------------------------------------------

def soma_branch(path, scale):
    """Index of the first soma (tag 1) branch in cablesim's branch order (tc200's branch 0 is a
    dendrite: its soma is a branched chain of samples)."""
    br = swc_branches.read_swc(path, scale, MIN_RADIUS)
    return next(i for i, b in enumerate(br) if b["tag"] == 1), br


def mechanisms(key):
    mech = [{"name": "hh", "region": "soma"}, {"name": "hh", "region": "axon"}]
    if key.startswith("flywire"):
        # FlyWire labels are 0 (undefined), 5 (fork) and 6 (end point), not SWC neurite types:
        # the whole cell gets the leak (hh in the soma on top of it)
        mech.append({"name": "pas", "region": "all", "params": dict(PAS)})
    else:
        mech.append({"name": "pas", "region": "dend", "params": dict(PAS)})
    return mech


def point_parts(name, count, branch, amplitude):
    loc = {"branch": branch, "pos": 0.5}
    return {
        "synapses": [{"name": "syn", "mechanism": "expsyn", "location": dict(loc),
                      "params": {"tau": 2.0, "e": 0.0}}],
        "stimuli": [{"mechanism": "iclamp", "location": dict(loc), "cells": "all",
                     "params": {"delay": 1.0, "duration": 1000.0, "amplitude": amplitude}}],
        "detector": {"location": dict(loc), "threshold": -10.0},
    }


def swc_population(key, count, morph_dir, scale=None, amplitude=None, name=None):
    _, fname, sc, amp, _ = CELL[key]
    sc = sc if scale is None else scale
    amp = amp if amplitude is None else amplitude
    sb, br = soma_branch(os.path.join(morph_dir, fname), sc)
    pop = {"name": name or key, "count": count,
           "morphology": {"swc": "morph/" + fname, "scale": sc, "min_radius": MIN_RADIUS},
           "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0, "mechanisms": mechanisms(key)}}
    pop.update(point_parts(pop["name"], count, sb, amp))
    return pop, swc_branches.compartments(br, MAX_CV_LENGTH)


def big_population(target, count):
    _, length, cvs, amp = next(b for b in BIG + SINGLE if b[0] == target)
    pop = {"name": "big%d" % target, "count": count,
           "morphology": {"generator": "random_tree", "soma_radius": 10.0, "dend_radius": 0.5,
                          "depth": 10, "branch_probability": [1.0, 0.7], "length": length, "cvs": cvs},
           "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0, "mechanisms": mechanisms("big")}}
    pop.update(point_parts(pop["name"], count, 0, amp))
    return pop


def network(pops, tfinal=TFINAL):
    """A model: each population a ring (cell i -> i+1), and the populations joined in a ring of
    their cell 0s (population p's cell 0 -> population p+1's cell 0); every delay DELAY."""
    conns = []
    for p in pops:
        if p["count"] > 1:
            conns.append({"type": "ring", "population": p["name"], "synapse": "syn", "weight": RING_WEIGHT,
                          "delay": DELAY})
    if len(pops) > 1:
        for i, p in enumerate(pops):
            q = pops[(i + 1) % len(pops)]
            conns.append({"type": "explicit", "source": {"population": p["name"], "cell": 0},
                          "target": {"population": q["name"], "cell": 0, "synapse": "syn"},
                          "weight": RING_WEIGHT, "delay": DELAY})
    return {"run": {"tfinal": tfinal, "dt": DT, "seed": 1, "celsius": 6.3},
            "discretization": {"max_cv_length": MAX_CV_LENGTH},
            "populations": pops, "connections": conns}


COMP_RE = re.compile(r"(\d+) cells, (\d+) compartments")


def cablesim_count(exe, path, threads=None):
    """(cells, compartments) from cablesim's summary of a one-step run, or None."""
    cmd = [exe, "run", path, "--no-output", "--tfinal", str(DT)]
    if threads:
        cmd += ["--threads", str(threads)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = COMP_RE.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.exit("cablesim could not count %s: %s" % (path, (p.stderr or p.stdout).strip()[-300:]))
    return int(m.group(1)), int(m.group(2))


def find_morph_dir(arg):
    for d in ([arg] if arg else []) + [os.path.join(ROOT, "..", "shared", "data", "morphologies"),
                                       os.path.join(ROOT, "build-shared", "data", "morphologies"),
                                       os.path.join(ROOT, ".dev", "morph")]:
        if d and all(os.path.exists(os.path.join(d, c[1])) for c in CELLS):
            return d
    sys.exit("the nine SWC files were not found (give --morph-dir)")


def csv_ints(s):
    return [int(x) for x in s.split(",") if x.strip()] if s else []


def cmd_generate(a):
    src = find_morph_dir(a.morph_dir)
    out = a.out
    os.makedirs(os.path.join(out, "morph"), exist_ok=True)
    for c in CELLS:
        dst = os.path.join(out, "morph", c[1])
        if not os.path.exists(dst):
            shutil.copyfile(os.path.join(src, c[1]), dst)
    md = os.path.join(out, "morph")
    nets = []

    def add(name, kind, model, comp, desc, **extra):
        path = os.path.join(out, name + ".json")
        with open(path, "w") as f:
            json.dump(model, f, indent=1)
        cells = sum(p["count"] for p in model["populations"])
        n = {"name": name, "file": name + ".json", "kind": kind, "cells": cells,
             "compartments": comp, "count_source": "swc_branches.py" if comp else None, "what": desc}
        n.update(extra)
        nets.append(n)

    keys = [c[0] for c in CELLS]
    per_cell = {}
    for k in keys:
        per_cell[k] = swc_population(k, 1, md)[1]
    # (a) each cell alone
    for k in ([] if a.alone <= 0 else keys):
        pop, comp = swc_population(k, a.alone, md)
        add("alone-%s-%d" % (k, a.alone), "alone", network([pop], a.tfinal), comp * a.alone,
            "%s alone, %d cells (%d compartments each)" % (k, a.alone, comp))
    # (b) the nine mixed round-robin (one population each, equal counts)
    for n, largest in [(n, False) for n in csv_ints(a.mixed)] + ([(a.largest, True)] if a.largest > 0 else []):
        pops = [swc_population(k, n, md)[0] for k in keys]
        comp = n * sum(per_cell.values())
        add("mixed-%d" % (9 * n), "mixed", network(pops, a.tfinal), comp,
            "the nine cells, %d of each" % n + (" (largest: run on the GPU with auto only)" if largest else ""),
            largest=largest)
    # (c) synthetic big cells, and the unscaled FlyWire cell as a labelled synthetic giant
    if a.big_compartments > 0:
        for target, *_ in BIG:
            if a.big_sizes and target not in csv_ints(a.big_sizes):
                continue
            count = max(1, int(round(a.big_compartments / target)))
            add("big%d-%d" % (target, count), "big", network([big_population(target, count)], a.tfinal), None,
                "synthetic random trees, ~%d compartments each (depth 10, branch probability [1, 0.7])" % target)
        pop, comp = swc_population("flywire", 1, md, scale=1.0, amplitude=GIANT_AMPLITUDE, name="giant_flywire_nm_as_um")
        count = max(1, int(round(a.big_compartments / comp)))
        pop["count"] = count
        add("giant-flywire-unscaled-%d" % count, "big", network([pop], a.tfinal), comp * count,
            "SYNTHETIC giant: the FlyWire file read as µm (it is in nm), %d compartments each" % comp)
    # (d) single very large cells
    for target in csv_ints(a.single) if a.single else []:
        add("single%d" % target, "single", network([big_population(target, 1)], a.tfinal), None,
            "one synthetic random tree of ~%d compartments" % target)
    for n in nets:
        if a.cablesim and (n["compartments"] is None or n["compartments"] <= a.check_limit):
            cells, comp = cablesim_count(a.cablesim, os.path.join(out, n["file"]), a.threads)
            if n["compartments"] is not None and comp != n["compartments"]:
                sys.exit("compartment count of %s: cablesim %d, swc_branches.py %d" % (n["name"], comp, n["compartments"]))
            n["compartments"] = comp
            n["count_source"] = "cablesim summary" + (" = swc_branches.py" if n["count_source"] else "")
    with open(os.path.join(out, "networks.json"), "w") as f:
        json.dump({"tfinal": a.tfinal, "dt": DT, "per_cell_compartments": per_cell, "networks": nets}, f, indent=1)
    print("| network | cells | compartments | per cell | counted by |")
    print("|---|---:|---:|---:|---|")
    for n in nets:
        c = n["compartments"]
        print("| %s | %d | %s | %s | %s |" % (n["name"], n["cells"], "%d" % c if c else "?",
                                             "%.0f" % (c / n["cells"]) if c else "?", n["count_source"] or "-"))
    print("per cell (max_cv_length %g µm): %s" % (MAX_CV_LENGTH, ", ".join("%s %d" % kv for kv in per_cell.items())))
    return 0


# --- runner ---------------------------------------------------------------------------------

SOLVER_RE = re.compile(r"Hines solver '([a-z_]+)'")
MEM_RE = re.compile(r"\(([0-9.]+) B per compartment\)")


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        pass
    gpu = None
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        if p.returncode == 0 and p.stdout.strip():
            gpu = p.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "gpu": gpu, "host": os.uname().nodename}


def read_output(h5):
    import h5py
    with h5py.File(h5, "r") as f:
        m = f["metadata"].attrs
        meta = {k: (m[k].decode() if isinstance(m[k], bytes) else m[k]) for k in m}
        times = []
        if "spikes" in f:
            for pop in f["spikes"]:
                times.extend(float(t) for t in f["spikes"][pop]["timestamps"][()])
    return meta, sorted(times)


def run_one(exe, model, backend, solver, threads, tfinal, workdir, timeout):
    """One cablesim run: a dict with status ok / refused / skipped / error."""
    h5 = os.path.join(workdir, "run.h5")
    if os.path.exists(h5):
        os.remove(h5)
    cmd = [exe, "run", model, "-o", h5, "-q", "--backend", backend, "--tfinal", str(tfinal)]
    if backend == "cuda":
        cmd += ["--solver", solver]
    if threads:
        cmd += ["--threads", str(threads)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "error", "message": "timed out after %d s" % timeout}
    process_s = time.perf_counter() - t0  # [s] the whole process: set-up, run, output
    msg = (p.stderr.strip().splitlines() or [""])[-1]
    if p.returncode != 0:
        if "no CUDA" in msg:
            return {"status": "skipped", "message": "no GPU (%s)" % msg.replace("cablesim: error: ", "")}
        low = msg.lower()
        if p.returncode == 1 and backend == "cuda" and (solver in low or "does not fit" in low or "out of gpu memory" in low
                                  or "memory" in low or "refus" in low):
            return {"status": "refused", "message": msg}
        return {"status": "error", "message": "rc %d: %s" % (p.returncode, msg)}
    meta, times = read_output(h5)
    os.remove(h5)
    wall = float(meta["wall_seconds"])
    steps = int(round(float(meta["tfinal"]) / float(meta["dt"])))
    ncv = int(meta["compartments"])
    detail = str(meta.get("backend_detail", ""))
    r = {"status": "ok", "wall_seconds": wall, "process_seconds": process_s, "steps": steps, "compartments": ncv,
         "cs_per_s": ncv * steps / wall, "spikes": len(times), "spike_times": times, "detail": detail}
    m = SOLVER_RE.search(detail)
    if m:
        r["solver"] = m.group(1)
    m = MEM_RE.search(detail)
    if m:
        r["bytes_per_compartment"] = float(m.group(1))
    return r


def timed(exe, model, backend, solver, threads, tfinal, workdir, timeout, reps, rep_limit, deadline=None):
    """Median of up to `reps` runs; no repetition after a process (set-up + run + output) longer
    than rep_limit seconds, nor past the deadline (time.time())."""
    runs = []
    for i in range(reps):
        r = run_one(exe, model, backend, solver, threads, tfinal, workdir, timeout)
        runs.append(r)
        if r["status"] != "ok" or r["process_seconds"] > rep_limit or (deadline and time.time() > deadline):
            break
    ok = [r for r in runs if r["status"] == "ok"]
    if not ok:
        return runs[0]
    ok.sort(key=lambda r: r["wall_seconds"])
    med = dict(ok[len(ok) // 2])
    med["reps"] = len(ok)
    med["wall_all"] = [r["wall_seconds"] for r in ok]
    counts = {r["spikes"] for r in ok}
    if len(counts) > 1:
        med["status"] = "error"
        med["message"] = "spike counts differ between repetitions: %s" % sorted(counts)
    return med


def fmt_e(x):
    return "%.3g" % x if x is not None else "–"


def cmd_run(a):
    with open(os.path.join(a.models, "networks.json")) as f:
        manifest = json.load(f)
    nets = manifest["networks"]
    if a.only:
        nets = [n for n in nets if re.search(a.only, n["name"])]
    backends = a.backends.split(",")
    solvers = a.solvers.split(",")
    mach = machine()
    threads = a.threads or os.cpu_count()
    tfinal = a.tfinal or manifest["tfinal"]
    work = tempfile.mkdtemp(prefix="real_cells_")
    gpu_missing = None
    results = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": mach,
               "tfinal_ms": tfinal, "dt_ms": manifest["dt"], "cpu_threads": threads, "bound_cs_per_s": a.bound,
               "networks": []}
    mismatches = []
    failures = []
    for n in nets:
        model = os.path.join(a.models, n["file"])
        entry = {"name": n["name"], "kind": n["kind"], "cells": n["cells"], "what": n["what"], "runs": []}
        if n.get("compartments"):
            entry["compartments"] = n["compartments"]  # the manifest's count until a run reports cablesim's
        variants = []
        if "cpu" in backends and not (n.get("largest") and not a.largest_cpu):
            variants.append(("cpu", None))
        if "cuda" in backends:
            variants += [("cuda", s) for s in (["auto"] if n.get("largest") else solvers)]
        for backend, solver in variants:
            label = "cpu %d threads" % threads if backend == "cpu" else "cuda " + solver
            if backend == "cuda" and gpu_missing:
                r = {"status": "skipped", "message": gpu_missing}
            elif a.deadline and time.time() > a.deadline:
                r = {"status": "skipped", "message": "time budget spent (--deadline)"}
            else:
                r = timed(a.cablesim, model, backend, solver, threads if backend == "cpu" else None, tfinal,
                          work, a.timeout, a.reps, a.rep_limit, a.deadline)
                if backend == "cuda" and r["status"] == "skipped":
                    gpu_missing = r["message"]
            r.update({"backend": backend, "requested": solver, "label": label})
            entry["runs"].append(r)
            s = r["status"]
            print("%-34s %-18s %s" % (n["name"], label,
                                      "%.4g s  %.3g cs/s  %d spikes%s" % (r["wall_seconds"], r["cs_per_s"], r["spikes"],
                                                                          "  [%s]" % r["solver"] if r.get("solver") else "")
                                      if s == "ok" else "%s: %s" % (s, r["message"])), flush=True)
            if s == "error":
                failures.append("%s %s: %s" % (n["name"], label, r["message"]))
        ok = [r for r in entry["runs"] if r["status"] == "ok"]
        ref = next((r for r in ok if r["backend"] == "cpu"), ok[0] if ok else None)
        if ref:
            entry["compartments"] = ref["compartments"]
            entry["reference"] = ref["label"]
            for r in ok:
                r["spikes_match"] = r["spikes"] == ref["spikes"]
                if r is not ref and r["spike_times"] and ref["spike_times"] and r["spikes_match"]:
                    r["max_spike_time_diff_ms"] = max(abs(x - y) for x, y in zip(r["spike_times"], ref["spike_times"]))
                if not r["spikes_match"]:
                    m = "SPIKE MISMATCH: %s %s: %d spikes, %s: %d" % (n["name"], r["label"], r["spikes"], ref["label"],
                                                                     ref["spikes"])
                    print("!" * 8 + " " + m, flush=True)
                    mismatches.append(m)
            cpu = next((r for r in ok if r["backend"] == "cpu"), None)
            gpus = [r for r in ok if r["backend"] == "cuda"]
            for r in gpus:
                r["pct_of_bound"] = 100.0 * r["cs_per_s"] / a.bound
                if cpu:
                    r["gpu_over_cpu"] = r["cs_per_s"] / cpu["cs_per_s"]
            if gpus:
                best = max(gpus, key=lambda r: r["cs_per_s"])
                entry["best_gpu"] = best["label"]
                auto = next((r for r in gpus if r["requested"] == "auto"), None)
                if auto:
                    entry["auto_over_best"] = auto["cs_per_s"] / best["cs_per_s"]
        for r in entry["runs"]:
            r.pop("spike_times", None)
        results["networks"].append(entry)
    shutil.rmtree(work, ignore_errors=True)
    results["spike_mismatches"] = mismatches
    results["failures"] = failures
    md = markdown(results)
    print(md)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    if mismatches or failures:
        print("\n".join(["FAILED:"] + mismatches + failures), file=sys.stderr)
        return 1
    return 0


def markdown(res):
    m = res["machine"]
    out = ["### %s, %s (%d cores)%s" % (res["date"], m["cpu"], m["cores"], ", GPU " + m["gpu"] if m["gpu"] else ", no GPU"),
           "",
           "tfinal %g ms, dt %g ms (%d steps); CPU: the OpenMP backend, %d threads. Run time: `/metadata wall_seconds` "
           "(the time loop), median of the repetitions shown. cs/s = compartment-steps per second = compartments x "
           "steps / run time. %% of bound: of %.3g cs/s (48 B per compartment-step at ~4.2 TB/s, H200). GPU/CPU: cs/s "
           "over the CPU run's. Spikes: total in the run; every run must match the CPU run."
           % (res["tfinal_ms"], res["dt_ms"], round(res["tfinal_ms"] / res["dt_ms"]), res["cpu_threads"],
              res["bound_cs_per_s"]),
           "",
           "| network | cells | compartments | run | solver chosen | run time [s] | cs/s | % of bound | GPU/CPU | B per compartment | spikes | reps |",
           "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for e in res["networks"]:
        first = True
        runs = [r for r in e["runs"] if r["status"] != "skipped"]
        skipped = [r for r in e["runs"] if r["status"] == "skipped"]
        for msg in sorted({r["message"] for r in skipped}):  # one row per reason (no GPU, time budget)
            runs.append({"status": "skipped", "label": ", ".join(r["label"] for r in skipped if r["message"] == msg),
                         "message": msg})
        for r in runs:
            lead = "| %s | %d | %s " % (e["name"], e["cells"], e.get("compartments", "?")) if first else "| | | "
            first = False
            if r["status"] != "ok":
                out.append(lead + "| %s | %s | | | | | | | |" % (r["label"], r["status"] + ": " + r["message"].replace("|", "/")[:160]))
                continue
            out.append(lead + "| %s | %s | %.4g | %s | %s | %s | %s | %d%s | %d |" % (
                r["label"], r.get("solver", "–"), r["wall_seconds"], fmt_e(r["cs_per_s"]),
                "%.1f %%" % r["pct_of_bound"] if "pct_of_bound" in r else "–",
                "%.2fx" % r["gpu_over_cpu"] if "gpu_over_cpu" in r else "–",
                "%.0f" % r["bytes_per_compartment"] if "bytes_per_compartment" in r else "–",
                r["spikes"], "" if r.get("spikes_match", True) else " **MISMATCH**", r.get("reps", 1)))
    out.append("")
    aut = [(e["name"], e["auto_over_best"], e["best_gpu"]) for e in res["networks"] if "auto_over_best" in e]
    if aut:
        out.append("`--solver auto` against the fastest GPU variant: " + "; ".join(
            "%s %.2f (best: %s)" % a for a in aut) + ".")
        out.append("")
    if res["spike_mismatches"]:
        out.append("**Spike count mismatches:** " + "; ".join(res["spike_mismatches"]))
    elif res["failures"]:
        out.append("**Failures:** " + "; ".join(res["failures"]))
    else:
        out.append("Every run's spike count equals the CPU run's.")
    return "\n".join(out) + "\n"


# --- tuning the clamps ----------------------------------------------------------------------

def cmd_tune(a):
    """Spikes of each cell alone (one cell, no connections) for a list of clamp amplitudes."""
    src = find_morph_dir(a.morph_dir)
    work = tempfile.mkdtemp(prefix="real_cells_tune_")
    os.makedirs(os.path.join(work, "morph"))
    for c in CELLS:
        shutil.copyfile(os.path.join(src, c[1]), os.path.join(work, "morph", c[1]))
    amps = [float(x) for x in a.amplitudes.split(",")]
    items = [(c[0], None) for c in CELLS] + [("big%d" % b[0], b[0]) for b in BIG] + [("giant", None)]
    for key, big in items:
        counts = []
        for amp in amps:
            if big:
                pop = big_population(big, 1)
                pop["stimuli"][0]["params"]["amplitude"] = amp
            elif key == "giant":
                pop = swc_population("flywire", 1, os.path.join(work, "morph"), scale=1.0, amplitude=amp)[0]
            else:
                pop = swc_population(key, 1, os.path.join(work, "morph"), amplitude=amp)[0]
            path = os.path.join(work, "m.json")
            with open(path, "w") as f:
                json.dump(network([pop]), f)
            r = run_one(a.cablesim, path, "cpu", None, 1, TFINAL, work, 600)
            counts.append(r["spikes"] if r["status"] == "ok" else r["message"])
        print("%-14s " % key + "  ".join("%g nA: %s" % (amp, c) for amp, c in zip(amps, counts)), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return 0


# --- Arbor's GPU busyring beside cablesim ---------------------------------------------------

ARB_RUN = re.compile(r"^\s*model-run\s+([0-9.eE+-]+)", re.M)
ARB_STATS = re.compile(r"Cell stats: (\d+) cells; (\d+) branches; (\d+) compartments")
ARB_SPIKES = re.compile(r"(\d+) spikes generated")


def arbor_params(name, cells, probs, tfinal):
    """Arbor busyring parameters for cablesim's bench busyring trees (peers/arbor/inputs.py)."""
    return {"name": name, "num-cells": cells, "synapses": 1, "min-delay": DELAY, "duration": tfinal,
            "ring-size": cells, "event-weight": 0.2, "record": False, "spikes": True, "dt": DT, "depth": 5,
            "complex": False, "stdp": False, "branch-probs": probs, "compartments": [9, 3],
            "lengths": [200, 20], "prefer-gpu": True, "gpu-group-size": cells, "cpu-group-size": 1}


def cmd_arbor(a):
    from bench_cpu_vs_neuron import busyring_model
    os.makedirs(a.work, exist_ok=True)
    rows = []
    failed = []
    for cells in csv_ints(a.cells):
        for tag, probs in (("full", [1.0, 1.0]), ("rand", [1.0, 0.5])):
            name = "%s-%d" % (tag, cells)
            row = {"network": name, "cells": cells, "branch_probability": probs}
            # Arbor
            pj = os.path.join(a.work, "arbor-%s.json" % name)
            with open(pj, "w") as f:
                json.dump(arbor_params(name, cells, probs, a.tfinal), f, indent=1)
            od = os.path.join(a.work, "arbor-%s" % name)
            os.makedirs(od, exist_ok=True)
            try:
                p = subprocess.run([a.busyring, pj, od], capture_output=True, text=True, timeout=a.timeout)
                out = p.stdout + p.stderr
                with open(os.path.join(a.work, "arbor-%s.log" % name), "w") as f:
                    f.write(out)
                mr, ms, sp = ARB_RUN.search(out), ARB_STATS.search(out), ARB_SPIKES.search(out)
                if p.returncode == 0 and mr and ms:
                    steps = round(a.tfinal / DT)
                    row["arbor"] = {"seconds": float(mr.group(1)), "compartments": int(ms.group(3)),
                                    "cs_per_s": int(ms.group(3)) * steps / float(mr.group(1)),
                                    "spikes": int(sp.group(1)) if sp else None}
                else:
                    row["arbor"] = {"error": "rc %d: %s" % (p.returncode, out.strip()[-300:])}
            except (OSError, subprocess.SubprocessError) as e:
                row["arbor"] = {"error": str(e)}
            # cablesim, same trees (its own random trees for 'rand')
            m = busyring_model(cells, 5, a.tfinal, [200.0, 20.0], [9, 3], 0)
            m["populations"][0]["morphology"]["branch_probability"] = probs
            del m["run"]["threads"]
            mj = os.path.join(a.work, "cablesim-%s.json" % name)
            with open(mj, "w") as f:
                json.dump(m, f)
            r = timed(a.cablesim, mj, "cuda", "auto", None, a.tfinal, a.work, a.timeout, a.reps, a.rep_limit)
            r.pop("spike_times", None)
            row["cablesim"] = r
            if r["status"] == "error":
                failed.append(name + ": " + r["message"])
            print(json.dumps(row), flush=True)
            rows.append(row)
    lines = ["### Arbor busyring on the GPU beside cablesim (%s, %s)" % (
                 datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), machine()["gpu"] or "no GPU"),
             "",
             "Busyring trees, depth 5, lengths [200, 20] µm, CVs per branch [9, 3], one ring, tfinal %g ms, dt %g ms. "
             "full = branch probabilities [1, 1] (identical cells), rand = [1, 0.5] (each simulator grows its own "
             "random trees: same distribution, not the same cells). Arbor: `model-run` of its meter report, its own CV "
             "count (one CV per segment). cablesim: `--backend cuda --solver auto`, `/metadata wall_seconds`, "
             "its own compartment count (NEURON's node layout). The ratio compares cs/s; the run-time ratio is "
             "beside it." % (a.tfinal, DT),
             "",
             "| network | Arbor CVs | Arbor run [s] | Arbor cs/s | cablesim compartments | cablesim run [s] | cablesim cs/s | solver | cablesim/Arbor cs/s | Arbor/cablesim run time |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for row in rows:
        ar, cs = row["arbor"], row["cablesim"]
        acell = "| %d | %.4g | %.3g " % (ar["compartments"], ar["seconds"], ar["cs_per_s"]) if "seconds" in ar else \
            "| %s | | " % ("error: " + ar["error"][-120:].replace("|", "/").replace("\n", " "))
        ccell = "| %d | %.4g | %.3g | %s " % (cs["compartments"], cs["wall_seconds"], cs["cs_per_s"], cs.get("solver", "?")) \
            if cs["status"] == "ok" else "| %s | | | " % (cs["status"] + ": " + cs["message"][:120])
        ratio = "| %.2fx | %.2fx |" % (cs["cs_per_s"] / ar["cs_per_s"], ar["seconds"] / cs["wall_seconds"]) \
            if "seconds" in ar and cs["status"] == "ok" else "| – | – |"
        lines.append("| %s " % row["network"] + acell + ccell + ratio)
    md = "\n".join(lines) + "\n"
    print(md)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    with open(os.path.join(a.work, "arbor.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="write the networks")
    g.add_argument("--out", required=True)
    g.add_argument("--morph-dir", help="the nine SWC files (default ../shared/data/morphologies)")
    g.add_argument("--alone", type=int, default=2048, help="cells of each cell-alone network (0: none)")
    g.add_argument("--mixed", default="128,2048", help="comma list: cells of EACH of the nine in a mixed network")
    g.add_argument("--largest", type=int, default=0, help="cells of each of the nine in the 'largest' network (0: none)")
    g.add_argument("--big-compartments", type=float, default=8e6,
                   help="compartments of each big-cell network (cells = this / cell size; 0: none)")
    g.add_argument("--big-sizes", help="comma list of the big-cell sizes to write (default all: 2000,5000,10000,30000)")
    g.add_argument("--single", help="comma list of single-cell sizes to write (of %s)" % ",".join(str(s[0]) for s in SINGLE))
    g.add_argument("--tfinal", type=float, default=TFINAL)
    g.add_argument("--cablesim", help="count compartments with cablesim too (needed for the random trees)")
    g.add_argument("--check-limit", type=float, default=2e6,
                   help="with --cablesim: count SWC networks up to this many compartments with cablesim too")
    g.add_argument("--threads", type=int, default=0)
    r = sub.add_parser("run", help="time the networks")
    r.add_argument("--models", required=True)
    r.add_argument("--cablesim", default=os.path.join(ROOT, "build", "cablesim"))
    r.add_argument("--backends", default="cpu,cuda")
    r.add_argument("--solvers", default=",".join(SOLVERS))
    r.add_argument("--threads", type=int, default=0, help="CPU threads (default all cores)")
    r.add_argument("--tfinal", type=float, default=0.0, help="[ms] default: the models'")
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--rep-limit", type=float, default=3.0,
                   help="[s] no repetition after a process (set-up + run) longer than this")
    r.add_argument("--deadline", type=float, default=0.0,
                   help="time.time() after which the remaining runs are skipped (0: none)")
    r.add_argument("--bound", type=float, default=BOUND, help="[cs/s] the bandwidth bound")
    r.add_argument("--largest-cpu", action="store_true", help="run the CPU on the 'largest' network too")
    r.add_argument("--timeout", type=int, default=600)
    r.add_argument("--only", help="regex on network names")
    r.add_argument("--json")
    r.add_argument("--md")
    t = sub.add_parser("tune", help="spike counts of each cell alone for clamp amplitudes")
    t.add_argument("--cablesim", required=True)
    t.add_argument("--morph-dir")
    t.add_argument("--amplitudes", default="0.05,0.1,0.2,0.5,1.0")
    b = sub.add_parser("arbor", help="Arbor's GPU busyring beside cablesim's GPU")
    b.add_argument("--busyring", required=True)
    b.add_argument("--cablesim", required=True)
    b.add_argument("--work", required=True)
    b.add_argument("--cells", default="1024,16384")
    b.add_argument("--tfinal", type=float, default=TFINAL)
    b.add_argument("--reps", type=int, default=3)
    b.add_argument("--rep-limit", type=float, default=3.0)
    b.add_argument("--timeout", type=int, default=300)
    b.add_argument("--md")
    a = ap.parse_args()
    return {"generate": cmd_generate, "run": cmd_run, "tune": cmd_tune, "arbor": cmd_arbor}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
