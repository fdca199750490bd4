#!/usr/bin/python3
"""SONATA circuits built with bmtk, run by bmtk + NEURON 9 and by `cablesim run
simulation_config.json` (issue 31, item 5). tests/sonata/bmtk_network.py builds each network
with bmtk's NetworkBuilder in the reference venv (scripts/ref-venv.sh: bmtk 1.2.0, NEURON 9.0.2)
and runs bmtk on it; cablesim runs the same circuit from a config that differs only in
output_dir.

  ff:        virtual Poisson inputs → 6 cells → 4 cells, synapses at explicit
             afferent_section_id/pos: every cell's spike count equal, and every spike time
             within TOL_FF = 0.1 ms of bmtk's (NEURON reports a spike at the end of the step in
             which v crossed, cablesim interpolates within it: up to one dt, 0.025 ms, per
             layer).
  allen:     20 virtual inputs → the five Allen perisomatic cells of bmtk's bio_14cells (their
             fits, SWCs and mechanisms: tests/data/allen, tests/data/mod_bmtk) at explicit
             afferent sections, and two nrn:IntFire1 point cells driven by the inputs and the
             Allen cells: spike counts equal and every spike within TOL_FF, as ff; five
             reports (v on every segment of one cell, on the dendrites of another, cai and v on
             the soma of three, v on the soma of every biophysical cell: no "cells"): bmtk's
             mapping, median |v - v_bmtk| within TOL_V, median |cai - cai_bmtk| within TOL_CAI
             (relative), read by bmtk's CompartmentReport;
  points:    20 virtual inputs and two nrn:NetStim nodes → two nrn:IntFire2 and two nrn:IntFire4
             cells (excitatory and inhibitory edges) → two hh cells, which drive the IntFire4
             cells back (bmtk has no loader for these three: tests/sonata/bmtk_network.py
             registers one that sets their dynamics_params by name): counts equal, every spike
             within TOL_FF;
  recurrent: 40 virtual inputs → 30 exc + 10 inh cells, recurrent, synapses placed by bmtk's
             rule (target_sections + distance_range; our generator is not numpy's, so the
             places differ): each population's firing rate within TOL_RATE = 10 % of bmtk's;
             its synapses coalesced (the default) against --separate-synapses: the same
             spikes within COAL_TOL = 1e-6 ms.
Both also write the soma report of v: bmtk's layout and node ids, and (ff) a median |v - v_bmtk|
within TOL_V = 0.05 mV (ff also v on every segment of a cell whose node type soma_v records on the
soma, and every_v, compared as allen's); and bmtk's own analysis reads cablesim's output (spikes by
bmtk.analyzer.spike_trains with the config, the report by bmtk.utils.reports.CompartmentReport). Then the same circuits on other back ends:
  - MPI (a binary linked with MPI, mpirun): the recurrent network on 1-4 ranks gives bitwise
    the spikes of one process;
  - GPU (a CUDA build on a machine with a GPU): the feed-forward network with NEURON's exp2syn.mod
    added to its mechanisms_dir (the built-in exp2syn has no GPU kernel; the catalogue's Exp2Syn
    is compiled for both), --backend cuda against --backend cpu: equal spike counts and times
    within TOL_CAI = 1e-3   # relative to the median cai: median |cai - cai_bmtk| (Allen cells' CaDynamics)
GPU_TOL = 1e-6 ms.
Each is reported as skipped where it cannot run. Prints the figures, then 'N passed, N failed'.

Usage: test_sonata_bmtk.py --cablesim PATH --source-dir DIR --work-dir DIR [--kinds ff,allen,...]
Exit: 0 all passed, 1 a check failed, 77 skipped (no reference venv: bmtk / NEURON 9 from PyPI).
"""
import argparse
import os
import shutil
import subprocess
import sys

TOL_FF = 0.1     # [ms]
TOL_RATE = 0.10  # relative
TOL_V = 0.05     # [mV] the median over all samples of |v - v_bmtk| in the soma report (spikes shift by
                 # up to 2 dt, so single samples on a spike's flank differ by mV)
TOL_CAI = 1e-3   # relative to the median cai: median |cai - cai_bmtk| (Allen cells' CaDynamics)
GPU_TOL = 1e-6   # [ms] the GPU's sums run in another order than the CPU's
COAL_TOL = 1e-6  # [ms] coalesced synapses: one instance sums what several held apart

