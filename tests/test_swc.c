/* Tests of the SWC reader (models/cs_swc.c) on the real and malformed files of
 * shared/data/morphologies (see its PROVENANCE.md) and on small files written here.
 *
 * The membrane area of a loaded file is checked against a sum computed here straight from the
 * samples (a per-sample loop, with no branches): every sample with a parent is a frustum from the
 * parent to the sample; a single-point or three-point soma is one cylinder of area 4πr² (the two
 * side samples of a three-point soma add nothing); a neurite leaving a soma sample uses its own
 * radius at the soma end; a branch's first sample lying on the attachment point adds nothing. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_error.h"
#include "cs_geometry.h"
#include "cs_morph.h"

#define PI 3.14159265358979323846
#define MORPH_DIR CS_SHARED_DIR "/data/morphologies/"

/* ---- an independent, simple reading of a (valid) SWC file ------------------------------- */
typedef struct {
    long id, parent;
    int type;
    double x, y, z, r;
} raw_sample;

typedef struct {
    int n;
    raw_sample *s;
    int *par;    /* index of the parent, -1 for the root */
    int *nchild; /* number of children */
} raw_swc;

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void raw_read(const char *path, double scale, double min_radius, raw_swc *out) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    int cap = 1024;
    out->n = 0;
    out->s = malloc((size_t)cap * sizeof *out->s);
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        char *h = strchr(line, '#');
        if (h) *h = '\0';
        double v[7];
        int k = 0;
        char *p = line, *e;
        while (k < 7) {
            v[k] = strtod(p, &e);
            if (e == p) break;
            p = e;
            ++k;
        }
        if (k == 0) continue; /* blank or comment */
        ck_assert_msg(k == 7, "%s: raw reader: bad line %s", path, line);
        if (out->n == cap) out->s = realloc(out->s, (size_t)(cap *= 2) * sizeof *out->s);
        raw_sample *s = &out->s[out->n++];
        s->id = (long)v[0];
        s->type = (int)v[1];
        s->x = v[2] * scale;
        s->y = v[3] * scale;
        s->z = v[4] * scale;
        s->r = fmax(v[5] * scale, min_radius);
        s->parent = (long)v[6];
    }
    fclose(f);
    int n = out->n;
    /* id → index through a sorted table of (id, index) pairs */
    long *tab = malloc(2 * (size_t)n * sizeof *tab);
    for (int i = 0; i < n; ++i) {
        tab[2 * i] = out->s[i].id;
        tab[2 * i + 1] = i;
    }
    qsort(tab, (size_t)n, 2 * sizeof *tab, cmp_long);
    out->par = malloc((size_t)n * sizeof *out->par);
    out->nchild = calloc((size_t)n, sizeof *out->nchild);
    for (int i = 0; i < n; ++i) {
        out->par[i] = -1;
        if (out->s[i].parent < 0) continue;
        long *hit = bsearch(&out->s[i].parent, tab, (size_t)n, 2 * sizeof *tab, cmp_long);
        ck_assert_msg(hit != NULL, "%s: raw reader: missing parent", path);
        out->par[i] = (int)hit[1];
        out->nchild[hit[1]]++;
    }
    free(tab);
}

static void raw_free(raw_swc *r) {
    free(r->s);
    free(r->par);
    free(r->nchild);
}

static double frustum_area(double l, double r1, double r2) { return PI * (r1 + r2) * sqrt(l * l + (r1 - r2) * (r1 - r2)); }

typedef struct {
    double area;  /* [µm²] */
    int nbranch;
    int soma_kind; /* 0 none, 1 single-point, 3 three-point */
    int merged;    /* branches whose first sample lies on the attachment point */
} raw_expect;

