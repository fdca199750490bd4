/* The "chunked" GPU Hines variant's arithmetic on the CPU (no GPU needed): its plan
 * (solver/cs_hines_chunked_plan.c) and the host emulation of its three phases, in the kernels'
 * order of operations, against the serial CPU Hines reference (cs_hines_solve_serial).
 *
 * Systems: diagonally dominant, random values (u in -[0.1, 1.1), d = 0.05..0.55 + Σ|u| of the
 * row's couplings), rhs = A·x with x in [-70, -60) mV, on: the tree of every real SWC cell of
 * shared/data/morphologies (10 µm CVs), alone and all in one batch; random trees of 1 000 to
 * 100 000 rows with few branches (long runs); one unbranched cable of 100 000 rows (the reduced
 * tree is chunked again: three levels at L = 16); a tree whose runs are all shorter than 2·L (no
 * chunk: the plan is fine on the same tree); a tree whose chains are not contiguous in tree
 * order; and every L (4, 8, 16, 32 and the automatic one). The solution through the plan's
 * internal layout (conversions, solve, conversion back) must match at
 * max|x - x_ref| / max|x_ref| <= 1e-12, and the coupling conversion must round-trip. A bad L is
 * refused (CS_SOLVER_ERR_INVALID). The planner's estimate (cs__chunked_estimate: interiors and
 * levels) must equal what the plans cut; a batch with too little to cut is not cut; "auto"
 * picks chunked for a long cable and not for bushy trees or cells small enough to stage.
 * The fused membrane step (cs_hines_gpu_step_internal_d) on plans that cut, through its host
 * emulation, on the same trees (check_step): against the assembled system solved serially, at
 * 1e-12, with i and g read and zeroed at the rows with current only. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_geometry.h"
#include "cs_hines_gpu.h"
#include "cs_hines_gpu_impl.h"
#include "cs_morph.h"
#include "cs_solver.h"
#include "test_rng.h"

#define TOL 1e-12

#include "test_hines_batch.h"

static void add_random_tree(batch *b, batch_cap *c, int n, int nbranch, uint64_t seed)
{
    int *lp = malloc(sizeof(int) * n);
    ck_assert_int_eq(cs_hines_random_tree(n, nbranch, seed, lp), 0);
    batch_add(b, c, n, lp, NULL, NULL);
    free(lp);
}

static void add_cable(batch *b, batch_cap *c, int n)
{
    int *lp = malloc(sizeof(int) * n);
    for (int i = 0; i < n; ++i) lp[i] = i - 1;
    batch_add(b, c, n, lp, NULL, NULL);
    free(lp);
}

/* the tree of a real SWC cell, 10 µm CVs */
static int load_cell(const char *dir, const char *name, int **lp_out)
{
    char path[2048];
    snprintf(path, sizeof path, "%.1000s/%.255s", dir, name);
    cs_swc_options so = {1.0, 0.0, 0};
    if (strstr(name, "flywire")) { so.scale = 0.001; so.min_radius = 0.1; }
    cs_morph m;
    ck_assert_msg(cs_morph_load_swc(path, &so, &m) == CS_OK, "%s: %s", path, cs_error_message());
    cs_cv_policy pol = {10.0, 0, 0};
    cs_geometry geo;
    ck_assert_msg(cs_discretize(&m, &pol, &geo) == CS_OK, "%s: %s", path, cs_error_message());
    int *lp = malloc(sizeof(int) * geo.ncv);
    memcpy(lp, geo.parent, sizeof(int) * geo.ncv);
    const int n = geo.ncv;
    cs_geometry_free(&geo);
    cs_morph_free(&m);
    *lp_out = lp;
    return n;
}

/* Plan the batch as chunked (L = block_size, 0: default), solve through the host emulation in
 * the internal layout, compare with the serial reference. Returns the plan's chunks; *levels:
 * the chunked plans nested (1: the reduced tree is fine). */
