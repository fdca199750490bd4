"""Bad input raises cablesim.CablesimError carrying the CLI's one-line message."""
import json

import pytest

import cablesim
from conftest import cli_error


def same_error_as_cli(tmp_path, model_path, *cli_args, **sim_kwargs):
    msg = cli_error("run", model_path, "-o", tmp_path / "x.h5", "-q", *cli_args)
    with pytest.raises(cablesim.CablesimError) as e:
        cablesim.Simulation(cablesim.load_model(model_path), **sim_kwargs).run(1)
    assert str(e.value) == msg
    return e.value


def test_missing_file(tmp_path):
    path = tmp_path / "no-such-model.json"
    e = same_error_as_cli(tmp_path, path)
    assert "cannot open model file" in str(e) and e.status == -1


def test_malformed_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"run": {"tfinal": 10,,}}\n')
    e = same_error_as_cli(tmp_path, path)
    assert str(e).startswith(f"{path}:1:") and "JSON syntax error" in str(e) and e.status == -2


def test_impossible_parameter(tmp_path, net):
    net["populations"][0]["biophysics"]["cm"] = -1.0
    path = tmp_path / "neg_cm.json"
    path.write_text(json.dumps(net))
    e = same_error_as_cli(tmp_path, path)
    assert "cm" in str(e)
    # the same from a dict, named <dict>
    with pytest.raises(cablesim.CablesimError) as d:
        cablesim.load_model(net)
    assert str(d.value) == str(e).replace(str(path), "<dict>")


def test_error_found_when_building(tmp_path, net):
    """Checked at set-up, not by the reader: a probe interval that is no multiple of dt."""
    net["populations"][1]["probes"]["interval"] = 0.03
    path = tmp_path / "interval.json"
    path.write_text(json.dumps(net))
    e = same_error_as_cli(tmp_path, path)
    assert "not a whole multiple of dt" in str(e)


def test_unknown_backend(tmp_path, net_file):
    e = same_error_as_cli(tmp_path, net_file, "--backend", "tpu", backend="tpu")
    assert str(e) == "unknown backend 'tpu' (expected cpu, cuda or auto)"


def test_unwritable_output(tmp_path, net_file):
    out = tmp_path / "no-such-dir" / "out.h5"
    msg = cli_error("run", net_file, "-o", out, "-q")
    with pytest.raises(cablesim.CablesimError) as e:
        cablesim.Simulation(net_file, backend="cpu", output=out)
    assert str(e.value) == msg


def test_bad_python_arguments(net):
    with pytest.raises(cablesim.CablesimError, match=r"threads: expected an integer in \[1, 4096\]"):
        cablesim.Simulation(net, threads=0)
    with pytest.raises(cablesim.CablesimError, match="tfinal: expected a finite number > 0"):
        cablesim.Simulation(net, tfinal=-5)
    with pytest.raises(cablesim.CablesimError, match="report precision"):
        cablesim.Simulation(net, report_precision="half")
    with pytest.raises(TypeError):
        cablesim.load_model(42)
    sim = cablesim.Simulation(net, backend="cpu")
    with pytest.raises(cablesim.CablesimError, match="expected a finite time >= 0"):
        sim.run(float("nan"))
    sim.close()
    with pytest.raises(cablesim.CablesimError, match="closed"):
        sim.run(1)
