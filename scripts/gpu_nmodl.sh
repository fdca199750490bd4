#!/usr/bin/env bash
# Issue 20 on the GPU machine, in one call: build this tree with CUDA (sm_90), build the NMODL
# catalogue of tests/data/mod with nvcc, run the GPU-vs-CPU test of catalogue mechanisms
# (tests/test_nmodl_gpu.py), compute-sanitizer (memcheck) on a catalogue model, the CUDA backend
# test of the built-ins (test_backend_cuda), and the fused GPU step's speed on the built-in
# example before (the base commit, from build-base.tar) and after this branch, alternated in
# this same call; a network of 512 Allen cells (issue 27: ion concentrations) on the CPU and the
# GPU. Logs go to OUTDIR ($OUT on the lent machine).
#
# Here, first: scripts/devlibs.sh, and the base source for the speed comparison:
#   git archive BASE -o build-base.tar     (BASE: main before the nmodl branch, e.g. cb1819c)
# Then, on the device (carry .devlibs, build-shared and build-base.tar):
#   scripts/gpu_nmodl.sh [OUTDIR]
# Without build-base.tar the speed table has the branch's lines only. Stages (the second
# argument, default all; a device call is limited to 10 minutes, and build folders stay while
# the machine is warm): "build test sanitizer" then "speed", for instance:
#   scripts/gpu_nmodl.sh $OUT "build test sanitizer";  scripts/gpu_nmodl.sh $OUT speed
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
stages=" ${2:-build test sanitizer speed} "
has() { [[ "$stages" == *" $1 "* ]]; }
gpu_setup "${1:-${OUT:-$PWD/build-gpu-nmodl/out}}" || exit 1
gpu_link_shared
echo "python for the tests: $py"
build() { # SRC BUILD: everything, configured with the tests' python
  gpu_build --src "$1" "$2" all -DCABLESIM_ENABLE_MPI=OFF
}
bld=$root/build-gpu-nmodl
if has build || [ ! -x "$bld/cablesim" ]; then
  build "$root" "$bld" || exit 1
fi
# build-catalogue finds nvcc on PATH, else in $NVCC: the one CMake found
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$bld/CMakeCache.txt")
[ -n "$nvcc" ] && export NVCC=${NVCC:-$nvcc}
echo "nvcc for the catalogues: ${NVCC:-$(command -v nvcc)}"
if has test; then
echo "== catalogue mechanisms, GPU vs CPU (test_nmodl_gpu)"
"${py:-python3}" tests/test_nmodl_gpu.py --cablesim "$bld/cablesim" --source-dir "$root" --work-dir "$bld/nmodl-gpu" \
  2>&1 | tee "$out/test_nmodl_gpu.log" | tail -25
echo "== built-ins, GPU vs CPU (test_backend_cuda) and the GPU unit tests"
ctest --test-dir "$bld" -R "test_backend_cuda|test_hines_gpu|test_thomas_gpu" -j 3 >"$out/ctest-gpu.log" 2>&1
grep -E "tests passed|tests failed|Passed|Failed|Skipped" "$out/ctest-gpu.log" | tail -6
fi
if has sanitizer; then
[ -f "$bld/nmodl-gpu/nmodl.so" ] || "${py:-python3}" tests/test_nmodl_gpu.py --cablesim "$bld/cablesim" \
  --source-dir "$root" --work-dir "$bld/nmodl-gpu" >/dev/null 2>&1
echo "== compute-sanitizer memcheck on a catalogue model (na, kv, ions; Exp2Syn events)"
for m in mainen_na_kv exp2syn_ring bmtk/allen_net; do
  gpu_sanitize memcheck 0 "$out/sanitizer-${m##*/}.log" "memcheck $m" "$bld/cablesim" run "$bld/nmodl-gpu/$m.json" \
    --backend cuda --tfinal 10 -o "$out/san-${m##*/}.h5" -q
done
fi
has speed || exit 0
echo "== the fused GPU step on the built-in example: base commit vs this branch, alternated"
if [ -f "$root/build-base.tar" ] && [ ! -x "$root/build-gpu-base/cablesim" ]; then
  rm -rf "$root/build-base-src" && mkdir -p "$root/build-base-src" && tar -xf "$root/build-base.tar" -C "$root/build-base-src"
  build "$root/build-base-src" "$root/build-gpu-base" || { echo "base build failed"; tail -5 "$out/build-build-gpu-base.log"; }
fi
sed 's/"count": 256/"count": 4096/' models/default.json > "$bld/ring4096.json"
for rep in 1 2 3; do
  for v in interleaved staged auto; do
    for b in base branch; do
      exe=$bld/cablesim; [ $b = base ] && exe=$root/build-gpu-base/cablesim
      [ -x "$exe" ] || continue
      echo "$rep $v $b: $("$exe" run "$bld/ring4096.json" --no-output --tfinal 20 --backend cuda --solver $v 2>&1 | grep -E 'compartment-steps' | head -1)"
    done
  done
done | tee "$out/fused-speed.log"
echo "== catalogue mechanisms at scale: mainen_na_kv with 4096 cells, CPU (all cores) and GPU"
if [ -f "$bld/nmodl-gpu/mainen_na_kv.json" ]; then
  sed 's/"count": 1,/"count": 4096,/' "$bld/nmodl-gpu/mainen_na_kv.json" > "$bld/nmodl-gpu/na_kv4096.json"
  for b in cpu cuda; do
    echo "$b: $("$bld/cablesim" run "$bld/nmodl-gpu/na_kv4096.json" --no-output --tfinal 20 --backend $b 2>&1 | grep -E 'compartment-steps|error' | head -1)"
  done | tee "$out/catalogue-speed.log"
fi
echo "== a network of Allen cells (issue 27): 256 Scnn1a + 256 PV1 cells of bmtk's examples, calcium, 300 ms"
if [ -f "$bld/nmodl-gpu/bmtk/allen_net.json" ]; then
  sed 's/"count": 3,/"count": 256,/g' "$bld/nmodl-gpu/bmtk/allen_net.json" > "$bld/nmodl-gpu/bmtk/allen_net512.json"
  for b in cpu cuda; do
    echo "$b: $("$bld/cablesim" run "$bld/nmodl-gpu/bmtk/allen_net512.json" --no-output --backend $b 2>&1 | grep -E 'run time|compartment-steps|error' | head -1)"
  done | tee "$out/allen-speed.log"
fi
