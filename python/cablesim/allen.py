"""Allen Cell Types models as users download them (docs/model-format.md#allen-cells)."""

import os
from typing import Any, Dict, Optional, Sequence, Union

PathLike = Union[str, "os.PathLike[str]"]


def allen_model(fit: PathLike, morphology: PathLike, catalogue: Optional[PathLike] = None, *, processing: str = "aibs_perisomatic",
                amplitude: float = 0.2, delay: float = 100.0, duration: float = 800.0, tfinal: float = 1000.0,
                dt: float = 0.025, dl: float = 20.0, variables: Sequence[str] = ("v",)) -> Any:
    """A checked :class:`cablesim.Model` of one Allen cell: its ``*_fit.json`` and SWC ``morphology``
    (the axon replaced by two 30 µm stubs, ``processing`` "aibs_perisomatic" or "aibs_allactive"),
    its channels from ``catalogue`` (``cablesim build-catalogue``; None: built-in mechanisms only), a current step of ``amplitude``
    [nA] from ``delay`` for ``duration`` [ms] at the soma, a spike detector and soma probes of
    ``variables`` ("v", "cai", ...), bmtk's discretisation (1 + 2·floor(L / 2·dl) CVs per section,
    ``dl`` [µm]). The same model as ``cablesim allen`` writes."""
    from . import load_model
    data: Dict[str, Any] = {
        "catalogues": [os.path.abspath(os.fspath(catalogue))] if catalogue is not None else [],
        "run": {"tfinal": float(tfinal), "dt": float(dt)},
        "discretization": {"bmtk_dl": float(dl)},
        "populations": [{
            "name": "cell", "count": 1,
            "allen": {"fit": os.path.abspath(os.fspath(fit)), "morphology": os.path.abspath(os.fspath(morphology)),
                      "processing": processing},
            "stimuli": [{"mechanism": "iclamp", "location": {"branch": 0, "pos": 0.5}, "cells": "all",
                         "params": {"delay": float(delay), "duration": float(duration), "amplitude": float(amplitude)}}],
            "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0},
            "probes": {"cells": "all", "locations": [{"branch": 0, "pos": 0.5}], "interval": 0.1,
                       "variables": list(variables)}}]}
    return load_model(data)
