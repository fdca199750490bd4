/* The "chunked" GPU Hines variant's chunk kernels (the plan, the algorithm and the host emulation
 * that mirrors these kernels operation for operation: cs_hines_chunked_plan.c). One thread per
 * chunk; the 32 chunks of a group are one warp, their interior rows interleaved
 * (row j of lane q at base + j·32 + q) and bottom-aligned, so that every step of the warp's
 * sweeps loads one contiguous 256-byte row (double) for all lanes, however long each chunk is.
 * The template LMAX bounds a chunk's interior: the loops over it are unrolled, so its rows
 * live in registers (P1 issues all loads of a chunk before its dependent chain; P3 keeps the
 * bottom-up elimination in registers for the downward substitution).
 * The template In gives an interior row's d, u and rhs: read from the solve's arrays
 * (cs__chk_in_solve), or, in the fused step, assembled from the membrane state
 * (cs__chk_in_step: d0 + g, cdt·v + b0 + (g·v − i), i and g read at rows with current only,
 * and zeroed there by P3). */
#include <cuda_runtime.h>

#include "cs_hines_chunked_gpu.h"
#include "cs_hines_gpu_impl.h"

/* An interior row's d, u, rhs for P1 and P3, in parts so that a chunk's loads are all issued
 * before any of them is waited for: base() loads d and rhs as every row has them and returns 1
 * where the row carries current, coupling() its u; current() then adds i and g there (a rare
 * branch), and P3, their last reader, clears them with clear() after its other loads and stores. */
/* the solve: d, u, rhs as they are */
template <class T>
struct cs__chk_in_solve {
    const T *d, *u, *rhs;
    template <bool LAST>
    __device__ __forceinline__ unsigned base(long long k, T &D, T &R) const
    {
        D = LAST ? __ldg(d + k) : d[k]; /* P1 writes d (at the ends), P3 only reads it */
        R = rhs[k];
        return 0u;
    }
    __device__ __forceinline__ T coupling(long long k) const { return __ldg(u + k); }
    __device__ __forceinline__ void current(long long, T &, T &) const {}
    __device__ __forceinline__ void clear(long long) const {}
};

/* the fused step: assembled from the membrane state (the order of operations of cs__chk_row_in,
 * the host emulation): d = d0 (+ g), rhs = cdt·v + b0 (+ (g·v − i)) */
struct cs__chk_in_step {
    const double *d0, *cdt, *b0, *u, *v;
    double *i, *g;
    const unsigned char *flags;
    template <bool LAST>
    __device__ __forceinline__ unsigned base(long long k, double &D, double &R) const
    {
        D = __ldg(d0 + k);
        R = __ldg(cdt + k) * v[k] + __ldg(b0 + k);
        return __ldg(flags + k) & CS_HINES_ROW_CURRENT;
    }
    __device__ __forceinline__ double coupling(long long k) const { return __ldg(u + k); }
    __device__ __forceinline__ void current(long long k, double &D, double &R) const
    {
        const double gk = g[k], vk = v[k];
        D += gk;
        R += gk * vk - i[k];
    }
    __device__ __forceinline__ void clear(long long k) const
    {
        g[k] = 0.0;
        i[k] = 0.0;
    }
};

/* a chunk's interior rows (q = 0 the bottom one, at k0) from in, into vd, vu, vr; bit q of the
 * result: row q carries current */
template <class T, int LMAX, bool LAST, class In>
__device__ __forceinline__ unsigned cs__chk_load(const In &in, long long k0, int m, T *vd, T *vu, T *vr)
{
    unsigned cur = 0u;
#pragma unroll
    for (int q = 0; q < LMAX; ++q)
        if (q < m) {
            const long long k = k0 - (long long)q * CS__CHK_LANES;
            cur |= in.template base<LAST>(k, vd[q], vr[q]) << q;
            vu[q] = in.coupling(k);
        }
    if (cur) /* rare: ~1 row in 2 000 carries current in the big networks */
#pragma unroll
        for (int q = 0; q < LMAX; ++q)
            if ((cur >> q) & 1u) in.current(k0 - (long long)q * CS__CHK_LANES, vd[q], vr[q]);
    return cur;
}

/* P1: the interior (from in) eliminated into d, rhs of its ends a and b (the reduced rows) */
template <class T, int LMAX, class In>
__global__ void __launch_bounds__(128) cs__k_chunked_p1(int nchunk, const int4 *__restrict__ chunk, const int2 *__restrict__ group,
                                                        In in, T *d, T *rhs, T *__restrict__ ur)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nchunk) return;
    const int4 e = chunk[c];
    const int2 gr = group[c / CS__CHK_LANES];
    const int lane = c % CS__CHK_LANES, m = e.w;
    /* q = 0 is the interior's bottom row (next to b), at group row M - 1 */
    const long long k0 = gr.x + (long long)(gr.y - 1) * CS__CHK_LANES + lane;
    T vd[LMAX], vu[LMAX], vr[LMAX];
    cs__chk_load<T, LMAX, false>(in, k0, m, vd, vu, vr);
    T cd = T(0), cr = T(0), G = __ldg(in.u + e.z), db = T(0), rb = T(0);
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

