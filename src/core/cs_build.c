/* Model → network description: morphologies are built and discretised (once per population,
 * or once per cell for random trees), mechanisms placed on CVs, locations resolved to CVs. */
#include "cs_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cs_ion.h"

static cs_status build_morph(const cs_model *m, const cs_population_spec *p, uint64_t gid,
                             cs_morph *morph) {
    const cs_morph_spec *s = &p->morph;
    cs_status st = CS_ERR_INTERNAL;
    switch (s->kind) {
    case CS_MORPH_SWC:
        st = cs_morph_load_swc(s->swc_path, &s->swc, morph);
        if (st == CS_OK && s->axon_stub.on) st = cs_morph_replace_axon(morph, &s->axon_stub);
        break;
    case CS_MORPH_SOMA: st = cs_morph_soma(s->radius, morph); break;
    case CS_MORPH_CABLE: st = cs_morph_cable(s->length, s->radius, s->ncv, morph); break;
    case CS_MORPH_BALL_AND_STICK:
        st = cs_morph_ball_and_stick(s->soma_radius, s->dend_length, s->dend_radius, s->ncv, morph);
        break;
    case CS_MORPH_RANDOM_TREE:
        /* each cell its own tree, reproducible from the run's seed and the cell's gid */
        st = cs_morph_random_tree(&s->tree, m->seed * 0x9E3779B97F4A7C15ull + gid, morph);
        break;
    case CS_MORPH_BRANCHES: st = cs_morph_from_branches(s->branches, s->nbranch, morph); break;
    }
    if (st != CS_OK)
        return cs_error_set(st, "%s: population '%s': %s", m->path, p->name, cs_error_message());
    return CS_OK;
}

/* Resolve a location on a cell; a location that does not exist is an error naming it. */
static cs_status locate(const cs_model *m, const cs_population_spec *p, int cell,
                        const cs_geometry *g, cs_location loc, const char *what, int *node) {
    *node = cs_geometry_locate(g, loc.branch, loc.pos);
    if (*node < 0)
        return cs_error_set(CS_ERR_INVALID,
                            "%s: population '%s' cell %d: %s location (branch %d, pos %g) does not "
                            "exist (the cell has %d branches)",
                            m->path, p->name, cell, what, loc.branch, loc.pos, g->nbranch);
    return CS_OK;
}

static int cell_selected(int ncells, const int *cells, int c) {
    if (ncells < 0) return 1;
    for (int k = 0; k < ncells; ++k)
        if (cells[k] == c) return 1;
    return 0;
}

typedef struct {
    cs_instance_desc *v;
    size_t n, cap;
} inst_vec;

/* Room for one more element in *p (n in use, *cap allocated, elements of elem bytes): doubled
 * from `first` when full. */
static cs_status room_for_one(void **p, size_t n, size_t *cap, size_t elem, size_t first, const char *what) {
    if (n < *cap) return CS_OK;
    size_t nc = *cap ? 2 * *cap : first;
    void *q = realloc(*p, nc * elem);
    if (!q) return cs_error_set(CS_ERR_NOMEM, "out of memory placing %s", what);
    *p = q;
    *cap = nc;
    return CS_OK;
}

static cs_status push_inst(inst_vec *iv, cs_instance_desc d) {
    CS_TRY(room_for_one((void **)&iv->v, iv->n, &iv->cap, sizeof *iv->v, 1024, "mechanisms"));
    iv->v[iv->n++] = d;
    return CS_OK;
}

/* Coalesced synapses (cs_mech_type.linear): a cell's own synapses at one CV with the same linear
 * type and parameters share one instance, whose states are the sum of theirs (Arbor's
 * coalesce_synapses). Per cell, head[node] is the newest own instance at that CV and chain[k] the
 * one before it at the same CV (k relative to the cell's first own instance first). */
typedef struct {
    size_t *head;                /* [nhead] instance index, or SIZE_MAX */
    int nhead;
    size_t *chain;               /* [nchain] */
    size_t nchain, cap, first;
} twin_index;

static cs_status twins_begin(twin_index *t, int ncv, size_t first) {
    if (ncv > t->nhead) {
        size_t *h = realloc(t->head, (size_t)ncv * sizeof *h);
        if (!h) return cs_error_set(CS_ERR_NOMEM, "out of memory placing synapses");
        for (int k = t->nhead; k < ncv; ++k) h[k] = SIZE_MAX;
        t->head = h;
        t->nhead = ncv;
    }
    t->nchain = 0;
    t->first = first;
    return CS_OK;
}

