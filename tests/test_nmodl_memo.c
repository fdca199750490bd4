/* The CPU's memo of exp and pow in generated mechanisms (nmodl/cs_nmodl_rt.h): whatever the
 * sequence of arguments, every call returns bit for bit what exp or pow returns, including
 * arguments that compare equal but differ in bits (-0.0 and 0.0: pow(-0.0, -1) = -inf), NaN, and
 * more distinct arguments than the memo holds. Reference: exp and pow called directly. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check_suite.h"
#include "cs_nmodl_rt.h"

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static unsigned long long rng = 88172645463325252ULL;
static unsigned next(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

/* -dt/tau [1] of a few synapse types, in runs and interleaved, as instances come */
START_TEST(exp_matches_exp) {
    const double dt = 0.025, tau[] = {1.0, 3.0, 2.7, 15.0, 0.5};
    cs_nmodl_memo m;
    memset(&m, 0, sizeof m);
    for (int ntype = 1; ntype <= 5; ++ntype)
        for (int k = 0; k < 20000; ++k) {
            unsigned j = next() % 4 == 0 ? (unsigned)(k / 7) % (unsigned)ntype : next() % (unsigned)ntype;
            double x = -dt / tau[j];
            double y = cs_nmodl_exp_m(&m, x);
            ck_assert_msg(same_bits(y, exp(x)), "exp(%.17g): memo %.17g, exp %.17g", x, y, exp(x));
        }
    /* special values */
    const double xs[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, 709.0, -745.5, 1e-300, 0.0};
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; ++k) {
        double y = cs_nmodl_exp_m(&m, xs[k]);
        if (isnan(xs[k])) ck_assert(isnan(y));
        else ck_assert_msg(same_bits(y, exp(xs[k])), "exp(%g)", xs[k]);
    }
    /* NULL: no memo (the GPU, INITIAL) */
    ck_assert(same_bits(cs_nmodl_exp_m(NULL, -0.1), exp(-0.1)));
}
END_TEST

/* q10 factors and the like: the same base with other exponents, and signed zeros */
START_TEST(pow_matches_pow) {
    cs_nmodl_memo m;
    memset(&m, 0, sizeof m);
    const double base[] = {2.3, 3.0, 2.3, -0.0, 0.0, -0.0, 2.0, 0.5};
    const double expo[] = {1.3, 1.3, 0.8, -1.0, -1.0, -1.0, 0.5, 1.3};
    for (int rep = 0; rep < 3; ++rep)
        for (size_t k = 0; k < sizeof base / sizeof base[0]; ++k) {
            double y = cs_nmodl_pow_m(&m, base[k], expo[k]);
            ck_assert_msg(same_bits(y, pow(base[k], expo[k])), "pow(%g, %g): memo %g, pow %g", base[k], expo[k], y,
                          pow(base[k], expo[k]));
        }
    for (int k = 0; k < 20000; ++k) {
        double b = 1.5 + (double)(next() % 3), e = 0.1 * (double)(next() % 4);
        ck_assert(same_bits(cs_nmodl_pow_m(&m, b, e), pow(b, e)));
    }
    ck_assert(same_bits(cs_nmodl_pow_m(NULL, 2.3, 1.3), pow(2.3, 1.3)));
}
END_TEST

int main(void) {
    Suite *s = suite_create("nmodl_memo");
    TCase *tc = tcase_create("memo");
    tcase_add_test(tc, exp_matches_exp);
    tcase_add_test(tc, pow_matches_pow);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
