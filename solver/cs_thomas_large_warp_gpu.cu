/* GPU chunked hybrid for one large tridiagonal system, or a few (the "chunked" variant of
 * cs_thomas_gpu.h), with warp-wide chunks: the arithmetic of cs_tridiag_segment.h, emulated on
 * the host by solver/cs_thomas_warp_emul.c (tested there against serial Thomas).
 *
 * A batch of nsys systems of n rows is one system of N = nsys·n rows whose couplings across
 * system boundaries are zero (a[s·n] and c[s·n+n-1] are taken as 0 when a tile is loaded); rows
 * past N are identity rows. A level of m rows:
 *   m <= CS__WBASE (4096): one block of 256 threads solves it (the same chunks and warp trees,
 *               its warps' rows by PCR; the only launch for n·nsys <= 4096: the small systems
 *               of one launch); a reduced level of at most 1 024 rows by PCR alone, a row a
 *               thread (cs__pcr_base_kernel);
 *   otherwise   reduce: a block of one warp loads a tile of 512 rows into shared memory
 *               (16-byte loads when the arrays allow), each lane summarises its 16 rows
 *               (cs_seg_chunk: two Thomas sweeps), and each warp combines its 32 lanes'
 *               summaries in a shuffle tree (cs_seg_combine, 5 levels) into the F and L rows of
 *               its 512 rows: rows 2w, 2w+1 of the next level, which has m/256 rows;
 *               (the next level)
 *               substitute: the tile again, each lane's chunk and the warp tree again (storing the
 *               downward coefficients and the tree's nodes this time), the tree split down from
 *               the warp's ends (cs_seg_split), each lane's rows from its ends; the solution goes
 *               out through shared memory, coalesced. Blocks run in reverse order, so the first
 *               ones re-read the tiles the reduction left in L2 last.
 * Levels: 2^20 rows -> 4096 (3 launches: reduce, base, substitute); 2^21..2^28 rows: 5 launches.
 * Traffic at level 0: a, b, c, d read twice, d written once (9 arrays); the next level adds
 * 1/256 of that.
 *
 * Numerics: Gaussian elimination without pivoting in another order (Schur complements of
 * contiguous segments); for a diagonally dominant system every pivot is at least the row's
 * dominance margin, as in Thomas. */
#include <cuda_runtime.h>

#include <mutex>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cs_gpu_pdl.cuh"
#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"
#include "cs_tridiag_segment.h"

#define CS__WK 16                     /* rows per lane */
#define CS__WT 32 /* threads per reduce/substitute block (session 20: 32 / 64 against 128: 3 % / 2 % faster) */
#define CS__WROWS (32 * CS__WK)       /* rows per warp */
#define CS__WPAD (CS__WK + 1)         /* one pad element per lane's chunk: no bank conflicts */
#define CS__WBT 256                   /* threads of the base block */
#define CS__WBASE (CS__WK * CS__WBT)  /* largest level solved by one block: 4096 rows */
#define CS__WBW (CS__WBT / 32)        /* its warps: 2·8 = 16 rows left for its PCR */
#define CS__WMAX_LEVELS 16

/* ---- tiles ------------------------------------------------------------------------------- */
__device__ __forceinline__ int cs__wslot(int e) { return e + e / CS__WK; }

template <typename T> struct cs__vec2;
template <> struct cs__vec2<double> { typedef double2 t; };
template <> struct cs__vec2<float> { typedef float2 t; };

/* System boundaries bnd = k·n in [t0, t0 + NT·K] of a tile in shared memory: a = 0 at row bnd,
 * c = 0 at row bnd-1. */
template <typename T, int NT>
__device__ __forceinline__ void cs__wcut(size_t t0, size_t m, size_t n, T *sa, T *sc)
{
    const size_t end = t0 + CS__WK * NT;
    for (size_t bnd = (t0 + n - 1) / n * n + (size_t)threadIdx.x * n; bnd <= end && bnd <= m;
         bnd += (size_t)NT * n) {
        if (bnd < end && bnd < m) sa[cs__wslot((int)(bnd - t0))] = T(0);
        if (bnd > t0) sc[cs__wslot((int)(bnd - 1 - t0))] = T(0);
    }
}