static int check_chunked(const batch *b, int block_size, const char *what, int *levels)
{
    cs_hines_gpu_options opt;
    cs_hines_gpu_options_default(&opt);
    opt.variant = "chunked";
    opt.block_size = block_size;
    cs__hines_hplan hp;
    char msg[256];
    cs_solver_status st = cs__hines_hplan_build(b->nsys, b->offset, b->p, CS__HV_CHUNKED, &opt, 132, &hp, msg, sizeof msg);
    ck_assert_msg(st == CS_SOLVER_OK, "%s: plan: %s", what, msg);
    /* auto's trial is told without the plan what it would solve as: fine where nothing is cut */
    ck_assert_int_eq(cs__hines_hplan_resolve(b->nsys, b->offset, b->p, &opt, 132),
                     hp.chk_nchunk ? CS__HV_CHUNKED : CS__HV_FINE);
    /* auto's trial builds chunked with CS_HINES_CHUNKED_CUT_ONLY: the same plan where it cuts,
     * no plan (refused, one line) where it would be fine's */
    cs_hines_gpu_options only = opt;
    only.fine_flags |= CS_HINES_CHUNKED_CUT_ONLY;
    cs__hines_hplan hq;
    char msg2[256];
    cs_solver_status sq = cs__hines_hplan_build(b->nsys, b->offset, b->p, CS__HV_CHUNKED, &only, 132, &hq, msg2, sizeof msg2);
    if (hp.chk_nchunk) {
        ck_assert_msg(sq == CS_SOLVER_OK, "%s: CUT_ONLY: %s", what, msg2);
        ck_assert_int_eq(hq.internal_size, hp.internal_size);
        ck_assert_int_eq(hq.chk_nchunk, hp.chk_nchunk);
        for (const cs__hines_hplan *x = &hp, *y = &hq; x || y; x = x->chk_sub, y = y->chk_sub) {
            ck_assert(x && y);
            ck_assert_str_eq(x->describe, y->describe); /* every level, the reduced trees' too */
        }
        for (int s = 0; s < b->nsys; ++s)
            for (int i = 0; i < b->offset[s + 1] - b->offset[s]; ++i)
                ck_assert(cs__hines_hplan_internal_index(&hp, s, i) == cs__hines_hplan_internal_index(&hq, s, i));
        cs__hines_hplan_free(&hq);
    } else {
        ck_assert_int_eq(sq, CS_SOLVER_ERR_INVALID);
        ck_assert_msg(strstr(msg2, "cut nothing") && !strchr(msg2, '\n'), "%s", msg2);
    }
    const int n = b->nrows, ni = hp.internal_size;
    ck_assert_int_ge(ni, n);
    double *id = calloc(ni, sizeof(double)), *iu = calloc(ni, sizeof(double)), *ir = calloc(ni, sizeof(double));
    double *x = malloc(sizeof(double) * n), *u2 = malloc(sizeof(double) * n), *dref = malloc(sizeof(double) * n);
    cs__hines_hplan_to_internal_host(&hp, CS_HINES_NODE, b->d, id);
    cs__hines_hplan_to_internal_host(&hp, CS_HINES_COUPLING, b->u, iu);
    cs__hines_hplan_to_internal_host(&hp, CS_HINES_NODE, b->rhs, ir);
    memcpy(u2, b->u, sizeof(double) * n);
    for (int s = 0; s < b->nsys; ++s) u2[b->offset[s]] = 12345.0; /* roots: left untouched */
    cs__hines_hplan_from_internal_host(&hp, CS_HINES_COUPLING, iu, u2);
    for (int r = 0; r < n; ++r) ck_assert_msg(u2[r] == (b->p[r] < 0 ? 12345.0 : b->u[r]), "%s: coupling of row %d", what, r);
    cs__hines_hplan_solve_host(&hp, id, iu, ir);
    cs__hines_hplan_from_internal_host(&hp, CS_HINES_NODE, ir, x);
    memcpy(dref, b->d, sizeof(double) * n);
    memcpy(u2, b->rhs, sizeof(double) * n);
    ck_assert_int_eq(cs_hines_solve_serial(b->nsys, b->offset, b->p, dref, b->u, u2), CS_SOLVER_OK);
    double e = 0, mx = 0;
    for (int r = 0; r < n; ++r) {
        const double a = fabs(x[r] - u2[r]);
        if (!(a <= e)) e = a;
        if (fabs(u2[r]) > mx) mx = fabs(u2[r]);
    }
    const double rel = e / mx;
    ck_assert_msg(rel <= TOL, "%s: max rel error %.3g > %.0e (%s)", what, rel, TOL, hp.describe);
    int lev = 0, nch = hp.chk_nchunk;
    for (const cs__hines_hplan *q = &hp; q && q->variant == CS__HV_CHUNKED; q = q->chk_sub) ++lev;
    printf("%-40s rows %7d  rel %.2e  %s\n", what, n, rel, hp.describe);
    if (levels) *levels = lev;
    free(id); free(iu); free(ir); free(x); free(u2); free(dref);
    cs__hines_hplan_free(&hp);
    return nch;
}

