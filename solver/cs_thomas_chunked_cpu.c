/* CPU chunked hybrid for one large tridiagonal system, or a few (cs_thomas_solve_chunked_omp in
 * cs_solver.h): the reference of the GPU "chunked" variant, and the OpenMP solve of a system
 * too large for one thread.
 *
 * The batch (nsys systems of n rows, Flat) is one system of N = nsys·n rows whose couplings
 * across system boundaries are taken as zero (a[s·n] and c[s·n+n-1] are never read). It is cut
 * into P chunks of K rows (the last one holds the remaining K..2K-1 rows), one per OpenMP
 * iteration:
 *   1. each chunk eliminates its rows downwards (row j in terms of x_0 and x_{j+1}) and upwards
 *      (rows 1..m-2 in terms of x_0 and x_{m-1}); its first and last rows become
 *        F row:  a0·L(previous chunk) + F + c0·L = d0
 *        L row:  aL·F + L + cL·F(next chunk)      = dL
 *   2. the 2P rows (F_0, L_0, F_1, L_1, ...) form a tridiagonal system (the Schur complement of
 *      the interiors: diagonally dominant when the input is), solved by serial Thomas;
 *   3. each chunk's rows: x_j = d_j - α_j·F - γ_j·L.
 * Storage: b holds α_j (coefficient on F), c holds γ_j (on x_{j+1}, then on L), d holds δ_j and
 * then the solution; so b and c are overwritten, as cs_solver.h allows.
 * The chunk size is fixed by N (not by the thread count), so the result does not depend on
 * OMP_NUM_THREADS.
 *
 * Singularity: every x is accumulated as x·0.0 (0 when finite, NaN otherwise; see
 * cs_thomas_cpu.c); a non-finite sum gives CS_SOLVER_ERR_SINGULAR, all rows still written. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "cs_solver.h"

/* Automatic chunk: at least this many rows, and at most this many chunks. */
#define CS__CHUNK_MIN_ROWS 256
#define CS__CHUNK_MAX_CHUNKS 4096

/* One chunk: rows [s, s+m) of a system of N rows made of systems of n rows; m >= 2.
 * Writes its F and L rows to r{a,b,c,d}[0..1]. */
static void cs__chunk_reduce(ptrdiff_t s, ptrdiff_t m, ptrdiff_t n, const double *restrict a,
                             double *restrict b, double *restrict c, double *restrict d,
                             double *ra, double *rc, double *rd)
{
    ptrdiff_t p = s % n; /* row's position in its system */
    const double a0 = (p == 0) ? 0.0 : a[s];
    const double b0 = b[s], c0 = (p == n - 1) ? 0.0 : c[s], d0 = d[s];
    /* downwards from the identity x_0 = x_0 (α = -1, γ = 0, δ = 0) */
    double al = -1.0, ga = 0.0, de = 0.0;
    for (ptrdiff_t j = 1; j < m; ++j) {
        const ptrdiff_t g = s + j;
        if (++p == n) p = 0;
        const double aj = (p == 0) ? 0.0 : a[g];
        const double cj = (p == n - 1) ? 0.0 : c[g];
        const double piv = b[g] - aj * ga;
        al = -aj * al / piv;
        ga = cj / piv;
        de = (d[g] - aj * de) / piv;
        b[g] = al, c[g] = ga, d[g] = de;
    }
    ra[1] = al, rc[1] = ga, rd[1] = de; /* L row */
    /* upwards: rows m-3..1 in terms of x_0 and x_{m-1} (row m-2 already is) */
    for (ptrdiff_t g = s + m - 3; g > s; --g) {
        d[g] -= c[g] * d[g + 1];
        b[g] -= c[g] * b[g + 1];
        c[g] = -c[g] * c[g + 1];
    }
    /* row 0 with x_1 = δ_1 - α_1·x_0 - γ_1·x_{m-1} (x_1 = x_{m-1} when m = 2) */
    const double al1 = (m > 2) ? b[s + 1] : 0.0, ga1 = (m > 2) ? c[s + 1] : -1.0;
    const double de1 = (m > 2) ? d[s + 1] : 0.0;
    const double piv = b0 - c0 * al1;
    ra[0] = a0 / piv, rc[0] = -c0 * ga1 / piv, rd[0] = (d0 - c0 * de1) / piv; /* F row */
}

/* Rows of the chunk from its ends F and L; returns Σ x·0.0. */
static double cs__chunk_subst(ptrdiff_t s, ptrdiff_t m, const double *restrict b,
                              const double *restrict c, double *restrict d, double F, double L)
{
    double acc = F * 0.0 + L * 0.0;
    for (ptrdiff_t g = s + 1; g < s + m - 1; ++g) {
        const double x = d[g] - b[g] * F - c[g] * L;
        d[g] = x;
        acc += x * 0.0;
    }
    d[s] = F;
    d[s + m - 1] = L;
    return acc;
}

cs_solver_status cs_thomas_solve_chunked_omp(int nsys, int n, int chunk, const double *a,
                                             double *b, double *c, double *d)
{
    if (nsys < 0 || n < 1 || chunk < 0 || chunk == 1) return CS_SOLVER_ERR_INVALID;
    if (nsys == 0) return CS_SOLVER_OK;
    if (!a || !b || !c || !d) return CS_SOLVER_ERR_INVALID;
    const ptrdiff_t N = (ptrdiff_t)nsys * n;
    if (N == 1) {
        d[0] /= b[0];
        return isfinite(d[0]) ? CS_SOLVER_OK : CS_SOLVER_ERR_SINGULAR;
    }
    ptrdiff_t K = chunk;
    if (K == 0) {
        K = (N + CS__CHUNK_MAX_CHUNKS - 1) / CS__CHUNK_MAX_CHUNKS;
        if (K < CS__CHUNK_MIN_ROWS) K = CS__CHUNK_MIN_ROWS;
    }
    ptrdiff_t P = N / K;
    if (P < 1) P = 1;
    const ptrdiff_t R = 2 * P;
    if (R > 0x7fffffff) return CS_SOLVER_ERR_INVALID; /* chunks too small for N */
    double *red = malloc((size_t)(4 * R) * sizeof *red);
    if (!red) return CS_SOLVER_ERR_NOMEM;
    double *ra = red, *rb = red + R, *rc = red + 2 * R, *rd = red + 3 * R;

#pragma omp parallel for schedule(static) if (P > 1)
    for (ptrdiff_t q = 0; q < P; ++q) {
        const ptrdiff_t s = q * K, m = (q == P - 1) ? N - s : K;
        cs__chunk_reduce(s, m, n, a, b, c, d, ra + 2 * q, rc + 2 * q, rd + 2 * q);
        rb[2 * q] = 1.0, rb[2 * q + 1] = 1.0;
    }
    cs_solver_status st = cs_thomas_solve_serial(1, (int)R, ra, rb, rc, rd);
    double acc = 0.0;
#pragma omp parallel for schedule(static) if (P > 1) reduction(+ : acc)
    for (ptrdiff_t q = 0; q < P; ++q) {
        const ptrdiff_t s = q * K, m = (q == P - 1) ? N - s : K;
        acc += cs__chunk_subst(s, m, b, c, d, rd[2 * q], rd[2 * q + 1]);
    }
    free(red);
    if (st == CS_SOLVER_OK && !isfinite(acc)) st = CS_SOLVER_ERR_SINGULAR;
    return st;
}
