"""A small recurrent SONATA circuit written with h5py alone (no bmtk), for the tests that run a
SONATA config without the reference venv (tests/test_mpi.py: 1-4 ranks against one process).

  net: 14 biophysical cells of three node types (a ball-and-stick SWC with hh on the soma and pas
       on the dendrites, as bmtk's aibs_perisomatic processing builds it), then 2 nrn:IntFire1
       point cells; 10 virtual input nodes (inp) with SONATA spike times.
  edges: inp → net at explicit afferent_section_id/pos (exp2syn), net → net recurrent with bmtk's
       placement rule (target_sections + distance_range: the seeded generator), excitatory and
       inhibitory, and net → the IntFire1 cells.
  reports: v and hh's m (m_hh) on the soma of the cells of node type 100, v on every segment of two
       cells of node type 101 (sections: all) and on the soma of all five (soma_v101: two reports on
       the same node type, other cells and sections), v on the dendrites of the cells of node type
       103 (sections: [basal, apical]), a list of variables (m_hh and v on the soma of three cells
       of two types: soma_list.h5 and soma_list_v.h5), and v on the soma of every biophysical cell
       (every_v: no "cells", bmtk's default).
write(d, h5py, np, output_dir, sort_order) writes it into d and returns the simulation config's path.
"""
import json
import os

SWC = ("1 1 0 0 0 8 -1\n2 3 0 -8 0 1 1\n3 3 0 -100 0 1 2\n4 3 0 -200 0 0.8 3\n"
       "5 4 0 8 0 1.2 1\n6 4 0 150 0 1 5\n7 4 -50 250 0 0.6 6\n8 4 50 250 0 0.6 6\n")
FIT = {"passive": [{"ra": 100.0, "e_pas": -65.0, "cm": [{"section": "soma", "cm": 1.0}]}],
       "genome": [{"section": "soma", "name": "gnabar_hh", "value": 0.12, "mechanism": "hh"},
                  {"section": "soma", "name": "g_pas", "value": 0.0, "mechanism": ""},
                  {"section": "dend", "name": "g_pas", "value": 1e-4, "mechanism": ""},
                  {"section": "apic", "name": "g_pas", "value": 1e-4, "mechanism": ""}],
       "conditions": [{"erev": [{"section": "soma", "ena": 50.0, "ek": -77.0}]}]}
NBIO, NPOINT, NINP = 14, 2, 10
TSTOP = 120.0  # [ms]


