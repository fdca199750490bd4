/* GPU Hines (tree) batch solvers: the device plan and the public API of cs_hines_gpu.h. Host
 * planning (layouts, schedules, packing) is plain C in cs_hines_plan.c; this file uploads the plan
 * once, holds its queries and the tree-order entry points; the kernels' attributes and launches are
 * in cs_hines_gpu_launch.cu (the plan between them: cs_hines_gpu_plan.cuh). */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_hines_gpu_impl.h"
#include "cs_hines_gpu_plan.cuh"

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

extern "C" void cs_hines_gpu_plan_destroy(cs_hines_plan *pl)
{
    if (!pl) return;
    void *ptrs[] = {pl->d_offset, pl->d_cell_base, pl->d_cell_map, pl->d_lmap, pl->d_lusrc, pl->d_lorder,
                    pl->d_slot_base, pl->d_slot_n, pl->d_p_local, pl->d_group_base, pl->d_group_rows,
                    pl->d_pack_base, pl->d_pack_type, pl->d_level_start, pl->d_children, pl->d_block_first,
                    pl->d_type_info, pl->d_tasks, pl->d_group_type, pl->d_group_cbase, pl->d_stg_next, pl->d_stg_rec, pl->d_stype, pl->d_sched,
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
    free(pl->stg_rec_off);
    free(pl);
}

static cs_solver_status cs__plan_finish(cs_hines_plan *pl);

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
    /* with u staged in shared memory (packs of several small distinct cells), the schedule too:
     * their levels are short, each waited on its tasks' and children's loads (distinct busyring
     * trees × 262 144, H100: global 0.689 s, L2 0.662, shared 0.580; bench/NOTES.md, session 28) */
    pl->fine_step_sched = set >= 0 ? set : (hp->fine_flags & CS_HINES_FINE_U_SHARED) ? CS__SCHED_SHARED : CS__SCHED_L2;
    pl->fine_solve_sched = set >= 0 ? set : CS__SCHED_SHARED;
    const char *streams = getenv("CS_HINES_FINE_CLASS_STREAMS"); /* read once: not at every step */
    pl->fine_class_streams = !(streams && !strcmp(streams, "0"));
    pl->fine_sched_max = 0;
    for (int t = 0; t < hp->ntype; ++t) {
        const int b = cs__hines_type_sched_bytes(hp, t);
        pl->fine_sched_max = b > pl->fine_sched_max ? b : pl->fine_sched_max;
    }
}

/* the schedule bytes a pack of type t stages in the fused step (0 unless it stages it: the kernels
 * with D in shared memory do, not CS_HINES_FINE_D_GLOBAL's) */
static size_t cs__fine_pack_sched(const cs_hines_plan *pl, int t)
{
    const int d_global = pl->hp.fine_flags & CS_HINES_FINE_D_GLOBAL;
    return pl->fine_step_sched == CS__SCHED_SHARED && !d_global ? (size_t)cs__hines_type_sched_bytes(&pl->hp, t) : 0;
}

/* fine's fused step: its packs grouped by the blocks a multiprocessor their shared memory allows
 * (one launch per group, sized for its largest pack), so that a pack of 2 000 rows does not take
 * the shared memory of the batch's largest (3 225 rows in big2000 × 8 000: 4 blocks a
 * multiprocessor for all). CS_HINES_FINE_ONE_LAUNCH: one class. */
