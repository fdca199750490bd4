/* Host-side planning of the GPU Hines solvers (plain C, no CUDA): variant names, the distinct
 * structures of a batch, the layouts of the per-system variants, "auto", and the dispatch to the
 * planners of fine and warp (cs_hines_plan_fine.c: re-rooting, branch splitting, levels, sorting
 * by length, greedy packing), staged (cs_hines_staged.c) and chunked (cs_hines_chunked_plan.c).
 * The host emulation of every plan is cs_hines_plan_host.c; the tree utilities the planners share
 * are in cs_hines_tree.c, their key table in cs_hines_keymap.c.
 *
 * Everything here runs once at set-up; nothing runs per solve. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_hines_gpu_impl.h"
#include "cs_hines_keymap.h"
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
    free(hp->launch_sched); free(hp->group_type); free(hp->group_cells); free(hp->group_cbase); free(hp->group_same); free(hp->stype); free(hp->stg_sched); free(hp->stg_launch); free(hp->stg_type_launch);
    memset(hp, 0, sizeof *hp);
}

#define CS__NOMEM(ptr)                                                 \
    do {                                                               \
        if (!(ptr)) { st = CS_SOLVER_ERR_NOMEM; cs__plan_msg(msg, msglen, "out of memory"); goto fail; } \
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
            cs__plan_msg(msg, msglen, "block_shared: a system of %d rows does not fit in shared memory", hp->max_n);
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
                cs__plan_msg(msg, msglen, "the padded internal layout exceeds %d elements", INT_MAX);
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

/* lorder: each structure's rows sorted by their internal offset (lmap), ties in row order. A
 * stable radix sort of the offsets less their least, up to 12 bits a pass, as few passes as their
 * span needs (qsort took a quarter of the fine and chunked plans of 16 M compartments, session 20);
 * where the offsets are distinct and span at most 2 n (fine's and warp's packs), their inverse
 * instead: one pass (the same order: distinct keys have one). Returns 0, or -1 when out of memory. */
static int cs__hplan_order_maps(cs__hines_hplan *hp)
{
    if (!hp->nlmap) return 0;
    /* the structures' maps, each once (the first system to use it: its rows) */
    int *todo = malloc(sizeof(int) * (size_t)hp->nsys), ntodo = 0;
    unsigned char *done = calloc((size_t)hp->nlmap, 1);
    hp->lorder = malloc(sizeof(int) * (size_t)hp->nlmap);
    if (!todo || !done || !hp->lorder) { free(todo); free(done); return -1; }
    for (int s = 0; s < hp->nsys; ++s) {
        const int m = hp->cell_map[s];
        if (m < 0 || done[m]) continue;
        done[m] = 1;
        todo[ntodo++] = s;
    }
    free(done);
    int failed = 0;
    const int nt = cs__plan_threads(ntodo, sizeof(int) * 4 * (size_t)hp->max_n);
    /* each map alone into its own part of lorder: on threads where there are many */
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(| : failed)
    {
        int *a = malloc(sizeof(int) * 3 * (size_t)hp->max_n + 1), *b = a ? a + hp->max_n : NULL;
        unsigned *key = malloc(sizeof(unsigned) * (size_t)hp->max_n);
        failed = !a || !key;
#pragma omp for schedule(dynamic, 8)
        for (int t = 0; t < ntodo; ++t) {
            if (failed) continue;
            const int s = todo[t], m = hp->cell_map[s], n = hp->offset[s + 1] - hp->offset[s];
            const int *lm = hp->lmap + m;
            int lo = lm[0];
            for (int i = 1; i < n; ++i) lo = lm[i] < lo ? lm[i] : lo;
            unsigned span = 0, hi = 0;
            for (int i = 0; i < n; ++i) {
                key[i] = (unsigned)((long long)lm[i] - lo);
                span |= key[i];
                hi = key[i] > hi ? key[i] : hi;
                a[i] = i;
            }
            if (hi < 2u * (unsigned)n) { /* a, b: 3 n ints; the inverse of distinct keys */
                int *inv = b, k = 0, dup = 0;
                for (unsigned j = 0; j <= hi; ++j) inv[j] = -1;
                for (int i = 0; i < n && !dup; ++i) {
                    dup = inv[key[i]] >= 0;
                    inv[key[i]] = i;
                }
                if (!dup) {
                    for (unsigned j = 0; j <= hi; ++j)
                        if (inv[j] >= 0) hp->lorder[m + k++] = inv[j];
                    continue;
                }
            }
            /* digits of at most 12 bits, as few passes as the span needs (2 for chunked's 16 M) */
            int bits = 1, count[4097];
            while (bits < 32 && span >> bits) ++bits;
            const int passes = (bits + 11) / 12, digit = (bits + passes - 1) / passes;
            const unsigned mask = (1u << digit) - 1;
            int *src = a, *dst = b;
            for (int ps = 0, shift = 0; ps < passes; ++ps, shift += digit) {
                memset(count, 0, sizeof(int) * (mask + 2));
                for (int i = 0; i < n; ++i) count[((key[src[i]] >> shift) & mask) + 1]++;
                for (unsigned d = 0; d <= mask; ++d) count[d + 1] += count[d];
                for (int i = 0; i < n; ++i) dst[count[(key[src[i]] >> shift) & mask]++] = src[i];
                int *t2 = src; src = dst; dst = t2;
            }
            memcpy(hp->lorder + m, src, sizeof(int) * (size_t)n);
        }
        free(a); free(key);
    }
    free(todo);
    return failed ? -1 : 0;
}

