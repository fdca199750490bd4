/* The GPU Thomas solvers' own workspace, for the variant calls (cs_thomas_gpu_solve_*) of the
 * variants that need scratch memory (chunked, scan): one device buffer, grown on demand, used
 * under a mutex on the default stream, so calls from several host threads are ordered.
 * cs_thomas_gpu_release_workspace frees it. */
#include <cuda_runtime.h>

#include <mutex>

#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

static std::mutex cs__ws_mutex;
static void *cs__ws = NULL;
static size_t cs__ws_bytes = 0;

cs_solver_status cs__thomas_ws_lock(size_t need, void **ws)
{
    cs__ws_mutex.lock();
    if (need > cs__ws_bytes) {
        cudaError_t e = cudaSuccess;
        if (cs__ws) e = cudaFree(cs__ws); /* synchronises: earlier solves are done */
        cs__ws = NULL, cs__ws_bytes = 0;
        if (e == cudaSuccess) e = cudaMalloc(&cs__ws, need);
        if (e != cudaSuccess) {
            cs__ws = NULL;
            cs__ws_mutex.unlock();
            return cs__thomas_cuda_fail(e, __FILE__, __LINE__, "the variant calls' workspace");
        }
        cs__ws_bytes = need;
    }
    *ws = cs__ws;
    return CS_SOLVER_OK;
}

void cs__thomas_ws_unlock(void) { cs__ws_mutex.unlock(); }

extern "C" cs_solver_status cs_thomas_gpu_release_workspace(void)
{
    std::lock_guard<std::mutex> lock(cs__ws_mutex);
    const cudaError_t e = cs__ws ? cudaFree(cs__ws) : cudaSuccess;
    cs__ws = NULL, cs__ws_bytes = 0;
    if (e != cudaSuccess) return cs__thomas_cuda_fail(e, __FILE__, __LINE__, "cudaFree(workspace)");
    return CS_SOLVER_OK;
}
