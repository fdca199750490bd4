/* What code generated from NMODL needs beside cs_mech.h (nmodl/nmodl_codegen.py): the
 * host/device qualifier and NMODL's built-in functions that C lacks. */
#ifndef CS_NMODL_RT_H
#define CS_NMODL_RT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

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

/* The CPU's memo of exp and pow at one call site whose arguments are a mechanism's parameters,
 * constants, dt or celsius (nmodl_codegen: Gen.memo_call): consecutive instances mostly share
 * those values (every synapse of an edge type has the same tau), so exp(-dt/tau) is reused, not
 * recomputed; Exp2Syn's two exps were ~30 % of a CPU step of an Allen network (bench/NOTES.md).
 * The cached value is returned only for bitwise the same arguments, so results are bit for bit
 * those of exp and pow. memo is NULL (compute) on the GPU, where the arithmetic is cheaper than
 * the memo's bytes, and outside the CPU's instance loops. */
typedef struct {
    uint64_t a[2], b[2]; /* the arguments' bits, of the two last different calls */
    double y[2];         /* exp(a) or pow(a, b) */
    int filled, next;    /* entries set; the one to replace next */
} cs_nmodl_memo;

static inline CS_HD uint64_t cs_nmodl_bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* The entry of (a, b) in m, else -1. Two entries: the instances of two synapse types interleave
 * (excitatory and inhibitory edges onto a cell): one entry missed 15 % of the calls there. */
static inline CS_HD int cs_nmodl_memo_find(const cs_nmodl_memo *m, uint64_t a, uint64_t b) {
    for (int j = 0; j < m->filled; ++j)
        if (m->a[j] == a && m->b[j] == b) return j;
    return -1;
}

static inline CS_HD int cs_nmodl_memo_slot(cs_nmodl_memo *m, uint64_t a, uint64_t b) {
    int j = m->next;
    m->next ^= 1;
    if (m->filled < 2) ++m->filled;
    m->a[j] = a;
    m->b[j] = b;
    return j;
}

static inline CS_HD double cs_nmodl_exp_m(cs_nmodl_memo *m, double x) {
#ifndef __CUDA_ARCH__
    if (m) {
        uint64_t a = cs_nmodl_bits(x);
        int j = cs_nmodl_memo_find(m, a, 0);
        if (j < 0) {
            j = cs_nmodl_memo_slot(m, a, 0);
            m->y[j] = exp(x);
        }
        return m->y[j];
    }
#endif
    return exp(x);
}

static inline CS_HD double cs_nmodl_pow_m(cs_nmodl_memo *m, double x, double p) {
#ifndef __CUDA_ARCH__
    if (m) {
        uint64_t a = cs_nmodl_bits(x), b = cs_nmodl_bits(p);
        int j = cs_nmodl_memo_find(m, a, b);
        if (j < 0) {
            j = cs_nmodl_memo_slot(m, a, b);
            m->y[j] = pow(x, p);
        }
        return m->y[j];
    }
#endif
    return pow(x, p);
}

/* x^n for n = 2, 3, 4 (NMODL's x^2 with a literal exponent): pow on the CPU, as NEURON; products
 * on the GPU, where pow is ~150 instructions in a thread's chain (NaV's rates have six: session
 * 23). They differ by at most an ulp or two, as the GPU's exp and pow already do. */
static inline CS_HD double cs_nmodl_pown(double x, int n) {
#ifdef __CUDA_ARCH__
    const double x2 = x * x;
    return n == 2 ? x2 : n == 3 ? x2 * x : x2 * x2;
#else
    return pow(x, (double)n);
#endif
}

static inline CS_HD double cs_nmodl_pown_m(cs_nmodl_memo *m, double x, int n) {
#ifdef __CUDA_ARCH__
    (void)m;
    return cs_nmodl_pown(x, n);
#else
    return cs_nmodl_pow_m(m, x, (double)n);
#endif
}

/* A pivot d as the unrolled elimination (nmodl_sparse.py) divides by it: a / d on the CPU (the
 * loops' arithmetic, bit for bit); on the GPU its reciprocal, taken once, then products, since
 * a double division is a long chain of dependent instructions there (NaV: ~60 a step). */
static inline CS_HD double cs_nmodl_pivot(double d) {
#ifdef __CUDA_ARCH__
    return 1.0 / d;
#else
    return d;
#endif
}

static inline CS_HD double cs_nmodl_divp(double a, double pivot) {
#ifdef __CUDA_ARCH__
    return a * pivot;
#else
    return a / pivot;
#endif
}

/* exprelr(x) = x / (exp(x) - 1), 1 at x = 0 (NEURON's definition) */
static inline CS_HD double cs_nmodl_exprelr(double x) {
    return 1.0 + x == 1.0 ? 1.0 : x / expm1(x);
}

/* Solve a·x = b in place (b becomes x) for a dense n×n row-major a: Gaussian elimination with
 * partial pivoting (KINETIC schemes, n <= 32). */
static inline CS_HD void cs_nmodl_solve_from(int n, double *a, double *b, int c0) {
    for (int c = c0; c < n; ++c) {
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

/* ... from column 0 */
static inline CS_HD void cs_nmodl_solve(int n, double *a, double *b) { cs_nmodl_solve_from(n, a, b, 0); }

#endif
