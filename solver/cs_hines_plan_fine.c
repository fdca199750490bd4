/* The fine and warp solvers' plan (plain C, no CUDA): each distinct structure re-rooted at the
 * centre of its longest path, its branches split and levelled (cs__plan_structure), then the
 * systems packed greedily into CUDA blocks (fine) or warps of one-type blocks (warp), with their
 * schedules. Split from cs_hines_plan.c, which calls cs__plan_fine (cs_hines_gpu_impl.h).
 *
 * Everything here runs once at set-up; nothing runs per solve. The structures are planned on
 * OpenMP threads (each alone, into its own record: the plan does not depend on the thread count),
 * with one work area per thread instead of ~50 allocations per structure (session 21). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_hines_gpu_impl.h"
#include "cs_hines_keymap.h"
#include "cs_hines_tree.h"

/* ---- the fine solver's per-structure schedule --------------------------------------------- */
struct cs__fstruct {
    int n, nbr, nlev;
    int *chain;     /* [n] local tree rows, branch by branch (proximal → distal); owns the block */
    int *usrc;      /* [n] per chain entry: local tree row holding the coupling to the new parent */
    int *br_first;  /* [nbr] into chain */
    int *br_len;
    int *br_parent; /* parent branch, -1 */
    int *lev_first; /* [nlev+1] branches are ordered by level */
    int *kid_first; /* [nbr+1] children of branch b: kids[kid_first[b] .. kid_first[b+1]), ascending */
    int *kids;      /* [nbr] (all on the level after b's) */
    int nbranch_in;
    struct cs__fsblock *blocks; /* fs[nstruct] alone: the blocks holding every record's arrays */
};

/* The records' arrays, bump-allocated from blocks of a thread's own (freed by the list, not one
 * by one): a malloc per record grew glibc's thread arenas by mprotect 126 346 times in warp's plan
 * at 41 M rows, and freeing 262 144 records one by one was serial (issue 28). */
typedef struct cs__fsblock {
    struct cs__fsblock *next;
    size_t cap, used; /* ints */
    int data[];
} cs__fsblock;
#define CS__FS_BLOCK_INTS ((size_t)1 << 20) /* 4 MiB: huge pages where malloc uses them */

/* ints of head's block, a new block of max(ints, want) ints where it has no room; NULL when out of memory */
static int *cs__fs_alloc(cs__fsblock **head, size_t ints, size_t want)
{
    cs__fsblock *b = *head;
    if (!b || b->cap - b->used < ints) {
        const size_t cap = ints > want ? ints : want;
        if (!(b = malloc(sizeof *b + sizeof(int) * cap))) return NULL;
        b->next = *head; b->cap = cap; b->used = 0;
        *head = b;
    }
    int *q = b->data + b->used;
    b->used += ints;
    return q;
}

/* Rooted at R: the new parent of every node (np). The tree-order parents lp, with the edges on
 * the path from R up to row 0 reversed (the one path between them; a breadth-first search from R
 * took a third of the fine plan, session 21). */
static void cs__root_at(int n, const int *lp, int R, int *np)
{
    memcpy(np, lp, sizeof(int) * (size_t)n);
    for (int v = R, prev = -1; v >= 0;) {
        const int up = lp[v];
        np[v] = prev;
        prev = v;
        v = up;
    }
}

/* A structure's schedule as built (cs__build_fstruct), in a work area: arrays of n (+1) */
typedef struct {
    int n, nbr, nlev, nbranch_in;
    int *chain, *usrc, *br_first, *br_len, *br_parent, *lev_first;
} cs__fstage;

/* One thread's work area for structures of up to cap rows, one allocation: the tree's adjacency,
 * the rooted tree, the level pass's items, and the two candidate schedules (two roots). */
typedef struct {
    int cap;
    int *block;
    int *np, *order, *nk, *kf, *kids, *tmp;
    int *it[5], *nx[5], *raw_first, *raw_len;
    int *dist, *par, *adj_first, *adj;
    cs__fstage stage[2];
} cs__fwork;

