/* Simulation output in the SONATA layout, written with the HDF5 C API (see cs_output.h and
 * docs/output-format.md).
 *
 * Everything appended goes straight to extendible chunked datasets; nothing of the run is kept
 * in memory beyond HDF5's bounded chunk cache and one epoch's spikes while they are sorted.
 * The file uses the default (oldest compatible) HDF5 format, whose superblock carries no
 * "open for writing" flag, so a process killed after cs_output_flush leaves a file that any
 * HDF5 reader opens as it was at that flush. */
#include "cs_output.h"

#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
};

/* ------------------------------------------------------------------------------------ */
/* Errors                                                                                */

typedef struct {
    char text[256];
} cs__reason;

/* Keep the innermost (lowest-level) message of HDF5's error stack: it names the real cause
 * ("No such file or directory", "Is a directory", ...). */
static herr_t cs__walk_cb(unsigned n, const H5E_error2_t *err, void *data) {
    cs__reason *r = data;
    if (n == 0 && err->desc) {
        const char *desc = err->desc;
        const char *q = strstr(desc, "error message = '");
        if (q) {
            q += strlen("error message = '");
            const char *end = strchr(q, '\'');
            size_t len = end ? (size_t)(end - q) : strlen(q);
            if (len >= sizeof r->text) len = sizeof r->text - 1;
            memcpy(r->text, q, len);
            r->text[len] = '\0';
        } else {
            snprintf(r->text, sizeof r->text, "%s", desc);
        }
        for (char *c = r->text; *c; ++c)
            if (*c == '\n' || *c == '\r') *c = ' ';
    }
    return 0;
}

/* Record "PATH: WHAT (HDF5's reason)" as a CS_ERR_IO and clear HDF5's error stack. */
static cs_status cs__io_error(const char *path, const char *what) {
    cs__reason r = {{0}};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, cs__walk_cb, &r);
    H5Eclear2(H5E_DEFAULT);
    if (r.text[0])
        return cs_error_set(CS_ERR_IO, "%s: %s (%s)", path, what, r.text);
    return cs_error_set(CS_ERR_IO, "%s: %s", path, what);
}

static cs_status cs__fail_io(cs_output *o, const char *what) {
    o->io_failed = 1;
    return cs__io_error(o->path, what);
}

/* After a failed write (typically a full disk) nothing more is written: every further write
 * would fail too, and could only leave the file further from its state at the last flush. */
#define CS__STOP_IF_FAILED(o)                                                                 \
    CS_CHECK(!(o)->io_failed, CS_ERR_IO, "%s: an earlier write failed; nothing more is written", \
             (o)->path)

static char *cs__strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static void cs__close_id(hid_t *id, herr_t (*fn)(hid_t)) {
    if (*id >= 0) fn(*id);
    *id = H5I_INVALID_HID;
}

