"""Fixtures of the Python package's tests (run by scripts/test-python.sh in a fresh venv where
`pip install .` put the package). The CLI compared against is the one installed with the
package: the same libcablesim, the same C API."""
import copy
import json
import os
import subprocess

import pytest

import cablesim

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Two populations (12 ball-and-stick, 20 random trees) with probe intervals of 0.1 and 0.05 ms,
# random and ring connections, a clamp and kicks: spikes in both, traces at two cadences.
NET = {
    "run": {"tfinal": 30.0, "dt": 0.025, "seed": 7},
    "populations": [
        {"name": "bs", "count": 12,
         "morphology": {"generator": "ball_and_stick", "soma_radius": 8.0, "dend_length": 200.0,
                        "dend_radius": 0.5, "dend_cvs": 7},
         "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0,
                        "mechanisms": [{"name": "hh", "region": "soma"},
                                       {"name": "pas", "region": "dend", "params": {"g": 0.0001, "e": -65.0}}]},
         "synapses": [{"name": "syn", "mechanism": "expsyn", "location": {"branch": 0, "pos": 0.5},
                       "params": {"tau": 2.0, "e": 0.0}}],
         "stimuli": [{"mechanism": "iclamp", "location": {"branch": 0, "pos": 0.5}, "cells": [0, 5, 11],
                      "params": {"delay": 2.0, "duration": 20.0, "amplitude": 0.3}}],
         "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0},
         "probes": {"cells": "all", "locations": [{"branch": 0, "pos": 0.5}, {"branch": 1, "pos": 1.0}],
                    "interval": 0.1}},
        {"name": "tree", "count": 20,
         "morphology": {"generator": "random_tree", "soma_radius": 6.3, "dend_radius": 0.5, "depth": 4,
                        "branch_probability": [1.0, 0.5], "length": [150.0, 20.0], "cvs": [4, 2]},
         "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0,
                        "mechanisms": [{"name": "hh", "region": "soma"},
                                       {"name": "pas", "region": "dend", "params": {"g": 0.0001, "e": -65.0}}]},
         "synapses": [{"name": "syn", "mechanism": "expsyn", "location": {"branch": 0, "pos": 0.5},
                       "params": {"tau": 2.0, "e": 0.0}}],
         "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0},
         "probes": {"cells": [19, 3, 7, 0], "locations": [{"branch": 0, "pos": 0.5}], "interval": 0.05}},
    ],
    "connections": [
        {"type": "random", "source": "bs", "target": "tree", "synapse": "syn", "indegree": 3,
         "weight": 0.05, "delay": 1.5},
        {"type": "random", "source": "tree", "target": "bs", "synapse": "syn", "indegree": 2,
         "weight": 0.04, "delay": 2.0},
        {"type": "ring", "population": "tree", "synapse": "syn", "weight": 0.1, "delay": 3.0},
    ],
    "events": [{"target": {"population": "tree", "cell": 0, "synapse": "syn"}, "time": 1.0, "weight": 0.2},
               {"target": {"population": "bs", "cell": 6, "synapse": "syn"}, "time": 4.0, "weight": 0.2}],
}


@pytest.fixture
def net():
    return copy.deepcopy(NET)


@pytest.fixture
def net_file(tmp_path):
    p = tmp_path / "net.json"
    p.write_text(json.dumps(NET))
    return str(p)


@pytest.fixture(scope="session")
def source_dir():
    return SOURCE


def run_cli(*args, check=True):
    """Run the package's CLI; returns the CompletedProcess."""
    r = subprocess.run([cablesim.cli_path(), *map(str, args)], capture_output=True, text=True, timeout=300)
    if check and r.returncode != 0:
        raise AssertionError(f"cablesim {' '.join(map(str, args))} failed: {r.stderr}")
    return r


def cli_error(*args):
    """The one-line message the CLI prints for a failing run (without 'cablesim: error: ')."""
    r = run_cli(*args, check=False)
    assert r.returncode != 0, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    prefix = "cablesim: error: "
    assert lines[0].startswith(prefix), lines[0]
    return lines[0][len(prefix):]
