/* Catalogues: shared libraries of mechanisms compiled from NMODL (`cablesim build-catalogue`,
 * nmodl/), loaded by a model's "catalogues" list. Their mechanisms are then found by name
 * beside the built-ins. */
#ifndef CS_CATALOGUE_H
#define CS_CATALOGUE_H

#include "cs_error.h"
#include "cs_mech.h"

#define CS_MAX_CATALOGUES 16

typedef struct {
    int n;                          /* loaded libraries */
    void *handle[CS_MAX_CATALOGUES];
    int ntype;
    const cs_mech_type **types;     /* [ntype] every library's mechanisms */
} cs_catalogue_set;

/* Load the catalogue at `path` into `set`; `model` names the model file in messages (one line:
 * a missing file, a library that is no catalogue, another ABI version, a name already taken). */
cs_status cs_catalogue_load(cs_catalogue_set *set, const char *path, const char *model);
/* A catalogue mechanism by name, NULL when none. */
const cs_mech_type *cs_catalogue_find(const cs_catalogue_set *set, const char *name);
void cs_catalogue_free(cs_catalogue_set *set);

#endif
