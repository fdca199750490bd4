/* The per-thread chunk kernels of the bridge (cs_thomas_bridge_gpu.cu: one system over D
 * partitions on D streams, each reducing its row range): Thomas inside chunks of 16 rows per
 * thread, a reduced system of the chunks' end rows, substitution back. The chunked variant
 * itself now takes warp-wide chunks (cs_thomas_large_warp_gpu.cu: 32x fewer reduced rows, so
 * 2^20 rows need 3 launches instead of 9); the bridge keeps these, whose row ranges may start at
 * any multiple of 16 rows.
 *
 * A batch of nsys systems of n rows is one system of N = nsys·n rows whose couplings across
 * system boundaries are zero: a[s·n] and c[s·n+n-1] are taken as 0 when a tile is loaded (they
 * are never read). Rows past N are identity rows (a = c = d = 0, b = 1), which decouple.
 *
 * A level of m rows:
 *   reduce      a block of CS__T threads takes a tile of CS__T·CS__K rows (coalesced loads into
 *               shared memory, one pad element per chunk keeps the per-thread strides free of
 *               bank conflicts); thread q owns the chunk of rows [qK, qK+K) and eliminates its
 *               interior twice from shared memory:
 *                 downwards:  every row in terms of x_0 (F) and the next row, ending with
 *                             the L row   aL·F + L + cL·F(next chunk) = dL
 *                 upwards:    every row in terms of the next-lower row and x_{K-1} (L), ending
 *                             with the F row   a0·L(previous chunk) + F + c0·L = d0
 *               The F and L rows of chunk q are rows 2q and 2q+1 of the next level, a
 *               tridiagonal system of 2·ceil(m/K) rows (unit diagonal) in the chunks' ends. It is
 *               the Schur complement of the interiors, so it stays diagonally dominant when the
 *               input is.
 *   (recurse on the reduced system)
 *   substitute  the tile again; thread q takes F and L from the reduced solution and solves its
 *               chunk's interior rows 1..K-2 by Thomas with x_0 = F and x_{K-1} = L moved to the
 *               right-hand side; the solution leaves through shared memory, coalesced.
 * Traffic: level 0 reads a, b, c, d twice and writes d once (9 arrays); the reduced levels add
 * about 1/8 + 1/64 + ... of that. b is never written; the reduced levels live in the workspace.
 *
 * Numerics: Gaussian elimination without pivoting in another order; for a diagonally dominant
 * system every pivot is at least the row's dominance margin, as in Thomas. */
#include <cuda_runtime.h>

#include <mutex>
#include <stdint.h>
#include <stdio.h>

#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

#define CS__K CS__CHUNK_K /* rows per thread chunk */
#define CS__T 128     /* threads per reduce/substitute block */
#define CS__TILE (CS__K * CS__T)
#define CS__PAD (CS__K + 1)
static_assert(CS__K >= 4, "the substitution treats rows 1 and K-2 as distinct interior rows");

/* ---- tiles ------------------------------------------------------------------------------- */
__device__ __forceinline__ int cs__slot(int e) { return e + e / CS__K; }

/* Rows [t0, t0 + TILE) of a system of N rows made of systems of n rows, into shared memory;
 * rows at or past r1 (<= N) are loaded as identity rows. */
template <typename T>
__device__ __forceinline__ void cs__load_tile(size_t t0, size_t r1, size_t N, size_t n,
                                              const T *__restrict__ a,
                                              const T *__restrict__ b, const T *__restrict__ c,
                                              const T *__restrict__ d, T *sa, T *sb, T *sc, T *sd)
{
    for (int e = threadIdx.x; e < CS__TILE; e += CS__T) {
        const size_t g = t0 + (size_t)e;
        const int s = cs__slot(e);
        if (g < r1) {
            sa[s] = __ldg(a + g), sb[s] = __ldg(b + g), sc[s] = __ldg(c + g), sd[s] = d[g];
        } else {
            sa[s] = T(0), sb[s] = T(1), sc[s] = T(0), sd[s] = T(0);
        }
    }
    __syncthreads();
    /* system boundaries bnd = k·n in [t0, t0 + TILE]: a = 0 at row bnd, c = 0 at row bnd-1;
     * n = 0: none (the rows are a piece of a larger system: the bridge across devices) */
    const size_t end = t0 + CS__TILE;
    const size_t first = n ? (t0 + n - 1) / n * n : 0;
    for (size_t bnd = first + (size_t)threadIdx.x * n; n && bnd <= end && bnd <= N;
         bnd += (size_t)CS__T * n) {
        if (bnd < end && bnd < N) sa[cs__slot((int)(bnd - t0))] = T(0);
        if (bnd > t0) sc[cs__slot((int)(bnd - 1 - t0))] = T(0);
    }
    __syncthreads();
}

