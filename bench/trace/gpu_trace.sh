#!/usr/bin/env bash
# A cablesim run's kernel timeline on the GPU machine, without Nsight Systems: builds the CUPTI
# injection library bench/trace/cupti_trace.c, runs the command with it, and prints
# bench/trace/trace_steps.py's view of the steps (cut at MARKER, default k_detect).
# Usage, from the project root, after a build: bench/trace/gpu_trace.sh OUTDIR NAME [MARKER] -- COMMAND...
# Writes OUTDIR/NAME-steps.txt and the timeline, OUTDIR/NAME.csv.gz (~0.2 MB per 100 steps).
set -uo pipefail
out=$1 name=$2; shift 2
marker=k_detect
[ "$1" != -- ] && { marker=$1; shift; }
shift # --
here=$(cd "$(dirname "$0")" && pwd)
cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")")
lib=$(dirname "$(find "$cuda"/ -name 'libcupti.so' 2>/dev/null | head -1)")
inc=$(dirname "$(find "$cuda"/ -name 'cupti.h' 2>/dev/null | head -1)")
so=$out/libcs_trace.so
[ -f "$so" ] || gcc -shared -fPIC -O2 "$here/cupti_trace.c" -I"$cuda/include" -I"$inc" -L"$lib" -lcupti \
  -Wl,-rpath,"$lib" -o "$so" || { echo "cupti_trace: no build (CUPTI: lib '$lib', include '$inc')"; exit 1; }
CUDA_INJECTION64_PATH=$so CS_TRACE_OUT=$out/$name.csv "$@" >"$out/$name-run.log" 2>&1 || { echo "$name: the run failed: $(tail -2 "$out/$name-run.log")"; exit 1; }
python3 "$here/trace_steps.py" "$out/$name.csv" "$marker" >"$out/$name-steps.txt" 2>&1
gzip -f "$out/$name.csv" # kept for another look: trace_steps.py reads it after gunzip
head -70 "$out/$name-steps.txt"
