#!/usr/bin/env bash
# On the GPU machine, in one call (issue 29, item 2): the large block-tridiagonal GPU hybrid
# (solver/cs_block_large_gpu.cu) checked and measured, in under ~4 minutes on an H100.
#   regs      nvcc -Xptxas -v for sm_90 on cs_block_large_gpu.cu: registers, stack and spills of
#             every kernel (staged and per-thread) into OUTDIR/ptxas.txt (~15 s);
#   tests     test_block_tridiag_gpu (the chunked calls against the CPU chunked hybrid, both
#             kernel sets, the caller-workspace call's argument checks, singular -> NaN) and
#             test_block_tridiag_cpu (dgbsv where LAPACK exists; the host emulation of the
#             staged kernels always);
#   sanitize  compute-sanitizer memcheck on test_block_tridiag_gpu with CS_TEST_SMALL=1 (up to
#             5003 block rows; ~1 minute);
#   bench     bench_tridiag_large --block-large: one system of 2^20 block rows, k = 2, 3, 4, the
#             caller-workspace call (staged and per-thread kernels) and the allocating call, % of
#             the copy bandwidth; into OUTDIR/bench-block-large.md (~1 minute).
#
# Usage, from the project root: scripts/gpu_block_large.sh [OUTDIR]
# Carry: .devlibs. PARTS: default "regs tests sanitize bench".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-block-large}}" "" || exit 1
t0=$(date +%s)
bld=$root/build-gpu
parts_all="regs tests sanitize bench"
rc_tests=0 rc_bench=0 rc_san=0

if gpu_part regs; then
  nvcc -arch=sm_90 -O3 -Xptxas -v -c -Isolver -Ibase -o /dev/null solver/cs_block_large_gpu.cu 2>&1 \
    | grep -E "Compiling entry|registers|stack frame" >"$out/ptxas.txt"
  echo "== registers (sm_90; full output in $out/ptxas.txt)"
  paste - - - <"$out/ptxas.txt" \
    | sed -E "s/.*(b(chunk|stage)_[a-z]+)_kernelI?L?i?([0-9]?)[^ ]* for 'sm_90'/\1 k=\3/; s/ptxas info *: //g; s/ bytes//g; s/ +/ /g"
fi

for t in test_block_tridiag_gpu test_block_tridiag_cpu bench_tridiag_large; do gpu_build "$bld" "$t" || exit 1; done
echo "build: $(( $(date +%s) - t0 )) s"

if gpu_part tests; then
  echo "== tests"
  CTEST_S=150 gpu_ctest "$bld" "test_block_tridiag_gpu|test_block_tridiag_cpu" "worst rel err|emulation|SKIP"
fi

if gpu_part sanitize; then
  CS_TEST_SMALL=1 CK_FORK=no gpu_sanitize memcheck 150 "$out/memcheck-test_block_tridiag_gpu.log" \
    "memcheck test_block_tridiag_gpu (small)" "$bld/tests/test_block_tridiag_gpu"
  grep -q "ERROR SUMMARY: 0 errors" "$out/memcheck-test_block_tridiag_gpu.log" || rc_san=1
fi

if gpu_part bench; then
  echo "== bench"
  tb=$(date +%s)
  timeout 200 "$bld/bench/bench_tridiag_large" --block-large "$out/bench-block-large.md" >"$out/bench.log" 2>&1
  rc_bench=$?
  echo "bench: exit $rc_bench ($(( $(date +%s) - tb )) s)"
  cat "$out/bench.log"
fi
echo "total: $(( $(date +%s) - t0 )) s; tests exit $rc_tests, memcheck $rc_san, bench exit $rc_bench"
[ "$rc_tests" = 0 ] && [ "$rc_san" = 0 ] && [ "$rc_bench" = 0 ]
