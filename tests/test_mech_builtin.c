/* The built-in mechanisms, generated at build time from mechanisms/NAME.mod by the NMODL compiler
 * (nmodl/), against the hand-written formulas of mechanisms/cs_mech_math.h that the CUDA
 * backend's kernels use: init, current (i and its conductance g), advance, net_receive and fold
 * give the same numbers, bit for bit, on random voltages, states and parameters; and the types
 * keep the interface (parameter and state order, names, ranges) the model reader and the
 * kernels rely on. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "cs_mech.h"
#include "cs_mech_math.h"
#include "cs_model.h"
#include "test_rng.h"

#define N 512

static double v[N], iacc[N], gacc[N], w[N], store[(32 + 64) * N];
static int node[N];



/* A view of N instances on N CVs, parameters and states in one store. */
static cs_mech_view view_of(const cs_mech_type *t, double *params[], double *states[], double dt, double celsius, double tt) {
    for (int j = 0; j < t->nparam; ++j) params[j] = store + (size_t)j * N;
    for (int j = 0; j < t->nstate; ++j) states[j] = store + (size_t)(t->nparam + j) * N;
    cs_mech_view m = {N, node, w, v, iacc, gacc, params, states, tt, dt, celsius, {NULL, NULL, NULL}, {NULL, NULL, NULL},
                      {NULL, NULL, NULL}, {NULL, NULL, NULL}, NULL, NULL, 0, 0.0, NULL, NULL, {NULL, NULL, NULL}, 0, 0};
    return m;
}

static void randomise(void) {
    for (int k = 0; k < N; ++k) {
        node[k] = k;
        v[k] = -100.0 + 150.0 * urand(); /* [mV] */
        w[k] = 1e-2 * (10.0 + 1000.0 * urand());
        iacc[k] = gacc[k] = 0.0;
    }
    v[0] = -40.0; /* vtrap's singular points: the Taylor branch */
    v[1] = -55.0;
    v[2] = -40.0 + 1e-7;
}

START_TEST(test_hh) {
    const cs_mech_type *t = &cs_mech_hh;
    ck_assert_int_eq(t->nparam, CS_HH_NPARAM);
    ck_assert_int_ge(t->nstate, CS_HH_NSTATE);
    static const char *const pn[] = {"gnabar", "gkbar", "gl", "el", "ena", "ek"};
    for (int j = 0; j < CS_HH_NPARAM; ++j) ck_assert_str_eq(t->params[j].name, pn[j]);
    ck_assert_str_eq(t->states[CS_HH_M].name, "m");
    ck_assert_str_eq(t->states[CS_HH_H].name, "h");
    ck_assert_str_eq(t->states[CS_HH_N].name, "n");
    ck_assert(t->params[CS_HH_GNABAR].min == 0.0 && isinf(t->params[CS_HH_GNABAR].max));
    ck_assert(t->params[CS_HH_GNABAR].default_value == 0.12 && t->params[CS_HH_EL].default_value == -54.3);
    double *P[CS_MAX_PARAMS], *S[CS_MAX_STATES];
    for (int rep = 0; rep < 3; ++rep) {
        randomise();
        double celsius = rep == 0 ? 6.3 : 6.3 + 30.0 * urand(), dt = 0.001 + 0.1 * urand();
        cs_mech_view m = view_of(t, P, S, dt, celsius, 0.0);
        for (int j = 0; j < CS_HH_NPARAM; ++j)
            for (int k = 0; k < N; ++k) P[j][k] = j < 3 ? 0.2 * urand() : -90.0 + 150.0 * urand();
        t->init(&m);
        double q10 = cs_hh_q10(celsius);
        for (int k = 0; k < N; ++k) {
            cs_hh_rates r = cs_hh_rates_at(v[k], q10);
            ck_assert_msg(S[CS_HH_M][k] == r.minf && S[CS_HH_H][k] == r.hinf && S[CS_HH_N][k] == r.ninf,
                          "init at v = %.17g", v[k]);
        }
        for (int k = 0; k < N; ++k) { /* states off their steady state */
            S[CS_HH_M][k] = urand();
            S[CS_HH_H][k] = urand();
            S[CS_HH_N][k] = urand();
        }
        t->current(&m);
        for (int k = 0; k < N; ++k) {
            double i, g;
            cs_hh_current_at(v[k], S[CS_HH_M][k], S[CS_HH_H][k], S[CS_HH_N][k], P[0][k], P[1][k], P[2][k], P[3][k],
                             P[4][k], P[5][k], &i, &g);
            ck_assert_msg(iacc[k] == w[k] * i && gacc[k] == w[k] * g, "current at v = %.17g: %.17g %.17g vs %.17g %.17g",
                          v[k], iacc[k], gacc[k], w[k] * i, w[k] * g);
        }
        double m0[N], h0[N], n0[N];
        memcpy(m0, S[CS_HH_M], sizeof m0);
        memcpy(h0, S[CS_HH_H], sizeof h0);
        memcpy(n0, S[CS_HH_N], sizeof n0);
        t->advance(&m);
        for (int k = 0; k < N; ++k) {
            cs_hh_rates r = cs_hh_rates_at(v[k], q10);
            ck_assert_msg(S[CS_HH_M][k] == cs_cnexp(m0[k], r.minf, r.mtau, dt) &&
                          S[CS_HH_H][k] == cs_cnexp(h0[k], r.hinf, r.htau, dt) &&
                          S[CS_HH_N][k] == cs_cnexp(n0[k], r.ninf, r.ntau, dt), "advance at v = %.17g", v[k]);
        }
    }
}
END_TEST

