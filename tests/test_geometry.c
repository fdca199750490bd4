/* Tests of the generators (models/cs_morph_gen.c), the RNG (models/cs_rng.h) and the
 * discretisation (models/cs_geometry.c). Expected values are computed here from closed forms. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cs_error.h"
#include "cs_geometry.h"
#include "cs_morph.h"
#include "cs_rng.h"

#define PI 3.14159265358979323846

static int rel_close(double a, double b, double tol) { return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)); }
#define ck_close(a, b, tol) \
    ck_assert_msg(rel_close((a), (b), (tol)), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

/* ---- cylinder: analytic areas and conductances ---------------------------------------- */
START_TEST(test_cylinder_exact) {
    const double L = 100.0, r = 2.0; /* [µm] */
    const int n = 4;
    cs_morph m;
    ck_assert_int_eq(cs_morph_cable(L, r, n, &m), CS_OK);
    cs_cv_policy pol = {.max_cv_length = 7.0, .cvs_per_branch = 0}; /* ncv_hint wins */
    cs_geometry g;
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_OK);
    ck_assert_int_eq(g.ncv, n + 2);
    ck_assert_int_eq(g.nbranch, 1);
    ck_assert_int_eq(g.branch_first[0], 1);
    ck_assert_int_eq(g.branch_ncv[0], n);
    ck_assert_int_eq(g.branch_proximal[0], 0);
    ck_assert_int_eq(g.parent[0], -1);
    for (int i = 1; i < g.ncv; ++i) ck_assert_int_eq(g.parent[i], i - 1);
    ck_assert(g.area[0] == 0.0 && g.area[n + 1] == 0.0);
    const double dx = L / n;                              /* [µm] */
    for (int i = 1; i <= n; ++i) ck_close(g.area[i], 2 * PI * r * dx, 1e-13);
    ck_close(g.g_axial[1], 1e2 * PI * r * r / (dx / 2), 1e-13); /* [µS] half piece to the root node */
    for (int i = 2; i <= n; ++i) ck_close(g.g_axial[i], 1e2 * PI * r * r / dx, 1e-13);
    ck_close(g.g_axial[n + 1], 1e2 * PI * r * r / (dx / 2), 1e-13);
    for (int i = 0; i < g.ncv; ++i) ck_assert_int_eq(g.tag[i], CS_TAG_DEND);
    cs_geometry_free(&g);
    cs_morph_free(&m);
}
END_TEST

/* A soma cylinder of one CV has area 4πr²; its distal node is where the dendrite attaches. */
START_TEST(test_ball_and_stick) {
    const double rs = 9.4, L = 200.0, rd = 0.5;
    cs_morph m;
    ck_assert_int_eq(cs_morph_ball_and_stick(rs, L, rd, 0, &m), CS_OK);
    ck_assert_int_eq(m.nbranch, 2);
    ck_assert_int_eq(m.branches[0].parent, -1);
    ck_assert_int_eq(m.branches[0].tag, CS_TAG_SOMA);
    ck_assert_int_eq(m.branches[1].parent, 0);
    ck_assert_int_eq(m.branches[1].tag, CS_TAG_DEND);
    ck_close(cs_branch_length(&m, 0), 2 * rs, 1e-15);
    ck_close(cs_branch_length(&m, 1), L, 1e-15);
    /* the dendrite starts at the soma's distal end */
    const cs_point *sd = &m.points[m.branches[0].first + m.branches[0].npoints - 1];
    const cs_point *d0 = &m.points[m.branches[1].first];
    ck_assert(sd->x == d0->x && sd->y == d0->y && sd->z == d0->z);
    cs_cv_policy pol = {.max_cv_length = 30.0};
    cs_geometry g;
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_OK);
    ck_assert_int_eq(g.branch_ncv[0], 1);
    ck_assert_int_eq(g.branch_ncv[1], 7); /* ceil(200/30) */
    ck_assert_int_eq(g.ncv, 1 + 2 + 8);
    ck_close(g.area[1], 4 * PI * rs * rs, 1e-14);
    ck_assert_int_eq(g.branch_proximal[1], 2); /* the soma's distal node */
    ck_assert_int_eq(g.parent[3], 2);
    ck_assert_int_eq(g.tag[0], CS_TAG_SOMA);
    ck_assert_int_eq(g.tag[2], CS_TAG_SOMA);
    ck_assert_int_eq(g.tag[3], CS_TAG_DEND);
    /* soma distal node ↔ centre: half the soma; dendrite first centre ↔ soma distal node: half a piece */
    ck_close(g.g_axial[2], 1e2 * PI * rs * rs / rs, 1e-13);
    ck_close(g.g_axial[3], 1e2 * PI * rd * rd / (L / 7 / 2), 1e-13);
    double total = 0;
    for (int i = 0; i < g.ncv; ++i) total += g.area[i];
    ck_close(total, 4 * PI * rs * rs + 2 * PI * rd * L, 1e-13);
    cs_geometry_free(&g);
    cs_morph_free(&m);
}
END_TEST

