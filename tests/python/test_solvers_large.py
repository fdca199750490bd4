"""cablesim.solvers' large-system, block-tridiagonal and bridge solvers against SciPy's
scipy.linalg.solve_banded (LAPACK's banded LU with partial pivoting): the tridiagonal band, and
for blocks the band of the whole block matrix (kl = ku = 2k - 1). Errors are
max|x - x_ref| / max|x_ref|. Tolerances: 1e-12 on diagonally dominant systems (double), 1e-4 in
float; near-singular systems (weakly dominant, margin 1e-8, condition number ~1e7) 1e-7, 20-100×
the measured (1e-9 to 5e-9). A singular matrix (a zero row) must raise CablesimError, never return NaN.
The CuPy paths and the bridge run only with CuPy and a GPU (skipped otherwise)."""
import numpy as np
import pytest
from scipy.linalg import solve_banded

import cablesim
from cablesim import solvers

RNG = np.random.default_rng(29)
TOL, TOL_NEAR, TOL_F32 = 1e-12, 1e-7, 1e-4


def tridiagonal(nsys, n, margin=None):
    """Diagonally dominant (|b| >= |a| + |c| + 0.5), or weakly so with the given margin: then the
    matrix is close to a discrete Laplacian's, whose smallest eigenvalue is ~(pi/n)^2."""
    a = RNG.uniform(-1, 0, (nsys, n))
    c = RNG.uniform(-1, 0, (nsys, n))
    a[:, 0] = 0
    c[:, -1] = 0
    b = np.abs(a) + np.abs(c) + (0.5 + RNG.uniform(0, 1, (nsys, n)) if margin is None else margin)
    d = RNG.normal(size=(nsys, n))
    return a, b, c, d


def tri_reference(a, b, c, d):
    """solve_banded on the whole batch as one system of nsys·n rows (no coupling across systems)."""
    a, b, c, d = (np.asarray(x, dtype=np.float64).reshape(-1) for x in (a, b, c, d))
    n = d.size
    ab = np.zeros((3, n))
    ab[0, 1:] = c[:-1]
    ab[1] = b
    ab[2, :-1] = a[1:]
    return solve_banded((1, 1), ab, d)


def rel_err(x, ref):
    return float(np.max(np.abs(np.asarray(x).reshape(-1) - ref.reshape(-1))) / np.max(np.abs(ref)))


def cupy_or_skip():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    if not solvers.gpu_available():
        pytest.skip("the library has no CUDA or there is no GPU")
    return cupy


# --- one large system --------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["auto", "chunked", "scan"])
@pytest.mark.parametrize("nsys,n", [(1, 1), (1, 7), (1, 1024), (1, 5000), (3, 3000), (40, 33)])
def test_thomas_large_matches_solve_banded(variant, nsys, n):
    a, b, c, d = tridiagonal(nsys, n)
    keep = [x.copy() for x in (a, b, c, d)]
    x = solvers.thomas_large(a, b, c, d, variant=variant)
    assert x.shape == d.shape
    ref = tri_reference(a, b, c, d)
    assert rel_err(x, ref) <= TOL
    for k, v in zip(keep, (a, b, c, d)):  # the inputs are left alone
        assert np.array_equal(k, v)


@pytest.mark.parametrize("variant", ["auto", "chunked", "scan"])
@pytest.mark.parametrize("n", [1000, 4096])  # auto: the batched Thomas at 1000 rows, chunked at 4096
def test_thomas_large_near_singular(variant, n):
    a, b, c, d = tridiagonal(1, n, margin=1e-8)
    x = solvers.thomas_large(a[0], b[0], c[0], d[0], variant=variant)
    ref = tri_reference(a, b, c, d)
    err = rel_err(x, ref)
    print(f"thomas_large {variant} near-singular (margin 1e-8, n {n}): rel err {err:.2e} (tol {TOL_NEAR})")
    assert err <= TOL_NEAR


@pytest.mark.parametrize("variant", ["auto", "chunked", "scan"])
@pytest.mark.parametrize("n,row", [(3000, 0), (3000, 1500), (3000, 2999), (500, 250)])
def test_thomas_large_zero_row_raises(variant, n, row):
    a, b, c, d = tridiagonal(1, n)
    a[0, row] = b[0, row] = c[0, row] = 0.0  # a zero row: the matrix is singular
    with pytest.raises(cablesim.CablesimError, match="zero pivot|singular"):
        solvers.thomas_large(a, b, c, d, variant=variant)


