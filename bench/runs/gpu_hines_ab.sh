#!/usr/bin/env bash
# Same-run A/B of the GPU Hines solvers: builds bench_hines from this tree ("new") and from a copy
# of it in which the files under AB_DIR replace theirs ("old"; AB_DIR mirrors the tree, e.g.
# ab-old/solver/cs_hines_staged.c, default ab-old), then runs both with BENCH_ARGS, old first.
# Markdown tables and logs go to OUTDIR ($OUT on the lent machine). Needs .devlibs (scripts/devlibs.sh).
# Usage, from the project root: AB_DIR=ab-old BENCH_ARGS="--mid" bench/runs/gpu_hines_ab.sh [OUTDIR]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
ab=${AB_DIR:-ab-old}
[ -d "$ab" ] || { echo "gpu_hines_ab: no $ab folder (the old files)"; exit 2; }
gpu_setup "${1:-${OUT:-$PWD/build-gpu-ab/out}}" "" || exit 1
old_src=$root/build-ab-src
rm -rf "$old_src" && mkdir -p "$old_src"
tar --exclude='./build*' --exclude="./$ab" -cf - . | tar -xf - -C "$old_src"
cp -r "$ab"/. "$old_src"/
gpu_stamp build
gpu_build "$root/build-ab-new" bench_hines & p1=$!
gpu_build --src "$old_src" "$root/build-ab-old" bench_hines & p2=$!
wait $p1 || exit 1
wait $p2 || exit 1
for side in old new; do
  gpu_stamp "bench $side"
  timeout "${BENCH_TIMEOUT:-240}" "$root/build-ab-$side/bench/bench_hines" ${BENCH_ARGS:-} --md "$out/results-$side.md" >"$out/bench-$side.log" 2>&1
  echo "$side: rc=$?"
done
gpu_stamp "done"
paste -d'\n' <(grep -E "^\| [a-z-]+ \| [0-9]+ \|" "$out/results-old.md" | sed 's/^/old /') \
  <(grep -E "^\| [a-z-]+ \| [0-9]+ \|" "$out/results-new.md" | sed 's/^/new /') | cut -d'|' -f1-7 | head -150
