#!/usr/bin/env python3
"""Build and run a cablesim JSON model of the busyring kind in Arbor 0.12 (a module and a script).

The Arbor side of the full-step benchmark: `run_arbor(model, threads)` builds the same network that
tests/neuron_models.py builds in NEURON from the same JSON, runs it on the CPU with `threads`
threads and times `simulation.run` alone.

    python3 bench/arbor_models.py MODEL.json --threads N [--tfinal T]

prints one JSON line {"seconds", "spikes", "spike_times", "compartments", "threads", ...}.
Needs the PyPI package `arbor` 0.12.x (python3 -m pip install arbor==0.12.2) and nothing else
(no numpy import of its own; no cablesim, no NEURON).

Supported models (what bench/bench_cpu_vs_neuron.py writes): one or more populations whose
morphology is a random_tree with branch_probability [1, 1], a soma, a cable, or explicit
"branches" where no branch has exactly one child (Arbor would merge the two into one branch, so
ball_and_stick is refused too); density mechanisms
hh and pas on regions soma/axon/dend/basal/apical/all; expsyn synapses; a detector; ring and
explicit connections; events. Not supported (NotImplementedError): stimuli, probes are ignored,
random connections, SWC files, random trees with probability < 1.

The translation:

- every cablesim branch is one Arbor segment (a cylinder: proximal and distal radius equal), laid
  along the x axis (positions are irrelevant to the cable equation; only segment lengths count).
  A child segment hangs on its parent segment's distal end, so every branch point of the
  generators is an Arbor fork and every cablesim branch is exactly one Arbor branch;
- the branches are tagged by (cablesim tag, CV count) pair, Arbor tags 10, 11, ..., so that the
  CV policy can name them: `cv_policy_fixed_per_branch(n, "(tag t)")` for every pair, joined
  with `|`, where n is cablesim's CV count of those branches (tests/neuron_models.branch_cvs: the
  branch's own "cvs", else "cvs_per_branch", else ceil(L / max_cv_length)). For busyring that
  is one tag per level (and the soma);
- regions: soma = the branches whose cablesim tag is 1, dend = 3 and 4, etc., as (join (tag ..));
- biophysics: cm [µF/cm²] -> [F/m²] (x 0.01), Ra [Ω·cm], v_init [mV], temperature 6.3 °C (or
  run.celsius) set explicitly as tempK; ion reversal potentials ena 50, ek -77 mV (hh's defaults
  in cablesim; Arbor's hh reads them from the na and k ions); hh with gnabar, gkbar, gl, el; pas
  with g, and e through a derived mechanism "pas/e=..." (e is a GLOBAL of Arbor's pas);
- synapses: expsyn (tau, e), weights in µS as in cablesim; detector: threshold_detector at the
  location; connections: arbor.connection((source gid, "det"), "<synapse>", weight, delay);
  events: one event_generator per event, explicit_schedule([time]), weight;
- locations {branch, pos}: pos 0 and 1 are the branch ends, any other pos is moved to the centre
  of cablesim's CV that contains it (tests/neuron_models.snap), as both other simulators do.

Compartments: the count reported is Arbor's own, `arbor.cv_data(cell).num_cv` summed over the
cells. With CV boundaries at every branch end, Arbor makes the requested CVs of every branch plus
one zero-length CV at every fork point (checked when the cell is built): that CV is NEURON's and
cablesim's zero-area distal node of a parent branch. Arbor has no counterpart of the zero-area
distal node of a terminal branch nor of the root node, so per cell Arbor has
(tips + 1) fewer compartments than cablesim (busyring depth 5: 306 against 339); cablesim's count
(tests/neuron_models.node_count) is reported as "cablesim_compartments". The two discretisations
are otherwise the same network of nodes.
"""

import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TAG_BASE = 10  # Arbor tags TAG_BASE, TAG_BASE + 1, ...: one per (cablesim tag, CV count)


# --- morphology: the one reading of the JSON morphologies, shared with the NEURON builder ----

sys.path.insert(0, os.path.join(ROOT, "tests"))
from neuron_models import (EXPSYN_DEFAULTS, HH_DEFAULTS, PAS_DEFAULTS, REGION_TAGS, _interp,  # noqa: E402,F401
                           branch_cvs, morphology_branches, node_count, snap)


# --- Arbor --------------------------------------------------------------------------------------

