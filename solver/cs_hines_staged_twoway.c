/* Two-way sections of a staged schedule (cs_hines_gpu_impl.h, CS__STG_TOP): which rows of a
 * structure run downwards from their section's top, the list schedule that runs them, and the
 * coupling each row's u slot must hold.
 *
 * Why: a leaf-first (Hines) schedule is at least as many steps as the tree is high, and at small
 * batches a solve costs ~0.21 µs per step (bench/NOTES.md, "Session 8"): big-low's 108 steps
 * against medium-high's 28. Eliminating a long section from both ends at once halves it, and its
 * top half does not wait for the subtrees below; cutting long sections into pieces, each
 * eliminated so, shortens them further (big-low 108 → 41 steps with whole sections, 32 with
 * pieces, with 32 lanes).
 *
 * The schedule is a list schedule on the "receiver tree" (each row sends its elimination to one
 * row: its parent, or for a top row the next row down, or for M the branch point P), as in
 * cs__staged_schedule, with three additions: a top row's successor is always the same lane's next
 * row (the lane carries the fill coupling to P); M goes to the lane of its top part once its other
 * children are done, the lane holding its carry until then; and one lane stays out of top parts,
 * so that the rows M waits for always have a lane. A lane that held is a wasted slot, so the
 * schedule is built again with each section's start delayed by the steps its lane held, and for
 * several piece lengths and shortest top parts. The shortest schedule is kept. */
#include <stdlib.h>
#include <string.h>

#include "cs_hines_gpu_impl.h"

enum { CS__TW_NORMAL, CS__TW_TOP, CS__TW_MEET };

/* The roles. A section is a chain T..B of rows with one child each but B, hanging from P (P has
 * several children or is the root); a section longer than max_piece rows (0: no limit) is cut
 * into pieces of equal length, each hanging from the last row of the piece above, as if that
 * row branched (its top part's fill couples to that row). With F the estimated step at which B's
 * subtrees are done (one lane per ready row, no limit), a top part of m rows from step 0 and a
 * bottom part of L - 1 - m rows from step F meet at chain[m] = M soonest for m = (F + L) / 2;
 * pieces where m < min_top run bottom-up. recv: the row each row's elimination goes to; top_of: for top
 * rows and M, the T of their piece (else -1). work: 4n ints, cut: n bytes. */
static void cs__tw_roles(int n, const int *lp, int max_piece, int min_top, int *recv, unsigned char *role, int *top_of, int *work,
                         unsigned char *cut)
{
    int *nch = work, *kid = work + n, *chain = work + 2 * n, *done_below = work + 3 * n;
    for (int i = 0; i < n; ++i) {
        nch[i] = 0;
        done_below[i] = 0;
        recv[i] = lp[i];
        role[i] = CS__TW_NORMAL;
        top_of[i] = -1;
        cut[i] = 0;
    }
    for (int i = 1; i < n; ++i) { nch[lp[i]]++; kid[lp[i]] = i; }
    for (int r = 1; r < n && max_piece > 0; ++r) { /* the cuts of the long sections */
        if (nch[lp[r]] == 1 && lp[r] != 0) continue;
        int L = 1;
        for (int c = r; nch[c] == 1; c = kid[c]) chain[L++] = kid[c];
        const int pieces = (L + max_piece - 1) / max_piece, len = (L + pieces - 1) / pieces;
        for (int k = len; k < L; k += len) cut[chain[k]] = 1;
    }
    for (int r = n - 1; r >= 1; --r) { /* parents first in lp: the pieces below r are done */
        const int P = lp[r];
        if (nch[P] == 1 && P != 0 && !cut[r]) continue; /* r is inside a piece */
        int L = 0, c = r;
        chain[L++] = c;
        while (nch[c] == 1 && !cut[kid[c]]) { c = kid[c]; chain[L++] = c; }
        const int F = done_below[c];
        int m = (F + L) / 2;
        if (m > L - 1) m = L - 1;
        if (m < min_top) m = 0;
        const int out = m ? (m > F + L - 1 - m ? m : F + L - 1 - m) + 1 : F + L; /* the step P may take it */
        if (out > done_below[P]) done_below[P] = out;
        if (!m) continue;
        for (int k = 0; k < m; ++k) { role[chain[k]] = CS__TW_TOP; recv[chain[k]] = chain[k + 1]; top_of[chain[k]] = r; }
        role[chain[m]] = CS__TW_MEET;
        recv[chain[m]] = P;
        top_of[chain[m]] = r;
    }
}

/* One list schedule (steps of S slots: row or -1, then 0 or CS__STG_HOLD) with each section's
 * top released at step rel[T]; held[T] counts the steps its lane held. Returns the steps, or -1
 * past cap steps. */