static int cs__fwork_init(cs__fwork *w, int cap)
{
    memset(w, 0, sizeof *w);
    const size_t n = (size_t)(cap > 0 ? cap : 1), ints = 36 * n + 16; /* as laid out below: 35 n + 8 */
    int *q = w->block = malloc(sizeof(int) * ints);
    if (!q) return -1;
    w->cap = cap;
    w->np = q; q += n;
    w->order = q; q += n;
    w->nk = q; q += n + 1;
    w->kf = q; q += n + 1;
    w->kids = q; q += n + 1;
    w->tmp = q; q += n + 1;
    for (int k = 0; k < 5; ++k) { w->it[k] = q; q += n; w->nx[k] = q; q += n; }
    w->raw_first = q; q += n;
    w->raw_len = q; q += n;
    w->dist = q; q += n;
    w->par = q; q += n;
    w->adj_first = q; q += n + 1;
    w->adj = q; q += 2 * n + 1;
    for (int k = 0; k < 2; ++k) {
        cs__fstage *s = &w->stage[k];
        s->chain = q; q += n;
        s->usrc = q; q += n;
        s->br_first = q; q += n;
        s->br_len = q; q += n;
        s->br_parent = q; q += n;
        s->lev_first = q; q += n + 1;
    }
    return 0;
}

/* Branch decomposition of the tree rooted at R, with optional splitting (seed 001: level by
 * level, cut every branch longer than the level's average at that average), into f (arrays of
 * the work area w, whose other arrays are scratch). */
static void cs__build_fstruct(int n, const int *lp, int R, int split, cs__fwork *w, cs__fstage *f)
{
    cs__root_at(n, lp, R, w->np);
    /* children CSR of the rooted tree, in increasing row order */
    for (int i = 0; i <= n; ++i) w->kf[i] = 0;
    for (int v = 0; v < n; ++v) if (w->np[v] >= 0) w->kf[w->np[v] + 1]++;
    for (int v = 0; v < n; ++v) w->kf[v + 1] += w->kf[v];
    for (int v = 0; v < n; ++v) w->nk[v] = w->kf[v];
    for (int v = 0; v < n; ++v) if (w->np[v] >= 0) w->kids[w->nk[w->np[v]]++] = v;
    for (int v = 0; v < n; ++v) w->nk[v] = w->kf[v + 1] - w->kf[v];

    f->n = n;
    /* raw branches first (branch-local scratch): start node → chain, discovered in BFS order */
    int *bstart = w->tmp; /* start nodes of the branches of the current level */
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
    int *it_first = w->it[0], *it_len = w->it[1], *it_raw = w->it[2], *it_par = w->it[3];
    int *nx_first = w->nx[0], *nx_len = w->nx[1], *nx_raw = w->nx[2], *nx_par = w->nx[3];
    int ncur = 1, nbr = 0, lev = 0;
    it_first[0] = rfirst[0]; it_len[0] = rlen[0]; it_raw[0] = 0; it_par[0] = -1;
    /* the output arrays br_* are written in level order; raw arrays were in br_first/len/parent
     * too, so copy the raw ones aside first */
    int *raw_first = w->raw_first, *raw_len = w->raw_len;
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
            f->br_parent[b] = it_par[i];
            if (tail) { /* the rest of this chain continues one level down */
                nx_first[nnext] = it_first[i] + len; nx_len[nnext] = tail; nx_raw[nnext] = it_raw[i];
                nx_par[nnext] = b; nnext++;
            } else {
                int rb = it_raw[i];
                for (int k = ckf[rb]; k < ckf[rb + 1]; ++k) {
                    int c = ckids[k];
                    nx_first[nnext] = raw_first[c]; nx_len[nnext] = raw_len[c]; nx_raw[nnext] = c;
                    nx_par[nnext] = b; nnext++;
                }
            }
        }
        ++lev;
        ncur = nnext;
        int *t;
        t = it_first; it_first = nx_first; nx_first = t;
        t = it_len; it_len = nx_len; nx_len = t;
        t = it_raw; it_raw = nx_raw; nx_raw = t;
        t = it_par; it_par = nx_par; nx_par = t;
    }
    f->lev_first[lev] = nbr;
    f->nlev = lev;
    f->nbr = nbr;
}

/* cost of a schedule for one system: the critical path of the level sweeps, in row steps, plus
 * a barrier's worth per level */
static double cs__fs_cost(const cs__fstage *f)
{
    double c = 0;
    for (int l = 0; l < f->nlev; ++l) {
        int m = 0;
        for (int b = f->lev_first[l]; b < f->lev_first[l + 1]; ++b) if (f->br_len[b] > m) m = f->br_len[b];
        c += m + 2.0;
    }
    return c;
}

/* the record of a staged schedule, in its exact size of the thread's blocks (want: a new block's
 * ints), with its branches' children (a branch's children are the next level's branches whose
 * parent it is) */
