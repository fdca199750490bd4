/* Private to the JSON model reader (cs_model.c, cs_model_cell.c, cs_model_artificial.c): the parse context and the
 * helpers both files use. Every error names the model file and the JSON path of the value. */
#ifndef CS_MODEL_JSON_H
#define CS_MODEL_JSON_H

#include <cjson/cJSON.h>

#include "cs_model.h"

typedef struct {
    const char *file; /* model name for messages */
    const char *base_dir;
    cs_catalogue_set *cat; /* the model's catalogues */
    cs_model *model;       /* the model being filled (Allen populations set its celsius) */
    int celsius_given;     /* the model's "run" names "celsius" */
} parse_ctx;

#define FAIL(pc, path, ...) cs__model_fail_at((pc), (path), __VA_ARGS__)

enum { REQUIRED = 1, POSITIVE = 2, NONNEG = 4 };

cs_status cs__model_fail_at(const parse_ctx *pc, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Every key of `obj` must be one of `allowed` (NULL-terminated). */
cs_status cs__model_check_keys(const parse_ctx *pc, const char *path, const cJSON *obj, const char *const *allowed);
/* A finite number; `flags` (REQUIRED, POSITIVE, NONNEG) says whether it must be present and its sign. */
cs_status cs__model_get_number(const parse_ctx *pc, const char *path, const cJSON *obj, const char *key, int flags,
                               double dflt, double *out);
cs_status cs__model_get_string(const parse_ctx *pc, const char *path, const cJSON *obj, const char *key,
                               int required, const char *dflt, char *out, size_t n);
/* A region name → a mask of region tags. */
cs_status cs__model_parse_region(const parse_ctx *pc, const char *path, const char *s, unsigned *mask);

/* A mechanism's "params": its defaults, then the given ones, each checked against its range. */
cs_status cs__model_parse_params(const parse_ctx *pc, const char *path, const cJSON *obj, const cs_mech_type *t,
                                 double *param);
/* cs_model_artificial.c: a population's "artificial" object (docs/model-format.md). */
cs_status cs__model_artificial(const parse_ctx *pc, const char *path, const cJSON *a, cs_population_spec *ps);
/* A connection's or event's "weight": a number, or a list of up to CS_MAX_WEIGHTS numbers (w
 * gets them, zero-filled; *n their count). */
cs_status cs__model_weight(const parse_ctx *pc, const char *path, const cJSON *obj, double *w, int *n);
/* cs_model_cell.c: a population's ions, cm or Ra by region, Allen import, probe variables. */
cs_status cs__model_parse_ions(const parse_ctx *pc, const char *path, const cJSON *ions, cs_population_spec *ps);
cs_status cs__model_parse_by_region(const parse_ctx *pc, const char *path, const cJSON *bio, const char *key,
                                    double dflt, double *single, double *by_tag);
cs_status cs__model_parse_allen(const parse_ctx *pc, const char *path, const cJSON *a, cs_population_spec *ps);
cs_status cs__model_parse_probe_variables(const parse_ctx *pc, const char *path, const cJSON *arr,
                                          cs_population_spec *ps);

#endif