/* Frustum geometry: a hand-built polyline with a kink and tapering radii. Pieces cut frustums,
 * so radii at the cuts are interpolated. */
static void make_morph(cs_morph *m, int nb, const cs_branch *br, int np, const cs_point *pt) {
    m->nbranch = nb;
    m->branches = malloc((size_t)nb * sizeof *m->branches);
    memcpy(m->branches, br, (size_t)nb * sizeof *br);
    m->npoints = np;
    m->points = malloc((size_t)np * sizeof *m->points);
    memcpy(m->points, pt, (size_t)np * sizeof *pt);
}

static double frustum_area(double l, double r1, double r2) { return PI * (r1 + r2) * sqrt(l * l + (r1 - r2) * (r1 - r2)); }
static double frustum_R(double l, double r1, double r2) { return l / (PI * r1 * r2) * 1e4; } /* [Ω] for Ra 1 Ω·cm */

START_TEST(test_frustum_polyline) {
    /* 0 → 10 along x (r 1 → 3), then 20 along y (r 3 → 1): L = 30, 2 CVs of 15 */
    cs_point pt[3] = {{0, 0, 0, 1}, {10, 0, 0, 3}, {10, 20, 0, 1}};
    cs_branch br = {-1, CS_TAG_DEND, 0, 3, 2, 1.0};
    cs_morph m;
    make_morph(&m, 1, &br, 3, pt);
    cs_cv_policy pol = {.max_cv_length = 1.0};
    cs_geometry g;
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_OK);
    ck_assert_int_eq(g.ncv, 4);
    ck_close(g.area[1], frustum_area(10, 1, 3) + frustum_area(5, 3, 2.5), 1e-13);
    ck_close(g.area[2], frustum_area(15, 2.5, 1), 1e-13);
    ck_close(g.area[1] + g.area[2], frustum_area(10, 1, 3) + frustum_area(20, 3, 1), 1e-13);
    /* centres at 7.5 (r 2.5) and 22.5 (r 3 − 2·12.5/20 = 1.75) */
    ck_close(g.g_axial[1], 1e6 / frustum_R(7.5, 1, 2.5), 1e-13);
    ck_close(g.g_axial[2], 1e6 / (frustum_R(2.5, 2.5, 3) + frustum_R(12.5, 3, 1.75)), 1e-13);
    ck_close(g.g_axial[3], 1e6 / frustum_R(7.5, 1.75, 1), 1e-13);
    cs_geometry_free(&g);

    /* 3 CVs on a single tapering frustum: radii at the cuts 2, 5/3, 4/3, 1 */
    cs_point pt2[2] = {{0, 0, 0, 2}, {0, 0, 30, 1}};
    cs_branch br2 = {-1, CS_TAG_AXON, 0, 2, 3, 1.0};
    cs_morph_free(&m);
    make_morph(&m, 1, &br2, 2, pt2);
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_OK);
    const double rc[4] = {2, 5.0 / 3, 4.0 / 3, 1};
    for (int k = 0; k < 3; ++k) ck_close(g.area[1 + k], frustum_area(10, rc[k], rc[k + 1]), 1e-13);
    ck_close(g.g_axial[1], 1e6 / frustum_R(5, 2, 2 - 1.0 / 6), 1e-13);
    ck_close(g.g_axial[2], 1e6 / frustum_R(10, 2 - 1.0 / 6, 2 - 3.0 / 6), 1e-13); /* = single frustum 5..15 */
    ck_close(g.g_axial[4], 1e6 / frustum_R(5, 1 + 1.0 / 6, 1), 1e-13);
    ck_assert_int_eq(g.tag[0], CS_TAG_AXON);
    cs_geometry_free(&g);
    cs_morph_free(&m);
}
END_TEST