/* The instance in coalesces into, or SIZE_MAX. */
static size_t twins_find(const twin_index *t, const inst_vec *iv, cs_instance_desc in) {
    if (!in.type->linear) return SIZE_MAX;
    for (size_t k = t->head[in.node]; k != SIZE_MAX; k = t->chain[k - t->first]) {
        const cs_instance_desc *o = &iv->v[k];
        if (o->type == in.type &&
            (o->param == in.param || !memcmp(o->param, in.param, (size_t)in.type->nparam * sizeof *in.param)))
            return k;
    }
    return SIZE_MAX;
}

/* The next instance pushed (index first + nchain) sits at CV node. */
static cs_status twins_add(twin_index *t, int node) {
    CS_TRY(room_for_one((void **)&t->chain, t->nchain, &t->cap, sizeof *t->chain, 256, "synapses"));
    t->chain[t->nchain] = t->head[node];
    t->head[node] = t->first + t->nchain++;
    return CS_OK;
}

/* Forget the cell's instances: every head they set back to SIZE_MAX. */
static void twins_end(twin_index *t, const inst_vec *iv) {
    for (size_t k = 0; k < t->nchain; ++k) t->head[iv->v[t->first + k].node] = SIZE_MAX;
}

int cs_probe_cell(const cs_population_spec *ps, int k) {
    return ps->probes.ncells < 0 ? k : ps->probes.cells[k];
}

/* Cells [c0, c1) of population p that fall in the share [gid0, gid1). */
static void pop_range(const cs_population_spec *ps, uint64_t gid0, uint64_t gid1, int *c0, int *c1) {
    uint64_t lo = ps->first_gid > gid0 ? ps->first_gid : gid0;
    uint64_t hi = ps->first_gid + (uint64_t)ps->count < gid1 ? ps->first_gid + (uint64_t)ps->count : gid1;
    *c0 = (int)(lo - ps->first_gid);
    *c1 = hi > lo ? (int)(hi - ps->first_gid) : *c0;
}

/* What probe pd of variable pv reads on local cell li (population cell c): the instance whose
 * state it is, or that an ion current is written at its CV; a variable absent there is an error
 * naming the model, the population, the cell, the location and the variable. */
static cs_status resolve_probe(const cs_model *m, const cs_population_spec *ps, const cs_network_desc *d,
                               const inst_vec *iv, int c, size_t li, cs_location loc, const cs_probe_var *pv,
                               cs_probe_desc *pd) {
    size_t a = d->cell_inst_first[li], b = d->cell_inst_first[li + 1];
    const char *why = NULL;
    switch (pv->kind) {
    case CS_PROBE_V:
    case CS_PROBE_IMEM: return CS_OK;
    case CS_PROBE_DENSITY:
        for (size_t k = a; k < b; ++k)
            if (iv->v[k].type == pv->type && iv->v[k].node == pd->node) {
                pd->inst = k;
                return CS_OK;
            }
        why = "the mechanism is not on that CV";
        break;
    case CS_PROBE_SYNAPSE: {
        size_t k = d->syn_instance[li * (size_t)d->max_syn + (size_t)pv->target];
        if (k == SIZE_MAX) break;
        pd->inst = k;
        pd->node = iv->v[k].node; /* the synapse's own CV */
        return CS_OK;
    }
    case CS_PROBE_STIMULUS: {
        /* a cell's stimuli are its last instances, in the order of the population's stimuli */
        int before = 0, nsel = 0;
        for (int j = 0; j < ps->nstim; ++j) {
            if (!cell_selected(ps->stim[j].ncells, ps->stim[j].cells, c)) continue;
            if (j < pv->target) before++;
            nsel++;
        }
        if (!cell_selected(ps->stim[pv->target].ncells, ps->stim[pv->target].cells, c)) {
            why = "the stimulus does not apply to this cell";
            break;
        }
        pd->inst = b - (size_t)nsel + (size_t)before;
        pd->node = iv->v[pd->inst].node;
        return CS_OK;
    }
    case CS_PROBE_ION:
        for (size_t k = a; k < b; ++k)
            if (iv->v[k].node == pd->node && (iv->v[k].type->ion_write & (1u << pv->index))) return CS_OK;
        why = "no mechanism on that CV writes that ion current";
        break;
    case CS_PROBE_CONC_I:
    case CS_PROBE_CONC_O:
    case CS_PROBE_EREV:
        for (size_t k = a; k < b; ++k)
            if (iv->v[k].node == pd->node && (cs_ion_used(iv->v[k].type) & (1u << pv->index))) return CS_OK;
        why = "no mechanism on that CV uses that ion";
        break;
    }
    return cs_error_set(CS_ERR_INVALID,
                        "%s: population '%s' cell %d: probe variable '%s' does not exist at location (branch %d, "
                        "pos %g): %s",
                        m->path, ps->name, c, pv->name, loc.branch, loc.pos, why ? why : "no such synapse");
}

