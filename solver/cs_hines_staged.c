/* Host side of the "staged" GPU Hines variant (plain C, no CUDA): the layout and the per-structure
 * schedule (the host emulation of the kernel: cs_hines_staged_host.c).
 *
 * The kernel (cs__k_staged in cs_hines_staged_gpu.cu) gives a warp the cells of one group: C
 * cells of one structure (4, 2 or 1, chosen per plan), interleaved (row i of cell j at base + i·C
 * + j, so one row of a group of 4 is one 32-byte segment in double), and each cell S = 32 / C
 * lanes. Rows are numbered in the order of the structure's schedule, so that a step's rows are one
 * contiguous run in device memory. The backward sweep reads each row's d, u, rhs once,
 * staged into shared memory with cp.async several steps ahead, and keeps the eliminated rows
 * (a = u/d', b = rhs'/d') in shared memory for the forward sweep, which writes x once: the solve
 * moves only the compulsory bytes (bench/NOTES.md, "staged").
 *
 * A step of a structure's schedule is S slots, one per lane of a cell, each a row
 * whose children all ran in earlier steps. A row whose last child was its slot's row of the
 * previous step takes that child's elimination from the lane's registers (carry); other children
 * add theirs into the row's a/b storage before it is reached (gather).
 *
 * A lane runs one row per step, so the eliminated rows of the first R steps (CS__STG_REG_STEPS,
 * or CS__STG_REG_STEPS_MORE(C) in a plan of one launch) can stay in the lane's registers (the
 * kernel unrolls those steps). Shared memory then holds only the
 * later steps' rows and the rows that other lanes gather into or read x from: each gets a shared
 * row, numbered here (cs__staged_assign), and the schedule names shared rows, not tree rows, for a
 * row's own storage and its parent's. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_hines_gpu_impl.h"
#include "cs_hines_tree.h"

/* input arrays of a plan's rings: the fused step's, or a solve's d, u, rhs */
#define CS__STG_ARRAYS(opt) ((opt)->fused_step ? CS__STG_FUSED_ARRAYS : 3)
/* a plan whose cells' arithmetic must not depend on the batch (CS_HINES_STAGED_INVARIANT) */
#define CS__STG_FIXED(opt) (((opt)->fine_flags & CS_HINES_STAGED_INVARIANT) != 0)
/* no two-way sections: asked, or invariant (whether they pay depends on the batch) */
#define CS__STG_NO_TW(opt) (((opt)->fine_flags & (CS_HINES_STAGED_NO_TWO_WAY | CS_HINES_STAGED_INVARIANT)) != 0)
/* The eliminated rows' records in device memory (CS__SL_GR, one-way shapes) for the shapes of a
 * pick: asked (CS_HINES_STAGED_RECORDS_DEVICE), never (CS_HINES_STAGED_RECORDS_SHARED), or by
 * default in a fused plan's launches of each structure's own shape (split), which run beside each
 * other without register steps: there shared memory sets their warps, and the nine real cells ×
 * 2 048 ran 1.077× faster with them (H200, session 34). A plan of one launch keeps them shared:
 * the Allen cells' (24 register steps, 9 warps a multiprocessor) ran 0.97× with them (no register
 * steps, 12 warps; bench/NOTES.md, "Session 34"). */
static int cs__staged_gr(const cs_hines_gpu_options *opt, int split)
{
    if (opt->fine_flags & CS_HINES_STAGED_RECORDS_SHARED) return 0;
    return (opt->fine_flags & CS_HINES_STAGED_RECORDS_DEVICE) || (split && opt->fused_step);
}

size_t cs__staged_warp_bytes(int rows, int max_steps, int cells, int two_way, int arrays, int slot_constants, int records_device,
                             size_t elem)
{
    /* A, B (and a scratch row), with two-way sections C as well, the ring (RING steps of S rows
     * of `arrays` arrays for C cells: S·C = 32; with slot_constants the fused step's four
     * constants once per row, S of each), with records_device the forward sweep's ring (RING
     * steps of 32 pairs), the schedule (S int2 per step) */
    const size_t S = (size_t)(32 / cells), per_row = two_way ? 3 : 2;
    const size_t ring_step = (slot_constants ? 32 * (size_t)(arrays - 4) + 4 * S : 32 * (size_t)arrays) + (records_device ? 64 : 0);
    return ((size_t)(rows + 1) * per_row * (size_t)cells + (size_t)CS__STG_RING * ring_step) * elem + (size_t)max_steps * S * 8;
}

/* Fixed order (CS_HINES_STAGED_INVARIANT): the children of a row with several are put in an
 * order that depends on the tree alone, by the height of their subtrees (the one that can be done
 * soonest first), then by row; pred[c] is c's sibling before it (-1: none, or an only child). A
 * gather adds into its parent in step order, so with each child after its pred in the schedule,
 * the sum is the same whatever the lanes per cell. work: 2n ints. Returns 0, or -1 when out of
 * memory. */
static int cs__staged_sibling_order(int n, const int *lp, int *pred, int *work)
{
    int *height = work, *link = work + n, *bucket = malloc(sizeof(int) * (size_t)n); /* a height is below n */
    if (!bucket) return -1;
    for (int i = 0; i < n; ++i) { height[i] = 0; bucket[i] = -1; }
    for (int i = n - 1; i >= 1; --i) /* parents first in lp */
        if (height[i] + 1 > height[lp[i]]) height[lp[i]] = height[i] + 1;
    for (int i = n - 1; i >= 1; --i) { link[i] = bucket[height[i]]; bucket[height[i]] = i; } /* each by increasing row */
    int *last = height; /* each parent's last child so far (the heights are bucketed) */
    for (int i = 0; i < n; ++i) { last[i] = -1; pred[i] = -1; }
    for (int h = 0; h < n; ++h)
        for (int i = bucket[h]; i >= 0; i = link[i]) { pred[i] = last[lp[i]]; last[lp[i]] = i; }
    free(bucket);
    return 0;
}

/* The schedule of one structure of n rows (lp local parents, lp[0] = -1) into sched (2·S ints
 * per step, room for n steps). Returns the number of steps, or -1 when out of memory.
 * The S slots of a step run on S lanes at once, so a step never holds two rows with the same
 * parent (their gathers would race on it). A parent becomes ready in the step where its last
 * child runs, and the next step's same slot takes it (carry) unless that would put two siblings
 * in one step; rows not carried wait in a ready list by depth, and a free slot takes the deepest
 * one it may (the longest chain to the root first: the classic critical-path priority).
 * fixed (CS_HINES_STAGED_INVARIANT): a row becomes ready only in a step after its pred
 * (cs__staged_sibling_order) ran, and a row with several children takes none by carry (all
 * gather, in that order): its elimination then does not depend on S. */
