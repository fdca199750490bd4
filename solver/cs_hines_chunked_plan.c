/* Host side of the "chunked" GPU Hines variant (plain C, no CUDA): a partition ("multisplit")
 * solve that shortens the critical path of long unbranched sections.
 *
 * Every unbranched run of at least 2·L rows (a chain in which each row but the last has one
 * child) is cut, where cutting pays (cs__chunked_pays: otherwise a level cuts nothing and its
 * solve is its fine plan's alone; L, when not given, from cs__chunked_pick_L), into consecutive chunks of at most L interior rows: a chunk is its top row a, its
 * interior a+1 .. b-1 (along the chain) and its bottom row b; chunks of one run do not share rows,
 * so every row outside the interiors is touched by one chunk at most. Eliminating a chunk's
 * interior (a symmetric tridiagonal block) leaves the Schur complement on (a, b): new d_a, d_b,
 * rhs_a, rhs_b and a coupling u'_ab between them. The rows that are not interiors form the
 * REDUCED tree, in which b's parent is a: again a Hines tree (cs_solver.h), planned (by
 * cs_hines_plan.c, between cs__chunked_reduce and cs__chunked_layout) as "fine", or as "chunked" again while it still has runs of 2·L rows (one long cable: 100 000 →
 * ~11 000 → ~1 200 → ~140 rows). A solve is
 *   P1  one thread per chunk: the interior eliminated from its bottom up, with the fill coupling
 *       G to b carried along (the interior is read, not written): d_a, rhs_a, d_b, rhs_b updated
 *       in place, u'_ab written to a copy of the reduced layout's u (u is const, and u'_ab
 *       depends on d, which changes every step);
 *   P2  the reduced tree solved by its own plan (x_a and x_b land in rhs);
 *   P3  one thread per chunk: the interior again from the original d, u, rhs, now with x_b known
 *       (bottom-up elimination kept in registers), then x from x_a downwards.
 * Recomputing in P3 instead of storing the fill keeps the traffic of an interior row at 24 B read
 * in P1 and 24 B read + 8 B written in P3 (bench/NOTES.md, "Session 16"). The fused step
 * (cs_hines_gpu_step_internal_d) assembles the rows instead of reading d and rhs: the reduced
 * rows first (d into work_a, rhs into v itself, which the reduced tree's solve then overwrites
 * with their solution), the interiors in P1 and again in P3 from d0, cdt, b0, v (and i, g at
 * rows with current; P3, their last reader, zeroes them), so an interior row moves 41 B in P1
 * and 49 B in P3, and no d or rhs is stored (bench/NOTES.md, "Session 21"). The kernels
 * (cs_hines_chunked_gpu.cu) and the host emulation (cs__chunked_p1_host, cs__chunked_p3_host,
 * around cs__hines_hplan_solve_host; the fused step's, around cs__hines_hplan_step_host) run the
 * same operations in the same order.
 *
 * Set-up only; nothing here runs per solve except the host emulation. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_hines_gpu_impl.h"

static void cs__chk_msg(char *msg, size_t len, const char *fmt, ...)
{
    if (!msg || !len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
}

typedef struct {
    int a, b, m; /* global rows a, b; m interior rows between them (p[b], p[p[b]], ... up to a) */
} cs__chunk;

/* The only child of every row (global parents p, nrows rows): kid[r] >= 0 where r has one
 * child, -1 where it has several, -2 where none; one array, not counts and children (at 16 M
 * rows each array is 64 MB of fresh pages to fault in, session 21). */
static void cs__chk_only_kid(int nrows, const int *p, int *kid)
{
    for (int r = 0; r < nrows; ++r) kid[r] = -2;
    for (int r = 0; r < nrows; ++r)
        if (p[r] >= 0) kid[p[r]] = kid[p[r]] == -2 ? r : -1;
}

/* ---- how much cutting pays (the automatic L, the no-cut rule, "auto") ------------------------ */
/* A run of n rows at chunk length L: its rows in the reduced tree once every level has cut it
 * (spans of at most L + 2 rows: k chunks leave 2k rows, cs__chunked_reduce's rule), and the levels. */
