"""Print the busyring model of bench_cpu_vs_neuron.py as model JSON, for the GPU scripts that
profile one network (bench/runs/gpu_step_bytes.sh, scripts/gpu_step_profile.sh).

--rand: branch probabilities [1, 0.5], each cell its own random tree (the "rand" networks of
`bench/real_cells.py arbor`), and no thread count (the run's default).

Usage: python3 bench/busyring_json.py [--rand] CELLS [TFINAL_MS]   (depth 5, 1 ms by default)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cpu_vs_neuron import busyring_model  # noqa: E402

if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--rand"]
    rand = len(args) < len(sys.argv) - 1
    if len(args) not in (1, 2):
        sys.exit(__doc__.strip().splitlines()[-1])
    cells = int(args[0])
    tfinal = float(args[1]) if len(args) == 2 else 1.0  # [ms]
    model = busyring_model(cells, 5, tfinal, [200.0, 20.0], [9, 3], 1)
    if rand:
        model["populations"][0]["morphology"]["branch_probability"] = [1.0, 0.5]
        del model["run"]["threads"]
    print(json.dumps(model))
