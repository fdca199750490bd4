/* CPU block-tridiagonal solvers (cs_block_thomas_solve_serial/_omp, solver/cs_block_thomas_cpu.c)
 * against LAPACK's banded solver dgbsv on the same matrices (tests/test_block.h):
 * max|x - x_dgbsv| / max|x_dgbsv| <= 1e-12, for k = 1..4, nb = 1, 2, 3, 17, 100 and nsys = 1, 5, 64;
 * the OpenMP solve bit-identical to the serial one; a system whose pivot block has a zero leading
 * entry (pivoting inside the block needed, not diagonally dominant by rows) against dgbsv too;
 * near-singular systems (weakly dominant, margins down to 1e-8) against dgbsv at 1e-7;
 * a zero block row gives CS_SOLVER_ERR_SINGULAR; bad arguments CS_SOLVER_ERR_INVALID.
 * Exit 77 (skipped) when the build found no LAPACK. */
#include <check.h>
#include <stdio.h>

#include "cs_solver.h"
#include "test_block.h"
#include "test_run.h"

#define TOL 1e-12

START_TEST(test_vs_lapack)
{
    static const int nbs[] = {1, 2, 3, 17, 100};
    static const int nsyss[] = {1, 5, 64};
    double worst[5] = {0};
    for (int k = 1; k <= 4; ++k)
        for (size_t ib = 0; ib < sizeof nbs / sizeof *nbs; ++ib)
            for (size_t is = 0; is < sizeof nsyss / sizeof *nsyss; ++is) {
                const int nb = nbs[ib], nsys = nsyss[is];
                const size_t nblk = (size_t)nsys * nb * k * k, nvec = (size_t)nsys * nb * k;
                double *A = td_alloc(nblk), *B = td_alloc(nblk), *C = td_alloc(nblk), *d = td_alloc(nvec);
                double *C2 = td_alloc(nblk), *d2 = td_alloc(nvec), *ref = td_alloc(nvec);
                blk_gen(k, nsys, nb, A, B, C, d);
                ck_assert_int_eq(blk_reference(k, nsys, nb, A, B, C, d, ref), 0);
                memcpy(C2, C, nblk * sizeof *C), memcpy(d2, d, nvec * sizeof *d);
                ck_assert_int_eq(cs_block_thomas_solve_serial(k, nsys, nb, A, B, C, d), CS_SOLVER_OK);
                ck_assert_int_eq(cs_block_thomas_solve_omp(k, nsys, nb, A, B, C2, d2), CS_SOLVER_OK);
                const double e = td_rel_err(nvec, d, ref);
                ck_assert_msg(e <= TOL, "k=%d nsys=%d nb=%d: rel err %.3e > %.0e", k, nsys, nb, e, TOL);
                ck_assert(memcmp(d, d2, nvec * sizeof *d) == 0);
                if (e > worst[k]) worst[k] = e;
                free(A), free(B), free(C), free(d), free(C2), free(d2), free(ref);
            }
    printf("block Thomas vs dgbsv: worst rel err k=1 %.2e, k=2 %.2e, k=3 %.2e, k=4 %.2e (tol %.0e)\n",
           worst[1], worst[2], worst[3], worst[4], TOL);
}
END_TEST

/* k = 2, B = [[0, ±4], [±4, 0]] + small: the leading entry of every pivot block is ~0 */
START_TEST(test_pivoting)
{
    const int k = 2, nb = 50, nsys = 3;
    const size_t nblk = (size_t)nsys * nb * 4, nvec = (size_t)nsys * nb * 2;
    double *A = td_alloc(nblk), *B = td_alloc(nblk), *C = td_alloc(nblk), *d = td_alloc(nvec), *ref = td_alloc(nvec);
    blk_gen(k, nsys, nb, A, B, C, d);
    for (size_t b = 0; b < nblk / 4; ++b) {
        for (int e = 0; e < 4; ++e) A[4 * b + e] *= 0.25, C[4 * b + e] *= 0.25;
        B[4 * b + 0] = 0.0, B[4 * b + 3] = 0.0;
        B[4 * b + 1] = urand() < 0.5 ? -4.0 : 4.0, B[4 * b + 2] = urand() < 0.5 ? -4.0 : 4.0;
    }
    ck_assert_int_eq(blk_reference(k, nsys, nb, A, B, C, d, ref), 0);
    ck_assert_int_eq(cs_block_thomas_solve_serial(k, nsys, nb, A, B, C, d), CS_SOLVER_OK);
    const double e = td_rel_err(nvec, d, ref);
    ck_assert_msg(e <= TOL, "pivoting: rel err %.3e", e);
    printf("block Thomas, zero leading entries (pivoting in the block): rel err %.2e\n", e);
    free(A), free(B), free(C), free(d), free(ref);
}
END_TEST

