/* JSON model files → cs_model, with every value validated and every error naming the file and
 * the JSON path of the offending value (cJSON gives no line numbers for values; syntax errors
 * get a line and column). */
#include "cs_model.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_model_json.h"
#include "cs_rng.h"

const char *cs_default_model_json(void); /* generated from models/default.json */

/* the helpers shared with the reader's other files (cs_model_json.c), by their short names */
#define check_keys cs__model_check_keys
#define get_string cs__model_get_string
#define get_number cs__model_get_number
#define parse_params cs__model_parse_params

static cs_status get_int(const parse_ctx *pc, const char *path, const cJSON *obj, const char *key,
                         int flags, long dflt, long lo, long hi, long *out) {
    double v = 0;
    *out = dflt; /* defined on every path (the callers read it only on success) */
    CS_TRY(cs__model_get_number(pc, path, obj, key, flags, (double)dflt, &v));
    if (v != floor(v) || v < (double)lo || v > (double)hi)
        return FAIL(pc, path, "'%s' must be an integer in [%ld, %ld] (got %g)", key, lo, hi, v);
    *out = (long)v;
    return CS_OK;
}

/* A [first, last] pair of numbers. */
static cs_status get_pair(const parse_ctx *pc, const char *path, const cJSON *obj, const char *key,
                          int flags, double out[2]) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) return FAIL(pc, path, "missing '%s'", key);
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2)
        return FAIL(pc, path, "'%s' must be an array of two numbers [first level, last level]", key);
    for (int k = 0; k < 2; ++k) {
        const cJSON *e = cJSON_GetArrayItem(it, k);
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
            return FAIL(pc, path, "'%s'[%d] must be a finite number", key, k);
        out[k] = e->valuedouble;
        if ((flags & POSITIVE) && !(out[k] > 0))
            return FAIL(pc, path, "'%s'[%d] must be > 0 (got %g)", key, k, out[k]);
        if ((flags & NONNEG) && !(out[k] >= 0))
            return FAIL(pc, path, "'%s'[%d] must be >= 0 (got %g)", key, k, out[k]);
    }
    return CS_OK;
}

static cs_status parse_location(const parse_ctx *pc, const char *path, const cJSON *obj,
                                const char *key, cs_location *loc) {
    char sub[256];
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) return FAIL(pc, path, "missing '%s'", key);
    snprintf(sub, sizeof sub, "%s.%s", path, key);
    static const char *const keys[] = {"branch", "pos", NULL};
    CS_TRY(cs__model_check_keys(pc, sub, it, keys));
    long b = 0;
    CS_TRY(get_int(pc, sub, it, "branch", REQUIRED, 0, 0, 1000000000L, &b));
    CS_TRY(cs__model_get_number(pc, sub, it, "pos", REQUIRED, 0, &loc->pos));
    if (loc->pos < 0 || loc->pos > 1) return FAIL(pc, sub, "'pos' must be in [0, 1] (got %g)", loc->pos);
    loc->branch = (int)b;
    return CS_OK;
}

/* "all" → -1, or a list of cell indices < count. */
static cs_status parse_cells(const parse_ctx *pc, const char *path, const cJSON *obj, int count,
                             int *ncells, int **cells) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, "cells");
    *cells = NULL;
    if (!it || (cJSON_IsString(it) && strcmp(it->valuestring, "all") == 0)) {
        *ncells = -1;
        return CS_OK;
    }
    if (!cJSON_IsArray(it)) return FAIL(pc, path, "'cells' must be \"all\" or a list of cell indices");
    int n = cJSON_GetArraySize(it);
    *cells = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!*cells) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    *ncells = n;
    for (int k = 0; k < n; ++k) {
        const cJSON *e = cJSON_GetArrayItem(it, k);
        if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 ||
            e->valuedouble >= count)
            return FAIL(pc, path, "cells[%d] must be a cell index in [0, %d) (got %g)", k, count,
                        cJSON_IsNumber(e) ? e->valuedouble : NAN);
        (*cells)[k] = (int)e->valuedouble;
    }
    return CS_OK;
}


static const cs_mech_type *find_mech(const parse_ctx *pc, const char *path, const char *name,
                                     cs_mech_kind kind, cs_status *st) {
    const cs_mech_type *t = cs_mech_find(name);
    if (!t) t = cs_catalogue_find(pc->cat, name);
    *st = CS_OK;
    if (!t) {
        char known[512];
        snprintf(known, sizeof known, "%s", cs_mech_names());
        for (int k = 0; k < pc->cat->ntype; ++k) {
            strncat(known, ", ", sizeof known - strlen(known) - 1);
            strncat(known, pc->cat->types[k]->name, sizeof known - strlen(known) - 1);
        }
        *st = FAIL(pc, path, "unknown mechanism '%s' (known: %s)", name, known);
        return NULL;
    }
    if (t->kind != kind) {
        *st = FAIL(pc, path, "mechanism '%s' is a %s mechanism, not allowed here", name,
                   t->kind == CS_MECH_DENSITY ? "density" : "point");
        return NULL;
    }
    if (t->artificial) {
        *st = FAIL(pc, path, "mechanism '%s' is an artificial cell: give it as a population's 'artificial'", name);
        return NULL;
    }
    return t;
}

static int tag_of(const char *s) {
    if (!strcmp(s, "soma")) return CS_TAG_SOMA;
    if (!strcmp(s, "axon")) return CS_TAG_AXON;
    if (!strcmp(s, "dend")) return CS_TAG_DEND;
    if (!strcmp(s, "apic")) return CS_TAG_APIC;
    return -1;
}

