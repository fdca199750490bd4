/* The bridge across devices (cs_thomas_gpu_bridge_multi_d) emulated on the CPU: its plan
 * (solver/cs_thomas_bridge_plan.h: levels, tails, the top's row order, the workspace) with the
 * GPU kernels' arithmetic written out in C (the chunk reduce and substitute of
 * cs_thomas_large_gpu.cu with n = 0, the top's elimination of cs_thomas_bridge_kernels.cuh by
 * Thomas instead of PCR, the gathered bridge rows' layout), against the serial Thomas reference
 * on random diagonally dominant systems (tests/test_tridiag.h): max|x - x_ref| / max|x_ref| <=
 * 1e-12 for 1..8 partitions of uneven sizes (2 rows, chunk and top edges 15/16/17, 1023..1025,
 * up to 2^20); near-singular margins down to 1e-8 at 1e-9. Checks the plan too: at most 1024
 * rows on top, every row of the partition accounted for once. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cs_solver.h"
#include "cs_thomas_bridge_plan.h"
#include "test_run.h"
#include "test_tridiag.h"

#define K CS__BRIDGE_K
#define TOP CS__BRIDGE_TOP

/* cs__chunk_reduce_kernel on the whole chunks [0, body) of a level. */
static void emu_reduce(size_t body, const double *a, const double *b, const double *c,
                       const double *d, double *ra, double *rb, double *rc, double *rd)
{
    for (size_t q = 0; q < body / K; ++q) {
        const double *A = a + q * K, *B = b + q * K, *C = c + q * K, *D = d + q * K;
        double al = -1, ga = 0, de = 0;
        for (int j = 1; j < K; ++j) {
            const double inv = 1.0 / (B[j] - A[j] * ga);
            al = -A[j] * al * inv, ga = C[j] * inv, de = (D[j] - A[j] * de) * inv;
        }
        double ph = 0, ps = -1, dd = 0;
        for (int j = K - 2; j >= 0; --j) {
            const double inv = 1.0 / (B[j] - C[j] * ph);
            ph = A[j] * inv, ps = -C[j] * ps * inv, dd = (D[j] - C[j] * dd) * inv;
        }
        ra[2 * q] = ph, rb[2 * q] = 1, rc[2 * q] = ps, rd[2 * q] = dd;
        ra[2 * q + 1] = al, rb[2 * q + 1] = 1, rc[2 * q + 1] = ga, rd[2 * q + 1] = de;
    }
}

/* cs__chunk_subst_kernel: rows [0, body) of d from the reduced solution x. */
static void emu_subst(size_t body, const double *a, const double *b, const double *c, double *d,
                      const double *x)
{
    for (size_t q = 0; q < body / K; ++q) {
        const double *A = a + q * K, *B = b + q * K, *C = c + q * K;
        double *D = d + q * K, cp[K], dp[K];
        const double F = x[2 * q], L = x[2 * q + 1];
        cp[1] = C[1] / B[1], dp[1] = (D[1] - A[1] * F) / B[1];
        for (int j = 2; j < K - 1; ++j) {
            const double inv = 1.0 / (B[j] - A[j] * cp[j - 1]);
            cp[j] = C[j] * inv;
            dp[j] = ((j == K - 2 ? D[j] - C[j] * L : D[j]) - A[j] * dp[j - 1]) * inv;
        }
        D[K - 2] = dp[K - 2];
        for (int j = K - 3; j >= 1; --j) D[j] = dp[j] - cp[j] * D[j + 1];
        D[0] = F, D[K - 1] = L;
    }
}

/* end_reduce_kernel's result: the top's interior (rows 1..m-2) solved for three right-hand
 * sides (d; a_1 in row 1; c_{m-2} in row m-2) into y, v, w; the two bridge rows into g[0..7]
 * (a0 a1 b0 b1 c0 c1 d0 d1, the layout cudaMemcpyPeerAsync gathers). */
