#!/usr/bin/env bash
# CI: the README's first command on a machine without the test-only packages. Check (the only
# test-only package CMake looks for) is hidden from pkg-config, which then sees only cJSON's
# .pc file; configure must go on without the tests, and the CLI must build and run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
pc=$(mktemp -d)
trap 'rm -rf "$pc"' EXIT
cp "$(pkg-config --variable=pcfiledir libcjson)/libcjson.pc" "$pc/"
PKG_CONFIG_LIBDIR=$pc PKG_CONFIG_PATH='' pkg-config --exists check && { echo "ci-fresh: check.pc still visible" >&2; exit 1; }
PKG_CONFIG_LIBDIR=$pc PKG_CONFIG_PATH='' cmake -S . -B build-fresh -DCMAKE_BUILD_TYPE=Release \
  -DCABLESIM_ENABLE_CUDA=OFF | tee "$pc/configure.log" | grep -i "check" || true
grep -q "tests not built" "$pc/configure.log" || { echo "ci-fresh: configure did not skip the tests" >&2; exit 1; }
cmake --build build-fresh -j "$(nproc)" --target cablesim_cli >/dev/null
rm -f build-fresh/fresh.h5
build-fresh/cablesim run models/default.json -o build-fresh/fresh.h5 -q --tfinal 5
test -s build-fresh/fresh.h5 || { echo "ci-fresh: no output file" >&2; exit 1; }
echo "ci-fresh: ok (built and ran without Check)"
