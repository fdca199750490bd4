#!/usr/bin/env bash
# On the GPU machine (no network): build the Python package's libraries with CMake
# (-DCABLESIM_PYTHON=ON, CUDA for sm_90) and run tests/python against them in place
# (PYTHONPATH=python, CABLESIM_LIBRARY_DIR=the build), with the first python3 that has numpy and
# pytest: the backend="cuda" and CuPy tests run there when their packages are present.
# Usage, from the project root: scripts/gpu_python.sh [OUTDIR]   (carry ".devlibs": scripts/devlibs.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-${OUT:-$root/build-gpu-py/out}}
mkdir -p "$out"
export PKG_CONFIG_PATH=$root/.devlibs/lib/pkgconfig LD_LIBRARY_PATH=$root/.devlibs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bld=$root/build-gpu-py
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
py=""
for c in "$(command -v python3)" /opt/torch/.venv/bin/python3 /usr/bin/python3 /usr/local/bin/python3; do
  [ -x "$c" ] || continue
  echo "$c: $("$c" -c 'import sys, importlib.util as u; print(sys.version.split()[0], *[m for m in ("numpy", "scipy", "h5py", "pytest", "cupy", "torch", "matplotlib") if u.find_spec(m)])' 2>&1)"
  [ -z "$py" ] && "$c" -c 'import numpy, pytest' 2>/dev/null && py=$c
done
[ -n "$py" ] || { echo "no python3 with numpy and pytest"; exit 1; }
cmake -S . -B "$bld" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCABLESIM_PYTHON=ON \
  -DBUILD_TESTING=OFF -DCABLESIM_ENABLE_MPI=OFF -DHDF5_ROOT="$root/.devlibs" -DCMAKE_PREFIX_PATH="$root/.devlibs" \
  -DCMAKE_BUILD_RPATH="$root/.devlibs/lib" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
cmake --build "$bld" -j "$(nproc)" --target cablesim_cli >>"$out/build.log" 2>&1 || { grep -E "error" -A3 "$out/build.log" | head -40; exit 1; }
echo "== pytest tests/python with $py"
CABLESIM_LIBRARY_DIR=$bld PYTHONPATH=$root/python "$py" -m pytest -q -rs -p no:cacheprovider tests/python 2>&1 | tail -40
