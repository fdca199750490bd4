/* What code generated from NMODL needs beside cs_mech.h (nmodl/nmodl_codegen.py): the
 * host/device qualifier and NMODL's built-in functions that C lacks. */
#ifndef CS_NMODL_RT_H
#define CS_NMODL_RT_H

#include <math.h>

/* generated code declares what a .mod file may leave unused */
#if defined(__GNUC__) && !defined(__CUDACC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#endif

#ifdef __CUDACC__
#define CS_HD __host__ __device__
#else
#define CS_HD
#endif

/* exprelr(x) = x / (exp(x) - 1), 1 at x = 0 (NEURON's definition) */
static inline CS_HD double cs_nmodl_exprelr(double x) {
    return 1.0 + x == 1.0 ? 1.0 : x / expm1(x);
}

#endif
