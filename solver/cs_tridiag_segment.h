/* Segment summaries of a tridiagonal system: the arithmetic of the warp-chunked hybrid
 * (solver/cs_thomas_large_warp_gpu.cu), shared with its host emulation
 * (solver/cs_thomas_warp_emul.c) so that the CPU tests check the same operations.
 *
 * A segment is a run of rows [f, l] of a tridiagonal system a·x_{i-1} + b·x_i + c·x_{i+1} = d.
 * Eliminating its interior leaves two rows (unit diagonal) in its end unknowns:
 *   F row:  x_f = dF - pF·x_{f-1} - qF·x_l       (x_{f-1}: the previous segment's last row)
 *   L row:  x_l = dL - pL·x_f     - qL·x_{l+1}   (x_{l+1}: the next segment's first row)
 * The summary of a chunk of k >= 2 rows comes from two Thomas sweeps (cs_seg_chunk). Two adjacent
 * summaries combine into the summary of their union (cs_seg_combine): the two middle unknowns
 * u = x_{l1} and v = x_{f2} are eliminated by a 2×2 solve, which is kept (the node) so that,
 * once the union's ends are known, u and v follow (cs_seg_split). The combine is a Schur
 * complement, so it stays diagonally dominant when the system is; summaries of identity rows
 * (a = c = d = 0, b = 1) and of rows cut at a system boundary (a = 0 or c = 0) decouple.
 *
 * Written once for C (double) and for CUDA (templates on the real type T). */
#ifndef CS_TRIDIAG_SEGMENT_H
#define CS_TRIDIAG_SEGMENT_H

#ifdef __CUDACC__
#define CS__SEG_FN template <typename T> __host__ __device__ __forceinline__
#define CS__SEG cs_seg<T>
#define CS__SEG_NODE cs_seg_node<T>
template <typename T> struct cs_seg { T dF, pF, qF, dL, pL, qL; };
template <typename T> struct cs_seg_node { T u0, uf, ul, v0, vf, vl; };
#define CS__SEG_ONE T(1)
#define CS__SEG_UNROLL _Pragma("unroll")
#else
#define CS__SEG_FN static inline
#define CS__SEG cs_seg
#define CS__SEG_NODE cs_seg_node
#define T double
typedef struct { T dF, pF, qF, dL, pL, qL; } cs_seg;
typedef struct { T u0, uf, ul, v0, vf, vl; } cs_seg_node;
#define CS__SEG_ONE 1.0
#define CS__SEG_UNROLL
#endif

/* The summary of rows 0..k-1 (k >= 2) at A, B, C, D (stride 1). Upwards first (the F row),
 * then downwards (the L row); with store != 0 the downward sweep leaves, for the substitution,
 *   x_j = D[j] - A[j]·x_0 - C[j]·x_{j+1}     (j = 1..k-1; A, C, D overwritten, B kept). */
CS__SEG_FN CS__SEG cs_seg_chunk(T *A, const T *B, T *C, T *D, int k, int store)
{
    CS__SEG s;
    /* upwards: x_j = dd - ph·x_{j-1} - ps·x_{k-1}, from the identity x_{k-1} = x_{k-1} */
    T ph = 0, ps = -CS__SEG_ONE, dd = 0;
    CS__SEG_UNROLL
    for (int j = k - 2; j >= 0; --j) {
        const T inv = CS__SEG_ONE / (B[j] - C[j] * ph);
        ph = A[j] * inv;
        ps = -C[j] * ps * inv;
        dd = (D[j] - C[j] * dd) * inv;
    }
    s.dF = dd, s.pF = ph, s.qF = ps;
    /* downwards: x_j = de - al·x_0 - ga·x_{j+1}, from the identity x_0 = x_0 */
    T al = -CS__SEG_ONE, ga = 0, de = 0;
    CS__SEG_UNROLL
    for (int j = 1; j < k; ++j) {
        const T aj = A[j];
        const T inv = CS__SEG_ONE / (B[j] - aj * ga);
        al = -aj * al * inv;
        ga = C[j] * inv;
        de = (D[j] - aj * de) * inv;
        if (store) A[j] = al, C[j] = ga, D[j] = de;
    }
    s.dL = de, s.pL = al, s.qL = ga;
    return s;
}

/* The rows of a chunk stored by cs_seg_chunk, from its ends x_0 = F and x_{k-1} = L: D[j] = x_j. */
CS__SEG_FN void cs_seg_chunk_subst(const T *A, const T *C, T *D, int k, T F, T L)
{
    T x = L;
    D[k - 1] = L;
    CS__SEG_UNROLL
    for (int j = k - 2; j >= 1; --j) {
        x = D[j] - A[j] * F - C[j] * x;
        D[j] = x;
    }
    D[0] = F;
}

/* The summary of A·B (A's last row just before B's first), and the node for cs_seg_split. */
CS__SEG_FN CS__SEG cs_seg_combine(CS__SEG A, CS__SEG B, CS__SEG_NODE *nd)
{
    /* u = x_{l1} = dL_A - pL_A·x_f1 - qL_A·v,  v = x_{f2} = dF_B - pF_B·u - qF_B·x_l2 */
    const T r = CS__SEG_ONE / (CS__SEG_ONE - A.qL * B.pF);
    nd->u0 = r * (A.dL - A.qL * B.dF), nd->uf = -r * A.pL, nd->ul = r * A.qL * B.qF;
    nd->v0 = r * (B.dF - B.pF * A.dL), nd->vf = r * B.pF * A.pL, nd->vl = -r * B.qF;
    CS__SEG s;
    /* F row: x_f1 = dF_A - pF_A·x_{f1-1} - qF_A·u */
    const T g = CS__SEG_ONE / (CS__SEG_ONE + A.qF * nd->uf);
    s.dF = g * (A.dF - A.qF * nd->u0), s.pF = g * A.pF, s.qF = g * A.qF * nd->ul;
    /* L row: x_l2 = dL_B - pL_B·v - qL_B·x_{l2+1} */
    const T h = CS__SEG_ONE / (CS__SEG_ONE + B.pL * nd->vl);
    s.dL = h * (B.dL - B.pL * nd->v0), s.pL = h * B.pL * nd->vf, s.qL = h * B.qL;
    return s;
}

/* The middle unknowns of a combined segment from its ends: u (A's last), v (B's first). */
CS__SEG_FN void cs_seg_split(const CS__SEG_NODE *nd, T xf, T xl, T *u, T *v)
{
    *u = nd->u0 + nd->uf * xf + nd->ul * xl;
    *v = nd->v0 + nd->vf * xf + nd->vl * xl;
}

#ifndef __CUDACC__
#undef T
#endif
#undef CS__SEG_FN
#undef CS__SEG
#undef CS__SEG_NODE
#undef CS__SEG_ONE
#undef CS__SEG_UNROLL
#endif
