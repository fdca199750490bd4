#include "cs_memsink.h"

#include <stdlib.h>
#include <string.h>

void cs_memsink_init(cs_memsink *m, size_t ncol, int keep_rows, size_t max_bytes) {
    memset(m, 0, sizeof *m);
    m->ncol = ncol;
    m->keep_rows = keep_rows;
    m->max_bytes = max_bytes;
}

void cs_memsink_free(cs_memsink *m) {
    free(m->gid);
    free(m->time);
    free(m->rows);
    memset(m, 0, sizeof *m);
}

cs_status cs_memsink_reserve_rows(cs_memsink *m, size_t nrow) {
    if (!m->keep_rows || nrow <= m->cap_row) return CS_OK;
    double bytes = (double)nrow * (double)m->ncol * sizeof(double);
    if (m->max_bytes && bytes > (double)m->max_bytes)
        return cs_error_set(CS_ERR_NOMEM,
                            "in-memory traces: %zu rows of %zu probes take %.0f bytes, more than the limit of %zu "
                            "bytes (raise the limit, run a shorter time, or keep no traces in memory and write a file)",
                            nrow, m->ncol, bytes, m->max_bytes);
    if (m->ncol == 0) {
        m->cap_row = nrow;
        return CS_OK;
    }
    double *p = realloc(m->rows, nrow * m->ncol * sizeof *p);
    if (!p) return cs_error_set(CS_ERR_NOMEM, "in-memory traces: out of memory for %zu rows of %zu probes", nrow, m->ncol);
    m->rows = p;
    m->cap_row = nrow;
    return CS_OK;
}

cs_status cs_memsink_append_rows(cs_memsink *m, size_t nrow, const double *rows) {
    if (!m->keep_rows || !nrow) return CS_OK;
    if (m->nrow + nrow > m->cap_row) {
        size_t want = m->cap_row ? 2 * m->cap_row : 64;
        if (want < m->nrow + nrow) want = m->nrow + nrow;
        /* the bound is checked on the rows the run needs, not on the doubling */
        if (m->max_bytes && (double)want * (double)m->ncol * sizeof(double) > (double)m->max_bytes)
            want = m->nrow + nrow;
        CS_TRY(cs_memsink_reserve_rows(m, want));
    }
    if (m->ncol) memcpy(m->rows + m->nrow * m->ncol, rows, nrow * m->ncol * sizeof *rows);
    m->nrow += nrow;
    return CS_OK;
}

cs_status cs_memsink_append_spike(cs_memsink *m, uint64_t gid, double time) {
    if (m->nspike == m->cap_spike) {
        size_t nc = m->cap_spike ? 2 * m->cap_spike : 1024;
        uint64_t *g = realloc(m->gid, nc * sizeof *g);
        if (!g) return cs_error_set(CS_ERR_NOMEM, "in-memory spikes: out of memory for %zu spikes", nc);
        m->gid = g;
        double *t = realloc(m->time, nc * sizeof *t);
        if (!t) return cs_error_set(CS_ERR_NOMEM, "in-memory spikes: out of memory for %zu spikes", nc);
        m->time = t;
        m->cap_spike = nc;
    }
    m->gid[m->nspike] = gid;
    m->time[m->nspike++] = time;
    return CS_OK;
}