/* P3: the interior (from in again) solved with x_a, x_b from x; its solution into out */
template <class T, int LMAX, class In>
__global__ void __launch_bounds__(128) cs__k_chunked_p3(int nchunk, const int4 *__restrict__ chunk, const int2 *__restrict__ group,
                                                        In in, const T *x_ab, T *out)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nchunk) return;
    const int4 e = chunk[c];
    const int2 gr = group[c / CS__CHK_LANES];
    const int lane = c % CS__CHK_LANES, m = e.w;
    const long long k0 = gr.x + (long long)(gr.y - 1) * CS__CHK_LANES + lane;
    T va[LMAX], vb[LMAX], vu[LMAX];
    const unsigned cur = cs__chk_load<T, LMAX, true>(in, k0, m, va, vu, vb);
    const T xa = x_ab[e.x];
    T cd = T(0), cr = __ldg(in.u + e.z) * x_ab[e.y];
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
            out[k0 - (long long)q * CS__CHK_LANES] = x;
        }
    if (cur) /* i and g, read above, zeroed for the next step */
#pragma unroll
        for (int q = 0; q < LMAX; ++q)
            if ((cur >> q) & 1u) in.clear(k0 - (long long)q * CS__CHK_LANES);
}

/* the launch of kernel K<T, LMAX, In> for the plan's L */
#define CS__CHK_LAUNCH(K, T, In, ...)                                                                             \
    do {                                                                                                          \
        if (cd.nchunk == 0) return cudaSuccess;                                                                   \
        const int th = 128, grid = (cd.nchunk + th - 1) / th;                                                     \
        if (cd.L <= 8) K<T, 8, In><<<grid, th, 0, stream>>>(cd.nchunk, cd.chunk, cd.group, __VA_ARGS__);          \
        else if (cd.L <= 16) K<T, 16, In><<<grid, th, 0, stream>>>(cd.nchunk, cd.chunk, cd.group, __VA_ARGS__);   \
        else K<T, CS__CHK_MAX_L, In><<<grid, th, 0, stream>>>(cd.nchunk, cd.chunk, cd.group, __VA_ARGS__);       \
        return cudaGetLastError();                                                                                \
    } while (0)

template <class T>
cudaError_t cs__chunked_launch_p1(const cs__chunked_dev &cd, T *d, const T *u, T *rhs, T *ur, cudaStream_t stream)
{
    const cs__chk_in_solve<T> in = {d, u, rhs};
    CS__CHK_LAUNCH(cs__k_chunked_p1, T, cs__chk_in_solve<T>, in, d, rhs, ur);
}

template <class T>
cudaError_t cs__chunked_launch_p3(const cs__chunked_dev &cd, const T *d, const T *u, T *rhs, cudaStream_t stream)
{
    const cs__chk_in_solve<T> in = {d, u, rhs};
    CS__CHK_LAUNCH(cs__k_chunked_p3, T, cs__chk_in_solve<T>, in, (const T *)rhs, rhs);
}

static __host__ __device__ cs__chk_in_step cs__chk_in_of(const cs_hines_step_d &st)
{
    const cs__chk_in_step in = {st.d0, st.cdt, st.b0, st.u, st.v, st.i, st.g, st.flags};
    return in;
}

cudaError_t cs__chunked_launch_p1_step(const cs__chunked_dev &cd, const cs_hines_step_d &st, double *ur, cudaStream_t stream)
{
    CS__CHK_LAUNCH(cs__k_chunked_p1, double, cs__chk_in_step, cs__chk_in_of(st), st.work_a, st.v, ur);
}

cudaError_t cs__chunked_launch_p3_step(const cs__chunked_dev &cd, const cs_hines_step_d &st, cudaStream_t stream)
{
    CS__CHK_LAUNCH(cs__k_chunked_p3, double, cs__chk_in_step, cs__chk_in_of(st), (const double *)st.v, st.v);
}

/* the reduced rows [0, nr): d into work_a, rhs into v itself (the sub plan's solve leaves x_a, x_b
 * there), i and g read and zeroed at flagged rows; u into ur when copy_u */
__global__ void cs__k_chunked_reduced_in(int nr, cs_hines_step_d st, double *__restrict__ ur, int copy_u)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nr) return;
    const cs__chk_in_step in = cs__chk_in_of(st);
    double D, R;
    if (in.base<true>(k, D, R)) {
        in.current(k, D, R);
        in.clear(k);
    }
    st.work_a[k] = D;
    st.v[k] = R;
    if (copy_u) ur[k] = in.coupling(k);
}

cudaError_t cs__chunked_launch_reduced_in(int nr, const cs_hines_step_d &st, double *ur, int copy_u, cudaStream_t stream)
{
    if (nr <= 0) return cudaSuccess;
    const int th = 256;
    cs__k_chunked_reduced_in<<<(nr + th - 1) / th, th, 0, stream>>>(nr, st, ur, copy_u);
    return cudaGetLastError();
}

template cudaError_t cs__chunked_launch_p1<double>(const cs__chunked_dev &, double *, const double *, double *, double *, cudaStream_t);
template cudaError_t cs__chunked_launch_p1<float>(const cs__chunked_dev &, float *, const float *, float *, float *, cudaStream_t);
template cudaError_t cs__chunked_launch_p3<double>(const cs__chunked_dev &, const double *, const double *, double *, cudaStream_t);
template cudaError_t cs__chunked_launch_p3<float>(const cs__chunked_dev &, const float *, const float *, float *, cudaStream_t);
