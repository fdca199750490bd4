/* One tridiagonal system split over D partitions on several devices, coupled by the bridge system
 * (seed 004's multi-GPU hybrid; cs_thomas_gpu_bridge_multi_d in cs_thomas_gpu.h). The one-GPU
 * bridge (cs_thomas_bridge_gpu.cu) cuts one array into partitions on D streams; here partition p
 * is the caller's own arrays on device devices[p] (rows [r_p, r_{p+1}) of the system, any number
 * of rows >= 2), its stream streams[p] and its workspace work[p] on that device.
 *
 * Partition p, on its device and stream:
 *   1. reduces its levels with the chunk kernels (cs_thomas_large_gpu.cu, n = 0: no system
 *      boundary, its rows 0 and m-1 keep their couplings to the neighbours); the rows that do not
 *      fill a chunk stay behind as tails, and the top (level L's rows, then the tails) is
 *      gathered into one array of at most 1024 rows (cs_thomas_bridge_plan.h);
 *   2. eliminates the top's interior in one block (end_reduce_kernel, shared with the one-GPU
 *      bridge: cs_thomas_bridge_kernels.cuh), which leaves its two bridge rows (8 numbers);
 *   -- the bridge: the 2D rows go to one place and are solved there --
 *   3. takes its F and L, fills the top, scatters it back to the levels and substitutes down.
 * Synchronisation at the bridge:
 *   host    every partition's bridge rows are copied to the host (each copy waits for its
 *           stream), solved there in double, and each partition's F, L copied back on its stream;
 *   device  every partition copies its bridge rows to devices[0]'s workspace with
 *           cudaMemcpyPeerAsync on its own stream and records an event; devices[0]'s stream waits
 *           for all of them (cross-device cudaStreamWaitEvent), solves the bridge on one thread
 *           and records an event; every stream waits for it and copies its F, L back (peer copy).
 *           No host round trip. With peer access (enabled once, cs_thomas_gpu_bridge_multi_peer)
 *           the copies go device to device; without it the driver stages them through the host.
 * Devices may repeat (all partitions on one GPU): then the copies are device-local. */
#include <cuda_runtime.h>

#include <math.h>
#include <mutex>
#include <stdint.h>
#include <stdlib.h>

#include "cs_solver.h"
#include "cs_thomas_bridge_kernels.cuh"
#include "cs_thomas_bridge_plan.h"
#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

namespace {

using cs_bridge::end_reduce_kernel;
using cs_bridge::end_subst_kernel;

constexpr int MAXD = CS_THOMAS_BRIDGE_MAX_PARTS, TOP = CS__BRIDGE_TOP, MAXL = CS__BRIDGE_MAXL;
constexpr int MAXDEV = 64; /* devices whose peer access is remembered */
static_assert(CS__BRIDGE_K == CS__CHUNK_K && CS__BRIDGE_TOP == CS__CHUNK_BASE,
              "the plan's chunk and top sizes are the chunk kernels'");

/* A partition's levels: level 0 the caller's arrays, levels 1..L in its workspace. */
template <typename T> struct Levels {
    const T *a[MAXL + 1], *b[MAXL + 1], *c[MAXL + 1];
    T *d[MAXL + 1];
};

template <typename T>
Levels<T> levels(const cs__bridge_plan &P, const T *a, const T *b, const T *c, T *d, T *W)
{
    Levels<T> lv;
    lv.a[0] = a, lv.b[0] = b, lv.c[0] = c, lv.d[0] = d;
    for (int l = 1; l <= P.L; ++l) {
        T *q = W + P.lev[l];
        const size_t r = cs__bridge_r32(P.m[l]);
        lv.a[l] = q, lv.b[l] = q + r, lv.c[l] = q + 2 * r, lv.d[l] = q + 3 * r;
    }
    return lv;
}

/* The top (P.top rows) from the levels into ta (a, b, c, d at ta + j·TOP). */
template <typename T>
__global__ void top_gather_kernel(cs__bridge_plan P, Levels<T> lv, T *__restrict__ ta)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= P.top) return;
    int l;
    size_t r;
    cs__bridge_top_row(&P, i, &l, &r);
    ta[i] = lv.a[l][r], ta[TOP + i] = lv.b[l][r], ta[2 * TOP + i] = lv.c[l][r];
    ta[3 * TOP + i] = lv.d[l][r];
}

