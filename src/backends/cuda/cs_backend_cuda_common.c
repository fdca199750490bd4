/* Helpers of both halves of the CUDA backend (cs_backend_cuda.c, cs_backend_cuda_setup.c): in a
 * file of their own, so that the two call only downwards. Host logic only. */
#ifdef CS_HAVE_CUDA
#include "cs_backend_cuda_internal.h"

void cs__cuda_drop_graphs(cs_backend *be) {
    for (int p = 0; p < 2; ++p)
        for (int b = 0; b < CS_GRAPH_LEVELS; ++b) {
            cs_cuda_graph_destroy(be->graph[p][b]);
            be->graph[p][b] = NULL;
        }
}

cs_status cs__cuda_grow_device(void **p, size_t *cap, size_t need, size_t elem, const char *what) {
    if (need <= *cap) return CS_OK;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    cs_cuda_free(*p);
    *p = NULL;
    *cap = 0;
    CS_TRY(cs_cuda_alloc(p, nc * elem, what));
    *cap = nc;
    return CS_OK;
}

cs_status cs__cuda_solver_fail(cs_solver_status st, const char *what) {
    return cs_error_set(st == CS_SOLVER_ERR_NOMEM ? CS_ERR_NOMEM : CS_ERR_DEVICE, "GPU solver: %s: %s (%s)",
                        what, cs_solver_status_string(st), cs_hines_gpu_last_error());
}

#else
typedef int cs__cuda_common_absent; /* a build without CUDA */
#endif
