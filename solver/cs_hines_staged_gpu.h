/* Private to the GPU Hines solvers: the "staged" kernel's launcher (solver/cs_hines_staged_gpu.cu),
 * called by cs_hines_gpu.cu. CUDA types; include from .cu files only. */
#ifndef CS_HINES_STAGED_GPU_H
#define CS_HINES_STAGED_GPU_H

#include <cuda_runtime.h>

/* The plan's device arrays and shape (cs__hines_hplan's staged fields, uploaded). */
struct cs__staged_dev {
    int ngroup, rows, max_steps, nsm, reg_steps, cells; /* rows: shared rows (plus a scratch row) */
    const int *group_base, *group_type;
    const int2 *stype;  /* per type: first slot, steps */
    const int4 *sched;  /* per step 32 / cells int2 slots {row, flags | shared rows} */
};

/* Opt the kernel for groups of `cells` cells with reg_steps register steps into the shared memory
 * a warp needs for `rows` shared rows and schedules of at most max_steps steps (both precisions). */
cudaError_t cs__staged_set_attrs(int cells, int reg_steps, int rows, int max_steps);
/* One solve on `stream`: a persistent grid of one-warp blocks, as many as fit the device. */
template <class T>
cudaError_t cs__staged_launch(const cs__staged_dev &sd, T *d, const T *u, T *rhs, cudaStream_t stream);

#endif
