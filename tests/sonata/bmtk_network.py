"""Small SONATA networks built with bmtk's NetworkBuilder, and bmtk + NEURON runs of them, for
tests/test_sonata_bmtk.py (run with the reference venv's python: scripts/ref-venv.sh).

    python bmtk_network.py build ff|recurrent|allen|points DIR MECHS
                                                     writes DIR/{network,components,inputs}/ and
                                                     DIR/config_bmtk.json, DIR/config_cs.json
    python bmtk_network.py run DIR/config_bmtk.json  bmtk + NEURON (hh without its rate tables)

The cells are ball-and-stick-like SWC cells with NEURON's built-in hh on the soma and pas
elsewhere, given to bmtk as an aibs_perisomatic fit (bmtk's own processing, unchanged), so no
mechanisms need compiling but bmtk's vecevent.mod (VecStim, for bmtk's virtual cells; MECHS is
tests/data/sonata/mechanisms, compiled here with nrnivmodl). Synapses are NEURON's Exp2Syn (model_template exp2syn).
  ff:        20 virtual Poisson inputs → 6 cells (two node types) → 4 cells, every synapse at an
             explicit afferent_section_id / afferent_section_pos.
  recurrent: 40 virtual inputs → 30 excitatory + 10 inhibitory cells, connected at random with
             bmtk's placement rule (target_sections + distance_range; 3 or 2 synapses per edge, counted
             by the connection rule: p 0.15 input, 0.1 from exc, 0.2 from inh, no autapses).
  allen:     the five Allen perisomatic cells and two IntFire1 cells (build_allen).
  points:    NetStim, IntFire2 and IntFire4 nodes and two hh cells (build_points).
"""
import json
import os
import sys

import numpy as np

# single-point soma (r = 8 µm), a dendrite trunk (100 µm) splitting in two (150 µm each), an
# apical dendrite (300 µm), an axon (replaced by bmtk's stub): sections soma 0, dend 1-3, apic 4,
# then the stub 5-6
SWC = """# test cell for tests/test_sonata_bmtk.py
1 1 0 0 0 8 -1
2 3 0 -8 0 1.0 1
3 3 0 -60 0 1.0 2
4 3 0 -108 0 1.0 3
5 3 -50 -200 0 0.7 4
6 3 -100 -250 0 0.6 5
7 3 50 -200 0 0.7 4
8 3 100 -250 0 0.6 7
9 4 0 8 0 1.5 1
10 4 0 150 0 1.2 9
11 4 0 308 0 1.0 10
12 2 8 0 0 0.5 1
13 2 60 0 0 0.5 12
"""


def fit(gnabar=0.12):
    """An aibs_perisomatic fit JSON: hh on the soma, pas everywhere (bmtk inserts it)."""
    genome = [{"section": "soma", "name": n, "value": v, "mechanism": "hh"}
              for n, v in (("gnabar_hh", gnabar), ("gkbar_hh", 0.036), ("gl_hh", 0.0003), ("el_hh", -54.3))]
    genome += [{"section": s, "name": "g_pas", "value": 5e-5, "mechanism": ""} for s in ("dend", "apic", "axon")]
    genome += [{"section": "soma", "name": "g_pas", "value": 0.0, "mechanism": ""}]
    return {"passive": [{"ra": 100.0, "e_pas": -65.0,
                         "cm": [{"section": s, "cm": 1.0} for s in ("soma", "dend", "apic", "axon")]}],
            "genome": genome,
            "conditions": [{"celsius": 6.3, "v_init": -65.0,
                            "erev": [{"section": "soma", "ena": 50.0, "ek": -77.0}]}]}


