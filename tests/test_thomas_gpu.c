/* GPU batched Thomas solvers (solver/cs_thomas_gpu.h) against the CPU serial reference.
 *
 * Every variant, in double and in float, on random diagonally dominant systems (off-diagonals in
 * [-1, 1], |b| = |a| + |c| + [0.5, 1.5) with a random sign), through host and device pointers,
 * compared with cs_thomas_solve_serial in double (float results against the double solve of
 * the float-rounded inputs), by max|x - x_ref| / max|x_ref|: <= 1e-12 in double, 1e-5 in float.
 * a[0] and c[n-1] of every system hold 7 and -7: a variant that read them would fail.
 *
 * Exit 77 (skipped) when CUDA is not compiled in or no device is present.
 * CS_TEST_SMALL=1 runs fewer and smaller shapes (for compute-sanitizer). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_solver.h"
#include "cs_thomas_gpu.h"

#define TOL_D 1e-12
#define TOL_F 1e-5

static int g_small;

/* ---- data --------------------------------------------------------------------------------- */
#include "test_rng.h"

/* nsys systems with sizes len[s] packed one after the other (Flat). */
static void gen_systems(int nsys, const int *len, double *a, double *b, double *c, double *d)
{
    size_t o = 0;
    for (int s = 0; s < nsys; ++s) {
        for (int i = 0; i < len[s]; ++i) {
            const size_t k = o + (size_t)i;
            a[k] = 2.0 * urand() - 1.0;
            c[k] = 2.0 * urand() - 1.0;
            const double m = fabs(i > 0 ? a[k] : 0.0) + fabs(i < len[s] - 1 ? c[k] : 0.0);
            b[k] = (m + 0.5 + urand()) * (urand() < 0.5 ? -1.0 : 1.0);
            d[k] = 2.0 * urand() - 1.0;
        }
        if (len[s] > 0) {
            a[o] = 7.0;                /* never read */
            c[o + len[s] - 1] = -7.0; /* never read */
        }
        o += (size_t)len[s];
    }
}

static double *dalloc(size_t n)
{
    double *p = malloc((n ? n : 1) * sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}
static float *falloc(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}
static void to_float(size_t n, const double *x, float *y)
{
    for (size_t i = 0; i < n; ++i) y[i] = (float)x[i];
}
static void round_float(size_t n, double *x)
{
    for (size_t i = 0; i < n; ++i) x[i] = (double)(float)x[i];
}

/* Serial reference for a packed batch with sizes len[]: x = solution (d is not touched). */
static void reference(int nsys, const int *len, const double *a, const double *b, const double *c,
                      const double *d, double *x)
{
    size_t tot = 0;
    for (int s = 0; s < nsys; ++s) tot += (size_t)len[s];
    double *bb = dalloc(tot), *cc = dalloc(tot);
    memcpy(bb, b, tot * sizeof *bb);
    memcpy(cc, c, tot * sizeof *cc);
    memcpy(x, d, tot * sizeof *x);
    size_t o = 0;
    int s = 0;
    while (s < nsys) {
        /* runs of equal sizes in one call */
        int e = s;
        while (e < nsys && len[e] == len[s]) ++e;
        if (len[s] > 0) {
            ck_assert_int_eq(cs_thomas_solve_serial(e - s, len[s], a + o, bb + o, cc + o, x + o),
                             CS_SOLVER_OK);
        }
        o += (size_t)(e - s) * (size_t)len[s];
        s = e;
    }
    free(bb);
    free(cc);
}

static double rel_err_d(size_t n, const double *x, const double *ref)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double e = fabs(x[i] - ref[i]);
        if (!(e <= num)) num = isnan(e) ? INFINITY : e; /* NaN never passes */
        if (fabs(ref[i]) > den) den = fabs(ref[i]);
    }
    return den > 0.0 ? num / den : num;
}
static double rel_err_f(size_t n, const float *x, const double *ref)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double e = fabs((double)x[i] - ref[i]);
        if (!(e <= num)) num = isnan(e) ? INFINITY : e;
        if (fabs(ref[i]) > den) den = fabs(ref[i]);
    }
    return den > 0.0 ? num / den : num;
}

