"""Build and run a cablesim JSON model in NEURON (a module, not a test).

Used by tests/test_neuron_agreement.py and bench/bench_cpu_vs_neuron.py. Runs under Debian's
/usr/bin/python3, where python3-neuron (NEURON 8.2) lives.

The same JSON file drives both simulators. The translation follows cablesim's conventions
(docs/model-format.md, models/cs_geometry.h), which are NEURON's:

- every branch is one NEURON section; a child branch attaches at its parent_pos (default 1: the
  distal end; child.connect(parent(parent_pos))); a branch with parent -1 is a root section (its x=0 node is the
  zero-area root node);
- CVs per branch = the branch's own "cvs" when > 0, else discretization "cvs_per_branch" when
  > 0, else ceil(L / max_cv_length); that number is the section's nseg (times `refine` for a
  refined reference run; use an odd refine so every coarse node centre is a fine node centre);
- a location {branch, pos} is sec(pos): pos 0 and 1 are the end nodes, any other pos the centre
  of the segment that contains it. In a refined run every location is moved to the centre of
  the COARSE segment that contains it, so that coarse and fine runs probe, stimulate and detect
  at the same physical point (the fine run is the converged solution of the coarse model);
- numerics: fixed step, h.secondorder = 0, h.celsius from the model (6.3 by default), and
  h.usetable_hh = 0 so hh rates are computed from the formulas, as cablesim does (NEURON's
  default 200-point rate table shifts voltages by a few hundredths of a mV);
- regions: soma = tag 1, axon = 2, dend = 3 and 4, basal = 3, apical = 4, all.

Timing conventions of NEURON 8.2's fixed step (verified; see the README of this test):
- an event with time te is delivered before the step that starts at the first t_n with
  te <= t_n + dt/2 (nearest step boundary); an ExpSyn's g jumps by the weight and the step
  [t_n, t_n + dt] already uses the new g;
- an IClamp is evaluated at the step midpoint t_n + dt/2: it acts on the steps whose midpoint is
  in [delay, delay + duration), i.e. exactly the steps inside [delay, delay + duration] when both
  ends are on the time grid;
- a NetCon threshold crossing is recorded at the grid time t_n of the first sample above the
  threshold (not interpolated; plus a 1e-10 ms fudge); the spike's events go out at t_n + delay.
"""

import json
import math
import os

import numpy as np

_h = None


def neuron_h():
    """Import NEURON lazily (the schema test and --help need no NEURON)."""
    global _h
    if _h is None:
        os.environ.setdefault("NEURON_MODULE_OPTIONS", "-nogui")
        from neuron import h  # noqa: E402

        h.load_file("stdrun.hoc")
        _h = h
    return _h


TAG_OF_NAME = {"soma": 1, "axon": 2, "dend": 3, "apic": 4}
REGION_TAGS = {
    "soma": {1},
    "axon": {2},
    "dend": {3, 4},
    "basal": {3},
    "apical": {4},
    "all": {0, 1, 2, 3, 4},
}

HH_DEFAULTS = {"gnabar": 0.12, "gkbar": 0.036, "gl": 0.0003, "el": -54.3, "ena": 50.0, "ek": -77.0}
PAS_DEFAULTS = {"g": 0.001, "e": -70.0}
EXPSYN_DEFAULTS = {"tau": 2.0, "e": 0.0}
ICLAMP_DEFAULTS = {"delay": 0.0, "duration": 0.0, "amplitude": 0.0}


def load_model(path):
    with open(path) as f:
        return json.load(f)


# --- morphology -----------------------------------------------------------------------------

def _interp(pair, level, depth):
    """Arbor busyring's interpolation over the levels: first value at level 0, last at depth-1."""
    if depth <= 1:
        return float(pair[0])
    p = level / (depth - 1.0)
    return pair[0] + p * (pair[1] - pair[0])


