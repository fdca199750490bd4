#!/usr/bin/env bash
# Everything that needs the GPU machine, in one call (see ../shared/device/README.md):
#   1. scripts/gpu_sim.sh: build (sm_90), the whole test suite with the GPU tests,
#      compute-sanitizer on the simulator's CUDA backend;
#   2. compute-sanitizer memcheck + racecheck on the GPU solver tests (small sizes);
#   3. the solver benchmarks (bench_thomas, bench_hines with --mid and --same-size too; QUICK=1 for
#      their short versions);
#   4. scripts/gpu_bench.sh: the full step against OpenMP, NEURON (and Arbor when carried).
# Carry ".devlibs" and "build-shared" (and ".whl" with the NEURON wheel). Output under OUTDIR.
# Usage: scripts/gpu_all.sh [OUTDIR]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out}}" "" || exit 1
echo "=== 1. build, tests, sanitizer on the CUDA backend"
scripts/gpu_sim.sh "$out"
b=build-gpu
echo "=== 2. compute-sanitizer on the GPU solver tests"
for t in test_hines_gpu test_thomas_gpu; do
  for tool in memcheck racecheck; do
    # racecheck of the Hines test takes ~160 s since session 8 (two-way sections, more configurations)
    lim=150; [ "$tool" = racecheck ] && lim=420
    (cd $b/tests && CK_FORK=no CS_TEST_SMALL=1 gpu_sanitize $tool $lim "$out/san-$t-$tool.log" "$t $tool" ./$t)
  done
done
echo "=== 3. solver benchmarks"
q=(); [ "${QUICK:-0}" = 1 ] && q=(--quick)
timeout 300 $b/bench/bench_thomas "${q[@]}" "$out/results-thomas.md" >"$out/bench_thomas.log" 2>&1; echo "bench_thomas: exit $?"
(cd $b && timeout 300 ./bench/bench_hines "${q[@]}" --md "$out/results-hines.md") >"$out/bench_hines.log" 2>&1; echo "bench_hines: exit $?"
# the sizes between (bench/results-hines-mid.md) and the seed's same-size mixed batch (results-hines-same-size.md)
(cd $b && timeout 200 ./bench/bench_hines --mid --md "$out/results-hines-mid.md") >"$out/bench_hines_mid.log" 2>&1; echo "bench_hines --mid: exit $?"
(cd $b && timeout 300 ./bench/bench_hines --same-size --md "$out/results-hines-same-size.md") >"$out/bench_hines_same.log" 2>&1
echo "bench_hines --same-size: exit $?"
echo "=== 4. full step"
scripts/gpu_bench.sh "$out" ${FULL_STEP_ARGS:-}
