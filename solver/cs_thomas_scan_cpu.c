/* CPU tridiagonal solve as scans (seed 002, the PMPH `tridag` project), OpenMP: the reference
 * of the GPU "scan" variant (cs_thomas_scan_gpu.cu), and a second way to spread one large system
 * over all cores (cs_thomas_solve_scan_omp in cs_solver.h).
 *
 * Thomas' three recurrences are each an inclusive scan with an associative operator:
 *   pivots        m_0 = b_0, m_i = b_i - a_i·c_{i-1}/m_{i-1}. With m_i = q_{i+1}/q_i:
 *                   [q_{i+1}; q_i] = S_i·[q_i; q_{i-1}],  S_i = [[b_i, -a_i·c_{i-1}], [1, 0]]
 *                 so [q_{i+1}; q_i] = (S_i···S_1·S_0)·[1; 0] with S_0 = [[b_0, 0], [1, 0]]: a scan
 *                 of 2×2 matrix products. Only the ratio matters, so every product is scaled by
 *                 a power of two (exact) to keep it in range.
 *   forward       y_i = (d_i - a_i·y_{i-1})/m_i: the affine map y -> α_i·y + β_i with
 *                 α_i = -a_i/m_i, β_i = d_i/m_i; a scan of compositions, y_i = (f_i∘...∘f_0)(0).
 *   backward      x_i = y_i - (c_i/m_i)·x_{i+1}: the same, from the last row up.
 * A batch (nsys systems of n rows) is one system of nsys·n rows: a = 0 at each system's first
 * row makes S_i of rank one, which restarts the pivots, and α_i = 0, which restarts the forward
 * scan; c = 0 at each last row restarts the backward scan.
 *
 * On the CPU each scan is reduce-then-scan over one block of rows per thread: (1) each block's
 * composite (a matrix product or an affine composition), (2) the blocks' prefixes, serially,
 * (3) each block's rows from its prefix by the plain recurrence, which is the scan's result
 * applied row by row. So the rounding differs from Thomas only through the block prefixes.
 *
 * Storage: b holds the pivots m, d the forward values y and then the solution; a and c are
 * read only. Singular: a non-finite result gives CS_SOLVER_ERR_SINGULAR (see cs_thomas_cpu.c). */
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdlib.h>

#include "cs_solver.h"

/* Rows per block below which one thread does everything. */
#define CS__SCAN_MIN_BLOCK 4096

typedef struct {
    double m00, m01, m10, m11;
} cs__mat2;
typedef struct {
    double al, be; /* y -> al·y + be */
} cs__aff;

/* r·l scaled by a power of two so that its largest entry is in [1, 2). */
static cs__mat2 cs__mat2_mul(cs__mat2 r, cs__mat2 l)
{
    cs__mat2 p = {r.m00 * l.m00 + r.m01 * l.m10, r.m00 * l.m01 + r.m01 * l.m11,
                  r.m10 * l.m00 + r.m11 * l.m10, r.m10 * l.m01 + r.m11 * l.m11};
    const double mx = fmax(fmax(fabs(p.m00), fabs(p.m01)), fmax(fabs(p.m10), fabs(p.m11)));
    if (mx > 0.0 && isfinite(mx)) {
        const int e = ilogb(mx);
        p.m00 = scalbn(p.m00, -e), p.m01 = scalbn(p.m01, -e);
        p.m10 = scalbn(p.m10, -e), p.m11 = scalbn(p.m11, -e);
    }
    return p;
}

/* r∘l */
static cs__aff cs__aff_compose(cs__aff r, cs__aff l)
{
    cs__aff f = {r.al * l.al, r.al * l.be + r.be};
    return f;
}

typedef struct {
    ptrdiff_t N, n;
    const double *a, *c;
    double *b, *d;
} cs__scan_sys;

static double cs__A(const cs__scan_sys *s, ptrdiff_t i) { return (i % s->n == 0) ? 0.0 : s->a[i]; }
static double cs__C(const cs__scan_sys *s, ptrdiff_t i)
{
    return (i % s->n == s->n - 1) ? 0.0 : s->c[i];
}
static cs__mat2 cs__S(const cs__scan_sys *s, ptrdiff_t i)
{
    const double ai = cs__A(s, i);
    cs__mat2 m = {s->b[i], ai != 0.0 ? -ai * cs__C(s, i - 1) : 0.0, 1.0, 0.0};
    return m;
}

