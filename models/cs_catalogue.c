#include "cs_catalogue.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

cs_status cs_catalogue_load(cs_catalogue_set *set, const char *path, const char *model) {
#ifdef CS_FUZZING /* a fuzzed model must not load (and run the constructors of) any library */
    (void)set;
    return cs_error_set(CS_ERR_UNSUPPORTED, "%s: catalogue '%s': not loaded in a fuzzing build", model, path);
#endif
    struct stat st;
    if (stat(path, &st) != 0)
        return cs_error_set(CS_ERR_IO, "%s: catalogue '%s' not found (build it with: cablesim build-catalogue DIR -o %s)",
                            model, path, path);
    if (set->n == CS_MAX_CATALOGUES)
        return cs_error_set(CS_ERR_INVALID, "%s: more than %d catalogues", model, CS_MAX_CATALOGUES);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return cs_error_set(CS_ERR_INVALID, "%s: catalogue '%s' cannot be loaded: %s", model, path,
                            why ? why : "unknown reason");
    }
    int (*abi)(void) = (int (*)(void))dlsym(h, "cs_mech_catalogue_abi");
    const cs_mech_catalogue *(*get)(void) = (const cs_mech_catalogue *(*)(void))dlsym(h, "cs_mech_catalogue_get");
    if (!abi || !get) {
        dlclose(h);
        return cs_error_set(CS_ERR_INVALID, "%s: '%s' is not a cablesim catalogue (no cs_mech_catalogue_abi)", model, path);
    }
    if (abi() != CS_MECH_ABI_VERSION) {
        int v = abi();
        dlclose(h);
        return cs_error_set(CS_ERR_INVALID,
                            "%s: catalogue '%s' was built for mechanism ABI %d, this cablesim needs %d: rebuild it "
                            "with cablesim build-catalogue", model, path, v, CS_MECH_ABI_VERSION);
    }
    const cs_mech_catalogue *c = get();
    const cs_mech_type **t = realloc(set->types, (size_t)(set->ntype + c->ntype) * sizeof *t);
    if (!t) {
        dlclose(h);
        return cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    set->types = t;
    for (int k = 0; k < c->ntype; ++k) {
        const cs_mech_type *m = c->types[k];
        if (cs_mech_find(m->name) || cs_catalogue_find(set, m->name)) {
            cs_status st = cs_error_set(CS_ERR_INVALID, "%s: catalogue '%s': mechanism '%s' is already defined",
                                        model, path, m->name); /* before the name goes with the library */
            dlclose(h);
            return st;
        }
        set->types[set->ntype + k] = m;
    }
    set->ntype += c->ntype;
    set->handle[set->n++] = h;
    return CS_OK;
}

const cs_mech_type *cs_catalogue_find(const cs_catalogue_set *set, const char *name) {
    for (int k = 0; k < set->ntype; ++k)
        if (strcmp(set->types[k]->name, name) == 0) return set->types[k];
    return NULL;
}

void cs_catalogue_free(cs_catalogue_set *set) {
    for (int k = 0; k < set->n; ++k) dlclose(set->handle[k]);
    free(set->types);
    memset(set, 0, sizeof *set);
}
