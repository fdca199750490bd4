/* The GPU Hines solvers when the library is built without CUDA: every entry point answers
 * CS_SOLVER_ERR_UNAVAILABLE (libCEED's "backend not compiled" stub). Compiled to nothing when
 * CS_HAVE_CUDA is defined (then cs_hines_gpu.cu and cs_hines_gpu_launch.cu provide these functions). */
#ifndef CS_HAVE_CUDA
#include <stdio.h>

#include "cs_hines_gpu.h"

static const char cs__stub_msg[] = "cablesim was built without CUDA: the GPU Hines solvers are not compiled in";

int cs_hines_gpu_compiled(void) { return 0; }
int cs_hines_gpu_device_count(void) { return 0; }
void cs_hines_gpu_device_name(int dev, char *buf, size_t len)
{
    (void)dev;
    if (buf && len) buf[0] = 0;
}
const char *cs_hines_gpu_last_error(void) { return cs__stub_msg; }

cs_solver_status cs_hines_gpu_plan_create(int nsys, const int *offset, const int *p,
                                          const cs_hines_gpu_options *opt, cs_hines_plan **out)
{
    (void)nsys; (void)offset; (void)p; (void)opt;
    if (out) *out = NULL;
    return CS_SOLVER_ERR_UNAVAILABLE;
}
void cs_hines_gpu_plan_destroy(cs_hines_plan *plan) { (void)plan; }
const char *cs_hines_gpu_plan_resolve(int nsys, const int *offset, const int *p, const cs_hines_gpu_options *opt)
{
    (void)nsys; (void)offset; (void)p; (void)opt;
    return NULL;
}
const char *cs_hines_gpu_plan_variant(const cs_hines_plan *plan) { (void)plan; return ""; }
size_t cs_hines_gpu_plan_internal_size(const cs_hines_plan *plan) { (void)plan; return 0; }
const char *cs_hines_gpu_plan_describe(const cs_hines_plan *plan) { (void)plan; return ""; }
cs_solver_status cs_hines_gpu_plan_row_map(const cs_hines_plan *plan, int *m) { (void)plan; (void)m; return CS_SOLVER_ERR_UNAVAILABLE; }
cs_solver_status cs_hines_gpu_set_stream(cs_hines_plan *plan, void *s) { (void)plan; (void)s; return CS_SOLVER_ERR_UNAVAILABLE; }
cs_solver_status cs_hines_gpu_plan_prepare(cs_hines_plan *plan) { (void)plan; return CS_SOLVER_ERR_UNAVAILABLE; }
cs_solver_status cs_hines_gpu_sync(cs_hines_plan *plan) { (void)plan; return CS_SOLVER_ERR_UNAVAILABLE; }

#define CS__STUB_SOLVE(name, T)                                            \
    cs_solver_status name(cs_hines_plan *plan, T *d, const T *u, T *rhs)   \
    {                                                                      \
        (void)plan; (void)d; (void)u; (void)rhs;                           \
        return CS_SOLVER_ERR_UNAVAILABLE;                                  \
    }
CS__STUB_SOLVE(cs_hines_gpu_solve_d, double)
CS__STUB_SOLVE(cs_hines_gpu_solve_f, float)
CS__STUB_SOLVE(cs_hines_gpu_solve_internal_d, double)
CS__STUB_SOLVE(cs_hines_gpu_solve_internal_f, float)

int cs_hines_gpu_plan_uniform(const cs_hines_plan *plan) { (void)plan; return 0; }
int cs_hines_gpu_plan_slot_constants(const cs_hines_plan *plan, int *warps_per_sm)
{
    (void)plan;
    if (warps_per_sm) *warps_per_sm = 0;
    return 0;
}
int cs_hines_gpu_plan_fuses(const cs_hines_plan *plan) { (void)plan; return 0; }
int cs_hines_gpu_plan_step_launches(const cs_hines_plan *plan) { (void)plan; return 0; }
int cs_hines_gpu_plan_shares_constants(const cs_hines_plan *plan) { (void)plan; return 0; }
cs_solver_status cs_hines_gpu_plan_row_flags(const cs_hines_plan *plan, unsigned char *f) { (void)plan; (void)f; return CS_SOLVER_ERR_UNAVAILABLE; }
cs_solver_status cs_hines_gpu_plan_set_current(cs_hines_plan *plan, const unsigned char *f) { (void)plan; (void)f; return CS_SOLVER_ERR_UNAVAILABLE; }
cs_solver_status cs_hines_gpu_plan_share_constants(cs_hines_plan *plan, const double *t, int f, long long *n) { (void)plan; (void)t; (void)f; (void)n; return CS_SOLVER_ERR_UNAVAILABLE; }
cs_solver_status cs_hines_gpu_step_internal_d(cs_hines_plan *plan, const cs_hines_step_d *st) { (void)plan; (void)st; return CS_SOLVER_ERR_UNAVAILABLE; }

#define CS__STUB_CONV(name, T)                                                              \
    cs_solver_status name(cs_hines_plan *plan, cs_hines_array_kind k, const T *src, T *dst) \
    {                                                                                       \
        (void)plan; (void)k; (void)src; (void)dst;                                          \
        return CS_SOLVER_ERR_UNAVAILABLE;                                                   \
    }
CS__STUB_CONV(cs_hines_gpu_to_internal_d, double)
CS__STUB_CONV(cs_hines_gpu_to_internal_f, float)
CS__STUB_CONV(cs_hines_gpu_from_internal_d, double)
CS__STUB_CONV(cs_hines_gpu_from_internal_f, float)
cs_solver_status cs_hines_gpu_malloc(void **ptr, size_t bytes)
{
    (void)bytes;
    if (ptr) *ptr = NULL;
    return CS_SOLVER_ERR_UNAVAILABLE;
}
void cs_hines_gpu_free(void *ptr) { (void)ptr; }
cs_solver_status cs_hines_gpu_memcpy(void *dst, const void *src, size_t bytes)
{
    (void)dst; (void)src; (void)bytes;
    return CS_SOLVER_ERR_UNAVAILABLE;
}
#else
typedef int cs__hines_gpu_stub_unused; /* ISO C forbids an empty translation unit */
#endif