static cs_status parse_policy(const parse_ctx *pc, const char *path, const cJSON *obj,
                              cs_cv_policy *p) {
    static const char *const keys[] = {"max_cv_length", "cvs_per_branch", "bmtk_dl", NULL};
    CS_TRY(cs__model_check_keys(pc, path, obj, keys));
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "max_cv_length");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(obj, "cvs_per_branch");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, "bmtk_dl");
    if (!!a + !!b + !!c > 1) return FAIL(pc, path, "give one of 'max_cv_length', 'cvs_per_branch' and 'bmtk_dl'");
    if (!a && !b && !c) return FAIL(pc, path, "give 'max_cv_length' [µm], 'cvs_per_branch' or 'bmtk_dl' [µm]");
    p->max_cv_length = 0;
    p->cvs_per_branch = 0;
    p->bmtk_odd = c != NULL;
    if (a) return cs__model_get_number(pc, path, obj, "max_cv_length", REQUIRED | POSITIVE, 0, &p->max_cv_length);
    if (c) return cs__model_get_number(pc, path, obj, "bmtk_dl", REQUIRED | POSITIVE, 0, &p->max_cv_length);
    long n;
    CS_TRY(get_int(pc, path, obj, "cvs_per_branch", REQUIRED, 1, 1, 100000, &n));
    p->cvs_per_branch = (int)n;
    return CS_OK;
}

static cs_status parse_branches(const parse_ctx *pc, const char *path, const cJSON *arr,
                                cs_morph_spec *ms) {
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
        return FAIL(pc, path, "'branches' must be a non-empty array");
    int n = cJSON_GetArraySize(arr);
    ms->branches = calloc((size_t)n, sizeof *ms->branches);
    if (!ms->branches) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    ms->nbranch = n;
    static const char *const keys[] = {"parent", "parent_pos", "length", "radius", "tag", "cvs", NULL};
    for (int k = 0; k < n; ++k) {
        char sub[320];
        snprintf(sub, sizeof sub, "%s.branches[%d]", path, k);
        const cJSON *b = cJSON_GetArrayItem(arr, k);
        CS_TRY(cs__model_check_keys(pc, sub, b, keys));
        cs_branch_spec *bs = &ms->branches[k];
        long parent = 0, ncv = 0;
        CS_TRY(get_int(pc, sub, b, "parent", REQUIRED, -1, -1, k - 1, &parent));
        if (k == 0 && parent != -1) return FAIL(pc, sub, "the first branch must have parent -1");
        if (k > 0 && parent < 0) return FAIL(pc, sub, "only the first branch may be a root (parent -1)");
        CS_TRY(cs__model_get_number(pc, sub, b, "length", REQUIRED | POSITIVE, 0, &bs->length));
        CS_TRY(cs__model_get_number(pc, sub, b, "radius", REQUIRED | POSITIVE, 0, &bs->radius));
        CS_TRY(get_int(pc, sub, b, "cvs", 0, 0, 0, 100000, &ncv));
        char tag[16];
        CS_TRY(cs__model_get_string(pc, sub, b, "tag", 0, "dend", tag, sizeof tag));
        bs->tag = tag_of(tag);
        if (bs->tag < 0) return FAIL(pc, sub, "unknown tag '%s' (expected soma, axon, dend or apic)", tag);
        bs->parent = (int)parent;
        /* where on the parent it attaches, [0, 1]: its distal end unless given */
        if (parent < 0 && cJSON_GetObjectItemCaseSensitive(b, "parent_pos"))
            return FAIL(pc, sub, "'parent_pos' needs a parent (the root branch attaches nowhere)");
        CS_TRY(cs__model_get_number(pc, sub, b, "parent_pos", NONNEG, 1.0, &bs->parent_pos));
        if (bs->parent_pos > 1.0) return FAIL(pc, sub, "'parent_pos' must be in [0, 1] (got %g)", bs->parent_pos);
        bs->ncv = (int)ncv;
    }
    return CS_OK;
}

