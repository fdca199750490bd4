#!/usr/bin/env bash
# GPU Hines solvers on the GPU machine, in one go: build, test, benchmark, then
# compute-sanitizer memcheck and racecheck on the test at small sizes. Logs and the benchmark's
# markdown table go to OUTDIR ($OUT on the lent machine; the build's log: OUTDIR/build-build-gpu-hines.log).
#
# Usage, from the project root: scripts/gpu_hines.sh [OUTDIR]
#   needs .devlibs (scripts/devlibs.sh: HDF5, Check and cJSON); the morphologies are
#   read from CS_MORPH_DIR, else ../shared/data/morphologies, else build-hines-data/morphologies
#   (a copy that travels with the run: carry "build-hines-data").
#   BENCH_ARGS adds arguments to bench_hines (e.g. --quick, or --staged: the staged solver alone,
#   about a minute); BENCH=0 skips the benchmark, TESTS=0 the test; SANITIZE=0 skips
#   compute-sanitizer, SANITIZE=memcheck or racecheck runs one tool (racecheck takes ~3 minutes:
#   RACE_TIMEOUT, default 420 s).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu-hines/out}}" "" || exit 1
gpu_details >>"$out/device.txt" 2>&1
if [ -z "${CS_MORPH_DIR:-}" ]; then
  if [ -d "$root/../shared/data/morphologies" ]; then export CS_MORPH_DIR=$root/../shared/data/morphologies
  else export CS_MORPH_DIR=$root/build-hines-data/morphologies; fi
fi
bld=$root/build-gpu-hines
gpu_stamp configure
gpu_configure "$bld" || exit 1
gpu_stamp build
# the benchmark needs only the solver library: build it first so a problem elsewhere cannot stop it
gpu_build "$bld" bench_hines
gpu_build "$bld" test_hines_gpu
rc_test=na rc_bench=na rc_mem=na rc_race=na
if [ "${TESTS:-1}" != 0 ] && [ -x "$bld/tests/test_hines_gpu" ]; then
  gpu_stamp test
  (cd "$bld/tests" && timeout "${TEST_TIMEOUT:-150}" ./test_hines_gpu) >"$out/test.log" 2>&1; rc_test=$?
  grep -E "^[0-9]+%|SKIP|device:|Failure|Error|error" "$out/test.log" | head -40
fi
if [ "${BENCH:-1}" != 0 ] && [ -x "$bld/bench/bench_hines" ]; then
  gpu_stamp bench
  timeout "${BENCH_TIMEOUT:-330}" "$bld/bench/bench_hines" ${BENCH_ARGS:-} --md "$out/results-hines.md" >"$out/bench.log" 2>&1; rc_bench=$?
fi
san=${SANITIZE:-1}
if [ "$san" != 0 ] && [ -x "$bld/tests/test_hines_gpu" ] && command -v compute-sanitizer >/dev/null; then
  if [ "$san" != racecheck ]; then
    gpu_stamp memcheck
    (cd "$bld/tests" && CK_RUN_SUITE=hines_gpu CS_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./test_hines_gpu) >"$out/memcheck.log" 2>&1; rc_mem=$?
    tail -3 "$out/memcheck.log"
  fi
  if [ "$san" != memcheck ]; then
    gpu_stamp racecheck
    (cd "$bld/tests" && CK_RUN_SUITE=hines_gpu CS_TEST_SMALL=1 timeout "${RACE_TIMEOUT:-420}" compute-sanitizer --tool racecheck --error-exitcode 9 ./test_hines_gpu) >"$out/racecheck.log" 2>&1; rc_race=$?
    grep -E ":P:|:F:|:E:" "$out/racecheck.log" | sed 's/.*test_hines_gpu.c:[0-9]*://' | tr '\n' ' '; echo
    tail -3 "$out/racecheck.log"
  fi
fi
gpu_stamp "done: test=$rc_test bench=$rc_bench memcheck=$rc_mem racecheck=$rc_race"
echo "test=$rc_test bench=$rc_bench memcheck=$rc_mem racecheck=$rc_race" >"$out/summary.txt"
# the table last (the reply carries the end of the output)
grep -E "^\| (medium-high|mixed|uniform|mixed/uniform)" "$out/results-hines.md" 2>/dev/null | grep -E "256000|25600 " | cut -c1-160 | tail -60
# exit status: 0 when every step that ran passed
for r in $rc_test $rc_bench $rc_mem $rc_race; do case $r in na | 0) ;; *) exit 1 ;; esac; done
exit 0
