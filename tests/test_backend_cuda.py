#!/usr/bin/python3
"""The CUDA backend gives the CPU backend's results: every validation model and the example
models, with every GPU Hines solver variant and the persistent epoch kernel (solver "epoch"). Spike counts equal, spike times within 1e-9 ms;
traces within float32 rounding of the report (the report stores float32: 2^-23 relative), plus
1e-9 relative for the difference between the backends' double arithmetic. Reports of other
probed variables (probes.variables: hh.m, hh.h, hh.n, a synapse's g, i_membrane with a clamp on
its CV; a ring with them) are
compared the same way, and are identical with each CUDA switch (graphs, fork, hh ahead) on and
off. The built-in exp2syn (ring_exp2syn: its states A, B, g probed) the same way; the epoch solver
refuses it with one line. `auto` (whole-instance trial, wisdom, and the solver-level trial forced
on small networks) runs exactly the solver it chose, named.
Skipped (exit 77) where there is no GPU or the build has no CUDA."""
import argparse
import copy
import json
import os
import subprocess
import sys

import h5py
import numpy as np

VARIANTS = ["auto", "flat", "interleaved", "block_interleaved", "block_shared", "variable", "fine", "fine-small-step",
            "warp", "staged", "chunked", "epoch"]
# a variant run as a solver with switches: fine's fused step with u and the schedule in shared
# memory, which fine takes on its own only on many packs of small distinct cells (at least 3 a
# multiprocessor: networks larger than these models)
VARIANT_RUN = {"fine-small-step": ("fine", {"CS_FINE_STEP_ALWAYS": "1", "CS_FINE_U_SHARED": "1"})}
if os.environ.get("CS_TEST_VARIANTS"):  # a subset, while working on one variant on the device
    VARIANTS = os.environ["CS_TEST_VARIANTS"].split()
SPIKE_TOL = 1e-9  # [ms]
REL_TOL = 1e-9


def run(cablesim, model, out, extra, env=None):
    cmd = [cablesim, "run", model, "-o", out, "-q", "--report-precision", "double"] + extra
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **env) if env else None)


def read(path):
    with h5py.File(path, "r") as f:
        res = {}
        for pop in f["spikes"]:
            g = f["spikes"][pop]
            res["spikes/" + pop] = (np.asarray(g["timestamps"]), np.asarray(g["node_ids"]))
        for pop in f.get("report", {}):
            g = f["report"][pop]
            if "data" in g:
                res["report/" + pop] = np.asarray(g["data"], dtype=np.float64)
            for var in g:  # probes of other variables (probes.variables): /report/<pop>/<variable>/
                if var not in ("data", "mapping"):
                    res[f"report/{pop}/{var}"] = np.asarray(g[var]["data"], dtype=np.float64)
        assert f.attrs["status"] in ("complete", b"complete"), path
    return res


def two_kinds(ring4, work_dir):
    with open(ring4) as f:
        m = json.load(f)
    b = copy.deepcopy(m["populations"][0])
    b["name"] = "ring_b"
    b["biophysics"]["cm"] = 1.4
    b["biophysics"]["mechanisms"][1]["params"]["g"] = 0.002
    m["populations"].append(b)
    c = copy.deepcopy(m["connections"][0])
    c["population"] = "ring_b"
    m["connections"].append(c)
    e = copy.deepcopy(m["events"][0])
    e["target"]["population"] = "ring_b"
    m["events"].append(e)
    path = os.path.join(work_dir, "ring4_two_kinds.json")
    with open(path, "w") as f:
        json.dump(m, f)
    return path


