#!/usr/bin/env bash
# On the GPU machine, in one call (issue 29): the large-system tridiagonal solvers checked and
# measured, in under ~8 minutes on an H100.
#   tests     the GPU tests of the solver library (chunked and scan against the CPU Thomas
#             reference, the bridge over 1..8 streams and across devices (repeated device on one
#             GPU), the block-tridiagonal variants,
#             test_thomas_gpu and the singular cases, where auto picks chunked above 1024 rows)
#             plus their CPU counterparts (with the host emulation of chunked's warp kernels);
#   sanitize  compute-sanitizer memcheck on test_thomas_large_gpu at small sizes
#             (CS_TEST_SMALL: chunked's reduce, substitute and base kernels, double and float;
#             scan; the variant calls) and on test_block_tridiag_gpu (the block chunked
#             kernels at up to 5003 block rows), ~1-2 minutes;
#   race      on request only (PARTS="... race"): racecheck on the same, and memcheck/racecheck
#             on the bridge test and the benchmark's --quick run (up to ~8 more minutes);
#   bench     bench_tridiag_large: one system n = 2^10..2^26 and a few systems (nsys 2..64),
#             double and float, against cuSPARSE gtsv2, gtsv2_nopivot and gtsv2StridedBatch, the %
#             of copy, the bridge with D = 1..8, block sizes k = 2, 3, 4, and the issue's targets
#             counted at the end; into bench/results-tridiag-large.md (regenerated) and OUTDIR.
#
# Usage, from the project root: scripts/gpu_tridiag_large.sh [OUTDIR]
# Carry: .devlibs (../shared/device/make-devlibs.sh or scripts/devlibs.sh). PARTS: the default
# "tests sanitize bench" (build ~3 min, tests ~1 min, sanitize ~1 min, bench ~2-3 min).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-tridiag-large}}" || exit 1
t0=$(date +%s)
bld=$root/build-gpu
parts_all="tests sanitize bench" # racecheck on request: PARTS="tests sanitize race bench"
gpu_tests="test_thomas_large_gpu test_thomas_bridge_gpu test_thomas_bridge_multi_gpu test_thomas_bridge_multi_cpu test_block_tridiag_gpu test_thomas_gpu test_thomas_gpu_singular test_thomas_large_cpu test_block_tridiag_cpu"
gpu_build "$bld" bench_tridiag_large || exit 1
for t in $gpu_tests; do gpu_build "$bld" "$t" || exit 1; done
echo "build: $(( $(date +%s) - t0 )) s"

rc_tests=0 rc_bench=0
if gpu_part tests; then
  echo "== tests"
  gpu_ctest "$bld" "${CTEST_REGEX:-$(echo "$gpu_tests" | tr ' ' '|')}" "worst rel err|chunked"
fi

if gpu_part sanitize; then
  export CS_TEST_SMALL=1 CK_FORK=no
  gpu_sanitize memcheck 90 "$out/memcheck-test_thomas_large_gpu.log" "memcheck test_thomas_large_gpu (small)" \
    "$bld/tests/test_thomas_large_gpu"
  gpu_sanitize memcheck 60 "$out/memcheck-test_block_tridiag_gpu.log" "memcheck test_block_tridiag_gpu (small)" \
    "$bld/tests/test_block_tridiag_gpu"
  unset CS_TEST_SMALL CK_FORK
fi

if gpu_part race; then
  export CS_TEST_SMALL=1 CK_FORK=no
  gpu_sanitize racecheck 150 "$out/racecheck-test_thomas_large_gpu.log" "racecheck test_thomas_large_gpu" \
    "$bld/tests/test_thomas_large_gpu"
  for tool in memcheck racecheck; do
    gpu_sanitize $tool 150 "$out/$tool-test_thomas_bridge_gpu.log" "$tool test_thomas_bridge_gpu" \
      "$bld/tests/test_thomas_bridge_gpu"
  done
  gpu_sanitize memcheck 150 "$out/memcheck-bench.log" "memcheck bench_tridiag_large --quick" \
    "$bld/bench/bench_tridiag_large" --quick "$out/bench-quick.md"
  unset CS_TEST_SMALL CK_FORK
fi

if gpu_part bench; then
  echo "== bench"
  tb=$(date +%s)
  timeout 360 "$bld/bench/bench_tridiag_large" "$root/bench/results-tridiag-large.md" >"$out/bench.log" 2>&1
  rc_bench=$?
  cp "$root/bench/results-tridiag-large.md" "$out/" 2>/dev/null
  echo "bench: exit $rc_bench ($(( $(date +%s) - tb )) s)"
  cat "$out/bench.log"
fi
echo "total: $(( $(date +%s) - t0 )) s; tests exit $rc_tests, bench exit $rc_bench"
[ "$rc_tests" = 0 ] && [ "$rc_bench" = 0 ]
