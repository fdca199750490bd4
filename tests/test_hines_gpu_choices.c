/* The GPU Hines planner's choices, without a GPU: which variant "auto" takes, what staged refuses
 * (with a message naming why), and where fine fuses its step (with u in shared memory on packs of
 * small distinct cells). Host plans only (cs__hines_hplan_build); their solutions are checked by
 * test_hines_gpu_planner.c (host emulation) and test_hines_gpu.c (the GPU). */
#define _POSIX_C_SOURCE 200809L
#pragma GCC diagnostic ignored "-Wunused-function" /* the shared batches' helpers this suite does not call */
#pragma GCC diagnostic ignored "-Wunused-variable" /* g_small: these batches have one size */
#include "test_hines_gpu_common.h"

/* the host plan of variant for b on nsm multiprocessors, which must build */
static void host_plan(const batch *b, int variant, const cs_hines_gpu_options *o, int nsm, cs__hines_hplan *hp)
{
    char msg[256];
    ck_assert_msg(cs__hines_hplan_build(b->nsys, b->offset, b->p, variant, o, nsm, hp, msg, sizeof msg) == CS_SOLVER_OK,
                  "%s", msg);
}

/* "auto" picks what the H200 measurements say (cs__hines_hplan_build's comment): with one
 * multiprocessor, 1024 systems count as a large batch. */
static const char *auto_choice(const batch *b, int nsm, int fused)
{
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.fused_step = fused;
    cs__hines_hplan hp;
    host_plan(b, CS__HV_AUTO, &o, nsm, &hp);
    const char *v = cs__hines_variant_name(hp.variant);
    cs__hines_hplan_free(&hp);
    return v;
}

/* staged's planner is per structure: a batch of many distinct trees is refused at once, with a
 * message naming why, and "auto" takes another variant (2 000 distinct trees of 2 036 rows had
 * taken minutes of set-up) */
/* staged refuses the batch with a message holding each of want (NULL-terminated), and auto
 * without the fused step takes another variant */
static void check_staged_refused(const batch *b, const char *const *want)
{
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    cs__hines_hplan hp;
    char msg[256] = "";
    ck_assert_int_eq(cs__hines_hplan_build(b->nsys, b->offset, b->p, CS__HV_STAGED, &o, 132, &hp, msg, sizeof msg),
                     CS_SOLVER_ERR_INVALID);
    for (; *want; ++want) ck_assert_msg(strstr(msg, *want) != NULL, "%s", msg);
    ck_assert_str_ne(auto_choice(b, 132, 0), "staged");
}

START_TEST(test_staged_many_structures)
{
    batch b;
    make_random_batch(&b, 400, 77); /* ~81 000 rows, every tree distinct */
    ck_assert_int_gt(b.nrows, CS_HINES_STAGED_MAX_DISTINCT_ROWS);
    check_staged_refused(&b, (const char *const[]){"distinct cell structures", NULL});
    batch_free(&b);
}
END_TEST

/* staged holds at most CS__STG_REG_STEPS_MAX · 32 rows of a cell in registers and fewer than
 * CS__STG_MAX_SMEM_ROWS in shared memory: a larger cell is refused before any schedule (the
 * 29 050-row FlyWire cell took 20 s of schedules to be refused), beside cells that fit; auto
 * without the fused step then takes another variant */
START_TEST(test_staged_large_cell)
{
    const int big = CS__STG_REG_STEPS_MAX * CS__STG_MAX_SLOTS + CS__STG_MAX_SMEM_ROWS;
    batch b = {0};
    batch_cap c = {0, 0};
    random_system(&b, &c, 300, 21, 41);
    random_system(&b, &c, big, 401, 42);
    check_staged_refused(&b, (const char *const[]){"does not fit in shared memory", "at least", NULL});
    batch_free(&b);
}
END_TEST

/* fine fuses the step on packs of several small cells where each pack holds its own cells (types
 * for at least half the packs) and there are at least 3 packs a multiprocessor, with u in shared
 * memory; not on packs that repeat a few cell types, nor with CS_HINES_FINE_STEP_LARGE_ONLY */
static int fine_fuses_with(const batch *b, int nsm, int flags, int *u_shared, int *npack)
{
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.fine_flags = flags;
    cs__hines_hplan hp;
    host_plan(b, CS__HV_FINE, &o, nsm, &hp);
    const int f = hp.fine_fuses;
    *u_shared = (hp.fine_flags & CS_HINES_FINE_U_SHARED) != 0;
    *npack = hp.npack;
    ck_assert_int_eq(strstr(hp.describe, "u-shared") != NULL, f && *u_shared);
    cs__hines_hplan_free(&hp);
    return f;
}

