/* The Hines tests' batches (test_hines_gpu.c, test_hines_chunked.c): systems in the convention of
 * cs_solver.h with one set of values each, rhs = A·x for a known x. One copy per test program
 * (static functions); needs check.h and test_rng.h first. */
#ifndef CS_TEST_HINES_BATCH_H
#define CS_TEST_HINES_BATCH_H

#include <stdlib.h>
#include <string.h>

/* a batch: structure plus one set of values */
typedef struct {
    int nsys, nrows;
    int *offset, *p;
    double *d, *u, *rhs; /* the system (rhs = A·x_true) */
} batch;

static void batch_free(batch *b)
{
    free(b->offset); free(b->p); free(b->d); free(b->u); free(b->rhs);
    memset(b, 0, sizeof *b);
}

/* append a system with local parents lp[n]; values: when g (µS) and cdt (µS) are given, the
 * cable matrix d = cdt + Σg, u = -g; otherwise random diagonally dominant values */
typedef struct { int cap_sys, cap_rows; } batch_cap;

static void batch_add(batch *b, batch_cap *c, int n, const int *lp, const double *g, const double *cdt)
{
    if (b->nsys + 2 > c->cap_sys) {
        c->cap_sys = 2 * c->cap_sys + 16;
        b->offset = realloc(b->offset, sizeof(int) * c->cap_sys);
        if (b->nsys == 0) b->offset[0] = 0;
    }
    if (b->nrows + n > c->cap_rows) {
        c->cap_rows = 2 * c->cap_rows + n + 1024;
        b->p = realloc(b->p, sizeof(int) * c->cap_rows);
        b->d = realloc(b->d, sizeof(double) * c->cap_rows);
        b->u = realloc(b->u, sizeof(double) * c->cap_rows);
        b->rhs = realloc(b->rhs, sizeof(double) * c->cap_rows);
    }
    ck_assert(b->offset && b->p && b->d && b->u && b->rhs);
    int o = b->nrows;
    for (int i = 0; i < n; ++i) {
        b->p[o + i] = i ? lp[i] + o : -1;
        if (g) {
            b->u[o + i] = i ? -g[i] : 0.0;
            b->d[o + i] = cdt[i];
        } else {
            b->u[o + i] = i ? -(0.1 + urand()) : 0.0;
            b->d[o + i] = 0.05 + 0.5 * urand();
        }
    }
    for (int i = 1; i < n; ++i) { /* Σ of the faces */
        b->d[o + i] -= b->u[o + i];
        b->d[o + lp[i]] -= b->u[o + i];
    }
    /* rhs = A·x with x a membrane potential-like vector [mV] */
    double *x = malloc(sizeof(double) * n);
    for (int i = 0; i < n; ++i) x[i] = -70.0 + 10.0 * urand();
    for (int i = 0; i < n; ++i) b->rhs[o + i] = b->d[o + i] * x[i];
    for (int i = 1; i < n; ++i) {
        b->rhs[o + i] += b->u[o + i] * x[lp[i]];
        b->rhs[o + lp[i]] += b->u[o + i] * x[i];
    }
    free(x);
    b->nrows += n;
    b->nsys++;
    b->offset[b->nsys] = b->nrows;
}

#endif