/* A step of the radius (two points at one position) adds its annulus to one CV, no resistance,
 * and no NaN. */
START_TEST(test_zero_length_step) {
    cs_point pt[4] = {{0, 0, 0, 2}, {10, 0, 0, 2}, {10, 0, 0, 1}, {20, 0, 0, 1}};
    cs_branch br = {-1, CS_TAG_DEND, 0, 4, 0, 1.0};
    cs_morph m;
    make_morph(&m, 1, &br, 4, pt);
    for (int n = 1; n <= 4; ++n) {
        cs_cv_policy pol = {.cvs_per_branch = n};
        cs_geometry g;
        ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_OK);
        double total = 0;
        for (int i = 0; i < g.ncv; ++i) {
            ck_assert(isfinite(g.area[i]));
            ck_assert(i == 0 || (isfinite(g.g_axial[i]) && g.g_axial[i] > 0));
            total += g.area[i];
        }
        ck_close(total, 2 * PI * 2 * 10 + 2 * PI * 1 * 10 + PI * 3 * 1, 1e-13);
        if (n == 2) { /* centres at 5 and 15: the path crosses the step */
            ck_close(g.g_axial[2], 1e6 / (frustum_R(5, 2, 2) + frustum_R(5, 1, 1)), 1e-13);
        }
        cs_geometry_free(&g);
    }
    cs_morph_free(&m);
}
END_TEST

START_TEST(test_policy) {
    cs_morph m;
    ck_assert_int_eq(cs_morph_cable(90.0, 1.0, 0, &m), CS_OK);
    cs_geometry g;
    cs_cv_policy p1 = {.max_cv_length = 30.0};
    ck_assert_int_eq(cs_discretize(&m, &p1, &g), CS_OK);
    ck_assert_int_eq(g.branch_ncv[0], 3);
    cs_geometry_free(&g);
    cs_cv_policy p2 = {.max_cv_length = 29.0};
    ck_assert_int_eq(cs_discretize(&m, &p2, &g), CS_OK);
    ck_assert_int_eq(g.branch_ncv[0], 4);
    cs_geometry_free(&g);
    cs_cv_policy p3 = {.max_cv_length = 1000.0};
    ck_assert_int_eq(cs_discretize(&m, &p3, &g), CS_OK);
    ck_assert_int_eq(g.branch_ncv[0], 1);
    cs_geometry_free(&g);
    cs_cv_policy p4 = {.max_cv_length = 30.0, .cvs_per_branch = 7};
    ck_assert_int_eq(cs_discretize(&m, &p4, &g), CS_OK);
    ck_assert_int_eq(g.branch_ncv[0], 7);
    ck_assert_int_eq(g.ncv, 9);
    cs_geometry_free(&g);
    cs_cv_policy p5 = {.max_cv_length = 0.0, .cvs_per_branch = 2}; /* cvs_per_branch alone is enough */
    ck_assert_int_eq(cs_discretize(&m, &p5, &g), CS_OK);
    ck_assert_int_eq(g.branch_ncv[0], 2);
    cs_geometry_free(&g);

    const double bad[] = {0.0, -1.0, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        cs_cv_policy pb = {.max_cv_length = bad[i]};
        cs_error_clear();
        ck_assert_int_eq(cs_discretize(&m, &pb, &g), CS_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(cs_error_message(), "max_cv_length"));
        ck_assert_ptr_null(g.parent);
    }
    cs_cv_policy pn = {.max_cv_length = 10.0, .cvs_per_branch = -1};
    cs_error_clear();
    ck_assert_int_eq(cs_discretize(&m, &pn, &g), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(cs_error_message(), "cvs_per_branch"));
    cs_error_clear();
    ck_assert_int_eq(cs_discretize(&m, NULL, &g), CS_ERR_INVALID);
    cs_error_clear();
    cs_morph_free(&m);
}
END_TEST

