/* cs_comm over MPI (compiled only in MPI builds). MPI is started only under a launcher
 * (mpirun sets OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK), so the same binary run alone
 * behaves as the serial build; so does every call made before cs_comm_init. */
#include "cs_comm.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int on;              /* MPI running and owned by us */
    int rank, size, local_rank, local_size;
    MPI_Comm comm;       /* a duplicate of MPI_COMM_WORLD: our messages never meet others' */
} cs__c = {0, 0, 1, 0, 1, MPI_COMM_NULL};

static cs_status cs__mpi_error(int rc, const char *what) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", rc);
    return cs_error_set(CS_ERR_IO, "rank %d: MPI: %s failed (%s)", cs__c.rank, what, text);
}
#define CS__MPI(call, what)                              \
    do {                                                 \
        int cs__rc = (call);                             \
        if (cs__rc != MPI_SUCCESS) return cs__mpi_error(cs__rc, what); \
    } while (0)

static int cs__launched(void) {
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

cs_status cs_comm_init(int *argc, char ***argv) {
    if (cs__c.on || !cs__launched()) return CS_OK;
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return cs_error_set(CS_ERR_IO, "MPI_Init_thread failed");
    /* errors come back as codes and become messages, never MPI's default abort */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CS__MPI(MPI_Comm_dup(MPI_COMM_WORLD, &cs__c.comm), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(cs__c.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(cs__c.comm, &cs__c.rank);
    MPI_Comm_size(cs__c.comm, &cs__c.size);
    MPI_Comm local;
    CS__MPI(MPI_Comm_split_type(cs__c.comm, MPI_COMM_TYPE_SHARED, cs__c.rank, MPI_INFO_NULL, &local),
            "MPI_Comm_split_type");
    MPI_Comm_rank(local, &cs__c.local_rank);
    MPI_Comm_size(local, &cs__c.local_size);
    MPI_Comm_free(&local);
    cs__c.on = 1;
    return CS_OK;
}

void cs_comm_finalize(void) {
    if (!cs__c.on) return;
    MPI_Comm_free(&cs__c.comm);
    MPI_Finalize();
    cs__c.on = 0;
}

int cs_comm_rank(void) { return cs__c.on ? cs__c.rank : 0; }
int cs_comm_size(void) { return cs__c.on ? cs__c.size : 1; }
int cs_comm_local_rank(void) { return cs__c.on ? cs__c.local_rank : 0; }
int cs_comm_local_size(void) { return cs__c.on ? cs__c.local_size : 1; }
const void *cs_comm_mpi_handle(void) { return cs__c.on && cs__c.size > 1 ? &cs__c.comm : NULL; }

static MPI_Op cs__op(cs_comm_op op) {
    return op == CS_COMM_MIN ? MPI_MIN : op == CS_COMM_MAX ? MPI_MAX : MPI_SUM;
}

cs_status cs_comm_allreduce_double(double *v, size_t n, cs_comm_op op) {
    if (!cs__c.on || !n) return CS_OK;
    CS_CHECK(n <= INT_MAX, CS_ERR_INVALID, "allreduce of %zu values", n);
    CS__MPI(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, cs__op(op), cs__c.comm), "MPI_Allreduce");
    return CS_OK;
}

cs_status cs_comm_allreduce_u64(uint64_t *v, size_t n, cs_comm_op op) {
    if (!cs__c.on || !n) return CS_OK;
    CS_CHECK(n <= INT_MAX, CS_ERR_INVALID, "allreduce of %zu values", n);
    CS__MPI(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, cs__op(op), cs__c.comm), "MPI_Allreduce");
    return CS_OK;
}

cs_status cs_comm_allgather_u64(const uint64_t *mine, size_t n, uint64_t *all) {
    if (!cs__c.on) {
        if (n) memcpy(all, mine, n * sizeof *all);
        return CS_OK;
    }
    CS__MPI(MPI_Allgather(mine, (int)n, MPI_UINT64_T, all, (int)n, MPI_UINT64_T, cs__c.comm), "MPI_Allgather");
    return CS_OK;
}

cs_status cs_comm_gatherv(const void *mine, const uint64_t *sizes, void *all, int root) {
    if (!cs__c.on) {
        if (sizes[0]) memcpy(all, mine, (size_t)sizes[0]);
        return CS_OK;
    }
    int n = cs__c.size, *counts = calloc((size_t)n, sizeof *counts), *displs = calloc((size_t)n, sizeof *displs);
    if (!counts || !displs) {
        free(counts);
        free(displs);
        return cs_error_set(CS_ERR_NOMEM, "rank %d: out of memory", cs__c.rank);
    }
    uint64_t total = 0;
    for (int r = 0; r < n; ++r) {
        if (sizes[r] > INT_MAX || total + sizes[r] > INT_MAX) {
            free(counts);
            free(displs);
            return cs_error_set(CS_ERR_UNSUPPORTED, "rank %d: a gather of more than 2 GiB", cs__c.rank);
        }
        counts[r] = (int)sizes[r];
        displs[r] = (int)total;
        total += sizes[r];
    }
    static unsigned char dummy;
    int rc = MPI_Gatherv(sizes[cs__c.rank] ? mine : &dummy, counts[cs__c.rank], MPI_BYTE, all ? all : &dummy,
                         counts, displs, MPI_BYTE, root, cs__c.comm);
    free(counts);
    free(displs);
    if (rc != MPI_SUCCESS) return cs__mpi_error(rc, "MPI_Gatherv");
    return CS_OK;
}

cs_status cs_comm_bcast(void *buf, size_t n, int root) {
    if (!cs__c.on || !n) return CS_OK;
    CS_CHECK(n <= INT_MAX, CS_ERR_INVALID, "broadcast of %zu bytes", n);
    CS__MPI(MPI_Bcast(buf, (int)n, MPI_BYTE, root, cs__c.comm), "MPI_Bcast");
    return CS_OK;
}

cs_status cs_comm_barrier(void) {
    if (cs__c.on) CS__MPI(MPI_Barrier(cs__c.comm), "MPI_Barrier");
    return CS_OK;
}

cs_status cs_comm_agree(cs_status mine) {
    if (!cs__c.on || cs__c.size == 1) return mine;
    /* the lowest failing rank speaks for all */
    int who = mine != CS_OK ? cs__c.rank : cs__c.size;
    if (MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, cs__c.comm) != MPI_SUCCESS) {
        fprintf(stderr, "cablesim: error: rank %d: MPI_Allreduce failed while agreeing on an error\n", cs__c.rank);
        cs_comm_abort(1);
    }
    if (who == cs__c.size) return CS_OK;
    struct {
        int status;
        char msg[1024];
    } m = {(int)mine, {0}};
    if (who == cs__c.rank) snprintf(m.msg, sizeof m.msg, "%s", cs_error_message());
    if (MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, who, cs__c.comm) != MPI_SUCCESS) {
        fprintf(stderr, "cablesim: error: rank %d: MPI_Bcast failed while agreeing on an error\n", cs__c.rank);
        cs_comm_abort(1);
    }
    cs_error_clear();
    char prefix[32];
    snprintf(prefix, sizeof prefix, "rank %d: ", who);
    /* messages of comm failures already name their rank */
    if (!strncmp(m.msg, "rank ", 5)) prefix[0] = '\0';
    cs_error_set((cs_status)m.status, "%s%s", prefix, m.msg);
    return (cs_status)m.status;
}

