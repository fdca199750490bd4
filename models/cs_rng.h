/* A small seeded random number generator, header-only: xoshiro256** (Blackman & Vigna, 2018)
 * seeded through splitmix64, so any 64-bit seed (0 included) gives a well-mixed state.
 * Deterministic across platforms: the same seed gives the same sequence everywhere.
 * Used for random trees (models/) and random connections (src/).
 *
 *     cs_rng r;
 *     cs_rng_seed(&r, seed);
 *     double u = cs_rng_uniform(&r);           // [0, 1)
 *     uint64_t k = cs_rng_uniform_int(&r, n);  // [0, n)
 *
 * To draw independent streams per cell, mix the cell id into the seed with
 * cs_rng_seed2(&r, seed, gid). */
#ifndef CS_RNG_H
#define CS_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} cs_rng;

/* splitmix64: advances *x and returns the next output. */
static inline uint64_t cs_rng_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void cs_rng_seed(cs_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; ++i) r->s[i] = cs_rng_splitmix64(&x);
    /* splitmix64 never yields four zeros in a row, but keep the all-zero state impossible. */
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) r->s[0] = 1;
}

/* Seed from two values (e.g. the run's seed and a cell's gid): distinct pairs give
 * unrelated streams. */
static inline void cs_rng_seed2(cs_rng *r, uint64_t seed, uint64_t stream) {
    uint64_t x = seed;
    uint64_t a = cs_rng_splitmix64(&x);
    x = stream ^ 0x5851f42d4c957f2dull;
    uint64_t b = cs_rng_splitmix64(&x);
    cs_rng_seed(r, a ^ (b * 0xd1342543de82ef95ull) ^ (b >> 29));
}

static inline uint64_t cs_rng__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* Next 64 random bits (xoshiro256**). */
static inline uint64_t cs_rng_next(cs_rng *r) {
    uint64_t *s = r->s;
    const uint64_t result = cs_rng__rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = cs_rng__rotl(s[3], 45);
    return result;
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double cs_rng_uniform(cs_rng *r) {
    return (double)(cs_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n) without modulo bias (rejection of the incomplete top
 * block); 0 when n == 0. */
static inline uint64_t cs_rng_uniform_int(cs_rng *r, uint64_t n) {
    if (n == 0) return 0;
    /* limit is a multiple of n: accepting x < limit makes x % n exactly uniform */
    const uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
    uint64_t x;
    do {
        x = cs_rng_next(r);
    } while (x >= limit);
    return x % n;
}

/* Uniform integer in [lo, hi] (inclusive); lo when hi < lo. */
static inline int64_t cs_rng_uniform_range(cs_rng *r, int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1u; /* 0 means the full 64-bit range */
    uint64_t k = span ? cs_rng_uniform_int(r, span) : cs_rng_next(r);
    return (int64_t)((uint64_t)lo + k);
}

#endif
