/* Benchmark of the batched Thomas solvers: our GPU variants (solver/cs_thomas_gpu.h), the CPU
 * serial and OpenMP solvers (solver/cs_solver.h, double only), and cuSPARSE gtsv2StridedBatch
 * (Flat) and gtsvInterleavedBatch (algo 0, Full-Interleaved), on the seeds' grid
 * n ∈ {64,128,256,512} × batch ∈ {256,2560,25600,256000}, float and double; plus a variable-size
 * batch (n uniform in 256..512) for Computing Padding vs No Computing Padding.
 *
 * Method: random diagonally dominant systems (never zeros); the reference is the CPU Thomas solve
 * in double of the (precision-rounded) inputs; every timed run's result is checked on the device
 * against it (max|x - ref| / max|ref|, 1e-12 double, 1e-5 float). GPU times: CUDA events around
 * each solve, after a warm-up, median of >= 20 runs; inputs rotate over R >= 2 copies so that a
 * solve never finds its inputs in L2 (R·copy >= 3× L2); the copies are restored from pristine
 * data between rounds (untimed; solvers overwrite b, d, and cuSPARSE's interleaved one all four).
 * Effective bandwidth counts compulsory bytes only: 4 arrays read + 1 written, 5·nsys·n·sizeof(T),
 * against the device-to-device cudaMemcpy bandwidth measured in the same run (read + write bytes).
 *
 * Usage: bench_thomas [--quick] [--copy-only] [--reps N] [--cpu-max-rows N] [OUTFILE.md]
 *   --quick: two small points and a small variable batch, few reps (for compute-sanitizer).
 *   --copy-only: the device-to-device copy bandwidth alone (the bound that other benchmarks,
 *   e.g. the real-cell networks, are measured against on a given GPU). */
#include <cuda_runtime.h>
#include <cusparse.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <time.h>
#include <vector>

#include "cs_solver.h"
#include "cs_thomas_gpu.h"

#include "bench_common.cuh"

/* ---- options, output ----------------------------------------------------------------------- */
static bool g_quick = false;
static int g_reps = 20;
static long long g_cpu_max_rows = 25600LL * 512;
static size_t g_l2 = 50u << 20;
static double g_copy_gbs = 0.0; /* measured device-to-device copy, GB/s (read + write) */
static int g_failures = 0;

/* ---- data -------------------------------------------------------------------------------------- */
/* Packed Flat systems (lengths len[s], offsets off[s]), a[first] = c[last] = 0 (cuSPARSE wants
 * that), rounded to T's precision but stored in double. */
template <typename T>
static void gen_host(int nsys, const std::vector<int> &len, const std::vector<long long> &off,
                     uint64_t seed, double *a, double *b, double *c, double *d)
{
#pragma omp parallel for schedule(static)
    for (int s = 0; s < nsys; ++s)
        for (int i = 0; i < len[s]; ++i) {
            const long long k = off[s] + i;
            double av = (i == 0) ? 0.0 : 2.0 * u01(seed, k, 0) - 1.0;
            double cv = (i == len[s] - 1) ? 0.0 : 2.0 * u01(seed, k, 1) - 1.0;
            double bv = (std::fabs(av) + std::fabs(cv) + 0.5 + u01(seed, k, 2)) *
                        (u01(seed, k, 3) < 0.5 ? -1.0 : 1.0);
            double dv = 2.0 * u01(seed, k, 4) - 1.0;
            a[k] = (double)(T)av, b[k] = (double)(T)bv, c[k] = (double)(T)cv, d[k] = (double)(T)dv;
        }
}

template <typename T>
static void to_T(size_t n, const double *x, T *y)
{
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; ++i) y[i] = (T)x[i];
}

/* ---- the device data of one grid point ------------------------------------------------------- */
enum Layout { FLAT = 0, INTERLEAVED = 1 };

template <typename T> struct Point {
    int nsys = 0, n = 0;
    size_t cnt = 0;           /* elements per array */
    T *pristine[2][4] = {};   /* [layout][a,b,c,d] */
    T *ref[2] = {};           /* reference solution per layout (in T) */
    double ref_max = 0.0;     /* max |ref| */
    int R = 2;                /* rotating copies */
    std::vector<T *> slot;    /* R × 4 arrays */
    unsigned long long *derr = nullptr;
};