/* Flat (nsys × n) <-> Full-Interleaved (n × nsys) on the host. */
static void h_to_interleaved_d(int nsys, int n, const double *f, double *il)
{
    for (int s = 0; s < nsys; ++s)
        for (int i = 0; i < n; ++i) il[(size_t)i * nsys + s] = f[(size_t)s * n + i];
}
static void h_to_flat_d(int nsys, int n, const double *il, double *f)
{
    for (int s = 0; s < nsys; ++s)
        for (int i = 0; i < n; ++i) f[(size_t)s * n + i] = il[(size_t)i * nsys + s];
}
static void h_to_interleaved_f(int nsys, int n, const float *f, float *il)
{
    for (int s = 0; s < nsys; ++s)
        for (int i = 0; i < n; ++i) il[(size_t)i * nsys + s] = f[(size_t)s * n + i];
}
static void h_to_flat_f(int nsys, int n, const float *il, float *f)
{
    for (int s = 0; s < nsys; ++s)
        for (int i = 0; i < n; ++i) f[(size_t)s * n + i] = il[(size_t)i * nsys + s];
}

/* ---- shapes --------------------------------------------------------------------------------- */
static const int k_n_full[] = {1, 2, 31, 32, 33, 64, 100, 200, 512, 1024, 1025, 1537, 2048};
/* On a 132-SM GPU the warp kernels give 4 lanes per system from nsys >= 4224 (n <= 64), 8 from
 * 2112 (n <= 128), 16 from 1056 (n <= 256), else 32; and 4-warp blocks from 2112 warps on. */
static const int k_nsys_full[] = {1, 37, 300, 2213, 4500};
static const int k_n_small[] = {1, 2, 33, 64, 100, 200, 512, 1024, 2048};
static const int k_nsys_small[] = {1, 37, 2213, 4500};

static const cs_thomas_gpu_variant k_uniform[] = {CS_THOMAS_GPU_AUTO, CS_THOMAS_GPU_FLAT,
                                                  CS_THOMAS_GPU_INTERLEAVED, CS_THOMAS_GPU_WARP,
                                                  CS_THOMAS_GPU_WARP_STAGED, CS_THOMAS_GPU_CHUNKED,
                                                  CS_THOMAS_GPU_SCAN};
#define N_UNIFORM ((int)(sizeof k_uniform / sizeof k_uniform[0]))

static void shapes(const int **ns, int *nn, const int **nsyss, int *nnsys)
{
    if (g_small) {
        *ns = k_n_small, *nn = (int)(sizeof k_n_small / sizeof(int));
        *nsyss = k_nsys_small, *nnsys = (int)(sizeof k_nsys_small / sizeof(int));
    } else {
        *ns = k_n_full, *nn = (int)(sizeof k_n_full / sizeof(int));
        *nsyss = k_nsys_full, *nnsys = (int)(sizeof k_nsys_full / sizeof(int));
    }
}

/* One uniform solve through host pointers, both precisions; returns the two errors. */
static void solve_uniform_host(cs_thomas_gpu_variant v, int nsys, int n, double *err_d,
                               double *err_f)
{
    const size_t tot = (size_t)nsys * n;
    int *len = malloc((size_t)nsys * sizeof *len);
    ck_assert_ptr_nonnull(len);
    for (int s = 0; s < nsys; ++s) len[s] = n;
    double *a = dalloc(tot), *b = dalloc(tot), *c = dalloc(tot), *d = dalloc(tot);
    double *ref = dalloc(tot), *x = dalloc(tot);
    gen_systems(nsys, len, a, b, c, d);
    const int il = cs_thomas_gpu_variant_layout(v) == CS_THOMAS_LAYOUT_INTERLEAVED;

    /* double */
    reference(nsys, len, a, b, c, d, ref);
    {
        double *ga = dalloc(tot), *gb = dalloc(tot), *gc = dalloc(tot), *gd = dalloc(tot);
        if (il) {
            h_to_interleaved_d(nsys, n, a, ga);
            h_to_interleaved_d(nsys, n, b, gb);
            h_to_interleaved_d(nsys, n, c, gc);
            h_to_interleaved_d(nsys, n, d, gd);
        } else {
            memcpy(ga, a, tot * sizeof *a);
            memcpy(gb, b, tot * sizeof *b);
            memcpy(gc, c, tot * sizeof *c);
            memcpy(gd, d, tot * sizeof *d);
        }
        const cs_solver_status st =
            cs_thomas_gpu_solve_d(v, nsys, n, ga, gb, gc, gd, CS_THOMAS_GPU_HOST_PTRS);
        ck_assert_msg(st == CS_SOLVER_OK, "%s double nsys=%d n=%d: status %d (%s)",
                      cs_thomas_gpu_variant_name(v), nsys, n, (int)st, cs_thomas_gpu_last_error());
        if (il)
            h_to_flat_d(nsys, n, gd, x);
        else
            memcpy(x, gd, tot * sizeof *x);
        *err_d = rel_err_d(tot, x, ref);
        free(ga), free(gb), free(gc), free(gd);
    }

    /* float: the reference is the double solve of the float-rounded inputs */
    round_float(tot, a), round_float(tot, b), round_float(tot, c), round_float(tot, d);
    reference(nsys, len, a, b, c, d, ref);
    {
        float *fa = falloc(tot), *fb = falloc(tot), *fc = falloc(tot), *fd = falloc(tot);
        float *ga = falloc(tot), *gb = falloc(tot), *gc = falloc(tot), *gd = falloc(tot);
        float *fx = falloc(tot);
        to_float(tot, a, fa), to_float(tot, b, fb), to_float(tot, c, fc), to_float(tot, d, fd);
        if (il) {
            h_to_interleaved_f(nsys, n, fa, ga);
            h_to_interleaved_f(nsys, n, fb, gb);
            h_to_interleaved_f(nsys, n, fc, gc);
            h_to_interleaved_f(nsys, n, fd, gd);
        } else {
            memcpy(ga, fa, tot * sizeof *fa);
            memcpy(gb, fb, tot * sizeof *fb);
            memcpy(gc, fc, tot * sizeof *fc);
            memcpy(gd, fd, tot * sizeof *fd);
        }
        const cs_solver_status st =
            cs_thomas_gpu_solve_f(v, nsys, n, ga, gb, gc, gd, CS_THOMAS_GPU_HOST_PTRS);
        ck_assert_msg(st == CS_SOLVER_OK, "%s float nsys=%d n=%d: status %d (%s)",
                      cs_thomas_gpu_variant_name(v), nsys, n, (int)st, cs_thomas_gpu_last_error());
        if (il)
            h_to_flat_f(nsys, n, gd, fx);
        else
            memcpy(fx, gd, tot * sizeof *fx);
        *err_f = rel_err_f(tot, fx, ref);
        free(fa), free(fb), free(fc), free(fd), free(ga), free(gb), free(gc), free(gd), free(fx);
    }
    free(a), free(b), free(c), free(d), free(ref), free(x), free(len);
}

