"""One large tridiagonal system (chunked hybrid, scan), block-tridiagonal batches and the bridge
(one system over partitions), bound from ``libcablesim_solver`` (docs/solver-api.md, issue 29).
Re-exported by ``cablesim.solvers``; import them from there.

NumPy arrays are solved on the CPU in float64 (OpenMP); CuPy arrays on the GPU (device 0). The
inputs are never modified. A zero pivot (a singular matrix) raises CablesimError: the CPU solvers
report it, and the GPU results are checked for inf/NaN (one pass over x) before they are returned.
"""
from __future__ import annotations

import ctypes
from typing import Any, List, Tuple

import numpy as np

from . import CablesimError, _lib
from .solvers import _batch_shape, _gpu_arrays, _is_cupy, _solver_error, gpu_available

_SINGULAR = -2
_UNAVAILABLE = -5
# the CPU's auto: chunked above this many rows (as the GPU's auto for batches); precisions
_CPU_CHUNKED_ABOVE = 1024
_F64, _F32 = 0, 1
_DEVICE_PTRS = 1
_SYNC = {"host": 0, "device": 1}  # cs_thomas_bridge_sync


def _gpu_error(status: int) -> CablesimError:
    return _solver_error(status, _lib.solver.cs_thomas_gpu_last_error() or b"")


def _thomas_variant(name: str) -> int:
    v = ctypes.c_int(-1)
    if _lib.solver.cs_thomas_gpu_variant_from_name(name.encode(), ctypes.byref(v)) != 0:
        raise CablesimError(f"unknown tridiagonal variant {name!r}", -3)
    return v.value


def gpu_variant(nsys: int, n: int, dtype: Any = np.float64) -> str:
    """The concrete GPU variant ``auto`` runs for nsys systems of n rows (``cs_thomas_gpu_choose``):
    "warp" or "warp_staged" for small n, "chunked" above. Needs no GPU."""
    prec = _F32 if np.dtype(dtype) == np.float32 else _F64
    return _lib.solver.cs_thomas_gpu_variant_name(_lib.solver.cs_thomas_gpu_choose(int(nsys), int(n), prec)).decode()


def _check_finite_gpu(name: str, x: Any) -> None:
    import cupy
    if not bool(cupy.isfinite(x).all()):
        raise CablesimError(f"{name}: the solution is not finite (a zero pivot: the matrix is singular, "
                            f"or inf/NaN in the input)", _SINGULAR)


def thomas_large(a: Any, b: Any, c: Any, d: Any, variant: str = "auto") -> Any:
    """Solve one large tridiagonal system, or a few: ``a[i]·x[i-1] + b[i]·x[i] + c[i]·x[i+1] = d[i]``.

    Arrays of shape (n,) or (nsys, n), as ``thomas_batch``; the whole machine works on the batch
    (it counts as one system of nsys·n rows). ``variant``: "chunked" (Thomas inside chunks, the
    chunks' end rows solved recursively, substitution back), "scan" (the recurrences as scans) or
    "auto": on the GPU the C API's choice (``gpu_variant``: the warp variants up to 1024 rows,
    chunked above); on the CPU chunked above 1024 rows, else the batched Thomas across systems.
    NumPy arrays: CPU, float64, OpenMP. CuPy arrays (float64 or float32): GPU. No pivoting
    (diagonally dominant systems); a zero pivot raises CablesimError. Returns x, shaped as d."""
    if variant not in ("auto", "chunked", "scan"):
        raise CablesimError(f"thomas_large: variant {variant!r} is not one of auto, chunked, scan", -3)
    if any(_is_cupy(x) for x in (a, b, c, d)):
        a_, b_, c_, d_ = _gpu_arrays("thomas_large", (a, b, c, d))
        nsys, n, shape = _batch_shape("thomas_large", (a_, b_, c_, d_))
        f = _lib.solver.cs_thomas_gpu_solve_d if a_.dtype == np.float64 else _lib.solver.cs_thomas_gpu_solve_f
        st = f(_thomas_variant(variant), nsys, n, a_.data.ptr, b_.data.ptr, c_.data.ptr, d_.data.ptr,
               _DEVICE_PTRS)
        if st == 0:
            st = _lib.solver.cs_thomas_gpu_synchronize()
        if st != 0:
            raise _gpu_error(st)
        _check_finite_gpu("thomas_large", d_)
        return d_.reshape(shape)
    arrs = [np.array(x, dtype=np.float64, order="C", copy=True) for x in (a, b, c, d)]
    nsys, n, shape = _batch_shape("thomas_large", tuple(arrs))
    if n < 1:
        raise CablesimError("thomas_large: systems of 0 rows", -3)
    if nsys == 0:
        return arrs[3].reshape(shape)
    p = [x.ctypes.data_as(_lib._dp) for x in arrs]
    if variant == "scan":
        st = _lib.solver.cs_thomas_solve_scan_omp(nsys, n, *p)
    elif variant == "chunked" or n > _CPU_CHUNKED_ABOVE:
        st = _lib.solver.cs_thomas_solve_chunked_omp(nsys, n, 0, *p)
    else:
        st = _lib.solver.cs_thomas_solve_omp(nsys, n, *p)
    if st != 0:
        raise _solver_error(st)
    return arrs[3].reshape(shape)