static cs_status parse_morphology(const parse_ctx *pc, const char *path, const cJSON *m,
                                  cs_morph_spec *ms) {
    if (!cJSON_IsObject(m)) return FAIL(pc, path, "expected an object");
    const cJSON *swc = cJSON_GetObjectItemCaseSensitive(m, "swc");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(m, "generator");
    const cJSON *br = cJSON_GetObjectItemCaseSensitive(m, "branches");
    if (!!swc + !!gen + !!br != 1)
        return FAIL(pc, path, "give exactly one of 'swc' (a file), 'generator' or 'branches'");
    if (swc) {
        static const char *const keys[] = {"swc", "scale", "min_radius", NULL};
        CS_TRY(cs__model_check_keys(pc, path, m, keys));
        if (!cJSON_IsString(swc)) return FAIL(pc, path, "'swc' must be a file name");
        const char *f = swc->valuestring;
        int n = (f[0] == '/' || !pc->base_dir[0])
                    ? snprintf(ms->swc_path, sizeof ms->swc_path, "%s", f)
                    : snprintf(ms->swc_path, sizeof ms->swc_path, "%s/%s", pc->base_dir, f);
        if (n >= (int)sizeof ms->swc_path) return FAIL(pc, path, "SWC path too long");
        ms->kind = CS_MORPH_SWC;
        CS_TRY(cs__model_get_number(pc, path, m, "scale", POSITIVE, 1.0, &ms->swc.scale));
        CS_TRY(cs__model_get_number(pc, path, m, "min_radius", NONNEG, 0.0, &ms->swc.min_radius));
        return CS_OK;
    }
    if (br) {
        static const char *const keys[] = {"branches", NULL};
        CS_TRY(cs__model_check_keys(pc, path, m, keys));
        ms->kind = CS_MORPH_BRANCHES;
        return parse_branches(pc, path, br, ms);
    }
    if (!cJSON_IsString(gen)) return FAIL(pc, path, "'generator' must be a string");
    const char *g = gen->valuestring;
    long ncv = 0;
    if (!strcmp(g, "soma")) {
        static const char *const keys[] = {"generator", "radius", NULL};
        CS_TRY(cs__model_check_keys(pc, path, m, keys));
        ms->kind = CS_MORPH_SOMA;
        return cs__model_get_number(pc, path, m, "radius", REQUIRED | POSITIVE, 0, &ms->radius);
    }
    if (!strcmp(g, "cable")) {
        static const char *const keys[] = {"generator", "length", "radius", "cvs", NULL};
        CS_TRY(cs__model_check_keys(pc, path, m, keys));
        ms->kind = CS_MORPH_CABLE;
        CS_TRY(cs__model_get_number(pc, path, m, "length", REQUIRED | POSITIVE, 0, &ms->length));
        CS_TRY(cs__model_get_number(pc, path, m, "radius", REQUIRED | POSITIVE, 0, &ms->radius));
        CS_TRY(get_int(pc, path, m, "cvs", 0, 0, 0, 10000000, &ncv));
        ms->ncv = (int)ncv;
        return CS_OK;
    }
    if (!strcmp(g, "ball_and_stick")) {
        static const char *const keys[] = {"generator", "soma_radius", "dend_length", "dend_radius",
                                           "dend_cvs", NULL};
        CS_TRY(cs__model_check_keys(pc, path, m, keys));
        ms->kind = CS_MORPH_BALL_AND_STICK;
        CS_TRY(cs__model_get_number(pc, path, m, "soma_radius", REQUIRED | POSITIVE, 0, &ms->soma_radius));
        CS_TRY(cs__model_get_number(pc, path, m, "dend_length", REQUIRED | POSITIVE, 0, &ms->dend_length));
        CS_TRY(cs__model_get_number(pc, path, m, "dend_radius", REQUIRED | POSITIVE, 0, &ms->dend_radius));
        CS_TRY(get_int(pc, path, m, "dend_cvs", 0, 0, 0, 10000000, &ncv));
        ms->ncv = (int)ncv;
        return CS_OK;
    }
    if (!strcmp(g, "random_tree")) {
        static const char *const keys[] = {"generator", "soma_radius", "dend_radius", "depth",
                                           "branch_probability", "length", "cvs", NULL};
        CS_TRY(cs__model_check_keys(pc, path, m, keys));
        ms->kind = CS_MORPH_RANDOM_TREE;
        cs_random_tree_params *t = &ms->tree;
        long depth;
        double cvs[2];
        CS_TRY(cs__model_get_number(pc, path, m, "soma_radius", REQUIRED | POSITIVE, 0, &t->soma_radius));
        CS_TRY(cs__model_get_number(pc, path, m, "dend_radius", REQUIRED | POSITIVE, 0, &t->dend_radius));
        CS_TRY(get_int(pc, path, m, "depth", REQUIRED, 1, 1, 30, &depth));
        CS_TRY(get_pair(pc, path, m, "branch_probability", NONNEG, t->branch_prob));
        CS_TRY(get_pair(pc, path, m, "length", POSITIVE, t->length));
        CS_TRY(get_pair(pc, path, m, "cvs", POSITIVE, cvs));
        for (int k = 0; k < 2; ++k) {
            if (t->branch_prob[k] > 1)
                return FAIL(pc, path, "'branch_probability'[%d] must be in [0, 1] (got %g)", k, t->branch_prob[k]);
            if (cvs[k] != floor(cvs[k]) || cvs[k] > 100000)
                return FAIL(pc, path, "'cvs'[%d] must be a positive integer (got %g)", k, cvs[k]);
            t->ncv[k] = (int)cvs[k];
        }
        t->depth = (int)depth;
        return CS_OK;
    }
    return FAIL(pc, path, "unknown generator '%s' (expected soma, cable, ball_and_stick or random_tree)", g);
}

static cs_status parse_point_list(const parse_ctx *pc, const char *path, const cJSON *arr,
                                  int is_synapse, int count, int *n_out, cs_point_spec **out) {
    *n_out = 0;
    *out = NULL;
    if (!arr) return CS_OK;
    if (!cJSON_IsArray(arr)) return FAIL(pc, path, "expected an array");
    int n = cJSON_GetArraySize(arr);
    *out = calloc((size_t)(n > 0 ? n : 1), sizeof **out);
    if (!*out) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    *n_out = n;
    static const char *const syn_keys[] = {"name", "mechanism", "location", "params", NULL};
    static const char *const stim_keys[] = {"name", "mechanism", "location", "params", "cells", NULL};
    for (int k = 0; k < n; ++k) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s[%d]", path, k);
        const cJSON *it = cJSON_GetArrayItem(arr, k);
        cs_point_spec *ps = &(*out)[k];
        CS_TRY(cs__model_check_keys(pc, sub, it, is_synapse ? syn_keys : stim_keys));
        char mech[CS_NAME_MAX];
        CS_TRY(cs__model_get_string(pc, sub, it, "mechanism", 1, "", mech, sizeof mech));
        cs_status st;
        ps->type = find_mech(pc, sub, mech, CS_MECH_POINT, &st);
        if (!ps->type) return st;
        if (is_synapse && !ps->type->receives_events)
            return FAIL(pc, sub, "mechanism '%s' does not receive events and cannot be a synapse", mech);
        if (!is_synapse && ps->type->receives_events)
            return FAIL(pc, sub, "mechanism '%s' is a synapse; list it under 'synapses'", mech);
        CS_TRY(parse_location(pc, sub, it, "location", &ps->loc));
        CS_TRY(parse_params(pc, sub, it, ps->type, ps->param));
        if (is_synapse) {
            CS_TRY(cs__model_get_string(pc, sub, it, "name", 1, "", ps->name, sizeof ps->name));
            for (int j = 0; j < k; ++j)
                if (!strcmp((*out)[j].name, ps->name)) return FAIL(pc, sub, "duplicate synapse name '%s'", ps->name);
            ps->ncells = -1;
        } else {
            /* optional: a name for probes of its states ("probes.variables": "NAME.STATE") */
            CS_TRY(cs__model_get_string(pc, sub, it, "name", 0, "", ps->name, sizeof ps->name));
            for (int j = 0; ps->name[0] && j < k; ++j)
                if (!strcmp((*out)[j].name, ps->name)) return FAIL(pc, sub, "duplicate stimulus name '%s'", ps->name);
            CS_TRY(parse_cells(pc, sub, it, count, &ps->ncells, &ps->cells));
        }
    }
    return CS_OK;
}

