/* The communication seam between ranks (Arbor's distributed_context): a run of N processes
 * under mpirun, or one process. The simulation core calls it for the partition, the spike
 * exchange and reductions; nothing else in cablesim talks to MPI (output/ opens its file on the
 * communicator that cs_comm_mpi_handle() gives).
 *
 * Two implementations: cs_comm_serial.c (one process: gathers copy, reductions are identities)
 * and cs_comm_mpi.c (MPI builds). An MPI build started without mpirun (no launcher in the
 * environment) does not initialise MPI and behaves exactly as the serial implementation.
 *
 * Every function marked "collective" must be called by every rank in the same order. */
#ifndef CS_COMM_H
#define CS_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "cs_error.h"

/* Start MPI when launched by mpirun (threads: MPI_THREAD_FUNNELED). Idempotent. */
cs_status cs_comm_init(int *argc, char ***argv);
/* End MPI if cs_comm_init started it. */
void cs_comm_finalize(void);

int cs_comm_rank(void);
int cs_comm_size(void);
/* Rank among the ranks of this host, and their number (MPI_COMM_TYPE_SHARED). */
int cs_comm_local_rank(void);
int cs_comm_local_size(void);
/* A pointer to the run's MPI_Comm when size > 1, else NULL (for output/). */
const void *cs_comm_mpi_handle(void);

typedef enum { CS_COMM_MIN, CS_COMM_MAX, CS_COMM_SUM } cs_comm_op;

/* Collective, in place. */
cs_status cs_comm_allreduce_double(double *v, size_t n, cs_comm_op op);
cs_status cs_comm_allreduce_u64(uint64_t *v, size_t n, cs_comm_op op);
/* Collective: every rank's n values, concatenated in rank order into all [size × n]. */
cs_status cs_comm_allgather_u64(const uint64_t *mine, size_t n, uint64_t *all);
/* Collective: every rank's block of sizes[r] bytes, concatenated in rank order into `all` on
 * root (all may be NULL elsewhere). */
cs_status cs_comm_gatherv(const void *mine, const uint64_t *sizes, void *all, int root);
/* Collective: root's n bytes to every rank. */
cs_status cs_comm_bcast(void *buf, size_t n, int root);
cs_status cs_comm_barrier(void);

/* Collective error agreement, without aborting: every rank passes its own status; all return
 * the status of the lowest failing rank, whose message every rank then holds, prefixed with
 * "rank R: " when size > 1. CS_OK on every rank when none failed. */
cs_status cs_comm_agree(cs_status mine);

/* A non-blocking all-gather of variable-size byte blocks (MPI_Iallgatherv): started with the
 * sizes of every rank's block known (from cs_comm_allgather_u64), finished later, so that the
 * transfer overlaps computation. */
typedef struct {
    unsigned char *buf;    /* every rank's block, in rank order, after finish */
    size_t nbytes, cap;    /* bytes gathered; capacity of buf */
    int *counts, *displs;  /* [size] bytes */
    void *req;             /* MPI_Request *, NULL when none is in flight */
} cs_comm_gather;

/* Collective. sizes[r]: the bytes rank r sends (sizes[rank] == nbytes). `mine` must stay
 * unchanged until finish. */
cs_status cs_comm_gather_start(cs_comm_gather *g, const void *mine, size_t nbytes, const uint64_t *sizes);
/* Wait for the gather; no-op when none is in flight. */
cs_status cs_comm_gather_finish(cs_comm_gather *g);
/* Finish what is in flight and free. */
void cs_comm_gather_free(cs_comm_gather *g);

/* The last resort when agreement is impossible: end every rank with `code`. */
void cs_comm_abort(int code);

/* The serial implementation, which the MPI one uses while MPI is not running. */
cs_status cs__comm_serial_gather_start(cs_comm_gather *g, const void *mine, size_t nbytes);

#endif
