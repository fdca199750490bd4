/* SONATA edges (HDF5 + CSV edge types) → cells' own synapses, connections and events.
 * Each edge makes its own synapse(s) on its target, as bmtk does: at afferent_section_id/pos
 * where the edge file has them (SONATA's section numbering), otherwise nsyns synapses placed by
 * bmtk's rule (target_sections + distance_range, probability by segment length, a generator
 * seeded by the run's seed, the edge and the target). An edge from a biophysical cell is a
 * connection; an edge from a virtual node turns each of the node's input spikes into an event
 * on the synapse at spike time + delay (the choice: no cells for spike sources, and the events
 * of the JSON model format carry them through build, MPI distribution and the GPU unchanged). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_rng.h"
#include "cs_sonata_internal.h"

#define MAX_GROUPS 16 /* edge groups of one edge population */

typedef struct {
    const char *file;
    char where[CS_PATH_MAX + 128];
    const cs__csv *types;
    hid_t f;
    char grp[CS_NAME_MAX + 16];
    size_t n;
    int64_t *src, *tgt, *type, *gid, *gix;
    int *type_row;
    int srcpop, tgtpop;
    /* per-edge values of each group where the file has them (bmtk writes a group per set of
     * edge properties: with and without afferent sections) */
    struct egroup {
        double *weight, *delay, *nsyns, *pos;
        int64_t *sec;
        size_t n;               /* rows the edges need: the largest edge_group_index + 1 */
    } g[MAX_GROUPS];
} edge_pop;

static void free_edge_pop(edge_pop *e) {
    free(e->src); free(e->tgt); free(e->type); free(e->gid); free(e->gix); free(e->type_row);
    for (int k = 0; k < MAX_GROUPS; ++k) {
        struct egroup *g = &e->g[k];
        free(g->weight); free(g->delay); free(g->nsyns); free(g->pos); free(g->sec);
    }
}

/* A per-edge dataset of group gi, when present: doubles, or (sec) integers. */
static cs_status group_data(edge_pop *e, int gi, const char *name, double **v, int64_t **sec) {
    char dn[CS_NAME_MAX + 64];
    snprintf(dn, sizeof dn, "%s/%d/%s", e->grp, gi, name);
    if (!cs__h5_exists(e->f, dn)) return CS_OK;
    size_t n;
    if (sec) CS_TRY(cs__h5_read_i64(e->f, e->file, dn, sec, &n));
    else CS_TRY(cs__h5_read_f64(e->f, e->file, dn, v, &n));
    if (n < e->g[gi].n) return cs_error_set(CS_ERR_PARSE, "%s: %s has %zu rows, fewer than its edges need", e->file, dn, n);
    return CS_OK;
}

/* A numeric property of edge k: its group's value, else its type's; `dflt` when neither has it
 * (NAN: required). */
static cs_status prop(const edge_pop *e, size_t k, const double *grp, const char *name, double dflt, double *v) {
    if (grp) {
        *v = grp[e->gix[k]];
        return CS_OK;
    }
    const char *s = cs__csv_get(e->types, e->type_row[k], name);
    if (!s) {
        if (isnan(dflt))
            return cs_error_set(CS_ERR_PARSE, "%s: edge %zu (edge type %lld): no %s (neither in %s nor in the edge file)",
                                e->where, k, (long long)e->type[k], name, e->types->path);
        *v = dflt;
        return CS_OK;
    }
    char *end;
    *v = strtod(s, &end);
    if (*end || !isfinite(*v))
        return cs_error_set(CS_ERR_PARSE, "%s: edge type %lld: %s '%s' is not a number", e->types->path,
                            (long long)e->type[k], name, s);
    return CS_OK;
}

