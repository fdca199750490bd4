/* Helpers shared by the SONATA reader's files: paths, populations by name, node sets,
 * mechanisms by name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_sonata_internal.h"

#define MAX_CONFIG_BYTES (64u << 20) /* a config or a JSON component */

static const char *get_str(const cJSON *o, const char *key) {
    const cJSON *j = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

void cs__resolve(const cs__circuit *c, const char *p, char *out, size_t n) { cs__path(c->dir, p, out, n); }

void cs__path(const char *dir, const char *p, char *out, size_t n) {
    int w = p[0] == '/' ? snprintf(out, n, "%s", p) : snprintf(out, n, "%s/%s", dir, p);
    if (w < 0 || (size_t)w >= n) out[0] = 0; /* too long: names no file, so opening it fails with its message */
}

int cs__npop_find(const cs__circuit *c, const char *name) {
    for (int k = 0; k < c->npop; ++k)
        if (!strcmp(c->pops[k].name, name)) return k;
    return -1;
}

/* ---- node sets ---- */

static int matches(const cs__circuit *c, const cs__npop *p, size_t node, const cJSON *set) {
    for (const cJSON *it = set->child; it; it = it->next) {
        if (!strcmp(it->string, "population")) continue;
        int ok = 0;
        const cJSON *vals = cJSON_IsArray(it) ? it->child : it;
        for (const cJSON *v = vals; v && !ok; v = cJSON_IsArray(it) ? v->next : NULL) {
            if (!strcmp(it->string, "node_id")) ok = cJSON_IsNumber(v) && v->valuedouble == (double)node;
            else if (!strcmp(it->string, "node_type_id"))
                ok = cJSON_IsNumber(v) && v->valuedouble == (double)p->type_id[node];
            else {
                const char *s = cs__csv_get(p->types, p->type_row[node], it->string);
                char num[64];
                if (cJSON_IsNumber(v)) snprintf(num, sizeof num, "%g", v->valuedouble);
                ok = s && ((cJSON_IsString(v) && !strcmp(s, v->valuestring)) ||
                           (cJSON_IsNumber(v) && strtod(s, NULL) == v->valuedouble));
            }
        }
        if (!ok) return 0;
    }
    (void)c;
    return 1;
}

cs_status cs__node_set(const cs__circuit *c, const char *where, const cJSON *set, int *pop, int64_t **ids,
                       size_t *n) {
    if (cJSON_IsString(set)) {
        const cJSON *all = cJSON_GetObjectItemCaseSensitive(c->root, "node_sets");
        const cJSON *s = all ? cJSON_GetObjectItemCaseSensitive(all, set->valuestring) : NULL;
        if (!s) return cs_error_set(CS_ERR_PARSE, "%s: %s: no node set '%s'", c->path, where, set->valuestring);
        set = s;
    }
    if (!cJSON_IsObject(set)) return cs_error_set(CS_ERR_PARSE, "%s: %s: a node set must be an object", c->path, where);
    const char *pn = get_str(set, "population");
    *pop = -1;
    if (pn) *pop = cs__npop_find(c, pn);
    else
        for (int k = 0; k < c->npop; ++k)
            if (!c->pops[k].is_virtual) {
                if (*pop >= 0)
                    return cs_error_set(CS_ERR_PARSE, "%s: %s: the node set needs a \"population\" (there are several)",
                                        c->path, where);
                *pop = k;
            }
    if (*pop < 0)
        return cs_error_set(CS_ERR_PARSE, "%s: %s: no node population '%s'", c->path, where, pn ? pn : "(any)");
    const cs__npop *p = &c->pops[*pop];
    *ids = malloc((p->n ? p->n : 1) * sizeof **ids);
    if (!*ids) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    *n = 0;
    for (size_t k = 0; k < p->n; ++k)
        if (matches(c, p, k, set)) (*ids)[(*n)++] = (int64_t)k;
    return CS_OK;
}

const cs_mech_type *cs__mech(const cs_model *m, const char *name) {
    const cs_mech_type *t = cs_mech_find(name);
    return t ? t : cs_catalogue_find(&m->catalogues, name);
}

static cs_status read_text(const char *path, char **out) {
    FILE *f = fopen(path, "rb");
    if (!f) return cs_error_set(CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4097 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *nb = cap <= MAX_CONFIG_BYTES ? realloc(buf, cap) : NULL;
            if (!nb) {
                free(buf);
                fclose(f);
                return cs_error_set(CS_ERR_PARSE, "%s: larger than %u MiB or out of memory", path,
                                    MAX_CONFIG_BYTES >> 20);
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, 4096, f);
        len += got;
        if (got < 4096) break;
    }
    fclose(f);
    buf[len] = 0;
    if (strlen(buf) != len) {
        free(buf);
        return cs_error_set(CS_ERR_PARSE, "%s: not a text file (contains a NUL byte)", path);
    }
    *out = buf;
    return CS_OK;
}

cs_status cs__read_json(const char *path, cJSON **root) {
    char *text = NULL;
    CS_TRY(read_text(path, &text));
    const char *end = NULL;
    *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!*root || !cJSON_IsObject(*root)) {
        int line = 1;
        for (const char *p = text; end && p < end && *p; ++p) line += *p == '\n';
        free(text);
        cJSON_Delete(*root);
        *root = NULL;
        return cs_error_set(CS_ERR_PARSE, "%s:%d: not a JSON object (syntax error)", path, line);
    }
    free(text);
    return CS_OK;
}
