/* One tridiagonal system split over D partitions, each on its own CUDA stream (a stand-in for
 * one device each), coupled through a small "bridge" system (seed 004's multi-GPU hybrid;
 * cs_thomas_gpu_bridge_d in cs_thomas_gpu.h).
 *
 * Partition p owns the rows [lo_p, lo_{p+1}) (a batch of nsys systems counts as one system of
 * nsys·n rows). On its stream it
 *   1. reduces its rows with the chunked hybrid's kernels (cs_thomas_large_gpu.cu), L levels,
 *      keeping the couplings to the neighbouring partitions: at every level its reduced rows stay
 *      contiguous, its first unknown is x[lo_p] (F_p) and its last x[lo_{p+1}-1] (L_p), and only
 *      its first row couples to L_{p-1} and its last to F_{p+1}. The partition boundaries are
 *      multiples of 16·8^(L-1), so no chunk straddles two partitions at any level; L is the
 *      smallest that leaves every partition at most 1024 rows on top;
 *   2. eliminates the interior of its top level in one block (PCR with three right-hand sides:
 *      z_int = y - F·v - L·w), which leaves its two bridge rows
 *        F row:  a0·L_{p-1} + F_p + c0·L_p     = d0
 *        L row:  aL·F_p     + L_p + cL·F_{p+1} = dL
 *   -- the bridge: the 2D rows (F_0, L_0, ..., F_{D-1}, L_{D-1}) form a tridiagonal system --
 *   3. takes F_p and L_p from the bridge's solution, fills its top level's interior, and
 *      substitutes back down its levels.
 * Synchronisation at the bridge, as the seed compares:
 *   host    the host waits for every partition's step 2 (events), copies the 2D bridge rows to
 *           the host, solves them there (serial Thomas) and copies the solution back; then it
 *           launches step 3 on every stream (the seed's two kernels with the CPU in between).
 *   device  each stream waits for the other partitions' step-2 events (cudaStreamWaitEvent, no
 *           host round trip) and solves the bridge itself, one thread, into its own copy.
 * Workspace: the chunked levels (about 0.6 of an array), the top levels' y, v, w, the bridge. */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>

#include "cs_solver.h"
#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

