/* SONATA nodes (HDF5 + CSV node types) → cablesim populations. A SONATA population becomes one
 * cablesim population per run of consecutive nodes of one node type (same morphology and
 * dynamics) recorded by the same reports (one probe set per population, cs_sonata_reports.c);
 * their gids are consecutive, so node n of the SONATA population is gid gid0 + n.
 * Virtual nodes become no cells: their spikes reach their targets as events (cs_sonata_edges.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_model_json.h"
#include "cs_sonata_internal.h"

/* Node properties bmtk reads per type; a node file that sets them per node is not supported. */
static const char *const per_type_only[] = {"model_type", "model_template", "model_processing", "morphology",
                                            "dynamics_params"};

static cs_status add_csv(cs__circuit *c, const char *path, cs__csv **out) {
    for (int k = 0; k < c->ncsv; ++k)
        if (!strcmp(c->csv[k].path, path)) {
            *out = &c->csv[k];
            return CS_OK;
        }
    return cs_error_set(CS_ERR_INTERNAL, "%s: type file not loaded", path);
}

/* Every type file of networks.<kind>[].<key>, loaded once before any table points into c->csv. */
static cs_status load_type_files(cs__circuit *c, const char *kind, const char *key) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c->root, "networks"), kind);
    for (const cJSON *e = list ? list->child : NULL; e; e = e->next) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, key);
        if (!cJSON_IsString(f)) return cs_error_set(CS_ERR_PARSE, "%s: networks.%s: an entry without \"%s\"", c->path, kind, key);
        char path[CS_PATH_MAX];
        cs__resolve(c, f->valuestring, path, sizeof path);
        int have = 0;
        for (int k = 0; k < c->ncsv; ++k) have |= !strcmp(c->csv[k].path, path);
        if (have) continue;
        cs__csv *nc = realloc(c->csv, (size_t)(c->ncsv + 1) * sizeof *nc);
        if (!nc) return cs_error_set(CS_ERR_NOMEM, "out of memory");
        c->csv = nc;
        CS_TRY(cs__csv_read(path, &c->csv[c->ncsv]));
        c->ncsv++;
    }
    return CS_OK;
}

