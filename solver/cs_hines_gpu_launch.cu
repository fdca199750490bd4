/* GPU Hines (tree) batch solvers: kernel attributes and launches (the plan: cs_hines_gpu_plan.cuh;
 * its life and the public API: cs_hines_gpu.cu). The kernels of cs_hines_gpu_kernels.cuh:
 *   cs__k_cells        one thread per system on any (slot base, stride) layout: flat,
 *                      interleaved, block_interleaved, variable; parents shared or per row
 *   cs__k_block_shared one CUDA block per group of BS systems, rhs in shared memory
 *   cs__k_fine         one CUDA block per pack, one thread per branch, level by level; the pack's
 *                      d, u, rhs staged in shared memory (or worked on in place when too large)
 *   cs__k_fine_step    fine's fused membrane step
 *   cs__k_warp         one warp per pack (one cell, or a few small ones), packs of one type per
 *                      block, the type's schedule and each pack's rows staged in shared memory
 *   cs__k_convert      tree order ↔ internal layout, one warp per system
 * "staged" and "chunked" have kernels of their own (cs_hines_staged_gpu.cu, cs_hines_chunked_gpu.cu);
 * a chunked plan holds the plan of its reduced tree (pl->sub) and solves it between its two
 * chunk kernels. Every kernel named here has its attributes set here: a kernel template
 * instantiated in two files is two kernels. */
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cs_hines_chunked_gpu.h"
#include "cs_hines_gpu_impl.h"
#include "cs_hines_gpu_kernels.cuh"
#include "cs_hines_gpu_plan.cuh"
#include "cs_hines_staged_gpu.h"

/* shared memory of one warp block: the schedule, then its packs' rows (d, u, rhs) */
static size_t cs__warp_smem(const cs__hines_hplan *hp, size_t elem)
{
    return (size_t)hp->sched_bytes + (size_t)hp->block_rows * 3 * elem;
}

/* staged: launch l of the plan (blocks per multiprocessor: of precision prec, 0 double, 1 float) */
static cs__staged_dev cs__staged_dev_of(const cs_hines_plan *pl, int l, int prec)
{
    const int *L = pl->hp.stg_launch + CS__SL_N * l;
    cs__staged_dev sd = {L[CS__SL_GROUPS], L[CS__SL_ROWS], L[CS__SL_STEPS], pl->nsm, L[CS__SL_REG], L[CS__SL_CELLS], L[CS__SL_TW],
                         pl->stg_blocks ? pl->stg_blocks[2 * l + prec] : 0, pl->hp.stg_fused, L[CS__SL_UC], pl->d_group_base + L[CS__SL_FIRST],
                         pl->d_group_type + L[CS__SL_FIRST], (pl->d_group_cbase ? pl->d_group_cbase : pl->d_group_base) + L[CS__SL_FIRST],
                         pl->d_stype, pl->d_sched, pl->d_stg_next ? pl->d_stg_next + 2 * l : NULL, L[CS__SL_GR],
                         pl->d_stg_rec && pl->stg_rec_off ? (char *)pl->d_stg_rec + pl->stg_rec_off[l] : NULL};
    return sd;
}

/* staged: the device memory of the launches with records in device memory (CS__SL_GR): each block
 * of a launch's grid (its blocks a multiprocessor, the larger of the two precisions, at most its
 * groups) its own max_steps · 32 pairs of doubles; grown, never shrunk, when the grids grow */
static cs_solver_status cs__staged_records(cs_hines_plan *pl)
{
    const cs__hines_hplan *hp = &pl->hp;
    if (!pl->stg_rec_off) pl->stg_rec_off = (size_t *)calloc((size_t)(hp->stg_nlaunch > 0 ? hp->stg_nlaunch : 1), sizeof(size_t));
    if (!pl->stg_rec_off) { cs__hgpu_err("out of memory"); return CS_SOLVER_ERR_NOMEM; }
    size_t total = 0;
    for (int l = 0; l < hp->stg_nlaunch; ++l) {
        const int *L = hp->stg_launch + CS__SL_N * l;
        pl->stg_rec_off[l] = total;
        if (!L[CS__SL_GR]) continue;
        const int b = pl->stg_blocks[2 * l] > pl->stg_blocks[2 * l + 1] ? pl->stg_blocks[2 * l] : pl->stg_blocks[2 * l + 1];
        long long grid = (long long)b * pl->nsm;
        if (grid > L[CS__SL_GROUPS]) grid = L[CS__SL_GROUPS];
        total += (size_t)grid * (size_t)L[CS__SL_STEPS] * 32 * 2 * sizeof(double);
    }
    if (total > pl->stg_rec_bytes) {
        if (pl->d_stg_rec) cudaFree(pl->d_stg_rec);
        pl->d_stg_rec = NULL;
        pl->stg_rec_bytes = 0;
        CS__CU(cudaMalloc(&pl->d_stg_rec, total));
        pl->stg_rec_bytes = total;
    }
    return CS_SOLVER_OK;
}