# --- block-tridiagonal batches ----------------------------------------------------------------
def _block_shape(A: Any, B: Any, C: Any, d: Any) -> Tuple[int, int, int]:
    """(nsys, nb, k) of blocks shaped (nsys, nb, k, k) or (nb, k, k), vectors (nsys, nb, k) or (nb, k)."""
    bs = A.shape
    if B.shape != bs or C.shape != bs:
        raise CablesimError(f"block_thomas_batch: A, B, C differ in shape ({A.shape}, {B.shape}, {C.shape})", -3)
    if len(bs) not in (3, 4) or bs[-1] != bs[-2]:
        raise CablesimError(f"block_thomas_batch: blocks must have shape (nsys, nb, k, k) or (nb, k, k), got {bs}",
                            -3)
    if d.shape != bs[:-1]:
        raise CablesimError(f"block_thomas_batch: d has shape {d.shape}, the blocks {bs} (expected {bs[:-1]})", -3)
    nsys, nb, k = (1, bs[0], bs[1]) if len(bs) == 3 else bs[:3]
    if not 1 <= k <= 4:
        raise CablesimError(f"block_thomas_batch: blocks of {k}x{k}; the solvers take k = 1..4", -3)
    if nb < 1:
        raise CablesimError("block_thomas_batch: systems of 0 block rows", -3)
    return nsys, nb, k


def block_thomas_batch(A: Any, B: Any, C: Any, d: Any, variant: str = "auto") -> Any:
    """Solve block-tridiagonal systems ``A[i]·x[i-1] + B[i]·x[i] + C[i]·x[i+1] = d[i]`` (k×k blocks,
    k = 1..4; x[i], d[i] vectors of k).

    A, B, C of shape (nsys, nb, k, k) and d of shape (nsys, nb, k), or (nb, k, k) and (nb, k) for
    one system; ``A[..., 0, :, :]`` and ``C[..., nb-1, :, :]`` are not read. Block Thomas, each
    pivot block factorised by LU with partial pivoting inside the block (stable for block
    diagonally dominant systems). NumPy arrays: CPU, float64, OpenMP across systems. CuPy arrays
    (float64): GPU, ``variant`` "flat", "interleaved" or "auto" (= interleaved, the faster one
    measured; the transposes are done here). ``variant="chunked"``: one large system (or a few):
    the chunked hybrid (chunks of 16 block rows, their end rows solved the same way, then
    substitution; OpenMP over chunks on the CPU, a thread per chunk on the GPU). A singular pivot
    block raises CablesimError. Returns x, shaped as d."""
    if variant not in ("auto", "flat", "interleaved", "chunked"):
        raise CablesimError(f"block_thomas_batch: variant {variant!r} is not one of auto, flat, interleaved, "
                            "chunked", -3)
    if any(_is_cupy(x) for x in (A, B, C, d)):
        return _block_gpu(A, B, C, d, "interleaved" if variant == "auto" else variant)
    Ab, Bb = (np.ascontiguousarray(x, dtype=np.float64) for x in (A, B))
    Cb, db = (np.array(x, dtype=np.float64, order="C", copy=True) for x in (C, d))
    nsys, nb, k = _block_shape(Ab, Bb, Cb, db)
    if nsys == 0:
        return db
    fn = _lib.solver.cs_block_thomas_solve_chunked_omp if variant == "chunked" else _lib.solver.cs_block_thomas_solve_omp
    st = fn(k, nsys, nb, *(x.ctypes.data_as(_lib._dp) for x in (Ab, Bb, Cb, db)))
    if st != 0:
        raise _solver_error(st)
    return db