/* The top's solution (td) back to the levels' d. */
template <typename T>
__global__ void top_scatter_kernel(cs__bridge_plan P, Levels<T> lv, const T *__restrict__ td)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= P.top) return;
    int l;
    size_t r;
    cs__bridge_top_row(&P, i, &l, &r);
    lv.d[l][r] = td[i];
}

/* The gathered bridge rows: partition p's 8 numbers (end_reduce_kernel with R = 2, p = 0:
 * a0 a1 b0 b1 c0 c1 d0 d1) at g[8p..8p+7]. */
struct AtGathered {
    __device__ int operator()(int j, int i) const { return (i >> 1) * 8 + 2 * j + (i & 1); }
};
template <typename T>
__global__ void bridge_gathered_kernel(const T *__restrict__ g, int R, T *__restrict__ x)
{
    cs_bridge::bridge_thomas<T>(g, AtGathered{}, R, x);
}

/* ---- peer access ---------------------------------------------------------------------------- */
std::mutex g_peer_mu;
unsigned char g_peer[MAXDEV][MAXDEV]; /* 0 not asked yet, 1 enabled, 2 not possible */

/* Peer access between devices[0] and every other device, both ways, enabled once per pair
 * ("already enabled" by the caller is fine); *direct = 1 when every pair has it. The current
 * device is kept. Devices already checked (0 <= dev < MAXDEV). */
cs_solver_status enable_peers(int D, const int *dev, int *direct)
{
    std::lock_guard<std::mutex> lock(g_peer_mu);
    int cur = 0, all = 1;
    CS__TG_CUDA(cudaGetDevice(&cur));
    cs_solver_status s = CS_SOLVER_OK;
    for (int p = 1; p < D && s == CS_SOLVER_OK; ++p)
        for (int k = 0; k < 2 && dev[p] != dev[0] && s == CS_SOLVER_OK; ++k) {
            const int from = k ? dev[0] : dev[p], to = k ? dev[p] : dev[0];
            if (g_peer[from][to] == 0) {
                int can = 0;
                cudaError_t e = cudaDeviceCanAccessPeer(&can, from, to);
                if (e == cudaSuccess && can) {
                    e = cudaSetDevice(from);
                    if (e == cudaSuccess) e = cudaDeviceEnablePeerAccess(to, 0);
                    if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError(), e = cudaSuccess;
                }
                if (e != cudaSuccess) {
                    s = cs__thomas_cuda_fail(e, __FILE__, __LINE__, "bridge: peer access");
                    break;
                }
                g_peer[from][to] = can ? 1 : 2;
            }
            if (g_peer[from][to] != 1) all = 0;
        }
    (void)cudaSetDevice(cur);
    if (direct) *direct = all;
    return s;
}

#define CS__BM_CUDA(expr, what)                                                          \
    do {                                                                                 \
        if (s == CS_SOLVER_OK) {                                                         \
            const cudaError_t e_ = (expr);                                               \
            if (e_ != cudaSuccess) s = cs__thomas_cuda_fail(e_, __FILE__, __LINE__, what); \
        }                                                                                \
    } while (0)

