/* libFuzzer harness: the SONATA reader (models/cs_sonata_*.c) on arbitrary configs, type files
 * and dataset contents. The input is up to four parts separated by a line "--":
 *   1. the simulation config (JSON);
 *   2. the node types CSV;  3. the edge types CSV;
 *   4. numbers that fill the HDF5 datasets the harness writes (nodes, edges, input spikes),
 *      so the reader's checks of their contents (ids, sections, lengths) are what is fuzzed,
 *      not the HDF5 library's own file parser.
 * Fixed beside them: cell.swc, hh.json (an aibs_perisomatic fit), syn.json (exp2syn).
 * Any input must load or give a one-line error; never a crash, a leak or undefined behaviour. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_sonata.h"

static char dir[64];

static void put(const char *name, const void *p, size_t n) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n && fwrite(p, 1, n, f) != n) abort();
    fclose(f);
}

static void fixed_files(void) {
    const char *swc = "1 1 0 0 0 8 -1\n2 3 0 -8 0 1 1\n3 3 0 -60 0 1 2\n4 4 0 8 0 1.5 1\n5 4 0 150 0 1 4\n"
                      "6 2 8 0 0 0.5 1\n7 2 60 0 0 0.5 6\n";
    const char *hh = "{\"passive\": [{\"ra\": 100, \"e_pas\": -65, \"cm\": [{\"section\": \"soma\", \"cm\": 1}]}],"
                     " \"genome\": [{\"section\": \"soma\", \"name\": \"gnabar_hh\", \"value\": 0.12, \"mechanism\": \"hh\"}],"
                     " \"conditions\": [{\"erev\": [{\"section\": \"soma\", \"ena\": 50, \"ek\": -77}]}]}";
    const char *syn = "{\"level_of_detail\": \"exp2syn\", \"tau1\": 0.5, \"tau2\": 3, \"erev\": 0}";
    put("cell.swc", swc, strlen(swc));
    put("hh.json", hh, strlen(hh));
    put("syn.json", syn, strlen(syn));
}

/* numbers from the 4th part: bytes taken as small integers or scaled doubles */
typedef struct { const uint8_t *p; size_t n, at; } numbers;
static int next_int(numbers *u, int mod) { return u->at < u->n ? (int)(u->p[u->at++] % mod) - (mod > 16 ? 1 : 0) : 0; }
static double next_f(numbers *u) {
    if (u->at >= u->n) return 0.5;
    uint8_t b = u->p[u->at++];
    return b == 255 ? 0.0 / 0.0 : b == 254 ? -1.0 : b / 16.0;
}

static void dataset(hid_t g, const char *name, hid_t type, size_t n, const void *v) {
    hsize_t dim = n;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    hid_t d = H5Dcreate2(g, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (n) H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(d);
    H5Sclose(sp);
}

static void string_attr(hid_t obj, const char *name, const char *v) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, t, &v);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
}