static int cs__chk_run_final(int n, int L, int *levels)
{
    int lev = 0;
    while (n >= 2 * L) { n = 2 * ((n + L + 1) / (L + 2)); ++lev; }
    *levels = lev;
    return n;
}

/* The unbranched runs of a batch, by their first row (a run's parent run comes first): the only
 * child of every row (kid, cs__chk_only_kid's, but -1 for none too), and per run its first and
 * last rows, its length and its parent run (-1 at a root). Found once for the estimates and the
 * cut (a pass over 16 M rows and 64 MB of fresh pages each time, session 21). */
typedef struct {
    int nrun;
    int *kid, *start, *last, *len, *prun;
} cs__chk_runs;

static void cs__chk_runs_free(cs__chk_runs *u)
{
    free(u->kid); free(u->start); free(u->last); free(u->len); free(u->prun);
    memset(u, 0, sizeof *u);
}

static int cs__chk_runs_find(int nrows, const int *p, cs__chk_runs *u)
{
    memset(u, 0, sizeof *u);
    int *kid = u->kid = malloc(sizeof(int) * (size_t)(nrows > 0 ? nrows : 1));
    if (!kid) return -1;
    cs__chk_only_kid(nrows, p, kid);
    int nrun = 0;
    for (int r = 0; r < nrows; ++r) nrun += p[r] < 0 || kid[p[r]] < 0;
    const size_t nq = (size_t)(nrun > 0 ? nrun : 1);
    u->start = malloc(sizeof(int) * nq);
    u->last = malloc(sizeof(int) * nq);
    u->len = malloc(sizeof(int) * nq);
    u->prun = malloc(sizeof(int) * nq);
    if (!u->start || !u->last || !u->len || !u->prun) { cs__chk_runs_free(u); return -1; }
    nrun = 0;
    for (int r = 0; r < nrows; ++r) {
        if (p[r] >= 0 && kid[p[r]] >= 0) continue;
        int n = 1, c = r;
        for (; kid[c] >= 0; c = kid[c]) ++n;
        /* a run's first row hangs from the last row of its parent run (a row without one
         * child), which an earlier run marked with its number (-3 - run) */
        u->prun[nrun] = p[r] < 0 ? -1 : -3 - kid[p[r]];
        u->start[nrun] = r;
        u->last[nrun] = c;
        u->len[nrun] = n;
        kid[c] = -3 - nrun++;
    }
    for (int q = 0; q < nrun; ++q) kid[u->last[q]] = -1; /* the marks: not one child */
    u->nrun = nrun;
    return 0;
}

/* cs__chunked_estimate on the runs found; dep: nrun ints of work */
static void cs__chk_estimate_runs(const cs__chk_runs *u, int nL, const int *Ls, int *dep, cs__chk_estimate *est)
{
    for (int i = 0; i <= nL; ++i) { /* i = nL: uncut */
        const int L = i < nL ? Ls[i] : INT_MAX / 4;
        long long interior = 0;
        int levels = 0, path = 0;
        for (int q = 0; q < u->nrun; ++q) { /* dep[q]: rows from the root to the run's last */
            int lev;
            const int n = u->len[q], f = cs__chk_run_final(n, L, &lev);
            if (n >= 2 * L) interior += n - 2 * ((n + L + 1) / (L + 2));
            if (lev > levels) levels = lev;
            const int dd = (u->prun[q] < 0 ? 0 : dep[u->prun[q]]) + f;
            dep[q] = dd;
            if (dd > path) path = dd;
        }
        if (i < nL) { est[i].L = L; est[i].interior = interior; est[i].levels = levels; est[i].path = path; }
        else for (int j = 0; j < nL; ++j) est[j].path0 = path;
    }
}

/* the automatic L on the runs found (16 on ties), and its estimate; -1 when out of memory */
static int cs__chk_pick_L_runs(const cs__chk_runs *u, cs__chk_estimate *chosen)
{
    static const int Ls[3] = {16, 8, 32}; /* 16 first: it keeps ties */
    cs__chk_estimate e[3];
    int *dep = malloc(sizeof(int) * (size_t)(u->nrun > 0 ? u->nrun : 1));
    if (!dep) return -1;
    cs__chk_estimate_runs(u, 3, Ls, dep, e);
    free(dep);
    int best = 0;
    for (int i = 1; i < 3; ++i)
        if (cs__chunked_cost(&e[i]) < cs__chunked_cost(&e[best])) best = i;
    *chosen = e[best];
    return Ls[best];
}

