/* In-memory results, beside (or instead of) the HDF5 file: every spike (global gid, time) and
 * every sample row of the probes, for callers that read them back while the simulation lives
 * (the C API in src/api/cablesim.h, hence the Python package).
 *
 * Memory: spikes take 16 bytes each and grow with the run; sample rows take 8 bytes per probe
 * and row. The rows' memory is bounded: cs_memsink_reserve_rows refuses (CS_ERR_NOMEM with a
 * one-line message) a run whose rows would pass max_bytes, before anything is simulated. */
#ifndef CS_MEMSINK_H
#define CS_MEMSINK_H

#include <stddef.h>
#include <stdint.h>

#include "cs_error.h"

typedef struct {
    uint64_t *gid;     /* [nspike] global cell ids */
    double *time;      /* [nspike] [ms] */
    size_t nspike, cap_spike;
    double *rows;      /* [nrow × ncol] [mV], row-major; NULL while no row is kept */
    size_t nrow, cap_row, ncol;
    size_t max_bytes;  /* bound on the rows' bytes; 0: no bound */
    int keep_rows;     /* 0: rows are dropped (spikes only) */
} cs_memsink;

/* ncol probes per row; keep_rows = 0 keeps spikes only. */
void cs_memsink_init(cs_memsink *m, size_t ncol, int keep_rows, size_t max_bytes);
void cs_memsink_free(cs_memsink *m);
/* Make room for nrow rows in all, or refuse (CS_ERR_NOMEM) when they pass max_bytes. */
cs_status cs_memsink_reserve_rows(cs_memsink *m, size_t nrow);
cs_status cs_memsink_append_rows(cs_memsink *m, size_t nrow, const double *rows);
cs_status cs_memsink_append_spike(cs_memsink *m, uint64_t gid, double time);

#endif
