#!/usr/bin/env bash
# Nsight Compute's view of one launch of a GPU Hines kernel in bench_hines (speed of light,
# memory workload, warp stall reasons, scheduler, occupancy, and the per-instruction stall samples
# of the SASS as CSV): what limits the kernel. Builds bench_hines in build-gpu-hines (as
# scripts/gpu_hines.sh does). Needs .devlibs and ncu.
# Usage: scripts/gpu_hines_profile.sh OUTDIR [KERNEL_REGEX [BENCH_ARGS...]]
#   default: cs__k_staged on bench_hines --targets --max-cells 25600 (the T3 case at 25 600 cells)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:?OUTDIR}" "" || exit 1
shift
kernel=${1:-cs__k_staged}; shift || true
args=("$@"); [ ${#args[@]} -eq 0 ] && args=(--targets --max-cells 25600)
gpu_ncu || exit 0
bld=$root/build-gpu-hines
gpu_build "$bld" bench_hines || exit 1
"$ncu" --kernel-name "regex:$kernel" --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section LaunchStats --section SourceCounters --import-source no \
  -o "$out/profile" -f "$bld/bench/bench_hines" "${args[@]}" >"$out/bench.log" 2>&1
"$ncu" -i "$out/profile.ncu-rep" --print-details all >"$out/profile.txt" 2>&1
"$ncu" -i "$out/profile.ncu-rep" --page source --csv --print-source sass >"$out/sass.csv" 2>&1
grep -vE "^\s*$" "$out/profile.txt" | grep -vE "^    -+" | cut -c1-150 | head -150
