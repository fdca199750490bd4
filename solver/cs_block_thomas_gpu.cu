/* GPU batched block-tridiagonal solvers (cs_block_thomas_gpu.h): one thread per system, block
 * Thomas with the CPU reference's arithmetic (cs_block_small.h), k a template parameter so the
 * k×k loops unroll and the pivot block stays in registers. The layout only changes the strides:
 * Flat (ld = 1) or Full-Interleaved (ld = nsys). */
#include <cuda_runtime.h>
#include <math_constants.h>
#include <math.h>

#include "cs_block_small.h"
#include "cs_block_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

namespace {

template <int K>
__global__ void __launch_bounds__(128)
block_thomas_kernel(int nsys, int nb, bool interleaved, const double *__restrict__ A,
                    const double *__restrict__ B, double *__restrict__ C, double *__restrict__ d)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= nsys) return;
    const size_t kk = (size_t)K * K;
    int sing;
    if (interleaved)
        sing = cs__blk_thomas_one(K, nb, A + s, B + s, C + s, d + s, kk * nsys, (size_t)K * nsys,
                                  (size_t)nsys);
    else
        sing = cs__blk_thomas_one(K, nb, A + s * nb * kk, B + s * nb * kk, C + s * nb * kk,
                                  d + (size_t)s * nb * K, kk, (size_t)K, 1);
    /* a singular pivot block: the whole system's solution becomes NaN, never silently wrong
     * (only on that path: no cost to a regular solve) */
    if (sing)
        for (size_t r = 0; r < (size_t)nb * K; ++r)
            d[interleaved ? r * nsys + s : (size_t)s * nb * K + r] = CUDART_NAN;
}

cs_solver_status launch(int k, int nsys, int nb, bool il, const double *A, const double *B,
                        double *C, double *d)
{
    const dim3 grid((nsys + 127) / 128), block(128);
    switch (k) {
    case 1: block_thomas_kernel<1><<<grid, block>>>(nsys, nb, il, A, B, C, d); break;
    case 2: block_thomas_kernel<2><<<grid, block>>>(nsys, nb, il, A, B, C, d); break;
    case 3: block_thomas_kernel<3><<<grid, block>>>(nsys, nb, il, A, B, C, d); break;
    default: block_thomas_kernel<4><<<grid, block>>>(nsys, nb, il, A, B, C, d); break;
    }
    CS__TG_CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}

const char *const k_names[] = {
#define CS__BLOCK_GPU_NAME(e, name, layout) name,
    CS_BLOCK_GPU_VARIANT_LIST(CS__BLOCK_GPU_NAME)
#undef CS__BLOCK_GPU_NAME
};

} // namespace

extern "C" const char *cs_block_gpu_variant_name(cs_block_gpu_variant v)
{
    return ((int)v >= 0 && v < CS_BLOCK_GPU_NVARIANTS) ? k_names[v] : NULL;
}

extern "C" cs_solver_status cs_block_thomas_gpu_solve_d(cs_block_gpu_variant v, int k, int nsys,
                                                        int nb, const double *A, const double *B,
                                                        double *C, double *d, cs_thomas_gpu_mem mem)
{
    if ((int)v < 0 || v >= CS_BLOCK_GPU_NVARIANTS) CS__TG_INVALID("block: unknown variant %d", (int)v);
    if (k < 1 || k > CS_BLOCK_MAX_K) CS__TG_INVALID("block: k = %d outside 1..%d", k, CS_BLOCK_MAX_K);
    if (nsys < 0 || nb < 1) CS__TG_INVALID("block: bad batch shape nsys=%d nb=%d", nsys, nb);
    if (nsys == 0) return CS_SOLVER_OK;
    if (!A || !B || !C || !d) CS__TG_INVALID("block: NULL array");
    const bool il = (v == CS_BLOCK_GPU_INTERLEAVED);
    if (mem == CS_THOMAS_GPU_DEVICE_PTRS) return launch(k, nsys, nb, il, A, B, C, d);
    if (mem != CS_THOMAS_GPU_HOST_PTRS) CS__TG_INVALID("block: bad memory flag %d", (int)mem);
    const size_t nblk = (size_t)nsys * nb * k * k, nvec = (size_t)nsys * nb * k;
    double *buf = NULL;
    cs_solver_status st = CS_SOLVER_OK;
    cudaError_t e = cudaMalloc((void **)&buf, (3 * nblk + nvec) * sizeof(double));
    if (e == cudaSuccess) e = cudaMemcpy(buf, A, nblk * sizeof(double), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(buf + nblk, B, nblk * sizeof(double), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(buf + 2 * nblk, C, nblk * sizeof(double), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(buf + 3 * nblk, d, nvec * sizeof(double), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) st = cs__thomas_cuda_fail(e, __FILE__, __LINE__, "block: copy in");
    if (st == CS_SOLVER_OK) st = launch(k, nsys, nb, il, buf, buf + nblk, buf + 2 * nblk, buf + 3 * nblk);
    if (st == CS_SOLVER_OK) {
        e = cudaMemcpy(C, buf + 2 * nblk, nblk * sizeof(double), cudaMemcpyDeviceToHost);
        if (e == cudaSuccess) e = cudaMemcpy(d, buf + 3 * nblk, nvec * sizeof(double), cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) st = cs__thomas_cuda_fail(e, __FILE__, __LINE__, "block: copy out");
    }
    if (st == CS_SOLVER_OK) { /* host pointers: a singular pivot block left NaN (the kernel) */
        double acc = 0.0;
        for (size_t i = 0; i < nvec; ++i) acc += d[i] * 0.0;
        if (!isfinite(acc))
            st = cs__thomas_gpu_fail(CS_SOLVER_ERR_SINGULAR, __FILE__, __LINE__,
                                     "block: a singular pivot block (the solution is NaN)", NULL);
    }
    if (buf) cudaFree(buf);
    return st;
}
