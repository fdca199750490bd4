#!/usr/bin/env bash
# On the GPU machine (no network): build the Python package's libraries with CMake
# (-DCABLESIM_PYTHON=ON, CUDA for sm_90) and run tests/python against them in place
# (PYTHONPATH=python, CABLESIM_LIBRARY_DIR=the build), with the first python3 that has numpy and
# pytest: the backend="cuda" and CuPy tests run there when their packages are present.
# Usage, from the project root: scripts/gpu_python.sh [OUTDIR]   (carry ".devlibs": scripts/devlibs.sh)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu_common.sh
gpu_pythons | while read -r c; do
  [ -x "$c" ] || continue
  echo "$c: $("$c" -c 'import sys, importlib.util as u; print(sys.version.split()[0], *[m for m in ("numpy", "scipy", "h5py", "pytest", "cupy", "torch", "matplotlib") if u.find_spec(m)])' 2>&1)"
done
gpu_setup "${1:-${OUT:-$PWD/build-gpu-py/out}}" "numpy pytest" || exit 1
bld=$root/build-gpu-py
gpu_build "$bld" cablesim_cli -DCABLESIM_PYTHON=ON -DBUILD_TESTING=OFF -DCABLESIM_ENABLE_MPI=OFF || exit 1
echo "== pytest tests/python with $py"
CABLESIM_LIBRARY_DIR=$bld PYTHONPATH=$root/python "$py" -m pytest -q -rs -p no:cacheprovider tests/python 2>&1 | tail -40
