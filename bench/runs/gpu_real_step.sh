#!/usr/bin/env bash
# Issue 28 on the GPU machine, in one call: the nine real cells × MIXED (default 2048: 18 432 cells,
# 20 ms, --solver staged) with this tree against a reference tree, built side by side and run
# alternated (REPS, default 4), each run's wall time, its spikes' count and sum (equal sums: the same
# spike times), and this tree with each switch of SWITCHES (default: the staged launches' graded
# priorities, hh's update after each launch) set to 0; then the kernel timeline of a 10 ms run of
# this tree (bench/trace/gpu_trace.sh: the median step, one step's kernels in start order).
# Here, first: scripts/gpu_auto_trial.sh --prepare REF (REF's sources into build-ref-src/), and the
# morphologies (mkdir -p build-shared && cp -r ../shared/data build-shared/). Carry .devlibs,
# build-ref-src, build-shared.
# Usage: bench/runs/gpu_real_step.sh [OUTDIR]; MIXED, REPS, SWITCHES ("NAME ..." of CS_ variables).
# Session 26's calls 2-4 ran these steps (bench/NOTES.md, "Session 26").
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_ab_start "${1:-${OUT:-$PWD/build-gpu/out-real-step}}" || exit 1
mixed=${MIXED:-2048}
$py bench/real_cells.py generate --out "$out/models" --morph-dir "$morph" --alone 0 --mixed "$mixed" --largest 0 \
  --big-compartments 0 --tfinal 20 --check-limit 0 >"$out/networks.md" 2>&1 || { tail -3 "$out/networks.md"; exit 1; }
real=$(find "$out/models" -maxdepth 1 -name "mixed-*.json" | head -1)
"$new" run "$real" --backend cuda --solver staged --tfinal 0.1 --no-output 2>&1 | grep -oE "Hines solver.*" | cut -c1-300
one() { # LABEL BINARY ENV...
  local label=$1 cs=$2
  shift 2
  env "$@" timeout 120 "$cs" run "$real" --backend cuda --solver staged -o "$out/rc.h5" -q >"$out/run.log" 2>&1 \
    || { echo "$label: failed: $(tail -1 "$out/run.log")"; return; }
  gpu_spike_sum "$out/rc.h5" "$label"
}
gpu_stamp "alternated runs"
for r in $(seq "${REPS:-4}"); do
  one "reference, run $r" "$ref" X=1
  one "this tree, run $r" "$new" X=1
  for sw in ${SWITCHES:-CS_STAGED_LAUNCH_PRIORITY CS_CUDA_HH_AFTER_LAUNCH}; do one "this tree, $sw=0, run $r" "$new" "$sw=0"; done
done
gpu_stamp "kernel timeline, 10 ms"
bench/trace/gpu_trace.sh "$out" real -- "$new" run "$real" --backend cuda --solver staged --tfinal 10 --no-output | head -4
grep -A30 "one step" "$out/real-steps.txt" | cut -c1-120
gpu_stamp "done"