def test_gpu_variant_is_the_c_choice():
    # cs_thomas_gpu_choose, no GPU needed: warp variants up to 1024 rows, chunked above
    assert solvers.gpu_variant(1, 1024) in ("warp", "warp_staged")
    assert solvers.gpu_variant(1, 2048, np.float32) == "chunked"
    assert solvers.gpu_variant(2, 2048) == "chunked"
    assert solvers.gpu_variant(1, 2049) == "chunked"
    assert solvers.gpu_variant(1, 1 << 20) == "chunked"
    assert solvers.gpu_variant(8, 100000, np.float32) == "chunked"


def test_thomas_large_bad_input():
    with pytest.raises(cablesim.CablesimError, match="variant 'pcr'"):
        solvers.thomas_large(np.ones(4), np.ones(4), np.ones(4), np.ones(4), variant="pcr")
    with pytest.raises(cablesim.CablesimError, match="differ in shape"):
        solvers.thomas_large(np.ones(4), np.ones(4), np.ones(4), np.ones(5))
    with pytest.raises(cablesim.CablesimError, match="0 rows"):
        solvers.thomas_large(np.ones((2, 0)), np.ones((2, 0)), np.ones((2, 0)), np.ones((2, 0)))


@pytest.mark.parametrize("variant", ["auto", "chunked", "scan"])
@pytest.mark.parametrize("dtype,tol", [(np.float64, TOL), (np.float32, TOL_F32)])
@pytest.mark.parametrize("nsys,n", [(1, 1000), (1, 2048), (1, 1 << 17), (4, 70000)])
def test_thomas_large_cupy(variant, dtype, tol, nsys, n):
    cupy = cupy_or_skip()
    a, b, c, d = tridiagonal(nsys, n)
    x = solvers.thomas_large(*(cupy.asarray(v, dtype=dtype) for v in (a, b, c, d)), variant=variant)
    assert isinstance(x, cupy.ndarray) and x.dtype == dtype and x.shape == d.shape
    ref = tri_reference(*(v.astype(dtype) for v in (a, b, c, d)))
    assert rel_err(cupy.asnumpy(x), ref) <= tol


@pytest.mark.parametrize("variant", ["chunked", "scan"])
def test_thomas_large_cupy_near_singular_and_zero_row(variant):
    cupy = cupy_or_skip()
    a, b, c, d = tridiagonal(1, 1 << 16, margin=1e-8)
    x = solvers.thomas_large(*(cupy.asarray(v) for v in (a, b, c, d)), variant=variant)
    assert rel_err(cupy.asnumpy(x), tri_reference(a, b, c, d)) <= TOL_NEAR
    a, b, c, d = tridiagonal(1, 1 << 16)
    a[0, 777] = b[0, 777] = c[0, 777] = 0.0
    with pytest.raises(cablesim.CablesimError, match="not finite"):
        solvers.thomas_large(*(cupy.asarray(v) for v in (a, b, c, d)), variant=variant)


# --- block-tridiagonal batches -----------------------------------------------------------------
def blocks(nsys, nb, k, margin=None):
    """Block rows with B's diagonal >= the absolute row sums of A, C and B's off-diagonal, plus
    0.5..1.5 (diagonally dominant) or plus `margin` (near-singular)."""
    A = RNG.uniform(-1, 1, (nsys, nb, k, k))
    C = RNG.uniform(-1, 1, (nsys, nb, k, k))
    B = RNG.uniform(-1, 1, (nsys, nb, k, k))
    A[:, 0] = 0
    C[:, -1] = 0
    if margin is not None:  # all couplings negative, as a Laplacian's: weakly dominant is near-singular
        A, B, C = -np.abs(A), -np.abs(B), -np.abs(C)
    eye = np.eye(k, dtype=bool)
    B[..., eye] = 0
    rows = np.abs(A).sum(-1) + np.abs(B).sum(-1) + np.abs(C).sum(-1)
    B[..., eye] = rows + (0.5 + RNG.uniform(0, 1, rows.shape) if margin is None else margin)
    d = RNG.normal(size=(nsys, nb, k))
    return A, B, C, d


