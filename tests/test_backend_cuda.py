#!/usr/bin/python3
"""The CUDA backend gives the CPU backend's results: every validation model and the example
models, with every GPU Hines solver variant. Spike counts equal, spike times within 1e-9 ms;
traces within float32 rounding of the report (the report stores float32: 2^-23 relative), plus
1e-9 relative for the difference between the backends' double arithmetic.
Skipped (exit 77) where there is no GPU or the build has no CUDA."""
import argparse
import copy
import json
import os
import subprocess
import sys

import h5py
import numpy as np

VARIANTS = ["auto", "flat", "interleaved", "block_interleaved", "block_shared", "variable", "fine", "warp", "staged"]
SPIKE_TOL = 1e-9  # [ms]
REL_TOL = 1e-9


def run(cablesim, model, out, extra):
    cmd = [cablesim, "run", model, "-o", out, "-q", "--report-precision", "double"] + extra
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def read(path):
    with h5py.File(path, "r") as f:
        res = {}
        for pop in f["spikes"]:
            g = f["spikes"][pop]
            res["spikes/" + pop] = (np.asarray(g["timestamps"]), np.asarray(g["node_ids"]))
        for pop in f.get("report", {}):
            res["report/" + pop] = np.asarray(f["report"][pop]["data"], dtype=np.float64)
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


def shares_constants(cablesim, model, variant):
    r = subprocess.run([cablesim, "run", model, "--no-output", "--backend", "cuda", "--solver", variant],
                       capture_output=True, text=True, timeout=600)
    return "identical cells share their constants" in r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()
    os.makedirs(a.work_dir, exist_ok=True)

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
               for f in ("ring.json", "swc_cell.json", "ball_and_stick.json")]
    # a 1024-cell busyring: large enough that a missing stream ordering between the event
    # uploads and the step kernels showed (extra spikes) in a first version
    models.append(os.path.join(a.source_dir, "bench/busyring-1024.json"))
    # identical structure, different values: two populations of ball-and-stick cells with
    # different cm and pas; the fused step must not share one cell's constants among them
    models.append(two_kinds(os.path.join(a.source_dir, "models/validation/ring4.json"), a.work_dir))
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
            r = run(a.cablesim, model, gpu_out, ["--backend", "cuda", "--solver", variant])
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
