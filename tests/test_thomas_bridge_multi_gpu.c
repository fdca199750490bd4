/* One tridiagonal system split over partitions on several devices (cs_thomas_gpu_bridge_multi_d
 * and _f, solver/cs_thomas_bridge_multi_gpu.cu), against the serial Thomas reference on random
 * diagonally dominant systems (tests/test_tridiag.h): max|x - x_ref| / max|x_ref| <= 1e-12
 * (double) and 1e-5 (float, against the double solve of the float-rounded inputs), D = 1..4
 * partitions of uneven sizes (2 rows, chunk and top edges, up to 2^20 rows), both
 * synchronisations (host-driven, device-side).
 *   repeated device  every partition on the current device (devices = {0, 0, ...}): runs on one GPU;
 *   multi-device     partition p on device p mod count: with fewer than 2 devices it prints
 *                    "multi-device: skipped (1 device)" and checks nothing;
 *   near-singular    margins 1e-2 .. 1e-8 at 1e-9, round-robin; a zero row gives
 *                    CS_SOLVER_ERR_SINGULAR (host-driven) or inf/NaN, never a finite solution;
 *   errors           a partition of 1 row, a device out of range, a too small workspace, a bad
 *                    synchronisation, NULL lists: CS_SOLVER_ERR_INVALID.
 * Exit 77 (skipped) when CUDA is not compiled in or no device is present. CS_TEST_SMALL=1 leaves
 * out the splits above 20000 rows (for compute-sanitizer). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cs_solver.h"
#include "cs_thomas_gpu.h"
#include "test_run.h"
#include "test_tridiag.h"

#define TOL 1e-12
#define MAXP 8

static int g_small, g_ndev;

static const int k_cases[][6] = { /* D, then the rows */
    {1, 2},         {1, 1025},          {1, 100003},        {2, 2, 2},
    {2, 15, 17},    {2, 1 << 20, 12345}, {3, 3, 5, 2},       {3, 1023, 1025, 16},
    {3, 16399, 16400, 16401}, {4, 17, 1023, 1025, 16}, {4, 100003, 65536, 4097, 2},
    {4, 262144, 262144, 262144, 262143}};

enum { ON_ZERO = 0, ROUND_ROBIN = 1 };

/* Solve the split `rows` (D partitions) with partition p on device 0 (ON_ZERO) or p mod count.
 * margin > 0: weakly dominant by that margin; zrow >= 0: that row zeroed, then the return is 1
 * when the call gave CS_SOLVER_ERR_SINGULAR or the solution holds inf/NaN, 0 when finite.
 * Else the relative error; in float when fl. */
static double run_split(int D, const int *rows, int place, cs_thomas_bridge_sync sync,
                        double margin, long zrow, int fl)
{
    size_t N = 0, off[MAXP + 1] = {0};
    for (int p = 0; p < D; ++p) N += (size_t)rows[p], off[p + 1] = N;
    double *h[4] = {td_alloc(N), td_alloc(N), td_alloc(N), td_alloc(N)}, *ref = td_alloc(N);
    if (margin > 0.0) td_gen_weak(1, (int)N, margin, h[0], h[1], h[2], h[3]);
    else td_gen(1, (int)N, h[0], h[1], h[2], h[3]);
    if (fl)
        for (int j = 0; j < 4; ++j)
            for (size_t i = 0; i < N; ++i) h[j][i] = (float)h[j][i];
    if (zrow >= 0) h[0][zrow] = h[1][zrow] = h[2][zrow] = 0.0;
    else td_reference(1, (int)N, h[0], h[1], h[2], h[3], ref);
    const size_t es = fl ? sizeof(float) : sizeof(double);
    void *dev[4][MAXP], *work[MAXP], *streams[MAXP];
    int devices[MAXP], cur = 0;
    size_t wb[MAXP];
    char *buf = malloc(N * sizeof(double));
    ck_assert_ptr_nonnull(buf);
    GPU_OK(cs_thomas_gpu_get_device(&cur));
    for (int p = 0; p < D; ++p) {
        devices[p] = place == ON_ZERO ? cur : p % g_ndev;
        GPU_OK(cs_thomas_gpu_set_device(devices[p]));
        const size_t m = (size_t)rows[p];
        for (int j = 0; j < 4; ++j) {
            GPU_OK(cs_thomas_gpu_malloc(&dev[j][p], m * es));
            for (size_t i = 0; i < m; ++i) {
                if (fl) ((float *)buf)[i] = (float)h[j][off[p] + i];
                else ((double *)buf)[i] = h[j][off[p] + i];
            }
            GPU_OK(cs_thomas_gpu_to_device(dev[j][p], buf, m * es));
        }
        wb[p] = cs_thomas_gpu_bridge_multi_workspace(rows[p], D);
        ck_assert(wb[p] > 0);
        GPU_OK(cs_thomas_gpu_malloc(&work[p], wb[p]));
        GPU_OK(cs_thomas_gpu_stream_create(&streams[p]));
    }
    GPU_OK(cs_thomas_gpu_set_device(cur));
    const cs_solver_status st =
        fl ? cs_thomas_gpu_bridge_multi_f(D, rows, devices, sync, (const float *const *)dev[0], (float *const *)dev[1],
                                          (const float *const *)dev[2], (float *const *)dev[3], work, wb, streams)
           : cs_thomas_gpu_bridge_multi_d(D, rows, devices, sync, (const double *const *)dev[0], (double *const *)dev[1],
                                          (const double *const *)dev[2], (double *const *)dev[3], work, wb, streams);
    if (zrow < 0 || st != CS_SOLVER_ERR_SINGULAR) GPU_OK(st);
    int now = -1;
    GPU_OK(cs_thomas_gpu_get_device(&now));
    ck_assert_int_eq(now, cur); /* the current device is kept */
    double *x = td_alloc(N);
    for (int p = 0; p < D; ++p) {
        GPU_OK(cs_thomas_gpu_set_device(devices[p]));
        GPU_OK(cs_thomas_gpu_stream_synchronize(streams[p]));
        GPU_OK(cs_thomas_gpu_to_host(buf, dev[3][p], (size_t)rows[p] * es));
        for (size_t i = 0; i < (size_t)rows[p]; ++i)
            x[off[p] + i] = fl ? (double)((float *)buf)[i] : ((double *)buf)[i];
        GPU_OK(cs_thomas_gpu_stream_destroy(streams[p]));
        for (int j = 0; j < 4; ++j) GPU_OK(cs_thomas_gpu_free(dev[j][p]));
        GPU_OK(cs_thomas_gpu_free(work[p]));
    }
    GPU_OK(cs_thomas_gpu_set_device(cur));
    double e;
    if (zrow >= 0) {
        double acc = 0.0;
        for (size_t i = 0; i < N; ++i) acc += x[i] * 0.0;
        e = (st == CS_SOLVER_ERR_SINGULAR || !isfinite(acc)) ? 1.0 : 0.0;
    } else {
        e = td_rel_err(N, x, ref);
    }
    for (int j = 0; j < 4; ++j) free(h[j]);
    free(ref), free(x), free(buf);
    return e;
}