def write_components(d, mechanisms):
    import shutil
    import subprocess
    flat = not os.path.isdir(os.path.join(mechanisms, "modfiles"))  # a folder of .mod files: bmtk's modfiles/
    shutil.copytree(mechanisms, f"{d}/components/mechanisms/modfiles" if flat else f"{d}/components/mechanisms")
    # bmtk loads the compiled folder (bmtk's layout: modfiles/ compiled in its parent)
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "nrnivmodl"), "modfiles"],
                   cwd=f"{d}/components/mechanisms", check=True, stdout=subprocess.DEVNULL)
    os.makedirs(f"{d}/components/morphologies", exist_ok=True)
    os.makedirs(f"{d}/components/biophysical_neuron_templates", exist_ok=True)
    os.makedirs(f"{d}/components/synaptic_models", exist_ok=True)
    with open(f"{d}/components/morphologies/cell.swc", "w") as f:
        f.write(SWC)
    for name, g in (("hh_a.json", 0.12), ("hh_b.json", 0.10)):
        with open(f"{d}/components/biophysical_neuron_templates/{name}", "w") as f:
            json.dump(fit(g), f, indent=1)
    syns = {"exc.json": {"level_of_detail": "exp2syn", "tau1": 0.5, "tau2": 3.0, "erev": 0.0},
            "inh.json": {"level_of_detail": "exp2syn", "tau1": 1.0, "tau2": 8.0, "erev": -80.0}}
    for name, p in syns.items():
        with open(f"{d}/components/synaptic_models/{name}", "w") as f:
            json.dump(p, f)


def cell_props(pop, model):
    return dict(model_type="biophysical", model_template="ctdb:Biophys1.hoc", model_processing="aibs_perisomatic",
                dynamics_params=model, morphology="cell.swc", pop_name=pop)


def build_ff(d):
    from bmtk.builder import NetworkBuilder
    rng = np.random.default_rng(7)
    net = NetworkBuilder("cortex")
    net.add_nodes(N=3, **cell_props("L1a", "hh_a.json"))
    net.add_nodes(N=3, **cell_props("L1b", "hh_b.json"))
    net.add_nodes(N=4, **cell_props("L2", "hh_a.json"))
    inputs = NetworkBuilder("inputs")
    inputs.add_nodes(N=20, model_type="virtual", pop_name="lgn")

    def sec_rule(source, target, sections):
        return int(rng.choice(sections)), float(rng.uniform(0.05, 0.95))

    # inputs → first layer: 2-4 inputs each, on the dendrites (sections 1-3) and the apical (4)
    cm = inputs.add_edges(source=inputs.nodes(), target=net.nodes(pop_name=["L1a", "L1b"]),
                          connection_rule=lambda s, t: int(rng.random() < 0.2), syn_weight=0.006, delay=1.5,
                          dynamics_params="exc.json", model_template="exp2syn")
    cm.add_properties(["afferent_section_id", "afferent_section_pos"], rule=sec_rule,
                      rule_params={"sections": [1, 2, 3, 4]}, dtypes=[np.int64, np.float64])
    # first layer → second: every pair, on the soma (0), dendrites and the axon stub's far end (6)
    cm = net.add_edges(source=net.nodes(pop_name=["L1a", "L1b"]), target=net.nodes(pop_name="L2"),
                       connection_rule=1, syn_weight=0.004, delay=2.0, dynamics_params="exc.json",
                       model_template="exp2syn")
    cm.add_properties(["afferent_section_id", "afferent_section_pos"], rule=sec_rule,
                      rule_params={"sections": [0, 1, 2, 5, 6]}, dtypes=[np.int64, np.float64])
    net.build()
    inputs.build()
    net.save(output_dir=f"{d}/network")
    inputs.save(output_dir=f"{d}/network")
    return ["inputs", "cortex"], ["inputs_cortex", "cortex_cortex"], 20, 500.0, 12.0


