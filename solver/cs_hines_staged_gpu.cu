/* The "staged" GPU Hines kernel: a warp per group of CS__STG_CELLS (4) cells of one structure,
 * CS__STG_LANES (8) lanes per cell, each lane one row per step of the structure's schedule
 * (layout and schedule: cs_hines_staged.c, which also emulates this kernel on the host).
 *
 * Why: the solve's compulsory traffic is d, u, rhs read and x written once (32 B per row in
 * double). The per-cell "interleaved" kernel moves twice that (the eliminated rows go to device
 * memory and come back), and the shared-memory kernels ("fine", "warp") hold ~24 medium-high cells
 * per multiprocessor whose level-by-level chains leave them latency-bound (bench/NOTES.md). Here
 * the eliminated rows (a, b: 16 B per row) stay in shared memory, the inputs stream in through a
 * cp.async ring several steps ahead, and a cell's lanes run rows of independent subtrees.
 * Occupancy is what sets the speed: the eliminated rows fill shared memory, and each warp is a
 * chain of dependent steps, so the layout is chosen for the most warps per multiprocessor (8 for
 * medium-high in double: 4 cells × 319 rows × 16 B = 20 KB each). Earlier layouts (32 cells of one
 * lane, then 8 cells of 4 lanes, with one or two rows per lane) ran 1-4 warps per multiprocessor
 * and were latency-bound (Nsight Compute, NOTES.md). The code allows S / LANES rows per lane (P).
 * A block is one warp; the grid is persistent, and a warp stages the first steps of its next group
 * while it runs the forward sweep of the current one. */
#include "cs_hines_gpu_impl.h"
#include "cs_hines_staged_gpu.h"

#define S CS__STG_STREAMS
#define C CS__STG_CELLS
#define RING CS__STG_RING

/* 1/x without a slow path (a branch per row would serialise the lanes' flags): the hardware
 * estimate, then one cubic Newton step in double (about 2^-22 → 1 ulp), one quadratic step in
 * float. Inputs are diagonals of a diagonally dominant matrix: normal numbers. */
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

/* A lane's share of staging one slot of a step: the slot's row of d, u, rhs is 3 segments of C
 * values (16-byte chunks, CH per segment); the slot's C lanes copy them, lane j chunks j and j + C.
 * A ring slot is laid out [array][step slot][cell], so that the warp's 32 reads of one array are
 * one contiguous run (no bank conflicts). */
template <class T>
struct cs__stg_copy {
    static constexpr int PER = 16 / sizeof(T), CH = C / PER, N = 3 * CH;
    const T *src[2];      /* the chunk's array at the group's base, chunk offset included */
    unsigned dst[2];      /* shared-memory address within ring slot 0 */
    int nchunk;

    __device__ void init(const T *d, const T *u, const T *rhs, unsigned ring0, int s, int j)
    {
        nchunk = 0;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int q = j + h * C;
            if (q >= N) continue;
            const int k = q / CH, c = q - k * CH;
            src[h] = (k == 0 ? d : k == 1 ? u : rhs) + c * PER;
            dst[h] = ring0 + (unsigned)(((k * S + s) * C + c * PER) * sizeof(T));
            nchunk = h + 1;
        }
    }
    /* copy row `row` (< 0: none) of the group at `base` into ring slot `slot` (not committed) */
    __device__ __forceinline__ void copy(long long base, int row, int slot) const
    {
        if (row < 0) return;
        const long long off = base + (long long)row * C;
#pragma unroll
        for (int h = 0; h < 2; ++h)
            if (h < nchunk)
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst[h] + slot * (unsigned)(S * 3 * C * sizeof(T))),
                             "l"(src[h] + off));
    }
};

__device__ __forceinline__ void cs__stg_commit() { asm volatile("cp.async.commit_group;"); }

/* slots per lane: slot q + h·LANES for h < P, q = lane / C */
#define LANES CS__STG_LANES
#define P (S / LANES)

