/* The public C API (src/api/cablesim.h), which the CLI and the Python package use: a run resumed
 * at times off the step and epoch grids gives bitwise the spikes and traces of one run; the
 * spikes come sorted by (time, gid); errors are statuses with one-line messages; a run past
 * tfinal is refused with a file and allowed without one; options structs of an older, shorter
 * size are accepted. Run under ASan + UBSan by scripts/test.sh. (tests/python compares the
 * same results with the CLI's files.) */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cablesim.h"

/* A ring of six ball-and-stick cells (delay 1.5 ms: epochs of 60 steps of 0.025 ms), a clamp
 * on cell 0 that starts the activity, probes on every cell at 0.05 ms: 10 spikes in 20 ms. */
static const char *MODEL =
    "{\"run\": {\"tfinal\": 20.0, \"dt\": 0.025},"
    " \"populations\": [{\"name\": \"bs\", \"count\": 6,"
    "  \"morphology\": {\"generator\": \"ball_and_stick\", \"soma_radius\": 8.0, \"dend_length\": 200.0,"
    "                 \"dend_radius\": 0.5, \"dend_cvs\": 5},"
    "  \"biophysics\": {\"cm\": 1.0, \"Ra\": 100.0, \"v_init\": -65.0,"
    "                 \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"},"
    "                                {\"name\": \"pas\", \"region\": \"dend\", \"params\": {\"g\": 0.0001, \"e\": -65.0}}]},"
    "  \"synapses\": [{\"name\": \"syn\", \"mechanism\": \"expsyn\", \"location\": {\"branch\": 0, \"pos\": 0.5},"
    "                \"params\": {\"tau\": 2.0, \"e\": 0.0}}],"
    "  \"stimuli\": [{\"mechanism\": \"iclamp\", \"location\": {\"branch\": 0, \"pos\": 0.5}, \"cells\": [0],"
    "               \"params\": {\"delay\": 1.0, \"duration\": 15.0, \"amplitude\": 0.3}}],"
    "  \"detector\": {\"location\": {\"branch\": 0, \"pos\": 0.5}, \"threshold\": -10.0},"
    "  \"probes\": {\"cells\": \"all\", \"locations\": [{\"branch\": 0, \"pos\": 0.5}, {\"branch\": 1, \"pos\": 1.0}],"
    "             \"interval\": 0.05}}],"
    " \"connections\": [{\"type\": \"ring\", \"population\": \"bs\", \"synapse\": \"syn\", \"weight\": 0.05,"
    "                   \"delay\": 1.5}]}";

typedef struct {
    size_t nspike, nrow, ncol;
    uint64_t *gid;
    double *time, *rows;
} results;

static cs_simulation *make(const char *output) {
    cs_simulation_options o;
    cs_simulation_options_init(&o);
    o.backend = "cpu";
    o.threads = 2;
    o.keep_spikes = o.keep_traces = 1;
    o.output_path = output;
    cs_simulation *s = NULL;
    int st = cs_simulation_create_json(MODEL, "api.json", ".", &o, &s);
    ck_assert_msg(st == CS_API_OK && s, "create: %d %s", st, cs_api_last_error());
    return s;
}

static results read_results(const cs_simulation *s) {
    cs_simulation_info i = {.size = sizeof i};
    ck_assert_int_eq(cs_simulation_get_info(s, &i), CS_API_OK);
    results r = {i.kept_spikes, i.trace_rows, i.probes, NULL, NULL, NULL};
    r.gid = malloc((r.nspike + 1) * sizeof *r.gid);
    r.time = malloc((r.nspike + 1) * sizeof *r.time);
    r.rows = malloc((r.nrow * r.ncol + 1) * sizeof *r.rows);
    ck_assert_int_eq(cs_simulation_spikes(s, r.nspike, r.gid, r.time), CS_API_OK);
    ck_assert_int_eq(cs_simulation_traces(s, r.nrow, r.rows), CS_API_OK);
    return r;
}

static void free_results(results *r) {
    free(r->gid);
    free(r->time);
    free(r->rows);
}

START_TEST(test_resumed_equals_one_run) {
    cs_simulation *one = make(NULL);
    ck_assert_int_eq(cs_simulation_run(one, 20.0), CS_API_OK);
    results a = read_results(one);
    ck_assert_msg(a.nspike >= 8, "only %zu spikes", a.nspike);
    ck_assert_uint_eq(a.nrow, 401); /* 0, 0.05, ..., 20 ms */
    ck_assert_uint_eq(a.ncol, 12);
    for (size_t k = 1; k < a.nspike; ++k)
        ck_assert(a.time[k - 1] < a.time[k] || (a.time[k - 1] == a.time[k] && a.gid[k - 1] < a.gid[k]));

    static const double cuts[][4] = {{10.0, -1}, {0.0, 1.5125, 7.3, -1}, {0.025, 3.0, 19.975, -1}};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; ++c) {
        cs_simulation *s = make(NULL);
        for (int k = 0; cuts[c][k] >= 0; ++k) ck_assert_int_eq(cs_simulation_run(s, cuts[c][k]), CS_API_OK);
        ck_assert_int_eq(cs_simulation_run(s, 20.0), CS_API_OK);
        results b = read_results(s);
        ck_assert_uint_eq(b.nspike, a.nspike);
        ck_assert_uint_eq(b.nrow, a.nrow);
        ck_assert(!memcmp(a.gid, b.gid, a.nspike * sizeof *a.gid));
        ck_assert(!memcmp(a.time, b.time, a.nspike * sizeof *a.time));
        ck_assert(!memcmp(a.rows, b.rows, a.nrow * a.ncol * sizeof *a.rows));
        free_results(&b);
        cs_simulation_free(s);
    }
    free_results(&a);
    cs_simulation_free(one);
}
END_TEST

