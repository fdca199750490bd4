/* SONATA simulation and circuit configs: manifest variables, the circuit config merged in,
 * components, run, conditions, output, node sets; then the nodes, inputs, edges and reports
 * (cs_sonata_nodes.c, cs_sonata_inputs.c, cs_sonata_edges.c) into one cs_model. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_sonata_internal.h"

#define MAX_SUBST 64 /* manifest substitutions in one string: a loop ends here */

int cs_sonata_is_config(const char *json) {
    cJSON *r = cJSON_Parse(json);
    int yes = cJSON_IsObject(r) && !cJSON_GetObjectItemCaseSensitive(r, "populations") &&
              (cJSON_GetObjectItemCaseSensitive(r, "networks") || cJSON_GetObjectItemCaseSensitive(r, "network") ||
               cJSON_GetObjectItemCaseSensitive(r, "manifest"));
    cJSON_Delete(r);
    return yes;
}

/* ---- manifest ---- */

typedef struct {
    int n;
    char name[64][CS_NAME_MAX];
    char value[64][CS_PATH_MAX];
} manifest;

/* Replace $NAME and ${NAME} by their values; an unknown variable is an error naming it. */
static cs_status substitute(const char *file, const manifest *mf, const char *in, char *out, size_t n) {
    char cur[CS_PATH_MAX], next[CS_PATH_MAX];
    snprintf(cur, sizeof cur, "%s", in);
    for (int round = 0; strchr(cur, '$'); ++round) {
        if (round == MAX_SUBST)
            return cs_error_set(CS_ERR_PARSE, "%s: manifest: '%s' does not resolve (a cycle?)", file, in);
        char *d = strchr(cur, '$');
        int brace = d[1] == '{';
        const char *s = d + 1 + brace;
        size_t k = 0;
        while (s[k] && (s[k] == '_' || (s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= 'a' && s[k] <= 'z') ||
                        (s[k] >= '0' && s[k] <= '9')))
            ++k;
        int j = -1;
        for (int i = 0; i < mf->n && j < 0; ++i)
            if (strlen(mf->name[i]) == k && !strncmp(mf->name[i], s, k)) j = i;
        if (j < 0 || (brace && s[k] != '}'))
            return cs_error_set(CS_ERR_PARSE, "%s: manifest: unknown variable in '%s'", file, in);
        *d = 0;
        int w = snprintf(next, sizeof next, "%s%s%s", cur, mf->value[j], s + k + brace);
        if (w < 0 || (size_t)w >= sizeof next)
            return cs_error_set(CS_ERR_PARSE, "%s: manifest: '%s' is longer than %d characters", file, in,
                                CS_PATH_MAX - 1);
        snprintf(cur, sizeof cur, "%s", next);
    }
    snprintf(out, n, "%s", cur);
    return CS_OK;
}

static cs_status subst_tree(const char *file, const manifest *mf, cJSON *j) {
    for (cJSON *it = j ? j->child : NULL; it; it = it->next) {
        if (cJSON_IsString(it) && strchr(it->valuestring, '$')) {
            char v[CS_PATH_MAX];
            CS_TRY(substitute(file, mf, it->valuestring, v, sizeof v));
            if (!cJSON_SetValuestring(it, v)) {
                cJSON *r = cJSON_CreateString(v);
                if (!r) return cs_error_set(CS_ERR_NOMEM, "%s: out of memory", file);
                if (j->type & cJSON_Array) {
                    int idx = 0;
                    for (cJSON *p = j->child; p != it; p = p->next) ++idx;
                    cJSON_ReplaceItemInArray(j, idx, r);
                } else
                    cJSON_ReplaceItemInObjectCaseSensitive(j, it->string, r);
                it = r;
            }
        } else if (cJSON_IsObject(it) || cJSON_IsArray(it))
            CS_TRY(subst_tree(file, mf, it));
    }
    return CS_OK;
}

