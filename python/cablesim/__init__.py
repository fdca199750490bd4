"""cablesim: networks of multi-compartment neurons, from Python.

A thin binding of the C library's public API (``cablesim.h``) through ctypes: the model is read,
built and simulated in C, exactly as by the ``cablesim`` command line, so the same model and
options give bitwise the same spikes and traces.

    >>> import cablesim
    >>> sim = cablesim.Simulation(cablesim.load_model("models/examples/ring.json"), backend="cpu")
    >>> sim.run(50); sim.run(100)            # resumable: the same as sim.run(100)
    >>> gids, times = sim.spikes
    >>> tr = sim.traces                      # tr.data [time, probe] in mV, tr.time in ms, tr.probes

Units: ms, mV (docs/model-format.md). Errors raise :class:`CablesimError` with the one-line
message the command line prints. See docs/python.md.
"""
from __future__ import annotations

import ctypes
import json
import os
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple, Union

import numpy as np

from . import _lib

__all__ = ["CablesimError", "Model", "Probe", "Spikes", "NodeSpikes", "Cells", "Traces", "Simulation", "load_model",
           "allen_model", "cli_path", "__version__"]

__version__: str = _lib.lib.cs_api_version().decode()

#: cs_status codes of the C API (base/cs_error.h)
STATUS_NAMES = {-1: "input/output error", -2: "malformed input", -3: "invalid parameter", -4: "out of memory",
                -5: "numerical failure", -6: "not supported or not compiled in", -7: "GPU error",
                -8: "internal error"}


class CablesimError(RuntimeError):
    """A failure of the C library. ``str(e)`` is the one-line message that the command line
    prints after ``cablesim: error: ``; ``e.status`` the negative status code (``STATUS_NAMES``)."""

    def __init__(self, message: str, status: int = -3) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def _check(status: int) -> None:
    if status != 0:
        raise CablesimError(_lib.last_error() or STATUS_NAMES.get(status, f"status {status}"), status)


def _b(s: Optional[str]) -> Optional[bytes]:
    return None if s is None else os.fsencode(s)


def cli_path() -> str:
    """The ``cablesim`` command-line program installed with this package (same library); in a
    CMake build folder (``CABLESIM_LIBRARY_DIR``), the one built there."""
    d = _lib.library_dir()
    installed = os.path.join(d, "bin", "cablesim")
    return installed if os.path.exists(installed) or not os.path.exists(os.path.join(d, "cablesim")) \
        else os.path.join(d, "cablesim")


_FROM_MODEL = object()  # Simulation(output=...) not given


def _model_output(model: "Model") -> Optional[str]:
    """The output file a SONATA config names (its folder created), None for a cablesim model."""
    if model.path is None:
        return None
    buf = ctypes.create_string_buffer(4096)
    _check(_lib.lib.cs_model_output_path(_b(model.path), buf, len(buf)))
    return buf.value.decode() or None


class Model:
    """A model (docs/model-format.md): from a JSON file (``path``) or a dict (``data``).
    Made by :func:`load_model`, which checks it with the C model reader."""

    def __init__(self, path: Optional[str] = None, data: Optional[Mapping[str, Any]] = None,
                 base_dir: Optional[str] = None) -> None:
        if (path is None) == (data is None):
            raise ValueError("Model: give exactly one of path and data")
        self.path = path
        self._data = dict(data) if data is not None else None
        #: where relative SWC paths of a dict model are resolved (the current directory by default)
        self.base_dir = base_dir if base_dir is not None else os.getcwd()

    @property
    def data(self) -> Dict[str, Any]:
        """The model as a dict (read from the file for a file model)."""
        if self._data is None:
            assert self.path is not None
            with open(self.path, encoding="utf-8") as f:
                data: Dict[str, Any] = json.load(f)
                return data
        return self._data

    def to_json(self) -> str:
        """The model as JSON text."""
        if self.path is not None:
            with open(self.path, encoding="utf-8") as f:
                return f.read()
        return json.dumps(self._data)

    def __repr__(self) -> str:
        return f"Model(path={self.path!r})" if self.path is not None else "Model(<dict>)"


def load_model(path_or_dict: Union[str, "os.PathLike[str]", Mapping[str, Any]], *, base_dir: Optional[str] = None) -> Model:
    """Read and check a model: a path to a JSON model file or a SONATA simulation config
    (told apart by content: docs/sonata-input.md), or a dict of a model file's content.

    Raises :class:`CablesimError` with the command line's message for a missing or malformed
    file or an impossible parameter. A dict is named ``<dict>`` in messages; its relative SWC
    paths resolve against ``base_dir`` (default: the current directory)."""
    if isinstance(path_or_dict, Mapping):
        m = Model(data=path_or_dict, base_dir=base_dir)
        _check(_lib.lib.cs_model_check_json(m.to_json().encode(), b"<dict>", _b(m.base_dir)))
        return m
    if isinstance(path_or_dict, (str, bytes, os.PathLike)):
        path = os.fsdecode(path_or_dict)
        _check(_lib.lib.cs_model_check_file(_b(path)))
        return Model(path=path)
    raise TypeError(f"load_model: expected a path or a dict, got {type(path_or_dict).__name__}")