def _block_gpu(A: Any, B: Any, C: Any, d: Any, variant: str) -> Any:
    import cupy
    A_, B_, C_, d_ = _gpu_arrays("block_thomas_batch", (A, B, C, d))
    if A_.dtype != np.float64:
        raise CablesimError("block_thomas_batch: the GPU block solvers are float64 only", -3)
    nsys, nb, k = _block_shape(A_, B_, C_, d_)
    if nsys == 0:
        return d_
    il = variant == "interleaved"
    if il:  # Full-Interleaved: element e of system s at e·nsys + s (cs_block_thomas_gpu.h)
        A_, B_, C_, x_ = (cupy.ascontiguousarray(x.reshape(nsys, -1).T) for x in (A_, B_, C_, d_))
        cupy.cuda.get_current_stream().synchronize()
    else:
        x_ = d_
    if variant == "chunked":  # Flat; C is overwritten, so it works on a copy
        x_, C_ = d_.copy(), C_.copy()
        cupy.cuda.get_current_stream().synchronize()
        st = _lib.solver.cs_block_thomas_gpu_chunked_d(k, nsys, nb, A_.data.ptr, B_.data.ptr, C_.data.ptr,
                                                       x_.data.ptr, _DEVICE_PTRS)
    else:
        v = 1 if il else 0  # CS_BLOCK_GPU_INTERLEAVED, CS_BLOCK_GPU_FLAT
        st = _lib.solver.cs_block_thomas_gpu_solve_d(v, k, nsys, nb, A_.data.ptr, B_.data.ptr, C_.data.ptr,
                                                     x_.data.ptr, _DEVICE_PTRS)
    if st == 0:
        st = _lib.solver.cs_thomas_gpu_synchronize()
    if st != 0:
        raise _gpu_error(st)
    _check_finite_gpu("block_thomas_batch", x_)
    return cupy.ascontiguousarray(x_.T).reshape(d.shape) if il else x_.reshape(d.shape)


