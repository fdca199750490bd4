/* Conformance tests of the CPU batched solvers (solver/cs_solver.h): Hines serial and OpenMP,
 * Thomas serial and OpenMP.
 *
 * Reference: a dense LU factorisation with partial pivoting of the same matrix, written here in
 * double precision (rows whose multiplier is exactly 0 are skipped and row updates stop at the
 * pivot row's last nonzero: only subtractions of exact zeros are left out, so the results are
 * those of the full loops, and tree / tridiagonal matrices of a few thousand rows stay cheap).
 * Tolerances:
 *   - forward error  ||x - x_ref||_inf / ||x_ref||_inf <= 1e-12 against the dense solve;
 *   - for systems too large for a dense reference (cells with ncv > CS_TEST_DENSE_MAX, the big
 *     synthetic stars, and all cells solved as one batch), the normwise backward error
 *         ||A x - b||_inf / (||A||_inf ||x||_inf + ||b||_inf) <= 1e-12,
 *     with A x computed in the sparse (tree) form. Not ||A x - b|| / ||b||: that is not scale
 *     invariant and a backward-stable solver only bounds it by ~eps·||A||·||x||/||b||, which is
 *     ~4e4·eps for the flywire cell (thin neurites, tiny C/dt), where even the dense LU
 *     solution gives ||A x - b|| / ||b|| = 1.8e-12; its backward error is ~1e-17;
 *   - serial and OpenMP results (solution and eliminated diagonal / modified c) bit-identical.
 * The random matrices are strictly diagonally dominant and well conditioned (errors ~1e-15);
 * the cable matrices of real cells are weakly dominant (zero-area nodes) and the flywire cell,
 * with ||A||·||x||/||b|| ~ 4e4, shows a forward error ~2e-13 (against its 1e-12 bound). */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_solver.h"

#include "cs_error.h"
#include "cs_geometry.h"
#include "cs_morph.h"

#define TOL 1e-12
#define CS_TEST_DENSE_MAX 3000 /* largest cell (ncv) compared with the dense LU */

/* ---- helpers ------------------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rng_next(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double rng_uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(rng_next() >> 11) * 0x1.0p-53;
}
static int rng_int(int lo, int hi) /* in [lo, hi] */
{
    return lo + (int)(rng_next() % (uint64_t)(hi - lo + 1));
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    ck_assert_msg(p != NULL, "out of memory (%zu bytes)", n);
    return p;
}
static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    ck_assert_msg(p != NULL, "out of memory (%zu x %zu bytes)", n, size);
    return p;
}
static double *dup_d(const double *x, size_t n)
{
    double *y = xmalloc(n * sizeof *y);
    memcpy(y, x, n * sizeof *y);
    return y;
}

/* Dense solve A x = b (A n×n row-major, destroyed; b overwritten by x) by LU with partial
 * pivoting. Returns 0, or -1 for an exactly zero pivot. */
static int dense_lu_solve(int n, double *A, double *b)
{
    /* last[i]: column of row i's last nonzero; entries after it are zero, so the updates stop
     * there (exactly the same arithmetic as the full loops, minus subtractions of 0). */
    int *last = xmalloc((size_t)(n ? n : 1) * sizeof *last);
    for (int i = 0; i < n; ++i) {
        last[i] = i;
        for (int j = n - 1; j > i; --j)
            if (A[(size_t)i * n + j] != 0.0) {
                last[i] = j;
                break;
            }
    }
    for (int k = 0; k < n; ++k) {
        int piv = k;
        double best = fabs(A[(size_t)k * n + k]);
        for (int i = k + 1; i < n; ++i) {
            const double v = fabs(A[(size_t)i * n + k]);
            if (v > best) best = v, piv = i;
        }
        if (best == 0.0) {
            free(last);
            return -1;
        }
        if (piv != k) {
            const int tl = last[k];
            last[k] = last[piv];
            last[piv] = tl;
            for (int j = 0; j < n; ++j) {
                const double t = A[(size_t)k * n + j];
                A[(size_t)k * n + j] = A[(size_t)piv * n + j];
                A[(size_t)piv * n + j] = t;
            }
            const double t = b[k];
            b[k] = b[piv];
            b[piv] = t;
        }
        const double *rowk = A + (size_t)k * n;
        for (int i = k + 1; i < n; ++i) {
            double *rowi = A + (size_t)i * n;
            if (rowi[k] == 0.0) continue; /* nothing to eliminate */
            const double m = rowi[k] / rowk[k];
            rowi[k] = 0.0;
            for (int j = k + 1; j <= last[k]; ++j) rowi[j] -= m * rowk[j];
            if (last[k] > last[i]) last[i] = last[k];
            b[i] -= m * b[k];
        }
    }
    for (int i = n - 1; i >= 0; --i) {
        const double *rowi = A + (size_t)i * n;
        double s = b[i];
        for (int j = i + 1; j < n; ++j) s -= rowi[j] * b[j];
        b[i] = s / rowi[i];
    }
    free(last);
    return 0;
}

/* ||x - ref||_inf / ||ref||_inf */
static double rel_err(int n, const double *x, const double *ref)
{
    double num = 0.0, den = 0.0;
    for (int i = 0; i < n; ++i) {
        num = fmax(num, fabs(x[i] - ref[i]));
        den = fmax(den, fabs(ref[i]));
    }
    if (isnan(num)) return INFINITY;
    return den > 0.0 ? num / den : num;
}

/* ---- Hines batches --------------------------------------------------------------------- */

enum { TREE_RANDOM, TREE_CHAIN, TREE_STAR, TREE_BINARY, TREE_NKINDS };
static const char *tree_kind_name[TREE_NKINDS] = {"random", "chain", "star", "binary"};

typedef struct {
    int nsys, nrows;
    int *offset, *p;
    double *d, *u, *rhs;
} hbatch;

static void hbatch_free(hbatch *b)
{
    free(b->offset);
    free(b->p);
    free(b->d);
    free(b->u);
    free(b->rhs);
    memset(b, 0, sizeof *b);
}

