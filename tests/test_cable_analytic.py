#!/usr/bin/python3
"""The cable equation against theory.

1. Steady state of a sealed passive cable with a current injected at x = 0:
       V(x) - E = I r_a lambda cosh((L - x)/lambda) / sinh(L/lambda)
   checked at 21 probes to 0.5 % of V - E.
2. Order of convergence in time (backward Euler: 1) with a fine, fixed discretisation.
3. Order of convergence in space (finite volumes on NEURON's node layout: 2) with a tiny dt,
   measured at the two end nodes (x = 0 and x = L), whose positions do not move with the CV count.

Usage: test_cable_analytic.py --cablesim PATH --source-dir DIR --work-dir DIR
Prints one line per check and a final 'N passed, N failed'; exits 1 on any failure.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

TIMEOUT = 120.0  # [s] per run

# The cable (all runs)
L = 1000.0     # [µm] length
A = 1.0        # [µm] radius
G = 1e-4       # [S/cm²] pas conductance (Rm = 1/G = 1e4 Ω·cm², tau = Rm·cm = 10 ms)
E = -65.0      # [mV] pas reversal = v_init
CM = 1.0       # [µF/cm²]
RA = 100.0     # [Ω·cm]
I = 0.1        # [nA] injected at x = 0


def cable_model(tfinal, dt, interval, positions, ncv=None, max_cv_length=None, amplitude=I):
    """A one-cell model of the sealed cable, an iclamp at the root node (branch 0, pos 0: x = 0)
    from t = 0 to past the end, probes at `positions` along branch 0."""
    morph = {"generator": "cable", "length": L, "radius": A}
    if ncv is not None:
        morph["cvs"] = ncv
    disc = {"max_cv_length": max_cv_length} if max_cv_length is not None else {"max_cv_length": 10.0}
    return {
        "run": {"tfinal": tfinal, "dt": dt},
        "discretization": disc,
        "populations": [{
            "name": "cable",
            "count": 1,
            "morphology": morph,
            "biophysics": {
                "cm": CM, "Ra": RA, "v_init": E,
                "mechanisms": [{"name": "pas", "region": "all", "params": {"g": G, "e": E}}],
            },
            "stimuli": [{"mechanism": "iclamp", "location": {"branch": 0, "pos": 0.0}, "cells": "all",
                         "params": {"delay": 0.0, "duration": 10.0 * tfinal + 1000.0,
                                    "amplitude": amplitude}}],
            "probes": {"cells": "all", "locations": [{"branch": 0, "pos": p} for p in positions],
                       "interval": interval},
        }],
    }


class Runner:
    def __init__(self, exe, work):
        self.exe = exe
        self.work = work
        self.count = 0

    def run(self, name, model):
        """Runs the model; returns (times [ms], data [n_times × n_elements] in float64 [mV],
        element_ids). Raises RuntimeError on failure."""
        self.count += 1
        path = os.path.join(self.work, name + ".json")
        out = os.path.join(self.work, name + ".h5")
        with open(path, "w") as f:
            json.dump(model, f, indent=1)
        p = subprocess.run([self.exe, "run", path, "-o", out, "-q", "--threads", "1"], capture_output=True,
                           text=True, timeout=TIMEOUT)
        if p.returncode != 0:
            raise RuntimeError(f"{name}: cablesim exited {p.returncode}: {p.stderr.strip()}")
        with h5py.File(out, "r") as f:
            if f.attrs["status"] != "complete":
                raise RuntimeError(f"{name}: output status {f.attrs['status']!r}")
            g = f["report/cable"]
            data = g["data"][:].astype(np.float64)
            tstart, tstop, dt = g["mapping/time"][:]
            eids = g["mapping/element_ids"][:].astype(int)
        times = tstart + dt * np.arange(data.shape[0])
        return times, data, eids


def row_at(times, t):
    k = int(np.argmin(np.abs(times - t)))
    if abs(times[k] - t) > 1e-6:
        raise RuntimeError(f"no sample at t = {t} ms (nearest {times[k]})")
    return k


def node_x(eid, n):
    """x [µm] of node `eid` of a single-branch cable with n CVs (cs_geometry.h): node 0 is the
    zero-area root at x = 0, nodes 1..n the centres of n equal pieces, node n+1 the distal end."""
    if eid == 0:
        return 0.0
    if eid == n + 1:
        return L
    return (eid - 0.5) * L / n


def fitted_order(h, err):
    """Least-squares slope of log(err) against log(h)."""
    return float(np.polyfit(np.log(h), np.log(err), 1)[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()
    work = os.path.abspath(a.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    r = Runner(os.path.abspath(a.cablesim), work)
    passed = failed = 0

    def check(name, ok, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f"PASS {name}")
        else:
            failed += 1
            print(f"FAIL {name}: {detail}")
        sys.stdout.flush()

    # ---- units ----
    # r_a = Ra / (π a²): Ra [Ω·cm] / a² [µm²] = Ra/a² · 1e8 [Ω/cm] = Ra/a² · 1e4 [Ω/µm]
    r_a = RA / (math.pi * A * A) * 1e4                 # [Ω/µm]
    # λ = sqrt(a Rm / (2 Ra)): a [µm] = a·1e-4 [cm], Rm = 1/G [Ω·cm²] → λ [cm] → ·1e4 [µm]
    lam = math.sqrt(A * 1e-4 / (G * 2.0 * RA)) * 1e4   # [µm]
    tau = CM * 1e-6 / G * 1e3                          # [ms] Rm·cm = (1/G [Ω·cm²])·(cm·1e-6 [F/cm²]) [s]

    def theory(x):
        # I [nA]·1e-9 [A] · r_a [Ω/µm] · λ [µm] = [V]; ·1e3 → [mV]
        return I * 1e-9 * r_a * lam * math.cosh((L - x) / lam) / math.sinh(L / lam) * 1e3  # [mV] V - E

    print(f"cable: L = {L} µm, a = {A} µm, lambda = {lam:.2f} µm, tau = {tau:.2f} ms, "
          f"V(0) - E = {theory(0):.4f} mV, V(L) - E = {theory(L):.4f} mV")

    # ---- 1. steady state ----
    try:
        positions = [k / 20 for k in range(21)]
        dx = 10.0  # [µm]
        n = int(math.ceil(L / dx))
        times, data, eids = r.run("steady", cable_model(tfinal=200.0, dt=0.1, interval=10.0,
                                                        positions=positions, max_cv_length=dx))
        check("steady: one element per probe", len(eids) == len(positions), f"{len(eids)} elements")
        # the element of each probe is the node NEURON's rule picks (cs_geometry_locate)
        want = [0 if p == 0 else n + 1 if p == 1 else 1 + min(int(p * n), n - 1) for p in positions]
        check("steady: probe nodes follow the node layout", list(eids) == want, f"got {list(eids)}, want {want}")
        v_end = data[-1] - E        # [mV]
        v_before = data[-2] - E     # 10 ms earlier: at steady state already
        drift = float(np.max(np.abs(v_end - v_before)))
        check(f"steady: reached (drift over the last 10 ms {drift:.2e} mV)", drift < 1e-3 * abs(theory(L)),
              "not at steady state: lengthen tfinal")
        rel = []
        for k, e in enumerate(eids):
            x = node_x(e, n)
            th = theory(x)
            rel.append(abs(v_end[k] - th) / abs(th))
            print(f"  x = {x:7.1f} µm  V-E = {v_end[k]:9.5f} mV  theory {th:9.5f} mV  error {100 * rel[-1]:.4f} %")
        worst = max(rel)
        check(f"steady: max error {100 * worst:.4f} % of V - E (<= 0.5 %)", worst <= 5e-3,
              f"worst at probe {int(np.argmax(rel))}")
        # with 100 CVs over 1.4 lambda the discretisation error is O((dx/lambda)^2) ~ 1e-5: a
        # misplaced node or a half-CV resistance error shows well above 0.05 %
        check(f"steady: max error {100 * worst:.4f} % <= 0.05 % (second-order discretisation, dx = {dx} µm)",
              worst <= 5e-4)
        # the input resistance: a wrong unit factor anywhere shows here
        rin = v_end[0] / I  # [MΩ] mV/nA
        rin_th = r_a * lam / math.tanh(L / lam) * 1e-6
        check(f"steady: input resistance {rin:.3f} MΩ vs theory {rin_th:.3f} MΩ",
              abs(rin - rin_th) <= 5e-3 * rin_th)
    except (RuntimeError, OSError, KeyError, subprocess.TimeoutExpired) as e:
        check("steady state run", False, str(e))

    # ---- 2. convergence in time ----
    # dx fine and fixed (max_cv_length 10: 100 CVs); samples at t = 2 and 5 ms after the step at
    # x = 0, L/2, L; error = max over those of |V(dt) - V(dt_ref)|.
    try:
        tpos = [0.0, 0.5, 1.0]
        tsamp = [2.0, 5.0]
        dts = [0.1, 0.05, 0.025, 0.0125]
        dt_ref = 0.001

        def sample(dt):
            times, data, _ = r.run(f"dt_{dt:g}", cable_model(tfinal=5.5, dt=dt, interval=0.5, positions=tpos))
            return np.array([data[row_at(times, t)] for t in tsamp])

        ref = sample(dt_ref)
        errs = []
        for dt in dts:
            errs.append(float(np.max(np.abs(sample(dt) - ref))))
        print("  time: dt [ms]   max |V - V_ref| [mV]   ratio")
        for k, (dt, e) in enumerate(zip(dts, errs)):
            ratio = f"{errs[k - 1] / e:.3f}" if k else ""
            print(f"        {dt:<8g} {e:.6e}          {ratio}")
        p = fitted_order(dts, errs)
        check(f"time: errors well above float32 resolution (smallest {min(errs):.2e} mV)",
              min(errs) > 1e-4, "make the transient larger")
        check(f"time: fitted order {p:.3f} in [0.8, 1.2] (backward Euler)", 0.8 <= p <= 1.2)
        pairs = [math.log2(errs[k] / errs[k + 1]) for k in range(len(errs) - 1)]
        check("time: each halving of dt has order in [0.8, 1.2] (" + ", ".join(f"{q:.3f}" for q in pairs) + ")",
              all(0.8 <= q <= 1.2 for q in pairs))
    except (RuntimeError, OSError, KeyError, subprocess.TimeoutExpired) as e:
        check("time convergence runs", False, str(e))

    # ---- 3. convergence in space ----
    # dt tiny and fixed (its own error cancels against a reference with the same dt); compare the
    # end nodes x = 0 (pos 0, the injection site) and x = L (pos 1), whose x does not depend on n.
    try:
        dt = 0.001
        spos = [0.0, 1.0]
        tsamp = [2.0, 5.0]
        ns = [3, 9, 27]
        n_ref = 729

        def sample(n):
            times, data, _ = r.run(f"cv_{n}", cable_model(tfinal=5.5, dt=dt, interval=0.5, positions=spos, ncv=n))
            return np.array([data[row_at(times, t)] for t in tsamp])

        ref = sample(n_ref)
        errs = [float(np.max(np.abs(sample(n) - ref))) for n in ns]
        hs = [L / n for n in ns]
        print("  space: CVs  dx [µm]   max |V - V_ref| [mV]   order vs previous")
        for k, (n, e) in enumerate(zip(ns, errs)):
            q = f"{math.log(errs[k - 1] / e) / math.log(ns[k] / ns[k - 1]):.3f}" if k else ""
            print(f"         {n:<4d} {L / n:<9.2f} {e:.6e}          {q}")
        p = fitted_order(hs, errs)
        check(f"space: errors well above float32 resolution (smallest {min(errs):.2e} mV)", min(errs) > 1e-4,
              "make the transient larger")
        check(f"space: fitted order {p:.3f} in [1.6, 2.4] (second order)", 1.6 <= p <= 2.4)
    except (RuntimeError, OSError, KeyError, subprocess.TimeoutExpired) as e:
        check("space convergence runs", False, str(e))

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