START_TEST(test_fine_fuses_small_packs)
{
    batch distinct, same = {0};
    make_random_batch(&distinct, 400, 77); /* ~81 000 rows, every tree distinct */
    batch_cap c = {0, 0};
    for (int k = 0; k < 600; ++k) random_system(&same, &c, 150, 9, 5); /* one tree 600 times */
    int us = 0, np = 0, seen[2] = {0, 0};
    const int nsms[] = {1, 4, 8, 16, 24, 32, 64, 132, 400};
    for (int k = 0; k < (int)(sizeof nsms / sizeof nsms[0]); ++k) { /* fused exactly from 3 packs a multiprocessor */
        const int f = fine_fuses_with(&distinct, nsms[k], 0, &us, &np);
        ck_assert_msg(f == (np >= 3 * nsms[k]), "%d packs on %d multiprocessors: fused %d", np, nsms[k], f);
        ck_assert_int_eq(us, f);
        seen[f] = 1;
    }
    ck_assert(seen[0] && seen[1]);
    /* distinct cells: at most nsys / (5 nsm) a pack, so a small batch still gives ~5 packs a
     * multiprocessor (nsys / (2 nsm) with CS_HINES_FINE_PACK_CAP_TWO, and where types repeat) */
    fine_fuses_with(&distinct, 20, 0, &us, &np);
    ck_assert_int_ge(np, 100);
    ck_assert_int_eq(us, 1);
    fine_fuses_with(&distinct, 20, CS_HINES_FINE_PACK_CAP_TWO, &us, &np);
    ck_assert_int_lt(np, 60);
    /* ... but not where the usual packs are 3 a multiprocessor already (16: ~52 packs of ~7 cells
     * by rows, where the smaller cap, 5 cells, would bind): the same packs with the flag and
     * without (distinct trees × 4 096 lost in smaller packs) */
    int np_cap2 = 0;
    fine_fuses_with(&distinct, 16, 0, &us, &np);
    fine_fuses_with(&distinct, 16, CS_HINES_FINE_PACK_CAP_TWO, &us, &np_cap2);
    ck_assert_int_ge(np, 48);
    ck_assert_int_eq(np, np_cap2);
    ck_assert_int_eq(fine_fuses_with(&distinct, 1, CS_HINES_FINE_STEP_LARGE_ONLY, &us, &np), 0);
    ck_assert_int_eq(fine_fuses_with(&distinct, 1, CS_HINES_FINE_STEP_ALWAYS, &us, &np), 1); /* its own kernel: u through L1 */
    ck_assert_int_eq(us, 0);
    ck_assert_int_eq(fine_fuses_with(&same, 1, 0, &us, &np), 0); /* packs of one repeated type */
    ck_assert_int_ge(np, 6);
    batch_free(&distinct);
    batch_free(&same);
}
END_TEST

/* every set-up flag its own bit: auto's trial gives all candidates one set of flags, so a staged
 * flag must not read as a fine one */
START_TEST(test_flags_distinct)
{
    const int flags[] = {CS_HINES_FINE_NO_REROOT, CS_HINES_FINE_NO_SPLIT, CS_HINES_FINE_NO_SORT, CS_HINES_FINE_GLOBAL,
                         CS_HINES_FINE_U_SHARED, CS_HINES_FINE_D_GLOBAL, CS_HINES_FINE_STEP_ALWAYS,
                         CS_HINES_FINE_ONE_LAUNCH, CS_HINES_CHUNKED_CUT_ONLY, CS_HINES_FINE_STEP_LARGE_ONLY,
                         CS_HINES_FINE_PACK_CAP_TWO, CS_HINES_STAGED_NO_REG_STEPS, CS_HINES_STAGED_NO_TWO_WAY,
                         CS_HINES_STAGED_INVARIANT};
    int seen = 0;
    for (int k = 0; k < (int)(sizeof flags / sizeof flags[0]); ++k) {
        ck_assert_msg(flags[k] > 0 && (flags[k] & (flags[k] - 1)) == 0, "flag %d is not one bit", k);
        ck_assert_msg(!(seen & flags[k]), "flag %d shares its bit", k);
        seen |= flags[k];
    }
}
END_TEST

START_TEST(test_auto_choice)
{
    batch small, medium, mixed;
    make_class_batch(&small, 0, 1100, 70);   /* small-low: 76 rows */
    make_class_batch(&medium, 3, 1100, 71);  /* medium-high: 319 rows */
    make_mixed_batch(&mixed, 1100, 0, 72);
    /* solve alone: staged where its lanes are at least half busy (medium-high 89 %), at any size */
    ck_assert_str_eq(auto_choice(&medium, 132, 0), "staged");
    ck_assert_str_eq(auto_choice(&medium, 1, 0), "staged");
    ck_assert_str_eq(auto_choice(&small, 132, 0), "staged");       /* below 1024 per SM: staged at any lane use */
    ck_assert_str_eq(auto_choice(&small, 1, 0), "warp");           /* large, small cells: small-low 30 % even re-rooted */
    batch bl, bh, sh;                                              /* the benchmark's trees */
    make_class_batch(&bl, 4, 1100, 1004);                          /* big-low: 6.4 rows per step of 8 re-rooted */
    make_class_batch(&bh, 5, 1100, 1005);                          /* big-high: 13.6 rows per step of 16 */
    make_class_batch(&sh, 1, 1100, 1001);                          /* small-high: 4.5 rows per step of 8 */
    ck_assert_str_eq(auto_choice(&bl, 1, 0), "staged");
    ck_assert_str_eq(auto_choice(&bh, 1, 0), "staged");
    ck_assert_str_eq(auto_choice(&sh, 1, 0), "staged");
    batch_free(&bl); batch_free(&bh); batch_free(&sh);
    ck_assert_str_eq(auto_choice(&mixed, 132, 0), "staged");       /* mixed: each structure its shape */
    ck_assert_str_eq(auto_choice(&mixed, 1, 0), "staged");
    ck_assert_str_eq(auto_choice(&medium, 132, 1), "warp");        /* fused: below 120 per SM */
    ck_assert_str_eq(auto_choice(&medium, 8, 1), "interleaved");   /* fused: 137 per SM */
    ck_assert_str_eq(auto_choice(&mixed, 8, 1), "variable");
    batch_free(&small); batch_free(&medium); batch_free(&mixed);
}
END_TEST

static Suite *choices_suite(void)
{
    Suite *s = suite_create("hines_gpu_choices");
    TCase *tc = tcase_create("host");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_flags_distinct);
    tcase_add_test(tc, test_auto_choice);
    tcase_add_test(tc, test_fine_fuses_small_packs);
    tcase_add_test(tc, test_staged_many_structures);
    tcase_add_test(tc, test_staged_large_cell);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(choices_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