cs_status cs_comm_gather_start(cs_comm_gather *g, const void *mine, size_t nbytes, const uint64_t *sizes) {
    if (!cs__c.on) return cs__comm_serial_gather_start(g, mine, nbytes);
    CS_CHECK(!g->req, CS_ERR_INTERNAL, "rank %d: a gather is already in flight", cs__c.rank);
    int n = cs__c.size;
    if (!g->counts) {
        g->counts = calloc((size_t)n, sizeof *g->counts);
        g->displs = calloc((size_t)n, sizeof *g->displs);
        g->req = NULL;
        if (!g->counts || !g->displs) return cs_error_set(CS_ERR_NOMEM, "rank %d: out of memory", cs__c.rank);
    }
    uint64_t total = 0;
    for (int r = 0; r < n; ++r) {
        CS_CHECK(sizes[r] <= INT_MAX && total + sizes[r] <= INT_MAX, CS_ERR_UNSUPPORTED,
                 "rank %d: one epoch's spikes exceed 2 GiB (rank %d sends %llu bytes); use a shorter epoch",
                 cs__c.rank, r, (unsigned long long)sizes[r]);
        g->counts[r] = (int)sizes[r];
        g->displs[r] = (int)total;
        total += sizes[r];
    }
    if (total > g->cap) {
        unsigned char *p = realloc(g->buf, total);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "rank %d: out of memory for %llu bytes of spikes", cs__c.rank,
                                    (unsigned long long)total);
        g->buf = p;
        g->cap = total;
    }
    g->nbytes = total;
    MPI_Request *req = malloc(sizeof *req);
    if (!req) return cs_error_set(CS_ERR_NOMEM, "rank %d: out of memory", cs__c.rank);
    static unsigned char dummy; /* MPI wants a valid address even for 0 bytes */
    int rc = MPI_Iallgatherv(nbytes ? mine : &dummy, (int)nbytes, MPI_BYTE, g->buf ? (void *)g->buf : &dummy,
                             g->counts, g->displs, MPI_BYTE, cs__c.comm, req);
    if (rc != MPI_SUCCESS) {
        free(req);
        return cs__mpi_error(rc, "MPI_Iallgatherv");
    }
    g->req = req;
    return CS_OK;
}

cs_status cs_comm_gather_finish(cs_comm_gather *g) {
    if (!g->req) return CS_OK;
    MPI_Request *req = g->req;
    int rc = MPI_Wait(req, MPI_STATUS_IGNORE);
    free(req);
    g->req = NULL;
    if (rc != MPI_SUCCESS) return cs__mpi_error(rc, "MPI_Wait (spike exchange)");
    return CS_OK;
}

void cs_comm_gather_free(cs_comm_gather *g) {
    if (g->req) cs_comm_gather_finish(g);
    free(g->buf);
    free(g->counts);
    free(g->displs);
    memset(g, 0, sizeof *g);
}

void cs_comm_abort(int code) {
    fflush(stderr);
    if (cs__c.on) MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}