/* staged: each launch's kernel opted into the shared memory of its largest launch, and the
 * launches' blocks per multiprocessor (again after cs_hines_gpu_plan_share_constants, which may
 * give launches the kernel of constants once per slot: CS__SL_UC) */
cs_solver_status cs__staged_attrs(cs_hines_plan *pl)
{
    const cs__hines_hplan *hp = &pl->hp;
    if (!pl->stg_blocks) pl->stg_blocks = (int *)calloc(2 * (size_t)hp->stg_nlaunch, sizeof(int));
    if (!pl->stg_blocks) { cs__hgpu_err("out of memory"); return CS_SOLVER_ERR_NOMEM; }
    for (int l = 0; l < hp->stg_nlaunch; ++l) {
        const cs__staged_dev sd = cs__staged_dev_of(pl, l, 0);
        /* launches of one kernel (cells, register steps, constants per slot) share its attribute: the largest of them */
        int rows = 0, steps = 0;
        for (int l2 = 0; l2 < hp->stg_nlaunch; ++l2) {
            const int *L2 = hp->stg_launch + CS__SL_N * l2;
            if (L2[CS__SL_CELLS] != sd.cells || L2[CS__SL_REG] != sd.reg_steps || L2[CS__SL_TW] != sd.two_way || L2[CS__SL_UC] != sd.uc ||
                L2[CS__SL_GR] != sd.gr)
                continue;
            rows = L2[CS__SL_ROWS] > rows ? L2[CS__SL_ROWS] : rows;
            steps = L2[CS__SL_STEPS] > steps ? L2[CS__SL_STEPS] : steps;
        }
        const size_t bytes = cs__staged_warp_bytes(rows, steps, sd.cells, sd.two_way, hp->stg_fused ? CS__STG_FUSED_ARRAYS : 3,
                                                   hp->stg_fused && sd.uc, sd.gr, sizeof(double));
        if (bytes > (size_t)pl->smem_optin) {
            cs__hgpu_err("staged: a warp of %d cells with %d shared rows needs %zu bytes of shared memory, the device allows %d "
                        "(use \"interleaved\" or \"warp\")", sd.cells, rows, bytes, pl->smem_optin);
            return CS_SOLVER_ERR_UNAVAILABLE;
        }
        CS__CU(cs__staged_prepare(sd, rows, steps, pl->stg_blocks + 2 * l));
    }
    return cs__staged_records(pl);
}