int cs__chunked_estimate(int nrows, const int *p, int nL, const int *Ls, cs__chk_estimate *est)
{
    cs__chk_runs u;
    if (cs__chk_runs_find(nrows, p, &u)) return -1;
    int *dep = malloc(sizeof(int) * (size_t)(u.nrun > 0 ? u.nrun : 1));
    if (dep) cs__chk_estimate_runs(&u, nL, Ls, dep, est);
    free(dep);
    cs__chk_runs_free(&u);
    return dep ? 0 : -1;
}

long long cs__chunked_cost(const cs__chk_estimate *e)
{
    return 2LL * e->path + (long long)(CS__CHK_LEVEL_STEPS + e->L) * e->levels;
}

int cs__chunked_pays(const cs__chk_estimate *e, int nrows)
{
    if (e->interior <= 0) return 0;
    /* fine's critical path is ~2·path0 (two sweeps): cutting pays when it shortens it by 1/8 */
    return e->interior * CS__CHK_MIN_SHARE >= nrows || CS__CHK_MIN_SHARE * cs__chunked_cost(e) <= (CS__CHK_MIN_SHARE - 1) * 2LL * e->path0;
}

int cs__chunked_pick_L_est(int nrows, const int *p, cs__chk_estimate *chosen)
{
    cs__chk_runs u;
    cs__chk_estimate e = {0};
    const int L = cs__chk_runs_find(nrows, p, &u) ? -1 : cs__chk_pick_L_runs(&u, &e);
    cs__chk_runs_free(&u);
    if (chosen) *chosen = e;
    return L < 0 ? CS__CHK_DEFAULT_L : L;
}

int cs__chunked_pick_L(int nrows, const int *p) { return cs__chunked_pick_L_est(nrows, p, NULL); }

int cs__chunked_auto(int nrows, const int *p, int L)
{
    cs__chk_estimate e = {0};
    if (L < CS__CHK_MIN_L || L > CS__CHK_MAX_L) L = cs__chunked_pick_L_est(nrows, p, &e);
    if (e.L != L && cs__chunked_estimate(nrows, p, 1, &L, &e) < 0) return 0;
    return e.interior * CS__CHK_MIN_SHARE >= nrows && cs__chunked_cost(&e) <= e.path0;
}

void cs__chunked_release(cs__hines_hplan *hp)
{
    free(hp->chk_chunk); free(hp->chk_group);
    hp->chk_chunk = hp->chk_group = NULL;
}

/* what cs__chunked_reduce found, for cs__chunked_layout */
typedef struct {
    cs__chunk *ch;
    int nch, nrow_list, nr;
    const int *p; /* the global parents (the caller's): the chunks' interiors from their b up */
    int *newidx;  /* per global row: its reduced row, -2 for an interior row (while reducing: the
                     runs' only-child array, then -2 at interiors, -3 - c at the bottom row of
                     chunk c, the rest >= -1, overwritten in tree order) */
    int *full_of; /* per reduced row: its global row */
} cs__chk_work;

void cs__chunked_reduced_free(cs__chk_reduced *red)
{
    cs__chk_work *w = red->work;
    if (w) { free(w->ch); free(w->newidx); free(w->full_of); free(w); }
    free(red->offset_r); free(red->p_r);
    memset(red, 0, sizeof *red);
}

