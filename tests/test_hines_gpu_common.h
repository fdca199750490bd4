/* Shared by test_hines_gpu.c (the GPU suite) and test_hines_gpu_planner.c (the host planner
 * suite): the batches (random trees, Table 4.1 classes, real cells, mixed), the serial reference
 * and its error, the fused step's inputs, and the variant configurations. Static functions: each
 * program includes it once. */
#ifndef TEST_HINES_GPU_COMMON_H
#define TEST_HINES_GPU_COMMON_H

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

#define TOL_D 1e-12
#define TOL_F 1e-5

static int g_small;

/* ---- data --------------------------------------------------------------------------------- */
#include "test_rng.h"

#include "test_hines_batch.h"

static void random_system(batch *b, batch_cap *c, int n, int nbranch, uint64_t seed)
{
    int *lp = malloc(sizeof(int) * n);
    ck_assert_int_eq(cs_hines_random_tree(n, nbranch, seed, lp), 0);
    ck_assert_int_eq(cs_hines_count_branches(n, lp), nbranch);
    batch_add(b, c, n, lp, NULL, NULL);
    free(lp);
}

/* ---- real cells ------------------------------------------------------------------------------ */
typedef struct {
    char name[256];
    int n;
    int *lp;
    double *g, *cdt; /* [µS] */
} cell;
static cell g_cells[64];
static int g_ncells = -1;

static const char *morph_dir(void)
{
    const char *e = getenv("CS_MORPH_DIR");
    return (e && *e) ? e : CS_SHARED_DIR "/data/morphologies";
}

static void load_cells(void)
{
    if (g_ncells >= 0) return;
    g_ncells = 0;
    DIR *dir = opendir(morph_dir());
    ck_assert_msg(dir != NULL, "cannot open the morphology folder %s", morph_dir());
    struct dirent *e;
    char names[64][256];
    int nn = 0;
    while ((e = readdir(dir)) && nn < 64) {
        size_t l = strlen(e->d_name);
        if (l > 4 && l < 256 && strcmp(e->d_name + l - 4, ".swc") == 0) snprintf(names[nn++], 256, "%.255s", e->d_name);
    }
    closedir(dir);
    ck_assert_msg(nn > 0, "no .swc file in %s", morph_dir());
    /* sorted, so that the order does not depend on the file system */
    for (int i = 0; i < nn; ++i)
        for (int j = i + 1; j < nn; ++j)
            if (strcmp(names[j], names[i]) < 0) { char t[256]; memcpy(t, names[i], 256); memcpy(names[i], names[j], 256); memcpy(names[j], t, 256); }
    const double Ra = 100.0;   /* [Ω·cm] */
    const double cm = 1.0;     /* [µF/cm²] */
    const double dt = 0.025;   /* [ms] */
    const double gm = 0.0003;  /* membrane conductance [S/cm²] (hh's leak) */
    for (int k = 0; k < nn; ++k) {
        char path[2048];
        snprintf(path, sizeof path, "%.1000s/%.255s", morph_dir(), names[k]);
        cs_swc_options so = {1.0, 0.0, 0};
        if (strstr(names[k], "flywire")) { so.scale = 0.001; so.min_radius = 0.1; }
        cs_morph m;
        cs_status st = cs_morph_load_swc(path, &so, &m);
        ck_assert_msg(st == CS_OK, "%s: %s", path, cs_error_message());
        cs_cv_policy pol = {10.0, 0, 0};
        cs_geometry geo;
        st = cs_discretize(&m, &pol, &geo);
        ck_assert_msg(st == CS_OK, "%s: %s", path, cs_error_message());
        cell *c = &g_cells[g_ncells++];
        snprintf(c->name, sizeof c->name, "%.255s", names[k]);
        c->n = geo.ncv;
        c->lp = malloc(sizeof(int) * c->n);
        c->g = malloc(sizeof(double) * c->n);
        c->cdt = malloc(sizeof(double) * c->n);
        for (int i = 0; i < c->n; ++i) {
            c->lp[i] = geo.parent[i];
            c->g[i] = i ? geo.g_axial[i] / Ra : 0.0;            /* [µS] */
            double C = 1e-5 * cm * geo.area[i];                  /* [nF] (area [µm²]) */
            c->cdt[i] = C / dt + 1e-2 * gm * geo.area[i];        /* [µS]: nF/ms, S/cm²·µm² → µS */
        }
        cs_geometry_free(&geo);
        cs_morph_free(&m);
    }
}

