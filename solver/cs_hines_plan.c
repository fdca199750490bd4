/* Host-side planning of the GPU Hines solvers (plain C, no CUDA): layouts of the per-system
 * variants, and the fine solver's branch schedule (re-rooting, branch splitting, levels,
 * sorting by length, greedy packing of systems into CUDA blocks). Also a host emulation of
 * every plan (for checking the planner without a GPU). The tree utilities that this planner and
 * the staged planner share are in cs_hines_tree.c.
 *
 * Everything here runs once at set-up; nothing runs per solve. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_hines_gpu_impl.h"
#include "cs_hines_tree.h"

/* ---- names ------------------------------------------------------------------------------ */
static const char *const cs__hv_names[CS__HV_COUNT] = {
#define CS__HV_NAME(e, name) name,
    CS__HINES_VARIANTS(CS__HV_NAME)
#undef CS__HV_NAME
};

const char *cs__hines_variant_name(int v)
{
    if (v == CS__HV_AUTO) return "auto";
    return (v >= 0 && v < CS__HV_COUNT) ? cs__hv_names[v] : "?";
}

void cs_hines_gpu_options_default(cs_hines_gpu_options *opt)
{
    memset(opt, 0, sizeof *opt);
}

int cs__hines_variant_is_fine(int v) { return v == CS__HV_FINE || v == CS__HV_WARP; }

int cs__hines_variant_lookup(const char *name)
{
    if (!name || strcmp(name, "auto") == 0) return CS__HV_AUTO;
    for (int v = 0; v < CS__HV_COUNT; ++v)
        if (strcmp(name, cs__hv_names[v]) == 0) return v;
    return -1;
}