cs_solver_status cs__chunked_reduce(cs__hines_hplan *hp, const int *p, const cs_hines_gpu_options *opt,
                                    cs__chk_reduced *red, char *msg, size_t msglen)
{
    memset(red, 0, sizeof *red);
    int L = opt->block_size;
    if (L && (L < CS__CHK_MIN_L || L > CS__CHK_MAX_L)) {
        cs__chk_msg(msg, msglen, "chunked: block_size (interior rows per chunk) must be %d..%d, not %d", CS__CHK_MIN_L,
                    CS__CHK_MAX_L, L);
        return CS_SOLVER_ERR_INVALID;
    }
    const int nsys = hp->nsys, nrows = hp->nrows;
    const int *offset = hp->offset;
    cs_solver_status st = CS_SOLVER_ERR_NOMEM;
    cs__chk_work *w = calloc(1, sizeof *w);
    red->work = w;
    cs__chk_runs u = {0};
    int *chain = malloc(sizeof(int) * (size_t)hp->max_n);
    red->offset_r = malloc(sizeof(int) * ((size_t)nsys + 1));
    red->p_r = malloc(sizeof(int) * (size_t)nrows);
    if (!w || !chain || !red->offset_r || !red->p_r) goto done;
    w->p = p;
    w->full_of = malloc(sizeof(int) * (size_t)nrows);
    if (!w->full_of || cs__chk_runs_find(nrows, p, &u)) goto done;
    /* L: as given, or the automatic one (cs__chunked_pick_L's); nothing is cut where it does not
     * pay (cs__chunked_pays): the plan is then its fine plan */
    cs__chk_estimate est;
    if (!L) {
        if ((L = cs__chk_pick_L_runs(&u, &est)) < 0) goto done;
    } else {
        int *dep = malloc(sizeof(int) * (size_t)(u.nrun > 0 ? u.nrun : 1));
        if (!dep) goto done;
        cs__chk_estimate_runs(&u, 1, &L, dep, &est);
        free(dep);
    }
    hp->chk_L = L;
    const int cut = cs__chunked_pays(&est, nrows);
    if (!cut && (opt->fine_flags & CS_HINES_CHUNKED_CUT_ONLY)) { /* the caller has fine's plan */
        st = CS_SOLVER_ERR_INVALID;
        cs__chk_msg(msg, msglen, "chunked: it would cut nothing (CS_HINES_CHUNKED_CUT_ONLY: no plan)");
        goto done;
    }
    /* chunks: the runs of at least 2 L rows, by their first row */
    long long nch = 0;
    for (int q = 0; cut && q < u.nrun; ++q)
        if (u.len[q] >= 2 * L) nch += (u.len[q] + L + 1) / (L + 2);
    if (nch > INT_MAX) { st = CS_SOLVER_ERR_INVALID; cs__chk_msg(msg, msglen, "chunked: %lld chunks (more than an int)", nch); goto done; }
    w->ch = malloc(sizeof *w->ch * (size_t)(nch > 0 ? nch : 1));
    if (!w->ch) goto done;
    /* newidx takes over the only-child array (no third array of rows): a run reads its own rows'
     * entries (its chain) before it marks them, and every entry is >= -1 (runs' ends -1) */
    w->newidx = u.kid;
    u.kid = NULL;
    for (int ru = 0; cut && ru < u.nrun; ++ru) {
        const int n = u.len[ru];
        if (n < 2 * L) continue;
        chain[0] = u.start[ru];
        for (int j = 1; j < n; ++j) chain[j] = w->newidx[chain[j - 1]];
        const int k = (n + L + 1) / (L + 2); /* spans of at most L + 2 rows (at least 3 for L >= 4) */
        for (int q = 0; q < k; ++q) {
            const int s0 = (int)((long long)q * n / k), s1 = (int)((long long)(q + 1) * n / k);
            cs__chunk *c = &w->ch[w->nch];
            c->a = chain[s0];
            c->b = chain[s1 - 1];
            c->m = s1 - s0 - 2;
            w->nrow_list += c->m;
            for (int j = 0; j < c->m; ++j) w->newidx[chain[s0 + 1 + j]] = -2;
            w->newidx[c->b] = -3 - w->nch++;
        }
    }
    /* the reduced tree: the rows that are not interiors, in tree order; b hangs from a */
    int nr = 0;
    for (int s = 0; s < nsys; ++s) {
        red->offset_r[s] = nr;
        for (int r = offset[s]; r < offset[s + 1]; ++r) {
            if (w->newidx[r] == -2) continue;
            const int bottom_of = w->newidx[r] <= -3 ? -3 - w->newidx[r] : -1; /* the chunk r ends */
            w->full_of[nr] = r;
            w->newidx[r] = nr;
            red->p_r[nr] = p[r] < 0 ? -1 : bottom_of >= 0 ? w->newidx[w->ch[bottom_of].a] : w->newidx[p[r]];
            ++nr;
        }
    }
    red->offset_r[nsys] = nr;
    w->nr = nr;
    /* chunked again while cutting its runs pays (it then has fewer rows: the recursion ends) */
    cs__chk_estimate est_r;
    if (w->nch > 0 && cs__chunked_estimate(nr, red->p_r, 1, &L, &est_r) < 0) goto done;
    red->sub_variant = w->nch > 0 && cs__chunked_pays(&est_r, nr) ? CS__HV_CHUNKED : CS__HV_FINE;
    st = CS_SOLVER_OK;
done:
    if (st == CS_SOLVER_ERR_NOMEM) cs__chk_msg(msg, msglen, "out of memory");
    cs__chk_runs_free(&u);
    free(chain);
    return st;
}

