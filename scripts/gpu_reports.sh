#!/usr/bin/env bash
# SONATA reports that share node types (issue 31) on the GPU machine, in one call: build the CLI
# with CUDA (sm_90, MPI off), tests/test_sonata_reports.py (the circuit of tests/sonata_circuit.py
# on the CPU: layouts, shared probes; then --backend cuda against --backend cpu with NEURON's
# exp2syn.mod: the same report files, mappings bitwise, samples within 1e-3), test_sonata_errors,
# and compute-sanitizer memcheck on the circuit's GPU run. Logs go to OUTDIR ($OUT on the lent
# machine). Carry .devlibs (scripts/devlibs.sh).
# Usage, from the project root: scripts/gpu_reports.sh [OUTDIR]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
BUILD_DIR=${BUILD_DIR:-$PWD/build-gpu-reports}
gpu_start "${1:-${OUT:-$BUILD_DIR/out}}" cablesim_cli -DCABLESIM_ENABLE_MPI=OFF || exit 1
# build-catalogue finds nvcc on PATH, else in $NVCC: the one CMake found
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$bld/CMakeCache.txt")
[ -n "$nvcc" ] && export NVCC=${NVCC:-$nvcc}
gpu_stamp "test_sonata_reports (CPU, then GPU against CPU)"
"$py" tests/test_sonata_reports.py --cablesim "$cs" --source-dir "$root" --work-dir "$bld/reports" \
  >"$out/test_sonata_reports.log" 2>&1
echo "test_sonata_reports: exit $?"
grep -E "FAIL|GPU|skipped|passed, " "$out/test_sonata_reports.log"
gpu_stamp "test_sonata_errors"
"$py" tests/test_sonata_errors.py --cablesim "$cs" --source-dir "$root" --work-dir "$bld/errors" \
  >"$out/test_sonata_errors.log" 2>&1
echo "test_sonata_errors: exit $?"
grep -E "FAIL|passed, " "$out/test_sonata_errors.log"
gpu_stamp "compute-sanitizer memcheck: the circuit on the GPU (8 reports, 130 columns)"
export CABLESIM_CACHE_DIR=$bld/reports/cache # the catalogue the test compiled
gpu_sanitize memcheck 300 "$out/sanitizer-reports.log" "memcheck sonata_circuit" "$cs" run \
  "$bld/reports/gpu/config_out_cuda.json" --backend cuda -q
gpu_stamp "done"
