#!/usr/bin/env bash
# The Python package (issue 21, docs/python.md): a fresh venv, `pip install .` (the C library
# built by the project's CMake through scikit-build-core; CUDA compiled when nvcc is found), then
# pytest tests/python: Python results against the installed CLI's HDF5 output, resumed runs,
# the solvers against SciPy/NumPy, errors. The venv takes its packages from PyPI.
# Usage: scripts/test-python.sh [pytest args]    (CABLESIM_TEST_PYTHON: the python3 to use)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh python
py=${CABLESIM_TEST_PYTHON:-/usr/bin/python3}
work=build-python
rm -rf "$work"
mkdir -p "$work"
"$py" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
start=$(date +%s)
"$work/venv/bin/python" -m pip install -q ".[test]"
echo "test-python: pip install . took $(( $(date +%s) - start )) s"
# run from outside the source tree: the tests import the installed package
cd "$work"
start=$(date +%s)
venv/bin/python -m pytest -q -rs ../tests/python "$@"
echo "test-python: pytest took $(( $(date +%s) - start )) s"