START_TEST(test_times_and_tfinal) {
    cs_simulation *s = make(NULL);
    cs_simulation_info i = {.size = sizeof i};
    ck_assert_int_eq(cs_simulation_run(s, 5.01), CS_API_OK); /* rounded to step 200 */
    ck_assert_int_eq(cs_simulation_get_info(s, &i), CS_API_OK);
    ck_assert_int_eq(i.steps, 200);
    ck_assert_int_eq(cs_simulation_run(s, 5.0), CS_API_OK); /* the current time: nothing */
    ck_assert_int_eq(cs_simulation_run(s, 4.0), -3);
    ck_assert_str_eq(cs_api_last_error(), "run to t = 4 ms: the simulation is already at t = 5 ms");
    /* without a file, past tfinal goes on */
    ck_assert_int_eq(cs_simulation_run(s, 25.0), CS_API_OK);
    ck_assert_int_eq(cs_simulation_get_info(s, &i), CS_API_OK);
    ck_assert_int_eq(i.steps, 1000);
    ck_assert_double_eq(i.tfinal, 25.0);
    ck_assert_uint_eq(i.trace_rows, 501);
    int n = cs_simulation_profile(s, 0, NULL, NULL, NULL);
    ck_assert_int_gt(n, 5);
    const char *names[32];
    double sec[32], share[32];
    ck_assert_int_eq(cs_simulation_profile(s, n, names, sec, share), n);
    ck_assert_str_eq(names[0], "event delivery");
    cs_simulation_free(s);

    /* with a file, tfinal is the end of its time axis */
    char path[] = "/tmp/cs_test_api_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    s = make(path);
    ck_assert_int_eq(cs_simulation_run(s, 20.5), -3);
    ck_assert_msg(strstr(cs_api_last_error(), "past tfinal = 20 ms") != NULL, "%s", cs_api_last_error());
    ck_assert_int_eq(cs_simulation_run(s, 20.0), CS_API_OK);
    cs_simulation_free(s);
    remove(path);
}
END_TEST

START_TEST(test_errors) {
    cs_simulation *s = (cs_simulation *)&s;
    ck_assert_int_eq(cs_simulation_create_file("/nonexistent/model.json", NULL, &s), -1);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(cs_api_last_error(), "/nonexistent/model.json: cannot open model file") != NULL, "%s",
                  cs_api_last_error());
    ck_assert_int_eq(cs_simulation_create_json("{\"run\": ", "bad.json", NULL, NULL, &s), -2);
    ck_assert_msg(!strncmp(cs_api_last_error(), "bad.json:1:", 11), "%s", cs_api_last_error());
    ck_assert_int_eq(cs_model_check_json("{\"run\": ", "bad.json", NULL), -2);
    ck_assert_int_eq(cs_model_check_json(MODEL, "ok.json", NULL), CS_API_OK);
    ck_assert_str_eq(cs_api_last_error(), ""); /* a successful call clears the message */
    cs_simulation_options o;
    cs_simulation_options_init(&o);
    o.backend = "tpu";
    ck_assert_int_eq(cs_simulation_create_json(MODEL, "api.json", NULL, &o, &s), -3);
    ck_assert_str_eq(cs_api_last_error(), "unknown backend 'tpu' (expected cpu, cuda or auto)");
    /* traces that would pass the memory bound: refused before the run, and every later run
     * repeats the message */
    cs_simulation_options_init(&o);
    o.backend = "cpu";
    o.keep_traces = 1;
    o.trace_memory_limit = 1000;
    ck_assert_int_eq(cs_simulation_create_json(MODEL, "api.json", NULL, &o, &s), CS_API_OK);
    ck_assert_int_eq(cs_simulation_run(s, 20.0), -4);
    char first[1024];
    snprintf(first, sizeof first, "%s", cs_api_last_error());
    ck_assert_msg(strstr(first, "more than the limit of 1000 bytes") != NULL, "%s", first);
    ck_assert_int_eq(cs_simulation_run(s, 1.0), -4);
    ck_assert_str_eq(cs_api_last_error(), first);
    cs_simulation_free(s);
    cs_simulation_free(NULL);
}
END_TEST

/* A caller compiled against a shorter options struct (only up to `progress`): the fields it
 * does not know keep their defaults (nothing kept in memory). */
START_TEST(test_short_options_struct) {
    cs_simulation_options o;
    cs_simulation_options_init(&o);
    o.backend = "cpu";
    o.keep_spikes = 1; /* beyond the size below: must be ignored */
    o.size = offsetof(cs_simulation_options, keep_spikes);
    cs_simulation *s = NULL;
    ck_assert_int_eq(cs_simulation_create_json(MODEL, "api.json", NULL, &o, &s), CS_API_OK);
    ck_assert_int_eq(cs_simulation_run(s, 10.0), CS_API_OK);
    cs_simulation_info i = {.size = offsetof(cs_simulation_info, backend)}; /* a shorter info too */
    ck_assert_int_eq(cs_simulation_get_info(s, &i), CS_API_OK);
    ck_assert_int_eq(i.steps, 400);
    ck_assert_uint_gt(i.spikes, 0);
    cs_simulation_info full = {.size = sizeof full};
    ck_assert_int_eq(cs_simulation_get_info(s, &full), CS_API_OK);
    ck_assert_uint_eq(full.kept_spikes, 0);
    ck_assert_str_eq(full.backend, "cpu");
    cs_simulation_free(s);
}
END_TEST

int main(void) {
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("api");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_resumed_equals_one_run);
    tcase_add_test(tc, test_times_and_tfinal);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_short_options_struct);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int nf = srunner_ntests_failed(r);
    srunner_free(r);
    return nf ? 1 : 0;
}