static cusparseHandle_t g_sp;

struct Result {
    double ms = NAN;
    double err = 0.0;
    bool ok = true;
    bool ran = false;
};

typedef void (*solve_fn)(void *ctx, int nsys, int n, void *a, void *b, void *c, void *d);

/* Time `fn` on the point: rounds of (restore all R slots; solve each slot between events);
 * check every timed result. */
template <typename T>
static Result time_gpu(Point<T> &P, Layout lay, const char *name, void (*fn)(void *, int, int, T *, T *, T *, T *),
                       void *ctx)
{
    Result r;
    r.ran = true;
    const size_t bytes = P.cnt * sizeof(T);
    const int R = P.R;
    std::vector<cudaEvent_t> ev0(R), ev1(R);
    for (int i = 0; i < R; ++i) {
        CUDA_CHECK(cudaEventCreate(&ev0[i]));
        CUDA_CHECK(cudaEventCreate(&ev1[i]));
    }
    const int reps = std::max(g_reps, R);
    const int warm = std::min(R, 3);
    std::vector<double> times;
    const double tol = sizeof(T) == 8 ? 1e-12 : 1e-5;
    int done = -warm;
    while (done < reps) {
        for (int s = 0; s < R; ++s)
            for (int j = 0; j < 4; ++j)
                CUDA_CHECK(cudaMemcpyAsync(P.slot[4 * s + j], P.pristine[lay][j], bytes,
                                           cudaMemcpyDeviceToDevice));
        int nthis = 0;
        for (int s = 0; s < R && done + nthis < reps; ++s) {
            T **q = &P.slot[4 * s];
            CUDA_CHECK(cudaEventRecord(ev0[s]));
            fn(ctx, P.nsys, P.n, q[0], q[1], q[2], q[3]);
            CUDA_CHECK(cudaEventRecord(ev1[s]));
            ++nthis;
        }
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        for (int s = 0; s < nthis; ++s) {
            float ms = 0.f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, ev0[s], ev1[s]));
            if (done + s >= 0) times.push_back(ms);
            CUDA_CHECK(cudaMemset(P.derr, 0, sizeof *P.derr));
            err_kernel<T><<<1024, 256>>>(P.cnt, P.slot[4 * s + 3], P.ref[lay], P.derr);
            unsigned long long bits = 0;
            CUDA_CHECK(cudaMemcpy(&bits, P.derr, sizeof bits, cudaMemcpyDeviceToHost));
            double e;
            memcpy(&e, &bits, sizeof e);
            e = P.ref_max > 0 ? e / P.ref_max : e;
            if (!(e <= r.err)) r.err = std::isnan(e) ? INFINITY : e;
        }
        done += nthis;
    }
    r.ms = median(times);
    r.ok = r.err <= tol;
    if (!r.ok) {
        ++g_failures;
        fprintf(stderr, "CHECK FAILED: %s nsys=%d n=%d %s: rel err %.3e\n", name, P.nsys, P.n,
                sizeof(T) == 8 ? "double" : "float", r.err);
    }
    for (int i = 0; i < R; ++i) {
        CUDA_CHECK(cudaEventDestroy(ev0[i]));
        CUDA_CHECK(cudaEventDestroy(ev1[i]));
    }
    return r;
}

/* ---- the solvers as callables ---------------------------------------------------------------- */
template <typename T> struct Ours {
    static void solve(void *ctx, int nsys, int n, T *a, T *b, T *c, T *d);
};
template <> void Ours<double>::solve(void *ctx, int nsys, int n, double *a, double *b, double *c, double *d)
{
    CS_CHECK_OK(cs_thomas_gpu_solve_d(*(cs_thomas_gpu_variant *)ctx, nsys, n, a, b, c, d,
                                      CS_THOMAS_GPU_DEVICE_PTRS));
}
template <> void Ours<float>::solve(void *ctx, int nsys, int n, float *a, float *b, float *c, float *d)
{
    CS_CHECK_OK(cs_thomas_gpu_solve_f(*(cs_thomas_gpu_variant *)ctx, nsys, n, a, b, c, d,
                                      CS_THOMAS_GPU_DEVICE_PTRS));
}