def block_reference(A, B, C, d):
    """solve_banded on the band (kl = ku = 2k - 1) of each system's nb·k × nb·k matrix."""
    nsys, nb, k, _ = A.shape
    N, w = nb * k, 2 * k - 1
    x = np.empty((nsys, N))
    for s in range(nsys):
        M = np.zeros((N, N))
        for i in range(nb):
            r = slice(i * k, i * k + k)
            M[r, r] = B[s, i]
            if i > 0:
                M[r, (i - 1) * k:i * k] = A[s, i]
            if i < nb - 1:
                M[r, (i + 1) * k:(i + 2) * k] = C[s, i]
        ab = np.zeros((2 * w + 1, N))
        for j in range(N):
            for r in range(max(0, j - w), min(N, j + w + 1)):
                ab[w + r - j, j] = M[r, j]
        x[s] = solve_banded((w, w), ab, d[s].reshape(-1))
    return x.reshape(d.shape)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_block_thomas_matches_solve_banded(k):
    A, B, C, d = blocks(5, 40, k)
    keep = [x.copy() for x in (A, B, C, d)]
    x = solvers.block_thomas_batch(A, B, C, d)
    assert x.shape == d.shape
    assert rel_err(x, block_reference(A, B, C, d)) <= TOL
    x1 = solvers.block_thomas_batch(A[2], B[2], C[2], d[2])  # one system: (nb, k, k) and (nb, k)
    assert x1.shape == (40, k)
    assert rel_err(x1, block_reference(A[2:3], B[2:3], C[2:3], d[2:3])) <= TOL
    for kp, v in zip(keep, (A, B, C, d)):
        assert np.array_equal(kp, v)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_block_thomas_near_singular_and_zero_leading_entry(k):
    A, B, C, d = blocks(3, 300, k, margin=1e-8)
    err = rel_err(solvers.block_thomas_batch(A, B, C, d), block_reference(A, B, C, d))
    print(f"block k={k} near-singular (margin 1e-8, 300 block rows): rel err {err:.2e} (tol {TOL_NEAR})")
    assert err <= TOL_NEAR
    # pivot blocks whose leading entry is zero: the LU inside the block pivots
    A, B, C, d = blocks(2, 30, k)
    B[:, :, 0, 0] = 0.0
    B[:, :, 0, 1] = B[:, :, 1, 1] + 1
    assert rel_err(solvers.block_thomas_batch(A, B, C, d), block_reference(A, B, C, d)) <= TOL


def test_block_thomas_singular_raises_and_bad_input():
    A, B, C, d = blocks(2, 20, 3)
    A[1, 7] = B[1, 7] = C[1, 7] = 0.0  # a zero block row
    with pytest.raises(cablesim.CablesimError, match="zero pivot|singular"):
        solvers.block_thomas_batch(A, B, C, d)
    with pytest.raises(cablesim.CablesimError, match="k = 1..4"):
        solvers.block_thomas_batch(*(np.ones((2, 3, 5, 5)),) * 3, np.ones((2, 3, 5)))
    with pytest.raises(cablesim.CablesimError, match="d has shape"):
        solvers.block_thomas_batch(*(np.ones((2, 3, 2, 2)),) * 3, np.ones((2, 3, 3)))
    with pytest.raises(cablesim.CablesimError, match="variant"):
        solvers.block_thomas_batch(*(np.ones((3, 2, 2)),) * 3, np.ones((3, 2)), variant="warp")


@pytest.mark.parametrize("variant", ["auto", "flat", "interleaved"])
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_block_thomas_cupy(variant, k):
    cupy = cupy_or_skip()
    A, B, C, d = blocks(300, 25, k)
    x = solvers.block_thomas_batch(*(cupy.asarray(v) for v in (A, B, C, d)), variant=variant)
    assert isinstance(x, cupy.ndarray) and x.shape == d.shape
    assert rel_err(cupy.asnumpy(x), solvers.block_thomas_batch(A, B, C, d)) <= TOL
    sub = slice(0, 3)  # and against SciPy on a few systems
    assert rel_err(cupy.asnumpy(x)[sub], block_reference(A[sub], B[sub], C[sub], d[sub])) <= TOL
    A[5, 3] = B[5, 3] = C[5, 3] = 0.0
    with pytest.raises(cablesim.CablesimError, match="not finite"):
        solvers.block_thomas_batch(*(cupy.asarray(v) for v in (A, B, C, d)), variant=variant)


# --- the bridge ----------------------------------------------------------------------------------
def test_bridge_without_gpu_raises():
    if solvers.gpu_available():
        pytest.skip("a GPU is present (the bridge runs: see the GPU tests)")
    with pytest.raises(cablesim.CablesimError, match="needs a GPU"):
        solvers.thomas_bridge(np.ones(8), np.ones(8) * 3, np.ones(8), np.ones(8), parts=2)


@pytest.mark.parametrize("sync", ["host", "device"])
@pytest.mark.parametrize("parts", [1, 2, 3, 8])
def test_bridge_matches_solve_banded(sync, parts):
    if not solvers.gpu_available():
        pytest.skip("the library has no CUDA or there is no GPU")
    a, b, c, d = tridiagonal(1, 50000)
    x = solvers.thomas_bridge(a[0], b[0], c[0], d[0], parts=parts, sync=sync)  # NumPy: copied in and out
    assert rel_err(x, tri_reference(a, b, c, d)) <= TOL
    a, b, c, d = tridiagonal(1, 20000, margin=1e-8)
    x = solvers.thomas_bridge(a, b, c, d, parts=parts, sync=sync)
    assert rel_err(x, tri_reference(a, b, c, d)) <= TOL_NEAR
    a, b, c, d = tridiagonal(1, 20000)
    a[0, 12345] = b[0, 12345] = c[0, 12345] = 0.0
    with pytest.raises(cablesim.CablesimError, match="singular|not finite"):
        solvers.thomas_bridge(a, b, c, d, parts=parts, sync=sync)
    with pytest.raises(cablesim.CablesimError, match="cannot be split"):
        solvers.thomas_bridge(np.ones(3), np.ones(3) * 3, np.ones(3), np.ones(3), parts=2)