def build_recurrent(d):
    from bmtk.builder import NetworkBuilder
    rng = np.random.default_rng(11)
    net = NetworkBuilder("v1")
    net.add_nodes(N=30, ei="e", **cell_props("exc", "hh_a.json"))
    net.add_nodes(N=10, ei="i", **cell_props("inh", "hh_b.json"))
    inputs = NetworkBuilder("lgn")
    inputs.add_nodes(N=40, model_type="virtual", pop_name="lgn")

    # The rule returns the edge's synapse count. bmtk's add_edges takes `nsyns=` as a fixed rule
    # that REPLACES connection_rule (bmtk/builder/network_adaptors/network.py), so passing both
    # would connect every pair (autapses included); the count goes through the rule instead.
    # `recurrent`: source and target in the same population, so no autapse.
    def p(prob, nsyns, recurrent=True):
        return lambda s, t: 0 if recurrent and s.node_id == t.node_id else nsyns * int(rng.random() < prob)

    inputs.add_edges(source=inputs.nodes(), target=net.nodes(), connection_rule=p(0.15, 3, recurrent=False), syn_weight=0.003,
                     delay=2.0, target_sections=["basal", "apical"], distance_range=[0.0, 400.0],
                     dynamics_params="exc.json", model_template="exp2syn")
    net.add_edges(source={"ei": "e"}, target=net.nodes(), connection_rule=p(0.1, 2), syn_weight=0.002, delay=2.0,
                  target_sections=["basal", "apical"], distance_range=[0.0, 400.0], dynamics_params="exc.json",
                  model_template="exp2syn")
    net.add_edges(source={"ei": "i"}, target=net.nodes(), connection_rule=p(0.2, 2), syn_weight=0.004, delay=2.0,
                  target_sections=["basal"], distance_range=[0.0, 150.0], dynamics_params="inh.json",
                  model_template="exp2syn")
    net.build()
    inputs.build()
    net.save(output_dir=f"{d}/network")
    inputs.save(output_dir=f"{d}/network")
    return ["lgn", "v1"], ["lgn_v1", "v1_v1"], 40, 1000.0, 15.0


# bmtk's bio_14cells cells: (pop_name, morphology, fit) of tests/data/allen (its PROVENANCE.md)
ALLEN = [("Scnn1a", "Scnn1a_473845048_m.swc", "472363762_fit.json"), ("Rorb", "Rorb_325404214_m.swc", "473863510_fit.json"),
         ("Nr5a1", "Nr5a1_471087815_m.swc", "473863035_fit.json"), ("PV1", "Pvalb_470522102_m.swc", "472912177_fit.json"),
         ("PV2", "Pvalb_469628681_m.swc", "473862421_fit.json")]


def build_allen(d):
    """20 virtual inputs → the five Allen perisomatic cells (synapses at explicit sections 0-10)
    and two IntFire1 cells; the Allen cells → the IntFire1 cells."""
    import shutil
    from bmtk.builder import NetworkBuilder
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "allen")
    for _, swc, fit in ALLEN:
        shutil.copy(os.path.join(src, swc), f"{d}/components/morphologies/{swc}")
        shutil.copy(os.path.join(src, fit), f"{d}/components/biophysical_neuron_templates/{fit}")
    os.makedirs(f"{d}/components/point_neuron_templates", exist_ok=True)
    with open(f"{d}/components/point_neuron_templates/IntFire1_exc.json", "w") as f:
        json.dump({"tau": 0.024, "type": "NEURON_IntFire1", "refrac": 0.003}, f)  # bmtk's IntFire1_exc_1.json
    with open(f"{d}/components/synaptic_models/instantaneousExc.json", "w") as f:
        json.dump({"level_of_detail": "instantaneous", "sign": 1}, f)
    rng = np.random.default_rng(5)
    net = NetworkBuilder("cortex")
    for pop, swc, fit in ALLEN:
        net.add_nodes(N=1, model_type="biophysical", model_template="ctdb:Biophys1.hoc",
                      model_processing="aibs_perisomatic", dynamics_params=fit, morphology=swc, pop_name=pop, ei="e")
    net.add_nodes(N=2, model_type="point_neuron", model_template="nrn:IntFire1", dynamics_params="IntFire1_exc.json",
                  pop_name="LIF", ei="e")
    inputs = NetworkBuilder("inputs")
    inputs.add_nodes(N=20, model_type="virtual", pop_name="lgn")
    cm = inputs.add_edges(source=inputs.nodes(), target=net.nodes(model_type="biophysical"),
                          connection_rule=lambda s, t: int(rng.random() < 0.5), syn_weight=0.004, delay=1.5,
                          dynamics_params="exc.json", model_template="exp2syn")
    cm.add_properties(["afferent_section_id", "afferent_section_pos"],
                      rule=lambda s, t: (int(rng.integers(0, 11)), float(rng.uniform(0.05, 0.95))),
                      dtypes=[np.int64, np.float64])
    inputs.add_edges(source=inputs.nodes(), target=net.nodes(model_type="point_neuron"), connection_rule=1,
                     syn_weight=0.2, delay=1.0, dynamics_params="instantaneousExc.json", nsyns=1)
    net.add_edges(source=net.nodes(model_type="biophysical"), target=net.nodes(model_type="point_neuron"),
                  connection_rule=2, syn_weight=0.3, delay=2.0, dynamics_params="instantaneousExc.json")
    net.build()
    inputs.build()
    net.save(output_dir=f"{d}/network")
    inputs.save(output_dir=f"{d}/network")
    return ["inputs", "cortex"], ["inputs_cortex", "cortex_cortex"], 20, 300.0, 20.0


