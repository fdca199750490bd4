/* SONATA's spikes_sort_order "id" (docs/sonata-input.md): a finished run's spikes re-sorted by
 * node id, then time, in place, with the `sorting` attribute by_id. The writer appends spikes
 * epoch by epoch, sorted by time; an order by id is only known once the run is over. The file
 * is marked incomplete while it is rewritten and complete again once every population is. */
#include <hdf5.h>
#include <stdlib.h>

#include "cs_output.h"
#include "cs_output_internal.h"

typedef struct {
    uint64_t id;
    double t; /* [ms] */
} spike;

static int by_id(const void *a, const void *b) {
    const spike *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* One population's group: read both datasets, sort, write them back. 0 on success. */
static int sort_group(hid_t g) {
    hid_t dt = H5Dopen2(g, "timestamps", H5P_DEFAULT), di = H5Dopen2(g, "node_ids", H5P_DEFAULT);
    hid_t sp = dt >= 0 ? H5Dget_space(dt) : -1;
    hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    double *t = n >= 0 ? malloc(((size_t)n + 1) * sizeof *t) : NULL;
    uint64_t *id = n >= 0 ? malloc(((size_t)n + 1) * sizeof *id) : NULL;
    spike *s = n >= 0 ? malloc(((size_t)n + 1) * sizeof *s) : NULL;
    int bad = di < 0 || !t || !id || !s;
    if (!bad && n > 0)
        bad = H5Dread(dt, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0 ||
              H5Dread(di, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, id) < 0;
    if (!bad && n > 0) {
        for (hssize_t k = 0; k < n; ++k) s[k] = (spike){id[k], t[k]};
        qsort(s, (size_t)n, sizeof *s, by_id);
        for (hssize_t k = 0; k < n; ++k) {
            t[k] = s[k].t;
            id[k] = s[k].id;
        }
        bad = H5Dwrite(dt, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0 ||
              H5Dwrite(di, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, id) < 0;
    }
    if (!bad) bad = cs__write_sorting(g, CS__SORT_BY_ID) < 0;
    free(t);
    free(id);
    free(s);
    if (sp >= 0) H5Sclose(sp);
    if (dt >= 0) H5Dclose(dt);
    if (di >= 0) H5Dclose(di);
    return bad;
}

cs_status cs_output_sort_spikes_by_id(const char *path) {
    cs_status st = CS_OK;
    H5E_BEGIN_TRY {
        hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t sg = f >= 0 ? H5Gopen2(f, "spikes", H5P_DEFAULT) : -1;
        hsize_t n = 0;
        /* incomplete while the datasets are rewritten: a failure half-way (a population's times
         * sorted, its ids not) must not leave a file that says it is complete */
        if (sg < 0 || H5Gget_num_objs(sg, &n) < 0 || cs__write_string_attr(f, "status", "incomplete") < 0)
            st = cs_error_set(CS_ERR_IO, "%s: cannot open /spikes to sort the spikes by node id", path);
        for (hsize_t k = 0; k < n && st == CS_OK; ++k) {
            char name[1024];
            if (H5Gget_objname_by_idx(sg, k, name, sizeof name) < 0) name[0] = '\0';
            hid_t g = name[0] ? H5Gopen2(sg, name, H5P_DEFAULT) : -1;
            if (g < 0 || sort_group(g))
                st = cs_error_set(CS_ERR_IO, "%s: cannot sort /spikes/%s by node id", path, name);
            if (g >= 0) H5Gclose(g);
        }
        if (st == CS_OK && cs__write_string_attr(f, "status", "complete") < 0)
            st = cs_error_set(CS_ERR_IO, "%s: spikes sorted by node id, but the file cannot be marked complete", path);
        if (sg >= 0) H5Gclose(sg);
        if (f >= 0 && H5Fclose(f) < 0 && st == CS_OK) st = cs_error_set(CS_ERR_IO, "%s: cannot close", path);
    }
    H5E_END_TRY;
    return st;
}