class Spikes(NamedTuple):
    """Spikes sorted by time, then gid: global cell ids and times [ms]."""
    gids: np.ndarray   # uint64 [n]
    times: np.ndarray  # float64 [n], ms


class NodeSpikes(NamedTuple):
    """One population's spikes, sorted by time, then node: each cell's index in its population
    (a SONATA config's node_id, as the spikes file has it) and times [ms]."""
    node_ids: np.ndarray  # uint64 [n]
    times: np.ndarray     # float64 [n], ms


class Cells(NamedTuple):
    """Cells named as the output names them: population of each (str) and index there (a
    SONATA config's node_id)."""
    populations: np.ndarray  # str (object) [n]
    ids: np.ndarray          # uint64 [n]


class Probe(NamedTuple):
    """One column of :class:`Traces`: a probe on a cell."""
    population: str  # the model's population; a SONATA config's node population ("v1")
    cell: int       # the cell within its population (its index there; SONATA: its node_id)
    gid: int        # the global cell id
    branch: int
    pos: float      # [0, 1] along the branch
    cv: int         # the compartment (the report's element id)
    variable: str = "v"   # what the column holds: "v", "hh.m", "ina", "syn.g" (probes.variables)
    unit: str = "mV"      # its unit


class Traces:
    """Traces: ``data`` [time, probe] (float64), ``time`` [ms], ``probes`` the probe of each
    column, with its ``variable`` ("v", "hh.m", "ina", "syn.g") and ``unit`` (mV for "v"). The
    columns are grouped by population, then by variable in the order of the model's
    ``probes.variables``. Every probe is sampled at the finest probe interval of the model's
    populations (the HDF5 file keeps each population at its own). ``np.asarray(traces)`` is
    ``data``; ``traces["hh.m"]`` the traces of one variable (a :class:`Traces`)."""

    def __init__(self, data: np.ndarray, time: np.ndarray, probes: List[Probe]) -> None:
        self.data = data
        self.time = time
        self.probes = probes

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.data if dtype is None else self.data.astype(dtype)

    @property
    def shape(self) -> Tuple[int, ...]:
        return self.data.shape

    def columns(self, population: Optional[str] = None, variable: Optional[str] = None) -> np.ndarray:
        """The column indices of a population's probes (every population's when None), of one
        variable (every variable's when None)."""
        return np.array([j for j, p in enumerate(self.probes)
                         if (population is None or p.population == population)
                         and (variable is None or p.variable == variable)], dtype=np.intp)

    @property
    def variables(self) -> List[str]:
        """The variables of the columns, each once, in column order."""
        return list(dict.fromkeys(p.variable for p in self.probes))

    def select(self, population: Optional[str] = None, variable: Optional[str] = None) -> "Traces":
        """The traces of these columns (see :meth:`columns`), as a :class:`Traces`."""
        cols = self.columns(population, variable)
        return Traces(self.data[:, cols], self.time, [self.probes[j] for j in cols])

    def __getitem__(self, variable: str) -> "Traces":
        if not isinstance(variable, str):
            raise TypeError("Traces[...] takes a variable name (\"v\", \"hh.m\"); use .data for arrays")
        if variable not in self.variables:
            raise KeyError(f"no probe of variable {variable!r} (variables: {', '.join(self.variables)})")
        return self.select(variable=variable)

    def __repr__(self) -> str:
        return f"Traces({self.data.shape[0]} times x {self.data.shape[1]} probes)"


