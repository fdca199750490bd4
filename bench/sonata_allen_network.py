"""A large recurrent SONATA network of the five Allen perisomatic cell types, built with bmtk's
NetworkBuilder (issue 31, item 6), and the bmtk + NEURON run of it that bench/sonata_allen_bench.py
times. Run with the reference venv's python (scripts/ref-venv.sh: bmtk 1.2.0, NEURON 9.0.2).

    python bench/sonata_allen_network.py build DIR [--cells 10000] [--tstop 100] [--seed 1]
        writes DIR/{network,components,inputs}/, DIR/config_bmtk.json (mechanisms compiled with
        nrnivmodl in DIR/nrn_mechanisms) and DIR/config_cs.json (the same but output_dir and the
        mechanisms_dir: bmtk's channels plus NEURON's exp2syn.mod, so that the CPU and the GPU run
        NEURON's own synapse code); prints the network's size
    [mpirun -np N] python bench/sonata_allen_network.py run DIR/config_bmtk.json TIMING.json
        bmtk + NEURON; TIMING.json gets the wall time of the build and of the run [s] (rank 0)

The cells (tests/data/allen, PROVENANCE.md there: bmtk's examples, from the Allen Cell Types
Database), in the proportions of a cortical column, 80 % excitatory:
    Scnn1a 27 %, Rorb 27 %, Nr5a1 26 % (excitatory), PV1 10 %, PV2 10 % (fast-spiking inhibitory),
placed by bmtk's positions_columinar (a column of radius R = 400 µm · sqrt(N / 10 000), 100 µm
high, so that the density stays that of 10 000 cells). Connections, as bmtk's bio_450cells
example makes them: probability pmax · exp(-(r / 75 µm)²) with r the horizontal distance,
pmax E→E 0.10, E→I 0.20, I→E 0.25, I→I 0.20 (no autapses), delay 1.5 ms (E) and 1 ms (I); nsyns 2 for excitatory, 1 for inhibitory edges; excitatory synapses on
basal and apical dendrites within 200 µm of the soma, inhibitory ones on the soma and basal
dendrites within 50 µm (bmtk's random placement: target_sections + distance_range).
Inputs: a virtual population 'lgn' of N / 10 nodes, Poisson at 15 Hz (bmtk's PoissonSpikeGenerator),
each cell receiving 20 of them on average (nsyns 2). Everything is seeded (--seed).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ALLEN_DIR = os.path.join(ROOT, "tests", "data", "allen")
MOD_BMTK = os.path.join(ROOT, "tests", "data", "mod_bmtk")        # bmtk's channels + vecevent.mod
EXP2SYN_MOD = os.path.join(ROOT, "tests", "data", "mod", "exp2syn.mod")  # NEURON's
sys.path.insert(0, os.path.join(ROOT, "tests", "sonata"))
import bmtk_network  # noqa: E402  (the simulation configs, written as the SONATA tests write theirs)

# (pop_name, ei, share, morphology, fit): bmtk's bio_14cells / bio_450cells pairs
TYPES = [("Scnn1a", "e", 0.27, "Scnn1a_473845048_m.swc", "472363762_fit.json"),
         ("Rorb", "e", 0.27, "Rorb_325404214_m.swc", "473863510_fit.json"),
         ("Nr5a1", "e", 0.26, "Nr5a1_471087815_m.swc", "473863035_fit.json"),
         ("PV1", "i", 0.10, "Pvalb_470522102_m.swc", "472912177_fit.json"),
         ("PV2", "i", 0.10, "Pvalb_469628681_m.swc", "473862421_fit.json")]
SIGMA = 75.0                     # [µm] the connection probability's length scale
PMAX = {("e", "e"): 0.10, ("e", "i"): 0.20, ("i", "e"): 0.25, ("i", "i"): 0.20}
# [µS] per synapse; chosen with cablesim on 300 cells (same density) for excitatory cells at ~8-18 Hz and
# the fast-spiking PV cells at ~40-80 Hz
WEIGHT = {("e", "e"): 0.0004, ("e", "i"): 0.0020, ("i", "e"): 0.0040, ("i", "i"): 0.0030}
NSYNS = {"e": 2, "i": 1}
# [ms] by source type, one per edge type (a per-edge property would make bmtk store every synapse as
# its own edge without nsyns, which bmtk then reads as preselected sections)
DELAY = {"e": 1.5, "i": 1.0}
INPUT_RATE = 15.0                # [Hz]
INPUT_INDEGREE = 20              # input edges per cell (mean)
INPUT_WEIGHT = {"e": 0.0012, "i": 0.0015}  # [µS] per synapse, nsyns 2
SYNS = {"exc.json": {"level_of_detail": "exp2syn", "tau1": 1.0, "tau2": 3.0, "erev": 0.0},      # bmtk's AMPA_ExcToExc
        "inh.json": {"level_of_detail": "exp2syn", "tau1": 2.7, "tau2": 15.0, "erev": -70.0}}  # bmtk's GABA_InhToExc


def write_components(d):
    c = f"{d}/components"
    for sub in ("morphologies", "biophysical_neuron_templates", "synaptic_models", "mechanisms/modfiles"):
        os.makedirs(f"{c}/{sub}", exist_ok=True)
    for _, _, _, swc, fit in TYPES:
        shutil.copy(os.path.join(ALLEN_DIR, swc), f"{c}/morphologies/{swc}")
        shutil.copy(os.path.join(ALLEN_DIR, fit), f"{c}/biophysical_neuron_templates/{fit}")
    for name, p in SYNS.items():
        with open(f"{c}/synaptic_models/{name}", "w") as f:
            json.dump(p, f)
    # cablesim's mechanisms_dir: bmtk's channels (not vecevent.mod: NEURON's VecStim) + NEURON's
    # exp2syn.mod, used for exp2syn on the CPU and the GPU alike
    for m in sorted(os.listdir(MOD_BMTK)):
        if m.endswith(".mod") and m != "vecevent.mod":
            shutil.copy(os.path.join(MOD_BMTK, m), f"{c}/mechanisms/modfiles/{m}")
    shutil.copy(EXP2SYN_MOD, f"{c}/mechanisms/modfiles/exp2syn.mod")
    # NEURON's: bmtk's folder as it is (Exp2Syn is built into NEURON), compiled, outside components/
    # so that it need not travel to the GPU machine
    nrn = f"{d}/nrn_mechanisms"
    shutil.rmtree(nrn, ignore_errors=True)
    shutil.copytree(MOD_BMTK, f"{nrn}/modfiles", ignore=shutil.ignore_patterns("*.md"))
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "nrnivmodl"), "modfiles"], cwd=nrn, check=True,
                   stdout=subprocess.DEVNULL)


def build_network(d, ncells, seed):
    from bmtk.builder import NetworkBuilder
    from bmtk.builder.auxi.node_params import positions_columinar
    np.random.seed(seed)                          # positions_columinar draws from numpy's global generator
    rng = np.random.default_rng(seed)
    radius = 400.0 * np.sqrt(ncells / 10000.0)    # [µm]
    net = NetworkBuilder("v1")
    counts = [int(round(share * ncells)) for _, _, share, _, _ in TYPES]
    counts[0] += ncells - sum(counts)
    for (pop, ei, _, swc, fit), n in zip(TYPES, counts):
        net.add_nodes(N=n, positions=positions_columinar(N=n, center=[0.0, 50.0, 0.0], max_radius=radius, height=100.0),
                      pop_name=pop, ei=ei, model_type="biophysical", model_template="ctdb:Biophys1.hoc",
                      model_processing="aibs_perisomatic", dynamics_params=fit, morphology=swc)
    ninput = max(1, ncells // 10)
    inputs = NetworkBuilder("lgn")
    inputs.add_nodes(N=ninput, model_type="virtual", pop_name="lgn")

    # horizontal positions (x, z) [µm] by node id, for the vectorised all_to_one rules
    xz = {n.node_id: (n["positions"][0], n["positions"][2]) for n in net.nodes()}

    # nsyns comes from the rule (bmtk's add_edges lets an nsyns keyword replace connection_rule)
    cache = {}  # bmtk hands every target the same list of sources: their ids and positions once

    def recurrent(sources, target, pmax, nsyns):
        if id(sources) not in cache:
            ids = np.fromiter((s.node_id for s in sources), dtype=np.int64, count=len(sources))
            cache[id(sources)] = (sources, ids, np.array([xz[i] for i in ids]))
        _, ids, sx = cache[id(sources)]
        tx = np.array(xz[target.node_id])
        r2 = np.sum((sx - tx) ** 2, axis=1)
        p = pmax * np.exp(-r2 / SIGMA ** 2)
        p[ids == target.node_id] = 0.0                                   # no autapses
        return nsyns * (rng.random(len(ids)) < p).astype(np.int64)        # per source: 0 or nsyns synapses

    for (se, te), pmax in PMAX.items():
        exc = se == "e"
        net.add_edges(source={"ei": se}, target={"ei": te}, connection_rule=recurrent,
                           connection_params={"pmax": pmax, "nsyns": NSYNS[se]},
                           iterator="all_to_one", syn_weight=WEIGHT[(se, te)],
                           target_sections=["basal", "apical"] if exc else ["soma", "basal"],
                           distance_range=[0.0, 200.0] if exc else [0.0, 50.0],
                           delay=DELAY[se], dynamics_params="exc.json" if exc else "inh.json", model_template="exp2syn")

    def from_lgn(sources, target, p):
        return 2 * (rng.random(len(sources)) < p).astype(np.int64)  # nsyns 2

    for te in ("e", "i"):
        inputs.add_edges(source=inputs.nodes(), target=net.nodes(ei=te), connection_rule=from_lgn,
                         connection_params={"p": min(1.0, INPUT_INDEGREE / ninput)}, iterator="all_to_one",
                         syn_weight=INPUT_WEIGHT[te], delay=2.0,
                         target_sections=["basal", "apical"], distance_range=[0.0, 200.0],
                         dynamics_params="exc.json", model_template="exp2syn")
    net.build()
    inputs.build()
    net.save(output_dir=f"{d}/network")
    inputs.save(output_dir=f"{d}/network")
    return ninput, counts


def write_configs(d, tstop, ninput, counts, seed):
    first = np.cumsum([0] + counts[:-1]).tolist()    # the first node of each cell type: its soma v is reported
    bmtk_network.write_simulation_configs(
        d, tstop=tstop, input_pop="lgn", ninput=ninput, rate=INPUT_RATE, seed=seed, celsius=34.0, v_init=-80.0,
        nodes=("lgn", "v1"), edges=("lgn_v1", "v1_v1"),
        node_sets={"lgn": {"population": "lgn"}, "recorded": {"population": "v1", "node_id": first}},
        reports={"soma_v": {"cells": "recorded", "variable_name": "v", "module": "membrane_report", "sections": "soma"}},
        bmtk_mechanisms_dir="$BASE_DIR/nrn_mechanisms", point_models=False)
    with open(f"{d}/network_info.json", "w") as f:
        json.dump({"cells": sum(counts), "types": {t[0]: n for t, n in zip(TYPES, counts)}, "inputs": ninput,
                   "tstop_ms": tstop, "seed": seed, "built_by": "bench/sonata_allen_network.py (bmtk NetworkBuilder)"},
                  f, indent=1)


def du(path):
    return sum(os.path.getsize(os.path.join(p, f)) for p, _, fs in os.walk(path) for f in fs)


def build(a):
    d = os.path.abspath(a.dir)
    for sub in ("network", "components", "inputs", "output_bmtk", "output_cs"):
        shutil.rmtree(f"{d}/{sub}", ignore_errors=True)
    os.makedirs(d, exist_ok=True)
    t0 = time.time()
    write_components(d)
    ninput, counts = build_network(d, a.cells, a.seed)
    write_configs(d, a.tstop, ninput, counts, a.seed)
    import h5py
    nedges = {}
    for e in ("lgn_v1", "v1_v1"):
        with h5py.File(f"{d}/network/{e}_edges.h5", "r") as f:
            nedges[e] = sum(int(g["source_node_id"].shape[0]) for g in f["edges"].values())
    carried = sum(du(f"{d}/{s}") for s in ("network", "components", "inputs"))
    print(f"{sum(counts)} cells {dict(zip([t[0] for t in TYPES], counts))}, {ninput} virtual inputs, "
          f"edges {nedges}; built in {time.time() - t0:.0f} s; network + components + inputs "
          f"{carried / 1e6:.1f} MB (what the GPU machine needs)")
    with open(f"{d}/network_info.json") as f:
        info = json.load(f)
    info.update(edges=nedges, carried_mb=round(carried / 1e6, 2))
    with open(f"{d}/network_info.json", "w") as f:
        json.dump(info, f, indent=1)


def run(a):
    """bmtk + NEURON, as tests/sonata/bmtk_network.py runs it (hh is not used by these cells)."""
    t0 = time.time()
    if int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("PMI_SIZE", "1"))) > 1:
        from mpi4py import MPI  # noqa: F401  MPI up first, then NEURON joins it (the wheel loads MPI on demand)
        from neuron import h
        h.nrnmpi_init()
    from bmtk.simulator import bionet
    conf = bionet.Config.from_json(a.config, validate=True)
    conf.build_env()
    net = bionet.BioNetwork.from_config(conf)
    sim = bionet.BioSimulator.from_config(conf, network=net)
    t1, c1 = time.time(), time.process_time()
    sim.run()
    c2 = time.process_time()
    from neuron import h
    pc = h.ParallelContext()
    pc.barrier()
    t3 = time.time()
    cpu = pc.allreduce(c2 - c1, 2)  # [s] the busiest rank's CPU time: what a loaded machine does not inflate
    if int(pc.id()) == 0:
        with open(a.timing, "w") as f:
            json.dump({"build_s": t1 - t0, "run_s": t3 - t1, "run_cpu_s": cpu, "ranks": int(pc.nhost())}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("dir")
    b.add_argument("--cells", type=int, default=10000)
    b.add_argument("--tstop", type=float, default=100.0, help="[ms]")
    b.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("run")
    r.add_argument("config")
    r.add_argument("timing")
    a = ap.parse_args()
    return build(a) if a.cmd == "build" else run(a)


if __name__ == "__main__":
    sys.exit(main())
