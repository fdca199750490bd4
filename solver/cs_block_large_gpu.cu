/* GPU chunked hybrid for one large block-tridiagonal system, or a few
 * (cs_block_thomas_gpu_chunked_d in cs_block_thomas_gpu.h): the levels of the CPU reference
 * (cs_block_chunked_cpu.c) with its arithmetic (cs_block_segment.h), one thread per chunk of 16
 * block rows, k a template parameter so the k×k loops unroll. A level of m > 64 block rows:
 * reduce (each chunk's two end rows -> the next level, 2·floor(m/16) rows), the next level,
 * substitute; a level of at most 64 rows: block Thomas, one thread per system. Flat layout,
 * double. The workspace (the reduced levels and a singular flag) is allocated per call. A
 * singular pivot block sets the flag; a last kernel then fills d with NaN (only on that path). */
#include <cuda_runtime.h>
#include <math_constants.h>
#include <math.h>

#include "cs_block_segment.h"
#include "cs_block_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

namespace {

constexpr int TPB = 128, MAXL = 16;

template <int KB>
__global__ void __launch_bounds__(TPB)
bchunk_reduce_kernel(size_t m, size_t nb, const double *__restrict__ A, const double *__restrict__ B,
                     const double *__restrict__ C, const double *__restrict__ d, double *rA,
                     double *rB, double *rC, double *rd, int *sing)
{
    const size_t P = m / CS_BSEG_K, q = (size_t)blockIdx.x * TPB + threadIdx.x;
    if (q >= P) return;
    const size_t g0 = q * CS_BSEG_K, len = (q == P - 1) ? m - g0 : CS_BSEG_K, kk = KB * KB;
    const int s = cs__bseg_chunk(KB, g0, (int)len, nb, A, B, C, d, rd + 2 * q * KB, rA + 2 * q * kk,
                                 rC + 2 * q * kk, rd + (2 * q + 1) * KB, rA + (2 * q + 1) * kk,
                                 rC + (2 * q + 1) * kk);
    for (size_t e = 0; e < 2 * kk; ++e) rB[2 * q * kk + e] = (e % kk) % (KB + 1) == 0 ? 1.0 : 0.0;
    if (s) *sing = 1;
}

template <int KB>
__global__ void __launch_bounds__(TPB)
bchunk_subst_kernel(size_t m, size_t nb, const double *__restrict__ A, const double *__restrict__ B,
                    double *C, double *d, const double *__restrict__ x, int *sing)
{
    const size_t P = m / CS_BSEG_K, q = (size_t)blockIdx.x * TPB + threadIdx.x;
    if (q >= P) return;
    const size_t g0 = q * CS_BSEG_K, len = (q == P - 1) ? m - g0 : CS_BSEG_K;
    if (cs__bseg_subst(KB, g0, (int)len, nb, A, B, C, d, x + 2 * q * KB, x + (2 * q + 1) * KB))
        *sing = 1;
}

/* m <= CS_BSEG_BASE rows, systems of nb rows: block Thomas, one thread per system. */
template <int KB>
__global__ void __launch_bounds__(TPB)
bchunk_base_kernel(size_t m, size_t nb, const double *__restrict__ A, const double *__restrict__ B,
                   double *C, double *d, int *sing)
{
    const size_t s = (size_t)blockIdx.x * TPB + threadIdx.x, kk = KB * KB;
    if (s >= m / nb) return;
    if (cs__blk_thomas_one(KB, (int)nb, A + s * nb * kk, B + s * nb * kk, C + s * nb * kk,
                           d + s * nb * KB, kk, (size_t)KB, 1))
        *sing = 1;
}

__global__ void bchunk_nan_kernel(size_t n, double *d, const int *sing)
{
    if (!*sing) return;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        d[i] = CUDART_NAN;
}

unsigned grid_for(size_t threads) { return (unsigned)((threads + TPB - 1) / TPB); }

/* Doubles of workspace for N block rows (the reduced levels), plus the flag (one double). */
size_t bchunk_elems(int k, size_t N)
{
    size_t tot = 1;
    for (size_t m = N; m > CS_BSEG_BASE;) {
        m = 2 * (m / CS_BSEG_K);
        tot += m * (3 * (size_t)k * k + k);
    }
    return tot;
}

template <int KB>
cs_solver_status bchunk_run(int nsys, int nb, const double *A, const double *B, double *C,
                            double *d, double *work)
{
    const size_t kk = KB * KB, N = (size_t)nsys * nb;
    int *sing = reinterpret_cast<int *>(work);
    CS__TG_CUDA(cudaMemsetAsync(sing, 0, sizeof(int)));
    work += 1;
    const double *lA[MAXL], *lB[MAXL];
    double *lC[MAXL], *ld[MAXL];
    size_t lm[MAXL], ln[MAXL];
    lA[0] = A, lB[0] = B, lC[0] = C, ld[0] = d, lm[0] = N, ln[0] = (size_t)nb;
    int L = 0;
    while (lm[L] > CS_BSEG_BASE) {
        if (L + 1 >= MAXL) CS__TG_INVALID("block chunked: too many levels for %zu rows", N);
        const size_t mr = 2 * (lm[L] / CS_BSEG_K);
        double *rA = work, *rB = rA + mr * kk, *rC = rB + mr * kk, *rd = rC + mr * kk;
        work = rd + mr * KB;
        bchunk_reduce_kernel<KB><<<grid_for(lm[L] / CS_BSEG_K), TPB>>>(lm[L], ln[L], lA[L], lB[L], lC[L],
                                                                      ld[L], rA, rB, rC, rd, sing);
        CS__TG_CUDA(cudaGetLastError());
        ++L;
        lA[L] = rA, lB[L] = rB, lC[L] = rC, ld[L] = rd, lm[L] = mr, ln[L] = mr;
    }
    bchunk_base_kernel<KB><<<grid_for(lm[L] / ln[L]), TPB>>>(lm[L], ln[L], lA[L], lB[L], lC[L], ld[L], sing);
    CS__TG_CUDA(cudaGetLastError());
    for (int l = L - 1; l >= 0; --l) {
        bchunk_subst_kernel<KB><<<grid_for(lm[l] / CS_BSEG_K), TPB>>>(lm[l], ln[l], lA[l], lB[l], lC[l],
                                                                     ld[l], ld[l + 1], sing);
        CS__TG_CUDA(cudaGetLastError());
    }
    bchunk_nan_kernel<<<256, 256>>>(N * KB, d, sing);
    CS__TG_CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}

cs_solver_status bchunk_dispatch(int k, int nsys, int nb, const double *A, const double *B,
                                 double *C, double *d, double *work)
{
    switch (k) {
    case 1: return bchunk_run<1>(nsys, nb, A, B, C, d, work);
    case 2: return bchunk_run<2>(nsys, nb, A, B, C, d, work);
    case 3: return bchunk_run<3>(nsys, nb, A, B, C, d, work);
    default: return bchunk_run<4>(nsys, nb, A, B, C, d, work);
    }
}

} // namespace

