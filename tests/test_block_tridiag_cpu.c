/* CPU block-tridiagonal solvers (cs_block_thomas_solve_serial/_omp, solver/cs_block_thomas_cpu.c)
 * against LAPACK's banded solver dgbsv on the same matrices (tests/test_block.h):
 * max|x - x_dgbsv| / max|x_dgbsv| <= 1e-12, for k = 1..4, nb = 1, 2, 3, 17, 100 and nsys = 1, 5, 64;
 * the OpenMP solve bit-identical to the serial one; a system whose pivot block has a zero leading
 * entry (pivoting inside the block needed, not diagonally dominant by rows) against dgbsv too;
 * near-singular systems (weakly dominant, margins down to 1e-8) against dgbsv at 1e-7;
 * a zero block row gives CS_SOLVER_ERR_SINGULAR; bad arguments CS_SOLVER_ERR_INVALID.
 * The chunked hybrid (cs_block_thomas_solve_chunked_omp) against dgbsv, and the host emulation
 * of the GPU's staged kernels against it (bit-identical).
 * Without LAPACK only the emulation runs. */
#include <check.h>
#include <stdio.h>

#include <math.h>

#include "cs_block_segment.h"
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

/* Block row `row` of A, B, C set to zero (a singular pivot block). */
static void zero_row(int k, size_t row, double *A, double *B, double *C)
{
    const size_t kk = (size_t)k * k;
    memset(A + row * kk, 0, kk * sizeof *A), memset(B + row * kk, 0, kk * sizeof *B);
    memset(C + row * kk, 0, kk * sizeof *C);
}

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
        zero_row(k, 2345, A, B, C);
        ck_assert_int_eq(cs_block_thomas_solve_chunked_omp(k, 1, nb, A, B, C, d), CS_SOLVER_ERR_SINGULAR);
        ck_assert_int_eq(cs_block_thomas_solve_chunked_omp(5, 1, nb, A, B, C, d), CS_SOLVER_ERR_INVALID);
        free(A), free(B), free(C), free(d);
    }
    printf("block chunked vs dgbsv: worst rel err k=1 %.2e, k=2 %.2e, k=3 %.2e, k=4 %.2e (tol %.0e); "
           "near-singular 1e-6: %.2e (tol 1e-7)\n", worst[1], worst[2], worst[3], worst[4], TOL, worst_near);
}
END_TEST

/* ---- host emulation of the GPU's staged kernels (solver/cs_block_large_gpu.cu) ------------
 * The kernels' data movement (cs_block_segment.h: cs__bseg_slot_set, cs__bseg_stage_in/out, cs__bseg_red_store,
 * the slot rows of each mode) run lane by lane for lanes 0..31 where the kernel runs them
 * between __syncwarp()s, with the same arithmetic per lane. The slots are filled with NaN before
 * every step, so a lane computing on a row that was not staged for it gives NaN. */
#define EW CS_BSEG_W
#define ES CS_BSEG_SLOT(CS_BLOCK_MAX_K)

static void emul_poison(double *sm)
{
    for (int i = 0; i < EW * ES; ++i) sm[i] = NAN;
}