static int cs__fs_keep(const cs__fstage *s, cs__fstruct *f, cs__fsblock **blocks, size_t want)
{
    const size_t n = (size_t)s->n, nbr = (size_t)s->nbr;
    int *q = cs__fs_alloc(blocks, 2 * n + 5 * nbr + (size_t)s->nlev + 2, want);
    if (!q) return -1;
    f->n = s->n; f->nbr = s->nbr; f->nlev = s->nlev; f->nbranch_in = s->nbranch_in;
    f->chain = q; q += n;
    f->usrc = q; q += n;
    f->br_first = q; q += nbr;
    f->br_len = q; q += nbr;
    f->br_parent = q; q += nbr;
    f->lev_first = q; q += s->nlev + 1;
    f->kid_first = q; q += nbr + 1;
    f->kids = q;
    memcpy(f->chain, s->chain, sizeof(int) * n);
    memcpy(f->usrc, s->usrc, sizeof(int) * n);
    memcpy(f->br_first, s->br_first, sizeof(int) * nbr);
    memcpy(f->br_len, s->br_len, sizeof(int) * nbr);
    memcpy(f->br_parent, s->br_parent, sizeof(int) * nbr);
    memcpy(f->lev_first, s->lev_first, sizeof(int) * ((size_t)s->nlev + 1));
    /* children by a stable counting sort on the parent: ascending within each parent */
    int *kf = f->kid_first;
    for (size_t b = 0; b <= nbr; ++b) kf[b] = 0;
    for (size_t b = 0; b < nbr; ++b) if (f->br_parent[b] >= 0) kf[f->br_parent[b] + 1]++;
    for (size_t b = 0; b < nbr; ++b) kf[b + 1] += kf[b];
    for (size_t b = 0; b < nbr; ++b)
        if (f->br_parent[b] >= 0) f->kids[kf[f->br_parent[b]]++] = (int)b;
    for (size_t b = nbr; b > 0; --b) kf[b] = kf[b - 1]; /* the cursors ended at the next start */
    kf[0] = 0;
    return 0;
}

/* The schedule of one structure: re-rooted at the better of the tree-order root and the
 * centre of the longest path (minimises the tree's height in rows), then split. */
static int cs__plan_structure(int n, const int *lp, int flags, cs__fwork *w, cs__fstruct *out, cs__fsblock **blocks,
                              size_t want)
{
    if (n > w->cap) return -1;
    const int split = !(flags & CS_HINES_FINE_NO_SPLIT);
    const cs__fstage *best = &w->stage[0];
    cs__build_fstruct(n, lp, 0, split, w, &w->stage[0]);
    if (!(flags & CS_HINES_FINE_NO_REROOT) && n > 2) {
        cs__tree_adjacency_into(n, lp, w->adj_first, w->adj, w->tmp);
        const int c = cs__tree_centre(n, lp, w->adj_first, w->adj, w->dist, w->par, w->order);
        if (c != 0) {
            cs__build_fstruct(n, lp, c, split, w, &w->stage[1]);
            if (cs__fs_cost(&w->stage[1]) < cs__fs_cost(&w->stage[0])) best = &w->stage[1];
        }
    }
    return cs__fs_keep(best, out, blocks, want);
}