static cs_status parse_population(const parse_ctx *pc, const char *path, const cJSON *p,
                                  const cs_cv_policy *default_policy, int has_default_policy,
                                  cs_population_spec *ps) {
    static const char *const keys[] = {"name", "count", "morphology", "discretization", "biophysics", "allen",
                                       "synapses", "stimuli", "detector", "probes", NULL};
    static const char *const art_keys[] = {"name", "count", "artificial", NULL};
    const cJSON *art = cJSON_GetObjectItemCaseSensitive(p, "artificial");
    CS_TRY(check_keys(pc, path, p, art ? art_keys : keys));
    CS_TRY(get_string(pc, path, p, "name", 1, "", ps->name, sizeof ps->name));
    if (!ps->name[0] || strchr(ps->name, '/')) return FAIL(pc, path, "'name' must be non-empty and contain no '/'");
    long count;
    CS_TRY(get_int(pc, path, p, "count", REQUIRED, 1, 1, CS_MODEL_MAX_CELLS, &count));
    ps->count = (int)count;
    char sub[256];
    if (art) { /* artificial cells: no morphology (cs_model_artificial.c) */
        snprintf(sub, sizeof sub, "%s.artificial", path);
        return cs__model_artificial(pc, sub, art, ps);
    }
    const cJSON *allen = cJSON_GetObjectItemCaseSensitive(p, "allen");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(p, "morphology");
    if (allen && (m || cJSON_HasObjectItem(p, "biophysics")))
        return FAIL(pc, path, "an 'allen' population takes its morphology and biophysics from the fit file: "
                              "give neither 'morphology' nor 'biophysics'");
    if (!m && !allen) return FAIL(pc, path, "missing 'morphology'");
    snprintf(sub, sizeof sub, "%s.morphology", path);
    if (m) CS_TRY(parse_morphology(pc, sub, m, &ps->morph));

    const cJSON *disc = cJSON_GetObjectItemCaseSensitive(p, "discretization");
    if (disc) {
        snprintf(sub, sizeof sub, "%s.discretization", path);
        CS_TRY(parse_policy(pc, sub, disc, &ps->policy));
    } else if (has_default_policy) {
        ps->policy = *default_policy;
    } else {
        ps->policy.max_cv_length = 20.0; /* [µm] documented default */
        ps->policy.cvs_per_branch = 0;
        ps->policy.bmtk_odd = 0;
    }

    snprintf(sub, sizeof sub, "%s.allen", path);
    if (allen) CS_TRY(cs__model_parse_allen(pc, sub, allen, ps));
    snprintf(sub, sizeof sub, "%s.biophysics", path);
    const cJSON *bio = cJSON_GetObjectItemCaseSensitive(p, "biophysics");
    if (!bio && !allen) return FAIL(pc, path, "missing 'biophysics'");
    if (allen) goto points;
    static const char *const bio_keys[] = {"cm", "Ra", "v_init", "mechanisms", "ions", NULL};
    CS_TRY(cs__model_check_keys(pc, sub, bio, bio_keys));
    CS_TRY(cs__model_parse_by_region(pc, sub, bio, "cm", 1.0, &ps->cm, ps->cm_tag));     /* [µF/cm²] */
    CS_TRY(cs__model_parse_by_region(pc, sub, bio, "Ra", 100.0, &ps->Ra, ps->Ra_tag));  /* [Ω·cm] */
    CS_TRY(cs__model_get_number(pc, sub, bio, "v_init", 0, -65.0, &ps->v_init));
    const cJSON *mechs = cJSON_GetObjectItemCaseSensitive(bio, "mechanisms");
    if (mechs) {
        if (!cJSON_IsArray(mechs)) return FAIL(pc, sub, "'mechanisms' must be an array");
        int n = cJSON_GetArraySize(mechs);
        ps->density = calloc((size_t)(n > 0 ? n : 1), sizeof *ps->density);
        if (!ps->density) return cs_error_set(CS_ERR_NOMEM, "out of memory");
        ps->ndensity = n;
        static const char *const mkeys[] = {"name", "region", "params", NULL};
        for (int k = 0; k < n; ++k) {
            char msub[300];
            snprintf(msub, sizeof msub, "%s.mechanisms[%d]", sub, k);
            const cJSON *it = cJSON_GetArrayItem(mechs, k);
            CS_TRY(cs__model_check_keys(pc, msub, it, mkeys));
            char name[CS_NAME_MAX], region[32];
            CS_TRY(cs__model_get_string(pc, msub, it, "name", 1, "", name, sizeof name));
            CS_TRY(cs__model_get_string(pc, msub, it, "region", 0, "all", region, sizeof region));
            cs_status st;
            ps->density[k].type = find_mech(pc, msub, name, CS_MECH_DENSITY, &st);
            if (!ps->density[k].type) return st;
            CS_TRY(cs__model_parse_region(pc, msub, region, &ps->density[k].region_mask));
            CS_TRY(parse_params(pc, msub, it, ps->density[k].type, ps->density[k].param));
        }
    }

    CS_TRY(cs__model_parse_ions(pc, sub, cJSON_GetObjectItemCaseSensitive(bio, "ions"), ps));

points:

    snprintf(sub, sizeof sub, "%s.synapses", path);
    CS_TRY(parse_point_list(pc, sub, cJSON_GetObjectItemCaseSensitive(p, "synapses"), 1, ps->count,
                            &ps->nsyn, &ps->syn));
    snprintf(sub, sizeof sub, "%s.stimuli", path);
    CS_TRY(parse_point_list(pc, sub, cJSON_GetObjectItemCaseSensitive(p, "stimuli"), 0, ps->count,
                            &ps->nstim, &ps->stim));

    const cJSON *det = cJSON_GetObjectItemCaseSensitive(p, "detector");
    if (det) {
        snprintf(sub, sizeof sub, "%s.detector", path);
        static const char *const dkeys[] = {"location", "threshold", NULL};
        CS_TRY(cs__model_check_keys(pc, sub, det, dkeys));
        CS_TRY(parse_location(pc, sub, det, "location", &ps->detector));
        CS_TRY(cs__model_get_number(pc, sub, det, "threshold", 0, -10.0, &ps->threshold));
        ps->has_detector = 1;
    }
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(p, "probes");
    if (pr) {
        snprintf(sub, sizeof sub, "%s.probes", path);
        static const char *const pkeys[] = {"cells", "locations", "interval", "variables", NULL};
        CS_TRY(cs__model_check_keys(pc, sub, pr, pkeys));
        CS_TRY(parse_cells(pc, sub, pr, ps->count, &ps->probes.ncells, &ps->probes.cells));
        CS_TRY(cs__model_get_number(pc, sub, pr, "interval", REQUIRED | POSITIVE, 0, &ps->probes.interval));
        const cJSON *locs = cJSON_GetObjectItemCaseSensitive(pr, "locations");
        if (!cJSON_IsArray(locs) || cJSON_GetArraySize(locs) < 1)
            return FAIL(pc, sub, "'locations' must be a non-empty array of {branch, pos}");
        int n = cJSON_GetArraySize(locs);
        ps->probes.locs = calloc((size_t)n, sizeof *ps->probes.locs);
        if (!ps->probes.locs) return cs_error_set(CS_ERR_NOMEM, "out of memory");
        ps->probes.nloc = n;
        for (int k = 0; k < n; ++k) {
            char lsub[300];
            snprintf(lsub, sizeof lsub, "%s.locations[%d]", sub, k);
            cJSON *wrap = cJSON_CreateObject();
            if (!wrap) return cs_error_set(CS_ERR_NOMEM, "out of memory");
            cJSON_AddItemReferenceToObject(wrap, "location", cJSON_GetArrayItem(locs, k));
            cs_status st = parse_location(pc, lsub, wrap, "location", &ps->probes.locs[k]);
            cJSON_Delete(wrap);
            CS_TRY(st);
        }
        CS_TRY(cs__model_parse_probe_variables(pc, sub, cJSON_GetObjectItemCaseSensitive(pr, "variables"), ps));
        ps->has_probes = 1;
    }
    return CS_OK;
}