/* Near-singular (weakly dominant by margins 1e-2 .. 1e-8): every solution carries an error of
 * about cond·eps, dgbsv's included (here up to ~1e-9): tolerance 1e-7. */
START_TEST(test_near_singular)
{
    const int nb = 200, nsys = 3;
    double worst = 0.0;
    for (int k = 1; k <= 4; ++k)
        for (double margin = 1e-2; margin >= 1e-8; margin *= 1e-3) {
            const size_t nblk = (size_t)nsys * nb * k * k, nvec = (size_t)nsys * nb * k;
            double *A = td_alloc(nblk), *B = td_alloc(nblk), *C = td_alloc(nblk), *d = td_alloc(nvec),
                   *ref = td_alloc(nvec);
            blk_gen_near(k, nsys, nb, margin, A, B, C, d);
            ck_assert_int_eq(blk_reference(k, nsys, nb, A, B, C, d, ref), 0);
            ck_assert_int_eq(cs_block_thomas_solve_omp(k, nsys, nb, A, B, C, d), CS_SOLVER_OK);
            const double e = td_rel_err(nvec, d, ref);
            ck_assert_msg(e <= 1e-7, "near-singular k=%d margin %.0e: rel err %.3e", k, margin, e);
            if (e > worst) worst = e;
            free(A), free(B), free(C), free(d), free(ref);
        }
    printf("block Thomas near-singular (margins 1e-2..1e-8) vs dgbsv: worst rel err %.2e (tol 1e-7)\n",
           worst);
}
END_TEST

START_TEST(test_singular_and_invalid)
{
    const int k = 3, nb = 10;
    const size_t nblk = (size_t)nb * 9, nvec = (size_t)nb * 3;
    double *A = td_alloc(nblk), *B = td_alloc(nblk), *C = td_alloc(nblk), *d = td_alloc(nvec);
    blk_gen(k, 1, nb, A, B, C, d);
    for (int e = 0; e < 9; ++e) A[4 * 9 + e] = B[4 * 9 + e] = C[4 * 9 + e] = 0.0; /* block row 4 */
    ck_assert_int_eq(cs_block_thomas_solve_serial(k, 1, nb, A, B, C, d), CS_SOLVER_ERR_SINGULAR);
    ck_assert_int_eq(cs_block_thomas_solve_serial(5, 1, nb, A, B, C, d), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_block_thomas_solve_serial(0, 1, nb, A, B, C, d), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_block_thomas_solve_omp(k, 1, 0, A, B, C, d), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_block_thomas_solve_omp(k, 1, nb, NULL, B, C, d), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_block_thomas_solve_omp(k, 0, nb, NULL, NULL, NULL, NULL), CS_SOLVER_OK);
    free(A), free(B), free(C), free(d);
}
END_TEST

/* The chunked hybrid for one large block system (cs_block_thomas_solve_chunked_omp: chunks of 16
 * block rows, levels down to 64) against dgbsv at TOL, and against the serial block Thomas at
 * TOL: k = 1..4; one system of 1, 2, 64 (the base), 65, 100, 1000 and 5003 block rows (2 and 3
 * levels), 3 systems of 777 and 64 of 17 (chunks straddle the cuts between systems); one system
 * of 100003 rows for k = 2; near-singular (margin 1e-6, 2000 rows) against dgbsv at 1e-7; a
 * singular pivot block gives CS_SOLVER_ERR_SINGULAR. */
