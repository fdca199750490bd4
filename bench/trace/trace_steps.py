#!/usr/bin/env python3
"""Where a GPU step's time goes, from a kernel timeline: the CSV of bench/trace/cupti_trace.c (or
Nsight Systems' cuda_gpu_trace report, the same columns). Steps are cut at a marker kernel that
runs once a step (e.g. k_detect). Prints the step period (median over the middle third of the
steps), the share of the step in which some kernel runs, each kernel's count and time per step,
and one middle step's kernels in start order: offset [us], duration [us], stream, name.

Usage: trace_steps.py TRACE.csv MARKER"""
import csv, sys, statistics, collections
path, marker = sys.argv[1], sys.argv[2]
rows = []
with open(path) as f:
    lines = [l for l in f if l.strip()]
hdr_i = next(i for i, l in enumerate(lines) if l.startswith('"Start') or l.startswith('Start'))
rd = csv.DictReader(lines[hdr_i:])
for r in rd:
    name = r.get("Name", "")
    try:
        s = float(r["Start (ns)"]); d = float(r["Duration (ns)"])
    except (KeyError, ValueError):
        continue
    rows.append((s, d, r.get("Strm", ""), name[:90]))
rows.sort()
marks = [r[0] for r in rows if marker in r[3]]
print(f"kernels/ops {len(rows)}, marker '{marker}' {len(marks)}")
if len(marks) < 20:
    sys.exit(0)
lo, hi = len(marks) // 3, 2 * len(marks) // 3
periods = [marks[i + 1] - marks[i] for i in range(lo, hi)]
q = sorted(periods)
pc = lambda f: q[min(len(q) - 1, int(f * len(q)))] / 1e3
print(f"step period (marker to marker), steps {lo}..{hi}: median {statistics.median(periods)/1e3:.1f} us, "
      f"mean {statistics.mean(periods)/1e3:.1f}, min {q[0]/1e3:.1f}, 10/90/99 % {pc(.1):.1f} / {pc(.9):.1f} / {pc(.99):.1f}")
allp = [marks[i + 1] - marks[i] for i in range(len(marks) - 1)]
print(f"all {len(allp)} periods: sum {sum(allp)/1e6:.2f} ms, of which above 2x the median {sum(p for p in allp if p > 2 * statistics.median(periods))/1e6:.2f} ms")
per = collections.defaultdict(list)
busy = []
for i in range(lo, hi):
    a, b = marks[i], marks[i + 1]
    seg = [r for r in rows if a <= r[0] < b]
    names = collections.Counter()
    tsum = collections.defaultdict(float)
    for s, d, st, n in seg:
        names[n] += 1; tsum[n] += d
    for n in names:
        per[n].append((names[n], tsum[n]))
    iv = sorted((s, min(s + d, b)) for s, d, _, _ in seg)
    u, cs, ce = 0.0, None, None
    for s, e in iv:
        if cs is None or s > ce:
            if cs is not None: u += ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    if cs is not None: u += ce - cs
    busy.append(u / (b - a))
print(f"busy union (some op running) median {100*statistics.median(busy):.0f} % of the step")
nst = hi - lo
tab = sorted(per.items(), key=lambda kv: -sum(t for _, t in kv[1]))
print("name | per step: count, mean total us")
for n, v in tab[:45]:
    print(f"{sum(c for c, _ in v)/nst:6.2f} {sum(t for _, t in v)/nst/1e3:8.2f}  {n}")
med = statistics.median(periods)
m = min(range(lo, hi), key=lambda i: abs(marks[i + 1] - marks[i] - med))  # a typical step
a, b = marks[m], marks[m + 1]
print(f"one step ({(b-a)/1e3:.1f} us): start_us dur_us stream name")
for s, d, st, n in rows:
    if a <= s < b:
        print(f"{(s-a)/1e3:8.2f} {d/1e3:7.2f} {st:>4} {n}")
