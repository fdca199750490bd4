#!/usr/bin/env bash
# On the GPU machine: the full-step benchmark (bench/bench_full_step.py) after scripts/gpu_sim.sh
# has built build-gpu. NEURON comes as a wheel carried in .whl (see ../shared/device/README.md);
# Arbor, when its wheel is carried in .whl-arbor, runs too. Results (JSON + log) go to OUTDIR.
# Usage: scripts/gpu_bench.sh [OUTDIR] [extra bench_full_step.py arguments]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out}}" "" || exit 1
shift || true
py=python3 # PATH's: the wheels below go into its site
whls=$(ls .whl/*.whl .whl-arbor/*.whl 2>/dev/null)
if [ -n "$whls" ]; then
  $py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $whls \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
extra=()
$py -c 'import neuron' 2>/dev/null || extra+=(--skip-neuron)
$py -c 'import arbor' 2>/dev/null && extra+=(--arbor)
PYTHONUNBUFFERED=1 $py bench/bench_full_step.py --cablesim "$root/build-gpu/cablesim" --out "$out/full_step.json" \
  "${extra[@]}" "$@" 2>&1 | tee "$out/full_step.log" | grep -vE '^\{' 