/* The synapse prototype of edge type row `row` on population q (made on first use). */
static cs_status prototype(const cs__circuit *c, cs_model *m, const edge_pop *e, size_t k, int q, int *proto) {
    cs_population_spec *ps = &m->pops[q];
    char name[CS_NAME_MAX];
    snprintf(name, sizeof name, "edge_type_%lld", (long long)e->type[k]);
    for (int j = 0; j < ps->nsyn; ++j)
        if (!strcmp(ps->syn[j].name, name)) {
            *proto = j;
            return CS_OK;
        }
    const char *tmpl = cs__csv_get(e->types, e->type_row[k], "model_template");
    const char *dyn = cs__csv_get(e->types, e->type_row[k], "dynamics_params");
    if (!tmpl) return cs_error_set(CS_ERR_PARSE, "%s: edge type %lld has no model_template", e->types->path, (long long)e->type[k]);
    /* bmtk's exp2syn and expsyn are NEURON's Exp2Syn and ExpSyn: a mechanisms_dir's own copy
     * (compiled for the GPU too) first, else the built-in (exp2syn: CPU only) */
    const char *nrn = !strcmp(tmpl, "exp2syn") ? "Exp2Syn" : !strcmp(tmpl, "expsyn") ? "ExpSyn" : NULL;
    const cs_mech_type *t = nrn ? cs_catalogue_find(&m->catalogues, nrn) : NULL;
    if (!t) t = !strcmp(tmpl, "expsyn") ? cs_mech_find("expsyn") : cs__mech(m, tmpl);
    if (!t || t->kind != CS_MECH_POINT)
        return cs_error_set(CS_ERR_PARSE, "%s: edge type %lld: unknown model_template '%s' (exp2syn, expsyn or a point "
                            "process of mechanisms_dir)", e->types->path, (long long)e->type[k], tmpl);
    cs_point_spec *np = realloc(ps->syn, (size_t)(ps->nsyn + 1) * sizeof *np);
    if (!np) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    ps->syn = np;
    cs_point_spec *s = &ps->syn[ps->nsyn];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->type = t;
    s->per_cell = 1;
    for (int j = 0; j < t->nparam; ++j) s->param[j] = t->params[j].default_value;
    if (dyn) { /* bmtk's synapse JSON: tau1, tau2, erev (exp2syn); tau1, erev (expsyn); else the names */
        char path[CS_PATH_MAX];
        cs__path(c->syn_dir[0] ? c->syn_dir : c->dir, dyn, path, sizeof path);
        cJSON *j = NULL;
        CS_TRY(cs__read_json(path, &j));
        for (const cJSON *it = j->child; it; it = it->next) {
            if (!cJSON_IsNumber(it)) continue; /* level_of_detail and the like */
            const char *pn = !strcmp(it->string, "erev") ? "e" : it->string;
            if (t == cs_mech_find("expsyn") && !strcmp(pn, "tau1")) pn = "tau";
            int pi = cs_mech_param_index(t, pn);
            if (pi < 0) { /* the message first: it names a key of j */
                cs_status st = cs_error_set(CS_ERR_PARSE, "%s: '%s' is no parameter of %s", path, it->string, t->name);
                cJSON_Delete(j);
                return st;
            }
            s->param[pi] = it->valuedouble;
        }
        cJSON_Delete(j);
    }
    *proto = ps->nsyn++;
    return CS_OK;
}

/* bmtk's section names → SWC types. */
static unsigned section_mask(const char *list) {
    unsigned mask = 0;
    if (strstr(list, "soma")) mask |= 1u << CS_TAG_SOMA;
    if (strstr(list, "axon")) mask |= 1u << CS_TAG_AXON;
    if (strstr(list, "basal") || strstr(list, "dend")) mask |= 1u << CS_TAG_DEND;
    if (strstr(list, "apical") || strstr(list, "apic")) mask |= 1u << CS_TAG_APIC;
    return mask;
}

/* The candidate segments of bmtk's rule for shape q: segments (its dL rule) of the target
 * sections overlapping [dmin, dmax] of path distance from the soma, each with its overlap's
 * running sum. Built once per (shape, sections, range) and kept in c->placement: every edge of a
 * type asks for the same table (10 000 Allen cells: 450 000 edges, 20 tables). */