/* chunked: its chunks and reduced tree (cs_hines_chunked_plan.c), the reduced tree's own plan
 * (this function again: fine, or chunked while it has runs to cut, with fewer rows each time),
 * then the layout around it */
static cs_solver_status cs__plan_chunked_tree(cs__hines_hplan *hp, const int *p, const cs_hines_gpu_options *opt, int nsm,
                                              char *msg, size_t msglen)
{
    cs_hines_gpu_options o = *opt; /* L chosen once, by the top level (0: automatic), for every level */
    o.schedules = NULL;            /* made for the whole batch, not the reduced tree */
    cs__chk_reduced red;
    cs_solver_status st = cs__chunked_reduce(hp, p, opt, &red, msg, msglen);
    o.block_size = hp->chk_L;
    o.fine_flags &= ~CS_HINES_CHUNKED_CUT_ONLY; /* the reduced tree's plan: whatever it cuts */
    opt = &o;
    if (st == CS_SOLVER_OK) {
        hp->chk_sub = calloc(1, sizeof *hp->chk_sub);
        if (!hp->chk_sub) { st = CS_SOLVER_ERR_NOMEM; cs__plan_msg(msg, msglen, "out of memory"); }
    }
    if (st == CS_SOLVER_OK) {
        st = cs__hines_hplan_build(hp->nsys, red.offset_r, red.p_r, red.sub_variant, opt, nsm, hp->chk_sub, msg, msglen);
        if (st != CS_SOLVER_OK) { free(hp->chk_sub); hp->chk_sub = NULL; }
        else hp->fine_fuses = hp->chk_sub->variant == CS__HV_FINE && hp->chk_sub->fine_fuses; /* when nothing is cut */
    }
    if (st == CS_SOLVER_OK) st = cs__chunked_layout(hp, opt, &red, msg, msglen);
    cs__chunked_reduced_free(&red);
    return st;
}

/* The rest of the library's rule for "auto" (the comments in cs__hines_hplan_build), after its
 * staged trial plan where it makes one (without the fused step). */
static int cs__hines_auto_rule(int nsys, int nrows, int max_n, int uniform, const int *p, int fused, int nsm)
{
    const long long sms = nsm > 0 ? nsm : 132;
    const int fits = (long long)max_n * (3 * 8 + 24) <= CS__HINES_SMEM_BYTES_MAX;
    const int large = (long long)nsys >= 1024 * sms;
    if (fused && (long long)nsys >= (long long)CS_HINES_FUSED_MIN_PER_SM * sms) return uniform ? CS__HV_INTERLEAVED : CS__HV_VARIABLE;
    /* chunked (issue 28, H100, session 16, bench/NOTES.md): on cells too large to stage, the
     * level schedules of fine are latency-bound where unbranched runs are long: chunked ran
     * big30000 (runs of 40-110 rows) 3.6× and the FlyWire cell 10.5× as fast as fine, big10000
     * (13-35) 1.14×; with nothing to cut (big2000, 2-6) it lost 13 % (now it runs fine there) */
    if (!fits && cs__chunked_auto(nrows, p, 0)) return CS__HV_CHUNKED;
    if (uniform && fits && (!large || max_n <= 128)) return CS__HV_WARP;
    if (!uniform && fits && !large) return CS__HV_FINE;
    return uniform ? CS__HV_INTERLEAVED : CS__HV_VARIABLE;
}

/* 1 when every system's local parents equal system 0's (one structure) */
static int cs__hines_uniform(int nsys, const int *offset, const int *p)
{
    const int n0 = offset[1];
    for (int s = 1; s < nsys; ++s) {
        const int o = offset[s];
        if (offset[s + 1] - o != n0) return 0;
        for (int i = 1; i < n0; ++i)
            if (p[o + i] - o != p[i]) return 0;
    }
    return 1;
}