/* A population name becomes an HDF5 group name: non-empty, no '/', not "." or "..". */
static cs_status cs__check_name(const cs_output *o, const char *population) {
    CS_CHECK(population && population[0], CS_ERR_INVALID, "%s: empty population name", o->path);
    CS_CHECK(!strchr(population, '/') && strcmp(population, ".") && strcmp(population, ".."),
             CS_ERR_INVALID, "%s: invalid population name '%s' (no '/', '.' or '..')", o->path,
             population);
    return CS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Small HDF5 helpers: each returns a negative value on failure, leaving HDF5's error stack. */

static hid_t cs__utf8_string_type(void) {
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return t;
    if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

/* Create or overwrite attribute `name` of `loc` with data of `type`, dataspace `space`. */
static herr_t cs__write_attr(hid_t loc, const char *name, hid_t type, hid_t space,
                             const void *value) {
    htri_t exists = H5Aexists(loc, name);
    if (exists < 0) return -1;
    if (exists && H5Adelete(loc, name) < 0) return -1;
    hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) return -1;
    herr_t e = H5Awrite(a, type, value);
    if (H5Aclose(a) < 0) e = -1;
    return e;
}

static herr_t cs__write_string_attr(hid_t loc, const char *name, const char *value) {
    hid_t t = cs__utf8_string_type();
    hid_t s = H5Screate(H5S_SCALAR);
    herr_t e = -1;
    if (t >= 0 && s >= 0) e = cs__write_attr(loc, name, t, s, &value);
    if (s >= 0) H5Sclose(s);
    if (t >= 0) H5Tclose(t);
    return e;
}

static herr_t cs__write_double_attr(hid_t loc, const char *name, double value) {
    hid_t s = H5Screate(H5S_SCALAR);
    if (s < 0) return -1;
    herr_t e = cs__write_attr(loc, name, H5T_NATIVE_DOUBLE, s, &value);
    H5Sclose(s);
    return e;
}

static herr_t cs__write_uint8_attr(hid_t loc, const char *name, uint8_t value) {
    hid_t s = H5Screate(H5S_SCALAR);
    if (s < 0) return -1;
    herr_t e = cs__write_attr(loc, name, H5T_STD_U8LE, s, &value);
    H5Sclose(s);
    return e;
}

/* The SONATA spike `sorting` attribute: an HDF5 enum {none=0, by_id=1, by_time=2} of uint8
 * (libsonata refuses a string here). */
static herr_t cs__write_sorting(hid_t group, uint8_t value) {
    hid_t t = H5Tenum_create(H5T_NATIVE_UINT8);
    if (t < 0) return -1;
    uint8_t v;
    herr_t e = 0;
    v = CS__SORT_NONE;
    if (H5Tenum_insert(t, "none", &v) < 0) e = -1;
    v = CS__SORT_BY_ID;
    if (e >= 0 && H5Tenum_insert(t, "by_id", &v) < 0) e = -1;
    v = CS__SORT_BY_TIME;
    if (e >= 0 && H5Tenum_insert(t, "by_time", &v) < 0) e = -1;
    if (e >= 0) {
        hid_t s = H5Screate(H5S_SCALAR);
        e = s < 0 ? -1 : cs__write_attr(group, "sorting", t, s, &value);
        if (s >= 0) H5Sclose(s);
    }
    H5Tclose(t);
    return e;
}

/* A fixed 1-D dataset holding `n` values of `file_type` from memory of `mem_type`. */
static herr_t cs__write_fixed(hid_t loc, const char *name, hid_t file_type, hid_t mem_type,
                              hsize_t n, const void *values) {
    hid_t s = H5Screate_simple(1, &n, NULL);
    if (s < 0) return -1;
    hid_t d = H5Dcreate2(loc, name, file_type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = -1;
    if (d >= 0) {
        e = n > 0 ? H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) : 0;
        if (H5Dclose(d) < 0) e = -1;
    }
    H5Sclose(s);
    return e;
}

/* An empty extendible dataset of `rank` dims (the first unlimited), chunked as `chunk`. */
static hid_t cs__create_extendible(hid_t loc, const char *name, hid_t type, int rank,
                                   const hsize_t *cols, const hsize_t *chunk, hid_t dapl) {
    hsize_t dims[2] = {0, rank > 1 ? cols[0] : 0};
    hsize_t maxdims[2] = {H5S_UNLIMITED, rank > 1 ? cols[0] : 0};
    hid_t s = H5Screate_simple(rank, dims, maxdims);
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = H5I_INVALID_HID;
    if (s >= 0 && p >= 0 && H5Pset_chunk(p, rank, chunk) >= 0)
        d = H5Dcreate2(loc, name, type, s, H5P_DEFAULT, p, dapl);
    if (p >= 0) H5Pclose(p);
    if (s >= 0) H5Sclose(s);
    return d;
}

/* Append `n` rows (of `cols` values each, rank 2; or n values, rank 1) at row `at`. */
static herr_t cs__append(hid_t d, hid_t mem_type, int rank, hsize_t at, hsize_t n, hsize_t cols,
                         const void *values) {
    hsize_t newdims[2] = {at + n, cols};
    if (H5Dset_extent(d, newdims) < 0) return -1;
    hid_t fs = H5Dget_space(d);
    if (fs < 0) return -1;
    hsize_t start[2] = {at, 0};
    hsize_t count[2] = {n, cols};
    hid_t ms = H5Screate_simple(rank, count, NULL);
    herr_t e = -1;
    if (ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0)
        e = H5Dwrite(d, mem_type, ms, fs, H5P_DEFAULT, values);
    if (ms >= 0) H5Sclose(ms);
    H5Sclose(fs);
    return e;
}

/* Number of samples libsonata places on [tstart, tstop) every dt (its own loop, so the two
 * agree exactly). */
static hsize_t cs__n_times(double tstart, double tstop, double dt) {
    hsize_t n = 0;
    for (double t = tstart; t < tstop - CS__EPSILON; t += dt) ++n;
    return n;
}

/* Make mapping/time describe exactly the rows written so far, so that a reader (libsonata
 * included) can read an incomplete file: [tstart, tstop, dt] once all rows are there, else
 * [tstart, tstart + rows*dt, dt] (nudged to half a step past the last sample should rounding
 * make libsonata's loop count differently). */
static herr_t cs__write_axis(cs__report *rp) {
    if (rp->axis_rows == rp->rows && rp->rows != 0) return 0;
    double stop = rp->tstop; /* [ms] */
    if (rp->rows != rp->expected_rows) {
        stop = rp->tstart + (double)rp->rows * rp->dt;
        if (cs__n_times(rp->tstart, stop, rp->dt) != rp->rows)
            stop = rp->tstart + ((double)rp->rows - 0.5) * rp->dt + CS__EPSILON;
    }
    const double time[3] = {rp->tstart, stop, rp->dt}; /* [ms] */
    if (H5Dwrite(rp->time, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, time) < 0) return -1;
    rp->axis_rows = rp->rows;
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Public API                                                                            */

static cs__spikes *cs__find_spikes(cs_output *o, const char *population) {
    for (size_t i = 0; i < o->n_spikes; ++i)
        if (strcmp(o->spikes[i].name, population) == 0) return &o->spikes[i];
    return NULL;
}

static cs__report *cs__find_report(cs_output *o, const char *population) {
    for (size_t i = 0; i < o->n_reports; ++i)
        if (strcmp(o->reports[i].name, population) == 0) return &o->reports[i];
    return NULL;
}

cs_status cs_output_open(const char *path, cs_output **out) {
    CS_CHECK(out, CS_ERR_INVALID, "cs_output_open: no output pointer");
    *out = NULL;
    CS_CHECK(path && path[0], CS_ERR_INVALID, "cs_output_open: empty output path");
    /* HDF5 1.10 keeps a dangling file ID when H5Fclose fails (a flush on a full disk): its
     * exit handler then crashes on it (H5F__close_cb from H5_term_library). Every file this
     * library opens is closed explicitly, so the handler has nothing to do: skip it. Effective
     * only before HDF5's first use in the process; harmless (a no-op) after. */
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors become messages, never stderr dumps */

    cs_output *o = calloc(1, sizeof *o);
    char *p = cs__strdup(path);
    if (!o || !p) {
        free(o);
        free(p);
        return cs_error_set(CS_ERR_NOMEM, "%s: out of memory opening the output", path);
    }
    o->path = p;
    o->metadata = H5I_INVALID_HID;
    o->fd = -1;
    o->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (o->file < 0) {
        cs_status s = cs__io_error(path, "cannot create the output file");
        /* an empty file left by a failed create (a full disk) is no HDF5 file: remove it */
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) remove(path);
        free(o->path);
        free(o);
        return s;
    }
    hid_t g1 = H5Gcreate2(o->file, "spikes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g2 = H5Gcreate2(o->file, "report", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    o->metadata = H5Gcreate2(o->file, "metadata", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int ok = g1 >= 0 && g2 >= 0 && o->metadata >= 0 &&
             cs__write_string_attr(o->file, "status", "incomplete") >= 0;
    if (g1 >= 0) H5Gclose(g1);
    if (g2 >= 0) H5Gclose(g2);
    o->fd = open(path, O_WRONLY);
    if (!ok) {
        cs_status s = cs__io_error(path, "cannot write the output file's layout");
        cs_output_close(o, 0);
        return s;
    }
    *out = o;
    return CS_OK;
}

cs_status cs_output_add_spike_population(cs_output *o, const char *population) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_add_spike_population: no output");
    CS__STOP_IF_FAILED(o);
    CS_TRY(cs__check_name(o, population));
    CS_CHECK(!cs__find_spikes(o, population), CS_ERR_INVALID,
             "%s: spike population '%s' declared twice", o->path, population);
    cs__spikes *grown = realloc(o->spikes, (o->n_spikes + 1) * sizeof *grown);
    CS_CHECK(grown, CS_ERR_NOMEM, "%s: out of memory", o->path);
    o->spikes = grown;
    cs__spikes sp = {.name = cs__strdup(population),
                     .group = H5I_INVALID_HID,
                     .timestamps = H5I_INVALID_HID,
                     .node_ids = H5I_INVALID_HID,
                     .last_time = -INFINITY,
                     .by_time = 1};
    CS_CHECK(sp.name, CS_ERR_NOMEM, "%s: out of memory", o->path);

    char where[64 + 1024];
    snprintf(where, sizeof where, "cannot create /spikes/%s", population);
    hid_t spikes = H5Gopen2(o->file, "spikes", H5P_DEFAULT);
    if (spikes >= 0) {
        sp.group = H5Gcreate2(spikes, population, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Gclose(spikes);
    }
    const hsize_t chunk = CS__SPIKE_CHUNK;
    int ok = sp.group >= 0 && cs__write_sorting(sp.group, CS__SORT_BY_TIME) >= 0;
    if (ok) {
        sp.timestamps = cs__create_extendible(sp.group, "timestamps", H5T_IEEE_F64LE, 1, NULL,
                                              &chunk, H5P_DEFAULT);
        sp.node_ids = cs__create_extendible(sp.group, "node_ids", H5T_STD_U64LE, 1, NULL,
                                            &chunk, H5P_DEFAULT);
        ok = sp.timestamps >= 0 && sp.node_ids >= 0 &&
             cs__write_string_attr(sp.timestamps, "units", "ms") >= 0;
    }
    if (!ok) {
        cs_status s = cs__fail_io(o, where);
        cs__close_id(&sp.timestamps, H5Dclose);
        cs__close_id(&sp.node_ids, H5Dclose);
        cs__close_id(&sp.group, H5Gclose);
        free(sp.name);
        return s;
    }
    o->spikes[o->n_spikes++] = sp;
    return CS_OK;
}

cs_status cs_output_add_report(cs_output *o, const char *population, size_t n_nodes,
                               const uint64_t *node_ids, const uint64_t *index_pointers,
                               const uint32_t *element_ids, double tstart, double tstop,
                               double dt) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_add_report: no output");
    CS__STOP_IF_FAILED(o);
    CS_TRY(cs__check_name(o, population));
    CS_CHECK(!cs__find_report(o, population), CS_ERR_INVALID,
             "%s: report for population '%s' declared twice", o->path, population);
    CS_CHECK(n_nodes > 0 && node_ids && index_pointers && element_ids, CS_ERR_INVALID,
             "%s: report '%s' needs at least one node with its node_ids, index_pointers and "
             "element_ids", o->path, population);
    CS_CHECK(index_pointers[0] == 0, CS_ERR_INVALID,
             "%s: report '%s': index_pointers[0] is %llu, must be 0", o->path, population,
             (unsigned long long)index_pointers[0]);
    int sorted = 1;
    for (size_t k = 0; k < n_nodes; ++k) {
        CS_CHECK(index_pointers[k + 1] >= index_pointers[k], CS_ERR_INVALID,
                 "%s: report '%s': index_pointers decrease at node %zu", o->path, population, k);
        if (k > 0 && node_ids[k] <= node_ids[k - 1]) sorted = 0;
    }
    const size_t n_elements = (size_t)index_pointers[n_nodes];
    CS_CHECK(n_elements > 0, CS_ERR_INVALID, "%s: report '%s' has no elements", o->path,
             population);
    CS_CHECK(isfinite(tstart) && isfinite(tstop) && isfinite(dt) && dt > 0 && tstop > tstart,
             CS_ERR_INVALID,
             "%s: report '%s': bad time axis tstart=%g tstop=%g dt=%g [ms] (need dt > 0 and "
             "tstop > tstart)", o->path, population, tstart, tstop, dt);
    CS_CHECK((tstop - tstart) / dt < 1e12, CS_ERR_INVALID,
             "%s: report '%s': %g samples is too many", o->path, population,
             (tstop - tstart) / dt);
    cs__report *grown = realloc(o->reports, (o->n_reports + 1) * sizeof *grown);
    CS_CHECK(grown, CS_ERR_NOMEM, "%s: out of memory", o->path);
    o->reports = grown;
    cs__report rp = {.name = cs__strdup(population),
                     .data = H5I_INVALID_HID,
                     .time = H5I_INVALID_HID,
                     .n_elements = n_elements,
                     .elem_bytes = o->report_double ? 8 : 4,
                     .tstart = tstart,
                     .tstop = tstop,
                     .dt = dt,
                     .expected_rows = cs__n_times(tstart, tstop, dt)};
    CS_CHECK(rp.name, CS_ERR_NOMEM, "%s: out of memory", o->path);

    char where[64 + 1024];
    snprintf(where, sizeof where, "cannot create /report/%s", population);
    hid_t report = H5I_INVALID_HID, grp = H5I_INVALID_HID, mapping = H5I_INVALID_HID;
    hid_t dapl = H5I_INVALID_HID, ds = H5I_INVALID_HID;
    int ok = 0;
    do {
        report = H5Gopen2(o->file, "report", H5P_DEFAULT);
        if (report < 0) break;
        grp = H5Gcreate2(report, population, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (grp < 0) break;
        mapping = H5Gcreate2(grp, "mapping", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (mapping < 0) break;
        if (cs__write_fixed(mapping, "node_ids", H5T_STD_U64LE, H5T_NATIVE_UINT64,
                            (hsize_t)n_nodes, node_ids) < 0)
            break;
        ds = H5Dopen2(mapping, "node_ids", H5P_DEFAULT);
        /* libsonata's hint that node_ids ascend (it sorts an index otherwise). */
        if (ds < 0 || cs__write_uint8_attr(ds, "sorted", (uint8_t)sorted) < 0) break;
        cs__close_id(&ds, H5Dclose);
        if (cs__write_fixed(mapping, "index_pointers", H5T_STD_U64LE, H5T_NATIVE_UINT64,
                            (hsize_t)n_nodes + 1, index_pointers) < 0)
            break;
        if (cs__write_fixed(mapping, "element_ids", H5T_STD_U32LE, H5T_NATIVE_UINT32,
                            (hsize_t)n_elements, element_ids) < 0)
            break;
        const double time[3] = {tstart, tstop, dt}; /* [ms] */
        if (cs__write_fixed(mapping, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, time) < 0)
            break;
        rp.time = H5Dopen2(mapping, "time", H5P_DEFAULT);
        if (rp.time < 0 || cs__write_string_attr(rp.time, "units", "ms") < 0 ||
            cs__write_axis(&rp) < 0)
            break;

        hsize_t cols = (hsize_t)n_elements;
        hsize_t chunk[2] = {CS__REPORT_CHUNK_ROWS,
                            cols < CS__REPORT_CHUNK_COLS ? cols : CS__REPORT_CHUNK_COLS};
        size_t elem = o->report_double ? sizeof(double) : sizeof(float);
        size_t band = (size_t)CS__REPORT_CHUNK_ROWS * n_elements * elem; /* [bytes] */
        size_t cache = band < ((size_t)1 << 20) ? ((size_t)1 << 20) : band;
        if (cache > CS__REPORT_CACHE_MAX) cache = CS__REPORT_CACHE_MAX;
        size_t chunks_in_cache = cache / ((size_t)chunk[0] * (size_t)chunk[1] * elem);
        dapl = H5Pcreate(H5P_DATASET_ACCESS);
        if (dapl < 0 || H5Pset_chunk_cache(dapl, 101 * (chunks_in_cache + 1), cache, 1.0) < 0)
            break;
        rp.data = cs__create_extendible(grp, "data", o->report_double ? H5T_IEEE_F64LE : H5T_IEEE_F32LE,
                                        2, &cols, chunk, dapl);
        if (rp.data < 0 || cs__write_string_attr(rp.data, "units", "mV") < 0) break;
        ok = 1;
    } while (0);
    cs__close_id(&ds, H5Dclose);
    cs__close_id(&dapl, H5Pclose);
    cs__close_id(&mapping, H5Gclose);
    cs__close_id(&grp, H5Gclose);
    cs__close_id(&report, H5Gclose);
    if (!ok) {
        cs_status s = cs__fail_io(o, where);
        cs__close_id(&rp.data, H5Dclose);
        cs__close_id(&rp.time, H5Dclose);
        free(rp.name);
        return s;
    }
    o->reports[o->n_reports++] = rp;
    return CS_OK;
}

typedef struct {
    double t;   /* [ms] */
    uint64_t id;
} cs__spike;

static int cs__spike_cmp(const void *a, const void *b) {
    const cs__spike *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

cs_status cs_output_append_spikes(cs_output *o, const char *population, size_t n,
                                  const double *times, const uint64_t *node_ids) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_append_spikes: no output");
    CS__STOP_IF_FAILED(o);
    CS_CHECK(population, CS_ERR_INVALID, "%s: spikes appended without a population", o->path);
    cs__spikes *sp = cs__find_spikes(o, population);
    CS_CHECK(sp, CS_ERR_INVALID, "%s: spikes appended to undeclared population '%s'", o->path,
             population);
    if (n == 0) return CS_OK;
    CS_CHECK(times && node_ids, CS_ERR_INVALID, "%s: spikes of '%s' without times or node ids",
             o->path, population);
    for (size_t i = 0; i < n; ++i)
        CS_CHECK(isfinite(times[i]), CS_ERR_INVALID,
                 "%s: spike %zu of '%s' (node %llu) has a non-finite time", o->path, i,
                 population, (unsigned long long)node_ids[i]);

    /* Sort this epoch's spikes by time (then node id); the file stays sorted by time as long
     * as epochs arrive in order, otherwise `sorting` falls back to "none". */
    cs__spike *buf = malloc(n * sizeof *buf);
    double *t = malloc(n * sizeof *t);
    uint64_t *id = malloc(n * sizeof *id);
    if (!buf || !t || !id) {
        free(buf);
        free(t);
        free(id);
        return cs_error_set(CS_ERR_NOMEM, "%s: out of memory for %zu spikes", o->path, n);
    }
    for (size_t i = 0; i < n; ++i) buf[i] = (cs__spike){times[i], node_ids[i]};
    qsort(buf, n, sizeof *buf, cs__spike_cmp);
    for (size_t i = 0; i < n; ++i) {
        t[i] = buf[i].t;
        id[i] = buf[i].id;
    }
    free(buf);

    cs_status s = CS_OK;
    if (cs__append(sp->timestamps, H5T_NATIVE_DOUBLE, 1, sp->n, (hsize_t)n, 0, t) < 0 ||
        cs__append(sp->node_ids, H5T_NATIVE_UINT64, 1, sp->n, (hsize_t)n, 0, id) < 0) {
        char what[64 + 1024];
        snprintf(what, sizeof what, "cannot append %zu spikes to /spikes/%s", n, population);
        s = cs__fail_io(o, what);
    } else {
        sp->n += (hsize_t)n;
        if (sp->by_time && t[0] < sp->last_time) {
            sp->by_time = 0;
            if (cs__write_sorting(sp->group, CS__SORT_NONE) < 0) {
                char what[64 + 1024];
                snprintf(what, sizeof what, "cannot update /spikes/%s sorting", population);
                s = cs__fail_io(o, what);
            }
        }
        if (t[n - 1] > sp->last_time) sp->last_time = t[n - 1];
    }
    free(t);
    free(id);
    return s;
}

cs_status cs_output_set_report_precision(cs_output *o, int bits) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_set_report_precision: no output");
    CS_CHECK(bits == 32 || bits == 64, CS_ERR_INVALID, "%s: report precision must be 32 or 64 bits (got %d)",
             o->path, bits);
    o->report_double = bits == 64;
    return CS_OK;
}

/* Append rows given in memory type mem (HDF5 converts to the dataset's type). */
static cs_status cs__append_samples(cs_output *o, const char *population, size_t n_times,
                                    hid_t mem, const void *rows) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_append_samples: no output");
    CS__STOP_IF_FAILED(o);
    CS_CHECK(population, CS_ERR_INVALID, "%s: samples appended without a population", o->path);
    cs__report *rp = cs__find_report(o, population);
    CS_CHECK(rp, CS_ERR_INVALID, "%s: samples appended to undeclared report population '%s'",
             o->path, population);
    if (n_times == 0) return CS_OK;
    CS_CHECK(rows, CS_ERR_INVALID, "%s: samples of '%s' without data", o->path, population);
    CS_CHECK(rp->rows + n_times <= rp->expected_rows, CS_ERR_INVALID,
             "%s: report '%s': %llu rows would exceed the %llu samples of its time axis",
             o->path, population, (unsigned long long)(rp->rows + n_times),
             (unsigned long long)rp->expected_rows);
    if (cs__append(rp->data, mem, 2, rp->rows, (hsize_t)n_times,
                   (hsize_t)rp->n_elements, rows) < 0) {
        char what[64 + 1024];
        snprintf(what, sizeof what, "cannot append %zu rows to /report/%s/data", n_times,
                 population);
        return cs__fail_io(o, what);
    }
    rp->rows += (hsize_t)n_times;
    return CS_OK;
}

cs_status cs_output_append_samples(cs_output *o, const char *population, size_t n_times,
                                   const float *rows) {
    return cs__append_samples(o, population, n_times, H5T_NATIVE_FLOAT, rows);
}

cs_status cs_output_append_samples_d(cs_output *o, const char *population, size_t n_times,
                                     const double *rows) {
    return cs__append_samples(o, population, n_times, H5T_NATIVE_DOUBLE, rows);
}

cs_status cs_output_set_meta_string(cs_output *o, const char *name, const char *value) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_set_meta_string: no output");
    CS__STOP_IF_FAILED(o);
    CS_CHECK(name && name[0] && value, CS_ERR_INVALID,
             "%s: metadata needs a non-empty name and a value", o->path);
    if (cs__write_string_attr(o->metadata, name, value) < 0) {
        char what[64 + 1024];
        snprintf(what, sizeof what, "cannot write metadata '%s'", name);
        return cs__fail_io(o, what);
    }
    return CS_OK;
}

