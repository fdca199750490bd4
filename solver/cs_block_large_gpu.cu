/* GPU chunked hybrid for one large block-tridiagonal system, or a few (cs_block_thomas_gpu.h:
 * cs_block_thomas_gpu_chunked_d allocates its workspace, cs_block_thomas_gpu_chunked_ws_d takes
 * the caller's and a stream): the levels of the CPU reference (cs_block_chunked_cpu.c) with its
 * arithmetic (cs_block_segment.h), k a template parameter so the k×k loops unroll. A level of
 * m > 64 block rows: reduce (each chunk of 16 rows -> its two end rows, 2·floor(m/16) rows of
 * the next level), the next level, substitute; a level of at most 64 rows: block Thomas, one
 * thread per system. Flat layout, double.
 *
 * Staged kernels (the default): a warp moves its chunks' rows through shared memory, one block
 * row per lane and step, loaded and stored with neighbouring lanes at neighbouring addresses
 * (cs__bseg_slot_set, cs__bseg_stage_in/out: the data movement, shared with the host emulation
 * in the CPU test).
 * The reduce runs a chunk on two lanes, the upward sweep on the even one and the downward on the
 * odd (the same instructions: cs__bseg_step), 16 chunks per warp; the substitution one lane per
 * chunk, 32 per warp, C' and d' going out to C and d and the backward sweep reading them again.
 * Why this and not smaller chunks or a block per chunk: the chunk's rows are 16·(3k²+k)·8 bytes
 * apart per lane, so one thread per chunk reads one line per lane per load instruction (32
 * lines per warp instruction, each 8 bytes used at a time); the staging makes each instruction
 * read 32 consecutive doubles, and the two-lane reduce halves the serial chain and the
 * registers of a lane. At k = 4 session 17's kernels (one thread per chunk, reading global memory
 * directly) measured faster, and run by default (staged_on); CS_BLOCK_CHUNKED_STAGED=1 or 0 in
 * the environment forces one or the other, for the benchmark's comparison.
 *
 * The workspace: a flag (16 bytes), then per level A, B, C, d of the reduced rows (each rounded
 * to 2 doubles: 16-byte aligned). A singular pivot block sets the flag; a last kernel then fills
 * d with NaN (only on that path). */
#include <cuda_runtime.h>
#include <math_constants.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cs_block_segment.h"
#include "cs_block_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

