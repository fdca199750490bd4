/* The datasets that grow: spike populations and voltage reports (see cs_output.h). On a
 * parallel file every call is collective and its I/O failures are agreed (cs__par_agree). */
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_output_internal.h"

static cs_status cs__output_add_spike_population(cs_output *o, const char *population) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_add_spike_population: no output");
    CS__STOP_IF_FAILED(o);
    CS_TRY(cs__check_name(o, population));
    CS_CHECK(!cs__find_spikes(o, population), CS_ERR_INVALID,
             "%s: spike population '%s' declared twice", o->path, population);
    char created[64 + 1024];
    snprintf(created, sizeof created, "cannot create /spikes/%s", population);
    CS_TRY(cs__reserve_growth(o, CS__LAYOUT_BYTES, 0, created));
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
        cs_status s = cs__fail_io(o, where); /* before any close clears HDF5's error stack */
        cs__close_id(&sp.timestamps, H5Dclose);
        cs__close_id(&sp.node_ids, H5Dclose);
        cs__close_id(&sp.group, H5Gclose);
        free(sp.name);
        return s;
    }
    o->spikes[o->n_spikes++] = sp;
    return CS_OK;
}

/* Open group `name` of loc, or create it. */
static hid_t open_or_create_group(hid_t loc, const char *name) {
    htri_t e = H5Lexists(loc, name, H5P_DEFAULT);
    if (e < 0) return H5I_INVALID_HID;
    return e ? H5Gopen2(loc, name, H5P_DEFAULT) : H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

static cs_status cs__output_add_report(cs_output *o, const char *pop, const char *variable, const char *units,
                               size_t n_nodes, const uint64_t *node_ids, const uint64_t *index_pointers,
                               const uint32_t *element_ids, double tstart, double tstop,
                               double dt) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_add_report: no output");
    CS__STOP_IF_FAILED(o);
    CS_TRY(cs__check_name(o, pop));
    if (variable) CS_TRY(cs__check_name(o, variable));
    CS_CHECK(!variable || (strcmp(variable, "data") && strcmp(variable, "mapping")), CS_ERR_INVALID,
             "%s: report variable '%s' of population '%s' would clash with the voltage report's datasets", o->path,
             variable, pop);
    char full[2048];
    snprintf(full, sizeof full, "%s%s%s", pop, variable ? "/" : "", variable ? variable : "");
    const char *population = full; /* the report's name: POP, or POP/VARIABLE */
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
    char what[64 + 2048];
    snprintf(what, sizeof what, "cannot create /report/%s", population);
    /* its fixed datasets (node ids, index pointers: 8 B per node; element ids: 4 B each) and headers */
    CS_TRY(cs__reserve_growth(o, (hsize_t)n_nodes * 16 + (hsize_t)n_elements * 4 + CS__LAYOUT_BYTES, 0, what));
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

    char where[64 + 2048];
    snprintf(where, sizeof where, "cannot create /report/%s", population);
    hid_t report = H5I_INVALID_HID, grp = H5I_INVALID_HID, mapping = H5I_INVALID_HID;
    hid_t dapl = H5I_INVALID_HID, ds = H5I_INVALID_HID;
    int ok = 0;
    do {
        report = H5Gopen2(o->file, "report", H5P_DEFAULT);
        if (report < 0) break;
        /* /report/POP holds the voltage report and a group per other variable, either first */
        grp = open_or_create_group(report, pop);
        if (grp < 0) break;
        if (variable) {
            hid_t pg = grp;
            grp = H5Gcreate2(pg, variable, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            H5Gclose(pg);
            if (grp < 0) break;
        }
        mapping = H5Gcreate2(grp, "mapping", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (mapping < 0) break;
        if (cs__write_fixed(o, mapping, "node_ids", H5T_STD_U64LE, H5T_NATIVE_UINT64,
                            (hsize_t)n_nodes, node_ids) < 0)
            break;
        ds = H5Dopen2(mapping, "node_ids", H5P_DEFAULT);
        /* libsonata's hint that node_ids ascend (it sorts an index otherwise). */
        if (ds < 0 || cs__write_uint8_attr(ds, "sorted", (uint8_t)sorted) < 0) break;
        cs__close_id(&ds, H5Dclose);
        if (cs__write_fixed(o, mapping, "index_pointers", H5T_STD_U64LE, H5T_NATIVE_UINT64,
                            (hsize_t)n_nodes + 1, index_pointers) < 0)
            break;
        if (cs__write_fixed(o, mapping, "element_ids", H5T_STD_U32LE, H5T_NATIVE_UINT32,
                            (hsize_t)n_elements, element_ids) < 0)
            break;
        const double time[3] = {tstart, tstop, dt}; /* [ms] */
        if (cs__write_fixed(o, mapping, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, time) < 0)
            break;
        rp.time = H5Dopen2(mapping, "time", H5P_DEFAULT);
        if (rp.time < 0 || cs__write_string_attr(rp.time, "units", "ms") < 0 ||
            cs__write_axis(o, &rp) < 0)
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
        if (rp.data < 0 || cs__write_string_attr(rp.data, "units", units ? units : "mV") < 0) break;
        ok = 1;
    } while (0);
    hid_t es = cs__keep_error(ok ? 0 : -1);
    cs__close_id(&ds, H5Dclose);
    cs__close_id(&dapl, H5Pclose);
    cs__close_id(&mapping, H5Gclose);
    cs__close_id(&grp, H5Gclose);
    cs__close_id(&report, H5Gclose);
    cs__restore_error(es);
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

static cs_status cs__output_append_spikes(cs_output *o, const char *population, size_t n,
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
    char what[64 + 1024];
    snprintf(what, sizeof what, "cannot append %zu spikes to /spikes/%s", n, population);
    hsize_t new_chunks = (sp->n + n + CS__SPIKE_CHUNK - 1) / CS__SPIKE_CHUNK - (sp->n + CS__SPIKE_CHUNK - 1) / CS__SPIKE_CHUNK;
    s = cs__reserve_growth(o, 2 * new_chunks * CS__SPIKE_CHUNK * 8, 2 * new_chunks, what); /* times and ids, 8 B */
    if (s != CS_OK) {
        free(t);
        free(id);
        return s;
    }
    /* a parallel file: every rank has the same spikes and writes its share of them */
    hsize_t lo = (hsize_t)n * (hsize_t)o->rank / (hsize_t)o->nrank;
    hsize_t cnt = (hsize_t)n * (hsize_t)(o->rank + 1) / (hsize_t)o->nrank - lo;
    if (cs__append(o, sp->timestamps, H5T_NATIVE_DOUBLE, 1, sp->n, (hsize_t)n, 0, lo, cnt, t + lo) < 0 ||
        cs__append(o, sp->node_ids, H5T_NATIVE_UINT64, 1, sp->n, (hsize_t)n, 0, lo, cnt, id + lo) < 0) {
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
static cs_status cs__append_samples_(cs_output *o, const char *population, size_t n_times,
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
    char what[64 + 1024];
    snprintf(what, sizeof what, "cannot append %zu rows to /report/%s/data", n_times, population);
    CS_TRY(cs__reserve_rows(o, rp, n_times, what));
    /* a parallel file: rank 0 writes the rows, the others take part with nothing (every rank
     * fills its own columns with cs_output_append_columns_d instead) */
    if (cs__append(o, rp->data, mem, 2, rp->rows, (hsize_t)n_times, (hsize_t)rp->n_elements, 0,
                   o->rank == 0 ? (hsize_t)n_times : 0, rows) < 0)
        return cs__fail_io(o, what);
    rp->rows += (hsize_t)n_times;
    return CS_OK;
}

cs_status cs_output_append_samples(cs_output *o, const char *population, size_t n_times,
                                   const float *rows) {
    return cs__par_agree(o, cs__append_samples_(o, population, n_times, H5T_NATIVE_FLOAT, rows));
}

cs_status cs_output_append_samples_d(cs_output *o, const char *population, size_t n_times,
                                     const double *rows) {
    return cs__par_agree(o, cs__append_samples_(o, population, n_times, H5T_NATIVE_DOUBLE, rows));
}


cs_status cs_output_add_spike_population(cs_output *o, const char *population) {
    if (!o) return cs__output_add_spike_population(o, population);
    return cs__par_agree(o, cs__output_add_spike_population(o, population));
}

cs_status cs_output_add_report(cs_output *o, const char *population, size_t n_nodes,
                               const uint64_t *node_ids, const uint64_t *index_pointers,
                               const uint32_t *element_ids, double tstart, double tstop, double dt) {
    return cs_output_add_variable_report(o, population, NULL, "mV", n_nodes, node_ids, index_pointers, element_ids,
                                         tstart, tstop, dt);
}

cs_status cs_output_add_variable_report(cs_output *o, const char *population, const char *variable,
                                        const char *units, size_t n_nodes, const uint64_t *node_ids,
                                        const uint64_t *index_pointers, const uint32_t *element_ids, double tstart,
                                        double tstop, double dt) {
    if (!o)
        return cs__output_add_report(o, population, variable, units, n_nodes, node_ids, index_pointers, element_ids,
                                     tstart, tstop, dt);
    return cs__par_agree(o, cs__output_add_report(o, population, variable, units, n_nodes, node_ids, index_pointers,
                                                  element_ids, tstart, tstop, dt));
}

cs_status cs_output_append_spikes(cs_output *o, const char *population, size_t n,
                                  const double *times, const uint64_t *node_ids) {
    if (!o) return cs__output_append_spikes(o, population, n, times, node_ids);
    return cs__par_agree(o, cs__output_append_spikes(o, population, n, times, node_ids));
}

cs_status cs_output_append_columns_d(cs_output *o, const char *population, size_t n_times, size_t ncols,
                                     const uint64_t *cols, const double *rows) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_append_columns_d: no output");
    CS__STOP_IF_FAILED(o);
    CS_CHECK(population, CS_ERR_INVALID, "%s: samples appended without a population", o->path);
    cs__report *rp = cs__find_report(o, population);
    CS_CHECK(rp, CS_ERR_INVALID, "%s: samples appended to undeclared report population '%s'",
             o->path, population);
    if (n_times == 0) return CS_OK;
    CS_CHECK(rp->rows + n_times <= rp->expected_rows, CS_ERR_INVALID,
             "%s: report '%s': %llu rows would exceed the %llu samples of its time axis",
             o->path, population, (unsigned long long)(rp->rows + n_times),
             (unsigned long long)rp->expected_rows);
    for (size_t k = 0; k < ncols; ++k)
        CS_CHECK(cols[k] < rp->n_elements && (k == 0 || cols[k] > cols[k - 1]), CS_ERR_INVALID,
                 "%s: report '%s': columns must ascend below %zu (column %zu is %llu)", o->path, population,
                 rp->n_elements, k, (unsigned long long)cols[k]);
    /* grow by n_times rows; select this caller's columns: one hyperslab per run of
     * consecutive columns. HDF5 visits the selection row by row, columns ascending: the order
     * of rows [n_times × ncols]. */
    hsize_t at = rp->rows, n = (hsize_t)n_times;
    char what[64 + 1024];
    snprintf(what, sizeof what, "cannot append %zu rows to /report/%s/data", n_times, population);
    CS_TRY(cs__reserve_rows(o, rp, n, what));
    hsize_t dims[2] = {at + n, (hsize_t)rp->n_elements};
    herr_t e = H5Dset_extent(rp->data, dims);
    hid_t fs = e < 0 ? H5I_INVALID_HID : H5Dget_space(rp->data);
    hsize_t mdims[2] = {n, ncols ? (hsize_t)ncols : 1};
    hid_t ms = H5Screate_simple(2, mdims, NULL);
    e = fs < 0 || ms < 0 ? -1 : 0;
    if (e >= 0 && ncols == 0) e = H5Sselect_none(fs) < 0 || H5Sselect_none(ms) < 0 ? -1 : 0;
    if (e >= 0 && ncols > 0) e = H5Sselect_none(fs);
    for (size_t k = 0; e >= 0 && k < ncols;) {
        size_t j = k + 1;
        while (j < ncols && cols[j] == cols[j - 1] + 1) ++j;
        hsize_t start[2] = {at, (hsize_t)cols[k]}, count[2] = {n, (hsize_t)(j - k)};
        e = H5Sselect_hyperslab(fs, H5S_SELECT_OR, start, NULL, count, NULL);
        k = j;
    }
    if (e >= 0) e = H5Dwrite(rp->data, H5T_NATIVE_DOUBLE, ms, fs, o->dxpl, rows);
    hid_t es = cs__keep_error(e);
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    cs__restore_error(es);
    cs_status s = CS_OK;
    if (e < 0) s = cs__fail_io(o, what);
    s = cs__par_agree(o, s);
    if (s == CS_OK) rp->rows += n;
    return s;
}
