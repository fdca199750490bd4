#!/usr/bin/env bash
# Issue 28's baseline on the GPU machine, in one call: distinct big cells (big2000/10000/30000 at
# BIG_COMPARTMENTS, the 29 050-row FlyWire cell) with the GPU solvers SOLVERS and the CPU, then
# Nsight Compute on one launch of each named solve kernel (KERNELS) per network: where the step's
# time goes before a new solver is chosen.
# Usage, from the project root: bench/runs/gpu_big_profile.sh [OUTDIR]
# Carry: .devlibs, build-shared (the SWC files). Env: BIG_COMPARTMENTS=16e6, SIZES=2000,10000,30000,
#   SOLVERS=fine,warp,variable,auto, TFINAL=10 [ms], CPU=1 (16-thread CPU beside), NCU=1.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_start "${1:-${OUT:-$PWD/build-gpu/out-big}}" cablesim_cli -DBUILD_TESTING=OFF || exit 1
morph=$(gpu_morph_dir) || exit 1
models=$out/models
$py bench/real_cells.py generate --out "$models" --morph-dir "$morph" --alone 0 --mixed "" \
  --big-compartments "${BIG_COMPARTMENTS:-16e6}" --big-sizes "${SIZES:-2000,10000,30000}" \
  --tfinal "${TFINAL:-10}" --cablesim "$cs" --check-limit 0 2>&1 | tail -8
backends=cuda; [ "${CPU:-1}" = 1 ] && backends=cpu,cuda
PYTHONUNBUFFERED=1 $py bench/real_cells.py run --models "$models" --cablesim "$cs" --only '^(big|giant)' \
  --backends "$backends" --solvers "${SOLVERS:-fine,warp,variable,auto}" --threads "$(nproc)" --reps 2 \
  --rep-limit 2 --timeout 200 --json "$out/big.json" --md "$out/big.md" >"$out/big.log" 2>&1
grep -E "cs/s|refused|error|MISMATCH" "$out/big.log" | head -60
# the profile table of one fine run per network: which phase of the step takes the time
for m in "$models"/*.json; do
  case $(basename "$m") in big*|giant*) ;; *) continue ;; esac
  echo "== $(basename "$m") fine: profile"
  "$cs" run "$m" --backend cuda --solver fine --no-output 2>&1 | sed -n '/rofile/,$p' | head -20
done
[ "${NCU:-1}" = 1 ] && gpu_ncu && for m in "$models"/big2000*.json "$models"/giant*.json; do
  [ -f "$m" ] || continue
  echo "== ncu $(basename "$m"): cs__k_fine"
  timeout 120 "$ncu" --kernel-name regex:cs__k_fine --launch-skip 10 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
    --section LaunchStats "$cs" run "$m" --backend cuda --solver fine --no-output -q --tfinal 1 \
    >"$out/ncu-$(basename "$m" .json).txt" 2>&1
  grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Theoretical Occupancy|Block Size|Grid Size|Registers|Shared Memory Config|Stall|Warp Cycles Per Issued|Issued Warp|One or More|No Eligible" \
    "$out/ncu-$(basename "$m" .json).txt" | head -40
done
echo "done: $(( $(date +%s) - t0 )) s"
