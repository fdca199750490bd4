/* The model size limits of models/cs_model.h at their boundaries: CS_MODEL_MAX_CELLS cells in
 * one population or in all together parse, one more is a one-line error naming the model and
 * the limit; a random rule whose connections, added to those of the rules before it, pass
 * CS_MODEL_MAX_CONNECTIONS is refused before any connection is stored. Only parsing: no
 * network is built, and the models below take no per-cell memory (no "cells": "all" lists).
 * (tests/test_cli_errors.py runs the same refusals through the command line.) */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_error.h"
#include "cs_model.h"

/* One soma-only population with a synapse. */
#define POP(name, count)                                                                          \
    "{\"name\": \"" name "\", \"count\": " count ", \"morphology\": {\"generator\": \"soma\", "      \
    "\"radius\": 9.4}, \"biophysics\": {\"cm\": 1.0, \"Ra\": 100.0, \"v_init\": -65.0, "              \
    "\"mechanisms\": [{\"name\": \"pas\", \"region\": \"all\"}]}, \"synapses\": [{\"name\": \"syn\", " \
    "\"mechanism\": \"expsyn\", \"location\": {\"branch\": 0, \"pos\": 0.5}}]}"
#define MODEL(pops, conns) \
    "{\"run\": {\"tfinal\": 1.0, \"dt\": 0.025}, \"populations\": [" pops "], \"connections\": [" conns "]}"
#define RANDOM(indeg)                                                                               \
    "{\"type\": \"random\", \"source\": \"p\", \"target\": \"p\", \"synapse\": \"syn\", \"indegree\": " \
    indeg ", \"weight\": 0.01, \"delay\": 1.0}"
#define RING "{\"type\": \"ring\", \"population\": \"p\", \"synapse\": \"syn\", \"weight\": 0.01, \"delay\": 1.0}"

/* Parse `json` as "limits.json": CS_OK, or an error whose one-line message holds every
 * non-NULL word. */
static void expect(const char *json, cs_status want, const char *w1, const char *w2) {
    cs_model m;
    memset(&m, 0, sizeof m);
    cs_error_clear();
    cs_status s = cs_model_parse(json, "limits.json", ".", &m);
    const char *msg = cs_error_message();
    ck_assert_msg(s == want, "status %d (want %d): %s", (int)s, (int)want, msg);
    if (want != CS_OK) {
        ck_assert_msg(strstr(msg, "limits.json") != NULL, "message '%s' does not name the model", msg);
        ck_assert_msg(strchr(msg, '\n') == NULL, "message '%s' is not one line", msg);
        if (w1) ck_assert_msg(strstr(msg, w1) != NULL, "message '%s' lacks '%s'", msg, w1);
        if (w2) ck_assert_msg(strstr(msg, w2) != NULL, "message '%s' lacks '%s'", msg, w2);
    } else {
        cs_model_free(&m);
    }
    cs_error_clear();
}

START_TEST(test_limit_values) {
    /* the documented figures (docs/fuzzing.md, docs/model-format.md) */
    ck_assert_int_eq(CS_MODEL_MAX_CELLS, 10000000);
    ck_assert_int_eq(CS_MODEL_MAX_CONNECTIONS, 100000000);
}
END_TEST

START_TEST(test_cells_one_population) {
    expect(MODEL(POP("p", "10000000"), ""), CS_OK, NULL, NULL);
    expect(MODEL(POP("p", "10000001"), ""), CS_ERR_INVALID, "'count'", "10000000");
}
END_TEST

START_TEST(test_cells_all_populations) {
    expect(MODEL(POP("a", "6000000") "," POP("b", "4000000"), ""), CS_OK, NULL, NULL);
    expect(MODEL(POP("a", "6000000") "," POP("b", "4000001"), ""), CS_ERR_INVALID, "populations[1]",
           "10000001 cells, more than the limit of 10000000");
    /* the sum is not wrapped by many populations at the per-population maximum */
    expect(MODEL(POP("a", "10000000") "," POP("b", "10000000") "," POP("c", "10000000"), ""), CS_ERR_INVALID,
           "populations[1]", "limit of 10000000");
}
END_TEST

START_TEST(test_connections_random) {
    /* 20 000 x 5 001 = 100 020 000 */
    expect(MODEL(POP("p", "20000"), RANDOM("5001")), CS_ERR_INVALID, "connections[0]",
           "limit of 100000000 connections");
    /* 10 000 000 x 9 999 999: far past, without overflowing the count */
    expect(MODEL(POP("p", "10000000"), RANDOM("9999999")), CS_ERR_INVALID, "connections[0]",
           "limit of 100000000 connections");
}
END_TEST

START_TEST(test_connections_after_ring) {
    /* a ring's 20 001 plus 20 001 x 4 999 = 99 984 999 makes 100 005 000 */
    expect(MODEL(POP("p", "20001"), RING "," RANDOM("4999")), CS_ERR_INVALID, "connections[1]",
           "limit of 100000000 connections");
}
END_TEST

int main(void) {
    Suite *s = suite_create("model_limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_limit_values);
    tcase_add_test(tc, test_cells_one_population);
    tcase_add_test(tc, test_cells_all_populations);
    tcase_add_test(tc, test_connections_random);
    tcase_add_test(tc, test_connections_after_ring);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int nf = srunner_ntests_failed(r);
    srunner_free(r);
    return nf ? 1 : 0;
}
