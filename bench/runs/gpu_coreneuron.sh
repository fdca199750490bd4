#!/usr/bin/env bash
# On the GPU machine, in one call (issue 17, P4): CoreNEURON from the `neuron-gpu` 8.2.2 wheel on
# the GPU and on the CPU, cablesim's GPU and Arbor's GPU busyring, on the same busyring networks.
#
# Carry: .devlibs, .peers (git-ignored), prepared on the development machine:
#   .peers/coreneuron/neuron/.data/bin/nrniv-core and .peers/coreneuron/NEURON_gpu.libs/ (from the
#     wheel: pip download neuron-gpu==8.2.2 --no-deps; unzip; libnrniv is not needed),
#   .peers/coreneuron/data/full-N.tgz: CoreNEURON datasets of bench_cpu_vs_neuron.busyring_model(N)
#     written by bench/coreneuron_dataset.py with the wheel's own NEURON (Python 3.11 venv),
#   .peers/arbor/busyring-gpu (../shared/peers/arbor).
# Usage: bench/runs/gpu_coreneuron.sh [OUTDIR]; CELLS="1024" (datasets to run), TFINAL=20 [ms].
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_start "${1:-${OUT:-$PWD/build-gpu/out-coreneuron}}" cablesim_cli -DBUILD_TESTING=OFF || exit 1
core=$root/.peers/coreneuron/neuron/.data/bin/nrniv-core
tfinal=${TFINAL:-20}
run_time() { sed -n 's/.*run time \([0-9.e+-]*\) s: \([0-9.e+-]*\) compartment.*/\1 \2/p' | head -1; }
for n in ${CELLS:-1024}; do
  data=$out/full-$n
  mkdir -p "$data" && tar xzf "$root/.peers/coreneuron/data/full-$n.tgz" -C "$data" --strip-components=1 || { echo "no dataset full-$n"; continue; }
  echo "== busyring full $n cells, $tfinal ms"
  $py - "$n" "$tfinal" "$out/cablesim-full-$n.json" <<'PY'
import json, sys
sys.path.insert(0, "bench")
from bench_cpu_vs_neuron import busyring_model
m = busyring_model(int(sys.argv[1]), 5, float(sys.argv[2]), [200.0, 20.0], [9, 3], 0)
del m["run"]["threads"]
json.dump(m, open(sys.argv[3], "w"))
PY
  for _ in 1 2 3; do
    echo "cablesim cuda auto: $("$cs" run "$out/cablesim-full-$n.json" --backend cuda --no-output 2>&1 | grep -E 'run time|error' | head -1)"
  done
  echo "cablesim cpu $(nproc) threads: $("$cs" run "$out/cablesim-full-$n.json" --backend cpu --no-output 2>&1 | grep -E 'run time|error' | head -1)"
  echo "-- CoreNEURON CPU (1 thread)"
  (cd "$data" && timeout 120 "$core" --datpath . --tstop "$tfinal" >"$out/cn-cpu-$n.log" 2>&1); echo "exit $?"
  grep -E "Solver Time|Number of spikes:" "$out/cn-cpu-$n.log"
  for permute in 1 2; do
    echo "-- CoreNEURON --gpu --cell-permute $permute"
    (cd "$data" && NVCOMPILER_ACC_NOTIFY=${ACC_NOTIFY:-0} timeout 120 "$core" --gpu --cell-permute $permute --datpath . --tstop "$tfinal" \
       >"$out/cn-gpu-$n-$permute.log" 2>&1); rc=$?
    echo "exit $rc"
    grep -E "Solver Time|Number of spikes:|GPU|gpu|error|Error|rror" "$out/cn-gpu-$n-$permute.log" | head -12
    if [ $rc -ne 0 ]; then
      tail -15 "$out/cn-gpu-$n-$permute.log"
      if command -v gdb >/dev/null; then
        (cd "$data" && timeout 120 gdb -batch -ex run -ex bt --args "$core" --gpu --cell-permute $permute --datpath . --tstop "$tfinal" 2>&1 \
          | grep -E "^#[0-9]+ |signal|what\(\)|terminate|Abort" | head -25)
      else
        echo "(no gdb here)"
      fi
      (cd "$data" && NVCOMPILER_ACC_NOTIFY=31 NVCOMPILER_ACC_DEBUG=1 timeout 60 "$core" --gpu --cell-permute $permute --datpath . --tstop 1 2>&1 | tail -25)
      echo "-- again with the driver compiling the embedded PTX (CUDA_FORCE_PTX_JIT=1)"
      (cd "$data" && CUDA_FORCE_PTX_JIT=1 NVCOMPILER_ACC_DEBUG=1 timeout 60 "$core" --gpu --cell-permute $permute --datpath . --tstop 1 2>&1 | tail -8)
    fi
  done
done
arb=$root/.peers/arbor/busyring-gpu
if [ -x "$arb" ]; then
  echo "== Arbor GPU busyring (same call)"
  $py bench/real_cells.py arbor --busyring "$arb" --cablesim "$cs" --work "$out/arbor" --cells "$(echo ${CELLS:-1024} | tr ' ' ',')" \
    --tfinal "$tfinal" --md "$out/arbor.md" >"$out/arbor.log" 2>&1
  cat "$out/arbor.md"
fi
echo "whole script: $(( $(date +%s) - t0 )) s"
