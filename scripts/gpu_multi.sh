#!/usr/bin/env bash
# Issue 19 on a machine of several GPUs (nvidia-h200-x2, -x4, -x8), in one call: weak and strong
# scaling over 1, 2, 4, 8 GPUs (one rank per GPU), the largest network the node holds, spike
# trains against the 1-GPU run, and the cost model's prediction beside each figure.
#   weak:   the nine real cells, REAL_PER_GPU of each per GPU (default 2048: 18 432 cells), and
#           distinct busyring trees, RING_PER_GPU per GPU (default 65 536); efficiency t(1)/t(N)
#   strong: the real-cell network of STRONG_REAL of each (default 8192: 73 728 cells), 1 -> N GPUs
#   largest: busyring trees, LARGEST_PER_GPU cells per GPU (default 0: not run; ~1.8e6 full trees
#           of 339 compartments make 0.6 billion per GPU), one epoch
#   spikes: the real-cell network of 128 of each, written to a file on 1 and on N GPUs, compared
# GPUS="1 2 4 8" (those above the machine's count are left out, unless SHARE=1: several ranks on
# one GPU, the smoke test a one-GPU machine allows). Binary: MPI_CS (default dist-mpi/cablesim:
# CUDA + MPI + CABLESIM_MPI_SERIAL_HDF5, built on the development machine, docs/mpi.md), else
# build-gpu-mpi built here with the machine's mpicc. Carry: .devlibs, build-shared, dist-mpi.
# Usage: scripts/gpu_multi.sh [OUTDIR]; PARTS="weak strong largest spikes"; TFINAL=20 [ms]; SOLVER=auto
# for the real cells (staged: no trial in each run), RING_SOLVER=auto for the busyring trees (chunked:
# auto's choice there; staged refuses them);
# BACKEND=cpu for a dry run of the script itself on a machine without a GPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-multi}}" || exit 1
t0=$(date +%s)
parts_all="weak strong largest spikes"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tfinal=${TFINAL:-20}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
mpi_cs=${MPI_CS:-$root/dist-mpi/cablesim}
if [ ! -x "$mpi_cs" ] && command -v mpicc >/dev/null; then
  gpu_build "$root/build-gpu-mpi" cablesim_cli -DBUILD_TESTING=OFF -DCABLESIM_MPI_SERIAL_HDF5=ON || exit 1
  mpi_cs=$root/build-gpu-mpi/cablesim
fi
[ -x "$mpi_cs" ] || { echo "no MPI build: carry dist-mpi (docs/mpi.md) or install mpicc"; exit 1; }
mpi_run=(env "LD_LIBRARY_PATH=$(dirname "$mpi_cs"):$LD_LIBRARY_PATH" mpirun --bind-to none)
gpus=
for n in ${GPUS:-1 2 4 8}; do [ "$n" -le "$ngpu" ] || [ "${SHARE:-0}" = 1 ] && gpus="$gpus $n"; done
echo "GPUs on this machine: $ngpu; runs on:$gpus (SHARE=${SHARE:-0})"
models=$out/models
mkdir -p "$models"
morph=$(gpu_morph_dir) || exit 1
real=${REAL_PER_GPU:-2048} ring=${RING_PER_GPU:-65536} strong=${STRONG_REAL:-8192}
mixed=128,$strong
for n in $gpus; do mixed="$mixed,$((real * n))"; done
$py bench/real_cells.py generate --out "$models" --morph-dir "$morph" --alone 0 --mixed "$mixed" --largest 0 \
  --big-compartments 0 --tfinal "$tfinal" >"$out/generate.log" 2>&1 || { tail -5 "$out/generate.log"; exit 1; }
$py - "$models" "$ring" "${LARGEST_PER_GPU:-0}" "$gpus" <<'PY'
import json, sys
sys.path.insert(0, "bench")
from bench_cpu_vs_neuron import busyring_model
out, ring, largest, gpus = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(x) for x in sys.argv[4].split()]
for n in gpus:
    m = busyring_model(ring * n, 5, 20.0, [200.0, 20.0], [9, 3], 0)
    m["populations"][0]["morphology"]["branch_probability"] = [1.0, 0.5]
    del m["run"]["threads"]
    json.dump(m, open(f"{out}/ring-{n}.json", "w"))
    if largest:
        m = busyring_model(largest * n, 5, 2.5, [200.0, 20.0], [9, 3], 0)
        del m["run"]["threads"]
        json.dump(m, open(f"{out}/largest-{n}.json", "w"))
