/* Shared by the solver library's large-system tests: checked GPU calls, the skip decision of a
 * GPU test, and running one suite (check_suite.h). One copy per test program (static
 * functions). No CUDA header: the device is asked through cs_thomas_gpu.h. */
#ifndef CS_TEST_RUN_H
#define CS_TEST_RUN_H

#include <check.h>
#include <stdio.h>

#include "check_suite.h" /* run_suite */

#include "cs_thomas_gpu.h"

#define GPU_OK(expr)                                                                     \
    do {                                                                                 \
        const cs_solver_status st_ = (expr);                                             \
        ck_assert_msg(st_ == CS_SOLVER_OK, "%s: status %d (%s)", #expr, (int)st_,        \
                      cs_thomas_gpu_last_error());                                       \
    } while (0)

/* -1 when a CUDA device is usable; else the exit code after saying why: 77 (skipped) without
 * CUDA or without a device, 1 when the driver fails. */
static inline int gpu_exit_code(void)
{
    int count = 0;
    const cs_solver_status st = cs_thomas_gpu_device_count(&count);
    if (st == CS_SOLVER_ERR_UNAVAILABLE) {
        printf("SKIP: CUDA not compiled\n");
        return 77;
    }
    if (st != CS_SOLVER_OK) {
        printf("FAIL: cannot count CUDA devices: %s\n", cs_thomas_gpu_last_error());
        return 1;
    }
    if (count == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    return -1;
}

#endif
