/* The GPU Thomas API (cs_thomas_gpu.h) when the library is built without CUDA: the variant
 * table works, every solve, conversion and device function answers CS_SOLVER_ERR_UNAVAILABLE
 * and cs_thomas_gpu_last_error() says that CUDA was not compiled in. With CUDA
 * (CS_HAVE_CUDA defined) this file compiles to nothing: cs_thomas_gpu.cu defines the API. */
#ifndef CS_HAVE_CUDA

#include <stddef.h>
#include <string.h>

#include "cs_thomas_gpu.h"

static const char cs__stub_msg[] =
    "cs_thomas_gpu: CUDA was not compiled in (no nvcc when the library was built)";
static _Thread_local const char *cs__stub_last = "";

static cs_solver_status cs__stub_unavailable(void)
{
    cs__stub_last = cs__stub_msg;
    return CS_SOLVER_ERR_UNAVAILABLE;
}

static const struct {
    const char *name;
    cs_thomas_layout layout;
    int var;
} cs__stub_variants[] = {
#define CS__THOMAS_GPU_INFO(e, name, layout, var) {name, layout, var},
    CS_THOMAS_GPU_VARIANT_LIST(CS__THOMAS_GPU_INFO)
#undef CS__THOMAS_GPU_INFO
};

const char *cs_thomas_gpu_variant_name(cs_thomas_gpu_variant v)
{
    return ((int)v >= 0 && v < CS_THOMAS_GPU_NVARIANTS) ? cs__stub_variants[v].name : NULL;
}

cs_solver_status cs_thomas_gpu_variant_from_name(const char *name, cs_thomas_gpu_variant *v)
{
    if (!name || !v) return CS_SOLVER_ERR_INVALID;
    for (int i = 0; i < CS_THOMAS_GPU_NVARIANTS; ++i)
        if (strcmp(name, cs__stub_variants[i].name) == 0) {
            *v = (cs_thomas_gpu_variant)i;
            return CS_SOLVER_OK;
        }
    cs__stub_last = "cs_thomas_gpu: unknown variant name";
    return CS_SOLVER_ERR_INVALID;
}

cs_thomas_layout cs_thomas_gpu_variant_layout(cs_thomas_gpu_variant v)
{
    return ((int)v >= 0 && v < CS_THOMAS_GPU_NVARIANTS) ? cs__stub_variants[v].layout
                                                        : CS_THOMAS_LAYOUT_FLAT;
}

int cs_thomas_gpu_variant_is_var(cs_thomas_gpu_variant v)
{
    return ((int)v >= 0 && v < CS_THOMAS_GPU_NVARIANTS) ? cs__stub_variants[v].var : 0;
}

cs_thomas_gpu_variant cs_thomas_gpu_choose(int nsys, int n, cs_thomas_gpu_precision prec)
{
    (void)prec, (void)nsys; /* as cs_thomas_gpu.cu: chunked above 1024 rows */
    return n > 1024 ? CS_THOMAS_GPU_CHUNKED : CS_THOMAS_GPU_WARP;
}

/* No GPU, no workspace. */
size_t cs_thomas_gpu_chunked_workspace(int nsys, int n, cs_thomas_gpu_precision prec)
{
    (void)nsys, (void)n, (void)prec;
    return 0;
}