/* ---- small helpers ------------------------------------------------------------------------ */
static void cs__msg(char *msg, size_t len, const char *fmt, ...)
{
    if (!msg || !len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
}

static uint64_t cs__fnv(uint64_t h, const int *a, int n)
{
    for (int i = 0; i < n; ++i) { h ^= (uint32_t)a[i]; h *= 0x100000001B3ull; h ^= h >> 29; }
    return h;
}

/* open-addressing table of integer-array keys (structures, pack types) */
typedef struct {
    int cap, n;
    int *slot;             /* id or -1 */
    uint64_t *hash;        /* per id */
    int *key_off, *key_len;/* per id, into keys */
    int *keys;
    int keys_n, keys_cap, ids_cap;
} cs__keymap;

static int cs__km_init(cs__keymap *m, int expect)
{
    memset(m, 0, sizeof *m);
    m->cap = 16;
    while (m->cap < 2 * expect + 16) m->cap *= 2;
    m->slot = malloc(sizeof(int) * m->cap);
    m->ids_cap = 16;
    m->hash = malloc(sizeof(uint64_t) * m->ids_cap);
    m->key_off = malloc(sizeof(int) * m->ids_cap);
    m->key_len = malloc(sizeof(int) * m->ids_cap);
    m->keys_cap = 1024;
    m->keys = malloc(sizeof(int) * m->keys_cap);
    if (!m->slot || !m->hash || !m->key_off || !m->key_len || !m->keys) return -1;
    for (int i = 0; i < m->cap; ++i) m->slot[i] = -1;
    return 0;
}
static void cs__km_free(cs__keymap *m)
{
    free(m->slot); free(m->hash); free(m->key_off); free(m->key_len); free(m->keys);
}
/* id of key (inserted when new; *is_new set); -1 on no memory */
static int cs__km_get(cs__keymap *m, const int *key, int len, int *is_new)
{
    uint64_t h = cs__fnv(0xCBF29CE484222325ull ^ (uint64_t)len, key, len);
    int i = (int)(h & (uint64_t)(m->cap - 1));
    for (;;) {
        int id = m->slot[i];
        if (id < 0) break;
        if (m->hash[id] == h && m->key_len[id] == len &&
            memcmp(m->keys + m->key_off[id], key, sizeof(int) * (size_t)len) == 0) {
            *is_new = 0;
            return id;
        }
        i = (i + 1) & (m->cap - 1);
    }
    if (m->n + 1 > m->ids_cap) {
        m->ids_cap *= 2;
        uint64_t *h2 = realloc(m->hash, sizeof(uint64_t) * m->ids_cap);
        if (h2) m->hash = h2;
        int *o2 = realloc(m->key_off, sizeof(int) * m->ids_cap);
        if (o2) m->key_off = o2;
        int *l2 = realloc(m->key_len, sizeof(int) * m->ids_cap);
        if (l2) m->key_len = l2;
        if (!h2 || !o2 || !l2) return -1;
    }
    while (m->keys_n + len > m->keys_cap) {
        m->keys_cap *= 2;
        int *k2 = realloc(m->keys, sizeof(int) * m->keys_cap);
        if (!k2) return -1;
        m->keys = k2;
    }
    int id = m->n++;
    m->hash[id] = h;
    m->key_off[id] = m->keys_n;
    m->key_len[id] = len;
    memcpy(m->keys + m->keys_n, key, sizeof(int) * (size_t)len);
    m->keys_n += len;
    m->slot[i] = id;
    if (2 * m->n > m->cap) { /* grow and rehash */
        int ncap = m->cap * 2;
        int *ns = malloc(sizeof(int) * ncap);
        if (!ns) return -1;
        for (int j = 0; j < ncap; ++j) ns[j] = -1;
        for (int k = 0; k < m->n; ++k) {
            int j = (int)(m->hash[k] & (uint64_t)(ncap - 1));
            while (ns[j] >= 0) j = (j + 1) & (ncap - 1);
            ns[j] = k;
        }
        free(m->slot);
        m->slot = ns;
        m->cap = ncap;
    }
    *is_new = 1;
    return id;
}

/* ---- the fine solver's per-structure schedule --------------------------------------------- */
typedef struct {
    int n, nbr, nlev;
    int *chain;     /* [n] local tree rows, branch by branch (proximal → distal) */
    int *usrc;      /* [n] per chain entry: local tree row holding the coupling to the new parent */
    int *br_first;  /* [nbr] into chain */
    int *br_len;
    int *br_level;
    int *br_prow;   /* local tree row of the parent (distal row of the parent branch), -1 root */
    int *br_parent; /* parent branch, -1 */
    int *lev_first; /* [nlev+1] branches are ordered by level */
    int nbranch_in;
} cs__fstruct;

static void cs__fs_free(cs__fstruct *f)
{
    free(f->chain); free(f->usrc); free(f->br_first); free(f->br_len); free(f->br_level);
    free(f->br_prow); free(f->br_parent); free(f->lev_first);
    memset(f, 0, sizeof *f);
}

/* Rooted at R: new parent of every node (np), children CSR; returns 0 or -1 */
static int cs__root_at(int n, const int *adj_first, const int *adj, int R, int *np, int *order)
{
    /* BFS from R; order[] receives the nodes in BFS order */
    int head = 0, tail = 0;
    for (int i = 0; i < n; ++i) np[i] = -2;
    np[R] = -1;
    order[tail++] = R;
    while (head < tail) {
        int v = order[head++];
        for (int k = adj_first[v]; k < adj_first[v + 1]; ++k) {
            int w = adj[k];
            if (np[w] == -2) { np[w] = v; order[tail++] = w; }
        }
    }
    return tail == n ? 0 : -1;
}

/* Branch decomposition of the tree rooted at R, with optional splitting (seed 001: level by
 * level, cut every branch longer than the level's average at that average). Fills f. The
 * arrays of the work struct w are scratch of size n. */
typedef struct { int *np, *order, *nk, *kf, *kids, *tmp; } cs__fwork;

static int cs__build_fstruct(int n, const int *lp, const int *adj_first, const int *adj, int R,
                             int split, cs__fwork *w, cs__fstruct *f)
{
    memset(f, 0, sizeof *f);
    if (cs__root_at(n, adj_first, adj, R, w->np, w->order)) return -1;
    /* children CSR of the rooted tree, in increasing row order */
    for (int i = 0; i <= n; ++i) w->kf[i] = 0;
    for (int v = 0; v < n; ++v) if (w->np[v] >= 0) w->kf[w->np[v] + 1]++;
    for (int v = 0; v < n; ++v) w->kf[v + 1] += w->kf[v];
    for (int v = 0; v < n; ++v) w->nk[v] = w->kf[v];
    for (int v = 0; v < n; ++v) if (w->np[v] >= 0) w->kids[w->nk[w->np[v]]++] = v;
    for (int v = 0; v < n; ++v) w->nk[v] = w->kf[v + 1] - w->kf[v];

    f->n = n;
    f->chain = malloc(sizeof(int) * n);
    f->usrc = malloc(sizeof(int) * n);
    f->br_first = malloc(sizeof(int) * n);
    f->br_len = malloc(sizeof(int) * n);
    f->br_level = malloc(sizeof(int) * n);
    f->br_prow = malloc(sizeof(int) * n);
    f->br_parent = malloc(sizeof(int) * n);
    f->lev_first = malloc(sizeof(int) * (n + 1));
    /* raw branches first (branch-local scratch): start node → chain, discovered in BFS order */
    int *bstart = w->tmp; /* start nodes of the branches of the current level */
    if (!f->chain || !f->usrc || !f->br_first || !f->br_len || !f->br_level || !f->br_prow ||
        !f->br_parent || !f->lev_first)
        return -1;
    /* Level-by-level construction. A "pending" branch is (start node, remaining chain already
     * placed) — simpler: place raw branches in BFS order into the chain first, then split. */
    int nraw = 0, pos = 0, qh = 0;
    int *rfirst = f->br_first, *rlen = f->br_len, *rpar = f->br_parent;
    bstart[nraw] = R; rpar[nraw] = -1; nraw++;
    while (qh < nraw) {
        int b = qh++;
        int v = bstart[b];
        rfirst[b] = pos;
        for (;;) {
            f->chain[pos++] = v;
            if (w->nk[v] != 1) break;
            v = w->kids[w->kf[v]];
        }
        rlen[b] = pos - rfirst[b];
        for (int k = w->kf[v]; k < w->kf[v + 1]; ++k) {
            bstart[nraw] = w->kids[k]; rpar[nraw] = b; nraw++;
        }
    }
    f->nbranch_in = nraw;
    /* coupling source of each node: the original edge to its new parent */
    for (int q = 0; q < n; ++q) {
        int v = f->chain[q], pv = w->np[v];
        f->usrc[q] = pv < 0 ? -1 : (lp[v] == pv ? v : pv);
    }
    /* raw branch tree: children CSR (raw ids are BFS order, so parents come first) */
    int *ckf = w->kf, *ckids = w->kids; /* reuse */
    for (int b = 0; b <= nraw; ++b) ckf[b] = 0;
    for (int b = 1; b < nraw; ++b) ckf[rpar[b] + 1]++;
    for (int b = 0; b < nraw; ++b) ckf[b + 1] += ckf[b];
    for (int b = 0; b < nraw; ++b) w->nk[b] = ckf[b];
    for (int b = 1; b < nraw; ++b) ckids[w->nk[rpar[b]]++] = b;
    /* level-by-level pass producing the final branches (with splits) in level order. A work
     * item is (chain first, length, raw branch whose children it ends with or -1 when it is a
     * split-off head whose tail follows, parent row). */
    int *it_first = malloc(sizeof(int) * n), *it_len = malloc(sizeof(int) * n);
    int *it_raw = malloc(sizeof(int) * n), *it_prow = malloc(sizeof(int) * n);
    int *it_par = malloc(sizeof(int) * n);
    int *nx_first = malloc(sizeof(int) * n), *nx_len = malloc(sizeof(int) * n);
    int *nx_raw = malloc(sizeof(int) * n), *nx_prow = malloc(sizeof(int) * n);
    int *nx_par = malloc(sizeof(int) * n);
    int rc = -1;
    if (!it_first || !it_len || !it_raw || !it_prow || !it_par || !nx_first || !nx_len || !nx_raw ||
        !nx_prow || !nx_par)
        goto out;
    int ncur = 1, nbr = 0, lev = 0;
    it_first[0] = rfirst[0]; it_len[0] = rlen[0]; it_raw[0] = 0; it_prow[0] = -1; it_par[0] = -1;
    /* the output arrays br_* are written in level order; raw arrays were in br_first/len/parent
     * too, so copy the raw ones aside first */
    int *raw_first = malloc(sizeof(int) * nraw), *raw_len = malloc(sizeof(int) * nraw);
    if (!raw_first || !raw_len) { free(raw_first); free(raw_len); goto out; }
    memcpy(raw_first, rfirst, sizeof(int) * nraw);
    memcpy(raw_len, rlen, sizeof(int) * nraw);
    while (ncur > 0) {
        f->lev_first[lev] = nbr;
        int cut = INT_MAX;
        if (split && ncur > 1) {
            double sum = 0;
            for (int i = 0; i < ncur; ++i) sum += it_len[i];
            cut = (int)ceil(sum / ncur - 1e-9);
            if (cut < 1) cut = 1;
        }
        int nnext = 0;
        for (int i = 0; i < ncur; ++i) {
            int b = nbr++;
            int len = it_len[i];
            int tail = 0;
            if (len > cut) { tail = len - cut; len = cut; }
            f->br_first[b] = it_first[i];
            f->br_len[b] = len;
            f->br_level[b] = lev;
            f->br_prow[b] = it_prow[i];
            f->br_parent[b] = it_par[i];
            int drow = f->chain[it_first[i] + len - 1];
            if (tail) { /* the rest of this chain continues one level down */
                nx_first[nnext] = it_first[i] + len; nx_len[nnext] = tail; nx_raw[nnext] = it_raw[i];
                nx_prow[nnext] = drow; nx_par[nnext] = b; nnext++;
            } else {
                int rb = it_raw[i];
                for (int k = ckf[rb]; k < ckf[rb + 1]; ++k) {
                    int c = ckids[k];
                    nx_first[nnext] = raw_first[c]; nx_len[nnext] = raw_len[c]; nx_raw[nnext] = c;
                    nx_prow[nnext] = drow; nx_par[nnext] = b; nnext++;
                }
            }
        }
        ++lev;
        ncur = nnext;
        int *t;
        t = it_first; it_first = nx_first; nx_first = t;
        t = it_len; it_len = nx_len; nx_len = t;
        t = it_raw; it_raw = nx_raw; nx_raw = t;
        t = it_prow; it_prow = nx_prow; nx_prow = t;
        t = it_par; it_par = nx_par; nx_par = t;
    }
    f->lev_first[lev] = nbr;
    f->nlev = lev;
    f->nbr = nbr;
    free(raw_first); free(raw_len);
    rc = 0;
out:
    free(it_first); free(it_len); free(it_raw); free(it_prow); free(it_par);
    free(nx_first); free(nx_len); free(nx_raw); free(nx_prow); free(nx_par);
    return rc;
}

/* cost of a schedule for one system: the critical path of the level sweeps, in row steps, plus
 * a barrier's worth per level */
static double cs__fs_cost(const cs__fstruct *f)
{
    double c = 0;
    for (int l = 0; l < f->nlev; ++l) {
        int m = 0;
        for (int b = f->lev_first[l]; b < f->lev_first[l + 1]; ++b) if (f->br_len[b] > m) m = f->br_len[b];
        c += m + 2.0;
    }
    return c;
}

/* The schedule of one structure: re-rooted at the better of the tree-order root and the
 * centre of the longest path (minimises the tree's height in rows), then split. */
static int cs__plan_structure(int n, const int *lp, int flags, cs__fstruct *out)
{
    int *adj_first = NULL, *adj = NULL;
    cs__fwork w;
    w.np = malloc(sizeof(int) * n); w.order = malloc(sizeof(int) * n); w.nk = malloc(sizeof(int) * (n + 1));
    w.kf = malloc(sizeof(int) * (n + 1)); w.kids = malloc(sizeof(int) * (n + 1)); w.tmp = malloc(sizeof(int) * (n + 1));
    int *dist = malloc(sizeof(int) * n), *par = malloc(sizeof(int) * n);
    int rc = -1;
    if (!w.np || !w.order || !w.nk || !w.kf || !w.kids || !w.tmp || !dist || !par || cs__tree_adjacency(n, lp, &adj_first, &adj))
        goto done;
    int split = !(flags & CS_HINES_FINE_NO_SPLIT);
    if (cs__build_fstruct(n, lp, adj_first, adj, 0, split, &w, out)) goto done;
    if (!(flags & CS_HINES_FINE_NO_REROOT) && n > 2) {
        const int c = cs__tree_centre(n, adj_first, adj, dist, par, w.order);
        if (c != 0) {
            cs__fstruct alt;
            if (cs__build_fstruct(n, lp, adj_first, adj, c, split, &w, &alt)) { cs__fs_free(&alt); goto done; }
            if (cs__fs_cost(&alt) < cs__fs_cost(out)) { cs__fs_free(out); *out = alt; }
            else cs__fs_free(&alt);
        }
    }
    rc = 0;
done:
    free(adj_first); free(adj); free(w.np); free(w.order); free(w.nk); free(w.kf); free(w.kids); free(w.tmp);
    free(dist); free(par);
    return rc;
}

/* ---- the plan ----------------------------------------------------------------------------- */
void cs__hines_hplan_free(cs__hines_hplan *hp)
{
    if (!hp) return;
    cs__chunked_release(hp);
    if (hp->chk_sub) {
        cs__hines_hplan_free(hp->chk_sub);
        free(hp->chk_sub);
    }
    free(hp->offset); free(hp->cell_base); free(hp->cell_map); free(hp->lmap); free(hp->lusrc); free(hp->lorder);
    free(hp->slot_base); free(hp->slot_n); free(hp->p_local); free(hp->group_base); free(hp->group_rows);
    free(hp->pack_base); free(hp->pack_type); free(hp->type_info); free(hp->level_start);
    free(hp->tasks); free(hp->children); free(hp->block_first); free(hp->launch_first); free(hp->launch_rows);
    free(hp->launch_sched); free(hp->group_type); free(hp->group_cells); free(hp->stype); free(hp->stg_sched); free(hp->stg_launch); free(hp->stg_type_launch);
    memset(hp, 0, sizeof *hp);
}

#define CS__NOMEM(ptr)                                                 \
    do {                                                               \
        if (!(ptr)) { st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); goto fail; } \
    } while (0)