/* The most own synapses (cs_cell_synapse) that one cell of the population has. */
static int max_own_synapses(const cs_population_spec *ps) {
    int best = 0, run = 0;
    for (size_t k = 0; k < ps->ncellsyn; ++k) {
        run = k && ps->cellsyn[k].cell == ps->cellsyn[k - 1].cell ? run + 1 : 1;
        if (run > best) best = run;
    }
    return best;
}

static cs_status build(const cs_model *m, uint64_t gid0, uint64_t gid1, cs_network_desc *d, inst_vec *iv,
                       twin_index *tw) {
    d->gid0 = gid0;
    d->ncell_global = m->ncells;
    d->nshare = gid1 - gid0;
    int ngeom_max = 0, max_syn = 0;
    for (int p = 0; p < m->npop; ++p) {
        int c0, c1;
        pop_range(&m->pops[p], gid0, gid1, &c0, &c1);
        if (m->pops[p].artificial) {
            d->nart += (size_t)(c1 - c0);
            continue;
        }
        d->ncell += (size_t)(c1 - c0);
        if (c1 > c0) ngeom_max += m->pops[p].morph.kind == CS_MORPH_RANDOM_TREE ? c1 - c0 : 1;
        int nsyn = m->pops[p].nsyn + max_own_synapses(&m->pops[p]);
        if (nsyn > max_syn) max_syn = nsyn;
    }
    d->cells = calloc(d->ncell ? d->ncell : 1, sizeof *d->cells);
    d->art = calloc(d->nart ? d->nart : 1, sizeof *d->art);
    d->local = malloc((d->nshare ? d->nshare : 1) * sizeof *d->local);
    if (!d->cells || !d->art || !d->local) return cs_error_set(CS_ERR_NOMEM, "out of memory for %llu cells",
                                                               (unsigned long long)d->nshare);
    size_t ncable = 0, nart = 0;
    d->geoms = calloc(ngeom_max ? (size_t)ngeom_max : 1, sizeof *d->geoms);
    d->max_syn = max_syn;
    d->syn_instance = malloc((d->ncell * (size_t)max_syn + 1) * sizeof *d->syn_instance);
    d->det = calloc(d->ncell ? d->ncell : 1, sizeof *d->det);
    int nreport = 0;
    for (int p = 0; p < m->npop; ++p)
        if (m->pops[p].has_probes) nreport += m->pops[p].probes.nvar;
    d->reports = calloc((size_t)nreport + 1, sizeof *d->reports);
    d->report_probe_first = calloc((size_t)nreport + 1, sizeof *d->report_probe_first);
    d->report_probe_ncol = calloc((size_t)nreport + 1, sizeof *d->report_probe_ncol);
    d->cell_inst_first = calloc(d->ncell + 1, sizeof *d->cell_inst_first);
    if (!d->cells || !d->geoms || !d->syn_instance || !d->det || !d->reports || !d->report_probe_first ||
        !d->report_probe_ncol || !d->cell_inst_first)
        return cs_error_set(CS_ERR_NOMEM, "out of memory for %llu cells", (unsigned long long)d->ncell);

    size_t nprobe = 0;
    for (int p = 0; p < m->npop; ++p) {
        const cs_population_spec *ps = &m->pops[p];
        if (ps->has_probes)
            nprobe += (size_t)(ps->probes.ncells < 0 ? ps->count : ps->probes.ncells) * (size_t)ps->probes.nloc *
                      (size_t)ps->probes.nvar;
    }
    d->probes = calloc(nprobe ? nprobe : 1, sizeof *d->probes);
    if (!d->probes) return cs_error_set(CS_ERR_NOMEM, "out of memory for probes");

    for (int p = 0; p < m->npop; ++p) {
        const cs_population_spec *ps = &m->pops[p];
        int per_cell = ps->morph.kind == CS_MORPH_RANDOM_TREE, c0, c1;
        pop_range(ps, gid0, gid1, &c0, &c1);
        size_t own = 0;
        for (int c = c0; c < c1 && ps->artificial; ++c) {
            uint64_t gid = ps->first_gid + (uint64_t)c;
            d->local[gid - gid0] = -1 - (int64_t)nart;
            d->art[nart++] = (cs_art_desc){gid, p, c};
        }
        for (int c = c0; c < c1 && !ps->artificial; ++c) {
            uint64_t gid = ps->first_gid + (uint64_t)c;
            size_t li = ncable++; /* local index */
            d->local[gid - gid0] = (int64_t)li;
            if (per_cell || c == c0) {
                cs_morph morph = {0};
                CS_TRY(build_morph(m, ps, gid, &morph));
                cs_status st = cs_discretize(&morph, &ps->policy, &d->geoms[d->ngeom]);
                cs_morph_free(&morph);
                if (st != CS_OK)
                    return cs_error_set(st, "%s: population '%s': %s", m->path, ps->name, cs_error_message());
                d->ngeom++;
            }
            const cs_geometry *g = &d->geoms[d->ngeom - 1];
            d->cells[li] = (cs_cell_desc){gid, p, c, g, ps->cm_tag, ps->Ra_tag, ps->v_init, ps->ion_e, ps->ion_ci, ps->ion_co};
            d->total_cv += (uint64_t)g->ncv;
            d->cell_inst_first[li] = iv->n;

            /* density mechanisms, by region, on every CV with membrane */
            for (int k = 0; k < ps->ndensity; ++k) {
                const cs_density_spec *ds = &ps->density[k];
                for (int n = 0; n < g->ncv; ++n) {
                    if (g->area[n] <= 0 || !(ds->region_mask & (1u << g->tag[n]))) continue;
                    cs_instance_desc in = {(int)li, n, ds->type, 1e-2 * g->area[n], ds->param};
                    CS_TRY(push_inst(iv, in));
                }
            }
            for (int k = 0; k < max_syn; ++k) d->syn_instance[li * (size_t)max_syn + (size_t)k] = SIZE_MAX;
            for (int k = 0; k < ps->nsyn; ++k) {
                if (ps->syn[k].per_cell) continue;
                int node;
                CS_TRY(locate(m, ps, c, g, ps->syn[k].loc, "synapse", &node));
                cs_instance_desc in = {(int)li, node, ps->syn[k].type, 1.0, ps->syn[k].param};
                d->syn_instance[li * (size_t)max_syn + (size_t)k] = iv->n;
                CS_TRY(push_inst(iv, in));
            }
            /* the cell's own synapses: synapse nsyn + j (the list is sorted by cell) */
            while (own < ps->ncellsyn && ps->cellsyn[own].cell < c) ++own;
            CS_TRY(twins_begin(tw, g->ncv, iv->n));
            for (int j = 0; own < ps->ncellsyn && ps->cellsyn[own].cell == c; ++own, ++j) {
                const cs_cell_synapse *cy = &ps->cellsyn[own];
                const cs_point_spec *proto = &ps->syn[cy->proto];
                int node;
                CS_TRY(locate(m, ps, c, g, cy->loc, proto->name, &node));
                cs_instance_desc in = {(int)li, node, proto->type, 1.0, proto->param};
                d->nsyn_own++;
                size_t twin = m->separate_synapses ? SIZE_MAX : twins_find(tw, iv, in);
                if (twin != SIZE_MAX) {
                    d->syn_instance[li * (size_t)max_syn + (size_t)(ps->nsyn + j)] = twin;
                    d->nsyn_coalesced++;
                    continue;
                }
                d->syn_instance[li * (size_t)max_syn + (size_t)(ps->nsyn + j)] = iv->n;
                CS_TRY(twins_add(tw, in.node));
                CS_TRY(push_inst(iv, in));
            }
            twins_end(tw, iv);
            for (int k = 0; k < ps->nstim; ++k) {
                if (!cell_selected(ps->stim[k].ncells, ps->stim[k].cells, c)) continue;
                int node;
                CS_TRY(locate(m, ps, c, g, ps->stim[k].loc, "stimulus", &node));
                cs_instance_desc in = {(int)li, node, ps->stim[k].type, 1.0, ps->stim[k].param};
                CS_TRY(push_inst(iv, in));
            }
            if (ps->has_detector) {
                int node;
                CS_TRY(locate(m, ps, c, g, ps->detector, "detector", &node));
                d->det[d->ndet++] = (cs_detector_desc){(int)li, node, ps->threshold};
            }
            d->cell_inst_first[li + 1] = iv->n;
        }
        /* probes: for each variable, each chosen cell in the given order, each location in the
         * given order; this share keeps those of its own cells, with their column in the whole
         * report */
        for (int v = 0; ps->has_probes && v < ps->probes.nvar; ++v) {
            const cs_probe_var *pv = &ps->probes.vars[v];
            int r = d->nreport++;
            d->reports[r] = (cs_report_desc){p, pv};
            d->report_probe_first[r] = d->nprobe;
            int nc = ps->probes.ncells < 0 ? ps->count : ps->probes.ncells;
            uint64_t col = 0;
            for (int k = 0; k < nc; ++k) {
                int c = cs_probe_cell(ps, k);
                uint64_t gid = ps->first_gid + (uint64_t)c;
                if (gid < gid0 || gid >= gid1) {
                    col += (uint64_t)ps->probes.nloc;
                    continue;
                }
                size_t li = (size_t)d->local[gid - gid0];
                for (int l = 0; l < ps->probes.nloc; ++l) {
                    int node;
                    CS_TRY(locate(m, ps, c, d->cells[li].geom, ps->probes.locs[l], "probe", &node));
                    cs_probe_desc pd = {(int)li, node, col++, pv->kind, 0, pv->index};
                    CS_TRY(resolve_probe(m, ps, d, iv, c, li, ps->probes.locs[l], pv, &pd));
                    d->probes[d->nprobe++] = pd;
                }
            }
            d->report_probe_ncol[r] = col;
        }
    }
    d->report_probe_first[d->nreport] = d->nprobe;
    return CS_OK;
}

