/* Exponential synapse (NEURON's ExpSyn): g decays with tau, an event adds its weight to g,
 * i = g·(v − e). Point mechanism: g [µS], i [nA]. */
#include <math.h>
#include <stddef.h>

#include "cs_mech.h"

enum { P_TAU, P_E, NPARAM };
enum { S_G, NSTATE };
static const cs_mech_field expsyn_params[NPARAM] = {{"tau", "ms", 2.0, 1e-9, INFINITY},
                                                    {"e", "mV", 0.0, -INFINITY, INFINITY}};
static const cs_mech_field expsyn_states[NSTATE] = {{"g", "uS", 0.0, 0.0, INFINITY}};

static void expsyn_init(const cs_mech_view *m) {
    for (int k = 0; k < m->n; ++k) m->state[S_G][k] = 0.0;
}

static void expsyn_current(const cs_mech_view *m) {
    const double *restrict e = m->param[P_E], *restrict g = m->state[S_G];
    for (int k = 0; k < m->n; ++k) {
        int c = m->node[k];
        m->i[c] += g[k] * (m->v[c] - e[k]);
        m->g[c] += g[k];
    }
}

static void expsyn_advance(const cs_mech_view *m) {
    const double *restrict tau = m->param[P_TAU];
    double *restrict g = m->state[S_G];
    for (int k = 0; k < m->n; ++k) g[k] *= exp(-m->dt / tau[k]);
}

static void expsyn_receive(const cs_mech_view *m, int instance, double weight) {
    m->state[S_G][instance] += weight;
}

const cs_mech_type cs_mech_expsyn = {"expsyn", CS_MECH_POINT, 1, NPARAM, expsyn_params, NSTATE,
                                     expsyn_states, expsyn_init, expsyn_current, expsyn_advance,
                                     expsyn_receive};
