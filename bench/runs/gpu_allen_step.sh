#!/usr/bin/env bash
# Issue 31 on the GPU machine, in one call: bmtk's 10 000-cell Allen network (bench/sonata_allen_network.py,
# 100 ms) with this tree against a reference tree, built side by side and run alternated (REPS, default 3),
# each run's wall time, its spikes' count and sum (equal sums: the same spike times) and the host's time
# between epochs (CS_CUDA_HOST_TIMES=1); this tree with
# CS_CUDA_MERGE=0 once; then the kernel timeline of a 20 ms run of this tree (bench/trace/gpu_trace.sh:
# the median step, each kernel's time per step, a typical step's kernels) and, with NCU=1, Nsight
# Compute's duration of every kernel of three steps (graphs and lanes off, warm caches).
# Here, first: scripts/gpu_auto_trial.sh --prepare REF (REF's sources into build-ref-src/), and the
# network (bench/runs/gpu_sonata_allen.sh's header). Carry .devlibs, build-ref-src, .bench-allen/n10000.
# Usage: bench/runs/gpu_allen_step.sh [OUTDIR]; NET (default .bench-allen/n10000), REPS, NCU.
# Session 22's calls 5 and 6 and session 23's (bench/NOTES.md, "Session 2x: the Allen step") ran these steps.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-allen-step}}" || exit 1
net=${NET:-.bench-allen/n10000}
cfg=$net/config_cs.json
[ -f "$cfg" ] || { echo "$cfg: no network (bench/runs/gpu_sonata_allen.sh's header says how to make it)"; exit 1; }
gpu_build_with_ref cablesim_cli -DBUILD_TESTING=OFF || exit 1
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$root/build-gpu/CMakeCache.txt")
[ -n "$nvcc" ] && export NVCC=$nvcc # build-catalogue's nvcc
export CABLESIM_WISDOM=off
# the 1 ms warm-ups compile each tree's catalogue (its own cache), outside the timing
CABLESIM_CACHE_DIR=$root/cat-ref $ref run "$cfg" --backend cuda --tfinal 1 --no-output -q >"$out/warm-ref.log" 2>&1 & w1=$!
CABLESIM_CACHE_DIR=$root/cat-new $new run "$cfg" --backend cuda --tfinal 1 --no-output -q >"$out/warm-new.log" 2>&1 & w2=$!
wait $w1 || { tail -3 "$out/warm-ref.log"; exit 1; }
wait $w2 || { tail -3 "$out/warm-new.log"; exit 1; }
one() { # LABEL BUILD ENV...
  local label=$1 b=$2 cs=$new
  shift 2
  [ "$b" = ref ] && cs=$ref
  env "$@" CS_CUDA_HOST_TIMES=1 CABLESIM_CACHE_DIR="$root/cat-$b" timeout 120 "$cs" run "$cfg" --backend cuda \
    -o "$out/sp.h5" -q >"$out/run.log" 2>&1 || { echo "$label: failed: $(tail -1 "$out/run.log")"; return; }
  gpu_spike_sum "$out/sp.h5" "$label"
  grep -oE "host time at the epochs.*" "$out/run.log" | cut -c1-240 # the host's part between epochs (docs/gpu.md)
}
gpu_stamp "alternated runs"
for r in $(seq "${REPS:-3}"); do
  one "reference, run $r" ref X=1
  one "this tree, run $r" new X=1
done
one "this tree, CS_CUDA_MERGE=0" new CS_CUDA_MERGE=0
gpu_stamp "kernel timeline, 20 ms"
CABLESIM_CACHE_DIR=$root/cat-new bench/trace/gpu_trace.sh "$out" allen -- "$new" run "$cfg" --backend cuda --tfinal 20 --no-output |
  head -20
grep -A40 "one step" "$out/allen-steps.txt" | cut -c1-120
if [ "${NCU:-0}" = 1 ] && gpu_ncu; then
  gpu_stamp "Nsight Compute, three steps"
  CABLESIM_CACHE_DIR=$root/cat-new CS_CUDA_GRAPHS=0 CS_CUDA_FORK=0 timeout 300 "$ncu" --cache-control none \
    --clock-control none --launch-skip 1500 --launch-count 140 --metrics gpu__time_duration.sum,launch__grid_size \
    --csv --page raw "$new" run "$cfg" --backend cuda --tfinal 3 --no-output -q >"$out/ncu.csv" 2>"$out/ncu.err"
  grep -c '"' "$out/ncu.csv" | sed 's/^/ncu rows: /'
fi
gpu_stamp "done"
