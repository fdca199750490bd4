/* GPU batched Thomas (tridiagonal) solvers: kernels and their extern "C" launchers (the layout
 * conversions are in cs_thomas_gpu_layout.cu, chunked in cs_thomas_large_warp_gpu.cu).
 * The API, the layouts and the contracts are described in cs_thomas_gpu.h.
 *
 * Kernels (T = double or float):
 *   thomas_thread_kernel   one thread per system, any layout given by (system step, row step);
 *                          stores c'[i] in b[i] and d'[i] in d[i], then back-substitutes.
 *                          Serves flat, interleaved, var_cp (len = n_max) and var_ncp (own n_s).
 *   thomas_warp_kernel     a group of G lanes (template parameter 4, 8, 16, 32) per Flat
 *                          system, n <= G·K (K rows per lane, a template parameter; 32/G
 *                          systems per warp).
 *                          Per lane, the chunk's rows are reduced so that every row
 *                          couples only to the chunk's first (F) and last (L) unknowns:
 *                            row 0:      a0·L(prev lane) + F + c0·L               = d0
 *                            row j:      aj·F + x_j + cj·L                        = dj
 *                            row K-1:    aL·F + L + cL·F(next lane)               = dL
 *                          Substituting F and F(next) from the row-0 equations into row K-1
 *                          gives one tridiagonal row per lane in the L unknowns:
 *                            -aL·a0 · L(l-1) + (1 - aL·c0 - cL·a0') · L(l) - cL·c0' · L(l+1)
 *                                = dL - aL·d0 - cL·d0'        (primes: the next lane's row 0)
 *                          solved by PCR across the G lanes with shuffles (log2 G steps); then
 *                          F = d0 - a0·L(l-1) - c0·L and x_j = dj - aj·F - cj·L.
 *                          Rows past n are identity rows (they decouple since c[n-1] := 0).
 *                          STAGED = false: lanes load their chunk with 16-byte vector loads
 *                          straight into registers. STAGED = true: the group copies its system
 *                          into shared memory with coalesced cp.async, each lane reads its
 *                          chunk from there (one pad vector per chunk keeps 16-byte reads free
 *                          of bank conflicts), and the solution leaves through shared memory.
 * Numerics of the warp kernel: the chunk elimination is Gaussian elimination without pivoting
 * in another order (as Laszlo, Giles & Appleyard's hybrid Thomas-PCR); for diagonally dominant
 * systems every pivot stays >= the row's dominance margin. */
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

/* ---- errors (recorded by cs_thomas_gpu_error.cu) ------------------------------------------ */
#define cs__gpu_fail cs__thomas_gpu_fail
#define cs__cuda_fail cs__thomas_cuda_fail

