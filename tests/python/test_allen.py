"""cablesim.allen_model: an Allen Cell Types fit file + SWC as a model (docs/python.md)."""
import json
import os

import pytest

import cablesim

# a fit file whose genome names built-in mechanisms only (no catalogue needed)
FIT = {"passive": [{"ra": 100, "e_pas": -70, "cm": [{"section": "soma", "cm": 1.0}, {"section": "dend", "cm": 2.0}]}],
       "conditions": [{"celsius": 6.3, "erev": [{"section": "soma", "ena": 50, "ek": -77}], "v_init": -65}],
       "genome": [{"section": "soma", "name": "g_pas", "mechanism": "", "value": 1e-4},
                  {"section": "dend", "name": "g_pas", "mechanism": "", "value": 1e-4},
                  {"section": "soma", "name": "gnabar_hh", "mechanism": "hh", "value": 0.12}]}


def swc(source_dir):
    return os.path.join(source_dir, "tests", "data", "allen", "Scnn1a_473845048_m.swc")


def test_allen_model_runs(tmp_path, source_dir):
    fit = tmp_path / "cell_fit.json"
    fit.write_text(json.dumps(FIT))
    m = cablesim.allen_model(fit, swc(source_dir), amplitude=0.5, delay=5, duration=40, tfinal=50)
    assert m.data["populations"][0]["allen"]["processing"] == "aibs_perisomatic"
    with cablesim.Simulation(m, backend="cpu") as s:
        s.run(s.tfinal, progress=False)
        assert len(s.spikes.times) > 0 and s.spikes.times[0] > 5.0


def test_allen_model_bad_fit(tmp_path, source_dir):
    fit = tmp_path / "bad_fit.json"
    fit.write_text(json.dumps(dict(FIT, genome=[{"section": "basal", "name": "g_pas", "mechanism": "", "value": 1}])))
    with pytest.raises(cablesim.CablesimError) as e:
        cablesim.allen_model(fit, swc(source_dir))
    assert str(e.value).startswith(str(fit)) and "unknown section 'basal'" in str(e.value)
