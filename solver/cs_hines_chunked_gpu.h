/* Private to the GPU Hines solvers: the "chunked" variant's chunk kernels
 * (solver/cs_hines_chunked_gpu.cu), launched by cs_hines_gpu_launch.cu around the reduced tree's solve.
 * CUDA types; include from .cu files only. The plan and its host emulation:
 * cs_hines_chunked_plan.c. */
#ifndef CS_HINES_CHUNKED_GPU_H
#define CS_HINES_CHUNKED_GPU_H

#include <cuda_runtime.h>

#include "cs_hines_gpu.h"

/* The plan's chunks on the device (cs__hines_hplan's chk_ fields, uploaded). */
struct cs__chunked_dev {
    int nchunk, L;          /* chunks; L: most interior rows of one chunk */
    const int4 *chunk;      /* {internal a, internal b, the edge (a, b)'s u slot, m} */
    const int2 *group;      /* {internal index of the group's row 0, its rows M} */
};
/* P1: eliminate every chunk's interior (read only) into d, rhs of its a and b (in place) and the
 * coupling u'_ab into ur (a copy of u's reduced part, made by the caller). */
template <class T>
cudaError_t cs__chunked_launch_p1(const cs__chunked_dev &cd, T *d, const T *u, T *rhs, T *ur, cudaStream_t stream);
/* P3: every chunk's interior solution from x_a, x_b (in rhs) and the original interior d, u, rhs. */
template <class T>
cudaError_t cs__chunked_launch_p3(const cs__chunked_dev &cd, const T *d, const T *u, T *rhs, cudaStream_t stream);

/* The fused step (cs_hines_gpu_step_internal_d), double. The reduced rows [0, nr) are assembled
 * first: d into st.work_a, rhs into st.v itself (i and g read and zeroed at flagged rows), u into
 * ur when copy_u; P1 then assembles each interior from the state (d0, cdt, b0, v, and i, g at
 * flagged rows) and eliminates it into work_a, v of its ends; the reduced tree is solved on
 * (work_a, ur, v); P3 assembles the interior again (zeroing i and g at its flagged rows) and
 * writes its solution into v. work_b is not used. */
cudaError_t cs__chunked_launch_reduced_in(int nr, const cs_hines_step_d &st, double *ur, int copy_u, cudaStream_t stream);
cudaError_t cs__chunked_launch_p1_step(const cs__chunked_dev &cd, const cs_hines_step_d &st, double *ur, cudaStream_t stream);
cudaError_t cs__chunked_launch_p3_step(const cs__chunked_dev &cd, const cs_hines_step_d &st, cudaStream_t stream);

#endif
