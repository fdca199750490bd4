#!/usr/bin/python3
"""Plot a cablesim output file (SONATA HDF5): voltage traces and a spike raster in one PNG.

The top panel shows the membrane potential [mV] against time [ms] of the chosen cells of one
report population, one line per (node id, element); the bottom panel shows the spikes of every
spike population as a raster (time [ms] against node id). A file that a run left unfinished
(root attribute status = "incomplete") is plotted as far as it goes, and says so in the title.

Examples:
  plot_output.py out.h5                         # first report population, first 5 cells
  plot_output.py out.h5 -o v.png --population ring --nodes 0 3 --tmin 5 --tmax 15
  plot_output.py out.h5 --nodes 2 --all-elements
  plot_output.py out.h5 --variable hh.m         # a probed mechanism state (probes.variables)
"""
import argparse
import math
import os
import sys

PROG = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "plot_output.py"
EPSILON = 1e-6  # [ms] libsonata's tolerance on the report time axis


class PlotError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


def n_axis_times(tstart, tstop, dt):
    """Number of samples on [tstart, tstop) every dt, counted as libsonata counts them."""
    n, t = 0, tstart
    while t < tstop - EPSILON:
        n += 1
        t += dt
    return n


def as_str(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__.split("\n\n")[0] + "\n\n" + __doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", metavar="OUT.h5", help="cablesim output file")
    parser.add_argument("-o", "--output", metavar="PNG",
                        help="image to write (default: OUT.png next to the input)")
    parser.add_argument("--population", metavar="P",
                        help="report population to plot (default: the first one in the file)")
    parser.add_argument("--variable", metavar="NAME", default="v",
                        help="probed variable to plot: v (default, /report/POP/data) or another of "
                             "the model's probes.variables, e.g. hh.m (/report/POP/hh.m/data)")
    parser.add_argument("--nodes", metavar="ID", type=int, nargs="+",
                        help="node ids to plot (default: the first 5 cells of the report)")
    parser.add_argument("--all-elements", action="store_true",
                        help="plot every element (compartment) of each chosen cell, not only "
                             "its first one (the soma)")
    parser.add_argument("--tmin", type=float, metavar="MS", help="start of the time window [ms]")
    parser.add_argument("--tmax", type=float, metavar="MS", help="end of the time window [ms]")
    parser.add_argument("--dpi", type=int, default=120, help="image resolution (default 120)")
    args = parser.parse_args(argv)
    if args.tmin is not None and args.tmax is not None and args.tmax <= args.tmin:
        parser.error("--tmax must be greater than --tmin")
    return args


def read_traces(f, args):
    """Return (population, times [ms], list of (label, values [mV]))."""
    if "report" not in f or len(f["report"]) == 0:
        raise PlotError(f"{args.file}: no voltage report in this file (/report is empty)")
    var = getattr(args, "variable", "v")

    def report_of(p):  # the group of variable `var` of population p, or None
        g = f["report"][p]
        g = g if var == "v" else g.get(var)
        return g if g is not None and "data" in g else None

    pops = sorted(p for p in f["report"].keys() if report_of(p) is not None)
    if not pops:
        raise PlotError(f"{args.file}: no report of variable '{var}' in this file")
    pop = args.population if args.population is not None else pops[0]
    if pop not in pops:
        raise PlotError(f"{args.file}: no report of variable '{var}' for population '{pop}' "
                        f"(available: {', '.join(pops)})")
    g = report_of(pop)
    data = g["data"]
    args.units = as_str(data.attrs.get("units", "mV"))
    mapping = g["mapping"]
    node_ids = mapping["node_ids"][:]
    ptr = mapping["index_pointers"][:]
    element_ids = mapping["element_ids"][:]
    tstart, tstop, dt = (float(x) for x in mapping["time"][:])
    rows = min(data.shape[0], n_axis_times(tstart, tstop, dt))

    if args.nodes is None:
        chosen = [int(n) for n in node_ids[:5]]
    else:
        chosen = args.nodes
        known = set(int(n) for n in node_ids)
        missing = [n for n in chosen if n not in known]
        if missing:
            raise PlotError(f"{args.file}: population '{pop}' has no node(s) "
                            f"{' '.join(map(str, missing))} (it has {len(node_ids)} cells, ids "
                            f"{int(node_ids.min())}..{int(node_ids.max())})")
    where = {int(n): k for k, n in enumerate(node_ids)}
    columns = []  # (column, label)
    for n in chosen:
        k = where[n]
        lo, hi = int(ptr[k]), int(ptr[k + 1])
        for c in range(lo, hi if args.all_elements else min(lo + 1, hi)):
            columns.append((c, f"node {n} element {int(element_ids[c])}"))

    # Only the rows of the time window are read: sample k is at tstart + k*dt.
    first, last = 0, rows
    if args.tmin is not None:
        first = min(rows, max(0, math.ceil((args.tmin - tstart) / dt - 1e-9)))
    if args.tmax is not None:
        last = max(first, min(rows, math.floor((args.tmax - tstart) / dt + 1e-9) + 1))
    import numpy as np
    times = tstart + dt * np.arange(first, last)
    traces = []
    if columns and last > first:
        cols = sorted(set(c for c, _ in columns))
        block = data[first:last, cols]
        index = {c: i for i, c in enumerate(cols)}
        traces = [(label, block[:, index[c]]) for c, label in columns]
    return pop, times, traces, rows < n_axis_times(tstart, tstop, dt)


def read_spikes(f, args):
    """Return a list of (population, times [ms], node ids) within the time window."""
    out = []
    if "spikes" not in f:
        return out
    for pop in sorted(f["spikes"].keys()):
        g = f["spikes"][pop]
        t = g["timestamps"][:]
        ids = g["node_ids"][:]
        n = min(len(t), len(ids))
        t, ids = t[:n], ids[:n]
        keep = (t >= (args.tmin if args.tmin is not None else -float("inf"))) & \
               (t <= (args.tmax if args.tmax is not None else float("inf")))
        out.append((pop, t[keep], ids[keep]))
    return out


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.exists(args.file):
        raise PlotError(f"{args.file}: no such file")
    output = args.output or os.path.splitext(args.file)[0] + ".png"

    try:
        import h5py
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError as e:
        raise PlotError(f"needs h5py and matplotlib ({e}); on Debian: apt-get install "
                        "python3-h5py python3-matplotlib")

    try:
        f = h5py.File(args.file, "r")
    except OSError as e:
        raise PlotError(f"{args.file}: cannot read as HDF5 ({e})")
    with f:
        status = as_str(f.attrs.get("status", "unknown"))
        try:
            pop, times, traces, short = read_traces(f, args)
            spikes = read_spikes(f, args)
        except KeyError as e:
            raise PlotError(f"{args.file}: not a cablesim/SONATA output file (missing {e})")

    fig, (ax_v, ax_s) = plt.subplots(2, 1, figsize=(10, 7), sharex=True,
                                     gridspec_kw={"height_ratios": [2, 1]})
    for label, values in traces:
        ax_v.plot(times, values, lw=1, label=label)
    if args.variable == "v":
        ax_v.set_ylabel("membrane potential [mV]")
    else:
        ax_v.set_ylabel(f"{args.variable} [{args.units}]")
    title = f"{os.path.basename(args.file)}: report '{pop}'" + (f" {args.variable}" if args.variable != "v" else "")
    if status != "complete" or short:
        title += " (incomplete run)"
    ax_v.set_title(title)
    if traces and len(traces) <= 12:
        # legends sit right of the axes, never over the data
        ax_v.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    elif not traces:
        ax_v.text(0.5, 0.5, "no samples in this time window", transform=ax_v.transAxes,
                  ha="center", va="center")

    total = 0
    for k, (spop, t, ids) in enumerate(spikes):
        total += len(t)
        ax_s.scatter(t, ids, s=6, marker="|" if len(t) > 2000 else "o",
                     color=f"C{k % 10}", label=f"{spop} ({len(t)} spikes)")
    ax_s.set_xlabel("time [ms]")
    ax_s.set_ylabel("node id")
    ax_s.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    if spikes:
        ax_s.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    if total == 0:
        ax_s.text(0.5, 0.5, "no spikes", transform=ax_s.transAxes, ha="center", va="center")
    if args.tmin is not None or args.tmax is not None:
        lo = args.tmin if args.tmin is not None else (times[0] if len(times) else None)
        hi = args.tmax if args.tmax is not None else (times[-1] if len(times) else None)
        ax_s.set_xlim(lo, hi)
    fig.tight_layout()
    try:
        fig.savefig(output, dpi=args.dpi)
    except OSError as e:
        raise PlotError(f"{output}: cannot write the image ({e.strerror or e})")
    plt.close(fig)
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except PlotError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(1)
