"""cablesim.Simulation against the CLI's HDF5 output (bitwise, the same run), resumed runs
against one long run, the probe table, the profile, and the options' limits."""
import os

import h5py
import numpy as np
import pytest

import cablesim
from conftest import NET, run_cli


def read_h5(path):
    """Spikes and reports of a SONATA file: {pop: (node_ids, timestamps)}, {pop: {name: array}}."""
    spikes, reports = {}, {}
    with h5py.File(path, "r") as f:
        assert f.attrs["status"] in ("complete", b"complete")
        for pop, g in f["spikes"].items():
            spikes[pop] = (g["node_ids"][()], g["timestamps"][()])
        for pop, g in f["report"].items():
            reports[pop] = {"data": g["data"][()], "time": g["mapping/time"][()],
                            "node_ids": g["mapping/node_ids"][()],
                            "index_pointers": g["mapping/index_pointers"][()],
                            "element_ids": g["mapping/element_ids"][()]}
    return spikes, reports


def first_gids(model):
    out, g = {}, 0
    for p in model["populations"]:
        out[p["name"]] = g
        g += p["count"]
    return out


def assert_identical(a, b):
    """Bitwise: same dtype, same shape, same bytes (NaN-safe)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert a.tobytes() == b.tobytes()


def check_against_file(sim, path, model, precision, min_spikes=10):
    """The simulation's in-memory spikes and traces against a file of the same run."""
    spikes, reports = read_h5(path)
    first = first_gids(model)
    # spikes: the file per population, sorted by (time, node id); memory: global gids by (time, gid)
    g, t = sim.spikes
    assert len(g) >= min_spikes, "the model should spike"
    fg = np.concatenate([ids.astype(np.uint64) + np.uint64(first[p]) for p, (ids, _) in spikes.items()])
    ft = np.concatenate([ts for _, ts in spikes.values()])
    order = np.lexsort((fg, ft))
    assert_identical(g, fg[order])
    assert_identical(t, ft[order])
    # by population, named as the file names them (sim.cells maps gid -> population, index)
    by_pop = sim.spikes_by_population
    assert set(by_pop) == {p for p, (ids, _) in spikes.items() if len(ids)}
    for p, (ids, ts) in spikes.items():
        if len(ids):
            o = np.lexsort((ids, ts))
            assert_identical(by_pop[p].node_ids, ids[o].astype(np.uint64))
            assert_identical(by_pop[p].times, ts[o])
    # traces: each population's columns, at its own interval
    tr = sim.traces
    for pop, rep in reports.items():
        cols = tr.columns(pop)
        interval = rep["time"][2]
        keep = int(round(interval / (tr.time[1] - tr.time[0])))
        mem = tr.data[::keep, cols]
        n = rep["data"].shape[0]
        assert mem.shape[0] == n, (pop, mem.shape, rep["data"].shape)
        assert_identical(mem.astype(np.float32 if precision == "single" else np.float64), rep["data"])
        # the probe table is the report's mapping
        probes = [tr.probes[j] for j in cols]
        assert [p.cv for p in probes] == list(rep["element_ids"])
        cells = sorted({p.cell for p in probes}, key=[p.cell for p in probes].index)
        assert cells == list(rep["node_ids"])
        assert all(p.gid == first[pop] + p.cell for p in probes)


def test_cells_names_gids(net):
    """sim.cells: each gid's population and index there; a gid past the last cell is an error
    that names it."""
    first = first_gids(net)
    with cablesim.Simulation(net, backend="cpu", threads=1) as sim:
        pops = list(first)
        last = pops[-1]
        gids = [first[pops[0]], first[last] + 1, first[pops[0]] + 2]
        c = sim.cells(gids)
        assert list(c.populations) == [pops[0], last, pops[0]] and list(c.ids) == [0, 1, 2]
        n = sum(p["count"] for p in net["populations"])
        with pytest.raises(cablesim.CablesimError, match="gid %d is no cell" % n):
            sim.cells([n])


def gpu_or_skip(backend):
    if backend == "cuda" and not cablesim.solvers.gpu_available():
        pytest.skip("no GPU (or the library has no CUDA)")


@pytest.mark.parametrize("backend,precision", [("cpu", "double"), ("cpu", "single"), ("cuda", "double")])
def test_python_matches_cli_bitwise(tmp_path, net, net_file, backend, precision):
    gpu_or_skip(backend)
    cli_out, py_out = tmp_path / "cli.h5", tmp_path / "py.h5"
    run_cli("run", net_file, "-o", cli_out, "--backend", backend, "--threads", 2, "--tfinal", 20,
            "--report-precision", precision, "-q")
    with cablesim.Simulation(cablesim.load_model(net_file), backend=backend, threads=2, tfinal=20, output=py_out,
                             report_precision=precision) as sim:
        sim.run(20, progress=False)
        assert sim.time == pytest.approx(20.0)
        check_against_file(sim, cli_out, net, precision)
    # and the two files hold the same spikes and reports, bit for bit
    s1, r1 = read_h5(cli_out)
    s2, r2 = read_h5(py_out)
    assert s1.keys() == s2.keys() and r1.keys() == r2.keys()
    for p in s1:
        for a, b in zip(s1[p], s2[p]):
            assert_identical(a, b)
    for p in r1:
        for k in r1[p]:
            assert_identical(r1[p][k], r2[p][k])


