/* Tests of output/cs_output: a two-population SONATA file written in epochs and read back with
 * the HDF5 C API (exact values, shapes, types, attributes); a process killed after a flush;
 * error paths (unwritable path, undeclared population, inconsistent time axis).
 *
 * If the environment variable CS_OUTPUT_KEEP names a directory, the files written here are
 * left there (roundtrip.h5, killed.h5) for tests/test_output_readers.py to read with h5py and
 * libsonata. */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The library keeps HDF5's include directory private; Debian puts hdf5.h under hdf5/serial. */
#if defined(__has_include)
#if __has_include(<hdf5.h>)
#include <hdf5.h>
#elif __has_include(<hdf5/serial/hdf5.h>)
#include <hdf5/serial/hdf5.h>
#else
#error "hdf5.h not found"
#endif
#else
#include <hdf5.h>
#endif

#include "cs_error.h"
#include "cs_output.h"

/* ------------------------------------------------------------------------------------ */
/* Helpers                                                                               */

/* A fresh file path: $CS_OUTPUT_KEEP/<name> when set, otherwise a per-process temp path. */
static void test_path(char *buf, size_t n, const char *name) {
    const char *keep = getenv("CS_OUTPUT_KEEP");
    if (keep && keep[0]) {
        mkdir(keep, 0777);
        snprintf(buf, n, "%s/%s", keep, name);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(buf, n, "%s/cs_test_output_%ld_%s", tmp && tmp[0] ? tmp : "/tmp", (long)getpid(),
                 name);
    }
}

static void drop_path(const char *path) {
    const char *keep = getenv("CS_OUTPUT_KEEP");
    if (!(keep && keep[0])) unlink(path);
}

/* Read a scalar string attribute (variable-length) of object `obj` of `loc`; caller frees. */
static char *read_string_attr(hid_t loc, const char *obj, const char *name) {
    hid_t a = H5Aopen_by_name(loc, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_msg(a >= 0, "attribute %s of %s missing", name, obj);
    hid_t ft = H5Aget_type(a);
    ck_assert_int_eq(H5Tget_class(ft), H5T_STRING);
    ck_assert_msg(H5Tis_variable_str(ft) > 0, "attribute %s is not a variable-length string",
                  name);
    ck_assert_int_eq(H5Tget_cset(ft), H5T_CSET_UTF8);
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5T_CSET_UTF8);
    char *v = NULL;
    ck_assert_int_ge(H5Aread(a, mt, &v), 0);
    char *copy = strdup(v);
    H5free_memory(v);
    H5Tclose(mt);
    H5Tclose(ft);
    H5Aclose(a);
    return copy;
}

static void check_string_attr(hid_t loc, const char *obj, const char *name, const char *want) {
    char *v = read_string_attr(loc, obj, name);
    ck_assert_str_eq(v, want);
    free(v);
}

