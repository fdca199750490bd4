/* The host planner of the GPU Hines solvers (solver/cs_hines_plan*.c, cs_hines_staged*.c,
 * cs_hines_chunked_plan.c), without a GPU: layouts, re-rooting, splitting, packing, warp blocks,
 * staged schedules and chunked plans, checked through their host emulation against the CPU serial
 * reference at 1e-12 on the batches of test_hines_gpu_common.h. (Split from test_hines_gpu.c,
 * which keeps the GPU suite; the plans' choices are test_hines_gpu_choices.c.) CS_MORPH_DIR overrides the morphology
 * folder; CS_TEST_SMALL=1 runs smaller batches. */
#define _POSIX_C_SOURCE 200809L
#include "test_hines_gpu_common.h"

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
 * a row with its parent in the same slot of the next step (fixed, CS_HINES_STAGED_INVARIANT: but
 * for a parent of several children, which gathers them all), and its shared rows are distinct,
 * fit the plan's, exist for every row kept in shared memory or gathered into, and name the parent */
static void check_staged_schedule(const cs__hines_hplan *hp, const batch *b, int fixed, const char *what)
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
        const int S = 32 / L[CS__SL_CELLS], R = L[CS__SL_REG], rows = L[CS__SL_ROWS], gr = L[CS__SL_GR];
        /* records in device memory: one-way, no register steps (the kernels of CS__SL_GR) */
        TEST_CHECK(!gr || (R == 0 && !L[CS__SL_TW]), "%s: type %d: records in device memory with %d register steps", what, t, R);
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
        /* the scratch row is the one after the type's shared rows: the rows that need one have one;
         * with the records in device memory rows share them (cs__staged_assign: their live steps
         * apart, checked per system below), each of the type's shared rows in use */
        int m = 0;
        for (int r = 0; r < n; ++r) {
            TEST_CHECK(step[r] >= 0, "%s: type %d row %d never scheduled", what, t, r);
            const int w = sc[2 * (step[r] * S + slot[r]) + 1];
            m += (!gr && step[r] >= R) || (w & CS__STG_GATHER_IN);
        }
        if (gr) { /* the shared rows in use: 0 .. scratch - 1 */
            for (int r = 0; r < n; ++r)
                if (sc[2 * (step[r] * S + slot[r]) + 1] & CS__STG_GATHER_IN) {
                    TEST_CHECK(own[r] >= 0 && own[r] < rows, "%s: type %d row %d: shared row %d", what, t, r, own[r]);
                    if (own[r] >= 0 && own[r] < rows) row_of[own[r]] = r;
                }
            m = 0;
            while (m < rows && row_of[m] >= 0) ++m;
            for (int i = m; i < rows; ++i) TEST_CHECK(row_of[i] < 0, "%s: type %d: shared row %d unused, %d used", what, t, m, i);
        }
        TEST_CHECK(m <= rows && (scratch < 0 || scratch == m), "%s: type %d: %d shared rows, scratch %d, launch %d",
                      what, t, m, scratch, rows);
        for (int r = 0; r < n && !gr; ++r) {
            const int w = sc[2 * (step[r] * S + slot[r]) + 1];
            if ((!gr && step[r] >= R) || (w & CS__STG_GATHER_IN)) {
                TEST_CHECK(own[r] < m && row_of[own[r]] < 0, "%s: type %d row %d: shared row %d", what, t, r, own[r]);
                row_of[own[r]] = r;
            } else {
                TEST_CHECK(own[r] == m, "%s: type %d register row %d has shared row %d", what, t, r, own[r]);
            }
        }
        for (int r = 0; r < n && gr; ++r)
            if (!(sc[2 * (step[r] * S + slot[r]) + 1] & CS__STG_GATHER_IN))
                TEST_CHECK(own[r] == m, "%s: type %d row %d without gathers has shared row %d", what, t, r, own[r]);
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
        const int gr = hp->stg_launch[CS__SL_N * hp->stg_type_launch[t] + CS__SL_GR];
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
        for (int r = 0; r < n; ++r) stamp[r] = 0; /* children of each row */
        for (int r = 0; r < n; ++r)
            if (par[r] >= 0) stamp[par[r]]++;
        for (int r = 0; r < n; ++r) {
            const int w = sc[2 * (step[r] * S + slot[r]) + 1], f = w & 0xff;
            if (par[r] < 0) { TEST_CHECK(f & CS__STG_ROOT, "%s: system %d: root flag", what, sy); continue; }
            TEST_CHECK(!(f & CS__STG_ROOT), "%s: system %d row %d: root flag", what, sy, r);
            const int p = par[r], wp = sc[2 * (step[p] * S + slot[p]) + 1];
            TEST_CHECK(step[p] > step[r], "%s: system %d row %d runs before its child %d", what, sy, p, r);
            const int carry = step[p] == step[r] + 1 && slot[p] == slot[r] && !(fixed && stamp[p] > 1);
            TEST_CHECK(!(f & CS__STG_CARRY_OUT) == !carry, "%s: system %d row %d: carry flag", what, sy, r);
            if (!(f & CS__STG_CARRY_OUT))
                TEST_CHECK((wp & CS__STG_GATHER_IN) && CS__STG_PAR(w) == CS__STG_OWN(wp), "%s: system %d row %d: its parent's shared row",
                           what, sy, r);
            /* a shared row shared by rows (records in device memory): from the step of any child of
             * its row (carried ones read it too) to the row's own, no other row of it is eliminated */
            if (gr && (wp & CS__STG_GATHER_IN))
                for (int q = 0; q < n; ++q) {
                    const int wq = sc[2 * (step[q] * S + slot[q]) + 1];
                    TEST_CHECK(q == p || !(wq & CS__STG_GATHER_IN) || CS__STG_OWN(wq) != CS__STG_OWN(wp) || step[q] < step[r] ||
                                   step[q] >= step[p],
                               "%s: system %d: row %d's shared row %d is row %d's too, eliminated at step %d between %d and %d",
                               what, sy, p, CS__STG_OWN(wp), q, step[q], step[r], step[p]);
                }
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
    /* what auto's trial is told without the plan: the variant whose solve the plan runs (chunked
     * cutting nothing runs fine's); auto without the fused step may not say */
    const int solves_as = hp.variant == CS__HV_CHUNKED && hp.chk_nchunk == 0 ? CS__HV_FINE : hp.variant;
    const int resolved = cs__hines_hplan_resolve(b->nsys, b->offset, b->p, opt, nsm);
    ck_assert_msg(resolved == solves_as || (resolved < 0 && v == CS__HV_AUTO && !opt->fused_step),
                  "%s %s: resolved to %s, the plan solves as %s", what, opt->variant, cs__hines_variant_name(resolved),
                  cs__hines_variant_name(solves_as));
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
    if (hp.variant == CS__HV_STAGED) check_staged_schedule(&hp, b, (opt->fine_flags & CS_HINES_STAGED_INVARIANT) != 0, what);
    for (int l = 0; hp.variant == CS__HV_STAGED && l < hp.stg_nlaunch; ++l) { /* as asked, on one-way launches */
        const int *L = hp.stg_launch + CS__SL_N * l;
        /* asked for or not; by default in a fused plan's launches of the structures' own shapes, which a
         * plan of several launches is (one launch may be either: the one shape for all, or one of them) */
        const int f = opt->fine_flags, one_way = !L[CS__SL_TW];
        const int want = (f & CS_HINES_STAGED_RECORDS_DEVICE) ? one_way
                         : (f & CS_HINES_STAGED_RECORDS_SHARED) || !opt->fused_step ? 0
                         : hp.stg_nlaunch > 1                                      ? one_way
                                                                                   : L[CS__SL_GR] && one_way;
        TEST_CHECK(L[CS__SL_GR] == want, "%s: launch %d of %d: records in device memory %d", what, l, hp.stg_nlaunch, L[CS__SL_GR]);
    }
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
    for (int shared = 0; cs__hines_hplan_fuses(&hp) && shared <= cs__hines_hplan_shares_constants(&hp); ++shared) {
        /* the fused step, twice: the second finds the work arrays as the first left them */
        step_inputs si;
        step_inputs_make(b, &hp, shared, &si);
        if (staged) cs__staged_mark_current(&hp, si.row_flags);
        double *sref = reference(&si.ref);
        double *v0 = malloc(sizeof(double) * ni), *i0 = malloc(sizeof(double) * ni), *g0 = malloc(sizeof(double) * ni);
        memcpy(v0, si.v, sizeof(double) * ni); memcpy(i0, si.i, sizeof(double) * ni); memcpy(g0, si.g, sizeof(double) * ni);
        cs_hines_step_d st = {si.d0, si.cdt, si.b0, si.u, si.v, si.i, si.g, si.flags, si.wa, si.wb, shared, si.a0, 0, NULL, NULL};
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
        for (int f = 0; f < 4; ++f) { /* 9 cells: two-way sections, unless turned off */
            const int flags[4] = {0, CS_HINES_STAGED_NO_REG_STEPS, CS_HINES_STAGED_NO_TWO_WAY,
                                  CS_HINES_STAGED_NO_TWO_WAY | CS_HINES_STAGED_RECORDS_DEVICE};
            config sc = {"staged", 0, 0, flags[f], 0, 0};
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
        check_staged_schedule(&hp, &sb, 0, "same size");
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
    /* the fused step's rings stage 7 arrays: at most 24 register steps, and none in a plan of
     * several launches (cs__staged_fused_regs_pay): big-low alone 24 where the solve takes 40; the
     * large mixed batch none in any of its launches (the solve: 24 in some) */
    for (int k = 0; k < 2; ++k) {
        batch kb;
        if (k) make_mixed_batch(&kb, 1100, 0, 14);
        else make_class_batch(&kb, 4, 1100, 1004);
        config sc = {"staged", 0, 0, 0, 0, 0};
        cs_hines_gpu_options o = make_opt(&sc);
        cs__hines_hplan hp;
        char msg[256];
        int most[2] = {0, 0}; /* most register steps of a launch: the solve, the fused step */
        for (int fused = 0; fused <= 1; ++fused) {
            o.fused_step = fused;
            ck_assert_int_eq(cs__hines_hplan_build(kb.nsys, kb.offset, kb.p, CS__HV_STAGED, &o, 1, &hp, msg, sizeof msg), CS_SOLVER_OK);
            ck_assert_msg(k ? hp.stg_nlaunch >= 4 : hp.stg_nlaunch == 1, "%s", hp.describe);
            for (int l = 0; l < hp.stg_nlaunch; ++l)
                if (hp.stg_launch[CS__SL_N * l + CS__SL_REG] > most[fused]) most[fused] = hp.stg_launch[CS__SL_N * l + CS__SL_REG];
            cs__hines_hplan_free(&hp);
        }
        ck_assert_msg(most[0] == (k ? CS__STG_REG_STEPS : CS__STG_REG_STEPS_MORE(4)) && most[1] == (k ? 0 : CS__STG_REG_STEPS),
                      "%s: register steps %d (solve), %d (fused step)", k ? "large mixed" : "big-low × 1100", most[0], most[1]);
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

/* staged's host emulation of a plan for nsm multiprocessors */
static double *inv_solve_host(const batch *b, const cs_hines_gpu_options *o, int nsm, char *desc, size_t len)
{
    cs__hines_hplan hp;
    char msg[256];
    ck_assert_msg(cs__hines_hplan_build(b->nsys, b->offset, b->p, CS__HV_STAGED, o, nsm, &hp, msg, sizeof msg) == CS_SOLVER_OK, "%s", msg);
    const size_t ni = (size_t)hp.internal_size;
    double *id = calloc(ni, sizeof(double)), *iu = calloc(ni, sizeof(double)), *ir = calloc(ni, sizeof(double));
    double *x = malloc(sizeof(double) * (size_t)b->nrows);
    cs__hines_hplan_to_internal_host(&hp, CS_HINES_NODE, b->d, id);
    cs__hines_hplan_to_internal_host(&hp, CS_HINES_COUPLING, b->u, iu);
    cs__hines_hplan_to_internal_host(&hp, CS_HINES_NODE, b->rhs, ir);
    cs__hines_hplan_solve_host(&hp, id, iu, ir);
    cs__hines_hplan_from_internal_host(&hp, CS_HINES_NODE, ir, x);
    snprintf(desc, len, "%s", hp.describe);
    free(id); free(iu); free(ir);
    cs__hines_hplan_free(&hp);
    return x;
}

/* A staged fused step's constants shared by structure (cs__staged_share_constants; the case:
 * share_case_make). The host emulation, with the sharing groups' own constants overwritten by
 * NaN, still solves each cell's own system; without the sharing the NaN reaches the solution (so
 * the emulation reads where the kernel reads). keep_currents leaves i and g as they were;
 * without it they are zeroed. */
START_TEST(test_staged_share_constants)
{
    /* _i: 0 a perturbed cell and morphology 1's own b0 (the plan's cells a warp); 1-3 all equal,
     * 4, 2 or 1 cells a warp (constants once a row with 4 and 2) */
    static const int all_equal[4] = {0, 1, 1, 1}, cells[4] = {0, 4, 2, 1};
    share_case sc;
    share_case_make(&sc, all_equal[_i], cells[_i]);
    cs__hines_hplan hp;
    share_case_plan(&sc, &hp);
    long long shared = 0;
    for (int k = SC_D0; k <= SC_CDT; ++k) shared = cs__staged_share_constants(&hp, sc.t[k], k == SC_D0);
    share_case_check_groups(&sc, &hp, shared);
    share_inputs in;
    share_inputs_make(&sc, &hp, &in);
    for (int pass = 0; pass < 3; ++pass) { /* 0: shared; 1: shared, keep_currents; 2: not shared (NaN) */
        share_inputs_reset(&in);
        if (pass == 2) { free(hp.group_cbase); hp.group_cbase = NULL; }
        cs_hines_step_d st = {in.a[SC_D0], in.a[SC_CDT], in.a[SC_B0], in.a[SC_U], in.a[SC_V], in.a[SC_I], in.a[SC_G],
                              in.flags, in.wa, in.wb, 0, NULL, pass == 1, NULL, NULL};
        ck_assert_int_eq(cs__staged_step_host(&hp, &st), 0);
        const double e = share_inputs_check(&sc, &hp, &in, in.a[SC_V], in.a[SC_I], in.a[SC_G], pass == 1, pass < 2);
        if (pass == 2) ck_assert_msg(isnan(e), "without sharing the NaN constants were not read (error %.3g)", e);
        else ck_assert_msg(e <= TOL_D, "shared constants [%s]%s: error %.3g", hp.describe, pass ? ", keep_currents" : "", e);
    }
    share_inputs_free(&in);
    cs__hines_hplan_free(&hp);
    share_case_free(&sc);
}
END_TEST

/* staged with CS_HINES_STAGED_INVARIANT: each cell's x bitwise the same in the whole network of
 * the real cells and in a share of it, with 1, 2 or 4 cells per warp and for 132 or 4
 * multiprocessors (host emulation; check_staged_invariance). Without the flag the plans differ in
 * cells per warp and two-way sections, and so do some cells' x (printed). */
START_TEST(test_staged_invariant)
{
    check_staged_invariance(inv_solve_host, "host emulation");
}
END_TEST

static Suite *host_suite(void)
{
    Suite *s = suite_create("hines_gpu_planner");
    TCase *tc = tcase_create("host");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_generator);
    tcase_add_test(tc, test_host_plans);
    tcase_add_test(tc, test_host_plans_cells);
    tcase_add_test(tc, test_staged_invariant);
    tcase_add_loop_test(tc, test_staged_share_constants, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    const char *sm = getenv("CS_TEST_SMALL");
    g_small = sm && *sm && strcmp(sm, "0") != 0;
    SRunner *sr = srunner_create(host_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