template <typename T> struct cs__smem {
    T *a, *b, *c, *d;
    __device__ cs__smem(unsigned char *raw)
    {
        a = reinterpret_cast<T *>(raw);
        b = a + CS__T * CS__PAD;
        c = b + CS__T * CS__PAD;
        d = c + CS__T * CS__PAD;
    }
};

/* ---- kernels ----------------------------------------------------------------------------- */
/* Rows [r0, r1) of a level of m rows (r0 a multiple of K) -> rows [2·r0/K, 2·ceil(r1/K)) of the
 * reduced level (ra, rb, rc, rd), which has 2·ceil(m/K) rows. */
template <typename T>
__global__ void __launch_bounds__(CS__T)
cs__chunk_reduce_kernel(size_t r0, size_t r1, size_t m, size_t n, const T *__restrict__ a,
                        const T *__restrict__ b, const T *__restrict__ c, const T *__restrict__ d,
                        T *__restrict__ ra, T *__restrict__ rb, T *__restrict__ rc,
                        T *__restrict__ rd)
{
    extern __shared__ __align__(16) unsigned char cs__raw[];
    cs__smem<T> s(cs__raw);
    const size_t t0 = r0 + (size_t)blockIdx.x * CS__TILE;
    cs__load_tile<T>(t0, r1, m, n, a, b, c, d, s.a, s.b, s.c, s.d);
    const int o = threadIdx.x * CS__PAD;
    const T *A = s.a + o, *B = s.b + o, *C = s.c + o, *D = s.d + o;

    /* downwards: x_{j} = de - al·x_0 - ga·x_{j+1}; starts as the identity x_0 = x_0 */
    T al = T(-1), ga = T(0), de = T(0);
#pragma unroll
    for (int j = 1; j < CS__K; ++j) {
        const T inv = T(1) / (B[j] - A[j] * ga);
        al = -A[j] * al * inv;
        ga = C[j] * inv;
        de = (D[j] - A[j] * de) * inv;
    }
    /* upwards: x_j = dd - ph·x_{j-1} - ps·x_{K-1}; starts as the identity x_{K-1} = x_{K-1} */
    T ph = T(0), ps = T(-1), dd = T(0);
#pragma unroll
    for (int j = CS__K - 2; j >= 0; --j) {
        const T inv = T(1) / (B[j] - C[j] * ph);
        ph = A[j] * inv;
        ps = -C[j] * ps * inv;
        dd = (D[j] - C[j] * dd) * inv;
    }
    const size_t q = t0 / CS__K + threadIdx.x, nch = (r1 + CS__K - 1) / CS__K;
    if (q < nch) {
        ra[2 * q] = ph, rb[2 * q] = T(1), rc[2 * q] = ps, rd[2 * q] = dd;         /* F row */
        ra[2 * q + 1] = al, rb[2 * q + 1] = T(1), rc[2 * q + 1] = ga, rd[2 * q + 1] = de; /* L */
    }
}

/* x: the reduced level's solution (F_q = x[2q], L_q = x[2q+1]); writes the solution of rows
 * [r0, r1) of the level (m rows) to d. */
template <typename T>
__global__ void __launch_bounds__(CS__T)
cs__chunk_subst_kernel(size_t r0, size_t r1, size_t m, size_t n, const T *__restrict__ a,
                       const T *__restrict__ b, const T *__restrict__ c, T *__restrict__ d,
                       const T *__restrict__ x)
{
    extern __shared__ __align__(16) unsigned char cs__raw[];
    cs__smem<T> s(cs__raw);
    const size_t t0 = r0 + (size_t)blockIdx.x * CS__TILE;
    cs__load_tile<T>(t0, r1, m, n, a, b, c, d, s.a, s.b, s.c, s.d);
    const int o = threadIdx.x * CS__PAD;
    const T *A = s.a + o, *B = s.b + o, *C = s.c + o;
    T *D = s.d + o;
    const size_t q = t0 / CS__K + threadIdx.x, nch = (r1 + CS__K - 1) / CS__K;
    const T F = (q < nch) ? x[2 * q] : T(0), L = (q < nch) ? x[2 * q + 1] : T(0);

    /* interior rows 1..K-2 with the ends known */
    T cp[CS__K], dp[CS__K];
    {
        const T inv = T(1) / B[1];
        cp[1] = C[1] * inv;
        dp[1] = (D[1] - A[1] * F) * inv;
    }
#pragma unroll
    for (int j = 2; j < CS__K - 1; ++j) {
        const T inv = T(1) / (B[j] - A[j] * cp[j - 1]);
        cp[j] = C[j] * inv;
        const T rhs = (j == CS__K - 2) ? D[j] - C[j] * L : D[j];
        dp[j] = (rhs - A[j] * dp[j - 1]) * inv;
    }
    T xj = dp[CS__K - 2];
    D[CS__K - 2] = xj;
#pragma unroll
    for (int j = CS__K - 3; j >= 1; --j) {
        xj = dp[j] - cp[j] * xj;
        D[j] = xj;
    }
    D[0] = F;
    D[CS__K - 1] = L;
    __syncthreads();
    for (int e = threadIdx.x; e < CS__TILE; e += CS__T) {
        const size_t g = t0 + (size_t)e;
        if (g < r1) d[g] = s.d[cs__slot(e)];
    }
}