static double read_double_attr(hid_t loc, const char *obj, const char *name) {
    hid_t a = H5Aopen_by_name(loc, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_msg(a >= 0, "attribute %s of %s missing", name, obj);
    double v = NAN;
    ck_assert_int_ge(H5Aread(a, H5T_NATIVE_DOUBLE, &v), 0);
    H5Aclose(a);
    return v;
}

/* Open dataset `name`, check its rank, file type class/size/sign, and return its dims. */
static hid_t open_dataset(hid_t file, const char *name, int rank, H5T_class_t cls, size_t size,
                          hsize_t *dims) {
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    ck_assert_msg(d >= 0, "dataset %s missing", name);
    hid_t t = H5Dget_type(d);
    ck_assert_msg(H5Tget_class(t) == cls, "dataset %s has the wrong type class", name);
    if (cls != H5T_STRING) ck_assert_uint_eq(H5Tget_size(t), size);
    if (cls == H5T_INTEGER) ck_assert_int_eq(H5Tget_sign(t), H5T_SGN_NONE);
    H5Tclose(t);
    hid_t s = H5Dget_space(d);
    ck_assert_int_eq(H5Sget_simple_extent_ndims(s), rank);
    H5Sget_simple_extent_dims(s, dims, NULL);
    H5Sclose(s);
    return d;
}

static void check_extendible_chunked(hid_t d, int rank) {
    hid_t p = H5Dget_create_plist(d);
    ck_assert_int_eq(H5Pget_layout(p), H5D_CHUNKED);
    ck_assert_int_eq(H5Pget_nfilters(p), 0); /* no compression by default */
    H5Pclose(p);
    hid_t s = H5Dget_space(d);
    hsize_t dims[2], maxdims[2];
    H5Sget_simple_extent_dims(s, dims, maxdims);
    ck_assert(maxdims[0] == H5S_UNLIMITED);
    if (rank == 2) ck_assert(maxdims[1] == dims[1]);
    H5Sclose(s);
}

/* The value written at (row, col) of population `pop`: exact in float32. [mV] */
static float sample_value(int pop, size_t row, size_t col) {
    return -65.0f + 0.5f * (float)row + 0.125f * (float)(col % 64) + 100.0f * (float)pop;
}

/* ------------------------------------------------------------------------------------ */
/* The two-population round trip                                                         */

/* Population "cortex": 3 cells (ids 5, 7, 9) with 2, 1, 3 elements; times [0, 1) every
 * 0.025 ms = 40 samples. Population "thalamus": 1 cell (id 0) with 1500 elements (more than one
 * chunk wide); times [2, 3) every 0.1 ms = 10 samples. */
static const uint64_t cx_nodes[3] = {5, 7, 9};
static const uint64_t cx_ptr[4] = {0, 2, 3, 6};
static const uint32_t cx_elems[6] = {0, 1, 0, 0, 4, 2};
#define CX_ROWS 40
#define CX_COLS 6
#define TH_ROWS 10
#define TH_COLS 1500

/* Epoch e of cortex: rows [7e, 7e+7) clipped at 40; spikes at e + 0.5 and e + 0.25 given out of
 * order (nodes 9 then 5); thalamus: rows [2e, 2e+2), one spike at e + 0.75 on node 0.
 * Returns the first failure rather than asserting: it also runs in a forked child. */
#define TRY_OR_OUT(expr)                 \
    do {                                 \
        if ((st = (expr)) != CS_OK) goto out; \
    } while (0)
static cs_status write_epochs(cs_output *o, int first, int last, int flush_each) {
    cs_status st = CS_OK;
    float *cx = malloc(7 * CX_COLS * sizeof *cx);
    float *th = malloc(2 * TH_COLS * sizeof *th);
    if (!cx || !th) {
        st = CS_ERR_NOMEM;
        goto out;
    }
    for (int e = first; e < last; ++e) {
        size_t r0 = (size_t)e * 7, nr = r0 + 7 <= CX_ROWS ? 7 : CX_ROWS - r0;
        for (size_t r = 0; r < nr; ++r)
            for (size_t c = 0; c < CX_COLS; ++c) cx[r * CX_COLS + c] = sample_value(0, r0 + r, c);
        TRY_OR_OUT(cs_output_append_samples(o, "cortex", nr, cx));
        double t[2] = {e + 0.5, e + 0.25};
        uint64_t id[2] = {9, 5};
        TRY_OR_OUT(cs_output_append_spikes(o, "cortex", 2, t, id));
        if (e < 5) {
            for (size_t r = 0; r < 2; ++r)
                for (size_t c = 0; c < TH_COLS; ++c)
                    th[r * TH_COLS + c] = sample_value(1, 2 * (size_t)e + r, c);
            TRY_OR_OUT(cs_output_append_samples(o, "thalamus", 2, th));
        }
        double t1 = e + 0.75;
        uint64_t id1 = 0;
        TRY_OR_OUT(cs_output_append_spikes(o, "thalamus", 1, &t1, &id1));
        if (flush_each) TRY_OR_OUT(cs_output_flush(o));
    }
out:
    free(cx);
    free(th);
    return st;
}

static cs_status declare(cs_output *o) {
    cs_status st = CS_OK;
    uint64_t th_node = 0, th_ptr[2] = {0, TH_COLS};
    uint32_t *th_elems = malloc(TH_COLS * sizeof *th_elems);
    if (!th_elems) return CS_ERR_NOMEM;
    for (uint32_t i = 0; i < TH_COLS; ++i) th_elems[i] = i;
    TRY_OR_OUT(cs_output_add_spike_population(o, "cortex"));
    TRY_OR_OUT(cs_output_add_spike_population(o, "thalamus"));
    TRY_OR_OUT(cs_output_add_report(o, "cortex", 3, cx_nodes, cx_ptr, cx_elems, 0.0, 1.0, 0.025));
    TRY_OR_OUT(cs_output_add_report(o, "thalamus", 1, &th_node, th_ptr, th_elems, 2.0, 3.0, 0.1));
out:
    free(th_elems);
    return st;
}

/* Check the samples of population `pop` in `d`: the first `rows` rows of `cols` columns. */
static void check_samples(hid_t d, int pop, hsize_t rows, hsize_t cols) {
    float *buf = malloc(rows * cols * sizeof *buf);
    hid_t fs = H5Dget_space(d);
    hsize_t start[2] = {0, 0}, count[2] = {rows, cols};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(2, count, NULL);
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, buf), 0);
    for (hsize_t r = 0; r < rows; ++r)
        for (hsize_t c = 0; c < cols; ++c)
            ck_assert_msg(buf[r * cols + c] == sample_value(pop, r, c),
                          "pop %d sample (%llu,%llu) = %g, want %g", pop, (unsigned long long)r,
                          (unsigned long long)c, buf[r * cols + c], sample_value(pop, r, c));
    H5Sclose(ms);
    H5Sclose(fs);
    free(buf);
}

