#!/usr/bin/env bash
# Issue 28 (P2, Arbor's rand rings) on the GPU machine, in one call: the distinct busyring trees
# (bench/busyring_json.py --rand, each cell its own tree) at CELLS (default 1 024 .. 262 144;
# 262 144 cells run 10 ms, the others 20 ms) with `--solver fine` by fine's rule before session 28
# (CS_FINE_SMALL_STEP=0), with fine's pack cap before session 29 (CS_FINE_DISTINCT_CAP=0) and by
# the current rules, alternated (REPS, default 2), each run's wall
# time, spike count and spike-time sum (equal sums: the same spike times); fine forced to its
# small-pack fused step (CS_FINE_STEP_ALWAYS=1 CS_FINE_U_SHARED=1) where the rule leaves it out;
# then `auto` (its trial's times and choice), each of SWITCHES on the largest network, and with
# ARBOR=1 Arbor's GPU busyring beside cablesim (bench/real_cells.py arbor; carry .peers).
# Session 28's calls 3-5 and session 29's calls 1-2 ran these steps (bench/NOTES.md).
# Usage: bench/runs/gpu_small_packs.sh [OUTDIR]; CELLS, REPS, SWITCHES ("NAME=VALUE ..."), ARBOR.
# Carry .devlibs.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-small-packs}}" || exit 1
gpu_build "$root/build-gpu" cablesim_cli -DBUILD_TESTING=OFF -DCABLESIM_ENABLE_MPI=OFF || { echo "build failed"; exit 1; }
cs=$root/build-gpu/cablesim
export CABLESIM_WISDOM=off
cells=${CELLS:-1024 2048 3072 4096 8192 16384 65536 262144}
mkdir -p "$out/models"
for n in $cells; do
  tf=20; [ "$n" -gt 100000 ] && tf=10
  "$py" bench/busyring_json.py --rand "$n" "$tf" >"$out/models/rand-$n.json" || exit 1
done
one() { # LABEL MODEL SOLVER VAR=VALUE...
  gpu_run_sum "$1" "$cs" "${@:2}" || return
  grep -oE "Hines solver '[a-z]+'(, assembly fused)?|u-shared|chosen: [a-z ]+|cuda [a-z]+ [0-9.]+ ms/step" "$out/run.log" \
    | sort -u | tr '\n' ' '
  echo
}
{
for n in $cells; do
  m=$out/models/rand-$n.json
  gpu_stamp "rand-$n"
  for r in $(seq "${REPS:-2}"); do
    one "rand-$n fine, the rule before session 28, run $r" "$m" fine CS_FINE_SMALL_STEP=0
    one "rand-$n fine, the pack cap before session 29, run $r" "$m" fine CS_FINE_DISTINCT_CAP=0
    one "rand-$n fine, the rule, run $r" "$m" fine X=1
    one "rand-$n fine, the small-pack step forced, run $r" "$m" fine CS_FINE_STEP_ALWAYS=1 CS_FINE_U_SHARED=1
  done
  one "rand-$n auto" "$m" auto X=1
done
largest=$(for n in $cells; do echo "$n"; done | sort -n | tail -1)
for sw in ${SWITCHES:-CS_HINES_FINE_SCHED=global CS_HINES_FINE_SCHED=l2 CS_FINE_THREADS=128}; do
  one "rand-$largest fine, $sw" "$out/models/rand-$largest.json" fine "$sw"
done
if [ "${ARBOR:-0}" = 1 ]; then
  gpu_stamp "Arbor's busyring"
  timeout 300 "$py" bench/real_cells.py arbor --busyring "$root/.peers/arbor/busyring-gpu" --cablesim "$cs" \
    --work "$out/arbor" --cells 1024,16384 --tfinal 20 --md "$out/arbor.md" >"$out/arbor.log" 2>&1
  grep -E "^\| (full|rand)" "$out/arbor.md"
fi
gpu_stamp "done"
} 2>&1 | tee "$out/summary.txt"
