/* Shared structure schedules (cs_hines_schedules_create, cs_hines_gpu_options.schedules): a fine
 * or warp plan built with them is the plan built without them, array for array, for any pack
 * rows, threads and flags they do not read, and on several threads at once from one object; made
 * for other flags or another batch they are refused; other variants ignore them. Host plans only
 * (cs__hines_hplan_build): no GPU. CS_MORPH_DIR overrides the morphology folder. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#pragma GCC diagnostic ignored "-Wunused-function" /* the shared batches' helpers this suite does not call */
#include "test_hines_gpu_common.h"

/* every field of two host plans, arrays by their lengths (as bench/plan_times digests them) */
static void check_same_plan(const cs__hines_hplan *a, const cs__hines_hplan *b, const char *what)
{
    cs__hines_hplan x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
#define ARR(f, n)                                                                                            \
    do {                                                                                                     \
        ck_assert_msg(!a->f == !b->f, "%s: " #f " in one plan only", what);                                  \
        if (a->f) ck_assert_msg(!memcmp(a->f, b->f, sizeof *a->f * (size_t)(n)), "%s: " #f " differs", what); \
        x.f = y.f = NULL;                                                                                    \
    } while (0)
    ck_assert_msg(a->nsys == b->nsys && a->nlmap == b->nlmap && a->npack == b->npack && a->ntype == b->ntype &&
                      a->ntask == b->ntask && a->nblock == b->nblock && a->nlaunch == b->nlaunch && a->nslot == b->nslot &&
                      a->ngroup == b->ngroup && a->internal_size == b->internal_size,
                  "%s: the plans' counts differ", what);
    ARR(offset, a->nsys + 1);
    ARR(cell_base, a->nsys);
    ARR(cell_map, a->nsys);
    ARR(lmap, a->nlmap);
    ARR(lusrc, a->nlmap);
    ARR(lorder, a->nlmap);
    ARR(slot_base, a->nslot);
    ARR(slot_n, a->nslot);
    ARR(p_local, a->shared_p ? a->max_n : a->internal_size);
    ARR(group_base, a->ngroup);
    ARR(group_rows, a->ngroup);
    ARR(pack_base, a->npack);
    ARR(pack_type, a->npack);
    ARR(type_info, 4 * a->ntype);
    ARR(level_start, a->nlevel_start);
    ARR(tasks, 4 * a->ntask);
    ARR(children, a->nchild);
    ARR(block_first, a->nblock + 1);
    ARR(launch_first, a->nlaunch + 1);
    ARR(launch_rows, a->nlaunch);
    ARR(launch_sched, a->nlaunch);
    ARR(stg_launch, CS__SL_N * a->stg_nlaunch);
    ARR(stg_type_launch, a->nstype);
    ARR(group_type, a->ngroup);
    ARR(group_cells, a->ngroup);
    ARR(group_cbase, a->ngroup);
    ARR(group_same, a->ngroup);
    ARR(stype, 2 * a->nstype);
    ARR(stg_sched, 2 * a->stg_nslot);
    ARR(chk_chunk, 4 * a->chk_nchunk);
    ARR(chk_group, 2 * a->chk_ngroup);
#undef ARR
    ck_assert_msg(!a->chk_sub == !b->chk_sub, "%s: a reduced tree's plan in one only", what);
    if (a->chk_sub) check_same_plan(a->chk_sub, b->chk_sub, what);
    x.chk_sub = y.chk_sub = NULL;
    ck_assert_msg(!memcmp(&x, &y, sizeof x), "%s: the plans' fields differ (%s | %s)", what, a->describe, b->describe);
}

static cs_solver_status plan(const batch *b, int variant, const cs_hines_gpu_options *o, cs__hines_hplan *hp, char *msg)
{
    return cs__hines_hplan_build(b->nsys, b->offset, b->p, variant, o, 132, hp, msg, 256);
}

/* variant with options o, alone and with schedules made from b and o's flags: the same plan */
static void check_shared(const batch *b, int variant, cs_hines_gpu_options o, const cs_hines_schedules *sch, const char *what)
{
    cs__hines_hplan alone, shared;
    char msg[256], w[200];
    snprintf(w, sizeof w, "%s, %s flags %d rows %d threads %d", what, cs__hines_variant_name(variant), o.fine_flags,
             o.fine_pack_rows, o.threads);
    o.schedules = NULL;
    ck_assert_msg(plan(b, variant, &o, &alone, msg) == CS_SOLVER_OK, "%s: %s", w, msg);
    o.schedules = sch;
    ck_assert_msg(plan(b, variant, &o, &shared, msg) == CS_SOLVER_OK, "%s (shared): %s", w, msg);
    check_same_plan(&alone, &shared, w);
    cs__hines_hplan_free(&alone);
    cs__hines_hplan_free(&shared);
}

/* fine and warp with the batch's schedules: the flags they read, and others they do not */
static void check_batch(const batch *b, const char *what)
{
    static const int flags[] = {0, CS_HINES_FINE_NO_SPLIT, CS_HINES_FINE_NO_REROOT,
                                CS_HINES_FINE_NO_SPLIT | CS_HINES_FINE_NO_REROOT};
    static const int unread[] = {0, CS_HINES_FINE_NO_SORT, CS_HINES_FINE_STEP_ALWAYS | CS_HINES_FINE_PACK_CAP_TWO};
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; ++f) {
        cs_hines_schedules *sch = NULL;
        ck_assert_int_eq(cs_hines_schedules_create(b->nsys, b->offset, b->p, flags[f], &sch), CS_SOLVER_OK);
        for (size_t u = 0; u < sizeof unread / sizeof unread[0]; ++u) {
            cs_hines_gpu_options o;
            cs_hines_gpu_options_default(&o);
            o.fused_step = 1;
            o.fine_flags = flags[f] | unread[u];
            check_shared(b, CS__HV_WARP, o, sch, what);
            check_shared(b, CS__HV_FINE, o, sch, what);
            o.fine_pack_rows = 512; /* packs of other sizes: the same schedules */
            o.threads = 64;
            check_shared(b, CS__HV_WARP, o, sch, what);
            check_shared(b, CS__HV_FINE, o, sch, what);
        }
        cs_hines_schedules_destroy(sch);
    }
}

START_TEST(test_shared_same_plan)
{
    load_cells();
    batch b;
    make_random_batch(&b, g_small ? 60 : 300, 71); /* distinct trees */
    check_batch(&b, "random trees");
    batch_free(&b);
    make_mixed_batch(&b, g_small ? 60 : 200, 1, 72); /* Table 4.1's classes and the real cells */
    check_batch(&b, "mixed");
    batch_free(&b);
    make_cells_network(&b, 3, 73); /* the real cells, in blocks */
    check_batch(&b, "real cells");
    batch_free(&b);
    make_class_batch(&b, 2, 50, 74); /* one structure */
    check_batch(&b, "one class");
    batch_free(&b);
}
END_TEST

/* made for other flags they read, or another batch: refused, never a plan; the same structures
 * in the same order (other multiplicities) are the same schedules: taken */
START_TEST(test_shared_mismatch)
{
    batch b, other;
    make_random_batch(&b, 40, 81);
    make_random_batch(&other, 40, 82);
    cs_hines_schedules *sch = NULL;
    ck_assert_int_eq(cs_hines_schedules_create(b.nsys, b.offset, b.p, 0, &sch), CS_SOLVER_OK);
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.schedules = sch;
    cs__hines_hplan hp;
    char msg[256];
    const int variants[] = {CS__HV_FINE, CS__HV_WARP};
    for (int v = 0; v < 2; ++v) {
        o.fine_flags = CS_HINES_FINE_NO_SPLIT;
        ck_assert_int_eq(plan(&b, variants[v], &o, &hp, msg), CS_SOLVER_ERR_INVALID);
        ck_assert_msg(strstr(msg, "other flags") != NULL, "%s", msg);
        o.fine_flags = CS_HINES_FINE_NO_REROOT;
        ck_assert_int_eq(plan(&b, variants[v], &o, &hp, msg), CS_SOLVER_ERR_INVALID);
        o.fine_flags = 0;
        ck_assert_int_eq(plan(&other, variants[v], &o, &hp, msg), CS_SOLVER_ERR_INVALID);
        ck_assert_msg(strstr(msg, "another batch") != NULL, "%s", msg);
    }
    /* one parent moved in the last system (its own structure): refused */
    batch moved = b;
    moved.p = malloc(sizeof(int) * (size_t)b.nrows);
    memcpy(moved.p, b.p, sizeof(int) * (size_t)b.nrows);
    const int last = b.offset[b.nsys] - 1;
    ck_assert_int_gt(last - b.offset[b.nsys - 1], 1);
    moved.p[last] = b.offset[b.nsys - 1];
    if (moved.p[last] == b.p[last]) moved.p[last] = last - 1;
    ck_assert_int_eq(plan(&moved, CS__HV_FINE, &o, &hp, msg), CS_SOLVER_ERR_INVALID);
    free(moved.p);
    /* a system more of the first structure, at the end: the same structures in the same order */
    batch more;
    batch_cap c = {0, 0};
    memset(&more, 0, sizeof more);
    for (int s = 0; s <= b.nsys; ++s) {
        const int src = s < b.nsys ? s : 0, o0 = b.offset[src], n = b.offset[src + 1] - o0;
        int *lp = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; ++i) lp[i] = i ? b.p[o0 + i] - o0 : -1;
        batch_add(&more, &c, n, lp, NULL, NULL);
        free(lp);
    }
    check_shared(&more, CS__HV_FINE, o, sch, "one system more");
    check_shared(&more, CS__HV_WARP, o, sch, "one system more");
    /* the other variants ignore them, whatever batch they were made for */
    const int others[] = {CS__HV_STAGED, CS__HV_INTERLEAVED, CS__HV_VARIABLE, CS__HV_CHUNKED};
    for (int v = 0; v < 4; ++v) {
        check_shared(&b, others[v], o, sch, "ignored");
        check_shared(&other, others[v], o, sch, "ignored, another batch");
    }
    cs_hines_schedules *bad = sch;
    ck_assert_int_eq(cs_hines_schedules_create(0, b.offset, b.p, 0, &bad), CS_SOLVER_ERR_INVALID);
    ck_assert_ptr_null(bad);
    cs_hines_schedules_destroy(NULL);
    cs_hines_schedules_destroy(sch);
    batch_free(&more);
    batch_free(&other);
    batch_free(&b);
}
END_TEST

