/* The GPU block-tridiagonal API (cs_block_thomas_gpu.h) when the library is built without CUDA:
 * the names work, the solve answers CS_SOLVER_ERR_UNAVAILABLE. With CUDA this file compiles to
 * nothing (cs_block_thomas_gpu.cu defines the API). */
#ifndef CS_HAVE_CUDA

#include <stddef.h>

#include "cs_block_thomas_gpu.h"

static const char *const cs__block_stub_names[] = {
#define CS__BLOCK_GPU_NAME(e, name, layout) name,
    CS_BLOCK_GPU_VARIANT_LIST(CS__BLOCK_GPU_NAME)
#undef CS__BLOCK_GPU_NAME
};

const char *cs_block_gpu_variant_name(cs_block_gpu_variant v)
{
    return ((int)v >= 0 && v < CS_BLOCK_GPU_NVARIANTS) ? cs__block_stub_names[v] : NULL;
}

cs_solver_status cs_block_thomas_gpu_solve_d(cs_block_gpu_variant v, int k, int nsys, int nb,
                                             const double *A, const double *B, double *C,
                                             double *d, cs_thomas_gpu_mem mem)
{
    (void)v, (void)k, (void)nsys, (void)nb, (void)A, (void)B, (void)C, (void)d, (void)mem;
    return CS_SOLVER_ERR_UNAVAILABLE;
}

cs_solver_status cs_block_thomas_gpu_chunked_d(int k, int nsys, int nb, const double *A,
                                               const double *B, double *C, double *d,
                                               cs_thomas_gpu_mem mem)
{
    (void)k, (void)nsys, (void)nb, (void)A, (void)B, (void)C, (void)d, (void)mem;
    return CS_SOLVER_ERR_UNAVAILABLE;
}

size_t cs_block_thomas_gpu_chunked_workspace(int k, int nsys, int nb)
{
    (void)k, (void)nsys, (void)nb;
    return 0;
}

cs_solver_status cs_block_thomas_gpu_chunked_ws_d(int k, int nsys, int nb, const double *A,
                                                  const double *B, double *C, double *d,
                                                  void *work, size_t work_bytes, void *stream)
{
    (void)k, (void)nsys, (void)nb, (void)A, (void)B, (void)C, (void)d, (void)work, (void)work_bytes;
    (void)stream;
    return CS_SOLVER_ERR_UNAVAILABLE;
}

#else
typedef int cs__block_thomas_gpu_stub_unused; /* ISO C forbids an empty translation unit */
#endif
