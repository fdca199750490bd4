#!/usr/bin/env bash
# On the GPU machine, in one call (issue 31, item 6): the large Allen network of
# bench/sonata_allen_network.py run by cablesim on the CPU (all cores) and on the GPU
# (--backend cuda, solver auto), beside the bmtk + NEURON figures measured where bmtk is (the
# development machine: the GPU machine has neither bmtk nor NEURON). Builds build-gpu when needed;
# the mechanisms_dir's catalogue is compiled (nvcc) on the first run and cached in
# $bld/catalogues, outside the timing.
#
# Usage, from the project root: bench/runs/gpu_sonata_allen.sh [OUTDIR]
# Carry: .devlibs (scripts/devlibs.sh) and the networks, written on the development machine with
#   PY=$(scripts/ref-venv.sh | tail -n 1)
#   $PY bench/sonata_allen_network.py build .bench-allen/n300l --cells 300 --tstop 1000  # the rate check
#   $PY bench/sonata_allen_network.py build .bench-allen/n1000 --cells 1000     # NEURON's speed
#   $PY bench/sonata_allen_network.py build .bench-allen/n10000 --cells 10000
#   /usr/bin/python3 bench/sonata_allen_bench.py neuron --net .bench-allen/n300l --ranks 1
#   /usr/bin/python3 bench/sonata_allen_bench.py neuron --net .bench-allen/n1000 --ranks 1,2
#   /usr/bin/python3 bench/sonata_allen_bench.py neuron-scaled --net .bench-allen/n10000 --from .bench-allen/n1000
# i.e. carry ".devlibs .bench-allen/n300l .bench-allen/n1000 .bench-allen/n10000" (26 MB with
# NEURON's compiled mechanisms and outputs: each folder's results.json holds the runs so far,
# NEURON's included).
# NETS: the network folders (default .bench-allen/n300l .bench-allen/n1000 .bench-allen/n10000).
# Prints each network's table (bench/sonata_allen_bench.py table); OUTDIR gets the tables, the
# results JSON and the runs' logs. Exit 1 when a rate check fails.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_start "${1:-${OUT:-$PWD/build-gpu/out-sonata-allen}}" cablesim_cli -DBUILD_TESTING=OFF || exit 1
cache=${CABLESIM_CACHE_DIR:-$bld/catalogues}
rc=0
for net in ${NETS:-.bench-allen/n300l .bench-allen/n1000 .bench-allen/n10000}; do
  name=$(basename "$net")
  [ -f "$net/config_cs.json" ] || { echo "$net: no network (see this script's header)"; rc=1; continue; }
  gpu_stamp "$name: cablesim CPU, $(nproc) threads"
  $py bench/sonata_allen_bench.py cablesim --net "$net" --cablesim "$cs" --backend cpu --threads "$(nproc)" \
    --cache "$cache" || rc=1
  gpu_stamp "$name: cablesim GPU"
  $py bench/sonata_allen_bench.py cablesim --net "$net" --cablesim "$cs" --backend cuda --label cablesim-cuda \
    --cache "$cache" || rc=1
  cp "$net"/results.json "$out/results-$name.json"
  cp "$net"/cablesim-*.log "$out/" 2>/dev/null
  for f in "$net"/cablesim-*.log; do mv "$out/$(basename "$f")" "$out/$name-$(basename "$f")"; done
  echo "## $name"
  $py bench/sonata_allen_bench.py table --net "$net" --md "$out/table-$name.md" --json "$out/table-$name.json" || rc=1
done
gpu_stamp "done, exit $rc"
exit $rc
