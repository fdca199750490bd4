/* Private to output/: the writer's state and the HDF5 helpers its files share.
 *
 *   cs_output_hdf5.c  errors and small HDF5 helpers (attributes, fixed and extendible datasets,
 *                     appends, the time axis)
 *   cs_output_data.c  the datasets that grow: spikes and reports (declare, append)
 *   cs_output.c       the file: open, metadata, profile, flush (with its disk reservation), close
 *   cs_output_mpi.c   the collective writer over MPI ranks (parallel HDF5); MPI builds only
 *
 * A serial file has comm == NULL, rank 0 of 1. A parallel file (cs_output_open_parallel) is
 * written by every rank: every call is collective, made with the same arguments on every rank
 * (except the report columns each rank fills); failures are agreed inside (cs__par_any), so
 * io_failed is the same on every rank and no rank is ever left in a collective call. */
#ifndef CS_OUTPUT_INTERNAL_H
#define CS_OUTPUT_INTERNAL_H

#include <hdf5.h>
#include <stdint.h>

#include "cs_output.h"

/* Chunking: spikes in chunks of 4096 values; report data in chunks of CS__REPORT_CHUNK_ROWS
 * rows × at most CS__REPORT_CHUNK_COLS elements (64 × 1024 float32 = 256 KiB). */
#define CS__SPIKE_CHUNK 4096
#define CS__REPORT_CHUNK_ROWS 64
#define CS__REPORT_CHUNK_COLS 1024
/* Chunk cache of one report dataset: one full band of CS__REPORT_CHUNK_ROWS rows when it fits
 * in this bound, so appending epoch after epoch never re-reads a chunk from the file. */
#define CS__REPORT_CACHE_MAX ((size_t)64 << 20)
#define CS__EPSILON 1e-6 /* [ms] tolerance of libsonata's time axis, mirrored here */

/* Values of the SONATA spike `sorting` enum (uint8), as libsonata reads them. */
enum { CS__SORT_NONE = 0, CS__SORT_BY_ID = 1, CS__SORT_BY_TIME = 2 };

typedef struct {
    char *name;
    hid_t group;      /* /spikes/<pop> */
    hid_t timestamps; /* float64 [n] [ms] */
    hid_t node_ids;   /* uint64 [n] */
    hsize_t n;        /* spikes written */
    hsize_t n_flushed; /* spikes written at the last flush */
    double last_time; /* [ms] latest spike time written so far */
    int by_time;      /* 1 while every spike written is in time order */
} cs__spikes;

typedef struct {
    char *name;
    hid_t data;           /* /report/<pop>/data float32 [rows × n_elements] [mV] */
    hid_t time;           /* /report/<pop>/mapping/time float64 [3] [ms] */
    size_t n_elements;
    size_t elem_bytes;     /* [bytes] per stored sample: 4 (float32) or 8 (float64) */
    double tstart, tstop, dt; /* declared time axis [ms] */
    hsize_t axis_rows;     /* rows that mapping/time currently describes */
    hsize_t rows;          /* rows written */
    hsize_t rows_flushed;  /* rows written at the last flush */
    hsize_t expected_rows; /* rows implied by mapping/time [tstart, tstop) every dt */
} cs__report;

struct cs_output {
    char *path;
    hid_t file;
    hid_t metadata; /* /metadata */
    cs__spikes *spikes;
    size_t n_spikes;
    cs__report *reports;
    size_t n_reports;
    int io_failed; /* an earlier write failed: the file cannot be marked complete */
    int report_double; /* reports added from now on store float64 instead of float32 */
    int fd;             /* our own descriptor of the file, to reserve its space; -1 if none */
    haddr_t reserved;   /* [bytes] file space reserved (allocated on disk) so far */
    /* parallel files (cs_output_mpi.c) */
    void *comm;         /* MPI_Comm * (a duplicate, owned), NULL for a serial file */
    int rank, nrank;    /* 0 and 1 for a serial file */
    hid_t dxpl;         /* transfer property list: H5P_DEFAULT, or collective MPI-IO */
    /* the profile of a parallel file, written by rank 0 after the collective close */
    size_t prof_n;
    char **prof_names;
    double *prof_seconds, *prof_share;
};

/* Errors (cs_output_hdf5.c) */
cs_status cs__io_error(const char *path, const char *what);
cs_status cs__fail_io(cs_output *o, const char *what);
/* After a failed write (typically a full disk) nothing more is written: every further write
 * would fail too, and could only leave the file further from its state at the last flush. */
#define CS__STOP_IF_FAILED(o)                                                                 \
    CS_CHECK(!(o)->io_failed, CS_ERR_IO, "%s: an earlier write failed; nothing more is written", \
             (o)->path)
char *cs__strdup(const char *s);
void cs__close_id(hid_t *id, herr_t (*fn)(hid_t));
cs_status cs__check_name(const cs_output *o, const char *population);

/* After a failed HDF5 call, set its error stack aside while identifiers are closed (a
 * successful call clears it), then put it back for cs__io_error. */