/* Rows [t0, t0 + NT·K) of a level of m rows made of systems of n rows, into shared memory
 * (NT threads); rows at or past m are identity rows. vec: the arrays are 2-element aligned
 * (16-byte loads of double). LAST: the rows' last use (the substitution): loaded evict-first, so
 * they do not push out of L2 the tiles the reduction left there that it has still to read. */
template <typename T, int NT, bool LAST = false>
__device__ __forceinline__ void cs__wload(size_t t0, size_t m, size_t n, int vec,
                                          const T *__restrict__ a, const T *__restrict__ b,
                                          const T *__restrict__ c, const T *__restrict__ d, T *sa,
                                          T *sb, T *sc, T *sd)
{
    constexpr int TILE = CS__WK * NT;
    if (vec && t0 + TILE <= m) {
        typedef typename cs__vec2<T>::t V;
        const V *va = reinterpret_cast<const V *>(a + t0), *vb = reinterpret_cast<const V *>(b + t0);
        const V *vc = reinterpret_cast<const V *>(c + t0), *vd = reinterpret_cast<const V *>(d + t0);
#pragma unroll
        for (int i = 0; i < TILE / (2 * NT); ++i) {
            const int p = threadIdx.x + i * NT;
            V xa, xb, xc, xd;
            if (LAST) xa = __ldcs(va + p), xb = __ldcs(vb + p), xc = __ldcs(vc + p), xd = __ldcs(vd + p);
            else xa = __ldg(va + p), xb = __ldg(vb + p), xc = __ldg(vc + p), xd = vd[p];
            const int s0 = cs__wslot(2 * p), s1 = cs__wslot(2 * p + 1);
            sa[s0] = xa.x, sa[s1] = xa.y, sb[s0] = xb.x, sb[s1] = xb.y;
            sc[s0] = xc.x, sc[s1] = xc.y, sd[s0] = xd.x, sd[s1] = xd.y;
        }
    } else {
        for (int e = threadIdx.x; e < TILE; e += NT) {
            const size_t g = t0 + (size_t)e;
            const int s = cs__wslot(e);
            if (g < m) {
                sa[s] = __ldg(a + g), sb[s] = __ldg(b + g), sc[s] = __ldg(c + g), sd[s] = d[g];
            } else {
                sa[s] = T(0), sb[s] = T(1), sc[s] = T(0), sd[s] = T(0);
            }
        }
    }
    __syncthreads();
    cs__wcut<T, NT>(t0, m, n, sa, sc);
    __syncthreads();
}

/* The tile's solution (in sd) back to d[t0 ..), coalesced, as streaming (evict-first) stores. */
template <typename T, int NT>
__device__ __forceinline__ void cs__wstore(size_t t0, size_t m, int vec, const T *sd, T *d)
{
    constexpr int TILE = CS__WK * NT;
    if (vec && t0 + TILE <= m) {
        typedef typename cs__vec2<T>::t V;
        V *vd = reinterpret_cast<V *>(d + t0);
#pragma unroll
        for (int i = 0; i < TILE / (2 * NT); ++i) {
            const int p = threadIdx.x + i * NT;
            V xv;
            xv.x = sd[cs__wslot(2 * p)], xv.y = sd[cs__wslot(2 * p + 1)];
            __stcs(vd + p, xv);
        }
    } else {
        for (int e = threadIdx.x; e < TILE; e += NT) {
            const size_t g = t0 + (size_t)e;
            if (g < m) d[g] = sd[cs__wslot(e)];
        }
    }
}

template <typename T, int NT> struct cs__wsmem {
    T *a, *b, *c, *d;
    __device__ cs__wsmem(unsigned char *raw)
    {
        a = reinterpret_cast<T *>(raw);
        b = a + NT * CS__WPAD;
        c = b + NT * CS__WPAD;
        d = c + NT * CS__WPAD;
    }
};
#define CS__WSMEM(T, NT) (4 * (NT) * CS__WPAD * sizeof(T))

