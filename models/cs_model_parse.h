/* The JSON model reader's helpers, shared by its files (cs_model.c, cs_model_artificial.c);
 * private to models/. Every error names the model file and the JSON path of the value. */
#ifndef CS_MODEL_PARSE_H
#define CS_MODEL_PARSE_H

#include <cjson/cJSON.h>

#include "cs_model.h"

typedef struct {
    const char *file; /* model name for messages */
    const char *base_dir;
    cs_catalogue_set *cat; /* the model's catalogues */
} parse_ctx;

cs_status cs__model_fail(const parse_ctx *pc, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
cs_status cs__model_check_keys(const parse_ctx *pc, const char *path, const cJSON *obj, const char *const *allowed);
cs_status cs__model_get_string(const parse_ctx *pc, const char *path, const cJSON *obj, const char *key,
                               int required, const char *dflt, char *out, size_t cap);
cs_status cs__model_parse_params(const parse_ctx *pc, const char *path, const cJSON *obj, const cs_mech_type *t,
                                 double *param);

/* cs_model_artificial.c: a population's "artificial" object (docs/model-format.md). */
cs_status cs__model_artificial(const parse_ctx *pc, const char *path, const cJSON *a, cs_population_spec *ps);
/* A connection's or event's "weight": a number, or a list of up to CS_MAX_WEIGHTS numbers (w
 * gets them, zero-filled; *n their count). */
cs_status cs__model_weight(const parse_ctx *pc, const char *path, const cJSON *obj, double *w, int *n);

#endif
