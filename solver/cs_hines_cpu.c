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
 * On return rhs holds the solution and d the eliminated diagonal (the pivots).
 *
 * Argument checks (CS_SOLVER_ERR_INVALID, returned before any system is touched):
 *   - nsys < 0; a NULL array when nsys > 0 (nsys == 0 is a no-op and reads nothing);
 *   - offset[0] < 0 or offsets not strictly increasing (every system has >= 1 row);
 *   - p[first row] != -1.                                    These are O(nsys).
 *   - Debug only: a parent outside [first, i-1] for row i. This is O(rows), and even fused
 *     into the solve it cost 4-9% of the solve time (measured on a Xeon, 1000 systems of 200
 *     rows), so it is compiled in only when CS_SOLVER_CHECK_PARENTS is nonzero, which by
 *     default it is in unoptimised builds (no __OPTIMIZE__, i.e. CMake Debug). Without it a
 *     malformed p makes the solve read and write out of bounds.
 *
 * Singularity (CS_SOLVER_ERR_SINGULAR), with no per-row test: a zero pivot at row i makes
 * f = u[i]/0 = ±inf (NaN when u[i] = 0), so rhs[p(i)] becomes ±inf or NaN; one level up
 * f' = u[p]/d[p] is ±0 or NaN (d[p] is now ±inf or NaN) and f'·rhs[p] = NaN, and NaN then
 * travels through every ancestor's rhs to the root (a non-finite value never becomes finite
 * again in these updates). A zero pivot at the root gives rhs[root]/0 directly. So every zero
 * pivot in a system makes its root solution x[first] non-finite (and, through the forward
 * sweep, every row's), and the solver only accumulates acc += x[first]·0.0 per system (0 when
 * finite, NaN otherwise) and tests isfinite(acc) once at the end. Measured alternatives: the
 * same accumulation per row cost 0.4-5%, a separate pass over each system's rhs 2-30%.
 * Every system is still processed. inf/NaN in the input, or overflow, usually show up the same
 * way but are not guaranteed to be reported.
 *
 * The OpenMP version gives results bit-identical to the serial one: both run the same
 * per-system routine (cs__hines_systems), a system is never split across threads, and nothing
 * is reduced across systems except the error flag. */
#include <math.h>
#include <stddef.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cs_solver.h"

#ifndef CS_SOLVER_CHECK_PARENTS
#ifdef __OPTIMIZE__
#define CS_SOLVER_CHECK_PARENTS 0
#else
#define CS_SOLVER_CHECK_PARENTS 1
#endif
#endif

/* Batches with fewer rows than this run on the calling thread: opening a parallel region
 * costs a few µs, about the time to solve ~1000 rows. Results do not depend on it. */
#define CS__HINES_OMP_MIN_ROWS 2048

/* Checks done before any system is touched: O(nsys), plus O(rows) for the parents when
 * CS_SOLVER_CHECK_PARENTS. */
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
#if CS_SOLVER_CHECK_PARENTS
    for (int s = 0; s < nsys; ++s) {
        const int first = offset[s];
        for (int i = first + 1; i < offset[s + 1]; ++i)
            if (p[i] < first || p[i] >= i) return CS_SOLVER_ERR_INVALID;
    }
#endif
    return CS_SOLVER_OK;
}

/* Solve systems s0 .. s1-1. Returns nonzero when some system had a zero pivot (a non-finite
 * root solution, see the top of the file). */
static int cs__hines_systems(int s0, int s1, const int *restrict offset, const int *restrict p,
                             double *restrict d, const double *restrict u, double *restrict rhs)
{
    double acc = 0.0; /* Σ x[root]·0.0: 0 while every root solution is finite */
    for (int s = s0; s < s1; ++s) {
        const int first = offset[s];
        const int end = offset[s + 1];
        for (int i = end - 1; i > first; --i) {
            const int pi = p[i];
            const double f = u[i] / d[i];
            d[pi] -= f * u[i];
            rhs[pi] -= f * rhs[i];
        }
        const double x0 = rhs[first] / d[first];
        rhs[first] = x0;
        acc += x0 * 0.0;
        for (int i = first + 1; i < end; ++i) rhs[i] = (rhs[i] - u[i] * rhs[p[i]]) / d[i];
    }
    return !isfinite(acc);
}

cs_solver_status cs_hines_solve_serial(int nsys, const int *offset, const int *p, double *d,
                                       const double *u, double *rhs)
{
    const cs_solver_status st = cs__hines_check(nsys, offset, p, d, u, rhs);
    if (st != CS_SOLVER_OK || nsys == 0) return st;
    return cs__hines_systems(0, nsys, offset, p, d, u, rhs) ? CS_SOLVER_ERR_SINGULAR
                                                              : CS_SOLVER_OK;
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
    const cs_solver_status st = cs__hines_check(nsys, offset, p, d, u, rhs);
    if (st != CS_SOLVER_OK || nsys == 0) return st;

    const long long row0 = offset[0];
    const long long nrows = (long long)offset[nsys] - row0;
    int singular = 0;
#ifdef _OPENMP
#pragma omp parallel if (nrows >= CS__HINES_OMP_MIN_ROWS) reduction(| : singular)
    {
        const long long nt = omp_get_num_threads();
        const long long t = omp_get_thread_num();
#else
    {
        const long long nt = 1, t = 0;
#endif
        const int s0 = cs__first_system_at(offset, nsys, row0 + nrows * t / nt);
        const int s1 = cs__first_system_at(offset, nsys, row0 + nrows * (t + 1) / nt);
        if (s0 < s1) singular |= cs__hines_systems(s0, s1, offset, p, d, u, rhs);
    }
    return singular ? CS_SOLVER_ERR_SINGULAR : CS_SOLVER_OK;
}