static void emu_top_reduce(int m, const double *ta, double *y, double *v, double *w, double *g)
{
    const double *a = ta, *b = ta + TOP, *c = ta + 2 * TOP, *d = ta + 3 * TOP;
    double cp[TOP];
    for (int i = 1; i <= m - 2; ++i) {
        const double al = i > 1 ? a[i] : 0.0, piv = b[i] - al * (i > 1 ? cp[i - 1] : 0.0);
        cp[i] = (i < m - 2 ? c[i] : 0.0) / piv;
        const double py = i > 1 ? y[i - 1] : 0, pv = i > 1 ? v[i - 1] : 0, pw = i > 1 ? w[i - 1] : 0;
        y[i] = (d[i] - al * py) / piv;
        v[i] = ((i == 1 ? a[1] : 0.0) - al * pv) / piv;
        w[i] = ((i == m - 2 ? c[m - 2] : 0.0) - al * pw) / piv;
    }
    for (int i = m - 3; i >= 1; --i)
        y[i] -= cp[i] * y[i + 1], v[i] -= cp[i] * v[i + 1], w[i] -= cp[i] * w[i + 1];
    const double y1 = m > 2 ? y[1] : 0, v1 = m > 2 ? v[1] : 0, w1 = m > 2 ? w[1] : -1;
    const double ym2 = m > 2 ? y[m - 2] : 0, vm2 = m > 2 ? v[m - 2] : -1, wm2 = m > 2 ? w[m - 2] : 0;
    const double pf = b[0] - c[0] * v1, pl = b[m - 1] - a[m - 1] * wm2;
    g[0] = a[0] / pf, g[2] = 1, g[4] = -c[0] * w1 / pf, g[6] = (d[0] - c[0] * y1) / pf;
    g[1] = -a[m - 1] * vm2 / pl, g[3] = 1, g[5] = c[m - 1] / pl;
    g[7] = (d[m - 1] - a[m - 1] * ym2) / pl;
}

/* Solve the system (a, b, c, d: N = Σ rows rows) split into D partitions as the GPU does; d gets
 * the solution. */
static void emu_bridge(int D, const int *rows, const double *a, const double *b, const double *c,
                       double *d)
{
    cs__bridge_plan P[8];
    double *W[8], *lv[8][CS__BRIDGE_MAXL + 1][4], g[64], x[16];
    size_t r0 = 0;
    for (int p = 0; p < D; ++p) {
        ck_assert(cs__bridge_plan_make((size_t)rows[p], D, &P[p]));
        const cs__bridge_plan *Q = &P[p];
        ck_assert_int_le((int)Q->top, TOP);
        size_t sum = Q->m[Q->L];
        for (int l = 0; l < Q->L; ++l) {
            ck_assert_int_eq((int)(Q->body[l] % K), 0);
            ck_assert_int_lt((int)(Q->m[l] - Q->body[l]), K);
            sum += Q->m[l] - Q->body[l];
        }
        ck_assert_int_eq((int)sum, (int)Q->top);
        W[p] = td_alloc(Q->total);
        lv[p][0][0] = (double *)a + r0, lv[p][0][1] = (double *)b + r0;
        lv[p][0][2] = (double *)c + r0, lv[p][0][3] = d + r0;
        for (int l = 1; l <= Q->L; ++l)
            for (int j = 0; j < 4; ++j) lv[p][l][j] = W[p] + Q->lev[l] + j * cs__bridge_r32(Q->m[l]);
        for (int l = 0; l < Q->L; ++l)
            emu_reduce(Q->body[l], lv[p][l][0], lv[p][l][1], lv[p][l][2], lv[p][l][3], lv[p][l + 1][0],
                       lv[p][l + 1][1], lv[p][l + 1][2], lv[p][l + 1][3]);
        double *ta = W[p] + Q->ta;
        for (size_t i = 0; i < Q->top; ++i) {
            int l;
            size_t r;
            cs__bridge_top_row(Q, i, &l, &r);
            ck_assert(l >= 0 && r < Q->m[l]);
            for (int j = 0; j < 4; ++j) ta[j * TOP + i] = lv[p][l][j][r];
        }
        emu_top_reduce((int)Q->top, ta, W[p] + Q->y, W[p] + Q->v, W[p] + Q->w, g + 8 * p);
        r0 += (size_t)rows[p];
    }
    /* the bridge from the gathered rows (bridge_gathered_kernel's indexing) */
    const int R = 2 * D;
    double br[4][16] = {{0}};
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < 4; ++j) br[j][i] = g[(i >> 1) * 8 + 2 * j + (i & 1)];
    memcpy(x, br[3], R * sizeof *x);
    ck_assert_int_eq(cs_thomas_solve_serial(1, R, br[0], br[1], br[2], x), CS_SOLVER_OK);
    for (int p = 0; p < D; ++p) {
        const cs__bridge_plan *Q = &P[p];
        double *td = W[p] + Q->ta + 3 * TOP;
        const double F = x[2 * p], L = x[2 * p + 1];
        for (size_t i = 0; i < Q->top; ++i) {
            td[i] = i == 0 ? F : i == Q->top - 1 ? L : W[p][Q->y + i] - W[p][Q->v + i] * F - W[p][Q->w + i] * L;
            int l;
            size_t r;
            cs__bridge_top_row(Q, i, &l, &r);
            lv[p][l][3][r] = td[i];
        }
        for (int l = Q->L - 1; l >= 0; --l)
            emu_subst(Q->body[l], lv[p][l][0], lv[p][l][1], lv[p][l][2], lv[p][l][3], lv[p][l + 1][3]);
        free(W[p]);
    }
}