static void *g_spbuf = nullptr;
static size_t g_spbuf_size = 0;
static void spbuf_reserve(size_t bytes)
{
    if (bytes <= g_spbuf_size) return;
    if (g_spbuf) CUDA_CHECK(cudaFree(g_spbuf));
    CUDA_CHECK(cudaMalloc(&g_spbuf, bytes ? bytes : 1));
    g_spbuf_size = bytes;
}

static void sp_strided(double *a, double *b, double *c, double *d, int nsys, int n)
{
    CUSPARSE_CHECK(cusparseDgtsv2StridedBatch(g_sp, n, a, b, c, d, nsys, n, g_spbuf));
}
static void sp_strided(float *a, float *b, float *c, float *d, int nsys, int n)
{
    CUSPARSE_CHECK(cusparseSgtsv2StridedBatch(g_sp, n, a, b, c, d, nsys, n, g_spbuf));
}
static void sp_inter(double *a, double *b, double *c, double *d, int nsys, int n)
{
    CUSPARSE_CHECK(cusparseDgtsvInterleavedBatch(g_sp, 0, n, a, b, c, d, nsys, g_spbuf));
}
static void sp_inter(float *a, float *b, float *c, float *d, int nsys, int n)
{
    CUSPARSE_CHECK(cusparseSgtsvInterleavedBatch(g_sp, 0, n, a, b, c, d, nsys, g_spbuf));
}
static size_t sp_strided_size(const double *a, const double *b, const double *c, const double *d, int nsys, int n)
{
    size_t s = 0;
    CUSPARSE_CHECK(cusparseDgtsv2StridedBatch_bufferSizeExt(g_sp, n, a, b, c, d, nsys, n, &s));
    return s;
}
static size_t sp_strided_size(const float *a, const float *b, const float *c, const float *d, int nsys, int n)
{
    size_t s = 0;
    CUSPARSE_CHECK(cusparseSgtsv2StridedBatch_bufferSizeExt(g_sp, n, a, b, c, d, nsys, n, &s));
    return s;
}
static size_t sp_inter_size(const double *a, const double *b, const double *c, const double *d, int nsys, int n)
{
    size_t s = 0;
    CUSPARSE_CHECK(cusparseDgtsvInterleavedBatch_bufferSizeExt(g_sp, 0, n, a, b, c, d, nsys, &s));
    return s;
}
static size_t sp_inter_size(const float *a, const float *b, const float *c, const float *d, int nsys, int n)
{
    size_t s = 0;
    CUSPARSE_CHECK(cusparseSgtsvInterleavedBatch_bufferSizeExt(g_sp, 0, n, a, b, c, d, nsys, &s));
    return s;
}
template <typename T> static void sp_strided_fn(void *, int nsys, int n, T *a, T *b, T *c, T *d)
{
    sp_strided(a, b, c, d, nsys, n);
}
template <typename T> static void sp_inter_fn(void *, int nsys, int n, T *a, T *b, T *c, T *d)
{
    sp_inter(a, b, c, d, nsys, n);
}

/* ---- CPU timing (double only) ---------------------------------------------------------------- */
static Result time_cpu(bool omp, int nsys, int n, const double *a, const double *b, const double *c,
                       const double *d, const double *ref, double ref_max)
{
    Result r;
    r.ran = true;
    const size_t cnt = (size_t)nsys * n;
    std::vector<double> bb(cnt), cc(cnt), dd(cnt), times;
    const int reps = g_reps;
    for (int k = -1; k < reps; ++k) {
        memcpy(bb.data(), b, cnt * sizeof(double));
        memcpy(cc.data(), c, cnt * sizeof(double));
        memcpy(dd.data(), d, cnt * sizeof(double));
        const double t0 = now_s();
        const cs_solver_status st = omp ? cs_thomas_solve_omp(nsys, n, a, bb.data(), cc.data(), dd.data())
                                        : cs_thomas_solve_serial(nsys, n, a, bb.data(), cc.data(), dd.data());
        const double t1 = now_s();
        if (st != CS_SOLVER_OK) {
            fprintf(stderr, "CPU %s failed: %d\n", omp ? "omp" : "serial", (int)st);
            ++g_failures;
            r.ok = false;
        }
        if (k >= 0) times.push_back(1e3 * (t1 - t0));
        double e = 0.0;
        for (size_t i = 0; i < cnt; ++i) e = std::max(e, std::fabs(dd[i] - ref[i]));
        e /= ref_max;
        r.err = std::max(r.err, e);
    }
    r.ms = median(times);
    if (!(r.err <= 1e-12)) {
        r.ok = false;
        ++g_failures;
    }
    return r;
}