# point cells other than IntFire1 (bmtk has no loader for them: run() registers one that sets the
# dynamics_params by name, in NEURON's units, which is how cablesim reads them)
POINT_CELLS = [("if2", "nrn:IntFire2", {"taum": 10.0, "taus": 15.0, "ib": 0.6}),
               ("if4", "nrn:IntFire4", {"taue": 4.0, "taui1": 8.0, "taui2": 16.0, "taum": 30.0}),
               ("stim", "nrn:NetStim", {"start": 12.0, "interval": 23.0, "number": 8, "noise": 0})]


def build_points(d):
    """20 virtual inputs and two NetStims → two IntFire2 and two IntFire4 cells (excitatory and
    inhibitory weights) → two hh cells (exp2syn at explicit sections); the hh cells → the
    IntFire4 cells."""
    from bmtk.builder import NetworkBuilder
    os.makedirs(f"{d}/components/point_neuron_templates", exist_ok=True)
    for pop, _, params in POINT_CELLS:
        with open(f"{d}/components/point_neuron_templates/{pop}.json", "w") as f:
            json.dump(params, f)
    for name, sign in (("exc_point.json", 1), ("inh_point.json", -1)):
        with open(f"{d}/components/synaptic_models/{name}", "w") as f:
            json.dump({"level_of_detail": "instantaneous", "sign": sign}, f)
    rng = np.random.default_rng(13)
    net = NetworkBuilder("points")
    for pop, tmpl, _ in POINT_CELLS:
        net.add_nodes(N=2, model_type="point_process", model_template=tmpl, dynamics_params=f"{pop}.json", pop_name=pop)
    net.add_nodes(N=2, **cell_props("hh", "hh_a.json"))
    inputs = NetworkBuilder("inputs")
    inputs.add_nodes(N=20, model_type="virtual", pop_name="lgn")
    point = ["if2", "if4"]
    inputs.add_edges(source=inputs.nodes(), target=net.nodes(pop_name=point),
                     connection_rule=lambda s, t: int(rng.random() < 0.4), syn_weight=0.25, delay=1.0,
                     dynamics_params="exc_point.json", nsyns=1)
    inputs.add_edges(source=inputs.nodes(), target=net.nodes(pop_name=point),
                     connection_rule=lambda s, t: int(rng.random() < 0.15), syn_weight=0.2, delay=1.5,
                     dynamics_params="inh_point.json", nsyns=1)
    net.add_edges(source=net.nodes(pop_name="stim"), target=net.nodes(pop_name=point), connection_rule=1,
                  syn_weight=0.4, delay=2.0, dynamics_params="exc_point.json")
    cm = net.add_edges(source=net.nodes(pop_name=point), target=net.nodes(pop_name="hh"), connection_rule=1,
                       syn_weight=0.01, delay=1.5, dynamics_params="exc.json", model_template="exp2syn")
    cm.add_properties(["afferent_section_id", "afferent_section_pos"],
                      rule=lambda s, t: (int(rng.integers(0, 5)), float(rng.uniform(0.05, 0.95))),
                      dtypes=[np.int64, np.float64])
    net.add_edges(source=net.nodes(pop_name="hh"), target=net.nodes(pop_name="if4"), connection_rule=1,
                  syn_weight=0.3, delay=1.0, dynamics_params="exc_point.json")
    net.build()
    inputs.build()
    net.save(output_dir=f"{d}/network")
    inputs.save(output_dir=f"{d}/network")
    return ["inputs", "points"], ["inputs_points", "points_points"], 20, 400.0, 15.0


