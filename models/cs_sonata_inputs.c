/* A SONATA simulation's "inputs" (spike trains of virtual nodes from SONATA HDF5 or CSV spike
 * files; current clamps), onto the model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_sonata_internal.h"

#define MAX_SPIKES_PER_NODE 100000000

static cs_status add_spike(cs__circuit *c, cs__npop *p, const char *file, size_t row, int64_t node, double t) {
    (void)c;
    if (node < 0 || (size_t)node >= p->n)
        return cs_error_set(CS_ERR_PARSE, "%s: spike %zu: node id %lld is not in population '%s' (%zu nodes)", file,
                            row, (long long)node, p->name, p->n);
    if (!isfinite(t) || t < 0)
        return cs_error_set(CS_ERR_PARSE, "%s: spike %zu: time %g is not a finite time >= 0 [ms]", file, row, t);
    if (!p->spikes) {
        p->spikes = calloc(p->n, sizeof *p->spikes);
        p->nspike = calloc(p->n, sizeof *p->nspike);
        p->capspike = calloc(p->n, sizeof *p->capspike);
        if (!p->spikes || !p->nspike || !p->capspike) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    size_t k = (size_t)node;
    if (p->nspike[k] == p->capspike[k]) {
        size_t nc = p->capspike[k] ? 2 * p->capspike[k] : 8;
        double *s = nc <= MAX_SPIKES_PER_NODE ? realloc(p->spikes[k], nc * sizeof *s) : NULL;
        if (!s) return cs_error_set(CS_ERR_NOMEM, "%s: out of memory for spikes", file);
        p->spikes[k] = s;
        p->capspike[k] = nc;
    }
    p->spikes[k][p->nspike[k]++] = t;
    return CS_OK;
}

/* SONATA spikes: /spikes/<population>/{timestamps, node_ids} (bmtk also reads /spikes/{timestamps, gids}). */
static cs_status spikes_h5(cs__circuit *c, cs__npop *p, const char *file) {
    hid_t f = cs__h5_open_file(file);
    if (f < 0) return cs_error_set(CS_ERR_IO, "%s: cannot open as HDF5", file);
    char ts[CS_NAME_MAX + 40], id[CS_NAME_MAX + 40];
    snprintf(ts, sizeof ts, "/spikes/%s/timestamps", p->name);
    snprintf(id, sizeof id, "/spikes/%s/node_ids", p->name);
    if (!cs__h5_exists(f, "/spikes") || !cs__h5_exists(f, ts)) {
        snprintf(ts, sizeof ts, "/spikes/timestamps");
        snprintf(id, sizeof id, "/spikes/gids");
    }
    double *t = NULL;
    int64_t *ids = NULL;
    size_t nt = 0, ni = 0;
    cs_status st = cs__h5_read_f64(f, file, ts, &t, &nt);
    if (st == CS_OK) st = cs__h5_read_i64(f, file, id, &ids, &ni);
    if (st == CS_OK && nt != ni)
        st = cs_error_set(CS_ERR_PARSE, "%s: %s has %zu rows but %s has %zu", file, ts, nt, id, ni);
    for (size_t k = 0; st == CS_OK && k < nt; ++k) st = add_spike(c, p, file, k, ids[k], t[k]);
    free(t);
    free(ids);
    H5Fclose(f);
    return st;
}

/* bmtk's CSV spikes: columns timestamps, population, node_ids (space-separated). */
static cs_status spikes_csv(cs__circuit *c, cs__npop *p, const char *file) {
    cs__csv t;
    CS_TRY(cs__csv_read(file, &t));
    cs_status st = CS_OK;
    if (cs__csv_col(&t, "timestamps") < 0 || cs__csv_col(&t, "node_ids") < 0)
        st = cs_error_set(CS_ERR_PARSE, "%s: needs columns timestamps and node_ids", file);
    for (int r = 0; st == CS_OK && r < t.nrow; ++r) {
        const char *pop = cs__csv_get(&t, r, "population"), *ts = cs__csv_get(&t, r, "timestamps"),
                   *id = cs__csv_get(&t, r, "node_ids");
        if (pop && strcmp(pop, p->name)) continue;
        char *e1, *e2;
        double tv = ts ? strtod(ts, &e1) : NAN;
        long long iv = id ? strtoll(id, &e2, 10) : -1;
        if (!ts || !id || *e1 || *e2) st = cs_error_set(CS_ERR_PARSE, "%s:%d: a timestamp or node id is not a number", file, r + 2);
        else st = add_spike(c, p, file, (size_t)r, iv, tv);
    }
    cs__csv_free(&t);
    return st;
}

static cs_status spikes_input(cs__circuit *c, const char *name, const cJSON *in) {
    char where[CS_NAME_MAX + 16];
    snprintf(where, sizeof where, "inputs.%s", name);
    const cJSON *mod = cJSON_GetObjectItemCaseSensitive(in, "module");
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(in, "input_file");
    if (!cJSON_IsString(mod) || !cJSON_IsString(file))
        return cs_error_set(CS_ERR_PARSE, "%s: %s needs \"module\" and \"input_file\"", c->path, where);
    int pop;
    int64_t *ids;
    size_t n;
    CS_TRY(cs__node_set(c, where, cJSON_GetObjectItemCaseSensitive(in, "node_set"), &pop, &ids, &n));
    free(ids);
    cs__npop *p = &c->pops[pop];
    if (!p->is_virtual)
        return cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: spike trains drive virtual nodes; '%s' is not virtual", c->path,
                            where, p->name);
    char path[CS_PATH_MAX];
    cs__resolve(c, file->valuestring, path, sizeof path);
    const char *m = mod->valuestring;
    if (!strcmp(m, "sonata") || !strcmp(m, "h5") || !strcmp(m, "hdf5")) return spikes_h5(c, p, path);
    if (!strcmp(m, "csv")) return spikes_csv(c, p, path);
    return cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: spikes module '%s' (expected sonata, h5 or csv)", c->path, where, m);
}

