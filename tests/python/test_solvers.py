"""cablesim.solvers against NumPy/SciPy references: Thomas against scipy.linalg.solve_banded,
Hines against a dense solve of the same tree matrix. The CuPy paths run only with CuPy and a
GPU, and are reported as skipped otherwise."""
import numpy as np
import pytest
from scipy.linalg import solve_banded

import cablesim
from cablesim import solvers

RNG = np.random.default_rng(21)


def tridiagonal(nsys, n):
    a = RNG.uniform(-1, 0, (nsys, n))
    c = RNG.uniform(-1, 0, (nsys, n))
    b = 2.5 + RNG.uniform(0, 1, (nsys, n))  # diagonally dominant, as the cable equation's
    d = RNG.normal(size=(nsys, n))
    return a, b, c, d


def thomas_reference(a, b, c, d):
    x = np.empty_like(d)
    for s in range(d.shape[0]):
        ab = np.zeros((3, d.shape[1]))
        ab[0, 1:] = c[s, :-1]
        ab[1] = b[s]
        ab[2, :-1] = a[s, 1:]
        x[s] = solve_banded((1, 1), ab, d[s])
    return x


def random_tree(n):
    """Parents of a random tree in Hines order (parent before child)."""
    return np.array([-1] + [int(RNG.integers(0, r)) for r in range(1, n)])


def hines_dense(d, u, rhs, p):
    n = len(d)
    A = np.diag(d)
    for r in range(n):
        if p[r] >= 0:
            A[r, p[r]] = u[r]
            A[p[r], r] = u[r]
    return np.linalg.solve(A, rhs)


def test_thomas_batch_matches_solve_banded():
    a, b, c, d = tridiagonal(40, 33)
    keep = [x.copy() for x in (a, b, c, d)]
    x = solvers.thomas_batch(a, b, c, d)
    ref = thomas_reference(a, b, c, d)
    np.testing.assert_allclose(x, ref, rtol=1e-12, atol=1e-13)
    for k, v in zip(keep, (a, b, c, d)):  # the inputs are left alone
        assert np.array_equal(k, v)


def test_thomas_one_system_and_lists():
    a, b, c, d = tridiagonal(1, 7)
    x = solvers.thomas_batch(a[0].tolist(), b[0], c[0], d[0])
    assert x.shape == (7,)
    np.testing.assert_allclose(x, thomas_reference(a, b, c, d)[0], rtol=1e-12, atol=1e-13)


def test_hines_batch_matches_dense_solve():
    sizes = [1, 2, 9, 31, 64]
    ps, ds, us, rs = [], [], [], []
    first = 0
    for n in sizes:
        p = random_tree(n)
        u = RNG.uniform(-1, -0.1, n)
        deg = np.zeros(n)
        for r in range(1, n):
            deg[r] += abs(u[r])
            deg[p[r]] += abs(u[r])
        ds.append(deg + 1 + RNG.uniform(0, 1, n))
        us.append(u)
        rs.append(RNG.normal(size=n))
        ps.append(np.where(p < 0, -1, p + first))
        first += n
    d, u, rhs, p = (np.concatenate(x) for x in (ds, us, rs, ps))
    x = solvers.hines_batch(d, u, rhs, p)
    off = np.cumsum([0] + sizes)
    for s, n in enumerate(sizes):
        sl = slice(off[s], off[s + 1])
        ref = hines_dense(ds[s], us[s], rs[s], ps[s] - np.where(ps[s] < 0, 0, off[s]))
        np.testing.assert_allclose(x[sl], ref, rtol=1e-11, atol=1e-12)


def test_hines_batch_same_structure_2d():
    n, nsys = 20, 16
    p = random_tree(n)
    u = RNG.uniform(-1, -0.1, (nsys, n))
    d = 2 * n + RNG.uniform(0, 1, (nsys, n))
    rhs = RNG.normal(size=(nsys, n))
    x = solvers.hines_batch(d, u, rhs, p)
    assert x.shape == (nsys, n)
    for s in range(nsys):
        np.testing.assert_allclose(x[s], hines_dense(d[s], u[s], rhs[s], p), rtol=1e-11, atol=1e-12)


def test_bad_solver_input_raises():
    with pytest.raises(cablesim.CablesimError, match="differ in shape"):
        solvers.thomas_batch(np.ones(3), np.ones(3), np.ones(3), np.ones(4))
    with pytest.raises(cablesim.CablesimError, match="parent"):
        solvers.hines_batch(np.ones(3), np.ones(3), np.ones(3), [0, 0, 1])  # no root
    with pytest.raises(cablesim.CablesimError, match="not a tree in Hines order"):
        solvers.hines_batch(np.ones(3), np.ones(3), np.ones(3), [-1, 2, 0])  # a parent after its child
    with pytest.raises(cablesim.CablesimError, match="out of range"):
        solvers.hines_batch(np.ones(3), np.ones(3), np.ones(3), [-1, 0, 7])


def cupy_or_skip():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    if not solvers.gpu_available():
        pytest.skip("the library has no CUDA or there is no GPU")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy sees no GPU")
    except Exception as e:  # no driver
        pytest.skip(f"CuPy sees no GPU: {e}")
    return cupy


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-11), (np.float32, 1e-4)])
def test_thomas_batch_cupy(dtype, rtol):
    cupy = cupy_or_skip()
    a, b, c, d = tridiagonal(300, 50)
    x = solvers.thomas_batch(*(cupy.asarray(v, dtype=dtype) for v in (a, b, c, d)))
    assert isinstance(x, cupy.ndarray) and x.dtype == dtype
    np.testing.assert_allclose(cupy.asnumpy(x), thomas_reference(a, b, c, d), rtol=rtol, atol=rtol)


def test_hines_batch_cupy():
    cupy = cupy_or_skip()
    n, nsys = 40, 64
    p = random_tree(n)
    u = RNG.uniform(-1, -0.1, (nsys, n))
    d = 2 * n + RNG.uniform(0, 1, (nsys, n))
    rhs = RNG.normal(size=(nsys, n))
    x = solvers.hines_batch(cupy.asarray(d), cupy.asarray(u), cupy.asarray(rhs), p)
    assert isinstance(x, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(x), solvers.hines_batch(d, u, rhs, p), rtol=1e-11, atol=1e-12)