static int cs__staged_schedule(int n, const int *lp, int S, int fixed, int *sched)
{
    int *remaining = calloc((size_t)n, sizeof(int)), *depth = malloc(sizeof(int) * (size_t)n);
    int *bucket_head = malloc(sizeof(int) * (size_t)(n + 1)), *next = malloc(sizeof(int) * (size_t)n);
    int *step_of = malloc(sizeof(int) * (size_t)n), *slot_of = malloc(sizeof(int) * (size_t)n);
    int *pred = fixed ? malloc(sizeof(int) * 3 * (size_t)n) : NULL, *succ = pred ? pred + n : NULL, *nch = succ ? succ + n : NULL;
    unsigned char *waiting = fixed ? calloc((size_t)n, 1) : NULL;
    int nsteps = -1;
    if (!remaining || !depth || !bucket_head || !next || !step_of || !slot_of || (fixed && (!pred || !waiting))) goto done;
    for (int i = 0; i <= n; ++i) bucket_head[i] = -1;
    for (int i = 0; i < n; ++i) {
        depth[i] = i ? depth[lp[i]] + 1 : 0;
        if (i) remaining[lp[i]]++;
        step_of[i] = -1;
    }
    if (fixed) {
        if (cs__staged_sibling_order(n, lp, pred, succ) < 0) goto done; /* succ, nch: its scratch, filled below */
        for (int i = 0; i < n; ++i) { succ[i] = -1; nch[i] = remaining[i]; }
        for (int i = 0; i < n; ++i)
            if (pred[i] >= 0) succ[pred[i]] = i;
    }
    /* a ready row whose pred has not run in an earlier step waits for it (fixed only) */
#define CS__STG_HELD(r) (fixed && pred[r] >= 0 && (step_of[pred[r]] < 0 || step_of[pred[r]] >= t))
    int top = 0, t = 0; /* no bucket above top holds a row */
    for (int i = n - 1; i >= 0; --i) {
        if (remaining[i]) continue;
        if (CS__STG_HELD(i)) waiting[i] = 1;
        else cs__ready_push(i, depth, bucket_head, next, &top);
    }
    int done_rows = 0, last[CS__STG_MAX_SLOTS];
    for (int s = 0; s < S; ++s) last[s] = -1;
    while (done_rows < n) {
        int rows[CS__STG_MAX_SLOTS], taken = 0;
        /* carries first; a sibling of an earlier slot's row goes to the ready list instead */
        for (int s = 0; s < S; ++s) {
            rows[s] = -1;
            int c = last[s];
            if (c <= 0 || remaining[lp[c]] != 0 || step_of[lp[c]] >= 0) continue;
            int p = lp[c], clash = 0;
            if (CS__STG_HELD(p)) { waiting[p] = 1; continue; } /* its pred will release it */
            for (int s2 = 0; s2 < s; ++s2) clash |= rows[s2] > 0 && p > 0 && lp[rows[s2]] == lp[p];
            step_of[p] = t; /* taken now, or queued below */
            if (clash) { step_of[p] = -1; cs__ready_push(p, depth, bucket_head, next, &top); continue; }
            rows[s] = p;
        }
        for (int s = 0; s < S; ++s) {
            if (rows[s] >= 0) continue;
            /* the deepest ready row whose parent no row of this step has */
            const int pick = cs__ready_take(bucket_head, next, top, lp, rows, S, NULL, NULL, t, 1);
            if (pick < 0) break;
            rows[s] = pick;
            step_of[pick] = t;
        }
        while (top > 0 && bucket_head[top] < 0) --top;
        for (int s = 0; s < S; ++s) {
            int r = rows[s];
            sched[2 * (t * S + s)] = r;
            sched[2 * (t * S + s) + 1] = 0;
            last[s] = r;
            if (r < 0) continue;
            slot_of[r] = s;
            ++taken;
            if (r > 0) remaining[lp[r]]--;
            if (fixed && succ[r] >= 0 && waiting[succ[r]]) { /* ready from the next step */
                waiting[succ[r]] = 0;
                cs__ready_push(succ[r], depth, bucket_head, next, &top);
            }
        }
        if (!taken) { nsteps = -1; goto done; } /* cannot happen for a valid tree */
        done_rows += taken;
        ++t;
    }
    nsteps = t;
    /* flags: carry when the parent is the same slot's row of the next step, gather otherwise */
    for (int k = 0; k < nsteps * S; ++k) {
        int r = sched[2 * k];
        if (r < 0) continue;
        int *f = &sched[2 * k + 1];
        if (r == 0) { *f |= CS__STG_ROOT; continue; }
        int p = lp[r], kp = step_of[p] * S + slot_of[p];
        *f |= p << 8;
        if (step_of[p] == step_of[r] + 1 && slot_of[p] == slot_of[r] && !(fixed && nch[p] > 1)) *f |= CS__STG_CARRY_OUT;
        else sched[2 * kp + 1] |= CS__STG_GATHER_IN;
    }
#undef CS__STG_HELD
done:
    free(remaining); free(depth); free(bucket_head); free(next); free(step_of); free(slot_of); free(pred); free(waiting);
    return nsteps;
}

/* The schedule of a structure, one-way (cs__staged_schedule, with fixed order or not) or with
 * two-way sections (cs__staged_schedule_tw: only where it finds one, else -2), and each row's u
 * slot source (edge: itself one-way; may be NULL). sched has room for 2n + 64 steps. */
static int cs__staged_schedule_any(int n, const int *lp, int S, int two_way, int fixed, int *sched, int *edge)
{
    if (two_way) return cs__staged_schedule_tw(n, lp, S, sched, edge);
    for (int i = 0; edge && i < n; ++i) edge[i] = i;
    return cs__staged_schedule(n, lp, S, fixed, sched);
}
#define CS__STG_SCHED_STEPS(n) (2 * (size_t)(n) + 64) /* room for the steps of either schedule */