PY
# one run: ranks, model, extra options -> "seconds cs/s compartments spikes" (rank 0's summary)
one() {
  local n=$1 m=$2 solver=${SOLVER:-auto}; shift 2
  case $m in */ring-*) solver=${RING_SOLVER:-auto} ;; esac # staged refuses distinct trees past 65 536 rows
  timeout 500 "${mpi_run[@]}" -np "$n" "$mpi_cs" run "$m" --backend "${BACKEND:-cuda}" --solver "$solver" --tfinal "$tfinal" "$@" 2>&1 \
    | awk '/compartments,/{c=$3} /spikes/ && /population/{s+=$(NF-4)} /run time/{t=$3; r=$5} END{print t, r, c, s}'
}
model() { $py - "$@" <<'PY'
# the cost model of docs/mpi.md: efficiency of N ranks from one rank's epoch compute time t_c [s]
# and spikes per rank per epoch s; within a node alpha ~1 us per rank (measured, 16 cores),
# beta 2.5 GB/s per rank, 200 ns per received spike
import math, sys
n, t1, spikes, epochs = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
tc = t1 / epochs
s = spikes / max(n, 1) / epochs
t_counts = 1e-6 * n
t_v = t_counts + (n - 1) * s * 16 / 2.5e9
t_r = n * s * 200e-9
print("%.2f" % (tc / (tc + t_counts + max(0.0, t_v - tc) + t_r)))
PY
}
epochs=$(awk "BEGIN{print $tfinal / 2.5}") # min delay 5 ms: epochs of 2.5 ms
if gpu_part weak; then
  echo "| network | GPUs | cells | run time [s] | cs/s | efficiency t(1)/t(N) | cost model |" >"$out/weak.md"
  echo "|---|---:|---:|---:|---:|---:|---:|" >>"$out/weak.md"
  for kind in real ring; do
    t1=
    for n in $gpus; do
      if [ $kind = real ]; then m=$models/mixed-$((9 * real * n)).json cells=$((9 * real * n)); else m=$models/ring-$n.json cells=$((ring * n)); fi
      read -r t r c s <<<"$(one "$n" "$m" --no-output)"
      [ -z "$t1" ] && t1=$t
      eff=$(awk "BEGIN{ if (\"$t\" != \"\") printf \"%.2f\", $t1 / $t }")
      pred=$(model "$n" "$t1" "${s:-0}" "$epochs")
      echo "| $kind | $n | $cells | $t | $r | $eff | $pred |" | tee -a "$out/weak.md"
    done
  done 2>/dev/null
fi
if gpu_part strong; then
  echo "| strong: real cells, $((9 * strong)) cells | GPUs | run time [s] | cs/s | speed-up t(1)/t(N) | ideal |" >"$out/strong.md"
  echo "|---|---:|---:|---:|---:|---:|" >>"$out/strong.md"
  t1=
  for n in $gpus; do
    read -r t r c s <<<"$(one "$n" "$models/mixed-$((9 * strong)).json" --no-output)"
    [ -z "$t1" ] && t1=$t
    echo "| | $n | $t | $r | $(awk "BEGIN{ if (\"$t\" != \"\") printf \"%.2f\", $t1 / $t }") | $n |" | tee -a "$out/strong.md"
  done
fi
if gpu_part largest && [ "${LARGEST_PER_GPU:-0}" -gt 0 ]; then
  for n in $gpus; do
    echo "largest, $n GPUs: $(one "$n" "$models/largest-$n.json" --no-output --tfinal 2.5) (seconds cs/s compartments spikes)"
  done
fi
if gpu_part spikes; then
  m=$models/mixed-1152.json
  "${mpi_run[@]}" -np 1 "$mpi_cs" run "$m" --backend "${BACKEND:-cuda}" --solver "${SOLVER:-auto}" -q -o "$out/spikes-1.h5" --tfinal "$tfinal"
  for n in $gpus; do
    [ "$n" = 1 ] && continue
    "${mpi_run[@]}" -np "$n" "$mpi_cs" run "$m" --backend "${BACKEND:-cuda}" --solver "${SOLVER:-auto}" -q -o "$out/spikes-$n.h5" --tfinal "$tfinal"
    $py - "$out/spikes-1.h5" "$out/spikes-$n.h5" "$n" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
same, total, dt, count = True, 0, 0.0, True
for p in a["spikes"]:
    ia, ta = np.asarray(a["spikes"][p]["node_ids"]), np.asarray(a["spikes"][p]["timestamps"])
    ib, tb = np.asarray(b["spikes"][p]["node_ids"]), np.asarray(b["spikes"][p]["timestamps"])
    total += len(ia)
    ka, kb = np.lexsort((ta, ia)), np.lexsort((tb, ib)) # by (id, time): the file order may differ
    if len(ia) != len(ib) or not np.array_equal(ia[ka], ib[kb]):
        count = same = False
        continue
    same &= np.array_equal(ta[ka], tb[kb])
    dt = max(dt, float(np.max(np.abs(ta[ka] - tb[kb]))) if len(ia) else 0.0)
what = "identical bit for bit" if same else (f"the same spikes, times within {dt:.2g} ms" if count else "DIFFERENT spikes")
print(f"spike trains, {sys.argv[3]} GPUs against 1: {total} spikes, {what}")
PY
  done
fi
echo "whole script: $(( $(date +%s) - t0 )) s"