/* A malformed morphology (built by hand) is rejected, not discretised into NaNs. */
START_TEST(test_bad_morph) {
    cs_point pt[2] = {{0, 0, 0, 1}, {0, 0, 0, 1}};
    cs_branch br = {-1, CS_TAG_DEND, 0, 2, 0, 1.0};
    cs_morph m;
    make_morph(&m, 1, &br, 2, pt);
    cs_cv_policy pol = {.max_cv_length = 10};
    cs_geometry g;
    cs_error_clear();
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(cs_error_message(), "length"));
    m.points[1].x = 5;
    m.points[1].r = 0;
    cs_error_clear();
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(cs_error_message(), "radius"));
    m.points[1].r = 1;
    m.branches[0].parent = 0; /* not before itself */
    cs_error_clear();
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_ERR_INVALID);
    cs_error_clear();
    cs_morph_free(&m);
}
END_TEST

/* NEURON's rule: 0 → proximal node, 1 → distal node, else centre floor(pos·n) capped at n-1. */
/* Branches attached inside their parent (NEURON's child.connect(parent(x))): the child's first
 * CV hangs from the parent's node at x, by NEURON's rule (checked against NEURON itself in
 * tests/test_neuron_agreement.py, model "attached"); a position outside [0, 1] is refused. */
START_TEST(test_parent_pos) {
    /* root of 3 CVs (nodes 1, 2, 3, distal 4), then children at 0, 0.4, 0.999, 1 and 2/3 */
    cs_point pt[12] = {{0, 0, 0, 1},  {30, 0, 0, 1}, {0, 0, 0, 1},  {0, 10, 0, 1}, {12, 0, 0, 1}, {12, 10, 0, 1},
                       {30, 0, 0, 1}, {30, 9, 0, 1}, {30, 0, 0, 1}, {40, 0, 0, 1}, {20, 0, 0, 1}, {20, 5, 0, 1}};
    const double pos[5] = {0.0, 0.4, 0.999, 1.0, 2.0 / 3.0};
    const int want[5] = {0, 2, 3, 4, 3}; /* proximal (the root node), centre of CV 1, of CV 2, distal, CV 2 */
    cs_branch br[6] = {{-1, CS_TAG_SOMA, 0, 2, 3, 1.0}};
    for (int k = 0; k < 5; ++k) br[1 + k] = (cs_branch){0, CS_TAG_DEND, 2 + 2 * k, 2, 1, pos[k]};
    cs_morph m;
    make_morph(&m, 6, br, 12, pt);
    cs_cv_policy pol = {.max_cv_length = 100.0};
    cs_geometry g;
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_OK);
    for (int k = 0; k < 5; ++k) {
        ck_assert_int_eq(g.branch_proximal[1 + k], want[k]);
        ck_assert_int_eq(g.parent[g.branch_first[1 + k]], want[k]);
        ck_assert_int_eq(cs_geometry_locate(&g, 0, pos[k]), want[k]); /* the same rule as locations */
    }
    cs_geometry_free(&g);
    m.branches[3].parent_pos = 1.5;
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_ERR_INVALID);
    ck_assert_msg(strstr(cs_error_message(), "branch 3 attaches at 1.5") != NULL, "%s", cs_error_message());
    m.branches[3].parent_pos = NAN;
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_ERR_INVALID);
    cs_morph_free(&m);
}
END_TEST

START_TEST(test_locate) {
    cs_morph m;
    ck_assert_int_eq(cs_morph_ball_and_stick(5.0, 100.0, 1.0, 4, &m), CS_OK);
    cs_cv_policy pol = {.max_cv_length = 10.0};
    cs_geometry g;
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_OK);
    /* nodes: 0 root, 1 soma centre, 2 soma distal, 3..6 dendrite centres, 7 dendrite distal */
    ck_assert_int_eq(g.ncv, 8);
    ck_assert_int_eq(cs_geometry_locate(&g, 0, 0.0), 0);
    ck_assert_int_eq(cs_geometry_locate(&g, 0, 0.5), 1);
    ck_assert_int_eq(cs_geometry_locate(&g, 0, 1e-9), 1);
    ck_assert_int_eq(cs_geometry_locate(&g, 0, 1.0), 2);
    ck_assert_int_eq(cs_geometry_locate(&g, 1, 0.0), 2);
    ck_assert_int_eq(cs_geometry_locate(&g, 1, 0.1), 3);
    ck_assert_int_eq(cs_geometry_locate(&g, 1, 0.2499), 3);
    ck_assert_int_eq(cs_geometry_locate(&g, 1, 0.25), 4);
    ck_assert_int_eq(cs_geometry_locate(&g, 1, 0.5), 5);
    ck_assert_int_eq(cs_geometry_locate(&g, 1, 0.75), 6);
    ck_assert_int_eq(cs_geometry_locate(&g, 1, 0.9999999), 6);
    ck_assert_int_eq(cs_geometry_locate(&g, 1, 1.0), 7);
    ck_assert_int_eq(cs_geometry_locate(&g, 1, -0.01), -1);
    ck_assert_int_eq(cs_geometry_locate(&g, 1, 1.01), -1);
    ck_assert_int_eq(cs_geometry_locate(&g, 1, NAN), -1);
    ck_assert_int_eq(cs_geometry_locate(&g, 2, 0.5), -1);
    ck_assert_int_eq(cs_geometry_locate(&g, -1, 0.5), -1);
    cs_geometry_free(&g);
    cs_morph_free(&m);
}
END_TEST