/* Shared rows of one structure's schedule (steps of S slots, parents still as tree rows:
 * flags | parent << 8) with R register steps: a row gets one when it runs at step >= R or others
 * gather into it; with records_device (CS__SL_GR) only when others gather into it. Returns their
 * number (a scratch row follows them), or -1 when out of memory.
 * With rewrite, the slots become flags | parent's shared row << 8 | own shared row << 20, the
 * scratch row standing for none (empty slots, the root's parent, register rows).
 * With reuse (records_device only), rows share a shared row where they are live at different
 * steps: a gather row is live from its first child's step to its own (the backward sweep adds
 * its children's sums there, the forward sweep leaves its x there for them, over the same
 * steps), and a shared row freed at step t is taken from step t + 1 on; the kernel zeroes a
 * gather row's shared row when it eliminates the row (cs__stg_backward). The rows are given in
 * step order, each step's in slot order, from the lowest freed: the real cells' 1 625-row cell
 * needs 538 shared rows a cell without reuse. */
static int cs__staged_assign_live(int n, int steps, const int *sc, int S, int *own)
{
    int *first = malloc(sizeof(int) * (size_t)n), *freed = malloc(sizeof(int) * (size_t)n), nfree = 0, m = 0;
    int *begin = calloc((size_t)steps + 2, sizeof(int)), *next = malloc(sizeof(int) * ((size_t)steps + 1));
    int *by_first = malloc(sizeof(int) * (size_t)n);
    if (!first || !freed || !begin || !next || !by_first) { free(first); free(freed); free(begin); free(next); free(by_first); return -1; }
    for (int r = 0; r < n; ++r) first[r] = steps;
    for (int k = 0; k < steps * S; ++k) { /* a row's first child's step (carried children read it too) */
        const int r = sc[2 * k], w = sc[2 * k + 1];
        if (r >= 0 && !(w & CS__STG_ROOT) && k / S < first[w >> 8]) first[w >> 8] = k / S;
    }
    /* the gather rows by their first step (a counting sort: begin[t] is the first of step t's) */
    for (int r = 0; r < n; ++r) begin[first[r] + 1] += own[r] >= 0;
    for (int t = 0; t <= steps; ++t) begin[t + 1] += begin[t];
    for (int t = 0; t <= steps; ++t) next[t] = begin[t];
    for (int r = 0; r < n; ++r)
        if (own[r] >= 0) by_first[next[first[r]]++] = r;
    for (int t = 0; t < steps; ++t) {
        for (int i = begin[t]; i < begin[t + 1]; ++i) {
            int lo = 0; /* the lowest freed shared row */
            for (int q = 1; q < nfree; ++q) lo = freed[q] < freed[lo] ? q : lo;
            own[by_first[i]] = nfree ? freed[lo] : m++;
            if (nfree) freed[lo] = freed[--nfree];
        }
        for (int s = 0; s < S; ++s) { /* the rows eliminated at t free theirs for t + 1 */
            const int r = sc[2 * (t * S + s)];
            if (r >= 0 && own[r] >= 0) freed[nfree++] = own[r];
        }
    }
    free(first); free(freed); free(begin); free(next); free(by_first);
    return m;
}

static int cs__staged_assign(int n, int steps, int *sc, int S, int R, int records_device, int reuse, int rewrite)
{
    int *own = malloc(sizeof(int) * (size_t)n), m = 0;
    if (!own) return -1;
    for (int k = 0; k < steps * S; ++k)
        if (sc[2 * k] >= 0) own[sc[2 * k]] = ((!records_device && k / S >= R) || (sc[2 * k + 1] & CS__STG_GATHER_IN)) ? m++ : -1;
    if (records_device && reuse && m > 0 && (m = cs__staged_assign_live(n, steps, sc, S, own)) < 0) { free(own); return -1; }
    for (int k = 0; rewrite && k < steps * S; ++k) {
        const int r = sc[2 * k], w = sc[2 * k + 1], f = r < 0 ? w & CS__STG_HOLD : w & 0xff;
        const int pr = (r < 0 || (f & CS__STG_ROOT)) ? -1 : w >> 8;
        const int o = r >= 0 && own[r] >= 0 ? own[r] : m, po = pr >= 0 && own[pr] >= 0 ? own[pr] : m;
        sc[2 * k + 1] = (int)((unsigned)f | (unsigned)po << 8 | (unsigned)o << 20);
    }
    free(own);
    return m;
}

/* Estimated warps per multiprocessor (228 KB of shared memory, 64 K registers) of a warp of
 * `bytes` of shared memory, with or without the register steps. */
static int cs__staged_warps_per_sm(size_t bytes, int reg_steps, int cells, int two_way)
{
    const int regs = two_way ? CS__STG_REGS_TW(reg_steps) : CS__STG_REGS(cells, reg_steps);
    const int by_regs = 65536 / (((regs * 32 + 255) / 256) * 256); /* registers go to warps in 256s */
    const int by_smem = (int)((size_t)228 * 1024 / (bytes + 1024)); /* 1 KB reserved per block */
    const int w = by_regs < by_smem ? by_regs : by_smem;
    return w < 32 ? w : 32; /* blocks per multiprocessor */
}

/* A plan's shape: cells per warp C, register steps R, and what they give: est, by which shapes of
 * one kind are ranked (cs__staged_pick); groups and work (the groups' schedule steps), and the
 * load model's two terms thr and lat (cs__staged_model). */
typedef struct {
    int cells, reg_steps, two_way, gr, rows, max_steps, warps; /* gr: records in device memory (CS__SL_GR) */
    double est;
    long long groups;
    double work, thr, lat;
} cs__staged_shape_t;

#define CS__STG_STEP_COST(cells) ((cells) == 4 ? 1.0 : (cells) == 2 ? 1.5 : 2.0)
/* The cost of a step against a one-way step of 4 cells per warp, with at most one warp per
 * scheduler (H200, double, 256 cells: 6.5 µs + 0.21 µs per step for 4 cells, 0.236 for 2
 * (medium-high), 0.229 for 1 (big-high), 0.246 for a two-way step) */
#define CS__STG_STEP_LAT(cells, tw) ((tw) ? 1.17 : (cells) == 4 ? 1.0 : 1.1)

/* How much longer a step takes when warps share a scheduler: one warp's step is a chain of
 * latencies that a second warp partly fills; beyond that the issue slots bound it. Fitted to the
 * H200's 2 560-cell batches (bench/NOTES.md, "Session 9"): 4 cells per warp, 4.8 warps per
 * multiprocessor (2 on the busiest scheduler), steps 1.13-1.47× their 256-cell cost; 2 cells, 9.7
 * per multiprocessor (3), 2.26×; two-way sections, 19.4 per multiprocessor (5), 3.56×. It then
 * predicted 1 056 big-low cells two-way at 18.3 µs; measured 18.5 (one-way: 31.7). */
static double cs__staged_load_factor(long long resident_warps, int nsm)
{
    const long long per_sm = (resident_warps + nsm - 1) / nsm, per_scheduler = (per_sm + 3) / 4;
    return per_scheduler <= 1 ? 1.0 : 0.75 * (double)per_scheduler;
}