def test_bridge_cupy():
    cupy = cupy_or_skip()
    a, b, c, d = tridiagonal(3, 40000)
    x = solvers.thomas_bridge(*(cupy.asarray(v) for v in (a, b, c, d)), parts=4)
    assert isinstance(x, cupy.ndarray) and x.shape == d.shape
    assert rel_err(cupy.asnumpy(x), tri_reference(a, b, c, d)) <= TOL
    # float32 (cs_thomas_gpu_bridge_f) against SciPy on the float-rounded inputs
    a, b, c, d = (v.astype(np.float32) for v in tridiagonal(1, 30000))
    x = solvers.thomas_bridge(*(cupy.asarray(v) for v in (a, b, c, d)), parts=3, sync="host")
    assert x.dtype == np.float32
    assert rel_err(cupy.asnumpy(x).astype(np.float64), tri_reference(*(v.astype(np.float64) for v in (a, b, c, d)))) <= 1e-5


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_block_thomas_chunked_matches_solve_banded(k):
    # one large system (and a few: chunks straddle the systems' cuts) through the chunked hybrid
    A, B, C, d = blocks(1, 3001, k)
    x = solvers.block_thomas_batch(A, B, C, d, variant="chunked")
    assert rel_err(x, block_reference(A, B, C, d)) <= TOL
    A, B, C, d = blocks(3, 257, k)
    assert rel_err(solvers.block_thomas_batch(A, B, C, d, variant="chunked"), block_reference(A, B, C, d)) <= TOL
    A[1, 100] = B[1, 100] = C[1, 100] = 0.0
    with pytest.raises(cablesim.CablesimError, match="zero pivot|singular"):
        solvers.block_thomas_batch(A, B, C, d, variant="chunked")


@pytest.mark.parametrize("k", [2, 4])
def test_block_thomas_chunked_cupy(k):
    cupy = cupy_or_skip()
    A, B, C, d = blocks(1, 5003, k)
    x = solvers.block_thomas_batch(*(cupy.asarray(v) for v in (A, B, C, d)), variant="chunked")
    assert isinstance(x, cupy.ndarray) and x.shape == d.shape
    assert rel_err(cupy.asnumpy(x), block_reference(A, B, C, d)) <= TOL


# --- the bridge across devices -------------------------------------------------------------------
def test_bridge_multi_without_gpu_raises():
    if solvers.gpu_available():
        pytest.skip("a GPU is present (the bridge runs: see the GPU tests)")
    with pytest.raises(cablesim.CablesimError, match="needs a GPU"):
        solvers.thomas_bridge_multi(np.ones(8), np.ones(8) * 3, np.ones(8), np.ones(8))


@pytest.mark.parametrize("sync", ["host", "device"])
def test_bridge_multi_matches_solve_banded(sync):
    """Uneven partitions on GPU 0 repeated, and round-robin over every GPU (one GPU: the same)."""
    if not solvers.gpu_available():
        pytest.skip("the library has no CUDA or there is no GPU")
    a, b, c, d = (v[0] for v in tridiagonal(1, 50000))
    ref = tri_reference(a, b, c, d)
    x = solvers.thomas_bridge_multi(a, b, c, d, devices=[0, 0, 0], rows=[17, 30000, 19983], sync=sync)
    assert rel_err(x, ref) <= TOL
    x = solvers.thomas_bridge_multi(a, b, c, d, rows=[1025, 24000, 24975], sync=sync)  # p mod count
    assert rel_err(x, ref) <= TOL
    x = solvers.thomas_bridge_multi(*(v.astype(np.float32) for v in (a, b, c, d)), sync=sync)  # every GPU
    assert x.dtype == np.float32
    assert rel_err(x.astype(np.float64), tri_reference(*(v.astype(np.float32).astype(np.float64)
                                                         for v in (a, b, c, d)))) <= 1e-5
    a[12345] = b[12345] = c[12345] = 0.0
    with pytest.raises(cablesim.CablesimError, match="singular|not finite"):
        solvers.thomas_bridge_multi(a, b, c, d, devices=[0, 0], sync=sync)
    with pytest.raises(cablesim.CablesimError, match="cannot be split"):
        solvers.thomas_bridge_multi(a, b, c, d, devices=[0, 0], rows=[1, 49999], sync=sync)
