#!/usr/bin/python3
"""cablesim over several MPI ranks (mpirun --oversubscribe, CPU backend).

Every example, the built-in model (shortened) and a random network with two populations and
a cell count not divisible by 3 run on 1, 2, 3 and 4 ranks; their spikes and traces (every
dataset of the file but /profile) must be bitwise identical to the single-process run of the
same binary. A failure seen by one rank (a voltage that blows up on a cell of the last rank; an
unwritable output on rank 0) must end every rank, non-zero, with one line naming the rank,
within a timeout. The partition must follow the estimated cost, not the cell count. A SONATA
circuit (tests/sonata_circuit.py) gives on 1-4 ranks the spikes and bmtk-layout reports of one
process, bitwise.

Skipped (exit 77) when the binary is not built with MPI or mpirun is absent.
Usage: test_mpi.py --cablesim PATH --source-dir DIR --work-dir DIR [--only sonata]
"""
import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np

import full_disk
import sonata_circuit

TIMEOUT = 60.0  # [s] a run that takes longer has hung
RANKS = (1, 2, 3, 4)

# Two populations (29 ball-and-stick, 50 random trees: 79 cells), random and ring connections,
# a clamp and kicks, probes on every cell: the report's columns are spread over every rank;
# probes of mechanism states (issue 20 item 4: hh.m, hh.i, syn.g, i_membrane) beside the voltage, each a
# report of its own (/report/<pop>/<variable>/), "hh.m" listed before "v".
RANDOM_NET = {
    "run": {"tfinal": 40.0, "dt": 0.025, "seed": 7},
    "populations": [
        {"name": "bs", "count": 29,
         "morphology": {"generator": "ball_and_stick", "soma_radius": 8.0, "dend_length": 200.0,
                        "dend_radius": 0.5, "dend_cvs": 7},
         "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0,
                        "mechanisms": [{"name": "hh", "region": "soma"},
                                       {"name": "pas", "region": "dend", "params": {"g": 0.0001, "e": -65.0}}]},
         "synapses": [{"name": "syn", "mechanism": "expsyn", "location": {"branch": 0, "pos": 0.5},
                       "params": {"tau": 2.0, "e": 0.0}}],
         "stimuli": [{"mechanism": "iclamp", "location": {"branch": 0, "pos": 0.5}, "cells": [0, 5, 28],
                      "params": {"delay": 2.0, "duration": 30.0, "amplitude": 0.3}}],
         "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0},
         "probes": {"cells": "all", "locations": [{"branch": 0, "pos": 0.5}, {"branch": 1, "pos": 1.0}],
                    "interval": 0.1, "variables": ["v", "syn.g"]}},
        {"name": "tree", "count": 50,
         "morphology": {"generator": "random_tree", "soma_radius": 6.3, "dend_radius": 0.5, "depth": 4,
                        "branch_probability": [1.0, 0.5], "length": [150.0, 20.0], "cvs": [4, 2]},
         "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0,
                        "mechanisms": [{"name": "hh", "region": "soma"},
                                       {"name": "pas", "region": "dend", "params": {"g": 0.0001, "e": -65.0}}]},
         "synapses": [{"name": "syn", "mechanism": "expsyn", "location": {"branch": 0, "pos": 0.5},
                       "params": {"tau": 2.0, "e": 0.0}}],
         "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0},
         "probes": {"cells": [49, 3, 17, 30, 0], "locations": [{"branch": 0, "pos": 0.5}], "interval": 0.05,
                    "variables": ["hh.m", "v", "hh.i", "syn.g", "i_membrane"]}},
    ],
    "connections": [
        {"type": "random", "source": "bs", "target": "tree", "synapse": "syn", "indegree": 3,
         "weight": 0.05, "delay": 1.5},
        {"type": "random", "source": "tree", "target": "bs", "synapse": "syn", "indegree": 2,
         "weight": 0.04, "delay": 2.0},
        {"type": "ring", "population": "tree", "synapse": "syn", "weight": 0.1, "delay": 3.0},
    ],
    "events": [{"target": {"population": "tree", "cell": 0, "synapse": "syn"}, "time": 1.0, "weight": 0.2},
               {"target": {"population": "bs", "cell": 20, "synapse": "syn"}, "time": 4.0, "weight": 0.2}],
}

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}")
    sys.stdout.flush()


