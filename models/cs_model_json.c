/* The JSON model reader's shared helpers (cs_model_json.h): errors naming the file and the JSON
 * path, key checks, numbers and strings, regions, a mechanism's parameters. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cs_model_json.h"

cs_status cs__model_fail_at(const parse_ctx *pc, const char *path, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_error_set(CS_ERR_INVALID, "%s: %s: %s", pc->file, path, msg);
}

/* Every key of `obj` must be one of `allowed` (NULL-terminated). */
cs_status cs__model_check_keys(const parse_ctx *pc, const char *path, const cJSON *obj,
                            const char *const *allowed) {
    if (!cJSON_IsObject(obj)) return FAIL(pc, path, "expected an object");
    for (const cJSON *it = obj->child; it; it = it->next) {
        int ok = 0;
        for (const char *const *a = allowed; *a; ++a) ok |= strcmp(*a, it->string) == 0;
        if (!ok) {
            char list[256] = "";
            for (const char *const *a = allowed; *a; ++a) {
                strncat(list, *a, sizeof list - strlen(list) - 1);
                if (a[1]) strncat(list, ", ", sizeof list - strlen(list) - 1);
            }
            return FAIL(pc, path, "unknown key '%s' (expected one of: %s)", it->string, list);
        }
    }
    return CS_OK;
}

/* A finite number; `flags` says whether it must be present and its sign. */
cs_status cs__model_get_number(const parse_ctx *pc, const char *path, const cJSON *obj,
                            const char *key, int flags, double dflt, double *out) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) {
        if (flags & REQUIRED) return FAIL(pc, path, "missing '%s'", key);
        *out = dflt;
        return CS_OK;
    }
    if (!cJSON_IsNumber(it)) return FAIL(pc, path, "'%s' must be a number", key);
    double v = it->valuedouble;
    if (!isfinite(v)) return FAIL(pc, path, "'%s' must be finite (got %g)", key, v);
    if ((flags & POSITIVE) && !(v > 0)) return FAIL(pc, path, "'%s' must be > 0 (got %g)", key, v);
    if ((flags & NONNEG) && !(v >= 0)) return FAIL(pc, path, "'%s' must be >= 0 (got %g)", key, v);
    *out = v;
    return CS_OK;
}

cs_status cs__model_get_string(const parse_ctx *pc, const char *path, const cJSON *obj,
                            const char *key, int required, const char *dflt, char *out,
                            size_t cap) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) {
        if (required) return FAIL(pc, path, "missing '%s'", key);
        snprintf(out, cap, "%s", dflt);
        return CS_OK;
    }
    if (!cJSON_IsString(it)) return FAIL(pc, path, "'%s' must be a string", key);
    if (strlen(it->valuestring) >= cap) return FAIL(pc, path, "'%s' is too long", key);
    snprintf(out, cap, "%s", it->valuestring);
    return CS_OK;
}

cs_status cs__model_parse_region(const parse_ctx *pc, const char *path, const char *s, unsigned *mask) {
    if (!strcmp(s, "all")) *mask = CS_REGION_ALL;
    else if (!strcmp(s, "soma")) *mask = 1u << CS_TAG_SOMA;
    else if (!strcmp(s, "axon")) *mask = 1u << CS_TAG_AXON;
    else if (!strcmp(s, "dend") || !strcmp(s, "dendrite")) *mask = (1u << CS_TAG_DEND) | (1u << CS_TAG_APIC);
    else if (!strcmp(s, "basal")) *mask = 1u << CS_TAG_DEND;
    else if (!strcmp(s, "apical")) *mask = 1u << CS_TAG_APIC;
    else return FAIL(pc, path, "unknown region '%s' (expected soma, axon, dend, basal, apical or all)", s);
    return CS_OK;
}

/* Parameters of a mechanism: defaults, then the given ones, each checked against its range. */
cs_status cs__model_parse_params(const parse_ctx *pc, const char *path, const cJSON *obj,
                              const cs_mech_type *t, double *param) {
    for (int k = 0; k < t->nparam; ++k) param[k] = t->params[k].default_value;
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(obj, "params");
    if (!ps) return CS_OK;
    if (!cJSON_IsObject(ps)) return FAIL(pc, path, "'params' must be an object");
    for (const cJSON *it = ps->child; it; it = it->next) {
        int k = cs_mech_param_index(t, it->string);
        if (k < 0) {
            char list[256] = "";
            for (int j = 0; j < t->nparam; ++j) {
                strncat(list, t->params[j].name, sizeof list - strlen(list) - 1);
                if (j + 1 < t->nparam) strncat(list, ", ", sizeof list - strlen(list) - 1);
            }
            return FAIL(pc, path, "unknown parameter '%s' of mechanism '%s' (its parameters: %s)",
                        it->string, t->name, list);
        }
        if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
            return FAIL(pc, path, "parameter '%s' of '%s' must be a finite number", it->string, t->name);
        double v = it->valuedouble;
        if (v < t->params[k].min || v > t->params[k].max)
            return FAIL(pc, path, "parameter '%s' of '%s' = %g is out of range [%g, %g] %s",
                        it->string, t->name, v, t->params[k].min, t->params[k].max, t->params[k].unit);
        param[k] = v;
    }
    return CS_OK;
}