#define CS__CUDA(expr)                                                          \
    do {                                                                        \
        cudaError_t cs__e = (expr);                                             \
        if (cs__e != cudaSuccess) return cs__cuda_fail(cs__e, __FILE__, __LINE__, #expr); \
    } while (0)
/* Inside functions with a cleanup label: set st and jump. */
#define CS__CUDA_GOTO(expr, label)                                              \
    do {                                                                        \
        cudaError_t cs__e = (expr);                                             \
        if (cs__e != cudaSuccess) {                                             \
            st = cs__cuda_fail(cs__e, __FILE__, __LINE__, #expr);               \
            goto label;                                                         \
        }                                                                       \
    } while (0)
#define CS__INVALID(...)                                                        \
    do {                                                                        \
        char cs__b[256];                                                        \
        snprintf(cs__b, sizeof cs__b, __VA_ARGS__);                             \
        return cs__gpu_fail(CS_SOLVER_ERR_INVALID, __FILE__, __LINE__, cs__b, NULL); \
    } while (0)



/* ---- variants --------------------------------------------------------------------------- */
struct cs__variant_info {
    const char *name;
    cs_thomas_layout layout;
    int var;
};
static const cs__variant_info cs__variants[] = {
#define CS__THOMAS_GPU_INFO(e, name, layout, var) {name, layout, var},
    CS_THOMAS_GPU_VARIANT_LIST(CS__THOMAS_GPU_INFO)
#undef CS__THOMAS_GPU_INFO
};

extern "C" const char *cs_thomas_gpu_variant_name(cs_thomas_gpu_variant v)
{
    return (v >= 0 && v < CS_THOMAS_GPU_NVARIANTS) ? cs__variants[v].name : NULL;
}

extern "C" cs_solver_status cs_thomas_gpu_variant_from_name(const char *name,
                                                           cs_thomas_gpu_variant *v)
{
    if (!name || !v) CS__INVALID("variant name or result is NULL");
    for (int i = 0; i < CS_THOMAS_GPU_NVARIANTS; ++i)
        if (strcmp(name, cs__variants[i].name) == 0) {
            *v = (cs_thomas_gpu_variant)i;
            return CS_SOLVER_OK;
        }
    CS__INVALID("unknown Thomas GPU variant '%s'", name);
}

extern "C" cs_thomas_layout cs_thomas_gpu_variant_layout(cs_thomas_gpu_variant v)
{
    return (v >= 0 && v < CS_THOMAS_GPU_NVARIANTS) ? cs__variants[v].layout
                                                   : CS_THOMAS_LAYOUT_FLAT;
}

extern "C" int cs_thomas_gpu_variant_is_var(cs_thomas_gpu_variant v)
{
    return (v >= 0 && v < CS_THOMAS_GPU_NVARIANTS) ? cs__variants[v].var : 0;
}

static int cs__warp_group(int nsys, int n);
#define CS__AUTO_WARP_MAX_N 1024 /* auto's warp variants above this: one system only */

/* From the H200 measurements (bench/results-thomas.md, bench/NOTES.md): the lane-group kernels
 * win at every point of the grid; staging through shared memory wins in double from 12 rows per
 * lane up (the direct 16-byte loads of 16-row double chunks reached only 57% of copy bandwidth),
 * and in float only for the longest chunks. Above 1024 rows the chunked hybrid spreads each
 * system over many threads (the one-thread kernels ran 2^20 rows in 302 ms on an H100). */
extern "C" cs_thomas_gpu_variant cs_thomas_gpu_choose(int nsys, int n, cs_thomas_gpu_precision prec)
{
    /* Above 1024 rows, chunked: up to 4096 rows in all it is one launch of one block (PCR in
     * shared memory), where the warp variants' 64 rows a lane ran 0.0237 ms at one system of
     * 2048 rows against cuSPARSE's 0.0172 (H100, bench/NOTES.md, session 16). */
    if (n > CS__AUTO_WARP_MAX_N) return CS_THOMAS_GPU_CHUNKED;
    const int g = cs__warp_group(nsys > 0 ? nsys : 1, n);
    const int k = (n + g - 1) / g;
    if (prec == CS_THOMAS_GPU_F64 ? k > 8 : k > 16) return CS_THOMAS_GPU_WARP_STAGED;
    return CS_THOMAS_GPU_WARP;
}

/* ---- one thread per system ----------------------------------------------------------------
 * Element i of system s at s·sys_step + i·row_step. len = n, or offset[s+1]-offset[s] when
 * offset is given (var_ncp). */
template <typename T>
__global__ void __launch_bounds__(128)
thomas_thread_kernel(int nsys, int n, size_t sys_step, size_t row_step,
                     const T *__restrict__ a, T *__restrict__ b, const T *__restrict__ c,
                     T *__restrict__ d, const int *__restrict__ offset)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= nsys) return;
    const int len = offset ? offset[s + 1] - offset[s] : n;
    if (len <= 0) return;
    size_t idx = (size_t)s * sys_step;
    T inv = T(1) / b[idx];
    T cp = (len > 1) ? __ldg(c + idx) * inv : T(0); /* c[len-1] is never read */
    T dp = d[idx] * inv;
    b[idx] = cp;
    d[idx] = dp;
    for (int i = 1; i < len; ++i) {
        idx += row_step;
        const T ai = __ldg(a + idx);
        inv = T(1) / (b[idx] - ai * cp);
        dp = (d[idx] - ai * dp) * inv;
        cp = (i < len - 1) ? __ldg(c + idx) * inv : T(0);
        b[idx] = cp;
        d[idx] = dp;
    }
    T x = dp;
    for (int i = len - 2; i >= 0; --i) {
        idx -= row_step;
        x = d[idx] - b[idx] * x;
        d[idx] = x;
    }
}

/* ---- a group of G lanes (4, 8, 16 or 32) per system ----------------------------------------
 * A warp holds 32/G systems; group g of the warp has lanes [g·G, g·G+G) and system
 * s = warp·(32/G) + g; lane gl of the group holds rows [gl·K, gl·K+K). Shuffles take width G, so
 * the PCR and the neighbour exchanges stay inside a group. A group past nsys in the last warp
 * solves identity rows and touches no memory (shuffles need every lane of the warp). */
template <typename T> struct cs__vec;
template <> struct cs__vec<double> { typedef double2 type; enum { width = 2 }; };
template <> struct cs__vec<float> { typedef float4 type; enum { width = 4 }; };

