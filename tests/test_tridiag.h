/* Shared by the large-system tridiagonal tests: random diagonally dominant batches, the serial
 * Thomas reference, the relative error. One copy per test program (static functions).
 *
 * Systems: off-diagonals uniform in [-1, 1], |b| = |a| + |c| + [0.5, 1.5) with a random sign, d
 * in [-1, 1]; a[0] and c[n-1] of every system hold 7 and -7 (never read: a solver that read them
 * fails). Error: max|x - x_ref| / max|x_ref| (NaN counts as +inf). */
#ifndef CS_TEST_TRIDIAG_H
#define CS_TEST_TRIDIAG_H

#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cs_solver.h"
#include "test_rng.h"

static inline double *td_alloc(size_t n)
{
    double *p = malloc((n ? n : 1) * sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}

static inline void td_gen(int nsys, int n, double *a, double *b, double *c, double *d)
{
    for (int s = 0; s < nsys; ++s)
        for (int i = 0; i < n; ++i) {
            const size_t k = (size_t)s * n + i;
            a[k] = 2.0 * urand() - 1.0;
            c[k] = 2.0 * urand() - 1.0;
            const double m = fabs(i > 0 ? a[k] : 0.0) + fabs(i < n - 1 ? c[k] : 0.0);
            b[k] = (m + 0.5 + urand()) * (urand() < 0.5 ? -1.0 : 1.0);
            d[k] = 2.0 * urand() - 1.0;
            if (i == 0) a[k] = 7.0;
            if (i == n - 1) c[k] = -7.0;
        }
}

/* Near-singular: as td_gen, then |b| = |a| + |c| + margin·[0, 1) (weakly diagonally dominant, as
 * the cable equation is at zero-area nodes): the condition number grows like 1/margin. */
static inline void td_gen_weak(int nsys, int n, double margin, double *a, double *b, double *c,
                               double *d)
{
    td_gen(nsys, n, a, b, c, d);
    for (int s = 0; s < nsys; ++s)
        for (int i = 0; i < n; ++i) {
            const size_t k = (size_t)s * n + i;
            const double m = fabs(i > 0 ? a[k] : 0.0) + fabs(i < n - 1 ? c[k] : 0.0);
            b[k] = (m + margin * urand()) * (b[k] < 0.0 ? -1.0 : 1.0);
        }
}

/* x = the serial Thomas solution; a, b, c, d untouched. */
static inline void td_reference(int nsys, int n, const double *a, const double *b, const double *c,
                         const double *d, double *x)
{
    const size_t N = (size_t)nsys * n;
    double *bb = td_alloc(N), *cc = td_alloc(N);
    memcpy(bb, b, N * sizeof *bb);
    memcpy(cc, c, N * sizeof *cc);
    memcpy(x, d, N * sizeof *x);
    ck_assert_int_eq(cs_thomas_solve_serial(nsys, n, a, bb, cc, x), CS_SOLVER_OK);
    free(bb);
    free(cc);
}

static inline double td_rel_err(size_t N, const double *x, const double *ref)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < N; ++i) {
        const double e = fabs(x[i] - ref[i]);
        if (!(e <= num)) num = isnan(e) ? INFINITY : e;
        if (fabs(ref[i]) > den) den = fabs(ref[i]);
    }
    return den > 0.0 ? num / den : num;
}

#endif