def _segment_tree(arbor, branches, tags):
    """One cylindrical segment per branch b with Arbor tag tags[b], from (x0, b, 0) to
    (x0 + L, b, 0): the y coordinate names the cablesim branch (a child segment's proximal point
    need not touch its parent's distal point; positions do not enter the cable equation, only
    each segment's own length does)."""
    tree = arbor.segment_tree()
    seg = []
    xend = []
    for b, br in enumerate(branches):
        if br["parent"] >= b:
            raise ValueError("branch %d: parent %d must come first" % (b, br["parent"]))
        x0 = 0.0 if br["parent"] < 0 else xend[br["parent"]]
        x1 = x0 + br["length"]
        parent = arbor.mnpos if br["parent"] < 0 else seg[br["parent"]]
        seg.append(tree.append(parent, arbor.mpoint(x0, float(b), 0.0, br["radius"]),
                               arbor.mpoint(x1, float(b), 0.0, br["radius"]), tags[b]))
        xend.append(x1)
    return tree


def _region(tags_wanted, branches, tags):
    sel = sorted({tags[b] for b, br in enumerate(branches) if br["tag"] in tags_wanted})
    if not sel:
        return None
    return "(tag %d)" % sel[0] if len(sel) == 1 else "(join %s)" % " ".join("(tag %d)" % t for t in sel)


class _CellTemplate:
    """Everything that is the same for every cell of a population."""

    def __init__(self, arbor, U, pop, policy, celsius):
        self.pop = pop
        branches = morphology_branches(pop["morphology"])
        self.branches = branches
        self.ncv = [branch_cvs(b, policy) for b in branches]
        self.cablesim_nodes = node_count(branches, policy)
        # one Arbor tag per (cablesim tag, CV count): the CV policy and the regions name them
        groups = sorted({(br["tag"], n) for br, n in zip(branches, self.ncv)})
        gtag = {g: TAG_BASE + i for i, g in enumerate(groups)}
        tags = [gtag[(br["tag"], n)] for br, n in zip(branches, self.ncv)]
        tree = _segment_tree(arbor, branches, tags)
        self.morph = arbor.morphology(tree)
        nchild = [0] * len(branches)
        for br in branches:
            if br["parent"] >= 0:
                nchild[br["parent"]] += 1
        if 1 in nchild or self.morph.num_branches != len(branches):
            # Arbor joins a parent and its only child into one branch
            raise NotImplementedError("Arbor builder: every branch needs 0 or >= 2 children (Arbor "
                                      "made %d branches of %d)" % (self.morph.num_branches, len(branches)))
        self.forks = sum(1 for n in nchild if n >= 2)
        # Arbor's branch id of every cablesim branch (a segment tree renumbers them)
        self.abranch = [None] * len(branches)
        for ab in range(self.morph.num_branches):
            segs = self.morph.branch_segments(ab)
            if len(segs) != 1:
                raise RuntimeError("Arbor branch %d has %d segments" % (ab, len(segs)))
            self.abranch[int(round(segs[0].prox.y))] = ab
        self.labels = arbor.label_dict()
        bio = pop.get("biophysics", {})
        d = arbor.decor()
        d.set_property(Vm=float(bio.get("v_init", -65.0)) * U.mV,
                       cm=float(bio.get("cm", 1.0)) * 0.01 * U.F / U.m2,  # 1 µF/cm² = 0.01 F/m²
                       rL=float(bio.get("Ra", 100.0)) * U.Ohm * U.cm,
                       tempK=(celsius + 273.15) * U.Kelvin)
        hh_rev = None
        for m in bio.get("mechanisms", []):
            reg = _region(REGION_TAGS[m.get("region", "all")], branches, tags)
            if reg is None:
                continue
            prm = m.get("params", {})
            if m["name"] == "hh":
                p = dict(HH_DEFAULTS, **prm)
                rev = (p["ena"], p["ek"])
                if hh_rev is not None and hh_rev != rev:
                    raise NotImplementedError("Arbor builder: one ena/ek per cell")
                hh_rev = rev
                d.paint(reg, arbor.density("hh", gnabar=p["gnabar"], gkbar=p["gkbar"], gl=p["gl"],
                                           el=p["el"]))
            elif m["name"] == "pas":
                p = dict(PAS_DEFAULTS, **prm)
                # e is a GLOBAL of Arbor's pas: a derived mechanism sets it
                d.paint(reg, arbor.density("pas/e=%r" % float(p["e"]), g=p["g"]))
            else:
                raise NotImplementedError("Arbor builder: mechanism %r" % m["name"])
        ena, ek = hh_rev if hh_rev is not None else (HH_DEFAULTS["ena"], HH_DEFAULTS["ek"])
        d.set_ion("na", rev_pot=ena * U.mV)
        d.set_ion("k", rev_pot=ek * U.mV)
        self.synapses = []
        for s in pop.get("synapses", []):
            if s["mechanism"] != "expsyn":
                raise NotImplementedError("Arbor builder: synapse %r" % s["mechanism"])
            p = dict(EXPSYN_DEFAULTS, **s.get("params", {}))
            d.place(self.locset(s["location"]), arbor.synapse("expsyn", tau=p["tau"], e=p["e"]), s["name"])
            self.synapses.append(s["name"])
        det = pop.get("detector")
        self.has_detector = det is not None
        if det is not None:
            d.place(self.locset(det["location"]),
                    arbor.threshold_detector(float(det.get("threshold", -10.0)) * U.mV), "det")
        if pop.get("stimuli"):
            raise NotImplementedError("Arbor builder: stimuli")
        self.decor = d
        pol = None
        for (_, n), t in sorted(gtag.items(), key=lambda kv: kv[1]):
            p = arbor.cv_policy_fixed_per_branch(n, "(tag %d)" % t)
            pol = p if pol is None else pol | p
        self.policy = pol
        self.cell = arbor.cable_cell(self.morph, self.decor, self.labels, pol)
        cvd = arbor.cv_data(self.cell)
        self.arbor_cvs = cvd.num_cv if cvd is not None else None
        # Arbor: the requested CVs of every branch + one zero-length CV at every fork (where the
        # CV boundaries of a parent and its children meet: NEURON's zero-area distal node)
        if self.arbor_cvs is not None and self.arbor_cvs != sum(self.ncv) + self.forks:
            raise RuntimeError("Arbor discretised the cell into %d CVs, expected %d + %d forks"
                               % (self.arbor_cvs, sum(self.ncv), self.forks))

    def locset(self, location):
        b = int(location["branch"])
        x = snap(float(location["pos"]), self.ncv[b])
        return "(location %d %r)" % (self.abranch[b], x)


