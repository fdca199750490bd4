#!/usr/bin/env bash
# staged's partition invariance (CS_HINES_STAGED_INVARIANT, session 20) on one GPU, in one call of
# ~5-8 minutes on an H100:
#   1. test_hines_gpu's case "invariant": the nine real cells, a network of 24 of each and a share
#      of it, staged with 1, 2 or 4 cells per warp: each cell's x bitwise the same with the flag
#      (asserted); without it the cells that differ are printed
#   2. the real-cell networks of NETS of each (default 128 512 2048: 1 152, 4 608, 18 432 cells),
#      20 ms, --solver staged, the default plan and CS_STAGED_INVARIANT=1 alternated REPS times
#      (default 2): run time, spikes and the plan line of each
#   3. with MPI (built here with the machine's mpicc, else dist-mpi/cablesim rebuilt from this
#      tree; neither: skipped): the 1 152-cell network on 1, 2 and 4 ranks sharing the GPU (each rank
#      plans its own share, as on 4 GPUs) through scripts/gpu_multi.sh (SHARE=1, PARTS=spikes),
#      default and invariant: each against 1 rank, "identical bit for bit" or "the same spikes,
#      times within ... ms"
#   suite (not by default): the whole test_hines_gpu, whose configurations include the invariant
#      plan on every batch, against the CPU (a few minutes more)
# Usage: scripts/gpu_staged_invariant.sh [OUTDIR]. Carry: .devlibs, build-shared. PARTS (default
# "test time mpi"; add "suite"); NETS, REPS, TFINAL=20 [ms].
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-invariant}}" || exit 1
gpu_link_shared
parts_all="test time mpi"
morph=$(gpu_morph_dir) || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

gpu_stamp "build: test_hines_gpu and the CLI (build-gpu)${PARTS:+ (parts: $PARTS)}"
b_mpi=
if gpu_part mpi && command -v mpicc >/dev/null; then # the MPI CLI of this tree beside it
  gpu_build "$root/build-gpu-mpi" cablesim_cli -DBUILD_TESTING=OFF -DCABLESIM_MPI_SERIAL_HDF5=ON & b_mpi=$!
fi
gpu_build "$root/build-gpu" test_hines_gpu && gpu_build "$root/build-gpu" cablesim_cli || exit 1
[ -n "$b_mpi" ] && { wait "$b_mpi" || echo "MPI build failed: part mpi skipped"; }
rc_test=na
if gpu_part test; then
  gpu_stamp "test_hines_gpu, case invariant"
  CK_RUN_CASE=invariant timeout 300 "$root/build-gpu/tests/test_hines_gpu" >"$out/test.log" 2>&1
  rc_test=$?
  grep -E "device:|differ|Checks|:F:|:E:" "$out/test.log"
  echo "test_hines_gpu invariant: exit $rc_test"
fi

if [[ " ${PARTS:-} " == *" suite "* ]]; then
  gpu_stamp "test_hines_gpu, every case"
  timeout 400 "$root/build-gpu/tests/test_hines_gpu" >"$out/suite.log" 2>&1
  rc_suite=$?
  grep -E "Checks|:F:|:E:" "$out/suite.log"
  echo "test_hines_gpu: exit $rc_suite"
  [ "$rc_suite" = 0 ] || rc_test=1
fi

if gpu_part time; then
  gpu_stamp "run times: staged, default and invariant"
  models=$out/models
  nets=${NETS:-128 512 2048}
  $py bench/real_cells.py generate --out "$models" --morph-dir "$morph" --alone 0 --mixed "${nets// /,}" --largest 0 \
    --big-compartments 0 --tfinal "${TFINAL:-20}" >"$out/generate.log" 2>&1 || { tail -5 "$out/generate.log"; exit 1; }
  echo "| cells | plan | run time [s] | spikes | plan line |" >"$out/times.md"
  echo "|---:|---|---:|---:|---|" >>"$out/times.md"
  for n in $nets; do
    m=$models/mixed-$((9 * n)).json
    for rep in $(seq "${REPS:-2}"); do
      for inv in 0 1; do
        log=$out/run-$n-$inv-$rep.log
        CS_STAGED_INVARIANT=$inv timeout 120 "$root/build-gpu/cablesim" run "$m" --backend cuda --solver staged \
          --tfinal "${TFINAL:-20}" --no-output >"$log" 2>&1
        t=$(grep -oE "run time [0-9.e+-]+" "$log" | cut -d' ' -f3)
        s=$(grep -oE "cells +[0-9]+ spikes" "$log" | awk '{s += $2} END {print s}')
        plan=$(grep -oE "launches:.*" "$log" | head -1 | cut -c1-300)
        echo "| $((9 * n)) | $([ $inv = 1 ] && echo invariant || echo default) | ${t:-?} | ${s:-?} | $plan |" | tee -a "$out/times.md"
      done
    done
  done
fi

if gpu_part mpi; then
  mpi_cs=$root/build-gpu-mpi/cablesim
  [ -x "$mpi_cs" ] || mpi_cs=$root/dist-mpi/cablesim
  if [ -x "$mpi_cs" ] && ! grep -q CS_STAGED_INVARIANT "$mpi_cs"; then
    echo "$mpi_cs predates CS_STAGED_INVARIANT (rebuild dist-mpi from this tree): part mpi skipped"
  elif [ -x "$mpi_cs" ]; then
    for inv in 0 1; do
      gpu_stamp "spikes on 1, 2, 4 ranks sharing the GPU, CS_STAGED_INVARIANT=$inv"
      CS_STAGED_INVARIANT=$inv MPI_CS=$mpi_cs SHARE=1 GPUS="1 2 4" PARTS=spikes SOLVER=staged TFINAL=${TFINAL:-20} \
        scripts/gpu_multi.sh "$out/mpi-$inv" 2>&1 | grep -E "spike trains|error|Error"
    done
  else
    echo "no MPI build: part mpi skipped"
  fi
fi
gpu_stamp "done: test=$rc_test"
case $rc_test in na | 0) ;; *) exit 1 ;; esac
