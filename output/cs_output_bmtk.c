/* A membrane report in bmtk's own file layout, from a finished run's file: bmtk writes each
 * report to output_dir/<report>.h5 with /report/<population>/{data, mapping/{node_ids,
 * element_ids, element_pos, index_pointer, time}}, rows t = 0, dt, ... below tstop. The run's
 * file holds the same columns under one report group per cablesim population and variable
 * (several for a SONATA population of several node types), of which a report may take some
 * places of each cell; this selects and concatenates them. */
#include "cs_output_bmtk.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double *data;   /* [rows × ncol] */
    uint64_t *ids;  /* [nnode] */
    uint32_t *el;   /* [ncol] */
    size_t rows, ncol, nnode;
    double time[3];
} group;

static int read_ds(hid_t f, const char *name, hid_t mem, void **v, hsize_t *dim, int rank) {
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) return -1;
    hid_t sp = H5Dget_space(d);
    int ok = H5Sget_simple_extent_ndims(sp) == rank;
    if (ok) H5Sget_simple_extent_dims(sp, dim, NULL);
    size_t n = ok ? (size_t)dim[0] * (rank == 2 ? (size_t)dim[1] : 1) : 0;
    size_t sz = H5Tget_size(mem);
    *v = ok ? malloc(n ? n * sz : 1) : NULL;
    ok = *v && (n == 0 || H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, *v) >= 0);
    H5Sclose(sp);
    H5Dclose(d);
    return ok ? 0 : -1;
}