def write(d, h5py, np, output_dir="output", sort_order="time"):
    comp = os.path.join(d, "comp")
    os.makedirs(os.path.join(comp, "mechanisms"), exist_ok=True)
    with open(os.path.join(comp, "cell.swc"), "w") as f:
        f.write(SWC)
    with open(os.path.join(comp, "fit.json"), "w") as f:
        json.dump(FIT, f)
    for name, tau1, tau2, erev in (("exc", 0.5, 3.0, 0.0), ("inh", 1.0, 8.0, -80.0)):
        with open(os.path.join(comp, f"{name}.json"), "w") as f:
            json.dump({"level_of_detail": "exp2syn", "tau1": tau1, "tau2": tau2, "erev": erev}, f)
    with open(os.path.join(comp, "if1.json"), "w") as f:
        json.dump({"tau": 0.008, "refrac": 0.003}, f)  # [s], as bmtk reads them
    for name, sign in (("exc_point", 1), ("inh_point", -1)):
        with open(os.path.join(comp, f"{name}.json"), "w") as f:
            json.dump({"sign": sign}, f)
    with open(os.path.join(d, "node_types.csv"), "w") as f:
        f.write("node_type_id model_type model_template model_processing dynamics_params morphology\n"
                "100 biophysical ctdb:Biophys1.hoc aibs_perisomatic fit.json cell.swc\n"
                "101 biophysical ctdb:Biophys1.hoc aibs_perisomatic fit.json cell\n"
                "103 biophysical ctdb:Biophys1.hoc aibs_perisomatic fit.json cell.swc\n"
                "102 point_process nrn:IntFire1 NULL if1.json NULL\n"
                "200 virtual NULL NULL NULL NULL\n")
    with open(os.path.join(d, "edge_types.csv"), "w") as f:
        f.write("edge_type_id syn_weight delay model_template dynamics_params target_sections distance_range\n"
                "300 0.012 2.0 exp2syn exc.json NULL NULL\n"
                "301 0.004 1.5 exp2syn exc.json \"['dend', 'apic']\" \"[0.0, 250.0]\"\n"
                "302 0.006 1.0 exp2syn inh.json \"['soma', 'dend']\" \"[0.0, 100.0]\"\n"
                "303 0.6 1.0 NULL exc_point.json NULL NULL\n"
                "304 0.3 1.0 NULL inh_point.json NULL NULL\n")
    rng = np.random.default_rng(31)
    nnet = NBIO + NPOINT
    types = np.array([100] * 7 + [101] * 5 + [103] * 2 + [102] * NPOINT, dtype=np.int64)
    with h5py.File(os.path.join(d, "nodes.h5"), "w") as f:
        for pop, t in (("net", types), ("inp", np.full(NINP, 200, dtype=np.int64))):
            g = f.create_group(f"nodes/{pop}")
            g["node_type_id"] = t
            g["node_group_id"] = np.zeros(len(t), dtype=np.int64)
            g["node_group_index"] = np.arange(len(t), dtype=np.int64)
            g.create_group("0")
    with h5py.File(os.path.join(d, "edges.h5"), "w") as f:
        # inputs → each biophysical cell: 3 inputs each, explicit sections (soma 0, dend 1, apic 3)
        src = np.array([(3 * t + k) % NINP for t in range(NBIO) for k in range(3)], dtype=np.int64)
        tgt = np.repeat(np.arange(NBIO, dtype=np.int64), 3)
        sec = np.array([[0, 1, 3][k] for _ in range(NBIO) for k in range(3)], dtype=np.int64)
        _pop(f, "inp_net", "inp", "net", src, tgt, np.full(len(src), 300, dtype=np.int64),
             {"afferent_section_id": sec, "afferent_section_pos": rng.uniform(0.1, 0.9, len(src))}, np)
        # recurrent: each biophysical cell gets 4 excitatory (bmtk's placement, nsyns 2) and 2 inhibitory
        # inputs from the others; the point cells get 5 excitatory and 2 inhibitory ones
        s, t, ty = [], [], []
        for j in range(nnet):
            others = [i for i in range(NBIO) if i != j]
            pick = rng.choice(others, 6, replace=False)
            point = j >= NBIO
            for k, i in enumerate(pick):
                s.append(i)
                t.append(j)
                ty.append((304 if k >= 4 else 303) if point else (302 if k >= 4 else 301))
        ty = np.array(ty, dtype=np.int64)
        _pop(f, "net_net", "net", "net", np.array(s, dtype=np.int64), np.array(t, dtype=np.int64), ty,
             {"nsyns": np.where(ty == 301, 2, 1).astype(np.int64)}, np)
    with h5py.File(os.path.join(d, "inputs.h5"), "w") as f:
        times, ids = [], []
        for i in range(NINP):
            ts = np.sort(rng.uniform(1.0, TSTOP - 5.0, 14))
            times += list(ts)
            ids += [i] * len(ts)
        o = np.argsort(times, kind="stable")
        f["spikes/inp/timestamps"] = np.array(times)[o]
        f["spikes/inp/node_ids"] = np.array(ids, dtype=np.int64)[o]
    cfg = {"manifest": {"$BASE": "${configdir}", "$OUT": "$BASE/" + output_dir},
           "run": {"tstop": TSTOP, "dt": 0.025, "dL": 20.0, "spike_threshold": -15.0},
           "conditions": {"celsius": 6.3, "v_init": -65.0},
           "components": {"morphologies_dir": "$BASE/comp", "biophysical_neuron_models_dir": "$BASE/comp",
                          "synaptic_models_dir": "$BASE/comp", "point_neuron_models_dir": "$BASE/comp",
                          "mechanisms_dir": "$BASE/comp/mechanisms"},
           "networks": {"nodes": [{"nodes_file": "$BASE/nodes.h5", "node_types_file": "$BASE/node_types.csv"}],
                        "edges": [{"edges_file": "$BASE/edges.h5", "edge_types_file": "$BASE/edge_types.csv"}]},
           "inputs": {"inp_spikes": {"input_type": "spikes", "module": "sonata", "input_file": "$BASE/inputs.h5",
                                     "node_set": "inp"}},
           "node_sets": {"inp": {"population": "inp"}, "bio": {"population": "net", "node_type_id": [100]}},
           "reports": {"soma_v": {"cells": "bio", "variable_name": "v", "module": "membrane_report",
                                  "sections": "soma"},
                       "soma_m": {"cells": "bio", "variable_name": "m_hh", "module": "membrane_report",
                                  "sections": "soma"},
                       "all_v": {"cells": {"population": "net", "node_id": [11, 9]}, "variable_name": "v",
                                 "module": "membrane_report", "sections": "all"},
                       "soma_v101": {"cells": {"population": "net", "node_type_id": 101}, "variable_name": "v",
                                     "module": "membrane_report", "sections": "soma"},
                       "dend_v": {"cells": {"population": "net", "node_type_id": 103}, "variable_name": "v",
                                  "module": "membrane_report", "sections": ["basal", "apical"]},
                       "soma_list": {"cells": {"population": "net", "node_id": [8, 0, 3]}, "variable_name": ["m_hh", "v"],
                                     "module": "membrane_report", "sections": "soma"},
                       "every_v": {"variable_name": "v", "module": "membrane_report", "sections": "soma"}},
           "output": {"output_dir": "$OUT", "spikes_file": "spikes.h5", "spikes_sort_order": sort_order}}
    path = os.path.join(d, f"config_{output_dir}.json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    return path


def _pop(f, name, spop, tpop, src, tgt, types, group, np):
    g = f.create_group(f"edges/{name}")
    g["source_node_id"] = src
    g["source_node_id"].attrs["node_population"] = spop
    g["target_node_id"] = tgt
    g["target_node_id"].attrs["node_population"] = tpop
    g["edge_type_id"] = types
    g["edge_group_id"] = np.zeros(len(src), dtype=np.int64)
    g["edge_group_index"] = np.arange(len(src), dtype=np.int64)
    for k, v in group.items():
        g[f"0/{k}"] = v