ANALYSE = """
import sys
from bmtk.analyzer.spike_trains import to_dataframe
from bmtk.utils.reports import CompartmentReport
df = to_dataframe(config_file=sys.argv[1])
r = CompartmentReport(sys.argv[2], mode="r")
print(len(df), r.data(node_id=int(sys.argv[3]) if len(sys.argv) > 3 else 0, population=r.populations[0]).shape[0])
"""


def ref_python(src):
    try:
        out = subprocess.run([os.path.join(src, "scripts/ref-venv.sh")], cwd=src, check=True,
                             capture_output=True, text=True, timeout=1800).stdout.strip().splitlines()
        return out[-1] if out else None
    except (subprocess.SubprocessError, OSError):
        return None


def spikes(path):
    import h5py
    out = {}
    with h5py.File(path, "r") as f:
        for pop in f["spikes"]:
            g = f["spikes"][pop]
            for i, t in zip(g["node_ids"][()], g["timestamps"][()]):
                out.setdefault((pop, int(i)), []).append(float(t))
    return out


def report_columns(path):
    """A report in bmtk's layout: {(node id, element id, element pos): samples}, the mapping's arrays."""
    import h5py
    with h5py.File(path, "r") as f:
        g = f["report"][list(f["report"])[0]]
        m = {k: g["mapping/" + k][()] for k in ("node_ids", "index_pointer", "element_ids", "element_pos", "time")}
        d = g["data"][()]
    cols = {}
    ids, ptr = m["node_ids"], m["index_pointer"]
    for i, n in enumerate(ids):
        for c in range(ptr[i], ptr[i + 1]):
            cols[(int(n), int(m["element_ids"][c]), round(float(m["element_pos"][c]), 6))] = d[:, c]
    return cols, m, d.shape


def compare_reports(py, d, kind, reps, n_ours, check):
    """Reports reps [(name, variable)] against bmtk's files (tests/sonata/bmtk_network.py
    ALLEN_REPORTS: v on every segment of one Allen cell (bmtk's default sections), on the basal
    and apical dendrites of another, cai and v on the soma of the three others, v on the soma of
    every biophysical cell (no "cells"); FF_REPORTS: v on every segment of a cell whose node type
    soma_v records on the soma, and every_v):
    the same shape and, per cell, the same element ids and positions (bmtk lists the cells in
    another order: compared by node id); the samples where (node, section, position) coincide
    (all of them, where the segmentation agrees): median |v - v_bmtk| <= TOL_V, median
    |cai - cai_bmtk| <= TOL_CAI of the median cai; and bmtk's CompartmentReport reads each file."""
    import numpy as np
    for rep, var in reps:
        cb, mb, shb = report_columns(os.path.join(d, f"output_bmtk/{rep}.h5"))
        cc, mc, shc = report_columns(os.path.join(d, f"output_cs/{rep}.h5"))
        same_map = shb == shc and np.array_equal(mb["time"], mc["time"]) and set(cb) == set(cc)
        common = sorted(set(cb) & set(cc))
        diff = np.concatenate([np.abs(cb[k] - cc[k]) for k in common]) if common else np.array([np.inf])
        med = float(np.median(diff))
        scale = float(np.median(np.concatenate([np.abs(cb[k]) for k in common]))) if common else 0.0
        tol = TOL_V if var == "v" else TOL_CAI * scale
        print(f"  {kind} {rep}: {shc} (bmtk {shb}), {len(common)} columns at the same (node, section, x); "
              f"median |{var} - {var}_bmtk| = {med:.3g} (99th percentile {np.percentile(diff, 99):.3g}, "
              f"median |{var}_bmtk| {scale:.3g})")
        check(same_map, f"{kind} {rep}: bmtk's shape, time axis and (node id, element id, element pos) of every column")
        check(med <= tol, f"{kind} {rep}: median |{var} - {var}_bmtk| {med:.3g} <= {tol:.3g}")
        out = subprocess.run([py, "-c", ANALYSE, os.path.join(d, "config_cs.json"), os.path.join(d, f"output_cs/{rep}.h5"),
                              str(int(mc["node_ids"][0]))], capture_output=True, text=True)
        got = out.stdout.strip().splitlines()[-1].split() if out.returncode == 0 and out.stdout.strip() else ["-1", "-1"]
        check(int(got[0]) == n_ours and int(got[1]) == shc[0],
              f"{kind}: bmtk's analysis reads cablesim's spikes ({got[0]} of {n_ours}) and {rep} ({got[1]} rows)")