/* The folder of a file, absolute: ${configdir} and relative paths then mean the same thing
 * whatever the working directory. */
static void dir_of(const char *path, char *dir, size_t n) {
    char tmp[CS_PATH_MAX], abs_[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    char *s = strrchr(tmp, '/');
    if (s) *s = 0;
    else snprintf(tmp, sizeof tmp, ".");
    snprintf(dir, n, "%s", realpath(tmp, abs_) ? abs_ : tmp);
}

/* Read a config and resolve its manifest: "${configdir}", "${workingdir}" and its own variables. */
static cs_status load_config(const char *path, cJSON **root) {
    CS_TRY(cs__read_json(path, root));
    manifest mf = {0};
    snprintf(mf.name[0], CS_NAME_MAX, "configdir");
    dir_of(path, mf.value[0], CS_PATH_MAX);
    snprintf(mf.name[1], CS_NAME_MAX, "workingdir");
    if (!getcwd(mf.value[1], CS_PATH_MAX)) snprintf(mf.value[1], CS_PATH_MAX, ".");
    mf.n = 2;
    const cJSON *man = cJSON_GetObjectItemCaseSensitive(*root, "manifest");
    if (man && !cJSON_IsObject(man)) return cs_error_set(CS_ERR_PARSE, "%s: 'manifest' must be an object", path);
    for (const cJSON *it = man ? man->child : NULL; it; it = it->next) {
        if (!cJSON_IsString(it) || mf.n == 64)
            return cs_error_set(CS_ERR_PARSE, "%s: manifest '%s': %s", path, it->string,
                                mf.n == 64 ? "more than 64 variables" : "must be a string");
        const char *nm = it->string[0] == '$' ? it->string + 1 : it->string;
        snprintf(mf.name[mf.n], CS_NAME_MAX, "%s", nm);
        snprintf(mf.value[mf.n++], CS_PATH_MAX, "%s", it->valuestring);
    }
    for (int i = 2; i < mf.n; ++i) { /* values may use each other */
        char v[CS_PATH_MAX];
        CS_TRY(substitute(path, &mf, mf.value[i], v, sizeof v));
        snprintf(mf.value[i], CS_PATH_MAX, "%s", v);
    }
    return subst_tree(path, &mf, *root);
}

static cs_status get_num(const char *file, const cJSON *o, const char *sect, const char *key, double dflt,
                         double *v) {
    const cJSON *j = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    if (!j) {
        *v = dflt;
        return CS_OK;
    }
    if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble))
        return cs_error_set(CS_ERR_PARSE, "%s: %s.%s must be a finite number", file, sect, key);
    *v = j->valuedouble;
    return CS_OK;
}