/* Expected area and branch count, one sample at a time. */
static raw_expect raw_expected(const raw_swc *w) {
    raw_expect ex = {0, 0, 0, 0};
    int n = w->n, root = -1;
    for (int i = 0; i < n; ++i)
        if (w->par[i] < 0) root = i;
    ck_assert_int_ge(root, 0);
    /* soma samples of the root: type-1 children of the root, and their type-1 children */
    int soma1 = 0, soma2 = 0;
    for (int i = 0; i < n; ++i)
        if (w->par[i] == root && w->s[i].type == 1) {
            ++soma1;
            for (int j = 0; j < n && soma2 == 0; ++j) soma2 += w->par[j] == i && w->s[j].type == 1;
        }
    if (w->s[root].type == 1 && soma1 == 0) ex.soma_kind = 1;
    if (w->s[root].type == 1 && soma1 == 2 && soma2 == 0) ex.soma_kind = 3;
    if (ex.soma_kind) {
        ex.area += 4 * PI * w->s[root].r * w->s[root].r;
        ex.nbranch = 1;
    }
    for (int i = 0; i < n; ++i) {
        int p = w->par[i];
        if (p < 0) continue;
        const raw_sample *a = &w->s[p], *b = &w->s[i];
        int p_is_soma_sample = ex.soma_kind && (p == root || (w->par[p] == root && a->type == 1));
        if (ex.soma_kind == 3 && p == root && b->type == 1) continue; /* side of a 3-point soma */
        int starts = p == root || p_is_soma_sample || w->nchild[p] != 1 || a->type != b->type;
        ex.nbranch += starts;
        double l = sqrt((a->x - b->x) * (a->x - b->x) + (a->y - b->y) * (a->y - b->y) + (a->z - b->z) * (a->z - b->z));
        if (l == 0 && starts) { /* merged into the attachment point */
            ex.merged++;
            continue;
        }
        double ra = (a->type == 1 && b->type != 1) ? b->r : a->r;
        ex.area += frustum_area(l, ra, b->r);
    }
    return ex;
}

/* ---- structural checks on a loaded morphology ------------------------------------------- */
static void check_structure(const char *name, const cs_morph *m) {
    ck_assert_int_eq(cs_morph_check(m), CS_OK);
    ck_assert_msg(m->branches[0].parent == -1, "%s: branch 0 has a parent", name);
    int pts = 0;
    for (int b = 0; b < m->nbranch; ++b) {
        const cs_branch *br = &m->branches[b];
        ck_assert_msg(br->parent < b, "%s: branch %d parent %d", name, b, br->parent);
        ck_assert_int_ge(br->npoints, 2);
        ck_assert_int_eq(br->first, pts);
        pts += br->npoints;
        /* depth-first (pre-order): the parent of b lies on the path from the root to b-1 */
        if (b > 0 && br->parent >= 0) {
            int a = b - 1;
            while (a >= 0 && a != br->parent) a = m->branches[a].parent;
            ck_assert_msg(a == br->parent, "%s: branch %d is not in depth-first order", name, b);
        }
        /* a child starts at its parent's distal point, except on a single/three-point soma */
        if (br->parent >= 0 && !(br->parent == 0 && m->branches[0].tag == CS_TAG_SOMA && m->branches[0].npoints == 2)) {
            const cs_branch *pb = &m->branches[br->parent];
            const cs_point *e = &m->points[pb->first + pb->npoints - 1], *q = &m->points[br->first];
            ck_assert_msg(e->x == q->x && e->y == q->y && e->z == q->z, "%s: branch %d detached", name, b);
        }
    }
    ck_assert_int_eq(pts, m->npoints);
}

static double total_area(const cs_morph *m, cs_cv_policy pol) {
    cs_geometry g;
    ck_assert_int_eq(cs_discretize(m, &pol, &g), CS_OK);
    double a = 0;
    for (int i = 0; i < g.ncv; ++i) a += g.area[i];
    for (int i = 1; i < g.ncv; ++i) ck_assert(g.parent[i] < i && g.g_axial[i] > 0 && isfinite(g.g_axial[i]));
    cs_geometry_free(&g);
    return a;
}

typedef struct {
    const char *file;
    double scale, min_radius;
    int nbranch;   /* from PROVENANCE.md: see the comments */
    int soma_kind;
} real_file;

/* Branch counts implied by the provenance table. Every branch ends at a tip, at a branch point,
 * or where the type changes along an unbranched run (only tc200 (1) and FlyWire (217) do this).
 * Single/three-point soma: 1 (soma) + tips − side tips of a three-point soma + bp_ns.
 * Other somas: tips + bp − 1 (the root's fork ends no branch). */