template <typename T> __device__ __forceinline__ cs_seg<T> cs__shfl_down(cs_seg<T> s, int w)
{
    cs_seg<T> o;
    o.dF = __shfl_down_sync(0xffffffffu, s.dF, w), o.pF = __shfl_down_sync(0xffffffffu, s.pF, w);
    o.qF = __shfl_down_sync(0xffffffffu, s.qF, w), o.dL = __shfl_down_sync(0xffffffffu, s.dL, w);
    o.pL = __shfl_down_sync(0xffffffffu, s.pL, w), o.qL = __shfl_down_sync(0xffffffffu, s.qL, w);
    return o;
}

/* The warp's tree over its lanes' summaries: lane 0 ends with the warp's; nd[l] holds the
 * nodes of the lanes that combined at level l (when nd is not NULL). */
template <typename T>
__device__ __forceinline__ cs_seg<T> cs__wtree_up(cs_seg<T> sum, int lane, cs_seg_node<T> *nd)
{
#pragma unroll
    for (int l = 0; l < 5; ++l) {
        const int w = 1 << l;
        const cs_seg<T> nxt = cs__shfl_down<T>(sum, w);
        cs_seg_node<T> tmp;
        if ((lane & (2 * w - 1)) == 0) sum = cs_seg_combine<T>(sum, nxt, nd ? &nd[l] : &tmp);
    }
    return sum;
}

/* From the warp's ends (xf, xl at lane 0) down the tree: each lane's chunk ends. */
template <typename T>
__device__ __forceinline__ void cs__wtree_down(const cs_seg_node<T> *nd, int lane, T &xf, T &xl)
{
#pragma unroll
    for (int l = 4; l >= 0; --l) {
        const int w = 1 << l, r = lane & (2 * w - 1);
        T u = T(0), v = T(0);
        if (r == 0) cs_seg_split<T>(&nd[l], xf, xl, &u, &v);
        const T vv = __shfl_up_sync(0xffffffffu, v, w), ll = __shfl_up_sync(0xffffffffu, xl, w);
        if (r == w) xf = vv, xl = ll;
        else if (r == 0) xl = u;
    }
}

/* Programmatic dependent launch (cs_gpu_pdl.cuh): each kernel after the first is launched while
 * its predecessor runs (cs__wlaunch). Every kernel triggers only after its wait, so when a kernel
 * starts, all kernels before its predecessor have completed: the substitution loads its tile
 * (written earlier) and eliminates before it waits for the reduced solution. */

/* ---- kernels ----------------------------------------------------------------------------- */
/* A level of m rows -> its 2·ceil(m/512) reduced rows (ra, rb, rc, rd). */
template <typename T, int NT>
__global__ void __launch_bounds__(NT, 384 / NT)
cs__wreduce_kernel(size_t m, size_t n, int vec, const T *__restrict__ a, const T *__restrict__ b,
                   const T *__restrict__ c, const T *__restrict__ d, T *__restrict__ ra,
                   T *__restrict__ rb, T *__restrict__ rc, T *__restrict__ rd)
{
    extern __shared__ __align__(16) unsigned char cs__raw[];
    cs__wsmem<T, NT> s(cs__raw);
    cs_pdl_wait(); /* the level's rows come from the previous reduce */
    cs_pdl_trigger();
    const size_t t0 = (size_t)blockIdx.x * (CS__WK * NT);
    cs__wload<T, NT>(t0, m, n, vec, a, b, c, d, s.a, s.b, s.c, s.d);
    const int o = threadIdx.x * CS__WPAD, lane = threadIdx.x & 31;
    cs_seg<T> sum = cs_seg_chunk<T>(s.a + o, s.b + o, s.c + o, s.d + o, CS__WK, 0);
    sum = cs__wtree_up<T>(sum, lane, (cs_seg_node<T> *)0);
    const size_t wq = (t0 + (size_t)(threadIdx.x - lane) * CS__WK) / CS__WROWS;
    if (lane == 0 && wq * CS__WROWS < m) {
        ra[2 * wq] = sum.pF, rb[2 * wq] = T(1), rc[2 * wq] = sum.qF, rd[2 * wq] = sum.dF;
        ra[2 * wq + 1] = sum.pL, rb[2 * wq + 1] = T(1), rc[2 * wq + 1] = sum.qL, rd[2 * wq + 1] = sum.dL;
    }
}

