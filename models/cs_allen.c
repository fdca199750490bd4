/* Allen Cell Types `*_fit.json` files → a population (cs_allen.h). */
#include "cs_allen.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIT_BYTES (16 << 20) /* a fit file is a few kB; anything larger is not one */
#define NREGION 5                /* tags 1..4: soma, axon, dend (basal), apic (apical) */

typedef struct {
    const char *file;            /* the fit file, in messages */
    const cs_model *model;
} ctx;

/* One density mechanism on one region (tag), as the genome builds it up. */
typedef struct {
    const cs_mech_type *type;
    int tag;
    double param[CS_MAX_PARAMS];
} entry;

static cs_status bad(const ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static cs_status bad(const ctx *c, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_error_set(CS_ERR_INVALID, "%s: %s", c->file, msg);
}

/* An Allen section type's region tag, -1 for another name. */
static int tag_of(const char *section) {
    static const char *const names[NREGION] = {"", "soma", "axon", "dend", "apic"};
    for (int t = 1; t < NREGION; ++t)
        if (section && !strcmp(section, names[t])) return t;
    return -1;
}

/* A number, also written as a string ("0.001"), finite. */
static int number_of(const cJSON *it, double *out) {
    if (cJSON_IsNumber(it)) *out = it->valuedouble;
    else if (cJSON_IsString(it)) {
        char *end;
        *out = strtod(it->valuestring, &end);
        if (end == it->valuestring || *end) return 0;
    } else return 0;
    return isfinite(*out);
}

static cs_status get_num(const ctx *c, const cJSON *obj, const char *key, const char *where, int required,
                         double *out) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) return required ? bad(c, "%s: missing '%s'", where, key) : CS_OK;
    if (!number_of(it, out)) return bad(c, "%s: '%s' must be a finite number", where, key);
    return CS_OK;
}

/* The first element of a one-element list ("passive": [{...}], "conditions": [{...}]). */
static const cJSON *first_object(const ctx *c, const cJSON *root, const char *key, int required, cs_status *st) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
    *st = CS_OK;
    if (!a) {
        if (required) *st = bad(c, "missing '%s'", key);
        return NULL;
    }
    const cJSON *o = cJSON_IsArray(a) ? cJSON_GetArrayItem(a, 0) : a;
    if (!cJSON_IsObject(o)) {
        *st = bad(c, "'%s' must be a list of one object", key);
        return NULL;
    }
    return o;
}

static const cs_mech_type *find_type(const cs_model *m, const char *name) {
    const cs_mech_type *t = cs_mech_find(name);
    return t ? t : cs_catalogue_find(&m->catalogues, name);
}

/* The entry of (type, tag), added with the type's defaults when new. */
static entry *entry_of(entry *e, int *n, const cs_mech_type *t, int tag) {
    for (int k = 0; k < *n; ++k)
        if (e[k].type == t && e[k].tag == tag) return &e[k];
    entry *x = &e[(*n)++];
    x->type = t;
    x->tag = tag;
    for (int j = 0; j < t->nparam && j < CS_MAX_PARAMS; ++j) x->param[j] = t->params[j].default_value;
    return x;
}

static cs_status set_param(const ctx *c, entry *x, const char *param, double v, const char *where) {
    int j = cs_mech_param_index(x->type, param);
    if (j < 0) return bad(c, "%s: mechanism '%s' has no parameter '%s'", where, x->type->name, param);
    const cs_mech_field *f = &x->type->params[j];
    if (!(v >= f->min && v <= f->max))
        return bad(c, "%s: %s of '%s' = %g is outside [%g, %g]", where, param, x->type->name, v, f->min, f->max);
    x->param[j] = v;
    return CS_OK;
}

/* NEURON's order of mechanism types: pas (built in), then the others by name; then by region. */
static int entry_order(const void *a, const void *b) {
    const entry *x = a, *y = b;
    int px = x->type == &cs_mech_pas, py = y->type == &cs_mech_pas;
    if (px != py) return py - px;
    int s = strcmp(x->type->name, y->type->name);
    return s ? s : x->tag - y->tag;
}