cs_status cs_output_set_meta_double(cs_output *o, const char *name, double value) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_set_meta_double: no output");
    CS__STOP_IF_FAILED(o);
    CS_CHECK(name && name[0], CS_ERR_INVALID, "%s: metadata needs a non-empty name", o->path);
    if (cs__write_double_attr(o->metadata, name, value) < 0) {
        char what[64 + 1024];
        snprintf(what, sizeof what, "cannot write metadata '%s'", name);
        return cs__fail_io(o, what);
    }
    return CS_OK;
}

cs_status cs_output_write_profile(cs_output *o, size_t nphase, const char *const *names,
                                  const double *seconds, const double *share) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_write_profile: no output");
    CS__STOP_IF_FAILED(o);
    CS_CHECK(nphase == 0 || (names && seconds && share), CS_ERR_INVALID,
             "%s: profile without names, seconds or shares", o->path);
    for (size_t i = 0; i < nphase; ++i)
        CS_CHECK(names[i], CS_ERR_INVALID, "%s: profile phase %zu has no name", o->path, i);

    hid_t prof = H5I_INVALID_HID, st = H5I_INVALID_HID;
    int ok = 0;
    do {
        /* Written again, the profile replaces the previous one. */
        htri_t exists = H5Lexists(o->file, "profile", H5P_DEFAULT);
        if (exists < 0 || (exists > 0 && H5Ldelete(o->file, "profile", H5P_DEFAULT) < 0)) break;
        prof = H5Gcreate2(o->file, "profile", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (prof < 0) break;
        st = cs__utf8_string_type();
        if (st < 0) break;
        if (cs__write_fixed(prof, "phase", st, st, (hsize_t)nphase, names) < 0) break;
        if (cs__write_fixed(prof, "seconds", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)nphase,
                            seconds) < 0)
            break;
        if (cs__write_fixed(prof, "share", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)nphase,
                            share) < 0)
            break;
        hid_t d = H5Dopen2(prof, "seconds", H5P_DEFAULT);
        if (d < 0) break;
        herr_t e = cs__write_string_attr(d, "units", "s");
        H5Dclose(d);
        if (e < 0) break;
        ok = 1;
    } while (0);
    cs__close_id(&st, H5Tclose);
    cs__close_id(&prof, H5Gclose);
    if (!ok) return cs__fail_io(o, "cannot write /profile");
    return CS_OK;
}