/* x: the reduced level's solution (warp w's ends: x[2w], x[2w+1]); writes the level's solution
 * (m rows) to d. */
template <typename T, int NT>
__global__ void __launch_bounds__(NT, 384 / NT)
cs__wsubst_kernel(size_t m, size_t n, int vec, const T *__restrict__ a, const T *__restrict__ b,
                  const T *__restrict__ c, T *__restrict__ d, const T *__restrict__ x)
{
    extern __shared__ __align__(16) unsigned char cs__raw[];
    cs__wsmem<T, NT> s(cs__raw);
    const size_t t0 = (size_t)(gridDim.x - 1 - blockIdx.x) * (CS__WK * NT);
    cs__wload<T, NT, true>(t0, m, n, vec, a, b, c, d, s.a, s.b, s.c, s.d);
    const int o = threadIdx.x * CS__WPAD, lane = threadIdx.x & 31;
    cs_seg<T> sum = cs_seg_chunk<T>(s.a + o, s.b + o, s.c + o, s.d + o, CS__WK, 1);
    cs_seg_node<T> nd[5];
    sum = cs__wtree_up<T>(sum, lane, nd);
    const size_t wq = (t0 + (size_t)(threadIdx.x - lane) * CS__WK) / CS__WROWS;
    cs_pdl_wait(); /* x: the next level's solution */
    cs_pdl_trigger();
    T xf = T(0), xl = T(0);
    if (lane == 0 && wq * CS__WROWS < m) xf = x[2 * wq], xl = x[2 * wq + 1];
    cs__wtree_down<T>(nd, lane, xf, xl);
    cs_seg_chunk_subst<T>(s.a + o, s.c + o, s.d + o, CS__WK, xf, xl);
    __syncthreads();
    cs__wstore<T, NT>(t0, m, vec, s.d, d);
}

/* A level of m <= CS__WBASE rows (systems of n rows), in place on d, by one block: its lanes'
 * chunks and warp trees as above leave 2·CS__WBW rows (unit diagonal), which warp 0 solves by
 * PCR with shuffles (one division a row a step; rows past them identity rows); then each warp
 * splits its tree down and each lane substitutes. */
template <typename T>
__global__ void __launch_bounds__(CS__WBT)
cs__wbase_kernel(size_t m, size_t n, int vec, const T *__restrict__ a, const T *__restrict__ b,
                 const T *__restrict__ c, T *__restrict__ d)
{
    extern __shared__ __align__(16) unsigned char cs__raw[];
    cs__wsmem<T, CS__WBT> s(cs__raw);
    __shared__ T red[3][2 * CS__WBW]; /* the warps' rows: a, c, d (b = 1), then the solution */
    cs_pdl_wait(); /* the level's rows come from the last reduce */
    cs_pdl_trigger();
    cs__wload<T, CS__WBT>(0, m, n, vec, a, b, c, d, s.a, s.b, s.c, s.d);
    const int o = threadIdx.x * CS__WPAD, lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    cs_seg<T> sum = cs_seg_chunk<T>(s.a + o, s.b + o, s.c + o, s.d + o, CS__WK, 1);
    cs_seg_node<T> nd[5];
    sum = cs__wtree_up<T>(sum, lane, nd);
    if (lane == 0) {
        red[0][2 * w] = sum.pF, red[1][2 * w] = sum.qF, red[2][2 * w] = sum.dF;
        red[0][2 * w + 1] = sum.pL, red[1][2 * w + 1] = sum.qL, red[2][2 * w + 1] = sum.dL;
    }
    __syncthreads();
    if (w == 0) { /* PCR on 2·CS__WBW <= 32 rows, one a lane */
        const int i = lane;
        T al = T(0), ga = T(0), de = T(0);
        if (i < 2 * CS__WBW) al = red[0][i], ga = red[1][i], de = red[2][i];
#pragma unroll
        for (int k = 1; k < 2 * CS__WBW; k <<= 1) {
            T alm = __shfl_up_sync(0xffffffffu, al, k), gam = __shfl_up_sync(0xffffffffu, ga, k);
            T dem = __shfl_up_sync(0xffffffffu, de, k);
            T alp = __shfl_down_sync(0xffffffffu, al, k), gap = __shfl_down_sync(0xffffffffu, ga, k);
            T dep = __shfl_down_sync(0xffffffffu, de, k);
            if (i < k) alm = gam = dem = T(0);
            if (i + k >= 2 * CS__WBW) alp = gap = dep = T(0);
            const T inv = T(1) / (T(1) - gam * al - alp * ga);
            de = (de - dem * al - dep * ga) * inv;
            al = -alm * al * inv;
            ga = -gap * ga * inv;
        }
        if (i < 2 * CS__WBW) red[2][i] = de;
    }
    __syncthreads();
    T xf = T(0), xl = T(0);
    if (lane == 0) xf = red[2][2 * w], xl = red[2][2 * w + 1];
    cs__wtree_down<T>(nd, lane, xf, xl);
    cs_seg_chunk_subst<T>(s.a + o, s.c + o, s.d + o, CS__WK, xf, xl);
    __syncthreads();
    cs__wstore<T, CS__WBT>(0, m, vec, s.d, d);
}

