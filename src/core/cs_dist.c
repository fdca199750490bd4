/* See cs_dist.h. */
#include "cs_dist.h"

#include <stdlib.h>
#include <string.h>

#include "cs_profile.h"

cs_status cs_dist_init(cs_dist *d, const cs_network_desc *net, size_t max_rows) {
    const int nrep = net->nreport;
    memset(d, 0, sizeof *d);
    d->rank = cs_comm_rank();
    d->nrank = cs_comm_size();
    size_t nr = (size_t)d->nrank;
    d->words = calloc(2 * nr, sizeof *d->words);
    d->row_bytes = calloc(nr, sizeof *d->row_bytes);
    d->report_first = calloc((size_t)nrep + 1, sizeof *d->report_first);
    d->np_local = net->nprobe;
    d->cap_rows = max_rows;
    uint64_t *pair = malloc((2 * net->nprobe + 1) * sizeof *pair), *sizes = calloc(nr, sizeof *sizes);
    cs_status st = CS_OK;
    if (!d->words || !d->row_bytes || !d->report_first || !pair || !sizes)
        st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (int r = 0; st == CS_OK && r < nrep; ++r)
        d->report_first[r + 1] = d->report_first[r] + net->report_probe_ncol[r];
    d->np_global = st == CS_OK ? d->report_first[nrep] : 0;
    /* each local probe: (global column, CV) */
    for (int r = 0; st == CS_OK && r < nrep; ++r)
        for (size_t k = net->report_probe_first[r]; k < net->report_probe_first[r + 1]; ++k) {
            pair[2 * k] = d->report_first[r] + net->probes[k].col;
            pair[2 * k + 1] = (uint64_t)net->probes[k].node;
        }
    uint64_t mine = (uint64_t)net->nprobe;
    if (st == CS_OK) st = cs_comm_allgather_u64(&mine, 1, sizes);
    uint64_t *all = NULL;
    if (st == CS_OK) {
        for (size_t r = 0; r < nr; ++r) {
            d->row_bytes[r] = sizes[r] * sizeof(double);
            sizes[r] *= 2 * sizeof(uint64_t);
        }
        if (d->rank == 0) {
            all = malloc((2 * d->np_global + 1) * sizeof *all);
            d->dest = malloc((d->np_global + 1) * sizeof *d->dest);
            d->node = malloc((d->np_global + 1) * sizeof *d->node);
            d->gath = malloc((max_rows * d->np_global + 1) * sizeof *d->gath);
            d->rows = malloc((max_rows * d->np_global + 1) * sizeof *d->rows);
            if (!all || !d->dest || !d->node || !d->gath || !d->rows)
                st = cs_error_set(CS_ERR_NOMEM, "out of memory for probes");
        }
    }
    /* a failure above is agreed on before the gather, so no rank is left waiting in it */
    st = cs_comm_agree(st);
    if (st == CS_OK) st = cs_comm_gatherv(pair, sizes, all, 0);
    if (st == CS_OK && d->rank == 0)
        for (uint64_t k = 0; k < d->np_global; ++k) {
            d->dest[k] = all[2 * k];
            d->node[all[2 * k]] = all[2 * k + 1];
        }
    free(all);
    free(pair);
    free(sizes);
    return st;
}

void cs_dist_free(cs_dist *d) {
    cs_comm_gather_free(&d->g[0]);
    cs_comm_gather_free(&d->g[1]);
    free(d->words);
    free(d->row_bytes);
    free(d->dest);
    free(d->node);
    free(d->report_first);
    free(d->gath);
    free(d->rows);
    free(d->send[0]);
    free(d->send[1]);
    memset(d, 0, sizeof *d);
}

cs_status cs_dist_start(cs_dist *d, cs_status local, const cs_spike *sp, size_t n) {
    /* the sizes of the blocks and the status ride in one small all-gather */
    uint64_t mine[2] = {local == CS_OK ? (uint64_t)(n * sizeof *sp) : 0, local != CS_OK};
    CS_TRY(cs_comm_allgather_u64(mine, 2, d->words));
    int failed = 0;
    for (int r = 0; r < d->nrank; ++r) failed |= d->words[2 * r + 1] != 0;
    if (failed) return cs_comm_agree(local);
    /* the block must outlive the caller's buffer while the gather is in flight */
    int c = d->cur;
    if (n > d->cap_send[c]) {
        cs_spike *p = realloc(d->send[c], n * sizeof *p);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for spikes");
        d->send[c] = p;
        d->cap_send[c] = n;
    }
    if (n) memcpy(d->send[c], sp, n * sizeof *sp);
    uint64_t *bytes = malloc((size_t)d->nrank * sizeof *bytes);
    if (!bytes) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (int r = 0; r < d->nrank; ++r) bytes[r] = d->words[2 * r];
    cs_status st = cs_comm_gather_start(&d->g[c], d->send[c], n * sizeof *sp, bytes);
    free(bytes);
    d->cur ^= 1;
    d->t_start = cs_now();
    d->nexchange++;
    return st;
}

cs_status cs_dist_finish(cs_dist *d, int lag, cs_spike **sp, size_t *n) {
    cs_comm_gather *g = &d->g[d->cur ^ 1 ^ (lag & 1)];
    double t0 = cs_now();
    if (g->req) d->flight += t0 - d->t_start;
    CS_TRY(cs_comm_gather_finish(g));
    d->wait += cs_now() - t0;
    *sp = (cs_spike *)(void *)g->buf;
    *n = g->nbytes / sizeof(cs_spike);
    return CS_OK;
}

cs_status cs_dist_samples(cs_dist *d, const double *samples, size_t nrow, const double **rows) {
    *rows = NULL;
    if (!nrow || !d->np_global) return CS_OK;
    size_t ng = (size_t)d->np_global;
    uint64_t *sizes = malloc((size_t)d->nrank * sizeof *sizes);
    if (!sizes) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (int r = 0; r < d->nrank; ++r) sizes[r] = d->row_bytes[r] * nrow;
    /* the same on every rank: the rows of an epoch never exceed max_rows */
    if (nrow > d->cap_rows) {
        free(sizes);
        return cs_error_set(CS_ERR_INTERNAL, "%zu sample rows in an epoch, more than the %zu planned", nrow,
                            d->cap_rows);
    }
    cs_status st = cs_comm_gatherv(samples, sizes, d->gath, 0);
    free(sizes);
    if (st != CS_OK || d->rank != 0) return st;
    /* rank r's block is [nrow × its columns]; put every value in its global column */
    const double *blk = d->gath;
    size_t col0 = 0;
    for (int r = 0; r < d->nrank; ++r) {
        size_t nc = (size_t)(d->row_bytes[r] / sizeof(double));
        for (size_t i = 0; i < nrow; ++i)
            for (size_t j = 0; j < nc; ++j) d->rows[i * ng + d->dest[col0 + j]] = blk[i * nc + j];
        blk += nrow * nc;
        col0 += nc;
    }
    *rows = d->rows;
    return CS_OK;
}
