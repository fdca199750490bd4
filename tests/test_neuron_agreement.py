#!/usr/bin/python3
"""Agreement of cablesim with NEURON 8.2 on the validation models (models/validation/*.json).

For each model: NEURON coarse (the model's dt and CVs), NEURON fine (dt/10, 9x the CVs per
branch) and cablesim (`cablesim run MODEL -o WORK/NAME.h5`). Checks, cablesim against NEURON
coarse, with NEURON's own coarse-vs-fine difference as the yardstick:
  - NEURON spikes > 0 (a silent model is a bug in the test model);
  - spike counts equal (per cell);
  - spike times: max |ours - NEURON coarse| <= max(max |NEURON coarse - fine|, 0.05 ms);
  - traces at each probe: RMS and max |ours - NEURON coarse| <= NEURON coarse-vs-fine RMS and max
    (the fine run interpolated onto the coarse times; compared at the common sample times).
Prints a table of all figures (also written to WORK/neuron_agreement.md) and 'N passed, N failed'.

NEURON records a fixed-step spike at the grid time of the first sample above threshold; cablesim
interpolates the crossing (Arbor's convention). The table also lists, for information only, the
difference to a NEURON run that emulates cablesim's convention (neuron_models interpolated_spikes).

Usage: test_neuron_agreement.py --cablesim PATH --source-dir DIR --work-dir DIR [--models a,b]
Exit: 0 all passed, 1 a check failed, 77 skipped (no NEURON / h5py).
"""

import argparse
import math
import os
import subprocess
import sys
import time

MODELS = ["soma_hh", "ball_and_stick", "branched", "attached", "ring4"]
REFINE = 9        # fine run: 9x the CVs per branch (odd, so coarse node centres are fine nodes)
DT_DIVISOR = 10   # fine run: dt / 10
SPIKE_TOL_FLOOR = 0.05  # [ms]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated subset")
    args = ap.parse_args()

    sys.path.insert(0, os.path.join(args.source_dir, "tests"))
    try:
        import numpy as np  # noqa: F401
        import h5py  # noqa: F401
        import neuron_models as nm
        nm.neuron_h()
    except Exception as e:  # noqa: BLE001
        print("SKIP: NEURON / h5py / numpy not importable: %s" % e)
        return 77
    os.makedirs(args.work_dir, exist_ok=True)

    checks = []  # (model, name, ok, detail)
    spike_rows, trace_rows = [], []
    for name in args.models.split(","):
        run_model(name, args, nm, checks, spike_rows, trace_rows)

    table = format_tables(spike_rows, trace_rows, checks)
    print(table)
    with open(os.path.join(args.work_dir, "neuron_agreement.md"), "w") as f:
        f.write(table)
    npass = sum(1 for c in checks if c[2])
    nfail = len(checks) - npass
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


def check(checks, model, what, ok, detail=""):
    checks.append((model, what, bool(ok), detail))
    print("%s %s: %s %s" % ("PASS" if ok else "FAIL", model, what, detail), flush=True)
    return ok


def per_cell(times, ids, ncell):
    import numpy as np
    return [np.sort(np.asarray(times)[np.asarray(ids) == c]) for c in range(ncell)]


def max_matched_diff(a_cells, b_cells):
    """Max |a - b| over spikes matched by rank within each cell (over min(len) when counts
    differ); nan when nothing matches."""
    m = float("nan")
    for a, b in zip(a_cells, b_cells):
        n = min(len(a), len(b))
        if n:
            d = float(abs(a[:n] - b[:n]).max())
            m = d if math.isnan(m) else max(m, d)
    return m


def run_cablesim(args, path, out):
    if os.path.exists(out):
        os.remove(out)
    cmd = [args.cablesim, "run", path, "-o", out]
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout, time.time() - t0, " ".join(cmd)


def read_output(path, pop):
    import h5py
    import numpy as np
    with h5py.File(path, "r") as f:
        sp = f["spikes"][pop] if "spikes" in f and pop in f["spikes"] else None
        ts = np.array(sp["timestamps"][()], dtype=float) if sp is not None else np.zeros(0)
        ids = np.array(sp["node_ids"][()], dtype=int) if sp is not None else np.zeros(0, int)
        rep = f["report"][pop]
        data = np.array(rep["data"][()], dtype=float)
        mp = rep["mapping"]
        node_ids = np.array(mp["node_ids"][()], dtype=int)
        ptr = np.array(mp["index_pointers"][()], dtype=int)
        elem = np.array(mp["element_ids"][()], dtype=int)
        tinfo = np.array(mp["time"][()], dtype=float)
    return {"ts": ts, "ids": ids, "data": data, "node_ids": node_ids, "ptr": ptr, "elem": elem,
            "time": tinfo}


