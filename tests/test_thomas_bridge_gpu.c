/* One tridiagonal system split over D partitions on D streams and coupled by a bridge system
 * (cs_thomas_gpu_bridge_d, solver/cs_thomas_bridge_gpu.cu), against the serial Thomas reference
 * on random diagonally dominant systems (tests/test_tridiag.h):
 * max|x - x_ref| / max|x_ref| <= 1e-12, for D = 1, 2, 3, 4, 8, both synchronisations (host-driven
 * and device-side), n = 4 .. 2^22 (edge sizes: 2 rows per partition, the one-block top level's
 * edge 1024 ± 1, tiles, non-powers of two) and batches (nsys = 3, 64: the batch is one system).
 * Near-singular systems (margins down to 1e-8) at 1e-9; a zero row gives CS_SOLVER_ERR_SINGULAR
 * (host-driven bridge) or inf/NaN, never a finite solution. Also: too few rows for the
 * partitions, a too small workspace and bad arguments give CS_SOLVER_ERR_INVALID. Exit 77 (skipped) when CUDA is not compiled in or no device is present.
 * CS_TEST_SMALL=1 leaves out the shapes above 20000 rows (for compute-sanitizer). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cs_solver.h"
#include "cs_thomas_gpu.h"
#include "test_run.h"
#include "test_tridiag.h"

#define TOL 1e-12

static int g_small;
static const int k_shapes[][2] = {{1, 16},   {1, 17},    {1, 1023},  {1, 1024},   {1, 1025},
                                  {1, 2048}, {1, 8191},  {1, 8193},  {1, 100003}, {3, 10007},
                                  {64, 4097}, {1000, 3}, {1, 1 << 20}, {1, 1 << 22}};
static const int k_parts[] = {1, 2, 3, 4, 8};

/* Solve (nsys, n) over D partitions; returns the error, or -1 when the shape cannot be split.
 * margin > 0: weakly dominant by that margin (near-singular); zrow >= 0: that row zeroed (a
 * singular matrix): then the return is 1 when the call failed with CS_SOLVER_ERR_SINGULAR or
 * the solution holds inf/NaN, 0 when it came back finite. */
static double run_sys(int nsys, int n, int D, cs_thomas_bridge_sync sync, double margin, long zrow)
{
    const size_t wb = cs_thomas_gpu_bridge_workspace(nsys, n, D);
    if (wb == 0) return -1.0;
    const size_t N = (size_t)nsys * n;
    double *h[4] = {td_alloc(N), td_alloc(N), td_alloc(N), td_alloc(N)}, *ref = td_alloc(N);
    if (margin > 0.0) td_gen_weak(nsys, n, margin, h[0], h[1], h[2], h[3]);
    else td_gen(nsys, n, h[0], h[1], h[2], h[3]);
    if (zrow >= 0) h[0][zrow] = h[1][zrow] = h[2][zrow] = 0.0;
    else td_reference(nsys, n, h[0], h[1], h[2], h[3], ref);
    double *dev[4];
    void *work = NULL, *streams[8];
    for (int j = 0; j < 4; ++j) {
        GPU_OK(cs_thomas_gpu_malloc((void **)&dev[j], N * sizeof(double)));
        GPU_OK(cs_thomas_gpu_to_device(dev[j], h[j], N * sizeof(double)));
    }
    GPU_OK(cs_thomas_gpu_malloc(&work, wb));
    for (int p = 0; p < D; ++p) GPU_OK(cs_thomas_gpu_stream_create(&streams[p]));
    const cs_solver_status st =
        cs_thomas_gpu_bridge_d(nsys, n, D, sync, dev[0], dev[1], dev[2], dev[3], work, wb, streams);
    if (zrow < 0 || st != CS_SOLVER_ERR_SINGULAR) GPU_OK(st);
    for (int p = 0; p < D; ++p) GPU_OK(cs_thomas_gpu_stream_synchronize(streams[p]));
    GPU_OK(cs_thomas_gpu_to_host(h[3], dev[3], N * sizeof(double)));
    double e;
    if (zrow >= 0) {
        double acc = 0.0;
        for (size_t i = 0; i < N; ++i) acc += h[3][i] * 0.0;
        e = (st == CS_SOLVER_ERR_SINGULAR || !isfinite(acc)) ? 1.0 : 0.0;
    } else {
        e = td_rel_err(N, h[3], ref);
    }
    for (int p = 0; p < D; ++p) GPU_OK(cs_thomas_gpu_stream_destroy(streams[p]));
    for (int j = 0; j < 4; ++j) {
        GPU_OK(cs_thomas_gpu_free(dev[j]));
        free(h[j]);
    }
    GPU_OK(cs_thomas_gpu_free(work));
    free(ref);
    return e;
}

