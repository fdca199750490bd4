/* A stable sort of items by 64-bit keys: least-significant-digit radix sort, a byte a pass, the
 * bytes that every key shares skipped (an epoch's event times share their high bytes, instance
 * numbers their top ones). The event queue and the GPU's staging sort ~10^4-10^6 events an epoch
 * with it: qsort's comparator calls cost ~100 ns an event there (session 23, Allen network). */
#ifndef CS_RADIX_SORT_H
#define CS_RADIX_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cs_error.h"

/* order[0 .. n): in, the items in their current order (item indices); out, the same items stably
 * sorted by key[item]. Chained calls sort by several keys (the last call's key first). n < 2^32. */
cs_status cs_radix_order(const uint64_t *key, size_t n, uint32_t *order);

/* A double as a key whose unsigned order is the double's order (-0.0 as 0.0; no NaN). */
static inline uint64_t cs_radix_key_double(double x) {
    if (x == 0.0) x = 0.0;
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (b >> 63) ? ~b : b | 0x8000000000000000ULL;
}

#endif