/* Every uniform variant, every shape, both precisions, host pointers. */
START_TEST(test_uniform_host)
{
    const cs_thomas_gpu_variant v = k_uniform[_i];
    const int *ns, *nsyss;
    int nn, nnsys;
    shapes(&ns, &nn, &nsyss, &nnsys);
    double worst_d = 0.0, worst_f = 0.0;
    for (int in = 0; in < nn; ++in)
        for (int is = 0; is < nnsys; ++is) {
            if (g_small && (long long)nsyss[is] * ns[in] > 500000) continue; /* short sanitizer runs */
            double ed, ef;
            solve_uniform_host(v, nsyss[is], ns[in], &ed, &ef);
            ck_assert_msg(ed <= TOL_D, "%s double nsys=%d n=%d: rel err %.3e > %.0e",
                          cs_thomas_gpu_variant_name(v), nsyss[is], ns[in], ed, TOL_D);
            ck_assert_msg(ef <= TOL_F, "%s float nsys=%d n=%d: rel err %.3e > %.0e",
                          cs_thomas_gpu_variant_name(v), nsyss[is], ns[in], ef, TOL_F);
            if (ed > worst_d) worst_d = ed;
            if (ef > worst_f) worst_f = ef;
        }
    printf("  %-12s host ptrs:   worst rel err double %.2e, float %.2e\n",
           cs_thomas_gpu_variant_name(v), worst_d, worst_f);
}
END_TEST

#define GPU_OK(expr)                                                                     \
    do {                                                                                 \
        const cs_solver_status st_ = (expr);                                             \
        ck_assert_msg(st_ == CS_SOLVER_OK, "%s: status %d (%s)", #expr, (int)st_,        \
                      cs_thomas_gpu_last_error());                                       \
    } while (0)

/* Device pointers, with the device layout helpers for the interleaved variant; a and c must
 * come back unchanged. */