/* per-system variants */
static cs_solver_status cs__plan_cells(cs__hines_hplan *hp, const int *p, const int *sid,
                                       const int *rep, const cs_hines_gpu_options *opt,
                                       char *msg, size_t msglen)
{
    cs_solver_status st = CS_SOLVER_OK;
    int nsys = hp->nsys, v = hp->variant;
    int *order = NULL, *slot_of = NULL;
    hp->threads = opt->threads > 0 ? opt->threads : 128;
    /* slot order: identity, or by size descending (variable) */
    order = malloc(sizeof(int) * (nsys + 1));
    slot_of = malloc(sizeof(int) * (nsys + 1));
    CS__NOMEM(order); CS__NOMEM(slot_of);
    for (int s = 0; s < nsys; ++s) order[s] = s;
    if (v == CS__HV_VARIABLE) { /* counting sort by size, descending, stable */
        int mx = hp->max_n;
        int *cnt = calloc((size_t)mx + 2, sizeof(int));
        CS__NOMEM(cnt);
        for (int s = 0; s < nsys; ++s) cnt[mx - (hp->offset[s + 1] - hp->offset[s])]++;
        for (int k = 0, acc = 0; k <= mx; ++k) { int c = cnt[k]; cnt[k] = acc; acc += c; }
        for (int s = 0; s < nsys; ++s) order[cnt[mx - (hp->offset[s + 1] - hp->offset[s])]++] = s;
        free(cnt);
    }
    int G;
    if (v == CS__HV_FLAT) G = 1;
    else if (v == CS__HV_INTERLEAVED) G = (nsys + 31) / 32 * 32;
    else if (v == CS__HV_VARIABLE) G = opt->block_size > 0 ? opt->block_size : 32;
    else G = opt->block_size > 0 ? opt->block_size : 64;
    if (v == CS__HV_BLOCK_SHARED) {
        /* shared memory holds G·(rows of the group's largest system) values (sized for double) */
        if ((long long)hp->max_n * 8 > CS__HINES_SMEM_BYTES_MAX) {
            cs__msg(msg, msglen, "block_shared: a system of %d rows does not fit in shared memory", hp->max_n);
            st = CS_SOLVER_ERR_INVALID;
            goto fail;
        }
        if (G > 1024) G = 1024;
        while (G > 1 && (long long)G * hp->max_n * 8 > CS__HINES_SMEM_BYTES_MAX) G /= 2;
        hp->threads = G;
        hp->group = G;
    }
    int nslot = (v == CS__HV_FLAT) ? nsys : (nsys + G - 1) / G * G;
    int ngroup = (v == CS__HV_FLAT) ? 0 : nslot / G;
    hp->nslot = nslot;
    hp->stride = G;
    hp->slot_base = malloc(sizeof(int) * (nslot + 1));
    hp->slot_n = calloc((size_t)nslot + 1, sizeof(int));
    CS__NOMEM(hp->slot_base); CS__NOMEM(hp->slot_n);
    long long size = 0;
    if (v == CS__HV_FLAT) {
        for (int s = 0; s < nsys; ++s) {
            hp->slot_base[s] = hp->offset[s];
            hp->slot_n[s] = hp->offset[s + 1] - hp->offset[s];
            slot_of[s] = s;
        }
        size = hp->nrows;
    } else {
        hp->ngroup = ngroup;
        hp->group_base = malloc(sizeof(int) * (ngroup + 1));
        hp->group_rows = malloc(sizeof(int) * (ngroup + 1));
        CS__NOMEM(hp->group_base); CS__NOMEM(hp->group_rows);
        for (int g = 0; g < ngroup; ++g) {
            int m = 0;
            for (int j = 0; j < G; ++j) {
                int q = g * G + j;
                if (q < nsys) {
                    int s = order[q], n = hp->offset[s + 1] - hp->offset[s];
                    if (n > m) m = n;
                }
            }
            if (size + (long long)m * G > INT_MAX) {
                cs__msg(msg, msglen, "the padded internal layout exceeds %d elements", INT_MAX);
                st = CS_SOLVER_ERR_INVALID;
                goto fail;
            }
            hp->group_base[g] = (int)size;
            hp->group_rows[g] = m;
            for (int j = 0; j < G; ++j) {
                int q = g * G + j;
                hp->slot_base[q] = (int)size + j;
                if (q < nsys) {
                    int s = order[q];
                    hp->slot_n[q] = hp->offset[s + 1] - hp->offset[s];
                    slot_of[s] = q;
                }
            }
            size += (long long)m * G;
        }
    }
    hp->internal_size = (int)size;
    /* parents */
    if (hp->uniform) {
        hp->shared_p = 1;
        int s0 = rep[0], n = hp->max_n;
        hp->p_local = malloc(sizeof(int) * (n + 1));
        CS__NOMEM(hp->p_local);
        for (int i = 0; i < n; ++i) hp->p_local[i] = i ? p[hp->offset[s0] + i] - hp->offset[s0] : -1;
    } else {
        hp->shared_p = 0;
        hp->p_local = malloc(sizeof(int) * ((size_t)size + 1));
        CS__NOMEM(hp->p_local);
        for (long long k = 0; k < size; ++k) hp->p_local[k] = -1;
        for (int s = 0; s < nsys; ++s) {
            int q = slot_of[s], n = hp->offset[s + 1] - hp->offset[s];
            for (int i = 0; i < n; ++i)
                hp->p_local[hp->slot_base[q] + (long long)i * G] = i ? p[hp->offset[s] + i] - hp->offset[s] : -1;
        }
    }
    (void)sid;
    /* conversion maps */
    hp->cell_base = malloc(sizeof(int) * (nsys + 1));
    hp->cell_map = malloc(sizeof(int) * (nsys + 1));
    CS__NOMEM(hp->cell_base); CS__NOMEM(hp->cell_map);
    for (int s = 0; s < nsys; ++s) { hp->cell_base[s] = hp->slot_base[slot_of[s]]; hp->cell_map[s] = -1; }
    hp->cell_stride = G;
    if (v == CS__HV_BLOCK_SHARED)
        snprintf(hp->describe, sizeof hp->describe, "block_shared BS=%d groups=%d size=%d (%.1f%% padding)",
                 G, ngroup, hp->internal_size, 100.0 * (hp->internal_size - hp->nrows) / (hp->internal_size ? hp->internal_size : 1));
    else
        snprintf(hp->describe, sizeof hp->describe, "%s G=%d slots=%d p=%s size=%d (%.1f%% padding)",
                 cs__hines_variant_name(v), G, nslot, hp->shared_p ? "shared" : "per-row",
                 hp->internal_size, 100.0 * (hp->internal_size - hp->nrows) / (hp->internal_size ? hp->internal_size : 1));
    free(order); free(slot_of);
    return CS_SOLVER_OK;
fail:
    free(order); free(slot_of);
    return st;
}