cs__fstruct *cs__fine_structs_build(int ns, const int *rep, const int *offset, const int *p, int max_n, int flags,
                                    int *lp_all, const long long *lp_first)
{
    cs__fstruct *fs = calloc((size_t)ns + 1, sizeof(cs__fstruct));
    if (!fs) return NULL;
    /* each structure alone (a thread's work area, its own record): on threads where there are
     * many (within another parallel region, as auto's trial's, one thread unless nesting is
     * allowed) */
    int failed = 0, nt = cs__plan_threads(ns, sizeof(int) * (37 * (size_t)max_n + 17));
    /* a new block: 4 MiB, or what every record could take at most (8 n + 2 ints) where less */
    size_t bound = 0;
    for (int k = 0; k < ns && bound < CS__FS_BLOCK_INTS; ++k) bound += 8 * (size_t)(offset[rep[k] + 1] - offset[rep[k]]) + 2;
    const size_t want = bound < CS__FS_BLOCK_INTS ? bound : CS__FS_BLOCK_INTS;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(| : failed)
    {
        cs__fwork w = {0};
        cs__fsblock *mine = NULL;
        int *lp = lp_all ? NULL : malloc(sizeof(int) * ((size_t)max_n + 1));
        failed = (!lp_all && !lp) || cs__fwork_init(&w, max_n);
#pragma omp for schedule(dynamic, 8)
        for (int k = 0; k < ns; ++k) {
            if (failed) continue;
            int s = rep[k], n = offset[s + 1] - offset[s];
            int *lpk = lp_all ? lp_all + lp_first[k] : lp; /* the caller's copy made here, on threads */
            for (int i = 0; i < n; ++i) lpk[i] = i ? p[offset[s] + i] - offset[s] : -1;
            failed = cs__plan_structure(n, lpk, flags, &w, &fs[k], &mine, want) != 0;
        }
        free(lp);
        free(w.block);
        if (mine) { /* the thread's blocks join the list, held by the terminal record */
            cs__fsblock *last = mine;
            while (last->next) last = last->next;
#pragma omp critical(cs__fs_blocks)
            {
                last->next = fs[ns].blocks;
                fs[ns].blocks = mine;
            }
        }
    }
    if (failed) { cs__fine_structs_free(fs, ns); return NULL; }
    return fs;
}