cs_solver_status cs__chunked_layout(cs__hines_hplan *hp, const cs_hines_gpu_options *opt, const cs__chk_reduced *red,
                                    char *msg, size_t msglen)
{
    const cs__chk_work *w = red->work;
    const cs__hines_hplan *sub = hp->chk_sub;
    const int nsys = hp->nsys, nrows = hp->nrows, nch = w->nch, NR = sub->internal_size;
    const int *offset = hp->offset, *offset_r = red->offset_r;
    cs_solver_status st = CS_SOLVER_ERR_NOMEM;
    int *order = malloc(sizeof(int) * 2 * (size_t)(nch > 0 ? nch : 1));
    int *slot_of_src = malloc(sizeof(int) * (size_t)(w->nr > 0 ? w->nr : 1));
    if (!order || !slot_of_src) goto done;
    /* groups of 32 chunks of similar length: {m, index} by m descending, then the order found
     * (a stable counting sort: m is 0 .. CS__CHK_MAX_L) */
    {
        int at[CS__CHK_MAX_L + 2] = {0};
        for (int c = 0; c < nch; ++c) at[CS__CHK_MAX_L - w->ch[c].m + 1]++;
        for (int k = 0; k <= CS__CHK_MAX_L; ++k) at[k + 1] += at[k];
        for (int c = 0; c < nch; ++c) {
            const int q = at[CS__CHK_MAX_L - w->ch[c].m]++;
            order[2 * q] = w->ch[c].m;
            order[2 * q + 1] = c;
        }
    }
    const int ngroup = (nch + CS__CHK_LANES - 1) / CS__CHK_LANES;
    hp->chk_group = malloc(sizeof(int) * 2 * (size_t)(ngroup > 0 ? ngroup : 1));
    hp->chk_chunk = malloc(sizeof(int) * 4 * (size_t)(nch > 0 ? nch : 1));
    if (!hp->chk_group || !hp->chk_chunk) goto done;
    long long size = NR;
    for (int g = 0; g < ngroup; ++g) {
        const int M = order[2 * (g * CS__CHK_LANES)]; /* the group's first chunk is its longest */
        hp->chk_group[2 * g] = (int)(size < INT_MAX ? size : 0);
        hp->chk_group[2 * g + 1] = M;
        size += (long long)CS__CHK_LANES * M;
    }
    if (size > INT_MAX) {
        st = CS_SOLVER_ERR_INVALID;
        cs__chk_msg(msg, msglen, "chunked: the internal layout would need %lld rows (more than an int)", size);
        goto done;
    }
    /* maps: one per system (its own lmap run); cell_base 0, lmap the absolute internal index */
    hp->cell_base = calloc((size_t)nsys, sizeof(int));
    hp->cell_map = malloc(sizeof(int) * (size_t)nsys);
    hp->lmap = malloc(sizeof(int) * (size_t)nrows);
    hp->lusrc = malloc(sizeof(int) * (size_t)nrows);
    if (!hp->cell_base || !hp->cell_map || !hp->lmap || !hp->lusrc) goto done;
    hp->nlmap = nrows;
    hp->cell_stride = 1;
    /* each system's rows, then each chunk's, alone (on threads where there are many): the chunks
     * read the maps of their rows a and b, reduced rows, written by the first loop */
#pragma omp parallel for schedule(dynamic, 16) if (nsys >= 16)
    for (int s = 0; s < nsys; ++s) {
        hp->cell_map[s] = offset[s];
        const int o = offset_r[s], n = offset_r[s + 1] - o, sm = sub->cell_map[s];
        for (int ri = 0; ri < n; ++ri) { /* the sub plan's map (cs__hines_hplan_internal_index) */
            const int k = sub->cell_base[s] + (sm < 0 ? ri * sub->cell_stride : sub->lmap[sm + ri]);
            const int src = sm < 0 ? (ri == 0 ? -1 : ri) : sub->lusrc[sm + ri]; /* reduced local row */
            const int r = w->full_of[o + ri];
            hp->lmap[r] = k;
            hp->lusrc[r] = src < 0 ? -1 : w->full_of[o + src] - offset[s];
            if (src >= 0) slot_of_src[o + src] = k;
        }
    }
#pragma omp parallel for schedule(static) if (nch >= 4096)
    for (int c = 0; c < nch; ++c) {
        const cs__chunk *cc = &w->ch[order[2 * c + 1]];
        const int g = c / CS__CHK_LANES, lane = c % CS__CHK_LANES, gb = hp->chk_group[2 * g], M = hp->chk_group[2 * g + 1];
        int s = 0, lo = 0, hi = nsys - 1; /* the chunk's system */
        while (lo <= hi) { const int mid = (lo + hi) / 2; if (offset[mid] <= cc->a) { s = mid; lo = mid + 1; } else hi = mid - 1; }
        for (int j = cc->m - 1, r = cc->b; j >= 0; --j) { /* the interior, from b's parent up */
            r = w->p[r];
            hp->lmap[r] = gb + (M - cc->m + j) * CS__CHK_LANES + lane;
            hp->lusrc[r] = r - offset[s];
        }
        int *e = hp->chk_chunk + 4 * c;
        e[0] = hp->lmap[cc->a];
        e[1] = hp->lmap[cc->b];
        e[2] = slot_of_src[w->newidx[cc->b]];
        e[3] = cc->m;
    }
    hp->chk_nchunk = nch;
    hp->chk_ngroup = ngroup;
    hp->chk_nr = NR;
    hp->internal_size = (int)size;
    hp->threads = opt->threads ? opt->threads : 128;
    hp->max_levels = sub->max_levels;
    snprintf(hp->describe, sizeof hp->describe, "chunked L=%d: %d chunks (%d interior of %d rows, %d groups of 32), reduced %d rows: %.400s",
             hp->chk_L, nch, w->nrow_list, nrows, ngroup, w->nr, sub->describe);
    st = CS_SOLVER_OK;
done:
    if (st == CS_SOLVER_ERR_NOMEM) cs__chk_msg(msg, msglen, "out of memory");
    free(order); free(slot_of_src);
    return st; /* on failure the caller frees hp (cs__chunked_release through cs__hines_hplan_free) */
}

