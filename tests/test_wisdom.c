/* auto's wisdom (src/core/cs_wisdom.h): the file's lines parse or are skipped and reported; the last
 * entry of a key wins; an entry stored is found again under its key and not under another; the
 * key changes with the network's shape and the run's threads but not with a parameter's value;
 * CABLESIM_WISDOM=off stores and finds nothing. */
#include <check.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_build.h"
#include "cs_error.h"
#include "cs_model.h"
#include "cs_wisdom.h"

#define TEXT(s) s, strlen(s)

START_TEST(lines_parse_or_are_reported) {
    cs_wisdom_entry e;
    int bad = -1;
    const char *good = "cablesim-wisdom-1 00000000000000ab cuda staged 1.5e-05 3.250\n";
    ck_assert_int_eq(cs_wisdom_find(TEXT(good), 0xab, &e, &bad), 1);
    ck_assert_int_eq(bad, 0);
    ck_assert_str_eq(e.backend, "cuda");
    ck_assert_str_eq(e.solver, "staged");
    ck_assert_double_eq_tol(e.per_step, 1.5e-5, 1e-12);
    ck_assert_double_eq_tol(e.trial, 3.25, 1e-12);
    ck_assert_int_eq(cs_wisdom_find(TEXT(good), 0xac, &e, &bad), 0); /* another key */
    /* the last entry of a key wins; bad lines are skipped, the first named */
    const char *mixed = "cablesim-wisdom-1 ab cpu - 2e-05 1.0\n"
                        "garbage\n"
                        "cablesim-wisdom-1 ab gpu staged 1e-05 1.0\n"      /* unknown backend */
                        "cablesim-wisdom-1 ab cuda staged nan 1.0\n"       /* NaN time */
                        "cablesim-wisdom-1 ab cuda staged -1 1.0\n"        /* negative time */
                        "cablesim-wisdom-1 ab cuda staged 1e-05 1.0 x\n"   /* trailing field */
                        "cablesim-wisdom-2 ab cuda staged 1e-05 1.0\n"     /* another format */
                        "cablesim-wisdom-1 ab cuda warp 3e-05 2.0";        /* no final newline */
    ck_assert_int_eq(cs_wisdom_find(TEXT(mixed), 0xab, &e, &bad), 1);
    ck_assert_int_eq(bad, 2);
    ck_assert_str_eq(e.solver, "warp");
    /* a NUL inside a line, and a line longer than any entry, are malformed, not read past */
    const char nul[] = "cablesim-wisdom-1 ab cpu - 2e-05 1.0\nxx\0yy\n";
    ck_assert_int_eq(cs_wisdom_find(nul, sizeof nul - 1, 0xab, &e, &bad), 1);
    ck_assert_int_eq(bad, 2);
    char longline[600];
    memset(longline, 'a', sizeof longline - 1);
    longline[sizeof longline - 1] = 0;
    ck_assert_int_eq(cs_wisdom_find(TEXT(longline), 0xab, &e, &bad), 0);
    ck_assert_int_eq(bad, 1);
}
END_TEST

START_TEST(store_then_lookup) {
    char path[] = "/tmp/cs_wisdom_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
    char file[600];
    snprintf(file, sizeof file, "%s/sub/wisdom", path); /* folders made on the first store */
    setenv("CABLESIM_WISDOM", file, 1);
    cs_wisdom_entry in = {"cuda", "variable", 2.5e-5, 4.0}, out;
    char where[4096];
    ck_assert_int_eq(cs_wisdom_lookup(42, &out, where, sizeof where), 0); /* no file yet */
    cs_wisdom_store(42, &in);
    cs_wisdom_entry cpu = {"cpu", "", 1e-4, 1.0};
    cs_wisdom_store(7, &cpu);
    ck_assert_int_eq(cs_wisdom_lookup(42, &out, where, sizeof where), 1);
    ck_assert_str_eq(where, file);
    ck_assert_str_eq(out.solver, "variable");
    ck_assert_double_eq_tol(out.per_step, 2.5e-5, 1e-12);
    ck_assert_int_eq(cs_wisdom_lookup(7, &out, where, sizeof where), 1);
    ck_assert_str_eq(out.backend, "cpu");
    ck_assert_str_eq(out.solver, "-");
    ck_assert_int_eq(cs_wisdom_lookup(8, &out, where, sizeof where), 0);
    setenv("CABLESIM_WISDOM", "off", 1);
    ck_assert_int_eq(cs_wisdom_path(where, sizeof where), 0);
    ck_assert_int_eq(cs_wisdom_lookup(42, &out, where, sizeof where), 0);
    unsetenv("CABLESIM_WISDOM");
    unlink(file);
    snprintf(where, sizeof where, "%s/sub", path);
    rmdir(where);
    rmdir(path);
}
END_TEST

