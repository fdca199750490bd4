/* GPU batched Hines solvers (solver/cs_hines_gpu.h) against the CPU serial reference.
 *
 * Every variant (flat, interleaved, block_interleaved with BS 32 and 64, block_shared, variable,
 * fine with and without its set-up optimisations, fine in device memory, warp with its default
 * blocks and with 640-row blocks of unsplit branches, staged, chunked with the automatic L, 32 and 4, auto), in double and in
 * float, through host pointers, device pointers and the internal-layout path (convert, solve,
 * convert back), on: random trees; the six Table 4.1 classes of seed 000 (random trees with their
 * sizes and branch counts); every real SWC cell of shared/data/morphologies (discretised with
 * max_cv_length 10 µm, cable matrix d = C/dt + Σg + A·g_m, u = -g_axial/Ra, Ra 100 Ω·cm,
 * cm 1 µF/cm², dt 0.025 ms); and mixed batches of different morphologies. Compared with
 * cs_hines_solve_serial in double (float results against the double solve of the float-rounded
 * inputs) by max|x - x_ref| / max|x_ref|: <= 1e-12 in double, 1e-5 in float. Some real cells'
 * cable matrices are too ill-conditioned for 1e-5 in float whatever the algorithm (the plain
 * serial Hines loop in float reaches 1.2e-4 on the FlyWire cell: short CVs next to zero-area
 * nodes make g/(C/dt) ~ 1e4); there the float bound is max(1e-5, 10 × the error of that serial
 * float loop on the same system), and the normwise backward error
 * max|b - A·x| / max(|A|·|x| + |b|) must stay under 1e-6 in every float case.
 *
 * The fused membrane step (cs_hines_gpu_step_internal_d) is checked on every variant that runs it:
 * per-system (with and without shared constants on uniform batches), fine (its packs in shared
 * memory and in device memory), staged built for it, chunked (plans that cut, also with
 * const_coupling, and plans that cut nothing), against the serial solve of the system it
 * assembles, at the same 1e-12; two steps each, and after each step i, g and the branch points'
 * work entries must be zero.
 *
 * Two fine plans whose kernels need different shared memory, built one after the other, each solve
 * (1e-12) in either order after cs_hines_gpu_plan_prepare.
 *
 * Exit 77 (skipped) when CUDA is not compiled in or no device is present; the host planner's
 * checks (no GPU needed) are test_hines_gpu_planner.c. CS_TEST_SMALL=1 runs smaller batches (for
 * compute-sanitizer). CS_MORPH_DIR overrides the morphology folder. CS_TEST_VARIANTS="chunked fine" runs
 * only those variants' configurations on the GPU. */
#define _POSIX_C_SOURCE 200809L
#include "test_hines_gpu_common.h"

/* the serial Hines loop in float: what any float solver can be expected to reach */
static double *float_serial(const batch *b)
{
    int n = b->nrows;
    float *d = malloc(sizeof(float) * n), *u = malloc(sizeof(float) * n), *r = malloc(sizeof(float) * n);
    for (int i = 0; i < n; ++i) { d[i] = (float)b->d[i]; u[i] = (float)b->u[i]; r[i] = (float)b->rhs[i]; }
    for (int s = 0; s < b->nsys; ++s) {
        int o = b->offset[s], e = b->offset[s + 1];
        for (int i = e - 1; i > o; --i) { float f = u[i] / d[i]; d[b->p[i]] -= f * u[i]; r[b->p[i]] -= f * r[i]; }
        r[o] /= d[o];
        for (int i = o + 1; i < e; ++i) r[i] = (r[i] - u[i] * r[b->p[i]]) / d[i];
    }
    double *x = malloc(sizeof(double) * n);
    for (int i = 0; i < n; ++i) x[i] = r[i];
    free(d); free(u); free(r);
    return x;
}

/* normwise backward error of x for the system of b */
static double backward_error(const batch *b, const double *x)
{
    int n = b->nrows;
    double *res = malloc(sizeof(double) * n), *mag = malloc(sizeof(double) * n);
    for (int i = 0; i < n; ++i) { res[i] = b->rhs[i] - b->d[i] * x[i]; mag[i] = fabs(b->d[i] * x[i]) + fabs(b->rhs[i]); }
    for (int i = 0; i < n; ++i) {
        int q = b->p[i];
        if (q < 0) continue;
        res[i] -= b->u[i] * x[q]; mag[i] += fabs(b->u[i] * x[q]);
        res[q] -= b->u[i] * x[i]; mag[q] += fabs(b->u[i] * x[i]);
    }
    double r = 0, m = 0;
    for (int i = 0; i < n; ++i) { if (!(fabs(res[i]) <= r)) r = fabs(res[i]); if (mag[i] > m) m = mag[i]; }
    free(res); free(mag);
    return m > 0 ? r / m : r;
}

