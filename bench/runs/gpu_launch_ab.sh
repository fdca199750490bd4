#!/usr/bin/env bash
# Session 30 (issues 28 and 31) on the GPU machine, in one call: programmatic dependent launches of
# the step's kernels against plain ones (CS_CUDA_PDL=0), alternated (REPS, default 2), on the
# busyring trees (distinct "rand" and identical "full", 1 024 and 16 384 cells, 20 ms), the nine
# real cells × 2 048 (staged) and, where carried, the 10 000-cell Allen network (100 ms); each
# run's wall time, spike count and spike-time sum (equal sums: the same spike times); then auto's
# first trial at 41 M compartments (262 144 distinct trees, 10 ms) with the command line's huge
# pages against CABLESIM_HUGE_PAGES=0, alternated, with the trial's split of its time, the whole
# command's wall and system time; with TIMELINE=1 rand-1024's kernel timeline both ways
# (bench/trace). Calls 3, 5 and 6 of session 30 ran these steps (bench/NOTES.md, "Session 30").
# Usage: bench/runs/gpu_launch_ab.sh [OUTDIR]; REPS, TIMELINE. Carry .devlibs build-shared
# (and .bench-allen/n10000 for the Allen network: bench/runs/gpu_sonata_allen.sh says how it is made).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-launch-ab}}" || exit 1
gpu_link_shared
gpu_build "$root/build-gpu" cablesim_cli -DBUILD_TESTING=OFF -DCABLESIM_ENABLE_MPI=OFF || { echo "build failed"; exit 1; }
cs=$root/build-gpu/cablesim
export CABLESIM_WISDOM=off
reps=${REPS:-2}
mkdir -p "$out/models"
morph=$(gpu_morph_dir) || exit 1
gpu_ab_networks "$out/models" "$cs" || exit 1
one() { gpu_run_sum "$1" "$cs" "${@:2}"; } # LABEL MODEL SOLVER VAR=VALUE...
{
gpu_stamp "programmatic launches (default) against CS_CUDA_PDL=0"
for ((r = 1; r <= reps; ++r)); do
  for p in 0 1; do
    for m in rand-1024 full-1024 rand-16384 full-16384; do one "$m auto pdl=$p, run $r" "$out/models/$m.json" auto CS_CUDA_PDL=$p; done
    one "real cells staged pdl=$p, run $r" "$out/models/mixed-18432.json" staged CS_CUDA_PDL=$p
    [ -n "$allen" ] && one "Allen auto pdl=$p, run $r" "$allen" auto CS_CUDA_PDL=$p
  done
done
gpu_stamp "auto's first trial at 41 M compartments: huge pages (default) against CABLESIM_HUGE_PAGES=0"
for ((r = 1; r <= reps; ++r)); do
  for h in 1 0; do
    CABLESIM_HUGE_PAGES=$h timeout 300 /usr/bin/time -f "command: %e s wall, %S s system" "$cs" run "$out/models/rand-262144.json" \
      --backend cuda --solver auto -o "$out/run.h5" >"$out/run.log" 2>&1 || { echo "rand-262144: failed"; continue; }
    gpu_spike_sum "$out/run.h5" "rand-262144 auto huge pages=$h, run $r"
    grep -oE "its time: [^;]*;|chosen: [^)]*\)" "$out/run.log" | tr '\n' ' '
    tail -1 "$out/run.log"
  done
done
if [ "${TIMELINE:-0}" = 1 ]; then
  for p in 1 0; do
    gpu_stamp "rand-1024's timeline, CS_CUDA_PDL=$p"
    CS_CUDA_PDL=$p bash bench/trace/gpu_trace.sh "$out" "rand1024-pdl$p" -- "$cs" run "$out/models/rand-1024.json" \
      --backend cuda --solver fine --no-output -q --tfinal 5 | sed -n 1,14p
  done
fi
gpu_stamp "done"
} 2>&1 | tee "$out/summary.txt"
