"""Batched tridiagonal (Thomas) and tree (Hines) solvers of ``libcablesim_solver``
(docs/solver-api.md), on NumPy arrays (the CPU, OpenMP across systems) or on CuPy arrays (the
GPU, when the library is built with CUDA and CuPy is installed); one large tridiagonal system
(``thomas_large``: chunked or scan), block-tridiagonal batches (``block_thomas_batch``) and one
system split over partitions coupled by a bridge system (``thomas_bridge``, GPU; over several
GPUs, ``thomas_bridge_multi``) are in
``_solvers_large``, re-exported here.

The inputs are never modified: the solvers work on copies and return the solution.
"""
from __future__ import annotations

import ctypes
from typing import Any, Tuple

import numpy as np

from . import CablesimError, _lib

__all__ = ["thomas_batch", "hines_batch", "gpu_available", "thomas_large", "gpu_variant", "block_thomas_batch",
           "thomas_bridge", "thomas_bridge_multi"]

_ip = ctypes.POINTER(ctypes.c_int)


def _is_cupy(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "cupy"


def _solver_error(status: int, gpu_message: bytes = b"") -> CablesimError:
    text = (_lib.solver.cs_solver_status_string(status) or b"").decode()
    if gpu_message:
        text = f"{text}: {gpu_message.decode()}"
    return CablesimError(text, status)


def gpu_available() -> bool:
    """True when the library has CUDA and sees a GPU (the CuPy paths can run)."""
    n = ctypes.c_int(0)
    return _lib.solver.cs_thomas_gpu_device_count(ctypes.byref(n)) == 0 and n.value > 0


def _batch_shape(name: str, arrays: Tuple[Any, ...]) -> Tuple[int, int, Tuple[int, ...]]:
    shape = arrays[0].shape
    for a in arrays:
        if a.shape != shape:
            raise CablesimError(f"{name}: the arrays differ in shape ({a.shape} vs {shape})", -3)
    if len(shape) == 1:
        return 1, shape[0], shape
    if len(shape) == 2:
        return shape[0], shape[1], shape
    raise CablesimError(f"{name}: expected arrays of shape (n,) or (nsys, n), got {shape}", -3)


def thomas_batch(a: Any, b: Any, c: Any, d: Any) -> Any:
    """Solve tridiagonal systems ``a[i]·x[i-1] + b[i]·x[i] + c[i]·x[i+1] = d[i]``.

    Arrays of shape (n,) for one system or (nsys, n) for a batch (``a[..., 0]`` and
    ``c[..., n-1]`` are not read). No pivoting: for diagonally dominant systems. NumPy arrays
    are solved on the CPU in float64; CuPy arrays (float64 or float32, on device 0) on the GPU
    with the ``auto`` variant. Returns x with the shape of d."""
    if any(_is_cupy(x) for x in (a, b, c, d)):
        return _thomas_gpu(a, b, c, d)
    arrs = [np.array(x, dtype=np.float64, order="C", copy=True) for x in (a, b, c, d)]
    nsys, n, shape = _batch_shape("thomas_batch", tuple(arrs))
    if n < 1:
        raise CablesimError("thomas_batch: systems of 0 rows", -3)
    a_, b_, c_, d_ = arrs
    st = _lib.solver.cs_thomas_solve_omp(nsys, n, *(x.ctypes.data_as(_lib._dp) for x in (a_, b_, c_, d_)))
    if st != 0:
        raise _solver_error(st)
    return d_.reshape(shape)


def _offsets(name: str, p: np.ndarray) -> np.ndarray:
    starts = np.flatnonzero(p < 0)
    if p.size == 0 or p[0] >= 0:
        raise CablesimError(f"{name}: parent[0] must be -1 (each system starts at a row whose parent is -1)", -3)
    return np.concatenate([starts, [p.size]]).astype(np.intc)


def _hines_structure(name: str, shape: Tuple[int, ...], parent: Any) -> Tuple[int, np.ndarray, np.ndarray]:
    p = np.asarray(parent)
    if p.dtype.kind not in "iu":
        raise CablesimError(f"{name}: parent must hold integers, got {p.dtype}", -3)
    p = p.astype(np.int64)
    if len(shape) == 2:
        nsys, n = shape
        if p.shape != (n,):
            raise CablesimError(f"{name}: with arrays of shape (nsys, n) parent is one system's (n,), got {p.shape}",
                                -3)
        if n < 1 or p[0] != -1 or np.any(p[1:] < 0):
            raise CablesimError(f"{name}: parent[0] must be -1 and the others >= 0", -3)
        base = (np.arange(nsys, dtype=np.int64) * n)[:, None]
        p = np.where(p[None, :] < 0, -1, p[None, :] + base).reshape(-1)
    elif len(shape) != 1:
        raise CablesimError(f"{name}: expected arrays of shape (rows,) or (nsys, n), got {shape}", -3)
    elif p.shape != shape:
        raise CablesimError(f"{name}: parent has shape {p.shape}, the arrays {shape}", -3)
    if p.size and (p.max() >= p.size or p.min() < -1):
        raise CablesimError(f"{name}: a parent index out of range", -3)
    offset = _offsets(name, p)
    p32 = np.ascontiguousarray(p, dtype=np.intc)
    st = _lib.solver.cs_hines_check_structure(len(offset) - 1, offset.ctypes.data_as(_ip), p32.ctypes.data_as(_ip))
    if st != 0:
        raise CablesimError(f"{name}: not a tree in Hines order (every parent before its child): "
                            f"{(_lib.solver.cs_solver_status_string(st) or b'').decode()}", st)
    return len(offset) - 1, offset, p32


def hines_batch(d: Any, u: Any, rhs: Any, parent: Any) -> Any:
    """Solve tree systems in Hines order: ``d[r]·x[r] + u[r]·x[p[r]] + Σ_children u[c]·x[c] = rhs[r]``.

    Either 1-D arrays over the rows of every system, with ``parent`` the global row of each
    row's parent (``parent[r] < r``; -1 exactly at the first row of each system, which is how
    systems are told apart), or arrays of shape (nsys, n) of systems of one structure, with
    ``parent`` (n,) the structure of one (-1 at row 0). NumPy arrays are solved on the CPU in
    float64; CuPy arrays (float64 or float32, on device 0) on the GPU (``auto`` plan). Returns x
    with the shape of rhs."""
    if any(_is_cupy(x) for x in (d, u, rhs)):
        return _hines_gpu(d, u, rhs, parent)
    arrs = [np.array(x, dtype=np.float64, order="C", copy=True) for x in (d, u, rhs)]
    _batch_shape("hines_batch", tuple(arrs))
    shape = arrs[0].shape
    nsys, offset, p = _hines_structure("hines_batch", shape, parent)
    d_, u_, r_ = arrs
    st = _lib.solver.cs_hines_solve_omp(nsys, offset.ctypes.data_as(_ip), p.ctypes.data_as(_ip),
                                        d_.ctypes.data_as(_lib._dp), u_.ctypes.data_as(_lib._dp),
                                        r_.ctypes.data_as(_lib._dp))
    if st != 0:
        raise _solver_error(st)
    return r_.reshape(shape)


# --- the GPU, through CuPy's device pointers ---------------------------------------------------
def _gpu_arrays(name: str, xs: Tuple[Any, ...]) -> Tuple[Any, ...]:
    import cupy  # noqa: F401  (only reached with CuPy arrays)
    if not all(_is_cupy(x) for x in xs):
        raise CablesimError(f"{name}: mix of CuPy and other arrays; pass all on the GPU or none", -3)
    dtype = xs[0].dtype
    if dtype not in (np.float64, np.float32) or any(x.dtype != dtype for x in xs):
        raise CablesimError(f"{name}: CuPy arrays must all be float64 or all float32", -3)
    if any(x.device.id != 0 for x in xs):
        raise CablesimError(f"{name}: CuPy arrays must be on device 0 (the library's device)", -3)
    if not gpu_available():
        raise CablesimError(f"{name}: the library has no CUDA or sees no GPU", -5)
    # copies: the solvers overwrite their workspace and right-hand side
    out = tuple(cupy.array(x, dtype=dtype, order="C", copy=True) for x in xs)
    # the library launches on the legacy default stream: let CuPy's copies land first
    cupy.cuda.get_current_stream().synchronize()
    return out


def _thomas_gpu(a: Any, b: Any, c: Any, d: Any) -> Any:
    a_, b_, c_, d_ = _gpu_arrays("thomas_batch", (a, b, c, d))
    nsys, n, shape = _batch_shape("thomas_batch", (a_, b_, c_, d_))
    f = _lib.solver.cs_thomas_gpu_solve_d if a_.dtype == np.float64 else _lib.solver.cs_thomas_gpu_solve_f
    st = f(0, nsys, n, a_.data.ptr, b_.data.ptr, c_.data.ptr, d_.data.ptr, 1)  # AUTO, DEVICE_PTRS
    if st == 0:
        st = _lib.solver.cs_thomas_gpu_synchronize()
    if st != 0:
        raise _solver_error(st, _lib.solver.cs_thomas_gpu_last_error() or b"")
    return d_.reshape(shape)


def _hines_gpu(d: Any, u: Any, rhs: Any, parent: Any) -> Any:
    d_, u_, r_ = _gpu_arrays("hines_batch", (d, u, rhs))
    _batch_shape("hines_batch", (d_, u_, r_))
    nsys, offset, p = _hines_structure("hines_batch", d_.shape, parent.get() if _is_cupy(parent) else parent)
    plan = ctypes.c_void_p()
    st = _lib.solver.cs_hines_gpu_plan_create(nsys, offset.ctypes.data_as(_ip), p.ctypes.data_as(_ip), None,
                                             ctypes.byref(plan))
    if st != 0:
        raise _solver_error(st, _lib.solver.cs_hines_gpu_last_error() or b"")
    try:
        f = _lib.solver.cs_hines_gpu_solve_d if d_.dtype == np.float64 else _lib.solver.cs_hines_gpu_solve_f
        st = f(plan, d_.data.ptr, u_.data.ptr, r_.data.ptr)  # device pointers, synchronous
        if st != 0:
            raise _solver_error(st, _lib.solver.cs_hines_gpu_last_error() or b"")
    finally:
        _lib.solver.cs_hines_gpu_plan_destroy(plan)
    return r_.reshape(rhs.shape)


from ._solvers_large import (block_thomas_batch, gpu_variant, thomas_bridge, thomas_bridge_multi,  # noqa: E402
                             thomas_large)
