#!/usr/bin/env bash
# auto's solver-level trial (issue 28; docs/gpu.md, "Choosing by measurement") on the GPU machine,
# in one call of ~6-7 minutes on an H100:
#   1. scripts/gpu_auto_trial.sh without its tests: this tree and the reference (build-ref-src)
#      built side by side, then `--backend cuda --solver auto` with CABLESIM_WISDOM=off on FlyWire
#      x 551, big10000 x 1 600 (16 M compartments each) and the 18 432 real cells (11.9 M), the
#      reference then this tree: the `auto:` lines (this tree's say "solver-level trial"), trial
#      and run seconds, chosen solver, spikes, and a table;
#   2. test_backend_choose, and test_backend_cuda.py on `auto` only (CS_TEST_VARIANTS=auto: auto
#      against the CPU on every model, the whole trial and wisdom, the solver-level trial forced
#      on the ring and the real cells, each run equal to its chosen solver named; ~1.5 min);
#      test_hines_gpu's case "prepare" (cs_hines_gpu_plan_prepare: two fine plans, either order);
#   3. compute-sanitizer memcheck on the solver-level trial forced on the ring
#      (CABLESIM_AUTO_SOLVER_TRIAL=0): every candidate's plan, conversions and steps;
#   4. bench/plan_times on big10000 (host plans one by one, then at once on the machine's cores);
#   5. "choose": test_backend_choose alone (the trial's report, its errors);
#   6. "threads" (session 22): this tree's first trials again with CS_TRIAL_PLAN_THREADS = each of
#      PLAN_THREADS (default "1 4"; 1: the plans built at once on one thread each, as before session
#      22) on THREAD_NETS (default "big2000 big10000"): the trial's split ("its time: ...") and
#      seconds, against part 1's default (each plan's loops on all the cores, nested).
# Session 22's call (issue 28, auto's first trial <= 2 s on big cells; ~5-6 min on an H100):
#   PARTS="networks choose threads sanitize" NETS="big2000 big10000 giant mixed" BUDGET_S=270 \
#     scripts/gpu_solver_trial.sh
# with build-ref-src prepared from the code before session 22 (gpu_auto_trial.sh --prepare 6316e10).
# Here, once, before the call (the reference tree travels as a carried folder):
#   scripts/gpu_auto_trial.sh --prepare [REF]      # REF (default main) into build-ref-src/
# On the GPU machine, from the project root:
#   scripts/gpu_solver_trial.sh [OUTDIR]
# Carry: .devlibs, build-shared (mkdir -p build-shared && cp -r ../shared/data build-shared/),
# build-ref-src. BUDGET_S=330 [s] for part 1 (no network run starts after it); NETS as in
# gpu_auto_trial.sh; PARTS (default all: "networks tests sanitize plans choose threads").
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
parts_all="networks tests sanitize plans choose threads"
outdir=${1:-${OUT:-$PWD/build-gpu/out-solver-trial}}
rc=0
if gpu_part networks; then
  TESTS=0 BUDGET_S=${BUDGET_S:-330} scripts/gpu_auto_trial.sh "$outdir" || rc=1
fi
gpu_setup "$outdir" || exit 1
gpu_link_shared
gpu_build "$root/build-gpu" cablesim_cli || exit 1
if gpu_part tests; then
  gpu_stamp "test_backend_choose; test_backend_cuda.py on auto (the solver-level trial forced on ring and real cells)"
  gpu_build "$root/build-gpu" test_backend_choose || exit 1
  gpu_build "$root/build-gpu" test_hines_gpu || exit 1
  CS_TEST_VARIANTS=auto CTEST_S=170 gpu_ctest "$root/build-gpu" '^(test_backend_choose|test_backend_cuda)$' "solver-level"
  [ "$rc_tests" = 0 ] || rc=1
  # two fine plans built one after the other, each solving after cs_hines_gpu_plan_prepare
  CK_RUN_CASE=prepare timeout 60 "$root/build-gpu/tests/test_hines_gpu" >"$out/hines-prepare.log" 2>&1
  echo "test_hines_gpu case prepare: exit $? | $(grep -E 'Checks:' "$out/hines-prepare.log" | tail -1)"
  grep -E ":F:|:E:" "$out/hines-prepare.log" | head -5
  grep -q "100%: Checks: 1, Failures: 0, Errors: 0" "$out/hines-prepare.log" || rc=1
