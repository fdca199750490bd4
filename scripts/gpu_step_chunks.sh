#!/usr/bin/env bash
# On the GPU machine: the fused step's chunk sizes (rows of loads a thread keeps in flight in the
# backward and forward sweeps) measured with the full-step benchmark. Builds cablesim with
# -DCS_STEP_EXPERIMENT, which lets CS_STEP_CHUNKS pick an instantiation of the shared-constants
# kernel (solver/cs_hines_gpu.cu: "8,8" is the default kernel; "lb" caps it at 128 registers;
# "rowf" reads every row's flags from one array shared by the cells, their union).
# Usage: scripts/gpu_step_chunks.sh OUTDIR CELLS... (needs .devlibs; carry ".devlibs")
#   CONFIGS="8,8:auto rowf:auto 8,8:block_interleaved" picks the chunk settings and solvers
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:?OUTDIR}
shift
cells=("${@:-65536}")
mkdir -p "$out"
export LD_LIBRARY_PATH=$root/.devlibs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bld=$root/build-gpu-exp
cmake -S . -B "$bld" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS=-DCS_STEP_EXPERIMENT \
  -DHDF5_ROOT="$root/.devlibs" -DCMAKE_PREFIX_PATH="$root/.devlibs" -DCMAKE_BUILD_RPATH="$root/.devlibs/lib" \
  >"$out/exp-build.log" 2>&1 || { tail -30 "$out/exp-build.log"; exit 1; }
cmake --build "$bld" -j "$(nproc)" --target cablesim_cli >>"$out/exp-build.log" 2>&1 || { grep -E "error" -A3 "$out/exp-build.log" | head -40; exit 1; }
for cfg in ${CONFIGS:-8,8:auto 12,8:auto 16,8:auto 16,8,lb:auto 8,16,lb:auto 12,16,lb:auto 8,8:auto}; do
  ch=${cfg%%:*} solver=${cfg##*:}
  echo "== CS_STEP_CHUNKS=$ch solver $solver"
  CS_STEP_CHUNKS=$ch python3 bench/bench_full_step.py --cablesim "$bld/cablesim" --out "$out/chunks-${ch//,/_}-$solver.json" \
    --gpu-cells "${cells[@]}" --gpu-solvers "$solver" --cpu-cells --skip-neuron --reps 3 2>&1 | grep -E "^\| cablesim cuda" | cut -c1-120
done
