/* CPU batched Thomas (tridiagonal) solvers on the Flat layout: serial reference and OpenMP.
 *
 * System s of size n occupies rows s·n .. s·n+n-1 of a, b, c, d (cs_solver.h):
 *     a[i]·x[i-1] + b[i]·x[i] + c[i]·x[i+1] = d[i]     (a[0] and c[n-1] are never read)
 * Classic Thomas (LU without pivoting):
 *     c'[0] = c[0]/b[0],  d'[0] = d[0]/b[0]
 *     m = b[i] - a[i]·c'[i-1];  c'[i] = c[i]/m;  d'[i] = (d[i] - a[i]·d'[i-1])/m
 *     x[n-1] = d'[n-1];  x[i] = d'[i] - c'[i]·x[i+1]
 * Two divisions by m rather than one reciprocal and two products: the divisions are
 * independent, so the loop-carried latency stays one multiply-subtract + one division (not
 * + one multiplication more), and each result is rounded once less.
 *
 * Overwritten: d (the solution), c[0 .. n-2] of each system (c'). The header allows b to be
 * used as workspace; this implementation leaves b (and a, c[n-1]) untouched, but callers must
 * not rely on that.
 *
 * Checks: nsys < 0 or n < 1, or a NULL array when nsys > 0, give CS_SOLVER_ERR_INVALID before
 * any work (nsys == 0 touches nothing).
 *
 * Singularity (CS_SOLVER_ERR_SINGULAR, "a zero pivot" m = 0), with no per-row test: a zero
 * pivot at row i < n-1 makes c'[i] and d'[i] ±inf or NaN, so m[i+1] is ±inf or NaN and
 * d'[i+1] = (non-finite)/(non-finite) = NaN, and NaN then stays in every later d' (a·NaN is NaN
 * even for a = 0), hence in x[n-1]; a zero pivot at row n-1 makes x[n-1] = (..)/0 non-finite.
 * In the back substitution c'[i]·(±inf or NaN) is ±inf or NaN (0·inf = NaN), so x[0] is
 * non-finite too. The solver therefore accumulates acc += x[0]·0.0 per system (0 when finite,
 * NaN otherwise) and tests isfinite(acc) once at the end. All systems are still solved.
 * inf/NaN in the input, or overflow, usually show up the same way but are not guaranteed to.
 *
 * The OpenMP version runs the same per-system routine with schedule(static) over systems
 * (all systems have n rows, so this is balanced), so it is bit-identical to the serial one. */
#include <math.h>
#include <stddef.h>

#include "cs_solver.h"

/* Batches with fewer rows than this run on the calling thread (parallel region overhead). */
#define CS__THOMAS_OMP_MIN_ROWS 2048

static cs_solver_status cs__thomas_check(int nsys, int n, const double *a, const double *b,
                                         const double *c, const double *d)
{
    if (nsys < 0 || n < 1) return CS_SOLVER_ERR_INVALID;
    if (nsys == 0) return CS_SOLVER_OK;
    if (!a || !b || !c || !d) return CS_SOLVER_ERR_INVALID;
    return CS_SOLVER_OK;
}

/* Solve one system (pointers at its first row); returns x[0]·0.0 (0, or NaN after a zero
 * pivot). */
static double cs__thomas_one(int n, const double *restrict a, const double *restrict b,
                             double *restrict c, double *restrict d)
{
    if (n == 1) {
        const double x = d[0] / b[0];
        d[0] = x;
        return x * 0.0;
    }
    double cp = c[0] / b[0];
    double dp = d[0] / b[0];
    c[0] = cp;
    d[0] = dp;
    for (int i = 1; i < n - 1; ++i) {
        const double m = b[i] - a[i] * cp;
        cp = c[i] / m;
        dp = (d[i] - a[i] * dp) / m;
        c[i] = cp;
        d[i] = dp;
    }
    double x = (d[n - 1] - a[n - 1] * dp) / (b[n - 1] - a[n - 1] * cp);
    d[n - 1] = x;
    for (int i = n - 2; i >= 0; --i) {
        x = d[i] - c[i] * x;
        d[i] = x;
    }
    return x * 0.0;
}

cs_solver_status cs_thomas_solve_serial(int nsys, int n, const double *a, double *b, double *c,
                                        double *d)
{
    cs_solver_status st = cs__thomas_check(nsys, n, a, b, c, d);
    if (st != CS_SOLVER_OK || nsys == 0) return st;
    double acc = 0.0;
    for (ptrdiff_t s = 0; s < nsys; ++s) {
        const ptrdiff_t o = s * n;
        acc += cs__thomas_one(n, a + o, b + o, c + o, d + o);
    }
    return isfinite(acc) ? CS_SOLVER_OK : CS_SOLVER_ERR_SINGULAR;
}

cs_solver_status cs_thomas_solve_omp(int nsys, int n, const double *a, double *b, double *c,
                                     double *d)
{
    cs_solver_status st = cs__thomas_check(nsys, n, a, b, c, d);
    if (st != CS_SOLVER_OK || nsys == 0) return st;
    const ptrdiff_t nrows = (ptrdiff_t)nsys * n;
    int singular = 0;
#pragma omp parallel for schedule(static) if (nrows >= CS__THOMAS_OMP_MIN_ROWS) \
    reduction(| : singular)
    for (ptrdiff_t s = 0; s < nsys; ++s) {
        const ptrdiff_t o = s * n;
        singular |= !isfinite(cs__thomas_one(n, a + o, b + o, c + o, d + o));
    }
    return singular ? CS_SOLVER_ERR_SINGULAR : CS_SOLVER_OK;
}
