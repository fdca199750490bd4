/* The SONATA reader's tables: CSV type files and whole HDF5 datasets, each error one line
 * naming the file and the row or dataset. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_sonata_internal.h"

#define CSV_MAX_BYTES (256u << 20) /* a type file has a row per type: 256 MiB is absurd */
#define CSV_MAX_COLS 4096

/* Split one line into fields: separated by spaces (or tabs), quoted with ' or ". */
static int split(char *line, char **field, int max) {
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t') ++p;
        if (!*p) return n;
        if (n == max) return -1;
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            field[n++] = p;
            while (*p && *p != q) ++p;
            if (!*p) return -2;
            *p++ = 0;
            if (*p && *p != ' ' && *p != '\t') return -2;
        } else {
            field[n++] = p;
            while (*p && *p != ' ' && *p != '\t') ++p;
            if (*p) *p++ = 0;
        }
    }
}

cs_status cs__csv_parse(const char *text, size_t len, const char *path, cs__csv *t) {
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    char *buf = malloc(len + 1);
    char **f = malloc(CSV_MAX_COLS * sizeof *f);
    if (!buf || !f) {
        free(buf); free(f);
        return cs_error_set(CS_ERR_NOMEM, "%s: out of memory", path);
    }
    memcpy(buf, text, len);
    buf[len] = 0;
    cs_status st = CS_OK;
    int line = 0, cap = 0;
    char *save = buf;
    for (char *l = buf; l && st == CS_OK; l = save) {
        save = strchr(l, '\n');
        if (save) *save++ = 0;
        ++line;
        size_t k = strlen(l);
        if (k && l[k - 1] == '\r') l[--k] = 0;
        if (!k) continue;
        int n = split(l, f, CSV_MAX_COLS);
        if (n == 0) continue;
        if (n < 0) {
            st = cs_error_set(CS_ERR_PARSE, "%s:%d: %s", path, line,
                              n == -1 ? "too many columns" : "unterminated or misplaced quote");
            break;
        }
        if (!t->head) {
            t->ncol = n;
            t->head = malloc((size_t)n * sizeof *t->head);
            if (!t->head) { st = cs_error_set(CS_ERR_NOMEM, "%s: out of memory", path); break; }
            for (int j = 0; j < n; ++j) t->head[j] = strdup(f[j]);
            continue;
        }
        if (n != t->ncol) {
            st = cs_error_set(CS_ERR_PARSE, "%s:%d: %d values where the header has %d columns", path, line, n,
                              t->ncol);
            break;
        }
        if (t->nrow == cap) {
            cap = cap ? 2 * cap : 16;
            char **c = realloc(t->cell, (size_t)cap * (size_t)t->ncol * sizeof *c);
            if (!c) { st = cs_error_set(CS_ERR_NOMEM, "%s: out of memory", path); break; }
            t->cell = c;
        }
        for (int j = 0; j < n; ++j) t->cell[(size_t)t->nrow * (size_t)t->ncol + (size_t)j] = strdup(f[j]);
        t->nrow++;
    }
    free(buf);
    free(f);
    if (st == CS_OK && !t->head) st = cs_error_set(CS_ERR_PARSE, "%s: no header row", path);
    for (int j = 0; st == CS_OK && j < t->ncol; ++j)
        if (!t->head[j]) st = cs_error_set(CS_ERR_NOMEM, "%s: out of memory", path);
    for (size_t j = 0; st == CS_OK && j < (size_t)t->nrow * (size_t)t->ncol; ++j)
        if (!t->cell[j]) st = cs_error_set(CS_ERR_NOMEM, "%s: out of memory", path);
    if (st != CS_OK) cs__csv_free(t);
    return st;
}

cs_status cs__csv_read(const char *path, cs__csv *t) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return cs_error_set(CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 65536 > cap) {
            cap = cap ? 2 * cap : 65536 * 2;
            char *p = cap <= CSV_MAX_BYTES + 65536 ? realloc(text, cap) : NULL;
            if (!p) {
                free(text);
                fclose(fp);
                return cs_error_set(CS_ERR_PARSE, "%s: larger than %u MiB or out of memory", path, CSV_MAX_BYTES >> 20);
            }
            text = p;
        }
        size_t r = fread(text + len, 1, 65536, fp);
        len += r;
        if (r < 65536) break;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) {
        free(text);
        return cs_error_set(CS_ERR_IO, "%s: read error", path);
    }
    cs_status st = cs__csv_parse(text ? text : "", len, path, t);
    free(text);
    return st;
}

void cs__csv_free(cs__csv *t) {
    for (int j = 0; t->head && j < t->ncol; ++j) free(t->head[j]);
    for (size_t j = 0; t->cell && j < (size_t)t->nrow * (size_t)t->ncol; ++j) free(t->cell[j]);
    free(t->head);
    free(t->cell);
    t->head = t->cell = NULL;
    t->nrow = t->ncol = 0;
}