static int cs__tw_pass(int n, const int *recv, const unsigned char *role, const int *top_of, const int *depth, int max_depth,
                       const int *rel, int S, int cap, int *sched, int *held, int *work)
{
    int *remaining = work, *bucket_head = work + n, *next = work + 2 * n + 1, *step_of = work + 3 * n + 1;
    int last[CS__STG_MAX_SLOTS], in_top[CS__STG_MAX_SLOTS];
    for (int i = 0; i <= max_depth; ++i) bucket_head[i] = -1;
    for (int i = 0; i < n; ++i) { remaining[i] = 0; step_of[i] = -1; held[i] = 0; }
    for (int i = 1; i < n; ++i) remaining[recv[i]]++;
    int top = 0; /* no bucket above top holds a row */
    /* ready from the start: leaves and the sections' tops (top rows below them and M never wait
     * in the list: their lane takes them) */
    for (int i = n - 1; i >= 0; --i)
        if (!remaining[i] && (role[i] == CS__TW_NORMAL || top_of[i] == i)) cs__ready_push(i, depth, bucket_head, next, &top);
    for (int s = 0; s < S; ++s) { last[s] = -1; in_top[s] = 0; }
    int done_rows = 0, t = 0;
    while (done_rows < n) {
        if (t >= cap) return -1;
        int rows[CS__STG_MAX_SLOTS], hold[CS__STG_MAX_SLOTS], lanes_in_top = 0;
        for (int s = 0; s < S; ++s) { rows[s] = -1; hold[s] = 0; }
        /* lanes in a top part: the next top row (never clashes: its only sender is this lane's),
         * then M where its other children are done and no row of this step sends to P */
        for (int pass = 0; pass < 2; ++pass)
            for (int s = 0; s < S; ++s) {
                if (!in_top[s]) continue;
                const int q = recv[last[s]], is_top = role[q] == CS__TW_TOP;
                if (is_top != (pass == 0)) continue;
                if (is_top) { rows[s] = q; continue; }
                int wait = remaining[q] != 0;
                for (int s2 = 0; s2 < S; ++s2) wait |= rows[s2] > 0 && recv[rows[s2]] == recv[q];
                if (wait) { hold[s] = 1; held[top_of[q]]++; }
                else rows[s] = q;
            }
        /* carries: a parent whose last child was the slot's row of the previous step; a sibling of
         * an earlier slot's row goes to the ready list instead (M is its lane's) */
        for (int s = 0; s < S; ++s) {
            const int c = last[s];
            if (in_top[s] || c <= 0) continue;
            const int p = recv[c];
            if (remaining[p] != 0 || step_of[p] >= 0 || role[p] == CS__TW_MEET) continue;
            int clash = 0;
            for (int s2 = 0; s2 < S; ++s2) clash |= rows[s2] > 0 && p > 0 && recv[rows[s2]] == recv[p];
            step_of[p] = t; /* taken now, or queued below */
            if (clash) { step_of[p] = -1; cs__ready_push(p, depth, bucket_head, next, &top); continue; }
            rows[s] = p;
        }
        for (int s = 0; s < S; ++s) {
            if (rows[s] >= 0) step_of[rows[s]] = t;
            lanes_in_top += hold[s] || (rows[s] >= 0 && role[rows[s]] == CS__TW_TOP);
        }
        /* free slots: the deepest ready row that no row of this step shares a parent with; a
         * section's top once released, and only while another lane stays out of top parts */
        for (int s = 0; s < S; ++s) {
            if (rows[s] >= 0 || hold[s]) continue;
            const int pick = cs__ready_take(bucket_head, next, top, recv, rows, S, top_of, rel, t, lanes_in_top < S - 1);
            if (pick < 0) break;
            rows[s] = pick;
            step_of[pick] = t;
            lanes_in_top += role[pick] == CS__TW_TOP;
        }
        while (top > 0 && bucket_head[top] < 0) --top;
        for (int s = 0; s < S; ++s) {
            sched[2 * (t * S + s)] = rows[s];
            sched[2 * (t * S + s) + 1] = hold[s] ? CS__STG_HOLD : 0;
            if (hold[s]) continue; /* the lane keeps its last row and its carry */
            last[s] = rows[s];
            in_top[s] = rows[s] >= 0 && role[rows[s]] == CS__TW_TOP;
            if (rows[s] < 0) continue;
            ++done_rows;
            if (recv[rows[s]] >= 0) remaining[recv[rows[s]]]--;
        }
        ++t;
    }
    return t;
}

