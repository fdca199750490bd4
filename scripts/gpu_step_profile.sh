#!/usr/bin/env bash
# Nsight Compute's view of one fused-step kernel launch (speed of light, memory workload, warp
# stall reasons, scheduler, occupancy) on the busyring network: what limits the step kernel.
# Needs a cablesim build (default build-gpu; scripts/gpu_sim.sh makes it) and ncu on PATH.
# Usage: scripts/gpu_step_profile.sh OUTDIR [CELLS [BUILD_DIR]]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?OUTDIR}; cells=${2:-65536}; bld=${3:-build-gpu}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.devlibs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null) || { echo "ncu not found: skipped"; exit 0; }
model="$out/busyring-$cells.json"
python3 bench/busyring_json.py "$cells" >"$model"
"$ncu" --kernel-name regex:cs__k_step_cells --launch-skip 20 --launch-count 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section LaunchStats "$bld/cablesim" run "$model" --no-output --backend cuda -q 2>&1