def with_variables(source_dir, work_dir):
    """ring.json with probes of the built-in kernels' STATEs (issue 20 item 4: hh.m, hh.h, hh.n,
    the expsyn's g) and i_membrane beside the voltage, "hh.m" first: the GPU gathers the states
    from the state rows after the state update, i_membrane from v and the clamp (k_imem)."""
    with open(os.path.join(source_dir, "models/examples/ring.json")) as f:
        m = json.load(f)
    for p in m["populations"]:
        if "probes" in p:
            p["probes"]["variables"] = ["hh.m", "v", "hh.h", "hh.n", p["synapses"][0]["name"] + ".g", "i_membrane"]
            p["probes"]["locations"] = p["probes"]["locations"][:1]
    path = os.path.join(work_dir, "ring_variables.json")
    with open(path, "w") as f:
        json.dump(m, f)
    return path


def with_exp2syn(source_dir, work_dir, states=True):
    """ring.json with the built-in exp2syn (tau1 0.5, tau2 3 ms) in place of expsyn, and probes of
    its states A, B and g beside v (states): the GPU runs the built-in's GPU half, generated from
    the same mechanisms/exp2syn.mod as its CPU code (CMakeLists.txt). The epoch solver refuses it.
    Without the states' probes the GPU updates exp2syn ahead (its next step's events and current in
    its state update, inside graphs)."""
    with open(os.path.join(source_dir, "models/examples/ring.json")) as f:
        m = json.load(f)
    for p in m["populations"]:
        for syn in p["synapses"]:
            syn.update(mechanism="exp2syn", params={"tau1": 0.5, "tau2": 3.0, "e": 0.0})
        p["probes"]["variables"] = ["v", "syn.A", "syn.B", "syn.g"] if states else ["v"]
    path = os.path.join(work_dir, "ring_exp2syn.json" if states else "ring_exp2syn_v.json")
    with open(path, "w") as f:
        json.dump(m, f)
    return path


def shares_constants(cablesim, model, variant):
    r = subprocess.run([cablesim, "run", model, "--no-output", "--backend", "cuda", "--solver", variant],
                       capture_output=True, text=True, timeout=600)
    return "identical cells share their constants" in r.stdout


def real_cells(source_dir, work_dir, count=2, tfinal=20.0):
    """The nine real SWC cells of ../shared/data/morphologies, count (default two) of each, hh in
    soma and axon, passive dendrites, a clamp on every soma, probes on every soma: the cells people
    simulate, whose mixed sizes (34 to 1 625 compartments) every GPU solver must handle. None when
    the shared data is absent (it does not travel to every machine)."""
    morph = os.path.join(source_dir, "..", "shared", "data", "morphologies")
    if not os.path.isdir(morph):
        return None
    pops = []
    for f in sorted(x for x in os.listdir(morph) if x.endswith(".swc")):
        m = {"swc": os.path.join(morph, f), "min_radius": 0.1}
        if f.startswith("flywire"):
            m["scale"] = 0.001  # the file is in nanometres (PROVENANCE.md)
        pops.append({"name": "c" + str(len(pops)), "count": count, "morphology": m,
                     "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0, "mechanisms": [
                         {"name": "hh", "region": "soma"}, {"name": "hh", "region": "axon"},
                         {"name": "pas", "region": "dend", "params": {"g": 0.0001, "e": -65.0}}]},
                     "stimuli": [{"mechanism": "iclamp", "location": {"branch": 0, "pos": 0.5}, "cells": "all",
                                  "params": {"delay": 1.0, "duration": 50.0, "amplitude": 0.3}}],
                     "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0},
                     "probes": {"cells": "all", "locations": [{"branch": 0, "pos": 0.5}], "interval": 0.1}})
    path = os.path.join(work_dir, "real_cells.json" if count == 2 else f"real_cells_{count}.json")
    with open(path, "w") as f:
        json.dump({"run": {"tfinal": tfinal, "dt": 0.025}, "discretization": {"max_cv_length": 20.0},
                   "populations": pops}, f)
    return path


def identical_files(a, b):
    """Every dataset of the spikes and the report bit for bit."""
    x, y = read(a), read(b)
    if x.keys() != y.keys():
        return False
    for k in x:
        if k.startswith("spikes/"):
            if not (np.array_equal(x[k][0], y[k][0]) and np.array_equal(x[k][1], y[k][1])):
                return False
        elif not np.array_equal(x[k], y[k]):
            return False
    return True


