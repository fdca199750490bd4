#!/usr/bin/env bash
# On the GPU machine, in one call (issue 17, P3/P4): the persistent epoch kernel (--solver epoch)
# checked and measured. tests: the GPU backend tests (every variant against the CPU, epoch
# included) and the catalogue refusal; sanitize: compute-sanitizer memcheck and racecheck (shared
# memory between the kernel's barriers) on the epoch kernel; bench: the built-in ring (256 cells,
# 100 ms) on the CPU (all cores), staged, epoch and --backend auto, alternating, REPS rounds; then
# the networks of BENCH_MODELS (default: bench/busyring-1024.json, distinct random trees) and the
# nine real cells × 128 (MIXED), each with auto, staged and epoch.
#
# Usage, from the project root: bench/runs/gpu_epoch.sh [OUTDIR]
# Carry: .devlibs (scripts/devlibs.sh) and build-shared (mkdir -p build-shared && cp -r
# ../shared/data build-shared/). PARTS="tests sanitize bench" (the default: all), REPS=3.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
parts_all="tests sanitize bench"
target=cablesim_cli; gpu_part tests && target=all
gpu_start "${1:-${OUT:-$PWD/build-gpu/out-epoch}}" $target || exit 1

rc_tests=0
if gpu_part tests; then
  echo "== GPU tests"
  gpu_ctest "$bld" "${CTEST_REGEX:-test_backend_cuda|test_nmodl_gpu}" "\\[epoch\\]"
fi

if gpu_part sanitize; then
  for tool in memcheck racecheck; do
    for m in models/validation/ring4.json models/examples/ring.json; do
      gpu_sanitize $tool 120 "$out/$tool.log" "$tool $(basename "$m") epoch" "$cs" run "$m" --backend cuda --solver epoch \
        --tfinal 3 --no-output -q
    done
  done
fi

if gpu_part bench; then
  echo "== the built-in ring, 256 cells, 100 ms"
  for _ in $(seq 1 "${REPS:-3}"); do
    echo "cpu: $("$cs" run models/default.json --no-output --backend cpu 2>&1 | grep -E 'run time')"
    for v in staged epoch; do
      echo "cuda $v: $("$cs" run models/default.json --no-output --backend cuda --solver $v 2>&1 | grep -E 'run time|error' | head -1)"
    done
    echo "backend auto: $("$cs" run models/default.json --no-output --backend auto 2>&1 | grep -E 'chosen|run time' | tr '\n' ' ')"
  done
  CS_EPOCH_CYCLES=1 "$cs" run models/default.json --no-output --backend cuda --solver epoch >"$out/ring-epoch-profile.txt" 2>&1
  grep "cycles per step" "$out/ring-epoch-profile.txt" | sort | uniq -c | sort -rn | head -3
  models=$out/models
  $py bench/real_cells.py generate --out "$models" --alone 0 --mixed "${MIXED:-128}" --largest 0 --big-compartments 0 \
    --tfinal 20 >"$out/generate.log" 2>&1 || tail -5 "$out/generate.log"
  for m in ${BENCH_MODELS:-bench/busyring-1024.json} "$models"/mixed-*.json; do
    [ -f "$m" ] || continue
    for _ in 1 2; do
      for v in auto staged epoch; do
        line=$(timeout 200 "$cs" run "$m" --backend cuda --solver $v --no-output --tfinal 20 2>&1 | grep -E "run time|error|chosen" | tr '\n' ' ')
        echo "$(basename "$m" .json) $v: $line"
      done
    done
  done
fi
echo "whole script: $(( $(date +%s) - t0 )) s"
exit $rc_tests
