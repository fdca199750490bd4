/* The GPU solvers for one large tridiagonal system, the chunked hybrid (solver/cs_thomas_large_warp_gpu.cu)
 * and the scans (solver/cs_thomas_scan_gpu.cu, CUB), against
 * the serial Thomas reference on random diagonally dominant systems (tests/test_tridiag.h):
 * max|x - x_ref| / max|x_ref| <= 1e-12 in double, <= 1e-5 in float (float against the double
 * solve of the float-rounded inputs).
 * Through cs_thomas_gpu_chunked_d/_f and cs_thomas_gpu_scan_d/_f (device pointers, the caller's
 * workspace, the default stream and a stream of its own) and through the variant call (chunked,
 * scan and auto, host pointers). Shapes:
 * n = 1, 2, 3, 1024 ± 1, the tile's edge (2048 ± 1), the base level's edge (4096 + 1), 16·1024 + 1
 * (one reduced level, a partial tile), non-powers of two, 2^20 and 2^22 rows and 3 × 3000007
 * (two reduced levels, the second with a partial tile); nsys = 1 .. 1000 (the batch is one system, so tiles and
 * chunks straddle system boundaries, or meet them exactly: 2 × 2048, 5 × 16). Also: a too small workspace gives CS_SOLVER_ERR_INVALID, and
 * a singular matrix (a zero row) through host pointers CS_SOLVER_ERR_SINGULAR. Near-singular
 * (weakly dominant) systems in double: <= 1e-9.
 * Exit 77 (skipped) when CUDA is not compiled in or no device is present.
 * CS_TEST_SMALL=1 leaves out the shapes above 20000 rows (for compute-sanitizer). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cs_solver.h"
#include "cs_thomas_gpu.h"
#include "test_run.h"
#include "test_tridiag.h"

#define TOL_D 1e-12
#define TOL_F 1e-5

static const int k_shapes[][2] = {{1, 1},    {1, 2},     {1, 3},     {1, 1023},  {1, 1024},
                                  {1, 1025}, {1, 2047},  {1, 2048},  {1, 2049},  {1, 16385},
                                  {1, 100003}, {3, 1},   {3, 5},     {3, 1025},  {7, 4097},
                                  {64, 4097}, {1000, 3}, {2, 2048}, {5, 16},  {1, 1 << 20},
                                  {1, 1 << 22}, {3, 3000007}};
#define N_SHAPES ((int)(sizeof k_shapes / sizeof k_shapes[0]))
static int g_small;
static int skip_shape(int k) { return g_small && (long long)k_shapes[k][0] * k_shapes[k][1] > 20000; }

/* One shape through the explicit call of chunked (scan = 0) or scan (scan = 1), device pointers;
 * float when f32. own_stream: a stream of its own, else the default stream. */
static double run_explicit(int scan, int nsys, int n, int f32, int own_stream)
{
    const size_t N = (size_t)nsys * n;
    double *a = td_alloc(N), *b = td_alloc(N), *c = td_alloc(N), *d = td_alloc(N);
    double *ref = td_alloc(N), *x = td_alloc(N);
    td_gen(nsys, n, a, b, c, d);
    const size_t es = f32 ? sizeof(float) : sizeof(double);
    if (f32)
        for (size_t i = 0; i < N; ++i)
            a[i] = (float)a[i], b[i] = (float)b[i], c[i] = (float)c[i], d[i] = (float)d[i];
    td_reference(nsys, n, a, b, c, d, ref);
    void *dev[4], *host = malloc(N * es);
    ck_assert_ptr_nonnull(host);
    const double *src[4] = {a, b, c, d};
    for (int j = 0; j < 4; ++j) {
        GPU_OK(cs_thomas_gpu_malloc(&dev[j], N * es));
        for (size_t i = 0; i < N; ++i) {
            if (f32) ((float *)host)[i] = (float)src[j][i];
            else ((double *)host)[i] = src[j][i];
        }
        GPU_OK(cs_thomas_gpu_to_device(dev[j], host, N * es));
    }
    const cs_thomas_gpu_precision prec = f32 ? CS_THOMAS_GPU_F32 : CS_THOMAS_GPU_F64;
    const size_t wb = scan ? cs_thomas_gpu_scan_workspace(nsys, n, prec)
                           : cs_thomas_gpu_chunked_workspace(nsys, n, prec);
    if (scan) ck_assert(wb > 0);
    void *work = NULL;
    GPU_OK(cs_thomas_gpu_malloc(&work, wb));
    void *stream = NULL;
    if (own_stream) GPU_OK(cs_thomas_gpu_stream_create(&stream));
    if (scan && f32)
        GPU_OK(cs_thomas_gpu_scan_f(nsys, n, dev[0], dev[1], dev[2], dev[3], work, wb, stream));
    else if (scan)
        GPU_OK(cs_thomas_gpu_scan_d(nsys, n, dev[0], dev[1], dev[2], dev[3], work, wb, stream));
    else if (f32)
        GPU_OK(cs_thomas_gpu_chunked_f(nsys, n, dev[0], dev[1], dev[2], dev[3], work, wb, stream));
    else
        GPU_OK(cs_thomas_gpu_chunked_d(nsys, n, dev[0], dev[1], dev[2], dev[3], work, wb, stream));
    if (own_stream) {
        GPU_OK(cs_thomas_gpu_stream_synchronize(stream));
        GPU_OK(cs_thomas_gpu_stream_destroy(stream));
    }
    GPU_OK(cs_thomas_gpu_synchronize());
    GPU_OK(cs_thomas_gpu_to_host(host, dev[3], N * es));
    for (size_t i = 0; i < N; ++i) x[i] = f32 ? (double)((float *)host)[i] : ((double *)host)[i];
    /* a and c are read only */
    GPU_OK(cs_thomas_gpu_to_host(host, dev[0], N * es));
    for (size_t i = 0; i < N; ++i)
        ck_assert(f32 ? ((float *)host)[i] == (float)a[i] : ((double *)host)[i] == a[i]);
    for (int j = 0; j < 4; ++j) GPU_OK(cs_thomas_gpu_free(dev[j]));
    GPU_OK(cs_thomas_gpu_free(work));
    const double e = td_rel_err(N, x, ref);
    free(a), free(b), free(c), free(d), free(ref), free(x), free(host);
    return e;
}