int cs__csv_col(const cs__csv *t, const char *name) {
    for (int j = 0; j < t->ncol; ++j)
        if (!strcmp(t->head[j], name)) return j;
    return -1;
}

const char *cs__csv_get(const cs__csv *t, int row, const char *col) {
    int j = cs__csv_col(t, col);
    if (j < 0 || row < 0 || row >= t->nrow) return NULL;
    const char *v = t->cell[(size_t)row * (size_t)t->ncol + (size_t)j];
    return !strcmp(v, "NULL") || !strcmp(v, "NONE") || !strcmp(v, "None") || !*v ? NULL : v;
}

int cs__csv_row_of(const cs__csv *t, const char *idcol, long long id) {
    int j = cs__csv_col(t, idcol);
    for (int r = 0; j >= 0 && r < t->nrow; ++r) {
        char *end;
        long long v = strtoll(t->cell[(size_t)r * (size_t)t->ncol + (size_t)j], &end, 10);
        if (!*end && v == id) return r;
    }
    return -1;
}

/* ---- HDF5 ---- */

hid_t cs__h5_open_file(const char *path) {
    hid_t f = -1;
    H5E_BEGIN_TRY { f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT); }
    H5E_END_TRY;
    return f;
}

int cs__h5_exists(hid_t loc, const char *name) {
    htri_t e = 0;
    H5E_BEGIN_TRY { e = H5Lexists(loc, name, H5P_DEFAULT); }
    H5E_END_TRY;
    return e > 0;
}

/* A 1-D dataset read whole as `mem` (integers or floats, converted by HDF5). */
static cs_status read_1d(hid_t loc, const char *file, const char *name, hid_t mem, size_t size, void **v,
                         size_t *n) {
    *v = NULL;
    *n = 0;
    if (!cs__h5_exists(loc, name)) return cs_error_set(CS_ERR_PARSE, "%s: no dataset '%s'", file, name);
    cs_status st = CS_OK;
    H5E_BEGIN_TRY {
        hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
        hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
        hid_t ty = d >= 0 ? H5Dget_type(d) : -1;
        H5T_class_t cl = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
        hsize_t dim[2] = {0, 0};
        int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
        if (d < 0 || sp < 0 || rank != 1 || (cl != H5T_INTEGER && cl != H5T_FLOAT)) {
            st = cs_error_set(CS_ERR_PARSE, "%s: dataset '%s' is not a 1-D numeric dataset", file, name);
        } else {
            H5Sget_simple_extent_dims(sp, dim, NULL);
            *v = malloc(dim[0] ? dim[0] * size : 1);
            if (!*v) st = cs_error_set(CS_ERR_NOMEM, "%s: out of memory reading '%s'", file, name);
            else if (dim[0] && H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, *v) < 0)
                st = cs_error_set(CS_ERR_PARSE, "%s: cannot read dataset '%s'", file, name);
            *n = (size_t)dim[0];
        }
        if (ty >= 0) H5Tclose(ty);
        if (sp >= 0) H5Sclose(sp);
        if (d >= 0) H5Dclose(d);
    }
    H5E_END_TRY;
    if (st != CS_OK) {
        free(*v);
        *v = NULL;
        *n = 0;
    }
    return st;
}

cs_status cs__h5_read_i64(hid_t loc, const char *file, const char *name, int64_t **v, size_t *n) {
    return read_1d(loc, file, name, H5T_NATIVE_INT64, sizeof **v, (void **)v, n);
}

cs_status cs__h5_read_f64(hid_t loc, const char *file, const char *name, double **v, size_t *n) {
    return read_1d(loc, file, name, H5T_NATIVE_DOUBLE, sizeof **v, (void **)v, n);
}

void cs__h5_attr_string(hid_t obj, const char *attr, char *buf, size_t n) {
    buf[0] = 0;
    H5E_BEGIN_TRY {
        if (H5Aexists(obj, attr) > 0) {
            hid_t a = H5Aopen(obj, attr, H5P_DEFAULT);
            hid_t t = a >= 0 ? H5Aget_type(a) : -1;
            if (t >= 0 && H5Tget_class(t) == H5T_STRING) {
                if (H5Tis_variable_str(t) > 0) {
                    char *s = NULL;
                    hid_t mt = H5Tcopy(H5T_C_S1);
                    H5Tset_size(mt, H5T_VARIABLE);
                    H5Tset_cset(mt, H5Tget_cset(t)); /* HDF5 converts no character sets */
                    if (H5Aread(a, mt, &s) >= 0 && s) {
                        snprintf(buf, n, "%s", s);
                        H5free_memory(s);
                    }
                    H5Tclose(mt);
                } else {
                    size_t sz = H5Tget_size(t);
                    char *s = sz < (1u << 20) ? calloc(sz + 1, 1) : NULL;
                    if (s && H5Aread(a, t, s) >= 0) snprintf(buf, n, "%s", s);
                    free(s);
                }
            }
            if (t >= 0) H5Tclose(t);
            if (a >= 0) H5Aclose(a);
        }
    }
    H5E_END_TRY;
}
