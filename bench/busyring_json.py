"""Print the busyring model of bench_cpu_vs_neuron.py as model JSON, for the GPU scripts that
profile one network (bench/runs/gpu_step_bytes.sh, scripts/gpu_step_profile.sh).

Usage: python3 bench/busyring_json.py CELLS [TFINAL_MS]   (depth 5, 1 ms by default)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cpu_vs_neuron import busyring_model  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1])
    cells = int(sys.argv[1])
    tfinal = float(sys.argv[2]) if len(sys.argv) == 3 else 1.0  # [ms]
    print(json.dumps(busyring_model(cells, 5, tfinal, [200.0, 20.0], [9, 3], 1)))
