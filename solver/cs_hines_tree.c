/* Tree utilities shared by the Hines planners: re-rooting at the centre of the longest path
 * (cs_hines_tree.h), the planners' messages, a batch's distinct structures, and the random-tree
 * generator of seed 000's Table 4.1 (cs_hines_gpu.h). Set-up time only; nothing here runs per solve. */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_hines_gpu.h"
#include "cs_hines_keymap.h"
#include "cs_hines_tree.h"

/* ---- Table 4.1 of seed 000 and the random-tree generator --------------------------------- */
const cs_hines_morph_class cs_hines_table41[6] = {
    {"small-low", 76, 7},   {"small-high", 76, 29}, {"medium-low", 305, 30},
    {"medium-high", 319, 157}, {"big-low", 695, 66}, {"big-high", 691, 341},
};

static uint64_t cs__splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double cs__unif(uint64_t *s) { return (double)(cs__splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }

int cs_hines_random_tree(int n, int nbranch, uint64_t seed, int *p)
{
    if (n < 1 || nbranch < 1 || nbranch > n || nbranch == 2 || !p) return -1;
    int *bpar = malloc(sizeof(int) * nbranch), *leaf = malloc(sizeof(int) * nbranch);
    int *len = malloc(sizeof(int) * nbranch), *stack = malloc(sizeof(int) * nbranch);
    int *kid_first = malloc(sizeof(int) * (nbranch + 1)), *kids = malloc(sizeof(int) * nbranch);
    double *w = malloc(sizeof(double) * nbranch);
    int rc = -1;
    if (!bpar || !leaf || !len || !stack || !kid_first || !kids || !w) goto done;
    uint64_t s = seed ^ 0x5DEECE66Dull;
    int nb = 1, nleaf = 1;
    bpar[0] = -1;
    leaf[0] = 0;
    if (nbranch % 2 == 0) { /* a trifurcation at the root branch's end, then binary splits */
        for (int k = 0; k < 3; ++k) { bpar[nb] = 0; leaf[k] = nb++; }
        nleaf = 3;
    }
    while (nb < nbranch) { /* split a random leaf in two (a Yule tree) */
        int li = (int)(cs__unif(&s) * nleaf);
        int b = leaf[li];
        bpar[nb] = b; leaf[li] = nb++;
        bpar[nb] = b; leaf[nleaf++] = nb++;
    }
    /* lengths: one row each, the rest drawn with exponential weights per branch */
    double wsum = 0;
    for (int b = 0; b < nbranch; ++b) { len[b] = 1; w[b] = -log(1.0 - cs__unif(&s)) + 1e-3; wsum += w[b]; }
    for (int b = 1; b < nbranch; ++b) w[b] += w[b - 1];
    for (int r = nbranch; r < n; ++r) {
        double x = cs__unif(&s) * wsum;
        int lo = 0, hi = nbranch - 1;
        while (lo < hi) { int mid = (lo + hi) / 2; if (w[mid] < x) lo = mid + 1; else hi = mid; }
        len[lo]++;
    }
    /* children lists, then number rows depth-first (children in random order) */
    memset(kid_first, 0, sizeof(int) * (nbranch + 1));
    for (int b = 1; b < nbranch; ++b) kid_first[bpar[b] + 1]++;
    for (int b = 0; b < nbranch; ++b) kid_first[b + 1] += kid_first[b];
    for (int b = 0; b < nbranch; ++b) leaf[b] = kid_first[b]; /* reuse as fill cursor */
    for (int b = 1; b < nbranch; ++b) kids[leaf[bpar[b]]++] = b;
    int sp = 0, row = 0;
    stack[sp++] = 0;
    int *distal = bpar; /* after numbering a branch its parent is no longer needed: reuse */
    int *pdist = w ? (int *)malloc(sizeof(int) * nbranch) : NULL;
    if (!pdist) goto done;
    pdist[0] = -1;
    while (sp) {
        int b = stack[--sp];
        p[row] = pdist[b];
        for (int j = 1; j < len[b]; ++j) p[row + j] = row + j - 1;
        row += len[b];
        distal[b] = row - 1;
        int k0 = kid_first[b], k1 = kid_first[b + 1];
        for (int k = k1 - 1; k > k0; --k) { /* shuffle the children */
            int j = k0 + (int)(cs__unif(&s) * (k - k0 + 1));
            int t = kids[k]; kids[k] = kids[j]; kids[j] = t;
        }
        for (int k = k0; k < k1; ++k) { pdist[kids[k]] = distal[b]; stack[sp++] = kids[k]; }
    }
    free(pdist);
    rc = (row == n) ? 0 : -1;
done:
    free(bpar); free(leaf); free(len); free(stack); free(kid_first); free(kids); free(w);
    return rc;
}

int cs_hines_count_branches(int n, const int *p)
{
    int *nk = calloc((size_t)n, sizeof(int));
    if (!nk) return -1;
    for (int i = 0; i < n; ++i) if (p[i] >= 0) nk[p[i]]++;
    int nb = 0;
    for (int i = 0; i < n; ++i) if (p[i] < 0 || nk[p[i]] != 1) nb++;
    free(nk);
    return nb;
}

/* farthest node from s (BFS in rows), with the BFS parents in par */
static int cs__farthest(int n, const int *adj_first, const int *adj, int s, int *dist, int *par, int *queue)
{
    for (int i = 0; i < n; ++i) dist[i] = -1;
    int h = 0, t = 0, last = s;
    dist[s] = 0; par[s] = -1; queue[t++] = s;
    while (h < t) {
        int v = queue[h++];
        last = v;
        for (int k = adj_first[v]; k < adj_first[v + 1]; ++k) {
            int u = adj[k];
            if (dist[u] < 0) { dist[u] = dist[v] + 1; par[u] = v; queue[t++] = u; }
        }
    }
    return last;
}

/* cs__farthest from row 0, from the parents alone (no search; session 21): the search visits a
 * row's children in ascending order (the adjacency lists' order: parent, then children), level by
 * level, so the last row it reaches is found by descending from row 0 through the last child
 * (the highest row) that still has a row of the greatest depth below it. depth, down: n ints. */
static int cs__farthest_from_0(int n, const int *lp, int *depth, int *down)
{
    int D = 0;
    depth[0] = 0;
    for (int i = 1; i < n; ++i) {
        depth[i] = depth[lp[i]] + 1;
        D = depth[i] > D ? depth[i] : D;
    }
    for (int i = 0; i < n; ++i) down[i] = depth[i]; /* the greatest depth below each row */
    for (int i = n - 1; i > 0; --i) down[lp[i]] = down[i] > down[lp[i]] ? down[i] : down[lp[i]];
    int *last = depth; /* reused: each row's highest child with a row of depth D below it */
    for (int i = 0; i < n; ++i) last[i] = -1;
    for (int i = 1; i < n; ++i)
        if (down[i] == D) last[lp[i]] = i;
    int v = 0;
    while (last[v] >= 0) v = last[v];
    return v;
}

/* The centre of the tree's longest path (the root that makes the tree lowest); dist, par, queue:
 * n ints of work each */
int cs__tree_centre(int n, const int *lp, const int *adj_first, const int *adj, int *dist, int *par, int *queue)
{
    const int a = cs__farthest_from_0(n, lp, dist, par);
    int c = cs__farthest(n, adj_first, adj, a, dist, par, queue);
    for (int k = 0, half = dist[c] / 2; k < half; ++k) c = par[c];
    return c;
}

void cs__tree_adjacency_into(int n, const int *lp, int *adj_first, int *adj, int *cur)
{
    for (int i = 0; i <= n; ++i) adj_first[i] = 0;
    for (int i = 1; i < n; ++i) { adj_first[lp[i] + 1]++; adj_first[i + 1]++; }
    for (int i = 0; i < n; ++i) adj_first[i + 1] += adj_first[i];
    for (int i = 0; i < n; ++i) cur[i] = adj_first[i];
    for (int i = 1; i < n; ++i) { adj[cur[lp[i]]++] = i; adj[cur[i]++] = lp[i]; }
}

int cs__tree_adjacency(int n, const int *lp, int **adj_first_out, int **adj_out)
{
    int *adj_first = malloc(sizeof(int) * ((size_t)n + 1)), *adj = malloc(sizeof(int) * (2 * (size_t)n + 1));
    int *cur = malloc(sizeof(int) * ((size_t)n + 1));
    if (!adj_first || !adj || !cur) { free(adj_first); free(adj); free(cur); return -1; }
    cs__tree_adjacency_into(n, lp, adj_first, adj, cur);
    free(cur);
    *adj_first_out = adj_first;
    *adj_out = adj;
    return 0;
}

int cs__tree_recentre(int n, const int *lp, int *new_of_old, int *lp_new, int *usrc)
{
    int *adj_first = NULL, *adj = NULL, h = -1;
    int *dist = malloc(sizeof(int) * (size_t)n), *par = malloc(sizeof(int) * (size_t)n), *queue = malloc(sizeof(int) * (size_t)n);
    if (!dist || !par || !queue || cs__tree_adjacency(n, lp, &adj_first, &adj)) goto done;
    const int c = cs__tree_centre(n, lp, adj_first, adj, dist, par, queue);
    cs__farthest(n, adj_first, adj, c, dist, par, queue); /* breadth-first from the centre: the new order */
    h = 0;
    for (int k = 0; k < n; ++k) new_of_old[queue[k]] = k;
    for (int k = 0; k < n; ++k) {
        const int v = queue[k];
        lp_new[k] = par[v] < 0 ? -1 : new_of_old[par[v]];
        usrc[v] = par[v] < 0 ? -1 : par[v] == lp[v] ? v : par[v]; /* a reversed edge's coupling sits at the old child */
        if (dist[v] > h) h = dist[v];
    }
done:
    free(adj_first); free(adj); free(dist); free(par); free(queue);
    return h;
}

int cs__plan_threads(int items, size_t bytes_each)
{
    if (items < 16) return 1;
    const size_t budget = (size_t)512 << 20; /* [B] */
    size_t t = (size_t)omp_get_max_threads();
    if (t > (size_t)items) t = (size_t)items;
    if (bytes_each > 0 && t > budget / bytes_each) t = budget / bytes_each;
    return t > 1 ? (int)t : 1;
}

void cs__plan_msg(char *msg, size_t len, const char *fmt, ...)
{
    if (!msg || !len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
}

/* ---- the batch and its distinct structures ------------------------------------------------ */
cs_solver_status cs__hines_check_batch(int nsys, const int *offset, const int *p, int *max_n_out, char *msg, size_t msglen)
{
    if (nsys < 1 || !offset || !p) { cs__plan_msg(msg, msglen, "nsys must be >= 1 and offset, p non-NULL"); return CS_SOLVER_ERR_INVALID; }
    if (offset[0] != 0) { cs__plan_msg(msg, msglen, "offset[0] must be 0 (got %d)", offset[0]); return CS_SOLVER_ERR_INVALID; }
    int max_n = 0, bad = 0;
    for (int s = 0; s < nsys && !bad; ++s) {
        bad = offset[s + 1] - offset[s] < 1;
        if (offset[s + 1] - offset[s] > max_n) max_n = offset[s + 1] - offset[s];
    }
    /* the rows on threads where the sizes are sound (every row read is a row of the batch), then
     * in order for the first fault's message where there is one */
    const int nt = cs__plan_threads(nsys / 64, 0);
    if (!bad) {
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(dynamic, 256) reduction(| : bad)
        for (int s = 0; s < nsys; ++s) {
            if (bad || p[offset[s]] != -1) { bad = 1; continue; }
            for (int r = offset[s] + 1; r < offset[s + 1]; ++r)
                if (p[r] < offset[s] || p[r] >= r) { bad = 1; break; }
        }
    }
    for (int s = 0; bad && s < nsys; ++s) {
        int n = offset[s + 1] - offset[s];
        if (n < 1) { cs__plan_msg(msg, msglen, "system %d has %d rows (needs >= 1)", s, n); return CS_SOLVER_ERR_INVALID; }
        if (n > max_n) max_n = n;
        if (p[offset[s]] != -1) { cs__plan_msg(msg, msglen, "system %d: p[%d] = %d, expected -1 at its first row", s, offset[s], p[offset[s]]); return CS_SOLVER_ERR_INVALID; }
        for (int r = offset[s] + 1; r < offset[s + 1]; ++r)
            if (p[r] < offset[s] || p[r] >= r) { cs__plan_msg(msg, msglen, "system %d: p[%d] = %d is not a row of the system before %d", s, r, p[r], r); return CS_SOLVER_ERR_INVALID; }
    }
    *max_n_out = max_n;
    return CS_SOLVER_OK;
}

cs_solver_status cs__hines_structures(int nsys, const int *offset, const int *p, int **sid_out, int **rep_out, int *nstruct)
{
    int *sid = malloc(sizeof(int) * nsys), nrep_cap = 64, is_new, *rep = malloc(sizeof(int) * nrep_cap);
    uint64_t *h = malloc(sizeof(uint64_t) * nsys);
    cs__keymap km;
    int ok = sid && rep && h && cs__km_init(&km, 64) == 0;
    if (!ok) { free(sid); free(rep); free(h); return CS_SOLVER_ERR_NOMEM; }
    /* the keys' hashes on threads (a chain of dependent multiplies through every row: serial, it
     * was 40 % of the schedules' serial part at rand-65536), the table in order */
    const int nt = cs__plan_threads(nsys / 64, 0);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(dynamic, 256)
    for (int s = 0; s < nsys; ++s) h[s] = cs__km_hash_rows(p, offset[s], offset[s + 1] - offset[s]);
    for (int s = 0; ok && s < nsys; ++s) {
        int id = cs__km_get_rows_hashed(&km, p, offset[s], offset[s + 1] - offset[s], h[s], &is_new);
        if (id < 0) { ok = 0; break; }
        if (is_new && id >= nrep_cap) {
            nrep_cap *= 2;
            int *r2 = realloc(rep, sizeof(int) * nrep_cap);
            if (!r2) { ok = 0; break; }
            rep = r2;
        }
        if (is_new) rep[id] = s;
        sid[s] = id;
    }
    *nstruct = km.n;
    cs__km_free(&km);
    free(h);
    if (!ok) { free(sid); free(rep); return CS_SOLVER_ERR_NOMEM; }
    *sid_out = sid;
    *rep_out = rep;
    return CS_SOLVER_OK;
}