cs_solver_status cs_thomas_solve_scan_omp(int nsys, int n, const double *a, double *b, double *c,
                                          double *d)
{
    if (nsys < 0 || n < 1) return CS_SOLVER_ERR_INVALID;
    if (nsys == 0) return CS_SOLVER_OK;
    if (!a || !b || !c || !d) return CS_SOLVER_ERR_INVALID;
    const cs__scan_sys sys = {(ptrdiff_t)nsys * n, n, a, c, b, d};
    const ptrdiff_t N = sys.N;
    int nb = omp_get_max_threads();
    if ((ptrdiff_t)nb * CS__SCAN_MIN_BLOCK > N) nb = (int)(N / CS__SCAN_MIN_BLOCK);
    if (nb < 1) nb = 1;
    cs__mat2 *pm = malloc((size_t)nb * sizeof *pm);
    cs__aff *pf = malloc((size_t)nb * sizeof *pf), *pg = malloc((size_t)nb * sizeof *pg);
    if (!pm || !pf || !pg) {
        free(pm), free(pf), free(pg);
        return CS_SOLVER_ERR_NOMEM;
    }
    double acc = 0.0;
#pragma omp parallel num_threads(nb) reduction(+ : acc)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const ptrdiff_t bs = (N + nt - 1) / nt;
        const ptrdiff_t lo = t * bs < N ? t * bs : N, hi = lo + bs < N ? lo + bs : N;
        /* ---- pivots: block products, prefixes, rows ---- */
        cs__mat2 p = {1.0, 0.0, 0.0, 1.0};
        for (ptrdiff_t i = lo; i < hi; ++i) p = cs__mat2_mul(cs__S(&sys, i), p);
        pm[t] = p;
#pragma omp barrier
#pragma omp single
        {
            cs__mat2 run = {1.0, 0.0, 0.0, 1.0};
            for (int k = 0; k < nt; ++k) {
                const cs__mat2 blk = pm[k];
                pm[k] = run; /* exclusive prefix: S_{lo-1}···S_0 */
                run = cs__mat2_mul(blk, run);
            }
        }
        /* m_{lo-1} = q_lo / q_{lo-1}: the first column of the prefix; the recurrence goes on */
        double mprev = (lo > 0) ? pm[t].m00 / pm[t].m10 : 1.0;
        for (ptrdiff_t i = lo; i < hi; ++i) {
            const double ai = cs__A(&sys, i);
            const double m = (ai != 0.0) ? b[i] - ai * cs__C(&sys, i - 1) / mprev : b[i];
            b[i] = m;
            mprev = m;
        }
#pragma omp barrier
        /* ---- forward: block compositions, prefixes, rows ---- */
        cs__aff f = {1.0, 0.0};
        for (ptrdiff_t i = lo; i < hi; ++i) {
            const cs__aff fi = {-cs__A(&sys, i) / b[i], d[i] / b[i]};
            f = cs__aff_compose(fi, f);
        }
        pf[t] = f;
#pragma omp barrier
#pragma omp single
        {
            cs__aff run = {1.0, 0.0};
            for (int k = 0; k < nt; ++k) {
                const cs__aff blk = pf[k];
                pf[k] = run;
                run = cs__aff_compose(blk, run);
            }
        }
        double y = pf[t].be; /* y_{lo-1} (0 before row 0) */
        for (ptrdiff_t i = lo; i < hi; ++i) {
            y = (d[i] - cs__A(&sys, i) * y) / b[i];
            d[i] = y;
        }
#pragma omp barrier
        /* ---- backward: the same from the last row up (block t covers [lo, hi) downwards) ---- */
        cs__aff g = {1.0, 0.0};
        for (ptrdiff_t i = hi - 1; i >= lo; --i) {
            const cs__aff gi = {-cs__C(&sys, i) / b[i], d[i]};
            g = cs__aff_compose(gi, g);
        }
        pg[t] = g;
#pragma omp barrier
#pragma omp single
        {
            cs__aff run = {1.0, 0.0};
            for (int k = nt - 1; k >= 0; --k) {
                const cs__aff blk = pg[k];
                pg[k] = run;
                run = cs__aff_compose(blk, run);
            }
        }
        double x = pg[t].be; /* x_hi (0 past the last row) */
        for (ptrdiff_t i = hi - 1; i >= lo; --i) {
            x = d[i] - cs__C(&sys, i) / b[i] * x;
            d[i] = x;
            acc += x * 0.0;
        }
    }
    free(pm), free(pf), free(pg);
    return isfinite(acc) ? CS_SOLVER_OK : CS_SOLVER_ERR_SINGULAR;
}