START_TEST(test_uniform_device)
{
    const cs_thomas_gpu_variant v = k_uniform[_i];
    const int il = cs_thomas_gpu_variant_layout(v) == CS_THOMAS_LAYOUT_INTERLEAVED;
    const int shp[][2] = {{37, 33}, {300, 512}, {2213, 64}, {5, 1024}, {4500, 64}, {2213, 200}};
    for (int k = 0; k < 6; ++k) {
        const int nsys = shp[k][0], n = shp[k][1];
        const size_t tot = (size_t)nsys * n;
        int *len = malloc((size_t)nsys * sizeof *len);
        ck_assert_ptr_nonnull(len);
        for (int s = 0; s < nsys; ++s) len[s] = n;
        double *a = dalloc(tot), *b = dalloc(tot), *c = dalloc(tot), *d = dalloc(tot);
        double *ref = dalloc(tot), *x = dalloc(tot), *chk = dalloc(tot);
        gen_systems(nsys, len, a, b, c, d);

        /* double */
        reference(nsys, len, a, b, c, d, ref);
        double *dev[4] = {NULL, NULL, NULL, NULL}, *tmp = NULL;
        const double *host[4] = {a, b, c, d};
        GPU_OK(cs_thomas_gpu_malloc((void **)&tmp, tot * sizeof(double)));
        for (int j = 0; j < 4; ++j) {
            GPU_OK(cs_thomas_gpu_malloc((void **)&dev[j], tot * sizeof(double)));
            if (il) {
                GPU_OK(cs_thomas_gpu_to_device(tmp, host[j], tot * sizeof(double)));
                GPU_OK(cs_thomas_gpu_flat_to_interleaved_d(nsys, n, tmp, dev[j]));
            } else {
                GPU_OK(cs_thomas_gpu_to_device(dev[j], host[j], tot * sizeof(double)));
            }
        }
        GPU_OK(cs_thomas_gpu_solve_d(v, nsys, n, dev[0], dev[1], dev[2], dev[3],
                                     CS_THOMAS_GPU_DEVICE_PTRS));
        GPU_OK(cs_thomas_gpu_synchronize());
        if (il) {
            GPU_OK(cs_thomas_gpu_interleaved_to_flat_d(nsys, n, dev[3], tmp));
            GPU_OK(cs_thomas_gpu_to_host(x, tmp, tot * sizeof(double)));
        } else {
            GPU_OK(cs_thomas_gpu_to_host(x, dev[3], tot * sizeof(double)));
        }
        const double ed = rel_err_d(tot, x, ref);
        ck_assert_msg(ed <= TOL_D, "%s double device nsys=%d n=%d: rel err %.3e",
                      cs_thomas_gpu_variant_name(v), nsys, n, ed);
        for (int j = 0; j < 4; j += 2) { /* a and c are read only */
            if (il) {
                GPU_OK(cs_thomas_gpu_interleaved_to_flat_d(nsys, n, dev[j], tmp));
                GPU_OK(cs_thomas_gpu_to_host(chk, tmp, tot * sizeof(double)));
            } else {
                GPU_OK(cs_thomas_gpu_to_host(chk, dev[j], tot * sizeof(double)));
            }
            ck_assert_msg(memcmp(chk, host[j], tot * sizeof(double)) == 0,
                          "%s: array %c changed", cs_thomas_gpu_variant_name(v), "abcd"[j]);
        }
        for (int j = 0; j < 4; ++j) GPU_OK(cs_thomas_gpu_free(dev[j]));
        GPU_OK(cs_thomas_gpu_free(tmp));

        /* float */
        round_float(tot, a), round_float(tot, b), round_float(tot, c), round_float(tot, d);
        reference(nsys, len, a, b, c, d, ref);
        float *fh[4], *fdev[4], *ftmp = NULL, *fx = falloc(tot);
        GPU_OK(cs_thomas_gpu_malloc((void **)&ftmp, tot * sizeof(float)));
        for (int j = 0; j < 4; ++j) {
            fh[j] = falloc(tot);
            to_float(tot, host[j], fh[j]);
            GPU_OK(cs_thomas_gpu_malloc((void **)&fdev[j], tot * sizeof(float)));
            if (il) {
                GPU_OK(cs_thomas_gpu_to_device(ftmp, fh[j], tot * sizeof(float)));
                GPU_OK(cs_thomas_gpu_flat_to_interleaved_f(nsys, n, ftmp, fdev[j]));
            } else {
                GPU_OK(cs_thomas_gpu_to_device(fdev[j], fh[j], tot * sizeof(float)));
            }
        }
        GPU_OK(cs_thomas_gpu_solve_f(v, nsys, n, fdev[0], fdev[1], fdev[2], fdev[3],
                                     CS_THOMAS_GPU_DEVICE_PTRS));
        if (il) {
            GPU_OK(cs_thomas_gpu_interleaved_to_flat_f(nsys, n, fdev[3], ftmp));
            GPU_OK(cs_thomas_gpu_to_host(fx, ftmp, tot * sizeof(float)));
        } else {
            GPU_OK(cs_thomas_gpu_to_host(fx, fdev[3], tot * sizeof(float)));
        }
        const double ef = rel_err_f(tot, fx, ref);
        ck_assert_msg(ef <= TOL_F, "%s float device nsys=%d n=%d: rel err %.3e",
                      cs_thomas_gpu_variant_name(v), nsys, n, ef);
        for (int j = 0; j < 4; ++j) {
            GPU_OK(cs_thomas_gpu_free(fdev[j]));
            free(fh[j]);
        }
        GPU_OK(cs_thomas_gpu_free(ftmp));
        free(fx);
        free(a), free(b), free(c), free(d), free(ref), free(x), free(chk), free(len);
    }
}
END_TEST