static int emul_level(int k, size_t m, size_t nb, const double *A, const double *B, double *C, double *d)
{
    const size_t kk = (size_t)k * k;
    if (m <= CS_BSEG_BASE) /* the base: block Thomas per system, as the CPU hybrid's */
        return cs_block_thomas_solve_serial(k, (int)(m / nb), (int)nb, A, B, C, d) == CS_SOLVER_ERR_SINGULAR;
    const size_t P = m / CS_BSEG_K, mr = 2 * P;
    const int S = CS_BSEG_SLOT(k);
    double *red = td_alloc(3 * mr * kk + mr * k), sm[EW * ES];
    size_t row[EW];
    int flag[EW];
    double *rA = red, *rB = red + mr * kk, *rC = red + 2 * mr * kk, *rd = red + 3 * mr * kk;
    int sing = 0;
    for (size_t q0 = 0; q0 < P; q0 += EW / 2) { /* the reduce, one warp at a time */
        double Pm[EW][16], Qm[EW][16], D[EW][4];
        for (int l = 0; l < EW; ++l) cs__bseg_start(k, Pm[l], Qm[l], D[l]);
        const int steps = cs__bseg_steps(CS__BSEG_RED, q0, P, m);
        for (int s = 0; s < steps; ++s) {
            emul_poison(sm);
            for (int l = 0; l < EW; ++l) cs__bseg_slot_set(CS__BSEG_RED, q0, l, s, P, m, nb, row, flag);
            for (int l = 0; l < EW; ++l) cs__bseg_stage_in(k, l, 15, row, flag, A, B, C, d, sm);
            for (int l = 0; l < EW; ++l)
                if (row[l] != CS__BSEG_NONE)
                    sing |= cs__bseg_red_lane(k, l, sm + l * S, Pm[l], Qm[l], D[l]);
        }
        emul_poison(sm);
        for (int l = 0; l < EW; ++l)
            if (q0 + (size_t)(l >> 1) < P) cs__bseg_red_put(k, l, sm + l * S, Pm[l], Qm[l], D[l]);
        for (int l = 0; l < EW; ++l) cs__bseg_red_store(k, l, q0, P, sm, rA, rB, rC, rd);
    }
    sing |= emul_level(k, mr, mr, rA, rB, rC, rd);
    for (size_t q0 = 0; q0 < P; q0 += EW) { /* the substitution */
        double F[EW][4], L[EW][4], cp[EW][16], dp[EW][4];
        int len[EW];
        for (int l = 0; l < EW; ++l) {
            const size_t q = q0 + l;
            len[l] = q < P ? cs__bseg_len(q, P, m) : 0;
            for (int r = 0; r < k && q < P; ++r) F[l][r] = rd[2 * q * k + r], L[l][r] = rd[(2 * q + 1) * k + r];
        }
        const int fs = cs__bseg_steps(CS__BSEG_FWD, q0, P, m), bs = cs__bseg_steps(CS__BSEG_BWD, q0, P, m);
        for (int s = 0; s < fs; ++s) {
            emul_poison(sm);
            for (int l = 0; l < EW; ++l) cs__bseg_slot_set(CS__BSEG_FWD, q0, l, s, P, m, nb, row, flag);
            for (int l = 0; l < EW; ++l) cs__bseg_stage_in(k, l, 15, row, flag, A, B, C, d, sm);
            for (int l = 0; l < EW; ++l)
                if (len[l] && s <= len[l] - 3) {
                    double *sl = sm + l * S;
                    sing |= cs__bseg_fwd(k, 1 + s, len[l], sl, sl + kk, sl + 2 * kk, sl + 3 * kk, F[l], L[l], cp[l], dp[l]);
                }
            for (int l = 0; l < EW; ++l) cs__bseg_stage_out(k, l, row, flag, C, d, sm);
        }
        for (int s = 0; s < bs; ++s) {
            emul_poison(sm);
            for (int l = 0; l < EW; ++l) cs__bseg_slot_set(CS__BSEG_BWD, q0, l, s, P, m, nb, row, flag);
            for (int l = 0; l < EW; ++l) cs__bseg_stage_in(k, l, CS__BSEG_C | CS__BSEG_D, row, flag, A, B, C, d, sm);
            for (int l = 0; l < EW; ++l)
                if (len[l] && s <= len[l] - 4) {
                    double *sl = sm + l * S;
                    cs__blk_backward(k, sl + 2 * kk, sl + 3 * kk, dp[l], 1);
                    for (int r = 0; r < k; ++r) dp[l][r] = sl[3 * kk + r];
                }
            for (int l = 0; l < EW; ++l) cs__bseg_stage_out(k, l, row, flag, C, d, sm);
        }
        for (int l = 0; l < EW; ++l)
            for (int r = 0; r < k && len[l]; ++r) {
                const size_t q = q0 + l;
                d[q * CS_BSEG_K * k + r] = F[l][r], d[(q * CS_BSEG_K + len[l] - 1) * k + r] = L[l][r];
            }
    }
    free(red);
    return sing;
}

/* The emulation against cs_block_thomas_solve_chunked_omp: the same arithmetic per chunk, so the
 * same bits (max |x - x_cpu| == 0); k = 1..4, one system of 65 (4 chunks, the last of 17),
 * 16·33 + 31 (a warp's worth of chunks plus one, the last chunk 2K-1 long),
 * 1000, 5003 and 20011 rows (2 to 3 levels), 3 systems of 777, 40 of 130 and 64 of 17 (chunks
 * across system cuts, and holding whole systems); a singular pivot block is reported. */
START_TEST(test_staged_emulation)
{
    static const int shapes[][2] = {{1, 65}, {1, 16 * 33 + 31}, {1, 1000}, {1, 5003}, {1, 20011},
                                    {3, 777}, {40, 130}, {64, 17}};
    for (int k = 1; k <= 4; ++k)
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i) {
            const int nsys = shapes[i][0], nb = shapes[i][1];
            blk_case c;
            ck_assert_int_eq(blk_case_make(k, nsys, nb, &c), CS_SOLVER_OK);
            ck_assert_int_eq(emul_level(k, (size_t)nsys * nb, (size_t)nb, c.A, c.B, c.C, c.d), 0);
            double diff = 0.0;
            for (size_t j = 0; j < c.nvec; ++j) {
                const double e = fabs(c.d[j] - c.ref[j]);
                diff = (e > diff || isnan(e)) ? e : diff;
            }
            ck_assert_msg(diff == 0.0, "staged emulation k=%d nsys=%d nb=%d: max |x - x_cpu| = %.3e", k,
                          nsys, nb, diff);
            blk_case_free(&c);
        }
    {
        const int k = 2, nb = 3000;
        const size_t nblk = (size_t)nb * k * k, nvec = (size_t)nb * k;
        double *A = td_alloc(nblk), *B = td_alloc(nblk), *C = td_alloc(nblk), *d = td_alloc(nvec);
        blk_gen(k, 1, nb, A, B, C, d);
        zero_row(k, 1234, A, B, C);
        ck_assert_int_eq(emul_level(k, nb, nb, A, B, C, d), 1);
        free(A), free(B), free(C), free(d);
    }
    printf("block chunked, host emulation of the GPU's staged kernels: bit-identical to the CPU hybrid "
           "(k = 1..4, 8 shapes up to 20011 rows)\n");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("block_tridiag_cpu");
    TCase *tc = tcase_create("block");
    tcase_set_timeout(tc, 300);
#ifdef CS_NO_LAPACK
    printf("LAPACK not found at configure time (apt-get install liblapack-dev): the tests against "
           "dgbsv are skipped, the host emulation of the GPU kernels runs\n");
#else
    tcase_add_test(tc, test_vs_lapack);
    tcase_add_test(tc, test_pivoting);
    tcase_add_test(tc, test_near_singular);
    tcase_add_test(tc, test_singular_and_invalid);
    tcase_add_test(tc, test_chunked);
#endif
    tcase_add_test(tc, test_staged_emulation);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