template <class T>
__global__ void __launch_bounds__(32) cs__k_staged(cs__staged_dev sd, T *d, const T *__restrict__ u, T *rhs)
{
    extern __shared__ __align__(16) unsigned char cs__smem_stg[];
    /* A and B hold rows + 1 rows: an empty slot's lane (and the root's parent) points at the last,
     * which no other lane reads or writes, so its dummy accesses race with nothing. The schedule
     * of the group's structure is staged too: read from device memory every step it missed L1
     * and stalled the warp on L2 latency (a quarter of the samples, NOTES.md). */
    T *A = reinterpret_cast<T *>(cs__smem_stg), *B = A + (size_t)(sd.rows + 1) * C, *ring = B + (size_t)(sd.rows + 1) * C;
    int2 *ssc = reinterpret_cast<int2 *>(ring + RING * S * 3 * C);
    const int lane = threadIdx.x, q = lane / C, j = lane % C; /* lane q of cell j */
    cs__stg_copy<T> cp[P];
#pragma unroll
    for (int h = 0; h < P; ++h) cp[h].init(d, u, rhs, (unsigned)__cvta_generic_to_shared(ring), q + h * LANES, j);
    const int2 *sched = reinterpret_cast<const int2 *>(sd.sched);
    const T *rg0 = ring + q * C + j; /* this lane's first slot's d in ring slot 0 (laid out [k][slot][cell]) */
    const int2 *sc = ssc + q;            /* this lane's first slot of step 0 */
    int g = blockIdx.x, type = sd.group_type[g], nsteps = 0;
    long long base = sd.group_base[g];
    bool staged = false; /* the group's first steps are in the ring already */
    for (;;) {
        if (!staged) { /* a new structure (or the first group): its schedule, then the ring's first steps */
            const int2 ty = sd.stype[type];
            nsteps = ty.y;
            __syncwarp();
            for (int i = lane; i < ty.y * S; i += 32) ssc[i] = __ldg(sched + (size_t)ty.x * S + i);
            __syncwarp();
            for (int t = 0; t < RING - 1; ++t) {
#pragma unroll
                for (int h = 0; h < P; ++h) cp[h].copy(base, t < nsteps ? sc[t * S + h * LANES].x : -1, t);
                cs__stg_commit();
            }
        }
        const int g2 = g + gridDim.x;
        const int type2 = g2 < sd.ngroup ? sd.group_type[g2] : -1;
        const long long base2 = g2 < sd.ngroup ? sd.group_base[g2] : 0;
        /* backward sweep: step t's inputs were issued RING-1 steps ago */
        T cd[P], cr[P];
        int2 cur[P];
#pragma unroll
        for (int h = 0; h < P; ++h) { cd[h] = cr[h] = T(0); cur[h] = sc[h * LANES]; }
        int ri = 0;
        for (int t = 0; t < nsteps; ++t) {
            asm volatile("cp.async.wait_group %0;" ::"n"(RING - 2));
            __syncwarp(); /* step t's copies and the last step's gathers visible; a ring slot freed */
            const int wi = ri == 0 ? RING - 1 : ri - 1;
            int2 nxt[P];
#pragma unroll
            for (int h = 0; h < P; ++h) {
                cp[h].copy(base, t + RING - 1 < nsteps ? sc[(t + RING - 1) * S + h * LANES].x : -1, wi);
                nxt[h] = t + 1 < nsteps ? sc[(t + 1) * S + h * LANES] : cur[h];
            }
            cs__stg_commit();
            /* the lane's P rows in three phases (loads, arithmetic, stores) so that their chains
             * overlap; a row's children are in earlier steps, its parent in a later one */
            int kr[P], kp[P], f[P];
            T dd[P], uu[P], rr[P], ga[P], gb[P];
#pragma unroll
            for (int h = 0; h < P; ++h) {
                const int row = cur[h].x;
                f[h] = cur[h].y & 0xff;
                kr[h] = (row >= 0 ? row : sd.rows) * C + j;
                kp[h] = (row >= 0 && !(f[h] & CS__STG_ROOT) ? cur[h].y >> 8 : sd.rows) * C + j;
                const T *rg = rg0 + ri * S * 3 * C + h * LANES * C;
                dd[h] = rg[0];
                uu[h] = rg[S * C];
                rr[h] = rg[2 * S * C];
                ga[h] = (f[h] & CS__STG_GATHER_IN) ? A[kr[h]] : T(0);
                gb[h] = (f[h] & CS__STG_GATHER_IN) ? B[kr[h]] : T(0);
            }
            T a[P], b[P], cdn[P], crn[P];
#pragma unroll
            for (int h = 0; h < P; ++h) {
                const T d1 = dd[h] + ((f[h] & CS__STG_CARRY_IN) ? cd[h] : T(0)) + ga[h];
                const T r1 = rr[h] + ((f[h] & CS__STG_CARRY_IN) ? cr[h] : T(0)) + gb[h];
                const T inv = cs__stg_rcp(d1);
                a[h] = uu[h] * inv;
                b[h] = r1 * inv;
                cdn[h] = -a[h] * uu[h];
                crn[h] = -a[h] * r1;
            }
#pragma unroll
            for (int h = 0; h < P; ++h) {
                if (cur[h].x >= 0) {
                    A[kr[h]] = a[h];
                    B[kr[h]] = b[h];
                    if (!(f[h] & (CS__STG_ROOT | CS__STG_CARRY_OUT))) { /* no other row of the step has this parent */
                        if (f[h] & CS__STG_GATHER_FIRST) { A[kp[h]] = cdn[h]; B[kp[h]] = crn[h]; }
                        else { A[kp[h]] += cdn[h]; B[kp[h]] += crn[h]; }
                    }
                }
                if (f[h] & CS__STG_CARRY_OUT) { cd[h] = cdn[h]; cr[h] = crn[h]; }
                cur[h] = nxt[h];
            }
            ri = ri + 1 == RING ? 0 : ri + 1;
        }
        /* the next group of the same structure: stage its first steps while the forward sweep
         * runs (the ring is free) */
        __syncwarp();
        staged = type2 == type;
        if (staged)
            for (int t = 0; t < RING - 1; ++t) {
#pragma unroll
                for (int h = 0; h < P; ++h) cp[h].copy(base2, t < nsteps ? sc[t * S + h * LANES].x : -1, t);
                cs__stg_commit();
            }
        /* forward sweep: the steps in reverse; x goes to device memory once */
        T xc[P];
#pragma unroll
        for (int h = 0; h < P; ++h) { xc[h] = T(0); cur[h] = sc[(nsteps - 1) * S + h * LANES]; }
        for (int t = nsteps - 1; t >= 0; --t) {
            int2 nxt[P];
#pragma unroll
            for (int h = 0; h < P; ++h) nxt[h] = t > 0 ? sc[(t - 1) * S + h * LANES] : cur[h];
            __syncwarp(); /* the parents' x of earlier steps visible */
            T x[P];
            int kr[P];
#pragma unroll
            for (int h = 0; h < P; ++h) {
                const int row = cur[h].x, f = cur[h].y & 0xff;
                kr[h] = (row >= 0 ? row : sd.rows) * C + j;
                const int kp = (row >= 0 && !(f & CS__STG_ROOT) ? cur[h].y >> 8 : sd.rows) * C + j;
                const T a = A[kr[h]], b = B[kr[h]];
                const T xp = (f & (CS__STG_ROOT | CS__STG_CARRY_OUT)) ? xc[h] : B[kp];
                x[h] = (f & CS__STG_ROOT) ? b : b - a * xp;
                xc[h] = x[h];
            }
#pragma unroll
            for (int h = 0; h < P; ++h) {
                if (cur[h].x >= 0) {
                    if (cur[h].y & CS__STG_GATHER_IN) B[kr[h]] = x[h];
                    rhs[base + kr[h]] = x[h];
                }
                cur[h] = nxt[h];
            }
        }
        if (g2 >= sd.ngroup) break;
        __syncwarp(); /* the forward sweep's reads of A and B end before the next group writes them */
        g = g2; type = type2; base = base2;
    }
}

