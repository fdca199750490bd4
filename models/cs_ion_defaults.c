/* NEURON's default ion state of a population (its own file: the Allen importer and the JSON
 * reader both use it, and the JSON reader calls the importer, so neither may hold it). */
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
