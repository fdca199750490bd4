/* The GPU Thomas solvers' error record: this thread's last failure as one line "file:line: what:
 * detail", reported by cs_thomas_gpu_last_error(). Shared by every cs_thomas_*gpu.cu file
 * (cs_thomas_gpu_impl.cuh). */
#include <cuda_runtime.h>
#include <stdio.h>

#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

static thread_local char cs__gpu_msg[512];

cs_solver_status cs__thomas_gpu_fail(cs_solver_status st, const char *file, int line,
                                     const char *what, const char *detail)
{
    snprintf(cs__gpu_msg, sizeof cs__gpu_msg, "%s:%d: %s%s%s", file, line, what,
             detail ? ": " : "", detail ? detail : "");
    return st;
}

cs_solver_status cs__thomas_cuda_fail(cudaError_t e, const char *file, int line, const char *expr)
{
    (void)cudaGetLastError(); /* clear a non-sticky error so later calls start clean */
    char buf[256];
    snprintf(buf, sizeof buf, "%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    return cs__thomas_gpu_fail(e == cudaErrorMemoryAllocation ? CS_SOLVER_ERR_NOMEM
                                                              : CS_SOLVER_ERR_DEVICE,
                               file, line, expr, buf);
}

extern "C" const char *cs_thomas_gpu_last_error(void) { return cs__gpu_msg; }
