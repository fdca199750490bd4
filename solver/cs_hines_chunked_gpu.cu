/* The "chunked" GPU Hines variant's chunk kernels (the plan, the algorithm and the host emulation
 * that mirrors these kernels operation for operation: cs_hines_chunked_plan.c). One thread per
 * chunk; the 32 chunks of a group are one warp, their interior rows interleaved
 * (row j of lane q at base + j·32 + q) and bottom-aligned, so that every step of the warp's
 * sweeps loads one contiguous 256-byte row (double) for all lanes, however long each chunk is.
 * The template LMAX bounds a chunk's interior: the loops over it are unrolled, so its rows
 * live in registers (P1 issues all loads of a chunk before its dependent chain; P3 keeps the
 * bottom-up elimination in registers for the downward substitution). */
#include <cuda_runtime.h>

#include "cs_hines_chunked_gpu.h"
#include "cs_hines_gpu_impl.h"

template <class T, int LMAX>
__global__ void __launch_bounds__(128) cs__k_chunked_p1(int nchunk, const int4 *__restrict__ chunk, const int2 *__restrict__ group,
                                                        T *d, const T *__restrict__ u, T *rhs, T *__restrict__ ur)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nchunk) return;
    const int4 e = chunk[c];
    const int2 gr = group[c / CS__CHK_LANES];
    const int lane = c % CS__CHK_LANES, m = e.w;
    /* q = 0 is the interior's bottom row (next to b), at group row M - 1 */
    const T *dq = d + gr.x + (long long)(gr.y - 1) * CS__CHK_LANES + lane;
    const T *rq = rhs + gr.x + (long long)(gr.y - 1) * CS__CHK_LANES + lane;
    const T *uq = u + gr.x + (long long)(gr.y - 1) * CS__CHK_LANES + lane;
    T vd[LMAX], vu[LMAX], vr[LMAX];
#pragma unroll
    for (int q = 0; q < LMAX; ++q)
        if (q < m) {
            vd[q] = dq[-(long long)q * CS__CHK_LANES];
            vu[q] = __ldg(uq - (long long)q * CS__CHK_LANES);
            vr[q] = rq[-(long long)q * CS__CHK_LANES];
        }
    T cd = T(0), cr = T(0), G = __ldg(u + e.z), db = T(0), rb = T(0);
#pragma unroll
    for (int q = 0; q < LMAX; ++q)
        if (q < m) {
            const T ek = vu[q], D = vd[q] - cd, R = vr[q] - cr, inv = T(1) / D;
            const T gi = G * inv;
            db += gi * G;
            rb += gi * R;
            const T f = ek * inv;
            cd = f * ek;
            cr = f * R;
            G = -f * G;
        }
    d[e.x] -= cd;
    rhs[e.x] -= cr;
    d[e.y] -= db;
    rhs[e.y] -= rb;
    ur[e.z] = G;
}

template <class T, int LMAX>
__global__ void __launch_bounds__(128) cs__k_chunked_p3(int nchunk, const int4 *__restrict__ chunk, const int2 *__restrict__ group,
                                                        const T *__restrict__ d, const T *__restrict__ u, T *rhs)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nchunk) return;
    const int4 e = chunk[c];
    const int2 gr = group[c / CS__CHK_LANES];
    const int lane = c % CS__CHK_LANES, m = e.w;
    const long long k0 = gr.x + (long long)(gr.y - 1) * CS__CHK_LANES + lane;
    T va[LMAX], vb[LMAX], vu[LMAX];
#pragma unroll
    for (int q = 0; q < LMAX; ++q)
        if (q < m) {
            va[q] = __ldg(d + k0 - (long long)q * CS__CHK_LANES);
            vu[q] = __ldg(u + k0 - (long long)q * CS__CHK_LANES);
            vb[q] = rhs[k0 - (long long)q * CS__CHK_LANES];
        }
    const T xa = rhs[e.x];
    T cd = T(0), cr = __ldg(u + e.z) * rhs[e.y];
#pragma unroll
    for (int q = 0; q < LMAX; ++q)
        if (q < m) {
            const T ek = vu[q], D = va[q] - cd, R = vb[q] - cr, inv = T(1) / D;
            va[q] = ek * inv; /* A: the row's pivot toward the row above */
            vb[q] = R * inv;  /* B */
            cd = va[q] * ek;
            cr = va[q] * R;
        }
    T x = xa;
#pragma unroll
    for (int q = LMAX - 1; q >= 0; --q)
        if (q < m) {
            x = vb[q] - va[q] * x;
            rhs[k0 - (long long)q * CS__CHK_LANES] = x;
        }
}

template <class T>
cudaError_t cs__chunked_launch_p1(const cs__chunked_dev &cd, T *d, const T *u, T *rhs, T *ur, cudaStream_t stream)
{
    if (cd.nchunk == 0) return cudaSuccess;
    const int th = 128, grid = (cd.nchunk + th - 1) / th;
    if (cd.L <= 8) cs__k_chunked_p1<T, 8><<<grid, th, 0, stream>>>(cd.nchunk, cd.chunk, cd.group, d, u, rhs, ur);
    else if (cd.L <= 16) cs__k_chunked_p1<T, 16><<<grid, th, 0, stream>>>(cd.nchunk, cd.chunk, cd.group, d, u, rhs, ur);
    else cs__k_chunked_p1<T, CS__CHK_MAX_L><<<grid, th, 0, stream>>>(cd.nchunk, cd.chunk, cd.group, d, u, rhs, ur);
    return cudaGetLastError();
}

template <class T>
cudaError_t cs__chunked_launch_p3(const cs__chunked_dev &cd, const T *d, const T *u, T *rhs, cudaStream_t stream)
{
    if (cd.nchunk == 0) return cudaSuccess;
    const int th = 128, grid = (cd.nchunk + th - 1) / th;
    if (cd.L <= 8) cs__k_chunked_p3<T, 8><<<grid, th, 0, stream>>>(cd.nchunk, cd.chunk, cd.group, d, u, rhs);
    else if (cd.L <= 16) cs__k_chunked_p3<T, 16><<<grid, th, 0, stream>>>(cd.nchunk, cd.chunk, cd.group, d, u, rhs);
    else cs__k_chunked_p3<T, CS__CHK_MAX_L><<<grid, th, 0, stream>>>(cd.nchunk, cd.chunk, cd.group, d, u, rhs);
    return cudaGetLastError();
}

template cudaError_t cs__chunked_launch_p1<double>(const cs__chunked_dev &, double *, const double *, double *, double *, cudaStream_t);
template cudaError_t cs__chunked_launch_p1<float>(const cs__chunked_dev &, float *, const float *, float *, float *, cudaStream_t);
template cudaError_t cs__chunked_launch_p3<double>(const cs__chunked_dev &, const double *, const double *, double *, cudaStream_t);
template cudaError_t cs__chunked_launch_p3<float>(const cs__chunked_dev &, const float *, const float *, float *, cudaStream_t);
