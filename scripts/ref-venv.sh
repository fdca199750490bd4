#!/usr/bin/env bash
# The reference venv: bmtk, NEURON 9 and libsonata from PyPI, the references that the Allen-cell
# (issue 27) and SONATA-input (issue 31) tests compare against. Made once, then reused; prints the
# venv's python3 on its last line.
# Usage: py=$(scripts/ref-venv.sh | tail -n 1)   (CABLESIM_REF_VENV: where the venv lives)
set -euo pipefail
venv=${CABLESIM_REF_VENV:-$HOME/.cache/cablesim/ref-venv}
# Pinned: the versions the agreement figures in docs/ were measured with.
pins=(bmtk==1.2.0 neuron==9.0.2 libsonata==0.2.2)
if ! "$venv/bin/python" -c 'import bmtk, neuron, libsonata' >/dev/null 2>&1; then
  scripts/deps.sh python >&2
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >&2
  "$venv/bin/python" -m pip install -q "${pins[@]}" >&2
fi
echo "$venv/bin/python"
