/* The dynamics of a biophysical SONATA node type: bmtk's "aibs_perisomatic" processing of a
 * fit JSON (passive ra, cm, e_pas; genome entries "<param>_<mech>" per section; erev per
 * section), with any mechanism cablesim knows (built-ins, or the circuit's mechanisms_dir).
 * A stopgap covering what bmtk's set_params_peri does with one cm for the whole cell: the
 * Allen importer (models/cs_allen.h, issue 27) replaces it when it lands, with per-section cm
 * and ion concentrations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_sonata_internal.h"

static const char *const section_name[] = {"soma", "axon", "dend", "apic"};
static const int section_tag[] = {CS_TAG_SOMA, CS_TAG_AXON, CS_TAG_DEND, CS_TAG_APIC};

static int tag_of(const char *s) {
    for (int k = 0; k < 4; ++k)
        if (!strcmp(s, section_name[k])) return section_tag[k];
    return -1;
}

/* The density entry of mechanism t on region tag `tag`, made with t's defaults when absent. */
static cs_status entry(cs_population_spec *ps, const cs_mech_type *t, int tag, cs_density_spec **out) {
    for (int k = 0; k < ps->ndensity; ++k)
        if (ps->density[k].type == t && ps->density[k].region_mask == (1u << tag)) {
            *out = &ps->density[k];
            return CS_OK;
        }
    cs_density_spec *d = realloc(ps->density, (size_t)(ps->ndensity + 1) * sizeof *d);
    if (!d) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    ps->density = d;
    *out = &d[ps->ndensity++];
    memset(*out, 0, sizeof **out);
    (*out)->type = t;
    (*out)->region_mask = 1u << tag;
    for (int k = 0; k < t->nparam; ++k) (*out)->param[k] = t->params[k].default_value;
    return CS_OK;
}

static cs_status set_param(const char *file, cs_population_spec *ps, const cs_mech_type *t, int tag,
                           const char *param, double v) {
    int k = cs_mech_param_index(t, param);
    if (k < 0) return cs_error_set(CS_ERR_PARSE, "%s: mechanism '%s' has no parameter '%s'", file, t->name, param);
    cs_density_spec *d = NULL;
    CS_TRY(entry(ps, t, tag, &d));
    d->param[k] = v;
    return CS_OK;
}

static const cJSON *first_of(const cJSON *root, const char *key) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsArray(a) ? a->child : NULL;
}

static cs_status num(const char *file, const cJSON *o, const char *what, const char *key, double *v) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(j)) return cs_error_set(CS_ERR_PARSE, "%s: %s: \"%s\" must be a number", file, what, key);
    *v = j->valuedouble;
    return CS_OK;
}