/* The last reduced level (m <= CS__PMAX rows, unit diagonal) by PCR in one block, a row a thread:
 * log2(m) steps of one division each, against the warp base's 16-row chunk sweeps and 5-level
 * trees up and down (ncu, 2^24 double: 10.3 us for its 256 rows, of ~26 us between the two
 * passes). Rows are normalised by b first; a[0] and c[m-1] are taken as 0 (the level is one
 * system). In place: each step reads its neighbours into registers, then every thread writes
 * after a barrier. Measured slower than the warp base on a level of 4 096 rows (2^20 rows), so
 * taken up to 1 024 rows (the reduced levels of 2^21 to 2^26 rows: 32 to 1 024). */
#define CS__PT 1024 /* most threads, a row each */
#define CS__PMAX CS__PT
#define CS__PSMEM(T) (3 * CS__PMAX * sizeof(T)) /* 24 KB in double: no opt-in */
template <typename T>
__global__ void __launch_bounds__(CS__PT)
cs__pcr_base_kernel(int m, const T *__restrict__ a, const T *__restrict__ b,
                    const T *__restrict__ c, T *__restrict__ d)
{
    extern __shared__ __align__(16) unsigned char cs__raw[];
    T *sa = reinterpret_cast<T *>(cs__raw), *sc = sa + CS__PMAX, *sd = sc + CS__PMAX;
    cs_pdl_wait(); /* the level's rows come from the last reduce */
    cs_pdl_trigger();
    const int i = threadIdx.x;
    if (i < m) {
        const T r = T(1) / b[i];
        sa[i] = (i == 0) ? T(0) : a[i] * r;
        sc[i] = (i == m - 1) ? T(0) : c[i] * r;
        sd[i] = d[i] * r;
    }
    __syncthreads();
    for (int st = 1; st < m; st <<= 1) {
        T na = T(0), nc = T(0), nd = T(0);
        if (i < m) {
            const T al = sa[i], ga = sc[i], de = sd[i];
            T alm = T(0), gam = T(0), dem = T(0), alp = T(0), gap = T(0), dep = T(0);
            if (i >= st) alm = sa[i - st], gam = sc[i - st], dem = sd[i - st];
            if (i + st < m) alp = sa[i + st], gap = sc[i + st], dep = sd[i + st];
            const T r = T(1) / (T(1) - gam * al - alp * ga);
            nd = (de - dem * al - dep * ga) * r;
            na = -alm * al * r;
            nc = -gap * ga * r;
        }
        __syncthreads();
        if (i < m) sa[i] = na, sc[i] = nc, sd[i] = nd;
        __syncthreads();
    }
    if (i < m) d[i] = sd[i];
}