def mpirun():
    return shutil.which("mpirun") or shutil.which("mpiexec")


def run(cmd, cwd):
    env = dict(os.environ)
    if cmd[0] == mpirun():
        # OpenMPI leaks at MPI_Finalize from plugins it has unloaded (unsuppressible "<unknown
        # module>" frames); under ASan the runs keep every memory-error check but LeakSanitizer
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or "", e.stderr or ""


def cablesim(exe, nrank, args, cwd, env=None):
    base = [exe, "run"] + args + ["-q", "--threads", "1"]
    if nrank == 0:  # the plain single process
        return run(base, cwd)
    # -x passes a variable to every rank (CABLESIM_MPI_OUTPUT=gather: rank 0's serial writer)
    xs = sum((["-x", f"{k}={v}"] for k, v in (env or {}).items()), [])
    return run([mpirun(), "--oversubscribe", "--allow-run-as-root", "-np", str(nrank)] + xs + base, cwd)


def meta(path, name):
    with h5py.File(path, "r") as f:
        v = f["metadata"].attrs.get(name)
    return v.decode() if isinstance(v, bytes) else v


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset)
                     and not n.startswith("profile") else None)
        status = f.attrs["status"]
    return out, status


def identical(ref, other):
    """Names of the datasets that differ (bitwise) between two files."""
    a, sa = datasets(ref)
    b, sb = datasets(other)
    bad = sorted(set(a) ^ set(b))
    for k in set(a) & set(b):
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
            bad.append(k)
    if sa != sb:
        bad.append("status")
    return bad, a


def parallel_hdf5(exe):
    """Whether exe writes through parallel HDF5 (else rank 0's writer: CABLESIM_MPI_SERIAL_HDF5)."""
    return "libhdf5_openmpi" in subprocess.run(["ldd", exe], capture_output=True, text=True).stdout