static cs_status placement_table(cs__circuit *c, int q, unsigned mask, double dmin, double dmax,
                                 const struct cs__placement **out) {
    for (int k = 0; k < c->nplacement; ++k) {
        const struct cs__placement *t = &c->placement[k];
        if (t->shape == q && t->mask == mask && t->dmin == dmin && t->dmax == dmax) {
            *out = t;
            return CS_OK;
        }
    }
    if (c->nplacement == c->capplacement) {
        int nc = c->capplacement ? 2 * c->capplacement : 16;
        struct cs__placement *p = realloc(c->placement, (size_t)nc * sizeof *p);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory");
        c->placement = p;
        c->capplacement = nc;
    }
    const cs_morph *mo = &c->shape[q].morph;
    size_t ncand = 0, cap = 0;
    struct cs__cand *cand = NULL;
    double *start = malloc((size_t)mo->nbranch * sizeof *start), total = 0;
    if (!start) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (int b = 0; b < mo->nbranch; ++b) {
        const cs_branch *br = &mo->branches[b];
        double L = cs_branch_length(mo, b); /* [µm] */
        /* path distance from the soma's centre, where its children start */
        start[b] = br->parent < 0 || mo->branches[br->parent].tag == CS_TAG_SOMA
                       ? 0 : start[br->parent] + cs_branch_length(mo, br->parent);
        if (!(mask & (1u << br->tag)) || br->tag == CS_TAG_SOMA) continue;
        int ns = 1 + 2 * (int)floor(L / (2 * c->dL));
        for (int i = 0; i < ns; ++i) {
            double ov = fmin(start[b] + L * (i + 1) / ns, dmax) - fmax(start[b] + L * i / ns, dmin);
            if (ov <= 0) continue;
            if (ncand == cap) {
                cap = cap ? 2 * cap : 64;
                struct cs__cand *p = realloc(cand, cap * sizeof *p);
                if (!p) {
                    free(cand); free(start);
                    return cs_error_set(CS_ERR_NOMEM, "out of memory");
                }
                cand = p;
            }
            total += ov;
            cand[ncand++] = (struct cs__cand){{b, (i + 0.5) / ns}, total};
        }
    }
    free(start);
    struct cs__placement *t = &c->placement[c->nplacement++];
    *t = (struct cs__placement){q, mask, dmin, dmax, ncand, cand};
    *out = t;
    return CS_OK;
}

/* nsyns locations by bmtk's rule on shape q: candidate segments (placement_table) chosen with
 * probability ∝ their overlap. */
static cs_status place_random(cs__circuit *c, int q, unsigned mask, double dmin, double dmax, cs_rng *r, int nsyns,
                              cs_location *loc, const char *where) {
    const struct cs__placement *t = NULL;
    CS_TRY(placement_table(c, q, mask, dmin, dmax, &t));
    if (!t->ncand) return cs_error_set(CS_ERR_PARSE, "%s: no segment of the target sections lies in the distance range", where);
    const double total = t->cand[t->ncand - 1].cum;
    for (int k = 0; k < nsyns; ++k) {
        double u = cs_rng_uniform(r) * total;
        size_t lo = 0, hi = t->ncand - 1; /* the first candidate whose running sum exceeds u */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (t->cand[mid].cum > u) hi = mid;
            else lo = mid + 1;
        }
        loc[k] = t->cand[lo].at;
    }
    return CS_OK;
}

static cs_status push_syn(cs__circuit *c, int q, int cell, int proto, cs_location loc, size_t *idx) {
    if (c->nsyn == c->capsyn) {
        size_t nc = c->capsyn ? 2 * c->capsyn : 1024;
        struct cs__syn *p = realloc(c->syn, nc * sizeof *p);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for synapses");
        c->syn = p;
        c->capsyn = nc;
    }
    c->syn[c->nsyn] = (struct cs__syn){q, {cell, proto, loc}, c->nsyn};
    *idx = c->nsyn++;
    return CS_OK;
}

static cs_status grow(void **v, size_t *cap, size_t n, size_t size, void **side, size_t side_size) {
    if (n < *cap) return CS_OK;
    size_t nc = *cap ? 2 * *cap : 1024;
    void *p = realloc(*v, nc * size);
    if (p) *v = p;
    void *s = p ? realloc(*side, nc * side_size) : NULL;
    if (s) *side = s;
    if (!p || !s) return cs_error_set(CS_ERR_NOMEM, "out of memory for connections");
    *cap = nc;
    return CS_OK;
}

/* The connection, or the events, of one source spike train, to synapse `si` of gid tg
 * (si SIZE_MAX: an artificial cell, which takes them in its NET_RECEIVE). */
