/* The CPU solvers for one large tridiagonal system, the chunked hybrid
 * (cs_thomas_solve_chunked_omp, solver/cs_thomas_chunked_cpu.c) and the scans
 * (cs_thomas_solve_scan_omp, solver/cs_thomas_scan_cpu.c), against the serial Thomas reference on random diagonally
 * dominant systems (tests/test_tridiag.h): max|x - x_ref| / max|x_ref| <= 1e-12.
 * Shapes: n = 1, 2, 3, chunk boundaries (chunk ± 1, multiples), non-powers of two, 2^20 rows;
 * nsys = 1, 3, 7 (the batch counts as one system, so chunks straddle system boundaries); chunk
 * sizes 2, 3, 5, 16 and automatic. Also: a zero row gives CS_SOLVER_ERR_SINGULAR, bad
 * arguments CS_SOLVER_ERR_INVALID, and the chunked result does not depend on the thread count.
 * The scans run with 1, 2, 3 and 8 threads (blocks of >= 4096 rows: the block prefixes, i.e.
 * the 2×2 matrix products and the affine compositions, are used from 8192 rows on).
 * Near-singular systems (weakly diagonally dominant, margin down to 1e-8): <= 1e-9. */
#include <check.h>
#include <omp.h>
#include <stdio.h>

#include "cs_solver.h"
#include "test_run.h"
#include "test_tridiag.h"

#define TOL 1e-12

/* Solve (nsys, n) with chunk; returns the error against the serial reference. */
static double run(int nsys, int n, int chunk)
{
    const size_t N = (size_t)nsys * n;
    double *a = td_alloc(N), *b = td_alloc(N), *c = td_alloc(N), *d = td_alloc(N);
    double *ref = td_alloc(N);
    td_gen(nsys, n, a, b, c, d);
    td_reference(nsys, n, a, b, c, d, ref);
    const cs_solver_status st = cs_thomas_solve_chunked_omp(nsys, n, chunk, a, b, c, d);
    ck_assert_msg(st == CS_SOLVER_OK, "nsys=%d n=%d chunk=%d: status %d", nsys, n, chunk, (int)st);
    const double e = td_rel_err(N, d, ref);
    free(a), free(b), free(c), free(d), free(ref);
    return e;
}

START_TEST(test_shapes)
{
    static const int ns[] = {1, 2, 3, 4, 5, 6, 15, 16, 17, 31, 32, 33, 100, 255, 256, 257, 511,
                             512, 513, 1000, 4097, 65539};
    static const int nsyss[] = {1, 3, 7};
    static const int chunks[] = {0, 2, 3, 5, 16};
    double worst = 0.0;
    int count = 0;
    for (size_t i = 0; i < sizeof ns / sizeof *ns; ++i)
        for (size_t j = 0; j < sizeof nsyss / sizeof *nsyss; ++j)
            for (size_t k = 0; k < sizeof chunks / sizeof *chunks; ++k) {
                const double e = run(nsyss[j], ns[i], chunks[k]);
                ck_assert_msg(e <= TOL, "nsys=%d n=%d chunk=%d: rel err %.3e > %.0e", nsyss[j],
                              ns[i], chunks[k], e, TOL);
                if (e > worst) worst = e;
                ++count;
            }
    const double big = run(1, 1 << 20, 0);
    ck_assert_msg(big <= TOL, "n=2^20: rel err %.3e", big);
    printf("chunked_omp: %d shapes, worst rel err %.2e (n=2^20: %.2e), tolerance %.0e\n", count,
           worst, big, TOL);
}
END_TEST

/* Bit-identical whatever the thread count (the chunks depend on N only). */
START_TEST(test_threads)
{
    const int n = 300001;
    double *a = td_alloc(n), *b = td_alloc(n), *c = td_alloc(n), *d = td_alloc(n);
    double *b2 = td_alloc(n), *c2 = td_alloc(n), *d2 = td_alloc(n);
    td_gen(1, n, a, b, c, d);
    memcpy(b2, b, n * sizeof *b), memcpy(c2, c, n * sizeof *c), memcpy(d2, d, n * sizeof *d);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    ck_assert_int_eq(cs_thomas_solve_chunked_omp(1, n, 0, a, b, c, d), CS_SOLVER_OK);
    omp_set_num_threads(3);
    ck_assert_int_eq(cs_thomas_solve_chunked_omp(1, n, 0, a, b2, c2, d2), CS_SOLVER_OK);
    omp_set_num_threads(saved);
    ck_assert(memcmp(d, d2, n * sizeof *d) == 0);
    free(a), free(b), free(c), free(d), free(b2), free(c2), free(d2);
}
END_TEST

