/* An epoch's events in the GPU's delivery order (cs_backend_cuda_internal.h, "cs_cuda_events.c").
 * Grouped by instance within a type's step so that the GPU delivers instances in parallel
 * (cs_mech_gpu_ops.net_receive), each instance's events in delivery order: one stable radix sort
 * by (type, step, instance) of the events in delivery order. Before it, a pass over the events for
 * each type and a sort for each step cost ~1.2 ms an epoch at 10 000 Allen cells (session 23).
 * Two ordered sets merge by the same key, then by delivery order: the backend orders most of an
 * epoch's events while the previous epoch runs, and only those its spikes add at the boundary. */
#ifdef CS_HAVE_CUDA
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cs_backend_cuda_internal.h"
#include "cs_radix_sort.h"

/* the sort key's fields: type (12 bits), step (20), the instance's local index + 1 (32) */
#define KEY_STEP_BITS 20
#define KEY_TYPE_SHIFT (32 + KEY_STEP_BITS)

static cs_status reserve(cs__cuda_ordered *o, size_t n) {
    if (n <= o->cap) return CS_OK;
    size_t nc = o->cap ? o->cap : 1024;
    while (nc < n) nc *= 2;
    uint64_t *k = realloc(o->key, nc * sizeof *k);
    if (k) o->key = k;
    cs_target_event *e = realloc(o->ev, nc * sizeof *e);
    if (e) o->ev = e;
    if (!k || !e) return cs_error_set(CS_ERR_NOMEM, "out of memory for %zu events", n);
    o->cap = nc;
    return CS_OK;
}

void cs__cuda_ordered_free(cs__cuda_ordered *o) {
    free(o->key);
    free(o->ev);
    memset(o, 0, sizeof *o);
}

/* the first step of the epoch whose midpoint an event at time t [ms] is due by (the last: later) */
static int step_of(const cs__cuda_event_layout *lay, double t) {
    const double x = ceil((t - 0.5 * lay->dt) / lay->dt) - (double)lay->step0;
    int k = x < 0 ? 0 : x > lay->nsteps - 1 ? lay->nsteps - 1 : (int)x;
    /* the division's rounding: settle on the thresholds themselves, as the ordered walk does */
    while (k > 0 && t <= (double)(lay->step0 + k - 1) * lay->dt + 0.5 * lay->dt) --k;
    while (k < lay->nsteps - 1 && t > (double)(lay->step0 + k) * lay->dt + 0.5 * lay->dt) ++k;
    return k;
}