static void check_time(hid_t file, const char *name, double t0, double t1, double dt) {
    hsize_t dims[1];
    hid_t d = open_dataset(file, name, 1, H5T_FLOAT, 8, dims);
    ck_assert_uint_eq(dims[0], 3);
    double tm[3];
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, tm), 0);
    ck_assert_double_eq(tm[0], t0);
    ck_assert_double_eq(tm[1], t1);
    ck_assert_double_eq(tm[2], dt);
    H5Dclose(d);
    check_string_attr(file, name, "units", "ms");
}

static void check_u64(hid_t file, const char *name, size_t n, const uint64_t *want) {
    hsize_t dims[1];
    hid_t d = open_dataset(file, name, 1, H5T_INTEGER, 8, dims);
    ck_assert_uint_eq(dims[0], n);
    uint64_t got[64];
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, got), 0);
    for (size_t i = 0; i < n; ++i) ck_assert_uint_eq(got[i], want[i]);
    H5Dclose(d);
}

/* The `sorting` attribute: an enum of uint8 with none/by_id/by_time = 0/1/2. */
static int read_sorting(hid_t file, const char *group) {
    hid_t a = H5Aopen_by_name(file, group, "sorting", H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_msg(a >= 0, "%s has no sorting attribute", group);
    hid_t t = H5Aget_type(a);
    ck_assert_int_eq(H5Tget_class(t), H5T_ENUM);
    ck_assert_uint_eq(H5Tget_size(t), 1);
    ck_assert_int_eq(H5Tget_nmembers(t), 3);
    const char *names[3] = {"none", "by_id", "by_time"};
    for (unsigned i = 0; i < 3; ++i) {
        char *n = H5Tget_member_name(t, i);
        uint8_t v = 255;
        H5Tget_member_value(t, i, &v);
        ck_assert_str_eq(n, names[i]);
        ck_assert_uint_eq(v, i);
        H5free_memory(n);
    }
    uint8_t v = 255;
    ck_assert_int_ge(H5Aread(a, H5T_NATIVE_UINT8, &v), 0);
    H5Tclose(t);
    H5Aclose(a);
    return v;
}

START_TEST(test_roundtrip) {
    char path[4096];
    test_path(path, sizeof path, "roundtrip.h5");
    cs_error_clear();
    cs_output *o = NULL;
    ck_assert_int_eq(cs_output_open(path, &o), CS_OK);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(declare(o), CS_OK);
    ck_assert_int_eq(cs_output_set_meta_string(o, "model", "ring.json"), CS_OK);
    ck_assert_int_eq(cs_output_set_meta_string(o, "version", "0.0"), CS_OK);
    ck_assert_int_eq(cs_output_set_meta_string(o, "version", "0.1.0"), CS_OK); /* replaces */
    ck_assert_int_eq(cs_output_set_meta_double(o, "dt", 0.025), CS_OK);
    /* 6 epochs: cortex 40 rows (the last epoch 5 rows), thalamus 10 rows */
    ck_assert_msg(write_epochs(o, 0, 6, 1) == CS_OK, "%s", cs_error_message());
    const char *phases[3] = {"matrix", "solve", "output"};
    const double secs[3] = {1.5, 2.25, 0.125}, share[3] = {0.25, 0.5, 0.25};
    ck_assert_int_eq(cs_output_write_profile(o, 3, phases, secs, share), CS_OK);
    ck_assert_int_eq(cs_output_close(o, 1), CS_OK);
    ck_assert_str_eq(cs_error_message(), "");

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    check_string_attr(f, ".", "status", "complete");

    /* Spikes: sorted by time across and within epochs. */
    hsize_t dims[2];
    hid_t d = open_dataset(f, "/spikes/cortex/timestamps", 1, H5T_FLOAT, 8, dims);
    ck_assert_uint_eq(dims[0], 12);
    check_extendible_chunked(d, 1);
    double ts[12];
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, ts), 0);
    H5Dclose(d);
    check_string_attr(f, "/spikes/cortex/timestamps", "units", "ms");
    uint64_t want_ids[12];
    for (int e = 0; e < 6; ++e) {
        ck_assert_double_eq(ts[2 * e], e + 0.25);
        ck_assert_double_eq(ts[2 * e + 1], e + 0.5);
        want_ids[2 * e] = 5;
        want_ids[2 * e + 1] = 9;
    }
    check_u64(f, "/spikes/cortex/node_ids", 12, want_ids);
    ck_assert_int_eq(read_sorting(f, "/spikes/cortex"), 2);
    ck_assert_int_eq(read_sorting(f, "/spikes/thalamus"), 2);
    d = open_dataset(f, "/spikes/thalamus/timestamps", 1, H5T_FLOAT, 8, dims);
    ck_assert_uint_eq(dims[0], 6);
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, ts), 0);
    for (int e = 0; e < 6; ++e) ck_assert_double_eq(ts[e], e + 0.75);
    H5Dclose(d);
    uint64_t zeros[6] = {0};
    check_u64(f, "/spikes/thalamus/node_ids", 6, zeros);

    /* Reports. */
    d = open_dataset(f, "/report/cortex/data", 2, H5T_FLOAT, 4, dims);
    ck_assert_uint_eq(dims[0], CX_ROWS);
    ck_assert_uint_eq(dims[1], CX_COLS);
    check_extendible_chunked(d, 2);
    check_samples(d, 0, CX_ROWS, CX_COLS);
    H5Dclose(d);
    check_string_attr(f, "/report/cortex/data", "units", "mV");
    d = open_dataset(f, "/report/thalamus/data", 2, H5T_FLOAT, 4, dims);
    ck_assert_uint_eq(dims[0], TH_ROWS);
    ck_assert_uint_eq(dims[1], TH_COLS);
    check_extendible_chunked(d, 2);
    check_samples(d, 1, TH_ROWS, TH_COLS);
    H5Dclose(d);

    check_u64(f, "/report/cortex/mapping/node_ids", 3, cx_nodes);
    check_u64(f, "/report/cortex/mapping/index_pointers", 4, cx_ptr);
    d = open_dataset(f, "/report/cortex/mapping/element_ids", 1, H5T_INTEGER, 4, dims);
    ck_assert_uint_eq(dims[0], 6);
    uint32_t el[6];
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, el), 0);
    for (int i = 0; i < 6; ++i) ck_assert_uint_eq(el[i], cx_elems[i]);
    H5Dclose(d);
    check_time(f, "/report/thalamus/mapping/time", 2.0, 3.0, 0.1);
    check_time(f, "/report/cortex/mapping/time", 0.0, 1.0, 0.025);

    /* Metadata and profile. */
    check_string_attr(f, "/metadata", "model", "ring.json");
    check_string_attr(f, "/metadata", "version", "0.1.0");
    ck_assert_double_eq(read_double_attr(f, "/metadata", "dt"), 0.025);
    d = open_dataset(f, "/profile/phase", 1, H5T_STRING, 0, dims);
    ck_assert_uint_eq(dims[0], 3);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, H5T_VARIABLE);
    H5Tset_cset(st, H5T_CSET_UTF8);
    char *names[3] = {0};
    ck_assert_int_ge(H5Dread(d, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, names), 0);
    for (int i = 0; i < 3; ++i) {
        ck_assert_str_eq(names[i], phases[i]);
        H5free_memory(names[i]);
    }
    H5Tclose(st);
    H5Dclose(d);
    double v[3];
    d = open_dataset(f, "/profile/seconds", 1, H5T_FLOAT, 8, dims);
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
    for (int i = 0; i < 3; ++i) ck_assert_double_eq(v[i], secs[i]);
    H5Dclose(d);
    d = open_dataset(f, "/profile/share", 1, H5T_FLOAT, 8, dims);
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
    for (int i = 0; i < 3; ++i) ck_assert_double_eq(v[i], share[i]);
    H5Dclose(d);

    ck_assert_int_ge(H5Fclose(f), 0);
    drop_path(path);
}
END_TEST