__device__ __forceinline__ void cs__vec_get(const double2 &v, double *x) { x[0] = v.x; x[1] = v.y; }
__device__ __forceinline__ void cs__vec_get(const float4 &v, float *x)
{
    x[0] = v.x; x[1] = v.y; x[2] = v.z; x[3] = v.w;
}
__device__ __forceinline__ double2 cs__vec_make(const double *x) { return make_double2(x[0], x[1]); }
__device__ __forceinline__ float4 cs__vec_make(const float *x)
{
    return make_float4(x[0], x[1], x[2], x[3]);
}

/* PCR over the G lanes of a group: row alpha·L(gl-k) + beta·L(gl) + gamma·L(gl+k) = delta;
 * rows outside the group are identity rows. Returns L(gl). */
template <typename T, int G>
__device__ __forceinline__ T cs__pcr(T al, T be, T ga, T de, int gl)
{
    const unsigned full = 0xffffffffu;
#pragma unroll
    for (int k = 1; k < G; k <<= 1) {
        T alm = __shfl_up_sync(full, al, k, G), bem = __shfl_up_sync(full, be, k, G);
        T gam = __shfl_up_sync(full, ga, k, G), dem = __shfl_up_sync(full, de, k, G);
        T alp = __shfl_down_sync(full, al, k, G), bep = __shfl_down_sync(full, be, k, G);
        T gap = __shfl_down_sync(full, ga, k, G), dep = __shfl_down_sync(full, de, k, G);
        if (gl < k) { alm = T(0); bem = T(1); gam = T(0); dem = T(0); }
        if (gl + k >= G) { alp = T(0); bep = T(1); gap = T(0); dep = T(0); }
        const T k1 = al / bem, k2 = ga / bep;
        de = de - dem * k1 - dep * k2;
        be = be - gam * k1 - alp * k2;
        al = -alm * k1;
        ga = -gap * k2;
    }
    return de / be;
}

/* Solve the chunk held in ra, rb, rc, rd (rows past n already identity rows); solution in rd.
 * rb is consumed. */
template <typename T, int K, int G>
__device__ __forceinline__ void cs__chunk_solve(T (&ra)[K], T (&rb)[K], T (&rc)[K], T (&rd)[K],
                                                int gl)
{
    const unsigned full = 0xffffffffu;
    if constexpr (K == 1) {
        rd[0] = cs__pcr<T, G>(ra[0], rb[0], rc[0], rd[0], gl);
    } else {
        /* rows 0 and 1: unit diagonal */
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const T inv = T(1) / rb[j];
            ra[j] *= inv;
            rc[j] *= inv;
            rd[j] *= inv;
        }
        /* downwards: row j couples to x_0 (through ra) and x_{j+1} */
#pragma unroll
        for (int j = 2; j < K; ++j) {
            const T inv = T(1) / (rb[j] - ra[j] * rc[j - 1]);
            rd[j] = (rd[j] - ra[j] * rd[j - 1]) * inv;
            ra[j] = -ra[j] * ra[j - 1] * inv;
            rc[j] *= inv;
        }
        /* upwards: rows 1..K-2 couple to x_0 and x_{K-1} */
#pragma unroll
        for (int j = K - 3; j >= 1; --j) {
            rd[j] -= rc[j] * rd[j + 1];
            ra[j] -= rc[j] * ra[j + 1];
            rc[j] = -rc[j] * rc[j + 1];
        }
        /* row 0: eliminate x_1 so that it couples to L(previous lane) and x_{K-1} */
        if constexpr (K >= 3) {
            const T inv = T(1) / (T(1) - rc[0] * ra[1]);
            rd[0] = (rd[0] - rc[0] * rd[1]) * inv;
            ra[0] *= inv;
            rc[0] = -rc[0] * rc[1] * inv;
        }
        /* the G-row system in the last unknowns */
        const T a0n = __shfl_down_sync(full, ra[0], 1, G);
        const T c0n = __shfl_down_sync(full, rc[0], 1, G);
        const T d0n = __shfl_down_sync(full, rd[0], 1, G);
        const T aL = ra[K - 1], cL = (gl == G - 1) ? T(0) : rc[K - 1];
        const T al = -aL * ra[0];
        const T be = T(1) - aL * rc[0] - cL * a0n;
        const T ga = -cL * c0n;
        const T de = rd[K - 1] - aL * rd[0] - cL * d0n;
        const T L = cs__pcr<T, G>(al, be, ga, de, gl);
        T Lprev = __shfl_up_sync(full, L, 1, G);
        if (gl == 0) Lprev = T(0);
        const T F = rd[0] - ra[0] * Lprev - rc[0] * L;
#pragma unroll
        for (int j = 1; j < K - 1; ++j) rd[j] = rd[j] - ra[j] * F - rc[j] * L;
        rd[0] = F;
        rd[K - 1] = L;
    }
}