# --- one system over partitions, coupled by a bridge system (GPU) -------------------------------
def thomas_bridge(a: Any, b: Any, c: Any, d: Any, parts: int, sync: str = "device") -> Any:
    """Solve a tridiagonal system (shape (n,), or (nsys, n) as one system of nsys·n rows without
    coupling across systems) split into ``parts`` partitions (1..64, at least 2 rows each), each
    on its own CUDA stream: each partition reduces its rows to its two end rows, the bridge
    system of those 2·parts rows is solved, each partition substitutes back
    (``cs_thomas_gpu_bridge_d``). ``sync``: "device" (streams wait on each other's events and
    solve the bridge themselves) or "host" (the host waits, solves the bridge, launches the rest).

    GPU only, float64 or float32 (``cs_thomas_gpu_bridge_f``; CuPy arrays keep their dtype, NumPy
    arrays are taken as float64): CuPy arrays are solved in place of copies on the device; NumPy
    arrays are copied to the GPU and back. Raises CablesimError without a GPU, or for a singular
    matrix."""
    if sync not in _SYNC:
        raise CablesimError(f"thomas_bridge: sync {sync!r} is not one of host, device", -3)
    parts = int(parts)
    if not gpu_available():
        raise CablesimError("thomas_bridge: needs a GPU (the library has no CUDA or sees no GPU)", _UNAVAILABLE)
    on_gpu = any(_is_cupy(x) for x in (a, b, c, d))
    if on_gpu:
        arrs = _gpu_arrays("thomas_bridge", (a, b, c, d))
        if arrs[0].dtype not in (np.float64, np.float32):
            raise CablesimError("thomas_bridge: float64 or float32 arrays", -3)
    else:
        arrs = tuple(np.array(x, dtype=np.float64, order="C", copy=True) for x in (a, b, c, d))
    nsys, n, shape = _batch_shape("thomas_bridge", arrs)
    if nsys == 0 or n < 1:
        raise CablesimError(f"thomas_bridge: an empty system (shape {shape})", -3)
    wb = _lib.solver.cs_thomas_gpu_bridge_workspace(nsys, n, parts)
    if wb == 0:
        raise CablesimError(f"thomas_bridge: {nsys * n} rows cannot be split into {parts} partitions "
                            f"(1..64 partitions, at least 2 rows each)", -3)
    owned: List[ctypes.c_void_p] = []
    streams = (ctypes.c_void_p * parts)()
    made = 0

    def dev_alloc(nbytes: int) -> int:
        p = ctypes.c_void_p()
        st_ = _lib.solver.cs_thomas_gpu_malloc(ctypes.byref(p), nbytes)
        if st_ != 0:
            raise _gpu_error(st_)
        owned.append(p)
        return p.value

    try:
        work = dev_alloc(wb)
        if on_gpu:
            ptrs = [x.data.ptr for x in arrs]
        else:
            ptrs = []
            for x in arrs:
                p = dev_alloc(x.nbytes)
                st = _lib.solver.cs_thomas_gpu_to_device(p, x.ctypes.data, x.nbytes)
                if st != 0:
                    raise _gpu_error(st)
                ptrs.append(p)
        for i in range(parts):
            sp = ctypes.c_void_p()
            st = _lib.solver.cs_thomas_gpu_stream_create(ctypes.byref(sp))
            if st != 0:
                raise _gpu_error(st)
            streams[i] = sp.value
            made += 1
        fn = _lib.solver.cs_thomas_gpu_bridge_f if arrs[0].dtype == np.float32 else _lib.solver.cs_thomas_gpu_bridge_d
        st = fn(nsys, n, parts, _SYNC[sync], *ptrs, work, wb, streams)
        for i in range(made):  # wait on every stream, even after a failure (the work may be queued)
            s2 = _lib.solver.cs_thomas_gpu_stream_synchronize(streams[i])
            st = st or s2
        if st != 0:
            raise _gpu_error(st)
        x = arrs[3]
        if on_gpu:
            _check_finite_gpu("thomas_bridge", x)
            return x.reshape(shape)
        st = _lib.solver.cs_thomas_gpu_to_host(x.ctypes.data, ptrs[3], x.nbytes)
        if st != 0:
            raise _gpu_error(st)
        if not np.isfinite(x).all():
            raise CablesimError("thomas_bridge: the solution is not finite (a zero pivot: the matrix is singular, "
                                "or inf/NaN in the input)", _SINGULAR)
        return x.reshape(shape)
    finally:
        for i in range(made):
            _lib.solver.cs_thomas_gpu_stream_destroy(streams[i])
        for p in owned:
            _lib.solver.cs_thomas_gpu_free(p)