static long long total_rows(const int *c)
{
    long long N = 0;
    for (int p = 0; p < c[0]; ++p) N += c[1 + p];
    return N;
}

/* Every case, both synchronisations, double and float; the worst errors. */
static void run_cases(int place, const char *label)
{
    double worst = 0.0, worst_f = 0.0;
    int count = 0;
    for (size_t k = 0; k < sizeof k_cases / sizeof *k_cases; ++k) {
        const int D = k_cases[k][0], *rows = k_cases[k] + 1;
        if (g_small && total_rows(k_cases[k]) > 20000) continue;
        for (int sy = 0; sy < 2; ++sy) {
            const cs_thomas_bridge_sync sync = (cs_thomas_bridge_sync)sy;
            const double e = run_split(D, rows, place, sync, -1.0, -1, 0);
            ck_assert_msg(e <= TOL, "%s case %zu (D=%d) %s: rel err %.3e > %.0e", label, k, D,
                          sy ? "device" : "host", e, TOL);
            const double ef = run_split(D, rows, place, sync, -1.0, -1, 1);
            ck_assert_msg(ef <= 1e-5, "%s float case %zu (D=%d) %s: rel err %.3e > 1e-5", label, k,
                          D, sy ? "device" : "host", ef);
            if (e > worst) worst = e;
            if (ef > worst_f) worst_f = ef;
            ++count;
        }
    }
    printf("  %s: %d splits × syncs (D = 1..4), worst rel err %.2e double (tol %.0e), %.2e float "
           "(tol 1e-5)\n", label, count, worst, TOL, worst_f);
}

START_TEST(test_repeated_device) { run_cases(ON_ZERO, "bridge multi, repeated device"); }
END_TEST

START_TEST(test_multi_device)
{
    if (g_ndev < 2) {
        printf("  multi-device: skipped (1 device)\n");
        return;
    }
    int devices[4], direct = -1;
    for (int p = 0; p < 4; ++p) devices[p] = p % g_ndev;
    GPU_OK(cs_thomas_gpu_bridge_multi_peer(4, devices, &direct));
    printf("  multi-device: %d devices, bridge copies %s\n", g_ndev,
           direct ? "peer-to-peer" : "through the host (no peer access)");
    run_cases(ROUND_ROBIN, "bridge multi, round-robin over the devices");
}
END_TEST

