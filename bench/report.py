#!/usr/bin/python3
"""Build the performance report (docs/performance.md and docs/perf-*.png) from the measured results.

Reads, relative to the repository root:
  bench/results-thomas.md      Thomas batch solvers (markdown tables under '### ...' headings)
  bench/results-hines.md       Hines batch solvers (idem)
  bench/results-full-step.json the full simulation step (bench/bench_full_step.py --out)
  bench/README.md, bench/NOTES-cpu.md  the CPU backend against NEURON on the development machine
and writes docs/performance.md plus four plots. Nothing is measured here: every figure in the report
is read or computed from those files, so re-running the benchmarks and then this script refreshes it.

Usage: /usr/bin/python3 bench/report.py [--root DIR]"""
import argparse
import json
import os
import re
import sys

from report_tables import parse_markdown_tables, num, find_table, as_dicts, search, g3, sp, sci, md_table  # noqa: E402 (bench/ is on sys.path)

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FEWEST_BYTES_PER_CS = 48  # [B] per compartment-step, double: d0, b0, C/dt, u read (4×8 B), v read + written (2×8 B)
FEWEST_IDENTICAL = 16     # [B] the same when every cell is identical: the constants are one cell's, v read + written
T8_LIMIT = 250            # [B] of device memory per compartment (target T8)
T8_COMPARTMENTS = 500e6   # compartments that must fit on one H200 (target T8)


# --------------------------------------------------------------------------------------------- Thomas
def thomas(root, docs):
    text = open(os.path.join(root, "bench/results-thomas.md"), encoding="utf-8").read()
    tables = parse_markdown_tables(text)
    info = {
        "device": search(r"^Device: (.+)$", text, "Thomas device line", flags=re.M).rstrip("."),
        "copy_gbs": float(search(r"cudaMemcpy[^*]*\*\*([0-9.]+) GB/s\*\*", text, "Thomas copy bandwidth")),
        "copy_how": search(r"cudaMemcpy \(([^)]*)\)[^(]*\(([^)]*)\)", text, "copy method", 2),
        "checks_failed": int(search(r"Checks failed: (\d+)", text, "Thomas checks")),
    }
    m = re.search(r"(NVIDIA [A-Z]\d+) \(([^,]*),\s*(\d+) MiB", text)
    info["board"] = f"{m.group(1)} {m.group(2)}, {m.group(3)} MiB" if m else info["device"].split(",")[0]
    grid = {}
    for prec in ("double", "float"):
        for r in as_dicts(find_table(tables, prec, "median time")):
            n, b = int(num(r["n"])), int(num(r["batch"]))
            ours = {k: num(r[k]) for k in ("flat", "interleaved", "warp", "warp_staged", "auto")}
            grid[(prec, n, b)] = {
                **ours,
                "strided": num(r["gtsv2StridedBatch"]), "inter": num(r["gtsvInterleavedBatch"]),
                "cpu_serial": num(r["CPU serial"]), "cpu_omp": num(r["CPU omp"]),
                "picks": r["auto picks"], "best_gbs": num(r["best ours: GB/s"]),
                "best_pct": num(r["% of copy"]), "err": r["worst rel err"],
                "best_ours": min(v for v in ours.values() if v is not None),
            }
    var = as_dicts(find_table(tables, "Variable-size"))

    bw = info["copy_gbs"] * 1e9  # [B/s]

    def pct_copy(prec, n, b, ms):
        return 100 * 5 * b * n * (8 if prec == "double" else 4) / (ms * 1e-3) / bw

    # T1
    g = grid[("double", 512, 256000)]
    t1 = {"auto": g["auto"], "inter": g["inter"], "frac": g["auto"] / g["inter"],
          "pct": pct_copy("double", 512, 256000, g["auto"])}
    # T2: auto against the faster cuSPARSE routine at every point (auto is what T2 asks for)
    t2 = {}
    for prec in ("double", "float"):
        pts = [(min(v["strided"], v["inter"]) / v["auto"], min(v["strided"], v["inter"]) / v["best_ours"], n, b)
               for (p, n, b), v in grid.items() if p == prec]
        worst = min(pts)
        t2[prec] = {"min_auto": worst[0], "at": (worst[2], worst[3]), "min_best": min(x[1] for x in pts),
                    "max_auto": max(x[0] for x in pts), "slower": sum(1 for x in pts if x[0] < 1), "points": len(pts)}

    # plot: n = 512, both precisions
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.0), sharey=True)
    for ax, prec in zip(axes, ("double", "float")):
        bs = sorted(b for (p, n, b) in grid if p == prec and n == 512)
        size = 8 if prec == "double" else 4
        ax.loglog(bs, [grid[(prec, 512, b)]["auto"] for b in bs], "o-", lw=2, label="cablesim auto")
        ax.loglog(bs, [grid[(prec, 512, b)]["inter"] for b in bs], "s--", label="cuSPARSE gtsvInterleavedBatch")
        ax.loglog(bs, [grid[(prec, 512, b)]["strided"] for b in bs], "^--", label="cuSPARSE gtsv2StridedBatch")
        cpu = [(b, grid[(prec, 512, b)]["cpu_omp"]) for b in bs if grid[(prec, 512, b)]["cpu_omp"]]
        if cpu:
            ax.loglog(*zip(*cpu), "d:", color="gray", label="CPU Thomas, 16 OpenMP threads")
        ax.loglog(bs, [5 * b * 512 * size / bw * 1e3 for b in bs], "k:", lw=1,
                  label=f"compulsory bytes at copy bandwidth ({info['copy_gbs']:.0f} GB/s)")
        ax.set_title(f"Thomas, n = 512, {prec}")
        ax.set_xlabel("batch [systems]")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("time per batch solve [ms] (median)")
    fig.suptitle(f"Thomas batch solvers on {info['device'].split(',')[0]}", fontsize=11)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=8, loc="lower center", ncol=3)
    fig.savefig(os.path.join(docs, "perf-thomas.png"), dpi=110)
    plt.close(fig)

    # compact table
    rows = []
    for n in (64, 128, 256, 512):
        for b in (256, 2560, 25600, 256000):
            d, f = grid[("double", n, b)], grid[("float", n, b)]
            row = [n, f"{b:,}".replace(",", " ")]
            for v in (d, f):
                best_cu = min(v["strided"], v["inter"])
                row += [g3(v["auto"]), g3(best_cu), f"{best_cu / v['auto']:.2f}×", f"{v['best_pct']:.0f} %"]
            rows.append(row)
    tab = md_table(["n", "batch", "double auto [ms]", "best cuSPARSE [ms]", "speed-up", "% of copy",
                    "float auto [ms]", "best cuSPARSE [ms]", "speed-up", "% of copy"], rows)
    vrows = [[r["precision"], f"{int(num(r['batch'])):,}".replace(",", " "), r["n"], r["var_cp [ms]"],
              r["var_ncp [ms]"], f"{num(r['var_ncp [ms]']) / num(r['var_cp [ms]']):.1f}×",
              r["CP GB/s (real bytes)"], r["NCP GB/s (real bytes)"]] for r in var]
    vtab = md_table(["precision", "batch", "n", "CP [ms]", "NCP [ms]", "NCP / CP", "CP GB/s (real bytes)",
                     "NCP GB/s (real bytes)"], vrows, ["---", "---:", "---", "---:", "---:", "---:", "---:", "---:"])
    d512 = grid[("double", 512, 25600)]
    section = f"""## 1. Thomas batch (tridiagonal systems)

Source: `bench/results-thomas.md` (`bench/bench_thomas.cu`). Device: {info['device']}. Copy bandwidth
in the same run: **{info['copy_gbs']:.0f} GB/s** ({info['copy_how']}). The % of copy counts the
compulsory bytes, 5·batch·n·sizeof(T) (a, b, c, d read, x written), over the time of the best of our
variants. Every timed result was checked against the CPU Thomas reference in double (checks failed:
{info['checks_failed']}).

`auto` is the variant a caller gets (`cs_thomas_gpu_choose`); "best cuSPARSE" is the faster of
`gtsv2StridedBatch` and `gtsvInterleavedBatch` at that point; speed-up = best cuSPARSE / auto.

{tab}

![Thomas: time per solve against batch size, n = 512](perf-thomas.png)

At 256 systems every solver is latency-bound (a few µs including the launch), so the % of copy is low
for everyone. At 256 000 systems our solvers reach {min(v['best_pct'] for (p, n, b), v in grid.items() if b == 256000):.0f}–{max(v['best_pct'] for (p, n, b), v in grid.items() if b == 256000):.0f} % of the copy
bandwidth. CPU (double, 16 OpenMP threads): {g3(d512['cpu_omp'])} ms at 25 600 × 512
against {g3(d512['auto'])} ms for `auto`.

**Variable-size batch** (n uniform in 256–512, padded to 512): Computing Padding (CP: every thread runs
all 512 rows) against No Computing Padding (NCP: each thread stops at its own n).

{vtab}

CP wins: its warps stay converged and coalesced, while NCP's diverge at their ends (see
`bench/NOTES.md`, "Thomas GPU").
"""
    return info, grid, t1, t2, section


