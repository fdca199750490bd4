/* Shared by the block-tridiagonal tests: random block diagonally dominant batches (Flat layout of
 * cs_solver.h) and the reference, LAPACK's banded solver dgbsv (partial pivoting over the band)
 * on the same matrix, assembled as a band of kl = ku = 2k-1. One copy per test program.
 *
 * Systems: entries of A, C and of B off its diagonal uniform in [-1, 1]; B's diagonal entry
 * |.| = the row's other entries' sum + [0.5, 1.5), random sign (so row-wise strictly diagonally
 * dominant); d in [-1, 1]. A of block row 0 and C of the last block row hold 7 (never read). */
#ifndef CS_TEST_BLOCK_H
#define CS_TEST_BLOCK_H

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cs_solver.h"   /* cs_block_thomas_solve_chunked_omp: the reference of blk_case */
#include "test_tridiag.h" /* td_alloc, td_rel_err, urand */

/* LAPACK (Fortran ABI); without LAPACK the tests exit 77 before calling it */
#ifdef CS_NO_LAPACK
static void dgbsv_(const int *n, const int *kl, const int *ku, const int *nrhs, double *ab,
                   const int *ldab, int *ipiv, double *b, const int *ldb, int *info)
{
    (void)n, (void)kl, (void)ku, (void)nrhs, (void)ab, (void)ldab, (void)ipiv, (void)b, (void)ldb;
    *info = -100;
}
#else
void dgbsv_(const int *n, const int *kl, const int *ku, const int *nrhs, double *ab,
            const int *ldab, int *ipiv, double *b, const int *ldb, int *info);
#endif

static inline void blk_gen(int k, int nsys, int nb, double *A, double *B, double *C, double *d)
{
    const int kk = k * k;
    for (int s = 0; s < nsys; ++s)
        for (int i = 0; i < nb; ++i) {
            const size_t o = ((size_t)s * nb + i) * kk;
            for (int r = 0; r < k; ++r) {
                double sum = 0.0;
                for (int c = 0; c < k; ++c) {
                    A[o + r * k + c] = (i > 0) ? 2.0 * urand() - 1.0 : 7.0;
                    C[o + r * k + c] = (i < nb - 1) ? 2.0 * urand() - 1.0 : 7.0;
                    B[o + r * k + c] = (c != r) ? 2.0 * urand() - 1.0 : 0.0;
                    sum += (i > 0 ? fabs(A[o + r * k + c]) : 0.0) +
                           (i < nb - 1 ? fabs(C[o + r * k + c]) : 0.0) + fabs(B[o + r * k + c]);
                }
                B[o + r * k + r] = (sum + 0.5 + urand()) * (urand() < 0.5 ? -1.0 : 1.0);
                d[((size_t)s * nb + i) * k + r] = 2.0 * urand() - 1.0;
            }
        }
}

/* A random batch (blk_gen) of nsys systems of nb block rows and the CPU chunked hybrid's solution
 * of a copy: the variant under test solves A, B, C, d; ref holds the reference x (C2 its C'). */
typedef struct {
    size_t nblk, nvec;               /* entries of A, B, C and of d */
    double *A, *B, *C, *d, *C2, *ref;
} blk_case;

/* The case, and the reference solve's status (CS_SOLVER_OK expected). */
static inline int blk_case_make(int k, int nsys, int nb, blk_case *c)
{
    c->nblk = (size_t)nsys * nb * k * k, c->nvec = (size_t)nsys * nb * k;
    c->A = td_alloc(c->nblk), c->B = td_alloc(c->nblk), c->C = td_alloc(c->nblk), c->d = td_alloc(c->nvec);
    c->C2 = td_alloc(c->nblk), c->ref = td_alloc(c->nvec);
    blk_gen(k, nsys, nb, c->A, c->B, c->C, c->d);
    memcpy(c->C2, c->C, c->nblk * sizeof *c->C), memcpy(c->ref, c->d, c->nvec * sizeof *c->d);
    return cs_block_thomas_solve_chunked_omp(k, nsys, nb, c->A, c->B, c->C2, c->ref);
}

static inline void blk_case_free(blk_case *c)
{
    free(c->A), free(c->B), free(c->C), free(c->d), free(c->C2), free(c->ref);
}

/* Near-singular: every coupling negative (-[0, 1)), B's diagonal the row's other entries' sum plus
 * `margin`: weakly dominant, an M-matrix close to a block Laplacian's (condition ~ nb^2 / margin
 * bounded by ~nb^2·k). */
static inline void blk_gen_near(int k, int nsys, int nb, double margin, double *A, double *B,
                                double *C, double *d)
{
    blk_gen(k, nsys, nb, A, B, C, d);
    const size_t nblk = (size_t)nsys * nb * k * k;
    for (size_t e = 0; e < nblk; ++e) A[e] = -fabs(A[e]), C[e] = -fabs(C[e]), B[e] = -fabs(B[e]);
    for (int s = 0; s < nsys; ++s)
        for (int i = 0; i < nb; ++i) {
            const size_t o = ((size_t)s * nb + i) * k * k;
            for (int r = 0; r < k; ++r) {
                double sum = 0.0;
                for (int c = 0; c < k; ++c)
                    sum += (i > 0 ? fabs(A[o + r * k + c]) : 0.0) +
                           (i < nb - 1 ? fabs(C[o + r * k + c]) : 0.0) +
                           (c != r ? fabs(B[o + r * k + c]) : 0.0);
                B[o + r * k + r] = sum + margin;
            }
        }
}

/* x (nsys·nb·k) = dgbsv's solution of every system; returns LAPACK's worst info (0 = ok). */
static inline int blk_reference(int k, int nsys, int nb, const double *A, const double *B,
                         const double *C, const double *d, double *x)
{
    const int N = nb * k, kl = 2 * k - 1, ku = 2 * k - 1, ldab = 2 * kl + ku + 1, one = 1;
    const int kk = k * k;
    double *ab = malloc((size_t)ldab * N * sizeof *ab);
    int *ipiv = malloc((size_t)N * sizeof *ipiv), worst = 0;
    if (!ab || !ipiv) abort();
    for (int s = 0; s < nsys; ++s) {
        memset(ab, 0, (size_t)ldab * N * sizeof *ab);
#define AB(row, col) ab[(size_t)(kl + ku + (row) - (col)) + (size_t)(col) * ldab]
        for (int i = 0; i < nb; ++i) {
            const size_t o = ((size_t)s * nb + i) * kk;
            for (int r = 0; r < k; ++r)
                for (int c = 0; c < k; ++c) {
                    if (i > 0) AB(i * k + r, (i - 1) * k + c) = A[o + r * k + c];
                    AB(i * k + r, i * k + c) = B[o + r * k + c];
                    if (i < nb - 1) AB(i * k + r, (i + 1) * k + c) = C[o + r * k + c];
                }
        }
#undef AB
        memcpy(x + (size_t)s * N, d + (size_t)s * N, (size_t)N * sizeof *x);
        int info = 0;
        dgbsv_(&N, &kl, &ku, &one, ab, &ldab, ipiv, x + (size_t)s * N, &N, &info);
        if (info != 0 && worst == 0) worst = info;
    }
    free(ab);
    free(ipiv);
    return worst;
}

#endif