namespace {

constexpr int TPB = 128, MAXL = 16;
constexpr int STPB = 64; /* staged kernels: 2 warps a block (k = 4: 27 KB of shared memory) */
constexpr int SWARPS = STPB / CS_BSEG_W;

/* ---- session 17's kernels: one thread per chunk, global memory read directly ------------ */
template <int KB>
__global__ void __launch_bounds__(TPB)
bchunk_reduce_kernel(size_t m, size_t nb, const double *__restrict__ A, const double *__restrict__ B,
                     const double *__restrict__ C, const double *__restrict__ d, double *rA,
                     double *rB, double *rC, double *rd, int *sing)
{
    const size_t P = m / CS_BSEG_K, q = (size_t)blockIdx.x * TPB + threadIdx.x;
    if (q >= P) return;
    const size_t g0 = q * CS_BSEG_K, len = (q == P - 1) ? m - g0 : CS_BSEG_K, kk = KB * KB;
    const int s = cs__bseg_chunk(KB, g0, (int)len, nb, A, B, C, d, rd + 2 * q * KB, rA + 2 * q * kk,
                                 rC + 2 * q * kk, rd + (2 * q + 1) * KB, rA + (2 * q + 1) * kk,
                                 rC + (2 * q + 1) * kk);
    for (size_t e = 0; e < 2 * kk; ++e) rB[2 * q * kk + e] = (e % kk) % (KB + 1) == 0 ? 1.0 : 0.0;
    if (s) *sing = 1;
}

template <int KB>
__global__ void __launch_bounds__(TPB)
bchunk_subst_kernel(size_t m, size_t nb, const double *__restrict__ A, const double *__restrict__ B,
                    double *C, double *d, const double *__restrict__ x, int *sing)
{
    const size_t P = m / CS_BSEG_K, q = (size_t)blockIdx.x * TPB + threadIdx.x;
    if (q >= P) return;
    const size_t g0 = q * CS_BSEG_K, len = (q == P - 1) ? m - g0 : CS_BSEG_K;
    if (cs__bseg_subst(KB, g0, (int)len, nb, A, B, C, d, x + 2 * q * KB, x + (2 * q + 1) * KB))
        *sing = 1;
}

/* ---- staged kernels: a warp's rows through shared memory (cs_block_segment.h) ------------ */
/* A block's shared memory: per warp, 32 slots of one block row and the step's slot table. */
template <int KB> struct Stage {
    static constexpr int S = CS_BSEG_SLOT(KB);
    double slots[SWARPS][CS_BSEG_W * S];
    size_t row[SWARPS][CS_BSEG_W];
    int flag[SWARPS][CS_BSEG_W];
};

/* The reduce: warp w of the grid holds chunks 16·w .. 16·w + 15, two lanes each. */
template <int KB>
__global__ void __launch_bounds__(STPB)
bstage_reduce_kernel(size_t m, size_t nb, const double *__restrict__ A, const double *__restrict__ B,
                     const double *__restrict__ C, const double *__restrict__ d, double *rA,
                     double *rB, double *rC, double *rd, int *sing)
{
    __shared__ Stage<KB> sh;
    const int l = threadIdx.x % CS_BSEG_W, w = threadIdx.x / CS_BSEG_W;
    double *sm = sh.slots[w], *slot = sm + l * Stage<KB>::S;
    size_t *srow = sh.row[w];
    int *sflag = sh.flag[w];
    const size_t P = m / CS_BSEG_K, q0 = ((size_t)blockIdx.x * SWARPS + w) * (CS_BSEG_W / 2);
    if (q0 >= P) return; /* the whole warp */
    const int steps = cs__bseg_steps(CS__BSEG_RED, q0, P, m);
    double Pm[KB * KB], Qm[KB * KB], D[KB];
    cs__bseg_start(KB, Pm, Qm, D);
    int sg = 0;
    for (int s = 0; s < steps; ++s) {
        cs__bseg_slot_set(CS__BSEG_RED, q0, l, s, P, m, nb, srow, sflag);
        __syncwarp();
        cs__bseg_stage_in(KB, l, CS__BSEG_A | CS__BSEG_B | CS__BSEG_C | CS__BSEG_D, srow, sflag, A, B, C, d, sm);
        __syncwarp();
        if (srow[l] != CS__BSEG_NONE) sg |= cs__bseg_red_lane(KB, l, slot, Pm, Qm, D);
        __syncwarp();
    }
    if (q0 + (size_t)(l >> 1) < P) cs__bseg_red_put(KB, l, slot, Pm, Qm, D);
    __syncwarp();
    cs__bseg_red_store(KB, l, q0, P, sm, rA, rB, rC, rd);
    if (sg) *sing = 1;
}

/* The substitution: warp w holds chunks 32·w .. 32·w + 31, one lane each; x the next level's
 * solution (chunk q's ends at rows 2q and 2q+1). */
template <int KB>
__global__ void __launch_bounds__(STPB)
bstage_subst_kernel(size_t m, size_t nb, const double *__restrict__ A, const double *__restrict__ B,
                    double *C, double *d, const double *__restrict__ x, int *sing)
{
    constexpr int kk = KB * KB;
    __shared__ Stage<KB> sh;
    const int l = threadIdx.x % CS_BSEG_W, w = threadIdx.x / CS_BSEG_W;
    double *sm = sh.slots[w], *slot = sm + l * Stage<KB>::S;
    size_t *srow = sh.row[w];
    int *sflag = sh.flag[w];
    const size_t P = m / CS_BSEG_K, q0 = ((size_t)blockIdx.x * SWARPS + w) * CS_BSEG_W, q = q0 + l;
    if (q0 >= P) return; /* the whole warp */
    const bool on = q < P;
    const int len = on ? cs__bseg_len(q, P, m) : 0;
    double F[KB], L[KB], cp[kk], dp[KB];
    for (int r = 0; r < KB; ++r) F[r] = on ? x[2 * q * KB + r] : 0.0, L[r] = on ? x[(2 * q + 1) * KB + r] : 0.0;
    int sg = 0;
    const int fsteps = cs__bseg_steps(CS__BSEG_FWD, q0, P, m);
    for (int s = 0; s < fsteps; ++s) {
        cs__bseg_slot_set(CS__BSEG_FWD, q0, l, s, P, m, nb, srow, sflag);
        __syncwarp();
        cs__bseg_stage_in(KB, l, CS__BSEG_A | CS__BSEG_B | CS__BSEG_C | CS__BSEG_D, srow, sflag, A, B, C, d, sm);
        __syncwarp();
        if (on && s <= len - 3)
            sg |= cs__bseg_fwd(KB, 1 + s, len, slot, slot + kk, slot + 2 * kk, slot + 3 * kk, F, L, cp, dp);
        __syncwarp();
        cs__bseg_stage_out(KB, l, srow, sflag, C, d, sm);
        __syncwarp();
    }
    const int bsteps = cs__bseg_steps(CS__BSEG_BWD, q0, P, m);
    for (int s = 0; s < bsteps; ++s) { /* dp: x of the row below */
        cs__bseg_slot_set(CS__BSEG_BWD, q0, l, s, P, m, nb, srow, sflag);
        __syncwarp();
        cs__bseg_stage_in(KB, l, CS__BSEG_C | CS__BSEG_D, srow, sflag, A, B, C, d, sm);
        __syncwarp();
        if (on && s <= len - 4) {
            cs__blk_backward(KB, slot + 2 * kk, slot + 3 * kk, dp, 1);
            for (int r = 0; r < KB; ++r) dp[r] = slot[3 * kk + r];
        }
        __syncwarp();
        cs__bseg_stage_out(KB, l, srow, sflag, C, d, sm);
        __syncwarp();
    }
    if (on)
        for (int r = 0; r < KB; ++r) {
            d[q * CS_BSEG_K * KB + r] = F[r];
            d[(q * CS_BSEG_K + len - 1) * KB + r] = L[r];
        }
    if (sg) *sing = 1;
}

/* m <= CS_BSEG_BASE rows, systems of nb rows: block Thomas, one thread per system. */
template <int KB>
__global__ void __launch_bounds__(TPB)
bchunk_base_kernel(size_t m, size_t nb, const double *__restrict__ A, const double *__restrict__ B,
                   double *C, double *d, int *sing)
{
    const size_t s = (size_t)blockIdx.x * TPB + threadIdx.x, kk = KB * KB;
    if (s >= m / nb) return;
    if (cs__blk_thomas_one(KB, (int)nb, A + s * nb * kk, B + s * nb * kk, C + s * nb * kk,
                           d + s * nb * KB, kk, (size_t)KB, 1))
        *sing = 1;
}

__global__ void bchunk_nan_kernel(size_t n, double *d, const int *sing)
{
    if (!*sing) return;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        d[i] = CUDART_NAN;
}

unsigned grid_for(size_t threads, int tpb) { return (unsigned)((threads + tpb - 1) / tpb); }

/* n doubles rounded up to 2 (16 bytes) */
size_t r2(size_t n) { return (n + 1) & ~(size_t)1; }

/* Bytes of workspace for N block rows: the flag (16 bytes), the reduced levels. */
size_t bchunk_bytes(int k, size_t N)
{
    size_t tot = 2;
    for (size_t m = N; m > CS_BSEG_BASE;) {
        m = 2 * (m / CS_BSEG_K);
        tot += 3 * r2(m * (size_t)k * k) + r2(m * (size_t)k);
    }
    return tot * sizeof(double);
}

/* Staged for k <= 3, per-thread for k = 4: measured on an H100 (session 19, 2^20 block rows,
 * caller workspace) staged took 0.745 / 1.766 / 3.117 ms at k = 2 / 3 / 4 and per-thread 0.950 /
 * 2.139 / 2.796 ms. CS_BLOCK_CHUNKED_STAGED=1 or 0 forces one (the benchmark's comparison). */
bool staged_on(int k)
{
    const char *e = getenv("CS_BLOCK_CHUNKED_STAGED");
    if (e && (e[0] == '0' || e[0] == '1')) return e[0] == '1';
    return k <= 3;
}

template <int KB>
cs_solver_status bchunk_run(int nsys, int nb, const double *A, const double *B, double *C,
                            double *d, double *work, cudaStream_t st)
{
    const size_t kk = KB * KB, N = (size_t)nsys * nb;
    const bool staged = staged_on(KB);
    int *sing = reinterpret_cast<int *>(work);
    CS__TG_CUDA(cudaMemsetAsync(sing, 0, sizeof(int), st));
    work += 2;
    const double *lA[MAXL], *lB[MAXL];
    double *lC[MAXL], *ld[MAXL];
    size_t lm[MAXL], ln[MAXL];
    lA[0] = A, lB[0] = B, lC[0] = C, ld[0] = d, lm[0] = N, ln[0] = (size_t)nb;
    int L = 0;
    while (lm[L] > CS_BSEG_BASE) {
        if (L + 1 >= MAXL) CS__TG_INVALID("block chunked: too many levels for %zu rows", N);
        const size_t P = lm[L] / CS_BSEG_K, mr = 2 * P;
        double *rA = work, *rB = rA + r2(mr * kk), *rC = rB + r2(mr * kk), *rd = rC + r2(mr * kk);
        work = rd + r2(mr * KB);
        if (staged)
            bstage_reduce_kernel<KB><<<grid_for(P, STPB / 2), STPB, 0, st>>>(
                lm[L], ln[L], lA[L], lB[L], lC[L], ld[L], rA, rB, rC, rd, sing);
        else
            bchunk_reduce_kernel<KB><<<grid_for(P, TPB), TPB, 0, st>>>(lm[L], ln[L], lA[L], lB[L], lC[L],
                                                                       ld[L], rA, rB, rC, rd, sing);
        CS__TG_CUDA(cudaGetLastError());
        ++L;
        lA[L] = rA, lB[L] = rB, lC[L] = rC, ld[L] = rd, lm[L] = mr, ln[L] = mr;
    }
    bchunk_base_kernel<KB><<<grid_for(lm[L] / ln[L], TPB), TPB, 0, st>>>(lm[L], ln[L], lA[L], lB[L],
                                                                         lC[L], ld[L], sing);
    CS__TG_CUDA(cudaGetLastError());
    for (int l = L - 1; l >= 0; --l) {
        const size_t P = lm[l] / CS_BSEG_K;
        if (staged)
            bstage_subst_kernel<KB><<<grid_for(P, STPB), STPB, 0, st>>>(lm[l], ln[l], lA[l], lB[l], lC[l],
                                                                        ld[l], ld[l + 1], sing);
        else
            bchunk_subst_kernel<KB><<<grid_for(P, TPB), TPB, 0, st>>>(lm[l], ln[l], lA[l], lB[l], lC[l],
                                                                      ld[l], ld[l + 1], sing);
        CS__TG_CUDA(cudaGetLastError());
    }
    bchunk_nan_kernel<<<256, 256, 0, st>>>(N * KB, d, sing);
    CS__TG_CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}

cs_solver_status bchunk_dispatch(int k, int nsys, int nb, const double *A, const double *B,
                                 double *C, double *d, double *work, cudaStream_t st)
{
    switch (k) {
    case 1: return bchunk_run<1>(nsys, nb, A, B, C, d, work, st);
    case 2: return bchunk_run<2>(nsys, nb, A, B, C, d, work, st);
    case 3: return bchunk_run<3>(nsys, nb, A, B, C, d, work, st);
    default: return bchunk_run<4>(nsys, nb, A, B, C, d, work, st);
    }
}

/* The checks both calls share. */
cs_solver_status bchunk_check(int k, int nsys, int nb, const void *A, const void *B, const void *C,
                              const void *d)
{
    if (k < 1 || k > CS_BLOCK_MAX_K) CS__TG_INVALID("block chunked: k = %d outside 1..%d", k, CS_BLOCK_MAX_K);
    if (nsys < 0 || nb < 1) CS__TG_INVALID("block chunked: bad batch shape nsys=%d nb=%d", nsys, nb);
    if (nsys > 0 && (!A || !B || !C || !d)) CS__TG_INVALID("block chunked: NULL array");
    return CS_SOLVER_OK;
}

} // namespace