# --------------------------------------------------------------------------------------------- Hines
HINES_VARIANTS = ["flat", "interleaved", "block_interleaved BS=64", "block_shared", "variable", "fine", "warp", "staged"]
FINE_GRAINED = ["fine", "warp", "staged"]  # several threads per cell
PER_CELL = ["flat", "interleaved", "block_interleaved BS=64", "block_shared", "variable"]
CLASSES = ["small-low", "small-high", "medium-low", "medium-high", "big-low", "big-high"]


def mid_sizes(root):
    """The sizes between 256 and 25 600 cells (bench_hines --mid), where the planner's load model
    decides two-way sections: staged, staged one-way and auto per class and size, and the mixed
    batch; empty when the file is missing."""
    path = os.path.join(root, "bench/results-hines-mid.md")
    if not os.path.exists(path):
        return ""
    rows = as_dicts(parse_markdown_tables(open(path, encoding="utf-8").read())[0])
    by = {}
    for r in rows:
        by.setdefault((r["class"], int(r["cells"])), {})[r["config"]] = (num(r["solve [µs]"]), r["variant"])
    out = []
    for (cls, cells), v in by.items():
        st, ow, au = v.get("staged"), v.get("staged one-way"), v.get("auto")
        out.append([cls, sp(cells), g3(st[0]) if st else "-", g3(ow[0]) if ow else "-",
                    f"{ow[0] / st[0]:.2f}" if st and ow else "-", f"{g3(au[0])} ({au[1]})" if au else "-"])
    tab = md_table(["class", "cells", "staged [µs]", "staged one-way [µs]", "one-way / staged", "auto [µs] (variant)"], out)
    return f"""
**Between 256 and 25 600 cells** (`bench/results-hines-mid.md`, `bench_hines --mid`, double). Two-way
sections take one warp per cell: the planner allows them only where every warp runs at once, and
weighs them against one-way plans by a model of the schedulers' load (`cs__staged_pick`; fitted to
the 2 560-cell batches, `bench/NOTES.md`, "Session 9"). Mixed plans keep the rule of at most 4 cells per
multiprocessor per structure: there the model, which sees one launch, made 2 560 and 6 400 mixed cells
slower.

{tab}
"""


def same_size(root):
    """The seed's variable batch (bench_hines --same-size): cells of 600 rows and six morphologies,
    mixed, against each morphology in a uniform batch. Returns (rows per batch size, section text);
    ([], "") when the file is missing."""
    path = os.path.join(root, "bench/results-hines-same-size.md")
    if not os.path.exists(path):
        return [], ""
    rows = as_dicts(parse_markdown_tables(open(path, encoding="utf-8").read())[0])
    by, ratio = {}, {}
    for r in rows:
        if r["config"] != "staged":
            continue
        if r["solve [µs]"].startswith("ratio"):  # the bench's own ratios, of unrounded times
            ratio[(int(r["cells"]), r["class"])] = float(r["solve [µs]"].split()[1])
            continue
        by.setdefault(int(r["cells"]), {})[r["class"]] = num(r["solve [µs]"])
    out, res = [], []
    for cells, v in sorted(by.items()):
        uni = {int(re.search(r"(\d+) branches", k).group(1)): t for k, t in v.items() if k.startswith("same-size uniform")}
        mixed = v["same-size mixed"]
        fastest = min(uni.values())
        mean = sum(uni.values()) / len(uni)
        slow = max(uni, key=uni.get)
        r_fast = ratio.get((cells, "same-size mixed/fastest uniform"), mixed / fastest)
        r_mean = ratio.get((cells, "same-size mixed/mean uniform"), mixed / mean)
        res.append({"cells": cells, "fastest": r_fast, "mean": r_mean, "slowest": (slow, uni[slow]),
                    "spread": uni[slow] / fastest})
        out.append([sp(cells), g3(mixed)] + [g3(uni[b]) for b in sorted(uni)] + [f"{r_fast:.2f}", f"{r_mean:.2f}"])
    worst = max(res, key=lambda x: x["mean"])
    branches = sorted(int(re.search(r"(\d+) branches", k).group(1)) for k in next(iter(by.values())) if k.startswith("same-size uniform"))
    tab = md_table(["cells", "mixed [µs]"] + [f"{b} branches [µs]" for b in branches] + ["mixed / fastest", "mixed / mean"], out)
    return res, f"""
**Same size, different morphologies** (`bench/results-hines-same-size.md`, `bench_hines --same-size`,
staged, double): the seed's own variable-batch experiment (its Fig. 4.9, "multi" against "mono"). Cells
of 600 rows with 8 to 300 branches, mixed round-robin, against each morphology alone in a uniform batch
of as many cells. The morphologies differ in speed by up to {max(x['spread'] for x in res):.1f}× on their own (few branches: long
schedules); the mixed batch runs near their mean, except at {sp(worst['cells'])} cells (mixed / mean
{worst['mean']:.2f}; its slowest morphology alone: {worst['slowest'][0]} branches, {g3(worst['slowest'][1])} µs): there each
morphology's cells run two-way, one warp per cell, ~19 warps per multiprocessor, and the schedulers' load
bounds the batch, as it bounds the six-class batch at that size. Session 10 let structures that are each
two-way share launches only while all their warps run at once: 1 024 cells went from 42.3 µs (one
one-way launch) to 17.7 (`bench/NOTES.md`, "Session 10").

{tab}
"""