/* ---- comparison -------------------------------------------------------------------------- */
static double *reference(const batch *b)
{
    double *d = malloc(sizeof(double) * b->nrows), *x = malloc(sizeof(double) * b->nrows);
    memcpy(d, b->d, sizeof(double) * b->nrows);
    memcpy(x, b->rhs, sizeof(double) * b->nrows);
    ck_assert_int_eq(cs_hines_solve_serial(b->nsys, b->offset, b->p, d, b->u, x), CS_SOLVER_OK);
    free(d);
    return x;
}

static double relerr(int n, const double *x, const double *ref)
{
    double e = 0, m = 0;
    for (int i = 0; i < n; ++i) {
        double a = fabs(x[i] - ref[i]);
        if (!(a <= e)) e = a; /* NaN propagates */
        if (fabs(ref[i]) > m) m = fabs(ref[i]);
    }
    return m > 0 ? e / m : e;
}

/* ---- inputs of the fused step (cs_hines_gpu_step_internal_d) ------------------------------ */
/* A membrane state built on b's matrix: random v [mV], currents at ~30 % of the rows, d0 = d − g,
 * random b0; the system the step must solve is then assembled as the step does it
 * (d0 + g, cdt·v + b0 − (i − g·v)) into ref (a copy of b's structure with that d, u and rhs).
 * shared: d0, cdt, b0 and u are those of system 0, row by row, for every system (identical cells;
 * the step then reads them from one system's tree-order rows). Arrays in the plan's internal
 * layout (padding rows 0). */
typedef struct {
    size_t ni;
    double *d0, *cdt, *b0, *u, *v, *i, *g, *wa, *wb;
    double *a0; /* shared: system 0's pivots without currents (cs_hines_clean_pivots) */
    unsigned char *row_flags; /* per internal row */
    unsigned char *flags;     /* what the step reads: row_flags, or with shared constants one
                                 system's rows, each the union over the systems */
    int shared;
    batch ref;
} step_inputs;

static void step_inputs_make(const batch *b, const cs__hines_hplan *hp, int shared, step_inputs *s)
{
    int n = b->nrows;
    size_t ni = (size_t)hp->internal_size;
    enum { V, G, I, CDT, D0, B0, U, CUR, NT };
    double *t[NT], *cur_i = calloc(ni, sizeof(double));
    for (int k = 0; k < NT; ++k) t[k] = malloc(sizeof(double) * n);
    for (int sy = 0; sy < b->nsys; ++sy)
        for (int r = b->offset[sy]; r < b->offset[sy + 1]; ++r) {
            /* shared: identical cells, currents at some of the same few rows of each (as
             * mechanisms are placed), so that many rows have a constant pivot; every third cell
             * lacks the currents at even rows, which the union flags still mark */
            int r0 = shared ? r - b->offset[sy] : r; /* the row whose constants r uses */
            int has = shared ? (r0 * 2654435761u) % 97u < 3u && (sy % 3 != 1 || r0 % 2) : urand() < 0.3;
            t[V][r] = -80.0 + 60.0 * urand();
            t[G][r] = has ? 0.5 * b->d[r0] * urand() : 0.0;
            t[I][r] = has ? urand() - 0.5 : 0.0;
            t[CUR][r] = has;
            t[D0][r] = b->d[r0];
            t[CDT][r] = 0.25 * b->d[r0] * (1.5 + sin(r0));
            t[B0][r] = 3.0 * cos(r0);
            t[U][r] = b->u[r0];
        }
    s->ni = ni;
    s->shared = shared;
    double **arr[] = {&s->v, &s->g, &s->i, &s->cdt, &s->d0, &s->b0, &s->u, &s->wa, &s->wb};
    for (size_t k = 0; k < sizeof arr / sizeof arr[0]; ++k) *arr[k] = calloc(ni, sizeof(double));
    for (int k = V; k <= B0; ++k) cs__hines_hplan_to_internal_host(hp, CS_HINES_NODE, t[k], *arr[k]);
    cs__hines_hplan_to_internal_host(hp, CS_HINES_COUPLING, t[U], s->u);
    if (shared) /* system 0's tree-order rows */
        for (int k = CDT; k <= U; ++k) memcpy(*arr[k], t[k], sizeof(double) * (b->offset[1] - b->offset[0]));
    cs__hines_hplan_to_internal_host(hp, CS_HINES_NODE, t[CUR], cur_i);
    s->row_flags = malloc(ni);
    cs__hines_hplan_row_flags(hp, s->row_flags);
    for (size_t k = 0; k < ni; ++k) s->row_flags[k] |= cur_i[k] > 0.5 ? CS_HINES_ROW_CURRENT : 0;
    s->flags = s->row_flags;
    s->a0 = NULL;
    if (shared) {
        int n0 = b->offset[1] - b->offset[0];
        int *lp = malloc(sizeof(int) * n0);
        for (int i = 0; i < n0; ++i) lp[i] = i ? b->p[b->offset[0] + i] - b->offset[0] : -1;
        unsigned char *hc = calloc(n0, 1); /* current at local row i in any system */
        for (int sy = 0; sy < b->nsys; ++sy)
            for (int i = 0; i < n0; ++i) hc[i] |= t[CUR][b->offset[sy] + i] > 0.5;
        s->flags = malloc(n0);
        for (int i = 0; i < n0; ++i) { /* system 0's structure bits, the union's current bit */
            const long long k = cs__hines_hplan_internal_index(hp, 0, i);
            s->flags[i] = (s->row_flags[k] & ~CS_HINES_ROW_CURRENT) | (hc[i] ? CS_HINES_ROW_CURRENT : 0);
        }
        s->a0 = malloc(sizeof(double) * n0);
        ck_assert_int_eq(cs_hines_clean_pivots(n0, lp, t[D0], t[U], hc, s->a0), 0);
        free(lp); free(hc);
    }
    s->ref = *b;
    s->ref.d = malloc(sizeof(double) * n);
    s->ref.rhs = malloc(sizeof(double) * n);
    s->ref.u = t[U];
    for (int r = 0; r < n; ++r) {
        s->ref.d[r] = t[D0][r] + t[G][r];
        s->ref.rhs[r] = t[CDT][r] * t[V][r] + t[B0][r] - (t[I][r] - t[G][r] * t[V][r]);
    }
    for (int k = 0; k < NT; ++k)
        if (k != U) free(t[k]);
    free(cur_i);
}