START_TEST(test_chunked)
{
    static const int shapes[][2] = {{1, 1}, {1, 2}, {1, 64}, {1, 65}, {1, 100}, {1, 1000},
                                    {1, 5003}, {3, 777}, {64, 17}, {1, 100003}};
    double worst[5] = {0}, worst_near = 0.0;
    for (int k = 1; k <= 4; ++k)
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i) {
            const int nsys = shapes[i][0], nb = shapes[i][1];
            if (nb > 10000 && k != 2) continue;
            for (int near = 0; near < 2; ++near) {
                if (near && nb != 1000) continue;
                const size_t nblk = (size_t)nsys * nb * k * k, nvec = (size_t)nsys * nb * k;
                double *A = td_alloc(nblk), *B = td_alloc(nblk), *C = td_alloc(nblk), *d = td_alloc(nvec);
                double *C2 = td_alloc(nblk), *d2 = td_alloc(nvec), *ref = td_alloc(nvec);
                if (near) blk_gen_near(k, nsys, nb, 1e-6, A, B, C, d);
                else blk_gen(k, nsys, nb, A, B, C, d);
                ck_assert_int_eq(blk_reference(k, nsys, nb, A, B, C, d, ref), 0);
                memcpy(C2, C, nblk * sizeof *C), memcpy(d2, d, nvec * sizeof *d);
                ck_assert_int_eq(cs_block_thomas_solve_chunked_omp(k, nsys, nb, A, B, C, d), CS_SOLVER_OK);
                ck_assert_int_eq(cs_block_thomas_solve_serial(k, nsys, nb, A, B, C2, d2), CS_SOLVER_OK);
                const double e = td_rel_err(nvec, d, ref), es = td_rel_err(nvec, d, d2);
                const double tol = near ? 1e-7 : TOL;
                ck_assert_msg(e <= tol && es <= tol, "chunked k=%d nsys=%d nb=%d%s: rel err %.3e vs dgbsv, %.3e vs serial",
                              k, nsys, nb, near ? " near-singular" : "", e, es);
                if (near) worst_near = e > worst_near ? e : worst_near;
                else if (e > worst[k]) worst[k] = e;
                free(A), free(B), free(C), free(d), free(C2), free(d2), free(ref);
            }
        }
    {
        const int k = 3, nb = 5000;
        const size_t nblk = (size_t)nb * k * k, nvec = (size_t)nb * k;
        double *A = td_alloc(nblk), *B = td_alloc(nblk), *C = td_alloc(nblk), *d = td_alloc(nvec);
        blk_gen(k, 1, nb, A, B, C, d);
        memset(A + 2345 * k * k, 0, k * k * sizeof *A), memset(B + 2345 * k * k, 0, k * k * sizeof *B);
        memset(C + 2345 * k * k, 0, k * k * sizeof *C);
        ck_assert_int_eq(cs_block_thomas_solve_chunked_omp(k, 1, nb, A, B, C, d), CS_SOLVER_ERR_SINGULAR);
        ck_assert_int_eq(cs_block_thomas_solve_chunked_omp(5, 1, nb, A, B, C, d), CS_SOLVER_ERR_INVALID);
        free(A), free(B), free(C), free(d);
    }
    printf("block chunked vs dgbsv: worst rel err k=1 %.2e, k=2 %.2e, k=3 %.2e, k=4 %.2e (tol %.0e); "
           "near-singular 1e-6: %.2e (tol 1e-7)\n", worst[1], worst[2], worst[3], worst[4], TOL, worst_near);
}
END_TEST

int main(void)
{
#ifdef CS_NO_LAPACK
    printf("SKIP: LAPACK not found at configure time (apt-get install liblapack-dev)\n");
    return 77;
#endif
    Suite *s = suite_create("block_tridiag_cpu");
    TCase *tc = tcase_create("block");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_vs_lapack);
    tcase_add_test(tc, test_pivoting);
    tcase_add_test(tc, test_near_singular);
    tcase_add_test(tc, test_singular_and_invalid);
    tcase_add_test(tc, test_chunked);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