def morphology_branches(morph):
    """The branches of a morphology as dicts {parent, length [µm], radius [µm], tag, cvs}, parents
    first. Only cylinders: every generator and the explicit "branches" kind. As in
    models/cs_morph_gen.c, a generator's soma always has one CV (cvs 1)."""
    if "branches" in morph:
        out = []
        for b in morph["branches"]:
            out.append({"parent": int(b["parent"]), "parent_pos": float(b.get("parent_pos", 1.0)),
                        "length": float(b["length"]), "radius": float(b["radius"]),
                        "tag": TAG_OF_NAME[b.get("tag", "dend")], "cvs": int(b.get("cvs", 0))})
        return out
    gen = morph.get("generator")
    if gen == "soma":
        r = float(morph["radius"])
        return [{"parent": -1, "length": 2 * r, "radius": r, "tag": 1, "cvs": 1}]
    if gen == "ball_and_stick":
        r = float(morph["soma_radius"])
        return [{"parent": -1, "length": 2 * r, "radius": r, "tag": 1, "cvs": 1},
                {"parent": 0, "length": float(morph["dend_length"]), "radius": float(morph["dend_radius"]),
                 "tag": 3, "cvs": int(morph.get("dend_cvs", 0))}]
    if gen == "cable":
        return [{"parent": -1, "length": float(morph["length"]), "radius": float(morph["radius"]),
                 "tag": 3, "cvs": int(morph.get("cvs", 0))}]
    if gen == "random_tree":
        # Arbor's busyring cell with every branch probability 1 (the only deterministic case):
        # a soma, then `depth` levels; each terminal of the previous level (the soma for level 0)
        # grows two children. Branches are numbered depth-first (parents first), as cablesim does.
        probs = morph.get("branch_probability", [1.0, 1.0])
        if any(p < 1.0 for p in probs):
            raise NotImplementedError("random_tree with branch_probability < 1 is random: the NEURON "
                                      "and Arbor builders support only [1.0, 1.0]")
        depth = int(morph["depth"])
        r = float(morph["soma_radius"])
        rd = float(morph["dend_radius"])
        lengths = morph.get("length", [200.0, 20.0])
        cvs = morph.get("cvs", [0, 0])
        out = [{"parent": -1, "length": 2 * r, "radius": r, "tag": 1, "cvs": 1}]

        def grow(parent, level):
            if level >= depth:
                return
            for _ in range(2):
                ncv = int(math.floor(_interp(cvs, level, depth) + 0.5))  # C lround
                out.append({"parent": parent, "length": _interp(lengths, level, depth), "radius": rd,
                            "tag": 3, "cvs": max(ncv, 0)})
                grow(len(out) - 1, level + 1)

        grow(0, 0)
        return out
    raise NotImplementedError("builder: morphology %r not supported" % (morph,))


def branch_cvs(branch, policy):
    if branch["cvs"] > 0:
        return branch["cvs"]
    if policy.get("cvs_per_branch", 0) > 0:
        return int(policy["cvs_per_branch"])
    return max(1, int(math.ceil(branch["length"] / float(policy["max_cv_length"]))))


def node_count(branches, policy):
    """Nodes counted as cablesim does (models/cs_geometry.h): one zero-area root node, then per
    branch its centre nodes plus one zero-area distal node. In NEURON terms: the root section's
    x=0 node + sum over sections of (nseg + 1)."""
    return 1 + sum(branch_cvs(b, policy) + 1 for b in branches)


def snap(pos, n):
    """x of the node that sec(pos) denotes for nseg = n (0, 1, or a segment centre)."""
    if pos <= 0.0:
        return 0.0
    if pos >= 1.0:
        return 1.0
    i = min(int(pos * n), n - 1)
    return (i + 0.5) / n


# --- the network ----------------------------------------------------------------------------

def _cells_of(spec, count):
    if spec == "all":
        return list(range(count))
    return [int(c) for c in spec]