/* A reference to a cell: {"population": name, "cell": index}; returns the gid. */
static cs_status parse_cell_ref(const parse_ctx *pc, const char *path, const cs_model *m,
                                const cJSON *obj, int with_synapse, uint64_t *gid, int *syn) {
    static const char *const keys[] = {"population", "cell", NULL};
    static const char *const skeys[] = {"population", "cell", "synapse", NULL};
    /* with_synapse: "synapse" names the target's synapse (none for an artificial cell) */
    CS_TRY(check_keys(pc, path, obj, with_synapse ? skeys : keys));
    char pop[CS_NAME_MAX];
    CS_TRY(cs__model_get_string(pc, path, obj, "population", 1, "", pop, sizeof pop));
    int p = -1;
    for (int k = 0; k < m->npop; ++k)
        if (!strcmp(m->pops[k].name, pop)) p = k;
    if (p < 0) return FAIL(pc, path, "unknown population '%s'", pop);
    long cell = 0;
    CS_TRY(get_int(pc, path, obj, "cell", REQUIRED, 0, 0, m->pops[p].count - 1, &cell));
    *gid = m->pops[p].first_gid + (uint64_t)cell;
    if (with_synapse && m->pops[p].artificial) { /* events reach the cell itself */
        if (cJSON_GetObjectItemCaseSensitive(obj, "synapse"))
            return FAIL(pc, path, "population '%s' is of artificial cells, which have no synapses", pop);
        *syn = 0;
    } else if (with_synapse) {
        char sname[CS_NAME_MAX];
        CS_TRY(cs__model_get_string(pc, path, obj, "synapse", 1, "", sname, sizeof sname));
        *syn = -1;
        for (int k = 0; k < m->pops[p].nsyn; ++k)
            if (!strcmp(m->pops[p].syn[k].name, sname)) *syn = k;
        if (*syn < 0) return FAIL(pc, path, "population '%s' has no synapse '%s'", pop, sname);
    }
    return CS_OK;
}

static int find_pop(const cs_model *m, const char *name) {
    for (int k = 0; k < m->npop; ++k)
        if (!strcmp(m->pops[k].name, name)) return k;
    return -1;
}

static cs_status push_conn(cs_model *m, size_t *cap, cs_connection c) {
    if (m->nconn >= CS_MODEL_MAX_CONNECTIONS)
        return cs_error_set(CS_ERR_INVALID, "%s: more than the limit of %d connections", m->path,
                            CS_MODEL_MAX_CONNECTIONS);
    if (m->nconn == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        cs_connection *p = realloc(m->conns, nc * sizeof *p);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for connections");
        m->conns = p;
        *cap = nc;
    }
    m->conns[m->nconn++] = c;
    return CS_OK;
}

/* A rule's "synapse" on the target population ps: its index; none for artificial cells. */
static cs_status target_synapse(const parse_ctx *pc, const char *path, const cJSON *c, const cs_population_spec *ps,
                                int *syn) {
    char name[CS_NAME_MAX];
    *syn = 0;
    if (ps->artificial) {
        if (cJSON_GetObjectItemCaseSensitive(c, "synapse"))
            return FAIL(pc, path, "population '%s' is of artificial cells, which have no synapses", ps->name);
        return CS_OK;
    }
    CS_TRY(get_string(pc, path, c, "synapse", 1, "", name, sizeof name));
    *syn = -1;
    for (int j = 0; j < ps->nsyn; ++j)
        if (!strcmp(ps->syn[j].name, name)) *syn = j;
    if (*syn < 0) return FAIL(pc, path, "population '%s' has no synapse '%s'", ps->name, name);
    return CS_OK;
}

