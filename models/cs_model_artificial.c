/* The model reader's part for artificial cells (docs/model-format.md, "artificial"): a
 * population of ARTIFICIAL_CELL instances (NetStim, IntFire1/2/4, VecStim, a catalogue's), their
 * VecStim spike times from the model or a file, and connections' weight vectors. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_model_json.h"


static const cs_mech_type *find_artificial(const parse_ctx *pc, const char *path, const char *name,
                                           cs_status *st) {
    const cs_mech_type *t = cs_mech_find(name);
    if (!t) t = cs_catalogue_find(pc->cat, name);
    if (!t || !t->artificial) {
        *st = FAIL(pc, path, "'%s' is not an artificial cell type (built in: NetStim, IntFire1, IntFire2, IntFire4, "
                             "VecStim; or an ARTIFICIAL_CELL of a catalogue)", name);
        return NULL;
    }
    *st = CS_OK;
    return t;
}

/* Append time t to cell c's list, which must ascend. */
static int push_time(double **times, int *n, int *cap, int c, double t) {
    if (n[c] == cap[c]) {
        int nc = cap[c] ? 2 * cap[c] : 8;
        double *p = realloc(times[c], (size_t)nc * sizeof *p);
        if (!p) return -1;
        times[c] = p;
        cap[c] = nc;
    }
    times[c][n[c]++] = t;
    return 0;
}

cs_status cs_spike_times_parse(const char *text, const char *name, int count, double **times, int *n) {
    int *cap = calloc((size_t)count + 1, sizeof *cap);
    if (!cap) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    cs_status st = CS_OK;
    int line = 0;
    for (const char *p = text; *p && st == CS_OK;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        ++line;
        char buf[256];
        if (len >= sizeof buf) {
            st = cs_error_set(CS_ERR_PARSE, "%s:%d: line too long", name, line);
            break;
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += len + (end ? 1 : 0);
        char *hash = strchr(buf, '#');
        if (hash) *hash = '\0';
        char *q = buf;
        while (*q == ' ' || *q == '\t' || *q == '\r') ++q;
        if (!*q) continue;
        char *e1, *e2;
        errno = 0;
        long c = strtol(q, &e1, 10);
        double t = e1 != q ? strtod(e1, &e2) : 0;
        if (e1 == q || e2 == e1) {
            st = cs_error_set(CS_ERR_PARSE, "%s:%d: expected 'CELL TIME' (a cell index and a time in ms)", name, line);
            break;
        }
        while (*e2 == ' ' || *e2 == '\t' || *e2 == '\r') ++e2;
        if (*e2) {
            st = cs_error_set(CS_ERR_PARSE, "%s:%d: unexpected '%s' after the time", name, line, e2);
        } else if (c < 0 || c >= count) {
            st = cs_error_set(CS_ERR_PARSE, "%s:%d: cell %ld is not in [0, %d)", name, line, c, count);
        } else if (!(isfinite(t) && t >= 0)) {
            st = cs_error_set(CS_ERR_PARSE, "%s:%d: time %g ms must be finite and >= 0", name, line, t);
        } else if (n[c] && t < times[c][n[c] - 1]) {
            st = cs_error_set(CS_ERR_PARSE, "%s:%d: time %g ms of cell %ld is before its previous one (%g ms): a "
                                            "VecStim's times must ascend", name, line, t, c, times[c][n[c] - 1]);
        } else if (push_time(times, n, cap, (int)c, t)) {
            st = cs_error_set(CS_ERR_NOMEM, "out of memory for spike times");
        }
    }
    free(cap);
    return st;
}

static char *read_text(const parse_ctx *pc, const char *path, const char *file, cs_status *st) {
    FILE *f = fopen(file, "rb");
    if (!f) {
        *st = FAIL(pc, path, "%s: cannot open: %s", file, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4097 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                *st = cs_error_set(CS_ERR_NOMEM, "%s: out of memory", file);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, 4096, f);
        len += got;
    } while (got == 4096);
    int err = ferror(f);
    fclose(f);
    buf[len] = '\0';
    if (err || strlen(buf) != len) {
        free(buf);
        *st = FAIL(pc, path, "%s: %s", file, err ? "read error" : "not a text file (contains a NUL byte)");
        return NULL;
    }
    *st = CS_OK;
    return buf;
}

/* "times": [[t, ...] per cell] or "times_file": "FILE" (relative to the model file). */
static cs_status parse_times(const parse_ctx *pc, const char *path, const cJSON *a, cs_population_spec *ps) {
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(a, "times");
    const cJSON *tf = cJSON_GetObjectItemCaseSensitive(a, "times_file");
    if (!tl == !tf) return FAIL(pc, path, "a VecStim population needs one of 'times' or 'times_file'");
    ps->play = calloc((size_t)ps->count, sizeof *ps->play);
    ps->nplay = calloc((size_t)ps->count, sizeof *ps->nplay);
    if (!ps->play || !ps->nplay) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    if (tf) {
        if (!cJSON_IsString(tf) || !tf->valuestring[0]) return FAIL(pc, path, "'times_file' must be a file name");
        char file[CS_PATH_MAX];
        if (tf->valuestring[0] == '/' || !pc->base_dir[0]) snprintf(file, sizeof file, "%s", tf->valuestring);
        else snprintf(file, sizeof file, "%s/%s", pc->base_dir, tf->valuestring);
        cs_status st;
        char *text = read_text(pc, path, file, &st);
        if (!text) return st;
        st = cs_spike_times_parse(text, file, ps->count, ps->play, ps->nplay);
        free(text);
        return st;
    }
    if (!cJSON_IsArray(tl) || cJSON_GetArraySize(tl) != ps->count)
        return FAIL(pc, path, "'times' must be a list of %d lists of spike times [ms], one per cell", ps->count);
    for (int c = 0; c < ps->count; ++c) {
        const cJSON *l = cJSON_GetArrayItem(tl, c);
        if (!cJSON_IsArray(l)) return FAIL(pc, path, "times[%d] must be a list of spike times [ms]", c);
        int n = cJSON_GetArraySize(l);
        ps->play[c] = malloc((size_t)(n > 0 ? n : 1) * sizeof **ps->play);
        if (!ps->play[c]) return cs_error_set(CS_ERR_NOMEM, "out of memory");
        for (int k = 0; k < n; ++k) {
            const cJSON *e = cJSON_GetArrayItem(l, k);
            if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble < 0)
                return FAIL(pc, path, "times[%d][%d] must be a finite time >= 0 [ms]", c, k);
            if (k && e->valuedouble < ps->play[c][k - 1])
                return FAIL(pc, path, "times[%d][%d] = %g ms is before times[%d][%d]: a VecStim's times must ascend", c,
                            k, e->valuedouble, c, k - 1);
            ps->play[c][k] = e->valuedouble;
        }
        ps->nplay[c] = n;
    }
    return CS_OK;
}