START_TEST(test_near_singular_and_singular)
{
    static const int rows[] = {33333, 1025, 40000, 25642};
    static const int rows_small[] = {3333, 1025, 4000, 2564};
    const int *r = g_small ? rows_small : rows;
    const long N = (long)r[0] + r[1] + r[2] + r[3];
    double worst = 0.0;
    for (int sy = 0; sy < 2; ++sy) {
        const cs_thomas_bridge_sync sync = (cs_thomas_bridge_sync)sy;
        for (double margin = 1e-2; margin >= 1e-8; margin *= 1e-3) {
            const double e = run_split(4, r, ROUND_ROBIN, sync, margin, -1, 0);
            ck_assert_msg(e <= 1e-9, "near-singular margin %.0e %s: rel err %.3e", margin,
                          sy ? "device" : "host", e);
            if (e > worst) worst = e;
        }
        /* inside a partition, at its first and last rows, in a tail */
        const long zr[] = {0, r[0] / 3, r[0] - 1, r[0], r[0] + r[1] - 1, N - 1};
        for (size_t k = 0; k < sizeof zr / sizeof *zr; ++k)
            ck_assert_msg(run_split(4, r, ROUND_ROBIN, sync, -1.0, zr[k], 0) == 1.0,
                          "zero row %ld, %s: a finite solution", zr[k], sy ? "device" : "host");
    }
    printf("  bridge multi near-singular (margins 1e-2..1e-8, D = 4): worst rel err %.2e (tol 1e-9); "
           "zero rows: no finite solution\n", worst);
}
END_TEST

START_TEST(test_errors)
{
    ck_assert_int_eq(cs_thomas_gpu_bridge_multi_workspace(1, 2), 0);
    ck_assert_int_eq(cs_thomas_gpu_bridge_multi_workspace(100, 0), 0);
    ck_assert_int_eq(cs_thomas_gpu_bridge_multi_workspace(100, CS_THOMAS_BRIDGE_MAX_PARTS + 1), 0);
    int cur = 0;
    GPU_OK(cs_thomas_gpu_get_device(&cur));
    const int n = 5000;
    double *p = NULL;
    void *work[2] = {NULL, NULL}, *streams[2] = {NULL, NULL};
    GPU_OK(cs_thomas_gpu_malloc((void **)&p, n * sizeof(double)));
    const size_t w1 = cs_thomas_gpu_bridge_multi_workspace(n, 2);
    ck_assert(w1 > 0);
    GPU_OK(cs_thomas_gpu_malloc(&work[0], w1));
    GPU_OK(cs_thomas_gpu_malloc(&work[1], w1));
    const double *ca[2] = {p, p};
    double *va[2] = {p, p};
    int rows[2] = {n, n}, devices[2] = {cur, cur};
    size_t wb[2] = {w1, w1 - 8};
    const cs_thomas_bridge_sync H = CS_THOMAS_BRIDGE_HOST;
    ck_assert_int_eq(cs_thomas_gpu_bridge_multi_d(2, rows, devices, H, ca, va, ca, va, work, wb, streams),
                     CS_SOLVER_ERR_INVALID); /* too small */
    ck_assert(strstr(cs_thomas_gpu_last_error(), "partition 1") != NULL);
    wb[1] = w1;
    rows[1] = 1;
    ck_assert_int_eq(cs_thomas_gpu_bridge_multi_d(2, rows, devices, H, ca, va, ca, va, work, wb, streams),
                     CS_SOLVER_ERR_INVALID);
    ck_assert(strstr(cs_thomas_gpu_last_error(), "2 at least") != NULL);
    rows[1] = n;
    devices[1] = g_ndev;
    ck_assert_int_eq(cs_thomas_gpu_bridge_multi_d(2, rows, devices, H, ca, va, ca, va, work, wb, streams),
                     CS_SOLVER_ERR_INVALID);
    devices[1] = -1;
    ck_assert_int_eq(cs_thomas_gpu_bridge_multi_d(2, rows, devices, H, ca, va, ca, va, work, wb, streams),
                     CS_SOLVER_ERR_INVALID);
    devices[1] = cur;
    ck_assert_int_eq(cs_thomas_gpu_bridge_multi_d(2, rows, devices, (cs_thomas_bridge_sync)7, ca, va, ca, va,
                                                  work, wb, streams),
                     CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_bridge_multi_d(2, rows, devices, H, ca, va, ca, va, work, wb, NULL),
                     CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_bridge_multi_d(0, rows, devices, H, ca, va, ca, va, work, wb, streams),
                     CS_SOLVER_ERR_INVALID);
    int direct = -1;
    ck_assert_int_eq(cs_thomas_gpu_bridge_multi_peer(2, devices, &direct), CS_SOLVER_OK);
    ck_assert_int_eq(direct, 1); /* one device: every copy is local */
    GPU_OK(cs_thomas_gpu_free(p));
    GPU_OK(cs_thomas_gpu_free(work[0]));
    GPU_OK(cs_thomas_gpu_free(work[1]));
}
END_TEST

int main(void)
{
    const int skip = gpu_exit_code();
    if (skip >= 0) return skip;
    const char *sm = getenv("CS_TEST_SMALL");
    g_small = sm && sm[0] && strcmp(sm, "0") != 0;
    if (cs_thomas_gpu_device_count(&g_ndev) != CS_SOLVER_OK || g_ndev < 1) return 1;
    Suite *s = suite_create("thomas_bridge_multi_gpu");
    TCase *tc = tcase_create("bridge_multi");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_repeated_device);
    tcase_add_test(tc, test_multi_device);
    tcase_add_test(tc, test_near_singular_and_singular);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