/* Fill the matrix of rows [first, end) given p: u random in [-1, -0.05] ∪ (half the time)
 * [0.05, 1], d = Σ|u| of the faces touching the row (children included) + [0.1, 1]: strictly
 * diagonally dominant. rhs random in [-1, 1]. */
static void hbatch_fill_values(hbatch *b, int first, int end)
{
    for (int i = first; i < end; ++i) {
        b->u[i] = (i == first) ? 0.0 : rng_uniform(0.05, 1.0) * ((rng_next() & 1) ? -1.0 : 1.0);
        b->d[i] = rng_uniform(0.1, 1.0);
        b->rhs[i] = rng_uniform(-1.0, 1.0);
    }
    for (int i = first + 1; i < end; ++i) {
        b->d[i] += fabs(b->u[i]);
        b->d[b->p[i]] += fabs(b->u[i]);
    }
}

/* A batch of nsys systems of sizes in [minrows, maxrows], tree shape `kind`. */
static hbatch hbatch_make(int nsys, int minrows, int maxrows, int kind)
{
    hbatch b = {0};
    b.nsys = nsys;
    b.offset = xmalloc((size_t)(nsys + 1) * sizeof *b.offset);
    b.offset[0] = 0;
    for (int s = 0; s < nsys; ++s) b.offset[s + 1] = b.offset[s] + rng_int(minrows, maxrows);
    b.nrows = b.offset[nsys];
    b.p = xmalloc((size_t)b.nrows * sizeof *b.p);
    b.d = xmalloc((size_t)b.nrows * sizeof *b.d);
    b.u = xmalloc((size_t)b.nrows * sizeof *b.u);
    b.rhs = xmalloc((size_t)b.nrows * sizeof *b.rhs);
    for (int s = 0; s < nsys; ++s) {
        const int first = b.offset[s], end = b.offset[s + 1];
        b.p[first] = -1;
        for (int i = first + 1; i < end; ++i) {
            switch (kind) {
            case TREE_CHAIN: b.p[i] = i - 1; break;
            case TREE_STAR: b.p[i] = first; break;
            case TREE_BINARY: b.p[i] = first + (i - first - 1) / 2; break;
            default: b.p[i] = rng_int(first, i - 1); break;
            }
        }
        hbatch_fill_values(&b, first, end);
    }
    return b;
}

/* Dense matrix of system s of b (before solving). */
static double *hbatch_dense(const hbatch *b, int s, int *n_out)
{
    const int first = b->offset[s], n = b->offset[s + 1] - first;
    double *A = xcalloc((size_t)n * n, sizeof *A);
    for (int i = 0; i < n; ++i) {
        A[(size_t)i * n + i] = b->d[first + i];
        if (i > 0) {
            const int q = b->p[first + i] - first;
            A[(size_t)i * n + q] = b->u[first + i];
            A[(size_t)q * n + i] = b->u[first + i];
        }
    }
    *n_out = n;
    return A;
}

/* Normwise backward error of x for system s (A, rhs from b before solving), in sparse form:
 *     eta = ||A x - rhs||_inf / (||A||_inf ||x||_inf + ||rhs||_inf)
 * and, in *rel_b, the plain relative residual ||A x - rhs||_inf / ||rhs||_inf. */
static double hbatch_residual(const hbatch *b, int s, const double *x, double *rel_b)
{
    const int first = b->offset[s], end = b->offset[s + 1];
    double *r = xcalloc((size_t)(end - first), sizeof *r);
    double *arow = xcalloc((size_t)(end - first), sizeof *arow); /* Σ_j |A_ij| */
    for (int i = first; i < end; ++i) {
        r[i - first] += b->d[i] * x[i];
        arow[i - first] += fabs(b->d[i]);
        if (i > first) {
            const int q = b->p[i];
            r[i - first] += b->u[i] * x[q];
            r[q - first] += b->u[i] * x[i];
            arow[i - first] += fabs(b->u[i]);
            arow[q - first] += fabs(b->u[i]);
        }
    }
    double num = 0.0, nb = 0.0, na = 0.0, nx = 0.0;
    for (int i = first; i < end; ++i) {
        num = fmax(num, fabs(r[i - first] - b->rhs[i]));
        nb = fmax(nb, fabs(b->rhs[i]));
        na = fmax(na, arow[i - first]);
        nx = fmax(nx, fabs(x[i]));
    }
    free(r);
    free(arow);
    if (isnan(num) || isnan(nx)) return *rel_b = INFINITY;
    *rel_b = num / nb;
    return num / (na * nx + nb);
}

/* Solve b with serial and OpenMP; require OK, bit-identical results, and (when `reference`)
 * agreement of every system with the dense LU (or, for systems above dense_max rows, a small
 * residual). Returns the worst error seen. */
