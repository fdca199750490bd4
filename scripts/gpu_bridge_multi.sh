#!/usr/bin/env bash
# On the GPU machine, in one call (issue 29, item 3): the bridge across several GPUs checked and
# measured, in under ~6 minutes on 2 H100s (and on 1 GPU: then the multi-device rows are skipped).
#   tests     test_thomas_bridge_multi_gpu (partitions on devices 0,0,.. and round-robin over the
#             devices, double and float, both synchronisations, near-singular and zero rows, bad
#             arguments), test_thomas_bridge_gpu (the one-GPU bridge, which shares the kernels) and
#             test_thomas_bridge_multi_cpu (the CPU emulation of the same plan);
#   sanitize  compute-sanitizer memcheck on test_thomas_bridge_multi_gpu (CS_TEST_SMALL) and on
#             bench_bridge_multi --quick, ~1-2 minutes;
#   bench     bench_bridge_multi: n = 2^24..2^26 double and 2^26 float over 1 partition, 2 on one
#             GPU and one per GPU, host-driven and device-side bridge, and one peer copy; into
#             bench/results-bridge-multi.md (regenerated) and OUTDIR.
#
# Usage, from the project root: scripts/gpu_bridge_multi.sh [OUTDIR]
# Carry: .devlibs (../shared/device/make-devlibs.sh or scripts/devlibs.sh). PARTS: the default
# "tests sanitize bench"; PARTS="... race" adds racecheck on the multi-device test (~2 min).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-bridge-multi}}" "" || exit 1
nvidia-smi topo -m 2>/dev/null | head -8 | tee "$out/topo.txt"
t0=$(date +%s)
bld=$root/build-gpu
parts_all="tests sanitize bench"
gpu_tests="test_thomas_bridge_multi_gpu test_thomas_bridge_gpu test_thomas_bridge_multi_cpu"
gpu_build "$bld" bench_bridge_multi || exit 1
for t in $gpu_tests; do gpu_build "$bld" "$t" || exit 1; done
echo "build: $(( $(date +%s) - t0 )) s"

rc_tests=0 rc_bench=0
if gpu_part tests; then
  echo "== tests"
  gpu_ctest "$bld" "${CTEST_REGEX:-$(echo "$gpu_tests" | tr ' ' '|')}" "worst rel err|multi-device|bridge"
fi

if gpu_part sanitize; then
  export CS_TEST_SMALL=1 CK_FORK=no
  gpu_sanitize memcheck 120 "$out/memcheck-test_thomas_bridge_multi_gpu.log" \
    "memcheck test_thomas_bridge_multi_gpu (small)" "$bld/tests/test_thomas_bridge_multi_gpu"
  gpu_sanitize memcheck 90 "$out/memcheck-bench_bridge_multi.log" "memcheck bench_bridge_multi --quick" \
    "$bld/bench/bench_bridge_multi" --quick "$out/bench-quick.md"
  unset CS_TEST_SMALL CK_FORK
fi

if gpu_part race; then
  export CS_TEST_SMALL=1 CK_FORK=no
  gpu_sanitize racecheck 150 "$out/racecheck-test_thomas_bridge_multi_gpu.log" \
    "racecheck test_thomas_bridge_multi_gpu" "$bld/tests/test_thomas_bridge_multi_gpu"
  unset CS_TEST_SMALL CK_FORK
fi

if gpu_part bench; then
  echo "== bench"
  tb=$(date +%s)
  timeout 200 "$bld/bench/bench_bridge_multi" "$root/bench/results-bridge-multi.md" >"$out/bench.log" 2>&1
  rc_bench=$?
  cp "$root/bench/results-bridge-multi.md" "$out/" 2>/dev/null
  echo "bench: exit $rc_bench ($(( $(date +%s) - tb )) s)"
  cat "$out/bench.log"
fi
echo "total: $(( $(date +%s) - t0 )) s; tests exit $rc_tests, bench exit $rc_bench"
[ "$rc_tests" = 0 ] && [ "$rc_bench" = 0 ]
