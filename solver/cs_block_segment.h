/* Private to the block-tridiagonal solvers of one large system (the chunked hybrid with k×k
 * blocks): one chunk's summary and its substitution, shared by the C solver
 * (cs_block_chunked_cpu.c, the reference) and the CUDA kernels (cs_block_large_gpu.cu, one thread
 * per chunk), so both do the same arithmetic. Blocks as cs_block_small.h (row-major, Flat).
 *
 * A level of m block rows made of systems of nb block rows (A is taken as 0 at a system's first
 * row, C as 0 at its last: they are never read). A chunk of K >= 2 rows [g0, g0 + K), interior
 * eliminated, leaves two block rows in its end unknowns (unit diagonal blocks):
 *   F row:  X_f = DF - PF·X_{f-1} - QF·X_l
 *   L row:  X_l = DL - PL·X_f     - QL·X_{l+1}
 * from an upward sweep (X_j in terms of X_{j-1} and X_l) and a downward one (X_j in terms of X_f
 * and X_{j+1}), each pivot block factorised by LU with partial pivoting inside the block. The F
 * and L rows of chunk q are block rows 2q and 2q+1 of the next level (A = P, B = I, C = Q, d = D),
 * one system: its first A and last C are zero by the cuts. The substitution solves the chunk's
 * interior rows by block Thomas in place (C becomes C', d the solution) with X_f and X_l moved to
 * the right-hand side. */
#ifndef CS_BLOCK_SEGMENT_H
#define CS_BLOCK_SEGMENT_H

#include "cs_block_small.h"

#define CS__KK (CS_BLOCK_MAX_K * CS_BLOCK_MAX_K)
#define CS_BSEG_K 16    /* block rows per chunk (the last chunk of a level: K..2K-1) */
#define CS_BSEG_BASE 64 /* a level of at most this many block rows: block Thomas, one thread */

/* Row g of the level into a, b, c (k×k) and v (k), the couplings cut at system boundaries. */
CS__BHD void cs__bseg_row(int k, size_t g, size_t nb, const double *A, const double *B,
                          const double *C, const double *d, double *a, double *b, double *c,
                          double *v)
{
    const size_t kk = (size_t)k * k, p = g % nb;
    for (size_t e = 0; e < kk; ++e) {
        a[e] = (p == 0) ? 0.0 : A[g * kk + e];
        b[e] = B[g * kk + e];
        c[e] = (p == nb - 1) ? 0.0 : C[g * kk + e];
    }
    for (int r = 0; r < k; ++r) v[r] = d[g * k + r];
}

/* Y := M^-1 Y (k×k, row-major) with M's LU factors. */
CS__BHD void cs__bseg_solve_mat(int k, const double *LU, const int *piv, double *Y)
{
    for (int c = 0; c < k; ++c) cs__blk_lu_solve(k, LU, piv, Y + c, (size_t)k);
}

/* R := X·Y (k×k). */
CS__BHD void cs__bseg_mul(int k, const double *X, const double *Y, double *R)
{
    for (int r = 0; r < k; ++r)
        for (int c = 0; c < k; ++c) {
            double s = 0.0;
            for (int t = 0; t < k; ++t) s += X[r * k + t] * Y[t * k + c];
            R[r * k + c] = s;
        }
}

/* One step of a sweep over a chunk, at a row with couplings nxt (to the row the sweep goes to
 * next) and prv (to the row it came from), pivot block b and right-hand side v (b and v are
 * overwritten). Before the step the previous row's unknown is D - P·X_this - Q·X_end (X_end: the
 * chunk's end row the sweep started from); after it, this row's is D - P·X_next - Q·X_end:
 *     M = b - prv·P;  P = M^-1 nxt;  Q = -M^-1 (prv·Q);  D = M^-1 (v - prv·D).
 * The upward sweep (rows K-2 .. 0) is nxt = a, prv = c (P = ph, Q = ps); the downward one (rows
 * 1 .. K-1) nxt = c, prv = a (P = ga, Q = al); both start from P = 0, Q = -I, D = 0. One
 * function for both, so the GPU runs the two sweeps on two lanes without divergence. Returns 1
 * when the pivot block is singular. */