static double hines_check_batch_ref(const hbatch *b, int dense_max, int reference,
                                    const char *what)
{
    double *d_ser = dup_d(b->d, (size_t)b->nrows), *x_ser = dup_d(b->rhs, (size_t)b->nrows);
    double *d_omp = dup_d(b->d, (size_t)b->nrows), *x_omp = dup_d(b->rhs, (size_t)b->nrows);
    cs_solver_status st = cs_hines_solve_serial(b->nsys, b->offset, b->p, d_ser, b->u, x_ser);
    ck_assert_msg(st == CS_SOLVER_OK, "%s: hines serial: %s", what, cs_solver_status_string(st));
    st = cs_hines_solve_omp(b->nsys, b->offset, b->p, d_omp, b->u, x_omp);
    ck_assert_msg(st == CS_SOLVER_OK, "%s: hines omp: %s", what, cs_solver_status_string(st));
    ck_assert_msg(memcmp(x_ser, x_omp, (size_t)b->nrows * sizeof *x_ser) == 0,
                  "%s: serial and OpenMP solutions differ", what);
    ck_assert_msg(memcmp(d_ser, d_omp, (size_t)b->nrows * sizeof *d_ser) == 0,
                  "%s: serial and OpenMP eliminated diagonals differ", what);
    /* the ILP variant (the simulator's) against the same reference and tolerance */
    double *d_ilp = dup_d(b->d, (size_t)b->nrows), *x_ilp = dup_d(b->rhs, (size_t)b->nrows);
    st = cs_hines_solve_ilp(b->nsys, b->offset, b->p, d_ilp, b->u, x_ilp);
    ck_assert_msg(st == CS_SOLVER_OK, "%s: hines ilp: %s", what, cs_solver_status_string(st));

    double worst = 0.0;
    for (int s = 0; s < (reference ? b->nsys : 0); ++s) {
        const int first = b->offset[s], n = b->offset[s + 1] - first;
        double err;
        if (n <= dense_max) {
            int nn;
            double *A = hbatch_dense(b, s, &nn);
            double *x_ref = dup_d(b->rhs + first, (size_t)n);
            ck_assert_int_eq(dense_lu_solve(n, A, x_ref), 0);
            err = rel_err(n, x_ser + first, x_ref);
            ck_assert_msg(err <= TOL, "%s: system %d (%d rows): relative error %.3g vs dense LU",
                          what, s, n, err);
            double err_ilp = rel_err(n, x_ilp + first, x_ref);
            ck_assert_msg(err_ilp <= TOL, "%s: system %d (%d rows): ilp relative error %.3g vs dense LU",
                          what, s, n, err_ilp);
            err = fmax(err, err_ilp);
            free(A);
            free(x_ref);
        } else {
            double rel_b;
            err = hbatch_residual(b, s, x_ser, &rel_b);
            ck_assert_msg(err <= TOL,
                          "%s: system %d (%d rows): backward error %.3g (||Ax-b||/||b|| %.3g)",
                          what, s, n, err, rel_b);
            double err_ilp = hbatch_residual(b, s, x_ilp, &rel_b);
            ck_assert_msg(err_ilp <= TOL, "%s: system %d (%d rows): ilp backward error %.3g",
                          what, s, n, err_ilp);
            err = fmax(err, err_ilp);
        }
        worst = fmax(worst, err);
    }
    free(d_ser);
    free(x_ser);
    free(d_omp);
    free(x_omp);
    free(d_ilp);
    free(x_ilp);
    return worst;
}
static double hines_check_batch(const hbatch *b, int dense_max, const char *what)
{
    return hines_check_batch_ref(b, dense_max, 1, what);
}

/* Thread counts to run the OpenMP solvers with: uneven splits, more threads than systems. */
static const int thread_counts[] = {1, 2, 3, 7};
#define NTHREADCOUNTS ((int)(sizeof thread_counts / sizeof thread_counts[0]))

/* cs_hines_solve_ilp_next: the same solution as cs_hines_solve_ilp, bit for bit, plus the next
 * system d = d0, rhs = c·x + b0 for every row; cs_hines_check_structure rejects a bad p. */
START_TEST(test_hines_ilp_next)
{
    rng_state = 777;
    for (int kind = 0; kind < TREE_NKINDS; ++kind) {
        hbatch b = hbatch_make(13, 1, 120, kind);
        const size_t n = (size_t)b.nrows;
        double *d1 = dup_d(b.d, n), *x1 = dup_d(b.rhs, n), *d2 = dup_d(b.d, n), *x2 = dup_d(b.rhs, n);
        double *d0 = malloc(n * sizeof *d0), *c = malloc(n * sizeof *c), *b0 = malloc(n * sizeof *b0);
        double *out = malloc(n * sizeof *out);
        for (size_t r = 0; r < n; ++r) {
            d0[r] = 1.0 + (double)r;
            c[r] = 0.5 + 0.001 * (double)r;
            b0[r] = -3.0 + 0.01 * (double)r;
        }
        ck_assert_int_eq(cs_hines_check_structure(b.nsys, b.offset, b.p), CS_SOLVER_OK);
        ck_assert_int_eq(cs_hines_solve_ilp(b.nsys, b.offset, b.p, d1, b.u, x1), CS_SOLVER_OK);
        cs_hines_next next = {d0, c, b0, out};
        ck_assert_int_eq(cs_hines_solve_ilp_next(b.nsys, b.offset, b.p, d2, b.u, x2, &next), CS_SOLVER_OK);
        ck_assert_msg(memcmp(x1, x2, n * sizeof *x1) == 0, "%s: solutions differ", tree_kind_name[kind]);
        for (size_t r = 0; r < n; ++r) {
            ck_assert_msg(d2[r] == d0[r], "row %zu: d not reset to d0", r);
            ck_assert_msg(out[r] == c[r] * x1[r] + b0[r], "row %zu: next rhs wrong", r);
        }
        if (b.nrows > 2) { /* a parent after its child */
            int *p = malloc(n * sizeof *p);
            memcpy(p, b.p, n * sizeof *p);
            p[b.offset[1] - 1 > 0 ? b.offset[1] - 1 : 1] = b.nrows - 1;
            ck_assert_int_eq(cs_hines_check_structure(b.nsys, b.offset, p), CS_SOLVER_ERR_INVALID);
            free(p);
        }
        free(d1); free(x1); free(d2); free(x2); free(d0); free(c); free(b0); free(out);
        hbatch_free(&b);
    }
}
END_TEST

START_TEST(test_hines_random_batches)
{
    rng_state = 12345;
    const int nsys_list[] = {1, 2, 5, 33};
    char what[128];
    double worst = 0.0;
    for (int kind = 0; kind < TREE_NKINDS; ++kind)
        for (int a = 0; a < 4; ++a) {
            const int nsys = nsys_list[a];
            /* sizes: all 1-row systems, small, mixed 1..200 */
            const int ranges[3][2] = {{1, 1}, {2, 6}, {1, 200}};
            for (int r = 0; r < 3; ++r) {
                omp_set_num_threads(thread_counts[(kind + a + r) % NTHREADCOUNTS]);
                hbatch b = hbatch_make(nsys, ranges[r][0], ranges[r][1], kind);
                snprintf(what, sizeof what, "%s trees, nsys %d, rows %d..%d", tree_kind_name[kind],
                         nsys, ranges[r][0], ranges[r][1]);
                worst = fmax(worst, hines_check_batch(&b, 1 << 30, what));
                hbatch_free(&b);
            }
        }
    printf("hines random batches: worst relative error vs dense LU %.3g\n", worst);
}
END_TEST

