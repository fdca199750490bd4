/* Which mechanism groups the CUDA backend runs in one launch per phase (cs__cuda_merge_sets,
 * src/backends/cuda/cs_backend_cuda_setup.c): only eligible groups of 1 to 65 536 instances, one
 * set per catalogue key, at most 8 groups a set (a later group opens the next set), never a set of
 * one. The GPU runs each set as a lane's unit, so a wrong set would put groups on the wrong stream.
 * No GPU needed; skipped (77) in a build without CUDA, where the function is not compiled. */
#include <check.h>
#include <stdlib.h>

#ifdef CS_HAVE_CUDA
#include "check_suite.h"
#include "cs_backend_cuda_internal.h"

static const char cat_a = 'a', cat_b = 'b'; /* two catalogues' dispatch keys */

START_TEST(sets_by_key_size_and_count) {
    enum { N = 14 };
    /* groups 0-10 of catalogue a (group 3: too large; group 5: not eligible, e.g. a concentration
     * writer), 11-12 of b, 13 of b but empty */
    int n[N] = {10000, 2000, 10000, 70000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 500, 500, 0};
    int eligible[N] = {1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    const void *key[N];
    for (int q = 0; q < N; ++q) key[q] = q < 11 ? (const void *)&cat_a : (const void *)&cat_b;
    int head[N];
    cs__cuda_merge_sets(N, n, eligible, key, head);
    /* a: eligible, small: 0 1 2 4 6 7 8 9 10 (9 groups) -> the first 8 under 0, group 10 alone -> -1 */
    const int want[N] = {0, 0, 0, -1, 0, -1, 0, 0, 0, 0, -1, 11, 11, -1};
    for (int q = 0; q < N; ++q) ck_assert_msg(head[q] == want[q], "group %d: head %d, expected %d", q, head[q], want[q]);
}
END_TEST

START_TEST(a_second_set_of_one_key) {
    enum { N = 12 };
    int n[N], eligible[N], head[N];
    const void *key[N];
    for (int q = 0; q < N; ++q) n[q] = 1000, eligible[q] = 1, key[q] = &cat_a;
    cs__cuda_merge_sets(N, n, eligible, key, head);
    for (int q = 0; q < 8; ++q) ck_assert_int_eq(head[q], 0);
    for (int q = 8; q < N; ++q) ck_assert_int_eq(head[q], 8); /* the next 4 under group 8 */
    n[5] = 65537; /* group 5: now too large */
    cs__cuda_merge_sets(N, n, eligible, key, head);
    ck_assert_int_eq(head[5], -1);
    ck_assert_int_eq(head[8], 0); /* group 8 fills set 0's place */
    ck_assert_int_eq(head[9], 9);
    ck_assert_int_eq(head[11], 9);
}
END_TEST

int main(void) {
    Suite *s = suite_create("cuda_merge_sets");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, sets_by_key_size_and_count);
    tcase_add_test(tc, a_second_set_of_one_key);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

#else

int main(void) { return 77; } /* a build without CUDA: the function is not compiled */

#endif
