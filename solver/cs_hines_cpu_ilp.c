/* CPU Hines solve with instruction-level parallelism across systems.
 *
 * One system's sweeps are a chain of dependent divisions (row i needs its parent's updated
 * diagonal, or its parent's solution), so a single system runs at the division latency, not
 * the throughput. Sweeping CS__LANES systems row by row in lockstep gives the core that many
 * independent chains to overlap. The backward sweep also keeps 1/d[i], so the forward sweep
 * multiplies instead of dividing, which takes the division off the forward chain.
 * Same matrix convention and argument rules as cs_hines_solve_serial (cs_solver.h); results
 * differ from it only by rounding (x·(1/d) instead of x/d). */
#include <math.h>
#include <stddef.h>

#include "cs_solver.h"

#define CS__LANES 8

/* Systems s0 .. s0+CS__LANES-1 (lanes past s1 are empty). With `next`, each row also starts
 * the caller's next system as soon as its solution is known (see cs_hines_next). Returns the
 * accumulated x·0 (NaN when a solution is not finite). */
static double cs__hines_lanes(int s0, int s1, const int *restrict offset, const int *restrict p,
                              double *restrict d, const double *restrict u, double *restrict rhs,
                              const cs_hines_next *next)
{
    int first[CS__LANES], last[CS__LANES];
    int nmax = 0;
    for (int k = 0; k < CS__LANES; ++k) {
        int s = s0 + k;
        first[k] = s < s1 ? offset[s] : 0;
        last[k] = s < s1 ? offset[s + 1] - 1 : -1; /* empty lane: no row */
        int n = last[k] - first[k];
        if (n > nmax) nmax = n;
    }
    for (int j = 0; j < nmax; ++j) {
        for (int k = 0; k < CS__LANES; ++k) { /* unrolled by the compiler: independent chains */
            const int i = last[k] - j;
            if (i > first[k]) {
                const double inv = 1.0 / d[i];
                const double f = u[i] * inv;
                const int pi = p[i];
                d[pi] -= f * u[i];
                rhs[pi] -= f * rhs[i];
                d[i] = inv;
            }
        }
    }
    double acc = 0.0;
    for (int k = 0; k < CS__LANES; ++k) {
        if (last[k] < first[k]) continue;
        const double inv = 1.0 / d[first[k]];
        const double x = rhs[first[k]] * inv;
        rhs[first[k]] = x;
        acc += x * 0.0;
        if (next) {
            d[first[k]] = next->d0[first[k]];
            next->rhs[first[k]] = next->c[first[k]] * x + next->b0[first[k]];
        } else {
            d[first[k]] = inv;
        }
    }
    for (int j = 1; j <= nmax; ++j) {
        for (int k = 0; k < CS__LANES; ++k) {
            const int i = first[k] + j;
            if (i <= last[k]) {
                const double x = (rhs[i] - u[i] * rhs[p[i]]) * d[i];
                rhs[i] = x;
                acc += x * 0.0;
                if (next) { /* unswitched by the compiler: no branch per row */
                    d[i] = next->d0[i];
                    next->rhs[i] = next->c[i] * x + next->b0[i];
                }
            }
        }
    }
    return acc;
}

cs_solver_status cs_hines_solve_ilp(int nsys, const int *offset, const int *p, double *d,
                                    const double *u, double *rhs)
{
    if (nsys < 0) return CS_SOLVER_ERR_INVALID;
    if (nsys == 0) return CS_SOLVER_OK;
    if (!offset || !p || !d || !u || !rhs || offset[0] < 0) return CS_SOLVER_ERR_INVALID;
    for (int s = 0; s < nsys; ++s) {
        if (offset[s + 1] <= offset[s] || p[offset[s]] != -1) return CS_SOLVER_ERR_INVALID;
        unsigned bad = 0; /* p[i] in [first, i-1], branch-free */
        for (int i = offset[s] + 1; i < offset[s + 1]; ++i)
            bad |= (unsigned)((unsigned)p[i] - (unsigned)offset[s] >= (unsigned)(i - offset[s]));
        if (bad) return CS_SOLVER_ERR_INVALID;
    }
    double acc = 0.0;
    for (int s = 0; s < nsys; s += CS__LANES)
        acc += cs__hines_lanes(s, nsys, offset, p, d, u, rhs, NULL);
    return isfinite(acc) ? CS_SOLVER_OK : CS_SOLVER_ERR_SINGULAR;
}

cs_solver_status cs_hines_check_structure(int nsys, const int *offset, const int *p)
{
    if (nsys < 0 || (nsys > 0 && (!offset || !p || offset[0] < 0))) return CS_SOLVER_ERR_INVALID;
    for (int s = 0; s < nsys; ++s) {
        if (offset[s + 1] <= offset[s] || p[offset[s]] != -1) return CS_SOLVER_ERR_INVALID;
        for (int i = offset[s] + 1; i < offset[s + 1]; ++i)
            if (p[i] < offset[s] || p[i] >= i) return CS_SOLVER_ERR_INVALID;
    }
    return CS_SOLVER_OK;
}

cs_solver_status cs_hines_solve_ilp_next(int nsys, const int *offset, const int *p, double *d,
                                         const double *u, double *rhs, const cs_hines_next *next)
{
    if (nsys < 0 || !next || !next->d0 || !next->c || !next->b0 || !next->rhs) return CS_SOLVER_ERR_INVALID;
    if (nsys == 0) return CS_SOLVER_OK;
    if (!offset || !p || !d || !u || !rhs) return CS_SOLVER_ERR_INVALID;
    double acc = 0.0;
    for (int s = 0; s < nsys; s += CS__LANES)
        acc += cs__hines_lanes(s, nsys, offset, p, d, u, rhs, next);
    return isfinite(acc) ? CS_SOLVER_OK : CS_SOLVER_ERR_SINGULAR;
}
