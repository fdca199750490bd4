/* GPU block-tridiagonal solvers (solver/cs_block_thomas_gpu.h: flat, interleaved) against
 * LAPACK's banded solver dgbsv on the same matrices (tests/test_block.h):
 * max|x - x_dgbsv| / max|x_dgbsv| <= 1e-12 for k = 1..4 and several (nsys, nb), through host
 * pointers; and once through device pointers with the layout converted on the device. C is
 * overwritten with C' as on the CPU: compared with cs_block_thomas_solve_serial's at 1e-12.
 * Where the build found no LAPACK (the GPU machine has none), the reference is the CPU block
 * Thomas solve instead, which test_block_tridiag_cpu checks against dgbsv; the output says which.
 * Near-singular systems at 1e-7; a singular pivot block gives CS_SOLVER_ERR_SINGULAR and NaN.
 * Exit 77 (skipped) without CUDA or without a device. */
#include <check.h>
#include <stdio.h>

#include "cs_block_thomas_gpu.h"
#include "cs_solver.h"
#include "test_block.h"
#include "test_run.h"

#define TOL 1e-12

/* Flat (nsys × per) -> interleaved (per × nsys), and back */
static void to_il(int nsys, size_t per, const double *f, double *il)
{
    for (int s = 0; s < nsys; ++s)
        for (size_t e = 0; e < per; ++e) il[e * nsys + s] = f[(size_t)s * per + e];
}
static void from_il(int nsys, size_t per, const double *il, double *f)
{
    for (int s = 0; s < nsys; ++s)
        for (size_t e = 0; e < per; ++e) f[(size_t)s * per + e] = il[e * nsys + s];
}

#ifdef CS_NO_LAPACK
static const char k_ref_name[] = "the CPU block Thomas (no LAPACK in this build)";
#else
static const char k_ref_name[] = "dgbsv";
#endif

/* ref = dgbsv's solution, or the CPU block Thomas' without LAPACK */
static void reference(int k, int nsys, int nb, const double *A, const double *B, const double *C,
                      const double *d, double *ref)
{
#ifdef CS_NO_LAPACK
    const size_t nblk = (size_t)nsys * nb * k * k, nvec = (size_t)nsys * nb * k;
    double *Cc = td_alloc(nblk);
    memcpy(Cc, C, nblk * sizeof *Cc);
    memcpy(ref, d, nvec * sizeof *ref);
    ck_assert_int_eq(cs_block_thomas_solve_serial(k, nsys, nb, A, B, Cc, ref), CS_SOLVER_OK);
    free(Cc);
#else
    ck_assert_int_eq(blk_reference(k, nsys, nb, A, B, C, d, ref), 0);
#endif
}

static const int k_shapes[][2] = {{1, 1}, {1, 100}, {37, 17}, {1000, 64}, {5000, 3}};

