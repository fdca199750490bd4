/* A SONATA simulation's "reports" (membrane reports, docs/sonata-input.md) as the populations'
 * probes: any probeable variable, on every segment of the sections of the given types. The
 * nodes are split into populations recorded by the same reports (cs__report_cells, before the
 * populations are made); each population probes the union of its reports' places and
 * variables once, and each report takes its columns from it (cs_report_part), which the run
 * copies into bmtk's layout (src/core/cs_sim_output.c, output/cs_output_bmtk.c). */
#include <math.h>
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

/* Variable `var` of a report as a probe variable of population ps, resolved as the JSON
 * model's probes.variables are (one-line errors). */
static cs_status probe_var(const cs__circuit *c, cs_model *m, const char *where, const cs_population_spec *ps,
                           const char *var, cs_probe_var *out) {
    char pname[CS_NAME_MAX];
    probe_name(ps, var, pname, sizeof pname);
    cJSON *arr = cJSON_CreateStringArray((const char *const[]){pname}, 1);
    if (!arr) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    parse_ctx pc = {.file = c->path, .base_dir = c->dir, .model = m};
    cs_population_spec tmp = *ps;
    tmp.probes.vars = NULL;
    cs_status st = cs__model_parse_probe_variables(&pc, where, arr, &tmp);
    cJSON_Delete(arr);
    if (st == CS_OK) *out = tmp.probes.vars[0];
    free(tmp.probes.vars);
    return st;
}

static const char *var_name(const struct cs__report *r, int i) {
    return cJSON_IsArray(r->var) ? cJSON_GetArrayItem(r->var, i)->valuestring : r->var->valuestring;
}

/* The file of variable i of report r: <file> for the first, <file>_<variable> for the others of
 * a list (bmtk's file holds one variable); <file> is file_name without ".h5", else the report's
 * name. */
static void file_name(const struct cs__report *r, int i, char *out, size_t n) {
    if (i == 0) snprintf(out, n, "%s", r->file);
    else snprintf(out, n, "%s_%s", r->file, var_name(r, i));
}

/* [ms] a report's number key: absent (null) gives def; otherwise finite and >= 0 */
static cs_status time_key(const cs__circuit *c, const char *where, const cJSON *r, const char *key, double def,
                          double *out) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(r, key);
    *out = def;
    if (!it || cJSON_IsNull(it)) return CS_OK;
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < 0)
        return cs_error_set(CS_ERR_PARSE, "%s: %s: \"%s\" must be a number of ms >= 0", c->path, where, key);
    *out = it->valuedouble;
    return CS_OK;
}

/* bmtk's file_name, start_time, end_time and dt of a report, checked as bmtk checks them against
 * the run's dt and tstop: dt a multiple of the run's, start_time and end_time multiples of dt,
 * and start_time < end_time <= tstop. The rows are t = start_time, + dt, ... below end_time. */
static cs_status parse_rows(const cs__circuit *c, const char *where, const char *name, const cJSON *r,
                            double dt_run, double tstop, struct cs__report *out) {
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(r, "file_name");
    snprintf(out->file, sizeof out->file, "%s", name);
    if (fn && !cJSON_IsNull(fn)) {
        size_t n = cJSON_IsString(fn) ? strlen(fn->valuestring) : 0;
        if (n >= 3 && !strcmp(fn->valuestring + n - 3, ".h5")) n -= 3;
        if (!n || n >= CS_NAME_MAX || strchr(fn->valuestring, '/'))
            return cs_error_set(CS_ERR_PARSE, "%s: %s: file_name must be a file name in output_dir (NAME.h5, without "
                                "'/', shorter than %d characters)", c->path, where, CS_NAME_MAX);
        snprintf(out->file, sizeof out->file, "%.*s", (int)n, fn->valuestring);
    }
    CS_TRY(time_key(c, where, r, "dt", 0, &out->dt));
    CS_TRY(time_key(c, where, r, "start_time", 0, &out->t_start));
    CS_TRY(time_key(c, where, r, "end_time", -1, &out->t_end));
    if (dt_run > 0 && out->dt > 0) {
        double k = out->dt / dt_run;
        if (k < 1 - 1e-9 || fabs(k - round(k)) > 1e-6 * k)
            return cs_error_set(CS_ERR_PARSE, "%s: %s: dt %g ms must be a multiple of the run's dt %g ms", c->path, where,
                                out->dt, dt_run);
    }
    double step = out->dt > 0 ? out->dt : dt_run;
    for (int e = 0; e < 2 && step > 0; ++e) { /* start_time and end_time on the report's grid, as bmtk asks */
        double t = e ? out->t_end : out->t_start, k = t / step;
        if (t > 0 && fabs(k - round(k)) > 1e-6 * (k > 1 ? k : 1))
            return cs_error_set(CS_ERR_PARSE, "%s: %s: %s %g ms must be a multiple of dt (%g ms)", c->path, where,
                                e ? "end_time" : "start_time", t, step);
    }
    double end = out->t_end >= 0 ? out->t_end : tstop;
    if (tstop > 0 && (out->t_start >= end || end > tstop + 1e-9))
        return cs_error_set(CS_ERR_PARSE, "%s: %s: needs start_time (%g ms) < end_time (%g ms) <= tstop (%g ms)", c->path,
                            where, out->t_start, end, tstop);
    return CS_OK;
}