/* Epochs out of time order: the file must no longer claim by_time. */
START_TEST(test_sorting_falls_back) {
    char path[4096];
    test_path(path, sizeof path, "unsorted.h5");
    cs_error_clear();
    cs_output *o = NULL;
    ck_assert_int_eq(cs_output_open(path, &o), CS_OK);
    ck_assert_int_eq(cs_output_add_spike_population(o, "p"), CS_OK);
    double t1[2] = {5.0, 6.0}, t2[1] = {5.5};
    uint64_t id[2] = {1, 2};
    ck_assert_int_eq(cs_output_append_spikes(o, "p", 2, t1, id), CS_OK);
    ck_assert_int_eq(cs_output_append_spikes(o, "p", 1, t2, id), CS_OK);
    ck_assert_int_eq(cs_output_close(o, 1), CS_OK);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    ck_assert_int_eq(read_sorting(f, "/spikes/p"), 0);
    /* Empty groups are still there for readers listing populations. */
    ck_assert_int_gt(H5Lexists(f, "/report", H5P_DEFAULT), 0);
    H5Fclose(f);
    drop_path(path);
}
END_TEST

/* A process killed after a flush leaves a readable file with everything up to that flush. */
START_TEST(test_killed_after_flush) {
    char path[4096];
    test_path(path, sizeof path, "killed.h5");
    unlink(path);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        cs_output *o = NULL;
        if (cs_output_open(path, &o) != CS_OK) _exit(3);
        if (declare(o) != CS_OK) _exit(6);
        /* cortex rows 0..20, thalamus rows 0..5, 9 spikes */
        if (write_epochs(o, 0, 3, 0) != CS_OK) _exit(7);
        if (cs_output_flush(o) != CS_OK) _exit(4);
        (void)write_epochs(o, 3, 4, 0); /* appended but never flushed */
        raise(SIGKILL);           /* dies without closing (and without LeakSanitizer) */
        _exit(5);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "child did not die by SIGKILL (status %d)", status);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_msg(f >= 0, "killed file %s cannot be opened", path);
    check_string_attr(f, ".", "status", "incomplete");
    hsize_t dims[2];
    hid_t d = open_dataset(f, "/report/cortex/data", 2, H5T_FLOAT, 4, dims);
    ck_assert_uint_ge(dims[0], 21);
    ck_assert_uint_eq(dims[1], CX_COLS);
    check_samples(d, 0, 21, CX_COLS);
    H5Dclose(d);
    d = open_dataset(f, "/report/thalamus/data", 2, H5T_FLOAT, 4, dims);
    ck_assert_uint_ge(dims[0], 6);
    check_samples(d, 1, 6, TH_COLS);
    H5Dclose(d);
    /* The time axes describe the rows flushed, so readers can use the partial file. */
    check_time(f, "/report/cortex/mapping/time", 0.0, 0.0 + 21 * 0.025, 0.025);
    check_time(f, "/report/thalamus/mapping/time", 2.0, 2.0 + 6 * 0.1, 0.1);
    d = open_dataset(f, "/spikes/cortex/timestamps", 1, H5T_FLOAT, 8, dims);
    ck_assert_uint_ge(dims[0], 6);
    double ts[16];
    hid_t fs = H5Dget_space(d);
    hsize_t start = 0, count = 6;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    hid_t ms = H5Screate_simple(1, &count, NULL);
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, ts), 0);
    for (int e = 0; e < 3; ++e) {
        ck_assert_double_eq(ts[2 * e], e + 0.25);
        ck_assert_double_eq(ts[2 * e + 1], e + 0.5);
    }
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    uint64_t want[6] = {5, 9, 5, 9, 5, 9};
    d = open_dataset(f, "/spikes/cortex/node_ids", 1, H5T_INTEGER, 8, dims);
    ck_assert_uint_ge(dims[0], 6);
    H5Dclose(d);
    if (dims[0] == 6) check_u64(f, "/spikes/cortex/node_ids", 6, want);
    ck_assert_int_ge(H5Fclose(f), 0);
    drop_path(path);
}
END_TEST

