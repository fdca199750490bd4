/* Exponential synapse (NEURON's ExpSyn): g decays with tau, an event adds its weight to g,
 * i = g·(v − e). Point mechanism: g [µS], i [nA]. */
#include <math.h>
#include <stddef.h>

#include "cs_mech.h"
#include "cs_mech_math.h"

static const cs_mech_field expsyn_params[CS_EXPSYN_NPARAM] = {{"tau", "ms", 2.0, 1e-9, INFINITY},
                                                    {"e", "mV", 0.0, -INFINITY, INFINITY}};
static const cs_mech_field expsyn_states[CS_EXPSYN_NSTATE] = {{"g", "uS", 0.0, 0.0, INFINITY}};

static void expsyn_init(const cs_mech_view *m) {
    for (int k = 0; k < m->n; ++k) m->state[CS_EXPSYN_G][k] = 0.0;
}

static void expsyn_current(const cs_mech_view *m) {
    const double *restrict e = m->param[CS_EXPSYN_E], *restrict g = m->state[CS_EXPSYN_G];
    for (int k = 0; k < m->n; ++k) {
        int c = m->node[k];
        m->i[c] += g[k] * (m->v[c] - e[k]);
        m->g[c] += g[k];
    }
}

static void expsyn_advance(const cs_mech_view *m) {
    const double *restrict tau = m->param[CS_EXPSYN_TAU];
    double *restrict g = m->state[CS_EXPSYN_G];
    for (int k = 0; k < m->n; ++k) g[k] = cs_expsyn_decay(g[k], tau[k], m->dt);
}

static void expsyn_receive(const cs_mech_view *m, int instance, double weight) {
    m->state[CS_EXPSYN_G][instance] += weight;
}

const cs_mech_type cs_mech_expsyn = {"expsyn", CS_MECH_POINT, 1, CS_EXPSYN_NPARAM, expsyn_params, CS_EXPSYN_NSTATE,
                                     expsyn_states, expsyn_init, expsyn_current, expsyn_advance,
                                     expsyn_receive, NULL, 0u, 0u, NULL, CS_EXPSYN_NSTATE};
