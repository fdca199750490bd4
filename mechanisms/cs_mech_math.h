/* The per-instance mathematics of the built-in mechanisms, shared by the CPU mechanisms
 * (mechanisms/cs_mech_*.c) and the CUDA kernels (src/backends/cuda/cs_cuda_kernels.cu), so both backends
 * compute exactly the same formulas. Units as in cs_mech.h. */
#ifndef CS_MECH_MATH_H
#define CS_MECH_MATH_H

#include <math.h>

#ifdef __CUDACC__
#define CS_HD __host__ __device__
#else
#define CS_HD
#endif

/* Parameter and state indices of each mechanism (order of its cs_mech_field tables). */
enum { CS_HH_GNABAR, CS_HH_GKBAR, CS_HH_GL, CS_HH_EL, CS_HH_ENA, CS_HH_EK, CS_HH_NPARAM };
enum { CS_HH_M, CS_HH_H, CS_HH_N, CS_HH_NSTATE };
enum { CS_PAS_G, CS_PAS_E, CS_PAS_NPARAM };
enum { CS_EXPSYN_TAU, CS_EXPSYN_E, CS_EXPSYN_NPARAM };
enum { CS_EXPSYN_G, CS_EXPSYN_NSTATE };
enum { CS_ICLAMP_DELAY, CS_ICLAMP_DURATION, CS_ICLAMP_AMPLITUDE, CS_ICLAMP_NPARAM };

/* ---- hh (NEURON's hh.mod) ---- */

/* x / (exp(x/y) - 1), continued by its Taylor expansion near x = 0 (hh.mod's vtrap). */
static inline CS_HD double cs_hh_vtrap(double x, double y) {
    double r = x / y;
    return fabs(r) < 1e-6 ? y * (1.0 - r / 2.0) : x / (exp(r) - 1.0);
}

/* q10 = 3^((celsius - 6.3)/10) */
static inline CS_HD double cs_hh_q10(double celsius) { return pow(3.0, (celsius - 6.3) / 10.0); }

/* Steady state and time constant [ms] of one gate (CS_HH_M, CS_HH_H, CS_HH_N) at v [mV]: a GPU
 * may give each gate its own thread (src/backends/cuda/cs_cuda_epoch.cu). */
static inline CS_HD void cs_hh_gate_at(double v, double q10, int gate, double *inf, double *tau) {
    double a, b;
    if (gate == CS_HH_M) {
        a = 0.1 * cs_hh_vtrap(-(v + 40.0), 10.0);
        b = 4.0 * exp(-(v + 65.0) / 18.0);
    } else if (gate == CS_HH_H) {
        a = 0.07 * exp(-(v + 65.0) / 20.0);
        b = 1.0 / (exp(-(v + 35.0) / 10.0) + 1.0);
    } else {
        a = 0.01 * cs_hh_vtrap(-(v + 55.0), 10.0);
        b = 0.125 * exp(-(v + 65.0) / 80.0);
    }
    *tau = 1.0 / (q10 * (a + b));
    *inf = a / (a + b);
}

/* Steady states and time constants [ms] of m, h, n at v [mV]. */
typedef struct { double minf, mtau, hinf, htau, ninf, ntau; } cs_hh_rates;

static inline CS_HD cs_hh_rates cs_hh_rates_at(double v, double q10) {
    cs_hh_rates r;
    cs_hh_gate_at(v, q10, CS_HH_M, &r.minf, &r.mtau);
    cs_hh_gate_at(v, q10, CS_HH_H, &r.hinf, &r.htau);
    cs_hh_gate_at(v, q10, CS_HH_N, &r.ninf, &r.ntau);
    return r;
}

/* Current density [mA/cm²] and its conductance [S/cm²] at v with gates m, h, n. */
static inline CS_HD void cs_hh_current_at(double v, double m, double h, double n, double gnabar,
                                          double gkbar, double gl, double el, double ena, double ek,
                                          double *i, double *g) {
    double n2 = n * n;
    double gna = gnabar * m * m * m * h; /* [S/cm²] */
    double gk = gkbar * n2 * n2;         /* [S/cm²] */
    *i = gna * (v - ena) + gk * (v - ek) + gl * (v - el);
    *g = gna + gk + gl;
}

/* cnexp: exact update of a gate x over dt for fixed v. */
static inline CS_HD double cs_cnexp(double x, double xinf, double tau, double dt) {
    return x + (1.0 - exp(-dt / tau)) * (xinf - x);
}

/* ---- expsyn ---- */
static inline CS_HD double cs_expsyn_decay(double g, double tau, double dt) { return g * exp(-dt / tau); }

/* ---- iclamp: on while delay <= t < delay + duration (t: the step's midpoint) ---- */
static inline CS_HD int cs_iclamp_on(double t, double delay, double duration) {
    return t >= delay && t < delay + duration;
}

#endif
