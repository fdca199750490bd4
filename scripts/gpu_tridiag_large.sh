#!/usr/bin/env bash
# On the GPU machine, in one call (issue 29): the large-system tridiagonal solvers checked and
# measured. tests: the GPU tests of the solver library (chunked and scan against the CPU Thomas
# reference, the bridge over 1..8 streams, the block-tridiagonal variants, and test_thomas_gpu
# where auto now picks chunked above 1024 rows) plus their CPU counterparts; sanitize:
# compute-sanitizer memcheck and racecheck (the kernels share memory between barriers) on the
# large-system and bridge tests at small sizes, memcheck on the benchmark's --quick run; bench:
# bench_tridiag_large (one system n = 2^10..2^24 and a few systems, double and float, against
# cuSPARSE gtsv2, gtsv2_nopivot and gtsv2StridedBatch; the bridge with D = 1..8; block sizes
# k = 2, 3, 4; estimated 1-2 minutes of GPU time) into bench/results-tridiag-large.md and OUTDIR.
#
# Usage, from the project root: scripts/gpu_tridiag_large.sh [OUTDIR]
# Carry: .devlibs (../shared/device/make-devlibs.sh or scripts/devlibs.sh). PARTS: the default
# "tests bench" (build ~3 min, tests ~1 min, bench ~1-2 min); add "sanitize" for compute-sanitizer.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-tridiag-large}}" || exit 1
t0=$(date +%s)
bld=$root/build-gpu
parts_all="tests bench" # sanitize on request: PARTS="tests sanitize bench" (up to ~8 more minutes)
gpu_tests="test_thomas_large_gpu test_thomas_bridge_gpu test_block_tridiag_gpu test_thomas_gpu test_thomas_gpu_singular test_thomas_large_cpu test_block_tridiag_cpu"
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
  for t in test_thomas_large_gpu test_thomas_bridge_gpu; do
    for tool in memcheck racecheck; do
      gpu_sanitize $tool 150 "$out/$tool-$t.log" "$tool $t" "$bld/tests/$t"
    done
  done
  gpu_sanitize memcheck 150 "$out/memcheck-bench.log" "memcheck bench_tridiag_large --quick" \
    "$bld/bench/bench_tridiag_large" --quick "$out/bench-quick.md"
  unset CS_TEST_SMALL
fi

if gpu_part bench; then
  echo "== bench"
  tb=$(date +%s)
  timeout 400 "$bld/bench/bench_tridiag_large" "$root/bench/results-tridiag-large.md" >"$out/bench.log" 2>&1
  rc_bench=$?
  cp "$root/bench/results-tridiag-large.md" "$out/" 2>/dev/null
  echo "bench: exit $rc_bench ($(( $(date +%s) - tb )) s)"
  cat "$out/bench.log"
fi
echo "total: $(( $(date +%s) - t0 )) s; tests exit $rc_tests, bench exit $rc_bench"
[ "$rc_tests" = 0 ] && [ "$rc_bench" = 0 ]
