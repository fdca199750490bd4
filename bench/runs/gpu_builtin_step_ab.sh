#!/usr/bin/env bash
# Session 31 (issues 28 and 31) on the GPU machine, in one call: this tree against a reference
# (build-ref-src, scripts/gpu_auto_trial.sh --prepare REF), alternated (REPS, default 2), on the
# busyring trees (distinct "rand" and identical "full", 1 024 and 16 384 cells, 20 ms; rand-262144,
# 10 ms), the nine real cells × 2 048 (staged) and, where carried, the 10 000-cell Allen network
# (100 ms); rand-1024 and full-1024 also with each of SWITCHES off (default: the launch after the
# solve, expsyn's events in its current's launch, the synapses ahead; and graphs of 64 steps);
# each run's wall time, spike count and spike-time sum (equal sums: the same spike times); then
# Arbor's GPU busyring against this tree at every size of shared/peers/arbor (1 024, 16 384 and
# 65 536 cells), and with TIMELINE=1 rand-1024's kernel timeline (bench/trace). Calls 1-4 of
# session 31 ran these steps, Arbor at 1 024 and 16 384 cells only (bench/NOTES.md, "Session 31").
# Usage: bench/runs/gpu_builtin_step_ab.sh [OUTDIR] after scripts/gpu_auto_trial.sh --prepare REF;
# REPS, SWITCHES, TIMELINE. Carry .devlibs build-ref-src build-shared .peers (and
# .bench-allen/n10000: bench/runs/gpu_sonata_allen.sh says how it is made).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_ab_start "${1:-${OUT:-$PWD/build-gpu/out-builtin-step}}" || exit 1
reps=${REPS:-2}
switches=${SWITCHES:-CS_CUDA_AFTER_SOLVE=0 CS_CUDA_EVENTS_CURRENT=0 CS_CUDA_SYNAPSES_AHEAD=0 CS_CUDA_GRAPH_STEPS=64}
mkdir -p "$out/models"
gpu_ab_networks "$out/models" "$new" || exit 1
{
gpu_stamp "this tree (new) against the reference (ref)"
for ((r = 1; r <= reps; ++r)); do
  for b in ref new; do
    gpu_run_sum "rand-1024 fine $b, run $r" "${!b}" "$out/models/rand-1024.json" fine
    gpu_run_sum "full-1024 auto $b, run $r" "${!b}" "$out/models/full-1024.json" auto
    gpu_run_sum "rand-16384 fine $b, run $r" "${!b}" "$out/models/rand-16384.json" fine
    gpu_run_sum "full-16384 auto $b, run $r" "${!b}" "$out/models/full-16384.json" auto
    gpu_run_sum "rand-262144 fine $b, run $r" "${!b}" "$out/models/rand-262144.json" fine
    gpu_run_sum "real cells staged $b, run $r" "${!b}" "$out/models/mixed-18432.json" staged
    [ -n "$allen" ] && gpu_run_sum "Allen auto $b, run $r" "${!b}" "$allen" auto
  done
  for sw in $switches; do
    gpu_run_sum "rand-1024 fine new $sw, run $r" "$new" "$out/models/rand-1024.json" fine "$sw"
    gpu_run_sum "full-1024 staged new $sw, run $r" "$new" "$out/models/full-1024.json" staged "$sw"
  done
done
gpu_stamp "Arbor's GPU busyring against this tree"
timeout 300 "$py" bench/real_cells.py arbor --busyring "$root/.peers/arbor/busyring-gpu" --cablesim "$new" \
  --work "$out/arbor" --cells 1024,16384,65536 --tfinal 20 --md "$out/arbor.md" >"$out/arbor.log" 2>&1 || echo "Arbor: failed (arbor.log)"
grep -E "^\| (full|rand)" "$out/arbor.md"
if [ "${TIMELINE:-0}" = 1 ]; then
  gpu_stamp "rand-1024's timeline"
  bash bench/trace/gpu_trace.sh "$out" rand1024 k_after_solve -- "$new" run "$out/models/rand-1024.json" \
    --backend cuda --solver fine --no-output -q --tfinal 5 | sed -n 1,16p
fi
gpu_stamp "done"
} 2>&1 | tee "$out/summary.txt"
