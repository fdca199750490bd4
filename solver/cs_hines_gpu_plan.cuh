/* The device plan of the GPU Hines solvers (cs_hines_gpu.h), shared by its two translation units:
 * cs_hines_gpu.cu (the plan's life: upload, queries, the tree-order entry points), which calls
 * cs_hines_gpu_launch.cu (kernel attributes and launches: everything that names a kernel of
 * cs_hines_gpu_kernels.cuh, so that a kernel's attributes are set on the instance that is
 * launched), and the error record of cs_hines_gpu_error.cu. Internal to the solver library. */
#ifndef CS_HINES_GPU_PLAN_CUH
#define CS_HINES_GPU_PLAN_CUH

#include <cuda_runtime.h>

#include <stddef.h>

#include "cs_hines_gpu_impl.h"

enum { CS__FINE_CLASSES = 8 }; /* fine's fused step: launches by blocks a multiprocessor, 1 .. 8+ */

/* ---- errors ------------------------------------------------------------------------------- */
/* the library's last message (cs_hines_gpu_last_error), printf-style; cleared (cs_hines_gpu_error.cu) */
void cs__hgpu_err(const char *fmt, ...);
void cs__hgpu_err_clear(void);

#define CS__CU(call)                                                                          \
    do {                                                                                      \
        cudaError_t cs__e = (call);                                                           \
        if (cs__e != cudaSuccess) {                                                           \
            cs__hgpu_err("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call,                      \
                        cudaGetErrorString(cs__e), cudaGetErrorName(cs__e));                  \
            return CS_SOLVER_ERR_DEVICE;                                                      \
        }                                                                                     \
    } while (0)

#define CS__TRY(expr)                                 \
    do {                                              \
        cs_solver_status cs__s = (expr);              \
        if (cs__s != CS_SOLVER_OK) return cs__s;      \
    } while (0)

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
    int pdl;                /* the fused step's launches on the plan's stream: programmatic (opt.dependent_launch) */
    int fine_class_streams; /* fine's fused step: its classes' launches side by side (CS_HINES_FINE_CLASS_STREAMS=0: not) */
    int *d_stg_next;        /* staged: two counters per launch (cs__staged_dev.next) */
    int stg_current;        /* staged, fused step: the rows with current are marked (set_current) */
    int2 *d_stype;
    int4 *d_sched;
    int nsm;                /* multiprocessors of the device */
    int *stg_blocks;        /* staged: blocks per multiprocessor of each launch, double and float */
    void *d_stg_rec;        /* staged: the records of launches with CS__SL_GR (cs__staged_records) */
    size_t stg_rec_bytes, *stg_rec_off; /* its size, each launch's offset in it */
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
static inline cs_solver_status cs__upload(T **dst, const T *src, size_t n)
{
    *dst = NULL;
    if (!src || n == 0) return CS_SOLVER_OK;
    CS__CU(cudaMalloc((void **)dst, n * sizeof(T)));
    CS__CU(cudaMemcpy(*dst, src, n * sizeof(T), cudaMemcpyHostToDevice));
    return CS_SOLVER_OK;
}

static inline bool cs__fine_smem(const cs_hines_plan *pl, size_t elem)
{
    return !(pl->hp.fine_flags & CS_HINES_FINE_GLOBAL) &&
           (size_t)pl->hp.max_pack_rows * 3 * elem <= (size_t)pl->smem_optin;
}

/* shared memory a row of fine's fused step takes: D, R, and U unless read through L1 */
static inline size_t cs__fine_step_row_bytes(const cs__hines_hplan *hp)
{
    return sizeof(double) * ((hp->fine_flags & CS_HINES_FINE_D_GLOBAL) ? 1 : (hp->fine_flags & CS_HINES_FINE_U_SHARED) ? 3 : 2);
}

/* ---- between the two files ------------------------------------------------------------------- */
/* cs_hines_gpu_launch.cu: the kernel attributes of the plan (both precisions; staged's blocks per
 * multiprocessor), its solve in the internal layout, its fused step, the conversions */
cs_solver_status cs__plan_kernel_attrs(cs_hines_plan *pl);
/* staged's kernel attributes and blocks per multiprocessor (cs_hines_gpu_launch.cu) */
cs_solver_status cs__staged_attrs(cs_hines_plan *pl);
template <class T>
cs_solver_status cs__solve_internal(cs_hines_plan *pl, T *d, const T *u, T *rhs);
cs_solver_status cs__step_launch(cs_hines_plan *pl, const cs_hines_step_d *st);
template <class T>
cs_solver_status cs__convert(cs_hines_plan *pl, int to_internal, cs_hines_array_kind kind, const T *src, T *dst);
/* CS_SOLVER_OK when the plan's variant runs the fused step, else a message */
cs_solver_status cs__need_fused(const cs_hines_plan *pl);

#endif
