#!/usr/bin/env bash
# Check for (and, as root on Debian, install) what cablesim needs to build and test.
# Usage: scripts/deps.sh [build|test|fuzz]  build: compiler, CMake, HDF5, cJSON, OpenMP
#                                          test:  also Check, LAPACK (block-tridiagonal reference), python3-neuron, h5py, matplotlib, libsonata
#                                          fuzz:  build + clang with libFuzzer and its OpenMP
#                                          mpi:   also OpenMPI and parallel HDF5 (scripts/test-mpi.sh)
#                                          python: build + python3-venv (scripts/test-python.sh)
set -euo pipefail
what=${1:-build}
pkgs=(build-essential cmake pkg-config libhdf5-dev libcjson-dev python3) # python3: the NMODL compiler (nmodl/)
[ "$what" = test ] && pkgs+=(check liblapack-dev python3-neuron neuron-dev python3-h5py python3-matplotlib python3-numpy python3-jsonschema python3-pip)
# mpi (issue 18): OpenMPI and the HDF5 built against it, for an MPI build (scripts/test-mpi.sh);
# libhdf5-openmpi-dev installs beside libhdf5-dev (serial builds keep the serial library)
[ "$what" = mpi ] && pkgs+=(check python3-h5py python3-numpy openmpi-bin libopenmpi-dev libhdf5-openmpi-dev)
[ "$what" = fuzz ] && pkgs+=(clang libclang-rt-dev libomp-dev)
# python (issue 21): a venv for `pip install .` (scripts/test-python.sh); the rest comes from PyPI
[ "$what" = python ] && pkgs+=(python3-venv)

missing=()
for p in "${pkgs[@]}"; do
  [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == *"install ok installed"* ]] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "deps: missing Debian packages: ${missing[*]}" >&2
    echo "deps: install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
if [ "$what" = test ]; then
  # libsonata (PyPI) is the reference reader of our output files; the test that uses it
  # reports a skip when it cannot be installed (no network).
  if ! /usr/bin/python3 -c 'import libsonata' 2>/dev/null; then
    /usr/bin/python3 -m pip install -q --break-system-packages libsonata >/dev/null 2>&1 \
      || echo "deps: note: could not install libsonata from PyPI; its reader checks will be skipped"
  fi
fi
echo "deps: ok ($what)"