/* The fused membrane step (cs__hines_hplan_step_host: the chunked kernels' phases, in their order
 * of operations) on the plan of batch b, two steps, each against the assembly of the same state
 * (d = d0 + g, rhs = cdt·v + b0 − (i − g·v)) solved by cs_hines_solve_serial, at TOL. Rows carry
 * current with probability 1/every (i, g non-zero, flagged CS_HINES_ROW_CURRENT); every other row
 * holds a poison i, g (1e300) that the step must neither read (the solution would be wrong) nor
 * write. Afterwards i, g are zero at the flagged rows. Returns the plan's chunks (none: the step
 * was its fine plan's). */
static int check_step(const batch *b, int block_size, int every, const char *what)
{
    cs_hines_gpu_options opt;
    cs_hines_gpu_options_default(&opt);
    opt.variant = "chunked";
    opt.block_size = block_size;
    opt.fused_step = 1;
    opt.fine_flags = CS_HINES_FINE_STEP_ALWAYS; /* so that a plan that cuts nothing takes fine's step */
    cs__hines_hplan hp;
    char msg[256];
    ck_assert_msg(cs__hines_hplan_build(b->nsys, b->offset, b->p, CS__HV_CHUNKED, &opt, 132, &hp, msg, sizeof msg) == CS_SOLVER_OK,
                  "%s: plan: %s", what, msg);
    ck_assert(cs__hines_hplan_fuses(&hp)); /* where nothing is cut, the fine plan's step */
    const int n = b->nrows, ni = hp.internal_size, nch = hp.chk_nchunk;
    enum { D0, CDT, B0, U, V, I, G, CUR, NT };
    double *t[NT], *in[NT];
    for (int k = 0; k < NT; ++k) { t[k] = malloc(sizeof(double) * n); in[k] = calloc(ni, sizeof(double)); }
    double *wa = calloc(ni, sizeof(double)), *wb = calloc(ni, sizeof(double)), *x = malloc(sizeof(double) * n);
    double *dref = malloc(sizeof(double) * n), *rref = malloc(sizeof(double) * n);
    unsigned char *flags = malloc(ni);
    int ncur = 0;
    for (int r = 0; r < n; ++r) {
        t[D0][r] = b->d[r];
        t[CDT][r] = 0.25 * b->d[r] * (1.5 + sin(r)); /* [µS] */
        t[B0][r] = 3.0 * cos(r);                     /* [nA] */
        t[U][r] = b->u[r];
        t[V][r] = -80.0 + 60.0 * urand(); /* [mV] */
        t[CUR][r] = urand() * every < 1.0;
        ncur += t[CUR][r] > 0.5;
    }
    ck_assert_int_gt(ncur, 0);
    for (int k = D0; k <= V; ++k) cs__hines_hplan_to_internal_host(&hp, k == U ? CS_HINES_COUPLING : CS_HINES_NODE, t[k], in[k]);
    cs__hines_hplan_to_internal_host(&hp, CS_HINES_NODE, t[CUR], in[CUR]);
    cs__hines_hplan_row_flags(&hp, flags);
    for (int k = 0; k < ni; ++k) {
        ck_assert_int_eq(flags[k], 0); /* chunked (and fine): no structure bits */
        flags[k] = in[CUR][k] > 0.5 ? CS_HINES_ROW_CURRENT : 0;
    }
    cs_hines_step_d st = {in[D0], in[CDT], in[B0], in[U], in[V], in[I], in[G], flags, wa, wb, 0, NULL, 0, NULL, NULL};
    for (int rep = 0; rep < 2; ++rep) {
        for (int r = 0; r < n; ++r) { /* rep 1 starts from rep 0's v */
            const int cur = t[CUR][r] > 0.5;
            t[G][r] = cur ? 0.5 * b->d[r] * urand() : 1e300; /* [µS]; poison where no current */
            t[I][r] = cur ? urand() - 0.5 : 1e300;           /* [nA] */
            dref[r] = t[D0][r] + (cur ? t[G][r] : 0.0);
            rref[r] = t[CDT][r] * t[V][r] + t[B0][r] - (cur ? t[I][r] - t[G][r] * t[V][r] : 0.0);
        }
        cs__hines_hplan_to_internal_host(&hp, CS_HINES_NODE, t[I], in[I]);
        cs__hines_hplan_to_internal_host(&hp, CS_HINES_NODE, t[G], in[G]);
        ck_assert_int_eq(cs_hines_solve_serial(b->nsys, b->offset, b->p, dref, b->u, rref), CS_SOLVER_OK);
        cs__hines_hplan_step_host(&hp, &st);
        cs__hines_hplan_from_internal_host(&hp, CS_HINES_NODE, in[V], x);
        double e = 0, mx = 0;
        for (int r = 0; r < n; ++r) {
            const double a = fabs(x[r] - rref[r]);
            if (!(a <= e)) e = a; /* NaN propagates */
            if (fabs(rref[r]) > mx) mx = fabs(rref[r]);
        }
        ck_assert_msg(e / mx <= TOL, "%s: fused step %d: max rel error %.3g > %.0e (%s)", what, rep + 1, e / mx, TOL, hp.describe);
        cs__hines_hplan_from_internal_host(&hp, CS_HINES_NODE, in[I], t[I]);
        cs__hines_hplan_from_internal_host(&hp, CS_HINES_NODE, in[G], t[G]);
        for (int r = 0; r < n; ++r) {
            const double want = t[CUR][r] > 0.5 ? 0.0 : 1e300; /* zeroed where read, untouched elsewhere */
            ck_assert_msg(t[I][r] == want && t[G][r] == want, "%s: step %d: i, g at row %d: %g, %g", what, rep + 1, r, t[I][r], t[G][r]);
        }
        memcpy(t[V], x, sizeof(double) * n);
        if (rep == 0) printf("%-40s rows %7d  fused step rel %.2e (%d rows with current, %d chunks)\n", what, n, e / mx, ncur, nch);
    }
    for (int k = 0; k < NT; ++k) { free(t[k]); free(in[k]); }
    free(wa); free(wb); free(x); free(dref); free(rref); free(flags);
    cs__hines_hplan_free(&hp);
    return nch;
}