def full_disk_sweep(exe, work):
    """The collective writer on a full disk (tests/enospc_shim.c, as test_output_enospc.py does for
    one process): for budgets from nothing to more than the file, on 2 and 3 ranks, every run ends
    in time with exit 1 and one line naming the file and the cause, and leaves no file or one that
    h5py reads, marked incomplete, with finite samples; with room enough it is complete. Before
    session 12 a rank failing inside a collective HDF5 call left the others waiting in it."""
    shim = os.path.join(os.path.dirname(exe), "tests", "libcs_enospc_shim.so")
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
    if not os.path.exists(shim) or "libasan" in ldd:
        print(f"skipped: full disk over several ranks (no ENOSPC shim at {shim}, or an ASan build)")
        return
    pop = full_disk.POP
    model = full_disk.write_model(work)
    out = os.path.join(work, "full.h5")
    collective = parallel_hdf5(exe)  # rank 0's writer: the single process's messages and phases
    for n in (2, 3):
        def run_with(budget):
            if os.path.exists(out):
                os.remove(out)
            return cablesim(exe, n, [model, "-o", out], work, env={"LD_PRELOAD": shim, "CS_ENOSPC_AFTER": str(budget)})

        rc, _, err = run_with(1 << 40)
        ok = rc == 0 and os.path.exists(out)
        if ok:
            with h5py.File(out, "r") as f:
                ok = f.attrs["status"] == "complete" and f[f"report/{pop}/data"].shape == (401, 1024)
        check(ok, f"{n} ranks, full disk: with room enough the run completes under the shim (rc {rc}) {err[-200:]!r}")
        if not ok:
            continue
        total = os.path.getsize(out)  # [bytes]
        seen = set()
        for budget in sorted({0, 1000, 30000, 70000, 150000, 300000} | {total * k // 8 for k in range(1, 8)}
                             | {total + d for d in (-20000, 0, 100000)}
                             # the final flush and /profile: a band ~20 kB wide past the file
                             # (the reservations' margins), where the file's size varies by a few kB
                             | {total + d for d in range(180000, 265000, 5000)}):
            rc, _, err = run_with(budget)
            lines = [l for l in err.splitlines() if l.startswith("cablesim: error:")]
            problems = []
            if rc == 0 and not lines:
                problems = [] if budget >= total else ["completed with less room than the file needs"]
                state = "complete"
            else:
                if rc in (0, "timeout") or (isinstance(rc, int) and rc < 0):
                    problems.append(f"rc {rc} (want 1: not 0, not a hang, not a signal)")
                cause = "No space left on device" in lines[0] if lines else False
                if not collective and lines and "cannot create" in lines[0]:
                    cause = True  # as test_output_enospc.py accepts from one process
                if len(lines) != 1 or out not in lines[0] or not cause:
                    problems.append(f"want one line naming {out} and the cause: {lines or err[-300:]!r}")
                if [w for w in ("Segmentation", "core dumped", "signal 11") if w in err]:
                    problems.append("crash report")
                state, left = full_disk.left_file(out)
                problems += left
                for what in ("cannot write the output file's layout", "cannot append", "cannot flush",
                             "cannot write /profile"):
                    if lines and what in lines[0]:
                        seen.add(what)
            check(not problems, f"{n} ranks, room for {budget} bytes: {state}: "
                                f"{lines[0][17:140] if lines else rc} {'; '.join(problems)}")
        want = 4 if collective else 2  # rank 0's writer: its layout failures say "cannot create"
        check(len(seen) >= want and "cannot append" in seen and "cannot flush" in seen,
              f"{n} ranks, full disk: the sweep reached the appends and the flush (collective writer: also the "
              f"layout and the profile): {sorted(seen)}")


def bmtk_report(path):
    """The datasets of a report in bmtk's layout (output_dir/<report>.h5)."""
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out


def sonata_case(exe, work):
    """A SONATA circuit (tests/sonata_circuit.py: 14 hh cells and 2 IntFire1 cells, recurrent,
    bmtk's seeded synapse placement, virtual inputs) on 1-4 ranks: the spikes file and every
    report file that the config asks for in output_dir (bmtk's layout) bitwise those of one
    process."""
    d = os.path.join(work, "sonata")
    os.makedirs(d, exist_ok=True)
    cfgs = {n: sonata_circuit.write(d, h5py, np, f"out_np{n}") for n in (0,) + RANKS}
    rc, _, err = cablesim(exe, 0, [cfgs[0]], d)
    check(rc == 0, f"sonata: single process runs (rc {rc}) {err.strip()[:200]}")
    if rc != 0:
        return
    ref_dir = os.path.join(d, "out_np0")
    # every report file: one per report, one more per further variable of a list (soma_list_v)
    reports = sorted(f[:-3] for f in os.listdir(ref_dir) if f.endswith(".h5") and f != "spikes.h5")
    with open(cfgs[0]) as f:
        check(set(json.load(f)["reports"]) | {"soma_list_v"} == set(reports),
              f"sonata: one process writes every report file {reports}")
    ref_rep = {r: bmtk_report(os.path.join(ref_dir, f"{r}.h5")) for r in reports}
    ref_data, _ = datasets(os.path.join(ref_dir, "spikes.h5"))
    nspk = len(ref_data["spikes/net/timestamps"])
    fired = len(set(ref_data["spikes/net/node_ids"].tolist()))
    check(fired == sonata_circuit.NBIO + sonata_circuit.NPOINT,
          f"sonata: every cell of the circuit fires ({fired} of {sonata_circuit.NBIO + sonata_circuit.NPOINT}, "
          f"{nspk} spikes): the comparison is not vacuous")
    for n in RANKS:
        rc, _, err = cablesim(exe, n, [cfgs[n]], d)
        if rc != 0:
            check(False, f"sonata: {n} ranks run (rc {rc}): {err.strip()[:300]}")
            continue
        out_dir = os.path.join(d, f"out_np{n}")
        bad, _ = identical(os.path.join(ref_dir, "spikes.h5"), os.path.join(out_dir, "spikes.h5"))
        for r in reports:
            got = bmtk_report(os.path.join(out_dir, f"{r}.h5"))
            bad += [f"{r}.h5:{k}" for k in sorted(set(got) | set(ref_rep[r]))
                    if k not in got or k not in ref_rep[r] or got[k].dtype != ref_rep[r][k].dtype
                    or got[k].shape != ref_rep[r][k].shape or got[k].tobytes() != ref_rep[r][k].tobytes()]
        check(not bad, f"sonata: {n} ranks: the spikes file ({nspk} spikes) and the reports {reports} bitwise "
                       f"those of one process{' differ: ' + ', '.join(bad) if bad else ''}")
    # spikes_sort_order id (sorted on rank 0 after the collective file is closed): 3 ranks as one
    runs = []
    for n in (0, 3):
        cfg = sonata_circuit.write(d, h5py, np, f"out_id{n}", sort_order="id")
        runs.append(cablesim(exe, n, [cfg], d)[0])
    paths = [os.path.join(d, f"out_id{n}", "spikes.h5") for n in (0, 3)]
    bad, data = identical(*paths) if runs == [0, 0] else (["run"], {})
    ids = data.get("spikes/net/node_ids", np.zeros(0))
    check(not bad and len(ids) == nspk and bool(np.all(np.diff(ids.astype(np.int64)) >= 0)),
          f"sonata: spikes_sort_order id on 3 ranks: bitwise one process's, sorted by node id {bad}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--only", choices=["sonata"], help="run one case alone")
    a = ap.parse_args()
    exe = os.path.abspath(a.cablesim)
    if not mpirun():
        print("skipped: no mpirun (apt-get install openmpi-bin, or scripts/deps.sh mpi)")
        return 77
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
    if "libmpi" not in ldd:
        print(f"skipped: {exe} is not built with MPI (build with scripts/test-mpi.sh)")
        return 77
    work = os.path.abspath(a.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    src = os.path.abspath(a.source_dir)
    if a.only == "sonata":
        sonata_case(exe, work)
        print(f"{passed} passed, {failed} failed")
        return 1 if failed else 0
    net_path = os.path.join(work, "random_net.json")
    with open(net_path, "w") as f:
        json.dump(RANDOM_NET, f)

    cases = [("random_net", net_path, []),
             ("default", os.path.join(src, "models", "default.json"), ["--tfinal", "25"]),
             # artificial cells (NetStim, VecStim, IntFire1/2/4) driving an hh soma: issue 27
             ("artificial_times_file", os.path.join(src, "tests", "data", "artificial_models", "builtin_net.json"), [])]
    for name in sorted(os.listdir(os.path.join(src, "models", "examples"))):
        if name.endswith(".json"):
            cases.append((name[:-5], os.path.join(src, "models", "examples", name), ["--tfinal", "30"]))

    for name, model, extra in cases:
        ref = os.path.join(work, f"{name}.single.h5")
        args = [model, "--report-precision", "double"] + extra
        rc, out, err = cablesim(exe, 0, args + ["-o", ref], work)
        check(rc == 0, f"{name}: single process runs (rc {rc}) {err.strip()[:200]}")
        if rc != 0:
            continue
        for n in RANKS:
            path = os.path.join(work, f"{name}.np{n}.h5")
            rc, out, err = cablesim(exe, n, args + ["-o", path], work)
            if rc != 0:
                check(False, f"{name}: {n} ranks run (rc {rc}): {err.strip()[:300]}")
                continue
            bad, data = identical(ref, path)
            nspk = sum(len(v) for k, v in data.items() if k.endswith("timestamps"))
            ncol = sum(v.shape[1] for k, v in data.items() if k.endswith("/data"))
            check(not bad, f"{name}: {n} ranks bitwise identical to one process "
                           f"({nspk} spikes, {ncol} report columns){' differ: ' + ', '.join(bad) if bad else ''}")
    # the runs above went through the collective writer (parallel HDF5); the file says so, has
    # the single process's profile phases (written by rank 0 after the collective close) and
    # reads in libsonata when it is installed
    par = os.path.join(work, "random_net.np3.h5")
    w = meta(par, "output_writer") or ""
    want = "parallel HDF5" if parallel_hdf5(exe) else "rank 0"  # CABLESIM_MPI_SERIAL_HDF5: rank 0's writer
    check(w.startswith(want), f"3 ranks: metadata output_writer = {w!r} (want {want}...)")
    with h5py.File(par, "r") as f, h5py.File(os.path.join(work, "random_net.single.h5"), "r") as g:
        same = [x.decode() if isinstance(x, bytes) else x for x in f["profile/phase"][()]] == \
               [x.decode() if isinstance(x, bytes) else x for x in g["profile/phase"][()]]
        check(same and f.attrs["status"] == "complete" and f["metadata"].attrs["ranks"] == 3,
              "3 ranks: profile phases (variable-length strings), status complete, ranks = 3")
    try:
        import libsonata
    except ImportError:
        libsonata = None
    # SONATA's float32 reports (libsonata reads no other): 1 process and 3 ranks, bitwise
    f32 = [os.path.join(work, f"random_net.f32.{n}.h5") for n in (0, 3)]
    rcs = [cablesim(exe, n, [net_path, "-o", f32[k]], work)[0] for k, n in enumerate((0, 3))]
    bad, _ = identical(*f32) if rcs == [0, 0] else (["run"], None)
    check(not bad, f"random_net, float32 report: 3 ranks bitwise identical to one process {bad}")
    if libsonata and rcs == [0, 0]:
        sp = libsonata.SpikeReader(f32[1])["tree"].get()
        rep_ = libsonata.ElementReportReader(f32[1])["tree"].get()
        ref = libsonata.ElementReportReader(f32[0])["tree"].get()
        check(len(sp) > 20 and len(rep_.times) > 100 and np.array_equal(np.asarray(rep_.data), np.asarray(ref.data)),
              f"3 ranks: libsonata reads the collective file ({len(sp)} spikes, {len(rep_.times)} rows, "
              f"data equal to one process's)")
    else:
        print("note: libsonata not importable; the collective file was read with h5py only")

    # the fallback (rank 0's serial writer, samples gathered to it): the same bits
    for n in (2, 3):
        path = os.path.join(work, f"random_net.gather{n}.h5")
        rc, out, err = cablesim(exe, n, [net_path, "--report-precision", "double", "-o", path], work,
                                env={"CABLESIM_MPI_OUTPUT": "gather"})
        bad, _ = identical(os.path.join(work, "random_net.single.h5"), path) if rc == 0 else (["run"], None)
        w = meta(path, "output_writer") if rc == 0 else err[-200:]
        check(rc == 0 and not bad and w.startswith("rank 0"),
              f"random_net: {n} ranks through rank 0's gathering writer bitwise identical ({w!r})")

    # --backend auto over 2 ranks: rank 0's choice broadcast (here the CPU: no GPU) and the same bits
    path = os.path.join(work, "random_net.auto2.h5")
    rc, out, err = cablesim(exe, 2, [net_path, "--report-precision", "double", "--backend", "auto", "-o", path],
                            work)
    bad, _ = identical(os.path.join(work, "random_net.single.h5"), path) if rc == 0 else (["run"], None)
    ch = meta(path, "backend_choice") if rc == 0 else err[-200:]
    check(rc == 0 and not bad and "rank 0's choice for all 2 ranks" in ch and meta(path, "backend") == "cpu",
          f"--backend auto on 2 ranks: rank 0's choice, bitwise identical ({ch!r})")

    # the random network has spikes and columns on every rank: the comparison is not vacuous
    d, _ = datasets(os.path.join(work, "random_net.single.h5"))
    check(len(d["spikes/tree/timestamps"]) > 20 and len(d["spikes/bs/timestamps"]) > 3,
          f"random_net: spikes in both populations ({len(d['spikes/tree/timestamps'])}, {len(d['spikes/bs/timestamps'])})")

    # 3 ranks, 79 cells: shares of 26-27 cells by count, here set by cost; summary on rank 0 only
    rc, out, err = run([mpirun(), "--oversubscribe", "--allow-run-as-root", "-np", "3", exe, "run", net_path,
                        "--no-output", "--threads", "1"], work)
    m = re.search(r"3 ranks \(this is rank 0: gids \[0, (\d+)\)\)", out)
    check(rc == 0 and m and out.count("cablesim ") == 1,
          f"3 ranks, 79 cells: one summary naming rank 0's share ({m.group(0) if m else out[-300:]})")

    # cost, not count: 10 passive cables of 400 CVs then 90 one-CV hh somas. The estimate
    # (src/core/cs_build.c, CPU weights) counts a folded pas instance 0 and an hh instance 1 + 6 x 3
    # states: 4 000 + 90 x 20 = 5 800, so rank 0 of 2 takes [0, 7) (round(2 900 / 400)); by
    # compartments plus instances alike it would be [0, 5), by count [0, 50)
    cost = {"run": {"tfinal": 1.0, "dt": 0.025},
            "populations": [
                {"name": "big", "count": 10, "morphology": {"generator": "cable", "length": 1000.0, "radius": 1.0,
                                                            "cvs": 400},
                 "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0,
                                "mechanisms": [{"name": "pas", "region": "all"}]}},
                {"name": "small", "count": 90, "morphology": {"generator": "soma", "radius": 9.4},
                 "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0,
                                "mechanisms": [{"name": "hh", "region": "all"}]}}]}
    cost_path = os.path.join(work, "cost.json")
    with open(cost_path, "w") as f:
        json.dump(cost, f)
    rc, out, err = run([mpirun(), "--oversubscribe", "--allow-run-as-root", "-np", "2", exe, "run", cost_path,
                        "--no-output", "--threads", "1"], work)
    m = re.search(r"gids \[0, (\d+)\)", out)
    first = int(m.group(1)) if m else -1
    check(rc == 0 and first == 7,
          f"partition by cost: rank 0 of 2 takes cells [0, {first}) of 100 (expected 7; by count it would be 50)")

    # a failure on one rank: the last cell's clamp drives V out of range on the last rank only
    bad = copy.deepcopy(RANDOM_NET)
    bad["populations"][1]["stimuli"] = [{"mechanism": "iclamp", "location": {"branch": 0, "pos": 0.5},
                                         "cells": [49], "params": {"delay": 5.0, "duration": 30.0,
                                                                   "amplitude": 1e12}}]
    bad_path = os.path.join(work, "blowup.json")
    with open(bad_path, "w") as f:
        json.dump(bad, f)
    for n in (2, 4):
        out_path = os.path.join(work, f"blowup.np{n}.h5")
        rc, out, err = cablesim(exe, n, [bad_path, "-o", out_path], work)
        lines = [l for l in err.splitlines() if l.startswith("cablesim: error:")]
        check(rc not in (0, "timeout") and len(lines) == 1 and f"rank {n - 1}: cell 78" in lines[0]
              and "Signal" not in err and "MPI_ABORT" not in err,
              f"{n} ranks: a cell blowing up on rank {n - 1} ends every rank (rc {rc}) with one line: "
              f"{lines[0][:160] if lines else err[-300:]}")
        # the collective file of the failed run: readable, incomplete, with what was flushed
        ok = os.path.exists(out_path)
        if ok:
            with h5py.File(out_path, "r") as f:
                ok = f.attrs["status"] == "incomplete" and "report/bs/data" in f and "profile/phase" in f
        check(ok, f"{n} ranks: its output is readable by h5py and marked incomplete")

    # an unwritable output seen by rank 0
    rc, out, err = cablesim(exe, 3, [net_path, "-o", os.path.join(work, "no", "such", "dir", "x.h5")], work)
    lines = [l for l in err.splitlines() if l.startswith("cablesim: error:")]
    check(rc not in (0, "timeout") and len(lines) == 1 and "rank 0:" in lines[0],
          f"3 ranks: an unwritable output ends every rank (rc {rc}): {lines[0][:160] if lines else err[-300:]}")
    # a missing model file
    rc, out, err = cablesim(exe, 2, [os.path.join(work, "missing.json")], work)
    lines = [l for l in err.splitlines() if l.startswith("cablesim: error:")]
    check(rc not in (0, "timeout") and len(lines) == 1 and "missing.json" in lines[0],
          f"2 ranks: a missing model ends every rank (rc {rc}): {lines[0][:160] if lines else err[-300:]}")

    sonata_case(exe, work)
    full_disk_sweep(exe, work)

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