/* ---- host emulation (the kernels' order of operations) ------------------------------------ */
/* An interior row's d, u, rhs (cs__chk_in_solve and cs__chk_in_step of cs_hines_chunked_gpu.cu):
 * from the solve's arrays (st NULL), or assembled from the fused step's state; last (P3): i and
 * g zeroed at flagged rows after they are read. */
typedef struct {
    const double *d, *u, *rhs;   /* the solve */
    const cs_hines_step_d *st;   /* the fused step (d, rhs unused) */
} cs__chk_src;

static void cs__chk_row_in(const cs__chk_src *s, long long k, int last, double *D, double *U, double *R)
{
    const cs_hines_step_d *st = s->st;
    *U = s->u[k];
    if (!st) {
        *D = s->d[k];
        *R = s->rhs[k];
        return;
    }
    cs__step_row_host(st, k, last, D, R);
}

/* P1 on chunk c: the interior eliminated upwards, the fill G to b carried; d, rhs of a and b
 * updated in place, u'_ab into ur. */
static void cs__chk_p1(const cs__hines_hplan *hp, int c, const cs__chk_src *s, double *d, double *rhs, double *ur)
{
    const int *e = hp->chk_chunk + 4 * c;
    const int g = c / CS__CHK_LANES, lane = c % CS__CHK_LANES, gb = hp->chk_group[2 * g], M = hp->chk_group[2 * g + 1];
    const int top = M - e[3];
    double cd = 0.0, cr = 0.0, G = s->u[e[2]], db = 0.0, rb = 0.0;
    for (int j = M - 1; j >= top; --j) {
        double dk, ek, rk;
        cs__chk_row_in(s, gb + (long long)j * CS__CHK_LANES + lane, 0, &dk, &ek, &rk);
        const double D = dk - cd, R = rk - cr, inv = 1.0 / D;
        const double gi = G * inv;
        db += gi * G;
        rb += gi * R;
        const double f = ek * inv;
        cd = f * ek;
        cr = f * R;
        G = -f * G;
    }
    d[e[0]] -= cd;
    rhs[e[0]] -= cr;
    d[e[1]] -= db;
    rhs[e[1]] -= rb;
    ur[e[2]] = G;
}

