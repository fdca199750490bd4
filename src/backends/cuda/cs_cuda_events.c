/* An epoch's events in the GPU's delivery order (cs__cuda_order_events, cs_backend_cuda_internal.h).
 * Grouped by instance within a type's step so that the GPU delivers instances in parallel
 * (cs_mech_gpu_ops.net_receive), each instance's events in delivery order: one stable radix sort
 * by (type, step, instance) of the events in delivery order. Before it, a pass over the events for
 * each type and a sort for each step cost ~1.2 ms an epoch at 10 000 Allen cells (session 23). */
#ifdef CS_HAVE_CUDA
#include <stdlib.h>
#include <string.h>

#include "cs_backend_cuda_internal.h"
#include "cs_radix_sort.h"

/* the sort key's fields: type (12 bits), step (20), the instance's local index + 1 (32) */
#define KEY_STEP_BITS 20
#define KEY_TYPE_SHIFT (32 + KEY_STEP_BITS)

cs_status cs__cuda_order_events(const cs__cuda_event_layout *lay, const cs_target_event *ev, size_t due, int *loc,
                                double *w, int *hi, size_t *n_out) {
    const int nsyn = lay->nsyn > 0 ? lay->nsyn : 1, nsteps = lay->nsteps;
    *n_out = 0;
    if (nsyn >= 1 << (64 - KEY_TYPE_SHIFT) || nsteps >= 1 << KEY_STEP_BITS || nsteps < 1 || lay->stride < nsteps + 1)
        return cs_error_set(CS_ERR_INTERNAL, "GPU: %d synapse types and %d steps an epoch: more than the events' "
                                             "staging takes", nsyn, nsteps);
    int q_of[CS_CUDA_MAX_MECH]; /* a group's synapse type, -1: none */
    for (int g = 0; g < CS_CUDA_MAX_MECH; ++g) q_of[g] = -1;
    for (int q = 0; q < lay->nsyn; ++q)
        if (lay->syn_groups[q] >= 0 && lay->syn_groups[q] < CS_CUDA_MAX_MECH) q_of[lay->syn_groups[q]] = q;
    uint64_t *key = malloc((due ? due : 1) * sizeof *key);
    uint32_t *ord = malloc((due ? due : 1) * sizeof *ord);
    if (!key || !ord) {
        free(key), free(ord);
        return cs_error_set(CS_ERR_NOMEM, "out of memory for %zu events", due);
    }
    size_t n = 0;
    int k = 0;
    for (size_t e = 0; e < due; ++e) { /* ev is in time order: the steps only move on */
        while (k < nsteps - 1 && ev[e].time > (double)(lay->step0 + k) * lay->dt + 0.5 * lay->dt) ++k;
        const int g = lay->inst_group[ev[e].instance];
        const int q = !lay->nsyn ? 0 : g >= 0 && g < CS_CUDA_MAX_MECH ? q_of[g] : -1;
        if (q < 0) continue; /* no synapse type receives it */
        key[n] = (uint64_t)q << KEY_TYPE_SHIFT | (uint64_t)k << 32 | (uint32_t)(lay->syn_local[ev[e].instance] + 1);
        ord[n++] = (uint32_t)e;
    }
    cs_status st = n ? cs_radix_order(key, n, ord) : CS_OK; /* stable: each instance's keep delivery order */
    if (st == CS_OK) {
        for (size_t j = 0; j < n; ++j) {
            loc[j] = lay->syn_local[ev[ord[j]].instance];
            w[j] = ev[ord[j]].weight;
        }
        /* each (type, step)'s count at hi[.. + k + 1], then the running sums, type after type */
        for (int q = 0; q < nsyn; ++q) memset(hi + (size_t)q * (size_t)lay->stride, 0, (size_t)lay->stride * sizeof *hi);
        for (size_t j = 0; j < n; ++j)
            hi[(size_t)(key[j] >> KEY_TYPE_SHIFT) * (size_t)lay->stride +
               (size_t)((key[j] >> 32) & ((1u << KEY_STEP_BITS) - 1)) + 1]++;
        int run = 0;
        for (int q = 0; q < nsyn; ++q) {
            int *h = hi + (size_t)q * (size_t)lay->stride;
            h[0] = run;
            for (int j = 0; j < nsteps; ++j) h[j + 1] = run += h[j + 1];
        }
        *n_out = n;
    }
    free(key);
    free(ord);
    return st;
}
#else
typedef int cs__cuda_events_absent; /* a build without CUDA */
#endif