namespace {

constexpr int K = CS__CHUNK_K, TOP = CS__CHUNK_BASE, MAXL = 12;
constexpr int MAXD = CS_THOMAS_BRIDGE_MAX_PARTS;

size_t r32(size_t m) { return (m + 31) / 32 * 32; }

struct Plan {
    int D = 0, L = 0;
    size_t n0 = 0;                  /* system length at level 0 */
    size_t m[MAXL + 1] = {};        /* rows of level l */
    size_t lo[MAXD + 1][MAXL + 1];  /* partition p's rows at level l: [lo[p][l], lo[p+1][l]) */
    size_t lev[MAXL + 1] = {};      /* workspace offset of level l's arrays (l >= 1) */
    size_t y = 0, v = 0, w = 0;     /* the top level's interior solutions */
    size_t brow = 0, bx = 0;        /* bridge rows (a, b, c, d), bridge solutions (D copies) */
    size_t total = 0;               /* elements */
};

/* false when the shape cannot be split (a partition with fewer than 2 rows on top). */
bool make_plan(size_t N, size_t n, int D, Plan *P)
{
    P->D = D, P->n0 = n;
    for (int L = 0; L <= MAXL; ++L) {
        size_t G = 1;
        for (int l = 1; l <= L; ++l) G *= (l == 1) ? K : 8;
        P->L = L;
        P->m[0] = N;
        for (int p = 0; p < D; ++p) P->lo[p][0] = (size_t)((double)p * N / D) / G * G;
        P->lo[D][0] = N;
        for (int l = 0; l < L; ++l) {
            P->m[l + 1] = 2 * ((P->m[l] + K - 1) / K);
            for (int p = 0; p < D; ++p) P->lo[p][l + 1] = 2 * P->lo[p][l] / K;
            P->lo[D][l + 1] = P->m[l + 1];
        }
        bool small = true, empty = false;
        for (int p = 0; p < D; ++p) {
            const size_t t = P->lo[p + 1][L] - P->lo[p][L];
            if (t > (size_t)TOP) small = false;
            if (t < 2) empty = true;
        }
        if (!small) continue;
        if (empty) return false;
        size_t off = 0;
        for (int l = 1; l <= L; ++l) P->lev[l] = off, off += 4 * r32(P->m[l]);
        const size_t mt = r32(P->m[L]);
        P->y = off, P->v = off + mt, P->w = off + 2 * mt, off += 3 * mt;
        P->brow = off, off += 4 * r32(2 * D);
        P->bx = off, off += (size_t)D * r32(2 * D);
        P->total = off;
        return true;
    }
    return false;
}

/* Step 2: the top level of one partition, m <= TOP rows starting at global row g0 of a level
 * whose systems have n rows. Writes y, v, w (m each) and the bridge rows 2p, 2p+1. */
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
        ai = ((g0 + i) % n == 0) ? T(0) : a[i];
        bi = b[i];
        ci = ((g0 + i) % n == n - 1) ? T(0) : c[i];
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

/* The bridge: R = 2D rows, serial Thomas on one thread (R <= 2·MAXD). */
template <typename T>
__global__ void bridge_solve_kernel(const T *__restrict__ brow, int R, T *__restrict__ x)
{
    const T *a = brow, *b = brow + R, *c = brow + 2 * R, *d = brow + 3 * R;
    T cp[2 * MAXD], dp = T(0), cprev = T(0);
    for (int i = 0; i < R; ++i) {
        const T ai = i ? a[i] : T(0), piv = b[i] - ai * cprev;
        cprev = cp[i] = (i < R - 1 ? c[i] : T(0)) / piv;
        dp = x[i] = (d[i] - ai * dp) / piv;
    }
    for (int i = R - 2; i >= 0; --i) x[i] -= cp[i] * x[i + 1];
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

template <typename T> struct Level {
    const T *a, *b, *c;
    T *d;
};

template <typename T>
cs_solver_status run(const Plan &P, const T *a, const T *b, const T *c, T *d,
                     T *work, cudaStream_t const *st, cs_thomas_bridge_sync sync)
{
    const int D = P.D, L = P.L, R = 2 * D;
    Level<T> lv[MAXL + 1];
    lv[0] = Level<T>{a, b, c, d};
    for (int l = 1; l <= L; ++l) {
        T *q = work + P.lev[l];
        const size_t r = r32(P.m[l]);
        lv[l] = Level<T>{q, q + r, q + 2 * r, q + 3 * r};
    }
    cudaEvent_t ev[MAXD];
    for (int p = 0; p < D; ++p) CS__TG_CUDA(cudaEventCreateWithFlags(&ev[p], cudaEventDisableTiming));
    cs_solver_status s = CS_SOLVER_OK;
    /* step 1 and 2 */
    for (int p = 0; p < D && s == CS_SOLVER_OK; ++p) {
        for (int l = 0; l < L && s == CS_SOLVER_OK; ++l) {
            const Level<T> &x = lv[l], &r = lv[l + 1];
            s = cs__chunk_reduce_launch<T>(P.lo[p][l], P.lo[p + 1][l], P.m[l],
                                                l ? P.m[l] : P.n0, x.a, x.b, x.c, x.d,
                                                (T *)r.a, (T *)r.b, (T *)r.c, r.d, st[p]);
        }
        if (s != CS_SOLVER_OK) break;
        const size_t t0 = P.lo[p][L];
        const int mt = (int)(P.lo[p + 1][L] - t0);
        const Level<T> &t = lv[L];
        end_reduce_kernel<T><<<1, TOP, 0, st[p]>>>(mt, t0, L ? P.m[L] : P.n0, t.a + t0, t.b + t0, t.c + t0,
                                                t.d + t0, work + P.y + t0, work + P.v + t0,
                                                work + P.w + t0, work + P.brow, R, p);
        if (cudaPeekAtLastError() != cudaSuccess) s = cs__thomas_cuda_fail(cudaGetLastError(), __FILE__, __LINE__, "end_reduce_kernel");
        if (s == CS_SOLVER_OK && cudaEventRecord(ev[p], st[p]) != cudaSuccess)
            s = cs__thomas_cuda_fail(cudaGetLastError(), __FILE__, __LINE__, "cudaEventRecord");
    }
    /* the bridge */
    if (s == CS_SOLVER_OK && sync == CS_THOMAS_BRIDGE_HOST) {
        T h[4 * 2 * MAXD], x[2 * MAXD];
        double hd[4 * 2 * MAXD], xd[2 * MAXD]; /* the host's serial Thomas is double */
        cudaError_t e = cudaSuccess;
        for (int p = 0; p < D && e == cudaSuccess; ++p) e = cudaEventSynchronize(ev[p]);
        for (int j = 0; j < 4 && e == cudaSuccess; ++j)
            e = cudaMemcpy(h + j * R, work + P.brow + j * R, R * sizeof(T), cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) s = cs__thomas_cuda_fail(e, __FILE__, __LINE__, "bridge: to the host");
        if (s == CS_SOLVER_OK) {
            for (int i = 0; i < 4 * R; ++i) hd[i] = (double)h[i];
            for (int i = 0; i < R; ++i) xd[i] = hd[3 * R + i];
            if (cs_thomas_solve_serial(1, R, hd, hd + R, hd + 2 * R, xd) != CS_SOLVER_OK)
                s = cs__thomas_gpu_fail(CS_SOLVER_ERR_SINGULAR, __FILE__, __LINE__, "bridge: singular", NULL);
            for (int i = 0; i < R; ++i) x[i] = (T)xd[i];
        }
        if (s == CS_SOLVER_OK) {
            e = cudaMemcpy(work + P.bx, x, R * sizeof(T), cudaMemcpyHostToDevice);
            /* a copy from pageable memory may still be in flight when cudaMemcpy returns */
            if (e == cudaSuccess) e = cudaDeviceSynchronize();
            if (e != cudaSuccess) s = cs__thomas_cuda_fail(e, __FILE__, __LINE__, "bridge: to the device");
        }
    }
    /* step 3 */
    for (int p = 0; p < D && s == CS_SOLVER_OK; ++p) {
        T *xb = work + P.bx;
        if (sync == CS_THOMAS_BRIDGE_DEVICE) {
            for (int q = 0; q < D && s == CS_SOLVER_OK; ++q)
                if (q != p && cudaStreamWaitEvent(st[p], ev[q], 0) != cudaSuccess)
                    s = cs__thomas_cuda_fail(cudaGetLastError(), __FILE__, __LINE__, "cudaStreamWaitEvent");
            xb += (size_t)p * r32(R);
            bridge_solve_kernel<T><<<1, 1, 0, st[p]>>>(work + P.brow, R, xb);
        }
        const size_t t0 = P.lo[p][L];
        const int mt = (int)(P.lo[p + 1][L] - t0);
        end_subst_kernel<T><<<(mt + 255) / 256, 256, 0, st[p]>>>(mt, work + P.y + t0, work + P.v + t0,
                                                               work + P.w + t0, xb, p, lv[L].d + t0);
        if (cudaPeekAtLastError() != cudaSuccess) s = cs__thomas_cuda_fail(cudaGetLastError(), __FILE__, __LINE__, "end_subst_kernel");
        for (int l = L - 1; l >= 0 && s == CS_SOLVER_OK; --l) {
            const Level<T> &x = lv[l];
            s = cs__chunk_subst_launch<T>(P.lo[p][l], P.lo[p + 1][l], P.m[l], l ? P.m[l] : P.n0,
                                               x.a, x.b, x.c, x.d, lv[l + 1].d, st[p]);
        }
    }
    for (int p = 0; p < D; ++p) (void)cudaEventDestroy(ev[p]); /* released once they complete */
    return s;
}

} // namespace

template <typename T>
static cs_solver_status bridge_checked(int nsys, int n, int parts, cs_thomas_bridge_sync sync,
                                       const T *a, T *b, const T *c, T *d, void *work,
                                       size_t work_bytes, void *const *streams)
{
    if (nsys < 0 || n < 1) CS__TG_INVALID("bridge: bad batch shape nsys=%d n=%d", nsys, n);
    if (parts < 1 || parts > MAXD) CS__TG_INVALID("bridge: %d partitions (1..%d)", parts, MAXD);
    if (sync != CS_THOMAS_BRIDGE_HOST && sync != CS_THOMAS_BRIDGE_DEVICE)
        CS__TG_INVALID("bridge: bad synchronisation %d", (int)sync);
    if (nsys == 0) return CS_SOLVER_OK;
    if (!a || !b || !c || !d || !streams) CS__TG_INVALID("bridge: NULL array or stream list");
    Plan *P = (Plan *)malloc(sizeof(Plan));
    if (!P) return cs__thomas_gpu_fail(CS_SOLVER_ERR_NOMEM, __FILE__, __LINE__, "bridge: plan", NULL);
    cs_solver_status s = CS_SOLVER_OK;
    if (!make_plan((size_t)nsys * n, (size_t)n, parts, P))
        s = cs__thomas_gpu_fail(CS_SOLVER_ERR_INVALID, __FILE__, __LINE__,
                                "bridge: too few rows for the partitions (2 per partition at least)", NULL);
    else if (!work || work_bytes < P->total * sizeof(T) || ((uintptr_t)work & 15))
        s = cs__thomas_gpu_fail(CS_SOLVER_ERR_INVALID, __FILE__, __LINE__,
                                "bridge: workspace missing, too small or not 16-byte aligned", NULL);
    else
        s = run<T>(*P, a, b, c, d, (T *)work, (cudaStream_t const *)streams, sync);
    free(P);
    return s;
}

extern "C" {

size_t cs_thomas_gpu_bridge_workspace(int nsys, int n, int parts)
{
    if (nsys <= 0 || n <= 0 || parts < 1 || parts > MAXD) return 0;
    Plan *P = (Plan *)malloc(sizeof(Plan));
    if (!P) return 0;
    const bool ok = make_plan((size_t)nsys * n, (size_t)n, parts, P);
    const size_t bytes = ok ? P->total * sizeof(double) : 0;
    free(P);
    return bytes;
}

cs_solver_status cs_thomas_gpu_bridge_d(int nsys, int n, int parts, cs_thomas_bridge_sync sync,
                                        const double *a, double *b, const double *c, double *d,
                                        void *work, size_t work_bytes, void *const *streams)
{
    return bridge_checked<double>(nsys, n, parts, sync, a, b, c, d, work, work_bytes, streams);
}

cs_solver_status cs_thomas_gpu_bridge_f(int nsys, int n, int parts, cs_thomas_bridge_sync sync,
                                        const float *a, float *b, const float *c, float *d,
                                        void *work, size_t work_bytes, void *const *streams)
{
    return bridge_checked<float>(nsys, n, parts, sync, a, b, c, d, work, work_bytes, streams);
}

} /* extern "C" */