/* The device layout conversions against the host ones, and their round trip (exact). */
START_TEST(test_layout_helpers)
{
    const int shp[][2] = {{1, 1}, {37, 33}, {300, 100}, {1000, 3}, {70000, 2}};
    for (int k = 0; k < 5; ++k) {
        const int nsys = shp[k][0], n = shp[k][1];
        const size_t tot = (size_t)nsys * n;
        double *f = dalloc(tot), *il = dalloc(tot), *back = dalloc(tot), *hil = dalloc(tot);
        float *ff = falloc(tot), *fil = falloc(tot), *fback = falloc(tot), *hfil = falloc(tot);
        for (size_t i = 0; i < tot; ++i) f[i] = (double)i + 0.25, ff[i] = (float)i;
        double *d0, *d1;
        float *f0, *f1;
        GPU_OK(cs_thomas_gpu_malloc((void **)&d0, tot * sizeof(double)));
        GPU_OK(cs_thomas_gpu_malloc((void **)&d1, tot * sizeof(double)));
        GPU_OK(cs_thomas_gpu_malloc((void **)&f0, tot * sizeof(float)));
        GPU_OK(cs_thomas_gpu_malloc((void **)&f1, tot * sizeof(float)));
        GPU_OK(cs_thomas_gpu_to_device(d0, f, tot * sizeof(double)));
        GPU_OK(cs_thomas_gpu_flat_to_interleaved_d(nsys, n, d0, d1));
        GPU_OK(cs_thomas_gpu_to_host(il, d1, tot * sizeof(double)));
        h_to_interleaved_d(nsys, n, f, hil);
        ck_assert_msg(memcmp(il, hil, tot * sizeof(double)) == 0, "flat_to_interleaved_d %dx%d", nsys, n);
        GPU_OK(cs_thomas_gpu_interleaved_to_flat_d(nsys, n, d1, d0));
        GPU_OK(cs_thomas_gpu_to_host(back, d0, tot * sizeof(double)));
        ck_assert_msg(memcmp(back, f, tot * sizeof(double)) == 0, "interleaved_to_flat_d %dx%d", nsys, n);
        GPU_OK(cs_thomas_gpu_to_device(f0, ff, tot * sizeof(float)));
        GPU_OK(cs_thomas_gpu_flat_to_interleaved_f(nsys, n, f0, f1));
        GPU_OK(cs_thomas_gpu_to_host(fil, f1, tot * sizeof(float)));
        h_to_interleaved_f(nsys, n, ff, hfil);
        ck_assert_msg(memcmp(fil, hfil, tot * sizeof(float)) == 0, "flat_to_interleaved_f %dx%d", nsys, n);
        GPU_OK(cs_thomas_gpu_interleaved_to_flat_f(nsys, n, f1, f0));
        GPU_OK(cs_thomas_gpu_to_host(fback, f0, tot * sizeof(float)));
        ck_assert_msg(memcmp(fback, ff, tot * sizeof(float)) == 0, "interleaved_to_flat_f %dx%d", nsys, n);
        GPU_OK(cs_thomas_gpu_free(d0));
        GPU_OK(cs_thomas_gpu_free(d1));
        GPU_OK(cs_thomas_gpu_free(f0));
        GPU_OK(cs_thomas_gpu_free(f1));
        free(f), free(il), free(back), free(hil), free(ff), free(fil), free(fback), free(hfil);
    }
}
END_TEST

/* ---- variable-size batches ------------------------------------------------------------------- */
static const cs_thomas_gpu_variant k_var[] = {CS_THOMAS_GPU_VAR_CP, CS_THOMAS_GPU_VAR_NCP,
                                              CS_THOMAS_GPU_AUTO};

/* Host-side padded Full-Interleaved image with identity padding (what var_pack builds). */
static void h_var_pack_d(int nsys, int n_max, const int *off, const double *src, double *dst,
                         double pad, int which /* 0 a, 1 b, 2 c, 3 d */)
{
    for (int s = 0; s < nsys; ++s) {
        const int ns = off[s + 1] - off[s];
        for (int i = 0; i < n_max; ++i) {
            double v = pad;
            if (i < ns) {
                v = src[off[s] + i];
                if (which == 0 && i == 0) v = 0.0;
                if (which == 2 && i == ns - 1) v = 0.0;
            }
            dst[(size_t)i * nsys + s] = v;
        }
    }
}

