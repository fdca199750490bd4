/* Helpers shared by the backends. */
#include "cs_backend.h"

#include <stdint.h>

cs_epoch_result cs_epoch_result_of(size_t nspike, const cs_spike *spikes, size_t nrow, const double *samples) {
    cs_epoch_result r = {nspike, spikes, nrow, samples, -1, 0.0};
    return r;
}

int cs_target_event_compare(const void *a, const void *b) {
    const cs_target_event *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    if (x->instance != y->instance) return x->instance < y->instance ? -1 : 1;
    if (x->weight != y->weight) return (x->weight > y->weight) - (x->weight < y->weight);
    return ((uintptr_t)x->w > (uintptr_t)y->w) - ((uintptr_t)x->w < (uintptr_t)y->w);
}