static void step_inputs_free(step_inputs *s)
{
    double *arr[] = {s->v, s->g, s->i, s->cdt, s->d0, s->b0, s->u, s->wa, s->wb, s->ref.d, s->ref.u, s->ref.rhs, s->a0};
    for (size_t k = 0; k < sizeof arr / sizeof arr[0]; ++k) free(arr[k]);
    if (s->flags != s->row_flags) free(s->flags);
    free(s->row_flags);
}

/* After a step: i and g zero at every row, the work arrays zero at gathering rows. */
static void check_step_leftovers(const step_inputs *s, const double *wa, const double *wb, const double *i,
                                 const double *g, const char *what)
{
    for (size_t k = 0; k < s->ni; ++k) {
        ck_assert_msg(i[k] == 0.0 && g[k] == 0.0, "%s: current left at internal row %zu", what, k);
        if (s->row_flags[k] & CS_HINES_ROW_GATHERS)
            ck_assert_msg(wa[k] == 0.0 && wb[k] == 0.0, "%s: work left at internal row %zu", what, k);
    }
}

/* count cells of 600 rows, six morphologies (8 to 300 branches) round-robin: the seed's variable
 * batch (bench_hines --same-size) */
static void make_same_size_batch(batch *b, int count, uint64_t seed)
{
    static const int nb[6] = {8, 30, 60, 120, 200, 300};
    batch_cap c = {0, 0};
    memset(b, 0, sizeof *b);
    g_rng = seed;
    int *lp[6];
    for (int k = 0; k < 6; ++k) {
        lp[k] = malloc(sizeof(int) * 600);
        ck_assert_int_eq(cs_hines_random_tree(600, nb[k], seed + k, lp[k]), 0);
    }
    for (int j = 0; j < count; ++j) batch_add(b, &c, 600, lp[j % 6], NULL, NULL);
    for (int k = 0; k < 6; ++k) free(lp[k]);
}

/* ---- constants shared by structure (staged's fused step) --------------------------------------
 * 54 cells of six morphologies (make_same_size_batch), each cell with its morphology's constants
 * (d0, u, b0, cdt), except one cell of morphology 0 (one row's d0 one ulp up) and morphology 1
 * (each cell its own b0); v random, currents at ~30 % of the rows. Sharing must leave out
 * morphology 1's groups and the perturbed cell's, and each of the five others has one group that
 * the rest read: ngroup − (morphology 1's groups) − 1 − 5 groups read another's rows.
 * all_equal: every cell has its morphology's constants (none perturbed): all groups but six read
 * another's rows, and each launch of several cells a warp holds them once a row (CS__SL_UC). */
