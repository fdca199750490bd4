/* Every GPU Thomas variant (cs_thomas_gpu.h: auto, flat, interleaved, warp, warp_staged, chunked,
 * scan, var_cp, var_ncp) on near-singular and singular systems, double, host pointers:
 * - near-singular (weakly diagonally dominant, |b| = |a| + |c| + margin·[0, 1), margins 1e-2,
 *   1e-5, 1e-8; tests/test_tridiag.h): max|x - x_Thomas| / max|x_Thomas| <= 1e-9 against the
 *   serial CPU Thomas solve (every solution carries ~cond·eps; the variants that eliminate in
 *   Thomas' order agree far better);
 * - a zero row (a singular matrix) at the first, a middle and the last row of one system of the
 *   batch: CS_SOLVER_ERR_SINGULAR (the copied solution is checked for inf/NaN), never a finite
 *   solution.
 * Shapes: one system of 1000, 2048 (the warp variants' largest) and 4097 rows, and 37 systems of
 * 200. Exit 77 (skipped) without CUDA or a device. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cs_solver.h"
#include "cs_thomas_gpu.h"
#include "test_run.h"
#include "test_tridiag.h"

#define TOL 1e-9

static const int k_shapes[][2] = {{1, 1000}, {1, 2048}, {1, 4097}, {37, 200}};
#define N_SHAPES ((int)(sizeof k_shapes / sizeof k_shapes[0]))

/* Flat (nsys × n) -> interleaved (n × nsys), and back */
static void to_il(int nsys, int n, const double *f, double *il)
{
    for (int s = 0; s < nsys; ++s)
        for (int i = 0; i < n; ++i) il[(size_t)i * nsys + s] = f[(size_t)s * n + i];
}
static void from_il(int nsys, int n, const double *il, double *f)
{
    for (int s = 0; s < nsys; ++s)
        for (int i = 0; i < n; ++i) f[(size_t)s * n + i] = il[(size_t)i * nsys + s];
}

/* var_cp reads a[0] and c[n-1] of each system (the packing helper zeroes them): zero them here
 * (the other variants never read them) */
static void zero_ends(int nsys, int n, double *a, double *c)
{
    for (int s = 0; s < nsys; ++s) a[(size_t)s * n] = 0.0, c[(size_t)s * n + n - 1] = 0.0;
}

/* Solve with variant v through host pointers; x (Flat) receives d. Returns the status. */
static cs_solver_status solve(cs_thomas_gpu_variant v, int nsys, int n, const double *a,
                              const double *b, const double *c, const double *d, double *x)
{
    const size_t N = (size_t)nsys * n;
    double *w[4] = {td_alloc(N), td_alloc(N), td_alloc(N), td_alloc(N)};
    const double *src[4] = {a, b, c, d};
    const int il = cs_thomas_gpu_variant_layout(v) == CS_THOMAS_LAYOUT_INTERLEAVED;
    for (int j = 0; j < 4; ++j) {
        if (il) to_il(nsys, n, src[j], w[j]);
        else memcpy(w[j], src[j], N * sizeof(double));
    }
    cs_solver_status st;
    if (cs_thomas_gpu_variant_is_var(v)) {
        int *off = malloc((size_t)(nsys + 1) * sizeof *off);
        ck_assert_ptr_nonnull(off);
        for (int s = 0; s <= nsys; ++s) off[s] = s * n;
        st = cs_thomas_gpu_solve_var_d(v, nsys, n, off, w[0], w[1], w[2], w[3], CS_THOMAS_GPU_HOST_PTRS);
        free(off);
    } else {
        st = cs_thomas_gpu_solve_d(v, nsys, n, w[0], w[1], w[2], w[3], CS_THOMAS_GPU_HOST_PTRS);
    }
    if (il) from_il(nsys, n, w[3], x);
    else memcpy(x, w[3], N * sizeof(double));
    for (int j = 0; j < 4; ++j) free(w[j]);
    return st;
}

/* _i: the variant */
START_TEST(test_variant)
{
    const cs_thomas_gpu_variant v = (cs_thomas_gpu_variant)_i;
    const char *name = cs_thomas_gpu_variant_name(v);
    static const double margins[] = {1e-2, 1e-5, 1e-8};
    double worst = 0.0;
    for (int k = 0; k < N_SHAPES; ++k) {
        const int nsys = k_shapes[k][0], n = k_shapes[k][1];
        if ((v == CS_THOMAS_GPU_WARP || v == CS_THOMAS_GPU_WARP_STAGED) && n > CS_THOMAS_GPU_WARP_MAX_N)
            continue;
        const size_t N = (size_t)nsys * n;
        double *a = td_alloc(N), *b = td_alloc(N), *c = td_alloc(N), *d = td_alloc(N);
        double *ref = td_alloc(N), *x = td_alloc(N);
        for (size_t j = 0; j < sizeof margins / sizeof *margins; ++j) {
            td_gen_weak(nsys, n, margins[j], a, b, c, d);
            zero_ends(nsys, n, a, c);
            td_reference(nsys, n, a, b, c, d, ref);
            GPU_OK(solve(v, nsys, n, a, b, c, d, x));
            const double e = td_rel_err(N, x, ref);
            ck_assert_msg(e <= TOL, "%s nsys=%d n=%d margin %.0e: rel err %.3e > %.0e", name, nsys, n,
                          margins[j], e, TOL);
            if (e > worst) worst = e;
        }
        const int s0 = nsys / 2; /* the zeroed system */
        const int rows[] = {0, n / 2, n - 1};
        for (int r = 0; r < 3; ++r) {
            td_gen(nsys, n, a, b, c, d);
            zero_ends(nsys, n, a, c);
            const size_t z = (size_t)s0 * n + rows[r];
            a[z] = b[z] = c[z] = 0.0;
            const cs_solver_status st = solve(v, nsys, n, a, b, c, d, x);
            ck_assert_msg(st == CS_SOLVER_ERR_SINGULAR, "%s nsys=%d n=%d zero row %d: status %d (%s)", name,
                          nsys, n, rows[r], (int)st, cs_thomas_gpu_last_error());
        }
        free(a), free(b), free(c), free(d), free(ref), free(x);
    }
    printf("  %s: near-singular (margins 1e-2..1e-8) worst rel err %.2e (tol %.0e); zero rows: "
           "CS_SOLVER_ERR_SINGULAR\n", name, worst, TOL);
}
END_TEST

int main(void)
{
    const int skip = gpu_exit_code();
    if (skip >= 0) return skip;
    Suite *s = suite_create("thomas_gpu_singular");
    TCase *tc = tcase_create("singular");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_variant, 0, CS_THOMAS_GPU_NVARIANTS);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