def _make_recipe(arbor, U, model, celsius, shift=0.0):
    global_policy = model.get("discretization", {"max_cv_length": 20.0})
    pops = []
    offset = 0
    for pop in model["populations"]:
        t = _CellTemplate(arbor, U, pop, pop.get("discretization", global_policy), celsius)
        n = int(pop.get("count", 1))
        pops.append({"name": pop["name"], "tmpl": t, "first": offset, "count": n})
        offset += n
    ncells = offset
    by_name = {p["name"]: p for p in pops}

    def pop_of(gid):
        for p in pops:
            if p["first"] <= gid < p["first"] + p["count"]:
                return p
        raise IndexError(gid)

    incoming = [[] for _ in range(ncells)]  # (source gid, synapse label, weight [µS], delay [ms])
    for c in model.get("connections", []):
        if c["type"] == "ring":
            p = by_name[c["population"]]
            n = p["count"]
            for i in range(n):
                incoming[p["first"] + (i + 1) % n].append(
                    (p["first"] + i, c["synapse"], float(c["weight"]), float(c["delay"])))
        elif c["type"] == "explicit":
            s, t = c["source"], c["target"]
            incoming[by_name[t["population"]]["first"] + int(t["cell"])].append(
                (by_name[s["population"]]["first"] + int(s["cell"]), t["synapse"], float(c["weight"]),
                 float(c["delay"])))
        else:
            raise NotImplementedError("Arbor builder: connection type %r" % c["type"])
    events = [[] for _ in range(ncells)]  # (synapse label, weight [µS], time [ms])
    for e in model.get("events", []):
        tg = e["target"]
        events[by_name[tg["population"]]["first"] + int(tg["cell"])].append(
            (tg["synapse"], float(e["weight"]), float(e["time"])))

    min_delay = min((d for inc in incoming for _, _, _, d in inc), default=None)
    anchor = next(((i, inc[0][1], inc[0][0]) for i, inc in enumerate(incoming) if inc), None)
    props = arbor.neuron_cable_properties()
    props.set_property(tempK=(celsius + 273.15) * U.Kelvin)

    class Recipe(arbor.recipe):
        def __init__(self):
            arbor.recipe.__init__(self)
            self.props = props

        def num_cells(self):
            return ncells

        def cell_kind(self, gid):
            return arbor.cell_kind.cable

        def cell_description(self, gid):
            return pop_of(gid)["tmpl"].cell

        def connections_on(self, gid):
            conns = [arbor.connection((src, "det"), syn, w, (d + shift) * U.ms)
                     for src, syn, w, d in incoming[gid]]
            if shift and gid == anchor[0]:
                # a weight-0 connection with the model's own minimum delay keeps Arbor's epochs
                # (min delay / 2) whole multiples of dt, so the step grid stays 0, dt, 2 dt, ...
                conns.append(arbor.connection((anchor[2], "det"), anchor[1], 0.0, min_delay * U.ms))
            return conns

        def event_generators(self, gid):
            return [arbor.event_generator(syn, w, arbor.explicit_schedule([(t + shift) * U.ms]))
                    for syn, w, t in events[gid]]

        def global_properties(self, kind):
            return self.props

    return Recipe(), pops