/* The weight list of the connection just pushed. */
static cs_status push_weights(cs_model *m, const double *w) {
    cs_conn_weights *p = realloc(m->xweights, (m->nxweight + 1) * sizeof *p);
    if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for connections");
    m->xweights = p;
    p[m->nxweight].conn = m->nconn - 1;
    memcpy(p[m->nxweight].w, w, sizeof p->w);
    m->nxweight++;
    return CS_OK;
}

static cs_status parse_connections(const parse_ctx *pc, const cJSON *arr, cs_model *m) {
    if (!arr) return CS_OK;
    if (!cJSON_IsArray(arr)) return FAIL(pc, "connections", "expected an array");
    size_t cap = 0;
    cs_rng rng;
    cs_rng_seed(&rng, m->seed ^ 0x636f6e6e65637473ull); /* "connects": a stream apart from the trees */
    int n = cJSON_GetArraySize(arr);
    for (int k = 0; k < n; ++k) {
        char path[64];
        snprintf(path, sizeof path, "connections[%d]", k);
        const cJSON *c = cJSON_GetArrayItem(arr, k);
        char type[32];
        if (!cJSON_IsObject(c)) return FAIL(pc, path, "expected an object");
        CS_TRY(cs__model_get_string(pc, path, c, "type", 1, "", type, sizeof type));
        cs_connection cn = {0};
        double w[CS_MAX_WEIGHTS];
        CS_TRY(cs__model_weight(pc, path, c, w, &cn.nweight));
        cn.weight = w[0];
        if (cn.nweight > 1 && strcmp(type, "explicit"))
            return FAIL(pc, path, "a list of weights is for explicit connections only");
        CS_TRY(get_number(pc, path, c, "delay", REQUIRED | POSITIVE, 0, &cn.delay));
        if (cn.delay < m->dt)
            return FAIL(pc, path, "'delay' %g ms is shorter than the time step dt = %g ms", cn.delay, m->dt);
        if (!strcmp(type, "explicit")) {
            static const char *const keys[] = {"type", "source", "target", "weight", "delay", NULL};
            CS_TRY(cs__model_check_keys(pc, path, c, keys));
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "source");
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "target");
            if (!s || !t) return FAIL(pc, path, "needs 'source' and 'target'");
            char sub[96];
            snprintf(sub, sizeof sub, "%s.source", path);
            CS_TRY(parse_cell_ref(pc, sub, m, s, 0, &cn.source, NULL));
            snprintf(sub, sizeof sub, "%s.target", path);
            CS_TRY(parse_cell_ref(pc, sub, m, t, 1, &cn.target, &cn.synapse));
            CS_TRY(push_conn(m, &cap, cn));
            if (cn.nweight > 1) CS_TRY(push_weights(m, w));
        } else if (!strcmp(type, "ring")) {
            static const char *const keys[] = {"type", "population", "synapse", "weight", "delay", NULL};
            CS_TRY(cs__model_check_keys(pc, path, c, keys));
            char pop[CS_NAME_MAX];
            CS_TRY(get_string(pc, path, c, "population", 1, "", pop, sizeof pop));
            int p = find_pop(m, pop);
            if (p < 0) return FAIL(pc, path, "unknown population '%s'", pop);
            const cs_population_spec *ps = &m->pops[p];
            CS_TRY(target_synapse(pc, path, c, ps, &cn.synapse));
            if (ps->count < 2) return FAIL(pc, path, "a ring needs at least 2 cells");
            for (int i = 0; i < ps->count; ++i) {
                cn.source = ps->first_gid + (uint64_t)i;
                cn.target = ps->first_gid + (uint64_t)((i + 1) % ps->count);
                CS_TRY(push_conn(m, &cap, cn));
            }
        } else if (!strcmp(type, "random")) {
            static const char *const keys[] = {"type", "source", "target", "synapse", "indegree",
                                               "weight", "delay", NULL};
            CS_TRY(cs__model_check_keys(pc, path, c, keys));
            char sp[CS_NAME_MAX], tp[CS_NAME_MAX];
            long indeg;
            CS_TRY(get_string(pc, path, c, "source", 1, "", sp, sizeof sp));
            CS_TRY(get_string(pc, path, c, "target", 1, "", tp, sizeof tp));
            int s = find_pop(m, sp), t = find_pop(m, tp);
            if (s < 0) return FAIL(pc, path, "unknown population '%s'", sp);
            if (t < 0) return FAIL(pc, path, "unknown population '%s'", tp);
            const cs_population_spec *ss = &m->pops[s], *ts = &m->pops[t];
            CS_TRY(target_synapse(pc, path, c, ts, &cn.synapse));
            long avail = s == t ? ss->count - 1 : ss->count;
            CS_TRY(get_int(pc, path, c, "indegree", REQUIRED, 0, 0, avail, &indeg));
            if ((double)m->nconn + (double)ts->count * (double)indeg > CS_MODEL_MAX_CONNECTIONS)
                return FAIL(pc, path, "%d cells x indegree %ld: more than the limit of %d connections",
                            ts->count, indeg, CS_MODEL_MAX_CONNECTIONS);
            for (int i = 0; i < ts->count; ++i) {
                cn.target = ts->first_gid + (uint64_t)i;
                for (long j = 0; j < indeg; ++j) {
                    /* sources drawn uniformly without self-connections (duplicates allowed, as
                     * NEST's fixed_indegree with multapses). */
                    uint64_t src;
                    do src = ss->first_gid + cs_rng_uniform_int(&rng, (uint64_t)ss->count);
                    while (s == t && src == cn.target);
                    cn.source = src;
                    CS_TRY(push_conn(m, &cap, cn));
                }
            }
        } else {
            return FAIL(pc, path, "unknown connection type '%s' (expected explicit, ring or random)", type);
        }
    }
    return CS_OK;
}

