#!/usr/bin/env python3
"""Where a GPU step's time goes, from a kernel timeline: the CSV of bench/trace/cupti_trace.c (or
Nsight Systems' cuda_gpu_trace report, the same columns). Steps are cut at a marker kernel that
runs once a step (e.g. k_detect). Prints the step period (median over the middle third of the
steps), the share of the step in which some kernel runs, each kernel's count and time per step,
and one middle step's kernels in start order: offset [us], duration [us], stream, name.

Usage: trace_steps.py TRACE.csv MARKER"""
import bisect, csv, sys, statistics, collections
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
starts = [r[0] for r in rows]


def step_rows(i):
    """The kernels that start in step i (between marks i and i + 1)."""
    return rows[bisect.bisect_left(starts, marks[i]):bisect.bisect_left(starts, marks[i + 1])]


def busy_union(seg, a, b):
    """[ns] of [a, b) in which some kernel of seg runs."""
    u, cs, ce = 0.0, None, None
    for s, e in sorted((s, min(s + d, b)) for s, d, _, _ in seg):
        if cs is None or s > ce:
            if cs is not None:
                u += ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    return u + (ce - cs if cs is not None else 0.0)


per = collections.defaultdict(list)
busy = []
for i in range(lo, hi):
    a, b = marks[i], marks[i + 1]
    seg = step_rows(i)
    names = collections.Counter()
    tsum = collections.defaultdict(float)
    for s, d, st, n in seg:
        names[n] += 1; tsum[n] += d
    for n in names:
        per[n].append((names[n], tsum[n]))
    busy.append(busy_union(seg, a, b) / (b - a))
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

# the steps over twice the median, over the whole run: how much of their excess the GPU sat idle
# (the host's work between launches: an epoch's boundary, a graph's capture) and how much it ran
# kernels (a step launched in order, e.g. the profile's timed steps); the slowest few
slow = [i for i in range(len(marks) - 1) if marks[i + 1] - marks[i] > 2 * med]
idle_x = run_x = 0.0
info = []
for i in slow:
    a, b = marks[i], marks[i + 1]
    seg = step_rows(i)
    u = busy_union(seg, a, b)
    excess = (b - a) - med
    idle = (b - a) - u
    idle_x += min(idle, excess)
    run_x += max(0.0, excess - idle)
    info.append((b - a, i, idle, len(seg), len({st for _, _, st, _ in seg}), seg[0][3] if seg else "-"))
print(f"steps over 2x the median: {len(slow)} of {len(marks) - 1}, their excess over the median "
      f"{(idle_x + run_x)/1e6:.2f} ms: GPU idle {idle_x/1e6:.2f} ms, kernels running {run_x/1e6:.2f} ms")
print("the slowest: step, period us, idle us, kernels, streams, first kernel")
for p, i, idle, nk, ns, first in sorted(info, reverse=True)[:8]:
    print(f"{i:6d} {p/1e3:9.1f} {idle/1e3:9.1f} {nk:5d} {ns:3d}  {first[:60]}")
# their spacing: a period (an epoch's steps, the graph's length) says which host work makes them
gaps = collections.Counter(b - a for a, b in zip(slow, slow[1:]))
print("slow steps' spacing (steps: count): " + ", ".join(f"{g}: {c}" for g, c in gaps.most_common(6)) +
      f"; first ones at {slow[:12]}")