int cs__cells_of(const cs_population_spec *ps, const int64_t *ids, size_t n, int *out) {
    int cnt = 0;
    for (size_t j = 0; j < n; ++j)
        if ((uint64_t)ids[j] >= ps->output_id0 && (uint64_t)ids[j] < ps->output_id0 + (uint64_t)ps->count) {
            if (out) out[cnt] = (int)((uint64_t)ids[j] - ps->output_id0);
            ++cnt;
        }
    return cnt;
}

static cs_status push_point(cs_point_spec **v, int *n, cs_point_spec **out) {
    cs_point_spec *p = realloc(*v, (size_t)(*n + 1) * sizeof *p);
    if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    *v = p;
    *out = &p[(*n)++];
    memset(*out, 0, sizeof **out);
    return CS_OK;
}

/* bmtk's IClamp: amp [nA] (a number or a list, one clamp each), delay, duration [ms], at soma(0.5). */
static cs_status clamp_input(cs__circuit *c, cs_model *m, const char *name, const cJSON *in) {
    char where[CS_NAME_MAX + 16];
    snprintf(where, sizeof where, "inputs.%s", name);
    const cJSON *amp = cJSON_GetObjectItemCaseSensitive(in, "amp"), *del = cJSON_GetObjectItemCaseSensitive(in, "delay"),
                *dur = cJSON_GetObjectItemCaseSensitive(in, "duration");
    int na = cJSON_IsArray(amp) ? cJSON_GetArraySize(amp) : 1;
    int pop;
    int64_t *ids;
    size_t n;
    CS_TRY(cs__node_set(c, where, cJSON_GetObjectItemCaseSensitive(in, "node_set"), &pop, &ids, &n));
    cs_status st = CS_OK;
    const cs__npop *p = &c->pops[pop];
    if (p->is_virtual) st = cs_error_set(CS_ERR_PARSE, "%s: %s: a current clamp on virtual nodes", c->path, where);
    for (int k = 0; st == CS_OK && k < na; ++k) {
        const cJSON *a = cJSON_IsArray(amp) ? cJSON_GetArrayItem(amp, k) : amp;
        const cJSON *d = cJSON_IsArray(del) ? cJSON_GetArrayItem(del, k) : del;
        const cJSON *u = cJSON_IsArray(dur) ? cJSON_GetArrayItem(dur, k) : dur;
        if (!cJSON_IsNumber(a) || !cJSON_IsNumber(d) || !cJSON_IsNumber(u) || d->valuedouble < 0 || u->valuedouble < 0) {
            st = cs_error_set(CS_ERR_PARSE, "%s: %s: amp, delay and duration must be numbers (delay, duration >= 0)",
                              c->path, where);
            break;
        }
        for (int q = p->pop0; st == CS_OK && q < p->pop1; ++q) {
            cs_population_spec *ps = &m->pops[q];
            int cnt = cs__cells_of(ps, ids, n, NULL);
            if (!cnt) continue;
            if (ps->artificial) {
                st = cs_error_set(CS_ERR_UNSUPPORTED, "%s: %s: a current clamp on point cells (%s)", c->path, where,
                                  ps->artificial->name);
                break;
            }
            cs_point_spec *s = NULL;
            st = push_point(&ps->stim, &ps->nstim, &s);
            if (st != CS_OK || !s) break;
            snprintf(s->name, sizeof s->name, "%.40s_%d", name, k);
            s->type = cs_mech_find("iclamp");
            s->loc = (cs_location){c->shape[q].sec[0], 0.5};
            for (int j = 0; j < s->type->nparam; ++j) s->param[j] = s->type->params[j].default_value;
            s->param[cs_mech_param_index(s->type, "delay")] = d->valuedouble;
            s->param[cs_mech_param_index(s->type, "duration")] = u->valuedouble;
            s->param[cs_mech_param_index(s->type, "amplitude")] = a->valuedouble;
            s->ncells = cnt;
            s->cells = malloc((size_t)cnt * sizeof *s->cells);
            if (!s->cells) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
            else cs__cells_of(ps, ids, n, s->cells);
        }
    }
    free(ids);
    return st;
}

cs_status cs__read_inputs(cs__circuit *c, cs_model *m) {
    const cJSON *ins = cJSON_GetObjectItemCaseSensitive(c->root, "inputs");
    for (const cJSON *in = ins ? ins->child : NULL; in; in = in->next) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(in, "input_type");
        if (!cJSON_IsObject(in) || !cJSON_IsString(type))
            return cs_error_set(CS_ERR_PARSE, "%s: inputs.%s needs \"input_type\"", c->path, in->string);
        if (!strcmp(type->valuestring, "spikes")) CS_TRY(spikes_input(c, in->string, in));
        else if (!strcmp(type->valuestring, "current_clamp")) CS_TRY(clamp_input(c, m, in->string, in));
        else
            return cs_error_set(CS_ERR_UNSUPPORTED, "%s: inputs.%s: input_type '%s' (supported: spikes, current_clamp)",
                                c->path, in->string, type->valuestring);
    }
    return CS_OK;
}