static const real_file real_files[] = {
    {"SM090312A1-5-IDC.CNG.swc", 1, 0, 1 + (8 - 2) + 4, 3},
    {"C121005C.CNG.swc", 1, 0, 1 + (5 - 2) + 1, 3},
    {"mp_ma_40984_gc2.CNG.swc", 1, 0, 1 + 15 + 13, 1},
    {"tc200.CNG.swc", 1, 0, 107 + 99 - 1 + 1, 0},
    {"flywire_720575940661205633.swc", 0.001, 0.1, 1 + 118 + 113 + 217, 1},
    {"10-2012-02-09-001.CNG.swc", 1, 0, 393 + 392 - 1, 0},
    {"allen_Scnn1a_177300.01.02.01_nrn_ordering.swc", 1, 0, 1 + 66 + 56, 1},
    {"arbor_pyramidal_NMO_49821.swc", 1, 0, 1 + (116 - 2) + 105, 3},
    {"tkb061126a4_ch0_cc2_h_zk_60x_1.swc", 1, 0, 78 + 68 - 1, 0},
};

START_TEST(test_real_file) {
    const real_file *rf = &real_files[_i];
    char path[1024];
    snprintf(path, sizeof path, "%s%s", MORPH_DIR, rf->file);
    cs_swc_options opt = {rf->scale, rf->min_radius, 0};
    cs_morph m;
    cs_error_clear();
    cs_status st = cs_morph_load_swc(path, &opt, &m);
    ck_assert_msg(st == CS_OK, "%s: %s", rf->file, cs_error_message());
    check_structure(rf->file, &m);

    raw_swc w;
    raw_read(path, rf->scale, rf->min_radius, &w);
    raw_expect ex = raw_expected(&w);
    ck_assert_int_eq(ex.soma_kind, rf->soma_kind);
    ck_assert_int_eq(ex.nbranch, rf->nbranch); /* the per-sample count agrees with the provenance */
    ck_assert_int_eq(m.nbranch, rf->nbranch);
    /* every branch holds its samples plus one attachment point, less the merged first samples
     * (a single/three-point soma: 2 points for its 1 or 3 samples) */
    if (rf->soma_kind) {
        const cs_branch *s = &m.branches[0];
        ck_assert_int_eq(s->tag, CS_TAG_SOMA);
        ck_assert_int_eq(s->npoints, 2);
        double r = m.points[0].r;
        ck_assert(m.points[1].r == r);
        ck_assert(fabs(cs_branch_length(&m, 0) - 2 * r) <= 1e-12 * r);
        ck_assert_int_eq(m.npoints, 2 + (w.n - rf->soma_kind) + (m.nbranch - 1) - ex.merged);
    } else {
        ck_assert_int_eq(m.npoints, w.n - 1 + m.nbranch - ex.merged);
    }
    /* only the MorphIO-written file repeats fork points (73 of its 80 duplicate samples) */
    ck_assert_int_eq(ex.merged, strncmp(rf->file, "tkb", 3) == 0 ? 73 : 0);

    /* area: independent of the CV policy and equal to the per-sample sum */
    double a1 = total_area(&m, (cs_cv_policy){.cvs_per_branch = 1});
    double a2 = total_area(&m, (cs_cv_policy){.max_cv_length = 3.0});
    ck_assert_msg(fabs(a1 - ex.area) <= 1e-9 * ex.area, "%s: area %.12g, expected %.12g", rf->file, a1, ex.area);
    ck_assert_msg(fabs(a2 - ex.area) <= 1e-9 * ex.area, "%s: area %.12g, expected %.12g", rf->file, a2, ex.area);
    raw_free(&w);
    cs_morph_free(&m);
}
END_TEST