def files_identical(outs, label, what):
    """An ok or FAIL line for two runs' files (None: that run failed): True when identical."""
    if all(outs) and identical_files(*outs):
        print(f"ok   {label}: {what} give identical files")
        return True
    print(f"FAIL {label}: {what} differ (or a run failed: {outs})")
    return False


def same_as_named(a, model, out, extra, what, detail=""):
    """auto's run (out) against the same model run with its choice named (extra): True when the
    output files are identical; prints an ok or FAIL line starting with what."""
    ref_out = os.path.join(a.work_dir, "auto-named.h5")
    r = run(a.cablesim, model, ref_out, extra)
    if r.returncode == 0 and identical_files(out, ref_out):
        print(f"ok   {what}; identical to naming it" + (f": {detail}" if detail else ""))
        return True
    print(f"FAIL {what}; differs from naming it {extra} ({r.stderr.strip()[-300:]})")
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()
    os.makedirs(a.work_dir, exist_ok=True)
    # auto's wisdom (src/core/cs_wisdom.h) in a file of this run's own, empty at the start: the
    # first auto run of a network measures, the second takes the recorded choice
    wisdom = os.path.join(a.work_dir, "wisdom")
    if os.path.exists(wisdom):
        os.remove(wisdom)
    os.environ["CABLESIM_WISDOM"] = wisdom

    probe = run(a.cablesim, os.path.join(a.source_dir, "models/validation/soma_hh.json"),
                os.path.join(a.work_dir, "probe.h5"), ["--backend", "cuda", "--tfinal", "1"])
    if probe.returncode != 0:
        msg = probe.stderr.strip()
        if "no CUDA device" in msg or "no CUDA support" in msg:
            print("SKIP: " + msg)
            return 77
        print("FAIL: the CUDA backend did not start: " + msg)
        print("0 passed, 1 failed")
        return 1

    models = sorted(os.path.join(a.source_dir, "models/validation", f)
                    for f in os.listdir(os.path.join(a.source_dir, "models/validation")) if f.endswith(".json"))
    models += [os.path.join(a.source_dir, "models/examples", f)
               for f in ("ring.json", "swc_cell.json", "ball_and_stick.json",
                         "artificial_net.json")]  # artificial cells (run on the host) driving an hh soma
    # a 1024-cell busyring: large enough that a missing stream ordering between the event
    # uploads and the step kernels showed (extra spikes) in a first version
    models.append(os.path.join(a.source_dir, "bench/busyring-1024.json"))
    # identical structure, different values: two populations of ball-and-stick cells with
    # different cm and pas; the fused step must not share one cell's constants among them
    models.append(two_kinds(os.path.join(a.source_dir, "models/validation/ring4.json"), a.work_dir))
    ring_vars = with_variables(a.source_dir, a.work_dir)
    models.append(ring_vars)
    ring_exp2syn = with_exp2syn(a.source_dir, a.work_dir)
    models.append(ring_exp2syn)
    ring_exp2syn_v = with_exp2syn(a.source_dir, a.work_dir, states=False)
    models.append(ring_exp2syn_v)
    real = real_cells(a.source_dir, a.work_dir)
    if real:
        models.append(real)
    else:
        print("note: ../shared/data/morphologies absent: the real-cell network is not checked here")
    passed = failed = 0
    worst_spike = [0.0]
    for model in models:
        name = os.path.basename(model)[:-5]
        cpu_out = os.path.join(a.work_dir, name + "-cpu.h5")
        r = run(a.cablesim, model, cpu_out, ["--backend", "cpu"])
        if r.returncode != 0:
            print(f"FAIL {name}: cpu run: {r.stderr.strip()}")
            failed += 1
            continue
        ref = read(cpu_out)
        for variant in VARIANTS:
            gpu_out = os.path.join(a.work_dir, f"{name}-cuda-{variant}.h5")
            solver, env = VARIANT_RUN.get(variant, (variant, None))
            r = run(a.cablesim, model, gpu_out, ["--backend", "cuda", "--solver", solver], env)
            if model in (ring_exp2syn, ring_exp2syn_v) and variant == "epoch":  # refused, with one line
                ok = r.returncode != 0 and "solver 'epoch': mechanisms from catalogues and exp2syn" in r.stderr
                print(f"{'ok  ' if ok else 'FAIL'} {name} [epoch]: refused with one line ({r.stderr.strip()[-160:]})")
                passed, failed = passed + ok, failed + (not ok)
                continue
            if r.returncode != 0:
                print(f"FAIL {name} [{variant}]: cuda run: {r.stderr.strip()}")
                failed += 1
                continue
            got = read(gpu_out)
            problems = []
            worst = [0.0]
            for key, val in ref.items():
                if key.startswith("spikes/"):
                    t0, n0 = val
                    t1, n1 = got[key]
                    if len(t0) != len(t1) or not np.array_equal(n0, n1):
                        problems.append(f"{key}: {len(t1)} spikes on the GPU, {len(t0)} on the CPU")
                    else:
                        d = float(np.max(np.abs(t0 - t1))) if len(t0) else 0.0
                        worst_spike[0] = max(worst_spike[0], d)
                        if d > SPIKE_TOL:
                            problems.append(f"{key}: spike times differ by {d:.3g} ms")
                else:
                    g = got[key]
                    if g.shape != val.shape:
                        problems.append(f"{key}: shape {g.shape} on the GPU, {val.shape} on the CPU")
                        continue
                    # norm-wise: the largest difference over the trace's largest magnitude
                    rel = float(np.max(np.max(np.abs(g - val), axis=0) / np.maximum(np.max(np.abs(val), axis=0), 1e-300)))
                    worst[0] = max(worst[0], rel)
                    if rel > REL_TOL:
                        problems.append(f"{key}: traces differ by {rel:.3g} relative")
            if problems:
                print(f"FAIL {name} [{variant}]: " + "; ".join(problems))
                failed += 1
            else:
                nsp = sum(len(v[0]) for k, v in ref.items() if k.startswith("spikes/"))
                print(f"ok   {name} [{variant}]: {nsp} spikes identical, traces within {worst[0]:.2g} relative")
                passed += 1
    # CUDA graphs replay the kernels that direct launches run, detection and sampling on a second
    # stream beside the state update compute what they compute in order, and hh's current computed
    # at the end of the previous step adds into i and g first as before: bit for bit the same
    # results with each switched off
    ring = os.path.join(a.source_dir, "models/examples/ring.json")
    # hh's update after each launch of the fused step on that launch's rows, where its launches run
    # side by side (staged on the real cells' structures from 384 of each: 3 456 cells, six
    # launches on an H100's 132 multiprocessors) or after the whole step: the same kernel on the
    # same instances, bit for bit; the run must say that it took the first, and a plan of one
    # launch (the 18 real cells, the rings) must not take it
    real_big = real_cells(a.source_dir, a.work_dir, count=384, tfinal=5.0) if real else None
    rand = os.path.join(a.work_dir, "busyring-rand-512.json")
    with open(rand, "w") as f:
        subprocess.run([sys.executable, os.path.join(a.source_dir, "bench/busyring_json.py"), "--rand", "512", "5"],
                       stdout=f, check=True)
    # on networks of built-in mechanisms only, the state updates and detection after the solve in
    # one launch compute what the launches on two streams compute, and expsyn's events summed by
    # its instances in its current's launch what the delivery's atomics add (one event a synapse
    # a step here), also when that launch after the solve gives the next step's (hh's current then
    # added atomically beside one synapse's: the same sum); the run says so, and not where a
    # catalogue mechanism is in (exp2syn)
    for model, expect in ((ring, True), (rand, True), (ring_exp2syn, False)):
        detail = subprocess.run([a.cablesim, "run", model, "--no-output", "--backend", "cuda", "--tfinal", "0.1"],
                                capture_output=True, text=True, timeout=600).stdout
        said = "the state updates and detection in one launch after the solve" in detail
        print(f"{'ok  ' if said == expect else 'FAIL'} {os.path.basename(model)[:-5]}: one launch after the solve "
              f"{'expected' if expect else 'not expected'}, {'said' if said else 'not said'} in the run's summary")
        passed, failed = passed + (said == expect), failed + (said != expect)
    # a catalogue synapse type (the built-in exp2syn's generated GPU half) updated ahead: its next
    # step's events and current in its state update, inside graphs, where no probe reads a state
    for model, expect in ((ring_exp2syn_v, True), (ring_exp2syn, False), (ring, False)):
        detail = subprocess.run([a.cablesim, "run", model, "--no-output", "--backend", "cuda", "--solver", "staged",
                                 "--tfinal", "0.1"], capture_output=True, text=True, timeout=600).stdout
        said = "catalogue synapse type updated ahead" in detail
        print(f"{'ok  ' if said == expect else 'FAIL'} {os.path.basename(model)[:-5]}: exp2syn updated ahead "
              f"{'expected' if expect else 'not expected'}, {'said' if said else 'not said'} in the run's summary")
        passed, failed = passed + (said == expect), failed + (said != expect)
    # staged's rings hold the constants once a row where every group of a launch of 4 or 2 cells a
    # warp reads a group of equal cells (the real cells, 384 copies of each, at 4 and 2 cells a
    # warp: CS_STAGED_CELLS), and the run says so; not when switched off; and the two read the same
    # values: identical files
    for cells in ("4", "2"):
        if not real_big:
            break
        outs = []
        for on, expect in (("1", True), ("0", False)):
            env = dict(os.environ, CS_STAGED_CELLS=cells, CS_STAGED_SLOT_CONSTANTS=on)
            detail = subprocess.run([a.cablesim, "run", real_big, "--no-output", "--backend", "cuda", "--solver", "staged",
                                     "--tfinal", "0.1"], capture_output=True, text=True, timeout=600, env=env).stdout
            said = "launches' rings" in detail or "launch' rings" in detail
            print(f"{'ok  ' if said == expect else 'FAIL'} real_cells_384 [staged, {cells} cells a warp, slot constants {on}]: "
                  f"constants once a row {'expected' if expect else 'not expected'}, {'said' if said else 'not said'} in the "
                  f"run's summary" + ("" if said == expect else ": " + " ".join(l for l in detail.splitlines() if "Hines" in l)[:1500]))
            passed, failed = passed + (said == expect), failed + (said != expect)
            out = os.path.join(a.work_dir, f"slot{on}-{cells}.h5")
            r = run(a.cablesim, real_big, out, ["--backend", "cuda", "--solver", "staged"],
                    {"CS_STAGED_CELLS": cells, "CS_STAGED_SLOT_CONSTANTS": on})
            outs.append(out if r.returncode == 0 else None)
        ok = files_identical(outs, f"real_cells_384 [staged, {cells} cells a warp]", "constants once a row and once a cell")
        passed, failed = passed + ok, failed + (not ok)
    for switch, what in (("CS_CUDA_GRAPHS", "graphs"), ("CS_CUDA_FORK", "the forked stream"),
                         ("CS_CUDA_HH_AHEAD", "hh's next current in its state update"),
                         ("CS_CUDA_HH_AFTER_LAUNCH", "hh's update after each launch of the step"),
                         ("CS_CUDA_PDL", "programmatic dependent launches"),
                         ("CS_CUDA_AFTER_SOLVE", "one launch after the solve"),
                         ("CS_CUDA_EVENTS_CURRENT", "expsyn's events in its current's launch"),
                         ("CS_CUDA_SYNAPSES_AHEAD", "the next step's expsyn events and currents after the solve"),
                         ("CS_CUDA_CATALOGUE_AHEAD", "exp2syn's next events and current in its state update")):
        cases = [("interleaved", ring), ("staged", ring), ("fine", ring), ("interleaved", ring_vars)]
        if switch == "CS_CUDA_CATALOGUE_AHEAD": # the same calls per instance, in the same order
            cases = [("staged", ring_exp2syn_v), ("fine", ring_exp2syn_v), ("interleaved", ring_exp2syn_v)]
        if switch == "CS_CUDA_PDL": # every kernel waits for the one before it: the same results; the
            # small distinct rings' fine fused step (the kernel that starts with its schedule) too
            cases += [("fine", rand), ("staged", ring_exp2syn)]
        if switch in ("CS_CUDA_AFTER_SOLVE", "CS_CUDA_EVENTS_CURRENT", "CS_CUDA_SYNAPSES_AHEAD"):
            cases.append(("fine", rand))
            if real_big: # hh updated after each launch, the rest in the one launch
                cases.append(("staged", real_big))
        if switch == "CS_CUDA_HH_AFTER_LAUNCH" and real_big:
            cases.append(("staged", real_big))
            for model, expect in ((real_big, True), (real, False), (ring, False)):
                detail = subprocess.run([a.cablesim, "run", model, "--no-output", "--backend", "cuda", "--solver", "staged",
                                         "--tfinal", "0.1"], capture_output=True, text=True, timeout=600).stdout
                said = "hh's state update follows each launch of the step" in detail
                ok = said == expect and "staged" in detail
                print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(model)[:-5]} [staged]: hh's update after each launch "
                      f"{'expected' if expect else 'not expected'}, {'said' if said else 'not said'} in the run's summary")
                passed, failed = passed + ok, failed + (not ok)
        for variant, model in cases:
            outs = []
            for on in ("0", "1"):
                out = os.path.join(a.work_dir, f"{switch}{on}-{variant}.h5")
                out = os.path.join(a.work_dir, f"{switch}{on}-{variant}-{os.path.basename(model)[:-5]}.h5")
                r = run(a.cablesim, model, out, ["--backend", "cuda", "--solver", variant], {switch: on})
                outs.append(out if r.returncode == 0 else None)
            ok = files_identical(outs, f"{os.path.basename(model)[:-5]} [{variant}]", f"{what} on and off")
            passed, failed = passed + ok, failed + (not ok)
    # pipelined epochs (one process on a GPU: epoch k + 1 launched behind epoch k, epochs of half the
    # min delay) give what one epoch at a time gives, bit for bit: the events, the spikes, the
    # samples (a model of probes of every kind), artificial cells run on the host between epochs
    busy = os.path.join(a.source_dir, "bench/busyring-1024.json")
    art = os.path.join(a.source_dir, "models/examples/artificial_net.json")
    for model in (ring, ring_vars, ring_exp2syn, ring_exp2syn_v, busy, art):
        outs = []
        for on in ("0", "1"):
            out = os.path.join(a.work_dir, f"pipeline{on}-{os.path.basename(model)[:-5]}.h5")
            r = subprocess.run([a.cablesim, "run", model, "-o", out, "-q", "--report-precision", "double",
                                "--backend", "cuda"], capture_output=True, text=True, timeout=600,
                               env=dict(os.environ, CS_CUDA_PIPELINE=on))
            outs.append(out if r.returncode == 0 else None)
        mname = os.path.basename(model)[:-5]
        nsp = sum(len(v[0]) for k, v in read(outs[1]).items() if k.startswith("spikes/")) if outs[1] else 0
        if all(outs) and identical_files(*outs) and nsp > 0:
            print(f"ok   {mname}: pipelined epochs give the files of one epoch at a time ({nsp} spikes)")
            passed += 1
        else:
            print(f"FAIL {mname}: pipelined epochs and one at a time differ (or a run failed, or no spike: {outs})")
            failed += 1
    # the same run twice gives the same file: no race in a solver, no order of atomics that
    # reaches the results (session 12 saw staged's files differ between two launch paths whose
    # threads compute the same, and the cause was not found without a GPU)
    for variant in ("staged", "interleaved", "fine", "epoch"):
        outs = []
        for rep in range(3):
            out = os.path.join(a.work_dir, f"again{rep}-{variant}.h5")
            r = subprocess.run([a.cablesim, "run", ring, "-o", out, "-q", "--report-precision", "double",
                                "--backend", "cuda", "--solver", variant], capture_output=True, text=True, timeout=600)
            outs.append(out if r.returncode == 0 else None)
        if all(outs) and identical_files(outs[0], outs[1]) and identical_files(outs[0], outs[2]):
            print(f"ok   ring [{variant}]: three runs give identical files")
            passed += 1
        else:
            print(f"FAIL ring [{variant}]: three runs do not give identical files (or a run failed: {outs})")
            failed += 1
    # auto measures its candidates on throw-away instances: the run is the chosen one's, bit for bit
    for model in [m for m in (ring, real) if m]:
        out = os.path.join(a.work_dir, "auto-backend.h5")
        r = subprocess.run([a.cablesim, "run", model, "-o", out, "--report-precision", "double",
                            "--backend", "auto"], capture_output=True, text=True, timeout=600)
        chosen = [l.split("chosen: ")[1].split(" (")[0] for l in r.stdout.splitlines() if "chosen: " in l]
        if r.returncode != 0 or len(chosen) != 1:
            print(f"FAIL {os.path.basename(model)} [backend auto]: rc {r.returncode}, no 'chosen:' line: {r.stdout[-500:]}")
            failed += 1
            continue
        words = chosen[0].split()
        extra = ["--backend", "cpu"] if words[0] == "cpu" else ["--backend", "cuda", "--solver", words[1]]
        # "cuda auto" resolves to the same plan as the variant it names
        ok = same_as_named(a, model, out, extra, f"{os.path.basename(model)} [backend auto]: chose {chosen[0]}")
        passed += ok
        failed += not ok
        # the same network again: the choice comes from the wisdom file, with no trial, and the run
        # is the same candidate's, bit for bit
        out2 = os.path.join(a.work_dir, "auto-wisdom.h5")
        r3 = subprocess.run([a.cablesim, "run", model, "-o", out2, "--report-precision", "double",
                             "--backend", "auto"], capture_output=True, text=True, timeout=600)
        line = [l for l in r3.stdout.splitlines() if "auto: from wisdom" in l]
        want = "auto: from wisdom (%s): %s" % (wisdom, words[0])
        if r3.returncode == 0 and len(line) == 1 and want in line[0] and identical_files(out, out2):
            print(f"ok   {os.path.basename(model)} [backend auto, again]: {line[0].strip()[:120]}")
            passed += 1
        else:
            print(f"FAIL {os.path.basename(model)} [backend auto, again]: rc {r3.returncode}, want '{want}': "
                  f"{(line or [r3.stdout[-300:]])[0]}")
            failed += 1
    # auto's solver-level trial (networks of >= 2 M compartments; forced here by
    # CABLESIM_AUTO_SOLVER_TRIAL=0): the GPU solvers ranked by their membrane step alone, timed
    # without building instances; it chooses one of them, and the run is that one's named, bit for bit
    solvers = {"flat", "interleaved", "block_interleaved", "block_shared", "variable", "fine", "warp", "staged",
               "chunked", "epoch"}
    for model in [m for m in (ring, real) if m]:
        out = os.path.join(a.work_dir, "auto-solver-level.h5")
        r = subprocess.run([a.cablesim, "run", model, "-o", out, "--report-precision", "double", "--backend", "cuda",
                            "--solver", "auto"], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, CABLESIM_AUTO_SOLVER_TRIAL="0", CABLESIM_WISDOM="off"))
        line = [l for l in r.stdout.splitlines() if "auto: solver-level trial" in l and "chosen: " in l]
        words = line[0].split("chosen: ")[1].split(" (")[0].split() if line else []
        name = os.path.basename(model)
        if r.returncode != 0 or len(words) != 2 or words[0] != "cuda" or words[1] not in solvers or \
                "ms/step" not in line[0]:
            print(f"FAIL {name} [solver-level trial]: rc {r.returncode}, chosen {words}: "
                  f"{(line or [r.stdout[-300:] + r.stderr[-300:]])[0][:600]}")
            failed += 1
            continue
        ok = same_as_named(a, model, out, ["--backend", "cuda", "--solver", words[1]],
                           f"{name} [solver-level trial]: chose {words[1]}", line[0].strip()[:300])
        passed += ok
        failed += not ok
    # the fused step shares one cell's constants exactly when every cell is identical
    for model, want in (("models/validation/ring4.json", True), (models[-1], False)):
        path = os.path.join(a.source_dir, model)
        got = shares_constants(a.cablesim, path, "interleaved")
        if got == want:
            print(f"ok   {os.path.basename(path)} [interleaved]: constants shared: {got}")
            passed += 1
        else:
            print(f"FAIL {os.path.basename(path)} [interleaved]: constants shared: {got}, expected {want}")
            failed += 1
    # a probe of an ASSIGNED variable of a built-in (hh.i: the GPU kernels keep hh's STATEs only)
    # is refused on the GPU with one line; the CPU backend records it
    with open(ring_vars) as f:
        m = json.load(f)
    m["populations"][0]["probes"]["variables"] = ["v", "hh.i"]
    hh_i = os.path.join(a.work_dir, "ring_hh_i.json")
    with open(hh_i, "w") as f:
        json.dump(m, f)
    r = subprocess.run([a.cablesim, "run", hh_i, "--no-output", "--backend", "cuda", "-q"], capture_output=True,
                       text=True, timeout=600)
    lines = r.stderr.strip().splitlines()
    if r.returncode > 0 and len(lines) == 1 and "hh.i" in lines[0] and "--backend cpu" in lines[0]:
        print("ok   hh.i on the GPU: " + lines[0])
        passed += 1
    else:
        print(f"FAIL hh.i on the GPU: rc {r.returncode}, stderr {r.stderr!r}")
        failed += 1
    # an unknown --solver: one line listing the Hines solvers and epoch
    r = subprocess.run([a.cablesim, "run", os.path.join(a.source_dir, "models/examples/ring.json"), "--no-output",
                        "--backend", "cuda", "--solver", "bogus", "-q"], capture_output=True, text=True, timeout=600)
    lines = r.stderr.strip().splitlines()
    if r.returncode > 0 and len(lines) == 1 and "bogus" in lines[0] and "staged" in lines[0] and "epoch" in lines[0]:
        print("ok   unknown --solver: " + lines[0])
        passed += 1
    else:
        print(f"FAIL unknown --solver: rc {r.returncode}, stderr {r.stderr!r}")
        failed += 1
    # out of GPU memory: one line naming what could not be allocated, no output file left
    out = os.path.join(a.work_dir, "oom.h5")
    r = subprocess.run([a.cablesim, "run", os.path.join(a.source_dir, "models/examples/ring.json"), "-o", out,
                        "--backend", "cuda", "-q"], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, CABLESIM_GPU_MEMORY_LIMIT="100000"))
    lines = r.stderr.strip().splitlines()
    if r.returncode > 0 and len(lines) == 1 and "GPU: cannot allocate" in lines[0] and not os.path.exists(out):
        print("ok   out of GPU memory: " + lines[0])
        passed += 1
    else:
        print(f"FAIL out of GPU memory: rc {r.returncode}, stderr {r.stderr!r}, file left: {os.path.exists(out)}")
        failed += 1
    print(f"largest spike-time difference over all runs: {worst_spike[0]:.3g} ms")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