/* Deep chains and wide stars (one system, and with small trees around them). */
START_TEST(test_hines_deep_and_wide)
{
    rng_state = 777;
    char what[128];
    const int kinds[2] = {TREE_CHAIN, TREE_STAR};
    for (int k = 0; k < 2; ++k)
        for (int nsys = 1; nsys <= 3; nsys += 2) {
            hbatch b = hbatch_make(nsys, 700, 900, kinds[k]);
            snprintf(what, sizeof what, "%s of 700..900 rows, nsys %d", tree_kind_name[kinds[k]],
                     nsys);
            const double err = hines_check_batch(&b, 1 << 30, what);
            printf("%s: relative error %.3g\n", what, err);
            hbatch_free(&b);
        }
}
END_TEST

/* Batches large enough for the OpenMP version to open a parallel region (>= 2048 rows), solved
 * with several thread counts: every thread count must give the serial bits. */
START_TEST(test_hines_omp_large)
{
    rng_state = 4242;
    char what[128];
    for (int kind = 0; kind < TREE_NKINDS; ++kind) {
        hbatch b = hbatch_make(kind == TREE_STAR ? 3 : 97, 1, 150, kind);
        if (kind == TREE_STAR) { /* three big stars plus many 1-row systems: very uneven */
            hbatch_free(&b);
            b = hbatch_make(200, 1, 1, TREE_RANDOM);
            hbatch big = hbatch_make(3, 1500, 2500, TREE_STAR);
            /* splice: big systems at positions 0, 100, 199 of a new batch */
            hbatch c = {0};
            c.nsys = b.nsys + big.nsys;
            c.nrows = b.nrows + big.nrows;
            c.offset = xmalloc((size_t)(c.nsys + 1) * sizeof *c.offset);
            c.p = xmalloc((size_t)c.nrows * sizeof *c.p);
            c.d = xmalloc((size_t)c.nrows * sizeof *c.d);
            c.u = xmalloc((size_t)c.nrows * sizeof *c.u);
            c.rhs = xmalloc((size_t)c.nrows * sizeof *c.rhs);
            int row = 0, sb = 0, sbig = 0;
            c.offset[0] = 0;
            for (int s = 0; s < c.nsys; ++s) {
                const int use_big = (s == 0 || s == 100 || s == c.nsys - 1) && sbig < big.nsys;
                const hbatch *src = use_big ? &big : &b;
                const int ss = use_big ? sbig++ : sb++;
                const int f = src->offset[ss], n = src->offset[ss + 1] - f;
                for (int i = 0; i < n; ++i) {
                    c.p[row + i] = i == 0 ? -1 : src->p[f + i] - f + row;
                    c.d[row + i] = src->d[f + i];
                    c.u[row + i] = src->u[f + i];
                    c.rhs[row + i] = src->rhs[f + i];
                }
                row += n;
                c.offset[s + 1] = row;
            }
            ck_assert_int_eq(row, c.nrows);
            hbatch_free(&b);
            hbatch_free(&big);
            b = c;
        }
        ck_assert_int_ge(b.nrows, 2048);
        for (int t = 0; t < NTHREADCOUNTS; ++t) {
            omp_set_num_threads(thread_counts[t]);
            snprintf(what, sizeof what, "large %s batch (%d systems, %d rows), %d threads",
                     tree_kind_name[kind], b.nsys, b.nrows, thread_counts[t]);
            /* the reference once (dense up to 1000 rows, backward error above), then bits only */
            const double err = hines_check_batch_ref(&b, 1000, t == 0, what);
            if (t == 0) printf("%s: worst error (dense LU / backward) %.3g\n", what, err);
        }
        hbatch_free(&b);
    }
}
END_TEST

/* Bad arguments: CS_SOLVER_ERR_INVALID from both versions. */
static void hines_expect(cs_solver_status want, int nsys, const int *offset, const int *p,
                         double *d, const double *u, double *rhs, const char *what)
{
    for (int v = 0; v < 2; ++v) {
        const cs_solver_status st = v == 0 ? cs_hines_solve_serial(nsys, offset, p, d, u, rhs)
                                           : cs_hines_solve_omp(nsys, offset, p, d, u, rhs);
        ck_assert_msg(st == want, "%s (%s): got %d (%s), want %d (%s)", what,
                      v == 0 ? "serial" : "omp", (int)st, cs_solver_status_string(st), (int)want,
                      cs_solver_status_string(want));
    }
}

