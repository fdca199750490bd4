#!/usr/bin/env bash
# Nsight Compute's view of one launch of a GPU Hines kernel in bench_hines (speed of light,
# memory workload, warp stall reasons, scheduler, occupancy, and the per-instruction stall samples
# of the SASS as CSV): what limits the kernel. Builds bench_hines in build-gpu-hines (as
# scripts/gpu_hines.sh does). Needs .devlibs and ncu.
# Usage: scripts/gpu_hines_profile.sh OUTDIR [KERNEL_REGEX [BENCH_ARGS...]]
#   default: cs__k_staged on bench_hines --targets --max-cells 25600 (the T3 case at 25 600 cells)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:?OUTDIR}; shift
kernel=${1:-cs__k_staged}; shift || true
args=("$@"); [ ${#args[@]} -eq 0 ] && args=(--targets --max-cells 25600)
mkdir -p "$out"
export PKG_CONFIG_PATH=$root/.devlibs/lib/pkgconfig LD_LIBRARY_PATH=$root/.devlibs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null) || { echo "ncu not found: skipped"; exit 0; }
bld=$root/build-gpu-hines
cmake -S . -B "$bld" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DHDF5_ROOT="$root/.devlibs" -DCMAKE_PREFIX_PATH="$root/.devlibs" -DCMAKE_BUILD_RPATH="$root/.devlibs/lib" >"$out/build.log" 2>&1
cmake --build "$bld" -j "$(nproc)" --target bench_hines >>"$out/build.log" 2>&1 || { grep -E "error" -A3 "$out/build.log" | head -40; exit 1; }
"$ncu" --kernel-name "regex:$kernel" --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section LaunchStats --section SourceCounters --import-source no \
  -o "$out/profile" -f "$bld/bench/bench_hines" "${args[@]}" >"$out/bench.log" 2>&1
"$ncu" -i "$out/profile.ncu-rep" --print-details all >"$out/profile.txt" 2>&1
"$ncu" -i "$out/profile.ncu-rep" --page source --csv --print-source sass >"$out/sass.csv" 2>&1
grep -vE "^\s*$" "$out/profile.txt" | grep -vE "^    -+" | cut -c1-150 | head -150