extern "C" size_t cs_block_thomas_gpu_chunked_workspace(int k, int nsys, int nb)
{
    if (k < 1 || k > CS_BLOCK_MAX_K || nsys <= 0 || nb <= 0) return 0;
    return bchunk_bytes(k, (size_t)nsys * nb);
}

extern "C" cs_solver_status cs_block_thomas_gpu_chunked_ws_d(int k, int nsys, int nb, const double *A,
                                                             const double *B, double *C, double *d,
                                                             void *work, size_t work_bytes, void *stream)
{
    cs_solver_status st = bchunk_check(k, nsys, nb, A, B, C, d);
    if (st != CS_SOLVER_OK || nsys == 0) return st;
    const size_t need = bchunk_bytes(k, (size_t)nsys * nb);
    if (!work || work_bytes < need)
        CS__TG_INVALID("block chunked: workspace of %zu bytes, %zu needed", work ? work_bytes : 0, need);
    if (((uintptr_t)work & 15) != 0) CS__TG_INVALID("block chunked: workspace not 16-byte aligned");
    return bchunk_dispatch(k, nsys, nb, A, B, C, d, (double *)work, (cudaStream_t)stream);
}

extern "C" cs_solver_status cs_block_thomas_gpu_chunked_d(int k, int nsys, int nb, const double *A,
                                                          const double *B, double *C, double *d,
                                                          cs_thomas_gpu_mem mem)
{
    cs_solver_status st = bchunk_check(k, nsys, nb, A, B, C, d);
    if (st != CS_SOLVER_OK || nsys == 0) return st;
    if (mem != CS_THOMAS_GPU_DEVICE_PTRS && mem != CS_THOMAS_GPU_HOST_PTRS)
        CS__TG_INVALID("block chunked: bad memory flag %d", (int)mem);
    const size_t N = (size_t)nsys * nb, nblk = N * k * k, nvec = N * k;
    const size_t wb = bchunk_bytes(k, N);
    const bool host = (mem == CS_THOMAS_GPU_HOST_PTRS);
    double *buf = NULL;
    cudaError_t e = cudaMalloc((void **)&buf, wb + (host ? (3 * nblk + nvec) * sizeof(double) : 0));
    if (e != cudaSuccess) return cs__thomas_cuda_fail(e, __FILE__, __LINE__, "block chunked: workspace");
    double *dA = (double *)A, *dB = (double *)B, *dC = C, *dd = d, *work = buf;
    if (host) {
        dA = buf + wb / sizeof(double), dB = dA + nblk, dC = dB + nblk, dd = dC + nblk;
        e = cudaMemcpy(dA, A, nblk * sizeof(double), cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemcpy(dB, B, nblk * sizeof(double), cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemcpy(dC, C, nblk * sizeof(double), cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemcpy(dd, d, nvec * sizeof(double), cudaMemcpyHostToDevice);
        if (e != cudaSuccess) st = cs__thomas_cuda_fail(e, __FILE__, __LINE__, "block chunked: copy in");
    }
    if (st == CS_SOLVER_OK) st = bchunk_dispatch(k, nsys, nb, dA, dB, dC, dd, work, (cudaStream_t)0);
    int sing = 0;
    if (st == CS_SOLVER_OK) { /* the flag (this waits for the solve), the results to the host */
        e = cudaMemcpy(&sing, work, sizeof sing, cudaMemcpyDeviceToHost);
        if (e == cudaSuccess && host) e = cudaMemcpy(C, dC, nblk * sizeof(double), cudaMemcpyDeviceToHost);
        if (e == cudaSuccess && host) e = cudaMemcpy(d, dd, nvec * sizeof(double), cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) st = cs__thomas_cuda_fail(e, __FILE__, __LINE__, "block chunked: copy out");
    }
    e = cudaFree(buf);
    if (st == CS_SOLVER_OK && e != cudaSuccess) st = cs__thomas_cuda_fail(e, __FILE__, __LINE__, "block chunked: free");
    if (st == CS_SOLVER_OK && sing)
        st = cs__thomas_gpu_fail(CS_SOLVER_ERR_SINGULAR, __FILE__, __LINE__,
                                 "block chunked: a singular pivot block (the solution is NaN)", NULL);
    return st;
}
