#!/usr/bin/python3
"""SONATA membrane reports that share cells, without bmtk (issue 31): the circuit of
tests/sonata_circuit.py (h5py alone) has reports that record cells of one node type with other
cells and sections (all_v on two cells of type 101, soma_v101 on all five), a report of a list of
variables (soma_list: m_hh and v) and one without "cells" (every_v: bmtk's default, every
biophysical cell). One `cablesim run`, then:

- each report file has bmtk's layout: its node ids (ascending, point cells left out of every_v),
  element_ids / element_pos, index_pointer, and the time axis of soma_v;
- a list writes one file per variable: soma_list.h5 (m_hh) and soma_list_v.h5 (v);
- the same place and variable in two reports is the same probe: its columns are bitwise equal in
  both (soma_v101 and all_v's soma column of cells 9 and 11, soma_list and soma_m, every_v and
  soma_v / soma_v101 ...);
- no place is probed twice nor needlessly: the run's own file holds exactly as many columns as
  the distinct (variable, node, section, position) of all the report files.
Then the GPU (a CUDA build on a machine with one; else reported as skipped): the same circuit with
NEURON's exp2syn.mod in its mechanisms_dir (the built-in exp2syn has no GPU kernel), --backend
cuda against --backend cpu: the same report files, mappings bitwise, samples within GPU_TOL.

Usage: test_sonata_reports.py --cablesim PATH --source-dir DIR --work-dir DIR
Prints one line per check and 'N passed, N failed'. Exit: 0 all passed, 1 a check failed, 77
skipped (no h5py).
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
import sonata_circuit  # noqa: E402

GPU_TOL = 1e-3  # [mV; m_hh 1] max |GPU - CPU| of any sample (float32 samples: 8e-6 mV at 65 mV)


def main():
    a = checks.arguments()
    mods = checks.h5py_numpy()
    if mods is None:
        return 77
    h5py, np = mods
    check = checks.Tally()

    shutil.rmtree(a.work_dir, ignore_errors=True)
    os.makedirs(a.work_dir)
    cfg = sonata_circuit.write(a.work_dir, h5py, np, "out")
    with open(cfg) as f:  # bmtk's file_name and row window: soma_v's cells, every 0.5 ms of [5, 15) ms
        c = json.load(f)
    c["reports"]["window_v"] = {"cells": "bio", "variable_name": "v", "module": "membrane_report", "sections": "soma",
                                "file_name": "soma_v_window.h5", "start_time": 5.0, "end_time": 15.0, "dt": 0.5,
                                "transform": {}}  # bmtk's "no transform": accepted
    with open(cfg, "w") as f:
        json.dump(c, f, indent=1)
    env = dict(os.environ, CABLESIM_CACHE_DIR=os.path.join(a.work_dir, "cache"))
    r = subprocess.run([a.cablesim, "run", cfg, "--backend", "cpu", "-q", "--threads", "1"],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0, f"the circuit runs ({r.stderr.strip()[:300]})")
    if r.returncode:
        check.summary()
        return 1
    out = os.path.join(a.work_dir, "out")

    def report(name):
        """{(node, element id, element pos): samples} and the mapping of output_dir/<name>.h5."""
        with h5py.File(os.path.join(out, f"{name}.h5"), "r") as f:
            pops = list(f["report"])
            g = f[f"report/{pops[0]}"]
            data, m = g["data"][()], {k: g[f"mapping/{k}"][()] for k in g["mapping"]}
        cols = {}
        for j, n in enumerate(m["node_ids"]):
            for c in range(m["index_pointer"][j], m["index_pointer"][j + 1]):
                cols[(int(n), int(m["element_ids"][c]), float(m["element_pos"][c]))] = data[:, c]
        return pops, m, data, cols

    files = sorted(f[:-3] for f in os.listdir(out) if f.endswith(".h5") and f != "spikes.h5")
    want = ["all_v", "dend_v", "every_v", "soma_list", "soma_list_v", "soma_m", "soma_v", "soma_v101"]
    check(files == sorted(want + ["soma_v_window"]),
          f"one file per report and per further variable of a list, file_name's own: {files}")
    rep = {name: report(name) for name in files if name in want}
    if len(rep) != len(want):
        check.summary()
        return 1
    ref_time, ref_rows = rep["soma_v"][1]["time"], rep["soma_v"][2].shape[0]
    for name, (pops, m, data, cols) in rep.items():
        ok = (pops == ["net"] and list(m["node_ids"]) == sorted(m["node_ids"]) and len(m["index_pointer"]) ==
              len(m["node_ids"]) + 1 and m["index_pointer"][-1] == data.shape[1] and data.shape[0] == ref_rows and
              np.array_equal(m["time"], ref_time) and len(cols) == data.shape[1])
        check(ok, f"{name}: bmtk's layout, {len(m['node_ids'])} cells, {data.shape[1]} columns, "
                  f"{data.shape[0]} rows, the time axis of soma_v")
    ids = {name: list(int(i) for i in rep[name][1]["node_ids"]) for name in rep}
    check(ids["soma_v101"] == [7, 8, 9, 10, 11] and ids["all_v"] == [9, 11],
          f"two reports on node type 101, other cells and sections: soma_v101 {ids['soma_v101']}, all_v {ids['all_v']}")
    check(ids["soma_list"] == [0, 3, 8] and ids["soma_list_v"] == [0, 3, 8],
          f"the list's two files record its node set: {ids['soma_list']}, {ids['soma_list_v']}")
    check(ids["every_v"] == list(range(sonata_circuit.NBIO)),
          f"no cells: every biophysical cell, not the point cells ({ids['every_v']})")
    soma = {name: {k[0]: v for k, v in rep[name][3].items() if k[1] == 0 and k[2] == 0.5} for name in rep}
    same = []
    for a_, b_, cells in (("soma_v101", "all_v", [9, 11]), ("soma_list", "soma_m", [0, 3]),
                          ("soma_list_v", "soma_v", [0, 3]), ("soma_list_v", "soma_v101", [8]),
                          ("every_v", "soma_v", range(7)), ("every_v", "soma_v101", range(7, 12))):
        same += [(a_, b_, c) for c in cells if c in soma[a_] and c in soma[b_] and
                 soma[a_][c].tobytes() == soma[b_][c].tobytes()]
    check(len(same) == 2 + 2 + 2 + 1 + 7 + 5,
          f"a place and variable of two reports are one probe: {len(same)} of 19 soma columns bitwise equal")
    with h5py.File(os.path.join(out, "soma_v_window.h5"), "r") as f:
        g = f["report/net"]
        wdata, wtime, wids = g["data"][()], g["mapping/time"][()], list(g["mapping/node_ids"][()])
    sdata = rep["soma_v"][2]  # every 0.025 ms from 0: rows 200, 220, ... 580 are 5.0, 5.5, ... 14.5 ms
    check(np.allclose(wtime, [5.0, 15.0, 0.5]) and wids == list(rep["soma_v"][1]["node_ids"]) and
          wdata.shape == (20, sdata.shape[1]) and wdata.tobytes() == sdata[200:600:20].tobytes(),
          f"start_time 5, end_time 15, dt 0.5: soma_v's rows 200, 220, .. 580 ({wdata.shape}, time {list(wtime)})")
    v0 = rep["every_v"][2][0]
    check(np.all(v0 == -65.0), f"every_v starts at v_init -65 mV ({v0.min()}..{v0.max()})")
    # the run's own file: one column per (variable, cell, place) of its populations' probes
    with h5py.File(os.path.join(out, "spikes.h5"), "r") as f:
        ncol = [0]
        f["report"].visititems(lambda n, o: ncol.__setitem__(0, ncol[0] + o.shape[1])
                               if isinstance(o, h5py.Dataset) and n.endswith("data") else None)
    var = {"soma_m": "m_hh", "soma_list": "m_hh"}
    distinct = {(var.get(name, "v"),) + k for name in rep for k in rep[name][3]}
    check(ncol[0] == len(distinct),
          f"no place sampled twice or needlessly: {ncol[0]} columns in the run's file, {len(distinct)} distinct "
          f"(variable, node, section, position) in the report files")
    # the summary: one line per SONATA population of cells (virtual nodes are inputs, not cells),
    # its node types and report groups summed (the reports above split 'net' into 11 groups)
    with open(os.path.join(out, "spikes.h5"), "rb") as f:
        spikes_before = f.read()
    r = subprocess.run([a.cablesim, "run", cfg, "--backend", "cpu", "--threads", "1", "--tfinal", "1", "-o",
                        os.path.join(a.work_dir, "summary.h5")], capture_output=True, text=True, env=env)
    lines = [ln.split() for ln in r.stdout.splitlines() if ln.strip().startswith("population ")]
    check(r.returncode == 0 and [ln[1:3] for ln in lines] == [["net", str(sonata_circuit.NBIO + sonata_circuit.NPOINT)]] and
          "groups" in " ".join(lines[0]),
          f"the summary: one line per SONATA population with its cells ({[' '.join(ln) for ln in lines]})")
    with open(os.path.join(out, "spikes.h5"), "rb") as f:
        check(f.read() == spikes_before, "the second run's -o left the config's output alone")
    gpu_check(a, env, h5py, np, check)
    return check.summary()


def gpu_check(a, env, h5py, np, check):
    """The circuit on the GPU against the CPU, both with NEURON's exp2syn.mod compiled."""
    d = os.path.join(a.work_dir, "gpu")
    os.makedirs(d)
    cfg = {b: sonata_circuit.write(d, h5py, np, f"out_{b}") for b in ("cuda", "cpu")}
    os.makedirs(os.path.join(d, "comp/mechanisms/modfiles"), exist_ok=True)
    shutil.copy(os.path.join(a.source_dir, "tests/data/mod/exp2syn.mod"), os.path.join(d, "comp/mechanisms/modfiles"))
    runs = {b: subprocess.run([a.cablesim, "run", cfg[b], "--backend", b, "-q"], capture_output=True, text=True, env=env)
            for b in ("cuda", "cpu")}
    err = runs["cuda"].stderr.strip()
    if runs["cuda"].returncode and ("no CUDA device" in err or "no CUDA support" in err):
        print("skipped: GPU (" + err[-120:] + ")")
        return
    check(runs["cuda"].returncode == 0 and runs["cpu"].returncode == 0,
          f"GPU: the circuit runs on cuda and cpu ({err[-200:]} {runs['cpu'].stderr.strip()[-200:]})")
    if runs["cuda"].returncode or runs["cpu"].returncode:
        return
    files = {b: sorted(f for f in os.listdir(os.path.join(d, f"out_{b}")) if f.endswith(".h5") and f != "spikes.h5")
             for b in runs}
    check(files["cuda"] == files["cpu"] and len(files["cpu"]) == 8, f"GPU: the same report files {files['cuda']}")
    worst, same_map = 0.0, True
    for name in files["cpu"]:
        if name not in files["cuda"]:
            continue
        with h5py.File(os.path.join(d, "out_cuda", name), "r") as g, h5py.File(os.path.join(d, "out_cpu", name), "r") as c:
            for pop in c["report"]:
                same_map &= pop in g["report"] and all(
                    np.array_equal(g[f"report/{pop}/mapping/{k}"][()], c[f"report/{pop}/mapping/{k}"][()])
                    for k in c[f"report/{pop}/mapping"])
                if pop in g["report"] and g[f"report/{pop}/data"].shape == c[f"report/{pop}/data"].shape:
                    worst = max(worst, float(np.max(np.abs(g[f"report/{pop}/data"][()] - c[f"report/{pop}/data"][()]))))
                else:
                    same_map = False
    print(f"  GPU: max |GPU - CPU| over every report's samples = {worst:.3g}")
    check(same_map, "GPU: every report's mapping bitwise the CPU's")
    check(same_map and worst <= GPU_TOL, f"GPU: every sample within {GPU_TOL} of the CPU's ({worst:.3g})")


if __name__ == "__main__":
    sys.exit(main())
