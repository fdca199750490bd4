/* Stable LSD radix sort of item indices by 64-bit keys (cs_radix_sort.h). */
#include "cs_radix_sort.h"

#include <stdlib.h>

typedef struct {
    uint64_t key;
    uint32_t item;
} pair;

cs_status cs_radix_order(const uint64_t *key, size_t n, uint32_t *order) {
    if (n < 2) return CS_OK;
    if (n > UINT32_MAX) return cs_error_set(CS_ERR_INVALID, "radix sort: %zu items, more than 2^32", n);
    pair *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    size_t (*count)[256] = calloc(8, sizeof *count);
    if (!a || !b || !count) {
        free(a), free(b), free(count);
        return cs_error_set(CS_ERR_NOMEM, "out of memory sorting %zu items", n);
    }
    for (size_t j = 0; j < n; ++j) {
        uint64_t k = key[order[j]];
        a[j] = (pair){k, order[j]};
        for (int d = 0; d < 8; ++d) count[d][(k >> (8 * d)) & 0xff]++;
    }
    for (int d = 0; d < 8; ++d) {
        if (count[d][(a[0].key >> (8 * d)) & 0xff] == n) continue; /* every key has this byte */
        size_t pos[256], s = 0;
        for (int v = 0; v < 256; ++v) pos[v] = s, s += count[d][v];
        for (size_t j = 0; j < n; ++j) b[pos[(a[j].key >> (8 * d)) & 0xff]++] = a[j];
        pair *t = a;
        a = b;
        b = t;
    }
    for (size_t j = 0; j < n; ++j) order[j] = a[j].item;
    free(a), free(b), free(count);
    return CS_OK;
}
