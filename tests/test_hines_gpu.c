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
 * The fused membrane step (cs_hines_gpu_step_internal_d) is checked on every per-system variant,
 * with and without shared constants (uniform batches), against the serial solve of the system it
 * assembles, at the same 1e-12; two steps each, and after each step i, g and the branch points'
 * work entries must be zero.
 *
 * The host planner (layouts, re-rooting, splitting, packing, warp blocks) is also checked without a GPU,
 * through its host emulation, before the GPU part; then exit 77 (skipped) when CUDA is not
 * compiled in or no device is present. CS_TEST_SMALL=1 runs smaller batches (for
 * compute-sanitizer). CS_MORPH_DIR overrides the morphology folder. CS_TEST_VARIANTS="chunked fine" runs
 * only those variants' configurations on the GPU. */
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

/* ---- host planner checks (no GPU) -------------------------------------------------------- */
/* warp: blocks cover every pack once, in order; a block's packs share one type, fit 32 lanes per
 * level (one warp each), and stay within the block's row budget unless the block has one pack;
 * launch groups cover every block once, in order, and give each block at least the shared
 * memory its rows and its type's schedule need */
static void check_warp_blocks(const cs__hines_hplan *hp, const cs_hines_gpu_options *opt, const char *what)
{
    const int budget = opt->fine_pack_rows > 0 ? opt->fine_pack_rows : CS__WARP_BLOCK_ROWS;
    ck_assert_int_eq(hp->block_first[0], 0);
    ck_assert_int_eq(hp->block_first[hp->nblock], hp->npack);
    ck_assert_int_ge(hp->nlaunch, 1);
    ck_assert_int_le(hp->nlaunch, CS__WARP_MAX_GROUPS);
    ck_assert_int_eq(hp->launch_first[0], 0);
    ck_assert_int_eq(hp->launch_first[hp->nlaunch], hp->nblock);
    int maxw = 0, maxrows = 0;
    for (int g = 0; g < hp->nlaunch; ++g) {
        ck_assert_int_lt(hp->launch_first[g], hp->launch_first[g + 1]);
        for (int bk = hp->launch_first[g]; bk < hp->launch_first[g + 1]; ++bk) {
            const int p0 = hp->block_first[bk], np = hp->block_first[bk + 1] - p0;
            ck_assert_msg(np >= 1 && np <= 32, "%s: block %d has %d packs", what, bk, np);
            const int t = hp->pack_type[p0], rows = hp->type_info[4 * t + 3];
            for (int j = 1; j < np; ++j) ck_assert_msg(hp->pack_type[p0 + j] == t, "%s: block %d mixes types", what, bk);
            ck_assert_msg(np == 1 || np * rows <= budget, "%s: block %d has %d rows", what, bk, np * rows);
            ck_assert_msg(np * rows <= hp->launch_rows[g], "%s: block %d: %d rows, its launch gives %d", what, bk,
                          np * rows, hp->launch_rows[g]);
            /* the schedule bytes the kernel stages */
            const int *ti = hp->type_info + 4 * t;
            const int ntk = hp->level_start[ti[1] + ti[2]] - ti[0];
            const int nkid = hp->tasks[4 * (ti[0] + ntk) + 3] - hp->tasks[4 * ti[0] + 3];
            ck_assert_int_le(16 * (ntk + 1) + 4 * (ti[2] + 1 + nkid), hp->launch_sched[g]);
            ck_assert_int_eq(hp->launch_sched[g] % 16, 0); /* the rows that follow stay aligned */
            if (np > maxw) maxw = np;
            if (np * rows > maxrows) maxrows = np * rows;
        }
    }
    ck_assert_int_eq(maxw, hp->block_warps);
    ck_assert_int_eq(maxrows, hp->block_rows);
}

/* an assertion for hot loops: Check's ck_assert_* writes to a pipe even when it passes */
#define TEST_CHECK(cond, ...)                   \
    do {                                        \
        if (!(cond)) ck_abort_msg(__VA_ARGS__); \
    } while (0)

/* staged, two-way (cs_hines_gpu_impl.h, CS__STG_TOP): a top row carries, to the next real row
 * of its slot (only held slots between), and a section's top is a top row; a held slot follows a
 * top row and its lane's next row is M; a row that gathers names the shared row of a later row
 * that takes gathers, and no two rows of a step gather into one row; one root. (Rows run after
 * their senders and the numbers are right: the host emulation against the CPU.) m: the shared rows
 * (the scratch row is m). */