/* ---- host side --------------------------------------------------------------------------- */
static size_t cs__wround32(size_t m) { return (m + 31) / 32 * 32; }
static size_t cs__wreduced(size_t m) { return 2 * ((m + CS__WROWS - 1) / CS__WROWS); }

/* Elements of workspace for N rows: 4 arrays per reduced level, each rounded to 32. */
static size_t cs__wchunked_elems(size_t N)
{
    size_t tot = 0;
    for (size_t m = N; m > CS__WBASE;) {
        m = cs__wreduced(m);
        tot += 4 * cs__wround32(m);
    }
    return tot;
}

template <typename T, int NT> static cudaError_t cs__wlevel_attr(void)
{
    const int tile = (int)CS__WSMEM(T, NT);
    cudaError_t e = cudaFuncSetAttribute((const void *)cs__wreduce_kernel<T, NT>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, tile);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute((const void *)cs__wsubst_kernel<T, NT>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, tile);
    return e;
}

/* The kernels' dynamic shared memory beyond 48 KB: opt in once per instantiation. */
template <typename T> static cs_solver_status cs__wattr(void)
{
    static std::once_flag once;
    static cudaError_t e = cudaSuccess;
    std::call_once(once, [] {
        const int base = (int)CS__WSMEM(T, CS__WBT);
        e = cs__wlevel_attr<T, 32>();
        if (e == cudaSuccess) e = cs__wlevel_attr<T, 64>();
        if (e == cudaSuccess) e = cs__wlevel_attr<T, 128>();
        if (e == cudaSuccess) e = cs__wlevel_attr<T, 256>();
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute((const void *)cs__wbase_kernel<T>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, base);
    });
    CS__TG_CUDA(e);
    return CS_SOLVER_OK;
}

/* Programmatic dependent launch on unless CS_THOMAS_PDL=0 (for the benchmark's comparison). */
static bool cs__pdl_on(void)
{
    const char *e = getenv("CS_THOMAS_PDL");
    return !(e && e[0] == '0');
}

/* The reduced levels' base by PCR (cs__pcr_base_kernel) unless CS_THOMAS_PCR_BASE=0 (the warp
 * base, for the benchmark's comparison). */
static bool cs__pcr_base_on(void)
{
    const char *e = getenv("CS_THOMAS_PCR_BASE");
    return !(e && e[0] == '0');
}

/* kernel<<<g, b, smem, st>>>(args...), with pdl: as a programmatic dependent launch */
template <typename... P, typename... A>
static cudaError_t cs__wlaunch(bool pdl, void (*kernel)(P...), unsigned g, unsigned b, size_t smem,
                               cudaStream_t st, A... args)
{
    return cs_pdl_launch(pdl, kernel, dim3(g), dim3(b), smem, st, args...);
}

/* Threads a block of the level kernels: CS_THOMAS_WT = 32 (the default), 64, 128 or 256; the
 * same 16 rows a lane, so smaller blocks only change how many share an SM (12 blocks of one warp
 * of double: 12 warps either way) and how finely the grid ends and overlaps its barriers. */
static int cs__wt(void)
{
    const char *e = getenv("CS_THOMAS_WT");
    const int v = e ? atoi(e) : CS__WT;
    return (v == 64 || v == 128 || v == 256) ? v : 32;
}

template <typename T, int NT>
static cudaError_t cs__wreduce_nt(bool pdl, cudaStream_t st, size_t m, size_t n, int vec,
                                  const T *a, const T *b, const T *c, const T *d, T *ra, T *rb,
                                  T *rc, T *rd)
{
    const size_t blocks = (m + CS__WK * NT - 1) / (CS__WK * NT);
    return cs__wlaunch(pdl, cs__wreduce_kernel<T, NT>, (unsigned)blocks, NT, CS__WSMEM(T, NT), st,
                       m, n, vec, a, b, c, d, ra, rb, rc, rd);
}

