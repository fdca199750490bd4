"""ctypes bindings of the C API (``cablesim.h``) and of ``libcablesim_solver``.

The shared libraries live in this package's folder (``pip install .`` puts them there);
``CABLESIM_LIBRARY_DIR`` points elsewhere (a CMake build with ``-DCABLESIM_PYTHON=ON``).
Nothing here computes: every result comes from the C library.
"""
from __future__ import annotations

import ctypes
import glob
import os
from typing import Any
from ctypes import (POINTER, Structure, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint64,
                    c_void_p)

_HERE = os.path.dirname(os.path.abspath(__file__))


def library_dir() -> str:
    """The folder holding libcablesim and libcablesim_solver."""
    return os.environ.get("CABLESIM_LIBRARY_DIR") or _HERE


def _find(stem: str) -> str:
    d = library_dir()
    # the name libcablesim links to (the package's libraries are unversioned), else a versioned one
    cands = [p for p in [os.path.join(d, stem + ".so")] if os.path.exists(p)]
    cands += sorted(glob.glob(os.path.join(d, stem + ".so.*")), key=len)
    if not cands:
        raise ImportError(f"cablesim: {stem}.so not found in {d} (install the package with `pip install .`, "
                          f"or set CABLESIM_LIBRARY_DIR to a build with -DCABLESIM_PYTHON=ON)")
    return cands[0]


class Options(Structure):
    _fields_ = [("size", c_size_t), ("output_path", c_char_p), ("threads", c_int), ("tfinal", c_double),
                ("dt", c_double), ("backend", c_char_p), ("solver", c_char_p), ("report_bits", c_int),
                ("progress", c_int), ("keep_spikes", c_int), ("keep_traces", c_int),
                ("trace_memory_limit", c_size_t), ("separate_synapses", c_int)]


class Info(Structure):
    _fields_ = [("size", c_size_t), ("time", c_double), ("dt", c_double), ("tfinal", c_double),
                ("steps", c_int64), ("cells", c_uint64), ("compartments", c_uint64), ("spikes", c_uint64),
                ("threads", c_int), ("backend", c_char_p), ("backend_detail", c_char_p),
                ("wall_seconds", c_double), ("probes", c_size_t), ("trace_rows", c_size_t),
                ("sample_interval", c_double), ("kept_spikes", c_size_t),
                ("synapses", c_uint64), ("synapse_instances", c_uint64)]


class ProbeInfo(Structure):
    _fields_ = [("size", c_size_t), ("population", c_char_p), ("index", c_int), ("gid", c_uint64),
                ("branch", c_int), ("pos", c_double), ("cv", c_uint64), ("variable", c_char_p),
                ("unit", c_char_p)]


_solver = ctypes.CDLL(_find("libcablesim_solver"))
lib = ctypes.CDLL(_find("libcablesim"))

_Sim = c_void_p
_dp = POINTER(c_double)
_ip = POINTER(c_int)


def _proto(handle: ctypes.CDLL, name: str, res: Any, *args: Any) -> None:
    f = getattr(handle, name)
    f.restype = res
    f.argtypes = list(args)


_proto(lib, "cs_simulation_options_init", None, POINTER(Options))
_proto(lib, "cs_simulation_create_file", c_int, c_char_p, POINTER(Options), POINTER(_Sim))
_proto(lib, "cs_simulation_create_json", c_int, c_char_p, c_char_p, c_char_p, POINTER(Options), POINTER(_Sim))
_proto(lib, "cs_model_check_file", c_int, c_char_p)
_proto(lib, "cs_model_check_json", c_int, c_char_p, c_char_p, c_char_p)
_proto(lib, "cs_model_output_path", c_int, c_char_p, c_char_p, c_size_t)
_proto(lib, "cs_simulation_run", c_int, _Sim, c_double)
_proto(lib, "cs_simulation_set_progress", c_int, _Sim, c_int)
_proto(lib, "cs_simulation_get_info", c_int, _Sim, POINTER(Info))
_proto(lib, "cs_simulation_spikes", c_int, _Sim, c_size_t, POINTER(c_uint64), _dp)
_proto(lib, "cs_simulation_cells", c_int, _Sim, c_size_t, POINTER(c_uint64), POINTER(c_char_p), POINTER(c_uint64))
_proto(lib, "cs_simulation_traces", c_int, _Sim, c_size_t, _dp)
_proto(lib, "cs_simulation_probe", c_int, _Sim, c_size_t, POINTER(ProbeInfo))
_proto(lib, "cs_simulation_profile", c_int, _Sim, c_int, POINTER(c_char_p), _dp, _dp)
_proto(lib, "cs_simulation_free", None, _Sim)
_proto(lib, "cs_api_last_error", c_char_p)
_proto(lib, "cs_api_version", c_char_p)

