#!/usr/bin/env bash
# The GPU solvers' host plans at 16 M compartments, on the GPU machine's cores (issue 28, session 21:
# what auto's solver-level trial waits for). bench/plan_times of this tree and of the reference
# (build-ref-src) on big2000 x 8000, big10000 x 1600 and the FlyWire giant (bench/real_cells.py):
#   1. each plan's time and digest, both trees: the digests must match (the same plans, bit for
#      bit; "digests: N same, 0 differ");
#   2. this tree again with nested OpenMP (OMP_MAX_ACTIVE_LEVELS=2): the plans' own loops over
#      structures, pack types and row orders on the cores that the plans built at once leave
#      (auto's trial builds its plans inside one parallel region: without nesting they run on one
#      thread each);
#   3. this tree with glibc's heap kept (GLIBC_TUNABLES trim_threshold 1 GB, top_pad 256 MB: what a
#      mallopt in the CLI would do; bench/NOTES.md, "the host plans at 16 M compartments").
# Here, once, before the call (the reference tree travels as a carried folder):
#   scripts/gpu_auto_trial.sh --prepare [REF]      # REF (default main) into build-ref-src/
# On the GPU machine, from the project root:
#   scripts/gpu_plan_times.sh [OUTDIR]
# Carry: .devlibs, build-shared (mkdir -p build-shared && cp -r ../shared/data build-shared/),
# build-ref-src. VARIANTS (default "warp fine chunked auto").
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-gpu/out-plan-times}}" "" || exit 1
gpu_link_shared
morph=${CS_MORPH_DIR:-$(gpu_morph_dir)} || exit 1
read -r -a variants <<<"${VARIANTS:-warp fine chunked auto}"

gpu_stamp "build plan_times: this tree and the reference, side by side"
gpu_build_with_ref plan_times || exit 1
gpu_stamp "networks"
python3 bench/real_cells.py generate --out "$out/models" --morph-dir "$morph" --alone 0 --mixed "" \
  --big-compartments 16e6 --big-sizes 2000,10000 --tfinal 10 --check-limit 0 >"$out/generate.log" 2>&1 ||
  { tail -5 "$out/generate.log"; exit 1; }
rc=0
for net in big2000-8000 big10000-1600 giant-flywire-unscaled-551; do
  model=$out/models/$net.json
  [ -f "$model" ] || { echo "$net: no model"; rc=1; continue; }
  for tree in ref new nested tuned; do
    exe=$root/build-gpu/bench/plan_times
    [ "$tree" = ref ] && exe=$root/build-gpu-ref/bench/plan_times
    gpu_stamp "$net: $tree ($(nproc) cores)"
    if [ "$tree" = nested ]; then
      OMP_MAX_ACTIVE_LEVELS=2 timeout 90 "$exe" "$model" "${variants[@]}" >"$out/$net-$tree.txt" 2>&1
    elif [ "$tree" = tuned ]; then
      GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824:glibc.malloc.top_pad=268435456 \
        timeout 90 "$exe" "$model" "${variants[@]}" >"$out/$net-$tree.txt" 2>&1
    else
      timeout 90 "$exe" "$model" "${variants[@]}" >"$out/$net-$tree.txt" 2>&1
    fi
    echo "exit $?"
    grep -E "^(plan|resolve)" "$out/$net-$tree.txt" | cut -c1-120
  done
  # the digests: the 4th field of each plan's line
  same=0 differ=0
  while read -r what var _ _ dig _; do
    [ "$what" = plan ] || continue
    refdig=$(awk -v v="$var" '$1 == "plan" && $2 == v {print $5}' "$out/$net-ref.txt")
    if [ "$dig" = "$refdig" ]; then same=$((same + 1)); else differ=$((differ + 1)); echo "  $var: $dig (reference $refdig)"; fi
  done <"$out/$net-new.txt"
  echo "$net digests: $same same, $differ differ"
  [ "$differ" = 0 ] && [ "$same" -gt 0 ] || rc=1
done
gpu_stamp "done: exit $rc"
exit $rc
