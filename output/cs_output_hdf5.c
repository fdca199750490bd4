/* Errors and small HDF5 helpers of the writer (see cs_output_internal.h). */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_output_internal.h"

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
cs_status cs__io_error(const char *path, const char *what) {
    cs__reason r = {{0}};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, cs__walk_cb, &r);
    H5Eclear2(H5E_DEFAULT);
    if (r.text[0])
        return cs_error_set(CS_ERR_IO, "%s: %s (%s)", path, what, r.text);
    return cs_error_set(CS_ERR_IO, "%s: %s", path, what);
}

cs_status cs__fail_io(cs_output *o, const char *what) {
    o->io_failed = 1;
    return cs__io_error(o->path, what);
}

char *cs__strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

void cs__close_id(hid_t *id, herr_t (*fn)(hid_t)) {
    if (*id >= 0) fn(*id);
    *id = H5I_INVALID_HID;
}

/* A population name becomes an HDF5 group name: non-empty, no '/', not "." or "..". */
cs_status cs__check_name(const cs_output *o, const char *population) {
    CS_CHECK(population && population[0], CS_ERR_INVALID, "%s: empty population name", o->path);
    CS_CHECK(!strchr(population, '/') && strcmp(population, ".") && strcmp(population, ".."),
             CS_ERR_INVALID, "%s: invalid population name '%s' (no '/', '.' or '..')", o->path,
             population);
    return CS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Small HDF5 helpers                                                                    */

/* Every HDF5 API call that succeeds clears the error stack: after a failure, the stack is set
 * aside (cs__keep_error) while identifiers are closed, then put back (cs__restore_error), so
 * cs__io_error still finds the cause ("No space left on device"). */
hid_t cs__keep_error(herr_t e) {
    return e < 0 ? H5Eget_current_stack() : H5I_INVALID_HID;
}

void cs__restore_error(hid_t stack) {
    if (stack >= 0) H5Eset_current_stack(stack);
}

hid_t cs__utf8_string_type(void) {
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
    hid_t es = cs__keep_error(e);
    if (H5Aclose(a) < 0) e = -1;
    cs__restore_error(es);
    return e;
}

herr_t cs__write_string_attr(hid_t loc, const char *name, const char *value) {
    hid_t t = cs__utf8_string_type();
    hid_t s = H5Screate(H5S_SCALAR);
    herr_t e = -1;
    if (t >= 0 && s >= 0) e = cs__write_attr(loc, name, t, s, &value);
    if (s >= 0) H5Sclose(s);
    if (t >= 0) H5Tclose(t);
    return e;
}

herr_t cs__write_double_attr(hid_t loc, const char *name, double value) {
    hid_t s = H5Screate(H5S_SCALAR);
    if (s < 0) return -1;
    herr_t e = cs__write_attr(loc, name, H5T_NATIVE_DOUBLE, s, &value);
    H5Sclose(s);
    return e;
}

herr_t cs__write_uint8_attr(hid_t loc, const char *name, uint8_t value) {
    hid_t s = H5Screate(H5S_SCALAR);
    if (s < 0) return -1;
    herr_t e = cs__write_attr(loc, name, H5T_STD_U8LE, s, &value);
    H5Sclose(s);
    return e;
}

/* The SONATA spike `sorting` attribute: an HDF5 enum {none=0, by_id=1, by_time=2} of uint8
 * (libsonata refuses a string here). */
herr_t cs__write_sorting(hid_t group, uint8_t value) {
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

herr_t cs__write_whole(const cs_output *o, hid_t d, hid_t mem_type, const void *values) {
    if (o->rank == 0) return H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, o->dxpl, values);
    /* the other ranks of a parallel file take part in the collective write with nothing */
    hid_t fs = H5Dget_space(d);
    if (fs < 0) return -1;
    herr_t e = H5Sselect_none(fs);
    if (e >= 0) e = H5Dwrite(d, mem_type, fs, fs, o->dxpl, values);
    hid_t es = cs__keep_error(e);
    H5Sclose(fs);
    cs__restore_error(es);
    return e;
}

herr_t cs__write_fixed(const cs_output *o, hid_t loc, const char *name, hid_t file_type, hid_t mem_type,
                       hsize_t n, const void *values) {
    hid_t s = H5Screate_simple(1, &n, NULL);
    if (s < 0) return -1;
    hid_t d = H5Dcreate2(loc, name, file_type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = -1;
    if (d >= 0) {
        e = n > 0 ? cs__write_whole(o, d, mem_type, values) : 0;
    }
    hid_t es = cs__keep_error(e);
    if (d >= 0 && H5Dclose(d) < 0) e = -1;
    H5Sclose(s);
    cs__restore_error(es);
    return e;
}

/* An empty extendible dataset of `rank` dims (the first unlimited), chunked as `chunk`. */
hid_t cs__create_extendible(hid_t loc, const char *name, hid_t type, int rank,
                            const hsize_t *cols, const hsize_t *chunk, hid_t dapl) {
    hsize_t dims[2] = {0, rank > 1 ? cols[0] : 0};
    hsize_t maxdims[2] = {H5S_UNLIMITED, rank > 1 ? cols[0] : 0};
    hid_t s = H5Screate_simple(rank, dims, maxdims);
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = H5I_INVALID_HID;
    if (s >= 0 && p >= 0 && H5Pset_chunk(p, rank, chunk) >= 0)
        d = H5Dcreate2(loc, name, type, s, H5P_DEFAULT, p, dapl);
    hid_t es = cs__keep_error(d < 0 ? -1 : 0);
    if (p >= 0) H5Pclose(p);
    if (s >= 0) H5Sclose(s);
    cs__restore_error(es);
    return d;
}

herr_t cs__append(const cs_output *o, hid_t d, hid_t mem_type, int rank, hsize_t at, hsize_t n, hsize_t cols,
                  hsize_t lo, hsize_t cnt, const void *values) {
    hsize_t newdims[2] = {at + n, cols};
    if (H5Dset_extent(d, newdims) < 0) return -1;
    hid_t fs = H5Dget_space(d);
    if (fs < 0) return -1;
    hsize_t start[2] = {at + lo, 0};
    hsize_t count[2] = {cnt ? cnt : 1, cols};
    hid_t ms = H5Screate_simple(rank, count, NULL);
    herr_t e = -1;
    if (ms >= 0) {
        if (cnt == 0) /* a rank with nothing to write still takes part in a collective write */
            e = H5Sselect_none(fs) < 0 || H5Sselect_none(ms) < 0 ? -1 : 0;
        else
            e = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
        if (e >= 0) e = H5Dwrite(d, mem_type, ms, fs, o->dxpl, values);
    }
    hid_t es = cs__keep_error(e);
    if (ms >= 0) H5Sclose(ms);
    H5Sclose(fs);
    cs__restore_error(es);
    return e;
}

/* Number of samples libsonata places on [tstart, tstop) every dt (its own loop, so the two
 * agree exactly). */
hsize_t cs__n_times(double tstart, double tstop, double dt) {
    hsize_t n = 0;
    for (double t = tstart; t < tstop - CS__EPSILON; t += dt) ++n;
    return n;
}

/* Make mapping/time describe exactly the rows written so far, so that a reader (libsonata
 * included) can read an incomplete file: [tstart, tstop, dt] once all rows are there, else
 * [tstart, tstart + rows*dt, dt] (nudged to half a step past the last sample should rounding
 * make libsonata's loop count differently). */
herr_t cs__write_axis(const cs_output *o, cs__report *rp) {
    if (rp->axis_rows == rp->rows && rp->rows != 0) return 0;
    double stop = rp->tstop; /* [ms] */
    if (rp->rows != rp->expected_rows) {
        stop = rp->tstart + (double)rp->rows * rp->dt;
        if (cs__n_times(rp->tstart, stop, rp->dt) != rp->rows)
            stop = rp->tstart + ((double)rp->rows - 0.5) * rp->dt + CS__EPSILON;
    }
    const double time[3] = {rp->tstart, stop, rp->dt}; /* [ms] */
    if (cs__write_whole(o, rp->time, H5T_NATIVE_DOUBLE, time) < 0) return -1;
    rp->axis_rows = rp->rows;
    return 0;
}

cs__spikes *cs__find_spikes(cs_output *o, const char *population) {
    for (size_t i = 0; i < o->n_spikes; ++i)
        if (strcmp(o->spikes[i].name, population) == 0) return &o->spikes[i];
    return NULL;
}

cs__report *cs__find_report(cs_output *o, const char *population) {
    for (size_t i = 0; i < o->n_reports; ++i)
        if (strcmp(o->reports[i].name, population) == 0) return &o->reports[i];
    return NULL;
}