static cs_status push_edge(cs__circuit *c, cs_model *m, const edge_pop *e, size_t k, uint64_t tg, size_t si, double w,
                           double delay) {
    const cs__npop *S = &c->pops[e->srcpop];
    if (!S->is_virtual) {
        CS_TRY(grow((void **)&m->conns, &c->capconn, m->nconn, sizeof *m->conns, (void **)&c->conn_syn,
                    sizeof *c->conn_syn));
        if (m->nconn >= CS_MODEL_MAX_CONNECTIONS)
            return cs_error_set(CS_ERR_INVALID, "%s: more than %d connections", e->file, CS_MODEL_MAX_CONNECTIONS);
        c->conn_syn[m->nconn] = si;
        m->conns[m->nconn++] = (cs_connection){.source = S->gid0 + (uint64_t)e->src[k], .target = tg, .nweight = 1,
                                               .weight = w, .delay = delay};
        return CS_OK;
    }
    size_t nsp = S->nspike ? S->nspike[e->src[k]] : 0;
    for (size_t sp = 0; sp < nsp; ++sp) {
        double t = S->spikes[e->src[k]][sp] + delay;
        if (t > m->tfinal) continue;
        CS_TRY(grow((void **)&m->events, &c->capevent, m->nevent, sizeof *m->events, (void **)&c->event_syn,
                    sizeof *c->event_syn));
        c->event_syn[m->nevent] = si;
        m->events[m->nevent++] = (cs_event){.target = tg, .time = t, .weight = w};
    }
    return CS_OK;
}

/* An edge to a point cell (nrn:IntFire1), as bmtk's PointProcessCell makes it: one connection,
 * its weight syn_weight · sign · nsyns (sign from the edge type's dynamics_params) unless the
 * edge file places its synapses (afferent_section_id). */
static cs_status to_point_cell(cs__circuit *c, cs_model *m, const edge_pop *e, size_t k, int placed, double w,
                               double delay, double nsyns) {
    if (!placed) {
        const char *dyn = cs__csv_get(e->types, e->type_row[k], "dynamics_params");
        char path[CS_PATH_MAX];
        cJSON *j = NULL;
        if (!dyn) return cs_error_set(CS_ERR_PARSE, "%s: edge type %lld to point cells needs dynamics_params with "
                                      "\"sign\"", e->types->path, (long long)e->type[k]);
        cs__path(c->syn_dir[0] ? c->syn_dir : c->dir, dyn, path, sizeof path);
        CS_TRY(cs__read_json(path, &j));
        const cJSON *sign = cJSON_GetObjectItemCaseSensitive(j, "sign");
        int ok = cJSON_IsNumber(sign);
        if (ok) w *= sign->valuedouble * nsyns;
        cJSON_Delete(j);
        if (!ok) return cs_error_set(CS_ERR_PARSE, "%s: no \"sign\" (edges to point cells: bmtk's weight is "
                                     "syn_weight · sign · nsyns)", path);
    }
    return push_edge(c, m, e, k, c->pops[e->tgtpop].gid0 + (uint64_t)e->tgt[k], SIZE_MAX, w, delay);
}

