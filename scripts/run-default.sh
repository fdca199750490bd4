#!/usr/bin/env bash
# Build cablesim and run the built-in example (a ring of 256 cells with branched dendrites).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target cablesim_cli
./build/cablesim "$@"
