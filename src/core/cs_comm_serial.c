/* cs_comm for one process: gathers copy, reductions and agreement are identities. In an MPI
 * build only cs__comm_serial_gather_start is compiled; cs_comm_mpi.c uses it while MPI is off. */
#include "cs_comm.h"

#include <stdlib.h>
#include <string.h>

cs_status cs__comm_serial_gather_start(cs_comm_gather *g, const void *mine, size_t nbytes) {
    if (nbytes > g->cap) {
        unsigned char *p = realloc(g->buf, nbytes);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for %zu bytes of spikes", nbytes);
        g->buf = p;
        g->cap = nbytes;
    }
    if (nbytes) memcpy(g->buf, mine, nbytes);
    g->nbytes = nbytes;
    return CS_OK;
}

#ifndef CS_HAVE_MPI

cs_status cs_comm_init(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return CS_OK;
}
void cs_comm_finalize(void) {}
int cs_comm_rank(void) { return 0; }
int cs_comm_size(void) { return 1; }
int cs_comm_local_rank(void) { return 0; }
int cs_comm_local_size(void) { return 1; }
const void *cs_comm_mpi_handle(void) { return NULL; }

cs_status cs_comm_allreduce_double(double *v, size_t n, cs_comm_op op) {
    (void)v; (void)n; (void)op;
    return CS_OK;
}
cs_status cs_comm_allreduce_u64(uint64_t *v, size_t n, cs_comm_op op) {
    (void)v; (void)n; (void)op;
    return CS_OK;
}
cs_status cs_comm_allgather_u64(const uint64_t *mine, size_t n, uint64_t *all) {
    if (n) memcpy(all, mine, n * sizeof *all);
    return CS_OK;
}
cs_status cs_comm_gatherv(const void *mine, const uint64_t *sizes, void *all, int root) {
    (void)root;
    if (sizes[0]) memcpy(all, mine, (size_t)sizes[0]);
    return CS_OK;
}
cs_status cs_comm_bcast(void *buf, size_t n, int root) {
    (void)buf; (void)n; (void)root;
    return CS_OK;
}
cs_status cs_comm_barrier(void) { return CS_OK; }
cs_status cs_comm_agree(cs_status mine) { return mine; }

cs_status cs_comm_gather_start(cs_comm_gather *g, const void *mine, size_t nbytes, const uint64_t *sizes) {
    (void)sizes;
    return cs__comm_serial_gather_start(g, mine, nbytes);
}
cs_status cs_comm_gather_finish(cs_comm_gather *g) {
    (void)g;
    return CS_OK;
}
void cs_comm_gather_free(cs_comm_gather *g) {
    free(g->buf);
    memset(g, 0, sizeof *g);
}
void cs_comm_abort(int code) { exit(code); }

#endif