static cs_status one_edge(cs__circuit *c, cs_model *m, edge_pop *e, size_t k) {
    const cs__npop *S = &c->pops[e->srcpop], *T = &c->pops[e->tgtpop];
    if (e->src[k] < 0 || (size_t)e->src[k] >= S->n || e->tgt[k] < 0 || (size_t)e->tgt[k] >= T->n)
        return cs_error_set(CS_ERR_PARSE, "%s: edge %zu: source %lld or target %lld outside its population", e->where, k,
                            (long long)e->src[k], (long long)e->tgt[k]);
    if (T->is_virtual) return cs_error_set(CS_ERR_PARSE, "%s: edge %zu targets a virtual node", e->where, k);
    int q = T->pop0;
    while (q + 1 < T->pop1 && (uint64_t)e->tgt[k] >= m->pops[q + 1].output_id0) ++q;
    int cell = (int)((uint64_t)e->tgt[k] - m->pops[q].output_id0);
    double w, delay, nsyns = 1, sigma;
    const struct egroup *G = &e->g[e->gid[k]];
    CS_TRY(prop(e, k, G->weight, "syn_weight", NAN, &w));
    CS_TRY(prop(e, k, G->delay, "delay", NAN, &delay));
    if (!G->sec) CS_TRY(prop(e, k, G->nsyns, "nsyns", 1, &nsyns));
    if (!(delay > 0)) return cs_error_set(CS_ERR_PARSE, "%s: edge %zu: delay %g must be > 0 [ms]", e->where, k, delay);
    if (nsyns < 0 || nsyns > 10000 || nsyns != floor(nsyns))
        return cs_error_set(CS_ERR_PARSE, "%s: edge %zu: nsyns %g must be an integer in [0, 10000]", e->where, k, nsyns);
    const char *wf = cs__csv_get(e->types, e->type_row[k], "weight_function");
    if (wf && !strcmp(wf, "gaussianLL")) {
        CS_TRY(prop(e, k, NULL, "weight_sigma", NAN, &sigma));
        double ts = S->tuning[e->src[k]], tt = T->tuning[e->tgt[k]];
        if (isnan(ts) || isnan(tt))
            return cs_error_set(CS_ERR_PARSE, "%s: edge %zu: gaussianLL needs tuning_angle on both nodes", e->where, k);
        double dt = fabs(fabs(fabs(fmod(180.0 - fabs(tt - ts), 360.0)) - 90.0) - 90.0); /* bmtk's, as written there */
        w *= exp(-(dt / sigma) * (dt / sigma));
    } else if (wf && strcmp(wf, "wmax") && strcmp(wf, "default_weight_fnc") && strcmp(wf, "set_syn_weight"))
        return cs_error_set(CS_ERR_UNSUPPORTED, "%s: edge type %lld: weight_function '%s' (supported: wmax, gaussianLL, "
                            "default_weight_fnc)", e->types->path, (long long)e->type[k], wf);
    if (m->pops[q].artificial) return to_point_cell(c, m, e, k, G->sec != NULL, w, delay, nsyns);
    int proto = 0;
    CS_TRY(prototype(c, m, e, k, q, &proto));
    int ns = G->sec ? 1 : (int)nsyns;
    cs_location loc[64], *locs = ns <= 64 ? loc : malloc((size_t)ns * sizeof *locs);
    if (!locs) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    cs_status st = CS_OK;
    const struct cs__shape *sh = &c->shape[q];
    if (G->sec) {
        int64_t id = G->sec[e->gix[k]];
        double pos = G->pos ? G->pos[e->gix[k]] : 0.5;
        if (id < 0 || id >= sh->nsec)
            st = cs_error_set(CS_ERR_PARSE, "%s: %s/%lld/afferent_section_id row %lld: section %lld outside the morphology "
                              "%s (%d sections)", e->file, e->grp, (long long)e->gid[k], (long long)e->gix[k], (long long)id,
                              m->pops[q].morph.swc_path, sh->nsec);
        else if (!(pos >= 0 && pos <= 1))
            st = cs_error_set(CS_ERR_PARSE, "%s: %s/%lld/afferent_section_pos row %lld: %g is outside [0, 1]", e->file,
                              e->grp, (long long)e->gid[k], (long long)e->gix[k], pos);
        locs[0] = (cs_location){sh->sec[id < 0 || id >= sh->nsec ? 0 : id], pos};
    } else if (ns > 0) {
        const char *secs = cs__csv_get(e->types, e->type_row[k], "target_sections");
        const char *dr = cs__csv_get(e->types, e->type_row[k], "distance_range");
        double dmin, dmax;
        if (!secs || !dr || sscanf(dr, " [ %lf , %lf ]", &dmin, &dmax) != 2 || !section_mask(secs))
            st = cs_error_set(CS_ERR_PARSE, "%s: edge type %lld: without afferent_section_id the edge type needs "
                              "target_sections and distance_range [min, max]", e->types->path, (long long)e->type[k]);
        cs_rng r;
        cs_rng_seed2(&r, m->seed * 0x9E3779B97F4A7C15ull + (uint64_t)e->tgtpop, ((uint64_t)e->tgt[k] << 32) ^ k);
        if (st == CS_OK) st = place_random(c, q, section_mask(secs), dmin, dmax, &r, ns, locs, e->where);
    }
    for (int j = 0; st == CS_OK && j < ns; ++j) {
        size_t si = 0;
        st = push_syn(c, q, cell, proto, locs[j], &si);
        if (st != CS_OK) break;
        st = push_edge(c, m, e, k, T->gid0 + (uint64_t)e->tgt[k], si, w, delay);
    }
    if (locs != loc) free(locs);
    return st;
}

