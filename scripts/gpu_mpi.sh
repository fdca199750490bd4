#!/usr/bin/env bash
# On the GPU machine, in one call (issues 18 and 19): MPI on the device host.
#   1. the exchange's latency and bandwidth (bench/mpi_exchange_bench.c) on 2-16 ranks, real cores;
#   2. weak scaling on the CPU: 1, 2, 4, 8, 16 ranks of one thread each, cells per rank fixed
#      (distinct busyring trees, WEAK_RING cells per rank; the nine real cells, WEAK_REAL of each
#      per rank), efficiency t(1)/t(N);
#   3. one GPU rank (mpirun -np 1) against the non-MPI GPU build on the 18 432-cell real network;
#   4. two and four ranks sharing the one GPU (a smoke test of the multi-GPU code path): spikes and
#      traces against the one-process GPU run;
#   5. the host's peak memory of the GPU path at set-up, per compartment.
# Binaries: MPI_CS (default dist-mpi/cablesim: an MPI build with CUDA and CABLESIM_MPI_SERIAL_HDF5,
# built on the development machine, see docs/mpi.md), else build-gpu-mpi is built here when the
# machine has mpicc; GPU_CS (default build-gpu/cablesim, built here when missing).
# Carry: .devlibs, build-shared (the SWC files), dist-mpi. Usage: scripts/gpu_mpi.sh [OUTDIR]
# PARTS="exchange weak gpu1 share memory" (the default: all; the models are always generated).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-mpi}}" || exit 1
t0=$(date +%s)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tfinal=${TFINAL:-20}
gpu_cs=${GPU_CS:-$root/build-gpu/cablesim}
[ -x "$gpu_cs" ] || { gpu_build "$root/build-gpu" cablesim_cli -DBUILD_TESTING=OFF || exit 1; }
mpi_cs=${MPI_CS:-$root/dist-mpi/cablesim}
if [ ! -x "$mpi_cs" ] && command -v mpicc >/dev/null; then
  gpu_build "$root/build-gpu-mpi" cablesim_cli -DBUILD_TESTING=OFF -DCABLESIM_MPI_SERIAL_HDF5=ON || exit 1
  mpi_cs=$root/build-gpu-mpi/cablesim
fi
[ -x "$mpi_cs" ] || { echo "no MPI build: carry dist-mpi (docs/mpi.md) or install mpicc"; exit 1; }
# a carried build finds its solver library beside it (only the MPI runs see this path)
mpi_run=(env "LD_LIBRARY_PATH=$(dirname "$mpi_cs"):$LD_LIBRARY_PATH" mpirun)
echo "mpirun: $(mpirun --version 2>&1 | head -1)"
lscpu | grep -E "^(Model name|Socket|Core|Thread|CPU\(s\)|NUMA node\(s\)|L3)" | sed 's/^/  /'
LD_LIBRARY_PATH=$(dirname "$mpi_cs"):$LD_LIBRARY_PATH ldd "$mpi_cs" | grep -E "libmpi|hdf5|cudart|not found" | sed 's/^/  /'
echo "build/setup: $(( $(date +%s) - t0 )) s"

run_time() { sed -n 's/.*run time \([0-9.e+-]*\) s: \([0-9.e+-]*\) compartment.*/\1 \2/p' | head -1; }
run_time_all() { sed -n 's/.*run time \([0-9.e+-]*\) s: .*/\1/p'; }

parts_all="exchange weak gpu1 share memory"
echo "== 1. exchange latency and bandwidth"
if ! gpu_part exchange; then
  echo "skipped (PARTS)"
elif command -v mpicc >/dev/null; then
  mpicc -O2 bench/mpi_exchange_bench.c -o "$out/xb" 2>&1 | tail -3
  for n in 2 4 8 16; do
    [ "$n" -le "$(nproc)" ] || continue
    echo "-- $n ranks"; timeout 60 mpirun -np "$n" --bind-to core "$out/xb" 2>&1 | tail -5
  done
else
  echo "skipped: no mpicc on this machine"
fi

echo "== 2. weak scaling on the CPU (1 thread per rank, --no-output, $tfinal ms)"
models=$out/models
mkdir -p "$models"
ring=${WEAK_RING:-512} real=${WEAK_REAL:-8}
$py - "$models" "$ring" <<'PY'
import json, sys
sys.path.insert(0, "bench")
from bench_cpu_vs_neuron import busyring_model
for n in (1, 2, 4, 8, 16):
    m = busyring_model(int(sys.argv[2]) * n, 5, 20.0, [200.0, 20.0], [9, 3], 1)
    m["populations"][0]["morphology"]["branch_probability"] = [1.0, 0.5]
    json.dump(m, open(f"{sys.argv[1]}/weak-ring-{n}.json", "w"))
PY
morph=$(gpu_morph_dir) || exit 1
$py bench/real_cells.py generate --out "$models" --morph-dir "$morph" --alone 0 --mixed "$real,$((real*2)),$((real*4)),$((real*8)),$((real*16)),2048" \
  --largest 0 --big-compartments 0 --tfinal "$tfinal" >"$out/generate.log" 2>&1 || { tail -5 "$out/generate.log"; exit 1; }