/* Allocate on disk every byte HDF5 has assigned so far, before a flush writes metadata there.
 * A flush writes metadata in address order and stops at the first failed write: on a full
 * disk it would leave headers pointing at objects past the stored end of file (unreadable).
 * Reserved first, the flush cannot run out of space; if the reservation fails, nothing is
 * flushed and the file stays as it was at the previous flush. */
static cs_status cs__reserve(cs_output *o) {
    haddr_t eoa = 0;
    if (o->fd < 0 || H5Fget_eoa(o->file, &eoa) < 0) {
        H5Eclear2(H5E_DEFAULT);
        return CS_OK;
    }
    /* The flush first allocates the chunks still in the chunk caches (at most those touched
     * since the last flush) and their index nodes past eoa: reserve room for them too. */
    hsize_t chunks = 0, bytes = 0; /* [bytes] */
    for (size_t i = 0; i < o->n_spikes; ++i) {
        const cs__spikes *sp = &o->spikes[i];
        if (sp->n == sp->n_flushed) continue;
        hsize_t c = (sp->n - 1) / CS__SPIKE_CHUNK - sp->n_flushed / CS__SPIKE_CHUNK + 1;
        chunks += 2 * c;
        bytes += 2 * c * CS__SPIKE_CHUNK * 8; /* timestamps and node_ids, 8 bytes each */
    }
    for (size_t i = 0; i < o->n_reports; ++i) {
        const cs__report *rp = &o->reports[i];
        if (rp->rows == rp->rows_flushed) continue;
        hsize_t bands = (rp->rows - 1) / CS__REPORT_CHUNK_ROWS -
                        rp->rows_flushed / CS__REPORT_CHUNK_ROWS + 1;
        hsize_t per_band = (rp->n_elements + CS__REPORT_CHUNK_COLS - 1) / CS__REPORT_CHUNK_COLS;
        size_t elem = rp->elem_bytes;
        chunks += bands * per_band;
        bytes += bands * per_band * CS__REPORT_CHUNK_ROWS *
                 (rp->n_elements < CS__REPORT_CHUNK_COLS ? rp->n_elements : CS__REPORT_CHUNK_COLS) *
                 elem;
    }
    haddr_t want = eoa + bytes + 1024 * chunks + ((haddr_t)16 << 10); /* [bytes] */
    if (want <= o->reserved) return CS_OK;
    int e = posix_fallocate(o->fd, (off_t)o->reserved, (off_t)(want - o->reserved));
    if (e == ENOSPC || e == EFBIG || e == EIO || e == EDQUOT) {
        o->io_failed = 1;
        return cs_error_set(CS_ERR_IO, "%s: cannot flush (%s)", o->path, strerror(e));
    }
    if (e == 0) o->reserved = want; /* otherwise (not supported here): flush unreserved */
    return CS_OK;
}

