#!/usr/bin/env bash
# Issue 30 (the layout) on the GPU machine, in one call: the tree before the layout (OLD_SRC, a
# `git archive` of the commit before it) against this tree, same machine, same run, alternating
# REPS rounds: the 256-cell ring (models/default.json) on the CPU and with --solver epoch, the
# busyring of 1 024 distinct trees (bench/busyring-1024.json) and the nine real cells × 2 048
# (18 432 cells) with --solver staged. Prints each run's time loop [s] (/metadata wall_seconds)
# and whether old and new wrote identical spikes; then builds this tree's tests and runs the GPU
# ones. Usage, from the project root:
#   git archive OLD | tar -x -C build-ab/old-src; bench/real_cells.py generate --out build-ab/models
#     --alone 0 --mixed 2048 --largest 0 --big-compartments 0
#   bench/runs/gpu_layout_ab.sh [OUTDIR]      carry: .devlibs build-shared build-ab
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/gpu_common.sh
gpu_setup "${1:-${OUT:-$PWD/build-ab/out}}" || exit 1
gpu_link_shared
t0=$(date +%s)
old_src=${OLD_SRC:-$root/build-ab/old-src}
gpu_build --src "$old_src" "$root/build-ab/build-old" cablesim_cli -DBUILD_TESTING=OFF || exit 1
gpu_build "$root/build-gpu" cablesim_cli || exit 1
echo "builds: $(( $(date +%s) - t0 )) s"
declare -A exe=([old]=$root/build-ab/build-old/cablesim [new]=$root/build-gpu/cablesim)
runs=("ring-cpu|$root/models/default.json|--backend cpu"
      "ring-epoch|$root/models/default.json|--backend cuda --solver epoch"
      "busyring-1024|$root/bench/busyring-1024.json|--backend cuda --solver staged"
      "mixed-18432|$root/build-ab/models/mixed-18432.json|--backend cuda --solver staged")
wall() { "$py" -c 'import h5py,sys; print(h5py.File(sys.argv[1])["metadata"].attrs["wall_seconds"])' "$1"; }
same() { "$py" -c 'import h5py,sys,numpy as n; a,b=(h5py.File(f)["spikes"] for f in sys.argv[1:]); k=[x for x in a if isinstance(a[x],h5py.Group)]; print(("identical, %d spikes" % sum(len(a[p]["timestamps"]) for p in k)) if k and all(n.array_equal(a[p][d][()],b[p][d][()]) for p in k for d in ("timestamps","node_ids")) else "DIFFERENT")' "$1" "$2"; }
echo "| network | side | rep | wall [s] |" >"$out/ab.md"
for r in $(seq 1 "${REPS:-3}"); do
  for spec in "${runs[@]}"; do
    IFS='|' read -r name model args <<<"$spec"
    for side in old new; do
      f=$out/$name-$side-$r.h5
      # shellcheck disable=SC2086
      "${exe[$side]}" run "$model" -o "$f" -q $args >"$out/$name-$side-$r.log" 2>&1 || { echo "$name $side: exit $?"; tail -3 "$out/$name-$side-$r.log"; continue; }
      echo "| $name | $side | $r | $(wall "$f") |" >>"$out/ab.md"
    done
    [ "$r" = 1 ] && echo "$name: old and new spikes $(same "$out/$name-old-1.h5" "$out/$name-new-1.h5")"
  done
done
"$py" - "$out/ab.md" <<'PY'
import sys, statistics, collections
t = collections.defaultdict(list)
for line in open(sys.argv[1]).read().splitlines()[1:]:
    _, name, side, rep, wall, _ = [c.strip() for c in line.split("|")]
    t[(name, side)].append(float(wall))
print("| network | old median [s] | new median [s] | new/old |")
print("|---|---:|---:|---:|")
for name in dict.fromkeys(k[0] for k in t):
    o, n = statistics.median(t[(name, "old")]), statistics.median(t[(name, "new")])
    print(f"| {name} | {o:.4f} | {n:.4f} | {n / o:.3f} |")
PY
rm -f "$out"/*.h5
echo "bench done: $(( $(date +%s) - t0 )) s"
gpu_build "$root/build-gpu" all || exit 1
CTEST_S=$(( ${BUDGET_S:-560} - ($(date +%s) - t0) )) gpu_ctest "$root/build-gpu" "gpu|cuda|check_layering" "SKIP|passed,"