/* ---- one grid point ------------------------------------------------------------------------- */
static const cs_thomas_gpu_variant k_ours[] = {CS_THOMAS_GPU_FLAT, CS_THOMAS_GPU_INTERLEAVED,
                                               CS_THOMAS_GPU_WARP, CS_THOMAS_GPU_WARP_STAGED,
                                               CS_THOMAS_GPU_AUTO};
#define N_OURS 5
/* columns: ours..., cuSPARSE strided, cuSPARSE interleaved, CPU serial, CPU omp */
#define N_COLS (N_OURS + 4)
static const char *k_col_names[N_COLS] = {"flat", "interleaved", "warp", "warp_staged", "auto",
                                          "gtsv2StridedBatch", "gtsvInterleavedBatch", "CPU serial",
                                          "CPU omp"};

struct Row {
    int n, nsys;
    Result col[N_COLS];
    cs_thomas_gpu_variant auto_pick;
};

template <typename T>
static Row run_point(int n, int nsys, uint64_t seed)
{
    Row row;
    row.n = n, row.nsys = nsys;
    row.auto_pick = cs_thomas_gpu_choose(nsys, n, sizeof(T) == 8 ? CS_THOMAS_GPU_F64 : CS_THOMAS_GPU_F32);
    Point<T> P;
    P.nsys = nsys, P.n = n, P.cnt = (size_t)nsys * n;
    const size_t cnt = P.cnt, bytes = cnt * sizeof(T);

    /* host data and the CPU reference (OpenMP solve: bit-identical to the serial one) */
    std::vector<int> len(nsys, n);
    std::vector<long long> off(nsys + 1);
    for (int s = 0; s <= nsys; ++s) off[s] = (long long)s * n;
    std::vector<double> a(cnt), b(cnt), c(cnt), d(cnt), ref(cnt);
    gen_host<T>(nsys, len, off, seed, a.data(), b.data(), c.data(), d.data());
    {
        std::vector<double> bb(b), cc(c);
        ref = d;
        if (cs_thomas_solve_omp(nsys, n, a.data(), bb.data(), cc.data(), ref.data()) != CS_SOLVER_OK) {
            fprintf(stderr, "reference solve failed\n");
            exit(2);
        }
    }
    double rmax = 0.0;
    for (size_t i = 0; i < cnt; ++i) rmax = std::max(rmax, std::fabs(ref[i]));
    P.ref_max = rmax;

    /* device copies */
    std::vector<T> h(cnt);
    const double *src[4] = {a.data(), b.data(), c.data(), d.data()};
    for (int j = 0; j < 4; ++j) {
        CUDA_CHECK(cudaMalloc((void **)&P.pristine[FLAT][j], bytes));
        CUDA_CHECK(cudaMalloc((void **)&P.pristine[INTERLEAVED][j], bytes));
        to_T<T>(cnt, src[j], h.data());
        CUDA_CHECK(cudaMemcpy(P.pristine[FLAT][j], h.data(), bytes, cudaMemcpyHostToDevice));
    }
    for (int l = 0; l < 2; ++l) CUDA_CHECK(cudaMalloc((void **)&P.ref[l], bytes));
    to_T<T>(cnt, ref.data(), h.data());
    CUDA_CHECK(cudaMemcpy(P.ref[FLAT], h.data(), bytes, cudaMemcpyHostToDevice));
    if (sizeof(T) == 8) {
        for (int j = 0; j < 4; ++j)
            CS_CHECK_OK(cs_thomas_gpu_flat_to_interleaved_d(nsys, n, (const double *)P.pristine[FLAT][j],
                                                            (double *)P.pristine[INTERLEAVED][j]));
        CS_CHECK_OK(cs_thomas_gpu_flat_to_interleaved_d(nsys, n, (const double *)P.ref[FLAT], (double *)P.ref[INTERLEAVED]));
    } else {
        for (int j = 0; j < 4; ++j)
            CS_CHECK_OK(cs_thomas_gpu_flat_to_interleaved_f(nsys, n, (const float *)P.pristine[FLAT][j],
                                                            (float *)P.pristine[INTERLEAVED][j]));
        CS_CHECK_OK(cs_thomas_gpu_flat_to_interleaved_f(nsys, n, (const float *)P.ref[FLAT], (float *)P.ref[INTERLEAVED]));
    }
    /* rotation: the other copies' traffic between two uses of one copy exceeds 3× L2 */
    const size_t copy_bytes = 4 * bytes;
    P.R = (int)std::min<size_t>(256, std::max<size_t>(2, (3 * g_l2) / copy_bytes + 2));
    P.slot.resize((size_t)4 * P.R);
    for (auto &p : P.slot) CUDA_CHECK(cudaMalloc((void **)&p, bytes));
    CUDA_CHECK(cudaMalloc((void **)&P.derr, sizeof *P.derr));
    spbuf_reserve(std::max(sp_strided_size(P.slot[0], P.slot[1], P.slot[2], P.slot[3], nsys, n),
                           sp_inter_size(P.slot[0], P.slot[1], P.slot[2], P.slot[3], nsys, n)));
    CUDA_CHECK(cudaDeviceSynchronize());

    cs_thomas_gpu_variant vs[N_OURS];
    for (int k = 0; k < N_OURS; ++k) {
        vs[k] = k_ours[k];
        const Layout lay = cs_thomas_gpu_variant_layout(vs[k]) == CS_THOMAS_LAYOUT_INTERLEAVED ? INTERLEAVED : FLAT;
        row.col[k] = time_gpu<T>(P, lay, cs_thomas_gpu_variant_name(vs[k]), Ours<T>::solve, &vs[k]);
    }
    row.col[N_OURS] = time_gpu<T>(P, FLAT, "gtsv2StridedBatch", sp_strided_fn<T>, nullptr);
    row.col[N_OURS + 1] = time_gpu<T>(P, INTERLEAVED, "gtsvInterleavedBatch", sp_inter_fn<T>, nullptr);
    if (sizeof(T) == 8 && (long long)cnt <= g_cpu_max_rows) {
        row.col[N_OURS + 2] = time_cpu(false, nsys, n, a.data(), b.data(), c.data(), d.data(), ref.data(), rmax);
        row.col[N_OURS + 3] = time_cpu(true, nsys, n, a.data(), b.data(), c.data(), d.data(), ref.data(), rmax);
    }

    for (int l = 0; l < 2; ++l) {
        for (int j = 0; j < 4; ++j) CUDA_CHECK(cudaFree(P.pristine[l][j]));
        CUDA_CHECK(cudaFree(P.ref[l]));
    }
    for (auto p : P.slot) CUDA_CHECK(cudaFree(p));
    CUDA_CHECK(cudaFree(P.derr));
    return row;
}