/* A ring of `count` ball-and-stick cells with hh and a synapse; gmax as given. */
static uint64_t key_of(int count, int ncv, double gnabar, int threads) {
    char json[1200];
    snprintf(json, sizeof json,
             "{\"run\": {\"tfinal\": 1.0, \"dt\": 0.025}, \"populations\": [{\"name\": \"p\", \"count\": %d, "
             "\"morphology\": {\"generator\": \"ball_and_stick\", \"soma_radius\": 9, \"dend_length\": 200, "
             "\"dend_radius\": 0.5, \"dend_cvs\": %d}, \"biophysics\": {\"cm\": 1.0, \"Ra\": 100.0, \"v_init\": -65.0, "
             "\"mechanisms\": [{\"name\": \"hh\", \"region\": \"all\", \"params\": {\"gnabar\": %g}}]}, "
             "\"synapses\": [{\"name\": \"syn\", \"mechanism\": \"expsyn\", \"location\": {\"branch\": 1, \"pos\": 0.5}}]}], "
             "\"connections\": [{\"type\": \"ring\", \"population\": \"p\", \"synapse\": \"syn\", \"weight\": 0.01, "
             "\"delay\": 1.0}]}",
             count, ncv, gnabar);
    cs_model m;
    memset(&m, 0, sizeof m);
    ck_assert_msg(cs_model_parse(json, "wisdom.json", ".", &m) == CS_OK, "%s", cs_error_message());
    cs_network_desc net;
    ck_assert_msg(cs_build_network(&m, &net) == CS_OK, "%s", cs_error_message());
    cs_backend_params p = {NULL, 0.025, 6.3, threads, 1, 0};
    uint64_t k = cs_wisdom_key(&net, &p, "auto", 128);
    cs_network_desc_free(&net);
    cs_model_free(&m);
    return k;
}

START_TEST(key_follows_the_shape) {
    const uint64_t base = key_of(4, 5, 0.12, 2);
    ck_assert(key_of(4, 5, 0.12, 2) == base);  /* deterministic */
    ck_assert(key_of(4, 5, 0.30, 2) == base);  /* a parameter's value: the same work */
    ck_assert(key_of(5, 5, 0.12, 2) != base);  /* another cell */
    ck_assert(key_of(4, 6, 0.12, 2) != base);  /* another discretisation */
    ck_assert(key_of(4, 5, 0.12, 3) != base);  /* other threads */
}
END_TEST

/* The key hashes its long arrays in blocks on OpenMP threads: the same key whatever the threads
 * that compute it, and still every instance counts (3 000 cells: more than one block) */
START_TEST(key_whatever_the_threads) {
    omp_set_num_threads(1);
    const uint64_t one = key_of(3000, 5, 0.12, 2), other = key_of(3001, 5, 0.12, 2);
    omp_set_num_threads(4);
    ck_assert(key_of(3000, 5, 0.12, 2) == one);
    ck_assert(key_of(3001, 5, 0.12, 2) == other);
    ck_assert(one != other);
}
END_TEST

int main(void) {
    Suite *s = suite_create("wisdom");
    TCase *tc = tcase_create("wisdom");
    tcase_add_test(tc, lines_parse_or_are_reported);
    tcase_add_test(tc, store_then_lookup);
    tcase_add_test(tc, key_follows_the_shape);
    tcase_add_test(tc, key_whatever_the_threads);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