static void check_two_way_schedule(const int *sc, int steps, int S, int m, const char *what, int t)
{
    int *row_of_shared = malloc(sizeof(int) * (m + 1)), *step_of_shared = malloc(sizeof(int) * (m + 1)), roots = 0;
    for (int i = 0; i <= m; ++i) row_of_shared[i] = -1;
    for (int k = 0; k < steps * S; ++k) {
        const int w = sc[2 * k + 1];
        if (sc[2 * k] >= 0 && CS__STG_OWN(w) < m) { row_of_shared[CS__STG_OWN(w)] = sc[2 * k]; step_of_shared[CS__STG_OWN(w)] = k / S; }
    }
    for (int k = 0; k < steps * S; ++k) {
        const int r = sc[2 * k], w = sc[2 * k + 1], f = w & 0xff, tt = k / S, s = k % S;
        if (r < 0) {
            if (!(f & CS__STG_HOLD)) continue;
            int kp = k - S, kn = k + S; /* the lane's rows around the hold */
            while (kp >= 0 && sc[2 * kp] < 0 && (sc[2 * kp + 1] & CS__STG_HOLD)) kp -= S;
            while (kn < steps * S && sc[2 * kn] < 0 && (sc[2 * kn + 1] & CS__STG_HOLD)) kn += S;
            TEST_CHECK(kp >= 0 && sc[2 * kp] >= 0 && (sc[2 * kp + 1] & CS__STG_TOP) && kn < steps * S && sc[2 * kn] >= 0 &&
                           (sc[2 * kn + 1] & CS__STG_MEET),
                       "%s: type %d: a hold at step %d slot %d not between a top row and M", what, t, tt, s);
            continue;
        }
        roots += (f & CS__STG_ROOT) != 0;
        TEST_CHECK(!(f & CS__STG_START) || (f & CS__STG_TOP), "%s: type %d row %d: start of a section but not a top row", what, t, r);
        TEST_CHECK(!(f & CS__STG_TOP) || ((f & CS__STG_CARRY_OUT) && !(f & (CS__STG_MEET | CS__STG_ROOT))), "%s: type %d row %d: top row",
                   what, t, r);
        if (f & CS__STG_CARRY_OUT) {
            int kn = k + S;
            while ((f & CS__STG_TOP) && kn < steps * S && sc[2 * kn] < 0 && (sc[2 * kn + 1] & CS__STG_HOLD)) kn += S;
            TEST_CHECK(kn < steps * S && sc[2 * kn] >= 0, "%s: type %d row %d carries to no row", what, t, r);
        } else if (!(f & CS__STG_ROOT)) {
            const int p = CS__STG_PAR(w);
            TEST_CHECK(p < m && row_of_shared[p] >= 0 && step_of_shared[p] > tt, "%s: type %d row %d gathers into shared row %d", what, t, r, p);
            for (int s2 = 0; s2 < s; ++s2) {
                const int r2 = sc[2 * (tt * S + s2)], w2 = sc[2 * (tt * S + s2) + 1];
                TEST_CHECK(r2 < 0 || (w2 & (CS__STG_CARRY_OUT | CS__STG_ROOT)) || CS__STG_PAR(w2) != p,
                           "%s: type %d: rows %d and %d gather into one row in step %d", what, t, r2, r, tt);
            }
            if (p < m && row_of_shared[p] >= 0) {
                const int kp = step_of_shared[p] * S; /* the receiver takes gathers */
                int found = 0;
                for (int s2 = 0; s2 < S; ++s2)
                    found |= sc[2 * (kp + s2)] == row_of_shared[p] && (sc[2 * (kp + s2) + 1] & CS__STG_GATHER_IN);
                TEST_CHECK(found, "%s: type %d row %d: its receiver takes no gathers", what, t, r);
            }
        }
    }
    TEST_CHECK(roots == 1, "%s: type %d: %d roots", what, t, roots);
    free(row_of_shared); free(step_of_shared);
}

/* staged: every type's schedule runs each row once, after all its children (in earlier steps),
 * never two rows with one parent in a step (their lanes' gathers would race), its carry flags pair
 * a row with its parent in the same slot of the next step, and its shared rows are distinct, fit
 * the plan's, exist for every row kept in shared memory or gathered into, and name the parent */
