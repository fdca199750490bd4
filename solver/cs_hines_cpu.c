/* CPU batched Hines (tree) solvers: serial reference and OpenMP across systems.
 *
 * The matrix of system s (rows offset[s] .. offset[s+1]-1, see cs_solver.h) is symmetric with
 * diagonal d and off-diagonal u[i] in rows/columns (i, p[i]). Hines' algorithm is Gaussian
 * elimination in reverse row order, which on a tree (p[i] < i) creates no fill-in:
 *
 *   backward: for i = last .. first+1:   f = u[i]/d[i];  d[p] -= f·u[i];  rhs[p] -= f·rhs[i]
 *   root:     rhs[first] /= d[first]
 *   forward:  for i = first+1 .. last:   rhs[i] = (rhs[i] - u[i]·rhs[p[i]]) / d[i]
 *
 * Argument checks (all return CS_SOLVER_ERR_INVALID):
 *   - nsys < 0; a NULL array when nsys > 0 (nsys == 0 is a no-op and touches nothing);
 *   - offset[0] < 0 or offsets not strictly increasing (every system has >= 1 row);
 *   - p[first row] != -1;                       these three are O(nsys), before any work;
 *   - a parent outside [first, i-1] for row i.  This one is O(rows), fused into the solve: a
 *     branch-free, vectorised pass over the system's p just before its sweeps (which then find
 *     p in L1), so it costs next to nothing and it keeps a malformed p from writing out of
 *     bounds. Systems before the offending one are already solved when INVALID is returned
 *     (by the OpenMP version possibly others too); the offending system and its rhs/d are
 *     untouched.
 *
 * Singularity: a zero pivot d'[i] makes that row's solution ±inf or NaN (x/0 for any x), so
 * rather than a branch per row the forward sweep accumulates acc += x·0.0 (exactly 0 for finite
 * x, NaN for inf/NaN) and one isfinite(acc) at the end reports CS_SOLVER_ERR_SINGULAR. Every
 * system is still processed; the ones with a zero pivot (or with inf/NaN input, or overflow,
 * which are reported the same way) hold inf/NaN in rhs. d always holds the eliminated diagonal.
 *
 * The OpenMP version gives results bit-identical to the serial one: both run the same
 * per-system routine (cs__hines_systems), a system is never split across threads, and nothing
 * is reduced across systems except the error flags. */
#include <math.h>
#include <stddef.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cs_solver.h"

/* Batches with fewer rows than this run on the calling thread: opening a parallel region
 * costs a few µs, about the time to solve ~1000 rows. Results do not depend on it. */
#define CS__HINES_OMP_MIN_ROWS 2048

/* O(nsys) checks, done before any system is touched. */
static cs_solver_status cs__hines_check(int nsys, const int *offset, const int *p, const double *d,
                                        const double *u, const double *rhs)
{
    if (nsys < 0) return CS_SOLVER_ERR_INVALID;
    if (nsys == 0) return CS_SOLVER_OK;
    if (!offset || !p || !d || !u || !rhs) return CS_SOLVER_ERR_INVALID;
    if (offset[0] < 0) return CS_SOLVER_ERR_INVALID;
    for (int s = 0; s < nsys; ++s) {
        if (offset[s + 1] <= offset[s]) return CS_SOLVER_ERR_INVALID;
        if (p[offset[s]] != -1) return CS_SOLVER_ERR_INVALID;
    }
    return CS_SOLVER_OK;
}

/* Solve systems s0 .. s1-1. Returns OK, INVALID (a parent out of range: that system and the
 * following ones of the range are left untouched) or SINGULAR (a non-finite solution). */
static cs_solver_status cs__hines_systems(int s0, int s1, const int *restrict offset,
                                          const int *restrict p, double *restrict d,
                                          const double *restrict u, double *restrict rhs)
{
    double acc = 0.0; /* Σ x·0.0: 0 while every solution is finite */
    for (int s = s0; s < s1; ++s) {
        const int first = offset[s];
        const int end = offset[s + 1];

        /* p[i] in [first, i-1] <=> (unsigned)(p[i]-first) < (unsigned)(i-first); no branch. */
        unsigned bad = 0;
        for (int i = first + 1; i < end; ++i)
            bad |= (unsigned)((unsigned)p[i] - (unsigned)first >= (unsigned)(i - first));
        if (bad) return CS_SOLVER_ERR_INVALID;

        for (int i = end - 1; i > first; --i) {
            const int pi = p[i];
            const double f = u[i] / d[i];
            d[pi] -= f * u[i];
            rhs[pi] -= f * rhs[i];
        }
        const double x0 = rhs[first] / d[first];
        rhs[first] = x0;
        acc += x0 * 0.0;
        for (int i = first + 1; i < end; ++i) {
            const double x = (rhs[i] - u[i] * rhs[p[i]]) / d[i];
            rhs[i] = x;
            acc += x * 0.0;
        }
    }
    return isfinite(acc) ? CS_SOLVER_OK : CS_SOLVER_ERR_SINGULAR;
}

cs_solver_status cs_hines_solve_serial(int nsys, const int *offset, const int *p, double *d,
                                       const double *u, double *rhs)
{
    cs_solver_status st = cs__hines_check(nsys, offset, p, d, u, rhs);
    if (st != CS_SOLVER_OK || nsys == 0) return st;
    return cs__hines_systems(0, nsys, offset, p, d, u, rhs);
}

/* Smallest s in [0, nsys] with offset[s] >= row (offset is strictly increasing). */
static int cs__first_system_at(const int *offset, int nsys, long long row)
{
    int lo = 0, hi = nsys;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (offset[mid] < row) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Schedule: static and balanced by rows, with nothing precomputed. Thread t of T takes the
 * systems whose first row lies in [row0 + t·N/T, row0 + (t+1)·N/T) (N rows in all), found by
 * two binary searches in offset. Each system goes to exactly one thread, threads get equal row
 * counts to within one system, and for a batch of equal cells this is schedule(static). */
cs_solver_status cs_hines_solve_omp(int nsys, const int *offset, const int *p, double *d,
                                    const double *u, double *rhs)
{
    cs_solver_status st = cs__hines_check(nsys, offset, p, d, u, rhs);
    if (st != CS_SOLVER_OK || nsys == 0) return st;

    const long long row0 = offset[0];
    const long long nrows = (long long)offset[nsys] - row0;
    int flags = 0; /* 1: some system INVALID, 2: some system SINGULAR */
#ifdef _OPENMP
#pragma omp parallel if (nrows >= CS__HINES_OMP_MIN_ROWS) reduction(| : flags)
    {
        const long long nt = omp_get_num_threads();
        const long long t = omp_get_thread_num();
#else
    {
        const long long nt = 1, t = 0;
#endif
        const int s0 = cs__first_system_at(offset, nsys, row0 + nrows * t / nt);
        const int s1 = cs__first_system_at(offset, nsys, row0 + nrows * (t + 1) / nt);
        if (s0 < s1) {
            const cs_solver_status ts = cs__hines_systems(s0, s1, offset, p, d, u, rhs);
            flags |= ts == CS_SOLVER_ERR_INVALID ? 1 : ts == CS_SOLVER_ERR_SINGULAR ? 2 : 0;
        }
    }
    if (flags & 1) return CS_SOLVER_ERR_INVALID;
    if (flags & 2) return CS_SOLVER_ERR_SINGULAR;
    return CS_SOLVER_OK;
}