class Simulation:
    """A simulation of a model, built at once (network, backend, output file).

    Parameters
    ----------
    model : Model, dict or path
        What :func:`load_model` takes, or its result.
    backend : "auto", "cpu" or "cuda"
        "auto" times the candidates and keeps the fastest (README: --backend).
    solver : str
        The GPU's Hines solver ("auto", "flat", "interleaved", ...).
    threads : int or None
        OpenMP threads; None: the model's setting, else every core.
    tfinal, dt : float or None
        [ms] override the model's ``run.tfinal`` and ``run.dt``.
    output : path or None
        Write a SONATA HDF5 file (docs/output-format.md), as ``cablesim run -o``; it is marked
        complete when the run reaches ``tfinal``. Not given: none, but for a SONATA simulation
        config (docs/sonata-input.md) the file its ``output`` names, as ``cablesim run``.
    report_precision : "single", "double" or None
        The file's report storage (None: the model's; float32 by default).
    keep_spikes, keep_traces : bool
        Keep the results in memory for :attr:`spikes` and :attr:`traces`.
    trace_memory_limit : int
        [bytes] bound on the traces kept in memory (8 bytes per probe and sample); a run that
        would pass it raises before it starts.
    separate_synapses : bool
        Keep every synapse its own mechanism instance. By default a cell's synapses of one linear
        type (exp2syn, expsyn) at one compartment with equal parameters share one instance, as
        Arbor's ``coalesce_synapses``: the same dynamics, fewer instances (``--separate-synapses``).
    """

    def __init__(self, model: Union[Model, Mapping[str, Any], str, "os.PathLike[str]"], backend: str = "auto",
                 solver: str = "auto", threads: Optional[int] = None, *, tfinal: Optional[float] = None,
                 dt: Optional[float] = None, output: Any = _FROM_MODEL,
                 report_precision: Optional[str] = None, keep_spikes: bool = True, keep_traces: bool = True,
                 trace_memory_limit: int = 1 << 30, separate_synapses: bool = False) -> None:
        self._h: Optional[int] = None
        if not isinstance(model, Model):
            model = load_model(model)
        self.model = model
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                    or not 1 <= threads <= 4096):
            raise CablesimError(f"threads: expected an integer in [1, 4096], got '{threads}'", -3)
        for name, v in (("tfinal", tfinal), ("dt", dt)):
            if v is not None and not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise CablesimError(f"{name}: expected a finite number > 0, got '{v}'", -3)
        if report_precision not in (None, "single", "double"):
            raise CablesimError(f"report precision: expected single or double, got '{report_precision}'", -3)
        if output is _FROM_MODEL:
            output = _model_output(model)
        o = _lib.Options()
        _lib.lib.cs_simulation_options_init(ctypes.byref(o))
        self._keep = [_b(os.fsdecode(output)) if output is not None else None, _b(backend),
                      _b(solver) if solver != "auto" else None]  # alive as long as the handle
        o.output_path, o.backend, o.solver = self._keep
        o.threads = threads or 0
        o.tfinal = float(tfinal or 0.0)
        o.dt = float(dt or 0.0)
        o.report_bits = {None: 0, "single": 32, "double": 64}[report_precision]
        o.keep_spikes = int(bool(keep_spikes))
        o.keep_traces = int(bool(keep_traces))
        o.trace_memory_limit = int(trace_memory_limit)
        o.separate_synapses = int(bool(separate_synapses))
        h = _lib._Sim()
        if model.path is not None:
            st = _lib.lib.cs_simulation_create_file(_b(model.path), ctypes.byref(o), ctypes.byref(h))
        else:
            st = _lib.lib.cs_simulation_create_json(model.to_json().encode(), b"<dict>", _b(model.base_dir),
                                                    ctypes.byref(o), ctypes.byref(h))
        _check(st)
        self._h = h.value
        self.output = None if output is None else os.fsdecode(output)

    # --- running ---------------------------------------------------------------------------
    def run(self, tfinal: float, progress: bool = True) -> "Simulation":
        """Run from the current time to ``tfinal`` [ms] (rounded to a whole step: round(t/dt)·dt).

        Resumable: ``run(50)`` then ``run(100)`` gives bitwise the results of ``run(100)``.
        A time before the current one raises; with an output file, a time past the
        simulation's ``tfinal`` (the file's time axis) raises; without one, the run goes on.
        ``progress`` shows a progress line on stderr for runs longer than a second."""
        h = self._handle()
        _check(_lib.lib.cs_simulation_set_progress(h, int(bool(progress))))
        _check(_lib.lib.cs_simulation_run(h, float(tfinal)))
        return self

    # --- state and results -------------------------------------------------------------------
    def _handle(self) -> int:
        if self._h is None:
            raise CablesimError("the simulation is closed", -3)
        return self._h

    def _info(self) -> _lib.Info:
        i = _lib.Info()
        i.size = ctypes.sizeof(i)
        _check(_lib.lib.cs_simulation_get_info(self._handle(), ctypes.byref(i)))
        return i

    @property
    def time(self) -> float:
        """[ms] the current time."""
        return float(self._info().time)

    @property
    def tfinal(self) -> float:
        """[ms] the planned end (the model's run.tfinal or the ``tfinal`` argument)."""
        return float(self._info().tfinal)

    @property
    def dt(self) -> float:
        """[ms] the time step."""
        return float(self._info().dt)

    @property
    def spikes(self) -> Spikes:
        """Every spike so far, sorted by time then gid: ``(gids uint64, times float64 [ms])``."""
        n = self._info().kept_spikes
        gids = np.empty(n, dtype=np.uint64)
        times = np.empty(n, dtype=np.float64)
        _check(_lib.lib.cs_simulation_spikes(self._handle(), n, gids.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)),
                                             times.ctypes.data_as(_lib._dp)))
        return Spikes(gids, times)

    def cells(self, gids: Any) -> Cells:
        """The population and the index there (a SONATA config's node population and node_id)
        of each gid, as the output file names them: ``sim.cells(sim.spikes.gids)``."""
        g = np.ascontiguousarray(np.asarray(gids, dtype=np.uint64).ravel())
        pops = (ctypes.c_char_p * max(len(g), 1))()
        ids = np.empty(len(g), dtype=np.uint64)
        u64 = ctypes.POINTER(ctypes.c_uint64)
        _check(_lib.lib.cs_simulation_cells(self._handle(), len(g), g.ctypes.data_as(u64), pops, ids.ctypes.data_as(u64)))
        names = np.array([pops[k].decode() for k in range(len(g))], dtype=object)
        return Cells(names, ids)

    @property
    def spikes_by_population(self) -> Dict[str, NodeSpikes]:
        """Every spike so far by population, as the spikes file groups them (a SONATA config's
        node populations, bmtk's /spikes/<population>/node_ids and timestamps): ``{name:
        NodeSpikes(node_ids, times)}``, each sorted by time, then node."""
        gids, times = self.spikes
        cells = self.cells(gids)
        out = {}
        for name in dict.fromkeys(cells.populations):  # in order of first spike
            k = cells.populations == name
            out[name] = NodeSpikes(cells.ids[k], times[k])
        return out

    @property
    def probes(self) -> List[Probe]:
        """The probe of every trace column."""
        h, out = self._handle(), []
        for j in range(self._info().probes):
            p = _lib.ProbeInfo()
            p.size = ctypes.sizeof(p)
            _check(_lib.lib.cs_simulation_probe(h, j, ctypes.byref(p)))
            out.append(Probe(p.population.decode(), p.index, p.gid, p.branch, p.pos, p.cv,
                             p.variable.decode() if p.variable else "v", p.unit.decode() if p.unit else "mV"))
        return out

    @property
    def traces(self) -> Traces:
        """The traces so far: ``data`` [time, probe] (each column in its probe's unit: mV for
        "v"), ``time`` [ms], ``probes``."""
        i = self._info()
        data = np.empty((i.trace_rows, i.probes), dtype=np.float64)
        _check(_lib.lib.cs_simulation_traces(self._handle(), i.trace_rows, data.ctypes.data_as(_lib._dp)))
        return Traces(data, np.arange(i.trace_rows, dtype=np.float64) * i.sample_interval, self.probes)

    @property
    def profile(self) -> Dict[str, Any]:
        """The run's profile: ``seconds`` and ``share`` of each phase (seconds summed over
        threads), ``wall_seconds``, and what ran: backend, threads, cells, compartments,
        steps, spikes, time, and ``synapses`` / ``synapse_instances`` (a SONATA circuit's
        synapses and the mechanism instances they take, fewer where coalesced)."""
        h, i = self._handle(), self._info()
        n = _lib.lib.cs_simulation_profile(h, 0, None, None, None)
        names = (ctypes.c_char_p * n)()
        sec = (ctypes.c_double * n)()
        share = (ctypes.c_double * n)()
        _lib.lib.cs_simulation_profile(h, n, names, sec, share)
        return {
            "seconds": {names[k].decode(): sec[k] for k in range(n)},
            "share": {names[k].decode(): share[k] for k in range(n)},
            "wall_seconds": i.wall_seconds,
            "backend": i.backend.decode(),
            "backend_detail": i.backend_detail.decode(),
            "threads": i.threads,
            "cells": i.cells,
            "compartments": i.compartments,
            "steps": i.steps,
            "spikes": i.spikes,
            "time": i.time,
            "dt": i.dt,
            "synapses": i.synapses,
            "synapse_instances": i.synapse_instances,
        }

    # --- lifetime ----------------------------------------------------------------------------
    def close(self) -> None:
        """Free the simulation; an output file not complete yet is closed marked incomplete."""
        if self._h is not None:
            _lib.lib.cs_simulation_free(self._h)
            self._h = None

    def __enter__(self) -> "Simulation":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        if self._h is None:
            return "Simulation(<closed>)"
        i = self._info()
        return (f"Simulation({self.model!r}, t={i.time:g}/{i.tfinal:g} ms, {i.cells} cells, "
                f"backend={i.backend.decode()})")


from . import solvers  # noqa: E402  (uses _lib and CablesimError)


from .allen import allen_model  # noqa: E402  (uses load_model)
