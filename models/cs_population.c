/* Defaults of a population's specification shared by the model reader (cs_model.c) and the Allen
 * importer (cs_allen.c), and the name a population is known by in the output. */
#include "cs_ion.h"
#include "cs_model.h"

void cs_population_ion_defaults(cs_population_spec *ps) {
    static const double dflt[CS_NION] = CS_ION_DEFAULT_E, dci[CS_NION] = CS_ION_DEFAULT_CI,
                        dco[CS_NION] = CS_ION_DEFAULT_CO;
    for (int i = 0; i < CS_NION; ++i)
        for (int t = 0; t < CS_NTAG; ++t) {
            ps->ion_e[i][t] = dflt[i];
            ps->ion_ci[i][t] = dci[i];
            ps->ion_co[i][t] = dco[i];
        }
}

const char *cs_population_output_name(const cs_population_spec *ps) {
    return ps->output_name[0] ? ps->output_name : ps->name;
}