/* growable int array */
typedef struct { int *a; int n, cap; } cs__ivec;
static int cs__iv_push(cs__ivec *v, int x)
{
    if (v->n == v->cap) {
        int nc = v->cap ? 2 * v->cap : 256;
        int *a = realloc(v->a, sizeof(int) * (size_t)nc);
        if (!a) return -1;
        v->a = a; v->cap = nc;
    }
    v->a[v->n++] = x;
    return 0;
}

typedef struct { int len, cell, br; } cs__tk;
static int cs__tk_cmp(const void *a, const void *b)
{
    const cs__tk *x = a, *y = b;
    if (x->len != y->len) return y->len - x->len; /* longer first */
    if (x->cell != y->cell) return x->cell - y->cell;
    return x->br - y->br;
}
static int cs__tk_cmp_tree(const void *a, const void *b)
{
    const cs__tk *x = a, *y = b;
    if (x->cell != y->cell) return x->cell - y->cell;
    return x->br - y->br;
}

/* schedule bytes of one type as the warp kernel stages it: tasks (int4, the sentinel included),
 * level starts and children, 16-byte aligned */
static int cs__warp_sched_bytes(const cs__hines_hplan *hp, int t)
{
    const int *ti = hp->type_info + 4 * t;
    const int ntk = hp->level_start[ti[1] + ti[2]] - ti[0];
    const int nkid = hp->tasks[4 * (ti[0] + ntk) + 3] - hp->tasks[4 * ti[0] + 3];
    return (16 * (ntk + 1) + 4 * (ti[2] + 1 + nkid) + 15) / 16 * 16;
}

/* warp: consecutive packs of one type (packs come grouped by structure) go into a block while
 * its rows stay within block_rows, it has at most 32 packs, and small batches keep at least two
 * blocks per multiprocessor (at least one pack per block). The block stages its type's schedule
 * once. Blocks then form launch groups: a kernel launch gives every block the same shared
 * memory, so blocks of very different sizes (a mixed batch) would all get the largest one's and
 * fewer would fit a multiprocessor. A group takes consecutive blocks within 20 % of its largest,
 * and a type's last block when it is smaller; groups run concurrently (one stream each). More than CS__WARP_MAX_GROUPS groups: one launch. */
