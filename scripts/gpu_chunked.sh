#!/usr/bin/env bash
# The chunked Hines solver (issue 28) on the GPU machine, in one call of ~7-8 minutes on an H100:
# build; test_hines_gpu and test_backend_cuda.py restricted to chunked and fine, and
# test_hines_chunked (the CPU emulation: every L at 1e-12, the estimate, the no-cut rule, auto);
# compute-sanitizer memcheck on test_hines_gpu's small chunked solves; bench_hines --chunked (the
# solve alone, each case checked against the CPU at 1e-12: a cable, long-run trees, short-run
# trees; fine, chunked with its automatic L and L = 8, 16, 32, auto); then `--solver chunked`
# against `fine` and `auto` on bench/real_cells.py's big networks (big2000, big10000, big30000 at
# BIG_COMPARTMENTS, the unscaled FlyWire "giant") and on one single cell of ~110 000 compartments
# (GPU, and the CPU with all cores), printing cs/s and the % of the bound (BOUND, default 6.25e10
# cs/s: 48 B per compartment-step at 3.0 TB/s, H100).
#
# Usage, from the project root: scripts/gpu_chunked.sh [OUTDIR]
# Carry: .devlibs (scripts/devlibs.sh) and build-shared (mkdir -p build-shared && cp -r
# ../shared/data build-shared/): the tests and the networks read the nine SWC cells there.
# PARTS="tests hbench bench" (default; add "sanitize" for memcheck), BIG_COMPARTMENTS=16e6 (the issue's size),
# TFINAL=10 [ms], REPS=1, SOLVERS="chunked fine auto", CS_CHUNKED_L (chunk length; default: chosen
# by the plan), ALSO_L="16" (chunked alone again on the big networks with that chunk length;
# default none), BUDGET_S=440 [s] for the whole script (no benchmark run starts after it),
# TEST_VARIANTS="chunked fine" (the variants test_hines_gpu and test_backend_cuda.py run).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
parts_all="tests hbench bench" # sanitize: on request (PARTS="tests sanitize hbench bench"; ~1 min)
gpu_start "${1:-${OUT:-$PWD/build-gpu/out-chunked}}" cablesim_cli || exit 1
deadline=$((t0 + ${BUDGET_S:-440}))
morph=${CS_MORPH_DIR:-$(gpu_morph_dir)} || exit 1
export CS_MORPH_DIR=$morph
export CABLESIM_WISDOM=$out/wisdom   # auto's trial once per network, then from wisdom
rc_hines=na rc_chunk=na rc_backend=na rc_mem=na rc_hbench=na rc_bench=na

if gpu_part tests; then
  gpu_build "$bld" test_hines_gpu && gpu_build "$bld" test_hines_chunked || exit 1
  gpu_stamp "test_hines_chunked (CPU emulation)"
  (cd "$bld/tests" && timeout 60 ./test_hines_chunked) >"$out/test_hines_chunked.log" 2>&1; rc_chunk=$?
  grep -E "^[0-9]+%|Failure|Error" "$out/test_hines_chunked.log"
  tv=${TEST_VARIANTS:-chunked fine}
  gpu_stamp "test_hines_gpu, $tv"
  (cd "$bld/tests" && CS_TEST_VARIANTS="$tv" timeout 150 ./test_hines_gpu) >"$out/test_hines_gpu.log" 2>&1; rc_hines=$?
  grep -E "^[0-9]+%|SKIP|device:|Failure|Error|error" "$out/test_hines_gpu.log" | head -20
  gpu_stamp "test_backend_cuda.py, $tv"
  export CS_TEST_VARIANTS="$tv"
  CTEST_S=150 gpu_ctest "$bld" '^test_backend_cuda$'; rc_backend=$rc_tests
  unset CS_TEST_VARIANTS
fi

if gpu_part sanitize && command -v compute-sanitizer >/dev/null; then
  gpu_build "$bld" test_hines_gpu || exit 1
  gpu_stamp "memcheck, small chunked solves"
  (cd "$bld/tests" && export CK_RUN_SUITE=hines_gpu CS_TEST_SMALL=1 CS_TEST_VARIANTS=chunked &&
    gpu_sanitize memcheck 120 "$out/memcheck.log" memcheck ./test_hines_gpu)
  grep -q "ERROR SUMMARY: 0 errors" "$out/memcheck.log" && rc_mem=0 || rc_mem=1
