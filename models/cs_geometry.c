/* Discretisation into NEURON's node layout (see cs_geometry.h).
 *
 * Branch b with n CVs is cut into n pieces of equal length L/n along its polyline. Node layout:
 *   node 0                     zero-area root node at the proximal end of the root branches
 *   branch_first[b] + k        centre of piece k (k = 0 .. n-1), area = lateral area of the piece
 *   branch_first[b] + n        zero-area distal node, where b's children attach
 * Radii vary linearly along each frustum of the polyline, so a piece that cuts a frustum uses the
 * interpolated radius at the cut.
 *
 * Lateral area of a frustum of length ℓ, radii r1, r2:  π (r1 + r2) sqrt(ℓ² + (r1 − r2)²)  [µm²].
 * Axial resistance of a frustum (exact integral of Ra/(π r(x)²)):  Ra ℓ / (π r1 r2) · 1e4  [Ω]
 * (ℓ/(r1 r2) in 1/µm = 1e4/cm). With Ra = 1 Ω·cm, g = 1/R [S] = 1e6/R [µS] = 1e2 π r1 r2 / ℓ [µS].
 * Resistances add along the path between a node and its parent:
 *   first centre ↔ proximal node: [0, L/(2n)];  centre k ↔ centre k-1: [(k−½)L/n, (k+½)L/n];
 *   distal node ↔ last centre: [L − L/(2n), L]. */
#include "cs_geometry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CS__PI 3.14159265358979323846

/* Largest node count we agree to build (guards against a tiny max_cv_length). */
#define CS_GEOMETRY_MAX_NODES 100000000

/* Cumulative arc length of a branch's points [µm]: cum[0] = 0, cum[i] = length up to point i. */
static void arc_lengths(const cs_point *pt, int np, double *cum) {
    cum[0] = 0.0;
    for (int i = 1; i < np; ++i) {
        double dx = pt[i].x - pt[i - 1].x, dy = pt[i].y - pt[i - 1].y, dz = pt[i].z - pt[i - 1].z;
        cum[i] = cum[i - 1] + sqrt(dx * dx + dy * dy + dz * dz);
    }
}

/* Lateral area [µm²] and axial resistance per unit Ra [Ω / (Ω·cm)] of the polyline between arc
 * positions a <= b [µm]. Zero-length frustums add their annulus area and no resistance. */
static void integrate(const cs_point *pt, const double *cum, int np, double a, double b, double *area,
                      double *resist) {
    double A = 0.0, R = 0.0;
    /* first frustum j (points j, j+1) with cum[j+1] >= a: binary search */
    int lo = 0, hi = np - 2;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cum[mid + 1] < a) lo = mid + 1;
        else hi = mid;
    }
    for (int j = lo; j < np - 1 && cum[j] <= b; ++j) {
        double s0 = cum[j], s1 = cum[j + 1], len = s1 - s0;
        double r0 = pt[j].r, r1 = pt[j + 1].r;
        if (len <= 0.0) {
            /* a zero-length step: count its annulus once, in the piece that contains it */
            if (s0 >= a && (s0 < b || b >= cum[np - 1])) A += CS__PI * (r0 + r1) * fabs(r0 - r1);
            continue;
        }
        double c0 = s0 > a ? s0 : a, c1 = s1 < b ? s1 : b;
        if (c1 <= c0) continue;
        double ra = r0 + (r1 - r0) * ((c0 - s0) / len);
        double rb = r0 + (r1 - r0) * ((c1 - s0) / len);
        double l = c1 - c0, dr = ra - rb;
        A += CS__PI * (ra + rb) * sqrt(l * l + dr * dr);
        R += l / (CS__PI * ra * rb) * 1e4;
    }
    *area = A;
    *resist = R;
}

/* NEURON's node at pos of branch b (its nodes placed already): pos 0 the proximal node, pos 1
 * the distal node, any other pos the centre node of the CV that contains it (floor(pos·n),
 * capped at n-1: NEURON's node_index). A child attached there shares that node, as NEURON's
 * child.connect(parent(pos)) does. */
static int node_at(const cs_geometry *g, int b, double pos) {
    const int n = g->branch_ncv[b];
    if (pos == 0.0) return g->branch_proximal[b];
    if (pos == 1.0) return g->branch_first[b] + n;
    int k = (int)(pos * n);
    if (k >= n) k = n - 1;
    return g->branch_first[b] + k;
}

void cs_geometry_free(cs_geometry *g) {
    if (!g) return;
    free(g->parent);
    free(g->area);
    free(g->g_axial);
    free(g->tag);
    free(g->branch_first);
    free(g->branch_ncv);
    free(g->branch_proximal);
    memset(g, 0, sizeof *g);
}

