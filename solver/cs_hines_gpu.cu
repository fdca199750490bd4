/* GPU Hines (tree) batch solvers: the device plan, launchers and the public API of
 * cs_hines_gpu.h. Host planning (layouts, schedules, packing) is plain C in cs_hines_plan.c; this
 * file uploads the plan once and launches the kernels of cs_hines_gpu_kernels.cuh:
 *   cs__k_cells        one thread per system on any (slot base, stride) layout: flat,
 *                      interleaved, block_interleaved, variable; parents shared or per row
 *   cs__k_block_shared one CUDA block per group of BS systems, rhs in shared memory
 *   cs__k_fine         one CUDA block per pack, one thread per branch, level by level; the pack's
 *                      d, u, rhs staged in shared memory (or worked on in place when too large)
 *   cs__k_warp         one warp per pack (one cell, or a few small ones), packs of one type per
 *                      block, the type's schedule and each pack's rows staged in shared memory
 *   cs__k_convert      tree order ↔ internal layout, one warp per system
 * "staged" and "chunked" have kernels of their own (cs_hines_staged_gpu.cu, cs_hines_chunked_gpu.cu);
 * a chunked plan holds the plan of its reduced tree (pl->sub) and solves it between its two
 * chunk kernels. */
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_hines_chunked_gpu.h"
#include "cs_hines_gpu_impl.h"
#include "cs_hines_gpu_kernels.cuh"
#include "cs_hines_staged_gpu.h"

enum { CS__FINE_CLASSES = 8 }; /* fine's fused step: launches by blocks a multiprocessor, 1 .. 8+ */

/* ---- errors ------------------------------------------------------------------------------- */
static thread_local char cs__gpu_msg[512];

static void cs__gpu_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cs__gpu_msg, sizeof cs__gpu_msg, fmt, ap);
    va_end(ap);
}