static const char *morph_dir(void)
{
    const char *e = getenv("CS_MORPH_DIR");
    return (e && *e) ? e : CS_SHARED_DIR "/data/morphologies";
}

START_TEST(test_real_cells)
{
    DIR *dir = opendir(morph_dir());
    ck_assert_msg(dir != NULL, "cannot open %s", morph_dir());
    char names[64][256];
    int nn = 0;
    struct dirent *e;
    while ((e = readdir(dir)) && nn < 64) {
        size_t l = strlen(e->d_name);
        if (l > 4 && l < 256 && strcmp(e->d_name + l - 4, ".swc") == 0) snprintf(names[nn++], 256, "%.255s", e->d_name);
    }
    closedir(dir);
    ck_assert_int_eq(nn, 9);
    g_rng = 11;
    batch all = {0};
    batch_cap ca = {0, 0};
    int chunks = 0;
    for (int k = 0; k < nn; ++k) {
        int *lp;
        const int n = load_cell(morph_dir(), names[k], &lp);
        batch one = {0};
        batch_cap co = {0, 0};
        batch_add(&one, &co, n, lp, NULL, NULL);
        batch_add(&all, &ca, n, lp, NULL, NULL);
        chunks += check_chunked(&one, 0, names[k], NULL);
        check_step(&one, 0, 20, names[k]);
        batch_free(&one);
        free(lp);
    }
    ck_assert_int_gt(chunks, 0);
    check_chunked(&all, 0, "the nine cells in one batch", NULL);
    check_chunked(&all, 4, "the nine cells, L = 4", NULL);
    ck_assert_int_gt(check_step(&all, 0, 20, "the nine cells in one batch"), 0);
    ck_assert_int_gt(check_step(&all, 8, 500, "the nine cells, L = 8, sparse current"), 0);
    batch_free(&all);
}
END_TEST