static int write_ds(hid_t g, const char *name, hid_t type, int rank, const hsize_t *dim, const void *v) {
    hid_t sp = H5Screate_simple(rank, dim, NULL);
    hid_t d = H5Dcreate2(g, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int ok = d >= 0 && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
    return ok ? 0 : -1;
}

static void free_group(group *g) {
    free(g->data); free(g->ids); free(g->el);
}

cs_status cs_output_bmtk_report(const char *src, const char *dst, const char *population, int ngroup,
                                const cs_bmtk_group *groups, const cs_bmtk_rows *win, int append) {
    cs_status st = CS_OK;
    group *g = calloc((size_t)(ngroup ? ngroup : 1), sizeof *g);
    if (!g) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    hid_t f = -1, o = -1;
    H5E_BEGIN_TRY {
        f = H5Fopen(src, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0) st = cs_error_set(CS_ERR_IO, "%s: cannot open to copy its report to %s", src, dst);
        size_t rows = (size_t)-1, ncol = 0, nnode = 0;
        for (int k = 0; k < ngroup && st == CS_OK; ++k) {
            char name[512];
            hsize_t dim[2] = {0, 0};
            void *p;
            snprintf(name, sizeof name, "/report/%s/data", groups[k].name);
            if (read_ds(f, name, H5T_NATIVE_DOUBLE, (void **)&g[k].data, dim, 2)) goto bad;
            g[k].rows = (size_t)dim[0];
            g[k].ncol = (size_t)dim[1];
            snprintf(name, sizeof name, "/report/%s/mapping/node_ids", groups[k].name);
            if (read_ds(f, name, H5T_NATIVE_UINT64, (void **)&g[k].ids, dim, 1)) goto bad;
            g[k].nnode = (size_t)dim[0];
            snprintf(name, sizeof name, "/report/%s/mapping/element_ids", groups[k].name);
            /* each cell's nloc columns together, in the order of node_ids (cs_sim_output.c) */
            if (read_ds(f, name, H5T_NATIVE_UINT32, (void **)&g[k].el, dim, 1) || dim[0] != g[k].ncol ||
                groups[k].nloc < 1 || g[k].ncol != g[k].nnode * (size_t)groups[k].nloc || groups[k].nsel < 1 ||
                groups[k].nsel > groups[k].nloc)
                goto bad;
            snprintf(name, sizeof name, "/report/%s/mapping/time", groups[k].name);
            if (read_ds(f, name, H5T_NATIVE_DOUBLE, &p, dim, 1) || dim[0] != 3) goto bad;
            memcpy(g[k].time, p, sizeof g[k].time);
            free(p);
            if (g[k].rows < rows) rows = g[k].rows;
            ncol += g[k].nnode * (size_t)groups[k].nsel;
            nnode += g[k].nnode;
            continue;
        bad:
            st = cs_error_set(CS_ERR_IO, "%s: report '%s' is missing or malformed (copying it to %s)", src, groups[k].name,
                              dst);
        }
        /* bmtk's rows: t < tstop (our file also holds the sample at tstop) */
        if (st == CS_OK && ngroup) {
            double t0 = g[0].time[0], t1 = g[0].time[1], dt = g[0].time[2];
            size_t want = (size_t)((t1 - t0) / dt + 0.5);
            if (want > 0 && want - 1 < rows && want - 1 > 0) rows = want - 1 < rows ? want - 1 : rows;
        }
        /* the window: rows first, first + stride, ... below t_end */
        size_t first = 0, stride = 1, nout = rows;
        double t_first = ngroup ? g[0].time[0] : 0, t_step = ngroup ? g[0].time[2] : 0;
        if (st == CS_OK && ngroup && win && t_step > 0) {
            double t0 = g[0].time[0];
            stride = win->dt > 0 ? (size_t)fmax(1.0, floor(win->dt / t_step + 0.5)) : 1;
            first = (size_t)fmax(0.0, floor((win->t_start - t0) / t_step + 0.5));
            size_t last = rows; /* exclusive: rows below t_end */
            if (win->t_end >= 0) {
                double e = (win->t_end - t0) / t_step; /* rows r with t0 + r·step < t_end */
                size_t ce = (size_t)fmax(0.0, ceil(e - 1e-9));
                if (ce < last) last = ce;
            }
            nout = first < last ? (last - first + stride - 1) / stride : 0;
            t_first = t0 + (double)first * t_step;
            t_step *= (double)stride;
        }
        double *data = st == CS_OK ? malloc((nout * ncol > 0 ? nout * ncol : 1) * sizeof *data) : NULL;
        uint64_t *ids = st == CS_OK ? malloc((nnode + 1) * sizeof *ids) : NULL, *ptr = st == CS_OK ? malloc((nnode + 1) * sizeof *ptr) : NULL;
        uint64_t *el = st == CS_OK ? malloc((ncol + 1) * sizeof *el) : NULL;
        double *pos = st == CS_OK ? malloc((ncol + 1) * sizeof *pos) : NULL;
        if (st == CS_OK && (!data || !ids || !ptr || !el || !pos)) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
        if (st == CS_OK) {
            size_t c0 = 0, n0 = 0;
            for (int k = 0; k < ngroup; ++k) {
                size_t nl = (size_t)groups[k].nloc, ns = (size_t)groups[k].nsel;
                for (size_t r = 0; r < nout; ++r) {
                    const double *row = g[k].data + (first + r * stride) * g[k].ncol;
                    for (size_t j = 0; j < g[k].nnode; ++j)
                        for (size_t l = 0; l < ns; ++l)
                            data[r * ncol + c0 + j * ns + l] = row[j * nl + (groups[k].sel ? (size_t)groups[k].sel[l] : l)];
                }
                for (size_t j = 0; j < g[k].nnode * ns; ++j) {
                    /* bmtk's element: the SONATA section and the position on it, not our CV */
                    size_t l = j % ns;
                    el[c0 + j] = groups[k].section ? (uint64_t)groups[k].section[l] : 0;
                    pos[c0 + j] = groups[k].pos ? groups[k].pos[l] : 0.5;
                }
                for (size_t j = 0; j < g[k].nnode; ++j) {
                    ids[n0 + j] = g[k].ids[j];
                    ptr[n0 + j] = c0 + j * ns;
                }
                c0 += g[k].nnode * ns;
                n0 += g[k].nnode;
            }
            ptr[nnode] = ncol;
            double time[3] = {t_first, t_first + (double)nout * t_step, t_step};
            char grp[512];
            o = append ? H5Fopen(dst, H5F_ACC_RDWR, H5P_DEFAULT)
                       : H5Fcreate(dst, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
            snprintf(grp, sizeof grp, "/report/%s/mapping", population);
            hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
            H5Pset_create_intermediate_group(lcpl, 1);
            hid_t mg = o >= 0 ? H5Gcreate2(o, grp, lcpl, H5P_DEFAULT, H5P_DEFAULT) : -1;
            H5Pclose(lcpl);
            snprintf(grp, sizeof grp, "/report/%s", population);
            hid_t pg = o >= 0 ? H5Gopen2(o, grp, H5P_DEFAULT) : -1;
            hsize_t d2[2] = {nout, ncol}, dn = nnode, dp = nnode + 1, dc = ncol, d3 = 3;
            int bad = mg < 0 || pg < 0 || write_ds(pg, "data", H5T_NATIVE_DOUBLE, 2, d2, data) ||
                      write_ds(mg, "node_ids", H5T_NATIVE_UINT64, 1, &dn, ids) ||
                      write_ds(mg, "index_pointer", H5T_NATIVE_UINT64, 1, &dp, ptr) ||
                      write_ds(mg, "element_ids", H5T_NATIVE_UINT64, 1, &dc, el) ||
                      write_ds(mg, "element_pos", H5T_NATIVE_DOUBLE, 1, &dc, pos) ||
                      write_ds(mg, "time", H5T_NATIVE_DOUBLE, 1, &d3, time);
            if (mg >= 0) H5Gclose(mg);
            if (pg >= 0) H5Gclose(pg);
            if (o >= 0 && H5Fclose(o) < 0) bad = 1;
            if (bad) st = cs_error_set(CS_ERR_IO, "%s: cannot write the report", dst);
        }
        free(data); free(ids); free(ptr); free(el); free(pos);
        if (f >= 0) H5Fclose(f);
    }
    H5E_END_TRY;
    for (int k = 0; k < ngroup; ++k) free_group(&g[k]);
    free(g);
    return st;
}