cs_status cs_build_network(const cs_model *m, cs_network_desc *out) {
    return cs_build_network_range(m, 0, m->ncells, out);
}

cs_status cs_build_network_range(const cs_model *m, uint64_t gid0, uint64_t gid1, cs_network_desc *out) {
    memset(out, 0, sizeof *out);
    if (m->ncells > (uint64_t)INT32_MAX)
        return cs_error_set(CS_ERR_INVALID, "%s: %llu cells is more than this build supports", m->path,
                            (unsigned long long)m->ncells);
    if (gid0 > gid1 || gid1 > m->ncells)
        return cs_error_set(CS_ERR_INVALID, "%s: cell range [%llu, %llu) outside the %llu cells", m->path,
                            (unsigned long long)gid0, (unsigned long long)gid1, (unsigned long long)m->ncells);
    inst_vec iv = {0};
    twin_index tw = {0};
    cs_status st = build(m, gid0, gid1, out, &iv, &tw);
    free(tw.head);
    free(tw.chain);
    /* the instances grew by doubling: give back the unused part */
    if (st == CS_OK && iv.n && iv.n < iv.cap) {
        cs_instance_desc *p = realloc(iv.v, iv.n * sizeof *p);
        if (p) iv.v = p;
    }
    out->inst = iv.v;
    out->ninst = iv.n;
    if (st != CS_OK) cs_network_desc_free(out);
    return st;
}

