/* Host emulation of the GPU warp-chunked hybrid (solver/cs_thomas_large_warp_gpu.cu, the
 * "chunked" variant of cs_thomas_gpu.h): the same levels, the same arithmetic in the same order
 * (solver/cs_tridiag_segment.h), lane by lane, so that the CPU tests check the GPU's algorithm
 * where there is no GPU. Not meant to be fast.
 *
 * A level of m rows (systems of n rows) is cut into warp chunks of 32·k rows; lane q of a warp
 * summarises its k rows (cs_seg_chunk), the warp combines its 32 summaries in a tree (levels
 * 1, 2, 4, 8, 16 apart) into the warp's F and L rows, rows 2w and 2w+1 of the next level. A level
 * of at most `base` rows is the GPU's one-block base kernel: the same reduction, its warps' rows
 * by PCR (on the GPU padded with zero rows to 16, which changes no bit), the same substitution.
 * The substitution recomputes each lane's chunk and tree, splits the tree down from the warp's
 * ends, and substitutes. A reduced level (not the first) of at most `pcr` rows is instead the
 * GPU's PCR base kernel: the whole level by PCR. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "cs_solver.h"
#include "cs_tridiag_segment.h"

#define CS__LANES 32
#define CS__TREE 5 /* log2(lanes) */
#define CS__MAX_K 64

/* Lane q's k rows of warp w into A..D (identity rows past m, couplings cut at multiples of n). */
static void cs__lane_rows(size_t m, size_t n, int k, size_t r0, const double *a, const double *b,
                          const double *c, const double *d, double *A, double *B, double *C,
                          double *D)
{
    for (int j = 0; j < k; ++j) {
        const size_t g = r0 + (size_t)j;
        if (g < m) {
            A[j] = (g % n == 0) ? 0.0 : a[g], B[j] = b[g];
            C[j] = (g % n == n - 1) ? 0.0 : c[g], D[j] = d[g];
        } else {
            A[j] = 0.0, B[j] = 1.0, C[j] = 0.0, D[j] = 0.0;
        }
    }
}

/* The warp tree over sums[0..31]: sums[0] becomes the warp's summary; nodes[l][q] for the lanes
 * q that combined at level l (q a multiple of 2^(l+1)). */
static void cs__warp_tree(cs_seg *sums, cs_seg_node nodes[CS__TREE][CS__LANES])
{
    for (int l = 0; l < CS__TREE; ++l) {
        const int w = 1 << l;
        for (int q = 0; q < CS__LANES; q += 2 * w) sums[q] = cs_seg_combine(sums[q], sums[q + w], &nodes[l][q]);
    }
}

/* m rows by PCR, as the GPU's base kernel does with its warps' rows: every row kept with a unit
 * diagonal (one division a row a step); rows outside [0, m) are identity rows. */
static void cs__pcr(size_t m, size_t n, const double *a, const double *b, const double *c,
                    double *d, double *work)
{
    double *al = work, *ga = work + m, *de = work + 2 * m;
    double *nal = work + 3 * m, *nga = work + 4 * m, *nde = work + 5 * m;
    for (size_t i = 0; i < m; ++i) {
        const double r = 1.0 / b[i];
        al[i] = (i % n == 0) ? 0.0 : a[i] * r;
        ga[i] = (i % n == n - 1) ? 0.0 : c[i] * r;
        de[i] = d[i] * r;
    }
    for (size_t s = 1; s < m; s <<= 1) {
        for (size_t i = 0; i < m; ++i) {
            double alm = 0.0, gam = 0.0, dem = 0.0, alp = 0.0, gap = 0.0, dep = 0.0;
            if (i >= s) alm = al[i - s], gam = ga[i - s], dem = de[i - s];
            if (i + s < m) alp = al[i + s], gap = ga[i + s], dep = de[i + s];
            const double r = 1.0 / (1.0 - gam * al[i] - alp * ga[i]);
            nde[i] = (de[i] - dem * al[i] - dep * ga[i]) * r;
            nal[i] = -alm * al[i] * r;
            nga[i] = -gap * ga[i] * r;
        }
        for (size_t i = 0; i < m; ++i) al[i] = nal[i], ga[i] = nga[i], de[i] = nde[i];
    }
    for (size_t i = 0; i < m; ++i) d[i] = de[i];
}

/* One level: reduce (m rows -> 2·ceil(m/(32k)) rows at r*); the reduced rows by PCR when
 * m <= base (the GPU's one-block base kernel: its warps' rows), else by the next level;
 * substitute into d. */