cs_status cs__model_artificial(const parse_ctx *pc, const char *path, const cJSON *a, cs_population_spec *ps) {
    static const char *const keys[] = {"mechanism", "params", "times", "times_file", NULL};
    CS_TRY(cs__model_check_keys(pc, path, a, keys));
    char name[CS_NAME_MAX];
    CS_TRY(cs__model_get_string(pc, path, a, "mechanism", 1, "", name, sizeof name));
    cs_status st;
    ps->artificial = find_artificial(pc, path, name, &st);
    if (!ps->artificial) return st;
    CS_TRY(cs__model_parse_params(pc, path, a, ps->artificial, ps->artificial_param));
    if (ps->artificial == &cs_mech_VecStim) return parse_times(pc, path, a, ps);
    if (cJSON_GetObjectItemCaseSensitive(a, "times") || cJSON_GetObjectItemCaseSensitive(a, "times_file"))
        return FAIL(pc, path, "'times' and 'times_file' are for VecStim only");
    return CS_OK;
}

cs_status cs__model_weight(const parse_ctx *pc, const char *path, const cJSON *obj, double *w, int *n) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, "weight");
    for (int k = 0; k < CS_MAX_WEIGHTS; ++k) w[k] = 0;
    *n = 1;
    if (!it) return FAIL(pc, path, "missing 'weight'");
    if (cJSON_IsNumber(it)) {
        if (!isfinite(it->valuedouble)) return FAIL(pc, path, "'weight' must be finite (got %g)", it->valuedouble);
        w[0] = it->valuedouble;
        return CS_OK;
    }
    int len = cJSON_IsArray(it) ? cJSON_GetArraySize(it) : 0;
    if (len < 1 || len > CS_MAX_WEIGHTS)
        return FAIL(pc, path, "'weight' must be a number or a list of 1 to %d numbers (NET_RECEIVE's arguments)",
                    CS_MAX_WEIGHTS);
    for (int k = 0; k < len; ++k) {
        const cJSON *e = cJSON_GetArrayItem(it, k);
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
            return FAIL(pc, path, "weight[%d] must be a finite number", k);
        w[k] = e->valuedouble;
    }
    *n = len;
    return CS_OK;
}

const double *cs_model_conn_weights(const cs_model *m, size_t k) {
    size_t lo = 0, hi = m->nxweight;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->xweights[mid].conn < k) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->nxweight && m->xweights[lo].conn == k ? m->xweights[lo].w : NULL;
}