START_TEST(test_unwritable_path) {
    const char *bad[2] = {"/nonexistent/dir/x.h5", NULL};
    char dir[4096];
    test_path(dir, sizeof dir, "a_directory");
    ck_assert_int_eq(mkdir(dir, 0777) == 0 || access(dir, F_OK) == 0, 1);
    bad[1] = dir;
    for (int i = 0; i < 2; ++i) {
        cs_error_clear();
        cs_output *o = (cs_output *)&bad; /* must be reset to NULL */
        ck_assert_int_eq(cs_output_open(bad[i], &o), CS_ERR_IO);
        ck_assert_ptr_null(o);
        const char *msg = cs_error_message();
        ck_assert_msg(strstr(msg, bad[i]) != NULL, "message '%s' does not name %s", msg, bad[i]);
        ck_assert_msg(strchr(msg, '\n') == NULL, "message '%s' is not one line", msg);
    }
    rmdir(dir);
    cs_error_clear();
}
END_TEST

START_TEST(test_undeclared_population) {
    char path[4096];
    test_path(path, sizeof path, "undeclared.h5");
    cs_error_clear();
    cs_output *o = NULL;
    ck_assert_int_eq(cs_output_open(path, &o), CS_OK);
    ck_assert_int_eq(cs_output_add_spike_population(o, "a"), CS_OK);
    double t = 1.0;
    uint64_t id = 3;
    float row[1] = {0};
    ck_assert_int_eq(cs_output_append_spikes(o, "nope", 1, &t, &id), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(cs_error_message(), "'nope'"));
    ck_assert_ptr_nonnull(strstr(cs_error_message(), path));
    cs_error_clear();
    /* "a" has spikes but no report. */
    ck_assert_int_eq(cs_output_append_samples(o, "a", 1, row), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(cs_error_message(), "'a'"));
    cs_error_clear();
    ck_assert_int_eq(cs_output_add_spike_population(o, "a"), CS_ERR_INVALID);
    cs_error_clear();
    ck_assert_int_eq(cs_output_add_spike_population(o, "x/y"), CS_ERR_INVALID);
    cs_error_clear();
    /* The failures did not damage the file: it still closes complete with the valid data. */
    ck_assert_int_eq(cs_output_append_spikes(o, "a", 1, &t, &id), CS_OK);
    ck_assert_int_eq(cs_output_close(o, 1), CS_OK);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    check_string_attr(f, ".", "status", "complete");
    ck_assert_int_eq(H5Lexists(f, "/spikes/nope", H5P_DEFAULT), 0);
    uint64_t want = 3;
    check_u64(f, "/spikes/a/node_ids", 1, &want);
    H5Fclose(f);
    drop_path(path);
}
END_TEST