START_TEST(test_singular_and_invalid)
{
    const int n = 1000;
    double *a = td_alloc(n), *b = td_alloc(n), *c = td_alloc(n), *d = td_alloc(n);
    static const int rows[] = {0, 1, 15, 16, 17, 500, 998, 999};
    for (size_t r = 0; r < sizeof rows / sizeof *rows; ++r) {
        td_gen(1, n, a, b, c, d);
        const int z = rows[r];
        a[z] = b[z] = c[z] = 0.0; /* a zero row: the matrix is singular */
        ck_assert_msg(cs_thomas_solve_chunked_omp(1, n, 16, a, b, c, d) == CS_SOLVER_ERR_SINGULAR,
                      "zero row %d not reported", z);
    }
    double one = 1.0, x = 2.0;
    ck_assert_int_eq(cs_thomas_solve_chunked_omp(1, 1, 0, &one, &one, &one, &x), CS_SOLVER_OK);
    ck_assert(x == 2.0);
    ck_assert_int_eq(cs_thomas_solve_chunked_omp(-1, 4, 0, a, b, c, d), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_solve_chunked_omp(1, 0, 0, a, b, c, d), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_solve_chunked_omp(1, 4, 1, a, b, c, d), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_solve_chunked_omp(1, 4, -2, a, b, c, d), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_solve_chunked_omp(1, 4, 0, NULL, b, c, d), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_solve_chunked_omp(0, 4, 0, NULL, NULL, NULL, NULL), CS_SOLVER_OK);
    free(a), free(b), free(c), free(d);
}
END_TEST

/* Near-singular (weakly dominant, margins 1e-2 .. 1e-8): every solution carries an error of
 * ~cond·eps, so the agreement is looser; measured <= 3e-12, asserted <= 1e-9. */
START_TEST(test_near_singular)
{
    static const double margins[] = {1e-2, 1e-5, 1e-8};
    static const int shapes[][2] = {{1, 100000}, {1, 1000000}, {3, 33333}};
    double worst = 0.0;
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; ++k)
        for (size_t j = 0; j < sizeof margins / sizeof *margins; ++j)
            for (int v = 0; v < 3; ++v) { /* chunked auto, chunked 16, scan */
                const int nsys = shapes[k][0], n = shapes[k][1];
                const size_t N = (size_t)nsys * n;
                double *a = td_alloc(N), *b = td_alloc(N), *c = td_alloc(N), *d = td_alloc(N);
                double *ref = td_alloc(N);
                td_gen_weak(nsys, n, margins[j], a, b, c, d);
                td_reference(nsys, n, a, b, c, d, ref);
                const cs_solver_status st = v < 2 ? cs_thomas_solve_chunked_omp(nsys, n, v ? 16 : 0, a, b, c, d)
                                                  : cs_thomas_solve_scan_omp(nsys, n, a, b, c, d);
                ck_assert_int_eq(st, CS_SOLVER_OK);
                const double e = td_rel_err(N, d, ref);
                ck_assert_msg(e <= 1e-9, "%s nsys=%d n=%d margin=%.0e: rel err %.3e", v < 2 ? "chunked" : "scan",
                              nsys, n, margins[j], e);
                if (e > worst) worst = e;
                free(a), free(b), free(c), free(d), free(ref);
            }
    printf("near-singular (margins 1e-2..1e-8): worst rel err %.2e, tolerance 1e-9\n", worst);
}
END_TEST

/* The scans: every shape above with 1, 2, 3 and 8 threads. */
START_TEST(test_scan)
{
    static const int ns[] = {1, 2, 3, 5, 17, 1000, 4095, 4096, 4097, 8193, 65539, 1 << 20};
    static const int nsyss[] = {1, 3, 7};
    static const int threads[] = {1, 2, 3, 8};
    const int saved = omp_get_max_threads();
    double worst = 0.0;
    for (size_t i = 0; i < sizeof ns / sizeof *ns; ++i)
        for (size_t j = 0; j < sizeof nsyss / sizeof *nsyss; ++j) {
            const int nsys = nsyss[j], n = ns[i];
            if ((long long)nsys * n > (1 << 21)) continue;
            const size_t N = (size_t)nsys * n;
            double *a = td_alloc(N), *b = td_alloc(N), *c = td_alloc(N), *d = td_alloc(N);
            double *bb = td_alloc(N), *dd = td_alloc(N), *ref = td_alloc(N);
            td_gen(nsys, n, a, b, c, d);
            td_reference(nsys, n, a, b, c, d, ref);
            for (size_t t = 0; t < sizeof threads / sizeof *threads; ++t) {
                memcpy(bb, b, N * sizeof *b), memcpy(dd, d, N * sizeof *d);
                omp_set_num_threads(threads[t]);
                ck_assert_int_eq(cs_thomas_solve_scan_omp(nsys, n, a, bb, c, dd), CS_SOLVER_OK);
                const double e = td_rel_err(N, dd, ref);
                ck_assert_msg(e <= TOL, "scan nsys=%d n=%d threads=%d: rel err %.3e > %.0e", nsys,
                              n, threads[t], e, TOL);
                if (e > worst) worst = e;
            }
            free(a), free(b), free(c), free(d), free(bb), free(dd), free(ref);
        }
    omp_set_num_threads(saved);
    /* a zero row: singular */
    const int n = 20000;
    double *a = td_alloc(n), *b = td_alloc(n), *c = td_alloc(n), *d = td_alloc(n);
    td_gen(1, n, a, b, c, d);
    a[12345] = b[12345] = c[12345] = 0.0;
    ck_assert_int_eq(cs_thomas_solve_scan_omp(1, n, a, b, c, d), CS_SOLVER_ERR_SINGULAR);
    ck_assert_int_eq(cs_thomas_solve_scan_omp(1, 0, a, b, c, d), CS_SOLVER_ERR_INVALID);
    free(a), free(b), free(c), free(d);
    printf("scan_omp: worst rel err %.2e, tolerance %.0e\n", worst, TOL);
}
END_TEST