template <typename T>
cs_solver_status run(int D, const cs__bridge_plan *P, const int *dev, cs_thomas_bridge_sync sync,
                     const T *const *a, const T *const *b, const T *const *c, T *const *d,
                     void *const *work, cudaStream_t const *st)
{
    cs_solver_status s = CS_SOLVER_OK;
    cudaEvent_t ev[MAXD] = {}, evx = nullptr;
    T *W[MAXD];
    Levels<T> lv[MAXD];
    for (int p = 0; p < D; ++p) W[p] = (T *)work[p], lv[p] = levels<T>(P[p], a[p], b[p], c[p], d[p], W[p]);
    const int R = 2 * D;
    for (int p = 0; p < D && sync == CS_THOMAS_BRIDGE_DEVICE; ++p) {
        CS__BM_CUDA(cudaSetDevice(dev[p]), "cudaSetDevice");
        CS__BM_CUDA(cudaEventCreateWithFlags(&ev[p], cudaEventDisableTiming), "cudaEventCreate");
        if (p == 0) CS__BM_CUDA(cudaEventCreateWithFlags(&evx, cudaEventDisableTiming), "cudaEventCreate");
    }
    /* steps 1 and 2; the device-side bridge's rows go to devices[0] */
    for (int p = 0; p < D && s == CS_SOLVER_OK; ++p) {
        const cs__bridge_plan &Q = P[p];
        const Levels<T> &x = lv[p];
        T *ta = W[p] + Q.ta;
        CS__BM_CUDA(cudaSetDevice(dev[p]), "cudaSetDevice");
        for (int l = 0; l < Q.L && s == CS_SOLVER_OK; ++l)
            s = cs__chunk_reduce_launch<T>(0, Q.body[l], Q.m[l], 0, x.a[l], x.b[l], x.c[l], x.d[l],
                                           (T *)x.a[l + 1], (T *)x.b[l + 1], (T *)x.c[l + 1],
                                           x.d[l + 1], st[p]);
        if (s != CS_SOLVER_OK) break;
        const unsigned nb = (unsigned)((Q.top + 255) / 256);
        top_gather_kernel<T><<<nb, 256, 0, st[p]>>>(Q, x, ta);
        end_reduce_kernel<T><<<1, TOP, 0, st[p]>>>((int)Q.top, 0, 0, ta, ta + TOP, ta + 2 * TOP,
                                                   ta + 3 * TOP, W[p] + Q.y, W[p] + Q.v,
                                                   W[p] + Q.w, W[p] + Q.brow, 2, 0);
        CS__BM_CUDA(cudaGetLastError(), "bridge: top kernels");
        if (sync == CS_THOMAS_BRIDGE_DEVICE) {
            CS__BM_CUDA(cudaMemcpyPeerAsync(W[0] + P[0].gat + 8 * p, dev[0], W[p] + Q.brow, dev[p],
                                            8 * sizeof(T), st[p]),
                        "bridge: rows to devices[0]");
            CS__BM_CUDA(cudaEventRecord(ev[p], st[p]), "cudaEventRecord");
        }
    }
    /* the bridge */
    if (s == CS_SOLVER_OK && sync == CS_THOMAS_BRIDGE_HOST) {
        T h[8 * MAXD], xh[2 * MAXD];
        double hd[4 * 2 * MAXD], xd[2 * MAXD]; /* the host's serial Thomas is double */
        /* each copy to pageable memory returns once its stream's reduction and the copy are done */
        for (int p = 0; p < D; ++p) {
            CS__BM_CUDA(cudaSetDevice(dev[p]), "cudaSetDevice");
            CS__BM_CUDA(cudaMemcpyAsync(h + 8 * p, W[p] + P[p].brow, 8 * sizeof(T), cudaMemcpyDeviceToHost, st[p]),
                        "bridge: rows to the host");
            CS__BM_CUDA(cudaStreamSynchronize(st[p]), "bridge: rows to the host");
        }
        if (s == CS_SOLVER_OK) {
            int finite = 1;
            for (int i = 0; i < R; ++i)
                for (int j = 0; j < 4; ++j) {
                    hd[j * R + i] = (double)h[(i >> 1) * 8 + 2 * j + (i & 1)];
                    const bool unused = (j == 0 && i == 0) || (j == 2 && i == R - 1);
                    finite &= unused || isfinite(hd[j * R + i]) != 0;
                }
            for (int i = 0; i < R; ++i) xd[i] = hd[3 * R + i];
            finite &= cs_thomas_solve_serial(1, R, hd, hd + R, hd + 2 * R, xd) == CS_SOLVER_OK;
            for (int i = 0; i < R; ++i) finite &= isfinite(xd[i]) != 0, xh[i] = (T)xd[i];
            if (!finite)
                s = cs__thomas_gpu_fail(CS_SOLVER_ERR_SINGULAR, __FILE__, __LINE__,
                                        "bridge: singular or non-finite bridge system", NULL);
        }
        /* from pageable memory: returns once xh is staged, so xh may go out of scope after */
        for (int p = 0; p < D && s == CS_SOLVER_OK; ++p) {
            CS__BM_CUDA(cudaSetDevice(dev[p]), "cudaSetDevice");
            CS__BM_CUDA(cudaMemcpyAsync(W[p] + P[p].bx, xh + 2 * p, 2 * sizeof(T), cudaMemcpyHostToDevice, st[p]),
                        "bridge: F, L to the device");
        }
    }
    if (s == CS_SOLVER_OK && sync == CS_THOMAS_BRIDGE_DEVICE) {
        CS__BM_CUDA(cudaSetDevice(dev[0]), "cudaSetDevice");
        for (int q = 1; q < D; ++q) CS__BM_CUDA(cudaStreamWaitEvent(st[0], ev[q], 0), "cudaStreamWaitEvent");
        if (s == CS_SOLVER_OK) bridge_gathered_kernel<T><<<1, 1, 0, st[0]>>>(W[0] + P[0].gat, R, W[0] + P[0].gx);
        CS__BM_CUDA(cudaGetLastError(), "bridge_gathered_kernel");
        CS__BM_CUDA(cudaEventRecord(evx, st[0]), "cudaEventRecord");
        for (int p = 0; p < D; ++p) {
            CS__BM_CUDA(cudaSetDevice(dev[p]), "cudaSetDevice");
            if (p) CS__BM_CUDA(cudaStreamWaitEvent(st[p], evx, 0), "cudaStreamWaitEvent");
            CS__BM_CUDA(cudaMemcpyPeerAsync(W[p] + P[p].bx, dev[p], W[0] + P[0].gx + 2 * p, dev[0],
                                            2 * sizeof(T), st[p]),
                        "bridge: F, L from devices[0]");
        }
    }
    /* step 3 */
    for (int p = 0; p < D && s == CS_SOLVER_OK; ++p) {
        const cs__bridge_plan &Q = P[p];
        const Levels<T> &x = lv[p];
        T *td = W[p] + Q.ta + 3 * TOP;
        const unsigned nb = (unsigned)((Q.top + 255) / 256);
        CS__BM_CUDA(cudaSetDevice(dev[p]), "cudaSetDevice");
        if (s != CS_SOLVER_OK) break;
        end_subst_kernel<T><<<nb, 256, 0, st[p]>>>((int)Q.top, W[p] + Q.y, W[p] + Q.v, W[p] + Q.w,
                                                   W[p] + Q.bx, 0, td);
        top_scatter_kernel<T><<<nb, 256, 0, st[p]>>>(Q, x, td);
        CS__BM_CUDA(cudaGetLastError(), "bridge: top kernels");
        for (int l = Q.L - 1; l >= 0 && s == CS_SOLVER_OK; --l)
            s = cs__chunk_subst_launch<T>(0, Q.body[l], Q.m[l], 0, x.a[l], x.b[l], x.c[l], x.d[l],
                                          x.d[l + 1], st[p]);
    }
    for (int p = 0; p < D; ++p)
        if (ev[p]) (void)cudaEventDestroy(ev[p]); /* released once they complete */
    if (evx) (void)cudaEventDestroy(evx);
    return s;
}