START_TEST(test_hines_invalid)
{
    /* two systems: rows 0..2 (chain) and 3..4 */
    int offset[3] = {0, 3, 5};
    int p[5] = {-1, 0, 1, -1, 3};
    double d[5] = {4, 4, 4, 4, 4}, u[5] = {0, -1, -1, 0, -1}, rhs[5] = {1, 2, 3, 4, 5};
    const double rhs0[5] = {1, 2, 3, 4, 5};

    hines_expect(CS_SOLVER_ERR_INVALID, -1, offset, p, d, u, rhs, "nsys < 0");
    hines_expect(CS_SOLVER_ERR_INVALID, 2, NULL, p, d, u, rhs, "offset NULL");
    hines_expect(CS_SOLVER_ERR_INVALID, 2, offset, NULL, d, u, rhs, "p NULL");
    hines_expect(CS_SOLVER_ERR_INVALID, 2, offset, p, NULL, u, rhs, "d NULL");
    hines_expect(CS_SOLVER_ERR_INVALID, 2, offset, p, d, NULL, rhs, "u NULL");
    hines_expect(CS_SOLVER_ERR_INVALID, 2, offset, p, d, u, NULL, "rhs NULL");
    hines_expect(CS_SOLVER_OK, 0, NULL, NULL, NULL, NULL, NULL, "nsys 0");

    int off_bad[3] = {0, 3, 3}; /* empty system */
    hines_expect(CS_SOLVER_ERR_INVALID, 2, off_bad, p, d, u, rhs, "empty system");
    int off_dec[3] = {0, 3, 2};
    hines_expect(CS_SOLVER_ERR_INVALID, 2, off_dec, p, d, u, rhs, "decreasing offsets");
    int off_neg[3] = {-1, 3, 5};
    hines_expect(CS_SOLVER_ERR_INVALID, 2, off_neg, p, d, u, rhs, "negative offset[0]");
    int p_root[5] = {-1, 0, 1, 2, 3}; /* second system's first row has a parent */
    hines_expect(CS_SOLVER_ERR_INVALID, 2, offset, p_root, d, u, rhs, "root with a parent");
    int p_root0[5] = {0, 0, 1, -1, 3};
    hines_expect(CS_SOLVER_ERR_INVALID, 2, offset, p_root0, d, u, rhs, "p[0] = 0");
    /* the O(nsys) checks run before anything is touched */
    for (int i = 0; i < 5; ++i) ck_assert(rhs[i] == rhs0[i] && d[i] == 4.0);

    /* Parents out of range: checked only when the library is built without optimisation
     * (CS_SOLVER_CHECK_PARENTS defaults to !__OPTIMIZE__ in solver/cs_hines_cpu.c; the tests
     * are compiled with the library's flags). Nothing is touched. */
#ifndef __OPTIMIZE__
    int p_self[5] = {-1, 0, 2, -1, 3};
    hines_expect(CS_SOLVER_ERR_INVALID, 2, offset, p_self, d, u, rhs, "p[i] = i");
    int p_after[5] = {-1, 2, 1, -1, 3};
    hines_expect(CS_SOLVER_ERR_INVALID, 2, offset, p_after, d, u, rhs, "p[i] > i");
    int p_big[5] = {-1, 0, 1000000, -1, 3};
    hines_expect(CS_SOLVER_ERR_INVALID, 2, offset, p_big, d, u, rhs, "parent beyond the batch");
    int p_other[5] = {-1, 0, 1, -1, 2}; /* parent in the previous system */
    hines_expect(CS_SOLVER_ERR_INVALID, 2, offset, p_other, d, u, rhs, "parent in another system");
    int p_neg[5] = {-1, 0, 1, -1, -7};
    hines_expect(CS_SOLVER_ERR_INVALID, 2, offset, p_neg, d, u, rhs, "negative parent");
    for (int i = 0; i < 5; ++i) ck_assert(rhs[i] == rhs0[i] && d[i] == 4.0);
#endif
}
END_TEST

START_TEST(test_hines_singular)
{
    /* 1-row system with d = 0 */
    {
        int offset[2] = {0, 1}, p[1] = {-1};
        double d[1] = {0.0}, u[1] = {0.0}, rhs[1] = {1.0};
        ck_assert_int_eq(cs_hines_solve_serial(1, offset, p, d, u, rhs), CS_SOLVER_ERR_SINGULAR);
        d[0] = 0.0, rhs[0] = 0.0; /* 0/0 */
        ck_assert_int_eq(cs_hines_solve_omp(1, offset, p, d, u, rhs), CS_SOLVER_ERR_SINGULAR);
    }
    /* [[1 1][1 1]]: the root pivot becomes exactly 1 - 1·1 = 0; batch with good systems
     * around it, which are still solved */
    for (int v = 0; v < 2; ++v) {
        int offset[4] = {0, 2, 4, 6}, p[6] = {-1, 0, -1, 2, -1, 4};
        double d[6] = {2, 2, 1, 1, 2, 2}, u[6] = {0, -1, 0, 1, 0, -1};
        double rhs[6] = {1, 1, 3, 3, 1, 1};
        const cs_solver_status st = v == 0 ? cs_hines_solve_serial(3, offset, p, d, u, rhs)
                                           : cs_hines_solve_omp(3, offset, p, d, u, rhs);
        ck_assert_int_eq(st, CS_SOLVER_ERR_SINGULAR);
        /* [[2 -1][-1 2]] x = [1 1] -> x = [1 1] */
        ck_assert(fabs(rhs[0] - 1.0) < 1e-15 && fabs(rhs[1] - 1.0) < 1e-15);
        ck_assert(fabs(rhs[4] - 1.0) < 1e-15 && fabs(rhs[5] - 1.0) < 1e-15);
        ck_assert(!isfinite(rhs[2]) || !isfinite(rhs[3]));
    }
    /* chain [[2 1 0][1 1 1][0 1 1]]: not singular, but Hines' pivot of the interior row 1 is
     * exactly 1 - 1·1/1 = 0, which is what CS_SOLVER_ERR_SINGULAR reports */
    for (int v = 0; v < 2; ++v) {
        int offset[2] = {0, 3}, p[3] = {-1, 0, 1};
        double d[3] = {2, 1, 1}, u[3] = {0, 1, 1}, rhs[3] = {1, 2, 3};
        const cs_solver_status st = v == 0 ? cs_hines_solve_serial(1, offset, p, d, u, rhs)
                                           : cs_hines_solve_omp(1, offset, p, d, u, rhs);
        ck_assert_int_eq(st, CS_SOLVER_ERR_SINGULAR);
    }
    /* zero pivots inside a large batch, through the parallel path (>= 2048 rows): the solvers
     * only test each system's root solution, so put the zero pivot far from the root: at a
     * leaf (d = 0), and at an interior row whose only child is a leaf (pivot 1 - 1·1/1). For
     * each case and thread count, exactly one system is singular and the others are solved. */
    for (int where = 0; where < 2; ++where)
        for (int t = 0; t < NTHREADCOUNTS; ++t) {
            rng_state = 99 + (uint64_t)where;
            hbatch b = hbatch_make(40, 50, 150, TREE_RANDOM);
            const int s = 5 + 11 * t, first = b.offset[s], end = b.offset[s + 1];
            int row = -1;
            if (where == 0) {
                row = end - 1; /* the last row is a leaf */
                b.d[row] = 0.0;
            } else {
                /* deepest-numbered row with exactly one child, that child a leaf */
                int *nchild = xcalloc((size_t)(end - first), sizeof *nchild);
                for (int i = first + 1; i < end; ++i) nchild[b.p[i] - first]++;
                for (int i = end - 1; i > first && row < 0; --i)
                    if (nchild[i - first] == 0 && b.p[i] > first && nchild[b.p[i] - first] == 1)
                        row = b.p[i], b.d[i] = 1.0, b.u[i] = 1.0, b.d[row] = 1.0;
                free(nchild);
                ck_assert_int_ge(row, first + 1);
            }
            omp_set_num_threads(thread_counts[t]);
            double *d2 = dup_d(b.d, (size_t)b.nrows), *r2 = dup_d(b.rhs, (size_t)b.nrows);
            hbatch good = b; /* the reference for the other systems */
            good.d = dup_d(b.d, (size_t)b.nrows);
            good.rhs = dup_d(b.rhs, (size_t)b.nrows);
            ck_assert_int_eq(cs_hines_solve_serial(b.nsys, b.offset, b.p, b.d, b.u, b.rhs),
                             CS_SOLVER_ERR_SINGULAR);
            ck_assert_int_eq(cs_hines_solve_omp(b.nsys, b.offset, b.p, d2, b.u, r2),
                             CS_SOLVER_ERR_SINGULAR);
            ck_assert_msg(!isfinite(b.rhs[first]) && !isfinite(r2[first]),
                          "zero pivot at row %d: root solution should be non-finite", row);
            for (int q = 0; q < b.nsys; ++q) {
                if (q == s) continue;
                int nn;
                double *A = hbatch_dense(&good, q, &nn);
                double *x_ref = dup_d(good.rhs + good.offset[q], (size_t)nn);
                ck_assert_int_eq(dense_lu_solve(nn, A, x_ref), 0);
                ck_assert(rel_err(nn, b.rhs + b.offset[q], x_ref) <= TOL);
                ck_assert(memcmp(b.rhs + b.offset[q], r2 + b.offset[q], (size_t)nn * 8) == 0);
                free(A);
                free(x_ref);
            }
            free(d2);
            free(r2);
            free(good.d);
            free(good.rhs);
            hbatch_free(&b);
        }
}
END_TEST