/* The load model of a shape, in steps of one warp alone: thr, the groups' steps shared by the
 * warps that fit (the bound of large batches), and lat, its longest schedule, slowed by the load
 * of its warps that run at once and repeated for each round of groups (the bound of small ones).
 * The time is the larger. It sees one launch only: the launches of a mixed plan run beside each
 * other, and there it misjudged (bench/NOTES.md, "Session 9"). */
static void cs__staged_model(cs__staged_shape_t *sh, int nsm)
{
    const long long cap = (long long)sh->warps * nsm, rounds = (sh->groups + cap - 1) / cap;
    const long long resident = sh->groups < cap ? sh->groups : cap;
    sh->thr = sh->work * CS__STG_STEP_COST(sh->cells) / (double)cap;
    sh->lat = sh->max_steps * CS__STG_STEP_LAT(sh->cells, sh->two_way) * (double)rounds * cs__staged_load_factor(resident, nsm);
}
static double cs__staged_model_time(const cs__staged_shape_t *sh) { return sh->thr > sh->lat ? sh->thr : sh->lat; }

/* The fused step's register steps (its ring stages 7 arrays, not 3), measured on the H100 (bench/NOTES.md,
 * "Session 25"): 40 made the Allen network's step slower than 24 (0.677 against 0.620 s, 8
 * against 7 warps per multiprocessor); in the nine real cells' plan of eight launches running at
 * once, 24 on any launch made it slower than none (0.339 and 0.329 against 0.315 s), while
 * busyring's trees (one launch) ran 9-10 % faster with 24 than with none. So a fused plan takes
 * at most CS__STG_REG_STEPS, and in a plan of several launches none. */
static int cs__staged_fused_regs_pay(int reg_steps) { return reg_steps <= CS__STG_REG_STEPS; }

/* Each shape (C of 4, 2, 1 or the one asked for; register steps none, CS__STG_REG_STEPS or
 * CS__STG_REG_STEPS_MORE(C); want_reg: -1 any, -2 any but the MORE, >= 0 only that; two-way
 * sections or not, want_tw: -1 either, by the load model; -2 either, by the rule of session 8
 * (batches of at most 4 cells per multiprocessor, ranked by est); 0 not; 1 only) of the
 * structures (n[t] rows, cells count[t], local parents lp[t]), scheduled as opt asks (its rings'
 * arrays, the fixed order of CS_HINES_STAGED_INVARIANT).
 * One-way shapes are ranked by est, in steps of one warp: the groups' steps shared by the warps
 * that fit the device, or the longest schedule when there are fewer groups than warps (ties: more
 * cells per warp, then fewer register steps).
 * A step of fewer cells costs more where the device is full: on the H200, medium-high with 2
 * cells per warp (11 warps of 29 steps) took 1.30 ms against 1.00 ms with 4 (8 warps of 45),
 * where steps over warps predicted 0.94×; big-high with 2 (9 warps of 51 steps, 2.85 ms) against
 * 4 (5 of 92, 2.98 ms) predicted 0.62× (bench/NOTES.md). So the throughput term is weighted by
 * CS__STG_STEP_COST(C): 1.5 for 2 cells; 2 for 1 cell.
 * Two-way sections (one cell per warp) shorten the schedule but put 4 times the warps of 4 cells
 * per warp on the schedulers: at 2 560 cells (19 per multiprocessor) small-low took 17.0 against
 * 14.1 µs one-way, medium-low 30.0 against 23.0 (bench/NOTES.md, "Session 8"). So they are
 * ranked, and weighed against the best one-way shape, by the load model (cs__staged_model), which
 * sees the schedulers fill. Returns 0, or -1 when out of memory; best->warps = 0: nothing fits. */
static int cs__staged_pick(int nt, const int *n, const int *count, int *const *lp, int max_n, int nsm, int want_cells,
                           int want_reg, int want_tw, int gr, const cs_hines_gpu_options *opt, cs__staged_shape_t *best)
{
    const int arrays = CS__STG_ARRAYS(opt), fixed = CS__STG_FIXED(opt);
    int *tmp = malloc(sizeof(int) * 2 * CS__STG_MAX_SLOTS * CS__STG_SCHED_STEPS(max_n));
    if (!tmp) return -1;
    cs__staged_shape_t kind[2]; /* the best one-way and two-way shapes */
    memset(best, 0, sizeof *best);
    memset(kind, 0, sizeof kind);
    best->est = kind[0].est = kind[1].est = -1;
    const int cands[3] = {4, 2, 1};
    long long cells = 0;
    for (int t = 0; t < nt; ++t) cells += count[t];
    for (int k = 0; k < 3; ++k) {
        const int C = want_cells ? want_cells : cands[k], S = 32 / C;
        for (int tw = want_tw == 1; tw <= (C == 1 && want_tw != 0 && (want_tw != -2 || cells <= 4LL * nsm)); ++tw) {
            /* the register steps tried: none, CS__STG_REG_STEPS, more where C has a kernel for it */
            const int regs[3] = {0, CS__STG_REG_STEPS, want_reg == -2 || tw ? 0 : CS__STG_REG_STEPS_MORE(C)};
            int max_steps = 0, rows[3] = {0, 0, 0}, found = 1;
            double work = 0;
            long long groups = 0;
            for (int t = 0; t < nt && found; ++t) {
                const int steps = cs__staged_schedule_any(n[t], lp[t], S, tw, fixed, tmp, NULL);
                if (steps == -2) { found = 0; break; } /* no two-way schedule: one-way only */
                if (steps < 0) { free(tmp); return -1; }
                if (steps > max_steps) max_steps = steps;
                groups += (count[t] + C - 1) / C;
                work += (double)((count[t] + C - 1) / C) * steps;
                for (int c = 0; c < 3; ++c) {
                    const int m = c == 2 && !regs[c] ? 0 : cs__staged_assign(n[t], steps, tmp, S, regs[c], gr && !tw, 0, 0);
                    if (m < 0) { free(tmp); return -1; }
                    if (m > rows[c]) rows[c] = m;
                }
            }
            for (int c = 0; c < 3 && found; ++c) {
                if ((c == 2 && !regs[c]) || (want_reg >= 0 && regs[c] != want_reg)) continue;
                if (want_reg < 0 && arrays > 3 && !cs__staged_fused_regs_pay(regs[c])) continue;
                const size_t bytes = cs__staged_warp_bytes(rows[c], max_steps, C, tw, arrays, 0, gr && !tw, 8);
                const int w = rows[c] < CS__STG_MAX_SMEM_ROWS && bytes <= CS__HINES_SMEM_BYTES_MAX ? cs__staged_warps_per_sm(bytes, regs[c], C, tw) : 0;
                if (!w && best->est < 0) { best->cells = C; best->rows = rows[c]; best->max_steps = max_steps; } /* for the message */
                if (!w) continue;
                /* two-way sections only where every group runs at once: a warp per cell fills the
                 * device at a quarter of the cells of 4 per warp, and then the schedulers' load,
                 * not the schedule's length, is the bound */
                if (tw && want_tw != -2 && groups > (long long)w * nsm) continue;
                double est = work * CS__STG_STEP_COST(C) / ((double)w * nsm);
                if (est < max_steps) est = max_steps;
                cs__staged_shape_t sh = {C, regs[c], tw, gr && !tw, rows[c], max_steps, w, est, groups, work, 0, 0};
                cs__staged_model(&sh, nsm);
                cs__staged_shape_t *b = &kind[tw];
                if (b->est < 0 || (tw && want_tw != -2 ? cs__staged_model_time(&sh) < cs__staged_model_time(b) : est < b->est)) *b = sh;
            }
        }
        if (want_cells) break;
    }
    free(tmp);
    const int two_way = kind[0].est < 0 || (kind[1].est >= 0 && (want_tw == -2 ? kind[1].est < kind[0].est
                                                                                : cs__staged_model_time(&kind[1]) < cs__staged_model_time(&kind[0])));
    if (kind[0].est >= 0 || kind[1].est >= 0) *best = kind[two_way];
    return 0;
}