static double run(int D, const int *rows, double margin)
{
    size_t N = 0;
    for (int p = 0; p < D; ++p) N += (size_t)rows[p];
    double *a = td_alloc(N), *b = td_alloc(N), *c = td_alloc(N), *d = td_alloc(N), *ref = td_alloc(N);
    if (margin > 0) td_gen_weak(1, (int)N, margin, a, b, c, d);
    else td_gen(1, (int)N, a, b, c, d);
    td_reference(1, (int)N, a, b, c, d, ref);
    emu_bridge(D, rows, a, b, c, d);
    const double e = td_rel_err(N, d, ref);
    free(a), free(b), free(c), free(d), free(ref);
    return e;
}

static const int k_cases[][9] = { /* D, then the rows */
    {1, 2}, {1, 1024}, {1, 1025}, {1, 100003}, {2, 2, 2}, {2, 15, 17}, {2, 1 << 20, 12345},
    {3, 3, 5, 2}, {3, 1023, 1025, 16}, {3, 16 * 1024 + 15, 16 * 1024 + 16, 16 * 1024 + 17},
    {4, 17, 1023, 1025, 16}, {4, 100003, 65536, 4097, 2}, {4, 262144, 262144, 262144, 262144},
    {8, 2, 3, 16, 17, 1024, 1025, 20000, 77777}};

START_TEST(test_emulated)
{
    double worst = 0.0;
    for (size_t k = 0; k < sizeof k_cases / sizeof *k_cases; ++k) {
        const int D = k_cases[k][0];
        const double e = run(D, k_cases[k] + 1, -1.0);
        ck_assert_msg(e <= 1e-12, "case %zu (D=%d): rel err %.3e", k, D, e);
        if (e > worst) worst = e;
    }
    printf("  bridge across devices, emulated: %zu splits (D = 1..8), worst rel err %.2e (tol 1e-12)\n",
           sizeof k_cases / sizeof *k_cases, worst);
}
END_TEST

START_TEST(test_near_singular)
{
    static const int rows[] = {33333, 1025, 40000, 25642};
    double worst = 0.0;
    for (double margin = 1e-2; margin >= 1e-8; margin *= 1e-3) {
        const double e = run(4, rows, margin);
        ck_assert_msg(e <= 1e-9, "margin %.0e: rel err %.3e", margin, e);
        if (e > worst) worst = e;
    }
    printf("  bridge across devices, emulated, near-singular (margins 1e-2..1e-8): worst rel err %.2e "
           "(tol 1e-9)\n", worst);
}
END_TEST

START_TEST(test_plan_limits)
{
    cs__bridge_plan P;
    ck_assert(!cs__bridge_plan_make(1, 2, &P));
    ck_assert(!cs__bridge_plan_make(100, 0, &P));
    ck_assert(!cs__bridge_plan_make(100, 65, &P));
    ck_assert(cs__bridge_plan_make((size_t)1 << 31, 64, &P));
    ck_assert_int_le((int)P.top, TOP);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("thomas_bridge_multi_cpu");
    TCase *tc = tcase_create("emulated");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_emulated);
    tcase_add_test(tc, test_near_singular);
    tcase_add_test(tc, test_plan_limits);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
