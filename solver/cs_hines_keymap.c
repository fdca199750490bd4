/* The integer-array key table of the Hines planners (cs_hines_keymap.h). */
#include <stdlib.h>
#include <string.h>

#include "cs_hines_keymap.h"

static uint64_t cs__fnv(uint64_t h, const int *a, int n)
{
    for (int i = 0; i < n; ++i) { h ^= (uint32_t)a[i]; h *= 0x100000001B3ull; h ^= h >> 29; }
    return h;
}

int cs__km_init(cs__keymap *m, int expect)
{
    memset(m, 0, sizeof *m);
    m->cap = 16;
    while (m->cap < 2 * expect + 16) m->cap *= 2;
    m->slot = malloc(sizeof(int) * m->cap);
    m->ids_cap = 16;
    m->hash = malloc(sizeof(uint64_t) * m->ids_cap);
    m->key_off = malloc(sizeof(int) * m->ids_cap);
    m->key_len = malloc(sizeof(int) * m->ids_cap);
    m->keys_cap = 1024;
    m->keys = malloc(sizeof(int) * m->keys_cap);
    if (!m->slot || !m->hash || !m->key_off || !m->key_len || !m->keys) return -1;
    for (int i = 0; i < m->cap; ++i) m->slot[i] = -1;
    return 0;
}
void cs__km_free(cs__keymap *m)
{
    free(m->slot); free(m->hash); free(m->key_off); free(m->key_len); free(m->keys);
}

/* a new id at free slot i (hash h, key at off, len); grows and rehashes past half full; -1 on no memory */
static int cs__km_add(cs__keymap *m, int i, uint64_t h, int off, int len)
{
    if (m->n + 1 > m->ids_cap) {
        m->ids_cap *= 2;
        uint64_t *h2 = realloc(m->hash, sizeof(uint64_t) * m->ids_cap);
        if (h2) m->hash = h2;
        int *o2 = realloc(m->key_off, sizeof(int) * m->ids_cap);
        if (o2) m->key_off = o2;
        int *l2 = realloc(m->key_len, sizeof(int) * m->ids_cap);
        if (l2) m->key_len = l2;
        if (!h2 || !o2 || !l2) return -1;
    }
    int id = m->n++;
    m->hash[id] = h;
    m->key_off[id] = off;
    m->key_len[id] = len;
    m->slot[i] = id;
    if (2 * m->n > m->cap) { /* grow and rehash */
        int ncap = m->cap * 2;
        int *ns = malloc(sizeof(int) * ncap);
        if (!ns) return -1;
        for (int j = 0; j < ncap; ++j) ns[j] = -1;
        for (int k = 0; k < m->n; ++k) {
            int j = (int)(m->hash[k] & (uint64_t)(ncap - 1));
            while (ns[j] >= 0) j = (j + 1) & (ncap - 1);
            ns[j] = k;
        }
        free(m->slot);
        m->slot = ns;
        m->cap = ncap;
    }
    return id;
}

/* id of key (inserted when new; *is_new set); -1 on no memory */
int cs__km_get(cs__keymap *m, const int *key, int len, int *is_new)
{
    uint64_t h = cs__fnv(0xCBF29CE484222325ull ^ (uint64_t)len, key, len);
    int i = (int)(h & (uint64_t)(m->cap - 1));
    for (;;) {
        int id = m->slot[i];
        if (id < 0) break;
        if (m->hash[id] == h && m->key_len[id] == len &&
            memcmp(m->keys + m->key_off[id], key, sizeof(int) * (size_t)len) == 0) {
            *is_new = 0;
            return id;
        }
        i = (i + 1) & (m->cap - 1);
    }
    while (m->keys_n + len > m->keys_cap) {
        m->keys_cap *= 2;
        int *k2 = realloc(m->keys, sizeof(int) * m->keys_cap);
        if (!k2) return -1;
        m->keys = k2;
    }
    memcpy(m->keys + m->keys_n, key, sizeof(int) * (size_t)len);
    const int id = cs__km_add(m, i, h, m->keys_n, len);
    if (id < 0) return -1;
    m->keys_n += len;
    *is_new = 1;
    return id;
}

/* the local parents of rows [o, o + n) equal those of rows [q, q + n) */
static int cs__rows_equal(const int *p, int o, int q, int n)
{
    for (int i = 1; i < n; ++i)
        if (p[o + i] - o != p[q + i] - q) return 0;
    return 1;
}

uint64_t cs__km_hash_rows(const int *p, int o, int n)
{
    uint64_t h = 0xCBF29CE484222325ull ^ (uint64_t)n;
    for (int i = 1; i < n; ++i) { h ^= (uint32_t)(p[o + i] - o); h *= 0x100000001B3ull; h ^= h >> 29; }
    return h;
}

int cs__km_get_rows(cs__keymap *m, const int *p, int o, int n, int *is_new)
{
    return cs__km_get_rows_hashed(m, p, o, n, cs__km_hash_rows(p, o, n), is_new);
}

int cs__km_get_rows_hashed(cs__keymap *m, const int *p, int o, int n, uint64_t h, int *is_new)
{
    int i = (int)(h & (uint64_t)(m->cap - 1));
    for (;;) {
        int id = m->slot[i];
        if (id < 0) break;
        if (m->hash[id] == h && m->key_len[id] == n && cs__rows_equal(p, o, m->key_off[id], n)) {
            *is_new = 0;
            return id;
        }
        i = (i + 1) & (m->cap - 1);
    }
    const int id = cs__km_add(m, i, h, o, n);
    if (id < 0) return -1;
    *is_new = 1;
    return id;
}