# --- one system over several GPUs: the bridge across devices --------------------------------------
def thomas_bridge_multi(a: Any, b: Any, c: Any, d: Any, devices: Any = None, rows: Any = None,
                        sync: str = "device") -> np.ndarray:
    """Solve one tridiagonal system (shape (n,)) split into partitions on several GPUs
    (``cs_thomas_gpu_bridge_multi_d``/``_f``): partition p is ``rows[p]`` consecutive rows (at least
    2) on GPU ``devices[p]``; each reduces its rows on its own device, the bridge rows meet on
    ``devices[0]`` by peer copies ("device") or on the host ("host"), each partition substitutes.
    ``devices``: default every GPU (one partition each); they may repeat ([0, 0] on one GPU).
    ``rows``: default an even split; with ``rows`` and no ``devices``, partition p goes to GPU
    p mod count.

    NumPy arrays (float32 stays float32, anything else is taken as float64), copied to the devices
    and back; the inputs are not modified. Returns a NumPy array. Raises CablesimError without a
    GPU, for a bad split, or for a singular matrix."""
    if sync not in _SYNC:
        raise CablesimError(f"thomas_bridge_multi: sync {sync!r} is not one of host, device", -3)
    if not gpu_available():
        raise CablesimError("thomas_bridge_multi: needs a GPU (the library has no CUDA or sees no GPU)", _UNAVAILABLE)
    dt = np.float32 if all(np.asarray(x).dtype == np.float32 for x in (a, b, c, d)) else np.float64
    arrs = tuple(np.array(x, dtype=dt, order="C", copy=True) for x in (a, b, c, d))
    if any(x.ndim != 1 or x.shape != arrs[0].shape for x in arrs) or arrs[0].size < 2:
        raise CablesimError("thomas_bridge_multi: a, b, c, d must be 1-D of one length >= 2", -3)
    n = arrs[0].size
    count = ctypes.c_int(0)
    st = _lib.solver.cs_thomas_gpu_device_count(ctypes.byref(count))
    if st != 0:
        raise _gpu_error(st)
    if devices is None:
        devices = list(range(count.value)) if rows is None else [p % count.value for p in range(len(rows))]
    devices = [int(v) for v in devices]
    parts = len(devices)
    if rows is None:
        rows = [n // parts + (1 if p < n % parts else 0) for p in range(parts)] if parts else []
    rows = [int(r) for r in rows]
    if not 1 <= parts <= 64 or len(rows) != parts or sum(rows) != n or min(rows) < 2:
        raise CablesimError(f"thomas_bridge_multi: {n} rows cannot be split as rows={rows} over devices={devices} "
                            f"(1..64 partitions, at least 2 rows each, the rows summing to {n})", -3)
    ptr_list = ctypes.c_void_p * parts
    pa, pb, pc, pd, work, streams = (ptr_list() for _ in range(6))
    wb = (ctypes.c_size_t * parts)()
    owned: List[Tuple[int, int]] = []  # (device, pointer)
    made: List[Tuple[int, int]] = []   # (device, stream)
    cur = ctypes.c_int(0)
    st = _lib.solver.cs_thomas_gpu_get_device(ctypes.byref(cur))
    if st != 0:
        raise _gpu_error(st)

    def ok(status: int) -> None:
        if status != 0:
            raise _gpu_error(status)

    def dev_alloc(dev: int, nbytes: int) -> int:
        p = ctypes.c_void_p()
        ok(_lib.solver.cs_thomas_gpu_malloc(ctypes.byref(p), nbytes))
        owned.append((dev, p.value))
        return p.value

    try:
        off = 0
        for p in range(parts):
            ok(_lib.solver.cs_thomas_gpu_set_device(devices[p]))
            for arr, ptrs in zip(arrs, (pa, pb, pc, pd)):
                piece = arr[off:off + rows[p]]
                ptrs[p] = dev_alloc(devices[p], piece.nbytes)
                ok(_lib.solver.cs_thomas_gpu_to_device(ptrs[p], piece.ctypes.data, piece.nbytes))
            wb[p] = _lib.solver.cs_thomas_gpu_bridge_multi_workspace(rows[p], parts)
            work[p] = dev_alloc(devices[p], wb[p])
            sp = ctypes.c_void_p()
            ok(_lib.solver.cs_thomas_gpu_stream_create(ctypes.byref(sp)))
            made.append((devices[p], sp.value))
            streams[p] = sp.value
            off += rows[p]
        ok(_lib.solver.cs_thomas_gpu_set_device(cur.value))
        fn = _lib.solver.cs_thomas_gpu_bridge_multi_f if dt == np.float32 else _lib.solver.cs_thomas_gpu_bridge_multi_d
        st = fn(parts, (ctypes.c_int * parts)(*rows), (ctypes.c_int * parts)(*devices), _SYNC[sync],
                pa, pb, pc, pd, work, wb, streams)
        for dev, s in made:  # wait on every stream, even after a failure (the work may be queued)
            s2 = _lib.solver.cs_thomas_gpu_set_device(dev) or _lib.solver.cs_thomas_gpu_stream_synchronize(s)
            st = st or s2
        ok(st)
        x = np.empty(n, dtype=dt)
        off = 0
        for p in range(parts):
            piece = x[off:off + rows[p]]
            ok(_lib.solver.cs_thomas_gpu_set_device(devices[p]))
            ok(_lib.solver.cs_thomas_gpu_to_host(piece.ctypes.data, pd[p], piece.nbytes))
            off += rows[p]
        if not np.isfinite(x).all():
            raise CablesimError("thomas_bridge_multi: the solution is not finite (a zero pivot: the matrix is "
                                "singular, or inf/NaN in the input)", _SINGULAR)
        return x
    finally:
        for dev, s in made:
            _lib.solver.cs_thomas_gpu_set_device(dev)
            _lib.solver.cs_thomas_gpu_stream_destroy(s)
        for dev, ptr in owned:
            _lib.solver.cs_thomas_gpu_set_device(dev)
            _lib.solver.cs_thomas_gpu_free(ptr)
        _lib.solver.cs_thomas_gpu_set_device(cur.value)
