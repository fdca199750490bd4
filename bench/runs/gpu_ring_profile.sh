#!/usr/bin/env bash
# Where the 256-cell ring's GPU step goes (P3 of issue 17), on the GPU machine: the run's own
# profile table per solver, and Nsight Systems' kernel summary and trace when nsys is there.
# Needs .devlibs. Usage: bench/runs/gpu_ring_profile.sh OUTDIR [SOLVERS] [MODEL]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-/tmp/ring-profile}" || exit 1
solvers=${2:-staged}
model=${3:-models/default.json}
gpu_build build-gpu cablesim_cli || exit 1
for s in $solvers; do
  for r in 1 2; do
    ./build-gpu/cablesim run "$model" --backend cuda --solver "$s" --no-output 2>&1 | tail -25 >"$out/ring-$s-$r.txt"
    grep -E "compartment-steps|cs/s" "$out/ring-$s-$r.txt" | head -3
  done
  ./build-gpu/cablesim run "$model" --backend cpu --threads "$(nproc)" --no-output 2>&1 | grep -E "compartment-steps|cs/s" | head -2
done
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$nsys" ]; then
  s=${solvers%% *}
  "$nsys" profile -o "$out/ring" --force-overwrite true --cuda-graph-trace=node \
    ./build-gpu/cablesim run "$model" --backend cuda --solver "$s" --no-output -q >"$out/nsys.log" 2>&1
  "$nsys" stats -r cuda_gpu_kern_sum -f csv "$out/ring.nsys-rep" >"$out/kern_sum.csv" 2>>"$out/nsys.log"
  "$nsys" stats -r cuda_gpu_trace -f csv "$out/ring.nsys-rep" 2>>"$out/nsys.log" | tail -400 >"$out/trace.csv"
  rm -f "$out/ring.nsys-rep" "$out/ring.sqlite"
  head -20 "$out/kern_sum.csv"
else
  echo "nsys not found: no kernel trace"
fi
