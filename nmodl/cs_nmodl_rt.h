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

/* Solve a·x = b in place (b becomes x) for a dense n×n row-major a: Gaussian elimination with
 * partial pivoting (KINETIC schemes, n <= 32). */
static inline CS_HD void cs_nmodl_solve(int n, double *a, double *b) {
    for (int c = 0; c < n; ++c) {
        int p = c;
        for (int r = c + 1; r < n; ++r)
            if (fabs(a[r * n + c]) > fabs(a[p * n + c])) p = r;
        if (p != c) {
            for (int k = 0; k < n; ++k) {
                double t = a[c * n + k];
                a[c * n + k] = a[p * n + k];
                a[p * n + k] = t;
            }
            double t = b[c];
            b[c] = b[p];
            b[p] = t;
        }
        for (int r = c + 1; r < n; ++r) {
            double f = a[r * n + c] / a[c * n + c];
            if (f == 0.0) continue;
            for (int k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
            b[r] -= f * b[c];
        }
    }
    for (int c = n - 1; c >= 0; --c) {
        double s = b[c];
        for (int k = c + 1; k < n; ++k) s -= a[c * n + k] * b[k];
        b[c] = s / a[c * n + c];
    }
}

#endif
