/* CPU block-tridiagonal solvers (cs_block_thomas_solve_serial/_omp in cs_solver.h): block Thomas
 * with k×k blocks (k = 1..4), each pivot block factorised by LU with partial pivoting inside the
 * block (cs_block_small.h, the same arithmetic as the GPU kernels). The serial solve is the
 * reference of the GPU variants; the OpenMP one runs the same routine over systems, so it is
 * bit-identical to it. */
#include <stddef.h>

#include "cs_block_small.h"
#include "cs_solver.h"

static cs_solver_status cs__block_check(int k, int nsys, int nb, const double *A, const double *B,
                                        const double *C, const double *d)
{
    if (k < 1 || k > CS_BLOCK_MAX_K || nsys < 0 || nb < 1) return CS_SOLVER_ERR_INVALID;
    if (nsys > 0 && (!A || !B || !C || !d)) return CS_SOLVER_ERR_INVALID;
    return CS_SOLVER_OK;
}

cs_solver_status cs_block_thomas_solve_serial(int k, int nsys, int nb, const double *A,
                                              const double *B, double *C, double *d)
{
    cs_solver_status st = cs__block_check(k, nsys, nb, A, B, C, d);
    if (st != CS_SOLVER_OK) return st;
    const size_t kk = (size_t)k * k;
    int sing = 0;
    for (ptrdiff_t s = 0; s < nsys; ++s)
        sing |= cs__blk_thomas_one(k, nb, A + s * nb * kk, B + s * nb * kk, C + s * nb * kk,
                                   d + s * nb * k, kk, (size_t)k, 1);
    return sing ? CS_SOLVER_ERR_SINGULAR : CS_SOLVER_OK;
}

cs_solver_status cs_block_thomas_solve_omp(int k, int nsys, int nb, const double *A,
                                           const double *B, double *C, double *d)
{
    cs_solver_status st = cs__block_check(k, nsys, nb, A, B, C, d);
    if (st != CS_SOLVER_OK) return st;
    const size_t kk = (size_t)k * k;
    int sing = 0;
#pragma omp parallel for schedule(static) reduction(| : sing) if ((ptrdiff_t)nsys * nb >= 1024)
    for (ptrdiff_t s = 0; s < nsys; ++s)
        sing |= cs__blk_thomas_one(k, nb, A + s * nb * kk, B + s * nb * kk, C + s * nb * kk,
                                   d + s * nb * k, kk, (size_t)k, 1);
    return sing ? CS_SOLVER_ERR_SINGULAR : CS_SOLVER_OK;
}