/* Rows past n: identity. Row n-1: c = 0; row 0: a = 0. */
template <typename T, int K>
__device__ __forceinline__ void cs__fix_edges(T (&ra)[K], T (&rb)[K], T (&rc)[K], T (&rd)[K],
                                              int r0, int n)
{
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const int row = r0 + j;
        if (row >= n) { ra[j] = T(0); rb[j] = T(1); rc[j] = T(0); rd[j] = T(0); }
        if (row == n - 1) rc[j] = T(0);
        if (row == 0) ra[j] = T(0);
    }
}

/* "warp": lanes load their chunk straight into registers (16-byte vectors when vec). */
template <typename T, int K, int G>
__global__ void __launch_bounds__(128)
thomas_warp_kernel(int nsys, int n, int vec, const T *__restrict__ a, const T *__restrict__ b,
                   const T *__restrict__ c, T *__restrict__ d)
{
    typedef typename cs__vec<T>::type V;
    constexpr int W = cs__vec<T>::width;
    const int lane = threadIdx.x & 31, gl = lane % G;
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const size_t s0 = warp * (32 / G), s = s0 + lane / G;
    if (s0 >= (size_t)nsys) return; /* whole warps leave together */
    const int ne = (s < (size_t)nsys) ? n : 0; /* rows this group really has */
    const size_t base = s * (size_t)n;
    const int r0 = gl * K;
    T ra[K], rb[K], rc[K], rd[K];
    bool done = false;
    if constexpr (K % W == 0) {
        if (vec) {
#pragma unroll
            for (int v = 0; v < K / W; ++v) {
                const int row = r0 + v * W;
                if (row < ne) { /* n % W == 0: the whole vector is inside */
                    cs__vec_get(__ldg(reinterpret_cast<const V *>(a + base + row)), ra + v * W);
                    cs__vec_get(__ldg(reinterpret_cast<const V *>(b + base + row)), rb + v * W);
                    cs__vec_get(__ldg(reinterpret_cast<const V *>(c + base + row)), rc + v * W);
                    cs__vec_get(*reinterpret_cast<const V *>(d + base + row), rd + v * W);
                }
            }
            done = true;
        }
    }
    if (!done) {
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int row = r0 + j;
            if (row < ne) {
                ra[j] = __ldg(a + base + row);
                rb[j] = __ldg(b + base + row);
                rc[j] = __ldg(c + base + row);
                rd[j] = d[base + row];
            }
        }
    }
    cs__fix_edges<T, K>(ra, rb, rc, rd, r0, ne);
    cs__chunk_solve<T, K, G>(ra, rb, rc, rd, gl);
    if constexpr (K % W == 0) {
        if (vec) {
#pragma unroll
            for (int v = 0; v < K / W; ++v) {
                const int row = r0 + v * W;
                if (row < ne) *reinterpret_cast<V *>(d + base + row) = cs__vec_make(rd + v * W);
            }
            return;
        }
    }
#pragma unroll
    for (int j = 0; j < K; ++j)
        if (r0 + j < ne) d[base + r0 + j] = rd[j];
}

/* Shared-memory image of one system: 4 arrays of G chunks of K rows, each chunk followed by one
 * pad vector (W elements). Row i lives at (i / K)·(K + W) + i % K. Per warp: 32/G systems, the
 * same 4·32·(K+W) elements whatever G. */
template <typename T, int K, int G> struct cs__stage {
    static constexpr int W = cs__vec<T>::width;
    static constexpr int ARRAY = G * (K + W);              /* elements per array and system */
    static constexpr size_t BYTES = (size_t)4 * 32 * (K + W) * sizeof(T); /* per warp */
    __device__ static int pos(int i) { return (i / K) * (K + W) + i % K; }
};