START_TEST(test_var)
{
    const cs_thomas_gpu_variant v = k_var[_i];
    const int nmaxs[] = {1, 33, 512};
    const int nsyss[] = {1, 45, 300};
    double worst_d = 0.0, worst_f = 0.0;
    for (int im = 0; im < 3; ++im)
        for (int is = 0; is < 3; ++is) {
            const int n_max = nmaxs[im], nsys = nsyss[is];
            if (g_small && nsys > 45) continue;
            int *len = malloc((size_t)nsys * sizeof *len), *off = malloc((size_t)(nsys + 1) * sizeof *off);
            ck_assert_ptr_nonnull(len);
            ck_assert_ptr_nonnull(off);
            off[0] = 0;
            for (int s = 0; s < nsys; ++s) {
                len[s] = 1 + (int)(urand() * n_max); /* 1 .. n_max */
                if (len[s] > n_max) len[s] = n_max;
                if (s == 0) len[s] = n_max;          /* the widest one is present */
                if (nsys > 2 && s == nsys - 1) len[s] = 0; /* an empty system */
                off[s + 1] = off[s] + len[s];
            }
            const size_t tot = (size_t)off[nsys], pad = (size_t)nsys * n_max;
            double *a = dalloc(tot), *b = dalloc(tot), *c = dalloc(tot), *d = dalloc(tot);
            double *ref = dalloc(tot), *x = dalloc(tot);
            gen_systems(nsys, len, a, b, c, d);
            reference(nsys, len, a, b, c, d, ref);

            /* double, host pointers: padded image built on the host */
            {
                double *pa = dalloc(pad), *pb = dalloc(pad), *pc = dalloc(pad), *pd = dalloc(pad);
                h_var_pack_d(nsys, n_max, off, a, pa, 0.0, 0);
                h_var_pack_d(nsys, n_max, off, b, pb, 1.0, 1);
                h_var_pack_d(nsys, n_max, off, c, pc, 0.0, 2);
                h_var_pack_d(nsys, n_max, off, d, pd, 0.0, 3);
                GPU_OK(cs_thomas_gpu_solve_var_d(v, nsys, n_max, off, pa, pb, pc, pd,
                                                 CS_THOMAS_GPU_HOST_PTRS));
                for (int s = 0; s < nsys; ++s)
                    for (int i = 0; i < len[s]; ++i) x[off[s] + i] = pd[(size_t)i * nsys + s];
                const double e = rel_err_d(tot, x, ref);
                ck_assert_msg(e <= TOL_D, "%s host double nsys=%d n_max=%d: rel err %.3e",
                              cs_thomas_gpu_variant_name(v), nsys, n_max, e);
                if (e > worst_d) worst_d = e;
                free(pa), free(pb), free(pc), free(pd);
            }
            /* double, device pointers: var_pack / var_unpack on the device */
            {
                double *dv[4], *di[4], *dx;
                int *doff;
                const double *h[4] = {a, b, c, d};
                GPU_OK(cs_thomas_gpu_malloc((void **)&doff, (size_t)(nsys + 1) * sizeof(int)));
                GPU_OK(cs_thomas_gpu_to_device(doff, off, (size_t)(nsys + 1) * sizeof(int)));
                GPU_OK(cs_thomas_gpu_malloc((void **)&dx, tot * sizeof(double)));
                for (int j = 0; j < 4; ++j) {
                    GPU_OK(cs_thomas_gpu_malloc((void **)&dv[j], tot * sizeof(double)));
                    GPU_OK(cs_thomas_gpu_malloc((void **)&di[j], pad * sizeof(double)));
                    GPU_OK(cs_thomas_gpu_to_device(dv[j], h[j], tot * sizeof(double)));
                }
                GPU_OK(cs_thomas_gpu_var_pack_d(nsys, n_max, doff, dv[0], dv[1], dv[2], dv[3],
                                                di[0], di[1], di[2], di[3]));
                GPU_OK(cs_thomas_gpu_solve_var_d(v, nsys, n_max, doff, di[0], di[1], di[2], di[3],
                                                 CS_THOMAS_GPU_DEVICE_PTRS));
                GPU_OK(cs_thomas_gpu_var_unpack_d(nsys, n_max, doff, di[3], dx));
                GPU_OK(cs_thomas_gpu_to_host(x, dx, tot * sizeof(double)));
                const double e = rel_err_d(tot, x, ref);
                ck_assert_msg(e <= TOL_D, "%s device double nsys=%d n_max=%d: rel err %.3e",
                              cs_thomas_gpu_variant_name(v), nsys, n_max, e);
                if (e > worst_d) worst_d = e;
                for (int j = 0; j < 4; ++j) {
                    GPU_OK(cs_thomas_gpu_free(dv[j]));
                    GPU_OK(cs_thomas_gpu_free(di[j]));
                }
                GPU_OK(cs_thomas_gpu_free(dx));

                /* float, device pointers */
                round_float(tot, a), round_float(tot, b), round_float(tot, c), round_float(tot, d);
                reference(nsys, len, a, b, c, d, ref);
                float *fv[4], *fi[4], *fxd, *fx = falloc(tot);
                GPU_OK(cs_thomas_gpu_malloc((void **)&fxd, tot * sizeof(float)));
                for (int j = 0; j < 4; ++j) {
                    float *hf = falloc(tot);
                    to_float(tot, h[j], hf);
                    GPU_OK(cs_thomas_gpu_malloc((void **)&fv[j], tot * sizeof(float)));
                    GPU_OK(cs_thomas_gpu_malloc((void **)&fi[j], pad * sizeof(float)));
                    GPU_OK(cs_thomas_gpu_to_device(fv[j], hf, tot * sizeof(float)));
                    free(hf);
                }
                GPU_OK(cs_thomas_gpu_var_pack_f(nsys, n_max, doff, fv[0], fv[1], fv[2], fv[3],
                                                fi[0], fi[1], fi[2], fi[3]));
                GPU_OK(cs_thomas_gpu_solve_var_f(v, nsys, n_max, doff, fi[0], fi[1], fi[2], fi[3],
                                                 CS_THOMAS_GPU_DEVICE_PTRS));
                GPU_OK(cs_thomas_gpu_var_unpack_f(nsys, n_max, doff, fi[3], fxd));
                GPU_OK(cs_thomas_gpu_to_host(fx, fxd, tot * sizeof(float)));
                const double ef = rel_err_f(tot, fx, ref);
                ck_assert_msg(ef <= TOL_F, "%s device float nsys=%d n_max=%d: rel err %.3e",
                              cs_thomas_gpu_variant_name(v), nsys, n_max, ef);
                if (ef > worst_f) worst_f = ef;
                for (int j = 0; j < 4; ++j) {
                    GPU_OK(cs_thomas_gpu_free(fv[j]));
                    GPU_OK(cs_thomas_gpu_free(fi[j]));
                }
                GPU_OK(cs_thomas_gpu_free(fxd));
                GPU_OK(cs_thomas_gpu_free(doff));
                free(fx);
            }
            free(a), free(b), free(c), free(d), free(ref), free(x), free(len), free(off);
        }
    printf("  %-12s var batch:   worst rel err double %.2e, float %.2e\n",
           cs_thomas_gpu_variant_name(v), worst_d, worst_f);
}
END_TEST