fi

if gpu_part hbench; then
  gpu_build "$bld" bench_hines || exit 1
  gpu_stamp "bench_hines --chunked (the solve alone; fine, chunked, auto)"
  (cd "$bld/bench" && timeout 150 ./bench_hines --chunked --md "$out/bench_hines_chunked.md") >"$out/bench_hines_chunked.log" 2>&1; rc_hbench=$?
  grep -E "^\| |CHECK FAILED|failed" "$out/bench_hines_chunked.log" | cut -c1-200
fi

if gpu_part bench; then
  gpu_stamp "networks"
  models=$out/models
  $py bench/real_cells.py generate --out "$models" --morph-dir "$CS_MORPH_DIR" --alone 0 --mixed "" \
    --big-compartments "${BIG_COMPARTMENTS:-16e6}" --big-sizes 2000,10000,30000 --single 100000 \
    --tfinal "${TFINAL:-10}" --cablesim "$cs" --check-limit 0 >"$out/networks.md" 2>&1
  grep -E "^\| (big|giant|single)" "$out/networks.md"
  solvers=$(echo ${SOLVERS:-chunked fine auto} | tr ' ' ',')
  rc_bench=0
  # ALSO_L="16": after the main runs, chunked alone again on the big networks with CS_CHUNKED_L=16
  # (the round-1 default; the plan otherwise picks L from the runs)
  parts=("big:^(big|giant):cuda:$solvers" "single:^single:cpu,cuda:$solvers")
  for l in ${ALSO_L:-}; do parts+=("big-L$l:^(big|giant):cuda:chunked:$l"); done
  for part in "${parts[@]}"; do
    IFS=: read -r name re backends solv chunk_l <<<"$part"
    gpu_stamp "bench $name"
    CS_CHUNKED_L=${chunk_l:-${CS_CHUNKED_L:-}} PYTHONUNBUFFERED=1 $py bench/real_cells.py run --models "$models" --cablesim "$cs" --only "$re" \
      --backends "$backends" --solvers "$solv" --threads "$(nproc)" --reps "${REPS:-1}" --rep-limit 2 --timeout 150 \
      --bound "${BOUND:-6.25e10}" --deadline "$deadline" --json "$out/chunked-$name.json" --md "$out/chunked-$name.md" \
      >"$out/chunked-$name.log" 2>&1 || rc_bench=1
    grep -E "cs/s|refused|error|skipped|MISMATCH" "$out/chunked-$name.log" | head -30
  done
  $py - "$out" "${BOUND:-6.25e10}" <<'EOF'
import json, os, sys
out, bound = sys.argv[1], float(sys.argv[2])
print("\n| network | compartments | run | solver | cs/s | %% of %.3g | spikes |" % bound)
print("|---|---:|---|---|---:|---:|---:|")
import glob
for p in sorted(glob.glob(os.path.join(out, "chunked-*.json")), key=lambda p: (not p.endswith("single.json"), p)):
    name = os.path.basename(p)[len("chunked-"):-len(".json")]
    for n in json.load(open(p))["networks"]:
        for r in n["runs"]:
            if r["status"] != "ok":
                print("| %s | | %s | | %s | | |" % (n["name"], r["label"], r["status"]))
                continue
            print("| %s | %s | %s | %s | %.3g | %.1f | %d |" % (n["name"], n.get("compartments", "?"), r["label"] + (" " + name[4:] if name.startswith("big-") else ""),
                  r.get("solver", "-"), r["cs_per_s"], 100 * r["cs_per_s"] / bound, r["spikes"]))
EOF
fi
gpu_stamp "done: test_hines_chunked=$rc_chunk test_hines_gpu=$rc_hines test_backend_cuda=$rc_backend memcheck=$rc_mem bench_hines=$rc_hbench bench=$rc_bench"
for r in $rc_chunk $rc_hines $rc_backend $rc_mem $rc_hbench $rc_bench; do case $r in na | 0) ;; *) exit 1 ;; esac; done
exit 0