def expected_cv(nm, P_branches, ncv, loc):
    """Our CV index of a location if nodes are numbered root, then branch by branch in the
    given order (centres then the distal node); for information only."""
    first = []
    k = 1
    for n in ncv:
        first.append(k)
        k += n + 1
    b, pos = int(loc["branch"]), float(loc["pos"])
    if pos <= 0:
        return 0 if P_branches[b]["parent"] < 0 else first[P_branches[b]["parent"]] + ncv[P_branches[b]["parent"]]
    if pos >= 1:
        return first[b] + ncv[b]
    return first[b] + min(int(pos * ncv[b]), ncv[b] - 1)


def run_model(name, args, nm, checks, spike_rows, trace_rows, path=None):
    """path: the model file (default models/validation/NAME.json); tests/test_nmodl_neuron.py
    gives its own. Returns NEURON's coarse and fine results (None when cablesim failed)."""
    import numpy as np
    path = path or os.path.join(args.source_dir, "models", "validation", name + ".json")
    model = nm.load_model(path)
    pop = model["populations"][0]
    pname = pop["name"]
    ncell = int(pop.get("count", 1))
    dt = float(model["run"]["dt"])

    t0 = time.time()
    co = nm.simulate(model, refine=1, dt=dt)
    fi = nm.simulate(model, refine=REFINE, dt=dt / DT_DIVISOR)
    t_nrn = time.time() - t0
    co_cells = [np.sort(s) for s in co[pname]["spikes"]]
    fi_cells = [np.sort(s) for s in fi[pname]["spikes"]]
    n_co = sum(len(s) for s in co_cells)
    n_fi = sum(len(s) for s in fi_cells)
    check(checks, name, "NEURON coarse spikes > 0", n_co > 0, "(%d)" % n_co)
    d_cf = max_matched_diff(co_cells, fi_cells)
    spike_tol = max(d_cf if not math.isnan(d_cf) else 0.0, SPIKE_TOL_FLOOR)

    # NEURON emulating cablesim's spike convention (interpolated crossing times, events sent at
    # t_spike + delay): information only, to separate convention from numerics.
    em = nm.simulate(model, refine=1, dt=dt, interpolated_spikes=True)
    em_cells = [np.sort(x) for x in em[pname]["spikes"]]
    probe_map = co[pname]["probe_map"]

    out = os.path.join(args.work_dir, name + ".h5")
    rc, log, t_cs, cmd = run_cablesim(args, path, out)
    row = {"model": name, "n_ours": "-", "n_co": n_co, "n_fi": n_fi, "d_ours": float("nan"),
           "d_cf": d_cf, "tol": spike_tol, "d_interp": float("nan"), "t_nrn": t_nrn, "t_cs": t_cs}
    spike_rows.append(row)
    if not check(checks, name, "cablesim exit code 0", rc == 0, "(rc %d: %s)" % (rc, cmd)):
        print(log[-3000:])
        return
    try:
        r = read_output(out, pname)
    except Exception as e:  # noqa: BLE001
        check(checks, name, "output readable", False, "(%s: %s)" % (out, e))
        return

    # --- spikes
    ours_cells = per_cell(r["ts"], r["ids"], ncell)
    n_ours = len(r["ts"])
    row["n_ours"] = n_ours
    counts_ours = [len(s) for s in ours_cells]
    counts_co = [len(s) for s in co_cells]
    check(checks, name, "spike counts equal", counts_ours == counts_co and n_ours == n_co,
          "(ours %s, NEURON coarse %s, NEURON fine %s)" % (counts_ours, counts_co, [len(s) for s in fi_cells]))
    d_ours = max_matched_diff(ours_cells, co_cells)
    row["d_ours"] = d_ours
    row["d_interp"] = max_matched_diff(ours_cells, em_cells)
    check(checks, name, "spike times", not math.isnan(d_ours) and d_ours <= spike_tol,
          "(max |ours - NEURON| %.4g ms <= tol %.4g ms; NEURON coarse-fine %.4g)" % (d_ours, spike_tol, d_cf))

    # --- traces
    pr = pop["probes"]
    interval = float(pr.get("interval", dt))
    stride_co = int(round(interval / dt))
    t_co = co["t"][::stride_co]
    v_co = co[pname]["v"][::stride_co]
    v_fi_all = fi[pname]["v"]
    data = r["data"]
    n = min(len(t_co), data.shape[0])
    t_cmp = t_co[:n]
    exp_cells = nm._cells_of(pr.get("cells", "all"), ncell)
    check(checks, name, "report mapping", list(r["node_ids"]) == exp_cells
          and data.shape[1] == len(probe_map) and list(r["ptr"]) ==
          [k * len(pr["locations"]) for k in range(len(exp_cells) + 1)],
          "(node_ids %s, index_pointers %s, %d elements, expected %d)" % (list(r["node_ids"]), list(r["ptr"]),
                                                                          data.shape[1], len(probe_map)))
    check(checks, name, "report samples cover the run", n >= len(t_co) - 1,
          "(ours %d samples, NEURON %d at interval %g ms)" % (data.shape[0], len(t_co), interval))
    branches = nm.morphology_branches(pop["morphology"])
    policy = pop.get("discretization", model.get("discretization", {}))
    ncv = [nm.branch_cvs(b, policy) for b in branches]
    for k, (ci, li) in enumerate(probe_map):
        if k >= data.shape[1]:
            break
        loc = pr["locations"][li]
        ours = data[:n, k]
        ref = v_co[:n, k]
        fine = np.interp(t_cmp, fi["t"], v_fi_all[:, k])
        max_em = float(np.abs(ours - em[pname]["v"][::stride_co][:n, k]).max())
        dif = ours - ref
        dcf = ref - fine
        rms_o, max_o = float(np.sqrt(np.mean(dif ** 2))), float(np.abs(dif).max())
        rms_cf, max_cf = float(np.sqrt(np.mean(dcf ** 2))), float(np.abs(dcf).max())
        exp_e = expected_cv(nm, branches, ncv, loc)
        lname = "cell %d b%d(%g)" % (ci, int(loc["branch"]), float(loc["pos"]))
        worst = int(np.abs(dif).argmax())
        trace_rows.append({"model": name, "probe": lname, "elem": int(r["elem"][k]) if k < len(r["elem"]) else -1,
                           "exp_elem": exp_e, "rms_o": rms_o, "rms_cf": rms_cf, "max_o": max_o,
                           "max_cf": max_cf, "t_worst": float(t_cmp[worst]), "max_em": max_em})
        check(checks, name, "trace %s RMS" % lname, rms_o <= rms_cf,
              "(ours-NEURON %.3g mV <= NEURON coarse-fine %.3g mV)" % (rms_o, rms_cf))
        check(checks, name, "trace %s max" % lname, max_o <= max_cf,
              "(ours-NEURON %.3g mV at t=%.3f ms <= NEURON coarse-fine %.3g mV)" % (max_o, t_cmp[worst], max_cf))
    return co, fi