cs_status cs__cuda_order(const cs__cuda_event_layout *lay, const cs_target_event *ev, size_t due, int in_order,
                         cs__cuda_ordered *out) {
    const int nsyn = lay->nsyn > 0 ? lay->nsyn : 1, nsteps = lay->nsteps;
    out->n = 0;
    if (nsyn >= 1 << (64 - KEY_TYPE_SHIFT) || nsteps >= 1 << KEY_STEP_BITS || nsteps < 1 || lay->stride < nsteps + 1)
        return cs_error_set(CS_ERR_INTERNAL, "GPU: %d synapse types and %d steps an epoch: more than the events' "
                                             "staging takes", nsyn, nsteps);
    int q_of[CS_CUDA_MAX_MECH]; /* a group's synapse type, -1: none */
    for (int g = 0; g < CS_CUDA_MAX_MECH; ++g) q_of[g] = -1;
    for (int q = 0; q < lay->nsyn; ++q)
        if (lay->syn_groups[q] >= 0 && lay->syn_groups[q] < CS_CUDA_MAX_MECH) q_of[lay->syn_groups[q]] = q;
    uint64_t *key = malloc((due ? due : 1) * sizeof *key);
    uint32_t *ord = malloc((due ? due : 1) * sizeof *ord);
    cs_status st = key && ord ? reserve(out, due) : cs_error_set(CS_ERR_NOMEM, "out of memory for %zu events", due);
    size_t n = 0;
    int k = 0;
    for (size_t e = 0; st == CS_OK && e < due; ++e) { /* in time order, the steps only move on */
        if (in_order)
            while (k < nsteps - 1 && ev[e].time > (double)(lay->step0 + k) * lay->dt + 0.5 * lay->dt) ++k;
        else
            k = step_of(lay, ev[e].time);
        const int g = lay->inst_group[ev[e].instance];
        const int q = !lay->nsyn ? 0 : g >= 0 && g < CS_CUDA_MAX_MECH ? q_of[g] : -1;
        if (q < 0) continue; /* no synapse type receives it */
        key[n] = (uint64_t)q << KEY_TYPE_SHIFT | (uint64_t)k << 32 | (uint32_t)(lay->syn_local[ev[e].instance] + 1);
        ord[n++] = (uint32_t)e;
    }
    /* stable: each instance's events keep their delivery order. The sort reads key[item]: the
     * items here are the places 0 .. n-1 of the kept events, ord[] their indices in ev */
    uint32_t *place = st == CS_OK ? malloc((n ? n : 1) * sizeof *place) : NULL;
    if (st == CS_OK && !place) st = cs_error_set(CS_ERR_NOMEM, "out of memory for %zu events", due);
    for (size_t j = 0; st == CS_OK && j < n; ++j) place[j] = (uint32_t)j;
    if (st == CS_OK && n) st = cs_radix_order(key, n, place);
    for (size_t j = 0; st == CS_OK && j < n; ++j) {
        out->key[j] = key[place[j]];
        out->ev[j] = ev[ord[place[j]]];
    }
    /* events in any order: those of one key (type, step, instance) into delivery order */
    for (size_t a = 0, b; st == CS_OK && !in_order && a < n; a = b) {
        for (b = a + 1; b < n && out->key[b] == out->key[a]; ++b) continue;
        for (size_t i = a + 1; i < b; ++i)
            for (size_t j = i; j > a && cs_target_event_compare(&out->ev[j - 1], &out->ev[j]) > 0; --j) {
                cs_target_event t = out->ev[j];
                out->ev[j] = out->ev[j - 1];
                out->ev[j - 1] = t;
            }
    }
    if (st == CS_OK) out->n = n;
    free(key), free(ord), free(place);
    return st;
}

cs_status cs__cuda_merge_ordered(const cs__cuda_ordered *a, const cs__cuda_ordered *b, cs__cuda_ordered *out) {
    out->n = 0;
    CS_TRY(reserve(out, a->n + b->n));
    size_t i = 0, j = 0, k = 0;
    while (i < a->n && j < b->n) {
        const int first = a->key[i] != b->key[j] ? a->key[i] < b->key[j]
                                                 : cs_target_event_compare(&a->ev[i], &b->ev[j]) <= 0;
        if (first) out->key[k] = a->key[i], out->ev[k++] = a->ev[i++];
        else out->key[k] = b->key[j], out->ev[k++] = b->ev[j++];
    }
    for (; i < a->n; ++i, ++k) out->key[k] = a->key[i], out->ev[k] = a->ev[i];
    for (; j < b->n; ++j, ++k) out->key[k] = b->key[j], out->ev[k] = b->ev[j];
    out->n = k;
    return CS_OK;
}

void cs__cuda_emit(const cs__cuda_event_layout *lay, const cs__cuda_ordered *o, int *loc, double *w, int *hi) {
    const int nsyn = lay->nsyn > 0 ? lay->nsyn : 1;
    for (size_t j = 0; j < o->n; ++j) {
        loc[j] = (int)(uint32_t)o->key[j] - 1;
        w[j] = o->ev[j].weight;
    }
    /* each (type, step)'s count at hi[.. + k + 1], then the running sums, type after type */
    for (int q = 0; q < nsyn; ++q) memset(hi + (size_t)q * (size_t)lay->stride, 0, (size_t)lay->stride * sizeof *hi);
    for (size_t j = 0; j < o->n; ++j)
        hi[(size_t)(o->key[j] >> KEY_TYPE_SHIFT) * (size_t)lay->stride +
           (size_t)((o->key[j] >> 32) & ((1u << KEY_STEP_BITS) - 1)) + 1]++;
    int run = 0;
    for (int q = 0; q < nsyn; ++q) {
        int *h = hi + (size_t)q * (size_t)lay->stride;
        h[0] = run;
        for (int k = 0; k < lay->nsteps; ++k) h[k + 1] = run += h[k + 1];
    }
}

#else
typedef int cs__cuda_events_absent; /* a build without CUDA */
#endif
