#!/usr/bin/env bash
# Build the libFuzzer harnesses (clang, ASan + UBSan) and run each for SECONDS (default 60),
# after replaying the inputs that once crashed them (fuzz/regressions/). New corpus entries go
# to build-fuzz/corpus/ (the seeds in fuzz/corpus/ are not modified). Exit non-zero on a crash;
# libFuzzer writes the input that crashed as build-fuzz/crash-*.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
scripts/deps.sh fuzz
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCABLESIM_FUZZ=ON \
  -DCABLESIM_ENABLE_CUDA=OFF -DBUILD_TESTING=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for src in fuzz/fuzz_*.c; do  # every harness: fuzz/fuzz_NAME.c, seeds in fuzz/corpus/NAME/
  h=$(basename "$src" .c)
  h=${h#fuzz_}
  exe=build-fuzz/fuzz/fuzz_$h
  if compgen -G "fuzz/regressions/$h/*" >/dev/null; then
    "$exe" -runs=0 fuzz/regressions/$h/* 2>&1 | tail -1   # replay: each input once
  fi
  mkdir -p build-fuzz/corpus/$h
  echo "fuzz: $h for $secs s"
  (cd build-fuzz && "../$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
     -print_final_stats=1 corpus/$h "../fuzz/corpus/$h" 2>&1 | tail -25)
done
echo "fuzz: ok (no crash)"