static void h5_files(numbers *u) {
    char path[128];
    int64_t iv[5][64];
    double fv[3][64];
    /* nodes: population "net" of n cells, "inp" of k virtual nodes */
    snprintf(path, sizeof path, "%s/nodes.h5", dir);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const char *pops[2] = {"/nodes/net", "/nodes/inp"};
    H5Gclose(H5Gcreate2(f, "/nodes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    for (int p = 0; p < 2; ++p) {
        int n = 1 + next_int(u, 8);
        for (int k = 0; k < n; ++k) {
            iv[0][k] = p ? 200 : 100 + next_int(u, 3); /* node_type_id */
            iv[1][k] = next_int(u, 40) == 0;          /* node_group_id: now and then a missing group */
            iv[2][k] = k + (next_int(u, 40) == 0 ? 50 : 0);
        }
        hid_t g = H5Gcreate2(f, pops[p], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        dataset(g, "node_type_id", H5T_NATIVE_INT64, (size_t)n, iv[0]);
        dataset(g, "node_group_id", H5T_NATIVE_INT64, (size_t)n, iv[1]);
        dataset(g, "node_group_index", H5T_NATIVE_INT64, (size_t)(n - next_int(u, 2)), iv[2]);
        H5Gclose(H5Gcreate2(g, "0", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        H5Gclose(g);
    }
    H5Fclose(f);
    /* edges: inp → net and net → net */
    snprintf(path, sizeof path, "%s/edges.h5", dir);
    f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(H5Gcreate2(f, "/edges", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    const char *eps[2] = {"/edges/inp_net", "/edges/net_net"}, *src[2] = {"inp", "net"};
    for (int p = 0; p < 2; ++p) {
        int n = next_int(u, 12), explicit_ = next_int(u, 2);
        for (int k = 0; k < n; ++k) {
            iv[0][k] = next_int(u, 20); /* source */
            iv[1][k] = next_int(u, 20); /* target */
            iv[2][k] = 300 + next_int(u, 3);
            iv[3][k] = next_int(u, 30) == 0;
            iv[4][k] = k;
            fv[0][k] = next_int(u, 12);  /* afferent_section_id */
            fv[1][k] = next_f(u);        /* afferent_section_pos */
            fv[2][k] = next_f(u);        /* syn_weight */
        }
        hid_t g = H5Gcreate2(f, eps[p], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        dataset(g, "source_node_id", H5T_NATIVE_INT64, (size_t)n, iv[0]);
        dataset(g, "target_node_id", H5T_NATIVE_INT64, (size_t)n, iv[1]);
        dataset(g, "edge_type_id", H5T_NATIVE_INT64, (size_t)n, iv[2]);
        dataset(g, "edge_group_id", H5T_NATIVE_INT64, (size_t)n, iv[3]);
        dataset(g, "edge_group_index", H5T_NATIVE_INT64, (size_t)n, iv[4]);
        hid_t d = H5Dopen2(g, "source_node_id", H5P_DEFAULT);
        string_attr(d, "node_population", src[p]);
        H5Dclose(d);
        d = H5Dopen2(g, "target_node_id", H5P_DEFAULT);
        string_attr(d, "node_population", next_int(u, 30) ? "net" : "nowhere");
        H5Dclose(d);
        hid_t g0 = H5Gcreate2(g, "0", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (explicit_) {
            dataset(g0, "afferent_section_id", H5T_NATIVE_DOUBLE, (size_t)n, fv[0]);
            dataset(g0, "afferent_section_pos", H5T_NATIVE_DOUBLE, (size_t)n, fv[1]);
        }
        if (next_int(u, 2)) dataset(g0, "syn_weight", H5T_NATIVE_DOUBLE, (size_t)(n - next_int(u, 2)), fv[2]);
        H5Gclose(g0);
        H5Gclose(g);
    }
    H5Fclose(f);
    /* input spikes of "inp" */
    snprintf(path, sizeof path, "%s/spikes.h5", dir);
    f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    int n = next_int(u, 20);
    for (int k = 0; k < n; ++k) {
        iv[0][k] = next_int(u, 10);
        fv[0][k] = next_f(u) * 4;
    }
    hid_t g = H5Gcreate2(f, "/spikes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t gi = H5Gcreate2(g, "inp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    dataset(gi, "node_ids", H5T_NATIVE_INT64, (size_t)n, iv[0]);
    dataset(gi, "timestamps", H5T_NATIVE_DOUBLE, (size_t)(n - next_int(u, 2)), fv[0]);
    H5Gclose(gi);
    H5Gclose(g);
    H5Fclose(f);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* the circuit's folder goes at exit (a crash leaves it, with the input that caused it) */
static void remove_dir(void) {
    if (dir[0]) nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/cs_fuzz_sonata_%ld", (long)getpid());
        mkdir(dir, 0700);
        atexit(remove_dir);
        fixed_files();
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    }
    const char *names[3] = {"config.json", "node_types.csv", "edge_types.csv"};
    const uint8_t *p = data, *end = data + size;
    for (int part = 0; part < 3; ++part) {
        const uint8_t *q = p;
        while (q + 4 <= end && memcmp(q, "\n--\n", 4)) ++q;
        if (q + 4 > end) q = end;
        put(names[part], p, (size_t)(q - p));
        p = q + 4 <= end ? q + 4 : end;
    }
    numbers u = {p, (size_t)(end - p), 0};
    h5_files(&u);
    char config[128];
    snprintf(config, sizeof config, "%s/config.json", dir);
    cs_model m;
    cs_sonata_run run;
    cs_status s = cs_sonata_load(config, NULL, &m, &run);
    if (s == CS_OK) cs_model_free(&m);
    else if (strchr(cs_error_message(), '\n')) abort(); /* error messages are one line */
    if (getenv("CS_FUZZ_VERBOSE")) fprintf(stderr, "fuzz_sonata: %s\n", s == CS_OK ? "loaded" : cs_error_message());
    cs_error_clear();
    return 0;
}
