"""What the full-disk tests share (test_output_enospc.py: one process; test_mpi.py: several ranks):
the model they write, and the check of the file a failed run leaves.

tests/enospc_shim.c (LD_PRELOAD) lets the output file grow by $CS_ENOSPC_AFTER bytes, then fails
its writes with ENOSPC.
"""
import json
import os

import h5py
import numpy as np

POP = "wide"


def wide_model(variables=None):
    """1 024 one-compartment HH cells in a ring, each driven and each probed: a report 1 024 columns
    wide, one chunk (64 rows x 1 024 float32 = 256 kB) per band of 64 rows; 401 rows, a spike of
    every cell, well under a second. variables: the probes' variables (a report each), else v."""
    m = {"run": {"tfinal": 40.0, "dt": 0.025},
            "populations": [{
                "name": POP, "count": 1024, "morphology": {"generator": "soma", "radius": 9.4},
                "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0,
                               "mechanisms": [{"name": "hh", "region": "all"}]},
                "synapses": [{"name": "syn", "mechanism": "expsyn", "location": {"branch": 0, "pos": 0.5}}],
                "stimuli": [{"mechanism": "iclamp", "location": {"branch": 0, "pos": 0.5}, "cells": "all",
                             "params": {"delay": 1.0, "duration": 1000.0, "amplitude": 0.5}}],
                "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0},
                "probes": {"cells": "all", "locations": [{"branch": 0, "pos": 0.5}], "interval": 0.1}}],
            "connections": [{"type": "ring", "population": POP, "synapse": "syn", "weight": 0.001,
                             "delay": 1.0}]}
    if variables:
        m["populations"][0]["probes"]["variables"] = list(variables)
    return m


def write_model(work, variables=None):
    """wide_model(variables) as work/wide.json (wide-variables.json with variables); its path."""
    path = os.path.join(work, "wide-variables.json" if variables else "wide.json")
    with open(path, "w") as f:
        json.dump(wide_model(variables), f)
    return path


def left_file(out):
    """The file a failed run left at `out`: (state, problems). No file is fine (nothing was
    simulated); a file must open in h5py, be marked incomplete, have every dataset readable, finite
    samples and a time axis that describes the rows present (the state at the last flush)."""
    if not os.path.exists(out):
        return "no file", []
    problems, state = [], "unreadable"
    try:
        with h5py.File(out, "r") as f:
            status = f.attrs.get("status")
            status = status.decode() if isinstance(status, bytes) else status
            if status != "incomplete":
                problems.append(f"status {status!r} (want 'incomplete')")
            names = []
            f.visit(names.append)
            for name in names:
                if isinstance(f[name], h5py.Dataset):
                    f[name][()]  # every dataset reads
            rows = 0
            if f"report/{POP}/data" in f:
                data = f[f"report/{POP}/data"][()]
                rows = data.shape[0]
                if not np.isfinite(data).all():
                    problems.append("non-finite samples")
                t0, t1, dt = f[f"report/{POP}/mapping/time"][()]
                if rows and abs((t1 - t0) / dt - rows) > 0.51:
                    problems.append(f"time axis {t0, t1, dt} does not describe {rows} rows")
            for name in names:  # every report's samples, variables' too
                if name.startswith("report/") and name.endswith("/data") and not np.isfinite(f[name][()]).all():
                    problems.append(f"non-finite samples in {name}")
            state = f"{status}, {rows} rows"
    except Exception as e:  # noqa: BLE001 -- any failure to read is the finding
        problems.append(f"h5py cannot read it: {e}")
    return state, problems
