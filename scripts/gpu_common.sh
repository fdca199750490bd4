# shellcheck shell=bash
# shellcheck disable=SC2034 # root, out, py, bld, cs, ncu, model...: set here for the runners
# Sourced by the GPU runners (scripts/gpu_*.sh, bench/runs/gpu_*.sh) on the GPU machine: the shared
# preamble. Every runner starts in the project root and sources it, then calls gpu_setup.
#   gpu_setup OUTDIR [MODULES]
#                         root, out (created), the .devlibs libraries on the paths, $py (the first
#                         python3 that imports MODULES, default "h5py"; with MODULES "", none is
#                         required: $py is one with h5py or empty), the device and CPU into
#                         OUTDIR/device.txt; gpu_t0 [s] for gpu_stamp
#   gpu_pythons           the python3 candidates, one a line (PATH's first, then the machine's)
#   gpu_details           more about the machine: clocks, driver, nvcc, compute-sanitizer
#   gpu_configure [--src SRC] DIR [CMAKE ARGS...]
#                         configure DIR once (Release, sm_90, HDF5/cJSON/Check from .devlibs, the
#                         sources of SRC, default the project); the log is $out/build-<DIR>.log
#   gpu_build [--src SRC] DIR TARGET [CMAKE ARGS...]
#                         gpu_configure, then build TARGET ("all" for everything)
#   gpu_build_with_ref TARGET [CMAKE ARGS...]
#                         TARGET of this tree (build-gpu) and of the reference sources build-ref-src
#                         (scripts/gpu_auto_trial.sh --prepare REF) into build-gpu-ref, side by
#                         side (new, ref: their CLIs); fails with one line when build-ref-src is missing
#   gpu_ab_start OUTDIR   the A/B runners' start: gpu_setup, gpu_link_shared, the CLI of this tree
#                         and of build-ref-src (gpu_build_with_ref), CABLESIM_WISDOM=off (every
#                         run its own trial), morph (gpu_morph_dir)
#   gpu_start OUTDIR TARGET [CMAKE ARGS...]
#                         gpu_setup, gpu_link_shared, then TARGET built in bld (BUILD_DIR, default
#                         build-gpu); cs is its CLI, t0 [s] the start; prints the build's time
#   gpu_link_shared       ../shared from the carried build-shared when the machine has none (the
#                         tests find the SWC cells there)
#   gpu_ctest DIR REGEX [GREP]
#                         the tests of build DIR matching REGEX, verbose into $out/ctest.log; prints
#                         the summary, the failures and lines matching GREP; rc_tests gets the exit
#   gpu_sanitize TOOL SECONDS LOG LABEL COMMAND...
#                         COMMAND under compute-sanitizer TOOL (SECONDS: its time limit, 0 none),
#                         output into LOG; prints "LABEL: exit N | the tool's summary line"
#   gpu_ncu               $ncu: Nsight Compute's CLI; false (after "ncu not found: skipped") if none
#   gpu_busyring CELLS    $model: OUTDIR/busyring-CELLS.json, bench/bench_full_step.py's busyring network
#   gpu_stamp MESSAGE     "[runner +N s] MESSAGE", N seconds since gpu_setup
#   gpu_spike_sum H5 LABEL
#                         "LABEL: wall W s, spikes N, sum of spike times S ms" of a run's output
#                         file (equal sums across builds: the same spike times)
#   gpu_run_sum LABEL BINARY MODEL SOLVER [VAR=VALUE...]
#                         BINARY run MODEL --backend cuda --solver SOLVER with those variables
#                         (GPU_RUN_TIMEOUT seconds, default 300) into OUTDIR/run.h5, its output in
#                         OUTDIR/run.log; then gpu_spike_sum, or "LABEL: failed: ..." and status 1
#   gpu_ab_networks DIR BINARY
#                         the A/B runners' networks into DIR: the nine real cells × 2 048
#                         (mixed-18432.json; needs morph), the busyring trees rand-N and full-N
#                         for N = 1 024, 16 384 (20 ms) and rand-262144 (10 ms); allen: the
#                         carried 10 000-cell Allen network's config (.bench-allen/n10000), its
#                         mechanisms compiled by BINARY outside the timing (CABLESIM_CACHE_DIR
#                         DIR/catalogues), or empty; status 1 when a network could not be made
#   gpu_part NAME         true when section NAME runs: PARTS (a space-separated list), else all of
#                         the script's parts ($parts_all)
#   gpu_morph_dir         the nine SWC files: CS_MORPH_DIR, ../shared/data/morphologies,
#                         build-shared/data/morphologies (carried) or .dev/morph
gpu_pythons() {
  command -v python3
  printf '%s\n' /opt/torch/.venv/bin/python3 /usr/bin/python3 /usr/local/bin/python3
}

gpu_setup() {
  local modules=${2-h5py} m c
  m=${modules:-h5py}
  root=$PWD
  gpu_t0=$SECONDS
  mkdir -p "$1"
  out=$(cd "$1" && pwd) # absolute: runners cd elsewhere
  export PKG_CONFIG_PATH=$root/.devlibs/lib/pkgconfig
  export LD_LIBRARY_PATH=$root/.devlibs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  py=
  while read -r c; do
    [ -x "$c" ] && "$c" -c "import ${m// /, }" 2>/dev/null && { py=$c; break; }
  done < <(gpu_pythons)
  [ -n "$py" ] || [ -z "$modules" ] || { echo "no python3 with ${modules// / and }"; return 1; }
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/device.txt"
  echo "cores: $(nproc); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)" | tee -a "$out/device.txt"
}