/* After the connections: weight lists fit their targets' NET_RECEIVE. */
static cs_status check_weights(const parse_ctx *pc, const cs_model *m) {
    for (size_t k = 0; k < m->nconn; ++k) {
        const cs_connection *c = &m->conns[k];
        if (c->nweight <= 1) continue;
        const cs_population_spec *ps = &m->pops[cs_model_population_of(m, c->target)];
        const cs_mech_type *t = ps->artificial ? ps->artificial : ps->syn[c->synapse].type;
        char path[64];
        snprintf(path, sizeof path, "connections (connection %zu)", k);
        if (c->nweight > t->nweight)
            return FAIL(pc, path, "%d weights, but %s's NET_RECEIVE takes %d", c->nweight, t->name, t->nweight);
    }
    return CS_OK;
}

static cs_status parse_events(const parse_ctx *pc, const cJSON *arr, cs_model *m) {
    if (!arr) return CS_OK;
    if (!cJSON_IsArray(arr)) return FAIL(pc, "events", "expected an array");
    int n = cJSON_GetArraySize(arr);
    m->events = calloc((size_t)(n > 0 ? n : 1), sizeof *m->events);
    if (!m->events) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    static const char *const keys[] = {"target", "time", "weight", NULL};
    for (int k = 0; k < n; ++k) {
        char path[64];
        snprintf(path, sizeof path, "events[%d]", k);
        const cJSON *e = cJSON_GetArrayItem(arr, k);
        CS_TRY(cs__model_check_keys(pc, path, e, keys));
        cs_event *ev = &m->events[k];
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "target");
        if (!t) return FAIL(pc, path, "missing 'target'");
        char sub[96];
        snprintf(sub, sizeof sub, "%s.target", path);
        CS_TRY(parse_cell_ref(pc, sub, m, t, 1, &ev->target, &ev->synapse));
        CS_TRY(cs__model_get_number(pc, path, e, "time", REQUIRED | NONNEG, 0, &ev->time));
        CS_TRY(cs__model_get_number(pc, path, e, "weight", REQUIRED, 0, &ev->weight));
        m->nevent = (size_t)k + 1;
    }
    return CS_OK;
}