/* _i: the variant */
START_TEST(test_host)
{
    const cs_block_gpu_variant v = (cs_block_gpu_variant)_i;
    const int il = (v == CS_BLOCK_GPU_INTERLEAVED);
    double worst = 0.0;
    for (int k = 1; k <= 4; ++k)
        for (size_t j = 0; j < sizeof k_shapes / sizeof *k_shapes; ++j) {
            const int nsys = k_shapes[j][0], nb = k_shapes[j][1];
            const size_t pb = (size_t)nb * k * k, pv = (size_t)nb * k;
            const size_t nblk = nsys * pb, nvec = nsys * pv;
            double *A = td_alloc(nblk), *B = td_alloc(nblk), *C = td_alloc(nblk), *d = td_alloc(nvec);
            double *ref = td_alloc(nvec), *Cc = td_alloc(nblk), *dc = td_alloc(nvec);
            double *gA = td_alloc(nblk), *gB = td_alloc(nblk), *gC = td_alloc(nblk), *gd = td_alloc(nvec);
            blk_gen(k, nsys, nb, A, B, C, d);
            reference(k, nsys, nb, A, B, C, d, ref);
            memcpy(Cc, C, nblk * sizeof *C), memcpy(dc, d, nvec * sizeof *d);
            ck_assert_int_eq(cs_block_thomas_solve_serial(k, nsys, nb, A, B, Cc, dc), CS_SOLVER_OK);
            if (il) {
                to_il(nsys, pb, A, gA), to_il(nsys, pb, B, gB), to_il(nsys, pb, C, gC);
                to_il(nsys, pv, d, gd);
            } else {
                memcpy(gA, A, nblk * sizeof *A), memcpy(gB, B, nblk * sizeof *B);
                memcpy(gC, C, nblk * sizeof *C), memcpy(gd, d, nvec * sizeof *d);
            }
            GPU_OK(cs_block_thomas_gpu_solve_d(v, k, nsys, nb, gA, gB, gC, gd, CS_THOMAS_GPU_HOST_PTRS));
            if (il) {
                from_il(nsys, pv, gd, d), from_il(nsys, pb, gC, C);
            } else {
                memcpy(d, gd, nvec * sizeof *d), memcpy(C, gC, nblk * sizeof *C);
            }
            const double e = td_rel_err(nvec, d, ref);
            ck_assert_msg(e <= TOL, "%s k=%d nsys=%d nb=%d: rel err %.3e > %.0e",
                          cs_block_gpu_variant_name(v), k, nsys, nb, e, TOL);
            /* C' of every block row but the last of each system */
            for (int s = 0; s < nsys; ++s)
                ck_assert(td_rel_err((size_t)(nb - 1) * k * k, C + s * pb, Cc + s * pb) <= TOL);
            if (e > worst) worst = e;
            free(A), free(B), free(C), free(d), free(ref), free(Cc), free(dc);
            free(gA), free(gB), free(gC), free(gd);
        }
    printf("  block %s (host ptrs): worst rel err vs %s %.2e (tol %.0e)\n",
           cs_block_gpu_variant_name(v), k_ref_name, worst, TOL);
}
END_TEST

