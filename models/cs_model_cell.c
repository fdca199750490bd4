/* The JSON model reader, a population's cell (cs_model_json.h): ions (reversal potentials and
 * concentrations by region), cm or Ra by region, an Allen Cell Types import, probe variables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_allen.h"
#include "cs_model_json.h"

/* "ions": [{"ion": "ca", "region": "soma", "e": 132.4579, "xi": 5e-5, "xo": 2.0}, ...]: reversal
 * potentials [mV] and initial inside / outside concentrations [mM] by region, each entry setting
 * those it names, later entries overriding earlier ones; NEURON's defaults elsewhere. */
cs_status cs__model_parse_ions(const parse_ctx *pc, const char *path, const cJSON *ions, cs_population_spec *ps) {
    static const char *const names[CS_NION] = {"na", "k", "ca"};
    cs_population_ion_defaults(ps);
    if (!ions) return CS_OK;
    if (!cJSON_IsArray(ions)) return FAIL(pc, path, "'ions' must be an array");
    static const char *const keys[] = {"ion", "region", "e", "xi", "xo", NULL};
    int n = cJSON_GetArraySize(ions);
    for (int k = 0; k < n; ++k) {
        char sub[320], ion[16], region[32];
        snprintf(sub, sizeof sub, "%s.ions[%d]", path, k);
        const cJSON *it = cJSON_GetArrayItem(ions, k);
        CS_TRY(cs__model_check_keys(pc, sub, it, keys));
        CS_TRY(cs__model_get_string(pc, sub, it, "ion", 1, "", ion, sizeof ion));
        CS_TRY(cs__model_get_string(pc, sub, it, "region", 0, "all", region, sizeof region));
        int which = -1;
        for (int i = 0; i < CS_NION; ++i)
            if (!strcmp(ion, names[i])) which = i;
        if (which < 0) return FAIL(pc, sub, "unknown ion '%s' (expected na, k or ca)", ion);
        unsigned mask;
        CS_TRY(cs__model_parse_region(pc, sub, region, &mask));
        int has_e = cJSON_HasObjectItem(it, "e"), has_i = cJSON_HasObjectItem(it, "xi"),
            has_o = cJSON_HasObjectItem(it, "xo");
        if (!has_e && !has_i && !has_o) return FAIL(pc, sub, "an ion entry needs \"e\", \"xi\" or \"xo\"");
        double e = 0.0, ci = 0.0, co = 0.0;
        if (has_e) CS_TRY(cs__model_get_number(pc, sub, it, "e", REQUIRED, 0, &e));
        if (has_i) CS_TRY(cs__model_get_number(pc, sub, it, "xi", REQUIRED | POSITIVE, 0, &ci));
        if (has_o) CS_TRY(cs__model_get_number(pc, sub, it, "xo", REQUIRED | POSITIVE, 0, &co));
        for (int t = 0; t < CS_NTAG; ++t) {
            if (!(mask & (1u << t))) continue;
            if (has_e) ps->ion_e[which][t] = e;   /* [mV] */
            if (has_i) ps->ion_ci[which][t] = ci; /* [mM] */
            if (has_o) ps->ion_co[which][t] = co; /* [mM] */
        }
    }
    return CS_OK;
}

/* A state of mechanism type t by name, or -1. */
static int state_index(const cs_mech_type *t, const char *name) {
    for (int j = 0; j < t->nstate; ++j)
        if (strcmp(t->states[j].name, name) == 0) return j;
    return -1;
}

/* The names of t's states, comma-separated, into buf (for messages). */
static const char *state_names(const cs_mech_type *t, char *buf, size_t n) {
    buf[0] = 0;
    for (int j = 0; j < t->nstate; ++j) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", j ? ", " : "", t->states[j].name);
    }
    return t->nstate ? buf : "(none)";
}

/* probes.variables: "v", "i_membrane", "ina" / "ik" / "ica",
 * "<mechanism>.<state>" for a density mechanism of the population, "<name>.<state>" for one
 * of its synapses or stimuli. Resolved here to what it reads; whether it exists at every probe
 * location is checked when the network is built (cs_build.c). */