static double run(int nsys, int n, int D, cs_thomas_bridge_sync sync)
{
    return run_sys(nsys, n, D, sync, -1.0, -1);
}

/* Near-singular (weakly dominant, margins 1e-2 .. 1e-8) at 1e-9, as chunked's test; and a zero
 * row, inside a partition or at its ends, never gives a finite solution. Both synchronisations. */
START_TEST(test_near_singular_and_singular)
{
    const int n = g_small ? 6000 : 100000;
    double worst = 0.0;
    for (int sync = 0; sync < 2; ++sync)
        for (int D = 1; D <= 4; D *= 2) {
            for (double margin = 1e-2; margin >= 1e-8; margin *= 1e-3) {
                const double e = run_sys(1, n, D, (cs_thomas_bridge_sync)sync, margin, -1);
                ck_assert_msg(e >= 0.0 && e <= 1e-9, "near-singular D=%d margin %.0e: rel err %.3e", D,
                              margin, e);
                if (e > worst) worst = e;
            }
            const long rows[] = {0, n / 3, n / 2 - 1, n / 2, n - 1};
            for (size_t r = 0; r < sizeof rows / sizeof *rows; ++r)
                ck_assert_msg(run_sys(1, n, D, (cs_thomas_bridge_sync)sync, -1.0, rows[r]) == 1.0,
                              "zero row %ld, D=%d, %s: a finite solution", rows[r], D, sync ? "device" : "host");
        }
    printf("  bridge near-singular (margins 1e-2..1e-8, D = 1, 2, 4): worst rel err %.2e (tol 1e-9); "
           "zero rows: no finite solution\n", worst);
}
END_TEST

/* _i: the synchronisation */
START_TEST(test_bridge)
{
    const cs_thomas_bridge_sync sync = (cs_thomas_bridge_sync)_i;
    double worst = 0.0;
    int count = 0;
    for (size_t k = 0; k < sizeof k_shapes / sizeof *k_shapes; ++k)
        for (size_t j = 0; j < sizeof k_parts / sizeof *k_parts; ++j) {
            const int nsys = k_shapes[k][0], n = k_shapes[k][1], D = k_parts[j];
            if (g_small && (long long)nsys * n > 20000) continue;
            const double e = run(nsys, n, D, sync);
            ck_assert_msg(e >= 0.0, "nsys=%d n=%d D=%d: not split", nsys, n, D);
            ck_assert_msg(e <= TOL, "%s nsys=%d n=%d D=%d: rel err %.3e > %.0e",
                          sync ? "device" : "host", nsys, n, D, e, TOL);
            if (e > worst) worst = e;
            ++count;
        }
    /* 2 rows per partition: the smallest split */
    for (int D = 1; D <= 8; ++D) {
        const double e = run(1, 2 * D, D, sync);
        ck_assert_msg(e >= 0.0 && e <= TOL, "n=%d D=%d: rel err %.3e", 2 * D, D, e);
    }
    printf("  bridge, %s-driven: %d shapes × partitions, worst rel err %.2e (tol %.0e)\n",
           sync ? "device" : "host", count, worst, TOL);
}
END_TEST

START_TEST(test_errors)
{
    ck_assert_int_eq(cs_thomas_gpu_bridge_workspace(1, 3, 2), 0); /* 1 row for one partition */
    ck_assert_int_eq(cs_thomas_gpu_bridge_workspace(1, 100, 0), 0);
    ck_assert_int_eq(cs_thomas_gpu_bridge_workspace(1, 100, CS_THOMAS_BRIDGE_MAX_PARTS + 1), 0);
    const int n = 5000;
    double *p = NULL;
    void *work = NULL, *streams[2] = {NULL, NULL};
    GPU_OK(cs_thomas_gpu_malloc((void **)&p, n * sizeof(double)));
    const size_t wb = cs_thomas_gpu_bridge_workspace(1, n, 2);
    ck_assert(wb > 0);
    GPU_OK(cs_thomas_gpu_malloc(&work, wb));
    ck_assert_int_eq(cs_thomas_gpu_bridge_d(1, n, 2, CS_THOMAS_BRIDGE_HOST, p, p, p, p, work, wb - 8, streams),
                     CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_bridge_d(1, 3, 2, CS_THOMAS_BRIDGE_HOST, p, p, p, p, work, wb, streams),
                     CS_SOLVER_ERR_INVALID);
    ck_assert(strstr(cs_thomas_gpu_last_error(), "too few rows") != NULL);
    ck_assert_int_eq(cs_thomas_gpu_bridge_d(1, n, 2, (cs_thomas_bridge_sync)7, p, p, p, p, work, wb, streams),
                     CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_bridge_d(1, n, 2, CS_THOMAS_BRIDGE_DEVICE, p, p, p, p, work, wb, NULL),
                     CS_SOLVER_ERR_INVALID);
    GPU_OK(cs_thomas_gpu_free(p));
    GPU_OK(cs_thomas_gpu_free(work));
}
END_TEST