/* ---- Thomas batches ------------------------------------------------------------------ */

START_TEST(test_thomas_random)
{
    rng_state = 2024;
    const int nlist[] = {1, 2, 3, 64, 512};
    const int nsyslist[] = {1, 4, 37};
    double worst = 0.0;
    for (int in = 0; in < 5; ++in)
        for (int is = 0; is < 3; ++is) {
            const int n = nlist[in], nsys = nsyslist[is];
            const size_t N = (size_t)n * nsys;
            double *a = xmalloc(N * sizeof *a), *b = xmalloc(N * sizeof *b);
            double *c = xmalloc(N * sizeof *c), *d = xmalloc(N * sizeof *d);
            for (size_t r = 0; r < N; ++r) {
                const int i = (int)(r % (size_t)n);
                a[r] = i == 0 ? NAN : rng_uniform(-1.0, 1.0); /* a[0], c[n-1] are never read */
                c[r] = i == n - 1 ? NAN : rng_uniform(-1.0, 1.0);
                b[r] = (i == 0 ? 0.0 : fabs(a[r])) + (i == n - 1 ? 0.0 : fabs(c[r])) +
                       rng_uniform(0.1, 1.0);
                if (rng_next() & 1) b[r] = -b[r]; /* dominance, not positivity */
                d[r] = rng_uniform(-1.0, 1.0);
            }
            double *b1 = dup_d(b, N), *c1 = dup_d(c, N), *d1 = dup_d(d, N);
            double *b2 = dup_d(b, N), *c2 = dup_d(c, N), *d2 = dup_d(d, N);
            ck_assert_int_eq(cs_thomas_solve_serial(nsys, n, a, b1, c1, d1), CS_SOLVER_OK);
            for (int t = 0; t < NTHREADCOUNTS; ++t) {
                omp_set_num_threads(thread_counts[t]);
                memcpy(b2, b, N * sizeof *b);
                memcpy(c2, c, N * sizeof *c);
                memcpy(d2, d, N * sizeof *d);
                ck_assert_int_eq(cs_thomas_solve_omp(nsys, n, a, b2, c2, d2), CS_SOLVER_OK);
                ck_assert_msg(memcmp(d1, d2, N * sizeof *d) == 0 &&
                                  memcmp(c1, c2, N * sizeof *c) == 0 &&
                                  memcmp(b1, b2, N * sizeof *b) == 0,
                              "thomas n %d nsys %d, %d threads: serial and OpenMP differ", n, nsys,
                              thread_counts[t]);
            }
            double *A = xmalloc((size_t)n * n * sizeof *A), *x = xmalloc((size_t)n * sizeof *x);
            for (int s = 0; s < nsys; ++s) {
                const size_t o = (size_t)s * n;
                memset(A, 0, (size_t)n * n * sizeof *A);
                for (int i = 0; i < n; ++i) {
                    A[(size_t)i * n + i] = b[o + i];
                    if (i > 0) A[(size_t)i * n + i - 1] = a[o + i];
                    if (i < n - 1) A[(size_t)i * n + i + 1] = c[o + i];
                    x[i] = d[o + i];
                }
                ck_assert_int_eq(dense_lu_solve(n, A, x), 0);
                const double err = rel_err(n, d1 + o, x);
                ck_assert_msg(err <= TOL, "thomas n %d nsys %d system %d: relative error %.3g", n,
                              nsys, s, err);
                worst = fmax(worst, err);
            }
            free(A), free(x);
            free(a), free(b), free(c), free(d);
            free(b1), free(c1), free(d1), free(b2), free(c2), free(d2);
        }
    printf("thomas random batches: worst relative error vs dense LU %.3g\n", worst);
}
END_TEST

