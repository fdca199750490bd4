/* Current clamp (NEURON's IClamp): injects `amplitude` [nA] while delay <= t < delay + duration,
 * t being the step's midpoint as in NEURON's fixed step. Injected current is inward. */
#include <math.h>
#include <stddef.h>

#include "cs_mech.h"
#include "cs_mech_math.h"

static const cs_mech_field iclamp_params[CS_ICLAMP_NPARAM] = {
    {"delay", "ms", 0.0, 0.0, INFINITY},
    {"duration", "ms", 0.0, 0.0, INFINITY},
    {"amplitude", "nA", 0.0, -INFINITY, INFINITY}};

static void iclamp_init(const cs_mech_view *m) { (void)m; }

static void iclamp_current(const cs_mech_view *m) {
    const double *restrict del = m->param[CS_ICLAMP_DELAY], *restrict dur = m->param[CS_ICLAMP_DURATION];
    const double *restrict amp = m->param[CS_ICLAMP_AMPLITUDE];
    for (int k = 0; k < m->n; ++k)
        if (cs_iclamp_on(m->t, del[k], dur[k])) m->i[m->node[k]] -= amp[k];
}

static void iclamp_advance(const cs_mech_view *m) { (void)m; }

const cs_mech_type cs_mech_iclamp = {"iclamp", CS_MECH_POINT, 0, CS_ICLAMP_NPARAM, iclamp_params, 0, NULL,
                                     iclamp_init, iclamp_current, iclamp_advance, NULL, NULL, 0u, 0u, NULL, 0};