/* The plans of every partition; false (and an error recorded) for bad rows. */
bool make_plans(int D, const int *rows, cs__bridge_plan *P, cs_solver_status *s)
{
    for (int p = 0; p < D; ++p)
        if (rows[p] < 2 || !cs__bridge_plan_make((size_t)rows[p], D, &P[p])) {
            char msg[96];
            snprintf(msg, sizeof msg, "bridge: partition %d has %d rows (2 at least)", p, rows[p]);
            *s = cs__thomas_gpu_fail(CS_SOLVER_ERR_INVALID, __FILE__, __LINE__, msg, NULL);
            return false;
        }
    return true;
}

/* devices[p] in [0, count) and < MAXDEV. */
cs_solver_status check_devices(int D, const int *dev)
{
    int count = 0;
    CS__TG_CUDA(cudaGetDeviceCount(&count));
    for (int p = 0; p < D; ++p)
        if (dev[p] < 0 || dev[p] >= count || dev[p] >= MAXDEV)
            CS__TG_INVALID("bridge: partition %d on device %d (%d devices)", p, dev[p], count);
    return CS_SOLVER_OK;
}

} // namespace

template <typename T>
static cs_solver_status bridge_multi_checked(int parts, const int *rows, const int *devices,
                                             cs_thomas_bridge_sync sync, const T *const *a,
                                             T *const *b, const T *const *c, T *const *d,
                                             void *const *work, const size_t *work_bytes,
                                             void *const *streams)
{
    if (parts < 1 || parts > MAXD) CS__TG_INVALID("bridge: %d partitions (1..%d)", parts, MAXD);
    if (sync != CS_THOMAS_BRIDGE_HOST && sync != CS_THOMAS_BRIDGE_DEVICE)
        CS__TG_INVALID("bridge: bad synchronisation %d", (int)sync);
    if (!rows || !devices || !a || !b || !c || !d || !work || !work_bytes || !streams)
        CS__TG_INVALID("bridge: NULL list (rows, devices, arrays, workspaces or streams)");
    for (int p = 0; p < parts; ++p)
        if (!a[p] || !b[p] || !c[p] || !d[p] || !work[p])
            CS__TG_INVALID("bridge: partition %d: NULL array or workspace", p);
    cs_solver_status s = check_devices(parts, devices);
    if (s != CS_SOLVER_OK) return s;
    cs__bridge_plan *P = (cs__bridge_plan *)malloc((size_t)parts * sizeof *P);
    if (!P) return cs__thomas_gpu_fail(CS_SOLVER_ERR_NOMEM, __FILE__, __LINE__, "bridge: plans", NULL);
    if (make_plans(parts, rows, P, &s)) {
        for (int p = 0; p < parts && s == CS_SOLVER_OK; ++p)
            if (work_bytes[p] < P[p].total * sizeof(T) || ((uintptr_t)work[p] & 15)) {
                char msg[112];
                snprintf(msg, sizeof msg, "bridge: partition %d: workspace too small or not 16-byte aligned", p);
                s = cs__thomas_gpu_fail(CS_SOLVER_ERR_INVALID, __FILE__, __LINE__, msg, NULL);
            }
        int cur = 0;
        if (s == CS_SOLVER_OK && cudaGetDevice(&cur) != cudaSuccess)
            s = cs__thomas_cuda_fail(cudaGetLastError(), __FILE__, __LINE__, "cudaGetDevice");
        if (s == CS_SOLVER_OK) {
            if (sync == CS_THOMAS_BRIDGE_DEVICE) s = enable_peers(parts, devices, NULL);
            if (s == CS_SOLVER_OK)
                s = run<T>(parts, P, devices, sync, a, (const T *const *)b, c, d, work,
                           (cudaStream_t const *)streams);
            (void)cudaSetDevice(cur);
        }
    }
    free(P);
    return s;
}