static cs_solver_status cs__fine_step_classes(cs_hines_plan *pl)
{
    const cs__hines_hplan *hp = &pl->hp;
    const size_t rb = cs__fine_step_row_bytes(hp), per_block = 1024; /* the runtime's reserve a block */
    int *cls = (int *)malloc(sizeof(int) * (size_t)(hp->npack > 0 ? hp->npack : 1));
    int *order = (int *)malloc(sizeof(int) * (size_t)(hp->npack > 0 ? hp->npack : 1));
    if (!cls || !order) { free(cls); free(order); cs__hgpu_err("cs_hines_gpu_plan_create: out of memory"); return CS_SOLVER_ERR_NOMEM; }
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
            if (hp->fine_fuses && pl->fs_nclass > 1) { /* the fused step's launches, side by side unless CS_HINES_FINE_CLASS_STREAMS=0 */
                const size_t at = strlen(pl->hp.describe);
                snprintf(pl->hp.describe + at, sizeof pl->hp.describe - at, " step-classes=%d", pl->fs_nclass);
            }
        }
    } else if (hp->variant == CS__HV_CHUNKED) {
        CS__TRY(cs__upload(&pl->d_chk_chunk, (const int4 *)hp->chk_chunk, (size_t)hp->chk_nchunk));
        CS__TRY(cs__upload(&pl->d_chk_group, (const int2 *)hp->chk_group, (size_t)hp->chk_ngroup));
        if (hp->chk_nchunk > 0) CS__CU(cudaMalloc(&pl->chk_ur, sizeof(double) * (size_t)(hp->chk_nr > 0 ? hp->chk_nr : 1)));
        cs_hines_plan *sub = (cs_hines_plan *)calloc(1, sizeof *sub);
        if (!sub) { cs__hgpu_err("cs_hines_gpu_plan_create: out of memory"); return CS_SOLVER_ERR_NOMEM; }
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
    cs__hgpu_err_clear();
    if (!out) { cs__hgpu_err("cs_hines_gpu_plan_create: out is NULL"); return CS_SOLVER_ERR_INVALID; }
    *out = NULL;
    cs_hines_gpu_options opt;
    if (opt_in) opt = *opt_in; else cs_hines_gpu_options_default(&opt);
    int variant = cs__hines_variant_lookup(opt.variant);
    if (variant < 0) {
        cs__hgpu_err("cs_hines_gpu_plan_create: unknown variant \"%s\" (flat, interleaved, block_interleaved, "
                    "block_shared, variable, fine, warp, staged, chunked, auto)", opt.variant);
        return CS_SOLVER_ERR_INVALID;
    }
    if (cs_hines_gpu_device_count() <= opt.device) {
        cs__hgpu_err("cs_hines_gpu_plan_create: no CUDA device %d", opt.device);
        return CS_SOLVER_ERR_UNAVAILABLE;
    }
    CS__CU(cudaSetDevice(opt.device));
    cudaDeviceProp prop;
    CS__CU(cudaGetDeviceProperties(&prop, opt.device));
    cs_hines_plan *pl = (cs_hines_plan *)calloc(1, sizeof *pl);
    if (!pl) { cs__hgpu_err("cs_hines_gpu_plan_create: out of memory"); return CS_SOLVER_ERR_NOMEM; }
    pl->device = opt.device;
    pl->const_u = opt.const_coupling != 0;
    pl->pdl = opt.dependent_launch != 0 && prop.major >= 9;
    pl->smem_optin = (int)prop.sharedMemPerBlockOptin;
    pl->smem_sm = (int)prop.sharedMemPerMultiprocessor;
    pl->nsm = prop.multiProcessorCount;
    char msg[256];
    cs_solver_status st = cs__hines_hplan_build(nsys, offset, p, variant, &opt, prop.multiProcessorCount, &pl->hp, msg, sizeof msg);
    if (st != CS_SOLVER_OK) {
        cs__hgpu_err("cs_hines_gpu_plan_create: %s", msg);
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
    return cs__plan_kernel_attrs(pl);
}

/* the kernel attributes again (staged's blocks per multiprocessor recomputed), a chunked plan's
 * sub plan's too */
static cs_solver_status cs__plan_attrs(cs_hines_plan *pl)
{
    free(pl->stg_blocks);
    pl->stg_blocks = NULL;
    CS__TRY(cs__plan_kernel_attrs(pl));
    return pl->sub ? cs__plan_attrs(pl->sub) : CS_SOLVER_OK;
}

extern "C" cs_solver_status cs_hines_gpu_plan_prepare(cs_hines_plan *pl)
{
    if (!pl) { cs__hgpu_err("cs_hines_gpu_plan_prepare: NULL plan"); return CS_SOLVER_ERR_INVALID; }
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
    if (!pl || !internal_of_row) { cs__hgpu_err("cs_hines_gpu_plan_row_map: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    const cs__hines_hplan *hp = &pl->hp;
    for (int s = 0; s < hp->nsys; ++s) {
        int o = hp->offset[s], n = hp->offset[s + 1] - o;
        for (int i = 0; i < n; ++i) internal_of_row[o + i] = (int)cs__hines_hplan_internal_index(hp, s, i);
    }
    return CS_SOLVER_OK;
}

extern "C" cs_solver_status cs_hines_gpu_set_stream(cs_hines_plan *pl, void *stream)
{
    if (!pl) { cs__hgpu_err("cs_hines_gpu_set_stream: NULL plan"); return CS_SOLVER_ERR_INVALID; }
    for (cs_hines_plan *q = pl; q; q = q->sub) q->stream = (cudaStream_t)stream;
    return CS_SOLVER_OK;
}

extern "C" cs_solver_status cs_hines_gpu_sync(cs_hines_plan *pl)
{
    if (!pl) { cs__hgpu_err("cs_hines_gpu_sync: NULL plan"); return CS_SOLVER_ERR_INVALID; }
    CS__CU(cudaStreamSynchronize(pl->stream));
    return CS_SOLVER_OK;
}

extern "C" cs_solver_status cs_hines_gpu_plan_set_current(cs_hines_plan *pl, const unsigned char *flags)
{
    if (!pl || !flags) { cs__hgpu_err("cs_hines_gpu_plan_set_current: NULL argument"); return CS_SOLVER_ERR_INVALID; }
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
        cs__hgpu_err("cs_hines_gpu_plan_share_constants: NULL argument");
        return CS_SOLVER_ERR_INVALID;
    }
    const long long n = cs__staged_share_constants(&pl->hp, tree, first_array);
    if (n < 0) { cs__hgpu_err("out of memory"); return CS_SOLVER_ERR_NOMEM; }
    CS__CU(cudaSetDevice(pl->device));
    if (pl->d_group_cbase) CS__CU(cudaFree(pl->d_group_cbase));
    pl->d_group_cbase = NULL;
    if (pl->hp.group_cbase) CS__TRY(cs__upload(&pl->d_group_cbase, pl->hp.group_cbase, (size_t)pl->hp.ngroup));
    if (pl->hp.variant == CS__HV_STAGED && pl->hp.stg_fused) CS__TRY(cs__staged_attrs(pl)); /* launches with constants once per slot */
    if (groups_shared) *groups_shared = n;
    return CS_SOLVER_OK;
}

extern "C" int cs_hines_gpu_plan_uniform(const cs_hines_plan *pl) { return pl && pl->hp.uniform; }

extern "C" int cs_hines_gpu_plan_slot_constants(const cs_hines_plan *pl, int *warps_per_sm)
{
    int n = 0, w = 0;
    for (int l = 0; pl && pl->hp.variant == CS__HV_STAGED && pl->hp.stg_fused && l < pl->hp.stg_nlaunch; ++l)
        if (pl->hp.stg_launch[CS__SL_N * l + CS__SL_UC]) {
            ++n;
            if (pl->stg_blocks && pl->stg_blocks[2 * l] > w) w = pl->stg_blocks[2 * l];
        }
    if (warps_per_sm) *warps_per_sm = w;
    return n;
}

extern "C" int cs_hines_gpu_plan_fuses(const cs_hines_plan *pl) { return pl && cs__hines_hplan_fuses(&pl->hp); }
extern "C" int cs_hines_gpu_plan_step_launches(const cs_hines_plan *pl)
{
    return !pl ? 0 : pl->hp.variant == CS__HV_STAGED && pl->hp.stg_nlaunch > 1 ? pl->hp.stg_nlaunch : 1;
}

extern "C" int cs_hines_gpu_plan_shares_constants(const cs_hines_plan *pl) { return pl && cs__hines_hplan_shares_constants(&pl->hp); }

extern "C" cs_solver_status cs_hines_gpu_plan_row_flags(const cs_hines_plan *pl, unsigned char *flags)
{
    if (!pl || !flags) { cs__hgpu_err("cs_hines_gpu_plan_row_flags: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    CS__TRY(cs__need_fused(pl));
    cs__hines_hplan_row_flags(&pl->hp, flags);
    return CS_SOLVER_OK;
}

extern "C" cs_solver_status cs_hines_gpu_step_internal_d(cs_hines_plan *pl, const cs_hines_step_d *st)
{
    if (!pl || !st || !st->d0 || !st->cdt || !st->b0 || !st->u || !st->v || !st->i || !st->g || !st->flags ||
        !st->work_a || !st->work_b) {
        cs__hgpu_err("cs_hines_gpu_step_internal_d: NULL argument");
        return CS_SOLVER_ERR_INVALID;
    }
    CS__TRY(cs__step_launch(pl, st));
    /* staged calls after_launch per launch; every other variant's step is one launch on the plan's stream */
    if (st->after_launch && pl->hp.variant != CS__HV_STAGED &&
        st->after_launch(st->after_ctx, 0, (long long)pl->hp.internal_size, (void *)pl->stream)) {
        cs__hgpu_err("cs_hines_gpu_step_internal_d: after_launch failed");
        return CS_SOLVER_ERR_INVALID;
    }
    return CS_SOLVER_OK;
}

/* the step's launches (arguments checked) */
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
    if (!pl || !d || !u || !rhs) { cs__hgpu_err("cs_hines_gpu_solve: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    const cs__hines_hplan *hp = &pl->hp;
    CS__CU(cudaSetDevice(pl->device));
    int dd, du, dr;
    CS__TRY(cs__is_device(d, &dd));
    CS__TRY(cs__is_device(u, &du));
    CS__TRY(cs__is_device(rhs, &dr));
    if (dd != du || dd != dr) {
        cs__hgpu_err("cs_hines_gpu_solve: d, u and rhs must all be host or all device pointers");
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
    if (!ptr) { cs__hgpu_err("cs_hines_gpu_malloc: NULL argument"); return CS_SOLVER_ERR_INVALID; }
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
    if ((!dst || !src) && bytes) { cs__hgpu_err("cs_hines_gpu_memcpy: NULL argument"); return CS_SOLVER_ERR_INVALID; }
    CS__CU(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
    return CS_SOLVER_OK;
}
