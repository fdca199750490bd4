/* The GPU Hines solvers' error record: this thread's last failure as one line, reported by
 * cs_hines_gpu_last_error(). Shared by cs_hines_gpu.cu and cs_hines_gpu_launch.cu
 * (cs_hines_gpu_plan.cuh). */
#include <stdarg.h>
#include <stdio.h>

#include "cs_hines_gpu.h"
#include "cs_hines_gpu_plan.cuh"

static thread_local char cs__gpu_msg[512];

void cs__hgpu_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cs__gpu_msg, sizeof cs__gpu_msg, fmt, ap);
    va_end(ap);
}

void cs__hgpu_err_clear(void) { cs__gpu_msg[0] = 0; }

extern "C" const char *cs_hines_gpu_last_error(void) { return cs__gpu_msg; }
