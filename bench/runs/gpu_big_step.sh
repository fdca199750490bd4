#!/usr/bin/env bash
# Issue 28 on the GPU machine, in one call: the distinct big-cell networks of bench/real_cells.py
# (SIZES, default big2000/5000/10000 and the FlyWire cell, 16 M compartments each, 10 ms) with
# this tree against a reference tree, built side by side and run alternated (REPS, default 1), each
# run's wall time, its spikes' count and sum (equal sums: the same spike times); then this tree
# with each of SWITCHES (default: fine's schedule in device memory, in L2, in shared memory; fine's
# class launches in one stream); then, with NCU=1, Nsight Compute's source view of one launch of
# fine's fused step on big2000 (the warp samples per SASS line, summed by stall reason).
# Here, first: scripts/gpu_auto_trial.sh --prepare REF (REF's sources into build-ref-src/), and the
# morphologies (mkdir -p build-shared && cp -r ../shared/data build-shared/). Carry .devlibs,
# build-ref-src, build-shared.
# Usage: bench/runs/gpu_big_step.sh [OUTDIR]; SIZES, REPS, SWITCHES ("NAME=VALUE ..."), NCU.
# Session 27's calls 2-4 ran these steps (bench/NOTES.md, "Session 27").
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_ab_start "${1:-${OUT:-$PWD/build-gpu/out-big-step}}" || exit 1
$py bench/real_cells.py generate --out "$out/models" --morph-dir "$morph" --alone 0 --mixed "" --largest 0 \
  --big-compartments 16e6 --big-sizes "${SIZES:-2000,5000,10000}" --tfinal 10 --cablesim "$new" --check-limit 0 \
  >"$out/networks.md" 2>&1 || { tail -3 "$out/networks.md"; exit 1; }
one() { GPU_RUN_TIMEOUT=150 gpu_run_sum "$@"; } # LABEL BINARY MODEL SOLVER VAR=VALUE...
gpu_stamp "alternated runs"
for m in "$out"/models/big*.json "$out"/models/giant*.json; do
  [ -f "$m" ] || continue
  solver=chunked; case $(basename "$m") in big2000*|big5000*) solver=fine ;; esac
  name=$(basename "$m" .json)
  for r in $(seq "${REPS:-1}"); do
    one "$name $solver, reference, run $r" "$ref" "$m" $solver X=1
    one "$name $solver, this tree, run $r" "$new" "$m" $solver X=1
    for sw in ${SWITCHES:-CS_HINES_FINE_SCHED=global CS_HINES_FINE_SCHED=l2 CS_HINES_FINE_SCHED=shared CS_HINES_FINE_CLASS_STREAMS=0}; do
      one "$name $solver, this tree, $sw, run $r" "$new" "$m" $solver "$sw"
    done
  done
done
if [ "${NCU:-0}" = 1 ] && gpu_ncu; then
  gpu_stamp "Nsight Compute: fine's fused step on big2000"
  m=$(find "$out/models" -maxdepth 1 -name "big2000*.json" | head -1)
  timeout 200 "$ncu" --kernel-name regex:cs__k_fine_step --launch-skip 20 --launch-count 1 --set full -f -o "$out/fine" \
    "$new" run "$m" --backend cuda --solver fine --no-output -q --tfinal 1 >"$out/ncu.log" 2>&1
  "$ncu" -i "$out/fine.ncu-rep" --page source --csv --print-source sass >"$out/fine-sass.csv" 2>&1
  "$py" - "$out/fine-sass.csv" <<'PY'
import csv
import sys
rows = list(csv.reader(open(sys.argv[1])))
h = next(r for r in rows if r and r[0] == "Address")
data = rows[rows.index(h) + 1:]
col = h.index("Warp Stall Sampling (All Samples)")
reasons = [x for x in h if x.startswith("stall_") and "Not Issued" not in x]
total = sum(float(r[col] or 0) for r in data)
print("warp samples: %d; the ten SASS lines with the most:" % total)
for r in sorted(data, key=lambda r: -float(r[col] or 0))[:10]:
    why = max(reasons, key=lambda x: float(r[h.index(x)] or 0))
    print("  %5.1f %%  %-14s %s" % (100 * float(r[col] or 0) / total, why, r[1][:70]))
PY
fi
gpu_stamp "done"