/* FlyWire file: nanometres with zero radii. Default options must fail on the radius. */
START_TEST(test_flywire_default_fails) {
    cs_morph m;
    cs_error_clear();
    cs_status st = cs_morph_load_swc(MORPH_DIR "flywire_720575940661205633.swc", NULL, &m);
    ck_assert_int_eq(st, CS_ERR_PARSE);
    const char *msg = cs_error_message();
    ck_assert_ptr_nonnull(strstr(msg, "flywire_720575940661205633.swc:"));
    ck_assert_ptr_nonnull(strstr(msg, "radius"));
    ck_assert_ptr_nonnull(strstr(msg, "min_radius"));
    ck_assert_ptr_null(m.branches);
    ck_assert_int_eq(m.nbranch, 0);
    /* the line named holds a zero radius */
    const char *colon = strstr(msg, ".swc:") + 5;
    int line = atoi(colon);
    ck_assert_int_gt(line, 0);
    FILE *f = fopen(MORPH_DIR "flywire_720575940661205633.swc", "rb");
    char buf[4096];
    for (int i = 0; i < line; ++i) ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
    fclose(f);
    double v[7];
    ck_assert_int_eq(sscanf(buf, "%lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]), 7);
    ck_assert(v[5] <= 0);
    cs_error_clear();
}
END_TEST

/* ---- malformed files -------------------------------------------------------------------- */
typedef struct {
    const char *file;
    int line;
    const char *words; /* a phrase the message must contain */
} invalid_file;

static const invalid_file invalid_files[] = {
    {"morphio_bad_syntax.swc", 6, "not a number"},
    {"morphio_multiple_soma.swc", 11, "multiple roots"},
    {"morphio_single_section_missing_segment.swc", 1, "parent 4"},
    {"neurom_repeated_id.swc", 6, "duplicate sample id 4"},
};

START_TEST(test_invalid_file) {
    const invalid_file *iv = &invalid_files[_i];
    char path[1024], where[512];
    snprintf(path, sizeof path, "%sinvalid/%s", MORPH_DIR, iv->file);
    snprintf(where, sizeof where, "%s:%d: ", iv->file, iv->line);
    cs_morph m;
    cs_error_clear();
    ck_assert_int_eq(cs_morph_load_swc(path, NULL, &m), CS_ERR_PARSE);
    const char *msg = cs_error_message();
    ck_assert_msg(strstr(msg, where) != NULL, "message '%s' lacks '%s'", msg, where);
    ck_assert_msg(strstr(msg, iv->words) != NULL, "message '%s' lacks '%s'", msg, iv->words);
    ck_assert_ptr_null(strchr(msg, '\n'));
    ck_assert_ptr_null(m.branches);
    cs_error_clear();
}
END_TEST

/* ---- small files written here ------------------------------------------------------------ */
static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static char tmp_path[512];
static const char *tmp_swc(const char *name, const char *text) {
    snprintf(tmp_path, sizeof tmp_path, "%s/test_swc_%s.swc", CS_BINARY_DIR, name);
    write_file(tmp_path, text);
    return tmp_path;
}

/* x of the distal point of branch b [µm] */
static double m_x_end(const cs_morph *m, int b) { return m->points[m->branches[b].first + m->branches[b].npoints - 1].x; }

static int same_morph(const cs_morph *a, const cs_morph *b) {
    return a->nbranch == b->nbranch && a->npoints == b->npoints &&
           memcmp(a->branches, b->branches, (size_t)a->nbranch * sizeof *a->branches) == 0 &&
           memcmp(a->points, b->points, (size_t)a->npoints * sizeof *a->points) == 0;
}

/* Single-point soma at (1,2,3) r 5 with two dendrites and an axon. */
static const char *single_point_text =
    "# single-point soma\n"
    "1 1 1 2 3 5 -1\n"
    "2 3 1 2 13 1 1\n"
    "3 3 1 2 23 0.5 2\n"
    "4 2 1 -8 3 0.5 1\n"
    "5 2 1 -18 3 0.5 4\n"
    "6 3 11 2 3 1 1\n";

START_TEST(test_single_point_soma) {
    cs_morph m;
    cs_error_clear();
    ck_assert_int_eq(cs_morph_load_swc(tmp_swc("single", single_point_text), NULL, &m), CS_OK);
    ck_assert_int_eq(m.nbranch, 4);
    const cs_branch *b = m.branches;
    ck_assert_int_eq(b[0].parent, -1);
    ck_assert_int_eq(b[0].tag, CS_TAG_SOMA);
    ck_assert_int_eq(b[0].npoints, 2);
    /* cylinder of radius 5 and length 10 centred on the sample */
    const cs_point *s0 = &m.points[0], *s1 = &m.points[1];
    ck_assert(s0->r == 5 && s1->r == 5);
    ck_assert(fabs(cs_branch_length(&m, 0) - 10) < 1e-12);
    ck_assert(fabs((s0->x + s1->x) / 2 - 1) < 1e-12 && fabs((s0->y + s1->y) / 2 - 2) < 1e-12 &&
              fabs((s0->z + s1->z) / 2 - 3) < 1e-12);
    /* children of the soma in file order: dendrite 2-3, axon 4-5, dendrite 6 */
    ck_assert_int_eq(b[1].parent, 0);
    ck_assert_int_eq(b[1].tag, CS_TAG_DEND);
    ck_assert_int_eq(b[1].npoints, 3);
    ck_assert_int_eq(b[2].parent, 0);
    ck_assert_int_eq(b[2].tag, CS_TAG_AXON);
    ck_assert_int_eq(b[3].parent, 0);
    ck_assert_int_eq(b[3].npoints, 2);
    /* a neurite starts at the soma sample with its own radius */
    const cs_point *d = &m.points[b[1].first];
    ck_assert(d[0].x == 1 && d[0].y == 2 && d[0].z == 3 && d[0].r == 1);
    ck_assert(d[1].z == 13 && d[2].z == 23 && d[2].r == 0.5);
    cs_cv_policy pol = {.cvs_per_branch = 1};
    cs_geometry g;
    ck_assert_int_eq(cs_discretize(&m, &pol, &g), CS_OK);
    ck_assert(fabs(g.area[1] - 4 * PI * 25) < 1e-9);
    ck_assert_int_eq(g.branch_proximal[1], 2); /* neurites attach at the soma's distal node */
    ck_assert_int_eq(g.branch_proximal[2], 2);
    ck_assert_int_eq(g.branch_proximal[3], 2);
    cs_geometry_free(&g);
    cs_morph_free(&m);

    /* the soma alone */
    ck_assert_int_eq(cs_morph_load_swc(tmp_swc("soma_only", "1 1 0 0 0 3 -1\n"), NULL, &m), CS_OK);
    ck_assert_int_eq(m.nbranch, 1);
    ck_assert(fabs(cs_branch_length(&m, 0) - 6) < 1e-12);
    cs_morph_free(&m);
}
END_TEST

START_TEST(test_three_point_soma) {
    const char *text =
        "1 1 0 0 0 4 -1\n"
        "2 1 0 -4 0 4 1\n"
        "3 1 0 4 0 4 1\n"
        "4 3 0 0 4 1 1\n"
        "5 3 0 0 14 1 4\n"
        "6 3 0 0 24 1 5\n"
        "7 3 3 0 24 1 5\n"
        "8 4 0 6 0 2 3\n"  /* apical on a side sample */
        "9 4 0 16 0 2 8\n";
    cs_morph m;
    cs_error_clear();
    ck_assert_int_eq(cs_morph_load_swc(tmp_swc("three", text), NULL, &m), CS_OK);
    /* soma, dendrite 4-5, its children 6 and 7, apical 8-9 */
    ck_assert_int_eq(m.nbranch, 5);
    ck_assert_int_eq(m.branches[0].tag, CS_TAG_SOMA);
    ck_assert_int_eq(m.branches[0].npoints, 2);
    ck_assert(fabs(cs_branch_length(&m, 0) - 8) < 1e-12);
    ck_assert(m.points[0].r == 4 && m.points[1].r == 4);
    int parents[5] = {-1, 0, 1, 1, 0}, tags[5] = {1, 3, 3, 3, 4}, np[5] = {2, 3, 2, 2, 3};
    for (int b = 0; b < 5; ++b) {
        ck_assert_int_eq(m.branches[b].parent, parents[b]);
        ck_assert_int_eq(m.branches[b].tag, tags[b]);
        ck_assert_int_eq(m.branches[b].npoints, np[b]);
    }
    /* the apical starts at side sample 3 with its own radius */
    const cs_point *a = &m.points[m.branches[4].first];
    ck_assert(a->x == 0 && a->y == 4 && a->z == 0 && a->r == 2);
    cs_morph_free(&m);

    /* a type-1 chain from the root is not a three-point soma: ordinary tag-1 branches */
    const char *chain = "1 1 0 0 0 4 -1\n2 1 0 0 4 4 1\n3 1 0 0 8 3 2\n4 3 0 0 18 1 3\n";
    ck_assert_int_eq(cs_morph_load_swc(tmp_swc("chain", chain), NULL, &m), CS_OK);
    ck_assert_int_eq(m.nbranch, 2);
    ck_assert_int_eq(m.branches[0].tag, CS_TAG_SOMA);
    ck_assert_int_eq(m.branches[0].npoints, 3);
    ck_assert_int_eq(m.branches[1].parent, 0);
    ck_assert_int_eq(m.branches[1].npoints, 2);
    ck_assert(m.points[m.branches[1].first].r == 1); /* neurite leaving a soma sample: own radius */
    cs_morph_free(&m);
}
END_TEST

/* The same cell written in order with LF, and shuffled with CRLF/mixed endings, comments,
 * tabs, `12.`-style numbers and forward references, loads to the identical morphology. */
START_TEST(test_order_and_format) {
    const char *ordered =
        "1 1 0 0 0 5 -1\n"
        "2 3 0 0 5 1 1\n"
        "3 3 0 0 15 1 2\n"
        "4 3 5 0 20 0.5 3\n"
        "5 3 -5 0 20 0.5 3\n"
        "6 3 -5 0 30 0.5 5\n"
        "7 2 0 0 -5 0.7 1\n"
        "8 2 0 0 -25 0.7 7\n";
    const char *shuffled =
        "# header comment\r\n"
        "\r\n"
        "   \t  \n"
        "  6\t3 -5. 0 30.  0.5 5   # trailing comment\r\n"
        "8 2 0. 0. -25. .7 7\n"
        "5 3 -5 0 20 0.5 3\r\n"
        "\t# indented comment\r\n"
        "4 3 5 0 20 0.5 3\r\n"
        "3 3 0 0 15 1 2\n"
        "7 2 0 0 -5 0.7 1   \r\n"
        "2 3 0 0 5 1 1\r\n"
        "1 1 0 0 0 5 -1"; /* no final newline */
    cs_morph a, b;
    cs_error_clear();
    ck_assert_int_eq(cs_morph_load_swc(tmp_swc("ordered", ordered), NULL, &a), CS_OK);
    ck_assert_int_eq(cs_morph_load_swc(tmp_swc("shuffled", shuffled), NULL, &b), CS_OK);
    ck_assert_msg(strlen(cs_error_message()) == 0, "%s", cs_error_message());
    /* ordered: soma; dendrite 2-3; its children 4 and 5-6; axon 7-8 */
    ck_assert_int_eq(a.nbranch, 5);
    ck_assert_int_eq(b.nbranch, 5);
    int tags_a[5] = {1, 3, 3, 3, 2}, par_a[5] = {-1, 0, 1, 1, 0};
    for (int i = 0; i < 5; ++i) {
        ck_assert_int_eq(a.branches[i].tag, tags_a[i]);
        ck_assert_int_eq(a.branches[i].parent, par_a[i]);
    }
    /* in the shuffled file 5 comes before 4 and 7 is before 2: children in file order */
    int tags_b[5] = {1, 2, 3, 3, 3}, par_b[5] = {-1, 0, 0, 2, 2};
    for (int i = 0; i < 5; ++i) {
        ck_assert_int_eq(b.branches[i].tag, tags_b[i]);
        ck_assert_int_eq(b.branches[i].parent, par_b[i]);
    }
    ck_assert(m_x_end(&b, 3) == -5.0); /* branch 3 is 5-6 (sample 5 before 4 in the file) */
    ck_assert(m_x_end(&b, 4) == 5.0);
    cs_morph_free(&b);
    /* the same shuffle with the children kept in the ordered file's relative order: identical */
    const char *shuffled2 =
        "8 2 0 0 -25 0.7 7\r\n"
        "6 3 -5 0 30 0.5 5\n"
        "2 3 0 0 5 1 1\r\n"
        "4 3 5 0 20 0.5 3\n"
        "3 3 0 0 15 1 2\r\n"
        "5 3 -5 0 20 0.5 3\n"
        "7 2 0 0 -5 0.7 1\r\n"
        "1 1 0 0 0 5 -1\r\n";
    ck_assert_int_eq(cs_morph_load_swc(tmp_swc("shuffled2", shuffled2), NULL, &b), CS_OK);
    ck_assert(same_morph(&a, &b));
    cs_morph_free(&a);
    cs_morph_free(&b);
}
END_TEST

/* Malformed small files: each error names the file and the line. */
typedef struct {
    const char *name, *text;
    cs_status status;
    int line;
    const char *words;
} bad_case;

static const bad_case bad_cases[] = {
    {"six_fields", "1 1 0 0 0 1 -1\n2 3 0 0 1 1\n", CS_ERR_PARSE, 2, "found 6"},
    {"eight_fields", "1 1 0 0 0 1 -1\n\n2 3 0 0 1 1 1 7\n", CS_ERR_PARSE, 3, "found 8"},
    {"letters", "1 1 0 0 0 1 -1\n2 3 0 zero 1 1 1\n", CS_ERR_PARSE, 2, "(y) 'zero' is not a number"},
    {"nan", "1 1 0 0 0 1 -1\n2 3 0 0 nan 1 1\n", CS_ERR_PARSE, 2, "non-finite"},
    {"inf", "1 1 0 0 0 1 -1\r\n2 3 0 0 1 inf 1\r\n", CS_ERR_PARSE, 2, "non-finite"},
    {"radius0", "1 1 0 0 0 1 -1\n2 3 0 0 1 0 1\n", CS_ERR_PARSE, 2, "radius 0"},
    {"radius_neg", "# c\n1 1 0 0 0 1 -1\n2 3 0 0 1 -0.5 1\n", CS_ERR_PARSE, 3, "radius -0.5"},
    {"float_id", "1 1 0 0 0 1 -1\n2.5 3 0 0 1 1 1\n", CS_ERR_PARSE, 2, "integer"},
    {"self_parent", "1 1 0 0 0 1 -1\n2 3 0 0 1 1 2\n", CS_ERR_PARSE, 2, "its own parent"},
    {"cycle", "1 1 0 0 0 1 -1\n2 3 0 0 1 1 3\n3 3 0 0 2 1 2\n4 3 0 0 3 1 3\n", CS_ERR_PARSE, 2, "cycle"},
    {"no_root", "1 1 0 0 0 1 2\n2 3 0 0 1 1 1\n", CS_ERR_PARSE, 1, "no root"},
    {"two_roots", "1 1 0 0 0 1 -1\n2 3 0 0 1 1 1\n3 1 5 5 5 1 -1\n", CS_ERR_PARSE, 3, "multiple roots/somas"},
    {"missing_parent", "1 1 0 0 0 1 -1\n2 3 0 0 1 1 1\n3 3 0 0 1 1 9\n", CS_ERR_PARSE, 3, "parent 9"},
    {"duplicate", "1 1 0 0 0 1 -1\n2 3 0 0 1 1 1\n2 3 0 0 2 1 1\n", CS_ERR_PARSE, 3, "duplicate sample id 2"},
    {"zero_length", "1 1 0 0 0 1 -1\n2 3 0 0 0 1 1\n", CS_ERR_PARSE, 2, "zero length"},
    {"zero_length2", "1 3 0 0 0 1 -1\n2 3 1 0 0 1 1\n3 3 1 0 0 1 2\n4 3 1 0 0 1 2\n", CS_ERR_PARSE, 3, "zero length"},
    {"empty", "", CS_ERR_PARSE, 1, "empty"},
    {"only_comments", "# nothing\n\n  # here\n", CS_ERR_PARSE, 3, "empty"},
    {"lonely_root", "1 3 0 0 0 1 -1\n", CS_ERR_PARSE, 1, "no branches"},
};

START_TEST(test_bad_small_file) {
    const bad_case *c = &bad_cases[_i];
    const char *path = tmp_swc(c->name, c->text);
    char where[512];
    snprintf(where, sizeof where, "test_swc_%s.swc:%d: ", c->name, c->line);
    cs_morph m;
    cs_error_clear();
    ck_assert_int_eq(cs_morph_load_swc(path, NULL, &m), c->status);
    const char *msg = cs_error_message();
    ck_assert_msg(strstr(msg, where) != NULL, "%s: message '%s' lacks '%s'", c->name, msg, where);
    ck_assert_msg(strstr(msg, c->words) != NULL, "%s: message '%s' lacks '%s'", c->name, msg, c->words);
    ck_assert_ptr_null(m.branches);
    ck_assert_ptr_null(m.points);
    cs_error_clear();
}
END_TEST

START_TEST(test_options_and_io) {
    cs_morph m;
    cs_error_clear();
    ck_assert_int_eq(cs_morph_load_swc(MORPH_DIR "no_such_file.swc", NULL, &m), CS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(cs_error_message(), "no_such_file.swc"));
    cs_error_clear();
    const char *path = tmp_swc("opts", "1 1 0 0 0 2000 -1\n2 3 0 0 10000 0 1\n3 3 0 0 20000 500 2\n");
    ck_assert_int_eq(cs_morph_load_swc(path, NULL, &m), CS_ERR_PARSE); /* zero radius */
    cs_error_clear();
    cs_swc_options o = {0.001, 0.1, 0};
    ck_assert_int_eq(cs_morph_load_swc(path, &o, &m), CS_OK);
    ck_assert_int_eq(m.nbranch, 2);
    ck_assert(fabs(m.points[0].r - 2.0) < 1e-12); /* soma radius 2000 nm */
    ck_assert(fabs(cs_branch_length(&m, 0) - 4.0) < 1e-12);
    const cs_point *d = &m.points[m.branches[1].first];
    ck_assert(d[1].r == 0.1);                      /* raised to min_radius */
    ck_assert(fabs(d[2].r - 0.5) < 1e-12);
    ck_assert(fabs(d[2].z - 20.0) < 1e-12);
    cs_morph_free(&m);
    cs_swc_options bad[3] = {{-1, 0, 0}, {NAN, 0, 0}, {1, -0.5, 0}};
    for (int i = 0; i < 3; ++i) {
        cs_error_clear();
        ck_assert_int_eq(cs_morph_load_swc(path, &bad[i], &m), CS_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(cs_error_message(), i < 2 ? "scale" : "min_radius"));
    }
    cs_error_clear();
}
END_TEST

/* ---- inputs that once crashed fuzz/fuzz_swc.c (fuzz/regressions/swc/), replayed here so that
 * the normal suite (no clang needed) keeps them fixed ---------------------------------------- */
#define SWC_REGRESSIONS CS_SOURCE_DIR "/fuzz/regressions/swc/"

/* A coordinate of 1e47 made a zero-length soma branch (the µm differences were lost to rounding)
 * that the reader passed on and cs_morph_check refused: now the reader refuses it, naming the
 * file, the line and the field. */
START_TEST(test_regression_huge_coordinate) {
    cs_morph m;
    cs_error_clear();
    ck_assert_int_eq(cs_morph_load_swc(SWC_REGRESSIONS "huge_coordinate.swc", NULL, &m), CS_ERR_PARSE);
    const char *msg = cs_error_message();
    ck_assert_msg(strstr(msg, "huge_coordinate.swc:2: ") != NULL, "message '%s' lacks the file:line", msg);
    ck_assert_msg(strstr(msg, "y = 1e+47") != NULL && strstr(msg, "out of range") != NULL,
                  "message '%s' does not name the field and its value", msg);
    ck_assert_ptr_null(m.branches);
    ck_assert_ptr_null(m.points);
    cs_error_clear();
}
END_TEST

/* Every regression file, with the harness's own check: a morphology that passes cs_morph_check,
 * or an error of one line naming the file. */
START_TEST(test_regressions_all) {
    DIR *d = opendir(SWC_REGRESSIONS);
    ck_assert_msg(d != NULL, "cannot open %s", SWC_REGRESSIONS);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s%s", SWC_REGRESSIONS, e->d_name);
        cs_morph m;
        cs_error_clear();
        cs_status s = cs_morph_load_swc(path, NULL, &m);
        if (s == CS_OK) {
            ck_assert_msg(cs_morph_check(&m) == CS_OK, "%s: accepted but invalid: %s", e->d_name,
                          cs_error_message());
            cs_morph_free(&m);
        } else {
            const char *msg = cs_error_message();
            ck_assert_msg(strchr(msg, '\n') == NULL, "%s: message of several lines: '%s'", e->d_name, msg);
            ck_assert_msg(strstr(msg, e->d_name) != NULL, "%s: message '%s' does not name the file", e->d_name,
                          msg);
        }
        cs_error_clear();
        ++n;
    }
    closedir(d);
    ck_assert_int_ge(n, 1);
}
END_TEST

static Suite *swc_suite(void) {
    Suite *s = suite_create("swc");
    TCase *tc = tcase_create("files");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_real_file, 0, (int)(sizeof real_files / sizeof *real_files));
    tcase_add_test(tc, test_flywire_default_fails);
    tcase_add_loop_test(tc, test_invalid_file, 0, (int)(sizeof invalid_files / sizeof *invalid_files));
    suite_add_tcase(s, tc);
    TCase *tc2 = tcase_create("small");
    tcase_add_test(tc2, test_single_point_soma);
    tcase_add_test(tc2, test_three_point_soma);
    tcase_add_test(tc2, test_order_and_format);
    tcase_add_loop_test(tc2, test_bad_small_file, 0, (int)(sizeof bad_cases / sizeof *bad_cases));
    tcase_add_test(tc2, test_options_and_io);
    tcase_add_test(tc2, test_regression_huge_coordinate);
    tcase_add_test(tc2, test_regressions_all);
    suite_add_tcase(s, tc2);
    return s;
}

int main(void) {
    Suite *s = swc_suite();
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int nf = srunner_ntests_failed(r);
    srunner_free(r);
    return nf ? 1 : 0;
}