LIBSONATA_SPIKES = """
import sys, libsonata
p = libsonata.SpikeReader(sys.argv[1])[sys.argv[2]]
print(p.sorting, repr(p.get()))
"""


def sorted_by_id(exe, py, d, env, check):
    """spikes_sort_order "id" read by libsonata: sorting by_id, the spikes of the run sorted by time,
    ordered by node id then time."""
    import json
    with open(os.path.join(d, "config_cs.json")) as f:
        cfg = json.load(f)
    cfg["output"].update(spikes_sort_order="id", output_dir="$BASE_DIR/output_cs_by_id")
    path = os.path.join(d, "config_cs_by_id.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    r = subprocess.run([exe, "run", path, "--backend", "cpu", "-q"], env=env, capture_output=True, text=True)
    got = {}
    for tag, sub in (("id", "output_cs_by_id"), ("time", "output_cs")):
        out = subprocess.run([py, "-c", LIBSONATA_SPIKES, os.path.join(d, sub, "spikes.h5"), "cortex"],
                             capture_output=True, text=True)
        lines = out.stdout.strip().splitlines()
        got[tag] = (lines[-1].split(" ", 1)[0], eval(lines[-1].split(" ", 1)[1])) if out.returncode == 0 and lines \
            else ("?", [])
    (so, sp), (st, tp) = got["id"], got["time"]
    ok = r.returncode == 0 and so == "by_id" and st == "by_time" and sp == sorted(tp) and len(sp) > 10
    print(f"  ff spikes_sort_order id: libsonata reads sorting {so} (time: {st}), {len(sp)} spikes")
    check(ok, f"ff: spikes_sort_order id, read by libsonata: by_id, the spikes by node id then time {r.stderr[-200:]}")
    # the sort rewrites the finished file: it must end marked complete again (incomplete meanwhile)
    status = subprocess.run([py, "-c", "import h5py, sys; print(h5py.File(sys.argv[1], 'r').attrs.get('status'))",
                             os.path.join(d, "output_cs_by_id", "spikes.h5")], capture_output=True, text=True)
    check(status.stdout.strip() == "complete",
          f"ff: the id-sorted file is marked complete (status {status.stdout.strip() or status.stderr[-200:]!r})")


def coalesced(exe, d, env, ours, check):
    """The recurrent network's synapses (bmtk's random placement: several on one compartment) are
    coalesced by default (cs_mech_type.linear); --separate-synapses keeps each its own instance.
    Both must give the same spikes within COAL_TOL (exact in real arithmetic: only the sums'
    rounding differs), and the summary must say how many were coalesced."""
    r = subprocess.run([exe, "run", os.path.join(d, "config_cs.json"), "--backend", "cpu", "--no-output"], env=env,
                       capture_output=True, text=True)
    line = [x for x in r.stdout.splitlines() if x.strip().startswith("synapses:")]
    nums = [int(w) for w in line[0].split() if w.isdigit()] if line else []
    print("  recurrent: " + (line[0].strip() if line else "no 'synapses:' line in the summary"))
    check(r.returncode == 0 and len(nums) >= 2 and 0 < nums[1] < nums[0],
          "recurrent: the summary counts the synapses coalesced (fewer instances than synapses)")
    sep = os.path.join(d, "separate.h5")
    subprocess.run([exe, "run", os.path.join(d, "config_cs.json"), "--backend", "cpu", "-q", "--separate-synapses",
                    "-o", sep], env=env, check=True)
    other = spikes(sep)
    same = set(other) == set(ours) and all(len(other[k]) == len(ours[k]) for k in ours)
    worst = max((abs(x - y) for k in ours if same for x, y in zip(other[k], ours[k])), default=0.0)
    print(f"  recurrent: coalesced vs separate synapses: max |dt| = {worst:.2e} ms")
    check(same and worst <= COAL_TOL, f"recurrent: coalesced synapses give the separate ones' spikes within {COAL_TOL} ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--kinds", default="ff,allen,points,recurrent", help="the networks, comma-separated")
    a = ap.parse_args()
    try:
        import h5py  # noqa: F401
        import numpy as np
    except ImportError:
        print("skipped: h5py/numpy missing")
        return 77
    py = ref_python(a.source_dir)
    if not py:
        print("skipped: the reference venv (scripts/ref-venv.sh: bmtk, NEURON 9 from PyPI) is not available")
        return 77
    helper = os.path.join(a.source_dir, "tests/sonata/bmtk_network.py")
    mechs = os.path.join(a.source_dir, "tests/data/sonata/mechanisms")
    mechs_bmtk = os.path.join(a.source_dir, "tests/data/mod_bmtk")  # the Allen channels and vecevent.mod
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print(("PASS " if ok else "FAIL ") + what)
        passed, failed = passed + ok, failed + (not ok)

    for kind in a.kinds.split(","):
        d = os.path.join(a.work_dir, kind)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        subprocess.run([py, helper, "build", kind, d, mechs_bmtk if kind == "allen" else mechs], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([py, helper, "run", os.path.join(d, "config_bmtk.json")], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        env = dict(os.environ, CABLESIM_CACHE_DIR=os.path.join(a.work_dir, "cache"))
        subprocess.run([a.cablesim, "run", os.path.join(d, "config_cs.json"), "--backend", "cpu", "-q"], check=True,
                       env=env)
        ref = spikes(os.path.join(d, "output_bmtk/spikes.h5"))
        ours = spikes(os.path.join(d, "output_cs/spikes.h5"))
        n_ours = sum(len(v) for v in ours.values())
        if kind in ("ff", "allen", "points"):
            ncell = {"ff": 10, "allen": 7, "points": 8}[kind]
            cells = sorted(set(ref) | set(ours))
            worst, counts_equal, fewest = 0.0, True, min(len(ref.get(c, [])) for c in cells) if cells else 0
            for c in cells:
                x, y = np.array(ref.get(c, [])), np.array(ours.get(c, []))
                if len(x) != len(y):
                    counts_equal = False
                    print(f"  {c}: bmtk {len(x)} spikes, cablesim {len(y)}")
                    continue
                if len(x):
                    worst = max(worst, float(np.max(np.abs(x - y))))
            print(f"  {kind}: {len(cells)} cells, {n_ours} spikes, the fewest per cell {fewest}; "
                  f"max |t - t_bmtk| = {worst:.4f} ms")
            check(len(cells) == ncell and fewest >= 2, f"{kind}: all {ncell} cells fire (>= 2 spikes each)")
            check(counts_equal, f"{kind}: every cell's spike count equals bmtk's")
            check(counts_equal and worst <= TOL_FF, f"{kind}: every spike within {TOL_FF} ms of bmtk's ({worst:.4f} ms)")
        else:
            for name, ids in (("exc", range(0, 30)), ("inh", range(30, 40))):
                r_ref = sum(len(ref.get(("v1", i), [])) for i in ids) / len(ids)   # [spikes/s]: 1 s run
                r_ours = sum(len(ours.get(("v1", i), [])) for i in ids) / len(ids)
                rel = abs(r_ours - r_ref) / r_ref if r_ref else float("inf")
                print(f"  recurrent {name}: bmtk {r_ref:.2f} Hz, cablesim {r_ours:.2f} Hz ({100 * rel:.1f} %)")
                check(r_ref >= 2 and rel <= TOL_RATE, f"recurrent {name}: rate within {100 * TOL_RATE:.0f} % of bmtk's")
            coalesced(a.cablesim, d, env, ours, check)
        if kind == "allen":
            compare_reports(py, d, kind, [("all_v", "v"), ("dend_v", "v"), ("soma_cai", "cai"), ("soma_v", "v"),
                                          ("every_v", "v")], n_ours, check)
            continue
        if kind == "ff":
            compare_reports(py, d, kind, [("all_v", "v"), ("every_v", "v"), ("soma_v_window", "v")], n_ours, check)
        if kind == "points":  # no report: bmtk reports no membrane of point cells
            continue
        if kind == "ff":
            sorted_by_id(a.cablesim, py, d, env, check)
        import h5py
        with h5py.File(os.path.join(d, "output_bmtk/soma_v.h5"), "r") as fb, \
                h5py.File(os.path.join(d, "output_cs/soma_v.h5"), "r") as fc:
            pop = list(fb["report"])[0]
            same = all(np.array_equal(fb[f"report/{pop}/{k}"][()], fc[f"report/{pop}/{k}"][()])
                       for k in ("mapping/node_ids", "mapping/index_pointer", "mapping/element_ids", "mapping/time"))
            vb, vc = fb[f"report/{pop}/data"][()], fc[f"report/{pop}/data"][()]
            med = float(np.median(np.abs(vb - vc))) if vb.shape == vc.shape else float("inf")
        print(f"  {kind}: soma report {vc.shape}, median |v - v_bmtk| = {med:.4f} mV")
        check(same and vb.shape == vc.shape, f"{kind}: the soma report has bmtk's layout, node ids and time axis")
        if kind == "ff":
            check(med <= TOL_V, f"ff: soma v within {TOL_V} mV of bmtk's (median over samples: {med:.4f} mV)")
        out = subprocess.run([py, "-c", ANALYSE, os.path.join(d, "config_cs.json"), os.path.join(d, "output_cs/soma_v.h5")],
                             capture_output=True, text=True)
        got = out.stdout.strip().splitlines()[-1].split() if out.returncode == 0 and out.stdout.strip() else ["-1", "-1"]
        check(int(got[0]) == n_ours and int(got[1]) == vc.shape[0],
              f"{kind}: bmtk's analysis reads cablesim's spikes ({got[0]} of {n_ours}) and report ({got[1]} rows)")
    # OpenMPI's own allocations read as leaks to an ASan build's LeakSanitizer: not ours to check here
    env = dict(os.environ, CABLESIM_CACHE_DIR=os.path.join(a.work_dir, "cache"),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    ldd = subprocess.run(["ldd", a.cablesim], capture_output=True, text=True).stdout
    if "recurrent" not in a.kinds.split(","):
        print("skipped: MPI (the recurrent network was not run)")
    elif not mpirun or "libmpi" not in ldd:
        print("skipped: MPI (no mpirun, or the binary is not linked with MPI: scripts/test-mpi.sh)")
    else:
        cfg = os.path.join(a.work_dir, "recurrent", "config_cs.json")
        one = spikes(os.path.join(a.work_dir, "recurrent", "output_cs", "spikes.h5"))
        for n in (1, 2, 3, 4):
            out = os.path.join(a.work_dir, f"mpi{n}.h5")
            r = subprocess.run([mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(n), a.cablesim, "run", cfg,
                                "--backend", "cpu", "--threads", "1", "-q", "-o", out], env=env, capture_output=True,
                               text=True)
            same = r.returncode == 0 and spikes(out) == one
            check(same, f"recurrent on {n} MPI ranks: bitwise the spikes of one process {r.stderr.strip()[-200:]}")
    if "ff" not in a.kinds.split(","):
        print("skipped: GPU (the ff network was not run)")
        print(f"{passed} passed, {failed} failed")
        return 1 if failed else 0
    gdir = os.path.join(a.work_dir, "ff_gpu")
    shutil.rmtree(gdir, ignore_errors=True)
    shutil.copytree(os.path.join(a.work_dir, "ff"), gdir, ignore=shutil.ignore_patterns("output_*"))
    shutil.copy(os.path.join(a.source_dir, "tests/data/mod/exp2syn.mod"),
                os.path.join(gdir, "components/mechanisms/modfiles/exp2syn.mod"))
    cfg = os.path.join(gdir, "config_cs.json")
    r = subprocess.run([a.cablesim, "run", cfg, "--backend", "cuda", "-q", "-o", os.path.join(gdir, "gpu.h5")],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0 and ("no CUDA device" in r.stderr or "no CUDA support" in r.stderr):
        print("skipped: GPU (" + r.stderr.strip()[-120:] + ")")
    else:
        subprocess.run([a.cablesim, "run", cfg, "--backend", "cpu", "-q", "-o", os.path.join(gdir, "cpu.h5")], env=env,
                       check=True)
        g = spikes(os.path.join(gdir, "gpu.h5")) if r.returncode == 0 else {}
        c = spikes(os.path.join(gdir, "cpu.h5"))
        same = set(g) == set(c) and all(len(g[k]) == len(c[k]) for k in c)
        worst = max((abs(x - y) for k in c if same for x, y in zip(g[k], c[k])), default=0.0)
        print(f"  ff on the GPU: {sum(len(v) for v in g.values())} spikes, max |t_gpu - t_cpu| = {worst:.2e} ms")
        check(r.returncode == 0 and same and worst <= GPU_TOL,
              f"ff: GPU spikes equal the CPU's within {GPU_TOL} ms {r.stderr.strip()[-200:]}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
