/* CPU chunked hybrid for one large block-tridiagonal system, or a few
 * (cs_block_thomas_solve_chunked_omp in cs_solver.h): the reference of the GPU's
 * (cs_block_large_gpu.cu), with the same levels and the same arithmetic (cs_block_segment.h).
 *
 * A level of m block rows (systems of nb rows; the batch is one system whose couplings across
 * system boundaries are cut) with m > CS_BSEG_BASE is cut into P = m / K chunks (K = CS_BSEG_K,
 * the last one takes the K..2K-1 remaining rows); each chunk's two end rows form block rows 2q
 * and 2q+1 of the next level (2P rows); after that level is solved, each chunk substitutes its
 * interior (OpenMP over chunks). A level of at most CS_BSEG_BASE rows: block Thomas per system.
 * The result does not depend on the thread count. */
#include <stdlib.h>

#include "cs_block_segment.h"
#include "cs_solver.h"

static int cs__blevel(int k, size_t m, size_t nb, const double *A, const double *B, double *C,
                      double *d, cs_solver_status *st)
{
    const size_t kk = (size_t)k * k;
    if (m <= CS_BSEG_BASE) {
        int sing = 0;
        for (size_t s = 0; s < m / nb; ++s)
            sing |= cs__blk_thomas_one(k, (int)nb, A + s * nb * kk, B + s * nb * kk, C + s * nb * kk,
                                       d + s * nb * k, kk, (size_t)k, 1);
        return sing;
    }
    const size_t K = CS_BSEG_K, P = m / K, mr = 2 * P;
    double *red = malloc((3 * mr * kk + mr * (size_t)k) * sizeof *red);
    if (!red) {
        *st = CS_SOLVER_ERR_NOMEM;
        return 0;
    }
    double *rA = red, *rB = red + mr * kk, *rC = red + 2 * mr * kk, *rd = red + 3 * mr * kk;
    int sing = 0;
#pragma omp parallel for schedule(static) reduction(| : sing)
    for (ptrdiff_t q = 0; q < (ptrdiff_t)P; ++q) {
        const size_t g0 = (size_t)q * K, len = (q == (ptrdiff_t)P - 1) ? m - g0 : K;
        sing |= cs__bseg_chunk(k, g0, (int)len, nb, A, B, C, d, rd + 2 * q * k, rA + 2 * q * kk,
                               rC + 2 * q * kk, rd + (2 * q + 1) * k, rA + (2 * q + 1) * kk,
                               rC + (2 * q + 1) * kk);
        for (size_t e = 0; e < 2 * kk; ++e) rB[2 * q * kk + e] = (e % kk) % (k + 1) == 0 ? 1.0 : 0.0;
    }
    sing |= cs__blevel(k, mr, mr, rA, rB, rC, rd, st);
#pragma omp parallel for schedule(static) reduction(| : sing)
    for (ptrdiff_t q = 0; q < (ptrdiff_t)P; ++q) {
        const size_t g0 = (size_t)q * K, len = (q == (ptrdiff_t)P - 1) ? m - g0 : K;
        sing |= cs__bseg_subst(k, g0, (int)len, nb, A, B, C, d, rd + 2 * q * k, rd + (2 * q + 1) * k);
    }
    free(red);
    return sing;
}

cs_solver_status cs_block_thomas_solve_chunked_omp(int k, int nsys, int nb, const double *A,
                                                   const double *B, double *C, double *d)
{
    if (k < 1 || k > CS_BLOCK_MAX_K || nsys < 0 || nb < 1) return CS_SOLVER_ERR_INVALID;
    if (nsys == 0) return CS_SOLVER_OK;
    if (!A || !B || !C || !d) return CS_SOLVER_ERR_INVALID;
    cs_solver_status st = CS_SOLVER_OK;
    const int sing = cs__blevel(k, (size_t)nsys * nb, (size_t)nb, A, B, C, d, &st);
    if (st != CS_SOLVER_OK) return st;
    return sing ? CS_SOLVER_ERR_SINGULAR : CS_SOLVER_OK;
}
