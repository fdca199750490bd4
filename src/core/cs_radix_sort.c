/* Stable LSD radix sort of item indices by 64-bit keys (cs_radix_sort.h). */
#include "cs_radix_sort.h"

#include <stdlib.h>

typedef struct {
    uint64_t hi, lo; /* the key: hi first, then lo */
    uint32_t item;
} pair;

/* every byte of the (hi, lo) keys, least significant first: [0, 8) of lo, then [8, 16) of hi */
static unsigned byte_of(const pair *p, int d) {
    return (unsigned)((d < 8 ? p->lo >> (8 * d) : p->hi >> (8 * (d - 8))) & 0xff);
}

cs_status cs_radix_order2(const uint64_t *hi, const uint64_t *lo, size_t n, uint32_t *order) {
    if (n < 2) return CS_OK;
    if (n > UINT32_MAX) return cs_error_set(CS_ERR_INVALID, "radix sort: %zu items, more than 2^32", n);
    const int nd = lo ? 16 : 8; /* without lo, hi's bytes are digits 0 .. 7 */
    pair *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    size_t (*count)[256] = calloc(16, sizeof *count);
    if (!a || !b || !count) {
        free(a), free(b), free(count);
        return cs_error_set(CS_ERR_NOMEM, "out of memory sorting %zu items", n);
    }
    for (size_t j = 0; j < n; ++j) { /* keys read in the given order: sequential when it is 0 .. n-1 */
        const uint32_t it = order[j];
        a[j] = lo ? (pair){hi[it], lo[it], it} : (pair){0, hi[it], it};
        for (int d = 0; d < nd; ++d) count[d][byte_of(&a[j], d)]++;
    }
    for (int d = 0; d < nd; ++d) {
        if (count[d][byte_of(&a[0], d)] == n) continue; /* every key has this byte */
        size_t pos[256], s = 0;
        for (int v = 0; v < 256; ++v) pos[v] = s, s += count[d][v];
        for (size_t j = 0; j < n; ++j) b[pos[byte_of(&a[j], d)]++] = a[j];
        pair *t = a;
        a = b;
        b = t;
    }
    for (size_t j = 0; j < n; ++j) order[j] = a[j].item;
    free(a), free(b), free(count);
    return CS_OK;
}

cs_status cs_radix_order(const uint64_t *key, size_t n, uint32_t *order) {
    return cs_radix_order2(key, NULL, n, order);
}