void cs__fine_structs_free(cs__fstruct *fs, int ns)
{
    if (!fs) return;
    for (cs__fsblock *b = fs[ns].blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(fs);
}

#define CS__NOMEM(ptr)                                                 \
    do {                                                               \
        if (!(ptr)) { st = CS_SOLVER_ERR_NOMEM; cs__plan_msg(msg, msglen, "out of memory"); goto fail; } \
    } while (0)

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

/* A level's tasks, listed by (cell, branch), ordered longer first, ties by (cell, branch): a
 * stable sort on the length alone (by insertion when few, else a radix sort of maxlen - len, 8
 * bits a pass, through tmp[k]); qsort with a three-key comparison took 5 % of the fine plan. */
static void cs__tk_sort(cs__tk *t, int k, cs__tk *tmp)
{
    if (k <= 32) {
        for (int i = 1; i < k; ++i) {
            const cs__tk x = t[i];
            int j = i;
            for (; j > 0 && t[j - 1].len < x.len; --j) t[j] = t[j - 1];
            t[j] = x;
        }
        return;
    }
    int mx = t[0].len, mn = t[0].len;
    for (int i = 1; i < k; ++i) { mx = t[i].len > mx ? t[i].len : mx; mn = t[i].len < mn ? t[i].len : mn; }
    const unsigned span = (unsigned)(mx - mn);
    cs__tk *src = t, *dst = tmp;
    for (int shift = 0; shift < 32 && (shift == 0 || span >> shift); shift += 8) {
        int count[257] = {0};
        for (int i = 0; i < k; ++i) count[(((unsigned)(mx - src[i].len) >> shift) & 255u) + 1]++;
        for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
        for (int i = 0; i < k; ++i) dst[count[((unsigned)(mx - src[i].len) >> shift) & 255u]++] = src[i];
        cs__tk *x = src; src = dst; dst = x;
    }
    if (src != t) memcpy(t, src, sizeof *t * (size_t)k);
}

/* schedule bytes of one type as the warp and fine kernels stage it (cs__stage_schedule): tasks
 * (int4, the sentinel included), level starts and children, 16-byte aligned */
int cs__hines_type_sched_bytes(const cs__hines_hplan *hp, int t)
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
        const int sched = cs__hines_type_sched_bytes(hp, t);
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

/* A pack type as the packing found it: its first pack (cells order[qfirst .. qfirst + nc)), its
 * rows and levels, its tasks (the sentinel included) and children, and where its schedule and
 * row maps go in the plan's arrays (task0: in tasks, lev0: in level_start, kid0, lmap0). */
typedef struct { int qfirst, nc, rows, nlev, ntk, nkid, task0, lev0, kid0, lmap0; } cs__ptype;

/* work of cs__type_schedule for types of up to ntk tasks, nc cells, nlev levels */
typedef struct { cs__tk *tk, *tk2; int *bpos, *boff, *lev_tk; } cs__tywork;

static int cs__tywork_init(cs__tywork *w, int ntk, int nc, int nlev)
{
    w->tk = malloc(sizeof(cs__tk) * (size_t)(ntk + 1));
    w->tk2 = malloc(sizeof(cs__tk) * (size_t)(ntk + 1));
    w->bpos = malloc(sizeof(int) * (size_t)(ntk + 1)); /* first row of (cell, branch) */
    w->boff = malloc(sizeof(int) * (size_t)(nc + 1));  /* branch id offset of each cell */
    w->lev_tk = malloc(sizeof(int) * (size_t)(nlev + 1));
    return w->tk && w->tk2 && w->bpos && w->boff && w->lev_tk ? 0 : -1;
}
static void cs__tywork_free(cs__tywork *w)
{
    free(w->tk); free(w->tk2); free(w->bpos); free(w->boff); free(w->lev_tk);
}

/* The schedule of pack type y, whose cells have the structures sk[0 .. nc): its tasks by level,
 * then longer first, a branch's rows placed after the previous task's; the level starts, tasks
 * (position, length, parent row, first child; then a sentinel), children and row maps, written
 * at the type's places in the plan's arrays (each type alone: types are planned on threads). */
static void cs__type_schedule(const cs__fstruct *fs, const int *sk, const cs__ptype *y, int flags, cs__tywork *w,
                              int *tasks, int *kids, int *lst, int *lmap, int *lusrc)
{
    const int nc = y->nc, nlev = y->nlev;
    cs__tk *tk = w->tk;
    int *bpos = w->bpos, *boff = w->boff, *lev_tk = w->lev_tk;
    boff[0] = 0;
    for (int c = 0; c < nc; ++c) boff[c + 1] = boff[c] + fs[sk[c]].nbr;
    /* order of tasks: by level, then by length (descending) */
    int ntk = 0, pos = 0;
    for (int l = 0; l < nlev; ++l) {
        lev_tk[l] = ntk;
        int l0 = ntk;
        for (int c = 0; c < nc; ++c) {
            const cs__fstruct *f = &fs[sk[c]];
            if (l >= f->nlev) continue;
            for (int b = f->lev_first[l]; b < f->lev_first[l + 1]; ++b) {
                tk[ntk].len = f->br_len[b]; tk[ntk].cell = c; tk[ntk].br = b; ntk++;
            }
        }
        if (!(flags & CS_HINES_FINE_NO_SORT)) cs__tk_sort(tk + l0, ntk - l0, w->tk2); /* else (cell, branch) as listed */
        for (int i = l0; i < ntk; ++i) { bpos[boff[tk[i].cell] + tk[i].br] = pos; pos += tk[i].len; }
    }
    lev_tk[nlev] = ntk;
    for (int l = 0; l <= nlev; ++l) lst[y->lev0 + l] = y->task0 + lev_tk[l];
    int *tq = tasks + 4 * (size_t)y->task0, nk = y->kid0;
    for (int i = 0; i < ntk; ++i, tq += 4) {
        int c = tk[i].cell, b = tk[i].br;
        const cs__fstruct *f = &fs[sk[c]];
        int pbr = f->br_parent[b];
        tq[0] = bpos[boff[c] + b];
        tq[1] = f->br_len[b];
        tq[2] = pbr < 0 ? -1 : bpos[boff[c] + pbr] + f->br_len[pbr] - 1;
        tq[3] = nk;
        /* children: the branches whose parent is b (next level), ascending */
        for (int k = f->kid_first[b]; k < f->kid_first[b + 1]; ++k) kids[nk++] = bpos[boff[c] + f->kids[k]];
    }
    tq[0] = 0; tq[1] = 0; tq[2] = -1; tq[3] = nk; /* sentinel */
    /* row maps of each cell of the type (every row once: the chain holds each once) */
    for (int c = 0, m0 = y->lmap0; c < nc; m0 += fs[sk[c]].n, ++c) {
        const cs__fstruct *f = &fs[sk[c]];
        for (int b = 0; b < f->nbr; ++b)
            for (int j = 0; j < f->br_len[b]; ++j) {
                int qq = f->br_first[b] + j, v = f->chain[qq];
                lmap[m0 + v] = bpos[boff[c] + b] + j;
                lusrc[m0 + v] = f->usrc[qq];
            }
    }
}

/* fine fuses packs of several small distinct cells from this many packs a multiprocessor (and
 * packs such cells smaller where its usual packs would be fewer) */
#define CS__FINE_SMALL_PACKS 3

/* the fine solver */
cs_solver_status cs__plan_fine(cs__hines_hplan *hp, const int *p, const int *sid, const int *rep, const cs__fstruct *fs,
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
    hp->threads_auto = !warp && opt->threads <= 0;
    hp->fine_flags = flags;
    /* the structures' schedules: the caller's (shared with other plans: read only) or its own */
    cs__fstruct *own = NULL;
    int *order = malloc(sizeof(int) * (nsys + 1)), *cnt = calloc((size_t)ns + 1, sizeof(int));
    int *wpack = NULL, *key = NULL;
    cs__ptype *ty = NULL;
    cs__keymap types;
    int km_ok = 0;
    cs__ivec pb = {0}, pt = {0}, tinfo = {0};
    CS__NOMEM(order); CS__NOMEM(cnt);
    if (!fs) {
        fs = own = cs__fine_structs_build(ns, rep, hp->offset, p, hp->max_n, flags, NULL, NULL);
        CS__NOMEM(own);
    }
    int maxlev = 1, failed = 0, nt;
    for (int k = 0; k < ns; ++k)
        if (fs[k].nlev > maxlev) maxlev = fs[k].nlev;
    for (int s = 0; s < nsys; ++s) { hp->nbranch_in += fs[sid[s]].nbranch_in; hp->nbranch_out += fs[sid[s]].nbr; }
    /* systems grouped by structure (stable) so that packs repeat and share their schedule */
    for (int s = 0; s < nsys; ++s) cnt[sid[s] + 1]++;
    for (int k = 0; k < ns; ++k) cnt[k + 1] += cnt[k];
    for (int s = 0; s < nsys; ++s) order[cnt[sid[s]]++] = s;
    /* cap on systems per pack so that small batches still fill the device: 2 packs a
     * multiprocessor; 5 where most cells are distinct and these packs would be fewer than the 3
     * a multiprocessor of the fused step's rule below (distinct busyring trees, H100: × 1 024
     * 0.0217 → 0.0195 s, × 2 048 0.0261 → 0.0225 s, now fused; × 4 096, already fused in ~9
     * cells a pack, lost in packs of 6: 0.0288 → 0.0391 s; bench/NOTES.md, session 29) */
    const int msm = nsm > 0 ? nsm : 132;
    int cap = nsys / (2 * msm);
    if (cap < 1) cap = 1;
    const long long by_rows = hp->offset[nsys] / R, by_cap = (nsys + cap - 1) / cap; /* the packs, at least */
    if (!warp && !(flags & CS_HINES_FINE_PACK_CAP_TWO) && 2LL * ns >= nsys &&
        (by_rows > by_cap ? by_rows : by_cap) < (long long)CS__FINE_SMALL_PACKS * msm)
        cap = nsys / (5 * msm);
    if (cap < 1) cap = 1;
    wpack = calloc((size_t)maxlev, sizeof(int));
    key = malloc(sizeof(int) * (nsys + 1));
    CS__NOMEM(wpack); CS__NOMEM(key);
    if (cs__km_init(&types, 64)) { st = CS_SOLVER_ERR_NOMEM; cs__plan_msg(msg, msglen, "out of memory"); goto fail; }
    km_ok = 1;
    hp->cell_base = malloc(sizeof(int) * (nsys + 1));
    hp->cell_map = malloc(sizeof(int) * (nsys + 1));
    CS__NOMEM(hp->cell_base); CS__NOMEM(hp->cell_map);
    hp->cell_stride = 1;
    /* 1. the packs and their types, with each type's sizes and places (one pass, in order) */
    long long base = 0, ntask = 0, nkid = 0, nlst = 0, nlm = 0;
    int q = 0, max_rows = 0, max_levels = 0, ycap = 0, max_ntk = 0, max_nc = 0;
    while (q < nsys) {
        /* greedy: add systems while rows, the cap and every level's branch count fit */
        const int q0 = q;
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
            ++nc;
            ++q;
        }
        if (base + rows > INT_MAX) {
            cs__plan_msg(msg, msglen, "the internal layout exceeds %d elements", INT_MAX);
            st = CS_SOLVER_ERR_INVALID;
            goto fail;
        }
        if (rows > max_rows) max_rows = rows;
        for (int c = 0; c < nc; ++c) key[c] = sid[order[q0 + c]];
        int is_new = 0;
        int t = cs__km_get(&types, key, nc, &is_new);
        if (t < 0) { st = CS_SOLVER_ERR_NOMEM; cs__plan_msg(msg, msglen, "out of memory"); goto fail; }
        if (is_new) {
            if (t >= ycap) {
                ycap = 2 * ycap + 64;
                cs__ptype *y2 = realloc(ty, sizeof *ty * (size_t)ycap);
                CS__NOMEM(y2);
                ty = y2;
            }
            cs__ptype *y = &ty[t];
            y->qfirst = q0; y->nc = nc; y->rows = rows; y->nlev = 0; y->ntk = 0; y->nkid = 0;
            for (int c = 0; c < nc; ++c) {
                const cs__fstruct *f = &fs[key[c]];
                if (f->nlev > y->nlev) y->nlev = f->nlev;
                y->ntk += f->nbr;
                y->nkid += f->kid_first[f->nbr];
            }
            if (ntask + y->ntk + 1 > INT_MAX / 4 || nlm + rows > INT_MAX) {
                cs__plan_msg(msg, msglen, "the schedules exceed %d elements", INT_MAX);
                st = CS_SOLVER_ERR_INVALID;
                goto fail;
            }
            y->task0 = (int)ntask; y->lev0 = (int)nlst; y->kid0 = (int)nkid; y->lmap0 = (int)nlm;
            ntask += y->ntk + 1; nlst += y->nlev + 1; nkid += y->nkid; nlm += rows;
            if (y->nlev > max_levels) max_levels = y->nlev;
            if (y->ntk > max_ntk) max_ntk = y->ntk;
            if (nc > max_nc) max_nc = nc;
            if (cs__iv_push(&tinfo, y->task0) | cs__iv_push(&tinfo, y->lev0) | cs__iv_push(&tinfo, y->nlev) | cs__iv_push(&tinfo, rows)) {
                st = CS_SOLVER_ERR_NOMEM; cs__plan_msg(msg, msglen, "out of memory"); goto fail;
            }
        }
        /* the pack */
        if (cs__iv_push(&pb, (int)base) || cs__iv_push(&pt, t)) { st = CS_SOLVER_ERR_NOMEM; cs__plan_msg(msg, msglen, "out of memory"); goto fail; }
        int moff = ty[t].lmap0;
        for (int c = 0; c < nc; ++c) {
            int s = order[q0 + c];
            hp->cell_base[s] = (int)base;
            hp->cell_map[s] = moff;
            moff += hp->offset[s + 1] - hp->offset[s];
        }
        base += rows;
    }
    hp->internal_size = (int)base;
    hp->npack = pb.n; hp->pack_base = pb.a; hp->pack_type = pt.a; pb.a = pt.a = NULL;
    hp->ntype = tinfo.n / 4; hp->type_info = tinfo.a; tinfo.a = NULL;
    /* 2. the types' schedules, each alone into its places: on threads where there are many */
    hp->nlevel_start = (int)nlst; hp->level_start = malloc(sizeof(int) * (size_t)(nlst > 0 ? nlst : 1));
    hp->ntask = (int)ntask; hp->tasks = malloc(sizeof(int) * 4 * (size_t)(ntask > 0 ? ntask : 1));
    hp->nchild = (int)nkid; hp->children = malloc(sizeof(int) * (size_t)(nkid > 0 ? nkid : 1));
    hp->nlmap = (int)nlm; hp->lmap = malloc(sizeof(int) * (size_t)(nlm > 0 ? nlm : 1));
    hp->lusrc = malloc(sizeof(int) * (size_t)(nlm > 0 ? nlm : 1));
    CS__NOMEM(hp->level_start); CS__NOMEM(hp->tasks); CS__NOMEM(hp->children); CS__NOMEM(hp->lmap); CS__NOMEM(hp->lusrc);
    hp->children[0] = 0; /* (none: one 0, as the kernels read it) */
    const int ntype = hp->ntype;
    nt = cs__plan_threads(ntype, sizeof(cs__tk) * 2 * ((size_t)max_ntk + 1) + sizeof(int) * ((size_t)max_ntk + 2 * (size_t)max_nc + max_levels + 4));
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(| : failed)
    {
        cs__tywork w;
        int *sk = malloc(sizeof(int) * (size_t)(max_nc + 1));
        failed = cs__tywork_init(&w, max_ntk, max_nc, max_levels) || !sk;
#pragma omp for schedule(dynamic, 8)
        for (int t = 0; t < ntype; ++t) {
            if (failed) continue;
            for (int c = 0; c < ty[t].nc; ++c) sk[c] = sid[order[ty[t].qfirst + c]];
            cs__type_schedule(fs, sk, &ty[t], flags, &w, hp->tasks, hp->children, hp->level_start, hp->lmap, hp->lusrc);
        }
        cs__tywork_free(&w);
        free(sk);
    }
    if (failed) { st = CS_SOLVER_ERR_NOMEM; cs__plan_msg(msg, msglen, "out of memory"); goto fail; }
    hp->max_pack_rows = max_rows;
    hp->max_levels = max_levels;
    if (warp) {
        if (cs__plan_warp_blocks(hp, opt->fine_pack_rows > 0 ? opt->fine_pack_rows : CS__WARP_BLOCK_ROWS, nsm)) {
            st = CS_SOLVER_ERR_NOMEM; cs__plan_msg(msg, msglen, "out of memory"); goto fail;
        }
        snprintf(hp->describe, sizeof hp->describe,
                 "warp blocks=%d launches=%d warps<=%d rows<=%d packs=%d types=%d max_pack_rows=%d schedule=%dB levels<=%d branches %lld->%lld%s%s%s",
                 hp->nblock, hp->nlaunch, hp->block_warps, hp->block_rows, hp->npack, hp->ntype, max_rows, hp->sched_bytes, max_levels,
                 hp->nbranch_in, hp->nbranch_out, (flags & CS_HINES_FINE_NO_REROOT) ? " no-reroot" : "",
                 (flags & CS_HINES_FINE_NO_SPLIT) ? " no-split" : "", (flags & CS_HINES_FINE_NO_SORT) ? " no-sort" : "");
    }
    /* fine's fused step where it was measured faster (bench/NOTES.md, sessions 21 and 28, H100):
     * - packs of one large cell each (on average more rows than a default pack, 1 536): distinct
     *   cells of 2 000-3 225 rows (big2000 × 8 000) 1.86e10 cs/s fused against 1.14e10 with the
     *   assembly kernel;
     * - packs of several small cells, each pack of its own cells (types for at least half the
     *   packs) and at least 3 packs a multiprocessor, with u and the schedule staged in shared
     *   memory (their short levels waited on those loads): distinct busyring trees × 4 096, 8 192,
     *   16 384, 65 536 and 262 144 (3.3 to 214 packs a multiprocessor): 0.041 → 0.029 s,
     *   0.074 → 0.060, 0.125 → 0.097, 0.419 → 0.309, 0.790 → 0.580 s. Fewer packs were not
     *   faster as a rule: × 2 048 (1.7 a multiprocessor) 0.026 → 0.036 s, × 1 024 (2.6) 0.0216
     *   → 0.0205.
     * Packs that repeat a few cell types lost fused (the nine real cells × 2 048, 13 types over
     * 10 231 packs: 0.668 s unfused, 0.840 fused with u in shared memory). */
    const int one_cell_packs = (long long)hp->internal_size > 1536LL * hp->npack;
    const int many_small = !one_cell_packs && !(flags & CS_HINES_FINE_STEP_LARGE_ONLY) && 2LL * hp->ntype >= hp->npack &&
                           hp->npack >= (long long)CS__FINE_SMALL_PACKS * msm;
    hp->fine_fuses = !warp && ((flags & CS_HINES_FINE_STEP_ALWAYS) || one_cell_packs || many_small);
    if (hp->fine_fuses && many_small && !(flags & (CS_HINES_FINE_STEP_ALWAYS | CS_HINES_FINE_D_GLOBAL)))
        hp->fine_flags |= CS_HINES_FINE_U_SHARED;
    if (!warp)
    snprintf(hp->describe, sizeof hp->describe,
             "fine threads=%d packs=%d types=%d max_pack_rows=%d levels<=%d branches %lld->%lld%s%s%s%s",
             T, hp->npack, hp->ntype, max_rows, max_levels, hp->nbranch_in, hp->nbranch_out,
             hp->fine_fuses && (hp->fine_flags & CS_HINES_FINE_U_SHARED) ? " u-shared" : "",
             (flags & CS_HINES_FINE_NO_REROOT) ? " no-reroot" : "", (flags & CS_HINES_FINE_NO_SPLIT) ? " no-split" : "",
             (flags & CS_HINES_FINE_NO_SORT) ? " no-sort" : "");
fail:
    cs__fine_structs_free(own, ns);
    free(order); free(cnt); free(wpack); free(key); free(ty);
    if (km_ok) cs__km_free(&types);
    free(pb.a); free(pt.a); free(tinfo.a);
    return st;
}