static int cs__plan_warp_blocks(cs__hines_hplan *hp, int block_rows, int nsm)
{
    cs__ivec bf = {0}, gf = {0}, grows = {0}, gsched = {0};
    int cap = hp->npack / (2 * (nsm > 0 ? nsm : 132));
    if (cap < 1) cap = 1;
    int maxw = 1, ok = 0;
    long long gmax = 0; /* bytes (double) of the current group's largest block */
    for (int pk = 0; pk < hp->npack;) {
        const int t = hp->pack_type[pk], rows = hp->type_info[4 * t + 3];
        int n = 1;
        while (pk + n < hp->npack && n < 32 && n < cap && hp->pack_type[pk + n] == t && (n + 1) * rows <= block_rows) ++n;
        const int sched = cs__warp_sched_bytes(hp, t);
        const long long bytes = sched + 24LL * n * rows;
        /* a type's last, smaller block stays in its type's group: a second launch (and the
         * streams' fork and join) would cost more than that block's idle shared memory */
        const int same = bf.n > 0 && hp->pack_type[bf.a[bf.n - 1]] == t;
        const int join = gf.n > 0 && (bytes <= gmax ? same || 5 * bytes >= 4 * gmax : 5 * gmax >= 4 * bytes);
        if (!join) {
            ok |= cs__iv_push(&gf, bf.n) | cs__iv_push(&grows, 0) | cs__iv_push(&gsched, 0);
            gmax = 0;
        }
        if (ok) break;
        if (n * rows > grows.a[grows.n - 1]) grows.a[grows.n - 1] = n * rows;
        if (sched > gsched.a[gsched.n - 1]) gsched.a[gsched.n - 1] = sched;
        if (bytes > gmax) gmax = bytes;
        ok |= cs__iv_push(&bf, pk);
        if (n > maxw) maxw = n;
        pk += n;
    }
    ok |= cs__iv_push(&bf, hp->npack) | cs__iv_push(&gf, bf.n - 1);
    if (ok) { free(bf.a); free(gf.a); free(grows.a); free(gsched.a); return 1; }
    hp->nblock = bf.n - 1;
    hp->block_first = bf.a;
    hp->block_warps = maxw;
    hp->nlaunch = gf.n - 1;
    hp->launch_first = gf.a;
    hp->launch_rows = grows.a;
    hp->launch_sched = gsched.a;
    hp->block_rows = 0;
    hp->sched_bytes = 16;
    for (int g = 0; g < hp->nlaunch; ++g) {
        if (hp->launch_rows[g] > hp->block_rows) hp->block_rows = hp->launch_rows[g];
        if (hp->launch_sched[g] > hp->sched_bytes) hp->sched_bytes = hp->launch_sched[g];
    }
    if (hp->nlaunch > CS__WARP_MAX_GROUPS) { /* one launch, every block given the largest's */
        hp->launch_first[1] = hp->nblock;
        hp->launch_rows[0] = hp->block_rows;
        hp->launch_sched[0] = hp->sched_bytes;
        hp->nlaunch = 1;
    }
    return 0;
}

