#!/usr/bin/env bash
# On the GPU machine, in one go: build everything (CUDA for sm_90), run the whole test suite
# (GPU tests included), compute-sanitizer on the simulator's CUDA backend, and time the
# built-in example on both backends. Logs go to OUTDIR ($OUT on the lent machine; the build's
# log is OUTDIR/build-build-gpu.log).
# Usage, from the project root: scripts/gpu_sim.sh [OUTDIR]   (needs .devlibs: scripts/devlibs.sh
# fills it with HDF5, Check and cJSON; carry ".devlibs")
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out}}" "" || exit 1
bld=$root/build-gpu
# ../shared (test morphologies) does not travel to the GPU machine: a copy is carried as
# build-shared (made here with: mkdir -p build-shared && cp -r ../shared/data build-shared/)
gpu_link_shared
echo "python for the tests: ${py:-none with h5py}"
gpu_build "$bld" all || exit 1
echo "== ctest"
ctest --test-dir "$bld" -V -j 4 -E "${CTEST_EXCLUDE:-^$}" -R "${CTEST_REGEX:-.}" >"$out/ctest.log" 2>&1
grep -E "tests passed|tests failed|\*\*\*Failed|Skipped|Passed" "$out/ctest.log" | tail -25
echo "-- GPU vs CPU (test_backend_cuda)"
grep -E "^[0-9]+: (ok|FAIL|largest)" "$out/ctest.log" | grep -E "FAIL|largest|out of GPU|\[fine\]|\[auto\]" | head -40
echo "== compute-sanitizer (memcheck, racecheck) on the CUDA backend"
# auto runs the fine solver on this small ring; interleaved runs the fused step
for solver in auto interleaved staged; do
  for tool in memcheck racecheck; do
    gpu_sanitize $tool 0 "$out/sanitizer-$tool-$solver.log" "$tool [$solver]" "$bld/cablesim" run \
      models/validation/ring4.json --backend cuda --solver $solver --tfinal 10 -o "$out/san-$tool.h5" -q
  done
done
echo "== the built-in example, CPU (all cores) and GPU"
"$bld/cablesim" run models/default.json --no-output --backend cpu | grep -E "compartment-steps|solve  |solver share"
for v in auto flat interleaved fine staged; do
  echo "-- cuda $v"; "$bld/cablesim" run models/default.json --no-output --backend cuda --solver $v 2>&1 | grep -E "error|compartment-steps|solver share"
done
echo "== larger rings (random busyring cells, 20 ms): compartment-steps per second"
for n in 4096 32768; do
  sed "s/\"count\": 256/\"count\": $n/" models/default.json > "$bld/ring$n.json"
  echo "-- $n cells: cpu $(nproc) threads"; "$bld/cablesim" run "$bld/ring$n.json" --no-output --tfinal 20 | grep -E "compartments,|compartment-steps|solver share"
  echo "-- $n cells: cuda"; "$bld/cablesim" run "$bld/ring$n.json" --no-output --tfinal 20 --backend cuda | grep -E "compartment-steps|solver share|error"
done
