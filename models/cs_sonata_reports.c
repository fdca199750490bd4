/* A SONATA simulation's "reports" (membrane reports, docs/sonata-input.md) as the populations'
 * probes: any probeable variable, on every segment of the sections of the given types, each
 * variable's columns marked with its report so that the run copies them into bmtk's layout
 * (output/cs_output_bmtk.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cs_geometry.h"
#include "cs_model_json.h"
#include "cs_sonata_internal.h"

/* bmtk's variable_name as a probe variable: NEURON's range names "STATE_MECH" ("m_hh",
 * "m_NaTs") become "MECH.STATE" when MECH is a density mechanism of the population; "v", ions'
 * "cai", "ena", "ik", ..., "i_membrane" and "MECH.STATE" are taken as they are. */
static void probe_name(const cs_population_spec *ps, const char *var, char *out, size_t n) {
    snprintf(out, n, "%s", var);
    const char *us = strrchr(var, '_');
    if (strchr(var, '.') || !us || us == var || !us[1]) return;
    for (int j = 0; j < ps->ndensity; ++j)
        if (!strcmp(ps->density[j].type->name, us + 1)) {
            snprintf(out, n, "%s.%.*s", us + 1, (int)(us - var), var);
            return;
        }
}

/* bmtk's `sections`: a name or a list of names of SWC types (its swc_type_maps), "all" every
 * type; a mask of region tags, 0 for an unknown name (*bad names it). */
static unsigned section_mask(const cJSON *sec, const char **bad) {
    static const struct { const char *name; int tag; } types[] = {
        {"soma", CS_TAG_SOMA}, {"somatic", CS_TAG_SOMA}, {"axon", CS_TAG_AXON}, {"axonal", CS_TAG_AXON},
        {"dend", CS_TAG_DEND}, {"basal", CS_TAG_DEND}, {"basal dendrite", CS_TAG_DEND},
        {"(basal) dendrite", CS_TAG_DEND}, {"apic", CS_TAG_APIC}, {"apical", CS_TAG_APIC},
        {"apical denrite", CS_TAG_APIC}, {"undefined", CS_TAG_UNDEFINED}, {"custom", 5}, {"other", 5}};
    unsigned mask = 0;
    int n = cJSON_IsArray(sec) ? cJSON_GetArraySize(sec) : 1;
    for (int k = 0; k < n; ++k) {
        const cJSON *it = cJSON_IsArray(sec) ? cJSON_GetArrayItem(sec, k) : sec;
        const char *name = cJSON_GetStringValue(it);
        unsigned m = 0;
        if (name && !strcasecmp(name, "all")) m = ~0u;
        for (size_t j = 0; name && j < sizeof types / sizeof types[0]; ++j)
            if (!strcasecmp(name, types[j].name)) m = 1u << types[j].tag;
        if (!m) {
            *bad = name ? name : "(not a string)";
            return 0;
        }
        mask |= m;
    }
    return mask;
}

/* The probe locations of the sections of types `mask` on a cell of population q: the centre of
 * every segment of each such section, in SONATA's section order, as bmtk records them
 * (NEURON's seg.x with bmtk's dL rule; "soma": soma(0.5)). *nloc 0 when it has none. */
static cs_status report_locs(const cs__circuit *c, const cs_population_spec *ps, int q, unsigned mask,
                             cs_location **locs, int **secs, int *nloc) {
    const struct cs__shape *sh = &c->shape[q];
    cs_geometry g;
    CS_TRY(cs_discretize(&sh->morph, &ps->policy, &g));
    int n = 0;
    for (int s = 0; s < sh->nsec; ++s)
        if (mask >> sh->morph.branches[sh->sec[s]].tag & 1u) n += g.branch_ncv[sh->sec[s]];
    *locs = malloc((size_t)(n ? n : 1) * sizeof **locs);
    *secs = malloc((size_t)(n ? n : 1) * sizeof **secs);
    if (!*locs || !*secs) {
        cs_geometry_free(&g);
        return cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    *nloc = n;
    int k = 0;
    for (int s = 0; s < sh->nsec; ++s) {
        int b = sh->sec[s], ns = g.branch_ncv[b];
        for (int i = 0; (mask >> sh->morph.branches[b].tag & 1u) && i < ns; ++i, ++k) {
            (*locs)[k] = (cs_location){b, (i + 0.5) / ns};
            (*secs)[k] = s;
        }
    }
    cs_geometry_free(&g);
    return CS_OK;
}

/* Report `name` of variable var on the cells cells[cnt] of population q at locs: the
 * population's probes, or one more variable of them when another report has the same cells
 * and sections. */
static cs_status add_probes(const cs__circuit *c, cs_model *m, const char *where, const char *name, int q,
                            const char *var, int *cells, int cnt, cs_location *locs, int *secs, int nloc) {
    cs_population_spec *ps = &m->pops[q];
    cs_probe_spec *pr = &ps->probes;
    char pname[CS_NAME_MAX];
    probe_name(ps, var, pname, sizeof pname);
    /* the variable resolved as the JSON model's probes.variables are (one-line errors) */
    cJSON *arr = cJSON_CreateStringArray((const char *const[]){pname}, 1);
    if (!arr) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    parse_ctx pc = {.file = c->path, .base_dir = c->dir, .model = m};
    cs_population_spec tmp = *ps;
    tmp.probes.vars = NULL;
    cs_status st = cs__model_parse_probe_variables(&pc, where, arr, &tmp);
    cJSON_Delete(arr);
    if (st != CS_OK) {
        free(tmp.probes.vars);
        return st;
    }
    cs_probe_var pv = tmp.probes.vars[0];
    free(tmp.probes.vars);
    snprintf(pv.report, sizeof pv.report, "%s", name);
    if (ps->has_probes) {
        int same = pr->ncells == cnt && pr->nloc == nloc && !memcmp(pr->cells, cells, (size_t)cnt * sizeof *cells);
        for (int l = 0; same && l < nloc; ++l)
            same = pr->locs[l].branch == locs[l].branch && pr->locs[l].pos == locs[l].pos;
        if (!same)
            return cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: another report records cells of '%s' with other "
                                "cells or sections (reports on the same cells must have the same cells and "
                                "sections)", c->path, where, ps->name);
        for (int v = 0; v < pr->nvar; ++v)
            if (!strcmp(pr->vars[v].name, pv.name))
                return cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: variable '%s' of these cells is already in report '%s'",
                                    c->path, where, pv.name, pr->vars[v].report);
        cs_probe_var *nv = realloc(pr->vars, (size_t)(pr->nvar + 1) * sizeof *nv);
        if (!nv) return cs_error_set(CS_ERR_NOMEM, "out of memory");
        pr->vars = nv;
        pr->vars[pr->nvar++] = pv;
        free(cells);
        free(locs);
        free(secs);
        return CS_OK;
    }
    pr->vars = malloc(sizeof *pr->vars);
    if (!pr->vars) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    pr->vars[0] = pv;
    pr->nvar = 1;
    pr->interval = m->dt;
    pr->ncells = cnt;
    pr->cells = cells;
    pr->nloc = nloc;
    pr->locs = locs;
    pr->loc_section = secs;
    ps->has_probes = 1;
    return CS_OK;
}