/* the fine solver */
static cs_solver_status cs__plan_fine(cs__hines_hplan *hp, const int *p, const int *sid, const int *rep,
                                      const cs_hines_gpu_options *opt, int nsm, char *msg, size_t msglen)
{
    cs_solver_status st = CS_SOLVER_OK;
    int nsys = hp->nsys, ns = hp->nstruct;
    int flags = opt->fine_flags;
    const int warp = hp->variant == CS__HV_WARP;
    /* warp: one warp per pack, and packs small enough that several fit a block (a pack holds
     * several cells only when they are small: 32 branches per level at most) */
    int R = warp ? CS__WARP_PACK_ROWS : opt->fine_pack_rows > 0 ? opt->fine_pack_rows : 1536;
    int T = warp ? 32 : opt->threads > 0 ? opt->threads : 128;
    hp->threads = T;
    hp->fine_flags = flags;
    cs__fstruct *fs = calloc((size_t)ns, sizeof(cs__fstruct));
    int *order = malloc(sizeof(int) * (nsys + 1)), *cnt = calloc((size_t)ns + 1, sizeof(int));
    int *wpack = NULL, *cells = NULL, *lp = malloc(sizeof(int) * ((size_t)hp->max_n + 1));
    int *posb = NULL, *key = NULL;
    cs__tk *tk = NULL;
    cs__keymap types;
    int km_ok = 0;
    cs__ivec pb = {0}, pt = {0}, tinfo = {0}, lst = {0}, tasks = {0}, kids = {0}, lmap = {0}, lusrc = {0}, tlmap = {0};
    CS__NOMEM(fs); CS__NOMEM(order); CS__NOMEM(cnt); CS__NOMEM(lp);
    /* schedules per structure */
    int maxlev = 1;
    for (int k = 0; k < ns; ++k) {
        int s = rep[k], n = hp->offset[s + 1] - hp->offset[s];
        for (int i = 0; i < n; ++i) lp[i] = i ? p[hp->offset[s] + i] - hp->offset[s] : -1;
        if (cs__plan_structure(n, lp, flags, &fs[k])) { st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); goto fail; }
        if (fs[k].nlev > maxlev) maxlev = fs[k].nlev;
    }
    for (int s = 0; s < nsys; ++s) { hp->nbranch_in += fs[sid[s]].nbranch_in; hp->nbranch_out += fs[sid[s]].nbr; }
    /* systems grouped by structure (stable) so that packs repeat and share their schedule */
    for (int s = 0; s < nsys; ++s) cnt[sid[s] + 1]++;
    for (int k = 0; k < ns; ++k) cnt[k + 1] += cnt[k];
    for (int s = 0; s < nsys; ++s) order[cnt[sid[s]]++] = s;
    /* cap on systems per pack so that small batches still fill the device */
    int cap = nsys / (2 * (nsm > 0 ? nsm : 132));
    if (cap < 1) cap = 1;
    wpack = calloc((size_t)maxlev, sizeof(int));
    cells = malloc(sizeof(int) * (nsys + 1));
    key = malloc(sizeof(int) * (nsys + 1));
    posb = malloc(sizeof(int) * ((size_t)hp->max_n + 1) * 1);
    CS__NOMEM(wpack); CS__NOMEM(cells); CS__NOMEM(key); CS__NOMEM(posb);
    if (cs__km_init(&types, 64)) { st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); goto fail; }
    km_ok = 1;
    hp->cell_base = malloc(sizeof(int) * (nsys + 1));
    hp->cell_map = malloc(sizeof(int) * (nsys + 1));
    CS__NOMEM(hp->cell_base); CS__NOMEM(hp->cell_map);
    hp->cell_stride = 1;
    long long base = 0;
    int q = 0, max_rows = 0, max_levels = 0;
    while (q < nsys) {
        /* greedy: add systems while rows, the cap and every level's branch count fit */
        int nc = 0, rows = 0;
        for (int l = 0; l < maxlev; ++l) wpack[l] = 0;
        while (q < nsys) {
            int s = order[q];
            const cs__fstruct *f = &fs[sid[s]];
            int fits = 1;
            if (nc > 0) {
                if (rows + f->n > R || nc >= cap) fits = 0;
                for (int l = 0; fits && l < f->nlev; ++l)
                    if (wpack[l] + (f->lev_first[l + 1] - f->lev_first[l]) > T) fits = 0;
            }
            if (!fits) break;
            for (int l = 0; l < f->nlev; ++l) wpack[l] += f->lev_first[l + 1] - f->lev_first[l];
            rows += f->n;
            cells[nc++] = s;
            ++q;
        }
        if (base + rows > INT_MAX) {
            cs__msg(msg, msglen, "the internal layout exceeds %d elements", INT_MAX);
            st = CS_SOLVER_ERR_INVALID;
            goto fail;
        }
        if (rows > max_rows) max_rows = rows;
        for (int c = 0; c < nc; ++c) key[c] = sid[cells[c]];
        int is_new = 0;
        int t = cs__km_get(&types, key, nc, &is_new);
        if (t < 0) { st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); goto fail; }
        if (is_new) {
            /* the schedule of this pack type */
            int nlev = 0, nbr = 0;
            for (int c = 0; c < nc; ++c) {
                const cs__fstruct *f = &fs[key[c]];
                if (f->nlev > nlev) nlev = f->nlev;
                nbr += f->nbr;
            }
            if (nlev > max_levels) max_levels = nlev;
            free(tk);
            tk = malloc(sizeof(cs__tk) * (size_t)(nbr + 1));
            int *bpos = malloc(sizeof(int) * (size_t)(nbr + 1)); /* first row of (cell, branch) */
            int *boff = malloc(sizeof(int) * (size_t)(nc + 1));   /* branch id offset of each cell */
            int *lev_tk = malloc(sizeof(int) * (size_t)(nlev + 1));
            if (!tk || !bpos || !boff || !lev_tk) { free(bpos); free(boff); free(lev_tk); st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); goto fail; }
            boff[0] = 0;
            for (int c = 0; c < nc; ++c) boff[c + 1] = boff[c] + fs[key[c]].nbr;
            /* order of tasks: by level, then by length (descending) */
            int ntk = 0, pos = 0;
            for (int l = 0; l < nlev; ++l) {
                lev_tk[l] = ntk;
                int l0 = ntk;
                for (int c = 0; c < nc; ++c) {
                    const cs__fstruct *f = &fs[key[c]];
                    if (l >= f->nlev) continue;
                    for (int b = f->lev_first[l]; b < f->lev_first[l + 1]; ++b) {
                        tk[ntk].len = f->br_len[b]; tk[ntk].cell = c; tk[ntk].br = b; ntk++;
                    }
                }
                qsort(tk + l0, (size_t)(ntk - l0), sizeof(cs__tk), (flags & CS_HINES_FINE_NO_SORT) ? cs__tk_cmp_tree : cs__tk_cmp);
                for (int i = l0; i < ntk; ++i) { bpos[boff[tk[i].cell] + tk[i].br] = pos; pos += tk[i].len; }
            }
            lev_tk[nlev] = ntk;
            /* type record */
            int task0 = tasks.n / 4, lev0 = lst.n;
            int ok = 0;
            ok |= cs__iv_push(&tinfo, task0); ok |= cs__iv_push(&tinfo, lev0);
            ok |= cs__iv_push(&tinfo, nlev); ok |= cs__iv_push(&tinfo, rows);
            for (int l = 0; l <= nlev; ++l) ok |= cs__iv_push(&lst, task0 + lev_tk[l]);
            for (int i = 0; i < ntk; ++i) {
                int c = tk[i].cell, b = tk[i].br;
                const cs__fstruct *f = &fs[key[c]];
                int pbr = f->br_parent[b];
                int prow = pbr < 0 ? -1 : bpos[boff[c] + pbr] + f->br_len[pbr] - 1;
                ok |= cs__iv_push(&tasks, bpos[boff[c] + b]);
                ok |= cs__iv_push(&tasks, f->br_len[b]);
                ok |= cs__iv_push(&tasks, prow);
                ok |= cs__iv_push(&tasks, kids.n);
                /* children: the branches whose parent is b (next level) */
                if (b + 1 <= f->nbr) {
                    int l = f->br_level[b];
                    if (l + 1 < f->nlev)
                        for (int cb = f->lev_first[l + 1]; cb < f->lev_first[l + 2]; ++cb)
                            if (f->br_parent[cb] == b) ok |= cs__iv_push(&kids, bpos[boff[c] + cb]);
                }
            }
            /* sentinel */
            ok |= cs__iv_push(&tasks, 0); ok |= cs__iv_push(&tasks, 0);
            ok |= cs__iv_push(&tasks, -1); ok |= cs__iv_push(&tasks, kids.n);
            /* row maps of each cell of the type */
            ok |= cs__iv_push(&tlmap, lmap.n);
            for (int c = 0; c < nc; ++c) {
                const cs__fstruct *f = &fs[key[c]];
                int m0 = lmap.n;
                for (int i = 0; i < f->n; ++i) { ok |= cs__iv_push(&lmap, 0); ok |= cs__iv_push(&lusrc, -1); }
                if (ok) break;
                for (int b = 0; b < f->nbr; ++b)
                    for (int j = 0; j < f->br_len[b]; ++j) {
                        int qq = f->br_first[b] + j, v = f->chain[qq];
                        lmap.a[m0 + v] = bpos[boff[c] + b] + j;
                        lusrc.a[m0 + v] = f->usrc[qq];
                    }
            }
            free(bpos); free(boff); free(lev_tk);
            if (ok) { st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); goto fail; }
        }
        /* the pack */
        if (cs__iv_push(&pb, (int)base) || cs__iv_push(&pt, t)) { st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); goto fail; }
        int moff = tlmap.a[t];
        for (int c = 0; c < nc; ++c) {
            int s = cells[c];
            hp->cell_base[s] = (int)base;
            hp->cell_map[s] = moff;
            moff += hp->offset[s + 1] - hp->offset[s];
        }
        base += rows;
    }
    hp->internal_size = (int)base;
    hp->npack = pb.n; hp->pack_base = pb.a; hp->pack_type = pt.a; pb.a = pt.a = NULL;
    hp->ntype = tinfo.n / 4; hp->type_info = tinfo.a; tinfo.a = NULL;
    hp->nlevel_start = lst.n; hp->level_start = lst.a; lst.a = NULL;
    hp->ntask = tasks.n / 4; hp->tasks = tasks.a; tasks.a = NULL;
    hp->nchild = kids.n; hp->children = kids.a; kids.a = NULL;
    hp->nlmap = lmap.n; hp->lmap = lmap.a; hp->lusrc = lusrc.a; lmap.a = lusrc.a = NULL;
    hp->max_pack_rows = max_rows;
    hp->max_levels = max_levels;
    if (!hp->children) { hp->children = malloc(sizeof(int)); CS__NOMEM(hp->children); hp->children[0] = 0; }
    if (warp) {
        if (cs__plan_warp_blocks(hp, opt->fine_pack_rows > 0 ? opt->fine_pack_rows : CS__WARP_BLOCK_ROWS, nsm)) {
            st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); goto fail;
        }
        snprintf(hp->describe, sizeof hp->describe,
                 "warp blocks=%d launches=%d warps<=%d rows<=%d packs=%d types=%d max_pack_rows=%d schedule=%dB levels<=%d branches %lld->%lld%s%s%s",
                 hp->nblock, hp->nlaunch, hp->block_warps, hp->block_rows, hp->npack, hp->ntype, max_rows, hp->sched_bytes, max_levels,
                 hp->nbranch_in, hp->nbranch_out, (flags & CS_HINES_FINE_NO_REROOT) ? " no-reroot" : "",
                 (flags & CS_HINES_FINE_NO_SPLIT) ? " no-split" : "", (flags & CS_HINES_FINE_NO_SORT) ? " no-sort" : "");
    } else
    snprintf(hp->describe, sizeof hp->describe,
             "fine threads=%d packs=%d types=%d max_pack_rows=%d levels<=%d branches %lld->%lld%s%s%s",
             T, hp->npack, hp->ntype, max_rows, max_levels, hp->nbranch_in, hp->nbranch_out,
             (flags & CS_HINES_FINE_NO_REROOT) ? " no-reroot" : "", (flags & CS_HINES_FINE_NO_SPLIT) ? " no-split" : "",
             (flags & CS_HINES_FINE_NO_SORT) ? " no-sort" : "");
