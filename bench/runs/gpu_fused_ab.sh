#!/usr/bin/env bash
# On the GPU machine, in one call (issue 17, P1/P2): the staged solver with the assembly fused into
# its solve (the default since session 12) against staged with the separate assembly kernel
# (CS_CUDA_FUSED=0), alternating run by run on the same networks: the real-cell mixed networks
# (MIXED="128,2048" cells of each of the nine shared SWC cells) and distinct busyring trees (RAND,
# none by default: staged refuses more than 65 536 distinct rows). Then the built-in ring (256
# cells, 100 ms) on the CPU (all cores) and on the GPU, and --backend auto's choice there. Before
# that, the GPU tests of the solver and of the backend (CTEST_REGEX), and memcheck on the fused step.
#
# Usage, from the project root: bench/runs/gpu_fused_ab.sh [OUTDIR]
# Carry: .devlibs (scripts/devlibs.sh) and build-shared (mkdir -p build-shared && cp -r
# ../shared/data build-shared/). REPS=3 runs of each side. PARTS="tests memcheck ab ring" (the default: all).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_start "${1:-${OUT:-$PWD/build-gpu/out-ab}}" all || exit 1

parts_all="tests memcheck ab ring"
rc_tests=0
if gpu_part tests; then
echo "== GPU tests (solver, backend)"
gpu_ctest "$bld" "${CTEST_REGEX:-test_hines_gpu|test_backend_cuda}" "^[0-9]+: ok   ring"

fi
if gpu_part memcheck; then
echo "== memcheck, fused staged step"
gpu_sanitize memcheck 0 "$out/memcheck.log" "memcheck ring4 staged" "$cs" run models/validation/ring4.json --backend cuda \
  --solver staged --tfinal 5 --no-output -q

fi
if gpu_part ab; then
echo "== networks"
models=$out/models
$py bench/real_cells.py generate --out "$models" --alone 0 --mixed "${MIXED:-128,2048}" --largest 0 --big-compartments 0 \
  --tfinal 20 >"$out/generate.log" 2>&1 || { tail -5 "$out/generate.log"; exit 1; }
for n in ${RAND:-}; do
  $py - "$n" "$models/rand-$n.json" <<'EOF'
import json, sys
sys.path.insert(0, "bench")
from bench_cpu_vs_neuron import busyring_model
m = busyring_model(int(sys.argv[1]), 5, 20.0, [200.0, 20.0], [9, 3], 0)
m["populations"][0]["morphology"]["branch_probability"] = [1.0, 0.5]
m["run"].pop("threads", None)
json.dump(m, open(sys.argv[2], "w"))
EOF
done
ls "$models"/*.json | sed 's|.*/||' | tr '\n' ' '; echo

echo "== A/B: staged fused (1) against separate assembly (0); auto at the end"
echo "| network | side | run time [s] | cs/s |" >"$out/ab.md"
echo "|---|---|---:|---:|" >>"$out/ab.md"
for m in "$models"/mixed-*.json $(ls "$models"/rand-*.json 2>/dev/null); do
  name=$(basename "$m" .json)
  for rep in $(seq 1 "${REPS:-3}"); do
    for fused in 1 0; do
      line=$(CS_CUDA_FUSED=$fused timeout 200 "$cs" run "$m" --backend cuda --solver staged --no-output --tfinal 20 2>&1 \
             | grep -E "run time|error" | head -1)
      rt=$(echo "$line" | sed -n 's/.*run time \([0-9.e+-]*\) s: \([0-9.e+-]*\) compartment.*/\1 \2/p')
      echo "$name fused=$fused rep=$rep: ${rt:-$line}"
      echo "| $name | staged fused=$fused | ${rt% *} | ${rt#* } |" >>"$out/ab.md"
    done
  done
  line=$(timeout 300 "$cs" run "$m" --backend cuda --solver auto --no-output --tfinal 20 2>&1 | grep -E "run time|auto:|error" | head -3 | tr '\n' ' ')
  echo "$name auto: $line"
done
fi
if gpu_part ring; then
echo "== the built-in ring, 256 cells, 100 ms: CPU $(nproc) threads, GPU"
for rep in 1 2 3; do
  echo "cpu: $("$cs" run models/default.json --no-output --backend cpu 2>&1 | grep -E 'run time')"
  for v in staged auto; do
    echo "cuda $v: $("$cs" run models/default.json --no-output --backend cuda --solver $v 2>&1 | grep -E 'run time|error' | head -1)"
  done
  echo "cuda staged, CS_CUDA_FORK=0: $(CS_CUDA_FORK=0 "$cs" run models/default.json --no-output --backend cuda --solver staged 2>&1 | grep -E 'run time|error' | head -1)"
done
for rep in 1 2 3; do
  echo "backend auto: $("$cs" run models/default.json --no-output --backend auto 2>&1 | grep -E 'auto:|chosen|run time' | tr '\n' ' ')"
done
fi
echo "whole script: $(( $(date +%s) - t0 )) s"
exit $rc_tests