def run_arbor(model, threads, tfinal=None, nearest_step_delivery=False):
    """Build `model` (a cablesim JSON dict) in Arbor, run it on the CPU with `threads` threads to
    tfinal [ms] (default model["run"]["tfinal"]) at model["run"]["dt"], timing sim.run alone.

    nearest_step_delivery: a diagnostic for comparing spike times. Arbor delivers an event of time
    te at the start of the step that contains te (t_n <= te < t_n + dt); cablesim and NEURON at
    the nearest step boundary (the first t_n with te <= t_n + dt/2), so in a ring every hop is
    up to one dt later in cablesim than in Arbor. With this flag every connection delay and event
    time is lengthened by dt/2, which makes Arbor deliver at the nearest boundary too (the same
    step except for te exactly half-way). Off for the benchmark (the network as given).
    Returns {"seconds", "spikes", "spike_times", "compartments" (Arbor CVs, all cells),
    "cablesim_compartments" (cablesim's node count of the same model), "steps", "threads",
    "setup_seconds", "arbor_version"}."""
    import arbor
    U = arbor.units
    run = model["run"]
    dt = float(run["dt"])  # [ms]
    tfinal = float(run["tfinal"] if tfinal is None else tfinal)  # [ms]
    celsius = float(run.get("celsius", 6.3))  # [°C]
    t0 = time.perf_counter()
    recipe, pops = _make_recipe(arbor, U, model, celsius, 0.5 * dt if nearest_step_delivery else 0.0)
    ctx = arbor.context(threads=int(threads))
    dd = arbor.partition_load_balance(recipe, ctx)
    sim = arbor.simulation(recipe, ctx, dd)
    sim.record(arbor.spike_recording.all)
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    sim.run(tfinal * U.ms, dt * U.ms)
    seconds = time.perf_counter() - t0
    spikes = sim.spikes()
    times = sorted(float(s["time"]) for s in spikes)
    gids = [int(s["source"]["gid"]) for s in sorted(spikes, key=lambda s: (float(s["time"]), int(s["source"]["gid"])))]
    arbor_cvs = sum(p["tmpl"].arbor_cvs * p["count"] for p in pops) if all(
        p["tmpl"].arbor_cvs is not None for p in pops) else None
    return {
        "seconds": seconds,
        "spikes": len(times),
        "spike_times": times,
        "spike_gids": gids,
        "compartments": arbor_cvs,
        "cablesim_compartments": sum(p["tmpl"].cablesim_nodes * p["count"] for p in pops),
        "steps": int(round(tfinal / dt)),
        "threads": int(threads),
        "setup_seconds": setup,
        "arbor_version": arbor.__version__,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description="Run a cablesim busyring JSON model in Arbor; print one "
                                 "JSON line of results.")
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--tfinal", type=float, default=None, help="[ms] override run.tfinal")
    ap.add_argument("--nearest-step-delivery", action="store_true",
                    help="diagnostic: deliver events at the nearest step boundary, as cablesim does")
    args = ap.parse_args(argv)
    with open(args.model) as f:
        model = json.load(f)
    print(json.dumps(run_arbor(model, args.threads, args.tfinal, args.nearest_step_delivery)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
