/* Private to the GPU Hines solvers: the "staged" kernel's launcher (solver/cs_hines_staged_gpu.cu),
 * called by cs_hines_gpu_launch.cu. CUDA types; include from .cu files only. */
#ifndef CS_HINES_STAGED_GPU_H
#define CS_HINES_STAGED_GPU_H

#include <cuda_runtime.h>

#include "cs_hines_gpu.h"

/* One launch of a plan: its device arrays (cs__hines_hplan's staged fields, uploaded, from the
 * launch's first group) and shape. */
struct cs__staged_dev {
    int ngroup, rows, max_steps, nsm, reg_steps, cells; /* rows: shared rows (plus a scratch row) */
    int two_way;        /* two-way sections (cs_hines_gpu_impl.h, CS__STG_TOP) */
    int blocks_per_sm;  /* one-warp blocks that fit a multiprocessor (cs__staged_prepare) */
    int fused;          /* the plan is for the fused step (its ring holds CS__STG_FUSED_ARRAYS arrays) */
    int uc;             /* the fused step's constants once per slot (CS__SL_UC) */
    const int *group_base, *group_type;
    const int *group_cbase; /* the fused step's constants (d0, u, b0, cdt) of group g at group_cbase[g]
                             * (cs__staged_share_constants; group_base when each group reads its own) */
    const int2 *stype;  /* per type: first slot, steps */
    const int4 *sched;  /* per step 32 / cells int2 slots {row, flags | shared rows} */
    int *next;          /* [2]: groups handed out after the first gridDim.x, warps done (zero
                         * between launches: the last warp resets both) */
    int gr;             /* the eliminated rows' records in device memory (CS__SL_GR) */
    void *rec;          /* GR: per block max_steps · 32 records (a, b) of T, blocks of the largest grid */
};
/* The fused step's arrays beside d0 (as d), u and b0 (as rhs); v == NULL: a plain solve. i and g
 * are read and zeroed only at rows with current. */
template <class T>
struct cs__stg_fused {
    const T *cdt;
    T *v, *i, *g;
    int keep; /* cs_hines_step_d.keep_currents: i and g are not zeroed */
};
template <class T>
using cs__staged_kernel_t = void (*)(cs__staged_dev, T *, const T *, T *, cs__stg_fused<T>);

/* At plan creation, for both precisions: opt the launch's kernel into the shared memory of
 * attr_rows shared rows and attr_steps steps (the most of the launches that share the kernel), and
 * the blocks per multiprocessor of this launch ([0] double, [1] float). */
cudaError_t cs__staged_prepare(const cs__staged_dev &sd, int attr_rows, int attr_steps, int blocks_per_sm[2]);
/* One solve on `stream`: a persistent grid of one-warp blocks, as many as fit the device. */
template <class T>
cudaError_t cs__staged_launch(const cs__staged_dev &sd, T *d, const T *u, T *rhs, cudaStream_t stream);
/* One fused step (cs_hines_gpu_step_internal_d: assembly, solve, x into st.v) of a plan built
 * for it (sd.fused), double only; st.flags is not read: the rows with current are marked in the
 * schedule (CS__STG_CURRENT, cs_hines_gpu_plan_mark_current). */
/* pdl: a programmatic dependent launch (cs_gpu_pdl.cuh) */
cudaError_t cs__staged_launch_step(const cs__staged_dev &sd, const cs_hines_step_d &st, cudaStream_t stream, bool pdl);

#endif