START_TEST(test_expsyn) {
    const cs_mech_type *t = &cs_mech_expsyn;
    ck_assert_int_eq(t->kind, CS_MECH_POINT);
    ck_assert_int_eq(t->receives_events, 1);
    ck_assert_int_eq(t->nparam, CS_EXPSYN_NPARAM);
    ck_assert_str_eq(t->params[CS_EXPSYN_TAU].name, "tau");
    ck_assert_str_eq(t->params[CS_EXPSYN_E].name, "e");
    ck_assert_str_eq(t->states[CS_EXPSYN_G].name, "g");
    ck_assert(t->params[CS_EXPSYN_TAU].min == 1e-9);
    double *P[CS_MAX_PARAMS], *S[CS_MAX_STATES];
    randomise();
    double dt = 0.025;
    cs_mech_view m = view_of(t, P, S, dt, 6.3, 0.0);
    for (int k = 0; k < N; ++k) {
        P[CS_EXPSYN_TAU][k] = 0.1 + 10.0 * urand();
        P[CS_EXPSYN_E][k] = -80.0 + 80.0 * urand();
        w[k] = 1.0;
    }
    t->init(&m);
    for (int k = 0; k < N; ++k) ck_assert(S[CS_EXPSYN_G][k] == 0.0);
    for (int k = 0; k < N; ++k) t->net_receive(&m, k, 0.01 * urand());
    double g0[N];
    memcpy(g0, S[CS_EXPSYN_G], sizeof g0);
    t->current(&m);
    for (int k = 0; k < N; ++k)
        ck_assert(iacc[k] == g0[k] * (v[k] - P[CS_EXPSYN_E][k]) && gacc[k] == g0[k]);
    t->advance(&m);
    for (int k = 0; k < N; ++k) ck_assert(S[CS_EXPSYN_G][k] == cs_expsyn_decay(g0[k], P[CS_EXPSYN_TAU][k], dt));
}
END_TEST

START_TEST(test_iclamp_pas) {
    const cs_mech_type *t = &cs_mech_iclamp;
    ck_assert_int_eq(t->nparam, CS_ICLAMP_NPARAM);
    ck_assert_str_eq(t->params[CS_ICLAMP_DELAY].name, "delay");
    ck_assert_str_eq(t->params[CS_ICLAMP_DURATION].name, "duration");
    ck_assert_str_eq(t->params[CS_ICLAMP_AMPLITUDE].name, "amplitude");
    double *P[CS_MAX_PARAMS], *S[CS_MAX_STATES];
    for (double tt = 0.0125; tt < 3.0; tt += 0.025) {
        randomise();
        cs_mech_view m = view_of(t, P, S, 0.025, 6.3, tt);
        for (int k = 0; k < N; ++k) {
            P[CS_ICLAMP_DELAY][k] = 2.0 * urand();
            P[CS_ICLAMP_DURATION][k] = urand();
            P[CS_ICLAMP_AMPLITUDE][k] = urand() - 0.5;
            iacc[k] = urand();
            w[k] = 1.0; /* a point mechanism's */
        }
        double i0[N];
        memcpy(i0, iacc, sizeof i0);
        t->current(&m);
        for (int k = 0; k < N; ++k) {
            double want = i0[k];
            if (cs_iclamp_on(tt, P[CS_ICLAMP_DELAY][k], P[CS_ICLAMP_DURATION][k])) want -= P[CS_ICLAMP_AMPLITUDE][k];
            ck_assert(iacc[k] == want && gacc[k] == 0.0);
        }
    }
    /* pas folds into the matrix: g = weight·g, ge = weight·g·e */
    t = &cs_mech_pas;
    ck_assert_ptr_nonnull(t->fold);
    ck_assert_str_eq(t->params[CS_PAS_G].name, "g");
    ck_assert_str_eq(t->params[CS_PAS_E].name, "e");
    for (int k = 0; k < 100; ++k) {
        double p[2] = {0.01 * urand(), -90.0 + 40.0 * urand()}, wt = 10.0 * urand(), g, ge;
        t->fold(p, wt, &g, &ge);
        ck_assert(g == wt * p[CS_PAS_G] && ge == wt * p[CS_PAS_G] * p[CS_PAS_E]);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("mech_builtin");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_hh);
    tcase_add_test(tc, test_expsyn);
    tcase_add_test(tc, test_iclamp_pas);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
