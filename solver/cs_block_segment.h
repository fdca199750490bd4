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
    double a[CS__KK], b[CS__KK], c[CS__KK], v[CS_BLOCK_MAX_K], P[CS__KK], Q[CS__KK], D[CS_BLOCK_MAX_K];
    const int kk = k * k;
    int sing = 0;
    /* upwards from X_l = X_l: X_f = DF - PF·X_{f-1} - QF·X_l */
    cs__bseg_start(k, P, Q, D);
    for (int j = K - 2; j >= 0; --j) {
        cs__bseg_row(k, g0 + (size_t)j, nb, A, B, C, d, a, b, c, v);
        sing |= cs__bseg_step(k, a, b, c, v, P, Q, D);
    }
    for (int e = 0; e < kk; ++e) PF[e] = P[e], QF[e] = Q[e];
    for (int r = 0; r < k; ++r) DF[r] = D[r];
    /* downwards from X_f = X_f: X_l = DL - PL·X_f - QL·X_{l+1} (P is ga = QL, Q is al = PL) */
    cs__bseg_start(k, P, Q, D);
    for (int j = 1; j < K; ++j) {
        cs__bseg_row(k, g0 + (size_t)j, nb, A, B, C, d, a, b, c, v);
        sing |= cs__bseg_step(k, c, b, a, v, P, Q, D);
    }
    for (int e = 0; e < kk; ++e) PL[e] = Q[e], QL[e] = P[e];
    for (int r = 0; r < k; ++r) DL[r] = D[r];
    return sing;
}

/* One row of the forward substitution inside a chunk of K rows, row j (1 <= j <= K-2) with its
 * a, b, c, v (c and v overwritten: c := C' when j < K-2, v := d'); F, L the chunk's end unknowns
 * (moved to the right-hand side at j = 1 and j = K-2); cp, dp the previous row's C' and d' (read
 * when j > 1), replaced by this row's. Returns 1 for a singular pivot block. */
CS__BHD int cs__bseg_fwd(int k, int j, int K, const double *a, const double *b, double *c, double *v,
                         const double *F, const double *L, double *cp, double *dp)
{
    if (j == 1)
        for (int r = 0; r < k; ++r)
            for (int t = 0; t < k; ++t) v[r] -= a[r * k + t] * F[t];
    if (j == K - 2)
        for (int r = 0; r < k; ++r)
            for (int t = 0; t < k; ++t) v[r] -= c[r * k + t] * L[t];
    const int sing = cs__blk_forward(k, j > 1 ? a : (const double *)0, b, j < K - 2 ? c : (double *)0,
                                     v, cp, dp, 1);
    if (j < K - 2)
        for (int e = 0; e < k * k; ++e) cp[e] = c[e];
    for (int r = 0; r < k; ++r) dp[r] = v[r];
    return sing;
}

/* Rows [g0, g0 + K) from their ends F = X_f, L = X_l: the interior by block Thomas in place
 * (C rows g0+1 .. g0+K-3 become C', d the solution). Returns 1 for a singular pivot block. */
