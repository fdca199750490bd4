#!/usr/bin/python3
"""A full disk while writing the output: clean failure, readable file.

tests/enospc_shim.c (LD_PRELOAD) lets the output file grow by N bytes, then fails writes with
ENOSPC. For N from 0 (the file cannot even be created) through the layout, the appends of
samples mid-run, to just short of the complete file (the final flush and close fail), every
run must exit 1 (not a signal), print exactly one line naming the output file and the cause
(or what could not be created), and leave either no file (nothing simulated) or a file that h5py
opens, marked status = "incomplete", whose datasets all read, with finite samples and a
time axis that describes the rows present (the state at the last flush).

Usage: test_output_enospc.py --cablesim PATH --source-dir DIR --work-dir DIR
Exits 77 (skipped) where the shim cannot be used (not built, or an ASan build).
"""
import argparse
import os
import shutil
import subprocess
import sys

import h5py

import full_disk

SKIP = 77
CRASH_WORDS = ("Segmentation", "Abort", "AddressSanitizer", "runtime error", "core dumped")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()
    exe = os.path.abspath(a.cablesim)
    shim = os.path.join(os.path.dirname(exe), "tests", "libcs_enospc_shim.so")
    if not os.path.exists(shim):
        print(f"SKIP: no ENOSPC shim at {shim}")
        return SKIP
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
    if "libasan" in ldd:
        print("SKIP: cablesim is built with AddressSanitizer, which intercepts write(): "
              "the LD_PRELOAD shim cannot be used")
        return SKIP
    work = os.path.abspath(a.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # The run is not flushed on the way, so once the chunk cache (1 MB, 4 bands) is full each new
    # band evicts a written chunk from inside an append: budgets short of those chunks fail in
    # "cannot append ... rows", later ones at the final flush, the first ones while creating the
    # file and its layout.
    pop = full_disk.POP
    model = full_disk.write_model(work)
    out = os.path.join(work, "out.h5")

    def run(budget, m=model):
        if os.path.exists(out):
            os.remove(out)
        # no flush on the way, however slowly the machine runs: the file's layout, so what each
        # budget reaches, must not depend on the wall clock
        env = dict(os.environ, LD_PRELOAD=shim, CS_ENOSPC_AFTER=str(budget), CABLESIM_FLUSH_SECONDS="1e9")
        p = subprocess.run([exe, "run", m, "-o", out, "-q", "--threads", "1"], env=env,
                           capture_output=True, text=True, errors="replace", timeout=120)
        return p.returncode, p.stdout, p.stderr

    passed = failed = 0

    def check(name, ok, detail=""):
        nonlocal passed, failed
        passed, failed = passed + ok, failed + (not ok)
        print(f"{'PASS' if ok else 'FAIL'} {name}" + ("" if ok else f": {detail}"))
        sys.stdout.flush()

    # With room enough the shim changes nothing: the file is complete.
    rc, so, se = run(1 << 40)
    ok = rc == 0 and os.path.exists(out)
    if ok:
        with h5py.File(out, "r") as f:
            ok = f.attrs["status"] == "complete"
    check("with room enough the run completes under the shim", ok, f"rc={rc} {se[-300:]!r}")
    if ok:
        with h5py.File(out, "r") as f:
            shape = f[f"report/{pop}/data"].shape
            nspikes = f[f"spikes/{pop}/timestamps"].shape[0]
        ok = shape == (401, 1024) and nspikes > 1024
        check(f"the complete file holds {shape} samples and {nspikes} spikes", ok,
              "want (401, 1024) and a spike of every cell")
    if not ok:
        print(f"{passed} passed, {failed} failed")
        return 1
    total = os.path.getsize(out)  # [bytes] the complete file

    def sweep(model, budgets, label=""):
        """each budget's run: exit 1, one line naming the file and the cause, a readable file left;
        returns what failed -> the first message that said so"""
        reasons = {}
        for n in budgets:
            rc, so, se = run(n, model)
            lines = [l for l in se.splitlines() if l.strip()]
            msg = lines[0] if lines else ""
            problems = []
            if rc != 1:
                problems.append(f"exit status {rc} (want 1; < 0 is a signal)")
            if len(lines) != 1:
                problems.append(f"{len(lines)} lines on stderr (want 1): {se[-500:]!r}")
            if out not in msg:
                problems.append("message does not name the output file")
            if "No space left on device" not in msg and "cannot create" not in msg:
                problems.append("message gives no cause")
            if [w for w in CRASH_WORDS if w in so + se]:
                problems.append("crash report")
            for r in ("cannot create the output file", "cannot create /", "cannot append",
                      "cannot flush", "cannot close", "cannot mark"):
                if r in msg:
                    reasons.setdefault(r, msg)
            state, left = full_disk.left_file(out)
            problems += left
            check(f"{label}room for {n} bytes: rc={rc} {state}: {msg!r}", not problems, "; ".join(problems))
        return reasons

    budgets = sorted({0, 100, 1000, 2000, 4000, 8000, 16000, 32000}
                     | {total * k // 20 for k in range(1, 20)}
                     | {total - d for d in (4096, 2048, 1024, 512, 64, 1)})
    reasons = sweep(model, budgets)

    # The sweep reached each kind of failure: creating the file, creating its layout, appending
    # samples mid-run (the chunk written by an append) and the final flush.
    for r in ("cannot create the output file", "cannot create /", "cannot append", "cannot flush"):
        check(f"some budget fails with {r!r}", r in reasons, f"seen: {sorted(reasons)}")
    msg = reasons.get("cannot append", "")
    check(f"the mid-run failure names the dataset and the cause: {msg!r}",
          f"rows to /report/{pop}/data" in msg and "No space left on device" in msg, "")

    # Probes of mechanism variables add a report per variable (/report/POP/VARIABLE/): the same
    # sweep over a file three reports wide, failing in each report's appends too.
    vmodel = full_disk.write_model(work, ["v", "hh.m", "syn.g"])
    rc, so, se = run(1 << 40, vmodel)
    check("with room enough the run with variable reports completes", rc == 0, f"rc={rc} {se[-300:]!r}")
    if rc == 0:
        vtotal = os.path.getsize(out)
        vreasons = sweep(vmodel, sorted({0, 4000} | {vtotal * k // 12 for k in range(1, 12)} | {vtotal - 1}),
                         "variables: ")
        check(f"with variable reports some budget fails mid-run: {sorted(vreasons)}",
              "cannot append" in vreasons or "cannot flush" in vreasons, "")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