void cs_network_desc_free(cs_network_desc *d) {
    for (int k = 0; k < d->ngeom; ++k) cs_geometry_free(&d->geoms[k]);
    free(d->geoms);
    free(d->cells);
    free(d->art);
    free(d->local);
    free(d->inst);
    free(d->syn_instance);
    free(d->det);
    free(d->probes);
    free(d->reports);
    free(d->report_probe_first);
    free(d->report_probe_ncol);
    free(d->cell_inst_first);
    memset(d, 0, sizeof *d);
}

void cs_network_desc_release_setup(cs_network_desc *d) {
    for (int k = 0; k < d->ngeom; ++k) cs_geometry_free(&d->geoms[k]);
    free(d->geoms);
    d->geoms = NULL;
    d->ngeom = 0;
    for (size_t c = 0; c < d->ncell; ++c) d->cells[c].geom = NULL;
    free(d->inst);
    d->inst = NULL;
    free(d->det);
    d->det = NULL;
    free(d->probes);
    d->probes = NULL;
    free(d->cell_inst_first);
    d->cell_inst_first = NULL;
}

/* Estimated cost of one mechanism instance per step, in units of one compartment's assembly and
 * solve. Folded (linear) mechanisms cost nothing per step. Otherwise the cost grows with the
 * states, each a rate evaluation and an exponential: on the CPU (development machine, 1 thread,
 * session 13) an hh instance took 86 ns per step against 4.2 ns for a passive compartment, ~20
 * compartments, so 1 + 6 per state; on the GPU both are bound by memory traffic (hh moves its
 * three states, v, i and g: ~3 rows' 48 B), so 1 + 1 per state. */