static void check_staged_schedule(const cs__hines_hplan *hp, const batch *b, const char *what)
{
    /* the launches cover the groups in order, each group's type in its launch */
    int g_next = 0;
    for (int l = 0; l < hp->stg_nlaunch; ++l) {
        const int *L = hp->stg_launch + CS__SL_N * l;
        TEST_CHECK(L[CS__SL_FIRST] == g_next && L[CS__SL_GROUPS] > 0, "%s: launch %d", what, l);
        TEST_CHECK((L[CS__SL_CELLS] == 4 || L[CS__SL_CELLS] == 2 || L[CS__SL_CELLS] == 1) &&
                      (L[CS__SL_REG] == 0 || L[CS__SL_REG] == CS__STG_REG_STEPS ||
                       (L[CS__SL_REG] == CS__STG_REG_STEPS_MORE(L[CS__SL_CELLS]) && L[CS__SL_REG] > 0 && !L[CS__SL_TW])) &&
                      (L[CS__SL_TW] == 0 || (L[CS__SL_TW] == 1 && L[CS__SL_CELLS] == 1)),
                   "%s: launch %d shape", what, l);
        for (int g = L[CS__SL_FIRST]; g < L[CS__SL_FIRST] + L[CS__SL_GROUPS]; ++g) {
            const int t = hp->group_type[g];
            TEST_CHECK(hp->stg_type_launch[t] == l && hp->stype[2 * t + 1] <= L[CS__SL_STEPS], "%s: group %d", what, g);
            /* a group's rows are copied in chunks of C elements (up to 16 bytes): aligned */
            TEST_CHECK(hp->group_base[g] % L[CS__SL_CELLS] == 0, "%s: group %d at %d, %d cells per warp", what, g, hp->group_base[g],
                       L[CS__SL_CELLS]);
        }
        g_next += L[CS__SL_GROUPS];
    }
    TEST_CHECK(g_next == hp->ngroup, "%s: groups %d of %d", what, g_next, hp->ngroup);
    for (int t = 0; t < hp->nstype; ++t) {
        const int *L = hp->stg_launch + CS__SL_N * hp->stg_type_launch[t];
        const int S = 32 / L[CS__SL_CELLS], R = L[CS__SL_REG], rows = L[CS__SL_ROWS];
        const int steps = hp->stype[2 * t + 1];
        const int *sc = hp->stg_sched + 2 * (size_t)hp->stype[2 * t];
        int n = 0;
        for (int k = 0; k < steps * S; ++k) n += sc[2 * k] >= 0;
        int *step = malloc(sizeof(int) * n), *slot = malloc(sizeof(int) * n), *own = malloc(sizeof(int) * n);
        int *row_of = malloc(sizeof(int) * (rows + 1)), scratch = -1;
        for (int i = 0; i < n; ++i) step[i] = -1;
        for (int i = 0; i <= rows; ++i) row_of[i] = -1;
        for (int k = 0; k < steps * S; ++k) {
            int r = sc[2 * k], w = sc[2 * k + 1], o = CS__STG_OWN(w);
            if (r < 0) {
                TEST_CHECK(((w & 0xff) == 0 || ((w & 0xff) == CS__STG_HOLD && L[CS__SL_TW])) && (scratch < 0 || o == scratch),
                           "%s: type %d: an empty slot", what, t);
                scratch = o;
                continue;
            }
            TEST_CHECK(r < n && step[r] < 0, "%s: type %d row %d scheduled twice", what, t, r);
            step[r] = k / S;
            slot[r] = k % S;
            own[r] = o;
        }
        /* the scratch row is the one after the type's shared rows: the rows that need one have one */
        int m = 0;
        for (int r = 0; r < n; ++r) {
            TEST_CHECK(step[r] >= 0, "%s: type %d row %d never scheduled", what, t, r);
            const int w = sc[2 * (step[r] * S + slot[r]) + 1];
            m += step[r] >= R || (w & CS__STG_GATHER_IN);
        }
        TEST_CHECK(m <= rows && (scratch < 0 || scratch == m), "%s: type %d: %d shared rows, scratch %d, launch %d",
                      what, t, m, scratch, rows);
        for (int r = 0; r < n; ++r) {
            const int w = sc[2 * (step[r] * S + slot[r]) + 1];
            if (step[r] >= R || (w & CS__STG_GATHER_IN)) {
                TEST_CHECK(own[r] < m && row_of[own[r]] < 0, "%s: type %d row %d: shared row %d", what, t, r, own[r]);
                row_of[own[r]] = r;
            } else {
                TEST_CHECK(own[r] == m, "%s: type %d register row %d has shared row %d", what, t, r, own[r]);
            }
        }
        if (L[CS__SL_TW]) check_two_way_schedule(sc, steps, S, m, what, t);
        free(step); free(slot); free(own); free(row_of);
    }
    /* every system's type (the group holding its cell) is the system's own tree, maybe re-rooted:
     * lmap numbers its rows (each once), lusrc names each row's edge to its new parent (its own
     * to its parent, or a child's, reversed), and the schedule runs that tree */
    for (int sy = 0; sy < b->nsys; ++sy) {
        int g = 0;
        while (g + 1 < hp->ngroup && hp->group_base[g + 1] <= hp->cell_base[sy]) ++g;
        const int t = hp->group_type[g], o = b->offset[sy], n = b->offset[sy + 1] - o, steps = hp->stype[2 * t + 1];
        const int C = hp->stg_launch[CS__SL_N * hp->stg_type_launch[t] + CS__SL_CELLS], S = 32 / C, m0 = hp->cell_map[sy];
        const int *sc = hp->stg_sched + 2 * (size_t)hp->stype[2 * t];
        int *step = malloc(sizeof(int) * n), *slot = malloc(sizeof(int) * n), *stamp = malloc(sizeof(int) * n), seen = 0;
        int *rowof = malloc(sizeof(int) * n), *par = malloc(sizeof(int) * n), roots = 0;
        TEST_CHECK(m0 >= 0 && m0 + n <= hp->nlmap, "%s: system %d: conversion map", what, sy);
        if (hp->stg_launch[CS__SL_N * hp->stg_type_launch[t] + CS__SL_TW]) {
            /* two-way: a slot's u may be another row's edge (cs_hines_gpu_impl.h), but every edge
             * is read once; the schedule's checks are check_two_way_schedule's */
            for (int i = 0; i < n; ++i) stamp[i] = 0;
            for (int i = 0; i < n; ++i) {
                const int us = hp->lusrc[m0 + i];
                TEST_CHECK(us >= -1 && us < n && (us < 0 || b->p[o + us] >= 0), "%s: system %d row %d: coupling %d", what, sy, i, us);
                if (us >= 0) { TEST_CHECK(!stamp[us], "%s: system %d: coupling of %d read twice", what, sy, us); stamp[us] = 1; }
                else ++roots;
            }
            TEST_CHECK(roots == 1, "%s: system %d: %d rows without a coupling", what, sy, roots);
            free(step); free(slot); free(stamp); free(rowof); free(par);
            continue;
        }
        for (int r = 0; r < n; ++r) par[r] = -2;
        for (int i = 0; i < n; ++i) {
            rowof[i] = hp->lmap[m0 + i] / C;
            TEST_CHECK(hp->lmap[m0 + i] % C == 0 && rowof[i] >= 0 && rowof[i] < n && par[rowof[i]] == -2, "%s: system %d: row %d mapped twice",
                       what, sy, i);
            par[rowof[i]] = -1;
        }
        for (int i = 0; i < n; ++i) {
            const int us = hp->lusrc[m0 + i], lpi = b->p[o + i] < 0 ? -1 : b->p[o + i] - o;
            int np = -1;
            if (us == i) np = lpi;
            else if (us >= 0) {
                TEST_CHECK(us < n && b->p[o + us] - o == i, "%s: system %d row %d: coupling from %d, not a child", what, sy, i, us);
                np = us;
            }
            TEST_CHECK(us >= 0 ? np >= 0 : 1, "%s: system %d row %d: edge", what, sy, i);
            roots += np < 0;
            par[rowof[i]] = np < 0 ? -1 : rowof[np];
        }
        TEST_CHECK(roots == 1, "%s: system %d: %d roots", what, sy, roots);
        for (int k = 0; k < steps * S; ++k) {
            int r = sc[2 * k];
            if (r < 0) continue;
            TEST_CHECK(r < n, "%s: system %d: row %d of %d", what, sy, r, n);
            step[r] = k / S;
            slot[r] = k % S;
            ++seen;
        }
        TEST_CHECK(seen == n, "%s: system %d: %d of %d rows scheduled", what, sy, seen, n);
        for (int r = 0; r < n; ++r) {
            const int w = sc[2 * (step[r] * S + slot[r]) + 1], f = w & 0xff;
            if (par[r] < 0) { TEST_CHECK(f & CS__STG_ROOT, "%s: system %d: root flag", what, sy); continue; }
            TEST_CHECK(!(f & CS__STG_ROOT), "%s: system %d row %d: root flag", what, sy, r);
            const int p = par[r], wp = sc[2 * (step[p] * S + slot[p]) + 1];
            TEST_CHECK(step[p] > step[r], "%s: system %d row %d runs before its child %d", what, sy, p, r);
            const int carry = step[p] == step[r] + 1 && slot[p] == slot[r];
            TEST_CHECK(!(f & CS__STG_CARRY_OUT) == !carry, "%s: system %d row %d: carry flag", what, sy, r);
            if (!(f & CS__STG_CARRY_OUT))
                TEST_CHECK((wp & CS__STG_GATHER_IN) && CS__STG_PAR(w) == CS__STG_OWN(wp), "%s: system %d row %d: its parent's shared row",
                           what, sy, r);
        }
        for (int tt = 0; tt < steps; ++tt) { /* no two rows of a step share a parent */
            for (int k = 0; k < S; ++k) {
                const int r = sc[2 * (tt * S + k)];
                if (r >= 0 && par[r] >= 0) stamp[par[r]] = -1;
            }
            for (int k = 0; k < S; ++k) {
                const int r = sc[2 * (tt * S + k)];
                if (r < 0 || par[r] < 0) continue;
                TEST_CHECK(stamp[par[r]] < 0, "%s: system %d rows %d and %d share parent %d in step %d", what, sy, stamp[par[r]], r,
                           par[r], tt);
                stamp[par[r]] = r;
            }
        }
        free(step); free(slot); free(stamp); free(rowof); free(par);
    }
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

/* the plan for nsm multiprocessors (few make a batch large), emulated on the host */
static void check_host_plan_nsm(const batch *b, const cs_hines_gpu_options *opt, int nsm, const char *what)
{
    int v = cs__hines_variant_lookup(opt->variant);
    ck_assert_int_ge(v, 0);
    cs__hines_hplan hp;
    char msg[256];
    cs_solver_status st = cs__hines_hplan_build(b->nsys, b->offset, b->p, v, opt, nsm, &hp, msg, sizeof msg);
    if (st == CS_SOLVER_ERR_INVALID && strcmp(opt->variant, "staged") == 0) {
        ck_assert_msg(staged_refused_ok(b, msg), "%s staged refused: %s", what, msg);
        return;
    }
    ck_assert_msg(st == CS_SOLVER_OK, "%s %s: %s", what, opt->variant, msg);
    size_t ni = (size_t)hp.internal_size;
    double *id = calloc(ni, sizeof(double)), *iu = calloc(ni, sizeof(double)), *ir = calloc(ni, sizeof(double));
    double *x = malloc(sizeof(double) * b->nrows);
    for (size_t k = 0; k < ni; ++k) id[k] = iu[k] = ir[k] = NAN; /* padding must never be read */
    cs__hines_hplan_to_internal_host(&hp, CS_HINES_NODE, b->d, id);
    cs__hines_hplan_to_internal_host(&hp, CS_HINES_COUPLING, b->u, iu);
    cs__hines_hplan_to_internal_host(&hp, CS_HINES_NODE, b->rhs, ir);
    /* coupling round trip: every non-root row's u comes back */
    double *u2 = malloc(sizeof(double) * b->nrows);
    for (int r = 0; r < b->nrows; ++r) u2[r] = 12345.0;
    cs__hines_hplan_from_internal_host(&hp, CS_HINES_COUPLING, iu, u2);
    for (int r = 0; r < b->nrows; ++r)
        ck_assert_msg(b->p[r] < 0 ? u2[r] == 12345.0 : u2[r] == b->u[r], "%s %s: coupling of row %d", what, opt->variant, r);
    cs__hines_hplan_solve_host(&hp, id, iu, ir);
    for (int r = 0; r < b->nrows; ++r) x[r] = NAN;
    cs__hines_hplan_from_internal_host(&hp, CS_HINES_NODE, ir, x);
    double *ref = reference(b);
    double e = relerr(b->nrows, x, ref);
    ck_assert_msg(e <= TOL_D, "%s %s (host emulation: %s): error %.3g", what, opt->variant, hp.describe, e);
    if (hp.variant == CS__HV_WARP) check_warp_blocks(&hp, opt, what);
    if (hp.variant == CS__HV_STAGED) check_staged_schedule(&hp, b, what);
    /* the device conversion's order: each mapped system's rows once, by increasing internal index */
    for (int sy = 0; sy < b->nsys; ++sy) {
        const int m = hp.cell_map[sy], n = b->offset[sy + 1] - b->offset[sy];
        if (m < 0) continue;
        unsigned char *seen = calloc((size_t)n, 1);
        for (int q = 0; q < n; ++q) {
            const int i = hp.lorder[m + q];
            TEST_CHECK(i >= 0 && i < n && !seen[i], "%s: system %d: lorder[%d] = %d", what, sy, q, i);
            TEST_CHECK(q == 0 || hp.lmap[m + i] > hp.lmap[m + hp.lorder[m + q - 1]], "%s: system %d: lorder not increasing at %d", what, sy, q);
            seen[i] = 1;
        }
        free(seen);
    }
    const int staged = hp.variant == CS__HV_STAGED; /* no shared constants; rows with current in its schedule */
    for (int shared = 0; cs__hines_hplan_fuses(&hp) && shared <= (staged ? 0 : hp.uniform); ++shared) {
        /* the fused step, twice: the second finds the work arrays as the first left them */
        step_inputs si;
        step_inputs_make(b, &hp, shared, &si);
        if (staged) cs__staged_mark_current(&hp, si.row_flags);
        double *sref = reference(&si.ref);
        double *v0 = malloc(sizeof(double) * ni), *i0 = malloc(sizeof(double) * ni), *g0 = malloc(sizeof(double) * ni);
        memcpy(v0, si.v, sizeof(double) * ni); memcpy(i0, si.i, sizeof(double) * ni); memcpy(g0, si.g, sizeof(double) * ni);
        cs_hines_step_d st = {si.d0, si.cdt, si.b0, si.u, si.v, si.i, si.g, si.flags, si.wa, si.wb, shared, si.a0};
        if (shared) { /* some rows take their pivot from a0, some not */
            int n0 = b->offset[1] - b->offset[0], nconst = 0;
            for (int i = 1; i < n0; ++i) nconst += !isnan(si.a0[i]);
            ck_assert_msg(nconst > 0 && (nconst < n0 - 1 || n0 < 20), "%s %s: %d of %d pivots constant", what,
                          opt->variant, nconst, n0);
        }
        for (int rep = 0; rep < 2; ++rep) {
            memcpy(si.v, v0, sizeof(double) * ni); memcpy(si.i, i0, sizeof(double) * ni); memcpy(si.g, g0, sizeof(double) * ni);
            if (staged) ck_assert_int_eq(cs__staged_step_host(&hp, &st), 0);
            else cs__hines_hplan_step_host(&hp, &st);
            cs__hines_hplan_from_internal_host(&hp, CS_HINES_NODE, si.v, x);
            e = relerr(b->nrows, x, sref);
            ck_assert_msg(e <= TOL_D, "%s %s (fused step%s, host emulation, step %d): error %.3g", what, opt->variant,
                          shared ? ", shared constants" : "", rep + 1, e);
            check_step_leftovers(&si, si.wa, si.wb, si.i, si.g, what);
        }
        free(v0); free(i0); free(g0); free(sref);
        step_inputs_free(&si);
    }
    free(ref); free(u2); free(x); free(id); free(iu); free(ir);
    cs__hines_hplan_free(&hp);
}

static void check_host_plan(const batch *b, const cs_hines_gpu_options *opt, const char *what)
{
    check_host_plan_nsm(b, opt, 132, what);
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
    {"fine", 0, 128, CS_HINES_FINE_GLOBAL, 0, 0},
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

/* "auto" picks what the H200 measurements say (cs__hines_hplan_build's comment): with one
 * multiprocessor, 1024 systems count as a large batch. */
static const char *auto_choice(const batch *b, int nsm, int fused)
{
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.fused_step = fused;
    cs__hines_hplan hp;
    char msg[256];
    ck_assert_msg(cs__hines_hplan_build(b->nsys, b->offset, b->p, CS__HV_AUTO, &o, nsm, &hp, msg, sizeof msg) == CS_SOLVER_OK,
                  "%s", msg);
    const char *v = cs__hines_variant_name(hp.variant);
    cs__hines_hplan_free(&hp);
    return v;
}

/* staged's planner is per structure: a batch of many distinct trees is refused at once, with a
 * message naming why, and "auto" takes another variant (2 000 distinct trees of 2 036 rows had
 * taken minutes of set-up) */
START_TEST(test_staged_many_structures)
{
    batch b;
    make_random_batch(&b, 400, 77); /* ~81 000 rows, every tree distinct */
    ck_assert_int_gt(b.nrows, CS_HINES_STAGED_MAX_DISTINCT_ROWS);
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    cs__hines_hplan hp;
    char msg[256] = "";
    ck_assert_int_eq(cs__hines_hplan_build(b.nsys, b.offset, b.p, CS__HV_STAGED, &o, 132, &hp, msg, sizeof msg),
                     CS_SOLVER_ERR_INVALID);
    ck_assert_msg(strstr(msg, "distinct cell structures") != NULL, "%s", msg);
    ck_assert_str_ne(auto_choice(&b, 132, 0), "staged");
    batch_free(&b);
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

START_TEST(test_generator)
{
    for (int k = 0; k < 6; ++k) {
        const cs_hines_morph_class *mc = &cs_hines_table41[k];
        int *lp = malloc(sizeof(int) * mc->size);
        for (uint64_t s = 0; s < 5; ++s) {
            ck_assert_int_eq(cs_hines_random_tree(mc->size, mc->nbranch, s, lp), 0);
            ck_assert_int_eq(lp[0], -1);
            for (int i = 1; i < mc->size; ++i) ck_assert(lp[i] >= 0 && lp[i] < i);
            ck_assert_int_eq(cs_hines_count_branches(mc->size, lp), mc->nbranch);
        }
        free(lp);
    }
    int lp2[4];
    ck_assert_int_eq(cs_hines_random_tree(4, 2, 1, lp2), -1); /* 2 branches cannot exist */
    ck_assert_int_eq(cs_hines_random_tree(3, 4, 1, lp2), -1);
}
END_TEST

START_TEST(test_host_plans)
{
    batch rb, cb, mb;
    make_random_batch(&rb, g_small ? 10 : 40, 11);
    make_class_batch(&cb, 3, 20, 12);
    make_mixed_batch(&mb, 30, 0, 13);
    for (int k = 0; k < NCONFIG; ++k) {
        cs_hines_gpu_options o = make_opt(&g_configs[k]);
        check_host_plan(&rb, &o, "random");
        check_host_plan(&cb, &o, "medium-high");
        check_host_plan(&mb, &o, "mixed");
    }
    /* the benchmark's six trees (seeds 1000 + class) through staged, whose schedule has the most
     * ways to go wrong (bench_hines.cu) */
    for (int k = 0; k < 6; ++k) {
        batch kb;
        make_class_batch(&kb, k, 9, 1000 + k);
        for (int f = 0; f < 3; ++f) { /* 9 cells: two-way sections, unless turned off */
            config sc = {"staged", 0, 0, f == 1 ? CS_HINES_STAGED_NO_REG_STEPS : f == 2 ? CS_HINES_STAGED_NO_TWO_WAY : 0, 0, 0};
            cs_hines_gpu_options o = make_opt(&sc);
            check_host_plan(&kb, &o, cs_hines_table41[k].name);
        }
        batch_free(&kb);
    }
    /* one big-low cell (one cell per warp, two-way: 695 rows) laid out before 600 small-high
     * cells (4 per warp): the second launch's groups must start aligned (check_staged_schedule) */
    {
        batch tb;
        make_two_class_batch(&tb, 4, 1, 1, 600, 1004);
        config sc = {"staged", 0, 0, 0, 0, 0};
        cs_hines_gpu_options o = make_opt(&sc);
        check_host_plan(&tb, &o, "big-low then small-high");
        cs__hines_hplan hp;
        char msg[256];
        ck_assert_int_eq(cs__hines_hplan_build(tb.nsys, tb.offset, tb.p, CS__HV_STAGED, &o, 132, &hp, msg, sizeof msg), CS_SOLVER_OK);
        ck_assert_msg(hp.stg_nlaunch == 2 && hp.stg_launch[CS__SL_CELLS] == 1 && hp.stg_launch[CS__SL_N + CS__SL_CELLS] == 4,
                      "want a launch of 1 cell per warp, then one of 4: %s", hp.describe);
        cs__hines_hplan_free(&hp);
        batch_free(&tb);
    }
    /* six morphologies of one size, each of few enough cells for two-way sections (at most 4 per
     * multiprocessor): they share two-way launches while all of a launch's warps run at once. At
     * 1 024 cells that is one launch; at 2 560, several. Before, they made one launch too large to
     * run at once, and the batch fell back to one one-way launch (1 024 cells: 42.3 µs against
     * 17.7 µs on the H200, bench/NOTES.md "Session 10") */
    for (int count = 1024; count <= 2560; count += 1536) {
        batch sb;
        make_same_size_batch(&sb, count, 2000);
        config sc = {"staged", 0, 0, 0, 0, 0};
        cs_hines_gpu_options o = make_opt(&sc);
        cs__hines_hplan hp;
        char msg[256];
        ck_assert_int_eq(cs__hines_hplan_build(sb.nsys, sb.offset, sb.p, CS__HV_STAGED, &o, 132, &hp, msg, sizeof msg), CS_SOLVER_OK);
        ck_assert_msg(count == 1024 ? hp.stg_nlaunch == 1 : hp.stg_nlaunch > 1, "%d cells: %s", count, hp.describe);
        for (int l = 0; l < hp.stg_nlaunch; ++l)
            ck_assert_msg(hp.stg_launch[CS__SL_N * l + CS__SL_TW] == 1, "%d cells, launch %d: %s", count, l, hp.describe);
        check_staged_schedule(&hp, &sb, "same size");
        cs__hines_hplan_free(&hp);
        batch_free(&sb);
    }
    /* the shape staged picks. Few cells (9, on 132 multiprocessors): the shortest schedule, so
     * one cell per warp with two-way sections (big-low 32 steps of 32 slots against 108 of 8,
     * medium-high 19 against 28 of 16); without them, fewer cells per warp for the branchy
     * classes (medium-high 28 steps of 16 slots against 45 of 8; big-high 38 of 32 against 92 of
     * 8). Many (1100 on one): the most cells per unit of
     * time; register steps where they fit more warps: medium-high 12 against 8 (shared memory),
     * small-high fits 19 without them and 12 with (registers); big-high 2 cells per warp (9 warps
     * of 51 steps against 5 of 92); big-low 40 register steps (6 warps of 108 steps against 5 with
     * 24). */
    const int one_way = CS_HINES_STAGED_NO_TWO_WAY;
    const struct { int cls, count, nsm, flags, cells, reg, tw; } shapes[] = {
        {3, 9, 132, one_way, 2, 0, 0}, {5, 9, 132, one_way, 1, 0, 0}, {0, 9, 132, one_way, 4, 0, 0},
        {3, 9, 132, 0, 1, 0, 1}, {4, 9, 132, 0, 1, 0, 1}, {5, 9, 132, 0, 1, 0, 1}, {0, 9, 132, 0, 1, 0, 1},
        {3, 1100, 1, 0, 4, CS__STG_REG_STEPS, 0}, {3, 1100, 1, CS_HINES_STAGED_NO_REG_STEPS, 4, 0, 0}, /* 8 warps of 45 steps; 2 cells: 11 of 29, but at 1.5× the cost */
        {1, 1100, 1, 0, 4, 0, 0}, {5, 1100, 1, 0, 2, CS__STG_REG_STEPS, 0}, {4, 1100, 1, 0, 4, CS__STG_REG_STEPS_MORE(4), 0},
    };
    /* two-way sections only where every warp runs at once (at 2 560 cells on 132 multiprocessors,
     * several rounds, they were slower) and the load model finds them faster: big-low on one
     * multiprocessor, 9 cells (9 warps of 32 steps, 3 on a scheduler) against 10 (one-way: 3
     * warps of 108) */
    for (int count = 9; count <= 10; ++count) {
        batch kb;
        make_class_batch(&kb, 4, count, 1004);
        config sc = {"staged", 0, 0, 0, 0, 0};
        cs_hines_gpu_options o = make_opt(&sc);
        cs__hines_hplan hp;
        char msg[256];
        ck_assert_int_eq(cs__hines_hplan_build(kb.nsys, kb.offset, kb.p, CS__HV_STAGED, &o, 1, &hp, msg, sizeof msg), CS_SOLVER_OK);
        ck_assert_msg(hp.stg_launch[CS__SL_TW] == (count <= 9), "big-low × %d on 1 multiprocessor: %s", count, hp.describe);
        cs__hines_hplan_free(&hp);
        batch_free(&kb);
    }
    /* a large mixed batch: each structure its own launch and shape (6 launches; big-high 2 cells
     * per warp), emulated */
    batch lm;
    make_mixed_batch(&lm, 1100, 0, 14);
    config lc = {"staged", 0, 0, 0, 0, 0};
    cs_hines_gpu_options lo = make_opt(&lc);
    check_host_plan_nsm(&lm, &lo, 1, "large mixed");
    {
        cs__hines_hplan hp;
        char msg[256];
        ck_assert_int_eq(cs__hines_hplan_build(lm.nsys, lm.offset, lm.p, CS__HV_STAGED, &lo, 1, &hp, msg, sizeof msg), CS_SOLVER_OK);
        ck_assert_msg(hp.stg_nlaunch >= 4, "large mixed: %s", hp.describe);
        for (int l = 0; l < hp.stg_nlaunch; ++l) /* launches that run at once keep to 24 register steps */
            ck_assert_msg(hp.stg_launch[CS__SL_N * l + CS__SL_REG] <= CS__STG_REG_STEPS, "large mixed: %s", hp.describe);
        cs__hines_hplan_free(&hp);
    }
    batch_free(&lm);
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
        batch kb;
        make_class_batch(&kb, shapes[k].cls, shapes[k].count, 1000 + shapes[k].cls);
        config sc = {"staged", 0, 0, shapes[k].flags, 0, 0};
        cs_hines_gpu_options o = make_opt(&sc);
        cs__hines_hplan hp;
        char msg[256];
        ck_assert_int_eq(cs__hines_hplan_build(kb.nsys, kb.offset, kb.p, CS__HV_STAGED, &o, shapes[k].nsm, &hp, msg, sizeof msg),
                         CS_SOLVER_OK);
        ck_assert_msg(hp.stg_nlaunch == 1 && hp.stg_launch[CS__SL_CELLS] == shapes[k].cells && hp.stg_launch[CS__SL_REG] == shapes[k].reg &&
                          hp.stg_launch[CS__SL_TW] == shapes[k].tw,
                      "%s × %d: %s",
                      cs_hines_table41[shapes[k].cls].name, shapes[k].count, hp.describe);
        cs__hines_hplan_free(&hp);
        if (shapes[k].reg > CS__STG_REG_STEPS) check_host_plan_nsm(&kb, &o, shapes[k].nsm, "more register steps"); /* emulated */
        if (k == 0) { /* cells per warp must be 1, 2 or 4 */
            o.block_size = 3;
            ck_assert_int_eq(cs__hines_hplan_build(kb.nsys, kb.offset, kb.p, CS__HV_STAGED, &o, 132, &hp, msg, sizeof msg),
                             CS_SOLVER_ERR_INVALID);
            ck_assert_msg(strstr(msg, "cells per warp") != NULL, "%s", msg);
        }
        batch_free(&kb);
    }
    /* identical cells: uniform plans, so the fused step also runs with shared constants */
    load_cells();
    batch ub;
    batch_cap uc = {0, 0};
    memset(&ub, 0, sizeof ub);
    for (int j = 0; j < 5; ++j) batch_add(&ub, &uc, g_cells[0].n, g_cells[0].lp, g_cells[0].g, g_cells[0].cdt);
    for (int k = 0; k < NCONFIG; ++k) {
        cs_hines_gpu_options o = make_opt(&g_configs[k]);
        check_host_plan(&ub, &o, g_cells[0].name);
    }
    batch_free(&ub);
    /* bad structures */
    cs__hines_hplan hp;
    char msg[256];
    int off[3] = {0, 2, 4}, pbad[4] = {-1, 0, 0, 2}; /* row 2 must have parent -1 */
    ck_assert_int_eq(cs__hines_hplan_build(2, off, pbad, CS__HV_FINE, NULL, 132, &hp, msg, sizeof msg), CS_SOLVER_ERR_INVALID);
    int pbad2[4] = {-1, 1, -1, 2}; /* parent not before the row */
    ck_assert_int_eq(cs__hines_hplan_build(2, off, pbad2, CS__HV_FLAT, NULL, 132, &hp, msg, sizeof msg), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs__hines_variant_lookup("nonsense"), -1);
    batch_free(&rb); batch_free(&cb); batch_free(&mb);
}
END_TEST

START_TEST(test_host_plans_cells)
{
    load_cells();
    batch b;
    batch_cap c = {0, 0};
    memset(&b, 0, sizeof b);
    g_rng = 21;
    for (int k = 0; k < g_ncells; ++k) batch_add(&b, &c, g_cells[k].n, g_cells[k].lp, g_cells[k].g, g_cells[k].cdt);
    for (int k = 0; k < NCONFIG; ++k) {
        cs_hines_gpu_options o = make_opt(&g_configs[k]);
        check_host_plan(&b, &o, "real cells");
    }
    batch_free(&b);
}
END_TEST

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
    for (int shared = 0; shared <= (staged ? 0 : hp.uniform); ++shared) {
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
        cs_hines_step_d st = {dv[0], dv[1], dv[2], dv[3], dv[4], dv[5], dv[6], dflags, dv[7], dv[8], shared, da0};
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
    if (!hp.uniform || staged) { /* shared constants are refused for systems of different structures, and by staged */
        cs_hines_step_d bad = {(double *)fl, (double *)fl, (double *)fl, (double *)fl, (double *)fl, (double *)fl,
                               (double *)fl, fl, (double *)fl, (double *)fl, 1, (double *)fl};
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
 * solve, and a third with another u array (the same values) too */
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

static Suite *host_suite(void)
{
    Suite *s = suite_create("hines_gpu_planner");
    TCase *tc = tcase_create("host");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_generator);
    tcase_add_test(tc, test_auto_choice);
    tcase_add_test(tc, test_staged_many_structures);
    tcase_add_test(tc, test_host_plans);
    tcase_add_test(tc, test_host_plans_cells);
    suite_add_tcase(s, tc);
    return s;
}

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
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    const char *sm = getenv("CS_TEST_SMALL");
    g_small = sm && *sm && strcmp(sm, "0") != 0;
    SRunner *sr = srunner_create(host_suite());
    srunner_set_fork_status(sr, CK_NOFORK); /* a forked child cannot use a CUDA context */
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (nf) return EXIT_FAILURE;
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
    sr = srunner_create(gpu_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_VERBOSE);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