/* _i: 0 chunked, 1 scan */
START_TEST(test_explicit)
{
    const char *name = _i ? "scan" : "chunked";
    double worst[2] = {0.0, 0.0};
    for (int k = 0; k < N_SHAPES; ++k)
        for (int f32 = 0; f32 < 2 && !skip_shape(k); ++f32) {
            const int nsys = k_shapes[k][0], n = k_shapes[k][1];
            const double e = run_explicit(_i, nsys, n, f32, k % 2);
            const double tol = f32 ? TOL_F : TOL_D;
            ck_assert_msg(e <= tol, "%s %s nsys=%d n=%d: rel err %.3e > %.0e", name,
                          f32 ? "float" : "double", nsys, n, e, tol);
            if (e > worst[f32]) worst[f32] = e;
        }
    printf("  %s (device ptrs, own workspace): %d shapes, worst rel err double %.2e (tol "
           "%.0e), float %.2e (tol %.0e)\n", name, N_SHAPES, worst[0], TOL_D, worst[1], TOL_F);
}
END_TEST

/* Near-singular systems (weakly dominant, margins 1e-2 .. 1e-8), double, chunked and scan through
 * the variant call: <= 1e-9 (the CPU versions: <= 3e-12 measured; the chunked kernels' arithmetic
 * replayed on the host: <= 1.1e-12). */
START_TEST(test_near_singular)
{
    static const double margins[] = {1e-2, 1e-5, 1e-8};
    static const int shapes[][2] = {{1, 100000}, {1, 1000000}, {3, 33333}};
    static const cs_thomas_gpu_variant vs[] = {CS_THOMAS_GPU_CHUNKED, CS_THOMAS_GPU_SCAN};
    double worst = 0.0;
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; ++k)
        for (size_t j = 0; j < sizeof margins / sizeof *margins; ++j)
            for (int iv = 0; iv < 2; ++iv) {
                const int nsys = shapes[k][0], n = shapes[k][1];
                if (g_small && (long long)nsys * n > 20000) continue;
                const size_t N = (size_t)nsys * n;
                double *a = td_alloc(N), *b = td_alloc(N), *c = td_alloc(N), *d = td_alloc(N);
                double *ref = td_alloc(N);
                td_gen_weak(nsys, n, margins[j], a, b, c, d);
                td_reference(nsys, n, a, b, c, d, ref);
                GPU_OK(cs_thomas_gpu_solve_d(vs[iv], nsys, n, a, b, c, d, CS_THOMAS_GPU_HOST_PTRS));
                const double e = td_rel_err(N, d, ref);
                ck_assert_msg(e <= 1e-9, "%s nsys=%d n=%d margin=%.0e: rel err %.3e",
                              cs_thomas_gpu_variant_name(vs[iv]), nsys, n, margins[j], e);
                if (e > worst) worst = e;
                free(a), free(b), free(c), free(d), free(ref);
            }
    printf("  chunked and scan, near-singular (margins 1e-2..1e-8): worst rel err %.2e (tol 1e-9)\n",
           worst);
}
END_TEST

/* The variant call (library workspace, host pointers): chunked, scan and auto (which picks
 * chunked above 1024 rows). */
