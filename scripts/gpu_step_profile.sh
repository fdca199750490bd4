#!/usr/bin/env bash
# Nsight Compute's view of one fused-step kernel launch (speed of light, memory workload, warp
# stall reasons, scheduler, occupancy) on the busyring network: what limits the step kernel.
# Needs a cablesim build (default build-gpu; scripts/gpu_sim.sh makes it) and ncu on PATH.
# Usage: scripts/gpu_step_profile.sh OUTDIR [CELLS [BUILD_DIR]]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:?OUTDIR}" "" || exit 1
cells=${2:-65536}; bld=${3:-build-gpu}
gpu_ncu || exit 0
gpu_busyring "$cells"
"$ncu" --kernel-name regex:cs__k_step_cells --launch-skip 20 --launch-count 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section LaunchStats "$bld/cablesim" run "$model" --no-output --backend cuda -q 2>&1