/* ---- generators: parameter validation ------------------------------------------------- */
START_TEST(test_generator_validation) {
    const double bad[] = {0.0, -1.0, NAN, INFINITY, -INFINITY};
    cs_morph m;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        double v = bad[i];
        cs_error_clear();
        ck_assert_int_eq(cs_morph_soma(v, &m), CS_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(cs_error_message(), "soma: radius"));
        ck_assert_ptr_null(m.branches);
        cs_error_clear();
        ck_assert_int_eq(cs_morph_cable(v, 1.0, 0, &m), CS_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(cs_error_message(), "cable: length"));
        cs_error_clear();
        ck_assert_int_eq(cs_morph_cable(10.0, v, 0, &m), CS_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(cs_error_message(), "cable: radius"));
        cs_error_clear();
        ck_assert_int_eq(cs_morph_ball_and_stick(v, 10, 1, 0, &m), CS_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(cs_error_message(), "ball_and_stick: soma_radius"));
        cs_error_clear();
        ck_assert_int_eq(cs_morph_ball_and_stick(5, v, 1, 0, &m), CS_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(cs_error_message(), "ball_and_stick: dend_length"));
        cs_error_clear();
        ck_assert_int_eq(cs_morph_ball_and_stick(5, 10, v, 0, &m), CS_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(cs_error_message(), "ball_and_stick: dend_radius"));
        const char *names[4] = {"soma_radius", "dend_radius", "length[0]", "length[1]"};
        for (int k = 0; k < 4; ++k) {
            cs_random_tree_params p = {6.3, 0.5, 3, {1.0, 0.5}, {200, 20}, {20, 2}};
            double *field[4] = {&p.soma_radius, &p.dend_radius, &p.length[0], &p.length[1]};
            *field[k] = v;
            cs_error_clear();
            ck_assert_int_eq(cs_morph_random_tree(&p, 1, &m), CS_ERR_INVALID);
            ck_assert_ptr_nonnull(strstr(cs_error_message(), names[k]));
        }
    }
    cs_error_clear();
    ck_assert_int_eq(cs_morph_ball_and_stick(9.4, -1, 0.5, 0, &m), CS_ERR_INVALID);
    ck_assert_str_eq(cs_error_message(), "ball_and_stick: dend_length must be finite and > 0 (got -1)");
    cs_error_clear();
    ck_assert_int_eq(cs_morph_cable(10, 1, -2, &m), CS_ERR_INVALID);
    cs_error_clear();
    cs_random_tree_params p = {6.3, 0.5, 0, {1.0, 0.5}, {200, 20}, {20, 2}};
    ck_assert_int_eq(cs_morph_random_tree(&p, 1, &m), CS_ERR_INVALID); /* depth 0 */
    ck_assert_ptr_nonnull(strstr(cs_error_message(), "depth"));
    cs_error_clear();
    p.depth = 3;
    p.branch_prob[1] = 1.5;
    ck_assert_int_eq(cs_morph_random_tree(&p, 1, &m), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(cs_error_message(), "branch_prob[1]"));
    cs_error_clear();
    p.branch_prob[1] = NAN;
    ck_assert_int_eq(cs_morph_random_tree(&p, 1, &m), CS_ERR_INVALID);
    cs_error_clear();
    p.branch_prob[1] = 0.5;
    p.ncv[0] = -1;
    ck_assert_int_eq(cs_morph_random_tree(&p, 1, &m), CS_ERR_INVALID);
    cs_error_clear();
    ck_assert_int_eq(cs_morph_random_tree(NULL, 1, &m), CS_ERR_INVALID);
    cs_error_clear();
}
END_TEST