/* "warp_staged": the group copies its system into shared memory with coalesced cp.async. */
template <typename T, int K, int G>
__global__ void __launch_bounds__(128)
thomas_warp_staged_kernel(int nsys, int n, int vec, const T *__restrict__ a,
                          const T *__restrict__ b, const T *__restrict__ c, T *__restrict__ d)
{
    typedef typename cs__vec<T>::type V;
    typedef cs__stage<T, K, G> S;
    constexpr int W = S::W;
    extern __shared__ __align__(16) unsigned char cs__smem_raw[];
    const int lane = threadIdx.x & 31, gl = lane % G, grp = lane / G;
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const size_t s0 = warp * (32 / G), s = s0 + grp;
    if (s0 >= (size_t)nsys) return;
    const int ne = (s < (size_t)nsys) ? n : 0;
    T *sm = reinterpret_cast<T *>(cs__smem_raw) + (size_t)(threadIdx.x >> 5) * (S::BYTES / sizeof(T)) +
            (size_t)grp * 4 * S::ARRAY;
    T *sa = sm, *sb = sm + S::ARRAY, *sc = sm + 2 * S::ARRAY, *sd = sm + 3 * S::ARRAY;
    const size_t base = s * (size_t)n;
    const bool vk = vec && (K % W == 0);
    if (ne > 0) {
        const T *src[4] = {a + base, b + base, c + base, d + base};
        T *dst[4] = {sa, sb, sc, sd};
        if (vk) {
            /* 16-byte pieces: piece p covers rows p·W .. p·W+W-1, all in one chunk (K % W == 0) */
            const int npieces = n / W;
#pragma unroll
            for (int arr = 0; arr < 4; ++arr)
                for (int p = gl; p < npieces; p += G)
                    __pipeline_memcpy_async(dst[arr] + S::pos(p * W), src[arr] + (size_t)p * W, 16);
        } else {
#pragma unroll
            for (int arr = 0; arr < 4; ++arr)
                for (int i = gl; i < n; i += G)
                    __pipeline_memcpy_async(dst[arr] + S::pos(i), src[arr] + i, sizeof(T));
        }
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncwarp();

    const int r0 = gl * K;
    const int o = gl * (K + W);
    T ra[K], rb[K], rc[K], rd[K];
    if constexpr (K % W == 0) {
#pragma unroll
        for (int v = 0; v < K / W; ++v) {
            cs__vec_get(*reinterpret_cast<const V *>(sa + o + v * W), ra + v * W);
            cs__vec_get(*reinterpret_cast<const V *>(sb + o + v * W), rb + v * W);
            cs__vec_get(*reinterpret_cast<const V *>(sc + o + v * W), rc + v * W);
            cs__vec_get(*reinterpret_cast<const V *>(sd + o + v * W), rd + v * W);
        }
    } else {
#pragma unroll
        for (int j = 0; j < K; ++j) {
            ra[j] = sa[o + j];
            rb[j] = sb[o + j];
            rc[j] = sc[o + j];
            rd[j] = sd[o + j];
        }
    }
    /* rows past n hold whatever shared memory held: replaced by identity rows here */
    cs__fix_edges<T, K>(ra, rb, rc, rd, r0, ne);
    cs__chunk_solve<T, K, G>(ra, rb, rc, rd, gl);
    if constexpr (K % W == 0) {
#pragma unroll
        for (int v = 0; v < K / W; ++v)
            *reinterpret_cast<V *>(sd + o + v * W) = cs__vec_make(rd + v * W);
    } else {
#pragma unroll
        for (int j = 0; j < K; ++j) sd[o + j] = rd[j];
    }
    __syncwarp();
    if (ne > 0) {
        T *gd = d + base;
        if (vk) {
            const int npieces = n / W;
            for (int p = gl; p < npieces; p += G)
                *reinterpret_cast<V *>(gd + (size_t)p * W) =
                    *reinterpret_cast<const V *>(sd + S::pos(p * W));
        } else {
            for (int i = gl; i < n; i += G) gd[i] = sd[S::pos(i)];
        }
    }
}

/* ---- launchers ----------------------------------------------------------------------------- */
static int cs__num_sms(void)
{
    static int sms = 0;
    if (sms == 0) {
        int dev = 0, v = 0;
        if (cudaGetDevice(&dev) == cudaSuccess &&
            cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess && v > 0)
            sms = v;
        else
            sms = 1;
    }
    return sms;
}

static bool cs__aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* Lanes per system: the smallest G in {4, 8, 16} that leaves at most 16 rows per lane and still
 * gives every multiprocessor >= 4 warps; else 32. Fewer lanes per system shorten the PCR (log2 G
 * shuffle steps) and amortise it over more rows: at n = 64, 32 lanes of 2 rows each made the
 * warp kernel shuffle-bound (51% of copy bandwidth, bench/NOTES.md). */
static int cs__warp_group(int nsys, int n)
{
    const long long need = 32LL * 4 * cs__num_sms(); /* nsys·G >= 32 lanes × 4 warps × SMs */
    for (int g = 4; g < 32; g <<= 1)
        if (n <= 16 * g && (long long)nsys * g >= need) return g;
    return 32;
}

template <typename T, int K, int G, bool STAGED>
static cs_solver_status cs__launch_warp_kg(int nsys, int n, const T *a, const T *b, const T *c, T *d)
{
    constexpr int W = cs__vec<T>::width;
    const int vec = (n % W == 0) && cs__aligned16(a) && cs__aligned16(b) && cs__aligned16(c) &&
                    cs__aligned16(d);
    const size_t nwarps = ((size_t)nsys + 32 / G - 1) / (32 / G);
    /* staged with K = 64 in double: 66 KB of shared memory a warp, so one warp a block (4 would
     * pass the 160 KB this code assumes of every target) */
    constexpr int WPB_MAX = (!STAGED || 4 * cs__stage<T, K, G>::BYTES <= (size_t)160 * 1024) ? 4 : 1;
    /* small batches: one warp per block spreads the systems over all multiprocessors */
    const int wpb = (WPB_MAX == 4 && nwarps >= (size_t)16 * cs__num_sms()) ? 4 : 1;
    const dim3 grid((unsigned)((nwarps + wpb - 1) / wpb)), block(32 * wpb);
    if (STAGED) {
        typedef cs__stage<T, K, G> S;
        static bool attr_set = false; /* per instantiation; a benign race sets it twice */
        if (!attr_set) {
            CS__CUDA(cudaFuncSetAttribute(thomas_warp_staged_kernel<T, K, G>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)(WPB_MAX * S::BYTES)));
            attr_set = true;
        }
        thomas_warp_staged_kernel<T, K, G><<<grid, block, wpb * S::BYTES>>>(nsys, n, vec, a, b, c, d);
    } else {
        thomas_warp_kernel<T, K, G><<<grid, block>>>(nsys, n, vec, a, b, c, d);
    }
    CS__CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}