/* Reports of other probed variables (probes.variables): /report/<pop>/<variable>/ with its
 * unit, declared before or after the voltage's, appended by "<pop>/<variable>"; names that would
 * clash with the voltage report's datasets, or hold a '/', are refused. */
START_TEST(test_variable_reports) {
    char path[4096];
    test_path(path, sizeof path, "variables.h5");
    cs_error_clear();
    cs_output *o = NULL;
    ck_assert_int_eq(cs_output_open(path, &o), CS_OK);
    const uint64_t nodes[2] = {0, 3}, ptr[3] = {0, 1, 2};
    const uint32_t el[2] = {1, 4};
    /* a variable first: the population's group is created for it, the voltage then joins it */
    ck_assert_int_eq(cs_output_add_variable_report(o, "p", "hh.m", "1", 2, nodes, ptr, el, 0.0, 0.3, 0.1), CS_OK);
    ck_assert_int_eq(cs_output_add_report(o, "p", 2, nodes, ptr, el, 0.0, 0.3, 0.1), CS_OK);
    ck_assert_int_eq(cs_output_add_variable_report(o, "p", "ina", "mA/cm2", 2, nodes, ptr, el, 0.0, 0.3, 0.1), CS_OK);
    ck_assert_int_eq(cs_output_add_variable_report(o, "p", "hh.m", "1", 2, nodes, ptr, el, 0.0, 0.3, 0.1),
                     CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(cs_error_message(), "p/hh.m"));
    cs_error_clear();
    ck_assert_int_eq(cs_output_add_variable_report(o, "p", "data", "1", 2, nodes, ptr, el, 0.0, 0.3, 0.1),
                     CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(cs_error_message(), "'data'"));
    cs_error_clear();
    ck_assert_int_eq(cs_output_add_variable_report(o, "p", "a/b", "1", 2, nodes, ptr, el, 0.0, 0.3, 0.1),
                     CS_ERR_INVALID);
    cs_error_clear();
    for (int r = 0; r < 3; ++r) {
        const double v[2] = {-65.0 + r, -64.0 + r}, m[2] = {0.05 * r, 0.5}, na[2] = {-0.001 * r, 0.0};
        ck_assert_int_eq(cs_output_append_samples_d(o, "p", 1, v), CS_OK);
        ck_assert_int_eq(cs_output_append_samples_d(o, "p/hh.m", 1, m), CS_OK);
        ck_assert_int_eq(cs_output_append_samples_d(o, "p/ina", 1, na), CS_OK);
    }
    ck_assert_int_eq(cs_output_close(o, 1), CS_OK);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    check_string_attr(f, ".", "status", "complete");
    check_string_attr(f, "/report/p/data", "units", "mV");
    check_string_attr(f, "/report/p/hh.m/data", "units", "1");
    check_string_attr(f, "/report/p/ina/data", "units", "mA/cm2");
    check_u64(f, "/report/p/hh.m/mapping/node_ids", 2, nodes);
    check_time(f, "/report/p/ina/mapping/time", 0.0, 0.3, 0.1);
    hsize_t dims[2];
    hid_t d = open_dataset(f, "/report/p/hh.m/data", 2, H5T_FLOAT, 4, dims);
    ck_assert_uint_eq(dims[0], 3);
    ck_assert_uint_eq(dims[1], 2);
    float got[6];
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got), 0);
    ck_assert(got[4] == 0.1f && got[5] == 0.5f);
    H5Dclose(d);
    H5Fclose(f);
    drop_path(path);
}
END_TEST