enum { SC_D0, SC_U, SC_B0, SC_CDT, SC_V, SC_I, SC_G, SC_NT };
typedef struct {
    batch b;
    double *t[SC_NT]; /* tree order */
    double *x_ref;    /* the serial solve of the system the step assembles */
    int perturbed;    /* -1: none (all_equal) */
    int cells;        /* the plans' cells a warp (0: chosen) */
} share_case;

static void share_case_make(share_case *sc, int all_equal, int cells)
{
    batch *b = &sc->b;
    make_same_size_batch(b, 54, 5);
    const int n = b->nrows;
    sc->perturbed = all_equal ? -1 : 6; /* the second cell of morphology 0 */
    sc->cells = cells;
    for (int k = 0; k < SC_NT; ++k) sc->t[k] = malloc(sizeof(double) * n);
    double **t = sc->t;
    for (int sy = 0; sy < b->nsys; ++sy) {
        const int m = sy % 6, o0 = b->offset[m];
        for (int i = 0; i < b->offset[sy + 1] - b->offset[sy]; ++i) {
            const int r = b->offset[sy] + i, has = urand() < 0.3;
            t[SC_D0][r] = b->d[o0 + i];
            t[SC_U][r] = b->u[o0 + i];
            t[SC_B0][r] = 3.0 * cos(i + m) + (m == 1 && !all_equal ? 1e-3 * sy : 0.0);
            t[SC_CDT][r] = 0.25 * t[SC_D0][r] * (1.5 + sin(i));
            t[SC_V][r] = -80.0 + 60.0 * urand();
            t[SC_G][r] = has ? 0.5 * t[SC_D0][r] * urand() : 0.0;
            t[SC_I][r] = has ? urand() - 0.5 : 0.0;
        }
    }
    if (!all_equal) {
        const int r5 = b->offset[sc->perturbed] + 5;
        t[SC_D0][r5] = nextafter(t[SC_D0][r5], INFINITY);
    }
    batch ref = *b;
    ref.d = malloc(sizeof(double) * n);
    ref.rhs = malloc(sizeof(double) * n);
    ref.u = t[SC_U];
    for (int r = 0; r < n; ++r) {
        ref.d[r] = t[SC_D0][r] + t[SC_G][r];
        ref.rhs[r] = t[SC_CDT][r] * t[SC_V][r] + t[SC_B0][r] - (t[SC_I][r] - t[SC_G][r] * t[SC_V][r]);
    }
    sc->x_ref = reference(&ref);
    free(ref.d); free(ref.rhs);
}

static void share_case_free(share_case *sc)
{
    for (int k = 0; k < SC_NT; ++k) free(sc->t[k]);
    free(sc->x_ref);
    batch_free(&sc->b);
}

/* the host plan: staged, fused step, 132 multiprocessors (an H100's, as the device plan's) */
static void share_case_plan(const share_case *sc, cs__hines_hplan *hp)
{
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.fused_step = 1;
    o.block_size = sc->cells;
    char msg[256];
    ck_assert_msg(cs__hines_hplan_build(sc->b.nsys, sc->b.offset, sc->b.p, CS__HV_STAGED, &o, 132, hp, msg, sizeof msg) == CS_SOLVER_OK,
                  "%s", msg);
}

static int share_group_of(const cs__hines_hplan *hp, int sy)
{
    int g = 0;
    while (g + 1 < hp->ngroup && hp->group_base[g + 1] <= hp->cell_base[sy]) ++g;
    return g;
}

static void share_case_check_groups(const share_case *sc, const cs__hines_hplan *hp, long long shared)
{
    ck_assert_ptr_nonnull(hp->group_cbase);
    for (int l = 0; l < hp->stg_nlaunch; ++l) { /* constants once a row: all_equal's launches of several cells a warp */
        const int *L = hp->stg_launch + CS__SL_N * l;
        ck_assert_int_eq(L[CS__SL_UC], sc->perturbed < 0 && L[CS__SL_CELLS] > 1 && !L[CS__SL_TW]);
    }
    if (sc->perturbed < 0) {
        ck_assert_int_eq(shared, hp->ngroup - 6);
        return;
    }
    int groups_m1 = 0;
    for (int sy = 0; sy < sc->b.nsys; ++sy)
        groups_m1 += sy % 6 == 1 && hp->cell_base[sy] == hp->group_base[share_group_of(hp, sy)]; /* lane 0: one per group */
    const int gp = share_group_of(hp, sc->perturbed);
    ck_assert_int_eq(hp->group_cbase[gp], hp->group_base[gp]);
    ck_assert_int_eq(shared, hp->ngroup - groups_m1 - 1 - 5);
}