/* The host emulation of the GPU chunked variant (cs_thomas_solve_warp_emul: lanes of k rows, warp
 * trees of 32 lanes, PCR at the base): the GPU's k = 16 and base = 4096 (2^20 rows: one level;
 * 2^23 would take two), and small k and base to take 2..4 levels at small sizes; batches whose
 * systems straddle lanes and warps; near-singular systems (margin 1e-8) <= 1e-9. */
static double run_emul(int nsys, int n, int k, int base, int pcr, double margin)
{
    const size_t N = (size_t)nsys * n;
    double *a = td_alloc(N), *b = td_alloc(N), *c = td_alloc(N), *d = td_alloc(N);
    double *ref = td_alloc(N);
    if (margin > 0.0) td_gen_weak(nsys, n, margin, a, b, c, d);
    else td_gen(nsys, n, a, b, c, d);
    td_reference(nsys, n, a, b, c, d, ref);
    const cs_solver_status st = cs_thomas_solve_warp_emul(nsys, n, k, base, pcr, a, b, c, d);
    ck_assert_msg(st == CS_SOLVER_OK, "emul nsys=%d n=%d k=%d base=%d pcr=%d: status %d", nsys, n,
                  k, base, pcr, (int)st);
    const double e = td_rel_err(N, d, ref);
    free(a), free(b), free(c), free(d), free(ref);
    return e;
}

START_TEST(test_warp_emul)
{
    /* pcr: 0 the warp base everywhere; 1024 the GPU's PCR base on reduced levels (2^22 + 5
     * rows: 66 rows after two reductions; 4096 also on 2^20's 4096-row level); small pcr for
     * 2..3 levels */
    static const int shapes[][5] = {/* nsys, n, k, base, pcr */
                                    {1, 1, 16, 4096, 0},    {1, 2, 16, 4096, 0},   {1, 4096, 16, 4096, 0},
                                    {1, 4097, 16, 4096, 0}, {1, 100003, 16, 4096, 0}, {3, 5000, 16, 4096, 0},
                                    {7, 1000, 4, 16, 0},    {1, 513, 4, 8, 0},     {1, 70001, 4, 16, 0},
                                    {5, 33333, 2, 4, 0},    {64, 17, 4, 8, 0},     {1, 1 << 20, 16, 4096, 0},
                                    {1, 4097, 16, 4096, 1024}, {3, 5000, 16, 4096, 1024},
                                    {1, 1 << 20, 16, 4096, 4096}, {1, (1 << 22) + 5, 16, 4096, 1024},
                                    {7, 1000, 4, 16, 16},   {1, 70001, 4, 16, 8}, {64, 17, 4, 8, 8}};
    double worst = 0.0;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i) {
        const int *s = shapes[i];
        const double e = run_emul(s[0], s[1], s[2], s[3], s[4], 0.0);
        ck_assert_msg(e <= TOL, "emul nsys=%d n=%d k=%d base=%d pcr=%d: rel err %.3e > %.0e", s[0],
                      s[1], s[2], s[3], s[4], e, TOL);
        if (e > worst) worst = e;
    }
    const double weak = run_emul(1, 300007, 16, 4096, 1024, 1e-8);
    ck_assert_msg(weak <= 1e-9, "emul near-singular: rel err %.3e", weak);
    {
        const int n = 100003;
        double *a = td_alloc(n), *b = td_alloc(n), *c = td_alloc(n), *d = td_alloc(n);
        td_gen(1, n, a, b, c, d);
        a[n / 3] = b[n / 3] = c[n / 3] = 0.0; /* a zero row: singular */
        ck_assert_int_eq(cs_thomas_solve_warp_emul(1, n, 16, 4096, 1024, a, b, c, d), CS_SOLVER_ERR_SINGULAR);
        free(a), free(b), free(c), free(d);
    }
    double x = 1.0, z = 0.0, one = 1.0;
    ck_assert_int_eq(cs_thomas_solve_warp_emul(1, 1, 16, 4096, 4096, &z, &z, &z, &x), CS_SOLVER_ERR_SINGULAR);
    ck_assert_int_eq(cs_thomas_solve_warp_emul(1, 1, 1, 4096, 4096, &z, &one, &z, &x), CS_SOLVER_ERR_INVALID);
    printf("warp emulation: %d shapes, worst rel err %.2e (tol %.0e); near-singular 1e-8: %.2e\n",
           (int)(sizeof shapes / sizeof *shapes), worst, TOL, weak);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("thomas_large_cpu");
    TCase *tc = tcase_create("chunked");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_shapes);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_singular_and_invalid);
    tcase_add_test(tc, test_scan);
    tcase_add_test(tc, test_near_singular);
    tcase_add_test(tc, test_warp_emul);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
