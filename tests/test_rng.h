/* The tests' random data: xorshift64 (Marsaglia), reproducible from a seed. One copy per test
 * program (static state); set g_rng to reseed. */
#ifndef CS_TEST_RNG_H
#define CS_TEST_RNG_H

#include <stdint.h>

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static double urand(void) /* uniform in [0, 1) */
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (double)(g_rng >> 11) * 0x1.0p-53;
}

#endif