/* the register steps a plan may have (cs__staged_pick's want_reg): none when asked, or with the
 * records in device memory everywhere (CS_HINES_STAGED_RECORDS_DEVICE: their kernels have none; the
 * default's launches of records in device memory are split launches of a fused plan, which have
 * none either) */
static int cs__staged_want_reg(const cs_hines_gpu_options *opt)
{
    return (opt->fine_flags & (CS_HINES_STAGED_NO_REG_STEPS | CS_HINES_STAGED_RECORDS_DEVICE)) ? 0 : -1;
}

/* The launches: one shape for all structures, or, for several structures of large batches, each
 * structure its own shape (structures of one shape and the same warps per multiprocessor share a
 * launch, so that a small structure is not sized for a large one), whichever the estimate
 * (cs__staged_pick) finds faster; the launches share the device, so their estimates add. They are
 * ordered longest first (they run concurrently: cs_hines_gpu_launch.cu).
 * launch_of[t] and shapes[] (room for nt) are filled; returns the number of launches, 0 when
 * nothing fits, or -1 when out of memory. */
static int cs__staged_launches(int nt, const int *nrow, const int *count, int *const *lp, int max_n, int nsm,
                               const cs_hines_gpu_options *opt, int *launch_of, cs__staged_shape_t *shapes)
{
    const int want_reg = cs__staged_want_reg(opt);
    /* several structures: two-way sections by the rule of cells per multiprocessor (-2), since
     * the load model does not see the launches that run beside each other (see above) */
    const int want_tw = CS__STG_NO_TW(opt) ? 0 : nt == 1 ? -1 : -2;
    if (cs__staged_pick(nt, nrow, count, lp, max_n, nsm, opt->block_size, want_reg, want_tw, cs__staged_gr(opt, 0), opt, &shapes[0]) < 0)
        return -1;
    for (int t = 0; t < nt; ++t) launch_of[t] = 0;
    if (nt == 1 || opt->block_size) return shapes[0].warps ? 1 : 0;
    /* each structure's own shape, then the structures of one shape together */
    int *own = malloc(sizeof(int) * (size_t)nt), *sub_n = malloc(sizeof(int) * (size_t)nt), *sub_count = malloc(sizeof(int) * (size_t)nt);
    int **sub_lp = malloc(sizeof(int *) * (size_t)nt), nl = 0, rc = -1;
    /* launches that run at once: no CS__STG_REG_STEPS_MORE (its registers leave no room for the
     * others: the 25 600-cell mixed batch took 145 → 175 µs with big-low's 40 steps) */
    const int split_reg = want_reg == 0 || CS__STG_ARRAYS(opt) > 3 ? 0 : -2; /* the fused step: none (cs__staged_fused_regs_pay) */
    cs__staged_shape_t *split = malloc(sizeof *split * (size_t)nt);
    long long *lgroups = malloc(sizeof *lgroups * (size_t)nt); /* groups of each launch so far */
    if (!own || !sub_n || !sub_count || !sub_lp || !split || !lgroups) goto done;
    for (int t = 0; t < nt; ++t) {
        cs__staged_shape_t sh;
        if (cs__staged_pick(1, &nrow[t], &count[t], &lp[t], nrow[t], nsm, 0, split_reg, want_tw, cs__staged_gr(opt, 1), opt, &sh) < 0)
            goto done;
        if (!sh.warps) { rc = shapes[0].warps ? 1 : 0; goto done; } /* one structure alone does not fit */
        /* a launch of two-way sections takes another structure only while all its groups still run
         * at once (the condition of two-way sections): six structures of one size, each two-way,
         * made one launch of 2 560 warps that was then refused, and the batch fell back to one
         * one-way launch (bench/NOTES.md, "Session 10") */
        int l = 0;
        while (l < nl && !(split[l].cells == sh.cells && split[l].reg_steps == sh.reg_steps && split[l].two_way == sh.two_way && split[l].gr == sh.gr &&
                           split[l].warps == sh.warps && (!sh.two_way || lgroups[l] + sh.groups <= (long long)sh.warps * nsm)))
            ++l;
        if (l == nl) { split[nl] = sh; lgroups[nl++] = 0; }
        lgroups[l] += sh.groups;
        own[t] = l;
    }
    double est = 0;
    for (int l = 0; l < nl; ++l) { /* the launch's own estimate (its largest structure sizes it) */
        int m = 0, mx = 0;
        for (int t = 0; t < nt; ++t)
            if (own[t] == l) { sub_n[m] = nrow[t]; sub_count[m] = count[t]; sub_lp[m++] = lp[t]; mx = nrow[t] > mx ? nrow[t] : mx; }
        cs__staged_shape_t sh;
        if (cs__staged_pick(m, sub_n, sub_count, sub_lp, mx, nsm, split[l].cells, split[l].reg_steps, split[l].two_way, split[l].gr, opt, &sh) < 0)
            goto done;
        if (!sh.warps) { rc = shapes[0].warps ? 1 : 0; goto done; }
        split[l] = sh;
        est += sh.est;
    }
    rc = shapes[0].warps ? 1 : 0;
    /* one launch counts too: structures of one size that are each two-way make a single two-way
     * launch, which the one shape for all, ruled by the whole batch's cells per multiprocessor,
     * does not offer */
    if (!shapes[0].warps || est < shapes[0].est) {
        /* the longest first: the launches run at once, and the shorter ones fill the longer's last wave */
        int *rank = sub_n; /* free again */
        for (int l = 0; l < nl; ++l) {
            rank[l] = 0;
            for (int l2 = 0; l2 < nl; ++l2) rank[l] += split[l2].est > split[l].est || (split[l2].est == split[l].est && l2 < l);
        }
        for (int l = 0; l < nl; ++l) shapes[rank[l]] = split[l];
        for (int t = 0; t < nt; ++t) launch_of[t] = rank[own[t]];
        rc = nl;
    }
done:
    free(own); free(sub_n); free(sub_count); free(sub_lp); free(split); free(lgroups);
    return rc;
}