/* ---- argument checks, names ------------------------------------------------------------------ */
START_TEST(test_errors_and_names)
{
    double a[8] = {0}, b[8] = {1, 1, 1, 1, 1, 1, 1, 1}, c[8] = {0}, d[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ck_assert_int_eq(cs_thomas_gpu_solve_d(CS_THOMAS_GPU_FLAT, 1, 0, a, b, c, d,
                                           CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);
    ck_assert_str_ne(cs_thomas_gpu_last_error(), "");
    ck_assert_int_eq(cs_thomas_gpu_solve_d(CS_THOMAS_GPU_FLAT, -1, 4, a, b, c, d,
                                           CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_solve_d(CS_THOMAS_GPU_WARP, 1, 8, NULL, b, c, d,
                                           CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_solve_d(CS_THOMAS_GPU_FLAT, 0, 8, NULL, NULL, NULL, NULL,
                                           CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_OK);
    ck_assert_int_eq(cs_thomas_gpu_solve_d(CS_THOMAS_GPU_VAR_CP, 1, 8, a, b, c, d,
                                           CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_solve_d((cs_thomas_gpu_variant)99, 1, 8, a, b, c, d,
                                           CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);
    int off[2] = {0, 9}; /* 9 rows > n_max 8 */
    ck_assert_int_eq(cs_thomas_gpu_solve_var_d(CS_THOMAS_GPU_VAR_NCP, 1, 8, off, a, b, c, d,
                                               CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_solve_var_d(CS_THOMAS_GPU_WARP, 1, 8, off, a, b, c, d,
                                               CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_solve_var_d(CS_THOMAS_GPU_VAR_NCP, 1, 8, NULL, a, b, c, d,
                                               CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);

    /* warp variants stop at 2048 rows; auto takes the chunked hybrid above 1024 */
    const int nbig = CS_THOMAS_GPU_WARP_MAX_N + 1, nsys = 3;
    const size_t tot = (size_t)nsys * nbig;
    double *ba = dalloc(tot), *bb = dalloc(tot), *bc = dalloc(tot), *bd = dalloc(tot);
    double *ref = dalloc(tot);
    int len[3] = {nbig, nbig, nbig};
    gen_systems(nsys, len, ba, bb, bc, bd);
    reference(nsys, len, ba, bb, bc, bd, ref);
    ck_assert_int_eq(cs_thomas_gpu_solve_d(CS_THOMAS_GPU_WARP, nsys, nbig, ba, bb, bc, bd,
                                           CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_solve_d(CS_THOMAS_GPU_WARP_STAGED, nsys, nbig, ba, bb, bc, bd,
                                           CS_THOMAS_GPU_HOST_PTRS), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(cs_thomas_gpu_choose(nsys, nbig, CS_THOMAS_GPU_F64), CS_THOMAS_GPU_CHUNKED);
    ck_assert_int_eq(cs_thomas_gpu_choose(1, nbig, CS_THOMAS_GPU_F32), CS_THOMAS_GPU_CHUNKED);
    ck_assert_int_eq(cs_thomas_gpu_choose(1, 2048, CS_THOMAS_GPU_F32), CS_THOMAS_GPU_CHUNKED);
    ck_assert_int_eq(cs_thomas_gpu_choose(2, 1025, CS_THOMAS_GPU_F64), CS_THOMAS_GPU_CHUNKED);
    GPU_OK(cs_thomas_gpu_solve_d(CS_THOMAS_GPU_AUTO, nsys, nbig, ba, bb, bc, bd,
                                 CS_THOMAS_GPU_HOST_PTRS));
    ck_assert_double_le(rel_err_d(tot, bd, ref), TOL_D);
    free(ba), free(bb), free(bc), free(bd), free(ref);

    /* names and layouts */
    for (int i = 0; i < CS_THOMAS_GPU_NVARIANTS; ++i) {
        cs_thomas_gpu_variant v = CS_THOMAS_GPU_NVARIANTS;
        const char *name = cs_thomas_gpu_variant_name((cs_thomas_gpu_variant)i);
        ck_assert_ptr_nonnull(name);
        ck_assert_int_eq(cs_thomas_gpu_variant_from_name(name, &v), CS_SOLVER_OK);
        ck_assert_int_eq(v, i);
    }
    cs_thomas_gpu_variant v = CS_THOMAS_GPU_FLAT;
    ck_assert_int_eq(cs_thomas_gpu_variant_from_name("warpp", &v), CS_SOLVER_ERR_INVALID);
    ck_assert_int_eq(v, CS_THOMAS_GPU_FLAT);
    ck_assert_ptr_null(cs_thomas_gpu_variant_name(CS_THOMAS_GPU_NVARIANTS));
    ck_assert_int_eq(cs_thomas_gpu_variant_layout(CS_THOMAS_GPU_INTERLEAVED), CS_THOMAS_LAYOUT_INTERLEAVED);
    ck_assert_int_eq(cs_thomas_gpu_variant_layout(CS_THOMAS_GPU_WARP), CS_THOMAS_LAYOUT_FLAT);
    ck_assert_int_eq(cs_thomas_gpu_variant_is_var(CS_THOMAS_GPU_VAR_NCP), 1);
    ck_assert_int_eq(cs_thomas_gpu_variant_is_var(CS_THOMAS_GPU_WARP), 0);
    for (int n = 1; n <= CS_THOMAS_GPU_WARP_MAX_N; n += 97) {
        const cs_thomas_gpu_variant ch = cs_thomas_gpu_choose(1000, n, CS_THOMAS_GPU_F32);
        ck_assert(ch != CS_THOMAS_GPU_AUTO && cs_thomas_gpu_variant_layout(ch) == CS_THOMAS_LAYOUT_FLAT);
    }
}
END_TEST

static Suite *thomas_gpu_suite(void)
{
    Suite *s = suite_create("thomas_gpu");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_uniform_host, 0, N_UNIFORM);
    tcase_add_loop_test(tc, test_uniform_device, 0, N_UNIFORM);
    tcase_add_test(tc, test_layout_helpers);
    tcase_add_loop_test(tc, test_var, 0, (int)(sizeof k_var / sizeof k_var[0]));
    tcase_add_test(tc, test_errors_and_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int count = 0;
    const cs_solver_status st = cs_thomas_gpu_device_count(&count);
    if (st == CS_SOLVER_ERR_UNAVAILABLE) {
        printf("SKIP: CUDA not compiled\n");
        return 77;
    }
    if (st != CS_SOLVER_OK) {
        printf("FAIL: cannot count CUDA devices: %s\n", cs_thomas_gpu_last_error());
        return 1;
    }
    if (count == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    const char *sm = getenv("CS_TEST_SMALL");
    g_small = sm && sm[0] && strcmp(sm, "0") != 0;
    char name[256] = "";
    cs_thomas_gpu_device_name(name, sizeof name);
    printf("device: %s%s\n", name, g_small ? " (small shapes)" : "");
    fflush(stdout);

    SRunner *sr = srunner_create(thomas_gpu_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