template <typename T>
static cudaError_t cs__wreduce_launch(int wt, bool pdl, cudaStream_t st, size_t m, size_t n,
                                      int vec, const T *a, const T *b, const T *c, const T *d,
                                      T *ra, T *rb, T *rc, T *rd)
{
    if (wt == 64) return cs__wreduce_nt<T, 64>(pdl, st, m, n, vec, a, b, c, d, ra, rb, rc, rd);
    if (wt == 128) return cs__wreduce_nt<T, 128>(pdl, st, m, n, vec, a, b, c, d, ra, rb, rc, rd);
    if (wt == 256) return cs__wreduce_nt<T, 256>(pdl, st, m, n, vec, a, b, c, d, ra, rb, rc, rd);
    return cs__wreduce_nt<T, 32>(pdl, st, m, n, vec, a, b, c, d, ra, rb, rc, rd);
}

template <typename T, int NT>
static cudaError_t cs__wsubst_nt(bool pdl, cudaStream_t st, size_t m, size_t n, int vec,
                                 const T *a, const T *b, const T *c, T *d, const T *x)
{
    const size_t blocks = (m + CS__WK * NT - 1) / (CS__WK * NT);
    return cs__wlaunch(pdl, cs__wsubst_kernel<T, NT>, (unsigned)blocks, NT, CS__WSMEM(T, NT), st,
                       m, n, vec, a, b, c, d, x);
}

template <typename T>
static cudaError_t cs__wsubst_launch(int wt, bool pdl, cudaStream_t st, size_t m, size_t n,
                                     int vec, const T *a, const T *b, const T *c, T *d, const T *x)
{
    if (wt == 64) return cs__wsubst_nt<T, 64>(pdl, st, m, n, vec, a, b, c, d, x);
    if (wt == 128) return cs__wsubst_nt<T, 128>(pdl, st, m, n, vec, a, b, c, d, x);
    if (wt == 256) return cs__wsubst_nt<T, 256>(pdl, st, m, n, vec, a, b, c, d, x);
    return cs__wsubst_nt<T, 32>(pdl, st, m, n, vec, a, b, c, d, x);
}

static int cs__wvec(const void *a, const void *b, const void *c, const void *d, size_t al)
{
    return (((uintptr_t)a | (uintptr_t)b | (uintptr_t)c | (uintptr_t)d) % al) == 0;
}

template <typename T>
static cs_solver_status cs__wchunked_run(int nsys, int n, const T *a, const T *b, const T *c, T *d,
                                         T *work, cudaStream_t stream)
{
    cs_solver_status st = cs__wattr<T>();
    if (st != CS_SOLVER_OK) return st;
    const size_t N = (size_t)nsys * (size_t)n;
    const T *la[CS__WMAX_LEVELS], *lb[CS__WMAX_LEVELS], *lc[CS__WMAX_LEVELS];
    T *ld[CS__WMAX_LEVELS];
    size_t lm[CS__WMAX_LEVELS], ln[CS__WMAX_LEVELS];
    int lv[CS__WMAX_LEVELS];
    la[0] = a, lb[0] = b, lc[0] = c, ld[0] = d, lm[0] = N, ln[0] = (size_t)n;
    lv[0] = cs__wvec(a, b, c, d, 2 * sizeof(T));
    const bool pdl = cs__pdl_on(); /* the first kernel is a plain launch: it waits for the inputs */
    const int wt = cs__wt();
    int L = 0;
    while (lm[L] > CS__WBASE) {
        if (L + 1 >= CS__WMAX_LEVELS) CS__TG_INVALID("chunked: too many levels for %zu rows", N);
        const size_t m = cs__wreduced(lm[L]), r = cs__wround32(m);
        T *ra = work, *rb = work + r, *rc = work + 2 * r, *rd = work + 3 * r;
        work += 4 * r;
        CS__TG_CUDA(cs__wreduce_launch<T>(wt, pdl && L > 0, stream, lm[L], ln[L], lv[L], la[L],
                                          lb[L], lc[L], (const T *)ld[L], ra, rb, rc, rd));
        ++L;
        la[L] = ra, lb[L] = rb, lc[L] = rc, ld[L] = rd, lm[L] = m, ln[L] = m;
        lv[L] = cs__wvec(ra, rb, rc, rd, 2 * sizeof(T));
    }
    if (L > 0 && lm[L] <= CS__PMAX && cs__pcr_base_on())
        CS__TG_CUDA(cs__wlaunch(pdl, cs__pcr_base_kernel<T>, 1u, (unsigned)cs__wround32(lm[L]),
                                CS__PSMEM(T), stream, (int)lm[L], la[L], lb[L], lc[L], ld[L]));
    else
        CS__TG_CUDA(cs__wlaunch(pdl && L > 0, cs__wbase_kernel<T>, 1u, CS__WBT,
                                CS__WSMEM(T, CS__WBT), stream, lm[L], ln[L], lv[L], la[L], lb[L],
                                lc[L], ld[L]));
    for (int l = L - 1; l >= 0; --l) {
        CS__TG_CUDA(cs__wsubst_launch<T>(wt, pdl, stream, lm[l], ln[l], lv[l], la[l], lb[l], lc[l],
                                         ld[l], (const T *)ld[l + 1]));
    }
    return CS_SOLVER_OK;
}

