#include <string.h>

#include "cs_mech.h"

static const cs_mech_type *const cs__mech_all[] = {&cs_mech_hh,       &cs_mech_pas,      &cs_mech_expsyn,
                                                   &cs_mech_iclamp,   &cs_mech_NetStim,  &cs_mech_IntFire1,
                                                   &cs_mech_IntFire2, &cs_mech_IntFire4, &cs_mech_VecStim};

const cs_mech_type *cs_mech_find(const char *name) {
    for (size_t k = 0; k < sizeof cs__mech_all / sizeof cs__mech_all[0]; ++k)
        if (strcmp(cs__mech_all[k]->name, name) == 0) return cs__mech_all[k];
    return NULL;
}

int cs_mech_param_index(const cs_mech_type *t, const char *name) {
    for (int k = 0; k < t->nparam; ++k)
        if (strcmp(t->params[k].name, name) == 0) return k;
    return -1;
}

const char *cs_mech_names(void) {
    return "hh, pas, expsyn, iclamp (artificial cells: NetStim, IntFire1, IntFire2, IntFire4, VecStim)";
}