/* warp and fine built at once from one object (as auto's trial builds them), each against its
 * plan built alone */
typedef struct {
    const batch *b;
    int variant;
    const cs_hines_schedules *sch;
    cs__hines_hplan hp;
    cs_solver_status st;
} job;
static void *build_job(void *arg)
{
    job *j = arg;
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.fused_step = 1;
    o.schedules = j->sch;
    char msg[256];
    j->st = plan(j->b, j->variant, &o, &j->hp, msg);
    return NULL;
}

START_TEST(test_shared_at_once)
{
    batch b;
    make_random_batch(&b, g_small ? 100 : 600, 91);
    cs_hines_schedules *sch = NULL;
    ck_assert_int_eq(cs_hines_schedules_create(b.nsys, b.offset, b.p, 0, &sch), CS_SOLVER_OK);
    job jobs[4] = {{.b = &b, .variant = CS__HV_WARP, .sch = sch}, {.b = &b, .variant = CS__HV_FINE, .sch = sch},
                   {.b = &b, .variant = CS__HV_WARP}, {.b = &b, .variant = CS__HV_FINE}};
    pthread_t th[2];
    for (int k = 0; k < 2; ++k) ck_assert_int_eq(pthread_create(&th[k], NULL, build_job, &jobs[k]), 0);
    for (int k = 0; k < 2; ++k) ck_assert_int_eq(pthread_join(th[k], NULL), 0);
    cs_hines_schedules_destroy(sch); /* the plans keep nothing of it */
    for (int k = 2; k < 4; ++k) build_job(&jobs[k]);
    for (int k = 0; k < 4; ++k) ck_assert_int_eq(jobs[k].st, CS_SOLVER_OK);
    check_same_plan(&jobs[0].hp, &jobs[2].hp, "warp at once");
    check_same_plan(&jobs[1].hp, &jobs[3].hp, "fine at once");
    for (int k = 0; k < 4; ++k) cs__hines_hplan_free(&jobs[k].hp);
    batch_free(&b);
}
END_TEST

int main(void)
{
    const char *sm = getenv("CS_TEST_SMALL");
    g_small = sm && *sm && strcmp(sm, "0") != 0;
    Suite *s = suite_create("hines_schedules");
    TCase *tc = tcase_create("host");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_shared_same_plan);
    tcase_add_test(tc, test_shared_mismatch);
    tcase_add_test(tc, test_shared_at_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