/* ---- host side --------------------------------------------------------------------------- */
template <typename T>
static cs_solver_status cs__smem_attr(const void *kernel)
{
    CS__TG_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)(4 * CS__T * CS__PAD * sizeof(T))));
    return CS_SOLVER_OK;
}

/* The kernels need more than 48 KB of shared memory: opt in once per instantiation and device
 * (the attribute is per device; the bridge across devices launches on several). */
template <typename T> static cs_solver_status cs__chunk_attr(void)
{
    constexpr int MAXDEV = 64;
    static std::once_flag once[MAXDEV];
    static cs_solver_status st[MAXDEV];
    int dev = 0;
    CS__TG_CUDA(cudaGetDevice(&dev));
    if (dev < 0 || dev >= MAXDEV) CS__TG_INVALID("chunk kernels: device %d (0..%d)", dev, MAXDEV - 1);
    std::call_once(once[dev], [dev] {
        st[dev] = cs__smem_attr<T>((const void *)cs__chunk_reduce_kernel<T>);
        if (st[dev] == CS_SOLVER_OK) st[dev] = cs__smem_attr<T>((const void *)cs__chunk_subst_kernel<T>);
    });
    return st[dev];
}

template <typename T>
cs_solver_status cs__chunk_reduce_launch(size_t r0, size_t r1, size_t m, size_t n, const T *a,
                                         const T *b, const T *c, const T *d, T *ra, T *rb, T *rc,
                                         T *rd, cudaStream_t stream)
{
    const cs_solver_status st = cs__chunk_attr<T>();
    if (st != CS_SOLVER_OK) return st;
    if (r1 <= r0) return CS_SOLVER_OK;
    const size_t blocks = (r1 - r0 + CS__TILE - 1) / CS__TILE;
    cs__chunk_reduce_kernel<T><<<(unsigned)blocks, CS__T, 4 * CS__T * CS__PAD * sizeof(T), stream>>>(
        r0, r1, m, n, a, b, c, d, ra, rb, rc, rd);
    CS__TG_CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}

template <typename T>
cs_solver_status cs__chunk_subst_launch(size_t r0, size_t r1, size_t m, size_t n, const T *a,
                                        const T *b, const T *c, T *d, const T *x,
                                        cudaStream_t stream)
{
    const cs_solver_status st = cs__chunk_attr<T>();
    if (st != CS_SOLVER_OK) return st;
    if (r1 <= r0) return CS_SOLVER_OK;
    const size_t blocks = (r1 - r0 + CS__TILE - 1) / CS__TILE;
    cs__chunk_subst_kernel<T><<<(unsigned)blocks, CS__T, 4 * CS__T * CS__PAD * sizeof(T), stream>>>(
        r0, r1, m, n, a, b, c, d, x);
    CS__TG_CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}
template cs_solver_status cs__chunk_reduce_launch<double>(size_t, size_t, size_t, size_t,
    const double *, const double *, const double *, const double *, double *, double *, double *,
    double *, cudaStream_t);
template cs_solver_status cs__chunk_subst_launch<double>(size_t, size_t, size_t, size_t,
    const double *, const double *, const double *, double *, const double *, cudaStream_t);
template cs_solver_status cs__chunk_reduce_launch<float>(size_t, size_t, size_t, size_t,
    const float *, const float *, const float *, const float *, float *, float *, float *,
    float *, cudaStream_t);
template cs_solver_status cs__chunk_subst_launch<float>(size_t, size_t, size_t, size_t,
    const float *, const float *, const float *, float *, const float *, cudaStream_t);