static void fmt_ms(char *buf, size_t len, const Result &r)
{
    if (!r.ran)
        snprintf(buf, len, "–");
    else
        snprintf(buf, len, "%s%.4g%s", r.ok ? "" : "**", r.ms, r.ok ? "" : " FAIL**");
}

template <typename T>
static void print_rows(const std::vector<Row> &rows)
{
    const char *prec = sizeof(T) == 8 ? "double" : "float";
    emit("\n### %s: median time [ms] per batch solve\n\n", prec);
    emit("| n | batch |");
    for (int k = 0; k < N_COLS; ++k) emit(" %s |", k_col_names[k]);
    emit(" auto picks | best ours: GB/s | %% of copy | best ours vs best cuSPARSE | worst rel err |\n");
    emit("|---:|---:|");
    for (int k = 0; k < N_COLS; ++k) emit("---:|");
    emit("---|---:|---:|---:|---:|\n");
    for (const Row &r : rows) {
        emit("| %d | %d |", r.n, r.nsys);
        double best = INFINITY, worst_err = 0.0;
        for (int k = 0; k < N_COLS; ++k) {
            char b[64];
            fmt_ms(b, sizeof b, r.col[k]);
            emit(" %s |", b);
            if (k < N_OURS && r.col[k].ran && r.col[k].ok) best = std::min(best, r.col[k].ms);
            if (r.col[k].ran) worst_err = std::max(worst_err, r.col[k].err);
        }
        const double sp = std::min(r.col[N_OURS].ok ? r.col[N_OURS].ms : INFINITY,
                                   r.col[N_OURS + 1].ok ? r.col[N_OURS + 1].ms : INFINITY);
        const double gbs = 5.0 * r.nsys * (double)r.n * sizeof(T) / (best * 1e-3) / 1e9;
        emit(" %s | %.0f | %.0f%% | %.2fx | %.1e |\n", cs_thomas_gpu_variant_name(r.auto_pick), gbs,
             100.0 * gbs / g_copy_gbs, sp / best, worst_err);
        fflush(stdout);
    }
}

