/* Hodgkin–Huxley squid axon channels, as NEURON's hh.mod (the standard): Na, K and leak,
 * gates advanced by cnexp (exact exponential update for fixed v). */
#include <math.h>
#include <stddef.h>

#include "cs_mech.h"

enum { P_GNABAR, P_GKBAR, P_GL, P_EL, P_ENA, P_EK, NPARAM };
enum { S_M, S_H, S_N, NSTATE };

static const cs_mech_field hh_params[NPARAM] = {
    {"gnabar", "S/cm2", 0.12, 0.0, INFINITY},  {"gkbar", "S/cm2", 0.036, 0.0, INFINITY},
    {"gl", "S/cm2", 0.0003, 0.0, INFINITY},    {"el", "mV", -54.3, -INFINITY, INFINITY},
    {"ena", "mV", 50.0, -INFINITY, INFINITY},  {"ek", "mV", -77.0, -INFINITY, INFINITY},
};
static const cs_mech_field hh_states[NSTATE] = {
    {"m", "1", 0.0, 0.0, 1.0}, {"h", "1", 0.0, 0.0, 1.0}, {"n", "1", 0.0, 0.0, 1.0}};

/* x / (exp(x/y) - 1), continued by its Taylor expansion near x = 0 (hh.mod's vtrap). */
static inline double vtrap(double x, double y) {
    double r = x / y;
    return fabs(r) < 1e-6 ? y * (1.0 - r / 2.0) : x / (exp(r) - 1.0);
}

typedef struct { double minf, mtau, hinf, htau, ninf, ntau; } hh_rates; /* tau in [ms] */

static inline hh_rates rates(double v, double q10) {
    hh_rates r;
    double a = 0.1 * vtrap(-(v + 40.0), 10.0), b = 4.0 * exp(-(v + 65.0) / 18.0);
    r.mtau = 1.0 / (q10 * (a + b));
    r.minf = a / (a + b);
    a = 0.07 * exp(-(v + 65.0) / 20.0);
    b = 1.0 / (exp(-(v + 35.0) / 10.0) + 1.0);
    r.htau = 1.0 / (q10 * (a + b));
    r.hinf = a / (a + b);
    a = 0.01 * vtrap(-(v + 55.0), 10.0);
    b = 0.125 * exp(-(v + 65.0) / 80.0);
    r.ntau = 1.0 / (q10 * (a + b));
    r.ninf = a / (a + b);
    return r;
}

static double q10_of(double celsius) { return pow(3.0, (celsius - 6.3) / 10.0); }

static void hh_init(const cs_mech_view *m) {
    double q10 = q10_of(m->celsius);
    for (int k = 0; k < m->n; ++k) {
        hh_rates r = rates(m->v[m->node[k]], q10);
        m->state[S_M][k] = r.minf;
        m->state[S_H][k] = r.hinf;
        m->state[S_N][k] = r.ninf;
    }
}

static void hh_current(const cs_mech_view *m) {
    const double *restrict gnabar = m->param[P_GNABAR], *restrict gkbar = m->param[P_GKBAR];
    const double *restrict gl = m->param[P_GL], *restrict el = m->param[P_EL];
    const double *restrict ena = m->param[P_ENA], *restrict ek = m->param[P_EK];
    const double *restrict mm = m->state[S_M], *restrict hh = m->state[S_H], *restrict nn = m->state[S_N];
    for (int k = 0; k < m->n; ++k) {
        int c = m->node[k];
        double v = m->v[c];
        double n2 = nn[k] * nn[k];
        double gna = gnabar[k] * mm[k] * mm[k] * mm[k] * hh[k]; /* [S/cm²] */
        double gk = gkbar[k] * n2 * n2;                          /* [S/cm²] */
        double i = gna * (v - ena[k]) + gk * (v - ek[k]) + gl[k] * (v - el[k]); /* [mA/cm²] */
        m->i[c] += m->weight[k] * i;
        m->g[c] += m->weight[k] * (gna + gk + gl[k]);
    }
}

static void hh_advance(const cs_mech_view *m) {
    double q10 = q10_of(m->celsius), dt = m->dt;
    double *restrict mm = m->state[S_M], *restrict hh = m->state[S_H], *restrict nn = m->state[S_N];
    for (int k = 0; k < m->n; ++k) {
        hh_rates r = rates(m->v[m->node[k]], q10);
        mm[k] += (1.0 - exp(-dt / r.mtau)) * (r.minf - mm[k]);
        hh[k] += (1.0 - exp(-dt / r.htau)) * (r.hinf - hh[k]);
        nn[k] += (1.0 - exp(-dt / r.ntau)) * (r.ninf - nn[k]);
    }
}

const cs_mech_type cs_mech_hh = {"hh", CS_MECH_DENSITY, 0, NPARAM, hh_params, NSTATE, hh_states,
                                 hh_init, hh_current, hh_advance, NULL};