cs_status cs__model_parse_probe_variables(const parse_ctx *pc, const char *path, const cJSON *arr,
                                       cs_population_spec *ps) {
    int n = 1;
    if (arr) {
        if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
            return FAIL(pc, path, "'variables' must be a non-empty array of names (\"v\", \"hh.m\", \"ina\", \"syn.g\")");
        n = cJSON_GetArraySize(arr);
    }
    ps->probes.vars = calloc((size_t)n, sizeof *ps->probes.vars);
    if (!ps->probes.vars) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    ps->probes.nvar = n;
    static const char *const ion_names[CS_NION] = {"ina", "ik", "ica"};
    for (int k = 0; k < n; ++k) {
        cs_probe_var *pv = &ps->probes.vars[k];
        const cJSON *it = arr ? cJSON_GetArrayItem(arr, k) : NULL;
        const char *name = it ? cJSON_GetStringValue(it) : "v";
        if (!name || !name[0] || strlen(name) >= sizeof pv->name || strchr(name, '/'))
            return FAIL(pc, path, "variables[%d] must be a non-empty name without '/' (\"v\", \"hh.m\", \"ina\", \"syn.g\")", k);
        for (int j = 0; j < k; ++j)
            if (strcmp(ps->probes.vars[j].name, name) == 0)
                return FAIL(pc, path, "population '%s': variable '%s' listed twice", ps->name, name);
        snprintf(pv->name, sizeof pv->name, "%s", name);
        if (strcmp(name, "v") == 0) {
            pv->kind = CS_PROBE_V;
            pv->unit = "mV";
            continue;
        }
        int ion = -1;
        for (int j = 0; j < CS_NION; ++j)
            if (strcmp(name, ion_names[j]) == 0) ion = j;
        if (ion >= 0) {
            pv->kind = CS_PROBE_ION;
            pv->index = ion;
            pv->unit = "mA/cm2";
            continue;
        }
        /* concentrations and reversal potentials: nai, nao, ena, ki, ko, ek, cai, cao, eca */
        static const char *const ion_stem[CS_NION] = {"na", "k", "ca"};
        for (int j = 0; j < CS_NION && ion < 0; ++j) {
            char ci[8], co[8], e[8];
            snprintf(ci, sizeof ci, "%si", ion_stem[j]);
            snprintf(co, sizeof co, "%so", ion_stem[j]);
            snprintf(e, sizeof e, "e%s", ion_stem[j]);
            pv->kind = !strcmp(name, ci) ? CS_PROBE_CONC_I : !strcmp(name, co) ? CS_PROBE_CONC_O
                     : !strcmp(name, e)  ? CS_PROBE_EREV   : CS_PROBE_V;
            if (pv->kind != CS_PROBE_V) ion = j;
        }
        if (ion >= 0) {
            pv->index = ion;
            pv->unit = pv->kind == CS_PROBE_EREV ? "mV" : "mM";
            continue;
        }
        if (strcmp(name, "i_membrane") == 0) {
            pv->kind = CS_PROBE_IMEM;
            pv->unit = "nA";
            continue;
        }
        const char *dot = strchr(name, '.');
        if (!dot || dot == name || !dot[1])
            return FAIL(pc, path,
                        "population '%s': unknown variable '%s' (one of v, i_membrane, ina, ik, ica, nai, nao, ena, ki, ko, ek, "
                        "cai, cao, eca, MECHANISM.STATE or "
                        "SYNAPSE.STATE)", ps->name, name);
        char owner[CS_NAME_MAX];
        snprintf(owner, sizeof owner, "%.*s", (int)(dot - name), name);
        const char *state = dot + 1;
        /* a synapse or stimulus of that name, else a density mechanism of that type (a point
         * process named like a density mechanism of the population is refused: ambiguous) */
        int found = 0, dens = 0;
        for (int j = 0; j < ps->ndensity; ++j) dens |= strcmp(ps->density[j].type->name, owner) == 0;
        for (int j = 0; j < ps->nsyn && !found; ++j)
            if (strcmp(ps->syn[j].name, owner) == 0) {
                pv->kind = CS_PROBE_SYNAPSE;
                pv->type = ps->syn[j].type;
                pv->target = j;
                found = 1;
            }
        for (int j = 0; j < ps->nstim && !found; ++j)
            if (strcmp(ps->stim[j].name, owner) == 0) {
                pv->kind = CS_PROBE_STIMULUS;
                pv->type = ps->stim[j].type;
                pv->target = j;
                found = 1;
            }
        if (found && dens)
            return FAIL(pc, path, "population '%s': variable '%s': '%s' names both a point process and a density "
                        "mechanism of this population (rename the point process)", ps->name, name, owner);
        for (int j = 0; j < ps->ndensity && !found; ++j)
            if (strcmp(ps->density[j].type->name, owner) == 0) {
                pv->kind = CS_PROBE_DENSITY;
                pv->type = ps->density[j].type;
                found = 1;
            }
        if (!found)
            return FAIL(pc, path,
                        "population '%s': variable '%s': no mechanism, synapse or stimulus '%s' in this "
                        "population", ps->name, name, owner);
        if (pv->kind == CS_PROBE_DENSITY && pv->type->fold)
            return FAIL(pc, path, "population '%s': variable '%s': '%s' is a linear current folded into the cable "
                        "matrix, which keeps no states", ps->name, name, pv->type->name);
        pv->index = state_index(pv->type, state);
        if (pv->index < 0) {
            char buf[512];
            return FAIL(pc, path, "population '%s': variable '%s': '%s' has no state '%s' (states: %s)", ps->name,
                        name, pv->type->name, state, state_names(pv->type, buf, sizeof buf));
        }
        const char *u = pv->type->states[pv->index].unit;
        pv->unit = u && u[0] ? u : "1";
    }
    return CS_OK;
}