CS__BHD int cs__bseg_subst(int k, size_t g0, int K, size_t nb, const double *A, const double *B,
                           double *C, double *d, const double *F, const double *L)
{
    double a[CS__KK], b[CS__KK], c[CS__KK], v[CS_BLOCK_MAX_K], cp[CS__KK], dp[CS_BLOCK_MAX_K];
    const size_t kk = (size_t)k * k;
    int sing = 0;
    for (int j = 1; j <= K - 2; ++j) {
        const size_t g = g0 + (size_t)j;
        cs__bseg_row(k, g, nb, A, B, C, d, a, b, c, v);
        sing |= cs__bseg_fwd(k, j, K, a, b, c, v, F, L, cp, dp);
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

/* ---- The GPU's staged kernels (cs_block_large_gpu.cu): the data movement of one warp -------
 * A warp keeps one slot per lane in shared memory: a, b, c (k×k) and v (k) of one block row.
 * Each step the warp loads its 32 slots' rows together (lane l loads elements l, l+32, ... of
 * the slots' blocks laid end to end, so neighbouring lanes read neighbouring addresses of one
 * block row: a k = 4 block row is one 128-byte line, a k = 2 one 32-byte sector), every lane
 * computes on its own slot, and results go back the same way. The functions below are that
 * data movement, lane by lane; the kernels run them between __syncwarp()s, the host emulation
 * (tests/test_block_tridiag_cpu.c) runs them for lanes 0..31 in turn, so the index arithmetic is
 * checked on the CPU. A step: every lane fills its entry of the slot table (cs__bseg_slot_set),
 * the warp stages the rows in, every lane computes on its slot, the warp stages results out.
 * Modes (one level of m rows, P = m / K chunks, chunk q of length
 * cs__bseg_len):
 *   CS__BSEG_RED  the reduce: 16 chunks per warp from q0, lane l on chunk q0 + l/2, the upward
 *                 sweep on even lanes (step s: row len-2-s), the downward on odd (row 1+s);
 *   CS__BSEG_FWD  the forward substitution: 32 chunks from q0, lane l on chunk q0 + l, row 1+s;
 *   CS__BSEG_BWD  the backward substitution: the same chunks, row len-3-s. */
#define CS_BSEG_W 32 /* lanes of a warp */
/* doubles per slot, odd: 32 lanes reading their own slots at stride S hit distinct banks */
#define CS_BSEG_SLOT(k) ((3 * (k) * (k) + (k)) | 1)
#define CS__BSEG_RED 0
#define CS__BSEG_FWD 1
#define CS__BSEG_BWD 2
#define CS__BSEG_NONE ((size_t)-1)

/* Rows of chunk q of P on a level of m rows (the last one takes the remainder, K..2K-1). */
CS__BHD int cs__bseg_len(size_t q, size_t P, size_t m)
{
    return q == P - 1 ? (int)(m - q * CS_BSEG_K) : CS_BSEG_K;
}

/* Chunks per warp in a mode. */
CS__BHD int cs__bseg_chunks(int mode) { return mode == CS__BSEG_RED ? CS_BSEG_W / 2 : CS_BSEG_W; }

/* The level row of slot t at step s, or CS__BSEG_NONE when it has none (past the last chunk, or
 * its chunk is shorter than the warp's longest). */
CS__BHD size_t cs__bseg_slot_row(int mode, size_t q0, int t, int s, size_t P, size_t m)
{
    const size_t q = q0 + (size_t)(mode == CS__BSEG_RED ? t >> 1 : t);
    if (q >= P) return CS__BSEG_NONE;
    const int len = cs__bseg_len(q, P, m);
    int j;
    if (mode == CS__BSEG_RED) {
        if (s > len - 2) return CS__BSEG_NONE;
        j = (t & 1) ? 1 + s : len - 2 - s;
    } else if (mode == CS__BSEG_FWD) {
        if (s > len - 3) return CS__BSEG_NONE;
        j = 1 + s;
    } else {
        if (s > len - 4) return CS__BSEG_NONE;
        j = len - 3 - s;
    }
    return q * CS_BSEG_K + (size_t)j;
}

/* Steps of the warp from chunk q0 in a mode (its longest chunk decides: the last one of the
 * level may be longer). */
CS__BHD int cs__bseg_steps(int mode, size_t q0, size_t P, size_t m)
{
    const size_t ql = (q0 + (size_t)cs__bseg_chunks(mode) < P ? q0 + (size_t)cs__bseg_chunks(mode) : P) - 1;
    const int len = cs__bseg_len(ql, P, m);
    return mode == CS__BSEG_RED ? len - 1 : mode == CS__BSEG_FWD ? len - 2 : len - 3;
}

#define CS__BSEG_A 1
#define CS__BSEG_B 2
#define CS__BSEG_C 4
#define CS__BSEG_D 8

/* The warp's slot table at a step, in shared memory: row[t] (CS__BSEG_NONE: slot t idle) and
 * flag[t]: CS__BSEG_FIRST (the row starts a system: A taken as 0), CS__BSEG_LAST (it ends one:
 * C taken as 0), CS__BSEG_HASC (the forward substitution stores its C'). Lane l fills entry l,
 * so the staging below finds a slot's row with one shared-memory read, not a division. */
#define CS__BSEG_FIRST 1
#define CS__BSEG_LAST 2
#define CS__BSEG_HASC 4
CS__BHD void cs__bseg_slot_set(int mode, size_t q0, int l, int s, size_t P, size_t m, size_t nb,
                               size_t *row, int *flag)
{
    const size_t g = cs__bseg_slot_row(mode, q0, l, s, P, m);
    int f = 0;
    if (g != CS__BSEG_NONE) {
        const size_t p = nb >= m ? g : g % nb;
        f = (p == 0 ? CS__BSEG_FIRST : 0) | (p == nb - 1 ? CS__BSEG_LAST : 0);
        if (mode == CS__BSEG_FWD && s + 3 < cs__bseg_len(q0 + (size_t)l, P, m)) f |= CS__BSEG_HASC;
    }
    row[l] = g;
    flag[l] = f;
}

/* Lane l's share of loading the warp's slots (the table above): the arrays in `which`
 * (CS__BSEG_A | ...), A = 0 at a system's first row and C at its last (as cs__bseg_row). */
CS__BHD void cs__bseg_stage_in(int k, int l, int which, const size_t *row, const int *flag,
                               const double *A, const double *B, const double *C, const double *d,
                               double *sm)
{
    const int kk = k * k, S = CS_BSEG_SLOT(k);
    if (which & (CS__BSEG_A | CS__BSEG_B | CS__BSEG_C))
        for (int i = l; i < CS_BSEG_W * kk; i += CS_BSEG_W) {
            const int t = i / kk, e = i - t * kk, f = flag[t];
            const size_t g = row[t];
            if (g == CS__BSEG_NONE) continue;
            double *o = sm + t * S + e;
            if (which & CS__BSEG_A) o[0] = (f & CS__BSEG_FIRST) ? 0.0 : A[g * kk + e];
            if (which & CS__BSEG_B) o[kk] = B[g * kk + e];
            if (which & CS__BSEG_C) o[2 * kk] = (f & CS__BSEG_LAST) ? 0.0 : C[g * kk + e];
        }
    if (which & CS__BSEG_D)
        for (int i = l; i < CS_BSEG_W * k; i += CS_BSEG_W) {
            const int t = i / k, r = i - t * k;
            const size_t g = row[t];
            if (g != CS__BSEG_NONE) sm[t * S + 3 * kk + r] = d[g * k + r];
        }
}

/* Lane l's share of storing the substitution's results: the slots' v to d, and their c (C') to
 * C where the table says CS__BSEG_HASC. */
CS__BHD void cs__bseg_stage_out(int k, int l, const size_t *row, const int *flag, double *C,
                                double *d, const double *sm)
{
    const int kk = k * k, S = CS_BSEG_SLOT(k);
    for (int i = l; i < CS_BSEG_W * kk; i += CS_BSEG_W) {
        const int t = i / kk, e = i - t * kk;
        if (flag[t] & CS__BSEG_HASC) C[row[t] * kk + e] = sm[t * S + 2 * kk + e];
    }
    for (int i = l; i < CS_BSEG_W * k; i += CS_BSEG_W) {
        const int t = i / k, r = i - t * k;
        const size_t g = row[t];
        if (g != CS__BSEG_NONE) d[g * k + r] = sm[t * S + 3 * kk + r];
    }
}

/* The reduce's lane l at step s on its slot (the row cs__bseg_slot_row gave): one step of its
 * sweep (upward on even lanes, downward on odd), state P, Q, D (cs__bseg_start). */
CS__BHD int cs__bseg_red_lane(int k, int l, double *slot, double *P, double *Q, double *D)
{
    const int kk = k * k;
    double *a = slot, *b = slot + kk, *c = slot + 2 * kk, *v = slot + 3 * kk;
    return cs__bseg_step(k, (l & 1) ? c : a, b, (l & 1) ? a : c, v, P, Q, D);
}

/* The reduce's end: lane l puts its summary row into its slot (a := the coupling back, c := the
 * coupling forward, v := D; the F row from the upward sweep: PF = P, QF = Q; the L row from the
 * downward: PL = Q, QL = P); then lane l's share of storing the warp's 2·(chunks) rows, which are
 * the consecutive rows 2·q0 .. of the next level (B = I). */
CS__BHD void cs__bseg_red_put(int k, int l, double *slot, const double *P, const double *Q,
                              const double *D)
{
    const int kk = k * k;
    for (int e = 0; e < kk; ++e) slot[e] = (l & 1) ? Q[e] : P[e], slot[2 * kk + e] = (l & 1) ? P[e] : Q[e];
    for (int r = 0; r < k; ++r) slot[3 * kk + r] = D[r];
}
CS__BHD void cs__bseg_red_store(int k, int l, size_t q0, size_t P, const double *sm, double *rA,
                                double *rB, double *rC, double *rd)
{
    const int kk = k * k, S = CS_BSEG_SLOT(k);
    const size_t q1 = q0 + CS_BSEG_W / 2 < P ? q0 + CS_BSEG_W / 2 : P;
    const int n = 2 * (int)(q1 - q0); /* rows to store */
    const size_t o = 2 * q0;
    for (int i = l; i < n * kk; i += CS_BSEG_W) {
        const int t = i / kk, e = i - t * kk;
        rA[o * kk + i] = sm[t * S + e];
        rB[o * kk + i] = e % (k + 1) == 0 ? 1.0 : 0.0;
        rC[o * kk + i] = sm[t * S + 2 * kk + e];
    }
    for (int i = l; i < n * k; i += CS_BSEG_W) {
        const int t = i / k, r = i - t * k;
        rd[o * k + i] = sm[t * S + 3 * kk + r];
    }
}

#undef CS__KK
#endif
