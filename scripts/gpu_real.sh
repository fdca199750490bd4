#!/usr/bin/env bash
# On the GPU machine, in one go (issue 17, items 1 and 4): the real-cell benchmark
# (bench/real_cells.py) on the CPU (all cores) and on the GPU with every solver, then Arbor's GPU
# busyring beside cablesim's GPU on the same busyring trees. Builds build-gpu when needed.
# Everything goes to OUTDIR ($OUT on the lent machine); a markdown summary is printed at the end.
#
# Usage, from the project root: scripts/gpu_real.sh [OUTDIR]
# Carry: .devlibs (scripts/devlibs.sh), the morphologies, Arbor's binary:
#   - the nine SWC files: CS_MORPH_DIR, else ../shared/data/morphologies, else build-shared/data/
#     morphologies (mkdir -p build-shared && cp -r ../shared/data build-shared/, as gpu_sim.sh), else
#     .dev/morph; ../shared does not travel to the GPU machine;
#   - Arbor's busyring built for sm_90: ARBOR_BUSYRING, else .peers/arbor/busyring-gpu (copied from
#     ../shared/peers/arbor/busyring-gpu, git-ignored); without it the Arbor part is skipped.
# Sizes and time (defaults keep the whole script under ~6 minutes on an H100/H200 with 16 cores,
# build included when build-gpu is already configured):
#   ALONE=2048 (cells of each cell-alone network), MIXED="128 2048" (cells of EACH of the nine:
#   1 152 and 18 432 cells), LARGEST=8192 (73 728 cells, GPU auto only; 0: none),
#   BIG_COMPARTMENTS=4e6 (per synthetic big-cell network), TFINAL=20 [ms], SOLVERS="auto interleaved
#   variable fine warp staged", ARBOR_CELLS="1024 16384", BUDGET_S=330 [s] for the whole script, of
#   which ARBOR_S=60 for Arbor; PARTS="mixed big alone" (the runner's parts to run) (the runner starts no run after BUDGET_S - ARBOR_S from the start and
#   lists what it skipped; Arbor is stopped at BUDGET_S).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
# --- build (incremental when build-gpu exists; BUILD_DIR: another build folder, e.g. a CPU-only
# one for a dry run) -----------------------------------------------------------------------------
gpu_start "${1:-${OUT:-$PWD/build-gpu/out-real}}" cablesim_cli -DBUILD_TESTING=OFF || exit 1
t_start=$t0
arbor_s=${ARBOR_S:-60}                              # [s] kept for the Arbor part
deadline=$((t_start + ${BUDGET_S:-330} - arbor_s))  # the runner starts no run after this

# --- morphologies ------------------------------------------------------------------------------
morph=$(gpu_morph_dir) || exit 1

# --- networks ----------------------------------------------------------------------------------
models=$out/models
mixed=$(echo ${MIXED:-128 2048} | tr ' ' ',')
$py bench/real_cells.py generate --out "$models" --morph-dir "$morph" --alone "${ALONE:-2048}" --mixed "$mixed" \
  --largest "${LARGEST:-8192}" --big-compartments "${BIG_COMPARTMENTS:-4e6}" --tfinal "${TFINAL:-20}" \
  --cablesim "$cs" --check-limit 0 2>&1 | tee "$out/networks.md"

# --- the runner: mixed first (the issue's P1 networks), then big cells, then each cell alone -----
solvers=$(echo ${SOLVERS:-auto interleaved variable fine warp staged} | tr ' ' ',')
rc=0
for part in "mixed:^mixed-" "big:^(big|giant)" "alone:^alone-"; do
  name=${part%%:*}; re=${part#*:}
  case " ${PARTS:-mixed big alone} " in *" $name "*) ;; *) continue ;; esac   # PARTS: which parts run
  PYTHONUNBUFFERED=1 $py bench/real_cells.py run --models "$models" --cablesim "$cs" --only "$re" \
    --backends cpu,cuda --solvers "$solvers" --threads "$(nproc)" --reps 3 --rep-limit 3 --timeout 200 \
    --deadline "$deadline" --json "$out/real-$name.json" --md "$out/real-$name.md" \
    >"$out/real-$name.log" 2>&1 || rc=1
  grep -E "^[a-z].*(cs/s|refused|error|skipped)|MISMATCH" "$out/real-$name.log" | head -80
done

# --- Arbor's GPU busyring beside cablesim ------------------------------------------------------
arb=${ARBOR_BUSYRING:-$root/.peers/arbor/busyring-gpu}
if [ -x "$arb" ]; then
  left=$(( deadline + arbor_s - $(date +%s) )); [ $left -lt 30 ] && left=30
  PYTHONUNBUFFERED=1 timeout $left \
    $py bench/real_cells.py arbor --busyring "$arb" --cablesim "$cs" --work "$out/arbor" \
    --cells "$(echo ${ARBOR_CELLS:-1024 16384} | tr ' ' ',')" --tfinal "${TFINAL:-20}" --md "$out/arbor.md" \
    >"$out/arbor.log" 2>&1 || rc=1
else
  echo "Arbor: no busyring binary at $arb (set ARBOR_BUSYRING)" | tee "$out/arbor.md"
fi

# --- summary -----------------------------------------------------------------------------------
{
  echo "## Real-cell benchmark, $(date '+%Y-%m-%d %H:%M'), $(head -1 "$out/device.txt")"
  echo
  echo "Networks (compartments from cablesim's summary; per cell, max_cv_length 20 µm):"
  echo
  grep -E "^\|" "$out/networks.md"
  echo
  for name in mixed big alone; do [ -f "$out/real-$name.md" ] && cat "$out/real-$name.md" && echo; done
  [ -f "$out/arbor.md" ] && cat "$out/arbor.md"
  echo
  echo "Whole script: $(( $(date +%s) - t_start )) s; exit status $rc."
} >"$out/summary.md"
cat "$out/summary.md"
exit $rc