cs_solver_status cs_thomas_gpu_chunked_d(int nsys, int n, const double *a, double *b,
                                         const double *c, double *d, void *work,
                                         size_t work_bytes, void *stream)
{
    (void)nsys, (void)n, (void)a, (void)b, (void)c, (void)d, (void)work, (void)work_bytes;
    (void)stream;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_chunked_f(int nsys, int n, const float *a, float *b,
                                         const float *c, float *d, void *work,
                                         size_t work_bytes, void *stream)
{
    (void)nsys, (void)n, (void)a, (void)b, (void)c, (void)d, (void)work, (void)work_bytes;
    (void)stream;
    return cs__stub_unavailable();
}

size_t cs_thomas_gpu_scan_workspace(int nsys, int n, cs_thomas_gpu_precision prec)
{
    (void)nsys, (void)n, (void)prec;
    return 0;
}

cs_solver_status cs_thomas_gpu_scan_d(int nsys, int n, const double *a, double *b,
                                      const double *c, double *d, void *work, size_t work_bytes,
                                      void *stream)
{
    (void)nsys, (void)n, (void)a, (void)b, (void)c, (void)d, (void)work, (void)work_bytes;
    (void)stream;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_scan_f(int nsys, int n, const float *a, float *b, const float *c,
                                      float *d, void *work, size_t work_bytes, void *stream)
{
    (void)nsys, (void)n, (void)a, (void)b, (void)c, (void)d, (void)work, (void)work_bytes;
    (void)stream;
    return cs__stub_unavailable();
}

size_t cs_thomas_gpu_bridge_workspace(int nsys, int n, int parts)
{
    (void)nsys, (void)n, (void)parts;
    return 0;
}

cs_solver_status cs_thomas_gpu_bridge_d(int nsys, int n, int parts, cs_thomas_bridge_sync sync,
                                        const double *a, double *b, const double *c, double *d,
                                        void *work, size_t work_bytes, void *const *streams)
{
    (void)nsys, (void)n, (void)parts, (void)sync, (void)a, (void)b, (void)c, (void)d;
    (void)work, (void)work_bytes, (void)streams;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_bridge_f(int nsys, int n, int parts, cs_thomas_bridge_sync sync,
                                        const float *a, float *b, const float *c, float *d,
                                        void *work, size_t work_bytes, void *const *streams)
{
    (void)nsys, (void)n, (void)parts, (void)sync, (void)a, (void)b, (void)c, (void)d;
    (void)work, (void)work_bytes, (void)streams;
    return cs__stub_unavailable();
}

size_t cs_thomas_gpu_bridge_multi_workspace(int rows, int parts)
{
    (void)rows, (void)parts;
    return 0;
}

cs_solver_status cs_thomas_gpu_bridge_multi_peer(int parts, const int *devices, int *direct)
{
    (void)parts, (void)devices;
    if (direct) *direct = 0;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_bridge_multi_d(int parts, const int *rows, const int *devices,
                                              cs_thomas_bridge_sync sync, const double *const *a,
                                              double *const *b, const double *const *c,
                                              double *const *d, void *const *work,
                                              const size_t *work_bytes, void *const *streams)
{
    (void)parts, (void)rows, (void)devices, (void)sync, (void)a, (void)b, (void)c, (void)d;
    (void)work, (void)work_bytes, (void)streams;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_bridge_multi_f(int parts, const int *rows, const int *devices,
                                              cs_thomas_bridge_sync sync, const float *const *a,
                                              float *const *b, const float *const *c,
                                              float *const *d, void *const *work,
                                              const size_t *work_bytes, void *const *streams)
{
    (void)parts, (void)rows, (void)devices, (void)sync, (void)a, (void)b, (void)c, (void)d;
    (void)work, (void)work_bytes, (void)streams;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_release_workspace(void) { return CS_SOLVER_OK; }

cs_solver_status cs_thomas_gpu_solve_d(cs_thomas_gpu_variant v, int nsys, int n, const double *a,
                                       double *b, const double *c, double *d,
                                       cs_thomas_gpu_mem mem)
{
    (void)v, (void)nsys, (void)n, (void)a, (void)b, (void)c, (void)d, (void)mem;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_solve_f(cs_thomas_gpu_variant v, int nsys, int n, const float *a,
                                       float *b, const float *c, float *d, cs_thomas_gpu_mem mem)
{
    (void)v, (void)nsys, (void)n, (void)a, (void)b, (void)c, (void)d, (void)mem;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_solve_var_d(cs_thomas_gpu_variant v, int nsys, int n_max,
                                           const int *offset, const double *a, double *b,
                                           const double *c, double *d, cs_thomas_gpu_mem mem)
{
    (void)v, (void)nsys, (void)n_max, (void)offset, (void)a, (void)b, (void)c, (void)d, (void)mem;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_solve_var_f(cs_thomas_gpu_variant v, int nsys, int n_max,
                                           const int *offset, const float *a, float *b,
                                           const float *c, float *d, cs_thomas_gpu_mem mem)
{
    (void)v, (void)nsys, (void)n_max, (void)offset, (void)a, (void)b, (void)c, (void)d, (void)mem;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_flat_to_interleaved_d(int nsys, int n, const double *src,
                                                     double *dst)
{
    (void)nsys, (void)n, (void)src, (void)dst;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_interleaved_to_flat_d(int nsys, int n, const double *src,
                                                     double *dst)
{
    (void)nsys, (void)n, (void)src, (void)dst;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_flat_to_interleaved_f(int nsys, int n, const float *src, float *dst)
{
    (void)nsys, (void)n, (void)src, (void)dst;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_interleaved_to_flat_f(int nsys, int n, const float *src, float *dst)
{
    (void)nsys, (void)n, (void)src, (void)dst;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_var_pack_d(int nsys, int n_max, const int *offset, const double *a,
                                          const double *b, const double *c, const double *d,
                                          double *ai, double *bi, double *ci, double *di)
{
    (void)nsys, (void)n_max, (void)offset, (void)a, (void)b, (void)c, (void)d;
    (void)ai, (void)bi, (void)ci, (void)di;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_var_unpack_d(int nsys, int n_max, const int *offset,
                                            const double *xi, double *x)
{
    (void)nsys, (void)n_max, (void)offset, (void)xi, (void)x;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_var_pack_f(int nsys, int n_max, const int *offset, const float *a,
                                          const float *b, const float *c, const float *d,
                                          float *ai, float *bi, float *ci, float *di)
{
    (void)nsys, (void)n_max, (void)offset, (void)a, (void)b, (void)c, (void)d;
    (void)ai, (void)bi, (void)ci, (void)di;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_var_unpack_f(int nsys, int n_max, const int *offset,
                                            const float *xi, float *x)
{
    (void)nsys, (void)n_max, (void)offset, (void)xi, (void)x;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_device_count(int *count)
{
    if (count) *count = 0;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_device_name(char *name, size_t len)
{
    if (name && len) name[0] = '\0';
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_set_device(int device)
{
    (void)device;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_get_device(int *device)
{
    if (device) *device = 0;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_malloc(void **ptr, size_t bytes)
{
    (void)bytes;
    if (ptr) *ptr = NULL;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_free(void *ptr)
{
    (void)ptr;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_to_device(void *dst, const void *src, size_t bytes)
{
    (void)dst, (void)src, (void)bytes;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_to_host(void *dst, const void *src, size_t bytes)
{
    (void)dst, (void)src, (void)bytes;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_stream_create(void **stream)
{
    if (stream) *stream = NULL;
    return cs__stub_unavailable();
}
cs_solver_status cs_thomas_gpu_stream_synchronize(void *stream)
{
    (void)stream;
    return cs__stub_unavailable();
}
cs_solver_status cs_thomas_gpu_stream_destroy(void *stream)
{
    (void)stream;
    return cs__stub_unavailable();
}

cs_solver_status cs_thomas_gpu_synchronize(void) { return cs__stub_unavailable(); }

const char *cs_thomas_gpu_last_error(void) { return cs__stub_last; }

#else
/* ISO C forbids an empty translation unit. */
typedef int cs__thomas_gpu_stub_unused;
#endif /* CS_HAVE_CUDA */