/* the case's arrays in hp's internal layout, the sharing groups' own constants NaN; the rows with
 * current marked in hp's schedule; the step's work arrays */
typedef struct {
    size_t ni;
    double *a[SC_NT], *i0, *g0, *v0, *wa, *wb;
    unsigned char *flags;
} share_inputs;

static void share_inputs_make(const share_case *sc, cs__hines_hplan *hp, share_inputs *in)
{
    const size_t ni = (size_t)hp->internal_size, bytes = sizeof(double) * ni;
    in->ni = ni;
    for (int k = 0; k < SC_NT; ++k) {
        in->a[k] = calloc(ni, sizeof(double));
        cs__hines_hplan_to_internal_host(hp, k == SC_U ? CS_HINES_COUPLING : CS_HINES_NODE, sc->t[k], in->a[k]);
    }
    for (int sy = 0; sy < sc->b.nsys; ++sy) {
        const int g = share_group_of(hp, sy);
        if (hp->group_cbase[g] == hp->group_base[g]) continue;
        for (int i = 0; i < sc->b.offset[sy + 1] - sc->b.offset[sy]; ++i)
            for (int k = SC_D0; k <= SC_CDT; ++k) in->a[k][cs__hines_hplan_internal_index(hp, sy, i)] = NAN;
    }
    in->flags = malloc(ni);
    cs__hines_hplan_row_flags(hp, in->flags);
    for (size_t k = 0; k < ni; ++k)
        in->flags[k] |= (in->a[SC_G][k] != 0.0 || in->a[SC_I][k] != 0.0) ? CS_HINES_ROW_CURRENT : 0;
    cs__staged_mark_current(hp, in->flags);
    in->v0 = malloc(bytes); in->i0 = malloc(bytes); in->g0 = malloc(bytes);
    memcpy(in->v0, in->a[SC_V], bytes); memcpy(in->i0, in->a[SC_I], bytes); memcpy(in->g0, in->a[SC_G], bytes);
    in->wa = calloc(ni, sizeof(double));
    in->wb = calloc(ni, sizeof(double));
}

static inline void share_inputs_reset(share_inputs *in)
{
    const size_t bytes = sizeof(double) * in->ni;
    memcpy(in->a[SC_V], in->v0, bytes); memcpy(in->a[SC_I], in->i0, bytes); memcpy(in->a[SC_G], in->g0, bytes);
}

/* After a step (v, i, g in the internal layout): the error against the reference; with
 * check_currents, i and g as the step must leave them (kept, or zeroed at the rows with current) */
static double share_inputs_check(const share_case *sc, const cs__hines_hplan *hp, const share_inputs *in, const double *v,
                                 const double *i, const double *g, int kept, int check_currents)
{
    double *x = malloc(sizeof(double) * sc->b.nrows);
    cs__hines_hplan_from_internal_host(hp, CS_HINES_NODE, v, x);
    const double e = relerr(sc->b.nrows, x, sc->x_ref);
    free(x);
    for (size_t k = 0; check_currents && k < in->ni; ++k) {
        const int cur = (in->flags[k] & CS_HINES_ROW_CURRENT) != 0;
        const double wi = kept || !cur ? in->i0[k] : 0.0, wg = kept || !cur ? in->g0[k] : 0.0;
        ck_assert_msg(i[k] == wi && g[k] == wg, "%s: i, g at internal row %zu: %g, %g", kept ? "kept" : "zeroed", k, i[k], g[k]);
    }
    return e;
}

static void share_inputs_free(share_inputs *in)
{
    for (int k = 0; k < SC_NT; ++k) free(in->a[k]);
    free(in->v0); free(in->i0); free(in->g0); free(in->wa); free(in->wb); free(in->flags);
}

/* staged keeps a warp's cells' eliminated rows on chip: only large cells may be refused, and
 * batches whose distinct structures exceed its planner's rows (counted here over all systems,
 * an upper bound of the distinct rows) */