static cs_status genome(const ctx *c, const cJSON *g, entry *e, int *n, cs_population_spec *pop, double *ra_tag) {
    if (!cJSON_IsArray(g)) return bad(c, "'genome' must be a list");
    int k = 0;
    for (const cJSON *it = g->child; it; it = it->next, ++k) {
        char where[64];
        snprintf(where, sizeof where, "genome[%d]", k);
        if (!cJSON_IsObject(it)) return bad(c, "%s: expected an object", where);
        const char *section = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "section"));
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "name"));
        const cJSON *mj = cJSON_GetObjectItemCaseSensitive(it, "mechanism");
        const char *mech = mj ? cJSON_GetStringValue(mj) : "";
        if (!name || !name[0]) return bad(c, "%s: missing 'name'", where);
        if (!mech) return bad(c, "%s: 'mechanism' must be a string", where);
        if (section && !strcmp(section, "glob")) continue; /* old files' global entries: bmtk skips them */
        int tag = tag_of(section);
        if (tag < 0) return bad(c, "%s: unknown section '%s' (expected soma, axon, dend or apic)", where,
                                section ? section : "(none)");
        double v;
        CS_TRY(get_num(c, it, "value", where, 1, &v));
        if (!mech[0]) { /* a section property: g_pas, e_pas, cm, Ra */
            if (!strcmp(name, "cm")) {
                if (!(v > 0)) return bad(c, "%s: cm = %g must be > 0", where, v);
                pop->cm_tag[tag] = v; /* [µF/cm²] */
            } else if (!strcmp(name, "Ra")) {
                if (!(v > 0)) return bad(c, "%s: Ra = %g must be > 0", where, v);
                ra_tag[tag] = v; /* [Ω·cm] */
            } else if (!strcmp(name, "g_pas") || !strcmp(name, "e_pas")) {
                CS_TRY(set_param(c, entry_of(e, n, &cs_mech_pas, tag), name[0] == 'g' ? "g" : "e", v, where));
            } else {
                return bad(c, "%s: '%s' without a mechanism (expected g_pas, e_pas, cm or Ra)", where, name);
            }
            continue;
        }
        const cs_mech_type *t = find_type(c->model, mech);
        if (!t) return bad(c, "%s: mechanism '%s' is neither built in nor in the model's catalogues", where, mech);
        if (t->kind != CS_MECH_DENSITY) return bad(c, "%s: '%s' is a point mechanism", where, mech);
        size_t ln = strlen(name), lm = strlen(mech);
        if (ln <= lm + 1 || name[ln - lm - 1] != '_' || strcmp(name + ln - lm, mech))
            return bad(c, "%s: name '%s' is not PARAMETER_%s", where, name, mech);
        char param[CS_NAME_MAX];
        snprintf(param, sizeof param, "%.*s", (int)(ln - lm - 1), name);
        if (*n == 4 * CS_MAX_PARAMS) return bad(c, "%s: too many mechanisms", where);
        CS_TRY(set_param(c, entry_of(e, n, t, tag), param, v, where));
    }
    return CS_OK;
}

static cs_status conditions(const ctx *c, const cJSON *cond, cs_model *model, cs_population_spec *pop) {
    static const char *const ion[CS_NION] = {"na", "k", "ca"};
    CS_TRY(get_num(c, cond, "celsius", "conditions", 0, &model->celsius));
    CS_TRY(get_num(c, cond, "v_init", "conditions", 0, &pop->v_init));
    const cJSON *erev = cJSON_GetObjectItemCaseSensitive(cond, "erev");
    if (!erev) return CS_OK;
    if (!cJSON_IsArray(erev)) return bad(c, "conditions: 'erev' must be a list");
    int k = 0;
    for (const cJSON *it = erev->child; it; it = it->next, ++k) {
        char where[64];
        snprintf(where, sizeof where, "conditions.erev[%d]", k);
        if (!cJSON_IsObject(it)) return bad(c, "%s: expected an object", where);
        const char *section = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "section"));
        int tag = tag_of(section);
        if (tag < 0) return bad(c, "%s: unknown section '%s'", where, section ? section : "(none)");
        for (const cJSON *f = it->child; f; f = f->next) {
            if (!strcmp(f->string, "section")) continue;
            int which = -1;
            for (int i = 0; i < CS_NION; ++i)
                if (f->string[0] == 'e' && !strcmp(f->string + 1, ion[i])) which = i;
            if (which < 0) return bad(c, "%s: unknown key '%s' (expected section, ena, ek, eca)", where, f->string);
            double v;
            if (!number_of(f, &v)) return bad(c, "%s: '%s' must be a finite number", where, f->string);
            pop->ion_e[which][tag] = v; /* [mV] */
        }
    }
    return CS_OK;
}

