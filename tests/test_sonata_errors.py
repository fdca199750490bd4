#!/usr/bin/python3
"""SONATA input without bmtk (issue 31): a minimal circuit written here with h5py (two hh cells,
a virtual input with CSV spikes, a current clamp, a soma report), run by `cablesim run
simulation_config.json`; then the same circuit broken one way at a time, each of which must end
with exit status 1 and one line naming the file and the dataset, row or key.

Checks of the valid run: the output goes to the config's output_dir/spikes_file; cell 0 (clamped)
fires, cell 1 (driven only by the input spikes through explicit afferent sections) fires after
the first input spike + delay; the report has the node ids of its node set; -o overrides the
output; `cablesim run` of a config whose mechanisms_dir holds only bmtk's vecevent.mod needs no
compiler. Prints one line per check and 'N passed, N failed'.

Usage: test_sonata_errors.py --cablesim PATH --source-dir DIR --work-dir DIR
Exit: 0 all passed, 1 a check failed, 77 skipped (no h5py).
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402

SWC = "1 1 0 0 0 8 -1\n2 3 0 -8 0 1 1\n3 3 0 -100 0 1 2\n4 3 0 -200 0 0.8 3\n5 2 8 0 0 0.5 1\n6 2 40 0 0 0.5 5\n"
FIT = {"passive": [{"ra": 100.0, "e_pas": -65.0, "cm": [{"section": "soma", "cm": 1.0}]}],
       "genome": [{"section": "soma", "name": "gnabar_hh", "value": 0.12, "mechanism": "hh"},
                  {"section": "soma", "name": "g_pas", "value": 0.0, "mechanism": ""},
                  {"section": "dend", "name": "g_pas", "value": 1e-4, "mechanism": ""}],
       "conditions": [{"erev": [{"section": "soma", "ena": 50.0, "ek": -77.0}]}]}


def write_circuit(d, h5py, np):
    os.makedirs(f"{d}/comp/mechanisms/modfiles", exist_ok=True)
    with open(f"{d}/comp/cell.swc", "w") as f:
        f.write(SWC)
    with open(f"{d}/comp/fit.json", "w") as f:
        json.dump(FIT, f)
    with open(f"{d}/comp/exc.json", "w") as f:
        json.dump({"level_of_detail": "exp2syn", "tau1": 0.5, "tau2": 3.0, "erev": 0.0}, f)
    with open(f"{d}/comp/mechanisms/modfiles/vecevent.mod", "w") as f:
        f.write("NEURON { ARTIFICIAL_CELL VecStim }\n")  # left out by cablesim, never compiled
    with open(f"{d}/node_types.csv", "w") as f:
        f.write("node_type_id model_type model_template model_processing dynamics_params morphology\n"
                "100 biophysical ctdb:Biophys1.hoc aibs_perisomatic fit.json cell.swc\n"
                "200 virtual NULL NULL NULL NULL\n")
    with open(f"{d}/edge_types.csv", "w") as f:
        f.write("edge_type_id syn_weight delay model_template dynamics_params\n"
                "300 0.02 2.0 exp2syn exc.json\n")
    with h5py.File(f"{d}/nodes.h5", "w") as f:
        for pop, n, t in (("net", 2, 100), ("inp", 1, 200)):
            g = f.create_group(f"nodes/{pop}")
            g["node_type_id"] = np.full(n, t, dtype=np.int64)
            g["node_group_id"] = np.zeros(n, dtype=np.int64)
            g["node_group_index"] = np.arange(n, dtype=np.int64)
            g.create_group("0")
    with h5py.File(f"{d}/edges.h5", "w") as f:
        g = f.create_group("edges/inp_net")
        g["source_node_id"] = np.array([0], dtype=np.int64)
        g["source_node_id"].attrs["node_population"] = "inp"
        g["target_node_id"] = np.array([1], dtype=np.int64)
        g["target_node_id"].attrs["node_population"] = "net"
        g["edge_type_id"] = np.array([300], dtype=np.int64)
        g["edge_group_id"] = np.array([0], dtype=np.int64)
        g["edge_group_index"] = np.array([0], dtype=np.int64)
        g["0/afferent_section_id"] = np.array([1], dtype=np.int64)
        g["0/afferent_section_pos"] = np.array([0.3])
    with open(f"{d}/spikes.csv", "w") as f:
        f.write("timestamps population node_ids\n5.0 inp 0\n5.5 inp 0\n6.0 inp 0\n")
    cfg = {"manifest": {"$BASE": "${configdir}"},
           "run": {"tstop": 50.0, "dt": 0.025, "dL": 20.0, "spike_threshold": -15.0},
           "conditions": {"celsius": 6.3, "v_init": -65.0},
           "components": {"morphologies_dir": "$BASE/comp", "biophysical_neuron_models_dir": "$BASE/comp",
                          "synaptic_models_dir": "$BASE/comp", "mechanisms_dir": "$BASE/comp/mechanisms"},
           "networks": {"nodes": [{"nodes_file": "$BASE/nodes.h5", "node_types_file": "$BASE/node_types.csv"}],
                        "edges": [{"edges_file": "$BASE/edges.h5", "edge_types_file": "$BASE/edge_types.csv"}]},
           "inputs": {"inp_spikes": {"input_type": "spikes", "module": "csv", "input_file": "$BASE/spikes.csv",
                                     "node_set": "inp"},
                      "clamp": {"input_type": "current_clamp", "module": "IClamp", "node_set": "clamped",
                                "amp": 0.3, "delay": 10.0, "duration": 30.0}},
           "node_sets": {"inp": {"population": "inp"}, "clamped": {"population": "net", "node_id": [0]}},
           "reports": {"soma_v": {"cells": {"population": "net"}, "variable_name": "v", "module": "membrane_report",
                                  "sections": "soma"}},
           "output": {"output_dir": "$BASE/out", "spikes_file": "spikes.h5", "spikes_sort_order": "time"}}
    with open(f"{d}/config.json", "w") as f:
        json.dump(cfg, f, indent=1)
    return cfg


def main():
    a = checks.arguments()
    mods = checks.h5py_numpy()
    if mods is None:
        return 77
    h5py, np = mods
    check = checks.Tally()

    env = dict(os.environ, CABLESIM_CACHE_DIR=os.path.join(a.work_dir, "cache"))

    def run(d, *extra):
        return subprocess.run([a.cablesim, "run", f"{d}/config.json", "--backend", "cpu", "-q", *extra],
                              capture_output=True, text=True, env=env)

    # the valid circuit
    d = os.path.join(a.work_dir, "ok")
    shutil.rmtree(a.work_dir, ignore_errors=True)
    os.makedirs(d)
    write_circuit(d, h5py, np)
    r = run(d)
    check(r.returncode == 0, f"the valid circuit runs ({r.stderr.strip()[:200]})")
    out = f"{d}/out/spikes.h5"
    if r.returncode == 0 and os.path.exists(out):
        with h5py.File(out, "r") as f:
            ids, ts = f["spikes/net/node_ids"][()], f["spikes/net/timestamps"][()]
            t0 = ts[ids == 0]
            t1 = ts[ids == 1]
            print(f"  cell 0 (clamped from 10 ms): {len(t0)} spikes {np.round(t0[:3], 3)}; cell 1 (input at 5 ms + 2 ms): "
                  f"{len(t1)} spikes {np.round(t1[:3], 3)}")
            check(len(t0) >= 2 and t0[0] > 10.0, "the clamped cell fires after the clamp starts")
            check(len(t1) >= 1 and 7.0 < t1[0] < 12.0, "the input's spikes reach cell 1 after their delay")
            rep = [k for k in f["report"]]
            nids = sorted(int(i) for k in rep for i in f[f"report/{k}/mapping/node_ids"][()])
            check(len(rep) == 1 and nids == [0, 1], f"the soma report covers the node set ({rep}, {nids})")
    else:
        check(False, "output at output_dir/spikes_file")
    # spikes_sort_order "id": the same spikes, by node id then time, `sorting` by_id (1 in the enum)
    srt = os.path.join(a.work_dir, "by_id")
    shutil.copytree(d, srt, ignore=shutil.ignore_patterns("out"))
    with open(f"{srt}/config.json") as fp:
        j = json.load(fp)
    j["output"]["spikes_sort_order"] = "id"
    with open(f"{srt}/config.json", "w") as fp:
        json.dump(j, fp)
    r = run(srt)
    ok = r.returncode == 0 and os.path.exists(out)
    if ok:
        with h5py.File(out, "r") as f, h5py.File(f"{srt}/out/spikes.h5", "r") as g:
            a_ = sorted(zip(f["spikes/net/node_ids"][()].tolist(), f["spikes/net/timestamps"][()].tolist()))
            b_ = list(zip(g["spikes/net/node_ids"][()].tolist(), g["spikes/net/timestamps"][()].tolist()))
            ok = a_ == b_ and len(b_) >= 4 and int(g["spikes/net"].attrs["sorting"]) == 1
    check(ok, f"spikes_sort_order id: the spikes sorted by node id, then time, sorting = by_id {r.stderr.strip()[-200:]}")
    r = run(d, "-o", f"{a.work_dir}/elsewhere.h5")
    check(r.returncode == 0 and os.path.exists(f"{a.work_dir}/elsewhere.h5"), "-o overrides the config's output")
    # with no output_dir yet and -o elsewhere, the run makes output_dir for its reports (as bmtk does)
    fresh = os.path.join(a.work_dir, "fresh")
    shutil.copytree(d, fresh, ignore=shutil.ignore_patterns("out"))
    r = run(fresh, "-o", f"{a.work_dir}/fresh.h5")
    check(r.returncode == 0 and os.path.exists(f"{fresh}/out/soma_v.h5"),
          f"output_dir is made for the reports when -o puts the file elsewhere {r.stderr.strip()[-200:]}")

    # the GPU, --backend cuda against cpu: the circuit's built-in exp2syn (its GPU half generated
    # from the same mechanisms/exp2syn.mod), then with NEURON's exp2syn.mod in its mechanisms_dir
    # (the catalogue's Exp2Syn, compiled for both)
    for what, mod in (("the built-in exp2syn", None), ("NEURON's exp2syn.mod", "tests/data/mod/exp2syn.mod")):
        g = os.path.join(a.work_dir, "gpu_builtin" if mod is None else "gpu")
        shutil.copytree(d, g, ignore=shutil.ignore_patterns("out"))
        if mod:
            shutil.copy(os.path.join(a.source_dir, mod), f"{g}/comp/mechanisms/modfiles/exp2syn.mod")
        rg = run(g, "-o", f"{g}/gpu.h5", "--backend", "cuda")
        if rg.returncode != 0 and ("no CUDA device" in rg.stderr or "no CUDA support" in rg.stderr):
            print(f"skipped: GPU, {what} (" + rg.stderr.strip()[-100:] + ")")
            continue
        rc = run(g, "-o", f"{g}/cpu.h5")
        ok, worst = rg.returncode == 0 and rc.returncode == 0, float("inf")
        if ok:
            (ig, tg), (ic, tc) = [(f["spikes/net/node_ids"][()], f["spikes/net/timestamps"][()])
                                  for f in (h5py.File(f"{g}/gpu.h5", "r"), h5py.File(f"{g}/cpu.h5", "r"))]
            ok = np.array_equal(ig, ic) and len(tg) >= 3
            worst = float(np.max(np.abs(tg - tc))) if ok else worst
            ok = ok and worst <= 1e-6
        check(ok, f"{what} on the GPU gives the CPU's spikes within 1e-6 ms (max {worst:.2g} ms) {rg.stderr.strip()[-200:]}")

    # broken one way at a time: (what, edit(d), text the one line must contain)
    def edit_json(path, fn):
        def f(d):
            with open(f"{d}/{path}") as fp:
                j = json.load(fp)
            fn(j)
            with open(f"{d}/{path}", "w") as fp:
                json.dump(j, fp)
        return f

    def write(path, text):
        def f(d):
            with open(f"{d}/{path}", "w") as fp:
                fp.write(text)
        return f

    def h5(path, fn):
        def f(d):
            with h5py.File(f"{d}/{path}", "a") as fp:
                fn(fp)
        return f

    def replace(g, name, value):
        attrs = dict(g[name].attrs)
        del g[name]
        g[name] = value
        for k, v in attrs.items():
            g[name].attrs[k] = v

    cases = [
        ("missing morphology", lambda d: os.remove(f"{d}/comp/cell.swc"), "cell.swc"),
        ("missing nodes file", lambda d: os.remove(f"{d}/nodes.h5"), "nodes.h5"),
        ("nodes file not HDF5", write("nodes.h5", "not hdf5\n"), "nodes.h5: cannot open as HDF5"),
        ("CSV row with a missing value", write("edge_types.csv", "edge_type_id syn_weight delay model_template\n300 0.02 2.0\n"),
         "edge_types.csv:2:"),
        ("unknown model_template", write("edge_types.csv", "edge_type_id syn_weight delay model_template dynamics_params\n"
                                                           "300 0.02 2.0 tm_synapse exc.json\n"), "tm_synapse"),
        ("section id outside the morphology", h5("edges.h5", lambda f: replace(f["edges/inp_net/0"], "afferent_section_id",
                                                                           np.array([9], dtype=np.int64))),
         "/edges/inp_net/0/afferent_section_id row 0: section 9 outside the morphology"),
        ("edge target outside its population", h5("edges.h5", lambda f: replace(f["edges/inp_net"], "target_node_id",
                                                                            np.array([7], dtype=np.int64))),
         "edges.h5: /edges/inp_net: edge 0"),
        ("dataset lengths differ", h5("nodes.h5", lambda f: replace(f["nodes/net"], "node_group_index",
                                                                  np.arange(3, dtype=np.int64))),
         "nodes.h5: /nodes/net"),
        ("node type not in the CSV", h5("nodes.h5", lambda f: replace(f["nodes/net"], "node_type_id",
                                                                    np.array([100, 777], dtype=np.int64))),
         "node_type_id 777"),
        ("unknown mechanism in the fit", edit_json("comp/fit.json", lambda j: j["genome"].append(
            {"section": "soma", "name": "gbar_NaTs", "value": 1.0, "mechanism": "NaTs"})), "'NaTs'"),
        ("unknown manifest variable", edit_json("config.json", lambda j: j["networks"]["nodes"][0].update(
            nodes_file="$NOWHERE/nodes.h5")), "config.json: manifest: unknown variable"),
        ("missing run.tstop", edit_json("config.json", lambda j: j["run"].pop("tstop")), "config.json: run.tstop"),
        ("unknown node set", edit_json("config.json", lambda j: j["inputs"]["clamp"].update(node_set="nobody")),
         "inputs.clamp: no node set 'nobody'"),
        ("spike of a node outside the population", write("spikes.csv", "timestamps population node_ids\n5.0 inp 4\n"),
         "spikes.csv: spike 0: node id 4"),
        ("unknown model_processing", write("node_types.csv",
                                           "node_type_id model_type model_template model_processing dynamics_params morphology\n"
                                           "100 biophysical ctdb:Biophys1.hoc my_processing fit.json cell.swc\n"
                                           "200 virtual NULL NULL NULL NULL\n"), "model_processing 'my_processing'"),
        ("point cells without their mechanism", write("node_types.csv",
                                           "node_type_id model_type model_template dynamics_params\n"
                                           "100 point_process nrn:NoSuchCell p.json\n200 virtual NULL NULL\n"),
         "NoSuchCell"),
        ("a point cell's unknown parameter", lambda d: (write("p.json", '{"taum": 10, "tauz": 1, "type": "x"}')(d),
                                                        write("node_types.csv",
                                           "node_type_id model_type model_template dynamics_params\n"
                                           "100 point_process nrn:IntFire2 p.json\n200 virtual NULL NULL\n")(d)),
         "p.json: dynamics_params: unknown parameter 'tauz' of mechanism 'IntFire2'"),
        ("a NetStim with noise", lambda d: (write("p.json", '{"start": 5, "noise": 0.5}')(d),
                                            write("node_types.csv",
                                           "node_type_id model_type model_template dynamics_params\n"
                                           "100 point_neuron nrn:NetStim p.json\n200 virtual NULL NULL\n")(d)),
         "p.json: dynamics_params: parameter 'noise'"),
        ("a report of an unknown variable", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            variable_name="m_nosuch")), "reports.soma_v: population 'net[0]': unknown variable 'm_nosuch'"),
        ("a report of a mechanism the cells lack", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            variable_name="NaTs.m")), "reports.soma_v: population 'net[0]': variable 'NaTs.m': no mechanism"),
        ("a report on sections the reader does not know", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            sections=["soma", "dendrites"])), "reports.soma_v: sections 'dendrites' (a name or a list of: all, soma"),
        ("a report of an empty list of variables", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            variable_name=[])), "reports.soma_v: variable_name is an empty list"),
        ("a report's dt not a multiple of the run's", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            dt=0.03)), "reports.soma_v: dt 0.03 ms must be a multiple of the run's dt"),
        ("a report's dt against the run's default dt", edit_json("config.json", lambda j: (
            j["run"].pop("dt"), j["reports"]["soma_v"].update(dt=0.15))),
         "reports.soma_v: dt 0.15 ms must be a multiple of the run's dt 0.1 ms"),
        ("a report's start_time not a multiple of its dt", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            dt=0.5, start_time=0.7)), "reports.soma_v: start_time 0.7 ms must be a multiple of dt (0.5 ms)"),
        ("a report's end_time past tstop", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            end_time=1e6)), "reports.soma_v: needs start_time (0 ms) < end_time (1e+06 ms) <= tstop"),
        ("a report's negative start_time", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            start_time=-1)), "reports.soma_v: \"start_time\" must be a number of ms >= 0"),
        ("a report's file_name in another folder", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            file_name="../v.h5")), "reports.soma_v: file_name must be a file name in output_dir"),
        ("a report's transform", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            transform={"v": "first_element"})), "reports.soma_v: \"transform\" is not supported: bmtk's one transform"),
        ("a report listing a variable twice", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            variable_name=["v", "m_hh", "v"])), "reports.soma_v: variable 'v' listed twice"),
        ("a report on sections the cells lack", edit_json("config.json", lambda j: j["reports"]["soma_v"].update(
            sections="apical")), "reports.soma_v: the cells of 'net[0]' have no section of these types"),
        ("a list's second file is another report's", edit_json("config.json", lambda j: j["reports"].update(
            soma_v={"cells": {"population": "net"}, "variable_name": ["v", "m_hh"], "module": "membrane_report",
                    "sections": "soma"},
            soma_v_m_hh={"cells": {"population": "net"}, "variable_name": "v", "module": "membrane_report"})),
         "reports.soma_v_m_hh: its file soma_v_m_hh.h5 is also report soma_v's"),
        ("an unknown spikes_sort_order", edit_json("config.json", lambda j: j["output"].update(
            spikes_sort_order="random")), "output.spikes_sort_order 'random' (one of time, id, none)"),
        ("a .mod file the compiler refuses", write("comp/mechanisms/modfiles/bad.mod", "NEURON { SUFFIX bad }\nTABLE nonsense\n"),
         "mechanisms_dir"),
    ]
    for k, (what, fn, expect) in enumerate(cases):
        dk = os.path.join(a.work_dir, f"case{k}")
        shutil.copytree(d, dk, ignore=shutil.ignore_patterns("out"))
        with open(f"{dk}/config.json") as fp:  # ${configdir} resolves to the copy
            pass
        fn(dk)
        r = run(dk)
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith("cablesim:")]
        ok = r.returncode == 1 and len(lines) == 1 and expect in lines[0] and "Traceback" not in r.stderr
        check(ok, f"{what}: {lines[0] if lines else r.stderr.strip()[-200:]!r}")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
