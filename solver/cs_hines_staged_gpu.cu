/* The "staged" GPU Hines kernel: one thread per cell, a warp per group of cells of one structure
 * (layout and schedule: cs_hines_staged.c, which also emulates this kernel on the host).
 *
 * Why: the solve's compulsory traffic is d, u, rhs read and x written once (32 B per row in
 * double). The per-cell "interleaved" kernel moves twice that (the eliminated rows go to device
 * memory and come back), and the shared-memory kernels ("fine", "warp") hold ~24 medium-high cells
 * per multiprocessor whose level-by-level chains leave it latency-bound (bench/NOTES.md). Here
 * the eliminated rows (a, b: 16 B per row) stay in shared memory, the inputs stream in through a
 * cp.async ring a few steps ahead, and each thread runs CS__STG_STREAMS independent rows per step
 * so that their division chains overlap: one warp per multiprocessor has to keep the memory busy.
 * A block is one warp; the grid is persistent, and a warp stages the first steps of its next group
 * while it runs the forward sweep of the current one. */
#include <cuda_pipeline.h>

#include "cs_hines_gpu_impl.h"
#include "cs_hines_staged_gpu.h"

#define S CS__STG_STREAMS
#define RING CS__STG_RING

__device__ __forceinline__ int cs__stg_row(const int4 &a, const int4 &b, int s)
{
    return s == 0 ? a.x : s == 1 ? a.z : s == 2 ? b.x : b.z;
}
__device__ __forceinline__ int cs__stg_word(const int4 &a, const int4 &b, int s)
{
    return s == 0 ? a.y : s == 1 ? a.w : s == 2 ? b.y : b.w;
}

/* 1/x without a slow path (a branch per row would keep the four rows' chains from overlapping):
 * the hardware estimate, then one cubic Newton step in double (about 2^-22 → 1 ulp), one
 * quadratic step in float. Inputs are diagonals of a diagonally dominant matrix: normal numbers. */
__device__ __forceinline__ double cs__stg_rcp(double x)
{
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
    const double e = fma(-x, r, 1.0);
    return fma(r, fma(e, e, e), r);
}
__device__ __forceinline__ float cs__stg_rcp(float x)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return fmaf(r, fmaf(-x, r, 1.0f), r);
}

/* copy one step's rows (d, u, rhs of the group's C cells: one contiguous segment each) into a
 * ring slot laid out [slot][array][cell], 16 bytes per copy, then commit (empty when past the end) */
template <class T, int C>
__device__ __forceinline__ void cs__stg_issue(T *slot, const int4 &a, const int4 &b, bool valid, long long base,
                                              const T *d, const T *u, const T *rhs, int lane)
{
    constexpr int PER = 16 / sizeof(T), CH = C / PER, N = S * 3 * CH;
    if (valid)
#pragma unroll
        for (int q0 = 0; q0 < N; q0 += 32) {
            const int q = q0 + lane;
            const int s = q / (3 * CH), r = q - s * 3 * CH, k = r / CH, c = r - k * CH;
            const int row = cs__stg_row(a, b, s);
            if (q < N && row >= 0) {
                const T *src = (k == 0 ? d : k == 1 ? u : rhs) + base + (long long)row * C + c * PER;
                __pipeline_memcpy_async(slot + (s * 3 + k) * C + c * PER, src, 16);
            }
        }
    __pipeline_commit();
}