gpu_details() {
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
  nvcc --version | tail -2
  compute-sanitizer --version | head -2
  nproc
}

gpu_configure() {
  local src=$root log
  [ "$1" = --src ] && { src=$2; shift 2; }
  log=$out/build-$(basename "$1").log
  [ -f "$1/CMakeCache.txt" ] && return 0
  cmake -S "$src" -B "$1" ${py:+-DCS_PYTHON=$py} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DHDF5_ROOT="$root/.devlibs" -DCMAKE_PREFIX_PATH="$root/.devlibs" -DCMAKE_BUILD_RPATH="$root/.devlibs/lib" \
    "${@:2}" >"$log" 2>&1 || { tail -30 "$log"; return 1; }
}

gpu_build() {
  local src=() dir target
  [ "$1" = --src ] && { src=(--src "$2"); shift 2; }
  dir=$1 target=$2
  shift 2
  gpu_configure "${src[@]}" "$dir" "$@" || return 1
  cmake --build "$dir" -j "$(nproc)" --target "$target" >>"$out/build-$(basename "$dir").log" 2>&1 \
    || { grep -E "error" -A3 "$out/build-$(basename "$dir").log" | head -40; return 1; }
}

gpu_build_with_ref() {
  local b1 b2
  [ -f "$root/build-ref-src/CMakeLists.txt" ] || {
    echo "no build-ref-src: run scripts/gpu_auto_trial.sh --prepare REF here and carry it"
    return 1
  }
  gpu_build "$root/build-gpu" "$@" & b1=$!
  gpu_build --src "$root/build-ref-src" "$root/build-gpu-ref" "$@" & b2=$!
  new=$root/build-gpu/cablesim ref=$root/build-gpu-ref/cablesim
  wait $b1 || { wait $b2; return 1; }
  wait $b2
}

gpu_ab_start() {
  gpu_setup "$1" || return 1
  gpu_link_shared
  gpu_build_with_ref cablesim_cli -DBUILD_TESTING=OFF || return 1
  export CABLESIM_WISDOM=off
  morph=$(gpu_morph_dir)
}

gpu_start() {
  local target=$2
  gpu_setup "$1" || return 1
  shift 2
  t0=$(date +%s)
  gpu_link_shared
  bld=${BUILD_DIR:-$root/build-gpu}
  gpu_build "$bld" "$target" "$@" || return 1
  cs=$bld/cablesim
  echo "build: $(( $(date +%s) - t0 )) s"
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

gpu_sanitize() {
  local tool=$1 secs=$2 log=$3 label=$4 rc
  shift 4
  timeout "$secs" compute-sanitizer --tool "$tool" --error-exitcode 9 "$@" >"$log" 2>&1
  rc=$?
  echo "$label: exit $rc | $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
}

gpu_ncu() {
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null) || { echo "ncu not found: skipped"; return 1; }
}

gpu_busyring() {
  model=$out/busyring-$1.json
  python3 "$root/bench/busyring_json.py" "$1" >"$model"
}

gpu_stamp() { echo "[$(basename "$0" .sh) +$((SECONDS - gpu_t0))s] $*"; }

gpu_spike_sum() {
  "$py" - "$1" "$2" <<'PY'
import sys
import h5py
import numpy as np
f = h5py.File(sys.argv[1], "r")
t = np.concatenate([f["spikes"][p]["timestamps"][()] for p in f["spikes"]]) if "spikes" in f else np.zeros(0)
print("%s: wall %.4f s, spikes %d, sum of spike times %.10f ms" % (sys.argv[2], float(f["metadata"].attrs["wall_seconds"]),
                                                                   len(t), np.sort(t).sum()))
PY
}

gpu_run_sum() {
  local label=$1 bin=$2 model=$3 solver=$4
  shift 4
  env "$@" timeout "${GPU_RUN_TIMEOUT:-300}" "$bin" run "$model" --backend cuda --solver "$solver" -o "$out/run.h5" \
    >"$out/run.log" 2>&1 || { echo "$label: failed: $(tail -1 "$out/run.log")"; return 1; }
  gpu_spike_sum "$out/run.h5" "$label"
}

gpu_ab_networks() {
  local dir=$1 bin=$2 n
  "$py" bench/real_cells.py generate --out "$dir" --morph-dir "$morph" --alone 0 --mixed 2048 --largest 0 \
    --big-compartments 0 --tfinal 20 --check-limit 0 >"$dir/generate.log" 2>&1 || { echo "real cells: generate failed"; return 1; }
  for n in 1024 16384; do
    "$py" bench/busyring_json.py --rand "$n" 20 >"$dir/rand-$n.json" || return 1
    "$py" bench/busyring_json.py "$n" 20 >"$dir/full-$n.json" || return 1
  done
  "$py" bench/busyring_json.py --rand 262144 10 >"$dir/rand-262144.json" || return 1
  allen=$root/.bench-allen/n10000/config_cs.json
  export CABLESIM_CACHE_DIR=$dir/catalogues
  if [ -f "$allen" ]; then
    timeout 300 "$bin" run "$allen" --backend cuda --tfinal 1 --no-output -q >"$dir/allen-warm.log" 2>&1 || { echo "Allen: warm-up failed"; allen=; }
  else
    allen=
  fi
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