static cs_status read_edge_pop(cs__circuit *c, cs_model *m, hid_t f, const char *file, const char *name,
                               const cs__csv *types) {
    edge_pop e;
    memset(&e, 0, sizeof e);
    e.file = file;
    e.f = f;
    e.types = types;
    snprintf(e.where, sizeof e.where, "%s: /edges/%s", file, name);
    snprintf(e.grp, sizeof e.grp, "/edges/%s", name);
    char dn[CS_NAME_MAX + 64];
    const char *sets[] = {"source_node_id", "target_node_id", "edge_type_id", "edge_group_id", "edge_group_index"};
    int64_t **dst[] = {&e.src, &e.tgt, &e.type, &e.gid, &e.gix};
    cs_status st = CS_OK;
    for (int j = 0; j < 5 && st == CS_OK; ++j) {
        size_t n;
        snprintf(dn, sizeof dn, "%s/%s", e.grp, sets[j]);
        st = cs__h5_read_i64(f, file, dn, dst[j], &n);
        if (st == CS_OK && j && n != e.n)
            st = cs_error_set(CS_ERR_PARSE, "%s: %s has %zu rows, source_node_id %zu", file, dn, n, e.n);
        if (!j) e.n = n;
    }
    for (int side = 0; side < 2 && st == CS_OK; ++side) { /* the node populations, from the attributes */
        char pn[CS_NAME_MAX];
        snprintf(dn, sizeof dn, "%s/%s", e.grp, side ? "target_node_id" : "source_node_id");
        hid_t d = H5Dopen2(f, dn, H5P_DEFAULT);
        if (d >= 0) {
            cs__h5_attr_string(d, "node_population", pn, sizeof pn);
            H5Dclose(d);
        }
        int p = cs__npop_find(c, pn);
        if (p < 0) st = cs_error_set(CS_ERR_PARSE, "%s: attribute node_population '%s' names no node population", dn, pn);
        *(side ? &e.tgtpop : &e.srcpop) = p;
    }
    for (size_t k = 0; st == CS_OK && k < e.n; ++k) {
        if (e.gid[k] < 0 || e.gid[k] >= MAX_GROUPS)
            st = cs_error_set(CS_ERR_UNSUPPORTED, "%s: edge %zu is in group %lld (groups 0 to %d are read)", e.where, k,
                              (long long)e.gid[k], MAX_GROUPS - 1);
        else if (e.gix[k] < 0)
            st = cs_error_set(CS_ERR_PARSE, "%s: edge %zu: edge_group_index %lld < 0", e.where, k, (long long)e.gix[k]);
        else if ((size_t)e.gix[k] + 1 > e.g[e.gid[k]].n) e.g[e.gid[k]].n = (size_t)e.gix[k] + 1;
    }
    for (int gi = 0; gi < MAX_GROUPS && st == CS_OK; ++gi) {
        struct egroup *g = &e.g[gi];
        if (!g->n) continue;
        st = group_data(&e, gi, "syn_weight", &g->weight, NULL);
        if (st == CS_OK) st = group_data(&e, gi, "delay", &g->delay, NULL);
        if (st == CS_OK) st = group_data(&e, gi, "nsyns", &g->nsyns, NULL);
        if (st == CS_OK) st = group_data(&e, gi, "afferent_section_pos", &g->pos, NULL);
        if (st == CS_OK) st = group_data(&e, gi, "afferent_section_id", NULL, &g->sec);
    }
    if (st == CS_OK) {
        e.type_row = malloc((e.n ? e.n : 1) * sizeof *e.type_row);
        if (!e.type_row) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; st == CS_OK && k < e.n; ++k) {
        e.type_row[k] = k && e.type[k] == e.type[k - 1] ? e.type_row[k - 1] : cs__csv_row_of(types, "edge_type_id", e.type[k]);
        if (e.type_row[k] < 0)
            st = cs_error_set(CS_ERR_PARSE, "%s: edge %zu has edge_type_id %lld, which %s does not list", e.where, k,
                              (long long)e.type[k], types->path);
    }
    for (size_t k = 0; st == CS_OK && k < e.n; ++k) st = one_edge(c, m, &e, k);
    free_edge_pop(&e);
    return st;
}

