/* Model → network description: morphologies are built and discretised (once per population,
 * or once per cell for random trees), mechanisms placed on CVs, locations resolved to CVs. */
#include "cs_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static cs_status build_morph(const cs_model *m, const cs_population_spec *p, uint64_t gid,
                             cs_morph *morph) {
    const cs_morph_spec *s = &p->morph;
    cs_status st = CS_ERR_INTERNAL;
    switch (s->kind) {
    case CS_MORPH_SWC: st = cs_morph_load_swc(s->swc_path, &s->swc, morph); break;
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

static cs_status push_inst(inst_vec *iv, cs_instance_desc d) {
    if (iv->n == iv->cap) {
        size_t nc = iv->cap ? 2 * iv->cap : 1024;
        cs_instance_desc *p = realloc(iv->v, nc * sizeof *p);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory placing mechanisms");
        iv->v = p;
        iv->cap = nc;
    }
    iv->v[iv->n++] = d;
    return CS_OK;
}

static cs_status build(const cs_model *m, cs_network_desc *d, inst_vec *iv) {
    d->ncell = m->ncells;
    d->cells = calloc(d->ncell ? d->ncell : 1, sizeof *d->cells);
    int ngeom_max = 0, max_syn = 0;
    for (int p = 0; p < m->npop; ++p) {
        ngeom_max += m->pops[p].morph.kind == CS_MORPH_RANDOM_TREE ? m->pops[p].count : 1;
        if (m->pops[p].nsyn > max_syn) max_syn = m->pops[p].nsyn;
    }
    d->geoms = calloc((size_t)ngeom_max, sizeof *d->geoms);
    d->max_syn = max_syn;
    d->syn_instance = malloc((d->ncell * (size_t)max_syn + 1) * sizeof *d->syn_instance);
    d->det = calloc(d->ncell ? d->ncell : 1, sizeof *d->det);
    d->pop_probe_first = calloc((size_t)m->npop + 1, sizeof *d->pop_probe_first);
    if (!d->cells || !d->geoms || !d->syn_instance || !d->det || !d->pop_probe_first)
        return cs_error_set(CS_ERR_NOMEM, "out of memory for %llu cells", (unsigned long long)d->ncell);

    size_t nprobe = 0;
    for (int p = 0; p < m->npop; ++p) {
        const cs_population_spec *ps = &m->pops[p];
        if (ps->has_probes)
            nprobe += (size_t)(ps->probes.ncells < 0 ? ps->count : ps->probes.ncells) * (size_t)ps->probes.nloc;
    }
    d->probes = calloc(nprobe ? nprobe : 1, sizeof *d->probes);
    if (!d->probes) return cs_error_set(CS_ERR_NOMEM, "out of memory for probes");

    for (int p = 0; p < m->npop; ++p) {
        const cs_population_spec *ps = &m->pops[p];
        int per_cell = ps->morph.kind == CS_MORPH_RANDOM_TREE;
        for (int c = 0; c < ps->count; ++c) {
            uint64_t gid = ps->first_gid + (uint64_t)c;
            if (per_cell || c == 0) {
                cs_morph morph = {0};
                CS_TRY(build_morph(m, ps, gid, &morph));
                cs_status st = cs_discretize(&morph, &ps->policy, &d->geoms[d->ngeom]);
                cs_morph_free(&morph);
                if (st != CS_OK)
                    return cs_error_set(st, "%s: population '%s': %s", m->path, ps->name, cs_error_message());
                d->ngeom++;
            }
            const cs_geometry *g = &d->geoms[d->ngeom - 1];
            d->cells[gid] = (cs_cell_desc){gid, p, c, g, ps->cm, ps->Ra, ps->v_init};
            d->total_cv += (uint64_t)g->ncv;

            /* density mechanisms, by region, on every CV with membrane */
            for (int k = 0; k < ps->ndensity; ++k) {
                const cs_density_spec *ds = &ps->density[k];
                for (int n = 0; n < g->ncv; ++n) {
                    if (g->area[n] <= 0 || !(ds->region_mask & (1u << g->tag[n]))) continue;
                    cs_instance_desc in = {(int)gid, n, ds->type, 1e-2 * g->area[n], {0}};
                    memcpy(in.param, ds->param, sizeof in.param);
                    CS_TRY(push_inst(iv, in));
                }
            }
            for (int k = 0; k < max_syn; ++k) d->syn_instance[gid * (size_t)max_syn + (size_t)k] = SIZE_MAX;
            for (int k = 0; k < ps->nsyn; ++k) {
                int node;
                CS_TRY(locate(m, ps, c, g, ps->syn[k].loc, "synapse", &node));
                cs_instance_desc in = {(int)gid, node, ps->syn[k].type, 1.0, {0}};
                memcpy(in.param, ps->syn[k].param, sizeof in.param);
                d->syn_instance[gid * (size_t)max_syn + (size_t)k] = iv->n;
                CS_TRY(push_inst(iv, in));
            }
            for (int k = 0; k < ps->nstim; ++k) {
                if (!cell_selected(ps->stim[k].ncells, ps->stim[k].cells, c)) continue;
                int node;
                CS_TRY(locate(m, ps, c, g, ps->stim[k].loc, "stimulus", &node));
                cs_instance_desc in = {(int)gid, node, ps->stim[k].type, 1.0, {0}};
                memcpy(in.param, ps->stim[k].param, sizeof in.param);
                CS_TRY(push_inst(iv, in));
            }
            if (ps->has_detector) {
                int node;
                CS_TRY(locate(m, ps, c, g, ps->detector, "detector", &node));
                d->det[d->ndet++] = (cs_detector_desc){(int)gid, node, ps->threshold};
            }
        }
        /* probes: for each chosen cell in the given order, each location in the given order */
        d->pop_probe_first[p] = d->nprobe;
        if (ps->has_probes) {
            int nc = ps->probes.ncells < 0 ? ps->count : ps->probes.ncells;
            for (int k = 0; k < nc; ++k) {
                int c = ps->probes.ncells < 0 ? k : ps->probes.cells[k];
                uint64_t gid = ps->first_gid + (uint64_t)c;
                for (int l = 0; l < ps->probes.nloc; ++l) {
                    int node;
                    CS_TRY(locate(m, ps, c, d->cells[gid].geom, ps->probes.locs[l], "probe", &node));
                    d->probes[d->nprobe++] = (cs_probe_desc){(int)gid, node};
                }
            }
        }
        d->pop_probe_first[p + 1] = d->nprobe;
    }
    return CS_OK;
}

cs_status cs_build_network(const cs_model *m, cs_network_desc *out) {
    memset(out, 0, sizeof *out);
    if (m->ncells > (uint64_t)INT32_MAX)
        return cs_error_set(CS_ERR_INVALID, "%s: %llu cells is more than this build supports", m->path,
                            (unsigned long long)m->ncells);
    inst_vec iv = {0};
    cs_status st = build(m, out, &iv);
    out->inst = iv.v;
    out->ninst = iv.n;
    if (st != CS_OK) cs_network_desc_free(out);
    return st;
}

void cs_network_desc_free(cs_network_desc *d) {
    for (int k = 0; k < d->ngeom; ++k) cs_geometry_free(&d->geoms[k]);
    free(d->geoms);
    free(d->cells);
    free(d->inst);
    free(d->syn_instance);
    free(d->det);
    free(d->probes);
    free(d->pop_probe_first);
    memset(d, 0, sizeof *d);
}