template <typename T>
static cs_solver_status cs__wchunked_checked(int nsys, int n, const T *a, T *b, const T *c, T *d,
                                             void *work, size_t work_bytes, void *stream)
{
    if (nsys < 0 || n < 1) CS__TG_INVALID("chunked: bad batch shape nsys=%d n=%d", nsys, n);
    if (nsys == 0) return CS_SOLVER_OK;
    if (!a || !b || !c || !d) CS__TG_INVALID("chunked: NULL array");
    if ((size_t)nsys * (size_t)n > (size_t)1 << 40) CS__TG_INVALID("chunked: batch too large");
    const size_t need = cs__wchunked_elems((size_t)nsys * n) * sizeof(T);
    if (need > 0 && (!work || work_bytes < need))
        CS__TG_INVALID("chunked: workspace of %zu bytes, %zu needed", work ? work_bytes : 0, need);
    if (((uintptr_t)work & 15) != 0) CS__TG_INVALID("chunked: workspace not 16-byte aligned");
    return cs__wchunked_run<T>(nsys, n, a, b, c, d, (T *)work, (cudaStream_t)stream);
}

/* The variant call: the library's workspace (cs_thomas_gpu_workspace.cu), default stream. */
template <typename T>
static cs_solver_status cs__wchunked_owned(int nsys, int n, const T *a, const T *b, const T *c,
                                           T *d)
{
    void *ws = NULL;
    cs_solver_status st = cs__thomas_ws_lock(cs__wchunked_elems((size_t)nsys * n) * sizeof(T), &ws);
    if (st != CS_SOLVER_OK) return st;
    st = cs__wchunked_run<T>(nsys, n, a, b, c, d, (T *)ws, (cudaStream_t)0);
    cs__thomas_ws_unlock();
    return st;
}

cs_solver_status cs__thomas_chunked_owned(int nsys, int n, const double *a, const double *b,
                                          const double *c, double *d)
{
    return cs__wchunked_owned<double>(nsys, n, a, b, c, d);
}
cs_solver_status cs__thomas_chunked_owned(int nsys, int n, const float *a, const float *b,
                                          const float *c, float *d)
{
    return cs__wchunked_owned<float>(nsys, n, a, b, c, d);
}

extern "C" {

size_t cs_thomas_gpu_chunked_workspace(int nsys, int n, cs_thomas_gpu_precision prec)
{
    if (nsys <= 0 || n <= 0) return 0;
    return cs__wchunked_elems((size_t)nsys * n) *
           (prec == CS_THOMAS_GPU_F32 ? sizeof(float) : sizeof(double));
}

cs_solver_status cs_thomas_gpu_chunked_d(int nsys, int n, const double *a, double *b,
                                         const double *c, double *d, void *work,
                                         size_t work_bytes, void *stream)
{
    return cs__wchunked_checked<double>(nsys, n, a, b, c, d, work, work_bytes, stream);
}

cs_solver_status cs_thomas_gpu_chunked_f(int nsys, int n, const float *a, float *b,
                                         const float *c, float *d, void *work,
                                         size_t work_bytes, void *stream)
{
    return cs__wchunked_checked<float>(nsys, n, a, b, c, d, work, work_bytes, stream);
}

} /* extern "C" */
