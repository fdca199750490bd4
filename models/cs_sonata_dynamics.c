/* The cell of a biophysical SONATA node type: its morphology and dynamics as bmtk builds them.
 * "aibs_perisomatic" and "aibs_allactive" are the Allen Cell Types importer's (models/cs_allen.h:
 * the fit JSON, bmtk's axon stubs, per-region cm, ions); no model_processing is bmtk's bare
 * Biophys1 cell: the morphology alone, NEURON's defaults, its dynamics_params unused. */
#include <string.h>

#include "cs_allen.h"
#include "cs_sonata_internal.h"

cs_status cs__biophysics(const cs__circuit *c, cs_model *m, const char *where, const char *processing,
                         const char *dyn_path, const char *swc_path, cs_population_spec *ps) {
    (void)c;
    if (!processing) {
        ps->morph.kind = CS_MORPH_SWC;
        snprintf(ps->morph.swc_path, sizeof ps->morph.swc_path, "%s", swc_path);
        ps->morph.swc = (cs_swc_options){.scale = 1.0, .neurites_at_soma_centre = 1}; /* NEURON's Import3d */
        for (int t = 0; t < CS_NTAG; ++t) ps->cm_tag[t] = 1.0; /* NEURON's defaults [µF/cm²], [Ω·cm] */
        ps->cm = 1.0;
        ps->Ra = 35.4;
        cs_population_ion_defaults(ps);
        return CS_OK;
    }
    if (strcmp(processing, "aibs_perisomatic") && strcmp(processing, "aibs_allactive"))
        return cs_error_set(CS_ERR_UNSUPPORTED, "%s: model_processing '%s' (supported: aibs_perisomatic, aibs_allactive)",
                            where, processing);
    if (!dyn_path) return cs_error_set(CS_ERR_PARSE, "%s: %s without dynamics_params", where, processing);
    /* bmtk takes the temperature from the simulation's conditions, never from the fit */
    double celsius = m->celsius;
    cs_status st = cs_allen_population(dyn_path, swc_path, processing, m, ps);
    m->celsius = celsius;
    if (st != CS_OK) return cs_error_set(st, "%s: %s", where, cs_error_message());
    return CS_OK;
}