/* A membrane report: variable_name on `sections` (bmtk's default: all) of a node set. */
static cs_status report(cs__circuit *c, cs_model *m, const char *name, const cJSON *r, cs_sonata_run *run) {
    char where[CS_NAME_MAX + 16];
    snprintf(where, sizeof where, "reports.%s", name);
    const cJSON *mod = cJSON_GetObjectItemCaseSensitive(r, "module");
    const cJSON *var = cJSON_GetObjectItemCaseSensitive(r, "variable_name");
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(r, "sections");
    if (!cJSON_IsString(mod) || strcmp(mod->valuestring, "membrane_report"))
        return cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: module must be membrane_report", c->path, where);
    if (cJSON_IsArray(var))
        return cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: variable_name is a list: give each variable a report of its own",
                            c->path, where);
    if (!cJSON_IsString(var) || !var->valuestring[0])
        return cs_error_set(CS_ERR_PARSE, "%s: %s: needs \"variable_name\" (v, cai, m_hh, NaTs.m, ...)", c->path, where);
    const char *bad = NULL;
    unsigned mask = sec ? section_mask(sec, &bad) : ~0u; /* bmtk's default: all */
    if (!mask)
        return cs_error_set(CS_ERR_PARSE, "%s: %s: sections '%s' (a name or a list of: all, soma, axon, dend or basal, "
                            "apic or apical, custom)", c->path, where, bad);
    if (strlen(name) >= CS_NAME_MAX || strchr(name, '/'))
        return cs_error_set(CS_ERR_PARSE, "%s: %s: a report name must be shorter than %d characters, without '/'",
                            c->path, where, CS_NAME_MAX);
    if (run->nreport == 16) return cs_error_set(CS_ERR_UNSUPPORTED, "%s: more than 16 reports", c->path);
    snprintf(run->report_name[run->nreport++], CS_NAME_MAX, "%s", name);
    int pop;
    int64_t *ids;
    size_t n;
    const cJSON *cells = cJSON_GetObjectItemCaseSensitive(r, "cells");
    if (!cells) /* bmtk's default, every biophysical cell of every population, has no one population */
        return cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: needs \"cells\", a node set of one population", c->path, where);
    CS_TRY(cs__node_set(c, where, cells, &pop, &ids, &n));
    const cs__npop *p = &c->pops[pop];
    cs_status st = CS_OK;
    for (int q = p->pop0; st == CS_OK && q < p->pop1; ++q) {
        cs_population_spec *ps = &m->pops[q];
        int cnt = cs__cells_of(ps, ids, n, NULL);
        if (!cnt) continue;
        if (ps->artificial) { /* bmtk reports no membrane of a point cell either */
            st = cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: a membrane report of point cells", c->path, where);
            break;
        }
        int *cells = malloc((size_t)cnt * sizeof *cells), *secs = NULL, nloc = 0;
        cs_location *locs = NULL;
        if (!cells) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
        if (st == CS_OK) {
            cs__cells_of(ps, ids, n, cells);
            st = report_locs(c, ps, q, mask, &locs, &secs, &nloc);
        }
        if (st == CS_OK && !nloc)
            st = cs_error_set(CS_ERR_PARSE, "%s: %s: the cells of '%s' have no section of these types", c->path, where,
                              ps->name);
        if (st == CS_OK) /* takes cells, locs and secs over when it succeeds */
            st = add_probes(c, m, where, name, q, var->valuestring, cells, cnt, locs, secs, nloc);
        if (st != CS_OK) {
            free(cells);
            free(locs);
            free(secs);
        }
    }
    free(ids);
    return st;
}

cs_status cs__read_reports(cs__circuit *c, cs_model *m, cs_sonata_run *run) {
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(c->root, "reports");
    for (const cJSON *r = rs ? rs->child : NULL; r; r = r->next) CS_TRY(report(c, m, r->string, r, run));
    return CS_OK;
}
