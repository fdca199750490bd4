/* Private to the GPU Thomas solvers (CUDA translation units only): the error recorder that
 * cs_thomas_gpu_last_error() reports, shared by cs_thomas_gpu.cu and the large-system solvers,
 * and the launchers cs_thomas_gpu.cu dispatches to. */
#ifndef CS_THOMAS_GPU_IMPL_CUH
#define CS_THOMAS_GPU_IMPL_CUH

#include <cuda_runtime.h>
#include <stdio.h>

#include "cs_thomas_gpu.h"

/* Record "file:line: what[: detail]" as this thread's last error; returns st
 * (cs_thomas_gpu_error.cu). */
cs_solver_status cs__thomas_gpu_fail(cs_solver_status st, const char *file, int line,
                                     const char *what, const char *detail);
/* A failed CUDA call: NOMEM for an allocation failure, else DEVICE, with the CUDA message. */
cs_solver_status cs__thomas_cuda_fail(cudaError_t e, const char *file, int line, const char *expr);

#define CS__TG_CUDA(expr)                                                                   \
    do {                                                                                    \
        cudaError_t cs__e = (expr);                                                         \
        if (cs__e != cudaSuccess) return cs__thomas_cuda_fail(cs__e, __FILE__, __LINE__, #expr); \
    } while (0)
#define CS__TG_INVALID(...)                                                                 \
    do {                                                                                    \
        char cs__b[256];                                                                    \
        snprintf(cs__b, sizeof cs__b, __VA_ARGS__);                                         \
        return cs__thomas_gpu_fail(CS_SOLVER_ERR_INVALID, __FILE__, __LINE__, cs__b, NULL); \
    } while (0)

/* The library's own workspace for the variant calls (cs_thomas_gpu_workspace.cu): lock it, grown
 * to at least `need` bytes (on failure it is left unlocked), use it on the default stream (which
 * orders the calls), unlock. */
cs_solver_status cs__thomas_ws_lock(size_t need, void **ws);
void cs__thomas_ws_unlock(void);

/* The per-thread chunk kernels on a row range, for the bridge (cs_thomas_large_gpu.cu; T = double
 * or float;
 * the chunked variant itself has warp-wide chunks: cs_thomas_large_warp_gpu.cu).
 * A level of m rows (systems of n rows: couplings across multiples of n are zero) is reduced to
 * 2·ceil(m/K) rows; rows [r0, r1) of it (r0 a multiple of K) go to rows [2·r0/K, 2·ceil(r1/K))
 * of the reduced level; the substitution writes rows [r0, r1) of d from the reduced solution x.
 * n = 0: no system boundaries at all, not even at rows 0 and m-1 (a[0] and c[m-1] are the
 * couplings to the neighbouring pieces of a system split over devices). */
#define CS__CHUNK_K 16      /* rows per chunk */
#define CS__CHUNK_BASE 1024 /* the bridge's largest level solved in one block */
template <typename T>
cs_solver_status cs__chunk_reduce_launch(size_t r0, size_t r1, size_t m, size_t n, const T *a,
                                         const T *b, const T *c, const T *d, T *ra, T *rb, T *rc,
                                         T *rd, cudaStream_t stream);
template <typename T>
cs_solver_status cs__chunk_subst_launch(size_t r0, size_t r1, size_t m, size_t n, const T *a,
                                        const T *b, const T *c, T *d, const T *x,
                                        cudaStream_t stream);

/* chunked through the variant calls: the library's own workspace, default stream
 * (cs_thomas_large_gpu.cu). Arguments already checked. */
cs_solver_status cs__thomas_chunked_owned(int nsys, int n, const double *a, const double *b,
                                          const double *c, double *d);
cs_solver_status cs__thomas_chunked_owned(int nsys, int n, const float *a, const float *b,
                                          const float *c, float *d);
/* scan through the variant calls (cs_thomas_scan_gpu.cu). */
cs_solver_status cs__thomas_scan_owned(int nsys, int n, const double *a, const double *b,
                                       const double *c, double *d);
cs_solver_status cs__thomas_scan_owned(int nsys, int n, const float *a, const float *b,
                                       const float *c, float *d);

#endif
