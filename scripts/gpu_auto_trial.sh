#!/usr/bin/env bash
# auto's first trial (issue 28: <= 2 s or <= 10 % of the run) on the GPU machine, in one call of
# ~5-7 minutes on an H100: the CLI of this tree and of a reference tree (the code before the
# change) built side by side, then `--backend cuda --solver auto` with CABLESIM_WISDOM=off (every
# run a first trial) on networks of bench/real_cells.py: the unscaled FlyWire cell x 551 and
# big10000 x 1600 (16 M compartments each) and the nine real cells x 2048 (18 432 cells), each
# network by the reference, then by this tree; before them test_backend_cuda.py on epoch and
# chunked (this tree; TESTS=0 leaves it out, ~1-2 min). Prints per run the summary's `auto:` line (the
# candidates, their set-up, the choice and the trial's seconds), the run time and the spikes, then
# a table: trial and run seconds, reference against this tree.
#
# Here, once, before the call (the reference tree travels as a carried folder):
#   scripts/gpu_auto_trial.sh --prepare [REF]    # REF (default main) into build-ref-src/
# On the GPU machine, from the project root:
#   scripts/gpu_auto_trial.sh [OUTDIR]
# Carry: .devlibs (scripts/devlibs.sh), build-shared (mkdir -p build-shared && cp -r
# ../shared/data build-shared/) and build-ref-src.
# NETS (default "giant big10000 mixed": which networks, in that order), TESTS=1, TFINAL=10 [ms],
# BIG_COMPARTMENTS=16e6, BUDGET_S=450 [s] for the whole script (no run starts after it).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
if [ "${1:-}" = --prepare ]; then
  rm -rf build-ref-src && mkdir -p build-ref-src &&
    git archive "${2:-main}" | tar -x -C build-ref-src && echo "build-ref-src: $(git rev-parse --short "${2:-main}")"
  exit $?
fi
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-auto}}" || exit 1
gpu_link_shared
deadline=$((SECONDS + ${BUDGET_S:-450}))
morph=${CS_MORPH_DIR:-$(gpu_morph_dir)} || exit 1

gpu_stamp "build: this tree and the reference, side by side"
gpu_build_with_ref cablesim_cli || exit 1
declare -A exe=([ref]=$root/build-gpu-ref/cablesim [new]=$root/build-gpu/cablesim)

rc_backend=na
if [ "${TESTS:-1}" = 1 ]; then # the set-up changed: epoch's early refusals, chunked and fine against the CPU
  gpu_stamp "test_backend_cuda.py, epoch and chunked"
  CS_TEST_VARIANTS="epoch chunked" CTEST_S=150 gpu_ctest "$root/build-gpu" '^test_backend_cuda$'; rc_backend=$rc_tests
fi

gpu_stamp "networks"
models=$out/models
$py bench/real_cells.py generate --out "$models" --morph-dir "$morph" --alone 0 --mixed 2048 \
  --big-compartments "${BIG_COMPARTMENTS:-16e6}" --big-sizes 2000,10000 --tfinal "${TFINAL:-10}" --check-limit 0 \
  >"$out/networks.md" 2>&1 || { tail -5 "$out/networks.md"; exit 1; }
declare -A model=([giant]=$(ls "$models"/giant-*.json) [big10000]=$(ls "$models"/big10000-*.json) [big2000]=$(ls "$models"/big2000-*.json)
                  [mixed]=$(ls "$models"/mixed-*.json))

export CABLESIM_WISDOM=off # every run a first trial
rows=()
for net in ${NETS:-giant big10000 mixed}; do
  for build in ref new; do
    if [ $SECONDS -ge $deadline ]; then gpu_stamp "$net $build: skipped (BUDGET_S)"; continue; fi
    gpu_stamp "$net, $build"
    log=$out/$net-$build.log
    timeout 200 "${exe[$build]}" run "${model[$net]}" -o "$out/$net-$build.h5" --backend cuda --solver auto \
      --tfinal "${TFINAL:-10}" >"$log" 2>&1
    echo "  exit $?"
    grep -E "^  auto:|run time|population|error" "$log" | cut -c1-1500
    trial=$(grep -oE "\(trial [0-9.]+ s\)" "$log" | grep -oE "[0-9.]+")
    chosen=$(grep -oE "chosen: [a-z]+ [a-z_]+" "$log" | cut -d' ' -f3)
    run=$(grep -oE "run time [0-9.e+-]+" "$log" | cut -d' ' -f3)
    spikes=$(grep -oE "cells +[0-9]+ spikes" "$log" | awk '{s += $2} END {print s}')
    rows+=("| $net | $build | ${chosen:-?} | ${trial:-?} | ${run:-?} | ${spikes:-?} |")
  done
done
echo
echo "| network | build | chosen | trial [s] | run [s] | spikes |"
echo "|---|---|---|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
gpu_stamp "done: test_backend_cuda=$rc_backend"
case $rc_backend in na | 0) ;; *) exit 1 ;; esac