/* K = ceil(n/G) rounded up to 1, 2, 4, 8, 12, 16 (and 24, 32, 64 for G = 32). */
template <typename T, int G, bool STAGED>
static cs_solver_status cs__launch_warp_g(int nsys, int n, const T *a, const T *b, const T *c, T *d)
{
    const int k = (n + G - 1) / G;
    if (k <= 1) return cs__launch_warp_kg<T, 1, G, STAGED>(nsys, n, a, b, c, d);
    if (k <= 2) return cs__launch_warp_kg<T, 2, G, STAGED>(nsys, n, a, b, c, d);
    if (k <= 4) return cs__launch_warp_kg<T, 4, G, STAGED>(nsys, n, a, b, c, d);
    if (k <= 8) return cs__launch_warp_kg<T, 8, G, STAGED>(nsys, n, a, b, c, d);
    if (k <= 12) return cs__launch_warp_kg<T, 12, G, STAGED>(nsys, n, a, b, c, d);
    if (k <= 16) return cs__launch_warp_kg<T, 16, G, STAGED>(nsys, n, a, b, c, d);
    if constexpr (G == 32) {
        if (k <= 24) return cs__launch_warp_kg<T, 24, G, STAGED>(nsys, n, a, b, c, d);
        if (k <= 32) return cs__launch_warp_kg<T, 32, G, STAGED>(nsys, n, a, b, c, d);
        return cs__launch_warp_kg<T, 64, G, STAGED>(nsys, n, a, b, c, d);
    } else {
        CS__INVALID("internal: no warp kernel for n=%d with %d lanes", n, G);
    }
}

template <typename T, bool STAGED>
static cs_solver_status cs__launch_warp(int nsys, int n, const T *a, const T *b, const T *c, T *d)
{
    switch (cs__warp_group(nsys, n)) {
    case 4: return cs__launch_warp_g<T, 4, STAGED>(nsys, n, a, b, c, d);
    case 8: return cs__launch_warp_g<T, 8, STAGED>(nsys, n, a, b, c, d);
    case 16: return cs__launch_warp_g<T, 16, STAGED>(nsys, n, a, b, c, d);
    default: return cs__launch_warp_g<T, 32, STAGED>(nsys, n, a, b, c, d);
    }
}

template <typename T>
static cs_solver_status cs__launch_thread(int nsys, int n, size_t sys_step, size_t row_step,
                                          const T *a, T *b, const T *c, T *d, const int *offset)
{
    const int tpb = 128;
    thomas_thread_kernel<T><<<(nsys + tpb - 1) / tpb, tpb>>>(nsys, n, sys_step, row_step, a, b, c,
                                                             d, offset);
    CS__CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}