static int staged_refused_ok(const batch *b, const char *msg)
{
    int m = 0;
    for (int s = 0; s < b->nsys; ++s)
        if (b->offset[s + 1] - b->offset[s] > m) m = b->offset[s + 1] - b->offset[s];
    return (m > 1500 && strstr(msg, "does not fit") != NULL) ||
           (b->nrows > CS_HINES_STAGED_MAX_DISTINCT_ROWS && strstr(msg, "distinct cell structures") != NULL);
}

typedef struct { const char *variant; int bs, threads, flags, pack_rows, fused_step; } config;
static const config g_configs[] = {
    {"flat", 0, 0, 0, 0, 0},
    {"interleaved", 0, 0, 0, 0, 0},
    {"block_interleaved", 32, 0, 0, 0, 0},
    {"block_interleaved", 64, 0, 0, 0, 0},
    {"block_shared", 64, 0, 0, 0, 0},
    {"variable", 0, 0, 0, 0, 0},
    {"fine", 0, 0, 0, 0, 0},
    {"fine", 0, 32, 0, 256, 0},
    {"fine", 0, 64, CS_HINES_FINE_NO_REROOT | CS_HINES_FINE_NO_SPLIT | CS_HINES_FINE_NO_SORT, 0, 0},
    {"fine", 0, 128, CS_HINES_FINE_GLOBAL | CS_HINES_FINE_STEP_ALWAYS, 0, 0}, /* and its fused step in device memory */
    {"fine", 0, 0, CS_HINES_FINE_STEP_ALWAYS, 0, 0},                          /* the fused step on any packs */
    {"fine", 0, 128, CS_HINES_FINE_U_SHARED | CS_HINES_FINE_STEP_ALWAYS, 0, 0}, /* ... with u in shared memory */
    {"fine", 0, 256, CS_HINES_FINE_D_GLOBAL | CS_HINES_FINE_STEP_ALWAYS, 0, 0}, /* u through L1, d in device memory */
    {"fine", 0, 0, CS_HINES_FINE_ONE_LAUNCH | CS_HINES_FINE_STEP_ALWAYS, 0, 0},   /* ... in one launch */
    {"warp", 0, 0, 0, 0, 0},
    {"warp", 0, 0, CS_HINES_FINE_NO_SPLIT, 640, 0},
    {"staged", 0, 0, 0, 0, 0},
    {"staged", 0, 0, CS_HINES_STAGED_NO_REG_STEPS, 0, 0},
    {"staged", 2, 0, 0, 0, 0}, /* cells per warp */
    {"staged", 1, 0, 0, 0, 0},
    {"staged", 1, 0, CS_HINES_STAGED_NO_TWO_WAY, 0, 0}, /* where two-way sections would be picked */
    {"staged", 0, 0, 0, 0, 1},                        /* plans for the fused step (7-array rings) */
    {"staged", 0, 0, CS_HINES_STAGED_NO_REG_STEPS, 0, 1},
    {"staged", 1, 0, 0, 0, 1},
    {"staged", 0, 0, CS_HINES_STAGED_INVARIANT, 0, 1}, /* a cell's arithmetic independent of the batch */
    {"staged", 0, 0, CS_HINES_STAGED_RECORDS_DEVICE, 0, 0}, /* the eliminated rows in device memory */
    {"staged", 1, 0, CS_HINES_STAGED_RECORDS_DEVICE | CS_HINES_STAGED_NO_TWO_WAY, 0, 0},
    {"staged", 0, 0, CS_HINES_STAGED_RECORDS_DEVICE, 0, 1},
    {"staged", 2, 0, CS_HINES_STAGED_RECORDS_DEVICE, 0, 1},
    {"chunked", 0, 0, 0, 0, 0},                       /* the automatic L (8, 16 or 32); cut where it pays */
    {"chunked", 32, 0, 0, 0, 0},                      /* the largest chunks (P1/P3 at their most registers) */
    {"chunked", 4, 0, 0, 0, 0},                       /* chunks of <= 4 interior rows: more, nested levels */
    {"auto", 0, 0, 0, 0, 0},
};
#define NCONFIG ((int)(sizeof g_configs / sizeof g_configs[0]))

static cs_hines_gpu_options make_opt(const config *c)
{
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.variant = c->variant;
    o.block_size = c->bs;
    o.threads = c->threads;
    o.fine_flags = c->flags;
    o.fine_pack_rows = c->pack_rows;
    o.fused_step = c->fused_step;
    return o;
}