def fmt(x, spec="%.4f"):
    if isinstance(x, str):
        return x
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return spec % x


def format_tables(spike_rows, trace_rows, checks):
    L = []
    L.append("### cablesim vs NEURON 8.2: spikes\n")
    L.append("NEURON: fixed step, secondorder 0, celsius 6.3, usetable_hh 0. Coarse = the model's dt "
             "and CVs; fine = dt/%d and %dx the CVs per branch. Times in ms.\n" % (DT_DIVISOR, REFINE))
    L.append("| model | spikes ours | NEURON coarse | NEURON fine | max \\|ours-NEURON\\| | "
             "max \\|NEURON coarse-fine\\| | tolerance | max \\|ours-NEURON interp.\\| | NEURON s | cablesim s |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in spike_rows:
        L.append("| %s | %s | %d | %d | %s | %s | %s | %s | %.2f | %.2f |" % (
            r["model"], r["n_ours"], r["n_co"], r["n_fi"], fmt(r["d_ours"], "%.3g"), fmt(r["d_cf"], "%.3g"),
            fmt(r["tol"], "%.3g"), fmt(r["d_interp"], "%.3g"), r["t_nrn"], r["t_cs"]))
    L.append("")
    L.append("NEURON records a fixed-step spike at the grid time of the first sample above threshold and sends "
             "its events at that time + delay; cablesim interpolates the crossing (Arbor). NEURON interp. = "
             "NEURON coarse run emulating cablesim's rule (crossing interpolated inside the step, events sent "
             "with NetCon.event(t_spike + delay)); information only, to separate convention from numerics.\n")
    L.append("### cablesim vs NEURON 8.2: voltage traces (mV)\n")
    L.append("| model | probe | our CV | RMS ours-NEURON | RMS NEURON coarse-fine | max ours-NEURON | "
             "max NEURON coarse-fine | t of max ours-NEURON | max ours-NEURON interp. |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in trace_rows:
        cv = "%d" % r["elem"] + ("" if r["elem"] == r["exp_elem"] else " (expected %d)" % r["exp_elem"])
        L.append("| %s | %s | %s | %.3g | %.3g | %.3g | %.3g | %.3f | %.3g |" % (
            r["model"], r["probe"], cv, r["rms_o"], r["rms_cf"], r["max_o"], r["max_cf"], r["t_worst"],
            r["max_em"]))
    L.append("")
    fails = [c for c in checks if not c[2]]
    L.append("%d checks passed, %d failed%s\n" % (len(checks) - len(fails), len(fails),
                                                  "".join("\n- FAIL %s: %s %s" % (c[0], c[1], c[3]) for c in fails)))
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
