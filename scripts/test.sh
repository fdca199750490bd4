#!/usr/bin/env bash
# Build cablesim and run the whole test suite: once optimised, once under AddressSanitizer
# and UndefinedBehaviorSanitizer. GPU tests report "skipped" on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"
# Sanitizers: the C library, the CLI and every test program (CUDA off: no GPU code can run here).
# Not repeated there: the comparisons with whole NEURON and bmtk runs of Allen cells and SONATA
# networks (slow, and their numerics are covered above; their readers' errors and the importer
# stay under the sanitizers) and the install test (an instrumented library cannot be loaded by the
# uninstrumented consumer).
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCABLESIM_SANITIZE=ON -DCABLESIM_ENABLE_CUDA=OFF >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" -E 'test_neuron_agreement|test_install|test_allen_neuron|test_sonata_bmtk'
