/* The GPU's delivery order of an epoch's events (cs__cuda_order and cs__cuda_emit, src/backends/cuda/
 * cs_cuda_events.c) against the way it was built before session 23, kept here as the reference:
 * a pass over the events for each synapse type, step by step, then each step's events grouped by
 * instance, stably (insertion sort; a sort by (instance, position) past 64 events). Same loc,
 * weights and ranges, element for element, on random epochs: a few types, groups that receive no
 * events, steps with none and steps with hundreds, several events on one instance in a step.
 * The same when the epoch's events are ordered in two parts and merged (the backend's staging
 * ahead of the boundary). No GPU needed; skipped (77) in a build without CUDA. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#ifdef CS_HAVE_CUDA
#include "check_suite.h"
#include "cs_backend_cuda_internal.h"

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static unsigned next(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

typedef struct {
    int loc, pos;
    double w;
} ref_key;

static int ref_key_compare(const void *x, const void *y) {
    const ref_key *a = x, *b = y;
    if (a->loc != b->loc) return a->loc < b->loc ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

static void ref_group(int *loc, double *w, size_t lo, size_t hi) {
    if (hi - lo > 64) {
        ref_key *key = malloc((hi - lo) * sizeof *key);
        ck_assert_ptr_nonnull(key);
        for (size_t k = lo; k < hi; ++k) key[k - lo] = (ref_key){loc[k], (int)(k - lo), w[k]};
        qsort(key, hi - lo, sizeof *key, ref_key_compare);
        for (size_t k = lo; k < hi; ++k) loc[k] = key[k - lo].loc, w[k] = key[k - lo].w;
        free(key);
        return;
    }
    for (size_t k = lo + 1; k < hi; ++k) {
        int l = loc[k];
        double x = w[k];
        size_t j = k;
        for (; j > lo && loc[j - 1] > l; --j) loc[j] = loc[j - 1], w[j] = w[j - 1];
        loc[j] = l, w[j] = x;
    }
}

static size_t reference(const cs__cuda_event_layout *lay, const cs_target_event *ev, size_t due, int *loc, double *w,
                        int *hi) {
    const int nsyn = lay->nsyn > 0 ? lay->nsyn : 1;
    size_t n = 0;
    for (int q = 0; q < nsyn; ++q) {
        int *h = hi + (size_t)q * (size_t)lay->stride;
        size_t e = 0;
        h[0] = (int)n;
        for (int k = 0; k < lay->nsteps; ++k) {
            double t = (double)(lay->step0 + k) * lay->dt;
            for (; e < due && ev[e].time <= t + 0.5 * lay->dt; ++e) {
                if (lay->nsyn && lay->inst_group[ev[e].instance] != lay->syn_groups[q]) continue;
                loc[n] = lay->syn_local[ev[e].instance];
                w[n++] = ev[e].weight;
            }
            ref_group(loc, w, (size_t)h[k], n);
            h[k + 1] = (int)n;
        }
    }
    return n;
}

static void one_epoch(int nsyn, int nsteps, size_t due, int burst, int split) {
    enum { NINST = 3000, NGROUP = 6 };
    static int inst_group[NINST], syn_local[NINST];
    const int syn_groups[3] = {1, 3, 4}; /* groups 0, 2 and 5 receive no events */
    int count[NGROUP] = {0};
    for (int i = 0; i < NINST; ++i) {
        inst_group[i] = (int)(next() % NGROUP);
        int receives = !nsyn || inst_group[i] == 1 || inst_group[i] == 3 || inst_group[i] == 4;
        syn_local[i] = receives ? count[inst_group[i]]++ : -1;
    }
    const double dt = 0.025;
    const int64_t step0 = 4000;
    const int stride = nsteps + 3;
    cs_target_event *ev = malloc((due ? due : 1) * sizeof *ev);
    ck_assert_ptr_nonnull(ev);
    for (size_t e = 0; e < due; ++e) { /* times from before the epoch to its last midpoint */
        int s = (int)(next() % (unsigned)(nsteps + 2)) - 2;
        if (burst && next() % 2) s = nsteps / 2; /* a step of hundreds (inputs firing at once) */
        double t = ((double)(step0 + s) + 0.5 * (double)(next() % 1000) / 1000.0 - 0.5) * dt;
        if (t > ((double)(step0 + nsteps - 1)) * dt + 0.5 * dt) t = ((double)(step0 + nsteps - 1)) * dt;
        size_t inst = burst ? next() % 40 : next() % NINST; /* few instances: several events on one */
        if (nsyn) /* events target receivers only, as the network's connections do */
            while (syn_local[inst] < 0) inst = (inst + 1) % NINST;
        ev[e] = (cs_target_event){t, inst, 0.001 * (double)(next() % 50), NULL};
    }
    qsort(ev, due, sizeof *ev, cs_target_event_compare); /* the queue's delivery order */
    const cs__cuda_event_layout lay = {nsyn, syn_groups, inst_group, syn_local, step0, nsteps, dt, stride};
    const size_t nq = (size_t)(nsyn > 0 ? nsyn : 1) * (size_t)stride;
    int *loc = malloc((due + 1) * sizeof *loc), *rloc = malloc((due + 1) * sizeof *rloc);
    double *w = malloc((due + 1) * sizeof *w), *rw = malloc((due + 1) * sizeof *rw);
    int *hi = calloc(nq, sizeof *hi), *rhi = calloc(nq, sizeof *rhi);
    ck_assert(loc && rloc && w && rw && hi && rhi);
    size_t n = 0, rn = reference(&lay, ev, due, rloc, rw, rhi);
    if (split) { /* two random parts, each in delivery order, ordered apart, then merged */
        cs_target_event *part[2];
        size_t np[2] = {0, 0};
        part[0] = malloc((due + 1) * sizeof *ev), part[1] = malloc((due + 1) * sizeof *ev);
        ck_assert(part[0] && part[1]);
        for (size_t e = 0; e < due; ++e) {
            int p = (int)(next() % 4 == 0); /* the boundary's part: about a quarter */
            part[p][np[p]++] = ev[e];
        }
        cs__cuda_ordered a = {0}, b = {0}, m = {0};
        for (size_t k = np[1]; k > 1; --k) { /* the boundary's part in any order (delivered, not sorted) */
            size_t j = next() % k;
            cs_target_event t = part[1][k - 1];
            part[1][k - 1] = part[1][j];
            part[1][j] = t;
        }
        ck_assert_int_eq(cs__cuda_order(&lay, part[0], np[0], 1, &a), CS_OK);
        ck_assert_int_eq(cs__cuda_order(&lay, part[1], np[1], 0, &b), CS_OK);
        ck_assert_int_eq(cs__cuda_merge_ordered(&a, &b, &m), CS_OK);
        cs__cuda_emit(&lay, &m, loc, w, hi);
        n = m.n;
        cs__cuda_ordered_free(&a), cs__cuda_ordered_free(&b), cs__cuda_ordered_free(&m);
        free(part[0]), free(part[1]);
    } else {
        cs__cuda_ordered o = {0};
        ck_assert_int_eq(cs__cuda_order(&lay, ev, due, 1, &o), CS_OK);
        cs__cuda_emit(&lay, &o, loc, w, hi);
        n = o.n;
        cs__cuda_ordered_free(&o);
    }
    ck_assert_uint_eq(n, rn);
    for (size_t j = 0; j < n; ++j) {
        ck_assert_msg(loc[j] == rloc[j], "event %zu: instance %d, expected %d", j, loc[j], rloc[j]);
        ck_assert_msg(w[j] == rw[j], "event %zu: weight %g, expected %g", j, w[j], rw[j]);
    }
    for (int q = 0; q < (nsyn > 0 ? nsyn : 1); ++q)
        for (int k = 0; k <= nsteps; ++k)
            ck_assert_msg(hi[q * stride + k] == rhi[q * stride + k], "type %d step %d: %d, expected %d", q, k,
                          hi[q * stride + k], rhi[q * stride + k]);
    free(ev), free(loc), free(rloc), free(w), free(rw), free(hi), free(rhi);
}