static cs_status read_edges_file(cs__circuit *c, cs_model *m, const cJSON *entry) {
    const cJSON *ef = cJSON_GetObjectItemCaseSensitive(entry, "edges_file");
    const cJSON *tf = cJSON_GetObjectItemCaseSensitive(entry, "edge_types_file");
    if (!cJSON_IsString(ef) || !cJSON_IsString(tf))
        return cs_error_set(CS_ERR_PARSE, "%s: networks.edges: an entry needs \"edges_file\" and \"edge_types_file\"", c->path);
    char file[CS_PATH_MAX], tpath[CS_PATH_MAX];
    cs__resolve(c, ef->valuestring, file, sizeof file);
    cs__resolve(c, tf->valuestring, tpath, sizeof tpath);
    const cs__csv *types = NULL;
    for (int k = 0; k < c->ncsv; ++k)
        if (!strcmp(c->csv[k].path, tpath)) types = &c->csv[k];
    if (!types) return cs_error_set(CS_ERR_INTERNAL, "%s: type file not loaded", tpath);
    if (cs__csv_col(types, "edge_type_id") < 0) return cs_error_set(CS_ERR_PARSE, "%s: no edge_type_id column", tpath);
    hid_t f = cs__h5_open_file(file);
    if (f < 0) return cs_error_set(CS_ERR_IO, "%s: cannot open as HDF5", file);
    cs_status st = CS_OK;
    hid_t g = -1;
    H5E_BEGIN_TRY { g = H5Gopen2(f, "/edges", H5P_DEFAULT); }
    H5E_END_TRY;
    hsize_t n = 0;
    if (g < 0 || H5Gget_num_objs(g, &n) < 0) st = cs_error_set(CS_ERR_PARSE, "%s: no /edges group", file);
    for (hsize_t k = 0; st == CS_OK && k < n; ++k) {
        char name[CS_NAME_MAX];
        ssize_t len = H5Gget_objname_by_idx(g, k, name, sizeof name);
        if (len <= 0 || (size_t)len >= sizeof name)
            st = cs_error_set(CS_ERR_PARSE, "%s: /edges: a population name is empty or too long", file);
        else H5E_BEGIN_TRY { st = read_edge_pop(c, m, f, file, name, types); } H5E_END_TRY;
    }
    if (g >= 0) H5Gclose(g);
    H5Fclose(f);
    return st;
}

static int cmp_syn(const void *a, const void *b) {
    const struct cs__syn *x = a, *y = b;
    if (x->pop != y->pop) return x->pop < y->pop ? -1 : 1;
    if (x->s.cell != y->s.cell) return x->s.cell < y->s.cell ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Sort the collected synapses by population and cell, hand each population its list, and
 * name each connection's and event's synapse nsyn + (its rank among its cell's). */
static cs_status finish(cs__circuit *c, cs_model *m) {
    if (c->nsyn) qsort(c->syn, c->nsyn, sizeof *c->syn, cmp_syn);
    size_t *index = malloc((c->nsyn ? c->nsyn : 1) * sizeof *index);
    if (!index) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (size_t a = 0, b; a < c->nsyn; a = b) {
        cs_population_spec *ps = &m->pops[c->syn[a].pop];
        for (b = a; b < c->nsyn && c->syn[b].pop == c->syn[a].pop; ++b) {}
        ps->cellsyn = malloc((b - a) * sizeof *ps->cellsyn);
        if (!ps->cellsyn) {
            free(index);
            return cs_error_set(CS_ERR_NOMEM, "out of memory");
        }
        ps->ncellsyn = b - a;
        int j = 0;
        for (size_t k = a; k < b; ++k) {
            j = k > a && c->syn[k].s.cell == c->syn[k - 1].s.cell ? j + 1 : 0;
            ps->cellsyn[k - a] = c->syn[k].s;
            index[c->syn[k].order] = (size_t)(ps->nsyn + j);
        }
    }
    for (size_t k = 0; k < m->nconn; ++k) /* SIZE_MAX: an artificial target, synapse 0 */
        m->conns[k].synapse = c->conn_syn[k] == SIZE_MAX ? 0 : (int)index[c->conn_syn[k]];
    for (size_t k = 0; k < m->nevent; ++k) m->events[k].synapse = c->event_syn[k] == SIZE_MAX ? 0 : (int)index[c->event_syn[k]];
    free(index);
    return CS_OK;
}

cs_status cs__read_edges(cs__circuit *c, cs_model *m) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c->root, "networks"), "edges");
    for (const cJSON *e = list ? list->child : NULL; e; e = e->next) CS_TRY(read_edges_file(c, m, e));
    return finish(c, m);
}