/* P3 on chunk c: x_a, x_b known (in x_ab); bottom-up elimination with x_b moved to the right-hand
 * side, then the interior's x downwards from x_a, into out. The interior is read first, as the
 * kernel loads it (in the fused step i and g are zeroed there). */
static void cs__chk_p3(const cs__hines_hplan *hp, int c, const cs__chk_src *s, const double *x_ab, double *out)
{
    const int *e = hp->chk_chunk + 4 * c;
    const int g = c / CS__CHK_LANES, lane = c % CS__CHK_LANES, gb = hp->chk_group[2 * g], M = hp->chk_group[2 * g + 1];
    const int m = e[3];
    double A[CS__CHK_MAX_L], B[CS__CHK_MAX_L], U[CS__CHK_MAX_L];
    for (int q = 0; q < m; ++q) cs__chk_row_in(s, gb + (long long)(M - 1 - q) * CS__CHK_LANES + lane, 1, &A[q], &U[q], &B[q]);
    double cd = 0.0, cr = s->u[e[2]] * x_ab[e[1]];
    for (int q = 0; q < m; ++q) {
        const double ek = U[q], D = A[q] - cd, R = B[q] - cr, inv = 1.0 / D;
        A[q] = ek * inv;
        B[q] = R * inv;
        cd = A[q] * ek;
        cr = A[q] * R;
    }
    double x = x_ab[e[0]];
    for (int q = m - 1; q >= 0; --q) {
        x = B[q] - A[q] * x;
        out[gb + (long long)(M - 1 - q) * CS__CHK_LANES + lane] = x;
    }
}

void cs__chunked_p1_host(const cs__hines_hplan *hp, double *d, const double *u, double *rhs, double *ur)
{
    const cs__chk_src s = {d, u, rhs, NULL};
    for (int c = 0; c < hp->chk_nchunk; ++c) cs__chk_p1(hp, c, &s, d, rhs, ur);
}

void cs__chunked_p3_host(const cs__hines_hplan *hp, const double *d, const double *u, double *rhs)
{
    const cs__chk_src s = {d, u, rhs, NULL};
    for (int c = 0; c < hp->chk_nchunk; ++c) cs__chk_p3(hp, c, &s, rhs, rhs);
}

/* The fused step's three phases (cs__k_chunked_reduced_in, P1 and P3 on cs__chk_in_step); the
 * reduced tree's solve on (work_a, ur, v) between P1 and P3 is cs__hines_hplan_step_host's. */
void cs__chunked_reduced_in_host(const cs__hines_hplan *hp, const cs_hines_step_d *st, double *ur)
{
    const cs__chk_src s = {NULL, st->u, NULL, st};
    /* d into work_a, rhs into v, u into ur; i and g zeroed at flagged rows (their only reader) */
    for (int k = 0; k < hp->chk_nr; ++k) cs__chk_row_in(&s, k, 1, &st->work_a[k], &ur[k], &st->v[k]);
}

void cs__chunked_p1_step_host(const cs__hines_hplan *hp, const cs_hines_step_d *st, double *ur)
{
    const cs__chk_src s = {NULL, st->u, NULL, st};
    for (int c = 0; c < hp->chk_nchunk; ++c) cs__chk_p1(hp, c, &s, st->work_a, st->v, ur);
}

void cs__chunked_p3_step_host(const cs__hines_hplan *hp, const cs_hines_step_d *st)
{
    const cs__chk_src s = {NULL, st->u, NULL, st};
    for (int c = 0; c < hp->chk_nchunk; ++c) cs__chk_p3(hp, c, &s, st->v, st->v);
}