/* Line and column of a byte offset, for syntax errors. */
static void line_col(const char *text, const char *at, int *line, int *col) {
    *line = 1;
    *col = 1;
    for (const char *p = text; p < at && *p; ++p) {
        if (*p == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

/* "catalogues": ["NAME.so", ...], paths relative to the model file's folder. */
static cs_status parse_catalogues(const parse_ctx *pc, const cJSON *arr, cs_model *m) {
    if (!arr) return CS_OK;
    if (!cJSON_IsArray(arr)) return FAIL(pc, "catalogues", "expected an array of file names");
    int n = cJSON_GetArraySize(arr);
    for (int k = 0; k < n; ++k) {
        const cJSON *it = cJSON_GetArrayItem(arr, k);
        if (!cJSON_IsString(it) || !it->valuestring[0]) return FAIL(pc, "catalogues", "entry %d must be a file name", k);
        char path[CS_PATH_MAX];
        const char *f = it->valuestring;
        int len = (f[0] == '/' || !pc->base_dir[0]) ? snprintf(path, sizeof path, "%s", f)
                                                   : snprintf(path, sizeof path, "%s/%s", pc->base_dir, f);
        if (len < 0 || (size_t)len >= sizeof path) return FAIL(pc, "catalogues", "entry %d: path too long", k);
        CS_TRY(cs_catalogue_load(&m->catalogues, path, pc->file));
    }
    return CS_OK;
}

static cs_status parse_root(const parse_ctx *pc, const cJSON *root, cs_model *m) {
    static const char *const keys[] = {"run", "discretization", "populations", "connections",
                                       "events", "catalogues", "$schema", "description", NULL};
    CS_TRY(cs__model_check_keys(pc, "(top level)", root, keys));
    CS_TRY(parse_catalogues(pc, cJSON_GetObjectItemCaseSensitive(root, "catalogues"), m));
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(root, "run");
    if (!run) return FAIL(pc, "(top level)", "missing 'run' (tfinal, dt, seed)");
    static const char *const run_keys[] = {"tfinal", "dt", "seed", "backend", "threads", "celsius",
                                           "report_precision", NULL};
    CS_TRY(cs__model_check_keys(pc, "run", run, run_keys));
    CS_TRY(cs__model_get_number(pc, "run", run, "tfinal", REQUIRED | POSITIVE, 0, &m->tfinal));
    CS_TRY(cs__model_get_number(pc, "run", run, "dt", REQUIRED | POSITIVE, 0, &m->dt));
    if (m->dt > m->tfinal) return FAIL(pc, "run", "'dt' (%g ms) is longer than 'tfinal' (%g ms)", m->dt, m->tfinal);
    if (m->tfinal / m->dt > 2e9) return FAIL(pc, "run", "tfinal/dt is more than 2e9 steps");
    CS_TRY(cs__model_get_number(pc, "run", run, "celsius", 0, 6.3, &m->celsius));
    long seed, threads;
    CS_TRY(get_int(pc, "run", run, "seed", 0, 1, 0, 9007199254740991L, &seed));
    CS_TRY(get_int(pc, "run", run, "threads", 0, 0, 0, 4096, &threads));
    m->seed = (uint64_t)seed;
    m->threads = (int)threads;
    CS_TRY(cs__model_get_string(pc, "run", run, "backend", 0, "cpu", m->backend, sizeof m->backend));
    char prec[16];
    CS_TRY(cs__model_get_string(pc, "run", run, "report_precision", 0, "single", prec, sizeof prec));
    if (strcmp(prec, "single") && strcmp(prec, "double"))
        return FAIL(pc, "run", "'report_precision' must be \"single\" (float32, SONATA's default) or \"double\" (got '%s')", prec);
    m->report_bits = strcmp(prec, "double") ? 32 : 64;
    if (strcmp(m->backend, "cpu") && strcmp(m->backend, "cuda") && strcmp(m->backend, "auto"))
        return FAIL(pc, "run", "unknown backend '%s' (expected cpu, cuda or auto)", m->backend);

    cs_cv_policy policy = {20.0, 0, 0};
    const cJSON *disc = cJSON_GetObjectItemCaseSensitive(root, "discretization");
    if (disc) CS_TRY(parse_policy(pc, "discretization", disc, &policy));

    const cJSON *pops = cJSON_GetObjectItemCaseSensitive(root, "populations");
    if (!cJSON_IsArray(pops) || cJSON_GetArraySize(pops) < 1)
        return FAIL(pc, "populations", "must be a non-empty array");
    int np = cJSON_GetArraySize(pops);
    m->pops = calloc((size_t)np, sizeof *m->pops);
    if (!m->pops) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    m->npop = np;
    uint64_t gid = 0;
    for (int k = 0; k < np; ++k) {
        char path[64];
        snprintf(path, sizeof path, "populations[%d]", k);
        CS_TRY(parse_population(pc, path, cJSON_GetArrayItem(pops, k), &policy, disc != NULL, &m->pops[k]));
        for (int j = 0; j < k; ++j)
            if (!strcmp(m->pops[j].name, m->pops[k].name))
                return FAIL(pc, path, "duplicate population name '%s'", m->pops[k].name);
        m->pops[k].first_gid = gid;
        gid += (uint64_t)m->pops[k].count;
        if (gid > CS_MODEL_MAX_CELLS)
            return FAIL(pc, path, "the model has %llu cells, more than the limit of %d",
                        (unsigned long long)gid, CS_MODEL_MAX_CELLS);
    }
    m->ncells = gid;
    CS_TRY(parse_connections(pc, cJSON_GetObjectItemCaseSensitive(root, "connections"), m));
    CS_TRY(check_weights(pc, m));
    CS_TRY(parse_events(pc, cJSON_GetObjectItemCaseSensitive(root, "events"), m));
    return CS_OK;
}

cs_status cs_model_parse(const char *json, const char *name, const char *base_dir, cs_model *out) {
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", name);
    parse_ctx pc = {out->path, base_dir ? base_dir : "", &out->catalogues, out, 0};
    const char *end = NULL;
    const char *q = json;
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') ++q;
    if (!*q) return cs_error_set(CS_ERR_PARSE, "%s:1:1: the model file is empty", name);
    cJSON *root = cJSON_ParseWithOpts(json, &end, 1);
    if (!root) {
        const char *at = end ? end : cJSON_GetErrorPtr();
        int line = 0, col = 0;
        if (at) line_col(json, at, &line, &col);
        char near[24] = "";
        if (at) {
            size_t k = 0;
            for (; k < sizeof near - 1 && at[k] && at[k] != '\n' && at[k] != '\r'; ++k) near[k] = at[k];
            near[k] = '\0';
        }
        return cs_error_set(CS_ERR_PARSE, "%s:%d:%d: JSON syntax error near '%s'", name, line, col, near);
    }
    pc.celsius_given = cJSON_HasObjectItem(cJSON_GetObjectItemCaseSensitive(root, "run"), "celsius");
    cs_status st = parse_root(&pc, root, out);
    cJSON_Delete(root);
    if (st != CS_OK) cs_model_free(out);
    return st;
}

cs_status cs_model_load_file(const char *path, cs_model *out) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return cs_error_set(CS_ERR_IO, "%s: cannot open model file: %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return cs_error_set(CS_ERR_NOMEM, "%s: out of memory", path);
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, 4096, f);
        len += got;
        if (got < 4096) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return cs_error_set(CS_ERR_IO, "%s: read error", path);
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        free(buf);
        return cs_error_set(CS_ERR_PARSE, "%s: not a text file (contains a NUL byte)", path);
    }
    char dir[CS_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    cs_status st = cs_model_parse(buf, path, dir, out);
    free(buf);
    return st;
}

cs_status cs_model_load_default(cs_model *out) {
    return cs_model_parse(cs_default_model_json(), "<default model>", "", out);
}

void cs_model_free(cs_model *m) {
    if (!m) return;
    for (int k = 0; k < m->npop; ++k) {
        cs_population_spec *p = &m->pops[k];
        free(p->morph.branches);
        free(p->density);
        for (int j = 0; j < p->nsyn; ++j) free(p->syn[j].cells);
        for (int j = 0; j < p->nstim; ++j) free(p->stim[j].cells);
        free(p->syn);
        free(p->stim);
        free(p->probes.cells);
        free(p->probes.locs);
        free(p->probes.vars);
        free(p->probes.loc_section);
        free(p->cellsyn);
        for (int c = 0; p->play && c < p->count; ++c) free(p->play[c]);
        free(p->play);
        free(p->nplay);
    }
    for (int k = 0; k < m->nreport_part; ++k) free(m->report_parts[k].loc);
    free(m->report_parts);
    m->report_parts = NULL;
    m->nreport_part = 0;
    free(m->xweights);
    m->xweights = NULL;
    m->nxweight = 0;
    free(m->pops);
    free(m->conns);
    free(m->events);
    cs_catalogue_free(&m->catalogues);
    m->pops = NULL;
    m->conns = NULL;
    m->events = NULL;
    m->npop = 0;
    m->nconn = m->nevent = 0;
}

int cs_model_population_of(const cs_model *m, uint64_t gid) {
    for (int k = 0; k < m->npop; ++k)
        if (gid >= m->pops[k].first_gid && gid < m->pops[k].first_gid + (uint64_t)m->pops[k].count)
            return k;
    return -1;
}

const cs_point_spec *cs_population_synapse(const cs_population_spec *ps, int cell, int syn) {
    if (syn < 0) return NULL;
    if (syn < ps->nsyn) return &ps->syn[syn];
    size_t lo = 0, hi = ps->ncellsyn; /* the cell's first own synapse: the list is sorted by cell */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ps->cellsyn[mid].cell < cell) lo = mid + 1;
        else hi = mid;
    }
    size_t k = lo + (size_t)(syn - ps->nsyn);
    return k < ps->ncellsyn && ps->cellsyn[k].cell == cell ? &ps->syn[ps->cellsyn[k].proto] : NULL;
}