cs_solver_status cs__plan_staged(cs__hines_hplan *hp, const int *p, const int *sid, const int *rep,
                                 const cs_hines_gpu_options *opt, int nsm, char *msg, size_t msglen)
{
    const int nsys = hp->nsys, nt = hp->nstruct, sms = nsm > 0 ? nsm : 132;
    if (opt->block_size && opt->block_size != 1 && opt->block_size != 2 && opt->block_size != 4) {
        snprintf(msg, msglen, "staged: cells per warp (block size) must be 1, 2 or 4, not %d", opt->block_size);
        return CS_SOLVER_ERR_INVALID;
    }
    /* the planner schedules and shapes every structure on its own, several times over: 65 536
     * distinct busyring trees took minutes of set-up (session 11), so many distinct cells go to
     * the per-system and fine-grained variants */
    long long distinct_rows = 0;
    for (int t = 0; t < nt; ++t) distinct_rows += hp->offset[rep[t] + 1] - hp->offset[rep[t]];
    if (distinct_rows > CS_HINES_STAGED_MAX_DISTINCT_ROWS) {
        snprintf(msg, msglen, "staged: %d distinct cell structures of %lld rows in all, more than the %d its planner takes",
                 nt, distinct_rows, CS_HINES_STAGED_MAX_DISTINCT_ROWS);
        return CS_SOLVER_ERR_INVALID;
    }
    /* A schedule runs at most one row per lane and step, so at most CS__STG_REG_STEPS_MAX ·
     * CS__STG_MAX_SLOTS rows stay in registers; every other row needs a shared row, and a shape
     * with CS__STG_MAX_SMEM_ROWS or more fits nowhere (cs__staged_pick). A larger cell is refused
     * here, before the schedules that would find the same: the 29 050-row FlyWire cell took 20 s
     * of them (session 20). */
    const int reg_rows_max = CS__STG_REG_STEPS_MAX * CS__STG_MAX_SLOTS;
    if (hp->max_n - reg_rows_max >= CS__STG_MAX_SMEM_ROWS) {
        snprintf(msg, msglen, "staged: a system of %d rows does not fit in shared memory (at least %d of its rows "
                 "would need shared rows, at most %d; use interleaved or warp)", hp->max_n, hp->max_n - reg_rows_max,
                 CS__STG_MAX_SMEM_ROWS - 1);
        return CS_SOLVER_ERR_INVALID;
    }
    cs_solver_status st = CS_SOLVER_ERR_NOMEM;
    int *count = calloc((size_t)nt, sizeof(int)), *first = malloc(sizeof(int) * (size_t)(nt + 1));
    int *order = malloc(sizeof(int) * (size_t)nsys), *nrow = malloc(sizeof(int) * (size_t)nt);
    int **lp = calloc((size_t)nt, sizeof(int *)), *lmoff = malloc(sizeof(int) * (size_t)nt);
    int **renum = calloc((size_t)nt, sizeof(int *)), **usrc = calloc((size_t)nt, sizeof(int *)); /* re-rooted types */
    int *tmp = malloc(sizeof(int) * 2 * CS__STG_MAX_SLOTS * CS__STG_SCHED_STEPS(hp->max_n));
    int *edge = malloc(sizeof(int) * 2 * (size_t)hp->max_n), *old_of = edge + hp->max_n;
    cs__staged_shape_t *shapes = NULL;
    int *launch_rows = NULL; /* [launch] the shared rows its kernel gets */
    hp->stype = malloc(sizeof(int) * 2 * (size_t)nt);
    hp->stg_type_launch = malloc(sizeof(int) * (size_t)nt);
    hp->cell_base = malloc(sizeof(int) * (size_t)nsys);
    hp->cell_map = malloc(sizeof(int) * (size_t)nsys);
    if (!count || !first || !order || !nrow || !lp || !lmoff || !renum || !usrc || !tmp || !edge || !hp->stype || !hp->stg_type_launch ||
        !hp->cell_base || !hp->cell_map)
        goto fail;
    /* cells by structure (stable), and each structure's local parents */
    for (int s = 0; s < nsys; ++s) count[sid[s]]++;
    first[0] = 0;
    for (int t = 0; t < nt; ++t) first[t + 1] = first[t] + count[t];
    for (int t = 0; t < nt; ++t) count[t] = 0;
    for (int s = 0; s < nsys; ++s) order[first[sid[s]] + count[sid[s]]++] = s;
    long long nl_map = 0;
    for (int t = 0; t < nt; ++t) {
        const int o = hp->offset[rep[t]];
        nrow[t] = hp->offset[rep[t] + 1] - o;
        lmoff[t] = (int)nl_map;
        nl_map += nrow[t];
        if (!(lp[t] = malloc(sizeof(int) * (size_t)nrow[t]))) goto fail;
        for (int i = 0; i < nrow[t]; ++i) lp[t][i] = i ? p[o + i] - o : -1;
        /* re-rooted at the centre of its longest path when that makes the tree lower (a schedule
         * is at least as many steps as the tree is high: small-low 61 -> 32) and the load model
         * faster (medium-high keeps its root: the same 45 steps, but more shared rows). An
         * invariant plan weighs the two roots for one cell and any cells per warp (est: the
         * shorter schedule), so that the root depends on the structure alone, not on the batch */
        if (opt->fine_flags & CS_HINES_FINE_NO_REROOT) continue;
        int h0 = 0, *depth = tmp; /* tmp is free until the schedules */
        for (int i = 0; i < nrow[t]; ++i) {
            depth[i] = i ? depth[lp[t][i]] + 1 : 0;
            if (depth[i] > h0) h0 = depth[i];
        }
        int *renumbered = malloc(sizeof(int) * (size_t)nrow[t]), *lpn = malloc(sizeof(int) * (size_t)nrow[t]);
        int *us = malloc(sizeof(int) * (size_t)nrow[t]);
        const int h1 = renumbered && lpn && us ? cs__tree_recentre(nrow[t], lp[t], renumbered, lpn, us) : -1;
        int better = 0;
        if (h1 >= 0 && h1 < h0) {
            cs__staged_shape_t a, b;
            int *lpa[1] = {lp[t]}, *lpb[1] = {lpn};
            const int want = CS__STG_FIXED(opt) ? 0 : opt->block_size, reg = cs__staged_want_reg(opt);
            const int tw = CS__STG_NO_TW(opt) ? 0 : nt == 1 ? -1 : -2; /* as cs__staged_launches */
            const int one = 1, *cnt = CS__STG_FIXED(opt) ? &one : &count[t];
            const int gr = cs__staged_gr(opt, 0);
            if (cs__staged_pick(1, &nrow[t], cnt, lpa, nrow[t], sms, want, reg, tw, gr, opt, &a) < 0 ||
                cs__staged_pick(1, &nrow[t], cnt, lpb, nrow[t], sms, want, reg, tw, gr, opt, &b) < 0) {
                free(renumbered); free(lpn); free(us);
                goto fail;
            }
            /* one-way shapes by est, as they were measured; with a two-way one, by the load model */
            const int model = tw == -1 && (a.two_way || b.two_way);
            better = b.warps && (!a.warps || (model ? cs__staged_model_time(&b) < cs__staged_model_time(&a) : b.est < a.est));
        }
        if (better) {
            free(lp[t]);
            lp[t] = lpn;
            renum[t] = renumbered;
            usrc[t] = us;
        } else {
            free(renumbered); free(lpn); free(us);
            if (h1 < 0) goto fail;
        }
    }
    if (!(shapes = malloc(sizeof *shapes * (size_t)nt))) goto fail;
    const int nl = cs__staged_launches(nt, nrow, count, lp, hp->max_n, sms, opt, hp->stg_type_launch, shapes);
    if (nl < 0) goto fail;
    if (nl == 0) {
        snprintf(msg, msglen, "staged: a system of %d rows does not fit in shared memory (%d of its rows would need %zu bytes "
                 "per warp, at most %d; use interleaved or warp)", hp->max_n, shapes[0].rows,
                 cs__staged_warp_bytes(shapes[0].rows, shapes[0].max_steps, shapes[0].cells, shapes[0].two_way,
                                       CS__STG_ARRAYS(opt), 0, shapes[0].gr, 8), CS__HINES_SMEM_BYTES_MAX);
        st = CS_SOLVER_ERR_INVALID;
        goto fail;
    }
    /* each structure's schedule with its launch's shape, its rows named by shared row; the
     * conversion map of each structure (tree row i of cell j at cell_base + pos·C, pos the row's
     * place in the schedule) */
    int cap = 0;
    /* the shared rows each launch needs: the planner ranked its shapes by the rows without reuse
     * (its weights were fitted to those bytes), the kernel gets the rows with it */
    const int reuse = !(opt->fine_flags & CS_HINES_STAGED_ROWS_UNSHARED);
    if (!(launch_rows = calloc((size_t)nl, sizeof(int)))) goto fail;
    hp->nlmap = (int)nl_map;
    hp->lmap = malloc(sizeof(int) * (size_t)(nl_map ? nl_map : 1));
    hp->lusrc = malloc(sizeof(int) * (size_t)(nl_map ? nl_map : 1));
    if (!hp->lmap || !hp->lusrc) goto fail;
    for (int t = 0; t < nt; ++t) {
        const cs__staged_shape_t *sh = &shapes[hp->stg_type_launch[t]];
        const int S = 32 / sh->cells;
        int steps = cs__staged_schedule_any(nrow[t], lp[t], S, sh->two_way, CS__STG_FIXED(opt), tmp, edge);
        const int m = steps < 0 ? -1 : cs__staged_assign(nrow[t], steps, tmp, S, sh->reg_steps, sh->gr, reuse, 1);
        if (m < 0) goto fail;
        if (m > launch_rows[hp->stg_type_launch[t]]) launch_rows[hp->stg_type_launch[t]] = m;
        if (hp->stg_nslot + steps * S > cap) {
            cap = 2 * (hp->stg_nslot + steps * S);
            int *g = realloc(hp->stg_sched, sizeof(int) * 2 * (size_t)cap);
            if (!g) goto fail;
            hp->stg_sched = g;
        }
        /* rows stored in the schedule's order, so that a step's rows are one contiguous run: its
         * copies and stores touch 2-3 lines of 128 bytes per array instead of one line per row
         * (the L2's tag lookups, not its bytes, were the busiest unit: bench/NOTES.md) */
        int *pos = malloc(sizeof(int) * (size_t)nrow[t]), np = 0;
        if (!pos) goto fail;
        for (int k = 0; k < steps * S; ++k)
            if (tmp[2 * k] >= 0) { pos[tmp[2 * k]] = np; tmp[2 * k] = np++; }
        memcpy(hp->stg_sched + 2 * (size_t)hp->stg_nslot, tmp, sizeof(int) * 2 * (size_t)S * (size_t)steps);
        hp->stype[2 * t] = hp->stg_nslot;
        hp->stype[2 * t + 1] = steps;
        hp->stg_nslot += steps * S;
        for (int i = 0; i < nrow[t]; ++i) old_of[renum[t] ? renum[t][i] : i] = i;
        for (int i = 0; i < nrow[t]; ++i) { /* old row i is tree row renum[i], stored at its place in the schedule */
            const int r = renum[t] ? renum[t][i] : i, e = edge[r]; /* its u slot: the coupling of row e to its parent */
            hp->lmap[lmoff[t] + i] = pos[r] * sh->cells;
            hp->lusrc[lmoff[t] + i] = usrc[t] ? usrc[t][old_of[e]] : e ? e : -1;
        }
        free(pos);
    }
    hp->nstype = nt;
    /* groups of C cells of one structure, launch by launch */
    int ng = 0;
    for (int t = 0; t < nt; ++t) ng += (count[t] + shapes[hp->stg_type_launch[t]].cells - 1) / shapes[hp->stg_type_launch[t]].cells;
    hp->ngroup = ng;
    hp->group_base = malloc(sizeof(int) * (size_t)ng);
    hp->group_type = malloc(sizeof(int) * (size_t)ng);
    hp->group_cells = malloc(sizeof(int) * (size_t)ng);
    hp->stg_nlaunch = nl;
    hp->stg_fused = opt->fused_step != 0;
    hp->stg_slot_constants = !(opt->fine_flags & CS_HINES_STAGED_CONSTANTS_PER_CELL);
    hp->stg_launch = malloc(sizeof(int) * CS__SL_N * (size_t)nl);
    if (!hp->group_base || !hp->group_type || !hp->group_cells || !hp->stg_launch) goto fail;
    long long size = 0;
    int g = 0;
    for (int l = 0; l < nl; ++l) {
        const int C = shapes[l].cells;
        int *L = hp->stg_launch + CS__SL_N * l;
        /* a group's rows are copied in chunks of up to 16 bytes (C elements of a row), which must
         * be aligned: after a launch of one cell per warp and an odd number of rows, the next
         * launch's groups would not be (a misaligned-address fault) */
        size = (size + C - 1) / C * C;
        L[CS__SL_FIRST] = g;
        L[CS__SL_CELLS] = C;
        L[CS__SL_REG] = shapes[l].reg_steps;
        L[CS__SL_ROWS] = launch_rows[l];
        L[CS__SL_STEPS] = shapes[l].max_steps;
        L[CS__SL_TW] = shapes[l].two_way;
        L[CS__SL_UC] = 0; /* until the constants are shared (cs__staged_share_constants) */
        L[CS__SL_GR] = shapes[l].gr;
        for (int t = 0; t < nt; ++t) {
            if (hp->stg_type_launch[t] != l) continue;
            for (int k = 0; k < count[t]; k += C, ++g) {
                if (size + (long long)nrow[t] * C > INT_MAX) {
                    snprintf(msg, msglen, "the staged internal layout exceeds %d elements", INT_MAX);
                    st = CS_SOLVER_ERR_INVALID;
                    goto fail;
                }
                int m = count[t] - k < C ? count[t] - k : C;
                hp->group_base[g] = (int)size;
                hp->group_type[g] = t;
                hp->group_cells[g] = m;
                for (int j = 0; j < m; ++j) {
                    hp->cell_base[order[first[t] + k + j]] = (int)size + j;
                    hp->cell_map[order[first[t] + k + j]] = lmoff[t];
                }
                size += (long long)nrow[t] * C;
            }
        }
        L[CS__SL_GROUPS] = g - L[CS__SL_FIRST];
    }
    hp->cell_stride = 0; /* every cell goes through lmap */
    hp->internal_size = (int)size;
    int len = snprintf(hp->describe, sizeof hp->describe, "staged groups=%d types=%d size=%d (%.1f%% padding); launches:", ng, nt,
                       hp->internal_size, 100.0 * (hp->internal_size - hp->nrows) / (hp->internal_size ? hp->internal_size : 1));
    for (int l = 0; l < nl && len > 0 && len < (int)sizeof hp->describe; ++l) {
        double rows = 0, steps = 0;
        for (int t = 0; t < nt; ++t)
            if (hp->stg_type_launch[t] == l) { rows += nrow[t]; steps += hp->stype[2 * t + 1]; }
        len += snprintf(hp->describe + len, sizeof hp->describe - (size_t)len,
                        " [cells/warp=%d groups=%d %.2f rows/step of %d, register steps=%d%s, shared rows=%d%s, ~%d warps/SM]",
                        shapes[l].cells, hp->stg_launch[CS__SL_N * l + CS__SL_GROUPS], rows / (steps ? steps : 1), 32 / shapes[l].cells,
                        shapes[l].reg_steps, shapes[l].two_way ? ", two-way sections" : "", launch_rows[l],
                        !hp->stg_launch[CS__SL_N * l + CS__SL_GR] ? ""
                        : launch_rows[l] < shapes[l].rows ? " (records in device memory, shared rows reused)" : " (records in device memory)",
                        cs__staged_warps_per_sm(cs__staged_warp_bytes(launch_rows[l], shapes[l].max_steps, shapes[l].cells, shapes[l].two_way,
                                                                      CS__STG_ARRAYS(opt), 0, shapes[l].gr, 8),
                                                shapes[l].reg_steps, shapes[l].cells, shapes[l].two_way));
    }
    st = CS_SOLVER_OK;
fail:
    if (st == CS_SOLVER_ERR_NOMEM) snprintf(msg, msglen, "out of memory");
    for (int t = 0; t < nt; ++t) {
        if (lp) free(lp[t]);
        if (renum) free(renum[t]);
        if (usrc) free(usrc[t]);
    }
    free(renum); free(usrc);
    free(count); free(first); free(order); free(nrow); free(lp); free(lmoff); free(tmp); free(edge); free(shapes); free(launch_rows);
    return st;
}