# libcablesim_solver (docs/solver-api.md)
_proto(_solver, "cs_solver_status_string", c_char_p, c_int)
_proto(_solver, "cs_thomas_solve_omp", c_int, c_int, c_int, _dp, _dp, _dp, _dp)
_proto(_solver, "cs_hines_check_structure", c_int, c_int, _ip, _ip)
_proto(_solver, "cs_hines_solve_omp", c_int, c_int, _ip, _ip, _dp, _dp, _dp)
# one large tridiagonal system and block-tridiagonal batches (CPU, OpenMP)
_proto(_solver, "cs_thomas_solve_chunked_omp", c_int, c_int, c_int, c_int, _dp, _dp, _dp, _dp)
_proto(_solver, "cs_thomas_solve_scan_omp", c_int, c_int, c_int, _dp, _dp, _dp, _dp)
_proto(_solver, "cs_block_thomas_solve_omp", c_int, c_int, c_int, c_int, _dp, _dp, _dp, _dp)
_proto(_solver, "cs_block_thomas_solve_chunked_omp", c_int, c_int, c_int, c_int, _dp, _dp, _dp, _dp)
# GPU entry points (answer CS_SOLVER_ERR_UNAVAILABLE in a build without CUDA); device pointers
_proto(_solver, "cs_thomas_gpu_solve_d", c_int, c_int, c_int, c_int, c_void_p, c_void_p, c_void_p, c_void_p, c_int)
_proto(_solver, "cs_thomas_gpu_solve_f", c_int, c_int, c_int, c_int, c_void_p, c_void_p, c_void_p, c_void_p, c_int)
_proto(_solver, "cs_thomas_gpu_synchronize", c_int)
_proto(_solver, "cs_thomas_gpu_last_error", c_char_p)
_proto(_solver, "cs_thomas_gpu_device_count", c_int, _ip)
_proto(_solver, "cs_thomas_gpu_variant_from_name", c_int, c_char_p, _ip)
_proto(_solver, "cs_thomas_gpu_variant_name", c_char_p, c_int)
_proto(_solver, "cs_thomas_gpu_choose", c_int, c_int, c_int, c_int)
_proto(_solver, "cs_block_gpu_variant_name", c_char_p, c_int)
_proto(_solver, "cs_block_thomas_gpu_solve_d", c_int, c_int, c_int, c_int, c_int, c_void_p, c_void_p, c_void_p,
       c_void_p, c_int)
_proto(_solver, "cs_block_thomas_gpu_chunked_d", c_int, c_int, c_int, c_int, c_void_p, c_void_p, c_void_p,
       c_void_p, c_int)
_proto(_solver, "cs_thomas_gpu_bridge_workspace", c_size_t, c_int, c_int, c_int)
_proto(_solver, "cs_thomas_gpu_bridge_d", c_int, c_int, c_int, c_int, c_int, c_void_p, c_void_p, c_void_p,
       c_void_p, c_void_p, c_size_t, POINTER(c_void_p))
_proto(_solver, "cs_thomas_gpu_bridge_f", c_int, c_int, c_int, c_int, c_int, c_void_p, c_void_p, c_void_p,
       c_void_p, c_void_p, c_size_t, POINTER(c_void_p))
_proto(_solver, "cs_thomas_gpu_bridge_multi_workspace", c_size_t, c_int, c_int)
_proto(_solver, "cs_thomas_gpu_bridge_multi_peer", c_int, c_int, _ip, _ip)
for _t in ("d", "f"):
    _proto(_solver, f"cs_thomas_gpu_bridge_multi_{_t}", c_int, c_int, _ip, _ip, c_int, POINTER(c_void_p),
           POINTER(c_void_p), POINTER(c_void_p), POINTER(c_void_p), POINTER(c_void_p), POINTER(c_size_t),
           POINTER(c_void_p))
_proto(_solver, "cs_thomas_gpu_set_device", c_int, c_int)
_proto(_solver, "cs_thomas_gpu_get_device", c_int, _ip)
_proto(_solver, "cs_thomas_gpu_malloc", c_int, POINTER(c_void_p), c_size_t)
_proto(_solver, "cs_thomas_gpu_free", c_int, c_void_p)
_proto(_solver, "cs_thomas_gpu_to_device", c_int, c_void_p, c_void_p, c_size_t)
_proto(_solver, "cs_thomas_gpu_to_host", c_int, c_void_p, c_void_p, c_size_t)
_proto(_solver, "cs_thomas_gpu_stream_create", c_int, POINTER(c_void_p))
_proto(_solver, "cs_thomas_gpu_stream_synchronize", c_int, c_void_p)
_proto(_solver, "cs_thomas_gpu_stream_destroy", c_int, c_void_p)
_proto(_solver, "cs_hines_gpu_plan_create", c_int, c_int, _ip, _ip, c_void_p, POINTER(c_void_p))
_proto(_solver, "cs_hines_gpu_plan_destroy", None, c_void_p)
_proto(_solver, "cs_hines_gpu_solve_d", c_int, c_void_p, c_void_p, c_void_p, c_void_p)
_proto(_solver, "cs_hines_gpu_solve_f", c_int, c_void_p, c_void_p, c_void_p, c_void_p)
_proto(_solver, "cs_hines_gpu_last_error", c_char_p)

solver = _solver


def last_error() -> str:
    return (lib.cs_api_last_error() or b"").decode("utf-8", "replace")
