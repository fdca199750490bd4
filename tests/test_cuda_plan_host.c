/* The host arrays that the CUDA backend's set-up and auto's solver-level trial build from a network
 * (src/backends/cuda/cs_backend_cuda_plan.c), on OpenMP threads since session 22: the tree-order
 * parents, each constant array of the matrix (pas folded into d0 and b0) and the rows with current
 * must equal, bit for bit, what one pass cell by cell and instance by instance builds (the
 * reference below: the code before the threads). No GPU needed; skipped (77) in a build without
 * CUDA, where these functions are not compiled. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cs_build.h"
#include "cs_error.h"
#include "cs_model.h"

#ifdef CS_HAVE_CUDA
#include "check_suite.h"
#include <omp.h>

#include "cs_backend_cuda_internal.h"
#include "cs_cable_matrix.h"

/* Two populations of different cells, over a million compartments (the threads' threshold):
 * 1 200 ball-and-sticks of 601 and 800 of 401 compartments, hh on the soma (current), pas on the
 * dendrites (folded) */
static void network(cs_model *m, cs_network_desc *net) {
    const char *json =
        "{\"run\": {\"tfinal\": 1.0, \"dt\": 0.025}, \"populations\": ["
        "{\"name\": \"a\", \"count\": 1200, \"morphology\": {\"generator\": \"ball_and_stick\", \"soma_radius\": 9, "
        "\"dend_length\": 600, \"dend_radius\": 0.5, \"dend_cvs\": 600}, \"biophysics\": {\"cm\": 1.0, \"Ra\": 100.0, "
        "\"v_init\": -65.0, \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"}, {\"name\": \"pas\", "
        "\"region\": \"dend\"}]}},"
        "{\"name\": \"b\", \"count\": 800, \"morphology\": {\"generator\": \"ball_and_stick\", \"soma_radius\": 7, "
        "\"dend_length\": 350, \"dend_radius\": 0.7, \"dend_cvs\": 400}, \"biophysics\": {\"cm\": 0.9, \"Ra\": 150.0, "
        "\"v_init\": -70.0, \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"}, {\"name\": \"pas\", "
        "\"region\": \"dend\"}]}}]}";
    memset(m, 0, sizeof *m);
    ck_assert_msg(cs_model_parse(json, "plan_host.json", ".", m) == CS_OK, "%s", cs_error_message());
    ck_assert_msg(cs_build_network(m, net) == CS_OK, "%s", cs_error_message());
    ck_assert_uint_ge(net->total_cv, 1000000u);
}

START_TEST(host_arrays_on_threads_equal_one_pass) {
    omp_set_num_threads(3); /* more threads than this machine's cores: any split */
    cs_model m;
    cs_network_desc net;
    network(&m, &net);
    const double dt = 0.025; /* [ms] */
    const size_t nrow = (size_t)net.total_cv;
    int *first = NULL, *parent = NULL;
    ck_assert_int_eq(cs__cuda_tree_structure(&net, dt, &first, &parent), CS_OK);
    /* the reference: one pass, cell by cell */
    int *pref = malloc(nrow * sizeof *pref);
    ck_assert_ptr_nonnull(pref);
    int row = 0;
    for (size_t c = 0; c < net.ncell; ++c) {
        ck_assert_int_eq(first[c], row);
        cs_cable_matrix_cell(&net.cells[c], dt, row, pref, NULL, NULL, NULL, NULL);
        row += net.cells[c].geom->ncv;
    }
    ck_assert_int_eq(first[net.ncell], row);
    ck_assert(memcmp(pref, parent, nrow * sizeof *pref) == 0);
    for (int k = 0; k < CS__NCONST; ++k) {
        double *got = cs__cuda_matrix_array(&net, dt, first, k), *want = calloc(nrow, sizeof *want);
        ck_assert(got && want);
        for (size_t c = 0; c < net.ncell; ++c)
            cs_cable_matrix_cell(&net.cells[c], dt, first[c], NULL, k == CS__U ? want : NULL, k == CS__CDT ? want : NULL,
                                 k == CS__D0 ? want : NULL, k == CS__B0 ? want : NULL);
        for (size_t i = 0; (k == CS__D0 || k == CS__B0) && i < net.ninst; ++i)
            cs_cable_matrix_fold(&net.inst[i], first[net.inst[i].cell] + net.inst[i].node, k == CS__D0 ? want : NULL,
                                 k == CS__B0 ? want : NULL);
        ck_assert_msg(memcmp(got, want, nrow * sizeof *want) == 0, "constant %d differs", k);
        free(got);
        free(want);
    }
    unsigned char *cur = cs__cuda_current_rows(&net, first), *cref = calloc(nrow, 1);
    ck_assert(cur && cref);
    size_t ncur = 0;
    for (size_t i = 0; i < net.ninst; ++i)
        if (!net.inst[i].type->fold) cref[first[net.inst[i].cell] + net.inst[i].node] = 1;
    for (size_t r = 0; r < nrow; ++r) ncur += cref[r];
    ck_assert_uint_eq(ncur, net.ncell); /* hh on each soma, pas folded */
    ck_assert(memcmp(cur, cref, nrow) == 0);
    free(cur);
    free(cref);
    free(pref);
    free(first);
    free(parent);
    cs_network_desc_free(&net);
    cs_model_free(&m);
}
END_TEST

int main(void) {
    Suite *s = suite_create("cuda_plan_host");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, host_arrays_on_threads_equal_one_pass);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

#else

int main(void) { return 77; } /* a build without CUDA: the functions are not compiled */

#endif
