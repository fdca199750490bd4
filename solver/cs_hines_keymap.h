/* An open-addressing table of integer-array keys, shared by the Hines planners (cs_hines_plan.c:
 * distinct cell structures; cs_hines_plan_fine.c: pack types). Plain C, set-up time only. */
#ifndef CS_HINES_KEYMAP_H
#define CS_HINES_KEYMAP_H

#include <stdint.h>

/* open-addressing table of integer-array keys (structures, pack types) */
typedef struct {
    int cap, n;
    int *slot;             /* id or -1 */
    uint64_t *hash;        /* per id */
    int *key_off, *key_len;/* per id, into keys (cs__km_get_rows: the first row in p) */
    int *keys;
    int keys_n, keys_cap, ids_cap;
} cs__keymap;

/* 0, or -1 when out of memory */
int cs__km_init(cs__keymap *m, int expect);
void cs__km_free(cs__keymap *m);
/* The id of key[0..len) (ids count from 0 in order of first insertion); *is_new: 1 when it was
 * added now. -1 when out of memory. */
int cs__km_get(cs__keymap *m, const int *key, int len, int *is_new);
/* The same for the structure of rows [o, o + n) of the global parents p: the key is its local
 * parents (-1, then p[o + i] - o), kept by reference (the rows of its first system: p must
 * outlive the table), not copied (at 16 M rows of distinct cells the copies were 64 MB). A table
 * takes keys of one kind: arrays (cs__km_get) or rows (this). */
int cs__km_get_rows(cs__keymap *m, const int *p, int o, int n, int *is_new);
/* cs__km_get_rows in two steps: the key's hash (any thread), then its id with that hash */
uint64_t cs__km_hash_rows(const int *p, int o, int n);
int cs__km_get_rows_hashed(cs__keymap *m, const int *p, int o, int n, uint64_t h, int *is_new);

#endif
