/* Private to the bridge solvers (cs_thomas_bridge_gpu.cu: D partitions on D streams of one GPU;
 * cs_thomas_bridge_multi_gpu.cu: D partitions on several devices): the top level of one
 * partition, the bridge system and the substitution into the top level. See
 * cs_thomas_bridge_gpu.cu for the algorithm. */
#ifndef CS_THOMAS_BRIDGE_KERNELS_CUH
#define CS_THOMAS_BRIDGE_KERNELS_CUH

#include <cuda_runtime.h>
#include <stddef.h>

#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

namespace cs_bridge {

constexpr int TOP = CS__CHUNK_BASE, MAXD = CS_THOMAS_BRIDGE_MAX_PARTS;

/* Step 2: the top level of one partition, m <= TOP rows starting at global row g0 of a level
 * whose systems have n rows (n = 0: no system boundary inside or at the ends, the rows being a
 * piece of a larger system). Writes y, v, w (m each) and the bridge rows 2p, 2p+1 (coefficient
 * j of row i at brow[j·R + i]). */
template <typename T>
__global__ void __launch_bounds__(TOP)
end_reduce_kernel(int m, size_t g0, size_t n, const T *__restrict__ a,
                  const T *__restrict__ b, const T *__restrict__ c,
                  const T *__restrict__ d, T *__restrict__ y, T *__restrict__ v,
                  T *__restrict__ w, T *__restrict__ brow, int R, int p)
{
    __shared__ T s_al[TOP], s_be[TOP], s_ga[TOP], s_y[TOP], s_v[TOP], s_w[TOP];
    const int i = threadIdx.x;
    T ai = 0, bi = 1, ci = 0, di = 0;
    if (i < m) {
        ai = (n && (g0 + i) % n == 0) ? T(0) : a[i];
        bi = b[i];
        ci = (n && (g0 + i) % n == n - 1) ? T(0) : c[i];
        di = d[i];
    }
    /* the interior rows 1..m-2; the ends and rows past m are identity rows with zero sides */
    const bool in = (i >= 1 && i <= m - 2);
    T al = in && i > 1 ? ai : T(0), be = in ? bi : T(1), ga = in && i < m - 2 ? ci : T(0);
    T ry = in ? di : T(0), rv = in && i == 1 ? ai : T(0), rw = in && i == m - 2 ? ci : T(0);
    for (int k = 1; k < m; k <<= 1) {
        s_al[i] = al, s_be[i] = be, s_ga[i] = ga, s_y[i] = ry, s_v[i] = rv, s_w[i] = rw;
        __syncthreads();
        T alm = 0, bem = 1, gam = 0, ym = 0, vm = 0, wm = 0;
        T alp = 0, bep = 1, gap = 0, yp = 0, vp = 0, wp = 0;
        if (i >= k) alm = s_al[i - k], bem = s_be[i - k], gam = s_ga[i - k], ym = s_y[i - k], vm = s_v[i - k], wm = s_w[i - k];
        if (i + k < TOP) alp = s_al[i + k], bep = s_be[i + k], gap = s_ga[i + k], yp = s_y[i + k], vp = s_v[i + k], wp = s_w[i + k];
        __syncthreads();
        const T k1 = al / bem, k2 = ga / bep;
        ry -= ym * k1 + yp * k2, rv -= vm * k1 + vp * k2, rw -= wm * k1 + wp * k2;
        be -= gam * k1 + alp * k2;
        al = -alm * k1, ga = -gap * k2;
    }
    ry /= be, rv /= be, rw /= be;
    if (i < m) y[i] = ry, v[i] = rv, w[i] = rw;
    s_y[i] = ry, s_v[i] = rv, s_w[i] = rw;
    s_al[i] = ai, s_be[i] = bi, s_ga[i] = ci; /* the end rows' coefficients, for thread 0 */
    __syncthreads();
    if (i == 0) {
        /* x_1 = y_1 - v_1·F - w_1·L, or x_1 = L when m = 2 */
        const T y1 = m > 2 ? s_y[1] : T(0), v1 = m > 2 ? s_v[1] : T(0), w1 = m > 2 ? s_w[1] : T(-1);
        const T a0 = s_al[0], b0 = s_be[0], c0 = s_ga[0], d0 = d[0];
        const T pf = b0 - c0 * v1;
        /* x_{m-2} = y - v·F - w·L, or x_{m-2} = F when m = 2 */
        const T ym2 = m > 2 ? s_y[m - 2] : T(0), vm2 = m > 2 ? s_v[m - 2] : T(-1);
        const T wm2 = m > 2 ? s_w[m - 2] : T(0);
        const T aL = s_al[m - 1], bL = s_be[m - 1], cL = s_ga[m - 1], dL = d[m - 1];
        const T pl = bL - aL * wm2;
        T *ra = brow, *rb = brow + R, *rc = brow + 2 * R, *rd = brow + 3 * R;
        ra[2 * p] = a0 / pf, rb[2 * p] = T(1), rc[2 * p] = -c0 * w1 / pf, rd[2 * p] = (d0 - c0 * y1) / pf;
        ra[2 * p + 1] = -aL * vm2 / pl, rb[2 * p + 1] = T(1), rc[2 * p + 1] = cL / pl;
        rd[2 * p + 1] = (dL - aL * ym2) / pl;
    }
}

/* The bridge: R = 2D rows, serial Thomas on one thread (R <= 2·MAXD); coefficient j (a, b, c,
 * d) of row i at brow[at(j, i)]. */
template <typename T, typename At>
__device__ void bridge_thomas(const T *__restrict__ brow, At at, int R, T *__restrict__ x)
{
    T cp[2 * MAXD], dp = T(0), cprev = T(0);
    for (int i = 0; i < R; ++i) {
        const T ai = i ? brow[at(0, i)] : T(0), piv = brow[at(1, i)] - ai * cprev;
        cprev = cp[i] = (i < R - 1 ? brow[at(2, i)] : T(0)) / piv;
        dp = x[i] = (brow[at(3, i)] - ai * dp) / piv;
    }
    for (int i = R - 2; i >= 0; --i) x[i] -= cp[i] * x[i + 1];
}

/* The rows as end_reduce_kernel leaves them (brow[j·R + i]). */
struct AtStrided {
    int R;
    __device__ int operator()(int j, int i) const { return j * R + i; }
};
template <typename T>
__global__ void bridge_solve_kernel(const T *__restrict__ brow, int R, T *__restrict__ x)
{
    bridge_thomas<T>(brow, AtStrided{R}, R, x);
}

/* Step 3 on top: z_0 = F, z_{m-1} = L, the interior from y, v, w; into the top level's d. */
template <typename T>
__global__ void end_subst_kernel(int m, const T *__restrict__ y, const T *__restrict__ v,
                                 const T *__restrict__ w, const T *__restrict__ x, int p,
                                 T *__restrict__ d)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const T F = x[2 * p], L = x[2 * p + 1];
    d[i] = (i == 0) ? F : (i == m - 1) ? L : y[i] - v[i] * F - w[i] * L;
}

} // namespace cs_bridge

#endif