static const char *get_str(const cJSON *o, const char *key) {
    const cJSON *j = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

/* ---- the whole ---- */

/* The circuit config's networks and components under the simulation config's own. */
static cs_status merge_circuit(cs__circuit *c) {
    const char *net = get_str(c->root, "network");
    if (!net) return CS_OK;
    char path[CS_PATH_MAX];
    cs__resolve(c, net, path, sizeof path);
    cJSON *circ;
    CS_TRY(load_config(path, &circ));
    const char *keys[] = {"networks", "components", "node_sets_file", "node_sets"};
    for (int k = 0; k < 4; ++k) {
        cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(circ, keys[k]);
        if (!v) continue;
        if (cJSON_GetObjectItemCaseSensitive(c->root, keys[k])) {
            cJSON *mine = cJSON_GetObjectItemCaseSensitive(c->root, keys[k]);
            if (cJSON_IsObject(mine) && cJSON_IsObject(v)) /* the simulation's entries win */
                for (cJSON *it = v->child; it; it = it->next)
                    if (!cJSON_GetObjectItemCaseSensitive(mine, it->string))
                        cJSON_AddItemToObject(mine, it->string, cJSON_Duplicate(it, 1));
            cJSON_Delete(v);
        } else
            cJSON_AddItemToObject(c->root, keys[k], v);
    }
    cJSON_Delete(circ);
    return CS_OK;
}

static cs_status read_node_sets(cs__circuit *c) {
    const char *f = get_str(c->root, "node_sets_file");
    if (!f || cJSON_GetObjectItemCaseSensitive(c->root, "node_sets")) return CS_OK;
    char path[CS_PATH_MAX];
    cs__resolve(c, f, path, sizeof path);
    cJSON *ns;
    CS_TRY(cs__read_json(path, &ns));
    cJSON_AddItemToObject(c->root, "node_sets", ns);
    return CS_OK;
}

static void component(cs__circuit *c, const char *key, char *out) {
    const char *v = get_str(cJSON_GetObjectItemCaseSensitive(c->root, "components"), key);
    out[0] = 0;
    if (v) cs__resolve(c, v, out, CS_PATH_MAX);
}

static cs_status read_run(cs__circuit *c, cs_model *m, cs_sonata_run *run) {
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(c->root, "run");
    const cJSON *cond = cJSON_GetObjectItemCaseSensitive(c->root, "conditions");
    if (!cJSON_IsObject(r)) return cs_error_set(CS_ERR_PARSE, "%s: no \"run\" section", c->path);
    if (!cJSON_GetObjectItemCaseSensitive(r, "tstop"))
        return cs_error_set(CS_ERR_PARSE, "%s: run.tstop is missing", c->path);
    double tstart = 0;
    CS_TRY(get_num(c->path, r, "run", "tstop", 0, &m->tfinal));
    CS_TRY(get_num(c->path, r, "run", "tstart", 0, &tstart));
    CS_TRY(get_num(c->path, r, "run", "dt", 0.1, &m->dt)); /* bmtk's defaults */
    CS_TRY(get_num(c->path, r, "run", "dL", 20.0, &c->dL));
    CS_TRY(get_num(c->path, r, "run", "spike_threshold", -15.0, &c->spike_threshold));
    CS_TRY(get_num(c->path, cond, "conditions", "celsius", 6.3, &m->celsius)); /* NEURON's defaults */
    CS_TRY(get_num(c->path, cond, "conditions", "v_init", -65.0, &c->v_init));
    if (tstart != 0) return cs_error_set(CS_ERR_UNSUPPORTED, "%s: run.tstart %g: only 0 is supported", c->path, tstart);
    if (!(m->tfinal > 0) || !(m->dt > 0) || !(c->dL > 0))
        return cs_error_set(CS_ERR_PARSE, "%s: run.tstop, run.dt and run.dL must be > 0", c->path);
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(c->root, "output");
    const char *od = get_str(out, "output_dir"), *sf = get_str(out, "spikes_file"), *so = get_str(out, "spikes_sort_order");
    cs__resolve(c, od ? od : ".", run->output_dir, sizeof run->output_dir);
    if (!sf) sf = "spikes.h5";
    if (sf[0] == '/') snprintf(run->spikes_file, sizeof run->spikes_file, "%s", sf);
    else if (snprintf(run->spikes_file, sizeof run->spikes_file, "%s/%s", run->output_dir, sf) >= CS_PATH_MAX)
        return cs_error_set(CS_ERR_PARSE, "%s: output path too long", c->path);
    /* bmtk's names; the writer sorts by time, "none" reads the same, "id" is sorted after the run */
    so = !so || !strcmp(so, "by_time") ? "time" : !strcmp(so, "by_id") ? "id" : so;
    if (strcmp(so, "time") && strcmp(so, "none") && strcmp(so, "id"))
        return cs_error_set(CS_ERR_PARSE, "%s: output.spikes_sort_order '%s' (one of time, id, none)", c->path, so);
    snprintf(run->sort_order, sizeof run->sort_order, "%s", so);
    component(c, "mechanisms_dir", run->mechanisms_dir);
    return CS_OK;
}

void cs__circuit_free(cs__circuit *c) {
    for (int k = 0; k < c->npop; ++k) {
        cs__npop *p = &c->pops[k];
        free(p->type_id); free(p->group_id); free(p->group_index); free(p->type_row); free(p->tuning); free(p->rmask);
        for (size_t j = 0; p->spikes && j < p->n; ++j) free(p->spikes[j]);
        free(p->spikes); free(p->nspike); free(p->capspike);
    }
    free(c->pops);
    for (int k = 0; k < c->ncsv; ++k) cs__csv_free(&c->csv[k]);
    free(c->csv);
    free(c->syn);
    free(c->conn_syn);
    free(c->event_syn);
    for (int k = 0; c->shape && k < c->nshape; ++k) {
        cs_morph_free(&c->shape[k].morph);
        free(c->shape[k].sec);
    }
    free(c->shape);
    for (int k = 0; k < c->nplacement; ++k) free(c->placement[k].cand);
    free(c->placement);
    cJSON_Delete(c->root);
}

/* The simulation config and the circuit config it names, merged; *out is NULL only when out of
 * memory, else the caller frees it whatever the status. */
static cs_status open_circuit(const char *config_path, cs__circuit **out) {
    cs__circuit *c = calloc(1, sizeof *c);
    *out = c;
    if (!c) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    snprintf(c->path, sizeof c->path, "%s", config_path);
    dir_of(config_path, c->dir, sizeof c->dir);
    cs_status st = load_config(config_path, &c->root);
    if (st == CS_OK) st = merge_circuit(c);
    return st;
}

cs_status cs_sonata_read_run(const char *config_path, cs_sonata_run *run) {
    cs_model m;
    memset(&m, 0, sizeof m);
    cs__circuit *c = NULL;
    cs_status st = open_circuit(config_path, &c);
    if (!c) return st;
    if (st == CS_OK) st = read_run(c, &m, run);
    cs__circuit_free(c);
    free(c);
    return st;
}

cs_status cs_sonata_load(const char *config_path, const char *catalogue, cs_model *m, cs_sonata_run *run) {
    memset(m, 0, sizeof *m);
    cs_sonata_run local;
    if (!run) run = &local;
    memset(run, 0, sizeof *run);
    snprintf(m->path, sizeof m->path, "%s", config_path);
    m->seed = 1;
    m->report_bits = 32;
    snprintf(m->backend, sizeof m->backend, "auto");
    cs__circuit *c = NULL;
    cs_status st = open_circuit(config_path, &c);
    if (!c) return st;
    if (st == CS_OK) st = read_node_sets(c);
    if (st == CS_OK) st = read_run(c, m, run);
    if (st == CS_OK && catalogue) st = cs_catalogue_load(&m->catalogues, catalogue, config_path);
    /* HDF5's own error stacks stay quiet: each failure is one line of ours */
    H5E_auto2_t old_fn = NULL;
    void *old_data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (st == CS_OK) {
        component(c, "morphologies_dir", c->morph_dir);
        component(c, "biophysical_neuron_models_dir", c->biophys_dir);
        component(c, "synaptic_models_dir", c->syn_dir);
        component(c, "point_neuron_models_dir", c->point_dir);
        st = cs__read_nodes(c, m);
    }
    if (st == CS_OK) st = cs__read_inputs(c, m);
    if (st == CS_OK) st = cs__read_edges(c, m);
    if (st == CS_OK) st = cs__read_reports(c, m, run);
    if (st == CS_OK) snprintf(m->report_dir, sizeof m->report_dir, "%s", run->output_dir);
    if (st == CS_OK) m->spikes_by_id = !strcmp(run->sort_order, "id");
    H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    cs__circuit_free(c);
    free(c);
    if (st != CS_OK) cs_model_free(m);
    return st;
}