cs_status cs_output_flush(cs_output *o) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_flush: no output");
    CS__STOP_IF_FAILED(o);
    for (size_t i = 0; i < o->n_reports; ++i)
        if (cs__write_axis(&o->reports[i]) < 0) return cs__fail_io(o, "cannot update a time axis");
    CS_TRY(cs__reserve(o));
    if (H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0) return cs__fail_io(o, "cannot flush");
    for (size_t i = 0; i < o->n_spikes; ++i) o->spikes[i].n_flushed = o->spikes[i].n;
    for (size_t i = 0; i < o->n_reports; ++i) o->reports[i].rows_flushed = o->reports[i].rows;
    return CS_OK;
}

cs_status cs_output_close(cs_output *o, int complete) {
    if (!o) return CS_OK;
    cs_status s = CS_OK;
    int flushed = 0;
    if (complete && o->file >= 0) {
        for (size_t i = 0; i < o->n_reports && s == CS_OK; ++i)
            if (o->reports[i].rows != o->reports[i].expected_rows)
                s = cs_error_set(CS_ERR_INVALID,
                                 "%s: report '%s' has %llu rows but its time axis has %llu "
                                 "samples; file left marked incomplete",
                                 o->path, o->reports[i].name,
                                 (unsigned long long)o->reports[i].rows,
                                 (unsigned long long)o->reports[i].expected_rows);
        if (s == CS_OK && o->io_failed)
            s = cs_error_set(CS_ERR_IO, "%s: an earlier write failed; file left marked incomplete",
                             o->path);
        /* everything else reaches the file before it is called complete, so a failure here
         * leaves "incomplete" on disk */
        if (s == CS_OK) {
            s = cs_output_flush(o);
            flushed = 1;
        }
        if (s == CS_OK && cs__write_string_attr(o->file, "status", "complete") < 0)
            s = cs__fail_io(o, "cannot mark the file complete");
    }
    if (!flushed && o->file >= 0 && !o->io_failed) {
        /* what a failed run wrote, flushed now so a full disk shows here, before any close */
        cs_status e = cs_output_flush(o);
        if (s == CS_OK) s = e;
    }
    /* After a failed write the file is left as it was at the last flush: closing any HDF5
     * object would flush it again, part-way on a full disk. Its handles are abandoned (the
     * process is about to report the error; cs_output_open skips HDF5's exit handler). */
    const int keep_file = !o->io_failed;
    for (size_t i = 0; i < o->n_spikes; ++i) {
        if (keep_file) {
            cs__close_id(&o->spikes[i].timestamps, H5Dclose);
            cs__close_id(&o->spikes[i].node_ids, H5Dclose);
            cs__close_id(&o->spikes[i].group, H5Gclose);
        }
        free(o->spikes[i].name);
    }
    for (size_t i = 0; i < o->n_reports; ++i) {
        if (keep_file && o->file >= 0 && cs__write_axis(&o->reports[i]) < 0) {
            cs_status e = cs__io_error(o->path, "cannot update a time axis");
            if (s == CS_OK) s = e;
        }
        if (keep_file) {
            cs__close_id(&o->reports[i].time, H5Dclose);
            cs__close_id(&o->reports[i].data, H5Dclose);
        }
        free(o->reports[i].name);
    }
    if (keep_file) {
        cs__close_id(&o->metadata, H5Gclose);
        if (o->file >= 0 && cs__reserve(o) != CS_OK) {
            if (s == CS_OK) s = CS_ERR_IO; /* cs__reserve recorded the message */
        } else if (o->file >= 0 && H5Fclose(o->file) < 0) {
            cs_status e = cs__io_error(o->path, "cannot close the output file");
            if (s == CS_OK) s = e;
        }
    }
    if (o->fd >= 0) close(o->fd);
    free(o->spikes);
    free(o->reports);
    free(o->path);
    free(o);
    return s;
}
