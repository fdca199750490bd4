#!/usr/bin/env bash
# The chunked Hines solver's fused membrane step (issue 28, session 21) on the GPU machine, in one
# call of ~5-6 minutes on an H100: build; scripts/gpu_chunked.sh's tests on chunked alone:
# test_hines_chunked (the CPU emulation of the fused step, 1e-12), test_hines_gpu (every chunked
# config's solves and fused steps on the device against the CPU at 1e-12, const_coupling too) and
# test_backend_cuda; compute-sanitizer memcheck on test_hines_gpu's small chunked cases (PARTS:
# "sanitize", ~1 min);
# then `--solver chunked` on bench/real_cells.py's big10000, big30000 and the unscaled FlyWire
# "giant" at BIG_COMPARTMENTS (default 16e6), TFINAL [ms] (default 10), the fused step (default)
# against the separate assembly (CS_CUDA_FUSED=0, the same binary), alternating, REPS times each:
# compartment-steps/s, % of the bound (BOUND, default 6.25e10 cs/s: 48 B per compartment-step at
# 3.0 TB/s, H100), spike counts (fused and unfused must agree), and whether the step was fused.
#
# Usage, from the project root: scripts/gpu_chunked_fused.sh [OUTDIR]
# Carry: .devlibs (scripts/devlibs.sh) and build-shared (mkdir -p build-shared && cp -r
# ../shared/data build-shared/): the tests and the networks read the nine SWC cells there.
# PARTS="tests bench" (default; add "sanitize" for memcheck), REPS=1, CS_CHUNKED_L (chunk length;
# default: chosen by the plan), BUDGET_S=330 [s] for the whole script (no run starts after it).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
parts_all="tests bench"
gpu_start "${1:-${OUT:-$PWD/build-gpu/out-chunked-fused}}" cablesim_cli || exit 1
deadline=$((t0 + ${BUDGET_S:-330}))
morph=${CS_MORPH_DIR:-$(gpu_morph_dir)} || exit 1
export CS_MORPH_DIR=$morph
rc_tests=na rc_bench=na

if gpu_part tests || gpu_part sanitize; then # gpu_chunked.sh's tests, on chunked alone, in the same build
  parts=$(for p in tests sanitize; do gpu_part $p && echo -n "$p "; done)
  PARTS=$parts TEST_VARIANTS=chunked BUILD_DIR=$bld scripts/gpu_chunked.sh "$out/tests"; rc_tests=$?
fi

if gpu_part bench; then
  gpu_stamp "networks"
  models=$out/models
  $py bench/real_cells.py generate --out "$models" --morph-dir "$CS_MORPH_DIR" --alone 0 --mixed "" \
    --big-compartments "${BIG_COMPARTMENTS:-16e6}" --big-sizes 10000,30000 \
    --tfinal "${TFINAL:-10}" --cablesim "$cs" --check-limit 0 >"$out/networks.md" 2>&1
  grep -E "^\| (big|giant)" "$out/networks.md"
  rc_bench=0
  for rep in $(seq 1 "${REPS:-1}"); do
    for fused in 1 0; do
      gpu_stamp "chunked, fused=$fused, rep $rep"
      CS_CUDA_FUSED=$fused PYTHONUNBUFFERED=1 $py bench/real_cells.py run --models "$models" --cablesim "$cs" --only '^(big|giant)' \
        --backends cuda --solvers chunked --reps 1 --rep-limit 2 --timeout 120 --bound "${BOUND:-6.25e10}" \
        --deadline "$deadline" --json "$out/fused$fused-$rep.json" --md "$out/fused$fused-$rep.md" \
        >"$out/fused$fused-$rep.log" 2>&1 || rc_bench=1
      grep -E "cs/s|refused|error|skipped" "$out/fused$fused-$rep.log" | grep -vE "^(\||tfinal)" | head -10
    done
  done
  $py - "$out" "${BOUND:-6.25e10}" <<'EOF' || rc_bench=1
import glob, json, os, sys
out, bound = sys.argv[1], float(sys.argv[2])
runs = {}  # (network, fused) -> [run]
comp = {}
for p in sorted(glob.glob(os.path.join(out, "fused*-*.json"))):
    fused = os.path.basename(p)[5]
    for n in json.load(open(p))["networks"]:
        comp[n["name"]] = n.get("compartments", "?")
        runs.setdefault((n["name"], fused), []).extend(r for r in n["runs"] if r["status"] == "ok")
print("\n| network | compartments | step | cs/s (best) | %% of %.3g | spikes | fused in the summary |" % bound)
print("|---|---:|---|---:|---:|---:|---|")
bad = 0
for name in sorted(comp):
    best = {}
    for fused in "10":
        rs = runs.get((name, fused), [])
        if not rs:
            print("| %s | %s | %s | no run | | | |" % (name, comp[name], "fused" if fused == "1" else "CS_CUDA_FUSED=0"))
            continue
        r = max(rs, key=lambda r: r["cs_per_s"])
        best[fused] = r
        says = "assembly fused" in r.get("detail", "")
        bad += says != (fused == "1")
        print("| %s | %s | %s | %.3g | %.1f | %s | %s |" % (name, comp[name], "fused" if fused == "1" else "CS_CUDA_FUSED=0",
              r["cs_per_s"], 100 * r["cs_per_s"] / bound, ",".join(str(x["spikes"]) for x in rs), "yes" if says else "no"))
    if len(best) == 2:
        same = best["1"]["spikes"] == best["0"]["spikes"]
        bad += not same
        print("| %s | | fused / unfused | **%.2fx** | | %s | |" % (name, best["1"]["cs_per_s"] / best["0"]["cs_per_s"],
              "same" if same else "**DIFFER**"))
print()
for name in sorted(comp):  # the plans (chunks, interiors, reduced rows: the bytes of bench/NOTES.md)
    rs = runs.get((name, "1"), [])
    if rs:
        print("%s: %s" % (name, rs[0].get("detail", "")[:400]))
sys.exit(1 if bad else 0)
EOF
fi
gpu_stamp "done: tests=$rc_tests (test_hines_chunked, test_hines_gpu, test_backend_cuda, memcheck: above) bench=$rc_bench"
for r in $rc_tests $rc_bench; do case $r in na | 0) ;; *) exit 1 ;; esac; done
exit 0