/* "allen": {"fit": "472363762_fit.json", "morphology": "cell.swc", "processing": "aibs_perisomatic"}:
 * an Allen Cell Types model (cs_allen.h), paths relative to the model file. Its fit file's celsius
 * becomes the run's; a "run.celsius" or another Allen population that says otherwise is an error. */
cs_status cs__model_parse_allen(const parse_ctx *pc, const char *path, const cJSON *a, cs_population_spec *ps) {
    static const char *const keys[] = {"fit", "morphology", "processing", NULL};
    CS_TRY(cs__model_check_keys(pc, path, a, keys));
    char fit[CS_PATH_MAX], swc[CS_PATH_MAX], proc[32], f1[CS_PATH_MAX], f2[CS_PATH_MAX];
    CS_TRY(cs__model_get_string(pc, path, a, "fit", 1, "", f1, sizeof f1));
    CS_TRY(cs__model_get_string(pc, path, a, "morphology", 1, "", f2, sizeof f2));
    CS_TRY(cs__model_get_string(pc, path, a, "processing", 0, "aibs_perisomatic", proc, sizeof proc));
    int n1 = f1[0] == '/' || !pc->base_dir[0] ? snprintf(fit, sizeof fit, "%s", f1)
                                              : snprintf(fit, sizeof fit, "%s/%s", pc->base_dir, f1);
    int n2 = f2[0] == '/' || !pc->base_dir[0] ? snprintf(swc, sizeof swc, "%s", f2)
                                              : snprintf(swc, sizeof swc, "%s/%s", pc->base_dir, f2);
    if (n1 >= (int)sizeof fit || n2 >= (int)sizeof swc) return FAIL(pc, path, "path too long");
    cs_model *m = pc->model;
    double before = m->celsius; /* [°C] */
    int fixed = pc->celsius_given;
    for (const cs_population_spec *q = m->pops; q < ps; ++q) fixed |= q->morph.axon_stub.on;
    cs_status st = cs_allen_population(fit, swc, proc, m, ps);
    if (st != CS_OK) return st; /* one line naming the fit file */
    if (fixed && m->celsius != before)
        return FAIL(pc, path, "the fit file's celsius (%g) differs from the run's (%g, from run.celsius or an "
                              "earlier Allen population)", m->celsius, before);
    return CS_OK;
}

/* "cm" [µF/cm²] or "Ra" [Ω·cm]: one value for every region, or [{"region": "soma", KEY: v}, ...]
 * by region (later entries overriding earlier ones; dflt elsewhere). */
cs_status cs__model_parse_by_region(const parse_ctx *pc, const char *path, const cJSON *bio, const char *key, double dflt,
                                 double *single, double *by_tag) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(bio, key);
    *single = dflt;
    if (!cJSON_IsArray(it)) CS_TRY(cs__model_get_number(pc, path, bio, key, POSITIVE, dflt, single));
    for (int t = 0; t < CS_NTAG; ++t) by_tag[t] = *single;
    if (!cJSON_IsArray(it)) return CS_OK;
    const char *const keys[] = {"region", key, NULL};
    for (int k = 0; k < cJSON_GetArraySize(it); ++k) {
        char sub[320], region[32];
        snprintf(sub, sizeof sub, "%s.%s[%d]", path, key, k);
        const cJSON *e = cJSON_GetArrayItem(it, k);
        CS_TRY(cs__model_check_keys(pc, sub, e, keys));
        CS_TRY(cs__model_get_string(pc, sub, e, "region", 0, "all", region, sizeof region));
        unsigned mask;
        CS_TRY(cs__model_parse_region(pc, sub, region, &mask));
        double v;
        CS_TRY(cs__model_get_number(pc, sub, e, key, REQUIRED | POSITIVE, 0, &v));
        for (int t = 0; t < CS_NTAG; ++t)
            if (mask & (1u << t)) by_tag[t] = v;
    }
    return CS_OK;
}