START_TEST(test_thomas_invalid_and_singular)
{
    double a[3] = {0, 1, 1}, b[3] = {4, 4, 4}, c[3] = {1, 1, 0}, d[3] = {1, 2, 3};
    for (int v = 0; v < 2; ++v) {
        cs_solver_status (*f)(int, int, const double *, double *, double *, double *) =
            v == 0 ? cs_thomas_solve_serial : cs_thomas_solve_omp;
        ck_assert_int_eq(f(-1, 3, a, b, c, d), CS_SOLVER_ERR_INVALID);
        ck_assert_int_eq(f(1, 0, a, b, c, d), CS_SOLVER_ERR_INVALID);
        ck_assert_int_eq(f(1, -2, a, b, c, d), CS_SOLVER_ERR_INVALID);
        ck_assert_int_eq(f(1, 3, NULL, b, c, d), CS_SOLVER_ERR_INVALID);
        ck_assert_int_eq(f(1, 3, a, NULL, c, d), CS_SOLVER_ERR_INVALID);
        ck_assert_int_eq(f(1, 3, a, b, NULL, d), CS_SOLVER_ERR_INVALID);
        ck_assert_int_eq(f(1, 3, a, b, c, NULL), CS_SOLVER_ERR_INVALID);
        ck_assert_int_eq(f(0, 3, NULL, NULL, NULL, NULL), CS_SOLVER_OK);
        for (int i = 0; i < 3; ++i) ck_assert(d[i] == (double)(i + 1));

        /* n = 1, b = 0 */
        double a1[1] = {0}, b1[1] = {0}, c1[1] = {0}, d1[1] = {1};
        ck_assert_int_eq(f(1, 1, a1, b1, c1, d1), CS_SOLVER_ERR_SINGULAR);
        /* [[1 1][1 1]] in the middle of three systems of size 2 */
        double a2[6] = {0, -1, 0, 1, 0, -1}, b2[6] = {2, 2, 1, 1, 2, 2};
        double c2[6] = {-1, 0, 1, 0, -1, 0}, d2[6] = {1, 1, 3, 3, 1, 1};
        ck_assert_int_eq(f(3, 2, a2, b2, c2, d2), CS_SOLVER_ERR_SINGULAR);
        ck_assert(fabs(d2[0] - 1.0) < 1e-15 && fabs(d2[1] - 1.0) < 1e-15);
        ck_assert(fabs(d2[4] - 1.0) < 1e-15 && fabs(d2[5] - 1.0) < 1e-15);
        /* n = 3, [[1 1 0][1 1 1][0 1 1]]: not singular, but without pivoting the second pivot is
         * exactly 1 - 1·1 = 0, which is what CS_SOLVER_ERR_SINGULAR reports */
        double a3[3] = {0, 1, 1}, b3[3] = {1, 1, 1}, c3[3] = {1, 1, 0}, d3[3] = {1, 2, 3};
        ck_assert_int_eq(f(1, 3, a3, b3, c3, d3), CS_SOLVER_ERR_SINGULAR);
        /* n = 4, zero pivot at the first row (b[0] = 0, c[0] = 1: [[0 1 ..][1 3 1 ..]..],
         * not singular) and at the last row ([[1 1 0][1 2 1][0 1 1]], singular) */
        double a4[4] = {0, 1, 1, 1}, b4[4] = {0, 3, 3, 3}, c4[4] = {1, 1, 1, 0}, d4[4] = {1, 1, 1, 1};
        ck_assert_int_eq(f(1, 4, a4, b4, c4, d4), CS_SOLVER_ERR_SINGULAR);
        double a5[3] = {0, 1, 1}, b5[3] = {1, 2, 1}, c5[3] = {1, 1, 0}, d5[3] = {1, 2, 3};
        ck_assert_int_eq(f(1, 3, a5, b5, c5, d5), CS_SOLVER_ERR_SINGULAR);
    }
    /* a zero pivot among many systems, through the parallel path (>= 2048 rows) */
    {
        const int n = 8, nsys = 400;
        const size_t N = (size_t)n * nsys;
        double *A = xmalloc(N * sizeof *A), *B = xmalloc(N * sizeof *B);
        double *C = xmalloc(N * sizeof *C), *D = xmalloc(N * sizeof *D);
        for (size_t r = 0; r < N; ++r) A[r] = -1.0, B[r] = 3.0, C[r] = -1.0, D[r] = 1.0;
        B[(size_t)313 * n] = 0.0, C[(size_t)313 * n] = 0.0; /* row 0 of system 313: 0 0 ... */
        omp_set_num_threads(2);
        ck_assert_int_eq(cs_thomas_solve_omp(nsys, n, A, B, C, D), CS_SOLVER_ERR_SINGULAR);
        free(A), free(B), free(C), free(D);
    }
}
END_TEST

START_TEST(test_status_strings)
{
    const cs_solver_status all[] = {CS_SOLVER_OK, CS_SOLVER_ERR_INVALID, CS_SOLVER_ERR_SINGULAR,
                                    CS_SOLVER_ERR_NOMEM, CS_SOLVER_ERR_DEVICE,
                                    CS_SOLVER_ERR_UNAVAILABLE};
    const int n = (int)(sizeof all / sizeof all[0]);
    for (int i = 0; i < n; ++i) {
        const char *s = cs_solver_status_string(all[i]);
        ck_assert_ptr_nonnull(s);
        ck_assert_int_gt((int)strlen(s), 0);
        for (int j = 0; j < i; ++j) ck_assert_str_ne(s, cs_solver_status_string(all[j]));
    }
    ck_assert_str_eq(cs_solver_status_string(CS_SOLVER_OK), "ok");
    ck_assert_ptr_nonnull(cs_solver_status_string((cs_solver_status)42));
}
END_TEST

/* ---- real cells ------------------------------------------------------------------------ */

/* Cable matrix of a discretised cell (DESIGN.md "Numerics"), units:
 *   C_i   = 1e-5 · cm[µF/cm²] · A_i[µm²]      [nF]   (1 µm² = 1e-8 cm², 1 µF = 1e3 nF)
 *   C_i/dt                                   [µS]   (nF/ms)
 *   g_i   = g_axial[i] / Ra[Ω·cm]             [µS]
 *   gm_i  = 1e-2 · g_m[S/cm²] · A_i[µm²]      [µS]   (1e-8 cm²/µm² · 1e6 µS/S)
 *   d_i = C_i/dt + Σ_{faces touching i} g + gm_i,   u_i = -g_i. */