/* batches used by both parts */
static void make_random_batch(batch *b, int count, uint64_t seed)
{
    batch_cap c = {0, 0};
    memset(b, 0, sizeof *b);
    g_rng = seed;
    random_system(b, &c, 1, 1, seed + 1);          /* one row */
    random_system(b, &c, 40, 1, seed + 2);         /* an unbranched cable */
    for (int k = 0; k < count; ++k) {
        int n = 3 + (int)(urand() * 400);
        int nb = 1 + 2 * (int)(urand() * (n / 4));
        if (nb > n) nb = 1;
        if (urand() < 0.3 && nb + 1 <= n && nb >= 3) nb += 1; /* even counts: a trifurcation */
        random_system(b, &c, n, nb, seed + 100 + k);
    }
}

static void make_class_batch(batch *b, int cls, int count, uint64_t seed)
{
    batch_cap c = {0, 0};
    memset(b, 0, sizeof *b);
    g_rng = seed;
    const cs_hines_morph_class *mc = &cs_hines_table41[cls];
    int *lp = malloc(sizeof(int) * mc->size);
    ck_assert_int_eq(cs_hines_random_tree(mc->size, mc->nbranch, seed, lp), 0);
    ck_assert_int_eq(cs_hines_count_branches(mc->size, lp), mc->nbranch);
    for (int k = 0; k < count; ++k) batch_add(b, &c, mc->size, lp, NULL, NULL); /* uniform */
    free(lp);
}

static void make_mixed_batch(batch *b, int count, int with_cells, uint64_t seed)
{
    batch_cap c = {0, 0};
    memset(b, 0, sizeof *b);
    g_rng = seed;
    int *lp[6];
    for (int k = 0; k < 6; ++k) {
        lp[k] = malloc(sizeof(int) * cs_hines_table41[k].size);
        ck_assert_int_eq(cs_hines_random_tree(cs_hines_table41[k].size, cs_hines_table41[k].nbranch, seed + k, lp[k]), 0);
    }
    for (int k = 0; k < count; ++k) {
        batch_add(b, &c, cs_hines_table41[k % 6].size, lp[k % 6], NULL, NULL);
        if (with_cells && g_ncells > 0 && k % 7 == 0) {
            const cell *ce = &g_cells[(k / 7) % g_ncells];
            batch_add(b, &c, ce->n, ce->lp, ce->g, ce->cdt);
        }
    }
    for (int k = 0; k < 6; ++k) free(lp[k]);
}

/* na cells of class a, then nb of class b */
static void make_two_class_batch(batch *b, int a, int na, int cb, int nb, uint64_t seed)
{
    batch_cap c = {0, 0};
    memset(b, 0, sizeof *b);
    g_rng = seed;
    const int cls[2] = {a, cb}, num[2] = {na, nb};
    for (int k = 0; k < 2; ++k) {
        const cs_hines_morph_class *mc = &cs_hines_table41[cls[k]];
        int *lp = malloc(sizeof(int) * mc->size);
        ck_assert_int_eq(cs_hines_random_tree(mc->size, mc->nbranch, seed + k, lp), 0);
        for (int j = 0; j < num[k]; ++j) batch_add(b, &c, mc->size, lp, NULL, NULL);
        free(lp);
    }
}

/* ---- staged's invariance (CS_HINES_STAGED_INVARIANT) ---------------------------------------- */
/* A network of the real cells: count of each, in blocks (its populations, as bench/real_cells.py
 * writes them) */
static void make_cells_network(batch *b, int count, uint64_t seed)
{
    batch_cap c = {0, 0};
    memset(b, 0, sizeof *b);
    g_rng = seed;
    for (int k = 0; k < g_ncells; ++k)
        for (int j = 0; j < count; ++j) batch_add(b, &c, g_cells[k].n, g_cells[k].lp, g_cells[k].g, g_cells[k].cdt);
}

