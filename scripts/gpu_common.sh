# shellcheck shell=bash
# Sourced by the scripts/gpu_*.sh runners on the GPU machine: the shared preamble.
#   gpu_setup OUTDIR      root, out (created), the .devlibs libraries on the paths, $py (a python3
#                         with h5py), the device and CPU into OUTDIR/device.txt
#   gpu_build DIR TARGET [CMAKE ARGS...]
#                         configure DIR once (Release, sm_90, HDF5/cJSON/Check from .devlibs), then
#                         build TARGET ("all" for everything); the log goes to $out/build-<DIR>.log
#   gpu_link_shared       ../shared from the carried build-shared when the machine has none (the
#                         tests find the SWC cells there)
#   gpu_ctest DIR REGEX [GREP]
#                         the tests of build DIR matching REGEX, verbose into $out/ctest.log; prints
#                         the summary, the failures and lines matching GREP; rc_tests gets the exit
#   gpu_part NAME         true when section NAME runs: PARTS (a space-separated list), else all of
#                         the script's parts ($parts_all)
#   gpu_morph_dir         the nine SWC files: CS_MORPH_DIR, ../shared/data/morphologies,
#                         build-shared/data/morphologies (carried) or .dev/morph
gpu_setup() {
  root=$PWD
  mkdir -p "$1"
  out=$(cd "$1" && pwd) # absolute: runners cd elsewhere
  export PKG_CONFIG_PATH=$root/.devlibs/lib/pkgconfig
  export LD_LIBRARY_PATH=$root/.devlibs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  py=
  for c in "$(command -v python3)" /opt/torch/.venv/bin/python3 /usr/bin/python3; do
    [ -x "$c" ] && "$c" -c 'import h5py' 2>/dev/null && { py=$c; break; }
  done
  [ -n "$py" ] || { echo "no python3 with h5py"; return 1; }
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/device.txt"
  echo "cores: $(nproc); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)" | tee -a "$out/device.txt"
}

gpu_build() {
  local dir=$1 target=$2 log
  log=$out/build-$(basename "$1").log
  shift 2
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$dir" ${py:+-DCS_PYTHON=$py} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DHDF5_ROOT="$root/.devlibs" -DCMAKE_PREFIX_PATH="$root/.devlibs" -DCMAKE_BUILD_RPATH="$root/.devlibs/lib" \
      "$@" >"$log" 2>&1 || { tail -30 "$log"; return 1; }
  fi
  cmake --build "$dir" -j "$(nproc)" --target "$target" >>"$log" 2>&1 \
    || { grep -E "error" -A3 "$log" | head -40; return 1; }
}

gpu_link_shared() {
  [ -d "$root/../shared/data" ] || { [ -d "$root/build-shared" ] && ln -sfn "$root/build-shared" "$root/../shared"; }
  return 0
}

gpu_ctest() {
  local t0
  t0=$(date +%s)
  timeout "${CTEST_S:-400}" ctest --test-dir "$1" -V -R "$2" >"$out/ctest.log" 2>&1
  rc_tests=$?
  grep -E "tests passed|tests failed|\*\*\*Failed|Checks:|passed, |^[0-9]+: FAIL${3:+|$3}" "$out/ctest.log" | head -40
  grep -E "^[0-9]+:.*:F:" "$out/ctest.log" | head -20
  echo "tests: exit $rc_tests ($(( $(date +%s) - t0 )) s)"
}

gpu_morph_dir() {
  local d
  for d in ${CS_MORPH_DIR:-} "$root/../shared/data/morphologies" "$root/build-shared/data/morphologies" "$root/.dev/morph"; do
    [ -f "$d/tc200.CNG.swc" ] && { echo "$d"; return 0; }
  done
  echo "no morphologies: set CS_MORPH_DIR or carry build-shared (mkdir -p build-shared && cp -r ../shared/data build-shared/)" >&2
  return 1
}

gpu_part() { [[ " ${PARTS:-$parts_all} " == *" $1 "* ]]; }