template <class T, int C>
__global__ void __launch_bounds__(32) cs__k_staged(cs__staged_dev sd, T *d, const T *__restrict__ u, T *rhs)
{
    extern __shared__ __align__(16) unsigned char cs__smem_stg[];
    T *A = reinterpret_cast<T *>(cs__smem_stg), *B = A + (size_t)sd.rows * C, *ring = B + (size_t)sd.rows * C;
    const int lane = threadIdx.x;
    const bool on = lane < C;
    int g = blockIdx.x;
    int2 ty = sd.stype[sd.group_type[g]];
    const int4 *sc = sd.sched + 2 * (size_t)ty.x;
    int nsteps = ty.y;
    long long base = sd.group_base[g];
    for (int t = 0; t < RING - 1; ++t)
        cs__stg_issue<T, C>(ring + t * S * 3 * C, sc[2 * t], sc[2 * t + 1], t < nsteps, base, d, u, rhs, lane);
    for (;;) {
        /* backward sweep: step t's inputs were issued RING-1 steps ago */
        T cd[S], cr[S], xc[S];
#pragma unroll
        for (int s = 0; s < S; ++s) cd[s] = cr[s] = xc[s] = T(0);
        int4 c0 = __ldg(sc), c1 = __ldg(sc + 1);
        int4 i0 = make_int4(-1, 0, -1, 0), i1 = i0;
        if (RING - 1 < nsteps) { i0 = __ldg(sc + 2 * (RING - 1)); i1 = __ldg(sc + 2 * (RING - 1) + 1); }
        int ri = 0;
        for (int t = 0; t < nsteps; ++t) {
            __pipeline_wait_prior(RING - 2);
            __syncwarp(); /* step t's copies visible to every lane; the slot refilled below is free */
            const int wi = ri == 0 ? RING - 1 : ri - 1;
            cs__stg_issue<T, C>(ring + wi * S * 3 * C, i0, i1, t + RING - 1 < nsteps, base, d, u, rhs, lane);
            int4 n0 = c0, n1 = c1;
            if (t + 1 < nsteps) { n0 = __ldg(sc + 2 * (t + 1)); n1 = __ldg(sc + 2 * (t + 1) + 1); }
            if (t + RING < nsteps) { i0 = __ldg(sc + 2 * (t + RING)); i1 = __ldg(sc + 2 * (t + RING) + 1); }
            if (on) {
                /* in three phases so that the four rows' chains overlap: every load, then the
                 * arithmetic, then the stores. Loads never meet this step's stores: a row's
                 * children are in earlier steps, its parent in a later one. */
                const T *rg = ring + ri * S * 3 * C;
                T dd[S], uu[S], rr[S], ga[S], gb[S];
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    const int kr = max(cs__stg_row(c0, c1, s), 0) * C + lane;
                    dd[s] = rg[(s * 3) * C + lane];
                    uu[s] = rg[(s * 3 + 1) * C + lane];
                    rr[s] = rg[(s * 3 + 2) * C + lane];
                    ga[s] = A[kr]; /* the gathered sums where the flag says so, else unused */
                    gb[s] = B[kr];
                }
                T av[S], bv[S], cdn[S], crn[S];
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    const int f = cs__stg_word(c0, c1, s);
                    const T d1 = dd[s] + ((f & CS__STG_CARRY_IN) ? cd[s] : T(0)) + ((f & CS__STG_GATHER_IN) ? ga[s] : T(0));
                    const T r1 = rr[s] + ((f & CS__STG_CARRY_IN) ? cr[s] : T(0)) + ((f & CS__STG_GATHER_IN) ? gb[s] : T(0));
                    const T inv = cs__stg_rcp(d1);
                    av[s] = uu[s] * inv;
                    bv[s] = r1 * inv;
                    cdn[s] = -av[s] * uu[s];
                    crn[s] = -av[s] * r1;
                    if (f & CS__STG_CARRY_OUT) { cd[s] = cdn[s]; cr[s] = crn[s]; }
                }
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    const int row = cs__stg_row(c0, c1, s), w = cs__stg_word(c0, c1, s), f = w & 0xff;
                    if (row < 0) continue;
                    const int kr = row * C + lane, kp = (w >> 8) * C + lane;
                    A[kr] = av[s];
                    B[kr] = bv[s];
                    if (f & (CS__STG_ROOT | CS__STG_CARRY_OUT)) continue;
                    /* gathers one by one: two rows of a step may share a parent */
                    if (f & CS__STG_GATHER_FIRST) { A[kp] = cdn[s]; B[kp] = crn[s]; }
                    else { A[kp] += cdn[s]; B[kp] += crn[s]; }
                }
            }
            c0 = n0; c1 = n1;
            ri = ri + 1 == RING ? 0 : ri + 1;
        }
        /* stage the next group's first steps while the forward sweep runs (the ring is free) */
        const int g2 = g + gridDim.x;
        const int4 *sc2 = sc;
        int nsteps2 = 0;
        long long base2 = 0;
        __syncwarp();
        if (g2 < sd.ngroup) {
            const int2 ty2 = sd.stype[sd.group_type[g2]];
            sc2 = sd.sched + 2 * (size_t)ty2.x;
            nsteps2 = ty2.y;
            base2 = sd.group_base[g2];
            for (int t = 0; t < RING - 1; ++t)
                cs__stg_issue<T, C>(ring + t * S * 3 * C, sc2[2 * t], sc2[2 * t + 1], t < nsteps2, base2, d, u, rhs, lane);
        }
        /* forward sweep: the steps in reverse; x goes to device memory once */
        c0 = __ldg(sc + 2 * (nsteps - 1)); c1 = __ldg(sc + 2 * (nsteps - 1) + 1);
        for (int t = nsteps - 1; t >= 0; --t) {
            int4 n0 = c0, n1 = c1;
            if (t > 0) { n0 = __ldg(sc + 2 * (t - 1)); n1 = __ldg(sc + 2 * (t - 1) + 1); }
            if (on) {
                T av[S], bv[S], xp[S];
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    const int kr = max(cs__stg_row(c0, c1, s), 0) * C + lane;
                    av[s] = A[kr];
                    bv[s] = B[kr];
                    xp[s] = B[(cs__stg_word(c0, c1, s) >> 8) * C + lane]; /* the parent's x when gathered */
                }
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    const int row = cs__stg_row(c0, c1, s), w = cs__stg_word(c0, c1, s), f = w & 0xff;
                    const T x = (f & CS__STG_ROOT) ? bv[s] : bv[s] - av[s] * ((f & CS__STG_CARRY_OUT) ? xc[s] : xp[s]);
                    xc[s] = x;
                    if (row < 0) continue;
                    const int kr = row * C + lane;
                    if (f & CS__STG_GATHER_IN) B[kr] = x;
                    rhs[base + kr] = x;
                }
            }
            c0 = n0; c1 = n1;
        }
        if (g2 >= sd.ngroup) break;
        g = g2; sc = sc2; nsteps = nsteps2; base = base2;
    }
}