# allen: v on every segment of one cell (no "sections": bmtk's default, all), v on the dendrites of
# another (sections by type), the soma's cai and v of the three others (two reports on the same
# cells and sections), and v on the soma of every biophysical cell (no "cells": bmtk's default, the
# node set "biophysical"; with all_v and dend_v, reports of the same cells on other sections)
EVERY_V = {"every_v": {"variable_name": "v", "module": "membrane_report", "sections": "soma"}}
ALLEN_REPORTS = {**EVERY_V,
    "all_v": {"cells": {"population": "cortex", "node_id": [0]}, "variable_name": "v", "module": "membrane_report"},
    "dend_v": {"cells": {"population": "cortex", "node_id": [3]}, "variable_name": "v",
               "module": "membrane_report", "sections": ["basal", "apical"]},
    "soma_cai": {"cells": {"population": "cortex", "node_id": [1, 2, 4]}, "variable_name": "cai",
                 "module": "membrane_report", "sections": "soma"},
    "soma_v": {"cells": {"population": "cortex", "node_id": [1, 2, 4]}, "variable_name": "v",
               "module": "membrane_report", "sections": "soma"}}

# ff: besides soma_v on every cell, v on every segment of cell 4 (node type L1b, whose three cells
# soma_v records on the soma: the same node type, other cells and sections) and every_v
FF_REPORTS = {"all_v": {"cells": {"population": "cortex", "node_id": [4]}, "variable_name": "v",
                        "module": "membrane_report", "sections": "all"}, **EVERY_V,
              # bmtk's file_name and row window: every 0.5 ms of [10, 40) ms
              "window_v": {"cells": {"population": "cortex", "node_id": [4, 5]}, "variable_name": "v",
                           "module": "membrane_report", "sections": "soma", "file_name": "soma_v_window.h5",
                           "start_time": 10.0, "end_time": 40.0, "dt": 0.5}}