static void cell_matrix(const cs_geometry *g, int row0, hbatch *b)
{
    const double Ra = 100.0;  /* [Ω·cm] */
    const double cm = 1.0;    /* [µF/cm²] */
    const double dt = 0.025;  /* [ms] */
    const double gm = 0.001;  /* [S/cm²] membrane conductance (pas-like) */
    for (int i = 0; i < g->ncv; ++i) {
        const int r = row0 + i;
        const double C = 1e-5 * cm * g->area[i]; /* [nF] */
        b->d[r] = C / dt + 1e-2 * gm * g->area[i];
        b->u[r] = 0.0;
        b->p[r] = g->parent[i] < 0 ? -1 : g->parent[i] + row0;
        b->rhs[r] = rng_uniform(-1.0, 1.0); /* [nA] */
    }
    for (int i = 1; i < g->ncv; ++i) {
        const double gi = g->g_axial[i] / Ra; /* [µS] */
        b->u[row0 + i] = -gi;
        b->d[row0 + i] += gi;
        b->d[row0 + g->parent[i]] += gi;
    }
}

static int is_swc(const char *name)
{
    const size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".swc") == 0;
}
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every real cell in shared/data/morphologies (not invalid/), discretised with 10 µm CVs: the
 * Hines solve of its cable matrix agrees with the dense LU (ncv <= CS_TEST_DENSE_MAX) or has
 * a backward error <= 1e-12 (larger cells); all cells in one batch, serial == OpenMP. */
START_TEST(test_hines_swc_cells)
{
    const char *dir = CS_SHARED_DIR "/data/morphologies";
    DIR *dp = opendir(dir);
    ck_assert_msg(dp != NULL, "cannot open %s", dir);
    char *names[64];
    int nfiles = 0;
    for (struct dirent *e; (e = readdir(dp)) != NULL;)
        if (is_swc(e->d_name) && nfiles < 64) names[nfiles++] = strdup(e->d_name);
    closedir(dp);
    qsort(names, (size_t)nfiles, sizeof names[0], cmp_str);
    ck_assert_int_ge(nfiles, 1);

    cs_geometry *geo = xcalloc((size_t)nfiles, sizeof *geo);
    int total = 0;
    for (int f = 0; f < nfiles; ++f) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        cs_swc_options opt = {1.0, 0.0, 0};
        if (strcmp(names[f], "flywire_720575940661205633.swc") == 0) { /* [nm] -> [µm] */
            opt.scale = 0.001;
            opt.min_radius = 0.1;
        }
        cs_morph m;
        memset(&m, 0, sizeof m);
        cs_error_clear();
        cs_status st = cs_morph_load_swc(path, &opt, &m);
        ck_assert_msg(st == CS_OK, "%s: load: %s: %s", names[f], cs_status_string(st),
                      cs_error_message());
        const cs_cv_policy pol = {10.0, 0, 0};
        st = cs_discretize(&m, &pol, &geo[f]);
        ck_assert_msg(st == CS_OK, "%s: discretise: %s: %s", names[f], cs_status_string(st),
                      cs_error_message());
        cs_morph_free(&m);
        ck_assert_int_ge(geo[f].ncv, 1);
        total += geo[f].ncv;
    }

    rng_state = 31337;
    hbatch b = {0};
    b.nsys = nfiles;
    b.nrows = total;
    b.offset = xmalloc((size_t)(nfiles + 1) * sizeof *b.offset);
    b.p = xmalloc((size_t)total * sizeof *b.p);
    b.d = xmalloc((size_t)total * sizeof *b.d);
    b.u = xmalloc((size_t)total * sizeof *b.u);
    b.rhs = xmalloc((size_t)total * sizeof *b.rhs);
    b.offset[0] = 0;
    for (int f = 0; f < nfiles; ++f) {
        cell_matrix(&geo[f], b.offset[f], &b);
        b.offset[f + 1] = b.offset[f] + geo[f].ncv;
    }

    /* each cell on its own (serial and OpenMP, dense LU or residual) */
    for (int f = 0; f < nfiles; ++f) {
        hbatch one = {0};
        const int first = b.offset[f], n = geo[f].ncv;
        int off[2] = {0, n};
        one.nsys = 1;
        one.nrows = n;
        one.offset = off;
        one.p = xmalloc((size_t)n * sizeof *one.p);
        for (int i = 0; i < n; ++i) one.p[i] = b.p[first + i] < 0 ? -1 : b.p[first + i] - first;
        one.d = b.d + first;
        one.u = b.u + first;
        one.rhs = b.rhs + first;
        char what[256];
        snprintf(what, sizeof what, "cell %s (%d CVs)", names[f], n);
        const double err = hines_check_batch(&one, CS_TEST_DENSE_MAX, what);
        printf("%-50s %6d CVs: %s %.3g\n", names[f], n,
               n <= CS_TEST_DENSE_MAX ? "rel. error vs dense LU" : "backward error", err);
        free(one.p);
    }
    /* all cells in one batch, with a few thread counts: serial == OpenMP bit for bit, and every
     * cell's backward error <= 1e-12 (sparse form, see the top of the file) */
    for (int t = 0; t < NTHREADCOUNTS; ++t) {
        omp_set_num_threads(thread_counts[t]);
        const double res = hines_check_batch_ref(&b, 0, t == 0, "all cells in one batch");
        if (t == 0)
            printf("all %d cells in one batch (%d CVs): worst backward error %.3g\n", nfiles,
                   total, res);
    }

    hbatch_free(&b);
    for (int f = 0; f < nfiles; ++f) {
        cs_geometry_free(&geo[f]);
        free(names[f]);
    }
    free(geo);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("solver_cpu");
    TCase *tc = tcase_create("hines");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_hines_random_batches);
    tcase_add_test(tc, test_hines_ilp_next);
    tcase_add_test(tc, test_hines_deep_and_wide);
    tcase_add_test(tc, test_hines_omp_large);
    tcase_add_test(tc, test_hines_invalid);
    tcase_add_test(tc, test_hines_singular);
    suite_add_tcase(s, tc);
    TCase *tt = tcase_create("thomas");
    tcase_set_timeout(tt, 300);
    tcase_add_test(tt, test_thomas_random);
    tcase_add_test(tt, test_thomas_invalid_and_singular);
    tcase_add_test(tt, test_status_strings);
    suite_add_tcase(s, tt);
    TCase *tm = tcase_create("cells");
    tcase_set_timeout(tm, 300);
    tcase_add_test(tm, test_hines_swc_cells);
    suite_add_tcase(s, tm);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