def hines(root, docs):
    text = open(os.path.join(root, "bench/results-hines.md"), encoding="utf-8").read()
    tables = parse_markdown_tables(text)
    head = search(r"^## Hines GPU benchmark: (.+)$", text, "Hines heading", flags=re.M)
    info = {"heading": head,
            "copy_gbs": float(search(r"device-to-device copy ([0-9.]+) GB/s", head, "Hines copy bandwidth")),
            "method": "Solve time: " + search(r"^Solve = (.+?)\.", text, "Hines method", flags=re.M)}
    uni = {}
    for r in as_dicts(find_table(tables, "Uniform batches, double")):
        uni[(r["class"], int(num(r["cells"])), r["config"])] = r
    mixed_rows = as_dicts(find_table(tables, "Mixed batches"))
    mixed, last, alone = {}, None, {}
    for r in mixed_rows:
        if r["class"] == "mixed/alone":  # the mixed batch against its own cells as six uniform batches
            alone[int(num(r["cells"]))] = float(search(r"ratio ([0-9.]+)", r["solve [µs]"], "mixed/alone ratio"))
        if r["class"] == "mixed":
            last = r
        elif r["class"].startswith("uniform") and last is not None and last["config"] == r["config"]:
            mixed[(int(num(last["cells"])), r["config"])] = (num(last["solve [µs]"]), num(r["solve [µs]"]),
                                                             int(num(r["cells"])))
            last = None
    sweep = as_dicts(find_table(tables, "BS sweep"))

    def t(cls, cells, cfg):
        r = uni.get((cls, cells, cfg))
        return num(r["solve [µs]"]) if r else None

    def pct(cls, cells, cfg):
        r = uni.get((cls, cells, cfg))
        return num(r["of copy"]) if r else None

    cells_all = sorted({c for (_, c, _) in uni})
    # the class with every variant at every size (flat is left out at 256000 for most classes)
    full = [c for c in CLASSES if all(t(c, n, v) is not None for n in cells_all for v in HINES_VARIANTS)]
    pcls = "medium-high" if "medium-high" in full else (full[0] if full else "medium-high")

    # T3: medium-high, 256000 cells, best % of copy over every variant and shape (uniform table + sweep)
    cand = [(pct("medium-high", 256000, cfg), cfg, t("medium-high", 256000, cfg))
            for (c, n, cfg) in uni if c == "medium-high" and n == 256000 and not cfg.startswith("CPU")
            and pct("medium-high", 256000, cfg) is not None]
    cand += [(num(r["of copy"]), r["config"], num(r["solve [µs]"])) for r in sweep
             if r["class"] == "medium-high" and int(num(r["cells"])) == 256000]
    best_pct, best_cfg, best_us = max(cand, key=lambda x: (x[0], -x[2]))
    best_bw = max(num(uni[k]["eff. BW [GB/s]"]) for k in uni if k[0] == "medium-high" and k[1] == 256000
                  and not k[2].startswith("CPU"))
    t3 = {"pct": best_pct, "cfg": best_cfg, "us": best_us, "gbs": best_bw}

    # T4: 256 cells, the faster fine-grained solver (fine or warp) against one thread per cell
    t4 = []
    for c in CLASSES:
        fine, fv = min((t(c, 256, v), v) for v in FINE_GRAINED if t(c, 256, v) is not None)
        best_pc = min((t(c, 256, v), v) for v in PER_CELL if t(c, 256, v) is not None)
        fine_warp = min(t(c, 256, v) for v in ("fine", "warp") if t(c, 256, v) is not None)
        t4.append({"class": c, "fine": fine, "fv": fv, "flat": t(c, 256, "flat"), "vs_flat": t(c, 256, "flat") / fine,
                   "vs_inter": t(c, 256, "interleaved") / fine, "best_pc": best_pc, "vs_best": best_pc[0] / fine,
                   "vs_best_fine_warp": best_pc[0] / fine_warp})

    # T5: mixed vs uniform, per batch size: same variant (fine) and best of each side
    t5 = []
    for n in sorted({k[0] for k in mixed}):
        cfgs = [k[1] for k in mixed if k[0] == n and k[1] != "auto"]
        bm = min((mixed[(n, c)][0], c) for c in cfgs)
        bu = min((mixed[(n, c)][1], c) for c in cfgs)
        f, w = mixed.get((n, "fine")), mixed.get((n, "warp"))
        t5.append({"cells": n, "ucells": mixed[(n, cfgs[0])][2], "fine": f[0] / f[1] if f else None,
                   "warp": w[0] / w[1] if w else None, "best": bm[0] / bu[0], "bm": bm, "bu": bu,
                   "alone": alone.get(n),
                   # staged's % of copy per class at the largest size, and big-low at 256 cells with
                   # and without two-way sections, for the T5 remark
                   "pct": {c: pct(c, 256000, "staged") for c in CLASSES},
                   "big_low_256": (t("big-low", 256, "staged"), t("big-low", 256, "staged one-way"))})

    # plot: solve time per variant for the plotted class
    fig, ax = plt.subplots(figsize=(8, 5))
    style = {"flat": "v-", "interleaved": "s-", "block_interleaved BS=64": "D-", "block_shared": "P-",
             "variable": "x-", "fine": "o-", "warp": "*-", "staged": "d-"}
    for v in HINES_VARIANTS:
        pts = [(n, t(pcls, n, v)) for n in cells_all if t(pcls, n, v) is not None]
        ax.loglog(*zip(*pts), style[v], lw=2 if v in FINE_GRAINED else 1.3, label=f"GPU {v}")
    for v, st in (("CPU serial", "k:"), ("CPU OpenMP", "k--")):
        pts = [(n, t(pcls, n, v)) for n in cells_all if t(pcls, n, v) is not None]
        ax.loglog(*zip(*pts), st, label=v + (" (16 threads)" if "OpenMP" in v else " (1 thread)"))
    rows_per_cell = None
    m = re.search(r"256000 medium-high cells = ([0-9.]+) M rows", open(os.path.join(root, "bench/NOTES.md"),
                                                                      encoding="utf-8").read())
    if m:
        rows_per_cell = float(m.group(1)) * 1e6 / 256000
        floor = [(n, n * rows_per_cell * 32 / (info["copy_gbs"] * 1e9) * 1e6) for n in cells_all]
        ax.loglog(*zip(*floor), color="gray", lw=1, ls="-.",
                  label=f"compulsory bytes (32 B/row) at copy bandwidth ({info['copy_gbs']:.0f} GB/s)")
    ax.set_xlabel("batch [cells]")
    ax.set_ylabel("solve time [µs] (median of 20)")
    ax.set_title(f"Hines batch solvers, {pcls} class, double, {head.split('(')[0].strip()}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(docs, "perf-hines.png"), dpi=110)
    plt.close(fig)

    # compact table: best GPU variant per class and size, with % of copy
    rows = []
    for c in CLASSES:
        row = [c]
        for n in cells_all:
            best = min((t(c, n, v), v) for v in HINES_VARIANTS if t(c, n, v) is not None)
            row.append(f"{g3(best[0])} ({best[1].split(' ')[0]}, {pct(c, n, best[1]):.0f} %)")
        omp = t(c, 256000, "CPU OpenMP")
        best256k = min(t(c, 256000, v) for v in HINES_VARIANTS if t(c, 256000, v) is not None)
        row.append(f"{omp / best256k:.0f}×")
        rows.append(row)
    tab = md_table(["class"] + [f"{n:,} cells".replace(",", " ") for n in cells_all] + ["× OpenMP at 256 000"],
                   rows, ["---"] + ["---:"] * (len(cells_all) + 1))
    bi = [num(r["solve [µs]"]) for r in sweep if r["variant"] == "block_interleaved"]
    mix_rows = [[f"{x['cells']:,}".replace(",", " "), f"{x['ucells']:,}".replace(",", " "),
                 f"{x['fine']:.2f}", f"{x['warp']:.2f}" if x["warp"] else "–",
                 f"{g3(x['bm'][0])} ({x['bm'][1].split(' ')[0]})",
                 f"{g3(x['bu'][0])} ({x['bu'][1].split(' ')[0]})", f"{x['best']:.2f}",
                 f"{x['alone']:.2f}" if x["alone"] is not None else "–"] for x in t5]
    mtab = md_table(["mixed cells", "uniform cells (same rows)", "fine: mixed / uniform", "warp: mixed / uniform",
                     "best mixed [µs]", "best uniform [µs]", "best / best",
                     "staged: mixed / its cells as six uniform batches"], mix_rows)
    big = max(cells_all)
    best_big = min((t(pcls, big, v), v) for v in HINES_VARIANTS if t(pcls, big, v) is not None)
    mid = mid_sizes(root)
    same_rows, same = same_size(root)
    section = f"""## 2. Hines batch (branched cells)

Source: `bench/results-hines.md` (`bench/bench_hines.cu`). Device: {head}. {info['method']}; the %
of copy counts d, u, rhs read and rhs written (32 B per row in double) plus the parent index once per
structure. Random trees with the sizes and branch counts of the six classes of Table 4.1.

Fastest GPU variant per class and batch, double: solve time [µs] (variant, % of copy bandwidth).

{tab}

![Hines: solve time per variant against batch size, {pcls}](perf-hines.png)

Small batches are latency-bound: the one-thread-per-cell kernels then leave most of the GPU idle, and
the fine-grained solvers (several threads per cell: `fine` with a CUDA block per pack of cells, `warp`
with a warp per cell, `staged` with 8 to 32 lanes per cell) are the fastest. `staged` (a warp takes 4,
2 or 1 cells of one structure, each lane one row per step of a list schedule on independent subtrees;
the inputs stream through shared memory, the eliminated rows stay in shared memory and, for the first
24 steps, in registers: only the compulsory bytes move; rows stored in the schedule's order, so a
step's rows are one contiguous run; low trees re-rooted at their centre; each structure of a mixed
batch gets its own shape and launch, the launches running at once; for small batches, long unbranched
sections eliminated from both ends at once) is the fastest below ~1000 cells per multiprocessor in
every class, and above wherever its lanes are at least half busy; there small-low (30 % busy) is
left to `warp`, which `auto` picks. At {big:,} {pcls} cells the fastest is {best_big[1]} ({g3(best_big[0])} µs, {pct(pcls, big, best_big[1]):.0f} % of
the copy bandwidth); the Block-Interleaved block-size sweep (BS = 32…512) is flat
({g3(min(bi))}–{g3(max(bi))} µs).

**Mixed batches** (the six classes round-robin) against a uniform medium-high batch with the same number
of compartments (T5), and, in the last column, against the mixed batch's own cells solved as six uniform
batches one after another (what mixing itself costs, apart from the classes' own speeds):

{mtab}
{mid}{same}"""
    return info, t3, t4, t5, same_rows, section, pcls


# --------------------------------------------------------------------------------------------- full step
STEP_PHASES = ["event delivery", "mechanism currents", "assembly", "solve", "state update",
               "threshold detection", "sampling"]


def full_step(root, docs, copy_gbs):
    res = json.load(open(os.path.join(root, "bench/results-full-step.json"), encoding="utf-8"))
    src = open(os.path.join(root, "bench/bench_full_step.py"), encoding="utf-8").read()
    reps = int(search(r'"--reps", type=int, default=(\d+)', src, "repeat count"))
    runs = [r for r in res["runs"] if "error" not in r]
    for r in runs:
        r["steps"] = round(r["cs_per_s"] * r["seconds"] / r["compartments"])
        # a fair throughput for every simulator: cablesim's compartment count of the same network
        r["cs_same"] = r.get("cablesim_compartments", r["compartments"]) * r["steps"] / r["seconds"]
    gpu = sorted([r for r in runs if r["sim"] == "cablesim cuda"], key=lambda r: r["cells"])
    unfused = sorted([r for r in runs if r["sim"] == "cablesim cuda (warp)"], key=lambda r: r["cells"])
    cpu = sorted([r for r in runs if r["sim"] == "cablesim cpu"], key=lambda r: r["cells"])

    def ref(sim, threads):
        return next(r for r in runs if r["sim"] == sim and r["threads"] == threads)

    ncores = res["machine"]["cores"]
    n1, nN, a1, aN = ref("NEURON", 1), ref("NEURON", ncores), ref("Arbor", 1), ref("Arbor", ncores)
    omp = cpu[-1]
    big = [r for r in gpu if r["cells"] >= 65536]
    t6 = [{"cells": r["cells"], "cs": r["cs_same"], "n1": r["cs_same"] / n1["cs_same"],
           "nN": r["cs_same"] / nN["cs_same"], "aN": r["cs_same"] / aN["cs_same"],
           "omp": r["cs_same"] / omp["cs_same"]} for r in big]
    # T7: DRAM bytes measured with Nsight Compute (bench/runs/gpu_step_bytes.sh), and the time of a step
    sb = res.get("step_bytes", {})
    t7 = {"cells": sb.get("cells"), "fused": sb.get("auto (fused)"), "unfused": sb.get("fine (unfused)"),
          "time": []}
    for r in big:
        step_s = sum(r["phases"].get(p, 0.0) for p in STEP_PHASES)
        per_cs = step_s / (r["compartments"] * r["steps"])  # [s] per compartment-step
        t7["time"].append({"cells": r["cells"], "per_cs": per_cs, "copy_bytes": per_cs * copy_gbs * 1e9})
    largest = res.get("largest_run") or gpu[-1]  # a separate largest-network run, when recorded
    t8 = {"bpc": largest["bytes_per_compartment"], "cells": largest["cells"], "comp": largest["compartments"],
          "mib": largest["device_mib"], "need_gb": T8_COMPARTMENTS * largest["bytes_per_compartment"] / 1e9,
          "host_gb": largest.get("host_peak_rss_gb"), "cs": largest.get("cs_per_s")}

    # plot: throughput against network size
    fig, ax = plt.subplots(figsize=(9, 5.2))
    ax.loglog([r["cells"] for r in gpu], [r["cs_same"] for r in gpu], "o-", lw=2.2, color="C0",
              label=f"cablesim cuda ({res['machine'].get('gpu', 'GPU')})")
    if unfused:
        ax.loglog([r["cells"] for r in unfused], [r["cs_same"] for r in unfused], "o--", lw=1.2, color="C0",
                  alpha=0.6, label="cablesim cuda, unfused (assembly kernel + warp solver)")
    ax.loglog([r["cells"] for r in cpu], [r["cs_same"] for r in cpu], "s-", lw=2, color="C1",
              label=f"cablesim cpu (OpenMP, {omp['threads']} threads)")
    xs = [min(r["cells"] for r in runs) * 0.8, max(r["cells"] for r in runs) * 1.25]
    for r, color, ls in ((n1, "C2", "--"), (nN, "C2", "-"), (a1, "C3", "--"), (aN, "C3", "-")):
        ax.hlines(r["cs_same"], *xs, colors=color, linestyles=ls, lw=1.4,
                  label=f"{r['sim']} {r['threads']} thread{'s' if r['threads'] > 1 else ''} "
                        f"(measured at {r['cells']} cells)")
    ax.hlines(1000 * n1["cs_same"], *xs, colors="gray", linestyles=":", lw=1.4,
              label="T6 target: 1000× NEURON 1 thread")
    ax.hlines(copy_gbs * 1e9 / FEWEST_BYTES_PER_CS, *xs, colors="k", linestyles="-.", lw=1,
              label=f"bound: {FEWEST_BYTES_PER_CS} B per compartment-step at {copy_gbs:.0f} GB/s")
    ax.set_xlim(*xs)
    ax.set_xlabel(f"network size [busyring cells] ({gpu[0]['compartments'] // gpu[0]['cells']} compartments per cell)")
    ax.set_ylabel("compartment-steps per second [1/s]")
    ax.set_title(f"Full simulation step, busyring depth {res['depth']}, {res['tfinal']:g} ms "
                 f"({gpu[0]['steps']} steps of 0.025 ms)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(os.path.join(docs, "perf-full-step.png"), dpi=110)
    plt.close(fig)

    # plot: per-phase share of the GPU step
    fig, ax = plt.subplots(figsize=(9, 4.8))
    labels = [f"{r['cells']:,}\n({r.get('solver', '?')})".replace(",", " ") for r in gpu]
    bottom = [0.0] * len(gpu)
    for i, p in enumerate(STEP_PHASES):
        share = [100 * r["phases"].get(p, 0.0) / sum(r["phases"].get(q, 0.0) for q in STEP_PHASES) for r in gpu]
        ax.bar(labels, share, bottom=bottom, color=f"C{i}", label=p)
        for j, s in enumerate(share):
            if s >= 6:
                ax.text(j, bottom[j] + s / 2, f"{s:.0f} %", ha="center", va="center", fontsize=8, color="white")
        bottom = [b + s for b, s in zip(bottom, share)]
    ax.set_ylim(0, 100)
    ax.set_ylabel("share of the step time [%] (CUDA events)")
    ax.set_xlabel("network size [cells] (Hines solver used)")
    ax.set_title(f"cablesim cuda: per-phase share of a step ({res['machine'].get('gpu', 'GPU')})", fontsize=10)
    h, lab = ax.get_legend_handles_labels()
    ax.legend(h[::-1], lab[::-1], fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(os.path.join(docs, "perf-phases.png"), dpi=110)
    plt.close(fig)

    # tables
    rows = []
    for r in gpu + unfused + cpu + [n1, nN, a1, aN]:
        comp = f"{r['compartments']:,}".replace(",", " ")
        if "cablesim_compartments" in r:
            comp += f" (cablesim: {r['cablesim_compartments']:,})".replace(",", " ")
        rows.append([r["sim"], f"{r['cells']:,}".replace(",", " "), r["threads"], comp, g3(r["seconds"]),
                     sci(r["cs_same"]), f"{r['cs_same'] / n1['cs_same']:.1f}×", r["spikes"],
                     g3(r.get("bytes_per_compartment")) if "bytes_per_compartment" in r else "–"])
    tab = md_table(["simulator", "cells", "threads", "compartments", "run [s]", "compartment-steps/s",
                    "vs NEURON 1 thread", "spikes", "device B / compartment"], rows,
                   ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"])
    prow = []
    for r in gpu:
        tot = sum(r["phases"].get(q, 0.0) for q in STEP_PHASES)
        prow.append([f"{r['cells']:,}".replace(",", " "), r.get("solver", "?"), g3(tot),
                     g3(tot / r["steps"] * 1e3)] +
                    [f"{100 * r['phases'].get(p, 0.0) / tot:.0f} %" for p in ("mechanism currents", "assembly",
                                                                                "solve")] +
                    [f"{100 * sum(r['phases'].get(p, 0.0) for p in STEP_PHASES if p not in ('mechanism currents', 'assembly', 'solve')) / tot:.0f} %"])
    ptab = md_table(["cells", "solver", "step phases [s]", "per step [ms]", "currents", "assembly", "solve",
                     "other"], prow, ["---:", "---", "---:", "---:", "---:", "---:", "---:", "---:"])
    spikes = sorted({r["spikes"] for r in runs})
    section = f"""## 3. The full simulation step

Source: `bench/results-full-step.json` (`bench/bench_full_step.py`). Machine: {res['machine'].get('gpu')}
with a {ncores}-core {res['machine']['cpu']} host. Model: the busyring network of
`bench/bench_cpu_vs_neuron.py` (depth {res['depth']}: a `hh` soma and {2 ** (res['depth'] + 1) - 2} passive dendrites,
{gpu[0]['compartments'] // gpu[0]['cells']} compartments per cell, a ring of `expsyn` connections), {res['tfinal']:g} ms of simulated time in {gpu[0]['steps']} fixed
steps of 0.025 ms. Each figure is the median of {reps} runs (`--reps` default of the script; the JSON
does not record it) of the time loop alone (set-up excluded). NEURON and Arbor ran at {n1['cells']} cells
only (a 1-core NEURON run of 65 536 cells would take an hour); the comparisons at larger sizes assume their
compartment-steps per second do not grow with the network, which was not measured. Arbor, the unfused
GPU rows and the CPU rows below 65 536 cells come from earlier device calls on the same machine kind (the
code they ran has not changed since); the rest from one call. Every run produced
the same spike count ({', '.join(map(str, spikes))}).

**Compartment count.** cablesim and NEURON count {n1['compartments']:,} compartments for the
{n1['cells']}-cell network; Arbor counts {a1['compartments']:,} (it has no zero-area root and tip nodes).
So that every simulator is credited for the same network, compartment-steps per second are computed
here with cablesim's count for all of them (for Arbor: `cablesim_compartments` × steps / run time;
with Arbor's own count its figures are {sci(a1['cs_per_s'])} and {sci(aN['cs_per_s'])},
{100 * (1 - a1['compartments'] / a1['cablesim_compartments']):.0f} % lower).

{tab}

![Full step: compartment-steps per second against network size](perf-full-step.png)

The GPU's throughput grows with the network until about 65 536 cells ({sci(gpu[-2]['cs_same'] if len(gpu) > 1 else gpu[-1]['cs_same'])}
cs/s) and is nearly flat after that ({sci(gpu[-1]['cs_same'])} at {sp(gpu[-1]['cells'])} cells). From 120 cells
per multiprocessor (15 840 on this GPU) `auto` runs the **fused step**: one thread per cell assembles each
row's diagonal and right-hand side as its Hines sweep reaches it (`cs_hines_gpu_step_internal_d`), and
identical cells share one copy of their constant arrays and of the pivots of rows whose subtree carries no
current; below that, the warp solver after a separate assembly kernel is faster. The dashed line is that
unfused path at every size ({sci(unfused[-1]['cs_same']) if unfused else '–'} at {sp(unfused[-1]['cells']) if unfused else '–'} cells).
At small networks the per-step costs that do not grow with the network (kernel launches, event delivery,
threshold detection, sampling) take a large share.

**Per-phase breakdown** of the GPU step (phase times from CUDA events around each phase, on sampled
steps scaled to all steps; `src/backends/cuda/cs_backend_cuda.c`). Assembly and solve together take most of the step at
every size from 4 096 cells; the Hines solver `auto` picked is in the second column. With the fused step
(`interleaved`) the assembly's time is inside the solve's.

{ptab}

![Per-phase share of the GPU step](perf-phases.png)
""".replace(f"{n1['compartments']:,}", f"{n1['compartments']:,}".replace(",", " ")).replace(
        f"{a1['compartments']:,}", f"{a1['compartments']:,}".replace(",", " "))
    n7 = next((r for r in runs if r["sim"] == "NEURON (call 7)" and r["threads"] == 1), n1)
    g7 = next((r for r in runs if r["sim"] == "cablesim cuda (call 7)"), big[0])
    return {"n1": n1, "nN": nN, "a1": a1, "aN": aN, "omp": omp, "gpu": gpu, "ncores": ncores, "n7": n7, "g7": g7,
            "cpu": res["machine"]["cpu"]}, t6, t7, t8, section


# --------------------------------------------------------------------------------------------- CPU
def cpu_section(root):
    readme = open(os.path.join(root, "bench/README.md"), encoding="utf-8").read()
    tables = parse_markdown_tables(readme)
    nt = [t for t in tables if "run" in t["header"] and "vs NEURON 1 thread" in t["header"]]
    at = [t for t in tables if "Arbor" in t["heading"] and "compartments" in t["header"]
          and any(r[0] == "Arbor 1 thread" for r in t["rows"])]  # not the GPU busyring tables
    arb = None
    if at:
        d = {r[0]: r for r in at[-1]["rows"]}
        arb = (at[-1]["heading"], num(d["Arbor 1 thread"][3]), num(d["cablesim --threads 1"][3]))
    lines = ["## 4. The CPU backend on the development machine", "",
             "Measured with `bench/bench_cpu_vs_neuron.py` on the 2-core AMD EPYC development VM (shared, so",
             "single runs spread by about ±10 %): the busyring network of 128 cells, 43 392 compartments, 4000",
             "steps, median of 3–5 runs; one thread each, both simulators in the same run. Every run kept in",
             "`bench/README.md`, in order; what changed between them is in `bench/NOTES-cpu.md`.", ""]
    rows = []
    for t in nt:  # chronological: the script appends
        d = {r[0]: r for r in t["rows"]}
        n, c = num(d["NEURON 1 thread"][2]), num(d["cablesim --threads 1"][2])
        rows.append([t["heading"].split(",")[0], sci(n), sci(c), f"{c / n:.2f}×"])
    lines.append(md_table(["run", "NEURON 1 thread [cs/s]", "cablesim 1 thread [cs/s]", "cablesim / NEURON"],
                          rows, ["---", "---:", "---:", "---:"]))
    if arb:
        lines += ["", f"Against Arbor 0.12.2 on the same machine (README, \"Arbor\"; each simulator's own "
                      f"compartment count): Arbor 1 thread {sci(arb[1])} cs/s, cablesim 1 thread {sci(arb[2])} "
                      f"cs/s ({arb[2] / arb[1]:.1f}×)."]
    lines += ["", "The runs, in order: the first end-to-end version (serial Hines solve, latency-bound: one",
              "division chain per row); 8 cells swept in lockstep and pas folded into the matrix; then the",
              "solve writing the next step's passive system so that assembly visits only the rows with",
              "mechanisms (NOTES-cpu §2–§4).", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- report
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args()
    docs = os.path.join(a.root, "docs")
    os.makedirs(docs, exist_ok=True)

    tinfo, grid, t1, t2, s_thomas = thomas(a.root, docs)
    hinfo, t3, t4, t5, t5_same, s_hines, pcls = hines(a.root, docs)
    copy_gbs = tinfo["copy_gbs"]
    fs, t6, t7, t8, s_full = full_step(a.root, docs, copy_gbs)
    s_cpu = cpu_section(a.root)

    def ok(b):
        return "**met**" if b else "**not met**"

    t4_min = min(t4, key=lambda x: x["vs_flat"])
    t4_minbest = min(t4, key=lambda x: x["vs_best"])
    t5_ok = [x for x in t5 if x["best"] <= 1.25]
    t5_big = max(t5, key=lambda x: x["cells"])  # the largest mixed batch, for the T5 remark
    n1, n7, g7 = fs["n1"], fs["n7"], fs["g7"]
    t7f, t7u = t7["fused"], t7["unfused"]
    t1_ok = t1["frac"] <= 0.5 and t1["pct"] >= 85
    t2_ok = all(v["slower"] == 0 for v in t2.values())
    t6_ok = all(x["n1"] >= 1000 and x["nN"] >= 10 and x["aN"] >= 10 and x["omp"] >= 10 for x in t6)
    bound_cs = copy_gbs * 1e9 / FEWEST_BYTES_PER_CS
    targets = [
        ["T1", "Thomas 256 000 × 512 double: ≤ ½ the time of `gtsvInterleavedBatch`, ≥ 85 % of copy",
         f"`auto` {t1['auto']} ms vs {t1['inter']} ms = {t1['frac']:.2f} of the time "
         f"({1 / t1['frac']:.2f}× faster); {t1['pct']:.0f} % of copy ({copy_gbs:.0f} GB/s)",
         ok(t1_ok), ""],
        ["T2", "Thomas, every grid point, float and double: never slower than the faster cuSPARSE routine, "
               "with `auto`",
         "smallest margin of `auto` over the faster cuSPARSE routine: double "
         f"{t2['double']['min_auto']:.2f}× (n = {t2['double']['at'][0]}, batch {t2['double']['at'][1]}), float "
         f"{t2['float']['min_auto']:.2f}× (n = {t2['float']['at'][0]}, batch {t2['float']['at'][1]}); "
         f"slower at {t2['double']['slower'] + t2['float']['slower']} of "
         f"{t2['double']['points'] + t2['float']['points']} points",
         ok(t2_ok), ""],
        ["T3", "Hines 256 000 medium-high cells: ≥ 80 % of copy",
         f"best {t3['pct']:.0f} % ({t3['cfg']}, {g3(t3['us'])} µs, {t3['gbs']:.0f} GB/s of "
         f"{hinfo['copy_gbs']:.0f})",
         ok(t3["pct"] >= 80),
         "One thread per cell (interleaved) re-reads the cell from HBM in its second sweep: a 7.6 KB cell "
         "does not stay in L2 with 2 GB in flight, so ~64 B/row move for 32 compulsory (≤ 50 %). The warp "
         "and staged solvers move only the compulsory bytes. staged reached 63 % with 8 warps per SM "
         "(session 4) and 68-70 % with the first 24 steps' eliminated rows in registers (12 warps, "
         "session 5). Session 6: Nsight Compute showed the L2's tag lookups as the busiest unit (81 %): "
         "each of a step's 8 rows was its own 32-byte request. Stored in schedule order, a step's rows are "
         "one run (tag lookups 52 %); with branch-free steps and groups handed out by a counter, 88-92 % "
         "(`bench/NOTES.md`, \"Session 6\")."],
        ["T4", "Hines 256 cells, any class: fine ≥ 5× one thread per cell",
         f"fine-grained (the fastest of fine, warp and staged: several threads per cell) vs flat (one thread per "
         f"cell): {min(x['vs_flat'] for x in t4):.1f}× ({t4_min['class']}) to {max(x['vs_flat'] for x in t4):.1f}×; vs "
         f"interleaved {min(x['vs_inter'] for x in t4):.1f}–{max(x['vs_inter'] for x in t4):.1f}×; vs the fastest "
         f"one-thread-per-cell layout {t4_minbest['vs_best']:.1f}× ({t4_minbest['class']}) or more",
         ok(min(x["vs_flat"] for x in t4) >= 5) + (" (vs flat and vs the fastest one-thread-per-cell layout)"
                                                   if t4_minbest["vs_best"] >= 5 else " (vs flat)"),
         f"Against the fastest one-thread-per-cell layout (`block_shared`, rhs in shared memory), fine and warp alone "
         f"reach {min(x['vs_best_fine_warp'] for x in t4):.1f}× "
         f"({min(t4, key=lambda x: x['vs_best_fine_warp'])['class']}); staged (8-32 lanes per cell, two-way sections "
         f"at small batches since session 8) takes every class to {t4_minbest['vs_best']:.1f}× or more; see the "
         f"table below."],
        ["T5", "Hines mixed batch ≤ 1.25× a uniform batch of the same compartments",
         "best mixed / best uniform: " + ", ".join(f"{x['best']:.2f} ({x['cells']:,} cells)".replace(",", " ")
                                                   for x in t5)
         + ("; the seed's experiment (cells of one size, 600 rows, six morphologies; `--same-size`), mixed / "
            "fastest uniform: " + ", ".join(f"{x['fastest']:.2f}" for x in t5_same) + ", mixed / mean uniform: "
            + ", ".join(f"{x['mean']:.2f}" for x in t5_same) + " (" + ", ".join(sp(x["cells"]) for x in t5_same)
            + " cells)" if t5_same else ""),
         ok(len(t5_ok) == len(t5)) + (f" (met at {', '.join(format(x['cells'], ',').replace(',', ' ') for x in t5_ok)} only)"
                                      if t5_ok and len(t5_ok) < len(t5) else ""),
         f"The mixed batch costs about what its own cells cost as six uniform batches "
         f"(mixed / alone {t5_big['alone']:.2f} at {sp(t5_big['cells'])} cells, last column of the mixed table): "
         f"mixing itself is cheap. The gap is the classes' speed per compartment against medium-high's "
         f"{t5_big['pct']['medium-high']:.0f} % of copy: big-low (a third of the rows) {t5_big['pct']['big-low']:.0f} %, "
         f"big-high {t5_big['pct']['big-high']:.0f} %, small-low {t5_big['pct']['small-low']:.0f} %. "
         "big-low is bound by what stays on chip between the sweeps: 24 cells of 695 rows per SM, each a chain "
         "of 2 × 108 dependent steps. At small batches a batch waits for its longest schedule: 6.5 µs + 0.21 µs "
         "per step fits every class at 256 cells (one-way: big-low 108 steps, medium-high 28). Two-way sections "
         "(session 8: long unbranched sections, cut into pieces, each eliminated from both ends at once, one "
         "cell per warp) cut big-low to 32 steps and big-high to 30, medium-high to 18: 256 big-low cells "
         f"{t5_big['big_low_256'][1]:.1f} → {t5_big['big_low_256'][0]:.1f} µs, and the ratio at 256 cells from 2.22 "
         "(session 7) to the figure above. Between (2 560 cells) the schedulers' load is the bound: the mixed "
         "batch runs its six structures two-way, one warp per cell, ~19 warps per multiprocessor; every other "
         "choice of shapes measured was slower (sessions 9 and 10). At large batches the on-chip bound stays, and "
         "two-way sections, which need 32 lanes per cell, do not pay; reading the schedule from device memory to "
         "free shared memory for more warps was slower (session 10). `bench/NOTES.md`, \"Session 10\", sums up "
         "what meeting T5 needs."],
        ["T6", "Full step, ≥ 65 536 cells: ≥ 1000× NEURON 1 core; ≥ 10× NEURON all cores, Arbor all cores, "
               "our OpenMP all cores",
         "; ".join(f"{sp(x['cells'])} cells: {sci(x['cs'])} cs/s = **{x['n1']:.0f}×** NEURON 1 thread, "
                   f"{x['nN']:.0f}× NEURON {fs['ncores']} threads, {x['aN']:.0f}× Arbor {fs['ncores']} threads, "
                   f"{x['omp']:.1f}× cablesim OpenMP" for x in t6)
         + f" (OpenMP: {fs['omp']['threads']} threads at its largest size, {sp(fs['omp']['cells'])} cells; "
           f"NEURON and Arbor: at {sp(n1['cells'])} cells; all with cablesim's compartment count)",
         ok(t6_ok) + (" (met at " + ", ".join(sp(x["cells"]) for x in t6 if x["n1"] >= 1000) + " cells; the three 10× parts: met)"
                      if not t6_ok and any(x["n1"] >= 1000 for x in t6) else " (the three 10× parts: met)"),
         f"NEURON on one core of this Xeon ran {sci(n1['cs_same'])} cs/s in this run; in another call of the "
         f"same session, on another lent machine of this kind, {sci(n7['cs_same'])} (5.2e7 to 7.3e7 in session 2), "
         f"where the same fused step at 65 536 cells ({sci(g7['cs_same'])} cs/s) made "
         f"{g7['cs_same'] / n7['cs_same']:.0f}×: the 1000× part sits within NEURON's machine-to-machine spread. "
         f"1000× needs {sci(1000 * n1['cs_same'])} cs/s, "
         f"{100 * 1000 * n1['cs_same'] / bound_cs:.0f} % of the bound of a distinct-cell step at copy bandwidth "
         f"({FEWEST_BYTES_PER_CS} B per compartment-step → {sci(bound_cs)} cs/s). At 65 536 cells (~500 threads "
         "per multiprocessor) the step kernel issues ~175 instructions per row at 0.35 per cycle per scheduler "
         "and moves its bytes at ~50 % of copy bandwidth: more loads in flight did not help "
         "(`bench/NOTES.md`, \"Full step\")."],
        ["T7", "Report bytes moved per compartment-step against the fewest the step needs",
         f"measured DRAM traffic (Nsight Compute, every kernel of a step, {sp(t7['cells'])} cells): fused step "
         f"**{t7f['bytes_per_compartment_step']:.1f} B** per compartment-step "
         f"(`cs__k_step_cells` {t7f['kernels']['cs__k_step_cells']['read_mb']:.0f} MB read + "
         f"{t7f['kernels']['cs__k_step_cells']['write_mb']:.0f} MB written per step; the other five kernels "
         f"{t7f['total_mb_per_step'] - t7f['kernels']['cs__k_step_cells']['read_mb'] - t7f['kernels']['cs__k_step_cells']['write_mb']:.0f} MB); "
         f"unfused (assembly kernel + fine solver, session 2) {t7u['bytes_per_compartment_step']:.1f} B. Fewest: "
         f"{FEWEST_BYTES_PER_CS} B for distinct cells (constants read, v read and written), {FEWEST_IDENTICAL} B "
         f"for identical cells → fused **{t7f['bytes_per_compartment_step'] / FEWEST_IDENTICAL:.1f}×** the fewest "
         f"for this network (unfused {t7u['bytes_per_compartment_step'] / FEWEST_IDENTICAL:.1f}×)",
         "reported; fused",
         "What is left above the fewest: the backward sweep's eliminated right-hand sides (8 B written, 8 B read "
         "back) and the pivots of the rows whose subtree carries a current (the soma's path); identical cells "
         "share one cell's row flags. Keeping a cell's rows on chip across both sweeps would remove the "
         "intermediates but leaves too few cells per multiprocessor (`bench/NOTES.md`)."],
        ["T8", "≤ 250 B of device memory per compartment (≥ 500 M compartments on one H200); solvers need no "
               "workspace; report the largest network run",
         f"{t8['bpc']:.0f} B per compartment at {t8['cells']:,} cells; largest run {t8['cells']:,} cells = "
         f"{t8['comp'] / 1e6:.1f} M compartments ({t8['mib']:.0f} MiB); 500 M compartments × {t8['bpc']:.0f} B = "
         f"{t8['need_gb']:.1f} GB (the H200 has {sp(int(num(tinfo['board'].split(', ')[1])))} MiB = "
         f"{num(tinfo['board'].split(', ')[1]) * 2**20 / 1e9:.0f} GB). Thomas and Hines GPU solvers: no "
         "workspace beyond the system (cuSPARSE `gtsv2StridedBatch`: m·(4n + 2048) elements)".replace(",", " "),
         ok(t8["bpc"] <= T8_LIMIT and t8["comp"] >= T8_COMPARTMENTS),
         (f"The largest network ran: {t8['comp'] / 1e6:.1f} M compartments at {t8['cs']:.3g} compartment-steps/s; "
          f"host peak memory during set-up {t8['host_gb']:.0f} GB (of 128 GB), which limits the size before the GPU does. "
          "Measured before the fused step; with it, identical cells take 42 B per compartment (section 3)."
          if t8.get("host_gb") else
          "The largest run is set by the script's size list, not by memory; host-side set-up memory was not measured.")],
    ]
    ttab = md_table(["#", "target", "measured", "status", "why not / remarks"], targets,
                    ["---", "---", "---", "---", "---"])
    # P1-P4 (issue 17) come from runs this script does not read: kept by hand in bench/targets-p.md
    with open(os.path.join(a.root, "bench", "targets-p.md"), encoding="utf-8") as f:
        prows = [l.rstrip("\n") for l in f if l.startswith("| P")]
    if prows:
        ttab = ttab.rstrip("\n") + "\n" + "\n".join(prows)

    # MPI (issue 18): kept by hand in bench/results-mpi.md, from its "## 5." heading on
    s_mpi = ""
    mpi_path = os.path.join(a.root, "bench", "results-mpi.md")
    if os.path.exists(mpi_path):
        with open(mpi_path, encoding="utf-8") as f:
            text = f.read()
        if "## 5." in text:
            s_mpi = text[text.index("## 5."):]
    # sections kept by hand, each a file of bench/ from its "## N." heading on: the Allen cell with
    # calcium (issue 27), distinct and large cells (issue 28), the bmtk networks (issue 31) and
    # one system over several GPUs (issue 29)
    s_kept = ""
    for name in ("results-allen-cell.md", "results-big-cells.md", "results-sonata-allen.md",
                 "results-bridge.md", "results-tridiag-large.md"):
        path = os.path.join(a.root, "bench", name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if name == "results-tridiag-large.md":  # written whole by bench_tridiag_large: number it here
                text = text.replace("## Large tridiagonal systems:", "## 10. One large tridiagonal system (issue 29):", 1)
            s_kept += "\n" + text[text.index("## "):] if "## " in text else ""
    t4tab = md_table(["class", "fine-grained [µs]", "flat [µs]", "vs flat", "vs interleaved",
                      "fastest one-thread-per-cell [µs]", "vs that"],
                     [[f"{x['class']}", f"{g3(x['fine'])} ({x['fv']})", g3(x["flat"]), f"{x['vs_flat']:.1f}×", f"{x['vs_inter']:.1f}×",
                       f"{g3(x['best_pc'][0])} ({x['best_pc'][1].split(' ')[0]})", f"{x['vs_best']:.1f}×"]
                      for x in t4], ["---", "---:", "---:", "---:", "---:", "---:", "---:"])

    doc = f"""# cablesim performance

Generated by `bench/report.py` from the result files in `bench/`; do not edit by hand (re-run
`/usr/bin/python3 bench/report.py` after a new benchmark run).

## Device and method

- **GPU machine**: {tinfo['board']} ({tinfo['device'].split(', ', 1)[1]}), with a
  {fs['ncores']}-core {fs['cpu']} host. All GPU figures in this report come from it.
- **Copy bandwidth**, measured in the same run as each solver benchmark (device-to-device `cudaMemcpy`,
  bytes read + written): {copy_gbs:.0f} GB/s in the Thomas run, {hinfo['copy_gbs']:.0f} GB/s in the
  Hines run. Percentages of copy use the figure of their own run. The full step's DRAM traffic (T7) is
  measured with Nsight Compute (`bench/runs/gpu_step_bytes.sh`).
- **Solver timing**: CUDA events around each solve, launch included, warm-up first, then the median of
  ≥ 20 repeats (Thomas: inputs rotated over copies larger than the L2; Hines: L2 flushed before each
  solve). Every timed result is checked against the CPU reference in the same run.
- **Full step**: wall time of the time loop, median of 3 runs per point; per-phase times from CUDA
  events.
- Details, predictions against measurements and the reasons for misses: `bench/NOTES.md` (GPU) and
  `bench/NOTES-cpu.md` (CPU).

## Targets

The targets of issue 4 (double precision unless said). A target that is not met stays here with its
measured figure and the reason.

{ttab}

T4 per class (256 cells, double):

{t4tab}

{s_thomas}
{s_hines}
{s_full}
{s_cpu}
{s_mpi}{s_kept}"""
    with open(os.path.join(docs, "performance.md"), "w", encoding="utf-8") as f:
        f.write(doc)
    print(f"wrote {os.path.join(docs, 'performance.md')} and docs/perf-{{thomas,hines,full-step,phases}}.png "
          f"(Hines plot: {pcls})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