fail:
    if (fs) for (int k = 0; k < ns; ++k) cs__fs_free(&fs[k]);
    free(fs); free(order); free(cnt); free(wpack); free(cells); free(lp); free(posb); free(key); free(tk);
    if (km_ok) cs__km_free(&types);
    free(pb.a); free(pt.a); free(tinfo.a); free(lst.a); free(tasks.a); free(kids.a); free(lmap.a); free(lusrc.a); free(tlmap.a);
    return st;
}

static int cs__cmp_int2(const void *a, const void *b)
{
    const int x = ((const int *)a)[0], y = ((const int *)b)[0];
    return (x > y) - (x < y);
}

/* lorder: each structure's rows sorted by their internal offset (lmap). Returns 0, or -1 when out
 * of memory. */
static int cs__hplan_order_maps(cs__hines_hplan *hp)
{
    if (!hp->nlmap) return 0;
    int *pairs = malloc(sizeof(int) * 2 * (size_t)hp->max_n);
    unsigned char *done = calloc((size_t)hp->nlmap, 1);
    hp->lorder = malloc(sizeof(int) * (size_t)hp->nlmap);
    if (!pairs || !done || !hp->lorder) { free(pairs); free(done); return -1; }
    for (int s = 0; s < hp->nsys; ++s) {
        const int m = hp->cell_map[s], n = hp->offset[s + 1] - hp->offset[s];
        if (m < 0 || done[m]) continue;
        done[m] = 1;
        for (int i = 0; i < n; ++i) { pairs[2 * i] = hp->lmap[m + i]; pairs[2 * i + 1] = i; }
        qsort(pairs, (size_t)n, 2 * sizeof(int), cs__cmp_int2);
        for (int q = 0; q < n; ++q) hp->lorder[m + q] = pairs[2 * q + 1];
    }
    free(pairs); free(done);
    return 0;
}

/* chunked: its chunks and reduced tree (cs_hines_chunked_plan.c), the reduced tree's own plan
 * (this function again: fine, or chunked while it has runs to cut, with fewer rows each time),
 * then the layout around it */
static cs_solver_status cs__plan_chunked_tree(cs__hines_hplan *hp, const int *p, const cs_hines_gpu_options *opt, int nsm,
                                              char *msg, size_t msglen)
{
    cs_hines_gpu_options o = *opt; /* L chosen once, here, for every level */
    if (!o.block_size) o.block_size = cs__chunked_pick_L(hp->nrows, p);
    opt = &o;
    cs__chk_reduced red;
    cs_solver_status st = cs__chunked_reduce(hp, p, opt, &red, msg, msglen);
    if (st == CS_SOLVER_OK) {
        hp->chk_sub = calloc(1, sizeof *hp->chk_sub);
        if (!hp->chk_sub) { st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); }
    }
    if (st == CS_SOLVER_OK) {
        st = cs__hines_hplan_build(hp->nsys, red.offset_r, red.p_r, red.sub_variant, opt, nsm, hp->chk_sub, msg, msglen);
        if (st != CS_SOLVER_OK) { free(hp->chk_sub); hp->chk_sub = NULL; }
    }
    if (st == CS_SOLVER_OK) st = cs__chunked_layout(hp, opt, &red, msg, msglen);
    cs__chunked_reduced_free(&red);
    return st;
}