/* Uniform batch on device pointers. */
template <typename T>
static cs_solver_status cs__solve_dev(cs_thomas_gpu_variant v, int nsys, int n, const T *a, T *b,
                                      const T *c, T *d)
{
    if (v == CS_THOMAS_GPU_AUTO)
        v = cs_thomas_gpu_choose(nsys, n, sizeof(T) == 8 ? CS_THOMAS_GPU_F64 : CS_THOMAS_GPU_F32);
    switch (v) {
    case CS_THOMAS_GPU_FLAT: return cs__launch_thread<T>(nsys, n, (size_t)n, 1, a, b, c, d, NULL);
    case CS_THOMAS_GPU_INTERLEAVED:
        return cs__launch_thread<T>(nsys, n, 1, (size_t)nsys, a, b, c, d, NULL);
    case CS_THOMAS_GPU_WARP: return cs__launch_warp<T, false>(nsys, n, a, b, c, d);
    case CS_THOMAS_GPU_WARP_STAGED: return cs__launch_warp<T, true>(nsys, n, a, b, c, d);
    case CS_THOMAS_GPU_CHUNKED: return cs__thomas_chunked_owned(nsys, n, a, b, c, d);
    case CS_THOMAS_GPU_SCAN: return cs__thomas_scan_owned(nsys, n, a, b, c, d);
    default: break;
    }
    CS__INVALID("variant %d is not a uniform-batch variant", (int)v);
}

/* Host pointers: a zero pivot leaves inf or NaN in the solution (see cs_thomas_gpu.h); one pass
 * over the copied solution finds it, far cheaper than the copies themselves. */
template <typename T> static cs_solver_status cs__check_finite(size_t cnt, const T *x)
{
    T acc = T(0);
    for (size_t i = 0; i < cnt; ++i) acc += x[i] * T(0);
    if (isfinite(acc)) return CS_SOLVER_OK;
    return cs__gpu_fail(CS_SOLVER_ERR_SINGULAR, __FILE__, __LINE__,
                        "the solution is not finite (a zero pivot, or inf/NaN in the input)", NULL);
}

template <typename T>
static cs_solver_status cs__solve(cs_thomas_gpu_variant v, int nsys, int n, const T *a, T *b,
                                  const T *c, T *d, cs_thomas_gpu_mem mem)
{
    if (v < 0 || v >= CS_THOMAS_GPU_NVARIANTS || cs__variants[v].var)
        CS__INVALID("variant %d is not a uniform-batch Thomas GPU variant", (int)v);
    if (nsys < 0 || n < 1) CS__INVALID("bad batch shape nsys=%d n=%d", nsys, n);
    if (nsys == 0) return CS_SOLVER_OK;
    if (!a || !b || !c || !d) CS__INVALID("NULL array (a=%p b=%p c=%p d=%p)", (const void *)a,
                                          (const void *)b, (const void *)c, (const void *)d);
    if ((v == CS_THOMAS_GPU_WARP || v == CS_THOMAS_GPU_WARP_STAGED) && n > CS_THOMAS_GPU_WARP_MAX_N)
        CS__INVALID("variant %s needs n <= %d (n=%d)", cs__variants[v].name,
                    CS_THOMAS_GPU_WARP_MAX_N, n);
    if ((size_t)nsys * (size_t)n > (size_t)1 << 40) CS__INVALID("batch too large");
    if (mem == CS_THOMAS_GPU_DEVICE_PTRS) return cs__solve_dev<T>(v, nsys, n, a, b, c, d);
    if (mem != CS_THOMAS_GPU_HOST_PTRS) CS__INVALID("bad memory flag %d", (int)mem);

    const size_t cnt = (size_t)nsys * n, bytes = cnt * sizeof(T);
    cs_solver_status st = CS_SOLVER_OK;
    T *buf = NULL;
    CS__CUDA_GOTO(cudaMalloc((void **)&buf, 4 * bytes), out);
    CS__CUDA_GOTO(cudaMemcpy(buf, a, bytes, cudaMemcpyHostToDevice), out);
    CS__CUDA_GOTO(cudaMemcpy(buf + cnt, b, bytes, cudaMemcpyHostToDevice), out);
    CS__CUDA_GOTO(cudaMemcpy(buf + 2 * cnt, c, bytes, cudaMemcpyHostToDevice), out);
    CS__CUDA_GOTO(cudaMemcpy(buf + 3 * cnt, d, bytes, cudaMemcpyHostToDevice), out);
    st = cs__solve_dev<T>(v, nsys, n, buf, buf + cnt, buf + 2 * cnt, buf + 3 * cnt);
    if (st != CS_SOLVER_OK) goto out;
    CS__CUDA_GOTO(cudaMemcpy(d, buf + 3 * cnt, bytes, cudaMemcpyDeviceToHost), out);
    st = cs__check_finite<T>(cnt, d);
out:
    if (buf) {
        cudaError_t e = cudaFree(buf);
        if (e != cudaSuccess && st == CS_SOLVER_OK) st = cs__cuda_fail(e, __FILE__, __LINE__, "cudaFree");
    }
    return st;
}

