/* Passive leak: i = g·(v − e). */
#include <math.h>
#include <stddef.h>

#include "cs_mech.h"
#include "cs_mech_math.h"

static const cs_mech_field pas_params[CS_PAS_NPARAM] = {{"g", "S/cm2", 0.001, 0.0, INFINITY},
                                                 {"e", "mV", -70.0, -INFINITY, INFINITY}};

static void pas_init(const cs_mech_view *m) { (void)m; }

static void pas_current(const cs_mech_view *m) {
    const double *restrict g = m->param[CS_PAS_G], *restrict e = m->param[CS_PAS_E];
    for (int k = 0; k < m->n; ++k) {
        int c = m->node[k];
        m->i[c] += m->weight[k] * g[k] * (m->v[c] - e[k]); /* [nA] */
        m->g[c] += m->weight[k] * g[k];                     /* [µS] */
    }
}

static void pas_advance(const cs_mech_view *m) { (void)m; }

static void pas_fold(const double *param, double weight, double *g, double *ge) {
    *g = weight * param[CS_PAS_G];             /* [µS] */
    *ge = weight * param[CS_PAS_G] * param[CS_PAS_E]; /* [nA] */
}

const cs_mech_type cs_mech_pas = {"pas", CS_MECH_DENSITY, 0, CS_PAS_NPARAM, pas_params, 0, NULL,
                                  pas_init, pas_current, pas_advance, NULL, pas_fold, 0u, 0u, NULL, 0};