echo "| network | ranks | cells | run time [s] | cs/s | efficiency t(1)/t(N) | one process, N threads [s] | slowest of N independent 1-rank runs [s] |" >"$out/weak.md"
echo "|---|---:|---:|---:|---:|---:|---:|---:|" >>"$out/weak.md"
for kind in ring real; do
  gpu_part weak || break
  t1=
  for n in 1 2 4 8 16; do
    [ "$n" -le "$(nproc)" ] || continue
    if [ $kind = ring ]; then m=$models/weak-ring-$n.json; cells=$((ring*n)); else m=$models/mixed-$((9*real*n)).json; cells=$((9*real*n)); fi
    best=
    for rep in 1 2; do
      rt=$(timeout 120 "${mpi_run[@]}" -np "$n" --bind-to core "$mpi_cs" run "$m" --backend cpu --threads 1 --no-output --tfinal "$tfinal" 2>&1 | run_time)
      [ -n "$rt" ] && { [ -z "$best" ] || awk "BEGIN{exit !(${rt% *} < ${best% *})}"; } && best=$rt
    done
    [ -z "$t1" ] && t1=${best% *}
    eff=$(awk "BEGIN{ if (\"${best% *}\" != \"\") printf \"%.2f\", $t1 / ${best% *} }" 2>/dev/null)
    # controls: the same network in one process of n threads, and n independent one-thread
    # processes of the one-rank network at once (what the host alone does to weak scaling)
    omp=$(timeout 120 "$gpu_cs" run "$m" --backend cpu --threads "$n" --no-output --tfinal "$tfinal" 2>&1 | run_time)
    m1=$models/weak-ring-1.json; [ $kind = real ] && m1=$models/mixed-$((9*real)).json
    for k in $(seq 1 "$n"); do
      taskset -c $((k - 1)) "$gpu_cs" run "$m1" --backend cpu --threads 1 --no-output --tfinal "$tfinal" >"$out/indep-$k.txt" 2>&1 &
    done
    wait
    indep=$(cat "$out"/indep-*.txt | run_time_all | sort -g | tail -1); rm -f "$out"/indep-*.txt
    echo "| $kind | $n | $cells | ${best% *} | ${best#* } | $eff | ${omp% *} | ${indep:-?} |" | tee -a "$out/weak.md"
  done
done

echo "== 3. one GPU rank against the non-MPI GPU build (18 432 real cells, staged, $tfinal ms)"
m=$models/mixed-18432.json
for rep in 1 2 3; do
  gpu_part gpu1 || break
  a=$("$gpu_cs" run "$m" --backend cuda --solver staged --no-output --tfinal "$tfinal" 2>&1 | run_time)
  b=$("${mpi_run[@]}" -np 1 "$mpi_cs" run "$m" --backend cuda --solver staged --no-output --tfinal "$tfinal" 2>&1 | run_time)
  echo "rep $rep: non-MPI $a | mpirun -np 1 $b"
done

echo "== 4. ranks sharing the GPU: spikes and traces against one process"
m=models/examples/ring.json
gpu_part share && "$gpu_cs" run "$m" --backend cuda --solver auto -o "$out/gpu1.h5" -q --tfinal 50 && echo "one process: ok"
for n in 2 4; do
  gpu_part share || break
  timeout 120 "${mpi_run[@]}" -np "$n" "$mpi_cs" run "$m" --backend cuda --solver auto -o "$out/gpu$n.h5" -q --tfinal 50
  echo "mpirun -np $n: exit $?"
  $py - "$out/gpu1.h5" "$out/gpu$n.h5" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
def spikes(f):
    g = f["spikes"]; p = list(g.keys())[0]
    return np.asarray(g[p]["node_ids"]), np.asarray(g[p]["timestamps"])
(ia, ta), (ib, tb) = spikes(a), spikes(b)
same = len(ia) == len(ib) and np.array_equal(ia, ib) and np.array_equal(ta, tb)
ra = a["report"]; p = list(ra.keys())[0]
da, db = np.asarray(ra[p]["data"]), np.asarray(b["report"][p]["data"])
print(f"  spikes {len(ia)} vs {len(ib)}: {'identical' if same else 'DIFFER'}; traces {da.shape}: "
      f"{'identical' if da.shape == db.shape and np.array_equal(da, db) else 'max |diff| %g' % (np.abs(da - db).max() if da.shape == db.shape else -1)}; "
      f"status {b.attrs.get('status', b['metadata'].attrs.get('status') if 'metadata' in b else '?')}")
PY
done

echo "== 5. host peak memory of the GPU path at set-up (one step, --no-output)"
for k in 18432 $((9*real*16)); do
  gpu_part memory || break
  m=$models/mixed-$k.json
  $py - "$gpu_cs" "$m" <<'PY'
import resource, subprocess, sys, re
r = subprocess.run([sys.argv[1], "run", sys.argv[2], "--backend", "cuda", "--solver", "staged", "--no-output",
                    "--tfinal", "0.025"], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
m = re.search(r"([0-9]+) compartments", r.stdout + r.stderr)
n = int(m.group(1)) if m else 0
print(f"  {sys.argv[2].rsplit('/', 1)[-1]}: exit {r.returncode}, peak RSS {peak / 2**20:.0f} MiB, "
      f"{n} compartments" + (f", {peak / n:.0f} B per compartment" if n else ""))
PY
done
echo "whole script: $(( $(date +%s) - t0 )) s"
