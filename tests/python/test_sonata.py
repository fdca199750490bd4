"""A SONATA simulation config from Python (docs/sonata-input.md): the minimal circuit of
tests/test_sonata_errors.py, run by cablesim.Simulation(path) with the output where the config
says, bitwise the CLI's spikes; and a broken circuit raises the CLI's one-line message."""
import importlib.util
import json
import os
import subprocess

import h5py
import numpy as np
import pytest

import cablesim
from conftest import SOURCE, cli_error

_spec = importlib.util.spec_from_file_location("sonata_errors", os.path.join(SOURCE, "tests", "test_sonata_errors.py"))
sonata_errors = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sonata_errors)


def spikes(path):
    with h5py.File(path, "r") as f:
        return f["spikes/net/node_ids"][()], f["spikes/net/timestamps"][()]


def test_sonata_config_like_the_cli(tmp_path, monkeypatch):
    monkeypatch.setenv("CABLESIM_CACHE_DIR", str(tmp_path / "cache"))
    d = tmp_path / "c"
    d.mkdir()
    sonata_errors.write_circuit(str(d), h5py, np)
    cfg = str(d / "config.json")
    assert cablesim.load_model(cfg).path == cfg
    with cablesim.Simulation(cfg, backend="cpu", threads=1) as sim:
        assert sim.output == str(d / "out" / "spikes.h5")
        sim.run(sim.tfinal, progress=False)
        gids, times = sim.spikes
    ids_py, t_py = spikes(d / "out" / "spikes.h5")
    assert len(ids_py) >= 3 and len(gids) == len(ids_py)
    subprocess.run([cablesim.cli_path(), "run", cfg, "--backend", "cpu", "--threads", "1", "-q",
                    "-o", str(tmp_path / "cli.h5")], check=True)
    ids_cli, t_cli = spikes(tmp_path / "cli.h5")
    assert np.array_equal(ids_py, ids_cli) and np.array_equal(t_py, t_cli)


def test_sonata_error_is_the_cli_line(tmp_path, monkeypatch):
    monkeypatch.setenv("CABLESIM_CACHE_DIR", str(tmp_path / "cache"))
    d = tmp_path / "c"
    d.mkdir()
    sonata_errors.write_circuit(str(d), h5py, np)
    os.remove(d / "comp" / "cell.swc")
    cfg = d / "config.json"
    msg = cli_error("run", cfg, "-q")
    with pytest.raises(cablesim.CablesimError) as e:
        cablesim.Simulation(cablesim.load_model(cfg), backend="cpu")
    assert str(e.value) == msg and "cell.swc" in msg


def test_sonata_probes_name_node_ids(tmp_path, monkeypatch):
    """A report on node 1 only splits population 'net' into internal groups (node 0, node 1):
    the traces' probes still say population 'net', cell 1 (the node id), as the report file's
    mapping does, not the internal group's name and index."""
    monkeypatch.setenv("CABLESIM_CACHE_DIR", str(tmp_path / "cache"))
    d = tmp_path / "c"
    d.mkdir()
    sonata_errors.write_circuit(str(d), h5py, np)
    cfg = d / "config.json"
    c = json.loads(cfg.read_text())
    c["reports"]["soma_v"]["cells"] = {"population": "net", "node_id": [1]}
    cfg.write_text(json.dumps(c))
    with cablesim.Simulation(str(cfg), backend="cpu", threads=1) as sim:
        sim.run(sim.tfinal, progress=False)  # the report files are written when the run ends
        probes = sim.probes
        data = np.asarray(sim.traces)
        by_pop = sim.spikes_by_population
    assert [(p.population, p.cell, p.variable) for p in probes] == [("net", 1, "v")]
    # the spikes, too, by node population and node id, as the spikes file has them
    assert set(by_pop) == {"net"}
    ids, ts = spikes(d / "out" / "spikes.h5")
    o = np.lexsort((ids, ts))
    assert np.array_equal(by_pop["net"].node_ids, ids[o]) and np.array_equal(by_pop["net"].times, ts[o])
    with h5py.File(d / "out" / "soma_v.h5", "r") as f:
        assert list(f["report/net/mapping/node_ids"][()]) == [1]
        rep = f["report/net/data"][:, 0]  # bmtk's rows: t < tstop (the traces also have t = tstop)
        assert len(rep) == data.shape[0] - 1
        assert np.allclose(rep, data[:-1, 0], rtol=0, atol=1e-4)  # [mV]; float32 in the file


def test_coalesced_synapses(tmp_path, monkeypatch):
    """Two edges of one type onto the same place of node 1 coalesce into one Exp2Syn instance (a
    third, elsewhere, keeps its own): the profile counts 3 synapses in 2 instances, and 3 with
    separate_synapses=True; node 1's soma voltage is the same either way within 1e-9 mV."""
    monkeypatch.setenv("CABLESIM_CACHE_DIR", str(tmp_path / "cache"))
    d = tmp_path / "c"
    d.mkdir()
    sonata_errors.write_circuit(str(d), h5py, np)
    with h5py.File(d / "edges.h5", "a") as f:
        g = f["edges/inp_net"]
        for name, v in (("source_node_id", [0, 0, 0]), ("target_node_id", [1, 1, 1]), ("edge_type_id", [300] * 3),
                        ("edge_group_id", [0, 0, 0]), ("edge_group_index", [0, 1, 2]), ("0/afferent_section_id", [1, 1, 1])):
            attrs = dict(g[name].attrs)
            del g[name]
            g[name] = np.array(v, dtype=np.int64)
            g[name].attrs.update(attrs)
        del g["0/afferent_section_pos"]
        g["0/afferent_section_pos"] = np.array([0.3, 0.3, 0.9])
    cfg = str(d / "config.json")
    got = {}
    for separate in (False, True):
        with cablesim.Simulation(cfg, backend="cpu", threads=1, output=None, separate_synapses=separate) as sim:
            sim.run(sim.tfinal, progress=False)
            p = sim.profile
            got[separate] = (p["synapses"], p["synapse_instances"], np.asarray(sim.traces)[:, -1])
    assert got[False][:2] == (3, 2) and got[True][:2] == (3, 3)
    assert np.max(np.abs(got[False][2] - got[True][2])) <= 1e-9
    assert np.ptp(got[False][2]) > 1.0  # the synapses move v: the comparison is not of rest