#define CS__CU(call)                                                                          \
    do {                                                                                      \
        cudaError_t cs__e = (call);                                                           \
        if (cs__e != cudaSuccess) {                                                           \
            cs__gpu_err("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call,                      \
                        cudaGetErrorString(cs__e), cudaGetErrorName(cs__e));                  \
            return CS_SOLVER_ERR_DEVICE;                                                      \
        }                                                                                     \
    } while (0)

#define CS__TRY(expr)                                 \
    do {                                              \
        cs_solver_status cs__s = (expr);              \
        if (cs__s != CS_SOLVER_OK) return cs__s;      \
    } while (0)

extern "C" const char *cs_hines_gpu_last_error(void) { return cs__gpu_msg; }
extern "C" int cs_hines_gpu_compiled(void) { return 1; }

extern "C" int cs_hines_gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" void cs_hines_gpu_device_name(int dev, char *buf, size_t len)
{
    if (!buf || !len) return;
    buf[0] = 0;
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess) snprintf(buf, len, "%s", prop.name);
    else (void)cudaGetLastError();
}

/* ---- the plan ------------------------------------------------------------------------------- */
struct cs_hines_plan {
    cs__hines_hplan hp;
    int device;
    cudaStream_t stream;
    int *d_offset, *d_cell_base, *d_cell_map, *d_lmap, *d_lusrc, *d_lorder;
    int *d_slot_base, *d_slot_n, *d_p_local, *d_group_base, *d_group_rows;
    int *d_pack_base, *d_pack_type, *d_level_start, *d_children, *d_block_first;
    cudaStream_t *launch_stream; /* warp, staged: one stream per launch (created at the first solve) */
    int nlaunch_stream;
    int launch_reverse; /* staged: launches queued last first (cs__fork) */
    cudaEvent_t ev_fork, ev_join;
    int4 *d_type_info, *d_tasks;
    int *d_group_type;      /* staged */
    int *d_group_cbase;     /* staged, fused step: hp.group_cbase (NULL: d_group_base serves) */
    /* fine's fused step: its packs launched by class of blocks a multiprocessor (shared memory),
     * each launch sized for its largest pack: fs_order[fs_first[c] .. fs_first[c + 1]) are class c's
     * packs, fs_rows[c] their most rows, fs_bpsm[c] the blocks a multiprocessor they allow */
    int fs_nclass, fs_first[CS__FINE_CLASSES + 1], fs_rows[CS__FINE_CLASSES], fs_bpsm[CS__FINE_CLASSES];
    int fs_sched[CS__FINE_CLASSES]; /* the most schedule bytes of a class's packs (fine_step_sched shared) */
    int *d_fs_order;
    /* fine (and chunked's reduced tree): where the level sweeps read the schedule, CS__SCHED_*, in
     * the fused step and in the solve (cs__fine_sched_setup), and the largest type's schedule in bytes */
    int fine_step_sched, fine_solve_sched, fine_sched_max;
    int *d_stg_next;        /* staged: two counters per launch (cs__staged_dev.next) */
    int stg_current;        /* staged, fused step: the rows with current are marked (set_current) */
    int2 *d_stype;
    int4 *d_sched;
    int nsm;                /* multiprocessors of the device */
    int *stg_blocks;        /* staged: blocks per multiprocessor of each launch, double and float */
    size_t bs_smem_elems;   /* block_shared: max group rows · G */
    int smem_optin;         /* bytes of shared memory a block may opt in to */
    int smem_sm;            /* bytes of shared memory of a multiprocessor */
    bool conv_attr[2][2];   /* conversion kernel [double][to_internal]: its shared-memory limit raised */
    void *buf_tree;         /* 3 tree-order arrays (host-pointer path), bytes below */
    size_t buf_tree_bytes;
    void *buf_int;          /* 3 internal arrays */
    size_t buf_int_bytes;
    cs_hines_plan *sub;     /* chunked: the reduced tree's plan (its host plan moved out of hp.chk_sub) */
    int4 *d_chk_chunk;      /* chunked: hp.chk_chunk */
    int2 *d_chk_group;      /* chunked: hp.chk_group */
    void *chk_ur;           /* chunked: the reduced tree's u (hp.chk_nr doubles), u'_ab written per solve */
    const void *chk_ur_src; /* chunked, const_coupling: the u chk_ur was copied from (NULL: none yet) */
    int const_u;            /* opt.const_coupling (the top plan only: a sub plan's u changes every solve) */
};

template <class T>
static cs_solver_status cs__upload(T **dst, const T *src, size_t n)
{
    *dst = NULL;
    if (!src || n == 0) return CS_SOLVER_OK;
    CS__CU(cudaMalloc((void **)dst, n * sizeof(T)));
    CS__CU(cudaMemcpy(*dst, src, n * sizeof(T), cudaMemcpyHostToDevice));
    return CS_SOLVER_OK;
}

extern "C" void cs_hines_gpu_plan_destroy(cs_hines_plan *pl)
{
    if (!pl) return;
    void *ptrs[] = {pl->d_offset, pl->d_cell_base, pl->d_cell_map, pl->d_lmap, pl->d_lusrc, pl->d_lorder,
                    pl->d_slot_base, pl->d_slot_n, pl->d_p_local, pl->d_group_base, pl->d_group_rows,
                    pl->d_pack_base, pl->d_pack_type, pl->d_level_start, pl->d_children, pl->d_block_first,
                    pl->d_type_info, pl->d_tasks, pl->d_group_type, pl->d_group_cbase, pl->d_stg_next, pl->d_stype, pl->d_sched,
                    pl->buf_tree, pl->buf_int, pl->d_chk_chunk, pl->d_chk_group, pl->chk_ur, pl->d_fs_order};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; ++i)
        if (ptrs[i]) cudaFree(ptrs[i]);
    if (pl->launch_stream) {
        for (int g = 0; g < pl->nlaunch_stream; ++g)
            if (pl->launch_stream[g]) cudaStreamDestroy(pl->launch_stream[g]);
        free(pl->launch_stream);
        cudaEventDestroy(pl->ev_fork);
        cudaEventDestroy(pl->ev_join);
    }
    cs_hines_gpu_plan_destroy(pl->sub);
    cs__hines_hplan_free(&pl->hp);
    free(pl->stg_blocks);
    free(pl);
}

static bool cs__fine_smem(const cs_hines_plan *pl, size_t elem)
{
    return !(pl->hp.fine_flags & CS_HINES_FINE_GLOBAL) &&
           (size_t)pl->hp.max_pack_rows * 3 * elem <= (size_t)pl->smem_optin;
}

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
                         pl->stg_blocks ? pl->stg_blocks[2 * l + prec] : 0, pl->hp.stg_fused, pl->d_group_base + L[CS__SL_FIRST],
                         pl->d_group_type + L[CS__SL_FIRST], (pl->d_group_cbase ? pl->d_group_cbase : pl->d_group_base) + L[CS__SL_FIRST],
                         pl->d_stype, pl->d_sched, pl->d_stg_next ? pl->d_stg_next + 2 * l : NULL};
    return sd;
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
            cs__gpu_err("warp: a block of %d rows needs %zu bytes of shared memory, the device allows %d "
                        "(use \"fine\", which works in device memory when a pack does not fit)",
                        hp->block_rows, bytes, pl->smem_optin);
            return CS_SOLVER_ERR_UNAVAILABLE;
        }
        if (bytes > 48 * 1024)
            CS__CU(cudaFuncSetAttribute(cs__k_warp<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    }
    if (hp->variant == CS__HV_STAGED && sizeof(T) == sizeof(double)) { /* once, for both precisions */
        pl->stg_blocks = (int *)calloc(2 * (size_t)hp->stg_nlaunch, sizeof(int));
        if (!pl->stg_blocks) { cs__gpu_err("out of memory"); return CS_SOLVER_ERR_NOMEM; }
        for (int l = 0; l < hp->stg_nlaunch; ++l) {
            const cs__staged_dev sd = cs__staged_dev_of(pl, l, 0);
            /* launches of one kernel (cells, register steps) share its attribute: the largest of them */
            int rows = 0, steps = 0;
            for (int l2 = 0; l2 < hp->stg_nlaunch; ++l2) {
                const int *L2 = hp->stg_launch + CS__SL_N * l2;
                if (L2[CS__SL_CELLS] != sd.cells || L2[CS__SL_REG] != sd.reg_steps || L2[CS__SL_TW] != sd.two_way) continue;
                rows = L2[CS__SL_ROWS] > rows ? L2[CS__SL_ROWS] : rows;
                steps = L2[CS__SL_STEPS] > steps ? L2[CS__SL_STEPS] : steps;
            }
            const size_t bytes = cs__staged_warp_bytes(rows, steps, sd.cells, sd.two_way, hp->stg_fused ? CS__STG_FUSED_ARRAYS : 3,
                                                       sizeof(double));
            if (bytes > (size_t)pl->smem_optin) {
                cs__gpu_err("staged: a warp of %d cells with %d shared rows needs %zu bytes of shared memory, the device allows %d "
                            "(use \"interleaved\" or \"warp\")", sd.cells, rows, bytes, pl->smem_optin);
                return CS_SOLVER_ERR_UNAVAILABLE;
            }
            CS__CU(cs__staged_prepare(sd, rows, steps, pl->stg_blocks + 2 * l));
        }
    }
    if (hp->variant == CS__HV_FINE && cs__fine_smem(pl, sizeof(T))) { /* the opt-in limit: launches ask what they need */
        const int lim = pl->smem_optin;
        CS__CU(cudaFuncSetAttribute(cs__k_fine<T, true, CS__SCHED_GLOBAL>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
        CS__CU(cudaFuncSetAttribute(cs__k_fine<T, true, CS__SCHED_L2>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
        CS__CU(cudaFuncSetAttribute(cs__k_fine<T, true, CS__SCHED_SHARED>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
        if (sizeof(T) == sizeof(double)) { /* the fused step (double only) */
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, true, true, CS__SCHED_GLOBAL>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, false, false, CS__SCHED_GLOBAL>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, false, true, CS__SCHED_GLOBAL>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, false, true, CS__SCHED_L2>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
            CS__CU(cudaFuncSetAttribute(cs__k_fine_step<true, false, true, CS__SCHED_SHARED>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
        }
    }
    return CS_SOLVER_OK;
}

static cs_solver_status cs__plan_finish(cs_hines_plan *pl);

/* shared memory a row of fine's fused step takes: D, R, and U unless read through L1 */
static size_t cs__fine_step_row_bytes(const cs__hines_hplan *hp)
{
    return sizeof(double) * ((hp->fine_flags & CS_HINES_FINE_D_GLOBAL) ? 1 : (hp->fine_flags & CS_HINES_FINE_U_SHARED) ? 3 : 2);
}

/* fine's fused step: its packs grouped by the blocks a multiprocessor their shared memory allows
 * (one launch per group, sized for its largest pack), so that a pack of 2 000 rows does not take
 * the shared memory of the batch's largest (3 225 rows in big2000 × 8 000: 4 blocks a
 * multiprocessor for all). CS_HINES_FINE_ONE_LAUNCH: one class. */
/* fine: where the sweeps read the schedule, and the largest type's schedule. Measured on the H100
 * (bench/NOTES.md, "Session 27"): the fused step prefetched into L2 (big2000 × 8 000: 0.3307 s →
 * 0.3007; in shared memory 0.3168, a block fewer a multiprocessor), the solve in shared memory
 * (chunked's reduced trees, one block a multiprocessor already: big10000 × 1 600 0.4719 → 0.3761;
 * L2 0.3914). CS_HINES_FINE_SCHED=global|l2|shared sets both. */
static void cs__fine_sched_setup(cs_hines_plan *pl)
{
    const cs__hines_hplan *hp = &pl->hp;
    const char *env = getenv("CS_HINES_FINE_SCHED");
    const int set = !env ? -1 : !strcmp(env, "global") ? CS__SCHED_GLOBAL : !strcmp(env, "l2") ? CS__SCHED_L2
                              : !strcmp(env, "shared") ? CS__SCHED_SHARED : -1;
    pl->fine_step_sched = set >= 0 ? set : CS__SCHED_L2;
    pl->fine_solve_sched = set >= 0 ? set : CS__SCHED_SHARED;
    pl->fine_sched_max = 0;
    for (int t = 0; t < hp->ntype; ++t) {
        const int b = cs__hines_type_sched_bytes(hp, t);
        pl->fine_sched_max = b > pl->fine_sched_max ? b : pl->fine_sched_max;
    }
}

/* the schedule bytes a pack of type t stages in the fused step (0 unless it stages it) */
static size_t cs__fine_pack_sched(const cs_hines_plan *pl, int t)
{
    return pl->fine_step_sched == CS__SCHED_SHARED ? (size_t)cs__hines_type_sched_bytes(&pl->hp, t) : 0;
}

static cs_solver_status cs__fine_step_classes(cs_hines_plan *pl)
{
    const cs__hines_hplan *hp = &pl->hp;
    const size_t rb = cs__fine_step_row_bytes(hp), per_block = 1024; /* the runtime's reserve a block */
    int *cls = (int *)malloc(sizeof(int) * (size_t)(hp->npack > 0 ? hp->npack : 1));
    int *order = (int *)malloc(sizeof(int) * (size_t)(hp->npack > 0 ? hp->npack : 1));
    if (!cls || !order) { free(cls); free(order); cs__gpu_err("cs_hines_gpu_plan_create: out of memory"); return CS_SOLVER_ERR_NOMEM; }
    int count[CS__FINE_CLASSES] = {0};
    for (int p = 0; p < hp->npack; ++p) {
        const size_t rows = (size_t)hp->type_info[4 * hp->pack_type[p] + 3];
        size_t b = (size_t)pl->smem_sm / (rows * rb + cs__fine_pack_sched(pl, hp->pack_type[p]) + per_block);
        if (b < 1) b = 1;
        if (b > CS__FINE_CLASSES || (hp->fine_flags & CS_HINES_FINE_ONE_LAUNCH)) b = CS__FINE_CLASSES;
        cls[p] = (int)b - 1;
        count[cls[p]]++;
    }
    /* classes by blocks a multiprocessor, fewest first (the largest packs start first) */
    pl->fs_nclass = 0;
    int at = 0;
    for (int c = 0; c < CS__FINE_CLASSES; ++c) {
        if (!count[c]) continue;
        const int k = pl->fs_nclass++;
        pl->fs_first[k] = at;
        pl->fs_rows[k] = 0;
        pl->fs_sched[k] = 0;
        pl->fs_bpsm[k] = c + 1;
        for (int p = 0; p < hp->npack; ++p)
            if (cls[p] == c) {
                order[at++] = p;
                const int rows = hp->type_info[4 * hp->pack_type[p] + 3], sched = (int)cs__fine_pack_sched(pl, hp->pack_type[p]);
                if (rows > pl->fs_rows[k]) pl->fs_rows[k] = rows;
                if (sched > pl->fs_sched[k]) pl->fs_sched[k] = sched;
            }
    }
    pl->fs_first[pl->fs_nclass] = at;
    if (hp->fine_flags & CS_HINES_FINE_ONE_LAUNCH) { /* one launch in pack order, sized for the largest pack */
        for (int p = 0; p < hp->npack; ++p) order[p] = p;
        if (pl->fs_nclass == 1) { /* the blocks its largest pack allows (so its threads follow the rule) */
            size_t b = (size_t)pl->smem_sm / ((size_t)pl->fs_rows[0] * rb + (size_t)pl->fs_sched[0] + per_block);
            pl->fs_bpsm[0] = b < 1 ? 1 : b > CS__FINE_CLASSES ? CS__FINE_CLASSES : (int)b;
        }
    }
    cs_solver_status st = cs__upload(&pl->d_fs_order, order, (size_t)(hp->npack > 0 ? hp->npack : 1));
    free(cls);
    free(order);
    return st;
}

static cs_solver_status cs__plan_upload(cs_hines_plan *pl)
{
    const cs__hines_hplan *hp = &pl->hp;
    CS__TRY(cs__upload(&pl->d_offset, hp->offset, (size_t)hp->nsys + 1));
    CS__TRY(cs__upload(&pl->d_cell_base, hp->cell_base, (size_t)hp->nsys));
    CS__TRY(cs__upload(&pl->d_cell_map, hp->cell_map, (size_t)hp->nsys));
    CS__TRY(cs__upload(&pl->d_lmap, hp->lmap, (size_t)hp->nlmap));
    CS__TRY(cs__upload(&pl->d_lusrc, hp->lusrc, (size_t)hp->nlmap));
    CS__TRY(cs__upload(&pl->d_lorder, hp->lorder, (size_t)hp->nlmap));
    if (cs__hines_variant_is_fine(hp->variant)) {
        if (hp->variant == CS__HV_WARP) CS__TRY(cs__upload(&pl->d_block_first, hp->block_first, (size_t)hp->nblock + 1));
        CS__TRY(cs__upload(&pl->d_pack_base, hp->pack_base, (size_t)hp->npack));
        CS__TRY(cs__upload(&pl->d_pack_type, hp->pack_type, (size_t)hp->npack));
        CS__TRY(cs__upload(&pl->d_type_info, (const int4 *)hp->type_info, (size_t)hp->ntype));
        CS__TRY(cs__upload(&pl->d_level_start, hp->level_start, (size_t)hp->nlevel_start));
        CS__TRY(cs__upload(&pl->d_tasks, (const int4 *)hp->tasks, (size_t)hp->ntask));
        CS__TRY(cs__upload(&pl->d_children, hp->children, (size_t)(hp->nchild > 0 ? hp->nchild : 1)));
        if (hp->variant == CS__HV_FINE) {
            cs__fine_sched_setup(pl);
            CS__TRY(cs__fine_step_classes(pl));
        }
    } else if (hp->variant == CS__HV_CHUNKED) {
        CS__TRY(cs__upload(&pl->d_chk_chunk, (const int4 *)hp->chk_chunk, (size_t)hp->chk_nchunk));
        CS__TRY(cs__upload(&pl->d_chk_group, (const int2 *)hp->chk_group, (size_t)hp->chk_ngroup));
        if (hp->chk_nchunk > 0) CS__CU(cudaMalloc(&pl->chk_ur, sizeof(double) * (size_t)(hp->chk_nr > 0 ? hp->chk_nr : 1)));
        cs_hines_plan *sub = (cs_hines_plan *)calloc(1, sizeof *sub);
        if (!sub) { cs__gpu_err("cs_hines_gpu_plan_create: out of memory"); return CS_SOLVER_ERR_NOMEM; }
        sub->hp = *pl->hp.chk_sub; /* moved: the sub plan frees it */
        free(pl->hp.chk_sub);
        pl->hp.chk_sub = NULL;
        sub->device = pl->device;
        sub->smem_optin = pl->smem_optin;
        sub->smem_sm = pl->smem_sm;
        sub->nsm = pl->nsm;
        sub->stream = pl->stream;
        pl->sub = sub;
        CS__TRY(cs__plan_finish(sub));
    } else if (hp->variant == CS__HV_STAGED) {
        CS__TRY(cs__upload(&pl->d_group_base, hp->group_base, (size_t)hp->ngroup));
        CS__TRY(cs__upload(&pl->d_group_type, hp->group_type, (size_t)hp->ngroup));
        CS__CU(cudaMalloc((void **)&pl->d_stg_next, sizeof(int) * 2 * (size_t)hp->stg_nlaunch));
        CS__CU(cudaMemset(pl->d_stg_next, 0, sizeof(int) * 2 * (size_t)hp->stg_nlaunch));
        CS__TRY(cs__upload(&pl->d_stype, (const int2 *)hp->stype, (size_t)hp->nstype));
        CS__TRY(cs__upload(&pl->d_sched, (const int4 *)hp->stg_sched, (size_t)hp->stg_nslot / 2)); /* int2 slots, 8·k per step */
    } else {
        CS__TRY(cs__upload(&pl->d_slot_base, hp->slot_base, (size_t)hp->nslot));
        CS__TRY(cs__upload(&pl->d_slot_n, hp->slot_n, (size_t)hp->nslot));
        CS__TRY(cs__upload(&pl->d_p_local, hp->p_local, hp->shared_p ? (size_t)hp->max_n : (size_t)hp->internal_size));
        if (hp->variant == CS__HV_BLOCK_SHARED) {
            CS__TRY(cs__upload(&pl->d_group_base, hp->group_base, (size_t)hp->ngroup));
            CS__TRY(cs__upload(&pl->d_group_rows, hp->group_rows, (size_t)hp->ngroup));
            size_t m = 0;
            for (int g = 0; g < hp->ngroup; ++g) if ((size_t)hp->group_rows[g] > m) m = hp->group_rows[g];
            pl->bs_smem_elems = m * (size_t)hp->group;
        }
    }
    return CS_SOLVER_OK;
}

extern "C" cs_solver_status cs_hines_gpu_plan_create(int nsys, const int *offset, const int *p,
                                                     const cs_hines_gpu_options *opt_in, cs_hines_plan **out)
{
    cs__gpu_msg[0] = 0;
    if (!out) { cs__gpu_err("cs_hines_gpu_plan_create: out is NULL"); return CS_SOLVER_ERR_INVALID; }
    *out = NULL;
    cs_hines_gpu_options opt;
    if (opt_in) opt = *opt_in; else cs_hines_gpu_options_default(&opt);
    int variant = cs__hines_variant_lookup(opt.variant);
    if (variant < 0) {
        cs__gpu_err("cs_hines_gpu_plan_create: unknown variant \"%s\" (flat, interleaved, block_interleaved, "
                    "block_shared, variable, fine, warp, staged, chunked, auto)", opt.variant);
        return CS_SOLVER_ERR_INVALID;
    }
    if (cs_hines_gpu_device_count() <= opt.device) {
        cs__gpu_err("cs_hines_gpu_plan_create: no CUDA device %d", opt.device);
        return CS_SOLVER_ERR_UNAVAILABLE;
    }
    CS__CU(cudaSetDevice(opt.device));
    cudaDeviceProp prop;
    CS__CU(cudaGetDeviceProperties(&prop, opt.device));
    cs_hines_plan *pl = (cs_hines_plan *)calloc(1, sizeof *pl);
    if (!pl) { cs__gpu_err("cs_hines_gpu_plan_create: out of memory"); return CS_SOLVER_ERR_NOMEM; }
    pl->device = opt.device;
    pl->const_u = opt.const_coupling != 0;
    pl->smem_optin = (int)prop.sharedMemPerBlockOptin;
    pl->smem_sm = (int)prop.sharedMemPerMultiprocessor;
    pl->nsm = prop.multiProcessorCount;
    char msg[256];
    cs_solver_status st = cs__hines_hplan_build(nsys, offset, p, variant, &opt, prop.multiProcessorCount, &pl->hp, msg, sizeof msg);
    if (st != CS_SOLVER_OK) {
        cs__gpu_err("cs_hines_gpu_plan_create: %s", msg);
        free(pl);
        return st;
    }
    if ((st = cs__plan_finish(pl)) != CS_SOLVER_OK) {
        cs_hines_gpu_plan_destroy(pl);
        return st;
    }
    *out = pl;
    return CS_SOLVER_OK;
}

extern "C" const char *cs_hines_gpu_plan_resolve(int nsys, const int *offset, const int *p, const cs_hines_gpu_options *opt)
{
    cs_hines_gpu_options o;
    if (opt) o = *opt; else cs_hines_gpu_options_default(&o);
    int nsm = 0;
    if (cs_hines_gpu_device_count() <= o.device ||
        cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, o.device) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    const int v = cs__hines_hplan_resolve(nsys, offset, p, &o, nsm);
    return v < 0 ? NULL : cs__hines_variant_name(v);
}

/* the device side of a host plan: uploads and kernel attributes (a chunked plan's sub plan too) */
static cs_solver_status cs__plan_finish(cs_hines_plan *pl)
{
    CS__TRY(cs__plan_upload(pl));
    CS__TRY(cs__set_attrs<double>(pl));
    return cs__set_attrs<float>(pl);
}

/* the kernel attributes again (staged's blocks per multiprocessor recomputed), a chunked plan's
 * sub plan's too */
static cs_solver_status cs__plan_attrs(cs_hines_plan *pl)
{
    free(pl->stg_blocks);
    pl->stg_blocks = NULL;
    CS__TRY(cs__set_attrs<double>(pl));
    CS__TRY(cs__set_attrs<float>(pl));
    return pl->sub ? cs__plan_attrs(pl->sub) : CS_SOLVER_OK;
}

extern "C" cs_solver_status cs_hines_gpu_plan_prepare(cs_hines_plan *pl)
{
    if (!pl) { cs__gpu_err("cs_hines_gpu_plan_prepare: NULL plan"); return CS_SOLVER_ERR_INVALID; }
    CS__CU(cudaSetDevice(pl->device));
    return cs__plan_attrs(pl);
}

extern "C" const char *cs_hines_gpu_plan_variant(const cs_hines_plan *pl)
{
    return pl ? cs__hines_variant_name(pl->hp.variant) : "";
}
extern "C" size_t cs_hines_gpu_plan_internal_size(const cs_hines_plan *pl) { return pl ? (size_t)pl->hp.internal_size : 0; }
extern "C" const char *cs_hines_gpu_plan_describe(const cs_hines_plan *pl) { return pl ? pl->hp.describe : ""; }

extern "C" cs_solver_status cs_hines_gpu_plan_row_map(const cs_hines_plan *pl, int *internal_of_row)
{
    if (!pl || !internal_of_row) { cs__gpu_err("cs_hines_gpu_plan_row_map: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    const cs__hines_hplan *hp = &pl->hp;
    for (int s = 0; s < hp->nsys; ++s) {
        int o = hp->offset[s], n = hp->offset[s + 1] - o;
        for (int i = 0; i < n; ++i) internal_of_row[o + i] = (int)cs__hines_hplan_internal_index(hp, s, i);
    }
    return CS_SOLVER_OK;
}

extern "C" cs_solver_status cs_hines_gpu_set_stream(cs_hines_plan *pl, void *stream)
{
    if (!pl) { cs__gpu_err("cs_hines_gpu_set_stream: NULL plan"); return CS_SOLVER_ERR_INVALID; }
    for (cs_hines_plan *q = pl; q; q = q->sub) q->stream = (cudaStream_t)stream;
    return CS_SOLVER_OK;
}

extern "C" cs_solver_status cs_hines_gpu_sync(cs_hines_plan *pl)
{
    if (!pl) { cs__gpu_err("cs_hines_gpu_sync: NULL plan"); return CS_SOLVER_ERR_INVALID; }
    CS__CU(cudaStreamSynchronize(pl->stream));
    return CS_SOLVER_OK;
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
        if (!pl->launch_stream) { cs__gpu_err("cs_hines_gpu: out of host memory"); return CS_SOLVER_ERR_NOMEM; }
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
            cs__gpu_err("staged: the %s arrays must be %zu-byte aligned device pointers", step ? "fused step's" : "solve's", align);
            return CS_SOLVER_ERR_INVALID;
        }
    }
    CS__TRY(cs__fork(pl, nl, 1));
    for (int j = 0; j < nl; ++j) {
        const int l = pl->launch_reverse ? nl - 1 - j : j;
        cudaStream_t st;
        CS__TRY(cs__launch_stream(pl, nl, l, &st));
        if (step) CS__CU(cs__staged_launch_step(cs__staged_dev_of(pl, l, 0), *step, st));
        else CS__CU(cs__staged_launch<T>(cs__staged_dev_of(pl, l, sizeof(T) == sizeof(float)), d, u, rhs, st));
        if (step && step->after_launch) { /* the launch's rows: from its first group to the next launch's */
            const int *L = pl->hp.stg_launch + CS__SL_N * l;
            const long long row0 = L[CS__SL_GROUPS] ? pl->hp.group_base[L[CS__SL_FIRST]] : 0;
            const long long row1 = l + 1 < nl && L[CS__SL_N + CS__SL_GROUPS] ? pl->hp.group_base[L[CS__SL_N + CS__SL_FIRST]]
                                                                              : pl->hp.internal_size;
            if (L[CS__SL_GROUPS] && step->after_launch(step->after_ctx, row0, row1, (void *)st)) {
                CS__TRY(cs__join(pl, nl, st)); /* the fork closed (a graph's capture stays valid) */
                cs__gpu_err("cs_hines_gpu_step_internal_d: after_launch failed for launch %d", l);
                return CS_SOLVER_ERR_INVALID;
            }
        }
        CS__TRY(cs__join(pl, nl, st));
    }
    return CS_SOLVER_OK;
}

template <class T>
static cs_solver_status cs__solve_internal(cs_hines_plan *pl, T *d, const T *u, T *rhs)
{
    if (!pl || !d || !u || !rhs) { cs__gpu_err("cs_hines_gpu_solve_internal: NULL argument"); return CS_SOLVER_ERR_INVALID; }
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
            cs__gpu_err("block_shared: %zu bytes of shared memory needed, the device allows %d", bytes, pl->smem_optin);
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
        cs__gpu_err("unknown variant %d", hp->variant);
        return CS_SOLVER_ERR_INVALID;
    }
    CS__CU(cudaGetLastError());
    return CS_SOLVER_OK;
}

static cs_solver_status cs__need_fused(const cs_hines_plan *pl)
{
    if (cs__hines_hplan_fuses(&pl->hp)) return CS_SOLVER_OK;
    cs__gpu_err("the fused step needs a per-system variant (flat, interleaved, block_interleaved, variable), fine, "
                "chunked, or a staged plan built with fused_step, not %s", cs__hines_variant_name(pl->hp.variant));
    return CS_SOLVER_ERR_UNAVAILABLE;
}

extern "C" cs_solver_status cs_hines_gpu_plan_set_current(cs_hines_plan *pl, const unsigned char *flags)
{
    if (!pl || !flags) { cs__gpu_err("cs_hines_gpu_plan_set_current: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    CS__TRY(cs__need_fused(pl));
    if (pl->hp.variant != CS__HV_STAGED) return CS_SOLVER_OK; /* they read the step's flags */
    cs__staged_mark_current(&pl->hp, flags);
    CS__CU(cudaSetDevice(pl->device));
    CS__CU(cudaMemcpy(pl->d_sched, pl->hp.stg_sched, sizeof(int) * 2 * (size_t)pl->hp.stg_nslot, cudaMemcpyHostToDevice));
    pl->stg_current = 1;
    return CS_SOLVER_OK;
}

extern "C" cs_solver_status cs_hines_gpu_plan_share_constants(cs_hines_plan *pl, const double *tree, int first_array,
                                                              long long *groups_shared)
{
    if (groups_shared) *groups_shared = 0;
    if (!pl || !tree) {
        cs__gpu_err("cs_hines_gpu_plan_share_constants: NULL argument");
        return CS_SOLVER_ERR_INVALID;
    }
    const long long n = cs__staged_share_constants(&pl->hp, tree, first_array);
    if (n < 0) { cs__gpu_err("out of memory"); return CS_SOLVER_ERR_NOMEM; }
    CS__CU(cudaSetDevice(pl->device));
    if (pl->d_group_cbase) CS__CU(cudaFree(pl->d_group_cbase));
    pl->d_group_cbase = NULL;
    if (pl->hp.group_cbase) CS__TRY(cs__upload(&pl->d_group_cbase, pl->hp.group_cbase, (size_t)pl->hp.ngroup));
    if (groups_shared) *groups_shared = n;
    return CS_SOLVER_OK;
}

extern "C" int cs_hines_gpu_plan_uniform(const cs_hines_plan *pl) { return pl && pl->hp.uniform; }

extern "C" int cs_hines_gpu_plan_fuses(const cs_hines_plan *pl) { return pl && cs__hines_hplan_fuses(&pl->hp); }
extern "C" int cs_hines_gpu_plan_step_launches(const cs_hines_plan *pl)
{
    return !pl ? 0 : pl->hp.variant == CS__HV_STAGED && pl->hp.stg_nlaunch > 1 ? pl->hp.stg_nlaunch : 1;
}

extern "C" int cs_hines_gpu_plan_shares_constants(const cs_hines_plan *pl) { return pl && cs__hines_hplan_shares_constants(&pl->hp); }

extern "C" cs_solver_status cs_hines_gpu_plan_row_flags(const cs_hines_plan *pl, unsigned char *flags)
{
    if (!pl || !flags) { cs__gpu_err("cs_hines_gpu_plan_row_flags: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    CS__TRY(cs__need_fused(pl));
    cs__hines_hplan_row_flags(&pl->hp, flags);
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
    const char *env = getenv("CS_HINES_FINE_CLASS_STREAMS");
    const int n = env && !strcmp(env, "0") ? 1 : pl->fs_nclass;
    CS__TRY(cs__fork(pl, n, 1));
    const size_t rb = cs__fine_step_row_bytes(hp);
    for (int c = 0; c < pl->fs_nclass; ++c) {
        const int np = pl->fs_first[c + 1] - pl->fs_first[c];
        /* a class whose schedule would not fit beside its rows reads it from L2 */
        const size_t rows_bytes = (size_t)pl->fs_rows[c] * rb, sched = (size_t)pl->fs_sched[c];
        const int sh = pl->fine_step_sched == CS__SCHED_SHARED && rows_bytes + sched <= (size_t)pl->smem_optin;
        const size_t bytes = rows_bytes + (sh ? sched : 0);
        /* the pack's threads: with fewer than 8 blocks a multiprocessor, 256 so that ~32 warps hide
         * the level sweeps' latency (big2000 × 8 000, H100: 128 → 256 threads 1.80e10 → 1.95e10 cs/s;
         * 512 was slower, 1.35e10: registers; bench/NOTES.md, session 21) */
        const int th = hp->threads_auto && pl->fs_bpsm[c] < 8 ? 256 : hp->threads;
        const int *ord = pl->d_fs_order;
        const int f = pl->fs_first[c];
        cudaStream_t sm;
        CS__TRY(cs__launch_stream(pl, n, n > 1 ? c : 0, &sm));
        if (hp->fine_flags & CS_HINES_FINE_D_GLOBAL)
            cs__k_fine_step<true, false, false, CS__SCHED_GLOBAL><<<np, th, bytes, sm>>>(ord, f, CS__FINE_ARGS, 0, *st);
        else if (hp->fine_flags & CS_HINES_FINE_U_SHARED)
            cs__k_fine_step<true, true, true, CS__SCHED_GLOBAL><<<np, th, bytes, sm>>>(ord, f, CS__FINE_ARGS, 0, *st);
        else if (sh)
            cs__k_fine_step<true, false, true, CS__SCHED_SHARED><<<np, th, bytes, sm>>>(ord, f, CS__FINE_ARGS, (int)sched, *st);
        else if (pl->fine_step_sched != CS__SCHED_GLOBAL)
            cs__k_fine_step<true, false, true, CS__SCHED_L2><<<np, th, bytes, sm>>>(ord, f, CS__FINE_ARGS, 0, *st);
        else
            cs__k_fine_step<true, false, true, CS__SCHED_GLOBAL><<<np, th, bytes, sm>>>(ord, f, CS__FINE_ARGS, 0, *st);
        CS__CU(cudaGetLastError());
        if (n > 1) CS__TRY(cs__join(pl, n, sm));
    }
    return CS_SOLVER_OK;
}
#undef CS__FINE_ARGS

static cs_solver_status cs__step_launch(cs_hines_plan *pl, const cs_hines_step_d *st);

extern "C" cs_solver_status cs_hines_gpu_step_internal_d(cs_hines_plan *pl, const cs_hines_step_d *st)
{
    if (!pl || !st || !st->d0 || !st->cdt || !st->b0 || !st->u || !st->v || !st->i || !st->g || !st->flags ||
        !st->work_a || !st->work_b) {
        cs__gpu_err("cs_hines_gpu_step_internal_d: NULL argument");
        return CS_SOLVER_ERR_INVALID;
    }
    CS__TRY(cs__step_launch(pl, st));
    /* staged calls after_launch per launch; every other variant's step is one launch on the plan's stream */
    if (st->after_launch && pl->hp.variant != CS__HV_STAGED &&
        st->after_launch(st->after_ctx, 0, (long long)pl->hp.internal_size, (void *)pl->stream)) {
        cs__gpu_err("cs_hines_gpu_step_internal_d: after_launch failed");
        return CS_SOLVER_ERR_INVALID;
    }
    return CS_SOLVER_OK;
}

/* the step's launches (arguments checked) */
static cs_solver_status cs__step_launch(cs_hines_plan *pl, const cs_hines_step_d *st)
{
    const cs__hines_hplan *hp = &pl->hp;
    CS__TRY(cs__need_fused(pl));
    CS__CU(cudaSetDevice(pl->device));
    if (st->shared_constants && (!cs__hines_hplan_shares_constants(hp) || !st->a0)) {
        cs__gpu_err("cs_hines_gpu_step_internal_d: shared constants need a per-system variant, systems of one structure "
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
            cs__gpu_err("cs_hines_gpu_step_internal_d: staged needs its own constants per row and "
                        "cs_hines_gpu_plan_set_current before the first step");
            return CS_SOLVER_ERR_INVALID;
        }
        return cs__staged_launches<double>(pl, const_cast<double *>(st->d0), st->u, const_cast<double *>(st->b0), st);
    }
    int th = hp->threads, grid = (hp->nslot + th - 1) / th;
    const int *sb = pl->d_slot_base, *sn = pl->d_slot_n, *pp = pl->d_p_local;
    if (st->shared_constants)
        cs__k_step_cells<true, true, 8, 8><<<grid, th, 0, pl->stream>>>(hp->nslot, sb, sn, hp->stride, pp, *st);
    else if (hp->shared_p)
        cs__k_step_cells<true, false, 4, 8><<<grid, th, 0, pl->stream>>>(hp->nslot, sb, sn, hp->stride, pp, *st);
    else
        cs__k_step_cells<false, false, 4, 8><<<grid, th, 0, pl->stream>>>(hp->nslot, sb, sn, hp->stride, pp, *st);
    CS__CU(cudaGetLastError());
    return CS_SOLVER_OK;
}

template <class T>
static cs_solver_status cs__convert(cs_hines_plan *pl, int to_internal, cs_hines_array_kind kind, const T *src, T *dst)
{
    if (!pl || !src || !dst) { cs__gpu_err("cs_hines_gpu conversion: NULL argument"); return CS_SOLVER_ERR_INVALID; }
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

static cs_solver_status cs__is_device(const void *ptr, int *is_dev)
{
    cudaPointerAttributes a;
    cudaError_t e = cudaPointerGetAttributes(&a, ptr);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        *is_dev = 0; /* older runtimes: unregistered host memory is an error */
        return CS_SOLVER_OK;
    }
    *is_dev = (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged);
    return CS_SOLVER_OK;
}

static cs_solver_status cs__ensure(void **buf, size_t *have, size_t need)
{
    if (*have >= need) return CS_SOLVER_OK;
    if (*buf) { CS__CU(cudaFree(*buf)); *buf = NULL; *have = 0; }
    CS__CU(cudaMalloc(buf, need));
    CS__CU(cudaMemset(*buf, 0, need)); /* padding rows are never read, but keep them defined */
    *have = need;
    return CS_SOLVER_OK;
}

template <class T>
static cs_solver_status cs__solve_tree(cs_hines_plan *pl, T *d, const T *u, T *rhs)
{
    if (!pl || !d || !u || !rhs) { cs__gpu_err("cs_hines_gpu_solve: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    const cs__hines_hplan *hp = &pl->hp;
    CS__CU(cudaSetDevice(pl->device));
    int dd, du, dr;
    CS__TRY(cs__is_device(d, &dd));
    CS__TRY(cs__is_device(u, &du));
    CS__TRY(cs__is_device(rhs, &dr));
    if (dd != du || dd != dr) {
        cs__gpu_err("cs_hines_gpu_solve: d, u and rhs must all be host or all device pointers");
        return CS_SOLVER_ERR_INVALID;
    }
    const size_t nr = (size_t)hp->nrows, ni = (size_t)hp->internal_size;
    cudaStream_t st = pl->stream;
    pl->chk_ur_src = NULL; /* u is converted anew into the plan's buffer: chunked copies it again */
    if (hp->variant == CS__HV_FLAT) { /* the internal layout is tree order */
        if (dd) {
            CS__TRY(cs__solve_internal(pl, d, u, rhs));
        } else {
            CS__TRY(cs__ensure(&pl->buf_int, &pl->buf_int_bytes, 3 * ni * sizeof(double)));
            T *id = (T *)pl->buf_int, *iu = id + ni, *ir = iu + ni;
            CS__CU(cudaMemcpyAsync(id, d, nr * sizeof(T), cudaMemcpyHostToDevice, st));
            CS__CU(cudaMemcpyAsync(iu, u, nr * sizeof(T), cudaMemcpyHostToDevice, st));
            CS__CU(cudaMemcpyAsync(ir, rhs, nr * sizeof(T), cudaMemcpyHostToDevice, st));
            CS__TRY(cs__solve_internal(pl, id, (const T *)iu, ir));
            CS__CU(cudaMemcpyAsync(rhs, ir, nr * sizeof(T), cudaMemcpyDeviceToHost, st));
        }
        CS__CU(cudaStreamSynchronize(st));
        return CS_SOLVER_OK;
    }
    T *td = d, *tr = rhs;
    const T *tu = u;
    if (!dd) {
        CS__TRY(cs__ensure(&pl->buf_tree, &pl->buf_tree_bytes, 3 * nr * sizeof(double)));
        T *bd = (T *)pl->buf_tree, *bu = bd + nr, *br = bu + nr;
        CS__CU(cudaMemcpyAsync(bd, d, nr * sizeof(T), cudaMemcpyHostToDevice, st));
        CS__CU(cudaMemcpyAsync(bu, u, nr * sizeof(T), cudaMemcpyHostToDevice, st));
        CS__CU(cudaMemcpyAsync(br, rhs, nr * sizeof(T), cudaMemcpyHostToDevice, st));
        td = bd; tu = bu; tr = br;
    }
    CS__TRY(cs__ensure(&pl->buf_int, &pl->buf_int_bytes, 3 * ni * sizeof(double)));
    T *id = (T *)pl->buf_int, *iu = id + ni, *ir = iu + ni;
    CS__TRY(cs__convert<T>(pl, 1, CS_HINES_NODE, td, id));
    CS__TRY(cs__convert<T>(pl, 1, CS_HINES_COUPLING, tu, iu));
    CS__TRY(cs__convert<T>(pl, 1, CS_HINES_NODE, tr, ir));
    CS__TRY(cs__solve_internal(pl, id, (const T *)iu, ir));
    CS__TRY(cs__convert<T>(pl, 0, CS_HINES_NODE, ir, tr));
    if (!dd) CS__CU(cudaMemcpyAsync(rhs, tr, nr * sizeof(T), cudaMemcpyDeviceToHost, st));
    CS__CU(cudaStreamSynchronize(st));
    return CS_SOLVER_OK;
}

extern "C" cs_solver_status cs_hines_gpu_solve_d(cs_hines_plan *pl, double *d, const double *u, double *rhs)
{ return cs__solve_tree<double>(pl, d, u, rhs); }
extern "C" cs_solver_status cs_hines_gpu_solve_f(cs_hines_plan *pl, float *d, const float *u, float *rhs)
{ return cs__solve_tree<float>(pl, d, u, rhs); }
extern "C" cs_solver_status cs_hines_gpu_solve_internal_d(cs_hines_plan *pl, double *d, const double *u, double *rhs)
{ return cs__solve_internal<double>(pl, d, u, rhs); }
extern "C" cs_solver_status cs_hines_gpu_solve_internal_f(cs_hines_plan *pl, float *d, const float *u, float *rhs)
{ return cs__solve_internal<float>(pl, d, u, rhs); }
extern "C" cs_solver_status cs_hines_gpu_to_internal_d(cs_hines_plan *pl, cs_hines_array_kind k, const double *t, double *i)
{ return cs__convert<double>(pl, 1, k, t, i); }
extern "C" cs_solver_status cs_hines_gpu_to_internal_f(cs_hines_plan *pl, cs_hines_array_kind k, const float *t, float *i)
{ return cs__convert<float>(pl, 1, k, t, i); }
extern "C" cs_solver_status cs_hines_gpu_from_internal_d(cs_hines_plan *pl, cs_hines_array_kind k, const double *i, double *t)
{ return cs__convert<double>(pl, 0, k, i, t); }
extern "C" cs_solver_status cs_hines_gpu_from_internal_f(cs_hines_plan *pl, cs_hines_array_kind k, const float *i, float *t)
{ return cs__convert<float>(pl, 0, k, i, t); }

extern "C" cs_solver_status cs_hines_gpu_malloc(void **ptr, size_t bytes)
{
    if (!ptr) { cs__gpu_err("cs_hines_gpu_malloc: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    *ptr = NULL;
    CS__CU(cudaMalloc(ptr, bytes ? bytes : 1));
    return CS_SOLVER_OK;
}
extern "C" void cs_hines_gpu_free(void *ptr)
{
    if (ptr) cudaFree(ptr);
}
extern "C" cs_solver_status cs_hines_gpu_memcpy(void *dst, const void *src, size_t bytes)
{
    if ((!dst || !src) && bytes) { cs__gpu_err("cs_hines_gpu_memcpy: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    CS__CU(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
    return CS_SOLVER_OK;
}