START_TEST(spread_epochs) {
    for (int r = 0; r < 20; ++r) one_epoch(3, 1 + (int)(next() % 80), next() % 5000, 0, 0);
}
END_TEST

START_TEST(bursts_on_few_instances) {
    for (int r = 0; r < 20; ++r) one_epoch(3, 40, 2000 + next() % 3000, 1, 0);
}
END_TEST

START_TEST(one_untyped_kind_and_empty) {
    one_epoch(0, 40, 3000, 0, 0);
    one_epoch(3, 40, 0, 0, 0);
    one_epoch(3, 1, 500, 1, 0);
}
END_TEST

/* an epoch's events ordered in two parts (those known before the boundary, those its spikes add)
 * and merged: the same arrays as ordered at once */
START_TEST(two_parts_merged) {
    for (int r = 0; r < 20; ++r) one_epoch(3, 1 + (int)(next() % 80), next() % 5000, 0, 1);
    for (int r = 0; r < 20; ++r) one_epoch(3, 40, 2000 + next() % 3000, 1, 1);
    one_epoch(0, 40, 3000, 0, 1);
    one_epoch(3, 40, 0, 0, 1);
}
END_TEST

START_TEST(too_many_steps_refused) {
    const int g = 0, l = 0;
    const cs__cuda_event_layout lay = {1, &g, &g, &l, 0, 1 << 20, 0.025, (1 << 20) + 1};
    cs__cuda_ordered o = {0};
    o.n = 1;
    ck_assert_int_eq(cs__cuda_order(&lay, NULL, 0, 1, &o), CS_ERR_INTERNAL);
    ck_assert_uint_eq(o.n, 0);
    cs__cuda_ordered_free(&o);
}
END_TEST

int main(void) {
    Suite *s = suite_create("cuda_events");
    TCase *tc = tcase_create("order");
    tcase_add_test(tc, spread_epochs);
    tcase_add_test(tc, bursts_on_few_instances);
    tcase_add_test(tc, one_untyped_kind_and_empty);
    tcase_add_test(tc, two_parts_merged);
    tcase_add_test(tc, too_many_steps_refused);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
#else
int main(void) { return 77; }
#endif