class NeuronNetwork:
    """A cablesim model instantiated in NEURON. Keep the object alive while simulating; call
    close() (or drop it) before building another network in the same process."""

    def __init__(self, model, refine=1, dt=None, nthread=1, cache_efficient=False,
                 with_probes=True, interpolated_spikes=False):
        """interpolated_spikes: emulate cablesim's (Arbor's) spike convention in NEURON: after each
        step, a detector's upward crossing time is interpolated linearly between the step's ends,
        recorded, and its connections' events are sent with NetCon.event(t_spike + delay)
        (delivered, like every NEURON event, at the nearest step boundary). NEURON's own
        NetCon threshold detection records the grid time instead. A diagnostic for the test:
        with it, NEURON and cablesim run the same algorithm."""
        self.interp = bool(interpolated_spikes)
        h = neuron_h()
        self.h = h
        self.model = model
        run = model["run"]
        self.dt = float(dt if dt is not None else run["dt"])
        self.tfinal = float(run["tfinal"])
        self.refine = int(refine)
        h.secondorder = 0
        h.celsius = float(run.get("celsius", 6.3))
        try:
            h.usetable_hh = 0
        except LookupError:  # an hh without TABLE (the neuron-gpu wheel's) has no tables to switch off
            pass
        h.dt = self.dt
        h.steps_per_ms = 1.0 / self.dt
        self.pc = h.ParallelContext()
        self.pc.nthread(int(nthread))
        h.cvode.cache_efficient(1 if cache_efficient else 0)
        self.keep = []
        self.pops = {}
        global_policy = model.get("discretization", {"max_cv_length": 20.0})
        v_inits = set()
        for pop in model["populations"]:
            if "artificial" in pop:
                self.pops[pop["name"]] = self._artificial(pop)
                continue
            policy = pop.get("discretization", global_policy)
            branches = morphology_branches(pop["morphology"])
            ncv = [branch_cvs(b, policy) for b in branches]
            bio = pop.get("biophysics", {})
            v_inits.add(float(bio.get("v_init", -65.0)))
            P = {"spec": pop, "branches": branches, "ncv": ncv, "cells": [], "syn": [], "spk": [],
                 "nodes_per_cell": node_count(branches, policy)}
            count = int(pop.get("count", 1))
            for ci in range(count):
                secs = self._build_cell(pop["name"], ci, branches, ncv, bio)
                P["cells"].append(secs)
                syns = {}
                for s in pop.get("synapses", []):
                    sec, x = self.loc(P, ci, s["location"])
                    if s["mechanism"] != "expsyn":
                        # a catalogue mechanism (tests/test_nmodl_neuron.py loads the same .mod
                        # files compiled by nrnivmodl): its parameters by name
                        syn = getattr(h, s["mechanism"])(sec(x))
                        for k, val in s.get("params", {}).items():
                            setattr(syn, k, val)
                        syns[s["name"]] = syn
                        continue
                    prm = dict(EXPSYN_DEFAULTS, **s.get("params", {}))
                    syn = h.ExpSyn(sec(x))
                    syn.tau = prm["tau"]
                    syn.e = prm["e"]
                    syns[s["name"]] = syn
                P["syn"].append(syns)
            for st in pop.get("stimuli", []):
                if st["mechanism"] != "iclamp":
                    raise NotImplementedError(st["mechanism"])
                prm = dict(ICLAMP_DEFAULTS, **st.get("params", {}))
                for ci in _cells_of(st.get("cells", "all"), count):
                    sec, x = self.loc(P, ci, st["location"])
                    ic = h.IClamp(sec(x))
                    ic.delay = prm["delay"]
                    ic.dur = prm["duration"]
                    ic.amp = prm["amplitude"]
                    self.keep.append(ic)
            det = pop.get("detector")
            P["det_nc"] = []
            if det is not None:
                for ci in range(count):
                    sec, x = self.loc(P, ci, det["location"])
                    tv = h.Vector()
                    if self.interp:
                        nc = {"seg": sec(x), "thr": float(det.get("threshold", -10.0)), "out": []}
                    else:
                        nc = h.NetCon(sec(x)._ref_v, None, sec=sec)
                        nc.threshold = float(det.get("threshold", -10.0))
                        nc.record(tv)
                    P["det_nc"].append(nc)
                    P["spk"].append(tv)
            P["probe_vecs"] = []
            P["probe_map"] = []  # (cell, location index)
            pr = pop.get("probes")
            if pr is not None and with_probes:
                for ci in _cells_of(pr.get("cells", "all"), count):
                    for li, l in enumerate(pr["locations"]):
                        sec, x = self.loc(P, ci, l)
                        vec = h.Vector()
                        vec.record(sec(x)._ref_v, sec=sec)
                        P["probe_vecs"].append(vec)
                        P["probe_map"].append((ci, li))
                        # ion concentrations and reversal potentials ("cai", "eca", ...): NEURON's
                        # range variables of the same names
                        for var in pr.get("variables", []):
                            if var != "v" and "." not in var and var not in ("i_membrane",):
                                vv = h.Vector()
                                vv.record(getattr(sec(x), "_ref_" + var), sec=sec)
                                P.setdefault("var_vecs", {}).setdefault(var, []).append(vv)
            self.pops[pop["name"]] = P
        if len(v_inits) > 1:
            raise NotImplementedError("NEURON builder: one v_init for all populations")
        self.v_init = v_inits.pop() if v_inits else -65.0
        self.tvec = h.Vector()
        self.tvec.record(h._ref_t)
        self.netcons = []
        for c in model.get("connections", []):
            self._connect(c)
        self.events = []
        for e in model.get("events", []):
            tg = e["target"]
            T = self.pops[tg["population"]]
            syn = T["art"][int(tg["cell"])] if "art" in T else T["syn"][int(tg["cell"])][tg["synapse"]]
            nc = h.NetCon(None, syn)
            nc.weight[0] = float(e["weight"])
            self.events.append((float(e["time"]), nc))

    def _artificial(self, pop):
        """A population of artificial cells: NEURON's own NetStim, IntFire1/2/4, VecStim (from
        vecevent.mod, which the caller loads) or a loaded catalogue's type, spikes recorded."""
        h = self.h
        a = pop["artificial"]
        P = {"spec": pop, "art": [], "cells": [], "syn": [], "spk": [], "det_nc": [], "probe_vecs": [],
             "probe_map": [], "nodes_per_cell": 0, "vecs": []}
        times = a.get("times")
        if "times_file" in a:
            times = [[] for _ in range(int(pop["count"]))]
            with open(os.path.join(self.model.get("_dir", "."), a["times_file"])) as f:
                for line in f:
                    line = line.split("#")[0].split()
                    if line:
                        times[int(line[0])].append(float(line[1]))
        for ci in range(int(pop["count"])):
            cell = getattr(h, a["mechanism"])()
            for k, val in a.get("params", {}).items():
                setattr(cell, k, val)
            if times is not None:
                vec = h.Vector(times[ci])
                cell.play(vec)
                P["vecs"].append(vec)
            tv = h.Vector()
            nc = h.NetCon(cell, None)
            nc.record(tv)
            P["art"].append(cell)
            P["det_nc"].append(nc)
            P["spk"].append(tv)
        return P

    def _build_cell(self, pname, ci, branches, ncv, bio):
        h = self.h
        secs = []
        for bi, b in enumerate(branches):
            sec = h.Section(name="%s_%d_b%d" % (pname, ci, bi))
            sec.L = b["length"]
            sec.diam = 2.0 * b["radius"]
            sec.nseg = ncv[bi] * self.refine
            sec.cm = float(bio.get("cm", 1.0))
            sec.Ra = float(bio.get("Ra", 100.0))
            if b["parent"] >= 0:
                sec.connect(secs[b["parent"]](b.get("parent_pos", 1.0)), 0)
            for m in bio.get("mechanisms", []):
                if b["tag"] not in REGION_TAGS[m.get("region", "all")]:
                    continue
                prm = m.get("params", {})
                if m["name"] == "hh":
                    p = dict(HH_DEFAULTS, **prm)
                    sec.insert("hh")
                    for seg in sec:
                        seg.hh.gnabar = p["gnabar"]
                        seg.hh.gkbar = p["gkbar"]
                        seg.hh.gl = p["gl"]
                        seg.hh.el = p["el"]
                    sec.ena = p["ena"]
                    sec.ek = p["ek"]
                elif m["name"] == "pas":
                    p = dict(PAS_DEFAULTS, **prm)
                    sec.insert("pas")
                    for seg in sec:
                        seg.pas.g = p["g"]
                        seg.pas.e = p["e"]
                else:
                    # a catalogue mechanism: RANGE parameters per segment, GLOBAL ones as
                    # NAME_MECH (one value for all); rates computed directly, as cablesim does
                    name = m["name"]
                    sec.insert(name)
                    if hasattr(h, "usetable_" + name):
                        setattr(h, "usetable_" + name, 0)
                    for k, val in prm.items():
                        if hasattr(getattr(sec(0.5), name), k):
                            for seg in sec:
                                setattr(getattr(seg, name), k, val)
                        else:
                            setattr(h, "%s_%s" % (k, name), val)
            for ion in bio.get("ions", []):
                x = ion["ion"]
                if b["tag"] in REGION_TAGS[ion.get("region", "all")] and h.ismembrane("%s_ion" % x, sec=sec):
                    if "e" in ion:
                        setattr(sec, "e" + x, float(ion["e"]))
                    # concentrations: the section's, and NEURON's global initial value
                    # (<x>i0_<x>_ion), which a mechanism writing them resets them to, when the
                    # entry covers every region
                    for k, suffix in (("xi", "i"), ("xo", "o")):
                        if k in ion:
                            setattr(sec, x + suffix, float(ion[k]))
                            if ion.get("region", "all") == "all":
                                setattr(self.h, "%s%s0_%s_ion" % (x, suffix, x), float(ion[k]))
            secs.append(sec)
        return secs

    def loc(self, P, ci, location):
        """(section, x) of a location; x snapped to the coarse node (see the module doc)."""
        b = int(location["branch"])
        x = snap(float(location["pos"]), P["ncv"][b])
        return P["cells"][ci][b], x

    def _connect(self, c):
        h = self.h

        def link(sp, si, tp, ti, syn, w, d):
            S, T = self.pops[sp], self.pops[tp]
            target = T["art"][ti] if "art" in T else T["syn"][ti][syn]
            if "art" in S:  # an artificial source: its events at their exact times
                nc = h.NetCon(S["art"][si], target)
                nc.delay = d
            elif self.interp:
                nc = h.NetCon(None, target)
                S["det_nc"][si]["out"].append((nc, d))
            else:
                det = S["spec"]["detector"]
                sec, x = self.loc(S, si, det["location"])
                nc = h.NetCon(sec(x)._ref_v, target, sec=sec)
                nc.threshold = float(det.get("threshold", -10.0))
                nc.delay = d
            for j, wj in enumerate(w if isinstance(w, list) else [w]):  # a weight vector
                nc.weight[j] = float(wj)
            self.netcons.append(nc)

        if c["type"] == "ring":
            n = len(self.pops[c["population"]]["cells"])
            for i in range(n):
                link(c["population"], i, c["population"], (i + 1) % n, c["synapse"],
                     float(c["weight"]), float(c["delay"]))
        elif c["type"] == "explicit":
            s, t = c["source"], c["target"]
            link(s["population"], int(s["cell"]), t["population"], int(t["cell"]), t.get("synapse"),
                 c["weight"], float(c["delay"]))
        else:
            raise NotImplementedError("NEURON builder: connection type %r" % c["type"])

    def nodes(self):
        """Nodes as cablesim counts them (see node_count), from the model description."""
        return sum(P["nodes_per_cell"] * len(P["cells"]) for P in self.pops.values())

    def neuron_nodes(self):
        """NEURON's own node count: sum over sections of nseg + 1, plus one root node per tree."""
        h = self.h
        roots = h.SectionList()
        roots.allroots()
        return sum(sec.nseg + 1 for sec in h.allsec()) + sum(1 for _ in roots)

    def init(self):
        h = self.h
        h.dt = self.dt
        h.finitialize(self.v_init)
        for t, nc in self.events:
            nc.event(t)

    def advance(self, use_psolve=False):
        """Advance from t=0 to tfinal in round(tfinal/dt) fixed steps (psolve: NEURON's own
        loop, used by the benchmark; needs a connection so that min delay > 0)."""
        h = self.h
        nstep = int(round(self.tfinal / self.dt))
        if self.interp:
            dets = [(d, tv) for P in self.pops.values() if "art" not in P for d, tv in zip(P["det_nc"], P["spk"])]
            vprev = [d["seg"].v for d, _ in dets]
            for step in range(nstep):
                h.fadvance()
                t0 = step * self.dt  # [ms] start of the step, as cablesim computes it
                for k, (d, tv) in enumerate(dets):
                    vp, vn, th = vprev[k], d["seg"].v, d["thr"]
                    if vp < th <= vn:
                        ts = t0 + self.dt * (th - vp) / (vn - vp)
                        tv.append(ts)
                        for nc, delay in d["out"]:
                            nc.event(ts + delay)
                    vprev[k] = vn
        elif use_psolve:
            self.pc.set_maxstep(10)  # min delay over the NetCons (> 0 with connections)
            self.pc.psolve(self.tfinal)
        else:
            for _ in range(nstep):
                h.fadvance()
        return nstep

    def results(self):
        """{'t': times [ms], pop: {'v': [n_times × n_probes] mV, 'probe_map': [(cell, loc)],
        'spikes': [array of spike times per cell]}}"""
        out = {"t": np.array(self.tvec.to_python(), dtype=float)}
        for name, P in self.pops.items():
            v = (np.array([vec.to_python() for vec in P["probe_vecs"]], dtype=float).T
                 if P["probe_vecs"] else None)
            out[name] = {"v": v, "probe_map": list(P["probe_map"]),
                         "spikes": [np.array(tv.to_python(), dtype=float) for tv in P["spk"]],
                         "vars": {k: np.array([vec.to_python() for vec in vs], dtype=float).T
                                  for k, vs in P.get("var_vecs", {}).items()}}
        return out

    def close(self):
        self.pc.nthread(1)
        self.events = []
        self.netcons = []
        self.keep = []
        self.pops = {}
        self.tvec = None


def simulate(model, refine=1, dt=None, interpolated_spikes=False):
    """Build, run round(tfinal/dt) steps, return results() and tear the network down."""
    net = NeuronNetwork(model, refine=refine, dt=dt, interpolated_spikes=interpolated_spikes)
    net.init()
    net.advance()
    res = net.results()
    res["nodes"] = net.nodes()
    net.close()
    del net
    return res


def spike_list(res, pop):
    """All spikes of a population as (times, cell ids) sorted by time then cell."""
    ts, ids = [], []
    for ci, tv in enumerate(res[pop]["spikes"]):
        ts.extend(tv.tolist())
        ids.extend([ci] * len(tv))
    order = sorted(range(len(ts)), key=lambda k: (ts[k], ids[k]))
    return np.array([ts[k] for k in order]), np.array([ids[k] for k in order], dtype=int)