fi
if gpu_part choose; then
  gpu_stamp "test_backend_choose"
  gpu_build "$root/build-gpu" test_backend_choose || exit 1
  CTEST_S=60 gpu_ctest "$root/build-gpu" '^test_backend_choose$'
  [ "$rc_tests" = 0 ] || rc=1
fi
if gpu_part threads; then
  export CABLESIM_WISDOM=off # first trials
  trows=()
  for net in ${THREAD_NETS:-big2000 big10000}; do
    model=$(ls "$outdir"/models/"$net"-*.json 2>/dev/null | head -1)
    [ -n "$model" ] || { echo "$net: no model (part networks not run)"; continue; }
    row="| $net |"
    for pt in ${PLAN_THREADS:-1 4}; do
      gpu_stamp "$net, CS_TRIAL_PLAN_THREADS=$pt"
      log=$out/$net-plan-threads-$pt.log
      CS_TRIAL_PLAN_THREADS=$pt timeout 200 "$root/build-gpu/cablesim" run "$model" --no-output --backend cuda \
        --solver auto --tfinal "${TFINAL:-10}" >"$log" 2>&1
      echo "  exit $?"
      grep -E "^  auto:" "$log" | grep -oE "its time: [^;]*;|chosen: .*" | tr '\n' ' '
      echo
      row+=" $(grep -oE "\(trial [0-9.]+ s\)" "$log" | grep -oE "[0-9.]+") ($(grep -oE "chosen: [a-z]+ [a-z_]+" "$log" | cut -d' ' -f3)) |"
    done
    tn=$(grep -oE "\(trial [0-9.]+ s\)" "$outdir/$net-new.log" 2>/dev/null | grep -oE "[0-9.]+")
    cn=$(grep -oE "chosen: [a-z]+ [a-z_]+" "$outdir/$net-new.log" 2>/dev/null | cut -d' ' -f3)
    trows+=("$row ${tn:-?} (${cn:-?}) |")
  done
  echo
  echo "| network | trial [s] with CS_TRIAL_PLAN_THREADS = ${PLAN_THREADS:-1 4} | default (part networks) |"
  echo "|---|---|---:|"
  printf '%s\n' "${trows[@]}"
fi
if gpu_part sanitize; then
  gpu_stamp "compute-sanitizer memcheck: the solver-level trial forced on the ring"
  CABLESIM_AUTO_SOLVER_TRIAL=0 CABLESIM_WISDOM=off gpu_sanitize memcheck 90 "$out/memcheck-solver-trial.log" \
    "memcheck solver-level trial" "$root/build-gpu/cablesim" run models/examples/ring.json --no-output \
    --backend cuda --solver auto --tfinal 5
  grep -E "auto:" "$out/memcheck-solver-trial.log" | cut -c1-900
  grep -q "ERROR SUMMARY: 0 errors" "$out/memcheck-solver-trial.log" || rc=1
fi
if gpu_part plans; then
  gpu_stamp "plan_times on big10000 ($(nproc) cores)"
  gpu_build "$root/build-gpu" plan_times || exit 1
  model=$(ls "$outdir"/models/big10000-*.json 2>/dev/null | head -1)
  if [ -n "$model" ]; then
    timeout 60 "$root/build-gpu/bench/plan_times" "$model" auto staged warp fine chunked variable | cut -c1-140
  else
    echo "no big10000 model (part networks not run): skipped"
  fi
fi
gpu_stamp "done: exit $rc"
exit $rc