CS__BHD int cs__bseg_step(int k, const double *nxt, double *b, const double *prv, double *v,
                          double *P, double *Q, double *D)
{
    double T[CS__KK];
    int piv[CS_BLOCK_MAX_K];
    const int kk = k * k;
    cs__bseg_mul(k, prv, P, T);
    for (int e = 0; e < kk; ++e) b[e] -= T[e];
    for (int r = 0; r < k; ++r)
        for (int t = 0; t < k; ++t) v[r] -= prv[r * k + t] * D[t];
    cs__bseg_mul(k, prv, Q, T);
    const int sing = cs__blk_lu(k, b, piv);
    for (int e = 0; e < kk; ++e) P[e] = nxt[e], Q[e] = -T[e];
    cs__bseg_solve_mat(k, b, piv, P);
    cs__bseg_solve_mat(k, b, piv, Q);
    cs__blk_lu_solve(k, b, piv, v, 1);
    for (int r = 0; r < k; ++r) D[r] = v[r];
    return sing;
}

/* A sweep's start: P = 0, Q = -I, D = 0. */
CS__BHD void cs__bseg_start(int k, double *P, double *Q, double *D)
{
    for (int e = 0; e < k * k; ++e) P[e] = 0.0, Q[e] = (e % (k + 1) == 0) ? -1.0 : 0.0;
    for (int r = 0; r < k; ++r) D[r] = 0.0;
}

/* The summary of rows [g0, g0 + K) (K >= 2): F row (DF, PF, QF), L row (DL, PL, QL). Returns 1
 * when a pivot block is singular. */
CS__BHD int cs__bseg_chunk(int k, size_t g0, int K, size_t nb, const double *A, const double *B,
                           const double *C, const double *d, double *DF, double *PF, double *QF,
                           double *DL, double *PL, double *QL)
{
    double a[CS__KK], b[CS__KK], c[CS__KK], v[CS_BLOCK_MAX_K];
    int sing = 0;
    /* upwards from X_l = X_l: X_f = DF - PF·X_{f-1} - QF·X_l */
    cs__bseg_start(k, PF, QF, DF);
    for (int j = K - 2; j >= 0; --j) {
        cs__bseg_row(k, g0 + (size_t)j, nb, A, B, C, d, a, b, c, v);
        sing |= cs__bseg_step(k, a, b, c, v, PF, QF, DF);
    }
    /* downwards from X_f = X_f: X_l = DL - PL·X_f - QL·X_{l+1} (P is ga = QL, Q is al = PL) */
    cs__bseg_start(k, QL, PL, DL);
    for (int j = 1; j < K; ++j) {
        cs__bseg_row(k, g0 + (size_t)j, nb, A, B, C, d, a, b, c, v);
        sing |= cs__bseg_step(k, c, b, a, v, QL, PL, DL);
    }
    return sing;
}

/* Rows [g0, g0 + K) from their ends F = X_f, L = X_l: the interior by block Thomas in place
 * (C rows g0+1 .. g0+K-3 become C', d the solution). Returns 1 for a singular pivot block. */
CS__BHD int cs__bseg_subst(int k, size_t g0, int K, size_t nb, const double *A, const double *B,
                           double *C, double *d, const double *F, const double *L)
{
    double a[CS__KK], b[CS__KK], c[CS__KK], v[CS_BLOCK_MAX_K];
    const size_t kk = (size_t)k * k;
    int sing = 0;
    for (int j = 1; j <= K - 2; ++j) {
        const size_t g = g0 + (size_t)j;
        cs__bseg_row(k, g, nb, A, B, C, d, a, b, c, v);
        if (j == 1)
            for (int r = 0; r < k; ++r)
                for (int t = 0; t < k; ++t) v[r] -= a[r * k + t] * F[t];
        if (j == K - 2)
            for (int r = 0; r < k; ++r)
                for (int t = 0; t < k; ++t) v[r] -= c[r * k + t] * L[t];
        sing |= cs__blk_forward(k, j > 1 ? a : (const double *)0, b, j < K - 2 ? c : (double *)0, v,
                                j > 1 ? C + (g - 1) * kk : (const double *)0,
                                j > 1 ? d + (g - 1) * k : (const double *)0, 1);
        if (j < K - 2)
            for (size_t e = 0; e < kk; ++e) C[g * kk + e] = c[e];
        for (int r = 0; r < k; ++r) d[g * k + r] = v[r];
    }
    for (int j = K - 3; j >= 1; --j) {
        const size_t g = g0 + (size_t)j;
        cs__blk_backward(k, C + g * kk, d + g * k, d + (g + 1) * k, 1);
    }
    for (int r = 0; r < k; ++r) d[g0 * k + r] = F[r], d[(g0 + K - 1) * k + r] = L[r];
    return sing;
}

#undef CS__KK
#endif