cs_status cs_discretize(const cs_morph *m, const cs_cv_policy *policy, cs_geometry *out) {
    CS_CHECK(out != NULL, CS_ERR_INVALID, "discretization: NULL output");
    memset(out, 0, sizeof *out);
    CS_CHECK(policy != NULL, CS_ERR_INVALID, "discretization: NULL policy");
    CS_CHECK(policy->cvs_per_branch >= 0, CS_ERR_INVALID, "discretization: cvs_per_branch must be >= 0 (got %d)",
             policy->cvs_per_branch);
    CS_CHECK(policy->cvs_per_branch > 0 || (isfinite(policy->max_cv_length) && policy->max_cv_length > 0),
             CS_ERR_INVALID,
             "discretization: max_cv_length must be finite and > 0 (got %g) unless cvs_per_branch > 0",
             policy->max_cv_length);
    CS_TRY(cs_morph_check(m));

    const int nb = m->nbranch;
    int *ncv = malloc((size_t)nb * sizeof *ncv);
    if (!ncv) return cs_error_set(CS_ERR_NOMEM, "discretization: out of memory");
    long long total = 1; /* root node */
    for (int b = 0; b < nb; ++b) {
        const cs_branch *br = &m->branches[b];
        long long n;
        if (br->ncv_hint > 0) n = br->ncv_hint;
        else if (policy->cvs_per_branch > 0) n = policy->cvs_per_branch;
        else {
            double L = cs_branch_length(m, b); /* [µm] */
            double c = policy->bmtk_odd ? 1.0 + 2.0 * floor(L / (2.0 * policy->max_cv_length))
                                        : ceil(L / policy->max_cv_length);
            n = c > (double)CS_GEOMETRY_MAX_NODES ? CS_GEOMETRY_MAX_NODES + 1LL : (long long)c;
        }
        if (n < 1) n = 1;
        total += n + 1;
        if (total > CS_GEOMETRY_MAX_NODES) {
            free(ncv);
            return cs_error_set(CS_ERR_INVALID,
                                "discretization: more than %d nodes (branch %d would get %lld CVs); "
                                "increase max_cv_length",
                                CS_GEOMETRY_MAX_NODES, b, n);
        }
        ncv[b] = (int)n;
    }

    const int N = (int)total;
    out->ncv = N;
    out->nbranch = nb;
    out->parent = malloc((size_t)N * sizeof *out->parent);
    out->area = calloc((size_t)N, sizeof *out->area);
    out->g_axial = calloc((size_t)N, sizeof *out->g_axial);
    out->tag = malloc((size_t)N * sizeof *out->tag);
    out->branch_first = malloc((size_t)nb * sizeof *out->branch_first);
    out->branch_ncv = ncv;
    out->branch_proximal = malloc((size_t)nb * sizeof *out->branch_proximal);
    int maxnp = 2;
    for (int b = 0; b < nb; ++b)
        if (m->branches[b].npoints > maxnp) maxnp = m->branches[b].npoints;
    double *cum = malloc((size_t)maxnp * sizeof *cum);
    if (!out->parent || !out->area || !out->g_axial || !out->tag || !out->branch_first || !out->branch_proximal ||
        !cum) {
        free(cum);
        cs_geometry_free(out);
        return cs_error_set(CS_ERR_NOMEM, "discretization: out of memory");
    }

    out->parent[0] = -1;
    out->area[0] = 0.0;
    out->g_axial[0] = 0.0;
    out->tag[0] = m->branches[0].tag;
    int next = 1;
    for (int b = 0; b < nb; ++b) {
        const cs_branch *br = &m->branches[b];
        const cs_point *pt = &m->points[br->first];
        const int np = br->npoints, n = ncv[b];
        arc_lengths(pt, np, cum);
        const double L = cum[np - 1]; /* [µm] */
        const int prox = br->parent < 0 ? 0 : node_at(out, br->parent, br->parent_pos);
        out->branch_first[b] = next;
        out->branch_proximal[b] = prox;
        double A, R0, R1;
        for (int k = 0; k < n; ++k) {
            const int i = next + k;
            const double a = L * k / n, c = L * (k + 0.5) / n, e = (k + 1 == n) ? L : L * (k + 1) / n; /* [µm] */
            integrate(pt, cum, np, a, e, &out->area[i], &R0);
            /* path to the parent: [a, c] from this piece plus the second half of the previous piece */
            integrate(pt, cum, np, a, c, &A, &R0);
            double R = R0;
            if (k > 0) {
                integrate(pt, cum, np, L * (k - 0.5) / n, a, &A, &R1);
                R += R1;
            }
            out->parent[i] = k == 0 ? prox : i - 1;
            out->g_axial[i] = 1e6 / R; /* [µS] for Ra = 1 Ω·cm */
            out->tag[i] = br->tag;
        }
        const int d = next + n; /* distal node */
        integrate(pt, cum, np, L * (n - 0.5) / n, L, &A, &R0);
        out->parent[d] = d - 1;
        out->area[d] = 0.0;
        out->g_axial[d] = 1e6 / R0;
        out->tag[d] = br->tag;
        next = d + 1;
    }
    free(cum);
    for (int i = 1; i < N; ++i) {
        if (!(isfinite(out->g_axial[i]) && out->g_axial[i] > 0 && isfinite(out->area[i]))) {
            int b = 0;
            while (b + 1 < nb && out->branch_first[b + 1] <= i) ++b;
            cs_geometry_free(out);
            return cs_error_set(CS_ERR_NUMERIC,
                                "discretization: node %d of branch %d has a non-finite or zero conductance", i, b);
        }
    }
    return CS_OK;
}

int cs_geometry_locate(const cs_geometry *g, int branch, double pos) {
    if (!g || branch < 0 || branch >= g->nbranch) return -1;
    if (!(pos >= 0.0 && pos <= 1.0)) return -1; /* also rejects NaN */
    return node_at(g, branch, pos);
}