int cs__staged_schedule_tw(int n, const int *lp, int S, int *sched, int *edge)
{
    const int cap = 2 * n + 64; /* steps; the plain schedule is at most n */
    /* the longest pieces tried: whole sections, then shorter pieces (more top parts at once); and
     * the shortest top part (1 suits bushy trees' short sections, 3 fewer holds) */
    static const int max_pieces[] = {0, 32, 24, 16, 12, 8}, min_tops[] = {2, 1, 3};
    int *recv = malloc(sizeof(int) * (size_t)n), *top_of = malloc(sizeof(int) * (size_t)n);
    int *best_recv = malloc(sizeof(int) * (size_t)n), *best_top_of = malloc(sizeof(int) * (size_t)n);
    int *depth = malloc(sizeof(int) * (size_t)n), *rel = malloc(sizeof(int) * (size_t)n), *held = malloc(sizeof(int) * (size_t)n);
    int *work = malloc(sizeof(int) * (4 * (size_t)n + 1)), *try_sched = malloc(sizeof(int) * 2 * (size_t)S * (size_t)cap);
    int *step_of = malloc(sizeof(int) * (size_t)n), *slot_of = malloc(sizeof(int) * (size_t)n);
    unsigned char *role = malloc((size_t)n), *best_role = malloc((size_t)n), *cut = malloc((size_t)n);
    int best = -1, rc = -1;
    if (!recv || !top_of || !best_recv || !best_top_of || !depth || !rel || !held || !work || !try_sched || !step_of || !slot_of ||
        !role || !best_role || !cut)
        goto done;
    const int npiece = (int)(sizeof max_pieces / sizeof max_pieces[0]), ntop = (int)(sizeof min_tops / sizeof min_tops[0]);
    for (int tried = 0; tried < npiece * ntop; ++tried) {
        cs__tw_roles(n, lp, max_pieces[tried % npiece], min_tops[tried / npiece], recv, role, top_of, work, cut);
        /* depth in the receiver tree (its rows are not numbered parents first): breadth-first
         * from the root over children lists */
        int *head = work, *sib = work + n, *queue = work + 2 * n, qh = 0, qt = 0, max_depth = 0;
        for (int i = 0; i < n; ++i) head[i] = -1;
        for (int i = n - 1; i >= 1; --i) { sib[i] = head[recv[i]]; head[recv[i]] = i; }
        depth[0] = 0;
        queue[qt++] = 0;
        while (qh < qt) {
            const int x = queue[qh++];
            for (int c = head[x]; c >= 0; c = sib[c]) { depth[c] = depth[x] + 1; queue[qt++] = c; }
        }
        for (int i = 0; i < n; ++i) { max_depth = depth[i] > max_depth ? depth[i] : max_depth; rel[i] = 0; }
        for (int it = 0; it < 4; ++it) { /* the best of the schedules with the starts delayed by their holds */
            const int steps = cs__tw_pass(n, recv, role, top_of, depth, max_depth, rel, S, cap, try_sched, held, work);
            if (steps >= 0 && (best < 0 || steps < best)) {
                best = steps;
                memcpy(sched, try_sched, sizeof(int) * 2 * (size_t)S * (size_t)steps);
                memcpy(best_recv, recv, sizeof(int) * (size_t)n);
                memcpy(best_top_of, top_of, sizeof(int) * (size_t)n);
                memcpy(best_role, role, (size_t)n);
            }
            int any = 0;
            for (int i = 0; i < n; ++i) { rel[i] += held[i]; any |= held[i]; }
            if (!any) break;
        }
    }
    { /* the best schedule's roles (both sets are freed below) */
        int *x = recv; recv = best_recv; best_recv = x;
        x = top_of; top_of = best_top_of; best_top_of = x;
        unsigned char *y = role; role = best_role; best_role = y;
    }
    if (best < 0) { rc = -2; goto done; } /* no schedule within the cap: the caller keeps one-way */
    for (int k = 0; k < best * S; ++k)
        if (sched[2 * k] >= 0) { step_of[sched[2 * k]] = k / S; slot_of[sched[2 * k]] = k % S; }
    /* flags: a top row always carries (to its lane's next row, after any holds); other rows carry
     * when the receiver is the same slot's row of the next step, and gather otherwise */
    for (int k = 0; k < best * S; ++k) {
        const int r = sched[2 * k];
        if (r < 0) continue;
        int *f = &sched[2 * k + 1];
        if (role[r] == CS__TW_TOP) *f |= CS__STG_TOP | CS__STG_CARRY_OUT | (top_of[r] == r ? CS__STG_START : 0);
        if (role[r] == CS__TW_MEET) *f |= CS__STG_MEET;
        if (r == 0) { *f |= CS__STG_ROOT; continue; }
        const int p = recv[r];
        *f |= p << 8;
        if (role[r] == CS__TW_TOP) continue;
        if (step_of[p] == step_of[r] + 1 && slot_of[p] == slot_of[r]) *f |= CS__STG_CARRY_OUT;
        else sched[2 * (step_of[p] * S + slot_of[p]) + 1] |= CS__STG_GATHER_IN;
    }
    /* the coupling each row's u slot holds: a top row its child's, M its section top's (to P) */
    for (int i = 0; edge && i < n; ++i) edge[i] = role[i] == CS__TW_TOP ? recv[i] : role[i] == CS__TW_MEET ? top_of[i] : i;
    rc = best;
done:
    free(recv); free(top_of); free(best_recv); free(best_top_of); free(depth); free(rel); free(held); free(work); free(try_sched);
    free(step_of); free(slot_of); free(role); free(best_role); free(cut);
    return rc;
}
