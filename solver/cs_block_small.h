/* Private to the block-tridiagonal solvers: dense k×k helpers (k <= CS_BLOCK_MAX_K), shared by
 * the C reference (cs_block_thomas_cpu.c) and the CUDA kernels (cs_block_thomas_gpu.cu), so both
 * do the same arithmetic. Blocks are row-major; `ld` is the distance between two consecutive
 * elements of a block in memory (1 for the Flat layout, nsys for the interleaved one), so one
 * code serves both layouts. No CUDA header needed. */
#ifndef CS_BLOCK_SMALL_H
#define CS_BLOCK_SMALL_H

#include <stddef.h>

#ifdef __CUDACC__
#define CS__BHD static __host__ __device__ __forceinline__
#else
#define CS__BHD static inline
#endif

#define CS_BLOCK_MAX_K 4

/* Unroll the k×k loops of the LU and the forward step fully on the GPU (k is a compile-time
 * constant there): a loop left rolled indexes the k×k arrays at run time, which puts them in
 * local memory (cs__blk_lu_solve is left to the compiler: unrolled too, it moved the callers'
 * arrays to local memory; measured with nvcc -Xptxas -v for sm_90, bench/NOTES.md). */
#ifdef __CUDACC__
#define CS__BUNROLL _Pragma("unroll")
#else
#define CS__BUNROLL
#endif

/* In place: M (k×k, contiguous, row-major) becomes its LU factors with partial pivoting, piv[r]
 * the row swapped into r. Returns 0, or 1 for a zero pivot (M singular). */
CS__BHD int cs__blk_lu(int k, double *M, int *piv)
{
    CS__BUNROLL
    for (int j = 0; j < k; ++j) {
        int p = j;
        double best = M[j * k + j] < 0 ? -M[j * k + j] : M[j * k + j];
        CS__BUNROLL
        for (int r = j + 1; r < k; ++r) {
            const double v = M[r * k + j] < 0 ? -M[r * k + j] : M[r * k + j];
            if (v > best) best = v, p = r;
        }
        piv[j] = p;
        /* the swap with constant indices (r == p tested per row), so that M stays in registers on
         * the GPU (an index known only at run time puts the array in local memory) */
        CS__BUNROLL
        for (int r = j + 1; r < k; ++r)
            if (r == p)
                CS__BUNROLL
                for (int c = 0; c < k; ++c) {
                    const double t = M[j * k + c];
                    M[j * k + c] = M[r * k + c];
                    M[r * k + c] = t;
                }
        if (M[j * k + j] == 0.0) return 1;
        const double inv = 1.0 / M[j * k + j];
        CS__BUNROLL
        for (int r = j + 1; r < k; ++r) {
            const double l = M[r * k + j] * inv;
            M[r * k + j] = l;
            CS__BUNROLL
            for (int c = j + 1; c < k; ++c) M[r * k + c] -= l * M[j * k + c];
        }
    }
    return 0;
}

/* x (k values, stride ld) := M^-1 x with M's LU factors from cs__blk_lu. */
CS__BHD void cs__blk_lu_solve(int k, const double *LU, const int *piv, double *x, size_t ld)
{
    for (int j = 0; j < k; ++j) /* constant indices, as in cs__blk_lu */
        for (int r = j + 1; r < k; ++r)
            if (piv[j] == r) {
                const double t = x[j * ld];
                x[j * ld] = x[r * ld];
                x[r * ld] = t;
            }
    for (int r = 1; r < k; ++r)
        for (int c = 0; c < r; ++c) x[r * ld] -= LU[r * k + c] * x[c * ld];
    for (int r = k - 1; r >= 0; --r) {
        for (int c = r + 1; c < k; ++c) x[r * ld] -= LU[r * k + c] * x[c * ld];
        x[r * ld] /= LU[r * k + r];
    }
}

/* One block row of the forward sweep. In: B (k×k at stride ld), A (at stride ld, or NULL for the
 * first row), the previous row's C' (cp, stride ld) and d' (dp, stride ld). Out: C (stride ld)
 * := C' = M^-1 C (C may be NULL for the last row), d (stride ld) := d' = M^-1 (d - A d'), with
 * M = B - A C'. Returns 1 for a singular M. */
CS__BHD int cs__blk_forward(int k, const double *A, const double *B, double *C, double *d,
                            const double *cp, const double *dp, size_t ld)
{
    double M[CS_BLOCK_MAX_K * CS_BLOCK_MAX_K];
    int piv[CS_BLOCK_MAX_K];
    CS__BUNROLL
    for (int r = 0; r < k; ++r)
        CS__BUNROLL
        for (int c = 0; c < k; ++c) {
            double m = B[(size_t)(r * k + c) * ld];
            if (A)
                CS__BUNROLL
                for (int t = 0; t < k; ++t)
                    m -= A[(size_t)(r * k + t) * ld] * cp[(size_t)(t * k + c) * ld];
            M[r * k + c] = m;
        }
    if (A)
        CS__BUNROLL
        for (int r = 0; r < k; ++r) {
            double v = d[(size_t)r * ld];
            CS__BUNROLL
            for (int t = 0; t < k; ++t) v -= A[(size_t)(r * k + t) * ld] * dp[(size_t)t * ld];
            d[(size_t)r * ld] = v;
        }
    if (cs__blk_lu(k, M, piv)) return 1; /* d and C of this row left unsolved */
    cs__blk_lu_solve(k, M, piv, d, ld);
    if (C)
        CS__BUNROLL
        for (int c = 0; c < k; ++c) cs__blk_lu_solve(k, M, piv, C + (size_t)c * ld, (size_t)k * ld);
    return 0;
}

/* x_i := d'_i - C'_i x_{i+1} (d holds d'_i and receives x_i; x1 = x_{i+1}). */
CS__BHD void cs__blk_backward(int k, const double *cp, double *d, const double *x1, size_t ld)
{
    CS__BUNROLL
    for (int r = 0; r < k; ++r) {
        double v = d[(size_t)r * ld];
        CS__BUNROLL
        for (int t = 0; t < k; ++t) v -= cp[(size_t)(r * k + t) * ld] * x1[(size_t)t * ld];
        d[(size_t)r * ld] = v;
    }
}

/* Block Thomas on one system of nb block rows; block row i's blocks at A, B, C + i·bs and its
 * vectors at d + i·vs (elements at stride ld). A of row 0 and C of row nb-1 are never read.
 * C is overwritten with C', d with the solution; A and B are read only. Returns 1 when a pivot
 * block is singular (all rows are still processed). */
CS__BHD int cs__blk_thomas_one(int k, int nb, const double *A, const double *B, double *C,
                               double *d, size_t bs, size_t vs, size_t ld)
{
    int sing = 0;
    for (int i = 0; i < nb; ++i)
        sing |= cs__blk_forward(k, i ? A + i * bs : NULL, B + i * bs, i < nb - 1 ? C + i * bs : NULL,
                                d + i * vs, i ? C + (i - 1) * bs : NULL, i ? d + (i - 1) * vs : NULL, ld);
    for (int i = nb - 2; i >= 0; --i) cs__blk_backward(k, C + i * bs, d + i * vs, d + (i + 1) * vs, ld);
    return sing;
}

#endif