START_TEST(test_variant)
{
    static const cs_thomas_gpu_variant vs[] = {CS_THOMAS_GPU_CHUNKED, CS_THOMAS_GPU_SCAN,
                                               CS_THOMAS_GPU_AUTO};
    double worst = 0.0;
    for (int k = 0; k < N_SHAPES; ++k)
        for (int iv = 0; iv < 3 && !skip_shape(k); ++iv) {
            const int nsys = k_shapes[k][0], n = k_shapes[k][1];
            const size_t N = (size_t)nsys * n;
            double *a = td_alloc(N), *b = td_alloc(N), *c = td_alloc(N), *d = td_alloc(N);
            double *ref = td_alloc(N);
            td_gen(nsys, n, a, b, c, d);
            td_reference(nsys, n, a, b, c, d, ref);
            GPU_OK(cs_thomas_gpu_solve_d(vs[iv], nsys, n, a, b, c, d, CS_THOMAS_GPU_HOST_PTRS));
            const double e = td_rel_err(N, d, ref);
            ck_assert_msg(e <= TOL_D, "%s nsys=%d n=%d: rel err %.3e", cs_thomas_gpu_variant_name(vs[iv]),
                          nsys, n, e);
            if (e > worst) worst = e;
            free(a), free(b), free(c), free(d), free(ref);
        }
    ck_assert_int_eq(cs_thomas_gpu_choose(1, 2049, CS_THOMAS_GPU_F64), CS_THOMAS_GPU_CHUNKED);
    ck_assert_int_eq(cs_thomas_gpu_choose(3, 1025, CS_THOMAS_GPU_F64), CS_THOMAS_GPU_CHUNKED);
    ck_assert_int_eq(cs_thomas_gpu_choose(1, 1025, CS_THOMAS_GPU_F64), CS_THOMAS_GPU_CHUNKED);
    ck_assert_int_eq(cs_thomas_gpu_choose(64, 1 << 20, CS_THOMAS_GPU_F32), CS_THOMAS_GPU_CHUNKED);
    GPU_OK(cs_thomas_gpu_release_workspace());
    printf("  chunked, scan and auto (host ptrs, library workspace): worst rel err double %.2e\n",
           worst);
}
END_TEST

START_TEST(test_errors)
{
    /* a zero row (a singular matrix) through host pointers: CS_SOLVER_ERR_SINGULAR */
    static const cs_thomas_gpu_variant vs[] = {CS_THOMAS_GPU_CHUNKED, CS_THOMAS_GPU_SCAN,
                                               CS_THOMAS_GPU_AUTO, CS_THOMAS_GPU_FLAT};
    for (int iv = 0; iv < 4; ++iv)
        for (int nn = 100; nn <= 100000; nn *= 1000) {
            double *a = td_alloc(nn), *b = td_alloc(nn), *c = td_alloc(nn), *d = td_alloc(nn);
            td_gen(1, nn, a, b, c, d);
            a[nn / 3] = b[nn / 3] = c[nn / 3] = 0.0;
            ck_assert_msg(cs_thomas_gpu_solve_d(vs[iv], 1, nn, a, b, c, d, CS_THOMAS_GPU_HOST_PTRS) ==
                              CS_SOLVER_ERR_SINGULAR,
                          "%s n=%d: zero row not reported", cs_thomas_gpu_variant_name(vs[iv]), nn);
            free(a), free(b), free(c), free(d);
        }
    void *dev = NULL, *work = NULL;
    const int n = 5000;
    GPU_OK(cs_thomas_gpu_malloc(&dev, n * sizeof(double)));
    double *p = dev;
    const size_t wb = cs_thomas_gpu_chunked_workspace(1, n, CS_THOMAS_GPU_F64);
    ck_assert(wb > 0);
    ck_assert_int_eq(cs_thomas_gpu_chunked_workspace(1, 1024, CS_THOMAS_GPU_F64), 0);
    GPU_OK(cs_thomas_gpu_malloc(&work, wb));
    ck_assert_int_eq(cs_thomas_gpu_chunked_d(1, n, p, p, p, p, work, wb - 8, NULL),
                     CS_SOLVER_ERR_INVALID);
    ck_assert(strstr(cs_thomas_gpu_last_error(), "workspace") != NULL);
    ck_assert_int_eq(cs_thomas_gpu_chunked_d(1, n, p, p, p, p, NULL, 0, NULL), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_chunked_d(1, 0, p, p, p, p, work, wb, NULL), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_chunked_d(1, n, NULL, p, p, p, work, wb, NULL), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_chunked_d(0, n, NULL, NULL, NULL, NULL, NULL, 0, NULL), CS_SOLVER_OK);
    const size_t sb = cs_thomas_gpu_scan_workspace(1, n, CS_THOMAS_GPU_F64);
    ck_assert(sb > 0);
    GPU_OK(cs_thomas_gpu_free(work));
    GPU_OK(cs_thomas_gpu_malloc(&work, sb));
    ck_assert_int_eq(cs_thomas_gpu_scan_d(1, n, p, p, p, p, work, sb - 8, NULL), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_scan_d(1, n, p, p, p, p, (char *)work + 8, sb, NULL),
                     CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_scan_d(-1, n, p, p, p, p, work, sb, NULL), CS_SOLVER_ERR_INVALID);
    GPU_OK(cs_thomas_gpu_free(dev));
    GPU_OK(cs_thomas_gpu_free(work));
}
END_TEST

int main(void)
{
    const int skip = gpu_exit_code();
    if (skip >= 0) return skip;
    const char *sm = getenv("CS_TEST_SMALL");
    g_small = sm && sm[0] && strcmp(sm, "0") != 0;
    Suite *s = suite_create("thomas_large_gpu");
    TCase *tc = tcase_create("chunked");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_explicit, 0, 2);
    tcase_add_test(tc, test_variant);
    tcase_add_test(tc, test_near_singular);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