/* ---- random tree ---------------------------------------------------------------------- */
static int tree_depth(const cs_morph *m, int b) {
    int d = -1;
    for (; b > 0; b = m->branches[b].parent) ++d;
    return d; /* soma: -1, its dendrites: 0 */
}

START_TEST(test_random_tree_full) {
    /* probability 1 everywhere: a full binary tree of depth 3 below the soma (Arbor: the soma gets 2) */
    cs_random_tree_params p = {6.3, 0.5, 3, {1.0, 1.0}, {200, 20}, {20, 2}};
    cs_morph m;
    ck_assert_int_eq(cs_morph_random_tree(&p, 42, &m), CS_OK);
    ck_assert_int_eq(m.nbranch, 1 + 2 + 4 + 8);
    ck_assert_int_eq(m.branches[0].tag, CS_TAG_SOMA);
    ck_assert_int_eq(m.branches[0].ncv_hint, 1);
    ck_close(cs_branch_length(&m, 0), 2 * 6.3, 1e-15);
    const double len[3] = {200, 110, 20};
    const int ncv[3] = {20, 11, 2};
    int nchild[15] = {0};
    for (int b = 1; b < m.nbranch; ++b) {
        const cs_branch *br = &m.branches[b];
        ck_assert_int_lt(br->parent, b);
        ck_assert_int_ge(br->parent, 0);
        nchild[br->parent]++;
        int d = tree_depth(&m, b);
        ck_assert_int_ge(d, 0);
        ck_assert_int_lt(d, 3);
        ck_assert_int_eq(br->tag, CS_TAG_DEND);
        ck_close(cs_branch_length(&m, b), len[d], 1e-14);
        ck_assert_int_eq(br->ncv_hint, ncv[d]);
        ck_assert(m.points[br->first].r == 0.5);
        /* attached at the parent's distal end */
        const cs_branch *pb = &m.branches[br->parent];
        const cs_point *pe = &m.points[pb->first + pb->npoints - 1], *q = &m.points[br->first];
        ck_assert(pe->x == q->x && pe->y == q->y && pe->z == q->z);
    }
    for (int b = 0; b < m.nbranch; ++b) ck_assert_int_eq(nchild[b], tree_depth(&m, b) < 2 ? 2 : 0);
    /* depth-first numbering: branch 1 is a level-0 dendrite, branch 2 its first child */
    ck_assert_int_eq(m.branches[1].parent, 0);
    ck_assert_int_eq(m.branches[2].parent, 1);
    ck_assert_int_eq(m.branches[3].parent, 2);
    cs_morph_free(&m);

    /* probability 0: the soma alone */
    cs_random_tree_params p0 = {6.3, 0.5, 4, {0.0, 0.0}, {200, 20}, {20, 2}};
    ck_assert_int_eq(cs_morph_random_tree(&p0, 42, &m), CS_OK);
    ck_assert_int_eq(m.nbranch, 1);
    cs_morph_free(&m);
    /* depth 1 (no division by depth-1 = 0) */
    cs_random_tree_params p1 = {6.3, 0.5, 1, {1.0, 0.0}, {200, 20}, {20, 2}};
    ck_assert_int_eq(cs_morph_random_tree(&p1, 42, &m), CS_OK);
    ck_assert_int_eq(m.nbranch, 3);
    ck_close(cs_branch_length(&m, 1), 200, 1e-15);
    ck_assert_int_eq(m.branches[1].ncv_hint, 20);
    cs_morph_free(&m);
}
END_TEST

static int same_morph(const cs_morph *a, const cs_morph *b) {
    return a->nbranch == b->nbranch && a->npoints == b->npoints &&
           memcmp(a->branches, b->branches, (size_t)a->nbranch * sizeof *a->branches) == 0 &&
           memcmp(a->points, b->points, (size_t)a->npoints * sizeof *a->points) == 0;
}