def test_example_model_matches_cli(tmp_path, source_dir):
    """The README's ring (one population) from its file, the model's own options."""
    path = os.path.join(source_dir, "models", "examples", "ring.json")
    out = tmp_path / "ring.h5"
    run_cli("run", path, "-o", out, "--backend", "cpu", "--tfinal", 25, "-q")
    sim = cablesim.Simulation(path, backend="cpu", tfinal=25)
    sim.run(25)
    check_against_file(sim, out, cablesim.load_model(path).data, "single", min_spikes=5)


@pytest.mark.parametrize("backend,cuts", [("cpu", (10.0,)), ("cpu", (7.3, 13.01)),
                                          ("cpu", (0.0, 0.025, 5.0, 12.5, 19.975)), ("cuda", (7.3, 13.01))])
def test_resumed_runs_match_one_run(tmp_path, net, backend, cuts):
    gpu_or_skip(backend)
    one = cablesim.Simulation(net, backend=backend, threads=2, output=tmp_path / "one.h5")
    one.run(25)
    pieces = cablesim.Simulation(net, backend=backend, threads=2, output=tmp_path / "pieces.h5", tfinal=25)
    for t in cuts:
        pieces.run(t)
        assert pieces.time == pytest.approx(round(t / 0.025) * 0.025)
    pieces.run(25)
    assert_identical(pieces.spikes.gids, one.spikes.gids)
    assert_identical(pieces.spikes.times, one.spikes.times)
    assert_identical(pieces.traces.data, one.traces.data)
    nspike = len(one.spikes.gids)
    assert nspike > 10
    one.close()
    pieces.close()
    # one stopped at 25 of its 30 ms: its file is incomplete; pieces reached its tfinal
    with h5py.File(tmp_path / "one.h5", "r") as f:
        assert f.attrs["status"] in ("incomplete", b"incomplete")
    s1, r1 = read_h5(tmp_path / "pieces.h5")
    assert sum(len(ids) for ids, _ in s1.values()) == nspike


def test_file_complete_only_at_tfinal(tmp_path, net):
    path = tmp_path / "out.h5"
    sim = cablesim.Simulation(net, backend="cpu", output=path, tfinal=10)
    sim.run(5)
    sim.close()  # before tfinal: the file stays, marked incomplete
    with h5py.File(path, "r") as f:
        assert f.attrs["status"] in ("incomplete", b"incomplete")
    sim = cablesim.Simulation(net, backend="cpu", output=path, tfinal=10)
    sim.run(4)
    sim.run(10)
    with h5py.File(path, "r") as f:  # readable while the simulation lives: closed at tfinal
        assert f.attrs["status"] in ("complete", b"complete")
        assert f["report/tree/data"].shape[0] == 201  # 0, 0.05, ..., 10 ms
    # past the file's time axis: an error naming tfinal; backwards: an error
    with pytest.raises(cablesim.CablesimError, match=r"past tfinal = 10 ms"):
        sim.run(11)
    with pytest.raises(cablesim.CablesimError, match=r"already at t = 10 ms"):
        sim.run(3)


def test_run_past_tfinal_without_file(net):
    """Without a file, tfinal is only a default: run(50) then run(100) on a 30 ms model."""
    a = cablesim.Simulation(net, backend="cpu", keep_traces=False)
    a.run(20)
    a.run(45)
    b = cablesim.Simulation(net, backend="cpu", tfinal=45, keep_traces=False)
    b.run(45)
    assert a.time == pytest.approx(45) and a.tfinal == pytest.approx(45)
    assert_identical(a.spikes.times, b.spikes.times)
    assert_identical(a.spikes.gids, b.spikes.gids)
    assert a.traces.data.shape == (0, a.traces.data.shape[1])  # none kept


def test_dict_and_file_models_agree(net, net_file):
    a = cablesim.Simulation(cablesim.load_model(net), backend="cpu", tfinal=15)
    b = cablesim.Simulation(net_file, backend="cpu", tfinal=15)
    a.run(15)
    b.run(15)
    assert_identical(a.spikes.times, b.spikes.times)
    assert_identical(a.traces.data, b.traces.data)


def test_traces_and_probes_shape(net):
    sim = cablesim.Simulation(net, backend="cpu", tfinal=5)
    sim.run(5)
    tr = sim.traces
    # 12 bs cells × 2 locations + 4 tree cells × 1; rows every 0.05 ms (the finest interval)
    assert tr.data.shape == (101, 28)
    assert np.asarray(tr).shape == (101, 28)
    np.testing.assert_allclose(tr.time, np.arange(101) * 0.05)
    assert tr.probes[0] == cablesim.Probe("bs", 0, 0, 0, 0.5, tr.probes[0].cv)
    assert [p.gid for p in tr.probes[24:]] == [12 + 19, 12 + 3, 12 + 7, 12 + 0]
    assert np.all(tr.data[0] == -65.0)  # v_init