/* A membrane report's keys (bmtk's defaults: sections all, cells every biophysical node). */
static cs_status parse_report(cs__circuit *c, const char *name, const cJSON *r, double dt_run, double tstop,
                              struct cs__report *out) {
    char where[CS_NAME_MAX + 16];
    snprintf(where, sizeof where, "reports.%s", name);
    const cJSON *mod = cJSON_GetObjectItemCaseSensitive(r, "module");
    const cJSON *var = cJSON_GetObjectItemCaseSensitive(r, "variable_name");
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(r, "sections");
    if (!cJSON_IsString(mod) || strcmp(mod->valuestring, "membrane_report"))
        return cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: module must be membrane_report", c->path, where);
    if (strlen(name) >= CS_NAME_MAX || strchr(name, '/'))
        return cs_error_set(CS_ERR_PARSE, "%s: %s: a report name must be shorter than %d characters, without '/'",
                            c->path, where, CS_NAME_MAX);
    /* bmtk's transform {variable: function}: its one function (bmtk 1.2.0, record_cellvars.py),
     * first_element, records element 0 of a variable that NEURON holds as an array (bmtk fails on
     * a scalar one). cablesim's variables are scalars: refused, but for an empty {} or null. */
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(r, "transform");
    if (tr && !cJSON_IsNull(tr) && !(cJSON_IsObject(tr) && !tr->child))
        return cs_error_set(CS_ERR_UNSUPPORTED,
                            "%s: %s: \"transform\" is not supported: bmtk's one transform, first_element, records "
                            "element 0 of a variable that NEURON holds as an array, and cablesim's variables are "
                            "scalars (leave it out, or {})", c->path, where);
    CS_TRY(parse_rows(c, where, name, r, dt_run, tstop, out));
    int nvar = cJSON_IsArray(var) ? cJSON_GetArraySize(var) : 1;
    for (int i = 0; i < nvar; ++i) {
        const cJSON *v = cJSON_IsArray(var) ? cJSON_GetArrayItem(var, i) : var;
        if (!cJSON_IsString(v) || !v->valuestring[0] || strchr(v->valuestring, '/') ||
            strlen(out->file) + strlen(v->valuestring) + 2 > CS_NAME_MAX)
            return cs_error_set(CS_ERR_PARSE, "%s: %s: needs \"variable_name\", a name or a non-empty list of names "
                                "without '/' (v, cai, m_hh, NaTs.m, ...)", c->path, where);
        for (int j = 0; j < i; ++j)
            if (!strcmp(cJSON_GetArrayItem(var, j)->valuestring, v->valuestring))
                return cs_error_set(CS_ERR_PARSE, "%s: %s: variable '%s' listed twice", c->path, where, v->valuestring);
    }
    if (!nvar) return cs_error_set(CS_ERR_PARSE, "%s: %s: variable_name is an empty list", c->path, where);
    const char *bad = NULL;
    unsigned mask = sec ? section_mask(sec, &bad) : ~0u; /* bmtk's default: all */
    if (!mask)
        return cs_error_set(CS_ERR_PARSE, "%s: %s: sections '%s' (a name or a list of: all, soma, axon, dend or basal, "
                            "apic or apical, custom)", c->path, where, bad);
    snprintf(out->name, sizeof out->name, "%s", name);
    out->sections = mask;
    out->nvar = nvar;
    out->var = var;
    return CS_OK;
}