/* Device pointers, interleaved, the layout converted on the device. */
START_TEST(test_device)
{
    const int k = 3, nsys = 777, nb = 40;
    const size_t pb = (size_t)nb * k * k, pv = (size_t)nb * k, nblk = nsys * pb, nvec = nsys * pv;
    double *h[4] = {td_alloc(nblk), td_alloc(nblk), td_alloc(nblk), td_alloc(nvec)}, *ref = td_alloc(nvec);
    blk_gen(k, nsys, nb, h[0], h[1], h[2], h[3]);
    reference(k, nsys, nb, h[0], h[1], h[2], h[3], ref);
    double *flat[4], *il[4];
    for (int j = 0; j < 4; ++j) {
        const size_t n = j < 3 ? nblk : nvec;
        GPU_OK(cs_thomas_gpu_malloc((void **)&flat[j], n * sizeof(double)));
        GPU_OK(cs_thomas_gpu_malloc((void **)&il[j], n * sizeof(double)));
        GPU_OK(cs_thomas_gpu_to_device(flat[j], h[j], n * sizeof(double)));
        GPU_OK(cs_thomas_gpu_flat_to_interleaved_d(nsys, (int)(j < 3 ? pb : pv), flat[j], il[j]));
    }
    GPU_OK(cs_block_thomas_gpu_solve_d(CS_BLOCK_GPU_INTERLEAVED, k, nsys, nb, il[0], il[1], il[2],
                                       il[3], CS_THOMAS_GPU_DEVICE_PTRS));
    GPU_OK(cs_thomas_gpu_interleaved_to_flat_d(nsys, (int)pv, il[3], flat[3]));
    GPU_OK(cs_thomas_gpu_synchronize());
    GPU_OK(cs_thomas_gpu_to_host(h[3], flat[3], nvec * sizeof(double)));
    const double e = td_rel_err(nvec, h[3], ref);
    ck_assert_msg(e <= TOL, "device ptrs: rel err %.3e", e);
    for (int j = 0; j < 4; ++j) {
        GPU_OK(cs_thomas_gpu_free(flat[j]));
        GPU_OK(cs_thomas_gpu_free(il[j]));
    }
    ck_assert_int_eq(cs_block_thomas_gpu_solve_d(CS_BLOCK_GPU_FLAT, 5, 1, 1, h[0], h[1], h[2], h[3],
                                                 CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_block_thomas_gpu_solve_d(CS_BLOCK_GPU_NVARIANTS, 2, 1, 1, h[0], h[1], h[2],
                                                 h[3], CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);
    ck_assert_str_eq(cs_block_gpu_variant_name(CS_BLOCK_GPU_INTERLEAVED), "interleaved");
    ck_assert_ptr_null(cs_block_gpu_variant_name(CS_BLOCK_GPU_NVARIANTS));
    for (int j = 0; j < 4; ++j) free(h[j]);
    free(ref);
    printf("  block interleaved (device ptrs, device transposes): rel err %.2e\n", e);
}
END_TEST

/* Near-singular systems (weakly dominant, margin 1e-8) against the reference at 1e-7 (as on the
 * CPU), and a zero block row: CS_SOLVER_ERR_SINGULAR through host pointers, NaN through device
 * pointers (never a finite wrong answer). Both variants. */
START_TEST(test_near_singular_and_singular)
{
    const int k = 3, nsys = 50, nb = 200;
    const size_t pb = (size_t)nb * k * k, pv = (size_t)nb * k, nblk = nsys * pb, nvec = nsys * pv;
    double *A = td_alloc(nblk), *B = td_alloc(nblk), *C = td_alloc(nblk), *d = td_alloc(nvec);
    double *gA = td_alloc(nblk), *gB = td_alloc(nblk), *gC = td_alloc(nblk), *gd = td_alloc(nvec),
           *ref = td_alloc(nvec), *x = td_alloc(nvec);
    for (int v = 0; v < CS_BLOCK_GPU_NVARIANTS; ++v) {
        const int il = (v == CS_BLOCK_GPU_INTERLEAVED);
        blk_gen_near(k, nsys, nb, 1e-8, A, B, C, d);
        reference(k, nsys, nb, A, B, C, d, ref);
        for (int pass = 0; pass < 2; ++pass) { /* pass 1: block row 77 of system 9 zeroed */
            if (pass)
                for (size_t e = 0; e < (size_t)k * k; ++e) {
                    const size_t o = 9 * pb + 77 * (size_t)k * k + e;
                    A[o] = B[o] = C[o] = 0.0;
                }
            if (il) {
                to_il(nsys, pb, A, gA), to_il(nsys, pb, B, gB), to_il(nsys, pb, C, gC), to_il(nsys, pv, d, gd);
            } else {
                memcpy(gA, A, nblk * sizeof *A), memcpy(gB, B, nblk * sizeof *B);
                memcpy(gC, C, nblk * sizeof *C), memcpy(gd, d, nvec * sizeof *d);
            }
            const cs_solver_status st = cs_block_thomas_gpu_solve_d((cs_block_gpu_variant)v, k, nsys, nb, gA, gB,
                                                                    gC, gd, CS_THOMAS_GPU_HOST_PTRS);
            if (il) from_il(nsys, pv, gd, x);
            else memcpy(x, gd, nvec * sizeof *x);
            if (!pass) {
                GPU_OK(st);
                const double e = td_rel_err(nvec, x, ref);
                ck_assert_msg(e <= 1e-7, "%s near-singular: rel err %.3e", cs_block_gpu_variant_name(v), e);
                printf("  block %s near-singular (margin 1e-8): rel err vs %s %.2e (tol 1e-7)\n",
                       cs_block_gpu_variant_name(v), k_ref_name, e);
            } else {
                ck_assert_int_eq(st, CS_SOLVER_ERR_SINGULAR);
                ck_assert(isnan(x[9 * pv]) && isnan(x[9 * pv + pv - 1])); /* the singular system */
                ck_assert(isfinite(x[8 * pv]) && isfinite(x[10 * pv]));  /* its neighbours solved */
            }
        }
    }
    free(A), free(B), free(C), free(d), free(gA), free(gB), free(gC), free(gd), free(ref), free(x);
}
END_TEST

/* The chunked hybrid for one large block system (cs_block_thomas_gpu_chunked_d) against the CPU
 * chunked hybrid (cs_block_thomas_solve_chunked_omp, the same levels and arithmetic; itself
 * checked against dgbsv in test_block_tridiag_cpu) at TOL: k = 1..4, one system of 1, 64, 65,
 * 1000 and 5003 block rows, 3 systems of 777, one of 200003 for k = 2; host pointers, and
 * device pointers once; a singular pivot block gives CS_SOLVER_ERR_SINGULAR. CS_TEST_SMALL=1:
 * up to 5003 rows (for compute-sanitizer). */
START_TEST(test_chunked)
{
    static const int shapes[][2] = {{1, 1}, {1, 64}, {1, 65}, {1, 1000}, {1, 5003}, {3, 777}, {1, 200003}};
    const char *sm = getenv("CS_TEST_SMALL");
    const int small = sm && sm[0] && sm[0] != '0';
    double worst[5] = {0};
    for (int k = 1; k <= 4; ++k)
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i) {
            const int nsys = shapes[i][0], nb = shapes[i][1];
            if (nb > 10000 && (k != 2 || small)) continue;
            blk_case c;
            ck_assert_int_eq(blk_case_make(k, nsys, nb, &c), CS_SOLVER_OK);
            const size_t nblk = c.nblk, nvec = c.nvec;
            double *A = c.A, *B = c.B, *C = c.C, *d = c.d, *d2 = c.ref;
            if (k == 3 && nb == 1000) { /* device pointers */
                double *dev[4];
                const size_t sz[4] = {nblk, nblk, nblk, nvec};
                double *h[4] = {A, B, C, d};
                for (int j = 0; j < 4; ++j) {
                    GPU_OK(cs_thomas_gpu_malloc((void **)&dev[j], sz[j] * sizeof(double)));
                    GPU_OK(cs_thomas_gpu_to_device(dev[j], h[j], sz[j] * sizeof(double)));
                }
                GPU_OK(cs_block_thomas_gpu_chunked_d(k, nsys, nb, dev[0], dev[1], dev[2], dev[3],
                                                     CS_THOMAS_GPU_DEVICE_PTRS));
                GPU_OK(cs_thomas_gpu_to_host(d, dev[3], nvec * sizeof(double)));
                for (int j = 0; j < 4; ++j) GPU_OK(cs_thomas_gpu_free(dev[j]));
            } else {
                GPU_OK(cs_block_thomas_gpu_chunked_d(k, nsys, nb, A, B, C, d, CS_THOMAS_GPU_HOST_PTRS));
            }
            const double e = td_rel_err(nvec, d, d2);
            ck_assert_msg(e <= TOL, "block chunked k=%d nsys=%d nb=%d: rel err %.3e vs the CPU", k, nsys, nb, e);
            if (e > worst[k]) worst[k] = e;
            blk_case_free(&c);
        }
    {
        const int k = 2, nb = 3000;
        const size_t nblk = (size_t)nb * k * k, nvec = (size_t)nb * k;
        double *A = td_alloc(nblk), *B = td_alloc(nblk), *C = td_alloc(nblk), *d = td_alloc(nvec);
        blk_gen(k, 1, nb, A, B, C, d);
        memset(A + 1234 * k * k, 0, k * k * sizeof *A), memset(B + 1234 * k * k, 0, k * k * sizeof *B);
        memset(C + 1234 * k * k, 0, k * k * sizeof *C);
        ck_assert_int_eq(cs_block_thomas_gpu_chunked_d(k, 1, nb, A, B, C, d, CS_THOMAS_GPU_HOST_PTRS),
                         CS_SOLVER_ERR_SINGULAR);
        ck_assert_int_eq(cs_block_thomas_gpu_chunked_d(0, 1, nb, A, B, C, d, CS_THOMAS_GPU_HOST_PTRS),
                         CS_SOLVER_ERR_INVALID);
        free(A), free(B), free(C), free(d);
    }
    printf("block chunked (GPU) vs the CPU chunked hybrid: worst rel err k=1 %.2e, k=2 %.2e, k=3 %.2e, "
           "k=4 %.2e (tol %.0e)\n", worst[1], worst[2], worst[3], worst[4], TOL);
}
END_TEST

/* The caller-workspace call (cs_block_thomas_gpu_chunked_ws_d: device pointers, a stream, the
 * staged kernels) against the CPU chunked hybrid at TOL: k = 1..4; one system of 64 (the base
 * only), 65, 527 and 528 (the reduced level 64 and 66 rows: one level or two; 32 and 33 chunks:
 * one substitution warp or two), 559 (the last chunk 31 rows long), 5003; 3 systems of 777, 40
 * of 130 and 64 of 17 (chunks across system cuts, and holding whole systems); 200003 rows for
 * k = 2 (4 levels; not with CS_TEST_SMALL). Both kernel sets: staged, and
 * CS_BLOCK_CHUNKED_STAGED=0 (session 17's). A workspace one byte short, misaligned or NULL:
 * CS_SOLVER_ERR_INVALID; a singular pivot block: the call succeeds and d is all NaN (the
 * caller-workspace call reports nothing), the allocating call gives CS_SOLVER_ERR_SINGULAR. */
START_TEST(test_chunked_ws)
{
    static const int shapes[][2] = {{1, 64}, {1, 65}, {1, 527}, {1, 528}, {1, 559}, {1, 5003},
                                    {3, 777}, {40, 130}, {64, 17}, {1, 200003}};
    const char *sm = getenv("CS_TEST_SMALL");
    const int small = sm && sm[0] && sm[0] != '0';
    void *stream = NULL;
    GPU_OK(cs_thomas_gpu_stream_create(&stream));
    double worst[2][5] = {{0}};
    for (int staged = 1; staged >= 0; --staged) {
        setenv("CS_BLOCK_CHUNKED_STAGED", staged ? "1" : "0", 1);
        for (int k = 1; k <= 4; ++k)
            for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i) {
                const int nsys = shapes[i][0], nb = shapes[i][1];
                if (nb > 10000 && (k != 2 || small || !staged)) continue;
                blk_case c;
                ck_assert_int_eq(blk_case_make(k, nsys, nb, &c), CS_SOLVER_OK);
                const size_t nblk = c.nblk, nvec = c.nvec;
                double *h[4] = {c.A, c.B, c.C, c.d}, *d2 = c.ref, *x = td_alloc(nvec);
                double *dev[4];
                const size_t sz[4] = {nblk, nblk, nblk, nvec};
                for (int j = 0; j < 4; ++j) {
                    GPU_OK(cs_thomas_gpu_malloc((void **)&dev[j], sz[j] * sizeof(double)));
                    GPU_OK(cs_thomas_gpu_to_device(dev[j], h[j], sz[j] * sizeof(double)));
                }
                const size_t wb = cs_block_thomas_gpu_chunked_workspace(k, nsys, nb);
                ck_assert(wb >= 16);
                void *work = NULL;
                GPU_OK(cs_thomas_gpu_malloc(&work, wb));
                GPU_OK(cs_block_thomas_gpu_chunked_ws_d(k, nsys, nb, dev[0], dev[1], dev[2], dev[3], work, wb, stream));
                GPU_OK(cs_thomas_gpu_stream_synchronize(stream));
                GPU_OK(cs_thomas_gpu_to_host(x, dev[3], nvec * sizeof(double)));
                const double e = td_rel_err(nvec, x, d2);
                ck_assert_msg(e <= TOL, "block chunked_ws (%s kernels) k=%d nsys=%d nb=%d: rel err %.3e vs the CPU",
                              staged ? "staged" : "per-thread", k, nsys, nb, e);
                if (e > worst[staged][k]) worst[staged][k] = e;
                if (staged && k == 3 && nb == 527) { /* argument checks, once */
                    ck_assert_int_eq(cs_block_thomas_gpu_chunked_ws_d(k, nsys, nb, dev[0], dev[1], dev[2], dev[3],
                                                                      work, wb - 1, stream), CS_SOLVER_ERR_INVALID);
                    ck_assert_int_eq(cs_block_thomas_gpu_chunked_ws_d(k, nsys, nb, dev[0], dev[1], dev[2], dev[3],
                                                                      (char *)work + 8, wb - 8, stream),
                                     CS_SOLVER_ERR_INVALID);
                    ck_assert_int_eq(cs_block_thomas_gpu_chunked_ws_d(k, nsys, nb, dev[0], dev[1], dev[2], dev[3],
                                                                      NULL, wb, stream), CS_SOLVER_ERR_INVALID);
                    ck_assert_int_eq(cs_block_thomas_gpu_chunked_ws_d(5, nsys, nb, dev[0], dev[1], dev[2], dev[3],
                                                                      work, wb, stream), CS_SOLVER_ERR_INVALID);
                    ck_assert_int_eq(cs_block_thomas_gpu_chunked_ws_d(k, 0, nb, NULL, NULL, NULL, NULL, NULL, 0, stream),
                                     CS_SOLVER_OK);
                    ck_assert_uint_eq(cs_block_thomas_gpu_chunked_workspace(5, nsys, nb), 0);
                    ck_assert_uint_eq(cs_block_thomas_gpu_chunked_workspace(k, 0, nb), 0);
                }
                GPU_OK(cs_thomas_gpu_free(work));
                for (int j = 0; j < 4; ++j) GPU_OK(cs_thomas_gpu_free(dev[j]));
                blk_case_free(&c);
                free(x);
            }
    }
    unsetenv("CS_BLOCK_CHUNKED_STAGED");
    { /* a singular pivot block through the caller-workspace call: d all NaN, no error */
        const int k = 4, nb = 3000;
        const size_t nblk = (size_t)nb * k * k, nvec = (size_t)nb * k;
        double *h[4] = {td_alloc(nblk), td_alloc(nblk), td_alloc(nblk), td_alloc(nvec)}, *dev[4];
        blk_gen(k, 1, nb, h[0], h[1], h[2], h[3]);
        for (int j = 0; j < 3; ++j) memset(h[j] + 1234 * k * k, 0, k * k * sizeof(double));
        for (int j = 0; j < 4; ++j) {
            const size_t n = j < 3 ? nblk : nvec;
            GPU_OK(cs_thomas_gpu_malloc((void **)&dev[j], n * sizeof(double)));
            GPU_OK(cs_thomas_gpu_to_device(dev[j], h[j], n * sizeof(double)));
        }
        const size_t wb = cs_block_thomas_gpu_chunked_workspace(k, 1, nb);
        void *work = NULL;
        GPU_OK(cs_thomas_gpu_malloc(&work, wb));
        GPU_OK(cs_block_thomas_gpu_chunked_ws_d(k, 1, nb, dev[0], dev[1], dev[2], dev[3], work, wb, stream));
        GPU_OK(cs_thomas_gpu_stream_synchronize(stream));
        GPU_OK(cs_thomas_gpu_to_host(h[3], dev[3], nvec * sizeof(double)));
        for (size_t j = 0; j < nvec; ++j) ck_assert_msg(isnan(h[3][j]), "singular: d[%zu] = %g, not NaN", j, h[3][j]);
        /* the same solve with device pointers through the allocating call reports it */
        GPU_OK(cs_thomas_gpu_to_device(dev[3], h[3], nvec * sizeof(double)));
        ck_assert_int_eq(cs_block_thomas_gpu_chunked_d(k, 1, nb, dev[0], dev[1], dev[2], dev[3],
                                                       CS_THOMAS_GPU_DEVICE_PTRS), CS_SOLVER_ERR_SINGULAR);
        GPU_OK(cs_thomas_gpu_free(work));
        for (int j = 0; j < 4; ++j) {
            GPU_OK(cs_thomas_gpu_free(dev[j]));
            free(h[j]);
        }
    }
    GPU_OK(cs_thomas_gpu_stream_destroy(stream));
    printf("block chunked_ws (GPU, caller workspace, stream) vs the CPU chunked hybrid: worst rel err "
           "staged k=1 %.2e, k=2 %.2e, k=3 %.2e, k=4 %.2e; per-thread k=1 %.2e, k=2 %.2e, k=3 %.2e, k=4 %.2e (tol %.0e)\n",
           worst[1][1], worst[1][2], worst[1][3], worst[1][4], worst[0][1], worst[0][2], worst[0][3], worst[0][4], TOL);
}
END_TEST

int main(void)
{
    const int skip = gpu_exit_code();
    if (skip >= 0) return skip;
    Suite *s = suite_create("block_tridiag_gpu");
    TCase *tc = tcase_create("block");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_host, 0, CS_BLOCK_GPU_NVARIANTS);
    tcase_add_test(tc, test_device);
    tcase_add_test(tc, test_near_singular_and_singular);
    tcase_add_test(tc, test_chunked);
    tcase_add_test(tc, test_chunked_ws);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
