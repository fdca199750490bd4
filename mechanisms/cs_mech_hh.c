/* Hodgkin–Huxley squid axon channels, as NEURON's hh.mod (the standard): Na, K and leak,
 * gates advanced by cnexp (exact exponential update for fixed v). */
#include <math.h>
#include <stddef.h>

#include "cs_mech.h"
#include "cs_mech_math.h"


static const cs_mech_field hh_params[CS_HH_NPARAM] = {
    {"gnabar", "S/cm2", 0.12, 0.0, INFINITY},  {"gkbar", "S/cm2", 0.036, 0.0, INFINITY},
    {"gl", "S/cm2", 0.0003, 0.0, INFINITY},    {"el", "mV", -54.3, -INFINITY, INFINITY},
    {"ena", "mV", 50.0, -INFINITY, INFINITY},  {"ek", "mV", -77.0, -INFINITY, INFINITY},
};
static const cs_mech_field hh_states[CS_HH_NSTATE] = {
    {"m", "1", 0.0, 0.0, 1.0}, {"h", "1", 0.0, 0.0, 1.0}, {"n", "1", 0.0, 0.0, 1.0}};

static void hh_init(const cs_mech_view *m) {
    double q10 = cs_hh_q10(m->celsius);
    for (int k = 0; k < m->n; ++k) {
        cs_hh_rates r = cs_hh_rates_at(m->v[m->node[k]], q10);
        m->state[CS_HH_M][k] = r.minf;
        m->state[CS_HH_H][k] = r.hinf;
        m->state[CS_HH_N][k] = r.ninf;
    }
}

static void hh_current(const cs_mech_view *m) {
    const double *restrict gnabar = m->param[CS_HH_GNABAR], *restrict gkbar = m->param[CS_HH_GKBAR];
    const double *restrict gl = m->param[CS_HH_GL], *restrict el = m->param[CS_HH_EL];
    const double *restrict ena = m->param[CS_HH_ENA], *restrict ek = m->param[CS_HH_EK];
    const double *restrict mm = m->state[CS_HH_M], *restrict hh = m->state[CS_HH_H], *restrict nn = m->state[CS_HH_N];
    for (int k = 0; k < m->n; ++k) {
        int c = m->node[k];
        double v = m->v[c];
        double i, g; /* [mA/cm²], [S/cm²] */
        cs_hh_current_at(v, mm[k], hh[k], nn[k], gnabar[k], gkbar[k], gl[k], el[k], ena[k], ek[k], &i, &g);
        m->i[c] += m->weight[k] * i;
        m->g[c] += m->weight[k] * g;
    }
}

static void hh_advance(const cs_mech_view *m) {
    double q10 = cs_hh_q10(m->celsius), dt = m->dt;
    double *restrict mm = m->state[CS_HH_M], *restrict hh = m->state[CS_HH_H], *restrict nn = m->state[CS_HH_N];
    for (int k = 0; k < m->n; ++k) {
        cs_hh_rates r = cs_hh_rates_at(m->v[m->node[k]], q10);
        mm[k] = cs_cnexp(mm[k], r.minf, r.mtau, dt);
        hh[k] = cs_cnexp(hh[k], r.hinf, r.htau, dt);
        nn[k] = cs_cnexp(nn[k], r.ninf, r.ntau, dt);
    }
}

const cs_mech_type cs_mech_hh = {"hh", CS_MECH_DENSITY, 0, CS_HH_NPARAM, hh_params, CS_HH_NSTATE, hh_states,
                                 hh_init, hh_current, hh_advance, NULL, NULL, 0u, 0u, NULL, CS_HH_NSTATE};
