#!/usr/bin/env bash
# DRAM traffic of the full step, measured (not modelled) with Nsight Compute on the GPU machine:
# the busyring network of bench/bench_full_step.py, 10 steps in the middle of a 1 ms run, every
# kernel's dram__bytes_read/write summed and divided by compartment-steps. For T7 of issue 4
# (bytes per compartment-step against the fewest the step needs). Needs build-gpu (run
# scripts/gpu_sim.sh first) and ncu on PATH. Usage: bench/runs/gpu_step_bytes.sh OUTDIR [CELLS [SOLVER]]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/gpu_common.sh
gpu_setup "${1:?OUTDIR}" "" || exit 1
cells=${2:-65536}; solver=${3:-auto}
gpu_ncu || exit 0
gpu_busyring "$cells"
csv="$out/ncu-$cells-$solver.csv"
# 40 steps of ~8 launches: skip the set-up and the first 20 steps, record 10 steps' kernels
"$ncu" --csv --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
  --launch-skip 170 --launch-count 80 build-gpu/cablesim run "$model" --no-output --backend cuda \
  --solver "$solver" -q >"$csv" 2>"$out/ncu-$cells-$solver.log" || { tail -5 "$out/ncu-$cells-$solver.log"; exit 0; }
comp=$(build-gpu/cablesim run "$model" --no-output --backend cuda --solver "$solver" --tfinal 0.05 | grep -oE "[0-9]+ compartments" | head -1 | cut -d' ' -f1)
python3 - "$csv" "$cells" "$solver" "$comp" <<'PY'
import csv, collections, sys
path, cells, solver, comp = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rows = [r for r in csv.reader(l for l in open(path) if l.startswith('"'))]
head, body = rows[0], rows[1:]
ix = {h: i for i, h in enumerate(head)}
per = collections.defaultdict(lambda: collections.Counter())
launches = collections.Counter()
for r in body:
    name = r[ix["Kernel Name"]].split("(")[0].split("<")[0].replace("void ", "")
    unit, val = r[ix["Metric Unit"]], float(r[ix["Metric Value"]].replace(",", ""))
    scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "ns": 1e-9, "nsecond": 1e-9, "us": 1e-6,
             "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3}.get(unit, 1)
    per[name][r[ix["Metric Name"]]] += val * scale
    if r[ix["Metric Name"]] == "gpu__time_duration.sum":
        launches[name] += 1
steps = max(launches.get("cs__k_step_cells", 0), launches.get("k_assemble", 0))
print(f"ncu: {cells} cells, solver {solver}: {steps} steps recorded")
tot_b = tot_t = 0.0
for name, m in sorted(per.items(), key=lambda kv: -kv[1]["dram__bytes_read.sum"] - kv[1]["dram__bytes_write.sum"]):
    b = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
    tot_b += b; tot_t += m["gpu__time_duration.sum"]
    print(f"  {name:28s} launches {launches[name]:4d}  read {m['dram__bytes_read.sum']/steps/1e6:9.2f} MB/step  "
          f"write {m['dram__bytes_write.sum']/steps/1e6:9.2f} MB/step  {m['gpu__time_duration.sum']/steps*1e6:8.1f} us/step")
print(f"  total: {tot_b/steps/1e6:.1f} MB and {tot_t/steps*1e6:.1f} us of kernel time per step "
      f"({tot_b/tot_t/1e9:.0f} GB/s); {comp} compartments: {tot_b/steps/comp:.1f} B per compartment-step")
PY