template <typename T>
static cs_solver_status cs__solve_var(cs_thomas_gpu_variant v, int nsys, int n_max,
                                      const int *offset, const T *a, T *b, const T *c, T *d,
                                      cs_thomas_gpu_mem mem)
{
    if (v == CS_THOMAS_GPU_AUTO) v = CS_THOMAS_GPU_VAR_CP;
    if (v != CS_THOMAS_GPU_VAR_CP && v != CS_THOMAS_GPU_VAR_NCP)
        CS__INVALID("variant %d is not a variable-batch Thomas GPU variant", (int)v);
    if (nsys < 0 || n_max < 1) CS__INVALID("bad batch shape nsys=%d n_max=%d", nsys, n_max);
    if (nsys == 0) return CS_SOLVER_OK;
    if (!a || !b || !c || !d) CS__INVALID("NULL array");
    const bool ncp = (v == CS_THOMAS_GPU_VAR_NCP);
    if (ncp && !offset) CS__INVALID("var_ncp needs offset");
    if (mem == CS_THOMAS_GPU_DEVICE_PTRS)
        return cs__launch_thread<T>(nsys, n_max, 1, (size_t)nsys, a, b, c, d, ncp ? offset : NULL);
    if (mem != CS_THOMAS_GPU_HOST_PTRS) CS__INVALID("bad memory flag %d", (int)mem);
    if (ncp)
        for (int s = 0; s < nsys; ++s) {
            const int ns = offset[s + 1] - offset[s];
            if (ns < 0 || ns > n_max) CS__INVALID("system %d has %d rows (n_max %d)", s, ns, n_max);
        }

    const size_t cnt = (size_t)nsys * n_max, bytes = cnt * sizeof(T);
    cs_solver_status st = CS_SOLVER_OK;
    T *buf = NULL;
    int *off = NULL;
    CS__CUDA_GOTO(cudaMalloc((void **)&buf, 4 * bytes), out);
    CS__CUDA_GOTO(cudaMemcpy(buf, a, bytes, cudaMemcpyHostToDevice), out);
    CS__CUDA_GOTO(cudaMemcpy(buf + cnt, b, bytes, cudaMemcpyHostToDevice), out);
    CS__CUDA_GOTO(cudaMemcpy(buf + 2 * cnt, c, bytes, cudaMemcpyHostToDevice), out);
    CS__CUDA_GOTO(cudaMemcpy(buf + 3 * cnt, d, bytes, cudaMemcpyHostToDevice), out);
    if (ncp) {
        CS__CUDA_GOTO(cudaMalloc((void **)&off, (nsys + 1) * sizeof(int)), out);
        CS__CUDA_GOTO(cudaMemcpy(off, offset, (nsys + 1) * sizeof(int), cudaMemcpyHostToDevice), out);
    }
    st = cs__launch_thread<T>(nsys, n_max, 1, (size_t)nsys, buf, buf + cnt, buf + 2 * cnt,
                              buf + 3 * cnt, off);
    if (st != CS_SOLVER_OK) goto out;
    CS__CUDA_GOTO(cudaMemcpy(d, buf + 3 * cnt, bytes, cudaMemcpyDeviceToHost), out);
    st = cs__check_finite<T>(cnt, d);
out:
    if (buf) cudaFree(buf);
    if (off) cudaFree(off);
    return st;
}

/* ---- extern "C" API ------------------------------------------------------------------------ */
extern "C" {

cs_solver_status cs_thomas_gpu_solve_d(cs_thomas_gpu_variant v, int nsys, int n, const double *a,
                                       double *b, const double *c, double *d, cs_thomas_gpu_mem mem)
{
    return cs__solve<double>(v, nsys, n, a, b, c, d, mem);
}
cs_solver_status cs_thomas_gpu_solve_f(cs_thomas_gpu_variant v, int nsys, int n, const float *a,
                                       float *b, const float *c, float *d, cs_thomas_gpu_mem mem)
{
    return cs__solve<float>(v, nsys, n, a, b, c, d, mem);
}
cs_solver_status cs_thomas_gpu_solve_var_d(cs_thomas_gpu_variant v, int nsys, int n_max,
                                           const int *offset, const double *a, double *b,
                                           const double *c, double *d, cs_thomas_gpu_mem mem)
{
    return cs__solve_var<double>(v, nsys, n_max, offset, a, b, c, d, mem);
}
cs_solver_status cs_thomas_gpu_solve_var_f(cs_thomas_gpu_variant v, int nsys, int n_max,
                                           const int *offset, const float *a, float *b,
                                           const float *c, float *d, cs_thomas_gpu_mem mem)
{
    return cs__solve_var<float>(v, nsys, n_max, offset, a, b, c, d, mem);
}

} /* extern "C" */