cs_status cs_allen_population_text(const char *json, const char *name, const char *swc_path,
                                   const char *processing, cs_model *model, cs_population_spec *pop) {
    ctx c = {name, model};
    int peri = processing && !strcmp(processing, "aibs_perisomatic");
    if (!peri && !(processing && !strcmp(processing, "aibs_allactive")))
        return bad(&c, "model processing '%s' (expected aibs_perisomatic or aibs_allactive)",
                   processing ? processing : "(none)");
    if (!swc_path || !swc_path[0] || strlen(swc_path) >= sizeof pop->morph.swc_path)
        return bad(&c, "no morphology, or its path is too long");
    cJSON *root = cJSON_Parse(json);
    if (!root) return cs_error_set(CS_ERR_PARSE, "%s: not JSON (near byte %ld)", name,
                                   (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - json : 0));
    cs_status st = CS_OK;
    entry *e = calloc(4 * CS_MAX_PARAMS + 8, sizeof *e);
    if (!e) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK && !cJSON_IsObject(root)) st = bad(&c, "expected a JSON object");
    const cJSON *passive = st == CS_OK ? first_object(&c, root, "passive", 1, &st) : NULL;
    const cJSON *cond = st == CS_OK ? first_object(&c, root, "conditions", 0, &st) : NULL;

    /* defaults, then passive: Ra, cm per section type, e_pas on pas everywhere */
    double ra = 100.0, ra_tag[NREGION] = {0}, e_pas = cs_mech_pas.params[cs_mech_param_index(&cs_mech_pas, "e")].default_value;
    int n = 0;
    pop->cm = 1.0;
    for (int t = 0; t < CS_NTAG; ++t) pop->cm_tag[t] = 1.0;
    pop->v_init = -65.0;
    cs_population_ion_defaults(pop);
    if (st == CS_OK) st = get_num(&c, passive, "ra", "passive", 0, &ra);
    if (st == CS_OK && !(ra > 0)) st = bad(&c, "passive: ra = %g must be > 0", ra);
    if (st == CS_OK) st = get_num(&c, passive, "e_pas", "passive", 0, &e_pas);
    const cJSON *cm = passive ? cJSON_GetObjectItemCaseSensitive(passive, "cm") : NULL;
    if (st == CS_OK && cm && !cJSON_IsArray(cm)) st = bad(&c, "passive: 'cm' must be a list");
    for (const cJSON *it = cm ? cm->child : NULL; st == CS_OK && it; it = it->next) {
        int tag = tag_of(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "section")));
        double v = 0;
        if (tag < 0) st = bad(&c, "passive.cm: each entry needs a section soma, axon, dend or apic");
        else if ((st = get_num(&c, it, "cm", "passive.cm", 1, &v)) == CS_OK && !(v > 0))
            st = bad(&c, "passive.cm: cm = %g must be > 0", v);
        else if (st == CS_OK) pop->cm_tag[tag] = v; /* [µF/cm²] */
    }
    for (int t = 1; st == CS_OK && t < NREGION; ++t) st = set_param(&c, entry_of(e, &n, &cs_mech_pas, t), "e", e_pas, "passive");
    if (st == CS_OK) st = genome(&c, cJSON_GetObjectItemCaseSensitive(root, "genome"), e, &n, pop, ra_tag);
    if (st == CS_OK && cond) st = conditions(&c, cond, model, pop);
    cJSON_Delete(root);
    if (st == CS_OK) {
        qsort(e, (size_t)n, sizeof *e, entry_order);
        cs_density_spec *d = calloc((size_t)n, sizeof *d);
        if (!d) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
        for (int k = 0; d && k < n; ++k) {
            d[k].type = e[k].type;
            d[k].region_mask = 1u << e[k].tag;
            memcpy(d[k].param, e[k].param, sizeof d[k].param);
        }
        if (d) {
            free(pop->density);
            pop->density = d;
            pop->ndensity = n;
            pop->Ra = ra; /* [Ω·cm] passive's, then the genome's per section type */
            for (int t = 0; t < CS_NTAG; ++t) pop->Ra_tag[t] = t < NREGION && ra_tag[t] > 0 ? ra_tag[t] : ra;
            cs_morph_spec *ms = &pop->morph;
            ms->kind = CS_MORPH_SWC;
            snprintf(ms->swc_path, sizeof ms->swc_path, "%s", swc_path);
            ms->swc.scale = 1.0;
            ms->swc.min_radius = 0.0;
            ms->swc.neurites_at_soma_centre = 1; /* bmtk loads the SWC with NEURON's Import3d */
            /* perisomatic stubs 1 µm thick at soma(0.5); all-active ones as the removed axon at soma(1) */
            ms->axon_stub = (cs_axon_stub){1, 30.0, {peri ? 1.0 : 0.0, peri ? 1.0 : 0.0}, peri ? 0.5 : 1.0};
        }
    }
    free(e);
    return st;
}

cs_status cs_allen_population(const char *fit_json_path, const char *swc_path, const char *processing,
                              cs_model *model, cs_population_spec *pop) {
    FILE *f = fopen(fit_json_path, "rb");
    if (!f) return cs_error_set(CS_ERR_IO, "%s: cannot open the Allen fit file", fit_json_path);
    char *buf = malloc(MAX_FIT_BYTES + 1);
    size_t len = buf ? fread(buf, 1, MAX_FIT_BYTES + 1, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (!buf) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    if (err || len > MAX_FIT_BYTES) {
        free(buf);
        return cs_error_set(CS_ERR_IO, "%s: %s", fit_json_path, err ? "read error" : "larger than 16 MiB: not a fit file");
    }
    buf[len] = '\0';
    cs_status st = cs_allen_population_text(buf, fit_json_path, swc_path, processing, model, pop);
    free(buf);
    return st;
}
