/* Ions as NEURON's eion.cpp models them: valences, default concentrations, Nernst's reversal
 * potential, and the ion style a CV's mechanisms give each ion. Shared by the model reader,
 * both backends and the CUDA kernels, so every one computes the same numbers. */
#ifndef CS_ION_H
#define CS_ION_H

#include "cs_mech.h"
#include "cs_mech_math.h" /* CS_HD */

/* Valences of na, k, ca (CS_ION_*). */
#define CS_ION_VALENCE {1.0, 1.0, 2.0}
/* NEURON's default concentrations [mM] (membdef.h: nai0_na_ion ... cao0_ca_ion). */
#define CS_ION_DEFAULT_CI {10.0, 54.4, 5e-5}
#define CS_ION_DEFAULT_CO {140.0, 2.5, 2.0}

/* The gas and Faraday constants NEURON 9 uses (CODATA 2018) [J/(K·mol)], [C/mol]. */
#define CS_GAS_CONSTANT 8.314462618
#define CS_FARADAY 96485.33212

/* Nernst's reversal potential [mV] of concentrations ci, co [mM] of valence z at celsius [°C];
 * NEURON's nrn_nernst with its guards: 1e6 for ci <= 0, -1e6 for co <= 0. */
static inline CS_HD double cs_nernst(double ci, double co, double z, double celsius) {
    if (z == 0.0) return 0.0;
    if (ci <= 0.0) return 1e6;
    if (co <= 0.0) return -1e6;
    const double ktf = 1000.0 * CS_GAS_CONSTANT * (celsius + 273.15) / CS_FARADAY; /* [mV] */
    return ktf / z * log(co / ci);
}

/* A CV's style of an ion, the highest of its mechanisms' (NEURON's nrn_promote, with no WRITE of
 * a reversal potential): 0 no mechanism uses the concentrations (e as the model sets it), 1 some
 * read them (e = Nernst at initialisation), 3 some write them (e = Nernst at every step). */
enum { CS_ION_STYLE_NONE = 0, CS_ION_STYLE_READ = 1, CS_ION_STYLE_WRITE = 3 };

static inline int cs_ion_style_of(const cs_mech_type *t, int ion) {
    return (t->conc_write >> ion) & 1u ? CS_ION_STYLE_WRITE : (t->conc_read >> ion) & 1u ? CS_ION_STYLE_READ : CS_ION_STYLE_NONE;
}

/* The ions a type touches in any way (e, i, or a concentration). */
static inline unsigned cs_ion_used(const cs_mech_type *t) {
    return t->ion_read | t->ion_write | t->conc_read | t->conc_write;
}

#endif