double cs__staged_lane_use(const cs__hines_hplan *hp)
{
    /* per structure its rows (the schedule's filled slots), then per group its slots and rows */
    int *n = calloc((size_t)hp->nstype, sizeof(int));
    if (!n) return 0;
    for (int t = 0; t < hp->nstype; ++t) {
        const int S = 32 / hp->stg_launch[CS__SL_N * hp->stg_type_launch[t] + CS__SL_CELLS];
        const int *sc = hp->stg_sched + 2 * (size_t)hp->stype[2 * t];
        for (int k = 0; k < hp->stype[2 * t + 1] * S; ++k) n[t] += sc[2 * k] >= 0;
    }
    double rows = 0, lanes = 0;
    for (int g = 0; g < hp->ngroup; ++g) {
        const int t = hp->group_type[g];
        rows += (double)n[t] * hp->stg_launch[CS__SL_N * hp->stg_type_launch[t] + CS__SL_CELLS];
        lanes += (double)hp->stype[2 * t + 1] * 32;
    }
    free(n);
    return lanes > 0 ? rows / lanes : 0;
}

void cs__staged_release(cs__hines_hplan *hp)
{
    int **a[] = {&hp->stype, &hp->stg_type_launch, &hp->cell_base, &hp->cell_map, &hp->lmap, &hp->lusrc, &hp->stg_sched,
                 &hp->group_base, &hp->group_type, &hp->group_cells, &hp->group_cbase, &hp->stg_launch};
    free(hp->group_same);
    hp->group_same = NULL;
    for (size_t k = 0; k < sizeof a / sizeof a[0]; ++k) { free(*a[k]); *a[k] = NULL; }
}