extern "C" cs_solver_status cs_block_thomas_gpu_chunked_d(int k, int nsys, int nb, const double *A,
                                                          const double *B, double *C, double *d,
                                                          cs_thomas_gpu_mem mem)
{
    if (k < 1 || k > CS_BLOCK_MAX_K) CS__TG_INVALID("block chunked: k = %d outside 1..%d", k, CS_BLOCK_MAX_K);
    if (nsys < 0 || nb < 1) CS__TG_INVALID("block chunked: bad batch shape nsys=%d nb=%d", nsys, nb);
    if (nsys == 0) return CS_SOLVER_OK;
    if (!A || !B || !C || !d) CS__TG_INVALID("block chunked: NULL array");
    if (mem != CS_THOMAS_GPU_DEVICE_PTRS && mem != CS_THOMAS_GPU_HOST_PTRS)
        CS__TG_INVALID("block chunked: bad memory flag %d", (int)mem);
    const size_t N = (size_t)nsys * nb, nblk = N * k * k, nvec = N * k;
    const size_t wn = bchunk_elems(k, N);
    const bool host = (mem == CS_THOMAS_GPU_HOST_PTRS);
    double *buf = NULL;
    cs_solver_status st = CS_SOLVER_OK;
    cudaError_t e = cudaMalloc((void **)&buf, (wn + (host ? 3 * nblk + nvec : 0)) * sizeof(double));
    if (e != cudaSuccess) return cs__thomas_cuda_fail(e, __FILE__, __LINE__, "block chunked: workspace");
    double *dA = (double *)A, *dB = (double *)B, *dC = C, *dd = d, *work = buf;
    if (host) {
        dA = buf + wn, dB = dA + nblk, dC = dB + nblk, dd = dC + nblk;
        e = cudaMemcpy(dA, A, nblk * sizeof(double), cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemcpy(dB, B, nblk * sizeof(double), cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemcpy(dC, C, nblk * sizeof(double), cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemcpy(dd, d, nvec * sizeof(double), cudaMemcpyHostToDevice);
        if (e != cudaSuccess) st = cs__thomas_cuda_fail(e, __FILE__, __LINE__, "block chunked: copy in");
    }
    if (st == CS_SOLVER_OK) st = bchunk_dispatch(k, nsys, nb, dA, dB, dC, dd, work);
    int sing = 0;
    if (st == CS_SOLVER_OK && host) {
        e = cudaMemcpy(C, dC, nblk * sizeof(double), cudaMemcpyDeviceToHost);
        if (e == cudaSuccess) e = cudaMemcpy(d, dd, nvec * sizeof(double), cudaMemcpyDeviceToHost);
        if (e == cudaSuccess) e = cudaMemcpy(&sing, work, sizeof sing, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) st = cs__thomas_cuda_fail(e, __FILE__, __LINE__, "block chunked: copy out");
    }
    /* device pointers: the workspace is freed after the solve (cudaFree waits for it) */
    e = cudaFree(buf);
    if (st == CS_SOLVER_OK && e != cudaSuccess) st = cs__thomas_cuda_fail(e, __FILE__, __LINE__, "block chunked: free");
    if (st == CS_SOLVER_OK && sing)
        st = cs__thomas_gpu_fail(CS_SOLVER_ERR_SINGULAR, __FILE__, __LINE__,
                                 "block chunked: a singular pivot block (the solution is NaN)", NULL);
    return st;
}
