/* Morphology generators: soma, cable, ball-and-stick, and Arbor's busyring random tree.
 * Geometry: everything lies along the x axis, starting at the origin (the soma's proximal end). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cs_morph.h"
#include "cs_rng.h"

#define CHECK_POSITIVE(who, name, v)                                                                    \
    CS_CHECK(isfinite(v) && (v) > 0, CS_ERR_INVALID, "%s: %s must be finite and > 0 (got %g)", who, name, \
             (double)(v))

static cs_status alloc_morph(cs_morph *out, int nbranch, int npoints) {
    out->branches = calloc((size_t)nbranch, sizeof *out->branches);
    out->points = calloc((size_t)npoints, sizeof *out->points);
    if (!out->branches || !out->points) {
        cs_morph_free(out);
        return cs_error_set(CS_ERR_NOMEM, "morphology generator: out of memory");
    }
    out->nbranch = nbranch;
    out->npoints = npoints;
    return CS_OK;
}

/* A straight two-point branch along x from x0 to x0 + length [µm]. */
static void set_straight(cs_morph *m, int b, int parent, int tag, double x0, double length, double radius,
                         int ncv) {
    int first = 2 * b;
    m->points[first] = (cs_point){x0, 0, 0, radius};
    m->points[first + 1] = (cs_point){x0 + length, 0, 0, radius};
    m->branches[b] = (cs_branch){parent, tag, first, 2, ncv, 1.0};
}

cs_status cs_morph_soma(double radius, cs_morph *out) {
    CS_CHECK(out != NULL, CS_ERR_INVALID, "soma: NULL output");
    memset(out, 0, sizeof *out);
    CHECK_POSITIVE("soma", "radius", radius);
    CS_TRY(alloc_morph(out, 1, 2));
    set_straight(out, 0, -1, CS_TAG_SOMA, 0.0, 2 * radius, radius, 1); /* area 2πr·2r = 4πr² [µm²] */
    return CS_OK;
}

cs_status cs_morph_cable(double length, double radius, int ncv, cs_morph *out) {
    CS_CHECK(out != NULL, CS_ERR_INVALID, "cable: NULL output");
    memset(out, 0, sizeof *out);
    CHECK_POSITIVE("cable", "length", length);
    CHECK_POSITIVE("cable", "radius", radius);
    CS_CHECK(ncv >= 0, CS_ERR_INVALID, "cable: ncv must be >= 0 (got %d; 0 uses the CV policy)", ncv);
    CS_TRY(alloc_morph(out, 1, 2));
    set_straight(out, 0, -1, CS_TAG_DEND, 0.0, length, radius, ncv);
    return CS_OK;
}

cs_status cs_morph_ball_and_stick(double soma_radius, double dend_length, double dend_radius, int dend_ncv,
                                  cs_morph *out) {
    CS_CHECK(out != NULL, CS_ERR_INVALID, "ball_and_stick: NULL output");
    memset(out, 0, sizeof *out);
    CHECK_POSITIVE("ball_and_stick", "soma_radius", soma_radius);
    CHECK_POSITIVE("ball_and_stick", "dend_length", dend_length);
    CHECK_POSITIVE("ball_and_stick", "dend_radius", dend_radius);
    CS_CHECK(dend_ncv >= 0, CS_ERR_INVALID, "ball_and_stick: dend_ncv must be >= 0 (got %d; 0 uses the CV policy)",
             dend_ncv);
    CS_TRY(alloc_morph(out, 2, 4));
    set_straight(out, 0, -1, CS_TAG_SOMA, 0.0, 2 * soma_radius, soma_radius, 1);
    set_straight(out, 1, 0, CS_TAG_DEND, 2 * soma_radius, dend_length, dend_radius, dend_ncv);
    return CS_OK;
}

/* Linear interpolation over the levels, as Arbor's busyring `interp` with the n = 1 case made
 * safe: level k of depth levels takes v0 + (v1 - v0)·k/max(1, depth-1). */
static double interp(double v0, double v1, int k, int depth) {
    int d = depth > 1 ? depth - 1 : 1;
    return v0 + (v1 - v0) * (double)k / (double)d;
}

/* Largest tree we agree to grow (each level at most doubles the number of branches). */
#define CS_RANDOM_TREE_MAX_BRANCHES (1 << 22)

/* Arbor's busyring generate_morphology (example/busyring/ring.cpp), with our RNG:
 *   levels[0] = {soma}
 *   for level k in [0, depth): p, length, ncv interpolated at k;
 *     for every branch of levels[k], twice: with probability p (one uniform draw each),
 *       attach a new dendrite branch of that length at the branch's distal end;
 *     stop when a level adds no branch.
 * So level 0 gives the soma up to two dendrites (two when branch_prob[0] = 1), and each later
 * tip up to two children. A tip that draws a single child keeps it as a separate branch (in
 * Arbor it would continue the parent's branch; here a branch keeps its own CV count). The
 * dendrites lie along x, continuing from the soma (Arbor lays them along z). Branches are then
 * numbered depth-first (parents first, children in creation order); every dendrite has
 * ncv_hint = round(ncv interpolated) and the soma ncv_hint = 1. */