int cs__hines_hplan_resolve(int nsys, const int *offset, const int *p, const cs_hines_gpu_options *opt, int nsm)
{
    int v = cs__hines_variant_lookup(opt ? opt->variant : NULL);
    if (v < 0 || nsys < 1 || !offset || !p || offset[0] != 0) return -1;
    int max_n = 0;
    for (int s = 0; s < nsys; ++s) max_n = offset[s + 1] - offset[s] > max_n ? offset[s + 1] - offset[s] : max_n;
    int L = opt->block_size;
    if (v == CS__HV_AUTO) {
        if (!opt->fused_step) return -1; /* its staged trial plan decides */
        v = cs__hines_auto_rule(nsys, offset[nsys], max_n, cs__hines_uniform(nsys, offset, p), p, 1, nsm);
        L = 0;
    }
    if (v != CS__HV_CHUNKED) return v;
    /* as cs__plan_chunked_tree and cs__chunked_reduce: the top level cuts only where it pays */
    cs__chk_estimate est = {0};
    if (!L) L = cs__chunked_pick_L_est(offset[nsys], p, &est);
    if (L < CS__CHK_MIN_L || L > CS__CHK_MAX_L) return v; /* refused by the plan itself */
    if (est.L != L && cs__chunked_estimate(offset[nsys], p, 1, &L, &est) < 0) return -1;
    return cs__chunked_pays(&est, offset[nsys]) ? CS__HV_CHUNKED : CS__HV_FINE;
}

cs_solver_status cs__hines_hplan_build(int nsys, const int *offset, const int *p, int variant,
                                       const cs_hines_gpu_options *opt_in, int nsm,
                                       cs__hines_hplan *hp, char *msg, size_t msglen)
{
    cs_hines_gpu_options opt;
    if (opt_in) opt = *opt_in; else cs_hines_gpu_options_default(&opt);
    memset(hp, 0, sizeof *hp);
    if (msg && msglen) msg[0] = 0;
    int max_n = 0, *sid = NULL, *rep = NULL;
    cs_solver_status st = cs__hines_check_batch(nsys, offset, p, &max_n, msg, msglen);
    if (st != CS_SOLVER_OK) return st;
    hp->nsys = nsys;
    hp->nrows = offset[nsys];
    hp->max_n = max_n;
    hp->offset = malloc(sizeof(int) * (nsys + 1));
    CS__NOMEM(hp->offset);
    memcpy(hp->offset, offset, sizeof(int) * (nsys + 1));
    if ((st = cs__hines_structures(nsys, offset, p, &sid, &rep, &hp->nstruct)) != CS_SOLVER_OK) {
        cs__plan_msg(msg, msglen, "out of memory");
        goto fail;
    }
    hp->uniform = (hp->nstruct == 1);
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
        const int large = (long long)nsys >= 1024LL * (nsm > 0 ? nsm : 132);
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
                free(sid); free(rep);
                if (cs__hplan_order_maps(hp) == 0) return CS_SOLVER_OK;
                cs__plan_msg(msg, msglen, "out of memory");
                cs__hines_hplan_free(hp);
                return CS_SOLVER_ERR_NOMEM;
            }
            cs__staged_release(&trial); /* only its own arrays: the rest is hp's */
        }
        variant = cs__hines_auto_rule(nsys, hp->nrows, max_n, hp->uniform, p, opt.fused_step, nsm);
        if (variant == CS__HV_CHUNKED) opt.block_size = 0; /* its automatic L (block_size means another thing to other variants) */
    }
    hp->variant = variant;
    const cs__fstruct *fs = NULL; /* fine's and warp's shared schedules, where they match */
    if (cs__hines_variant_is_fine(variant) && opt.schedules &&
        !(fs = cs__schedules_match(opt.schedules, hp, p, rep, opt.fine_flags, msg, msglen)))
        st = CS_SOLVER_ERR_INVALID;
    else if (cs__hines_variant_is_fine(variant)) st = cs__plan_fine(hp, p, sid, rep, fs, &opt, nsm, msg, msglen);
    else if (variant == CS__HV_STAGED) st = cs__plan_staged(hp, p, sid, rep, &opt, nsm, msg, msglen);
    else if (variant == CS__HV_CHUNKED) st = cs__plan_chunked_tree(hp, p, &opt, nsm, msg, msglen);
    else if (variant >= 0 && variant < CS__HV_COUNT) st = cs__plan_cells(hp, p, sid, rep, &opt, msg, msglen);
    else { st = CS_SOLVER_ERR_INVALID; cs__plan_msg(msg, msglen, "unknown variant %d", variant); }
    if (st != CS_SOLVER_OK) goto fail;
    if (cs__hplan_order_maps(hp) < 0) { st = CS_SOLVER_ERR_NOMEM; cs__plan_msg(msg, msglen, "out of memory"); goto fail; }
    free(sid); free(rep);
    return CS_SOLVER_OK;
fail:
    free(sid); free(rep);
    cs__hines_hplan_free(hp);
    return st;
}