extern "C" {

size_t cs_thomas_gpu_bridge_multi_workspace(int rows, int parts)
{
    cs__bridge_plan P;
    if (rows < 2 || !cs__bridge_plan_make((size_t)rows, parts, &P)) return 0;
    return P.total * sizeof(double);
}

cs_solver_status cs_thomas_gpu_bridge_multi_peer(int parts, const int *devices, int *direct)
{
    if (parts < 1 || parts > MAXD || !devices || !direct)
        CS__TG_INVALID("bridge: bad peer query (%d partitions, devices or direct NULL)", parts);
    *direct = 0;
    const cs_solver_status s = check_devices(parts, devices);
    return s == CS_SOLVER_OK ? enable_peers(parts, devices, direct) : s;
}

cs_solver_status cs_thomas_gpu_bridge_multi_d(int parts, const int *rows, const int *devices,
                                              cs_thomas_bridge_sync sync, const double *const *a,
                                              double *const *b, const double *const *c,
                                              double *const *d, void *const *work,
                                              const size_t *work_bytes, void *const *streams)
{
    return bridge_multi_checked<double>(parts, rows, devices, sync, a, b, c, d, work, work_bytes, streams);
}

cs_solver_status cs_thomas_gpu_bridge_multi_f(int parts, const int *rows, const int *devices,
                                              cs_thomas_bridge_sync sync, const float *const *a,
                                              float *const *b, const float *const *c,
                                              float *const *d, void *const *work,
                                              const size_t *work_bytes, void *const *streams)
{
    return bridge_multi_checked<float>(parts, rows, devices, sync, a, b, c, d, work, work_bytes, streams);
}

} /* extern "C" */
