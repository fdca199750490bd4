#!/usr/bin/env python3
"""Run a network with the cablesim Python package, then plot its voltage traces and a spike
raster (matplotlib). A few seconds for the README's ring of 256 cells.

    pip install .[plot]          # once, from the repository root
    python examples/run_network.py [MODEL.json] [-t MS] [-o ring.png] [--h5 ring.h5]

The run is split in two (run(t/2), then run(t)) to show that runs resume; the results are
those of a single run, bit for bit.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import cablesim  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", default=os.path.join(HERE, "..", "models", "examples", "ring.json"))
    ap.add_argument("-t", "--tfinal", type=float, default=100.0, help="simulated time [ms]")
    ap.add_argument("-o", "--output", default="network.png", help="the figure")
    ap.add_argument("--h5", default=None, help="also write the SONATA HDF5 output here")
    ap.add_argument("--backend", default="auto", help="cpu, cuda or auto")
    args = ap.parse_args()

    model = cablesim.load_model(args.model)
    sim = cablesim.Simulation(model, backend=args.backend, tfinal=args.tfinal, output=args.h5)
    sim.run(args.tfinal / 2)
    sim.run(args.tfinal)
    gids, times = sim.spikes
    tr = sim.traces
    prof = sim.profile
    print(f"{prof['cells']} cells, {prof['compartments']} compartments, {len(gids)} spikes in "
          f"{prof['wall_seconds']:.2f} s ({prof['backend_detail']})")

    fig, (ax_v, ax_r) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    for j, p in enumerate(tr.probes[:8]):
        ax_v.plot(tr.time, tr.data[:, j], lw=0.8, label=f"{p.population}[{p.cell}] b{p.branch}@{p.pos:g}")
    ax_v.set_ylabel("V [mV]")
    ax_v.legend(fontsize=7, ncol=2, loc="upper right")
    ax_r.plot(times, gids, "|", ms=6, color="k")
    ax_r.set_xlabel("t [ms]")
    ax_r.set_ylabel("gid")
    ax_r.set_ylim(-0.5, max(float(np.max(gids)) if len(gids) else 0, 1) + 0.5)
    ax_v.set_title(os.path.basename(model.path or "model"))
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}" + (f" and {args.h5}" if args.h5 else ""))


if __name__ == "__main__":
    main()
