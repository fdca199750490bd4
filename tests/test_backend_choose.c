/* auto's choice (src/core/cs_backend_choose.h), the parts that run without a GPU: the threshold
 * of the solver-level trial read from CABLESIM_AUTO_SOLVER_TRIAL (a number, "off", or one line
 * naming a malformed value); where the CPU is a candidate (--backend auto on a small network) the
 * whole-instance trial runs whatever the threshold, so a malformed value is never read there; the
 * solver-level trial refuses with one line a backend that is not the GPU's (the CPU-only build's
 * stub, or no device). On the GPU, tests/test_backend_cuda.py runs the solver-level trial itself. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_backend_choose.h"
#include "cs_build.h"
#include "cs_error.h"
#include "cs_model.h"

START_TEST(threshold_from_the_environment) {
    uint64_t n = 0;
    unsetenv("CABLESIM_AUTO_SOLVER_TRIAL");
    ck_assert_int_eq(cs_backend_solver_trial_min(&n), CS_OK);
    ck_assert_uint_eq(n, 2000000u); /* the default: docs/gpu.md */
    setenv("CABLESIM_AUTO_SOLVER_TRIAL", "0", 1);
    ck_assert_int_eq(cs_backend_solver_trial_min(&n), CS_OK);
    ck_assert_uint_eq(n, 0u);
    setenv("CABLESIM_AUTO_SOLVER_TRIAL", "12345678", 1);
    ck_assert_int_eq(cs_backend_solver_trial_min(&n), CS_OK);
    ck_assert_uint_eq(n, 12345678u);
    setenv("CABLESIM_AUTO_SOLVER_TRIAL", "off", 1);
    ck_assert_int_eq(cs_backend_solver_trial_min(&n), CS_OK);
    ck_assert(n == UINT64_MAX);
    const char *bad[] = {"2e6", "-1", "12x", "on"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        setenv("CABLESIM_AUTO_SOLVER_TRIAL", bad[k], 1);
        ck_assert_int_eq(cs_backend_solver_trial_min(&n), CS_ERR_INVALID);
        ck_assert_msg(strstr(cs_error_message(), "CABLESIM_AUTO_SOLVER_TRIAL") && strstr(cs_error_message(), bad[k]) &&
                          !strchr(cs_error_message(), '\n'),
                      "%s", cs_error_message());
        cs_error_clear();
    }
    unsetenv("CABLESIM_AUTO_SOLVER_TRIAL");
}
END_TEST

/* a ring of 4 ball-and-stick cells with hh and a synapse (6 compartments each) */
static void ring(cs_model *m, cs_network_desc *net) {
    const char *json =
        "{\"run\": {\"tfinal\": 1.0, \"dt\": 0.025}, \"populations\": [{\"name\": \"p\", \"count\": 4, "
        "\"morphology\": {\"generator\": \"ball_and_stick\", \"soma_radius\": 9, \"dend_length\": 200, "
        "\"dend_radius\": 0.5, \"dend_cvs\": 5}, \"biophysics\": {\"cm\": 1.0, \"Ra\": 100.0, \"v_init\": -65.0, "
        "\"mechanisms\": [{\"name\": \"hh\", \"region\": \"all\"}]}, "
        "\"synapses\": [{\"name\": \"syn\", \"mechanism\": \"expsyn\", \"location\": {\"branch\": 1, \"pos\": 0.5}}]}], "
        "\"connections\": [{\"type\": \"ring\", \"population\": \"p\", \"synapse\": \"syn\", \"weight\": 0.01, "
        "\"delay\": 1.0}]}";
    memset(m, 0, sizeof *m);
    ck_assert_msg(cs_model_parse(json, "choose.json", ".", m) == CS_OK, "%s", cs_error_message());
    ck_assert_msg(cs_build_network(m, net) == CS_OK, "%s", cs_error_message());
}

START_TEST(small_networks_keep_the_whole_trial) {
    cs_model m;
    cs_network_desc net;
    ring(&m, &net);
    setenv("CABLESIM_WISDOM", "off", 1);
    cs_backend_params p = {NULL, 0.025, 6.3, 1, 1, 0};
    cs_backend_choice out;
    /* the CPU is a candidate: the whole-instance trial (or none without a GPU), whatever the
     * threshold says, and a malformed threshold is not read */
    const char *env[] = {"0", "not-a-number"};
    for (size_t k = 0; k < 2; ++k) {
        setenv("CABLESIM_AUTO_SOLVER_TRIAL", env[k], 1);
        ck_assert_msg(cs_backend_choose(&net, &p, "auto", 8, &out) == CS_OK, "%s", cs_error_message());
        ck_assert_ptr_nonnull(out.ops);
        ck_assert_msg(!strstr(out.report, "solver-level"), "%s", out.report);
        if (!cs_backend_cuda()) {
            ck_assert_ptr_eq(out.ops, &cs_backend_cpu);
            ck_assert_str_eq(out.report, "auto: no GPU, so the CPU (no trial)");
        }
    }
    /* the CPU named: nothing timed */
    ck_assert_int_eq(cs_backend_choose(&net, &p, "cpu", 8, &out), CS_OK);
    ck_assert_ptr_eq(out.ops, &cs_backend_cpu);
    ck_assert_str_eq(out.report, "backend named: no trial");
    unsetenv("CABLESIM_AUTO_SOLVER_TRIAL");
    unsetenv("CABLESIM_WISDOM");
    cs_network_desc_free(&net);
    cs_model_free(&m);
}
END_TEST

START_TEST(solver_trial_needs_the_gpu_backend) {
    cs_model m;
    cs_network_desc net;
    ring(&m, &net);
    cs_backend_params p = {NULL, 0.025, 6.3, 1, 1, 0};
    cs_solver_trial t;
    memset(&t, 0, sizeof t);
    t.name = "fine";
    ck_assert_int_eq(cs_backend_cuda_solver_trial(&cs_backend_cpu, &net, &p, 8, 3.0, &t, 1, NULL), CS_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(cs_error_message(), "backend 'cuda'") && !strchr(cs_error_message(), '\n'), "%s",
                  cs_error_message());
    cs_error_clear();
    cs_network_desc_free(&net);
    cs_model_free(&m);
}
END_TEST

int main(void) {
    Suite *s = suite_create("backend_choose");
    TCase *tc = tcase_create("backend_choose");
    tcase_add_test(tc, threshold_from_the_environment);
    tcase_add_test(tc, small_networks_keep_the_whole_trial);
    tcase_add_test(tc, solver_trial_needs_the_gpu_backend);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
