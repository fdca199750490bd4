/* Allen Cell Types models as users download them: a `*_fit.json` parameter file and an SWC
 * morphology, translated into a population of the model (docs/model-format.md, "Allen cells"),
 * following bmtk's rules (bmtk/simulator/bionet/default_setters/cell_models.py):
 *
 *  - morphology: the SWC file with its axon replaced by two 30 µm stubs (cs_axon_stub):
 *    "aibs_perisomatic" 1 µm thick, the first attached to the soma's middle (soma(0.5));
 *    "aibs_allactive" as thick as the removed axon's first and last sections, attached to the
 *    soma's end (soma(1)); the SWC read with NEURON's Import3d conventions for the soma
 *    (cs_swc_options.neurites_at_soma_centre), as bmtk reads it;
 *  - passive: Ra ("ra"), cm per section type ("cm"), e_pas; pas on every region, its g from the
 *    genome's g_pas (all-active files give cm, Ra, e_pas per section in the genome);
 *  - genome: each {section, name, value, mechanism}: mechanism (looked up in the built-ins and
 *    in model->catalogues, which the caller has loaded) on that section type, its parameter
 *    NAME_MECHANISM set; with mechanism "": g_pas, e_pas, cm or Ra of that section type;
 *  - conditions: celsius into model->celsius, erev (ena, ek, eca ...) per section type, v_init.
 * Section types map to regions: soma → soma (SWC 1), axon → axon (2), dend → basal (3),
 * apic → apical (4). Density mechanisms come in NEURON's order of mechanism types (pas, then by
 * name), which orders their updates of a shared concentration as NEURON's does.
 *
 * pop's name, count, first gid, discretisation, synapses, stimuli, detector and probes are the
 * caller's and left alone; for bmtk's discretisation (its run's dL) a caller sets
 * pop->policy = (cs_cv_policy){.max_cv_length = dL, .bmtk_odd = 1}. Filled: morph (SWC + axon
 * stub), cm/cm_tag, Ra/Ra_tag, v_init, density (replaced), ion_e/ion_ci/ion_co (NEURON's defaults,
 * then the fit's erev), and model->celsius. A malformed fit file ends in one line naming it (CS_ERR_PARSE /
 * CS_ERR_INVALID); pop then holds nothing to free beyond what cs_model_free frees. */
#ifndef CS_ALLEN_H
#define CS_ALLEN_H

#include "cs_model.h"

cs_status cs_allen_population(const char *fit_json_path, const char *swc_path,
                              const char *processing /* "aibs_perisomatic" | "aibs_allactive" */,
                              cs_model *model, cs_population_spec *pop);

/* The same from the fit file's text (`name` in messages): the fuzz harness's entry. */
cs_status cs_allen_population_text(const char *json, const char *name, const char *swc_path,
                                   const char *processing, cs_model *model, cs_population_spec *pop);

#endif