/* float (cs_thomas_gpu_bridge_f): against the double Thomas solve of the float-rounded inputs at
 * 1e-5, D = 1, 2, 4, 8, both synchronisations, n = 1025, 100003 and 3 × 10007 (up to 20000 rows
 * with CS_TEST_SMALL). */
START_TEST(test_float)
{
    static const int shapes[][2] = {{1, 1025}, {1, 100003}, {3, 10007}};
    static const int parts[] = {1, 2, 4, 8};
    double worst = 0.0;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i) {
        const int nsys = shapes[i][0], n = shapes[i][1];
        const size_t N = (size_t)nsys * n;
        if (g_small && N > 20000) continue;
        for (size_t j = 0; j < sizeof parts / sizeof *parts; ++j)
            for (int sy = 0; sy < 2; ++sy) {
                const int D = parts[j];
                const size_t wb = cs_thomas_gpu_bridge_workspace(nsys, n, D);
                if (wb == 0) continue;
                double *h[4] = {td_alloc(N), td_alloc(N), td_alloc(N), td_alloc(N)}, *ref = td_alloc(N);
                td_gen(nsys, n, h[0], h[1], h[2], h[3]);
                float *hf = malloc(N * sizeof *hf);
                ck_assert_ptr_nonnull(hf);
                float *dev[4];
                for (int k = 0; k < 4; ++k) {
                    for (size_t r = 0; r < N; ++r) hf[r] = (float)h[k][r], h[k][r] = hf[r];
                    GPU_OK(cs_thomas_gpu_malloc((void **)&dev[k], N * sizeof(float)));
                    GPU_OK(cs_thomas_gpu_to_device(dev[k], hf, N * sizeof(float)));
                }
                td_reference(nsys, n, h[0], h[1], h[2], h[3], ref);
                void *work = NULL, *streams[8];
                GPU_OK(cs_thomas_gpu_malloc(&work, wb));
                for (int p = 0; p < D; ++p) GPU_OK(cs_thomas_gpu_stream_create(&streams[p]));
                GPU_OK(cs_thomas_gpu_bridge_f(nsys, n, D, sy ? CS_THOMAS_BRIDGE_DEVICE : CS_THOMAS_BRIDGE_HOST,
                                              dev[0], dev[1], dev[2], dev[3], work, wb, streams));
                for (int p = 0; p < D; ++p) GPU_OK(cs_thomas_gpu_stream_synchronize(streams[p]));
                GPU_OK(cs_thomas_gpu_to_host(hf, dev[3], N * sizeof(float)));
                for (size_t r = 0; r < N; ++r) h[3][r] = hf[r];
                const double e = td_rel_err(N, h[3], ref);
                ck_assert_msg(e <= 1e-5, "bridge float nsys=%d n=%d D=%d %s: rel err %.3e", nsys, n, D,
                              sy ? "device" : "host", e);
                if (e > worst) worst = e;
                for (int p = 0; p < D; ++p) GPU_OK(cs_thomas_gpu_stream_destroy(streams[p]));
                for (int k = 0; k < 4; ++k) {
                    GPU_OK(cs_thomas_gpu_free(dev[k]));
                    free(h[k]);
                }
                GPU_OK(cs_thomas_gpu_free(work));
                free(ref), free(hf);
            }
    }
    printf("  bridge float: worst rel err %.2e (tol 1e-5)\n", worst);
}
END_TEST

int main(void)
{
    const int skip = gpu_exit_code();
    if (skip >= 0) return skip;
    const char *sm = getenv("CS_TEST_SMALL");
    g_small = sm && sm[0] && strcmp(sm, "0") != 0;
    Suite *s = suite_create("thomas_bridge_gpu");
    TCase *tc = tcase_create("bridge");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_bridge, 0, 2);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_near_singular_and_singular);
    tcase_add_test(tc, test_float);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