/* cells [c0, c1) of a as a batch of their own, with the same values: one rank's share */
static void batch_slice(const batch *a, int c0, int c1, batch *out)
{
    const int r0 = a->offset[c0], n = a->offset[c1] - r0;
    memset(out, 0, sizeof *out);
    out->nsys = c1 - c0;
    out->nrows = n;
    out->offset = malloc(sizeof(int) * (size_t)(out->nsys + 1));
    out->p = malloc(sizeof(int) * (size_t)n);
    out->d = malloc(sizeof(double) * (size_t)n);
    out->u = malloc(sizeof(double) * (size_t)n);
    out->rhs = malloc(sizeof(double) * (size_t)n);
    ck_assert(out->offset && out->p && out->d && out->u && out->rhs);
    for (int s = 0; s <= out->nsys; ++s) out->offset[s] = a->offset[c0 + s] - r0;
    for (int i = 0; i < n; ++i) {
        out->p[i] = a->p[r0 + i] < 0 ? -1 : a->p[r0 + i] - r0;
        out->d[i] = a->d[r0 + i];
        out->u[i] = a->u[r0 + i];
        out->rhs[i] = a->rhs[r0 + i];
    }
}

/* The runs compared: the whole network or the share of its cells [INV_C0, INV_C1), with the cells
 * per warp forced (1, 2, 4) or chosen, for nsm multiprocessors (the host planner; the GPU's own
 * count on the device): the whole network's first run is the reference. */
#define INV_COUNT 24 /* of each cell */
#define INV_C0 100
#define INV_C1 190
typedef struct { int share, block_size, nsm; } invariance_run;
static const invariance_run g_inv_runs[] = {{0, 0, 132}, {0, 4, 132}, {0, 1, 132}, {1, 0, 132}, {1, 2, 132}, {1, 0, 4}};
#define INV_NRUNS ((int)(sizeof g_inv_runs / sizeof g_inv_runs[0]))

/* the cells of a run (its first cell c0 of the network) whose x differs in any bit from the
 * network's x_ref */
static int cells_differ(const batch *net, const double *x_ref, const batch *run, int c0, const double *x)
{
    int n = 0;
    for (int s = 0; s < run->nsys; ++s) {
        const int o = run->offset[s], o_ref = net->offset[c0 + s], len = run->offset[s + 1] - o;
        n += memcmp(x + o, x_ref + o_ref, sizeof(double) * (size_t)len) != 0;
    }
    return n;
}

/* A staged solve of b with options o (nsm: for the host planner) into a new array (tree order);
 * desc gets the plan's description. */
typedef double *(*inv_solve_fn)(const batch *b, const cs_hines_gpu_options *o, int nsm, char *desc, size_t len);

/* The runs of g_inv_runs through solve, staged as the simulator plans it (fused step), with
 * CS_HINES_STAGED_INVARIANT: each within TOL_D of the CPU, no two-way sections, and every cell's
 * x bitwise the network's first run's; then without the flag, the cells that differ printed. */
static void check_staged_invariance(inv_solve_fn solve, const char *where)
{
    load_cells();
    batch net, part;
    make_cells_network(&net, INV_COUNT, 22);
    batch_slice(&net, INV_C0, INV_C1, &part);
    for (int inv = 1; inv >= 0; --inv) {
        double *x_ref = NULL;
        int differ = 0;
        for (int k = 0; k < INV_NRUNS; ++k) {
            const invariance_run *r = &g_inv_runs[k];
            const batch *b = r->share ? &part : &net;
            cs_hines_gpu_options o;
            cs_hines_gpu_options_default(&o);
            o.variant = "staged";
            o.fused_step = 1;
            o.block_size = r->block_size;
            o.fine_flags = inv ? CS_HINES_STAGED_INVARIANT : 0;
            char desc[1024];
            double *x = solve(b, &o, r->nsm, desc, sizeof desc), *ref = reference(b);
            const double e = relerr(b->nrows, x, ref);
            ck_assert_msg(e <= TOL_D, "%s, invariance run %d (%s): error %.3g", where, k, desc, e);
            ck_assert_msg(!inv || strstr(desc, "two-way") == NULL, "%s: invariant plan with two-way sections: %s", where, desc);
            free(ref);
            if (k == 0) { x_ref = x; continue; }
            const int n = cells_differ(&net, x_ref, b, r->share ? INV_C0 : 0, x);
            ck_assert_msg(!inv || n == 0, "%s, invariant plans: %d cells of run %d (%s) differ from run 0", where, n, k, desc);
            differ += n;
            free(x);
        }
        printf("staged, %s, %s plans: %d cells of %d runs differ bitwise from the whole network's first run\n", where,
               inv ? "invariant" : "default", differ, INV_NRUNS - 1);
        free(x_ref);
    }
    batch_free(&net);
    batch_free(&part);
}

#endif
