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
 * Workspace: the chunked levels (about 0.6 of an array), the top levels' y, v, w, the bridge.
 * The kernels of steps 2 and 3 are in cs_thomas_bridge_kernels.cuh, shared with the bridge across
 * devices (cs_thomas_bridge_multi_gpu.cu). */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>

#include "cs_solver.h"
#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"
#include "cs_thomas_bridge_kernels.cuh"

namespace {

using cs_bridge::end_reduce_kernel;
using cs_bridge::bridge_solve_kernel;
using cs_bridge::end_subst_kernel;

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