/* ---- GPU ---------------------------------------------------------------------------------- */
static void *dalloc(size_t n)
{
    void *p = NULL;
    ck_assert_msg(cs_hines_gpu_malloc(&p, n) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
    return p;
}
#define H2D(dst, src, n) ck_assert_msg(cs_hines_gpu_memcpy((dst), (src), (n)) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error())
#define D2H H2D

/* The fused step on the device, twice (the second step finds the work arrays as the first left
 * them), against the serial solve of the system it assembles; inputs built through the host
 * planner of the same variant, whose layout and row flags must match the device plan's. */
static void check_gpu_step(const batch *b, cs_hines_plan *pl, const cs_hines_gpu_options *o, const char *what)
{
    if (!cs_hines_gpu_plan_fuses(pl)) {
        cs_hines_step_d none = {0};
        ck_assert_int_eq(cs_hines_gpu_step_internal_d(pl, &none), CS_SOLVER_ERR_INVALID);
        unsigned char f;
        ck_assert_int_eq(cs_hines_gpu_plan_row_flags(pl, &f), CS_SOLVER_ERR_UNAVAILABLE);
        return;
    }
    cs_hines_gpu_options ho = *o;
    ho.variant = cs_hines_gpu_plan_variant(pl);
    cs__hines_hplan hp;
    char msg[256];
    ck_assert_msg(cs__hines_hplan_build(b->nsys, b->offset, b->p, cs__hines_variant_lookup(ho.variant), &ho, 132, &hp,
                                        msg, sizeof msg) == CS_SOLVER_OK, "%s", msg);
    size_t ni = cs_hines_gpu_plan_internal_size(pl);
    ck_assert_int_eq((long long)hp.internal_size, (long long)ni);
    unsigned char *fl = malloc(ni);
    ck_assert_int_eq(cs_hines_gpu_plan_row_flags(pl, fl), CS_SOLVER_OK);
    ck_assert_int_eq(cs_hines_gpu_plan_uniform(pl), hp.uniform);
    double *x = malloc(sizeof(double) * b->nrows);
    const int staged = hp.variant == CS__HV_STAGED;
    const int shares = cs_hines_gpu_plan_shares_constants(pl);
    ck_assert_int_eq(shares, cs__hines_hplan_shares_constants(&hp));
    for (int shared = 0; shared <= shares; ++shared) {
        step_inputs si;
        step_inputs_make(b, &hp, shared, &si);
        if (staged) /* its step needs the rows with current first */
            ck_assert_msg(cs_hines_gpu_plan_set_current(pl, si.row_flags) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
        for (size_t k = 0; k < ni; ++k)
            ck_assert_int_eq(fl[k], si.row_flags[k] & ~CS_HINES_ROW_CURRENT);
        double *sref = reference(&si.ref);
        size_t bytes = ni * sizeof(double);
        double *hv[] = {si.d0, si.cdt, si.b0, si.u, si.v, si.i, si.g, si.wa, si.wb};
        double *dv[9];
        for (int k = 0; k < 9; ++k) dv[k] = dalloc(bytes);
        int n0 = b->offset[1] - b->offset[0];
        unsigned char *dflags = dalloc(ni);
        H2D(dflags, si.flags, shared ? (size_t)n0 : ni);
        for (int k = 0; k < 9; ++k) H2D(dv[k], hv[k], bytes);
        double *da0 = dalloc(sizeof(double) * n0);
        if (shared) H2D(da0, si.a0, sizeof(double) * n0);
        cs_hines_step_d st = {dv[0], dv[1], dv[2], dv[3], dv[4], dv[5], dv[6], dflags, dv[7], dv[8], shared, da0, 0, NULL, NULL};
        double *back[4];
        for (int k = 0; k < 4; ++k) back[k] = malloc(bytes);
        for (int rep = 0; rep < 2; ++rep) {
            for (int k = 4; k < 7; ++k) H2D(dv[k], hv[k], bytes); /* v, i, g afresh */
            ck_assert_msg(cs_hines_gpu_step_internal_d(pl, &st) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
            ck_assert_msg(cs_hines_gpu_sync(pl) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
            D2H(back[0], dv[4], bytes);
            cs__hines_hplan_from_internal_host(&hp, CS_HINES_NODE, back[0], x);
            double e = relerr(b->nrows, x, sref);
            ck_assert_msg(e <= TOL_D, "%s [%s] fused step%s %d: error %.3g", what, hp.describe,
                          shared ? " (shared constants)" : "", rep + 1, e);
            D2H(back[0], dv[7], bytes);
            D2H(back[1], dv[8], bytes);
            D2H(back[2], dv[5], bytes);
            D2H(back[3], dv[6], bytes);
            check_step_leftovers(&si, back[0], back[1], back[2], back[3], what);
        }
        for (int k = 0; k < 4; ++k) free(back[k]);
        for (int k = 0; k < 9; ++k) cs_hines_gpu_free(dv[k]);
        cs_hines_gpu_free(dflags);
        cs_hines_gpu_free(da0);
        free(sref);
        step_inputs_free(&si);
    }
    if (!shares) { /* refused for systems of different structures, and by staged, fine and chunked */
        cs_hines_step_d bad = {(double *)fl, (double *)fl, (double *)fl, (double *)fl, (double *)fl, (double *)fl,
                               (double *)fl, fl, (double *)fl, (double *)fl, 1, (double *)fl, 0, NULL, NULL};
        ck_assert_int_eq(cs_hines_gpu_step_internal_d(pl, &bad), CS_SOLVER_ERR_INVALID);
    }
    free(fl); free(x);
    cs__hines_hplan_free(&hp);
}

static void check_gpu(const batch *b, const config *cf, const char *what)
{
    cs_hines_gpu_options o = make_opt(cf);
    cs_hines_plan *pl = NULL;
    cs_solver_status st = cs_hines_gpu_plan_create(b->nsys, b->offset, b->p, &o, &pl);
    if (st == CS_SOLVER_ERR_INVALID && strcmp(cf->variant, "staged") == 0) {
        ck_assert_msg(staged_refused_ok(b, cs_hines_gpu_last_error()), "%s staged refused: %s", what, cs_hines_gpu_last_error());
        return;
    }
    ck_assert_msg(st == CS_SOLVER_OK, "%s %s: create: %s: %s", what, cf->variant, cs_solver_status_string(st), cs_hines_gpu_last_error());
    const char *desc = cs_hines_gpu_plan_describe(pl);
    int n = b->nrows;
    size_t ni = cs_hines_gpu_plan_internal_size(pl);
    double *ref = reference(b);
    double *d = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    /* 1. double, host pointers */
    memcpy(d, b->d, sizeof(double) * n);
    memcpy(x, b->rhs, sizeof(double) * n);
    st = cs_hines_gpu_solve_d(pl, d, b->u, x);
    ck_assert_msg(st == CS_SOLVER_OK, "%s %s: %s", what, cf->variant, cs_hines_gpu_last_error());
    double e = relerr(n, x, ref);
    ck_assert_msg(e <= TOL_D, "%s [%s] double/host: error %.3g", what, desc, e);
    /* 2. double, device pointers (tree order) */
    double *dd = dalloc(sizeof(double) * n), *du = dalloc(sizeof(double) * n), *dr = dalloc(sizeof(double) * n);
    H2D(dd, b->d, sizeof(double) * n);
    H2D(du, b->u, sizeof(double) * n);
    H2D(dr, b->rhs, sizeof(double) * n);
    st = cs_hines_gpu_solve_d(pl, dd, du, dr);
    ck_assert_msg(st == CS_SOLVER_OK, "%s %s: %s", what, cf->variant, cs_hines_gpu_last_error());
    for (int i = 0; i < n; ++i) x[i] = NAN;
    D2H(x, dr, sizeof(double) * n);
    e = relerr(n, x, ref);
    ck_assert_msg(e <= TOL_D, "%s [%s] double/device: error %.3g", what, desc, e);
    /* 3. double, internal layout */
    double *id = dalloc(sizeof(double) * ni), *iu = dalloc(sizeof(double) * ni), *ir = dalloc(sizeof(double) * ni);
    H2D(dd, b->d, sizeof(double) * n);
    H2D(dr, b->rhs, sizeof(double) * n);
    ck_assert_int_eq(cs_hines_gpu_to_internal_d(pl, CS_HINES_NODE, dd, id), CS_SOLVER_OK);
    ck_assert_int_eq(cs_hines_gpu_to_internal_d(pl, CS_HINES_COUPLING, du, iu), CS_SOLVER_OK);
    ck_assert_int_eq(cs_hines_gpu_to_internal_d(pl, CS_HINES_NODE, dr, ir), CS_SOLVER_OK);
    ck_assert_int_eq(cs_hines_gpu_solve_internal_d(pl, id, iu, ir), CS_SOLVER_OK);
    ck_assert_int_eq(cs_hines_gpu_from_internal_d(pl, CS_HINES_NODE, ir, dr), CS_SOLVER_OK);
    ck_assert_msg(cs_hines_gpu_sync(pl) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
    for (int i = 0; i < n; ++i) x[i] = NAN;
    D2H(x, dr, sizeof(double) * n);
    e = relerr(n, x, ref);
    ck_assert_msg(e <= TOL_D, "%s [%s] double/internal: error %.3g", what, desc, e);
    /* the row map agrees with the conversion */
    int *map = malloc(sizeof(int) * n);
    ck_assert_int_eq(cs_hines_gpu_plan_row_map(pl, map), CS_SOLVER_OK);
    double *xi = malloc(sizeof(double) * ni);
    D2H(xi, ir, sizeof(double) * ni);
    for (int r = 0; r < n; ++r) ck_assert(map[r] >= 0 && (size_t)map[r] < ni && xi[map[r]] == x[r]);
    free(map); free(xi);
    check_gpu_step(b, pl, &o, what);
    /* 4. float, host pointers, against the double solve of the rounded inputs */
    float *fd = malloc(sizeof(float) * n), *fu = malloc(sizeof(float) * n), *fr = malloc(sizeof(float) * n);
    batch bf = *b;
    bf.d = malloc(sizeof(double) * n); bf.u = malloc(sizeof(double) * n); bf.rhs = malloc(sizeof(double) * n);
    for (int i = 0; i < n; ++i) {
        fd[i] = (float)b->d[i]; fu[i] = (float)b->u[i]; fr[i] = (float)b->rhs[i];
        bf.d[i] = fd[i]; bf.u[i] = fu[i]; bf.rhs[i] = fr[i];
    }
    double *reff = reference(&bf);
    double *xs = float_serial(b);
    double tol_f = fmax(TOL_F, 10.0 * relerr(n, xs, reff));
    free(xs);
    st = cs_hines_gpu_solve_f(pl, fd, fu, fr);
    ck_assert_msg(st == CS_SOLVER_OK, "%s %s: %s", what, cf->variant, cs_hines_gpu_last_error());
    for (int i = 0; i < n; ++i) x[i] = fr[i];
    e = relerr(n, x, reff);
    ck_assert_msg(e <= tol_f, "%s [%s] float/host: error %.3g (bound %.3g)", what, desc, e, tol_f);
    e = backward_error(&bf, x);
    ck_assert_msg(e <= 1e-6, "%s [%s] float/host: backward error %.3g", what, desc, e);
    /* 5. float, internal layout on device */
    float *fdd = dalloc(sizeof(float) * n), *fdu = dalloc(sizeof(float) * n), *fdr = dalloc(sizeof(float) * n);
    float *fid = dalloc(sizeof(float) * ni), *fiu = dalloc(sizeof(float) * ni), *fir = dalloc(sizeof(float) * ni);
    for (int i = 0; i < n; ++i) { fd[i] = (float)b->d[i]; fr[i] = (float)b->rhs[i]; }
    H2D(fdd, fd, sizeof(float) * n);
    H2D(fdu, fu, sizeof(float) * n);
    H2D(fdr, fr, sizeof(float) * n);
    ck_assert_int_eq(cs_hines_gpu_to_internal_f(pl, CS_HINES_NODE, fdd, fid), CS_SOLVER_OK);
    ck_assert_int_eq(cs_hines_gpu_to_internal_f(pl, CS_HINES_COUPLING, fdu, fiu), CS_SOLVER_OK);
    ck_assert_int_eq(cs_hines_gpu_to_internal_f(pl, CS_HINES_NODE, fdr, fir), CS_SOLVER_OK);
    ck_assert_int_eq(cs_hines_gpu_solve_internal_f(pl, fid, fiu, fir), CS_SOLVER_OK);
    ck_assert_int_eq(cs_hines_gpu_from_internal_f(pl, CS_HINES_NODE, fir, fdr), CS_SOLVER_OK);
    ck_assert_msg(cs_hines_gpu_sync(pl) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
    D2H(fr, fdr, sizeof(float) * n);
    for (int i = 0; i < n; ++i) x[i] = fr[i];
    e = relerr(n, x, reff);
    ck_assert_msg(e <= tol_f, "%s [%s] float/internal: error %.3g (bound %.3g)", what, desc, e, tol_f);
    void *frees[] = {dd, du, dr, id, iu, ir, fdd, fdu, fdr, fid, fiu, fir};
    for (size_t k = 0; k < sizeof frees / sizeof frees[0]; ++k) cs_hines_gpu_free(frees[k]);
    free(fd); free(fu); free(fr); free(bf.d); free(bf.u); free(bf.rhs); free(reff);
    free(ref); free(d); free(x);
    cs_hines_gpu_plan_destroy(pl);
}

/* CS_TEST_VARIANTS="chunked fine": only those variants on the GPU (while working on one) */
static int variant_wanted(const char *v)
{
    const char *list = getenv("CS_TEST_VARIANTS");
    if (!list || !*list) return 1;
    const size_t n = strlen(v);
    for (const char *q = strstr(list, v); q; q = strstr(q + 1, v))
        if ((q == list || q[-1] == ' ') && (q[n] == 0 || q[n] == ' ')) return 1;
    return 0;
}

static void check_all_configs(const batch *b, const char *what)
{
    for (int k = 0; k < NCONFIG; ++k)
        if (variant_wanted(g_configs[k].variant)) check_gpu(b, &g_configs[k], what);
}

/* chunked with const_coupling: the reduced u is copied at the first internal solve only; two
 * solves with the same u (the second with rhs doubled: x doubled) must both match the serial
 * solve, and a third with another u array (the same values) too; then two fused steps */
static void check_const_coupling(const batch *b)
{
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.variant = "chunked";
    o.const_coupling = 1;
    cs_hines_plan *pl = NULL;
    ck_assert_msg(cs_hines_gpu_plan_create(b->nsys, b->offset, b->p, &o, &pl) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
    const int n = b->nrows;
    const size_t ni = cs_hines_gpu_plan_internal_size(pl);
    double *ref = reference(b), *x = malloc(sizeof(double) * n), *r2 = malloc(sizeof(double) * n);
    double *dd = dalloc(sizeof(double) * n), *du = dalloc(sizeof(double) * n), *dr = dalloc(sizeof(double) * n);
    double *id = dalloc(sizeof(double) * ni), *iu = dalloc(sizeof(double) * ni), *iu2 = dalloc(sizeof(double) * ni);
    double *ir = dalloc(sizeof(double) * ni);
    H2D(du, b->u, sizeof(double) * n);
    ck_assert_int_eq(cs_hines_gpu_to_internal_d(pl, CS_HINES_COUPLING, du, iu), CS_SOLVER_OK);
    ck_assert_int_eq(cs_hines_gpu_to_internal_d(pl, CS_HINES_COUPLING, du, iu2), CS_SOLVER_OK);
    for (int i = 0; i < n; ++i) r2[i] = 2.0 * b->rhs[i];
    for (int k = 0; k < 3; ++k) {
        const double f = k == 1 ? 2.0 : 1.0;
        H2D(dd, b->d, sizeof(double) * n);
        H2D(dr, k == 1 ? r2 : b->rhs, sizeof(double) * n);
        ck_assert_int_eq(cs_hines_gpu_to_internal_d(pl, CS_HINES_NODE, dd, id), CS_SOLVER_OK);
        ck_assert_int_eq(cs_hines_gpu_to_internal_d(pl, CS_HINES_NODE, dr, ir), CS_SOLVER_OK);
        ck_assert_int_eq(cs_hines_gpu_solve_internal_d(pl, id, k == 2 ? iu2 : iu, ir), CS_SOLVER_OK);
        ck_assert_int_eq(cs_hines_gpu_from_internal_d(pl, CS_HINES_NODE, ir, dr), CS_SOLVER_OK);
        ck_assert_msg(cs_hines_gpu_sync(pl) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
        D2H(x, dr, sizeof(double) * n);
        for (int i = 0; i < n; ++i) x[i] /= f;
        const double e = relerr(n, x, ref);
        ck_assert_msg(e <= TOL_D, "chunked const_coupling, solve %d: error %.3g", k, e);
    }
    check_gpu_step(b, pl, &o, "chunked const_coupling"); /* two steps: the second finds u copied */
    void *frees[] = {dd, du, dr, id, iu, iu2, ir};
    for (size_t k = 0; k < sizeof frees / sizeof frees[0]; ++k) cs_hines_gpu_free(frees[k]);
    free(ref); free(x); free(r2);
    cs_hines_gpu_plan_destroy(pl);
}

/* chunked on what it is for: an unbranched cable of 100 000 rows (four nested chunked levels)
 * and large trees with few branches (long runs) */
START_TEST(test_gpu_chunked_large)
{
    batch b;
    batch_cap c = {0, 0};
    memset(&b, 0, sizeof b);
    g_rng = 77;
    random_system(&b, &c, g_small ? 5000 : 100000, 1, 78);
    for (int k = 0; k < (g_small ? 2 : 20); ++k) random_system(&b, &c, 10000, 41, 80 + k);
    for (int k = 0; k < NCONFIG; ++k)
        if (!strcmp(g_configs[k].variant, "chunked") && variant_wanted("chunked")) check_gpu(&b, &g_configs[k], "cable and long runs");
    if (variant_wanted("chunked")) check_const_coupling(&b);
    batch_free(&b);
}
END_TEST

/* Kernel attributes belong to the kernels, not to the plans: a fine plan of 2 500-row cells built
 * after one of 4 000-row cells sets fine's shared memory to 60 KB where the first needs 96 KB.
 * After cs_hines_gpu_plan_prepare each plan solves as well as alone, in the order built and in
 * the other (auto's solver-level trial builds its plans at once, then times them in turn). */
START_TEST(test_gpu_plan_prepare)
{
    if (!variant_wanted("fine")) return;
    batch a, b;
    batch_cap ca = {0, 0}, cb = {0, 0};
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    g_rng = 91;
    for (int k = 0; k < 3; ++k) random_system(&a, &ca, 4000, 200, 92 + k);
    for (int k = 0; k < 3; ++k) random_system(&b, &cb, 2500, 120, 96 + k);
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.variant = "fine";
    cs_hines_plan *pa = NULL, *pb = NULL;
    ck_assert_msg(cs_hines_gpu_plan_create(a.nsys, a.offset, a.p, &o, &pa) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
    ck_assert_msg(cs_hines_gpu_plan_create(b.nsys, b.offset, b.p, &o, &pb) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
    const batch *bs[2] = {&a, &b};
    cs_hines_plan *ps[2] = {pa, pb};
    for (int k = 0; k < 4; ++k) { /* a, b, then b, a */
        const int w = k == 0 || k == 3 ? 0 : 1;
        const batch *x = bs[w];
        ck_assert_msg(cs_hines_gpu_plan_prepare(ps[w]) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
        double *d = malloc(sizeof(double) * x->nrows), *r = malloc(sizeof(double) * x->nrows), *ref = reference(x);
        memcpy(d, x->d, sizeof(double) * x->nrows);
        memcpy(r, x->rhs, sizeof(double) * x->nrows);
        ck_assert_msg(cs_hines_gpu_solve_d(ps[w], d, x->u, r) == CS_SOLVER_OK, "plan %c: %s", "ab"[w],
                      cs_hines_gpu_last_error());
        const double e = relerr(x->nrows, r, ref);
        ck_assert_msg(e <= TOL_D, "plan %c after another plan was built: error %.3g", "ab"[w], e);
        free(d); free(r); free(ref);
    }
    ck_assert_int_eq(cs_hines_gpu_plan_prepare(NULL), CS_SOLVER_ERR_INVALID);
    cs_hines_gpu_plan_destroy(pa);
    cs_hines_gpu_plan_destroy(pb);
    batch_free(&a);
    batch_free(&b);
}
END_TEST

START_TEST(test_gpu_random)
{
    batch b;
    make_random_batch(&b, g_small ? 20 : 300, 31);
    check_all_configs(&b, "random trees");
    batch_free(&b);
}
END_TEST

START_TEST(test_gpu_classes)
{
    for (int k = 0; k < 6; ++k) {
        batch b;
        make_class_batch(&b, k, g_small ? 8 : 200, 40 + k);
        check_all_configs(&b, cs_hines_table41[k].name);
        batch_free(&b);
    }
}
END_TEST

START_TEST(test_gpu_cells)
{
    load_cells();
    for (int k = 0; k < g_ncells; ++k) { /* each cell alone, a few copies of it */
        batch b;
        batch_cap c = {0, 0};
        memset(&b, 0, sizeof b);
        g_rng = 50 + k;
        for (int j = 0; j < (g_small ? 1 : 3); ++j) batch_add(&b, &c, g_cells[k].n, g_cells[k].lp, g_cells[k].g, g_cells[k].cdt);
        check_all_configs(&b, g_cells[k].name);
        batch_free(&b);
    }
}
END_TEST

START_TEST(test_gpu_mixed)
{
    load_cells();
    batch b;
    make_mixed_batch(&b, g_small ? 14 : 120, 1, 60);
    check_all_configs(&b, "mixed");
    batch_free(&b);
    /* large enough that staged gives each structure its own launch (several launches of one
     * kernel with different shared memory) */
    make_mixed_batch(&b, 12000, 0, 61);
    config sc = {"staged", 0, 0, 0, 0, 0};
    check_gpu(&b, &sc, "large mixed");
    batch_free(&b);
}
END_TEST

/* enough big-low cells (1250 groups of 4: several rounds of 5 warps per multiprocessor on up to
 * 250 of them) that staged keeps 40 steps' eliminated rows in registers: the kernel of
 * CS__STG_REG_STEPS_MORE, against the CPU */
START_TEST(test_gpu_more_reg_steps)
{
    batch b;
    make_class_batch(&b, 4, 5000, 62);
    config sc = {"staged", 0, 0, 0, 0, 0};
    cs_hines_gpu_options o = make_opt(&sc);
    cs_hines_plan *pl = NULL;
    ck_assert_int_eq(cs_hines_gpu_plan_create(b.nsys, b.offset, b.p, &o, &pl), CS_SOLVER_OK);
    char want[32];
    snprintf(want, sizeof want, "register steps=%d,", CS__STG_REG_STEPS_MORE(4));
    ck_assert_msg(strstr(cs_hines_gpu_plan_describe(pl), want) != NULL, "%s", cs_hines_gpu_plan_describe(pl));
    cs_hines_gpu_plan_destroy(pl);
    check_gpu(&b, &sc, "big-low, more register steps");
    batch_free(&b);
}
END_TEST

/* two-way sections on the GPU, against the CPU: few big-low cells (no register steps) and, on
 * 132 multiprocessors (H100, H200), more than fit at once without register steps (7 warps per
 * multiprocessor), so the plan keeps 24 steps in registers (9 warps): the two kernels of
 * CS__STG_TOP */
START_TEST(test_gpu_two_way)
{
    const struct { int count; const char *want; } cases[] = {{64, "register steps=0, two-way sections,"},
                                                              {1000, "register steps=24, two-way sections,"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        batch b;
        make_class_batch(&b, 4, cases[k].count, 63 + (int)k);
        config sc = {"staged", 0, 0, 0, 0, 0};
        cs_hines_gpu_options o = make_opt(&sc);
        cs_hines_plan *pl = NULL;
        ck_assert_int_eq(cs_hines_gpu_plan_create(b.nsys, b.offset, b.p, &o, &pl), CS_SOLVER_OK);
        ck_assert_msg(strstr(cs_hines_gpu_plan_describe(pl), cases[k].want) != NULL, "%s", cs_hines_gpu_plan_describe(pl));
        cs_hines_gpu_plan_destroy(pl);
        check_gpu(&b, &sc, "big-low, two-way sections");
        batch_free(&b);
    }
    /* a launch of 4 cells per warp after one of a single 695-row cell: its 16-byte copies start
     * aligned (they faulted with "misaligned address" before the layout aligned each launch) */
    batch tb;
    make_two_class_batch(&tb, 4, 1, 1, 600, 1004);
    config sc = {"staged", 0, 0, 0, 0, 0};
    check_gpu(&tb, &sc, "big-low then small-high");
    batch_free(&tb);
}
END_TEST

/* a solve on the device (the plan for its own multiprocessors: nsm is the host planner's) */
static double *inv_solve_gpu(const batch *b, const cs_hines_gpu_options *o, int nsm, char *desc, size_t len)
{
    (void)nsm;
    cs_hines_plan *pl = NULL;
    ck_assert_msg(cs_hines_gpu_plan_create(b->nsys, b->offset, b->p, o, &pl) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
    double *d = malloc(sizeof(double) * (size_t)b->nrows), *x = malloc(sizeof(double) * (size_t)b->nrows);
    memcpy(d, b->d, sizeof(double) * (size_t)b->nrows);
    memcpy(x, b->rhs, sizeof(double) * (size_t)b->nrows);
    ck_assert_msg(cs_hines_gpu_solve_d(pl, d, b->u, x) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
    snprintf(desc, len, "%s", cs_hines_gpu_plan_describe(pl));
    free(d);
    cs_hines_gpu_plan_destroy(pl);
    return x;
}

/* staged with CS_HINES_STAGED_INVARIANT on the device: each cell's x bitwise the same in the
 * whole network of the real cells and in a share of it, with 1, 2 or 4 cells per warp (other
 * kernels: the compiler's contractions must not differ between them); check_staged_invariance */
START_TEST(test_gpu_staged_invariant)
{
    check_staged_invariance(inv_solve_gpu, "GPU");
}
END_TEST

/* cs_hines_step_d.after_launch: the launches' row ranges and streams as the step reports them */
typedef struct {
    int calls, fail_at;
    long long row0[64], row1[64];
    void *stream[64];
} after_log;
static int log_after_launch(void *ctx, long long row0, long long row1, void *stream)
{
    after_log *g = ctx;
    if (g->calls < 64) { g->row0[g->calls] = row0; g->row1[g->calls] = row1; g->stream[g->calls] = stream; }
    return ++g->calls == g->fail_at;
}
/* the ranges, one a launch (the describe's "[cells/warp=" entries for staged, one otherwise, as
 * cs_hines_gpu_plan_step_launches says), tile [0, ni) in some order (staged queues its launches
 * last first); each of several launches has a stream of its own */
static void check_after_log(const after_log *g, cs_hines_plan *pl, long long ni)
{
    int launches = 0;
    const char *d = cs_hines_gpu_plan_describe(pl);
    for (const char *q = d; (q = strstr(q, "[cells/warp=")) != NULL; ++q) ++launches;
    if (strcmp(cs_hines_gpu_plan_variant(pl), "staged")) launches = 1;
    ck_assert_int_eq(cs_hines_gpu_plan_step_launches(pl), launches);
    ck_assert_msg(g->calls == launches, "after_launch: %d calls for %d launches (%s)", g->calls, launches, d);
    long long at = 0; /* the range that starts where the last one found ends, calls times */
    for (int k = 0; k < g->calls; ++k) {
        int next = -1;
        for (int m = 0; m < g->calls; ++m)
            if (g->row0[m] == at && g->row1[m] > at) next = m;
        ck_assert_msg(next >= 0, "after_launch: no range starts at row %lld", at);
        at = g->row1[next];
    }
    ck_assert_int_eq(at, ni);
    for (int k = 0; k < g->calls; ++k)
        for (int m = 0; m < k; ++m) ck_assert_msg(g->stream[k] != g->stream[m], "launches %d and %d share a stream", m, k);
}

/* staged's fused step on the device with constants shared by structure (share_case_make): the
 * device plan shares the groups the host planner does, and with the sharing groups' own
 * constants NaN the step solves every cell's own system; keep_currents leaves i and g, else they
 * are zeroed. The cases of test_staged_share_constants (_i): where all cells are equal, the
 * launches of 4 and 2 cells a warp hold the constants once a row (the plan says so), and a plan
 * with CS_HINES_STAGED_CONSTANTS_PER_CELL, reading the same values, gives v, i, g bit for bit. */
START_TEST(test_gpu_staged_share_constants)
{
    static const int all_equal[4] = {0, 1, 1, 1}, cells[4] = {0, 4, 2, 1};
    share_case sc;
    share_case_make(&sc, all_equal[_i], cells[_i]);
    cs__hines_hplan hp;
    share_case_plan(&sc, &hp);
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.variant = "staged";
    o.fused_step = 1;
    o.block_size = cells[_i];
    cs_hines_plan *pl = NULL;
    ck_assert_msg(cs_hines_gpu_plan_create(sc.b.nsys, sc.b.offset, sc.b.p, &o, &pl) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
    const size_t ni = cs_hines_gpu_plan_internal_size(pl), bytes = ni * sizeof(double);
    ck_assert_int_eq((long long)ni, (long long)hp.internal_size);
    long long shared = -1, shared_host = -1;
    for (int k = SC_D0; k <= SC_CDT; ++k) {
        ck_assert_msg(cs_hines_gpu_plan_share_constants(pl, sc.t[k], k == SC_D0, &shared) == CS_SOLVER_OK, "%s",
                      cs_hines_gpu_last_error());
        shared_host = cs__staged_share_constants(&hp, sc.t[k], k == SC_D0);
    }
    ck_assert_int_eq(shared, shared_host);
    share_case_check_groups(&sc, &hp, shared);
    int uc_host = 0, warps = 0;
    for (int l = 0; l < hp.stg_nlaunch; ++l) uc_host += hp.stg_launch[CS__SL_N * l + CS__SL_UC];
    ck_assert_int_eq(cs_hines_gpu_plan_slot_constants(pl, &warps), uc_host);
    ck_assert_int_eq(uc_host > 0, all_equal[_i] && cells[_i] > 1);
    if (uc_host) ck_assert_int_gt(warps, 0);
    share_inputs in;
    share_inputs_make(&sc, &hp, &in);
    ck_assert_msg(cs_hines_gpu_plan_set_current(pl, in.flags) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
    double *dv[SC_NT + 2];
    for (int k = 0; k < SC_NT; ++k) { dv[k] = dalloc(bytes); H2D(dv[k], in.a[k], bytes); }
    dv[SC_NT] = dalloc(bytes); dv[SC_NT + 1] = dalloc(bytes); /* zero work arrays (staged does not use them) */
    unsigned char *dflags = dalloc(ni); /* staged reads its schedule's marks, not these */
    H2D(dflags, in.flags, ni);
    double *back[3];
    for (int k = 0; k < 3; ++k) back[k] = malloc(bytes);
    for (int keep = 0; keep <= 1; ++keep) {
        H2D(dv[SC_V], in.v0, bytes); H2D(dv[SC_I], in.i0, bytes); H2D(dv[SC_G], in.g0, bytes);
        after_log lg = {0, 0, {0}, {0}, {NULL}};
        cs_hines_step_d st = {dv[SC_D0], dv[SC_CDT], dv[SC_B0], dv[SC_U], dv[SC_V], dv[SC_I], dv[SC_G], dflags, dv[SC_NT],
                              dv[SC_NT + 1], 0, NULL, keep, keep ? log_after_launch : NULL, &lg};
        ck_assert_msg(cs_hines_gpu_step_internal_d(pl, &st) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
        ck_assert_msg(cs_hines_gpu_sync(pl) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
        if (keep) check_after_log(&lg, pl, (long long)ni);
        D2H(back[0], dv[SC_V], bytes); D2H(back[1], dv[SC_I], bytes); D2H(back[2], dv[SC_G], bytes);
        const double e = share_inputs_check(&sc, &hp, &in, back[0], back[1], back[2], keep, 1);
        ck_assert_msg(e <= TOL_D, "GPU [%s] shared constants%s: error %.3g", hp.describe, keep ? ", keep_currents" : "", e);
    }
    if (uc_host) { /* the constants once per cell in the rings: the same values read, bit for bit */
        cs_hines_gpu_options o2 = o;
        o2.fine_flags |= CS_HINES_STAGED_CONSTANTS_PER_CELL;
        cs_hines_plan *pc = NULL;
        ck_assert_msg(cs_hines_gpu_plan_create(sc.b.nsys, sc.b.offset, sc.b.p, &o2, &pc) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
        for (int k = SC_D0; k <= SC_CDT; ++k)
            ck_assert_msg(cs_hines_gpu_plan_share_constants(pc, sc.t[k], k == SC_D0, NULL) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
        ck_assert_int_eq(cs_hines_gpu_plan_slot_constants(pc, NULL), 0);
        ck_assert_msg(cs_hines_gpu_plan_set_current(pc, in.flags) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
        double *per_cell[2][3];
        for (int run = 0; run < 2; ++run) {
            cs_hines_plan *p = run ? pc : pl;
            H2D(dv[SC_V], in.v0, bytes); H2D(dv[SC_I], in.i0, bytes); H2D(dv[SC_G], in.g0, bytes);
            cs_hines_step_d st = {dv[SC_D0], dv[SC_CDT], dv[SC_B0], dv[SC_U], dv[SC_V], dv[SC_I], dv[SC_G], dflags, dv[SC_NT],
                                  dv[SC_NT + 1], 0, NULL, 0, NULL, NULL};
            ck_assert_msg(cs_hines_gpu_step_internal_d(p, &st) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
            ck_assert_msg(cs_hines_gpu_sync(p) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
            for (int k = 0; k < 3; ++k) per_cell[run][k] = malloc(bytes);
            D2H(per_cell[run][0], dv[SC_V], bytes); D2H(per_cell[run][1], dv[SC_I], bytes); D2H(per_cell[run][2], dv[SC_G], bytes);
        }
        for (int k = 0; k < 3; ++k) {
            ck_assert_msg(memcmp(per_cell[0][k], per_cell[1][k], bytes) == 0, "GPU [%s]: constants once a row and once a cell differ (array %d)",
                          hp.describe, k);
            free(per_cell[0][k]); free(per_cell[1][k]);
        }
        cs_hines_gpu_plan_destroy(pc);
    }
    { /* a failing after_launch ends the step with CS_SOLVER_ERR_INVALID */
        after_log lg = {0, 1, {0}, {0}, {NULL}};
        cs_hines_step_d st = {dv[SC_D0], dv[SC_CDT], dv[SC_B0], dv[SC_U], dv[SC_V], dv[SC_I], dv[SC_G], dflags, dv[SC_NT],
                              dv[SC_NT + 1], 0, NULL, 1, log_after_launch, &lg};
        ck_assert_int_eq(cs_hines_gpu_step_internal_d(pl, &st), CS_SOLVER_ERR_INVALID);
        ck_assert(strstr(cs_hines_gpu_last_error(), "after_launch") != NULL);
        ck_assert_int_eq(lg.calls, 1);
        ck_assert_msg(cs_hines_gpu_sync(pl) == CS_SOLVER_OK, "%s", cs_hines_gpu_last_error());
    }
    for (int k = 0; k < 3; ++k) free(back[k]);
    for (int k = 0; k < SC_NT + 2; ++k) cs_hines_gpu_free(dv[k]);
    cs_hines_gpu_free(dflags);
    share_inputs_free(&in);
    cs_hines_gpu_plan_destroy(pl);
    cs__hines_hplan_free(&hp);
    share_case_free(&sc);
}
END_TEST

START_TEST(test_gpu_errors)
{
    int off[2] = {0, 3}, p[3] = {-1, 0, 0};
    cs_hines_plan *pl = NULL;
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.variant = "nonsense";
    ck_assert_int_eq(cs_hines_gpu_plan_create(1, off, p, &o, &pl), CS_SOLVER_ERR_INVALID);
    ck_assert_ptr_null(pl);
    ck_assert(strstr(cs_hines_gpu_last_error(), "nonsense") != NULL);
    int pbad[3] = {-1, 2, 0};
    ck_assert_int_eq(cs_hines_gpu_plan_create(1, off, pbad, NULL, &pl), CS_SOLVER_ERR_INVALID);
    o.variant = "auto";
    ck_assert_int_eq(cs_hines_gpu_plan_create(1, off, p, &o, &pl), CS_SOLVER_OK);
    ck_assert_str_eq(cs_hines_gpu_plan_variant(pl), "staged"); /* below 1024 cells per multiprocessor */
    ck_assert_int_eq(cs_hines_gpu_solve_d(pl, NULL, NULL, NULL), CS_SOLVER_ERR_INVALID);
    cs_hines_gpu_plan_destroy(pl);
}
END_TEST

static Suite *gpu_suite(void)
{
    Suite *s = suite_create("hines_gpu");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_gpu_errors);
    tcase_add_test(tc, test_gpu_random);
    tcase_add_test(tc, test_gpu_classes);
    tcase_add_test(tc, test_gpu_cells);
    tcase_add_test(tc, test_gpu_mixed);
    tcase_add_test(tc, test_gpu_more_reg_steps);
    tcase_add_test(tc, test_gpu_two_way);
    tcase_add_test(tc, test_gpu_chunked_large);
    tcase_add_loop_test(tc, test_gpu_staged_share_constants, 0, 4);
    suite_add_tcase(s, tc);
    TCase *tp = tcase_create("prepare"); /* alone: CK_RUN_CASE=prepare (scripts/gpu_solver_trial.sh) */
    tcase_set_timeout(tp, 600);
    tcase_add_test(tp, test_gpu_plan_prepare);
    suite_add_tcase(s, tp);
    TCase *ti = tcase_create("invariant"); /* alone: CK_RUN_CASE=invariant (scripts/gpu_staged_invariant.sh) */
    tcase_set_timeout(ti, 600);
    tcase_add_test(ti, test_gpu_staged_invariant);
    suite_add_tcase(s, ti);
    return s;
}

int main(void)
{
    const char *sm = getenv("CS_TEST_SMALL");
    g_small = sm && *sm && strcmp(sm, "0") != 0;
    if (!cs_hines_gpu_compiled()) {
        printf("SKIP: CUDA not compiled\n");
        return 77;
    }
    if (cs_hines_gpu_device_count() <= 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    char name[256];
    cs_hines_gpu_device_name(0, name, sizeof name);
    printf("device: %s\n", name);
    SRunner *sr = srunner_create(gpu_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_VERBOSE);
    const int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