hid_t cs__keep_error(herr_t e);
void cs__restore_error(hid_t stack);

/* HDF5 helpers (cs_output_hdf5.c): each returns a negative value on failure, leaving HDF5's
 * error stack. Attributes are metadata: on a parallel file every rank writes the same value. */
hid_t cs__utf8_string_type(void);
herr_t cs__write_string_attr(hid_t loc, const char *name, const char *value);
herr_t cs__write_double_attr(hid_t loc, const char *name, double value);
herr_t cs__write_uint8_attr(hid_t loc, const char *name, uint8_t value);
herr_t cs__write_sorting(hid_t group, uint8_t value);
/* A fixed 1-D dataset of n values; on a parallel file rank 0's values are stored. */
herr_t cs__write_fixed(const cs_output *o, hid_t loc, const char *name, hid_t file_type, hid_t mem_type,
                       hsize_t n, const void *values);
/* The whole of dataset d from values (rank 0's on a parallel file). */
herr_t cs__write_whole(const cs_output *o, hid_t d, hid_t mem_type, const void *values);
hid_t cs__create_extendible(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *cols,
                            const hsize_t *chunk, hid_t dapl);
/* Grow d to at + n rows and write rows [at + lo, at + lo + cnt) (of `cols` values each, rank 2;
 * or single values, rank 1) from values (the first of them). */
herr_t cs__append(const cs_output *o, hid_t d, hid_t mem_type, int rank, hsize_t at, hsize_t n, hsize_t cols,
                  hsize_t lo, hsize_t cnt, const void *values);
hsize_t cs__n_times(double tstart, double tstop, double dt);
herr_t cs__write_axis(const cs_output *o, cs__report *rp);
cs__spikes *cs__find_spikes(cs_output *o, const char *population);
cs__report *cs__find_report(cs_output *o, const char *population);

/* A report's chunks per band of CS__REPORT_CHUNK_ROWS rows, and their bytes on disk. */
static inline hsize_t cs__report_band_chunks(const cs__report *rp) {
    return (rp->n_elements + CS__REPORT_CHUNK_COLS - 1) / CS__REPORT_CHUNK_COLS;
}
static inline hsize_t cs__report_band_bytes(const cs__report *rp) {
    hsize_t cols = rp->n_elements < CS__REPORT_CHUNK_COLS ? rp->n_elements : CS__REPORT_CHUNK_COLS;
    return cs__report_band_chunks(rp) * CS__REPORT_CHUNK_ROWS * cols * rp->elem_bytes;
}
/* Bands of a report that n more rows start (each band's chunks are allocated with its first row). */
static inline hsize_t cs__report_new_bands(const cs__report *rp, hsize_t n) {
    return (rp->rows + n + CS__REPORT_CHUNK_ROWS - 1) / CS__REPORT_CHUNK_ROWS -
           (rp->rows + CS__REPORT_CHUNK_ROWS - 1) / CS__REPORT_CHUNK_ROWS;
}
/* A parallel file, before a collective call that grows it by `chunks` chunks of `bytes` in all
 * (parallel HDF5 allocates a dataset's chunks when its extent grows, inside the call, with
 * collective steps): rank 0 reserves the space and every rank learns the outcome, so that a
 * full disk fails every rank here with "PATH: what (cause)" instead of one rank inside the call
 * while the others wait in it. A serial file: nothing (cs_output.c). */
cs_status cs__reserve_growth(cs_output *o, hsize_t bytes, hsize_t chunks, const char *what);
/* cs__reserve_growth for n more rows of report rp */
static inline cs_status cs__reserve_rows(cs_output *o, const cs__report *rp, hsize_t n, const char *what) {
    const hsize_t bands = cs__report_new_bands(rp, n);
    return cs__reserve_growth(o, bands * cs__report_band_bytes(rp), bands * cs__report_band_chunks(rp), what);
}
/* [bytes] reserved for the object headers and indices of a group of the layout */
#define CS__LAYOUT_BYTES ((hsize_t)64 << 10)

/* Create the file through fapl with its groups and `status` (cs_output.c); on failure
 * o->file may still be open (cs_output_close releases it). */
cs_status cs__create_file(cs_output *o, hid_t fapl);

/* Agreement over the ranks of a parallel file (cs_output_mpi.c; identities for a serial one):
 * 1 on every rank if `flag` is set on any. */
int cs__par_any(const cs_output *o, int flag);
/* Rank 0's n bytes to every rank. */
void cs__par_bcast(const cs_output *o, void *buf, size_t n);
/* A copy of rank 0's string (free it), NULL when out of memory. */
char *cs__par_string(const cs_output *o, const char *s);
/* Release what a parallel file holds beyond the serial state (the communicator, dxpl). */
void cs__par_release(cs_output *o);
/* Agree on s: if any rank failed, every rank returns CS_ERR_IO and the file is failed. */
cs_status cs__par_agree(cs_output *o, cs_status s);

#endif