cs_solver_status cs__hines_hplan_build(int nsys, const int *offset, const int *p, int variant,
                                       const cs_hines_gpu_options *opt_in, int nsm,
                                       cs__hines_hplan *hp, char *msg, size_t msglen)
{
    cs_hines_gpu_options opt;
    if (opt_in) opt = *opt_in; else cs_hines_gpu_options_default(&opt);
    memset(hp, 0, sizeof *hp);
    if (msg && msglen) msg[0] = 0;
    if (nsys < 1 || !offset || !p) { cs__msg(msg, msglen, "nsys must be >= 1 and offset, p non-NULL"); return CS_SOLVER_ERR_INVALID; }
    if (offset[0] != 0) { cs__msg(msg, msglen, "offset[0] must be 0 (got %d)", offset[0]); return CS_SOLVER_ERR_INVALID; }
    int max_n = 0;
    for (int s = 0; s < nsys; ++s) {
        int n = offset[s + 1] - offset[s];
        if (n < 1) { cs__msg(msg, msglen, "system %d has %d rows (needs >= 1)", s, n); return CS_SOLVER_ERR_INVALID; }
        if (n > max_n) max_n = n;
        if (p[offset[s]] != -1) { cs__msg(msg, msglen, "system %d: p[%d] = %d, expected -1 at its first row", s, offset[s], p[offset[s]]); return CS_SOLVER_ERR_INVALID; }
        for (int r = offset[s] + 1; r < offset[s + 1]; ++r)
            if (p[r] < offset[s] || p[r] >= r) { cs__msg(msg, msglen, "system %d: p[%d] = %d is not a row of the system before %d", s, r, p[r], r); return CS_SOLVER_ERR_INVALID; }
    }
    cs_solver_status st = CS_SOLVER_OK;
    int *sid = NULL, *rep = NULL, *lp = NULL;
    cs__keymap km;
    int km_ok = 0;
    hp->nsys = nsys;
    hp->nrows = offset[nsys];
    hp->max_n = max_n;
    hp->offset = malloc(sizeof(int) * (nsys + 1));
    CS__NOMEM(hp->offset);
    memcpy(hp->offset, offset, sizeof(int) * (nsys + 1));
    /* distinct structures */
    sid = malloc(sizeof(int) * nsys);
    lp = malloc(sizeof(int) * (max_n + 1));
    CS__NOMEM(sid); CS__NOMEM(lp);
    if (cs__km_init(&km, 64)) { st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); goto fail; }
    km_ok = 1;
    int nrep_cap = 64, is_new;
    rep = malloc(sizeof(int) * nrep_cap);
    CS__NOMEM(rep);
    for (int s = 0; s < nsys; ++s) {
        int n = offset[s + 1] - offset[s];
        for (int i = 0; i < n; ++i) lp[i] = i ? p[offset[s] + i] - offset[s] : -1;
        int id = cs__km_get(&km, lp, n, &is_new);
        if (id < 0) { st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); goto fail; }
        if (is_new) {
            if (id >= nrep_cap) {
                nrep_cap *= 2;
                int *r2 = realloc(rep, sizeof(int) * nrep_cap);
                CS__NOMEM(r2);
                rep = r2;
            }
            rep[id] = s;
        }
        sid[s] = id;
    }
    hp->nstruct = km.n;
    hp->uniform = (km.n == 1);
    cs__km_free(&km);
    km_ok = 0;
    if (variant == CS__HV_AUTO) {
        /* Measured on an H200 (bench/results-hines.md, bench/NOTES.md "Hines GPU").
         * Cells of one structure, below ~1000 per multiprocessor: warp is the fastest for every
         * class of Table 4.1 (256 cells: 13-36 µs against fine's 14-40 µs; small-low is the one
         * where fine wins, by 8 %). From ~1000 per multiprocessor (256000 cells): warp only for
         * small cells (76 rows: 8-25 % faster than interleaved); medium-high ties (1.48 ms both),
         * and the cells with long branches lose (medium-low 1.75 against 1.49 ms, big 5.9-7.1
         * against 3.4 ms: shared memory holds 9-30 of them per multiprocessor, too few for their
         * long critical paths), so interleaved.
         * Mixed structures: the fine solver below ~1000 per multiprocessor (2560 mixed cells: 50 µs
         * against warp 65 µs, whose largest cells set the time; 256 and 25600 within 5 % of warp),
         * the sorted, padded variable layout above (256000: 2.14 ms against warp 2.65, fine 2.81).
         * warp and fine stage rows in shared memory: too large a cell takes interleaved/variable.
         * The simulator's fused step needs a per-system variant: from CS_HINES_FUSED_MIN_PER_SM
         * systems per multiprocessor (below that the separate assembly plus warp/fine is faster). */
        const long long sms = nsm > 0 ? nsm : 132;
        const int fits = (long long)max_n * (3 * 8 + 24) <= CS__HINES_SMEM_BYTES_MAX;
        const int large = (long long)nsys >= 1024 * sms;
        /* staged, whenever its lanes are at least half busy (session 5, H200, double; every
         * variant in one run): at 256000 cells it was the fastest for small-high (232 µs against
         * warp 296), medium-low (876 against interleaved 1486), medium-high (887 against 1574),
         * big-low (3083 against 3408) and big-high (2847 against 3421), whose lanes are 56-89 %
         * busy; small-low (30 %) lost to warp (428 against ~333). At 256 cells it matched or beat
         * warp in every class (medium-high 14.8 against 20.9 µs, big-high 18.3 against 35.6).
         * Mixed batches: each structure gets its own shape (2560 mixed cells: 45 µs against fine
         * 50). The staged plan is built to be measured: its lanes' use decides. Session 6 (rows in
         * schedule order, concurrent launches) kept the rule: small-low still lost to warp (361
         * against 334 µs); medium-high 675 µs, mixed 256000 cells 1187 against variable 2134.
         * Below ~1000 cells per multiprocessor staged wins at any lane use (session 8, small-low:
         * 256 cells 9.1 against warp 14.1 µs, 2 560 14.1 against 17.6, 25 600 45.2 against 50.8). */
        if (!opt.fused_step) {
            /* large batches: the rule is judged on the one-way plan (its lanes' use was
             * measured); where it holds, the plan may take two-way sections, which shorten
             * schedules but leave more lanes idle (session 8). Small: the plan as asked, once. */
            cs__hines_hplan trial = *hp;
            char m2[256];
            cs_hines_gpu_options one_way = opt;
            one_way.fine_flags |= CS_HINES_STAGED_NO_TWO_WAY;
            int ok = cs__plan_staged(&trial, p, sid, rep, large ? &one_way : &opt, nsm, m2, sizeof m2) == CS_SOLVER_OK &&
                     (!large || cs__staged_lane_use(&trial) >= 0.5);
            if (ok && large && !(opt.fine_flags & CS_HINES_STAGED_NO_TWO_WAY)) {
                cs__staged_release(&trial);
                trial = *hp;
                ok = cs__plan_staged(&trial, p, sid, rep, &opt, nsm, m2, sizeof m2) == CS_SOLVER_OK;
            }
            if (ok) {
                *hp = trial;
                hp->variant = CS__HV_STAGED;
                free(sid); free(rep); free(lp);
                if (cs__hplan_order_maps(hp) == 0) return CS_SOLVER_OK;
                cs__msg(msg, msglen, "out of memory");
                cs__hines_hplan_free(hp);
                return CS_SOLVER_ERR_NOMEM;
            }
            cs__staged_release(&trial); /* only its own arrays: the rest is hp's */
        }
        if (opt.fused_step && (long long)nsys >= (long long)CS_HINES_FUSED_MIN_PER_SM * sms)
            variant = hp->uniform ? CS__HV_INTERLEAVED : CS__HV_VARIABLE;
        /* chunked (issue 28, H100, session 16, bench/NOTES.md): on cells too large to stage, the
         * level schedules of fine are latency-bound where unbranched runs are long: chunked ran
         * big30000 (runs of 40-110 rows) 3.6× and the FlyWire cell 10.5× as fast as fine, big10000
         * (13-35) 1.14×; with nothing to cut (big2000, 2-6) it lost 13 % (now it runs fine there) */
        else if (!fits && cs__chunked_auto(hp->nrows, p, opt.block_size)) variant = CS__HV_CHUNKED;
        else if (hp->uniform && fits && (!large || max_n <= 128)) variant = CS__HV_WARP;
        else if (!hp->uniform && fits && !large) variant = CS__HV_FINE;
        else variant = hp->uniform ? CS__HV_INTERLEAVED : CS__HV_VARIABLE;
    }
    hp->variant = variant;
    if (cs__hines_variant_is_fine(variant)) st = cs__plan_fine(hp, p, sid, rep, &opt, nsm, msg, msglen);
    else if (variant == CS__HV_STAGED) st = cs__plan_staged(hp, p, sid, rep, &opt, nsm, msg, msglen);
    else if (variant == CS__HV_CHUNKED) st = cs__plan_chunked_tree(hp, p, &opt, nsm, msg, msglen);
    else if (variant >= 0 && variant < CS__HV_COUNT) st = cs__plan_cells(hp, p, sid, rep, &opt, msg, msglen);
    else { st = CS_SOLVER_ERR_INVALID; cs__msg(msg, msglen, "unknown variant %d", variant); }
    if (st != CS_SOLVER_OK) goto fail;
    if (cs__hplan_order_maps(hp) < 0) { st = CS_SOLVER_ERR_NOMEM; cs__msg(msg, msglen, "out of memory"); goto fail; }
    free(sid); free(rep); free(lp);
    return CS_SOLVER_OK;
fail:
    if (km_ok) cs__km_free(&km);
    free(sid); free(rep); free(lp);
    cs__hines_hplan_free(hp);
    return st;
}