START_TEST(test_random_trees)
{
    g_rng = 12;
    batch b = {0};
    batch_cap c = {0, 0};
    add_random_tree(&b, &c, 1000, 3, 101);
    add_random_tree(&b, &c, 10000, 41, 102);
    add_random_tree(&b, &c, 5000, 801, 103);
    add_random_tree(&b, &c, 1, 1, 104);
    add_random_tree(&b, &c, 37, 1, 105); /* one run of 37 rows: chunked at L = 16 */
    add_random_tree(&b, &c, 100000, 301, 106);
    ck_assert_int_gt(check_chunked(&b, 0, "random trees to 100 000 rows", NULL), 0);
    check_chunked(&b, 8, "random trees, L = 8", NULL);
    check_chunked(&b, 16, "random trees, L = 16", NULL);
    check_chunked(&b, 32, "random trees, L = 32", NULL);
    ck_assert_int_gt(check_step(&b, 0, 10, "random trees (fused step)"), 0);
    ck_assert_int_gt(check_step(&b, 8, 2000, "random trees, L = 8, sparse current"), 0);
    batch_free(&b);
}
END_TEST

START_TEST(test_cable)
{
    g_rng = 13;
    batch b = {0};
    batch_cap c = {0, 0};
    add_cable(&b, &c, 100000);
    int levels = 0;
    ck_assert_int_eq(check_chunked(&b, 16, "one unbranched cable of 100 000 rows", &levels), 5556);
    ck_assert_int_ge(levels, 3);
    for (int L = 4; L <= 32; L *= 2) {
        char what[64];
        snprintf(what, sizeof what, "the cable, L = %d", L);
        ck_assert_int_gt(check_chunked(&b, L, what, NULL), 0);
    }
    ck_assert_int_gt(check_chunked(&b, 0, "the cable, automatic L", NULL), 0);
    ck_assert_int_eq(check_step(&b, 16, 50, "the cable (fused step, nested levels)"), 5556);
    ck_assert_int_gt(check_step(&b, 4, 3, "the cable, L = 4 (fused step)"), 0);
    batch_free(&b);
}
END_TEST

START_TEST(test_no_chunk)
{
    g_rng = 14;
    batch b = {0};
    batch_cap c = {0, 0};
    add_random_tree(&b, &c, 500, 301, 201); /* runs of ~2 rows */
    add_cable(&b, &c, 31);                  /* 31 < 2·16 */
    int levels = 0;
    ck_assert_int_eq(check_chunked(&b, 0, "runs shorter than 2·L", &levels), 0);
    ck_assert_int_eq(levels, 1);
    batch_free(&b);
}
END_TEST