START_TEST(test_random_tree_seed) {
    cs_random_tree_params p = {6.3, 0.5, 8, {0.9, 0.4}, {200, 20}, {20, 2}};
    cs_morph a, b;
    ck_assert_int_eq(cs_morph_random_tree(&p, 12345, &a), CS_OK);
    ck_assert_int_eq(cs_morph_random_tree(&p, 12345, &b), CS_OK);
    ck_assert(same_morph(&a, &b));
    ck_assert_int_eq(cs_morph_check(&a), CS_OK);
    cs_morph_free(&b);
    /* different seeds: many different trees (deterministic, so this cannot be flaky) */
    int differ = 0, sizes[20];
    for (int s = 0; s < 20; ++s) {
        ck_assert_int_eq(cs_morph_random_tree(&p, (uint64_t)s, &b), CS_OK);
        ck_assert_int_eq(cs_morph_check(&b), CS_OK);
        for (int k = 1; k < b.nbranch; ++k) ck_assert_int_lt(b.branches[k].parent, k);
        differ += !same_morph(&a, &b);
        sizes[s] = b.nbranch;
        cs_morph_free(&b);
    }
    ck_assert_int_ge(differ, 19);
    int distinct_sizes = 0;
    for (int s = 0; s < 20; ++s) {
        int seen = 0;
        for (int t = 0; t < s; ++t) seen |= sizes[t] == sizes[s];
        distinct_sizes += !seen;
    }
    ck_assert_int_ge(distinct_sizes, 5);
    cs_morph_free(&a);
}
END_TEST

/* ---- RNG -------------------------------------------------------------------------------- */
START_TEST(test_rng) {
    /* splitmix64 known answer (Vigna's reference, seed 0) */
    uint64_t x = 0;
    ck_assert(cs_rng_splitmix64(&x) == 0xe220a8397b1dcdafull);
    ck_assert(cs_rng_splitmix64(&x) == 0x6e789e6aa1b965f4ull);
    cs_rng r1, r2;
    cs_rng_seed(&r1, 7);
    cs_rng_seed(&r2, 7);
    for (int i = 0; i < 100; ++i) ck_assert(cs_rng_next(&r1) == cs_rng_next(&r2));
    cs_rng_seed(&r2, 8);
    int same = 0;
    for (int i = 0; i < 100; ++i) same += cs_rng_next(&r1) == cs_rng_next(&r2);
    ck_assert_int_eq(same, 0);
    double sum = 0;
    int hist[10] = {0};
    const int n = 100000;
    for (int i = 0; i < n; ++i) {
        double u = cs_rng_uniform(&r1);
        ck_assert(u >= 0.0 && u < 1.0);
        sum += u;
        uint64_t k = cs_rng_uniform_int(&r1, 10);
        ck_assert(k < 10);
        hist[k]++;
    }
    ck_assert(fabs(sum / n - 0.5) < 0.01);
    for (int k = 0; k < 10; ++k) ck_assert(abs(hist[k] - n / 10) < n / 100);
    ck_assert(cs_rng_uniform_int(&r1, 0) == 0);
    ck_assert(cs_rng_uniform_int(&r1, 1) == 0);
    for (int i = 0; i < 1000; ++i) {
        int64_t v = cs_rng_uniform_range(&r1, -3, 3);
        ck_assert(v >= -3 && v <= 3);
    }
    cs_rng s1, s2;
    cs_rng_seed2(&s1, 42, 0);
    cs_rng_seed2(&s2, 42, 1);
    ck_assert(cs_rng_next(&s1) != cs_rng_next(&s2));
}
END_TEST

static Suite *geometry_suite(void) {
    Suite *s = suite_create("geometry");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_cylinder_exact);
    tcase_add_test(tc, test_ball_and_stick);
    tcase_add_test(tc, test_frustum_polyline);
    tcase_add_test(tc, test_zero_length_step);
    tcase_add_test(tc, test_policy);
    tcase_add_test(tc, test_bad_morph);
    tcase_add_test(tc, test_locate);
    tcase_add_test(tc, test_parent_pos);
    tcase_add_test(tc, test_generator_validation);
    tcase_add_test(tc, test_random_tree_full);
    tcase_add_test(tc, test_random_tree_seed);
    tcase_add_test(tc, test_rng);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    Suite *s = geometry_suite();
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int nf = srunner_ntests_failed(r);
    srunner_free(r);
    return nf ? 1 : 0;
}