/* Mark the nodes of report k in their populations' rmask. */
static cs_status mark_cells(cs__circuit *c, int k, const cJSON *cells) {
    char where[CS_NAME_MAX + 16];
    snprintf(where, sizeof where, "reports.%s", c->rep[k].name);
    for (int q = 0; q < c->npop; ++q) {
        cs__npop *p = &c->pops[q];
        if (!p->rmask && !(p->rmask = calloc(p->n ? p->n : 1, sizeof *p->rmask)))
            return cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    /* bmtk's default: the node set "biophysical" (bmtk needs it in the config), every
     * biophysical node when the config has none; bmtk records its biophysical nodes alone */
    const cJSON *sets = cJSON_GetObjectItemCaseSensitive(c->root, "node_sets");
    int named = !cells && cJSON_GetObjectItemCaseSensitive(sets, "biophysical");
    cJSON *deflt = named ? cJSON_CreateString("biophysical") : NULL;
    int pop0 = 0, pop1 = c->npop;
    int64_t *ids = NULL;
    size_t n = 0;
    if (cells || named) {
        cs_status st = cs__node_set(c, where, cells ? cells : deflt, &pop0, &ids, &n);
        cJSON_Delete(deflt);
        CS_TRY(st);
        pop1 = pop0 + 1;
    }
    for (int q = pop0; q < pop1; ++q) {
        cs__npop *p = &c->pops[q];
        size_t cnt = ids ? n : p->n;
        for (size_t j = 0; j < cnt; ++j) {
            size_t node = ids ? (size_t)ids[j] : j;
            const char *mt = cs__csv_get(p->types, p->type_row[node], "model_type");
            if (cells || (mt && !strcmp(mt, "biophysical"))) p->rmask[node] |= 1u << k;
        }
    }
    free(ids);
    return CS_OK;
}

cs_status cs__report_cells(cs__circuit *c, double dt, double tstop) {
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(c->root, "reports");
    for (const cJSON *r = rs ? rs->child : NULL; r; r = r->next) {
        if (c->nrep == CS__MAX_REPORTS)
            return cs_error_set(CS_ERR_UNSUPPORTED, "%s: more than %d reports", c->path, CS__MAX_REPORTS);
        CS_TRY(parse_report(c, r->string, r, dt, tstop, &c->rep[c->nrep]));
        c->nrep++;
        CS_TRY(mark_cells(c, c->nrep - 1, cJSON_GetObjectItemCaseSensitive(r, "cells")));
    }
    /* every report file's name once (a list's <report>_<variable> may meet another report) */
    char a[CS_NAME_MAX], b[CS_NAME_MAX];
    for (int k = 0; k < c->nrep; ++k)
        for (int i = 0; i < c->rep[k].nvar; ++i)
            for (int l = 0; l <= k; ++l)
                for (int j = 0; j < (l == k ? i : c->rep[l].nvar); ++j) {
                    file_name(&c->rep[k], i, a, sizeof a);
                    file_name(&c->rep[l], j, b, sizeof b);
                    if (!strcmp(a, b))
                        return cs_error_set(CS_ERR_PARSE, "%s: reports.%s: its file %s.h5 is also report %s's", c->path,
                                            c->rep[k].name, a, c->rep[l].name);
                }
    return CS_OK;
}

/* Whether probe place l of population q lies on a section of the types `sections`. */
static int on_sections(const cs__circuit *c, const cs_model *m, int q, int l, unsigned sections) {
    return sections >> c->shape[q].morph.branches[m->pops[q].probes.locs[l].branch].tag & 1u;
}

/* Population q (its cells all in the reports `mask`): its probes, the union of the reports'
 * places and variables, each sampled once. */
static cs_status probe_population(cs__circuit *c, cs_model *m, int q, uint32_t mask) {
    cs_population_spec *ps = &m->pops[q];
    char where[CS_NAME_MAX + 16];
    unsigned all = 0;
    for (int k = 0; k < c->nrep; ++k)
        if (mask >> k & 1u) all |= c->rep[k].sections;
    for (int k = 0; k < c->nrep; ++k) { /* bmtk reports no membrane of a point cell either */
        snprintf(where, sizeof where, "reports.%s", c->rep[k].name);
        if (mask >> k & 1u && ps->artificial)
            return cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: a membrane report of point cells", c->path, where);
    }
    cs_probe_spec *pr = &ps->probes;
    CS_TRY(report_locs(c, ps, q, all, &pr->locs, &pr->loc_section, &pr->nloc));
    pr->ncells = -1; /* every cell: the population holds the reports' cells alone */
    pr->interval = m->dt;
    ps->has_probes = 1;
    for (int k = 0; k < c->nrep; ++k) {
        if (!(mask >> k & 1u)) continue;
        const struct cs__report *r = &c->rep[k];
        snprintf(where, sizeof where, "reports.%s", r->name);
        int nloc = 0;
        for (int l = 0; l < pr->nloc; ++l) nloc += on_sections(c, m, q, l, r->sections);
        if (!nloc)
            return cs_error_set(CS_ERR_PARSE, "%s: %s: the cells of '%s' have no section of these types", c->path,
                                where, ps->name);
        for (int i = 0; i < r->nvar; ++i) {
            cs_probe_var pv;
            CS_TRY(probe_var(c, m, where, ps, var_name(r, i), &pv));
            int v = 0;
            while (v < pr->nvar && strcmp(pr->vars[v].name, pv.name)) ++v;
            if (v == pr->nvar) {
                cs_probe_var *nv = realloc(pr->vars, (size_t)(pr->nvar + 1) * sizeof *nv);
                if (!nv) return cs_error_set(CS_ERR_NOMEM, "out of memory");
                pr->vars = nv;
                pr->vars[pr->nvar++] = pv;
            }
        }
    }
    return CS_OK;
}

/* The columns of variable i of report k on population q: its places among q's probes. */
static cs_status add_part(const cs__circuit *c, cs_model *m, int k, int i, int q) {
    const struct cs__report *r = &c->rep[k];
    const cs_probe_spec *pr = &m->pops[q].probes;
    char where[CS_NAME_MAX + 16];
    snprintf(where, sizeof where, "reports.%s", r->name);
    cs_probe_var pv;
    CS_TRY(probe_var(c, m, where, &m->pops[q], var_name(r, i), &pv));
    cs_report_part *np = realloc(m->report_parts, (size_t)(m->nreport_part + 1) * sizeof *np);
    if (!np) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    m->report_parts = np;
    cs_report_part *part = &np[m->nreport_part];
    memset(part, 0, sizeof *part);
    file_name(r, i, part->file, sizeof part->file);
    part->t_start = r->t_start;
    part->t_end = r->t_end;
    part->dt = r->dt;
    part->pop = q;
    while (strcmp(pr->vars[part->var].name, pv.name)) ++part->var;
    if (!(part->loc = malloc((size_t)pr->nloc * sizeof *part->loc))) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    m->nreport_part++;
    for (int l = 0; l < pr->nloc; ++l)
        if (on_sections(c, m, q, l, r->sections)) part->loc[part->nloc++] = l;
    return CS_OK;
}

/* The reports recording population q's cells (the same for all of them, cs__report_cells). */
static uint32_t pop_mask(const cs__circuit *c, const cs_model *m, int q) {
    for (int k = 0; k < c->npop; ++k)
        if (q >= c->pops[k].pop0 && q < c->pops[k].pop1 && c->pops[k].rmask)
            return c->pops[k].rmask[m->pops[q].output_id0];
    return 0;
}

cs_status cs__read_reports(cs__circuit *c, cs_model *m, cs_sonata_run *run) {
    for (int k = 0; k < c->nrep; ++k) snprintf(run->report_name[k], CS_NAME_MAX, "%s", c->rep[k].name);
    run->nreport = c->nrep;
    for (int q = 0; q < m->npop; ++q) {
        uint32_t mask = pop_mask(c, m, q);
        if (mask) CS_TRY(probe_population(c, m, q, mask));
    }
    /* grouped by file, in file order; a file's populations in order (those of one SONATA
     * population together) */
    for (int k = 0; k < c->nrep; ++k)
        for (int i = 0; i < c->rep[k].nvar; ++i)
            for (int q = 0; q < m->npop; ++q)
                if (pop_mask(c, m, q) >> k & 1u) CS_TRY(add_part(c, m, k, i, q));
    return CS_OK;
}