/* the estimate against the plans: interiors of the first level, chunked levels */
START_TEST(test_estimate)
{
    g_rng = 17;
    batch b = {0};
    batch_cap c = {0, 0};
    add_random_tree(&b, &c, 20000, 201, 301);
    add_random_tree(&b, &c, 3000, 11, 302);
    add_cable(&b, &c, 5000);
    const int Ls[4] = {4, 8, 16, 32};
    cs__chk_estimate e[4];
    ck_assert_int_eq(cs__chunked_estimate(b.nrows, b.p, 4, Ls, e), 0);
    for (int i = 0; i < 4; ++i) {
        cs_hines_gpu_options opt;
        cs_hines_gpu_options_default(&opt);
        opt.block_size = Ls[i];
        cs__hines_hplan hp;
        char msg[256];
        ck_assert_int_eq(cs__hines_hplan_build(b.nsys, b.offset, b.p, CS__HV_CHUNKED, &opt, 132, &hp, msg, sizeof msg), CS_SOLVER_OK);
        ck_assert_int_eq(hp.chk_L, Ls[i]);
        ck_assert(cs__chunked_pays(&e[i], b.nrows)); /* a 5 000-row cable: the path is cut */
        ck_assert_int_eq(hp.nrows - hp.chk_sub->nrows, (int)e[i].interior);
        int lev = 0;
        for (const cs__hines_hplan *q = &hp; q->variant == CS__HV_CHUNKED; q = q->chk_sub) lev += q->chk_nchunk > 0;
        /* the plan stops where a further level would not pay: at most the estimate's levels */
        ck_assert_int_ge(lev, 1);
        ck_assert_int_le(lev, e[i].levels);
        ck_assert_int_eq(e[i].path0, 5000);
        printf("L = %2d: interior %lld, levels %d (planned %d), path %d of %d, cost %lld\n", Ls[i], e[i].interior, e[i].levels, lev,
               e[i].path, e[i].path0, cs__chunked_cost(&e[i]));
        cs__hines_hplan_free(&hp);
    }
    const int L = cs__chunked_pick_L(b.nrows, b.p);
    ck_assert(L == 8 || L == 16 || L == 32);
    batch_free(&b);
}
END_TEST

/* too little to cut: one run of 40 rows beside bushy trees of 5 000 rows (its interiors are under
 * 1/8 of the rows and cutting it leaves the bushy trees' path): no chunk, the fine plan alone */
START_TEST(test_too_little)
{
    g_rng = 18;
    batch b = {0};
    batch_cap c = {0, 0};
    for (int k = 0; k < 10; ++k) add_random_tree(&b, &c, 500, 301, 400 + k);
    add_cable(&b, &c, 40);
    int levels = 0;
    ck_assert_int_eq(check_chunked(&b, 16, "a run of 40 rows beside bushy trees", &levels), 0);
    ck_assert_int_eq(levels, 1);
    batch_free(&b);
}
END_TEST

/* the library's auto: chunked for cells too large to stage whose long runs it cuts */
static int auto_variant(const batch *b)
{
    cs_hines_gpu_options opt;
    cs_hines_gpu_options_default(&opt);
    opt.fused_step = 1; /* as the simulator asks (staged is then not tried) */
    cs__hines_hplan hp;
    char msg[256];
    ck_assert_int_eq(cs__hines_hplan_build(b->nsys, b->offset, b->p, CS__HV_AUTO, &opt, 132, &hp, msg, sizeof msg), CS_SOLVER_OK);
    const int v = hp.variant;
    ck_assert_int_eq(cs__hines_hplan_resolve(b->nsys, b->offset, b->p, &opt, 132), v); /* the same rule, unbuilt */
    printf("auto on %d rows: %s\n", b->nrows, hp.describe);
    cs__hines_hplan_free(&hp);
    return v;
}

START_TEST(test_auto)
{
    g_rng = 19;
    batch b = {0};
    batch_cap c = {0, 0};
    add_cable(&b, &c, 100000);
    ck_assert_int_eq(auto_variant(&b), CS__HV_CHUNKED);
    batch_free(&b);
    batch b2 = {0};
    batch_cap c2 = {0, 0};
    add_random_tree(&b2, &c2, 20000, 6001, 501); /* runs of ~3 rows */
    add_random_tree(&b2, &c2, 10000, 3001, 502);
    ck_assert_int_ne(auto_variant(&b2), CS__HV_CHUNKED);
    batch_free(&b2);
    batch b3 = {0};
    batch_cap c3 = {0, 0};
    add_cable(&b3, &c3, 4000); /* long runs, but small enough to stage: warp/fine keep it */
    add_cable(&b3, &c3, 4000);
    ck_assert_int_ne(auto_variant(&b3), CS__HV_CHUNKED);
    batch_free(&b3);
}
END_TEST

/* auto's candidates on a network of distinct big cells with short runs (big2000 of
 * bench/real_cells.py: runs of 2-6 compartments): "auto" is fine and "chunked" would cut nothing,
 * so it solves as fine and the trial skips it; with long runs (big30000, FlyWire) both are
 * chunked, timed once. */