template <class T>
cudaError_t cs__staged_launch(const cs__staged_dev &sd, T *d, const T *u, T *rhs, cudaStream_t stream)
{
    const size_t bytes = cs__staged_warp_bytes(sd.rows, sd.max_steps, C, sizeof(T));
    int per_sm = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cs__k_staged<T>, 32, bytes);
    if (e != cudaSuccess) return e;
    if (per_sm < 1) return cudaErrorInvalidConfiguration;
    long long grid = (long long)per_sm * sd.nsm;
    if (grid > sd.ngroup) grid = sd.ngroup;
    cs__k_staged<T><<<(int)grid, 32, bytes, stream>>>(sd, d, u, rhs);
    return cudaGetLastError();
}
template cudaError_t cs__staged_launch<double>(const cs__staged_dev &, double *, const double *, double *, cudaStream_t);
template cudaError_t cs__staged_launch<float>(const cs__staged_dev &, float *, const float *, float *, cudaStream_t);

cudaError_t cs__staged_set_attrs(int rows, int max_steps)
{
    cudaError_t e = cudaFuncSetAttribute(cs__k_staged<double>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)cs__staged_warp_bytes(rows, max_steps, C, sizeof(double)));
    if (e != cudaSuccess) return e;
    return cudaFuncSetAttribute(cs__k_staged<float>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)cs__staged_warp_bytes(rows, max_steps, C, sizeof(float)));
}