def test_profile(net):
    sim = cablesim.Simulation(net, backend="cpu", threads=1, tfinal=10)
    sim.run(10)
    p = sim.profile
    assert set(p["seconds"]) == {"event delivery", "mechanism currents", "assembly", "solve", "state update",
                                 "threshold detection", "sampling", "spike exchange", "output"}
    assert all(v >= 0 for v in p["seconds"].values())
    assert p["seconds"]["solve"] > 0
    assert sum(p["share"].values()) == pytest.approx(1.0)
    assert p["backend"] == "cpu" and p["threads"] == 1 and p["steps"] == 400 and p["cells"] == 32
    assert p["spikes"] == len(sim.spikes.gids)


def test_trace_memory_limit(net):
    sim = cablesim.Simulation(net, backend="cpu", trace_memory_limit=10_000)
    with pytest.raises(cablesim.CablesimError, match="in-memory traces: .* more than the limit of 10000 bytes"):
        sim.run(30)
    # a failed run stays failed, with the same message
    with pytest.raises(cablesim.CablesimError, match="in-memory traces"):
        sim.run(1)


def test_backend_auto_runs(net):
    sim = cablesim.Simulation(net, tfinal=2)  # backend="auto": the CPU here unless there is a GPU
    sim.run(2)
    assert sim.profile["backend"] in ("cpu", "cuda")


def test_cli_entry_point():
    r = run_cli("--version")
    assert r.stdout.strip() == f"cablesim {cablesim.__version__}"


def test_example_script(tmp_path, source_dir):
    """examples/run_network.py runs a network and writes its figure (and an HDF5 file)."""
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    import subprocess
    import sys
    fig, h5 = tmp_path / "net.png", tmp_path / "net.h5"
    r = subprocess.run([sys.executable, os.path.join(source_dir, "examples", "run_network.py"), "-t", "20",
                        "--backend", "cpu", "-o", fig, "--h5", h5], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert fig.stat().st_size > 10_000
    spikes, _ = read_h5(h5)
    assert sum(len(ids) for ids, _ in spikes.values()) == int(r.stdout.split(" spikes")[0].split()[-1])


def test_probe_variables_match_cli(tmp_path, net):
    """probes.variables (issue 20 item 4): the traces hold every variable's columns, grouped by
    population then variable; each variable's columns are its report in the file, bit for bit,
    with its unit and element ids."""
    import json
    net["populations"][0]["probes"]["variables"] = ["v", "syn.g", "i_membrane"]
    net["populations"][1]["probes"]["variables"] = ["hh.m", "v", "syn.g", "hh.i"]
    path = tmp_path / "vars.json"
    path.write_text(json.dumps(net))
    out = tmp_path / "cli.h5"
    run_cli("run", path, "-o", out, "--backend", "cpu", "--tfinal", 10, "--report-precision", "double", "-q")
    sim = cablesim.Simulation(str(path), backend="cpu", tfinal=10)
    sim.run(10)
    tr = sim.traces
    assert tr.variables == ["v", "syn.g", "i_membrane", "hh.m", "hh.i"]
    # 12 bs cells × 2 locations × 3 variables + 4 tree cells × 4 variables
    assert tr.data.shape == (201, 88)
    assert tr["i_membrane"].probes[0].unit == "nA"
    assert [p.variable for p in tr.probes[:48:24]] == ["v", "syn.g"]
    assert tr["hh.m"].data.shape == (201, 4) and tr["hh.m"].probes[0].unit == "1"
    assert tr["syn.g"].probes[0].unit == "uS" and tr["hh.i"].probes[0].unit == "mA/cm2"
    assert np.all((tr["hh.m"].data > 0) & (tr["hh.m"].data < 1))
    assert np.all(tr["syn.g"].data >= 0) and tr["syn.g"].data.max() > 0
    with pytest.raises(KeyError):
        tr["hh.x"]
    with h5py.File(out, "r") as f:
        for pop, variables in (("bs", ["v", "syn.g", "i_membrane"]), ("tree", ["hh.m", "v", "syn.g", "hh.i"])):
            for var in variables:
                g = f["report"][pop] if var == "v" else f["report"][pop][var]
                sub = tr.select(pop, var)
                units = g["data"].attrs["units"]
                assert {p.unit for p in sub.probes} == {units.decode() if isinstance(units, bytes) else units}
                keep = int(round(g["mapping/time"][2] / (tr.time[1] - tr.time[0])))
                assert_identical(sub.data[::keep], g["data"][()])
                assert [p.cv for p in sub.probes] == list(g["mapping/element_ids"][()])
                assert_identical(g["mapping/node_ids"][()], f["report"][pop]["mapping/node_ids"][()])