def write_simulation_configs(d, *, tstop, input_pop, ninput, rate, seed, celsius, v_init, nodes, edges,
                             node_sets, reports, bmtk_mechanisms_dir="$COMPONENTS_DIR/mechanisms",
                             point_models=True):
    """Poisson spike trains of the virtual population input_pop (inputs/spikes.h5, rate [Hz] for
    tstop [ms]) and the two simulation configs of one network: config_bmtk.json (bmtk + NEURON,
    its mechanisms_dir bmtk_mechanisms_dir) and config_cs.json (cablesim), which differ only in
    output_dir and mechanisms_dir. Shared with bench/sonata_allen_network.py."""
    from bmtk.utils.reports.spike_trains import PoissonSpikeGenerator
    os.makedirs(f"{d}/inputs", exist_ok=True)
    psg = PoissonSpikeGenerator(population=input_pop, seed=seed)
    psg.add(node_ids=list(range(ninput)), firing_rate=rate, times=(0.0, tstop / 1000.0))
    psg.to_sonata(f"{d}/inputs/spikes.h5")
    for tag in ("bmtk", "cs"):
        components = {"mechanisms_dir": bmtk_mechanisms_dir if tag == "bmtk" else "$COMPONENTS_DIR/mechanisms",
                      "morphologies_dir": "$COMPONENTS_DIR/morphologies",
                      "synaptic_models_dir": "$COMPONENTS_DIR/synaptic_models",
                      "biophysical_neuron_models_dir": "$COMPONENTS_DIR/biophysical_neuron_templates"}
        if point_models:
            components["point_neuron_models_dir"] = "$COMPONENTS_DIR/point_neuron_templates"
        cfg = {
            "manifest": {"$BASE_DIR": "${configdir}", "$NETWORK_DIR": "$BASE_DIR/network",
                         "$COMPONENTS_DIR": "$BASE_DIR/components"},
            "target_simulator": "NEURON",
            "run": {"tstart": 0.0, "tstop": tstop, "dt": 0.025, "dL": 20.0, "spike_threshold": -15.0,
                    "nsteps_block": 5000},
            "conditions": {"celsius": celsius, "v_init": v_init},
            "inputs": {"lgn_spikes": {"input_type": "spikes", "module": "sonata",
                                      "input_file": "$BASE_DIR/inputs/spikes.h5", "node_set": input_pop}},
            "output": {"log_file": "log.txt", "output_dir": f"$BASE_DIR/output_{tag}", "spikes_file": "spikes.h5",
                       "spikes_sort_order": "time", "overwrite_output_dir": True},
            "components": components,
            "networks": {
                "nodes": [{"nodes_file": f"$NETWORK_DIR/{n}_nodes.h5", "node_types_file": f"$NETWORK_DIR/{n}_node_types.csv"}
                          for n in nodes],
                "edges": [{"edges_file": f"$NETWORK_DIR/{e}_edges.h5", "edge_types_file": f"$NETWORK_DIR/{e}_edge_types.csv"}
                          for e in edges]},
            "node_sets": node_sets,
            "reports": reports,
        }
        with open(f"{d}/config_{tag}.json", "w") as f:
            json.dump(cfg, f, indent=2)


def build(kind, d, mechanisms):
    write_components(d, mechanisms)
    nodes, edges, ninput, tstop, rate = {"ff": build_ff, "recurrent": build_recurrent, "allen": build_allen,
                                         "points": build_points}[kind](d)
    allen = kind == "allen"
    soma_v = {"soma_v": {"cells": "cells", "variable_name": "v", "module": "membrane_report", "sections": "soma"}}
    reports = {"allen": ALLEN_REPORTS, "points": {}, "ff": {**soma_v, **FF_REPORTS}}.get(kind, soma_v)
    # "biophysical": the node set a report without "cells" records (its biophysical nodes) in bmtk,
    # which needs it in the config
    write_simulation_configs(d, tstop=tstop, input_pop=nodes[0], ninput=ninput, rate=rate, seed=3,
                             celsius=34.0 if allen else 6.3, v_init=-80.0 if allen else -65.0, nodes=nodes,
                             edges=edges, node_sets={nodes[0]: {"population": nodes[0]}, "cells": {"population": nodes[1]},
                                                     "biophysical": {"population": nodes[1]}},
                             reports=reports)


def nrn_point_cell(cell, template_name, dynamics_params):
    """NEURON's IntFire2, IntFire4, NetStim with the dynamics_params set by name ([ms])."""
    from neuron import h
    hobj = getattr(h, template_name)()
    for k, v in (dynamics_params or {}).items():
        if isinstance(v, (int, float)):
            setattr(hobj, k, v)
    return hobj


def run(config):
    from bmtk.simulator import bionet
    from bmtk.simulator.bionet.pyfunction_cache import add_cell_model
    from neuron import h
    for _, tmpl, _ in POINT_CELLS:
        for mt in ("point_process", "point_neuron"):
            add_cell_model(nrn_point_cell, directive=tmpl, model_type=mt, overwrite=True)
    conf = bionet.Config.from_json(config, validate=True)
    conf.build_env()
    h.usetable_hh = 0  # cablesim's hh computes its rates directly (DESIGN.md)
    net = bionet.BioNetwork.from_config(conf)
    sim = bionet.BioSimulator.from_config(conf, network=net)
    sim.run()


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        run(sys.argv[2])