/* what auto's trial is told, unbuilt, of the variant named on batch b */
static int resolved(const batch *b, const char *variant, int fused)
{
    cs_hines_gpu_options opt;
    cs_hines_gpu_options_default(&opt);
    opt.fused_step = fused;
    opt.variant = variant;
    return cs__hines_hplan_resolve(b->nsys, b->offset, b->p, &opt, 132);
}

START_TEST(test_resolve_candidates)
{
    g_rng = 20;
    /* trees of 2 000 rows with ~5 rows a run: nothing cut; of 30 000 with ~100 a run: chunked */
    const struct { int count, rows, nbranch, solves_as; const char *what; } nets[] = {
        {40, 2000, 401, CS__HV_FINE, "40 trees of 2 000 rows, short runs"},
        {4, 30000, 301, CS__HV_CHUNKED, "4 trees of 30 000 rows, long runs"}};
    for (int n = 0; n < 2; ++n) {
        batch b = {0};
        batch_cap c = {0, 0};
        for (int k = 0; k < nets[n].count; ++k) add_random_tree(&b, &c, nets[n].rows, nets[n].nbranch, 600 + 100 * n + k);
        ck_assert_int_eq(resolved(&b, "chunked", 1), nets[n].solves_as);
        ck_assert_int_eq(check_chunked(&b, 0, nets[n].what, NULL) > 0, nets[n].solves_as == CS__HV_CHUNKED);
        ck_assert_int_eq(resolved(&b, "auto", 1), nets[n].solves_as);
        ck_assert_int_eq(auto_variant(&b), nets[n].solves_as);
        ck_assert_int_eq(resolved(&b, "warp", 1), CS__HV_WARP); /* the others are what they are named */
        ck_assert_int_lt(resolved(&b, "nonesuch", 1), 0);
        ck_assert_int_lt(resolved(&b, "auto", 0), 0); /* a staged trial plan decides: not known unbuilt */
        batch_free(&b);
    }
}
END_TEST

/* two chains from the root, their rows interleaved in tree order (a row's only child is not the
 * next row), and a third hanging from the middle of the first */
START_TEST(test_interleaved_chains)
{
    g_rng = 15;
    const int n = 2001;
    int *lp = malloc(sizeof(int) * n);
    lp[0] = -1;
    for (int i = 1; i < n; ++i) lp[i] = i <= 2 ? 0 : i - 2;
    lp[1500] = 601;
    batch b = {0};
    batch_cap c = {0, 0};
    batch_add(&b, &c, n, lp, NULL, NULL);
    ck_assert_int_gt(check_chunked(&b, 0, "interleaved chains", NULL), 0);
    ck_assert_int_gt(check_step(&b, 0, 5, "interleaved chains (fused step)"), 0);
    batch_free(&b);
    free(lp);
}
END_TEST

START_TEST(test_bad_block_size)
{
    g_rng = 16;
    batch b = {0};
    batch_cap c = {0, 0};
    add_cable(&b, &c, 100);
    for (int k = 0; k < 2; ++k) {
        cs_hines_gpu_options opt;
        cs_hines_gpu_options_default(&opt);
        opt.block_size = k ? CS__CHK_MAX_L + 1 : CS__CHK_MIN_L - 1;
        cs__hines_hplan hp;
        char msg[256];
        ck_assert_int_eq(cs__hines_hplan_build(b.nsys, b.offset, b.p, CS__HV_CHUNKED, &opt, 132, &hp, msg, sizeof msg),
                         CS_SOLVER_ERR_INVALID);
        ck_assert_msg(strstr(msg, "block_size") != NULL, "%s", msg);
    }
    batch_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hines_chunked");
    TCase *tc = tcase_create("host");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_real_cells);
    tcase_add_test(tc, test_random_trees);
    tcase_add_test(tc, test_cable);
    tcase_add_test(tc, test_no_chunk);
    tcase_add_test(tc, test_interleaved_chains);
    tcase_add_test(tc, test_bad_block_size);
    tcase_add_test(tc, test_estimate);
    tcase_add_test(tc, test_too_little);
    tcase_add_test(tc, test_auto);
    tcase_add_test(tc, test_resolve_candidates);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