static cs_status perisomatic(const cs_model *m, const char *file, const cJSON *root, cs_population_spec *ps) {
    const cJSON *passive = first_of(root, "passive"), *cond = first_of(root, "conditions");
    const cJSON *genome = cJSON_GetObjectItemCaseSensitive(root, "genome");
    if (!cJSON_IsObject(passive) || !cJSON_IsArray(genome))
        return cs_error_set(CS_ERR_PARSE, "%s: an aibs_perisomatic fit needs \"passive\" [{...}] and \"genome\" [...]", file);
    double e_pas = 0, cm = -1;
    CS_TRY(num(file, passive, "passive", "ra", &ps->Ra));
    CS_TRY(num(file, passive, "passive", "e_pas", &e_pas));
    const cJSON *cms = cJSON_GetObjectItemCaseSensitive(passive, "cm");
    for (const cJSON *it = cJSON_IsArray(cms) ? cms->child : NULL; it; it = it->next) {
        double v = 0;
        CS_TRY(num(file, it, "passive.cm", "cm", &v));
        if (cm >= 0 && v != cm)
            return cs_error_set(CS_ERR_UNSUPPORTED, "%s: passive.cm differs between sections (%g, %g): per-section cm "
                                "needs the Allen importer", file, cm, v);
        cm = v;
    }
    if (cm > 0) ps->cm = cm;
    /* bmtk inserts pas everywhere with e_pas, then applies the genome */
    const cs_mech_type *pas = cs__mech(m, "pas");
    for (int s = 0; s < 4; ++s) CS_TRY(set_param(file, ps, pas, section_tag[s], "e", e_pas));
    int idx = 0;
    for (const cJSON *g = genome->child; g; g = g->next, ++idx) {
        char what[64];
        snprintf(what, sizeof what, "genome[%d]", idx);
        const cJSON *sec = cJSON_GetObjectItemCaseSensitive(g, "section");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(g, "name");
        const cJSON *mech = cJSON_GetObjectItemCaseSensitive(g, "mechanism");
        double v = 0;
        CS_TRY(num(file, g, what, "value", &v));
        if (!cJSON_IsString(sec) || !cJSON_IsString(name))
            return cs_error_set(CS_ERR_PARSE, "%s: %s: \"section\" and \"name\" must be strings", file, what);
        int tag = tag_of(sec->valuestring);
        if (tag < 0) return cs_error_set(CS_ERR_PARSE, "%s: %s: unknown section '%s'", file, what, sec->valuestring);
        const char *mn = cJSON_IsString(mech) && mech->valuestring[0] ? mech->valuestring : strrchr(name->valuestring, '_');
        if (!mn) return cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: '%s' names no mechanism", file, what, name->valuestring);
        if (*mn == '_') ++mn;
        size_t ln = strlen(name->valuestring), lm = strlen(mn);
        if (ln <= lm + 1 || strcmp(name->valuestring + ln - lm, mn) || name->valuestring[ln - lm - 1] != '_')
            return cs_error_set(CS_ERR_PARSE, "%s: %s: '%s' is not <parameter>_%s", file, what, name->valuestring, mn);
        const cs_mech_type *t = cs__mech(m, mn);
        if (!t || t->kind != CS_MECH_DENSITY)
            return cs_error_set(CS_ERR_PARSE, "%s: %s: unknown density mechanism '%s' (not built in, not in mechanisms_dir)",
                                file, what, mn);
        char param[CS_NAME_MAX];
        snprintf(param, sizeof param, "%.*s", (int)(ln - lm - 1), name->valuestring);
        CS_TRY(set_param(file, ps, t, tag, param, v));
    }
    /* reversal potentials: the ions', and the built-in hh's own parameters */
    const cJSON *erev = cond ? cJSON_GetObjectItemCaseSensitive(cond, "erev") : NULL;
    for (const cJSON *e = cJSON_IsArray(erev) ? erev->child : NULL; e; e = e->next) {
        const cJSON *sec = cJSON_GetObjectItemCaseSensitive(e, "section");
        int tag = cJSON_IsString(sec) ? tag_of(sec->valuestring) : -1;
        if (tag < 0) return cs_error_set(CS_ERR_PARSE, "%s: conditions.erev: unknown or missing section", file);
        double ena = 0, ek = 0;
        CS_TRY(num(file, e, "conditions.erev", "ena", &ena));
        CS_TRY(num(file, e, "conditions.erev", "ek", &ek));
        ps->ion_e[CS_ION_NA][tag] = ena;
        ps->ion_e[CS_ION_K][tag] = ek;
        for (int k = 0; k < ps->ndensity; ++k) {
            cs_density_spec *d = &ps->density[k];
            if (d->region_mask != (1u << tag) || strcmp(d->type->name, "hh")) continue;
            d->param[cs_mech_param_index(d->type, "ena")] = ena;
            d->param[cs_mech_param_index(d->type, "ek")] = ek;
        }
    }
    return CS_OK;
}

cs_status cs__biophysics(const cs__circuit *c, const cs_model *m, const char *where, const char *processing,
                         const char *dyn_path, cs_population_spec *ps) {
    (void)c;
    if (!processing) return CS_OK; /* bmtk: the bare morphology, dynamics_params unused */
    if (strcmp(processing, "aibs_perisomatic"))
        return cs_error_set(CS_ERR_UNSUPPORTED, "%s: model_processing '%s' (supported: aibs_perisomatic)", where,
                            processing);
    if (!dyn_path) return cs_error_set(CS_ERR_PARSE, "%s: aibs_perisomatic without dynamics_params", where);
    FILE *f = fopen(dyn_path, "rb");
    if (!f) return cs_error_set(CS_ERR_IO, "%s: dynamics_params %s: cannot open", where, dyn_path);
    char *text = malloc(1u << 22);
    size_t n = text ? fread(text, 1, (1u << 22) - 1, f) : 0;
    fclose(f);
    if (!text) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    text[n] = 0;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return cs_error_set(CS_ERR_PARSE, "%s: not a JSON object (or larger than 4 MiB)", dyn_path);
    }
    cs_status st = perisomatic(m, dyn_path, root, ps);
    cJSON_Delete(root);
    return st;
}