static cs_solver_status cs__level(size_t m, size_t n, int k, size_t base, size_t pcr, int top,
                                  const double *a, const double *b, const double *c, double *d)
{
    if (!top && m <= base && m <= pcr) { /* the PCR base kernel */
        double *w = malloc(6 * m * sizeof *w);
        if (!w) return CS_SOLVER_ERR_NOMEM;
        cs__pcr(m, m, a, b, c, d, w);
        free(w);
        return CS_SOLVER_OK;
    }
    const size_t W = (size_t)CS__LANES * k, nw = (m + W - 1) / W, mr = 2 * nw;
    double *red = calloc(4 * mr, sizeof *red); /* calloc: every row is written, but gcc cannot tell */
    cs_seg *sums = malloc(CS__LANES * sizeof *sums);
    cs_seg_node(*nodes)[CS__LANES] = malloc(CS__TREE * sizeof *nodes);
    double *rows = malloc((size_t)CS__LANES * 4 * k * sizeof *rows);
    if (!red || !sums || !nodes || !rows) {
        free(red), free(sums), free(nodes), free(rows);
        return CS_SOLVER_ERR_NOMEM;
    }
    double *ra = red, *rb = red + mr, *rc = red + 2 * mr, *rd = red + 3 * mr;
    for (size_t w = 0; w < nw; ++w) {
        for (int q = 0; q < CS__LANES; ++q) {
            double *A = rows + (size_t)q * 4 * k, *B = A + k, *C = B + k, *D = C + k;
            cs__lane_rows(m, n, k, w * W + (size_t)q * k, a, b, c, d, A, B, C, D);
            sums[q] = cs_seg_chunk(A, B, C, D, k, 0);
        }
        cs__warp_tree(sums, nodes);
        ra[2 * w] = sums[0].pF, rb[2 * w] = 1.0, rc[2 * w] = sums[0].qF, rd[2 * w] = sums[0].dF;
        ra[2 * w + 1] = sums[0].pL, rb[2 * w + 1] = 1.0, rc[2 * w + 1] = sums[0].qL;
        rd[2 * w + 1] = sums[0].dL;
    }
    cs_solver_status st = CS_SOLVER_OK;
    if (m <= base) {
        double *w = malloc(6 * mr * sizeof *w);
        if (w) cs__pcr(mr, mr, ra, rb, rc, rd, w);
        else st = CS_SOLVER_ERR_NOMEM;
        free(w);
    } else {
        st = cs__level(mr, mr, k, base, pcr, 0, ra, rb, rc, rd);
    }
    if (st == CS_SOLVER_OK)
        for (size_t w = 0; w < nw; ++w) {
            double xf[CS__LANES], xl[CS__LANES];
            for (int q = 0; q < CS__LANES; ++q) {
                double *A = rows + (size_t)q * 4 * k, *B = A + k, *C = B + k, *D = C + k;
                cs__lane_rows(m, n, k, w * W + (size_t)q * k, a, b, c, d, A, B, C, D);
                sums[q] = cs_seg_chunk(A, B, C, D, k, 1);
            }
            cs__warp_tree(sums, nodes);
            xf[0] = rd[2 * w], xl[0] = rd[2 * w + 1];
            for (int l = CS__TREE - 1; l >= 0; --l) {
                const int s = 1 << l;
                for (int q = 0; q < CS__LANES; q += 2 * s) {
                    double u, v;
                    cs_seg_split(&nodes[l][q], xf[q], xl[q], &u, &v);
                    xf[q + s] = v, xl[q + s] = xl[q], xl[q] = u;
                }
            }
            for (int q = 0; q < CS__LANES; ++q) {
                double *A = rows + (size_t)q * 4 * k, *C = A + 2 * k, *D = C + k;
                cs_seg_chunk_subst(A, C, D, k, xf[q], xl[q]);
                for (int j = 0; j < k; ++j) {
                    const size_t g = w * W + (size_t)q * k + (size_t)j;
                    if (g < m) d[g] = D[j];
                }
            }
        }
    free(red), free(sums), free(nodes), free(rows);
    return st;
}

cs_solver_status cs_thomas_solve_warp_emul(int nsys, int n, int k, int base, int pcr,
                                           const double *a, const double *b, const double *c,
                                           double *d)
{
    if (nsys < 0 || n < 1 || k < 2 || k > CS__MAX_K || base < 2 || pcr < 0) return CS_SOLVER_ERR_INVALID;
    if (nsys == 0) return CS_SOLVER_OK;
    if (!a || !b || !c || !d) return CS_SOLVER_ERR_INVALID;
    const size_t N = (size_t)nsys * (size_t)n;
    cs_solver_status st = cs__level(N, (size_t)n, k, (size_t)base, (size_t)pcr, 1, a, b, c, d);
    for (size_t i = 0; st == CS_SOLVER_OK && i < N; ++i)
        if (!isfinite(d[i])) st = CS_SOLVER_ERR_SINGULAR;
    return st;
}
