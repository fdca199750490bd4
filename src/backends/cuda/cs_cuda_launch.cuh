// The step kernels' launch helpers (cs_cuda_kernels.cu, cs_cuda_builtin_step.cu): a failed CUDA
// call as the backend's error, the launch geometry, and the programmatic launch on the main stream.
// Include after cs_cuda.h.
#ifndef CS_CUDA_LAUNCH_CUH
#define CS_CUDA_LAUNCH_CUH

#include <cuda_runtime.h>

#include "cs_gpu_pdl.cuh"

#define CS_THREADS 256

static inline cs_status cuda_fail(cudaError_t e, const char *what) {
    return cs_error_set(e == cudaErrorMemoryAllocation ? CS_ERR_NOMEM : CS_ERR_DEVICE,
                        "GPU: %s: %s", what, cudaGetErrorString(e));
}
#define CS_CUDA_CALL(expr, what)                      \
    do {                                              \
        cudaError_t cs__e = (expr);                   \
        if (cs__e != cudaSuccess) return cuda_fail(cs__e, what); \
    } while (0)
#define CS_LAUNCHED(what) CS_CUDA_CALL(cudaGetLastError(), what)

static inline unsigned blocks_for(long n) { return (unsigned)((n + CS_THREADS - 1) / CS_THREADS); }
static inline cudaStream_t stream_of(const cs_cuda_state *s) { return (cudaStream_t)s->stream; }
/* A step kernel's launch: programmatic on the main stream (cs_cuda_state.pdl); every kernel so
 * launched calls cs_pdl_enter() first (cs_gpu_pdl.cuh) */
static inline bool pdl_of(const cs_cuda_state *s) { return s->pdl && s->stream == s->pdl_stream; }
#define CS_STEP_LAUNCH(s, what, kernel, grid, block, ...) \
    CS_CUDA_CALL(cs_pdl_launch(pdl_of(s), kernel, dim3(grid), dim3(block), 0, stream_of(s), __VA_ARGS__), what)

#endif