static cs_status read_population(cs__circuit *c, hid_t f, const char *file, const char *name, cs__csv *types) {
    char where[CS_PATH_MAX + 80];
    snprintf(where, sizeof where, "%s: /nodes/%s", file, name);
    if (cs__npop_find(c, name) >= 0)
        return cs_error_set(CS_ERR_PARSE, "%s: node population '%s' appears twice in the circuit", file, name);
    cs__npop *np = realloc(c->pops, (size_t)(c->npop + 1) * sizeof *np);
    if (!np) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    c->pops = np;
    cs__npop *p = &c->pops[c->npop++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    snprintf(p->file, sizeof p->file, "%s", file);
    p->types = types;
    p->pop0 = p->pop1 = -1;
    char grp[CS_NAME_MAX + 16];
    snprintf(grp, sizeof grp, "/nodes/%s", name);
    hid_t g = H5Gopen2(f, grp, H5P_DEFAULT);
    if (g < 0) return cs_error_set(CS_ERR_PARSE, "%s: cannot open group", where);
    size_t n1 = 0, n2 = 0, n3 = 0;
    char dset[CS_NAME_MAX + 64];
    snprintf(dset, sizeof dset, "/nodes/%s/node_type_id", name);
    cs_status st = cs__h5_read_i64(f, file, dset, &p->type_id, &n1);
    snprintf(dset, sizeof dset, "/nodes/%s/node_group_id", name);
    if (st == CS_OK) st = cs__h5_read_i64(f, file, dset, &p->group_id, &n2);
    snprintf(dset, sizeof dset, "/nodes/%s/node_group_index", name);
    if (st == CS_OK) st = cs__h5_read_i64(f, file, dset, &p->group_index, &n3);
    if (st == CS_OK && (n2 != n1 || n3 != n1))
        st = cs_error_set(CS_ERR_PARSE, "%s: node_type_id, node_group_id and node_group_index differ in length", where);
    p->n = n1;
    if (st == CS_OK) {
        p->type_row = malloc((n1 ? n1 : 1) * sizeof *p->type_row);
        p->tuning = malloc((n1 ? n1 : 1) * sizeof *p->tuning);
        if (!p->type_row || !p->tuning) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; st == CS_OK && k < n1; ++k) {
        p->type_row[k] = cs__csv_row_of(types, "node_type_id", (long long)p->type_id[k]);
        p->tuning[k] = NAN;
        if (p->type_row[k] < 0)
            st = cs_error_set(CS_ERR_PARSE, "%s: node %zu has node_type_id %lld, which %s does not list", where, k,
                              (long long)p->type_id[k], types->path);
    }
    /* per-node properties of each group: only tuning_angle is read (gaussianLL) */
    for (size_t k = 0; st == CS_OK && k < n1; ++k) {
        if (k && p->group_id[k] == p->group_id[k - 1]) continue;
        char gn[CS_NAME_MAX + 64];
        snprintf(gn, sizeof gn, "/nodes/%s/%lld", name, (long long)p->group_id[k]);
        if (!cs__h5_exists(f, gn)) {
            st = cs_error_set(CS_ERR_PARSE, "%s: node %zu is in group %lld, which does not exist", where, k,
                              (long long)p->group_id[k]);
            break;
        }
        for (int j = 0; j < 5 && st == CS_OK; ++j) {
            char dn[CS_NAME_MAX + 96];
            snprintf(dn, sizeof dn, "%s/%s", gn, per_type_only[j]);
            if (cs__h5_exists(f, dn))
                st = cs_error_set(CS_ERR_UNSUPPORTED, "%s: '%s' per node is not supported (give it in the node types)",
                                  file, dn);
        }
    }
    for (size_t k = 0; st == CS_OK && k < n1; ++k) {
        if (k && p->group_id[k] == p->group_id[k - 1]) continue;
        char dn[CS_NAME_MAX + 96];
        snprintf(dn, sizeof dn, "/nodes/%s/%lld/tuning_angle", name, (long long)p->group_id[k]);
        if (!cs__h5_exists(f, dn)) continue;
        double *ta;
        size_t nt;
        st = cs__h5_read_f64(f, file, dn, &ta, &nt);
        for (size_t j = 0; st == CS_OK && j < n1; ++j) {
            if (p->group_id[j] != p->group_id[k]) continue;
            if (p->group_index[j] < 0 || (size_t)p->group_index[j] >= nt)
                st = cs_error_set(CS_ERR_PARSE, "%s: node %zu: node_group_index %lld outside %s (%zu rows)", where, j,
                                  (long long)p->group_index[j], dn, nt);
            else p->tuning[j] = ta[p->group_index[j]];
        }
        if (st == CS_OK) free(ta);
    }
    H5Gclose(g);
    return st;
}

static cs_status read_nodes_file(cs__circuit *c, const cJSON *entry) {
    const cJSON *nf = cJSON_GetObjectItemCaseSensitive(entry, "nodes_file");
    const cJSON *tf = cJSON_GetObjectItemCaseSensitive(entry, "node_types_file");
    if (!cJSON_IsString(nf) || !cJSON_IsString(tf))
        return cs_error_set(CS_ERR_PARSE, "%s: networks.nodes: an entry needs \"nodes_file\" and \"node_types_file\"",
                            c->path);
    char file[CS_PATH_MAX], tpath[CS_PATH_MAX];
    cs__resolve(c, nf->valuestring, file, sizeof file);
    cs__resolve(c, tf->valuestring, tpath, sizeof tpath);
    cs__csv *types = NULL;
    CS_TRY(add_csv(c, tpath, &types));
    if (cs__csv_col(types, "node_type_id") < 0)
        return cs_error_set(CS_ERR_PARSE, "%s: no node_type_id column", tpath);
    hid_t f = cs__h5_open_file(file);
    if (f < 0) return cs_error_set(CS_ERR_IO, "%s: cannot open as HDF5", file);
    cs_status st = CS_OK;
    hid_t g = -1;
    H5E_BEGIN_TRY { g = H5Gopen2(f, "/nodes", H5P_DEFAULT); }
    H5E_END_TRY;
    if (g < 0) st = cs_error_set(CS_ERR_PARSE, "%s: no /nodes group", file);
    hsize_t n = 0;
    if (st == CS_OK && H5Gget_num_objs(g, &n) < 0) st = cs_error_set(CS_ERR_PARSE, "%s: cannot list /nodes", file);
    for (hsize_t k = 0; st == CS_OK && k < n; ++k) {
        char name[CS_NAME_MAX];
        ssize_t len = H5Gget_objname_by_idx(g, k, name, sizeof name);
        if (len <= 0 || (size_t)len >= sizeof name) {
            st = cs_error_set(CS_ERR_PARSE, "%s: /nodes: a population name is empty or longer than %d", file,
                              CS_NAME_MAX - 1);
            break;
        }
        st = read_population(c, f, file, name, types);
    }
    if (g >= 0) H5Gclose(g);
    H5Fclose(f);
    return st;
}

static cs_status new_pop(cs_model *m, int *cap) {
    if (m->npop == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        cs_population_spec *p = realloc(m->pops, (size_t)*cap * sizeof *p);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory");
        m->pops = p;
    }
    memset(&m->pops[m->npop], 0, sizeof m->pops[m->npop]);
    m->npop++;
    return CS_OK;
}

/* The cell of a biophysical node type as NEURON builds it, and its SONATA section numbering. */
static cs_status shape_of(const char *where, cs_population_spec *ps, struct cs__shape *sh) {
    CS_TRY(cs_morph_load_swc(ps->morph.swc_path, &ps->morph.swc, &sh->morph));
    cs_status st = ps->morph.axon_stub.on ? cs_morph_replace_axon(&sh->morph, &ps->morph.axon_stub) : CS_OK;
    if (st == CS_OK) {
        sh->sec = malloc((size_t)sh->morph.nbranch * sizeof *sh->sec);
        if (!sh->sec) return cs_error_set(CS_ERR_NOMEM, "out of memory");
        sh->nsec = cs_morph_section_order(&sh->morph, ps->morph.axon_stub.on, sh->sec);
    }
    if (st == CS_OK && (sh->nsec < 1 || sh->morph.branches[sh->sec[0]].tag != CS_TAG_SOMA))
        st = cs_error_set(CS_ERR_PARSE, "%s: %s has no soma (SWC type 1)", where, ps->morph.swc_path);
    if (st != CS_OK) return cs_error_set(st, "%s: %s", where, cs_error_message());
    return CS_OK;
}

static cs_status biophysical(cs__circuit *c, cs_model *m, const cs__npop *p, int row, const char *where,
                             cs_population_spec *ps, struct cs__shape *sh) {
    const char *morph = cs__csv_get(p->types, row, "morphology");
    const char *dyn = cs__csv_get(p->types, row, "dynamics_params");
    const char *proc = cs__csv_get(p->types, row, "model_processing");
    const char *tmpl = cs__csv_get(p->types, row, "model_template");
    if (!morph) return cs_error_set(CS_ERR_PARSE, "%s: a biophysical node type without 'morphology'", where);
    if (tmpl && strcmp(tmpl, "ctdb:Biophys1.hoc") && strcmp(tmpl, "ctdb:Biophys1"))
        return cs_error_set(CS_ERR_UNSUPPORTED, "%s: model_template '%s' (biophysical cells: ctdb:Biophys1.hoc)",
                            where, tmpl);
    char mp[CS_PATH_MAX];
    int w = snprintf(mp, sizeof mp, "%s/%s%s", c->morph_dir[0] ? c->morph_dir : c->dir, morph,
                     strchr(morph, '.') ? "" : ".swc");
    if (w >= (int)sizeof mp) return cs_error_set(CS_ERR_PARSE, "%s: morphology path too long", where);
    char dp[CS_PATH_MAX] = "";
    if (dyn) cs__path(c->biophys_dir[0] ? c->biophys_dir : c->dir, dyn, dp, sizeof dp);
    CS_TRY(cs__biophysics(c, m, where, proc, dyn ? dp : NULL, mp, ps));
    ps->policy = (cs_cv_policy){.max_cv_length = c->dL, .bmtk_odd = 1};
    ps->v_init = c->v_init; /* bmtk initialises from the simulation's conditions, not the fit's */
    CS_TRY(shape_of(where, ps, sh));
    ps->has_detector = 1;  /* bmtk: a NetCon on soma(0.5) */
    ps->detector = (cs_location){sh->sec[0], 0.5};
    ps->threshold = c->spike_threshold;
    return CS_OK;
}

/* A point cell nrn:IntFire1, nrn:IntFire2, nrn:IntFire4 or nrn:NetStim: cablesim's built-in
 * artificial cell of that name. IntFire1's dynamics_params tau and refrac are in seconds, as
 * bmtk's own IntFire1 loader reads them; bmtk has no loader for the others, so their
 * dynamics_params are the NEURON object's parameters by name, in its units ([ms]), as a loader
 * that sets them by name (tests/sonata/bmtk_network.py) gives NEURON. Keys that are not numbers
 * (bmtk's "type") are ignored. */
static cs_status point_cell(const cs__circuit *c, const cs__npop *p, int row, const char *where,
                            cs_population_spec *ps) {
    static const char *const supported[] = {"IntFire1", "IntFire2", "IntFire4", "NetStim"};
    const char *tmpl = cs__csv_get(p->types, row, "model_template");
    const char *dyn = cs__csv_get(p->types, row, "dynamics_params");
    const char *name = tmpl && !strncmp(tmpl, "nrn:", 4) ? tmpl + 4 : "";
    int known = 0;
    for (int k = 0; k < 4; ++k) known |= !strcmp(name, supported[k]);
    if (!known)
        return cs_error_set(CS_ERR_UNSUPPORTED, "%s: point cell model_template '%s' (supported: nrn:IntFire1, "
                            "nrn:IntFire2, nrn:IntFire4, nrn:NetStim)", where, tmpl ? tmpl : "(none)");
    int if1 = !strcmp(name, "IntFire1");
    if (!dyn && if1) return cs_error_set(CS_ERR_PARSE, "%s: nrn:IntFire1 needs dynamics_params (tau, refrac [s])", where);
    char path[CS_PATH_MAX] = "";
    cJSON *j = NULL;
    if (dyn) {
        cs__path(c->point_dir[0] ? c->point_dir : c->dir, dyn, path, sizeof path);
        CS_TRY(cs__read_json(path, &j));
    }
    /* {"mechanism": name, "params": the numbers of dynamics_params}, read as a model's "artificial" */
    cJSON *a = cJSON_CreateObject(), *prm = cJSON_AddObjectToObject(a, "params");
    cs_status st = a && prm && cJSON_AddStringToObject(a, "mechanism", name) ? CS_OK
                                                                             : cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (const cJSON *it = j ? j->child : NULL; it && st == CS_OK; it = it->next) {
        if (!cJSON_IsNumber(it)) continue;
        int time = if1 && (!strcmp(it->string, "tau") || !strcmp(it->string, "refrac"));
        if (if1 && !time) continue;
        if (time && !(it->valuedouble >= 0)) st = cs_error_set(CS_ERR_PARSE, "%s: \"%s\" must be a number >= 0 [s]", path,
                                                              it->string);
        else if (!cJSON_AddNumberToObject(prm, it->string, time ? 1000.0 * it->valuedouble : it->valuedouble)) /* [s] → [ms] */
            st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; if1 && st == CS_OK && k < 2; ++k)
        if (!cJSON_GetObjectItemCaseSensitive(prm, k ? "refrac" : "tau"))
            st = cs_error_set(CS_ERR_PARSE, "%s: \"%s\" must be a number >= 0 [s]", path, k ? "refrac" : "tau");
    if (st == CS_OK) {
        parse_ctx pc = {.file = path[0] ? path : c->path, .base_dir = c->dir};
        st = cs__model_artificial(&pc, "dynamics_params", a, ps);
    }
    cJSON_Delete(a);
    cJSON_Delete(j);
    return st;
}

/* Cablesim populations of SONATA population k: one per run of nodes of one type and reports. */
static cs_status populations_of(cs__circuit *c, cs_model *m, int k, int *cap) {
    cs__npop *p = &c->pops[k];
    int virt = -1;
    for (size_t n = 0; n < p->n; ++n) {
        const char *mt = cs__csv_get(p->types, p->type_row[n], "model_type");
        int v = mt && !strcmp(mt, "virtual");
        if (virt >= 0 && v != virt)
            return cs_error_set(CS_ERR_UNSUPPORTED, "%s: /nodes/%s mixes virtual and other nodes", p->file, p->name);
        virt = v;
    }
    p->is_virtual = virt == 1;
    if (p->is_virtual || !p->n) return CS_OK;
    p->pop0 = m->npop;
    p->gid0 = m->ncells;
    for (size_t n = 0; n < p->n;) {
        size_t e = n + 1;
        while (e < p->n && p->type_id[e] == p->type_id[n] && (!p->rmask || p->rmask[e] == p->rmask[n])) ++e;
        int row = p->type_row[n];
        char where[CS_PATH_MAX + 128];
        snprintf(where, sizeof where, "%s: node type %lld (/nodes/%s node %zu)", p->types->path,
                 (long long)p->type_id[n], p->name, n);
        const char *mt = cs__csv_get(p->types, row, "model_type");
        if (!mt) return cs_error_set(CS_ERR_PARSE, "%s: no model_type", where);
        CS_TRY(new_pop(m, cap));
        struct cs__shape *sh = realloc(c->shape, (size_t)m->npop * sizeof *sh);
        if (!sh) return cs_error_set(CS_ERR_NOMEM, "out of memory");
        c->shape = sh;
        memset(&c->shape[m->npop - 1], 0, sizeof *sh);
        c->nshape = m->npop;
        cs_population_spec *ps = &m->pops[m->npop - 1];
        snprintf(ps->name, sizeof ps->name, "%.40s[%zu]", p->name, n);
        snprintf(ps->output_name, sizeof ps->output_name, "%s", p->name);
        ps->output_id0 = n;
        ps->count = (int)(e - n);
        ps->first_gid = m->ncells;
        m->ncells += (uint64_t)ps->count;
        if (m->ncells > CS_MODEL_MAX_CELLS)
            return cs_error_set(CS_ERR_INVALID, "%s: more than %d cells", p->file, CS_MODEL_MAX_CELLS);
        if (!strcmp(mt, "biophysical")) CS_TRY(biophysical(c, m, p, row, where, ps, &c->shape[m->npop - 1]));
        else if (!strcmp(mt, "point_process") || !strcmp(mt, "point_neuron")) CS_TRY(point_cell(c, p, row, where, ps));
        else
            return cs_error_set(CS_ERR_UNSUPPORTED, "%s: model_type '%s' (expected biophysical or virtual)", where, mt);
        n = e;
    }
    p->pop1 = m->npop;
    return CS_OK;
}

cs_status cs__read_nodes(cs__circuit *c, cs_model *m) {
    CS_TRY(load_type_files(c, "nodes", "node_types_file"));
    CS_TRY(load_type_files(c, "edges", "edge_types_file"));
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c->root, "networks"), "nodes");
    if (!cJSON_IsArray(list) || !list->child)
        return cs_error_set(CS_ERR_PARSE, "%s: networks.nodes is missing or empty", c->path);
    for (const cJSON *e = list->child; e; e = e->next) CS_TRY(read_nodes_file(c, e));
    CS_TRY(cs__report_cells(c, m->dt, m->tfinal));
    int cap = 0;
    for (int k = 0; k < c->npop; ++k) CS_TRY(populations_of(c, m, k, &cap));
    if (m->ncells == 0) return cs_error_set(CS_ERR_PARSE, "%s: the circuit has no cells (only virtual nodes?)", c->path);
    return CS_OK;
}