/* ---- variable-size batch: CP vs NCP ---------------------------------------------------------- */
template <typename T>
static void run_var(int nsys, int n_lo, int n_hi, uint64_t seed)
{
    const char *prec = sizeof(T) == 8 ? "double" : "float";
    std::vector<int> len(nsys);
    std::vector<long long> off(nsys + 1);
    off[0] = 0;
    for (int s = 0; s < nsys; ++s) {
        len[s] = n_lo + (int)(splitmix(seed + 17 * s) % (uint64_t)(n_hi - n_lo + 1));
        off[s + 1] = off[s] + len[s];
    }
    const size_t tot = (size_t)off[nsys], pad = (size_t)nsys * n_hi;
    std::vector<double> a(tot), b(tot), c(tot), d(tot), ref(tot);
    gen_host<T>(nsys, len, off, seed, a.data(), b.data(), c.data(), d.data());
    /* reference: systems of equal length in one call each would be fastest; one call per system */
    {
        std::vector<double> bb(b), cc(c);
        ref = d;
#pragma omp parallel for schedule(static)
        for (int s = 0; s < nsys; ++s)
            cs_thomas_solve_serial(1, len[s], a.data() + off[s], bb.data() + off[s], cc.data() + off[s],
                                   ref.data() + off[s]);
    }
    double rmax = 0.0;
    for (size_t i = 0; i < tot; ++i) rmax = std::max(rmax, std::fabs(ref[i]));

    Point<T> P;
    P.nsys = nsys, P.n = n_hi, P.cnt = pad, P.ref_max = rmax;
    const size_t pbytes = pad * sizeof(T);
    std::vector<int> off32(nsys + 1);
    for (int s = 0; s <= nsys; ++s) off32[s] = (int)off[s];
    int *doff;
    CUDA_CHECK(cudaMalloc((void **)&doff, (nsys + 1) * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(doff, off32.data(), (nsys + 1) * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<T> h(tot);
    T *flat[5];
    const double *src[5] = {a.data(), b.data(), c.data(), d.data(), ref.data()};
    for (int j = 0; j < 5; ++j) {
        CUDA_CHECK(cudaMalloc((void **)&flat[j], tot * sizeof(T)));
        to_T<T>(tot, src[j], h.data());
        CUDA_CHECK(cudaMemcpy(flat[j], h.data(), tot * sizeof(T), cudaMemcpyHostToDevice));
    }
    for (int j = 0; j < 4; ++j) CUDA_CHECK(cudaMalloc((void **)&P.pristine[INTERLEAVED][j], pbytes));
    T *junk[3];
    for (int j = 0; j < 3; ++j) CUDA_CHECK(cudaMalloc((void **)&junk[j], pbytes));
    CUDA_CHECK(cudaMalloc((void **)&P.ref[INTERLEAVED], pbytes));
    if (sizeof(T) == 8) {
        CS_CHECK_OK(cs_thomas_gpu_var_pack_d(nsys, n_hi, doff, (double *)flat[0], (double *)flat[1],
                                             (double *)flat[2], (double *)flat[3],
                                             (double *)P.pristine[INTERLEAVED][0], (double *)P.pristine[INTERLEAVED][1],
                                             (double *)P.pristine[INTERLEAVED][2], (double *)P.pristine[INTERLEAVED][3]));
        /* the reference in the padded layout (padding rows solve to 0) */
        CS_CHECK_OK(cs_thomas_gpu_var_pack_d(nsys, n_hi, doff, (double *)flat[4], (double *)flat[4],
                                             (double *)flat[4], (double *)flat[4], (double *)junk[0],
                                             (double *)junk[1], (double *)junk[2], (double *)P.ref[INTERLEAVED]));
    } else {
        CS_CHECK_OK(cs_thomas_gpu_var_pack_f(nsys, n_hi, doff, (float *)flat[0], (float *)flat[1],
                                             (float *)flat[2], (float *)flat[3],
                                             (float *)P.pristine[INTERLEAVED][0], (float *)P.pristine[INTERLEAVED][1],
                                             (float *)P.pristine[INTERLEAVED][2], (float *)P.pristine[INTERLEAVED][3]));
        CS_CHECK_OK(cs_thomas_gpu_var_pack_f(nsys, n_hi, doff, (float *)flat[4], (float *)flat[4],
                                             (float *)flat[4], (float *)flat[4], (float *)junk[0],
                                             (float *)junk[1], (float *)junk[2], (float *)P.ref[INTERLEAVED]));
    }
    const size_t copy_bytes = 4 * pbytes;
    P.R = (int)std::min<size_t>(256, std::max<size_t>(2, (3 * g_l2) / copy_bytes + 2));
    P.slot.resize((size_t)4 * P.R);
    for (auto &p : P.slot) CUDA_CHECK(cudaMalloc((void **)&p, pbytes));
    CUDA_CHECK(cudaMalloc((void **)&P.derr, sizeof *P.derr));
    CUDA_CHECK(cudaDeviceSynchronize());

    struct VarCtx {
        cs_thomas_gpu_variant v;
        const int *off;
    };
    struct VarFn {
        static void solve(void *ctx, int nsys_, int n_, T *a_, T *b_, T *c_, T *d_)
        {
            const VarCtx *vc = (const VarCtx *)ctx;
            cs_solver_status st;
            if (sizeof(T) == 8)
                st = cs_thomas_gpu_solve_var_d(vc->v, nsys_, n_, vc->off, (const double *)a_, (double *)b_,
                                               (const double *)c_, (double *)d_, CS_THOMAS_GPU_DEVICE_PTRS);
            else
                st = cs_thomas_gpu_solve_var_f(vc->v, nsys_, n_, vc->off, (const float *)a_, (float *)b_,
                                               (const float *)c_, (float *)d_, CS_THOMAS_GPU_DEVICE_PTRS);
            if (st != CS_SOLVER_OK) {
                fprintf(stderr, "var solve: %s\n", cs_thomas_gpu_last_error());
                exit(2);
            }
        }
    };
    VarCtx cp = {CS_THOMAS_GPU_VAR_CP, doff}, ncp = {CS_THOMAS_GPU_VAR_NCP, doff};
    const Result rcp = time_gpu<T>(P, INTERLEAVED, "var_cp", VarFn::solve, &cp);
    const Result rncp = time_gpu<T>(P, INTERLEAVED, "var_ncp", VarFn::solve, &ncp);
    const double real_bytes = 5.0 * (double)tot * sizeof(T), pad_bytes = 5.0 * (double)pad * sizeof(T);
    char b1[64], b2[64];
    fmt_ms(b1, sizeof b1, rcp);
    fmt_ms(b2, sizeof b2, rncp);
    emit("| %s | %d | %d–%d | %s | %s | %.0f | %.0f | %.0f | %.1e |\n", prec, nsys, n_lo, n_hi, b1, b2,
         pad_bytes / (rcp.ms * 1e-3) / 1e9, real_bytes / (rcp.ms * 1e-3) / 1e9,
         real_bytes / (rncp.ms * 1e-3) / 1e9, std::max(rcp.err, rncp.err));
    fflush(stdout);

    for (int j = 0; j < 5; ++j) CUDA_CHECK(cudaFree(flat[j]));
    for (int j = 0; j < 4; ++j) CUDA_CHECK(cudaFree(P.pristine[INTERLEAVED][j]));
    for (int j = 0; j < 3; ++j) CUDA_CHECK(cudaFree(junk[j]));
    CUDA_CHECK(cudaFree(P.ref[INTERLEAVED]));
    for (auto p : P.slot) CUDA_CHECK(cudaFree(p));
    CUDA_CHECK(cudaFree(P.derr));
    CUDA_CHECK(cudaFree(doff));
}

template <typename T>
static void run_grid(const std::vector<int> &ns, const std::vector<int> &batches)
{
    std::vector<Row> rows;
    uint64_t seed = sizeof(T) == 8 ? 1000 : 2000;
    for (int n : ns)
        for (int b : batches) {
            rows.push_back(run_point<T>(n, b, seed++));
            fprintf(stderr, "  done %s n=%d batch=%d\n", sizeof(T) == 8 ? "double" : "float", n, b);
        }
    print_rows<T>(rows);
}

int main(int argc, char **argv)
{
    const char *outpath = NULL;
    bool copy_only = false;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick"))
            g_quick = true;
        else if (!strcmp(argv[i], "--copy-only"))
            copy_only = true;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpu-max-rows") && i + 1 < argc)
            g_cpu_max_rows = atoll(argv[++i]);
        else if (argv[i][0] != '-')
            outpath = argv[i];
        else {
            fprintf(stderr, "usage: %s [--quick] [--copy-only] [--reps N] [--cpu-max-rows N] [OUT.md]\n", argv[0]);
            return 2;
        }
    }
    if (g_quick) g_reps = std::min(g_reps, 3);
    if (outpath) {
        g_out = fopen(outpath, "w");
        if (!g_out) {
            perror(outpath);
            return 2;
        }
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    g_l2 = (size_t)prop.l2CacheSize;
    if (copy_only) { /* 2 GiB each way: far beyond the L2 */
        printf("%s: device-to-device copy %.0f GB/s (bytes read + written, median of 20)\n", prop.name,
               measure_copy_gbs((size_t)1 << 31));
        return 0;
    }
    CUSPARSE_CHECK(cusparseCreate(&g_sp));
    int cusparse_ver = 0;
    CUSPARSE_CHECK(cusparseGetVersion(g_sp, &cusparse_ver));
    int rt = 0, drv = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));

    g_copy_gbs = measure_copy_gbs(g_quick ? (64u << 20) : (size_t)2 << 30);
    emit("## Thomas batch solvers: %s\n\n", prop.name);
    emit("Device: %s, %d SMs, L2 %zu MB, CUDA runtime %d, driver %d, cuSPARSE %d, %d OpenMP threads.\n",
         prop.name, prop.multiProcessorCount, g_l2 >> 20, rt, drv, cusparse_ver, omp_get_max_threads());
    emit("Device-to-device cudaMemcpy (read + write bytes): **%.0f GB/s** (median of 20, %s buffer).\n",
         g_copy_gbs, g_quick ? "64 MiB" : "2 GiB");
    emit("Times: CUDA events around one solve (launch included), median of >= %d after warm-up, inputs "
         "rotated over copies that do not fit L2; every timed result checked against the CPU Thomas "
         "reference (double). GB/s: compulsory bytes 5·batch·n·sizeof(T) (a, b, c, d read, x written) "
         "over the best of our variants' time. CPU: %s only, batch·n <= %lld.\n",
         g_reps, "double", g_cpu_max_rows);

    std::vector<int> ns = {64, 128, 256, 512}, batches = {256, 2560, 25600, 256000};
    if (g_quick) ns = {33, 64}, batches = {37, 2560};
    run_grid<double>(ns, batches);
    run_grid<float>(ns, batches);

    emit("\n### Variable-size batch (n uniform in the range, padded to the largest): Computing Padding "
         "vs No Computing Padding\n\n");
    emit("| precision | batch | n | var_cp [ms] | var_ncp [ms] | CP GB/s (padded bytes) | CP GB/s (real bytes) "
         "| NCP GB/s (real bytes) | worst rel err |\n|---|---:|---|---:|---:|---:|---:|---:|---:|\n");
    if (g_quick) {
        run_var<double>(45, 20, 40, 7);
        run_var<float>(45, 20, 40, 8);
    } else {
        for (int nb : {25600, 256000}) {
            run_var<double>(nb, 256, 512, 7 + nb);
            run_var<float>(nb, 256, 512, 8 + nb);
        }
    }
    emit("\nChecks failed: %d\n", g_failures);
    if (g_out) fclose(g_out);
    CUSPARSE_CHECK(cusparseDestroy(g_sp));
    if (g_spbuf) CUDA_CHECK(cudaFree(g_spbuf));
    return g_failures ? 1 : 0;
}