cs_status cs_morph_random_tree(const cs_random_tree_params *p, uint64_t seed, cs_morph *out) {
    CS_CHECK(out != NULL, CS_ERR_INVALID, "random_tree: NULL output");
    memset(out, 0, sizeof *out);
    CS_CHECK(p != NULL, CS_ERR_INVALID, "random_tree: NULL parameters");
    CHECK_POSITIVE("random_tree", "soma_radius", p->soma_radius);
    CHECK_POSITIVE("random_tree", "dend_radius", p->dend_radius);
    CHECK_POSITIVE("random_tree", "length[0]", p->length[0]);
    CHECK_POSITIVE("random_tree", "length[1]", p->length[1]);
    CS_CHECK(p->depth >= 1 && p->depth <= 64, CS_ERR_INVALID, "random_tree: depth must be in [1, 64] (got %d)",
             p->depth);
    for (int i = 0; i < 2; ++i) {
        CS_CHECK(isfinite(p->branch_prob[i]) && p->branch_prob[i] >= 0 && p->branch_prob[i] <= 1, CS_ERR_INVALID,
                 "random_tree: branch_prob[%d] must be in [0, 1] (got %g)", i, p->branch_prob[i]);
        CS_CHECK(p->ncv[i] >= 0, CS_ERR_INVALID, "random_tree: ncv[%d] must be >= 0 (got %d; 0 uses the CV policy)",
                 i, p->ncv[i]);
    }

    cs_rng rng;
    cs_rng_seed(&rng, seed);

    /* grow the branch list: parent, level */
    int cap = 64, nb = 1;
    int *parent = malloc((size_t)cap * sizeof *parent);
    int *level = malloc((size_t)cap * sizeof *level);
    if (!parent || !level) {
        free(parent);
        free(level);
        return cs_error_set(CS_ERR_NOMEM, "random_tree: out of memory");
    }
    parent[0] = -1;
    level[0] = -1; /* soma */
    int lvl_begin = 0, lvl_end = 1; /* branches of the current level: [lvl_begin, lvl_end) */
    for (int k = 0; k < p->depth; ++k) {
        double bp = interp(p->branch_prob[0], p->branch_prob[1], k, p->depth);
        for (int b = lvl_begin; b < lvl_end; ++b) {
            for (int j = 0; j < 2; ++j) {
                if (!(cs_rng_uniform(&rng) < bp)) continue;
                if (nb >= CS_RANDOM_TREE_MAX_BRANCHES) {
                    free(parent);
                    free(level);
                    return cs_error_set(CS_ERR_INVALID, "random_tree: more than %d branches (depth %d too large)",
                                        CS_RANDOM_TREE_MAX_BRANCHES, p->depth);
                }
                if (nb == cap) {
                    cap *= 2;
                    int *np = realloc(parent, (size_t)cap * sizeof *np);
                    if (np) parent = np;
                    int *nl = np ? realloc(level, (size_t)cap * sizeof *nl) : NULL;
                    if (nl) level = nl;
                    if (!np || !nl) {
                        free(parent);
                        free(level);
                        return cs_error_set(CS_ERR_NOMEM, "random_tree: out of memory");
                    }
                }
                parent[nb] = b;
                level[nb] = k;
                ++nb;
            }
        }
        if (nb == lvl_end) break; /* no new branch at this level */
        lvl_begin = lvl_end;
        lvl_end = nb;
    }

    /* renumber depth-first (parents first, children in creation order), as for SWC files */
    int *order = malloc((size_t)nb * sizeof *order);   /* order[new] = old */
    int *newid = malloc((size_t)nb * sizeof *newid);   /* newid[old] = new */
    int *coff = calloc((size_t)nb + 1, sizeof *coff);
    int *ch = malloc((size_t)nb * sizeof *ch);
    cs_status rc = (order && newid && coff && ch) ? CS_OK : cs_error_set(CS_ERR_NOMEM, "random_tree: out of memory");
    if (rc == CS_OK) {
        for (int b = 1; b < nb; ++b) coff[parent[b] + 1]++;
        for (int b = 0; b < nb; ++b) coff[b + 1] += coff[b];
        memcpy(newid, coff, (size_t)nb * sizeof *newid); /* fill pointers */
        for (int b = 1; b < nb; ++b) ch[newid[parent[b]]++] = b;
        int *stack = newid, sp = 0, n = 0; /* newid is written only after the DFS */
        stack[sp++] = 0;
        while (sp > 0) {
            int b = stack[--sp];
            order[n++] = b;
            for (int k = coff[b + 1] - 1; k >= coff[b]; --k) stack[sp++] = ch[k];
        }
        for (int i = 0; i < nb; ++i) newid[order[i]] = i;
        rc = alloc_morph(out, nb, 2 * nb);
    }
    if (rc == CS_OK) {
        set_straight(out, 0, -1, CS_TAG_SOMA, 0.0, 2 * p->soma_radius, p->soma_radius, 1);
        for (int i = 1; i < nb; ++i) {
            int b = order[i], k = level[b], pi = newid[parent[b]];
            double len = interp(p->length[0], p->length[1], k, p->depth); /* [µm], > 0: between two positives */
            int ncv = (int)lround(interp(p->ncv[0], p->ncv[1], k, p->depth));
            const cs_point *pd = &out->points[out->branches[pi].first + 1]; /* parent's distal end */
            set_straight(out, i, pi, CS_TAG_DEND, pd->x, len, p->dend_radius, ncv);
        }
    }
    free(order);
    free(newid);
    free(coff);
    free(ch);
    if (rc != CS_OK) {
        free(parent);
        free(level);
        return rc;
    }
    free(parent);
    free(level);
    return CS_OK;
}