template <class T, int C>
static cudaError_t cs__stg_run(const cs__staged_dev &sd, T *d, const T *u, T *rhs, cudaStream_t stream)
{
    const size_t bytes = cs__staged_warp_bytes(sd.rows, C, sizeof(T));
    int per_sm = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cs__k_staged<T, C>, 32, bytes);
    if (e != cudaSuccess) return e;
    if (per_sm < 1) return cudaErrorInvalidConfiguration;
    long long grid = (long long)per_sm * sd.nsm;
    if (grid > sd.ngroup) grid = sd.ngroup;
    cs__k_staged<T, C><<<(int)grid, 32, bytes, stream>>>(sd, d, u, rhs);
    return cudaGetLastError();
}

template <class T>
cudaError_t cs__staged_launch(const cs__staged_dev &sd, T *d, const T *u, T *rhs, cudaStream_t stream)
{
    switch (sd.cells) {
    case 32: return cs__stg_run<T, 32>(sd, d, u, rhs, stream);
    case 16: return cs__stg_run<T, 16>(sd, d, u, rhs, stream);
    case 8: return cs__stg_run<T, 8>(sd, d, u, rhs, stream);
    case 4: return cs__stg_run<T, 4>(sd, d, u, rhs, stream);
    default: return cudaErrorInvalidValue;
    }
}
template cudaError_t cs__staged_launch<double>(const cs__staged_dev &, double *, const double *, double *, cudaStream_t);
template cudaError_t cs__staged_launch<float>(const cs__staged_dev &, float *, const float *, float *, cudaStream_t);

template <int C>
static cudaError_t cs__stg_attrs(int rows)
{
    cudaError_t e = cudaFuncSetAttribute(cs__k_staged<double, C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)cs__staged_warp_bytes(rows, C, sizeof(double)));
    if (e != cudaSuccess) return e;
    return cudaFuncSetAttribute(cs__k_staged<float, C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)cs__staged_warp_bytes(rows, C, sizeof(float)));
}

cudaError_t cs__staged_set_attrs(int cells, int rows)
{
    switch (cells) {
    case 32: return cs__stg_attrs<32>(rows);
    case 16: return cs__stg_attrs<16>(rows);
    case 8: return cs__stg_attrs<8>(rows);
    case 4: return cs__stg_attrs<4>(rows);
    default: return cudaErrorInvalidValue;
    }
}