/* A report must be filled exactly to its time axis before the file is called complete; a
 * failed run (complete=0) stays "incomplete". */
START_TEST(test_time_axis_and_incomplete) {
    char path[4096];
    test_path(path, sizeof path, "axis.h5");
    cs_error_clear();
    cs_output *o = NULL;
    ck_assert_int_eq(cs_output_open(path, &o), CS_OK);
    uint64_t node = 1, ptr[2] = {0, 2};
    uint32_t el[2] = {0, 1};
    /* [0, 0.3) every 0.1 ms: 3 samples (tstop exclusive, as in SONATA/libsonata). */
    ck_assert_int_eq(cs_output_add_report(o, "p", 1, &node, ptr, el, 0.0, 0.3, 0.1), CS_OK);
    ck_assert_int_eq(cs_output_add_report(o, "q", 1, &node, ptr, el, 1.0, 1.0, 0.1),
                     CS_ERR_INVALID);
    cs_error_clear();
    uint64_t badptr[2] = {1, 2};
    ck_assert_int_eq(cs_output_add_report(o, "q", 1, &node, badptr, el, 0.0, 1.0, 0.1),
                     CS_ERR_INVALID);
    cs_error_clear();
    float rows[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ck_assert_int_eq(cs_output_append_samples(o, "p", 4, rows), CS_ERR_INVALID);
    cs_error_clear();
    ck_assert_int_eq(cs_output_append_samples(o, "p", 2, rows), CS_OK);
    ck_assert_int_eq(cs_output_close(o, 1), CS_ERR_INVALID); /* 2 rows of 3 */
    ck_assert_ptr_nonnull(strstr(cs_error_message(), "'p'"));
    cs_error_clear();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    check_string_attr(f, ".", "status", "incomplete");
    check_time(f, "/report/p/mapping/time", 0.0, 0.2, 0.1); /* the 2 rows written */
    H5Fclose(f);

    ck_assert_int_eq(cs_output_open(path, &o), CS_OK); /* truncates */
    ck_assert_int_eq(cs_output_add_report(o, "p", 1, &node, ptr, el, 0.0, 0.3, 0.1), CS_OK);
    ck_assert_int_eq(cs_output_append_samples(o, "p", 3, rows), CS_OK);
    ck_assert_int_eq(cs_output_close(o, 0), CS_OK);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    check_string_attr(f, ".", "status", "incomplete");
    check_time(f, "/report/p/mapping/time", 0.0, 0.3, 0.1); /* all rows there: as declared */
    H5Fclose(f);
    ck_assert_int_eq(cs_output_close(NULL, 1), CS_OK);
    drop_path(path);
}
END_TEST

int main(void) {
    Suite *s = suite_create("output");
    TCase *tc = tcase_create("output");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_roundtrip);
    tcase_add_test(tc, test_sorting_falls_back);
    tcase_add_test(tc, test_killed_after_flush);
    tcase_add_test(tc, test_unwritable_path);
    tcase_add_test(tc, test_undeclared_population);
    tcase_add_test(tc, test_time_axis_and_incomplete);
    tcase_add_test(tc, test_variable_reports);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