static double instance_cost(const cs_mech_type *t, int for_gpu) {
    if (t->fold) return 0;
    return 1.0 + (for_gpu ? 1.0 : 6.0) * t->nstate_solved; /* STATEs: ASSIGNED ones cost no rate */
}

/* Estimated cost of one cell of population ps [compartments, see instance_cost], from its first cell. */
static cs_status pop_cost(const cs_model *m, const cs_population_spec *ps, int for_gpu, double *cost) {
    cs_morph morph = {0};
    cs_geometry g = {0};
    CS_TRY(build_morph(m, ps, ps->first_gid, &morph));
    cs_status st = cs_discretize(&morph, &ps->policy, &g);
    cs_morph_free(&morph);
    if (st != CS_OK) return cs_error_set(st, "%s: population '%s': %s", m->path, ps->name, cs_error_message());
    double n = g.ncv;
    for (int k = 0; k < ps->nsyn; ++k)
        if (!ps->syn[k].per_cell) n += instance_cost(ps->syn[k].type, for_gpu);
    for (size_t k = 0; ps->count > 0 && k < ps->ncellsyn; ++k) /* own synapses: their mean per cell */
        n += instance_cost(ps->syn[ps->cellsyn[k].proto].type, for_gpu) / ps->count;
    for (int k = 0; k < ps->nstim; ++k) n += instance_cost(ps->stim[k].type, for_gpu);
    for (int k = 0; k < ps->ndensity; ++k) {
        const double c = instance_cost(ps->density[k].type, for_gpu);
        for (int v = 0; c > 0 && v < g.ncv; ++v)
            if (g.area[v] > 0 && (ps->density[k].region_mask & (1u << g.tag[v]))) n += c;
    }
    cs_geometry_free(&g);
    *cost = n;
    return CS_OK;
}

cs_status cs_build_partition(const cs_model *m, int nrank, int for_gpu, uint64_t *first) {
    CS_CHECK(nrank >= 1, CS_ERR_INVALID, "partition over %d ranks", nrank);
    double *cost = calloc((size_t)m->npop + 1, sizeof *cost), total = 0;
    if (!cost) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (int p = 0; p < m->npop; ++p) {
        if (m->pops[p].artificial) {
            cost[p] = 1.0; /* events only: about a compartment's step */
        } else if (m->pops[p].count > 0) {
            cs_status st = pop_cost(m, &m->pops[p], for_gpu, &cost[p]);
            if (st != CS_OK) {
                free(cost);
                return st;
            }
        }
        total += cost[p] * m->pops[p].count;
    }
    /* rank r starts at the gid whose cumulative cost is nearest r/nrank of the total */
    first[0] = 0;
    for (int r = 1; r < nrank; ++r) {
        double target = total * r / nrank, cum = 0;
        uint64_t g = m->ncells;
        for (int p = 0; p < m->npop; ++p) {
            double w = cost[p] * m->pops[p].count;
            if (cum + w >= target && cost[p] > 0) {
                double k = floor((target - cum) / cost[p] + 0.5);
                if (k > m->pops[p].count) k = m->pops[p].count;
                g = m->pops[p].first_gid + (uint64_t)k;
                break;
            }
            cum += w;
        }
        first[r] = g < first[r - 1] ? first[r - 1] : g;
    }
    first[nrank] = m->ncells;
    free(cost);
    return CS_OK;
}
