/* A run spread over ranks, as the simulation core sees it (docs/mpi.md): the per-epoch
 * agreement and spike exchange, and the gathering of probe samples to rank 0, which writes the
 * output file. Over one process every call reduces to a copy. Built on cs_comm. */
#ifndef CS_DIST_H
#define CS_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "cs_backend.h"
#include "cs_build.h"
#include "cs_comm.h"

typedef struct {
    int rank, nrank;
    uint64_t *words;            /* [nrank × 2] every rank's (spike bytes, failed) of an epoch */
    cs_comm_gather g[2];        /* two epochs' exchanges: one in flight while the other is used */
    cs_spike *send[2];          /* what this rank sends in each */
    size_t cap_send[2];
    int cur;                    /* g[cur] is started next */
    double t_start;             /* [s] when the exchange in flight was started */
    double wait, flight;        /* [s] waiting for exchanges; their time in flight (overlapped) */
    uint64_t nexchange;
    /* samples */
    size_t np_local;
    uint64_t np_global;
    uint64_t *row_bytes;        /* [nrank] bytes of one sample row of each rank */
    uint64_t *dest;             /* rank 0: [np_global] global column of each gathered column */
    uint64_t *node;             /* rank 0: [np_global] CV of each global column */
    uint64_t *report_first;     /* [nreport + 1] global columns of report r (cs_network_desc.reports) */
    double *gath, *rows;        /* rank 0: gathered and reordered rows */
    size_t cap_rows;
} cs_dist;

/* Collective: the probe layout of every rank (rank 0 learns every column's CV); at most
 * max_rows sample rows per epoch. */
cs_status cs_dist_init(cs_dist *d, const cs_network_desc *net, size_t max_rows);
void cs_dist_free(cs_dist *d);

/* Collective, at every epoch boundary: agree on `local` (every rank returns the lowest failing
 * rank's error), then start gathering this epoch's n spikes (global gids). */
cs_status cs_dist_start(cs_dist *d, cs_status local, const cs_spike *sp, size_t n);
/* Wait for the exchange started `lag` calls of cs_dist_start ago (0: the latest; 1: the one
 * before, which ran while an epoch was computed). Every rank's spikes in *sp (rank order). */
cs_status cs_dist_finish(cs_dist *d, int lag, cs_spike **sp, size_t *n);

/* Collective: nrow rows [nrow × np_local] of this rank; on rank 0 *rows is [nrow × np_global]
 * in report column order (every report's columns at report_first[r]). */
cs_status cs_dist_samples(cs_dist *d, const double *samples, size_t nrow, const double **rows);

#endif