template <class T>
static cs_solver_status cs__set_attrs(cs_hines_plan *pl)
{
    const cs__hines_hplan *hp = &pl->hp;
    if (hp->variant == CS__HV_BLOCK_SHARED) {
        size_t bytes = pl->bs_smem_elems * sizeof(T);
        if (bytes > (size_t)pl->smem_optin) return CS_SOLVER_OK; /* reported at launch */
        if (bytes > 48 * 1024) {
            CS__CU(cudaFuncSetAttribute(cs__k_block_shared<T, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
            CS__CU(cudaFuncSetAttribute(cs__k_block_shared<T, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        }
    }
    if (hp->variant == CS__HV_WARP) {
        size_t bytes = cs__warp_smem(hp, sizeof(T));
        if (bytes > (size_t)pl->smem_optin) {
            cs__hgpu_err("warp: a block of %d rows needs %zu bytes of shared memory, the device allows %d "
                        "(use \"fine\", which works in device memory when a pack does not fit)",
                        hp->block_rows, bytes, pl->smem_optin);
            return CS_SOLVER_ERR_UNAVAILABLE;
        }
        if (bytes > 48 * 1024)
            CS__CU(cudaFuncSetAttribute(cs__k_warp<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    }
    if (hp->variant == CS__HV_STAGED && sizeof(T) == sizeof(double)) CS__TRY(cs__staged_attrs(pl)); /* once, for both precisions */
    if (hp->variant == CS__HV_FINE && cs__fine_smem(pl, sizeof(T))) { /* the opt-in limit: launches ask what they need */
        const int lim = pl->smem_optin;
        CS__CU(cudaFuncSetAttribute(cs__k_fine<T, true, CS__SCHED_GLOBAL>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
        CS__CU(cudaFuncSetAttribute(cs__k_fine<T, true, CS__SCHED_L2>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
        CS__CU(cudaFuncSetAttribute(cs__k_fine<T, true, CS__SCHED_SHARED>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
        if (sizeof(T) == sizeof(double)) { /* the fused step (double only) */
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, true, true, CS__SCHED_GLOBAL>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, true, true, CS__SCHED_L2>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, true, true, CS__SCHED_SHARED>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, false, false, CS__SCHED_GLOBAL>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, false, true, CS__SCHED_GLOBAL>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, false, true, CS__SCHED_L2>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, false, true, CS__SCHED_SHARED>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
        }
    }
    return CS_SOLVER_OK;
}

cs_solver_status cs__need_fused(const cs_hines_plan *pl)
{
    if (cs__hines_hplan_fuses(&pl->hp)) return CS_SOLVER_OK;
    cs__hgpu_err("the fused step needs a per-system variant (flat, interleaved, block_interleaved, variable), fine, "
                "chunked, or a staged plan built with fused_step, not %s", cs__hines_variant_name(pl->hp.variant));
    return CS_SOLVER_ERR_UNAVAILABLE;
}

/* the plan's kernel attributes, both precisions */
cs_solver_status cs__plan_kernel_attrs(cs_hines_plan *pl)
{
    CS__TRY(cs__set_attrs<double>(pl));
    return cs__set_attrs<float>(pl);
}

/* ---- launchers -------------------------------------------------------------------------------- */
/* Launches that may run at once (warp's launch groups, staged's shapes: disjoint groups of cells)
 * run on streams of their own, forked from the plan's stream and joined back to it with events, so
 * that the plan's stream sees one solve, as with every other variant. The streams are created at
 * the first solve. cs__fork before the launches, cs__launch_stream for launch l, cs__join after it.
 * graded (staged, fine's classes): launch g's stream at a priority no lower than launch g + 1's
 * (the device's least for the last, one level more for each one before it up to the greatest,
 * which the first ones share: 6 levels on an H100), and staged's launches queued last first.
 * Staged orders its launches longest first, so that the shorter ones fill the longer's last wave,
 * but a CUDA graph started its branches in the reverse order of their capture (the 18 432 real
 * cells: the longest launch, 113 µs, began 199 µs into the step, after the seven others); the
 * block scheduler places a higher priority's pending blocks first, in graphs instantiated with
 * node priorities too. Measured (H100, bench/NOTES.md "Session 26" and "Session 27"): real cells
 * 0.3101 → 0.3052 s with the priorities, whose first three launches still started in reverse;
 * queued last first, 0.3074 → 0.3009 s (each of the first launches a level of its own instead:
 * 0.3030). CS_STAGED_LAUNCH_PRIORITY=0: all at the default; =strict: the first launches each a
 * level of their own; CS_STAGED_LAUNCH_ORDER=forward: queued in order. */
static cs_solver_status cs__fork(cs_hines_plan *pl, int n, int graded = 0)
{
    if (n < 2) return CS_SOLVER_OK;
    if (!pl->launch_stream) {
        pl->launch_stream = (cudaStream_t *)calloc((size_t)n, sizeof(cudaStream_t));
        if (!pl->launch_stream) { cs__hgpu_err("cs_hines_gpu: out of host memory"); return CS_SOLVER_ERR_NOMEM; }
        pl->nlaunch_stream = n;
        CS__CU(cudaEventCreateWithFlags(&pl->ev_fork, cudaEventDisableTiming));
        CS__CU(cudaEventCreateWithFlags(&pl->ev_join, cudaEventDisableTiming));
        const char *env = getenv("CS_STAGED_LAUNCH_PRIORITY"), *order = getenv("CS_STAGED_LAUNCH_ORDER");
        const int strict = env && !strcmp(env, "strict");
        int least = 0, greatest = 0; /* a greater priority is a smaller number */
        if (graded && !(env && !strcmp(env, "0"))) CS__CU(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        pl->launch_reverse = graded && !(order && !strcmp(order, "forward"));
        for (int g = 0; g < n; ++g) {
            /* graded: the last launches each a level of their own, the first ones share the greatest;
             * strict: the first ones each a level of their own, the last ones share the least */
            const int prio = strict ? (greatest + g < least ? greatest + g : least)
                                    : (least - (n - 1 - g) < greatest ? greatest : least - (n - 1 - g));
            CS__CU(cudaStreamCreateWithPriority(&pl->launch_stream[g], cudaStreamNonBlocking, prio));
        }
    }
    CS__CU(cudaEventRecord(pl->ev_fork, pl->stream));
    return CS_SOLVER_OK;
}
static cs_solver_status cs__launch_stream(cs_hines_plan *pl, int n, int l, cudaStream_t *st)
{
    *st = n > 1 ? pl->launch_stream[l] : pl->stream;
    if (n > 1) CS__CU(cudaStreamWaitEvent(*st, pl->ev_fork, 0));
    return CS_SOLVER_OK;
}
static cs_solver_status cs__join(cs_hines_plan *pl, int n, cudaStream_t st)
{
    if (n < 2) return CS_SOLVER_OK;
    CS__CU(cudaEventRecord(pl->ev_join, st));
    CS__CU(cudaStreamWaitEvent(pl->stream, pl->ev_join, 0));
    return CS_SOLVER_OK;
}

/* warp: one launch per launch group, each with the shared memory its blocks need */
template <class T>
static cs_solver_status cs__warp_launch(cs_hines_plan *pl, T *d, const T *u, T *rhs)
{
    const cs__hines_hplan *hp = &pl->hp;
    const int ng = hp->nlaunch;
    CS__TRY(cs__fork(pl, ng));
    for (int g = 0; g < ng; ++g) {
        const int b0 = hp->launch_first[g], nb = hp->launch_first[g + 1] - b0;
        const size_t bytes = (size_t)hp->launch_sched[g] + (size_t)hp->launch_rows[g] * 3 * sizeof(T);
        cudaStream_t st;
        CS__TRY(cs__launch_stream(pl, ng, g, &st));
        cs__k_warp<T><<<nb, 32 * hp->block_warps, bytes, st>>>(pl->d_block_first + b0, pl->d_pack_base, pl->d_pack_type,
                                                               pl->d_type_info, pl->d_level_start, pl->d_tasks,
                                                               pl->d_children, hp->launch_sched[g], d, u, rhs);
        CS__CU(cudaGetLastError());
        CS__TRY(cs__join(pl, ng, st));
    }
    return CS_SOLVER_OK;
}

/* staged: one launch per shape; concurrently, so that each launch's last partial wave of groups
 * overlaps the next launch (H200, mixed batches: 25 600 cells 175 → 144 µs; 256 000 cells 1.19 ms
 * either way, bench/NOTES.md "Session 6") */
template <class T>
static cs_solver_status cs__staged_launches(cs_hines_plan *pl, T *d, const T *u, T *rhs, const cs_hines_step_d *step = nullptr)
{
    const int nl = pl->hp.stg_nlaunch;
    uintptr_t any = (uintptr_t)d | (uintptr_t)u | (uintptr_t)rhs;
    if (step) any |= (uintptr_t)step->cdt | (uintptr_t)step->v | (uintptr_t)step->i | (uintptr_t)step->g;
    for (int l = 0; l < nl; ++l) {
        /* cp.async copies a group's row of C cells in chunks of up to 16 bytes */
        const int cells = pl->hp.stg_launch[CS__SL_N * l + CS__SL_CELLS];
        const size_t align = cells * sizeof(T) < 16 ? cells * sizeof(T) : 16;
        if (any & (align - 1)) {
            cs__hgpu_err("staged: the %s arrays must be %zu-byte aligned device pointers", step ? "fused step's" : "solve's", align);
            return CS_SOLVER_ERR_INVALID;
        }
    }
    CS__TRY(cs__fork(pl, nl, 1));
    for (int j = 0; j < nl; ++j) {
        const int l = pl->launch_reverse ? nl - 1 - j : j;
        cudaStream_t st;
        CS__TRY(cs__launch_stream(pl, nl, l, &st));
        /* programmatic only on the plan's own stream: a forked launch follows an event */
        if (step) CS__CU(cs__staged_launch_step(cs__staged_dev_of(pl, l, 0), *step, st, pl->pdl && nl == 1));
        else CS__CU(cs__staged_launch<T>(cs__staged_dev_of(pl, l, sizeof(T) == sizeof(float)), d, u, rhs, st));
        if (step && step->after_launch) { /* the launch's rows: from its first group to the next launch's */
            const int *L = pl->hp.stg_launch + CS__SL_N * l;
            const long long row0 = L[CS__SL_GROUPS] ? pl->hp.group_base[L[CS__SL_FIRST]] : 0;
            const long long row1 = l + 1 < nl && L[CS__SL_N + CS__SL_GROUPS] ? pl->hp.group_base[L[CS__SL_N + CS__SL_FIRST]]
                                                                              : pl->hp.internal_size;
            if (L[CS__SL_GROUPS] && step->after_launch(step->after_ctx, row0, row1, (void *)st)) {
                CS__TRY(cs__join(pl, nl, st)); /* the fork closed (a graph's capture stays valid) */
                cs__hgpu_err("cs_hines_gpu_step_internal_d: after_launch failed for launch %d", l);
                return CS_SOLVER_ERR_INVALID;
            }
        }
        CS__TRY(cs__join(pl, nl, st));
    }
    return CS_SOLVER_OK;
}

template <class T>
cs_solver_status cs__solve_internal(cs_hines_plan *pl, T *d, const T *u, T *rhs)
{
    if (!pl || !d || !u || !rhs) { cs__hgpu_err("cs_hines_gpu_solve_internal: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    const cs__hines_hplan *hp = &pl->hp;
    CS__CU(cudaSetDevice(pl->device));
    switch (hp->variant) {
    case CS__HV_FLAT:
    case CS__HV_INTERLEAVED:
    case CS__HV_BLOCK_INTERLEAVED:
    case CS__HV_VARIABLE: {
        int th = hp->threads, grid = (hp->nslot + th - 1) / th;
        if (hp->shared_p)
            cs__k_cells<T, true><<<grid, th, 0, pl->stream>>>(hp->nslot, pl->d_slot_base, pl->d_slot_n, hp->stride, pl->d_p_local, d, u, rhs);
        else
            cs__k_cells<T, false><<<grid, th, 0, pl->stream>>>(hp->nslot, pl->d_slot_base, pl->d_slot_n, hp->stride, pl->d_p_local, d, u, rhs);
        break;
    }
    case CS__HV_BLOCK_SHARED: {
        size_t bytes = pl->bs_smem_elems * sizeof(T);
        if (bytes > (size_t)pl->smem_optin) {
            cs__hgpu_err("block_shared: %zu bytes of shared memory needed, the device allows %d", bytes, pl->smem_optin);
            return CS_SOLVER_ERR_UNAVAILABLE;
        }
        if (hp->shared_p)
            cs__k_block_shared<T, true><<<hp->ngroup, hp->group, bytes, pl->stream>>>(pl->d_group_base, pl->d_group_rows, pl->d_slot_n, pl->d_p_local, d, u, rhs);
        else
            cs__k_block_shared<T, false><<<hp->ngroup, hp->group, bytes, pl->stream>>>(pl->d_group_base, pl->d_group_rows, pl->d_slot_n, pl->d_p_local, d, u, rhs);
        break;
    }
    case CS__HV_WARP:
        CS__TRY(cs__warp_launch<T>(pl, d, u, rhs));
        break;
    case CS__HV_STAGED:
        CS__TRY(cs__staged_launches<T>(pl, d, u, rhs));
        break;
    case CS__HV_CHUNKED: { /* P1, the reduced tree (u'_ab in a copy of its u), P3 */
        if (hp->chk_nchunk == 0) { /* nothing cut (cs__chunked_pays): exactly the fine plan's solve */
            CS__TRY(cs__solve_internal<T>(pl->sub, d, u, rhs));
            break;
        }
        const cs__chunked_dev cd = {hp->chk_nchunk, hp->chk_L, pl->d_chk_chunk, pl->d_chk_group};
        T *ur = (T *)pl->chk_ur;
        /* the copy holds u outside the chunk edges, which P1 rewrites every solve: with constant
         * couplings (opt.const_coupling, the same u every solve) it is made once */
        if (!pl->const_u || pl->chk_ur_src != (const void *)u) {
            CS__CU(cudaMemcpyAsync(ur, u, sizeof(T) * (size_t)hp->chk_nr, cudaMemcpyDeviceToDevice, pl->stream));
            pl->chk_ur_src = u;
        }
        CS__CU(cs__chunked_launch_p1<T>(cd, d, u, rhs, ur, pl->stream));
        CS__TRY(cs__solve_internal<T>(pl->sub, d, (const T *)ur, rhs));
        CS__CU(cs__chunked_launch_p3<T>(cd, d, u, rhs, pl->stream));
        break;
    }
    case CS__HV_FINE: {
        const size_t rows_bytes = (size_t)hp->max_pack_rows * 3 * sizeof(T), sb = (size_t)pl->fine_sched_max;
#define CS__FINE_ARGS pl->d_pack_base, pl->d_pack_type, pl->d_type_info, pl->d_level_start, pl->d_tasks, pl->d_children
        if (cs__fine_smem(pl, sizeof(T)) && pl->fine_solve_sched == CS__SCHED_SHARED && rows_bytes + sb <= (size_t)pl->smem_optin)
            cs__k_fine<T, true, CS__SCHED_SHARED><<<hp->npack, hp->threads, rows_bytes + sb, pl->stream>>>(CS__FINE_ARGS, (int)sb, d, u, rhs);
        else if (cs__fine_smem(pl, sizeof(T)) && pl->fine_solve_sched != CS__SCHED_GLOBAL)
            cs__k_fine<T, true, CS__SCHED_L2><<<hp->npack, hp->threads, rows_bytes, pl->stream>>>(CS__FINE_ARGS, 0, d, u, rhs);
        else if (cs__fine_smem(pl, sizeof(T)))
            cs__k_fine<T, true, CS__SCHED_GLOBAL><<<hp->npack, hp->threads, rows_bytes, pl->stream>>>(CS__FINE_ARGS, 0, d, u, rhs);
        else if (pl->fine_solve_sched != CS__SCHED_GLOBAL)
            cs__k_fine<T, false, CS__SCHED_L2><<<hp->npack, hp->threads, 0, pl->stream>>>(CS__FINE_ARGS, 0, d, u, rhs);
        else
            cs__k_fine<T, false, CS__SCHED_GLOBAL><<<hp->npack, hp->threads, 0, pl->stream>>>(CS__FINE_ARGS, 0, d, u, rhs);
        break;
    }
    default:
        cs__hgpu_err("unknown variant %d", hp->variant);
        return CS_SOLVER_ERR_INVALID;
    }
    CS__CU(cudaGetLastError());
    return CS_SOLVER_OK;
}

/* fine's fused step: one launch per class of packs (cs__fine_step_classes) in shared memory, or one
 * launch in device memory when a pack does not fit. The classes' launches run side by side on
 * streams of graded priority, the largest packs' first: in one stream each class's last wave ran
 * alone (big2000 × 8 000: the 83 largest packs, one class, 53 µs of an 830 µs step on 83 of 132
 * multiprocessors; bench/NOTES.md, "Session 27"). CS_HINES_FINE_CLASS_STREAMS=0: one stream. */
static cs_solver_status cs__fine_step_launch(cs_hines_plan *pl, const cs_hines_step_d *st)
{
    const cs__hines_hplan *hp = &pl->hp;
    if (!cs__fine_smem(pl, sizeof(double))) {
        if (pl->fine_step_sched != CS__SCHED_GLOBAL)
            cs__k_fine_step<false, false, false, CS__SCHED_L2><<<hp->npack, hp->threads, 0, pl->stream>>>(NULL, 0, CS__FINE_ARGS, 0, *st);
        else
            cs__k_fine_step<false, false, false, CS__SCHED_GLOBAL><<<hp->npack, hp->threads, 0, pl->stream>>>(NULL, 0, CS__FINE_ARGS, 0, *st);
        CS__CU(cudaGetLastError());
        return CS_SOLVER_OK;
    }
    const int n = pl->fine_class_streams ? pl->fs_nclass : 1;
    CS__TRY(cs__fork(pl, n, 1));
    const size_t rb = cs__fine_step_row_bytes(hp);
    for (int c = 0; c < pl->fs_nclass; ++c) {
        const int np = pl->fs_first[c + 1] - pl->fs_first[c];
        /* a class whose schedule would not fit beside its rows reads it from L2 */
        const size_t rows_bytes = (size_t)pl->fs_rows[c] * rb, sched = (size_t)pl->fs_sched[c];
        const int sh = sched > 0 && rows_bytes + sched <= (size_t)pl->smem_optin; /* fs_sched: cs__fine_pack_sched */
        const size_t bytes = rows_bytes + (sh ? sched : 0);
        /* the pack's threads: with fewer than 8 blocks a multiprocessor, 256 so that ~32 warps hide
         * the level sweeps' latency (big2000 × 8 000, H100: 128 → 256 threads 1.80e10 → 1.95e10 cs/s;
         * 512 was slower, 1.35e10: registers; bench/NOTES.md, session 21) */
        const int th = hp->threads_auto && pl->fs_bpsm[c] < 8 ? 256 : hp->threads;
        const int *ord = pl->d_fs_order;
        const int f = pl->fs_first[c];
        const bool pdl = pl->pdl && n == 1; /* programmatic only on the plan's own stream */
        cudaStream_t sm;
        CS__TRY(cs__launch_stream(pl, n, n > 1 ? c : 0, &sm));
        if (hp->fine_flags & CS_HINES_FINE_D_GLOBAL)
            CS__CU(cs_pdl_launch(pdl, cs__k_fine_step<true, false, false, CS__SCHED_GLOBAL>, dim3(np), dim3(th), bytes, sm, ord, f, CS__FINE_ARGS, 0, *st));
        else if ((hp->fine_flags & CS_HINES_FINE_U_SHARED) && sh)
            CS__CU(cs_pdl_launch(pdl, cs__k_fine_step<true, true, true, CS__SCHED_SHARED>, dim3(np), dim3(th), bytes, sm, ord, f, CS__FINE_ARGS, (int)sched, *st));
        else if ((hp->fine_flags & CS_HINES_FINE_U_SHARED) && pl->fine_step_sched != CS__SCHED_GLOBAL)
            CS__CU(cs_pdl_launch(pdl, cs__k_fine_step<true, true, true, CS__SCHED_L2>, dim3(np), dim3(th), bytes, sm, ord, f, CS__FINE_ARGS, 0, *st));
        else if (hp->fine_flags & CS_HINES_FINE_U_SHARED)
            CS__CU(cs_pdl_launch(pdl, cs__k_fine_step<true, true, true, CS__SCHED_GLOBAL>, dim3(np), dim3(th), bytes, sm, ord, f, CS__FINE_ARGS, 0, *st));
        else if (sh)
            CS__CU(cs_pdl_launch(pdl, cs__k_fine_step<true, false, true, CS__SCHED_SHARED>, dim3(np), dim3(th), bytes, sm, ord, f, CS__FINE_ARGS, (int)sched, *st));
        else if (pl->fine_step_sched != CS__SCHED_GLOBAL)
            CS__CU(cs_pdl_launch(pdl, cs__k_fine_step<true, false, true, CS__SCHED_L2>, dim3(np), dim3(th), bytes, sm, ord, f, CS__FINE_ARGS, 0, *st));
        else
            CS__CU(cs_pdl_launch(pdl, cs__k_fine_step<true, false, true, CS__SCHED_GLOBAL>, dim3(np), dim3(th), bytes, sm, ord, f, CS__FINE_ARGS, 0, *st));
        if (n > 1) CS__TRY(cs__join(pl, n, sm));
    }
    return CS_SOLVER_OK;
}
#undef CS__FINE_ARGS

cs_solver_status cs__step_launch(cs_hines_plan *pl, const cs_hines_step_d *st)
{
    const cs__hines_hplan *hp = &pl->hp;
    CS__TRY(cs__need_fused(pl));
    CS__CU(cudaSetDevice(pl->device));
    if (st->shared_constants && (!cs__hines_hplan_shares_constants(hp) || !st->a0)) {
        cs__hgpu_err("cs_hines_gpu_step_internal_d: shared constants need a per-system variant, systems of one structure "
                    "and a0");
        return CS_SOLVER_ERR_INVALID;
    }
    if (hp->variant == CS__HV_CHUNKED && hp->chk_nchunk == 0) /* nothing cut: its fine plan's step */
        return cs__step_launch(pl->sub, st);
    if (hp->variant == CS__HV_CHUNKED) { /* the reduced rows, P1, the reduced tree, P3 (cs_hines_chunked_gpu.h) */
        const cs__chunked_dev cd = {hp->chk_nchunk, hp->chk_L, pl->d_chk_chunk, pl->d_chk_group};
        double *ur = (double *)pl->chk_ur;
        const int copy_u = !pl->const_u || pl->chk_ur_src != (const void *)st->u; /* as the solve's copy */
        CS__CU(cs__chunked_launch_reduced_in(hp->chk_nr, *st, ur, copy_u, pl->stream));
        pl->chk_ur_src = st->u;
        CS__CU(cs__chunked_launch_p1_step(cd, *st, ur, pl->stream));
        CS__TRY(cs__solve_internal<double>(pl->sub, st->work_a, (const double *)ur, st->v));
        CS__CU(cs__chunked_launch_p3_step(cd, *st, pl->stream));
        return CS_SOLVER_OK;
    }
    if (hp->variant == CS__HV_FINE) return cs__fine_step_launch(pl, st);
    if (hp->variant == CS__HV_STAGED) {
        if (st->shared_constants || !pl->stg_current) {
            cs__hgpu_err("cs_hines_gpu_step_internal_d: staged needs its own constants per row and "
                        "cs_hines_gpu_plan_set_current before the first step");
            return CS_SOLVER_ERR_INVALID;
        }
        return cs__staged_launches<double>(pl, const_cast<double *>(st->d0), st->u, const_cast<double *>(st->b0), st);
    }
    int th = hp->threads, grid = (hp->nslot + th - 1) / th;
    const int *sb = pl->d_slot_base, *sn = pl->d_slot_n, *pp = pl->d_p_local;
    const bool pdl = pl->pdl;
    if (st->shared_constants)
        CS__CU(cs_pdl_launch(pdl, cs__k_step_cells<true, true, 8, 8>, dim3(grid), dim3(th), 0, pl->stream, hp->nslot, sb, sn, hp->stride, pp, *st));
    else if (hp->shared_p)
        CS__CU(cs_pdl_launch(pdl, cs__k_step_cells<true, false, 4, 8>, dim3(grid), dim3(th), 0, pl->stream, hp->nslot, sb, sn, hp->stride, pp, *st));
    else
        CS__CU(cs_pdl_launch(pdl, cs__k_step_cells<false, false, 4, 8>, dim3(grid), dim3(th), 0, pl->stream, hp->nslot, sb, sn, hp->stride, pp, *st));
    return CS_SOLVER_OK;
}

template <class T>
cs_solver_status cs__convert(cs_hines_plan *pl, int to_internal, cs_hines_array_kind kind, const T *src, T *dst)
{
    if (!pl || !src || !dst) { cs__hgpu_err("cs_hines_gpu conversion: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    const cs__hines_hplan *hp = &pl->hp;
    CS__CU(cudaSetDevice(pl->device));
    /* warps per block: 8, fewer when 8 systems of the largest size would not fit 96 KB of shared
     * memory; a system too large for one warp's share is converted directly (no staging) */
    const size_t row_bytes = (size_t)hp->max_n * sizeof(T), cap = 96 * 1024;
    const int warps = row_bytes * 8 <= cap ? 8 : row_bytes <= cap ? (int)(cap / row_bytes) : 8;
    const int stage_rows = hp->nlmap > 0 && row_bytes <= cap ? hp->max_n : 0; /* only mapped plans stage */
    const size_t smem = stage_rows ? (size_t)warps * row_bytes : 0;
    const int th = 32 * warps;
    const long long nthreads = (long long)hp->nsys * 32;
    const int grid = (int)((nthreads + th - 1) / th);
    const int coupling = kind == CS_HINES_COUPLING;
    void (*k)(int, const int *, const int *, const int *, int, const int *, const int *, const int *, int, int, const T *, T *) =
        to_internal ? cs__k_convert<T, true> : cs__k_convert<T, false>;
    bool &raised = pl->conv_attr[sizeof(T) == 8][to_internal];
    if (smem > 48 * 1024 && !raised) { /* once per plan, and always to the cap, so no plan lowers it under another */
        CS__CU(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)cap));
        raised = true;
    }
    k<<<grid, th, smem, pl->stream>>>(hp->nsys, pl->d_offset, pl->d_cell_base, pl->d_cell_map, hp->cell_stride, pl->d_lmap, pl->d_lusrc,
                                      pl->d_lorder, coupling, stage_rows, src, dst);
    CS__CU(cudaGetLastError());
    return CS_SOLVER_OK;
}

template cs_solver_status cs__solve_internal<double>(cs_hines_plan *, double *, const double *, double *);
template cs_solver_status cs__solve_internal<float>(cs_hines_plan *, float *, const float *, float *);
template cs_solver_status cs__convert<double>(cs_hines_plan *, int, cs_hines_array_kind, const double *, double *);
template cs_solver_status cs__convert<float>(cs_hines_plan *, int, cs_hines_array_kind, const float *, float *);
