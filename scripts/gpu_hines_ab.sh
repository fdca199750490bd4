#!/usr/bin/env bash
# Same-run A/B of the GPU Hines solvers: builds bench_hines from this tree ("new") and from a copy
# of it in which the files under AB_DIR replace theirs ("old"; AB_DIR mirrors the tree, e.g.
# ab-old/solver/cs_hines_staged.c, default ab-old), then runs both with BENCH_ARGS, old first.
# Markdown tables and logs go to OUTDIR ($OUT on the lent machine). Needs .devlibs (scripts/devlibs.sh).
# Usage, from the project root: AB_DIR=ab-old BENCH_ARGS="--mid" scripts/gpu_hines_ab.sh [OUTDIR]
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-${OUT:-$root/build-gpu-ab/out}}
ab=${AB_DIR:-ab-old}
mkdir -p "$out"
[ -d "$ab" ] || { echo "gpu_hines_ab: no $ab folder (the old files)"; exit 2; }
export PKG_CONFIG_PATH=$root/.devlibs/lib/pkgconfig LD_LIBRARY_PATH=$root/.devlibs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$SECONDS
stamp() { echo "[gpu_hines_ab +$((SECONDS - t0))s] $*"; }
old_src=$root/build-ab-src
rm -rf "$old_src" && mkdir -p "$old_src"
tar --exclude='./build*' --exclude="./$ab" -cf - . | tar -xf - -C "$old_src"
cp -r "$ab"/. "$old_src"/
build() { # SRC BUILD_DIR LOG
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHDF5_ROOT="$root/.devlibs" \
    -DCMAKE_PREFIX_PATH="$root/.devlibs" -DCMAKE_BUILD_RPATH="$root/.devlibs/lib" >"$3" 2>&1 &&
    cmake --build "$2" -j "$(nproc)" --target bench_hines >>"$3" 2>&1
}
stamp build
build "$root" "$root/build-ab-new" "$out/build-new.log" & p1=$!
build "$old_src" "$root/build-ab-old" "$out/build-old.log" & p2=$!
wait $p1 || { tail -20 "$out/build-new.log"; exit 1; }
wait $p2 || { tail -20 "$out/build-old.log"; exit 1; }
for side in old new; do
  stamp "bench $side"
  timeout "${BENCH_TIMEOUT:-240}" "$root/build-ab-$side/bench/bench_hines" ${BENCH_ARGS:-} --md "$out/results-$side.md" >"$out/bench-$side.log" 2>&1
  echo "$side: rc=$?"
done
stamp done
paste -d'\n' <(grep -E "^\| [a-z-]+ \| [0-9]+ \|" "$out/results-old.md" | sed 's/^/old /') \
  <(grep -E "^\| [a-z-]+ \| [0-9]+ \|" "$out/results-new.md" | sed 's/^/new /') | cut -d'|' -f1-7 | head -150
