/* Benchmark of the large-system tridiagonal solvers (solver/cs_thomas_large_gpu.cu: chunked;
 * solver/cs_thomas_scan_gpu.cu: scan) against cuSPARSE gtsv2 (partial pivoting) and
 * gtsv2_nopivot, one system of n = 2^10 .. 2^26 rows, double and float; then a few systems
 * (nsys 2 .. 64, up to 2^26 rows in all) against gtsv2StridedBatch. Ends with the issue's targets,
 * counted over the tables: >= 3x the faster cuSPARSE at n >= 2^20 (one system), >= 50 % of copy
 * at >= 2^24 rows, and the points where auto is slower than cuSPARSE.
 *
 * Method: random diagonally dominant systems (never zeros; a[0] = c[n-1] = 0 as cuSPARSE wants);
 * device pointers; CUDA events around each solve (launches included), one warm-up solve, then
 * the median of 7; each solve on its own copy of the inputs, restored (untimed) before every
 * round, with enough copies (>= 3× L2 in all) that a solve never finds its inputs in L2. Every
 * timed result is checked on the device against the CPU Thomas solve in double of the
 * (precision-rounded) inputs: max|x - ref| / max|ref| <= 1e-12 double, 1e-5 float.
 * GB/s: compulsory bytes 5·nsys·n·sizeof(T) (a, b, c, d read, x written) over the time; % copy:
 * against the device-to-device cudaMemcpy bandwidth measured in the same run (read + write).
 * CPU: the serial Thomas and the OpenMP chunked hybrid in double, wall clock, median of 3.
 *
 * Usage: bench_tridiag_large [--quick] [--targets | --block-large] [OUTFILE.md]   (--quick: small
 *        sizes, for the sanitizer; --targets: the one-system sizes of issue 29's targets only;
 *        --block-large: only the table of one large block-tridiagonal system, k = 2, 3, 4) */
#include <omp.h>

#include <cstring>
#include <string>

#include "cs_block_thomas_gpu.h"
#include "cs_solver.h"
#include "cs_thomas_gpu.h"

#include "bench_common.cuh"

static bool g_quick = false;
/* --targets: only the sizes issue 29's targets are stated at (one system, double and float,
 * 2^20, 2^21, 2^24, 2^25), for a short GPU call */
static bool g_targets = false;
/* --block-large: only the table of one large block-tridiagonal system */
static bool g_block_large = false;
static const int g_reps = 7;
static size_t g_l2 = 50u << 20;
static double g_copy_gbs = 0.0;
static int g_failures = 0;
static cusparseHandle_t g_sp;
/* The issue's targets, counted over the tables (run_table) */
static int g_t3_pts = 0, g_t3_met = 0, g_bw_pts = 0, g_bw_met = 0;
static std::string g_t3_miss, g_bw_miss, g_slower;

/* max|x - ref| over n entries, on the device (err_kernel), through the caller's scratch derr. */
template <typename T>
static double max_err_dev(size_t n, const T *x, const T *ref, unsigned long long *derr)
{
    CUDA_CHECK(cudaMemset(derr, 0, sizeof *derr));
    err_kernel<T><<<1024, 256>>>(n, x, ref, derr);
    unsigned long long bits = 0;
    CUDA_CHECK(cudaMemcpy(&bits, derr, sizeof bits, cudaMemcpyDeviceToHost));
    double e;
    memcpy(&e, &bits, sizeof e);
    return e;
}

/* ---- one point: pristine copies, reference, workspace ------------------------------------- */
template <typename T> struct Point {
    int nsys = 0, n = 0;
    size_t N = 0;                 /* rows in all */
    int R = 0;                    /* input copies */
    T *pristine = nullptr;        /* R × [a | b | c | d] */
    T *slots = nullptr;           /* the same, solved in place */
    T *ref = nullptr;             /* the reference solution in T */
    double ref_max = 0.0;
    void *work = nullptr;         /* chunked workspace */
    size_t work_bytes = 0;
    void *swork = nullptr;        /* scan workspace */
    size_t swork_bytes = 0;
    void *spbuf = nullptr;        /* cuSPARSE buffer (the largest of the three) */
    unsigned long long *derr = nullptr;
    T *arr(int slot, int j) { return slots + ((size_t)slot * 4 + j) * N; }
};

template <typename T>
static Point<T> make_point(int nsys, int n, uint64_t seed, std::vector<double> *host_out)
{
    Point<T> P;
    P.nsys = nsys, P.n = n, P.N = (size_t)nsys * n;
    const size_t N = P.N, set_bytes = 4 * N * sizeof(T);
    P.R = (int)std::max<size_t>(g_reps + 1, (3 * g_l2 + set_bytes - 1) / set_bytes);
    std::vector<double> h(4 * N);
    double *a = h.data(), *b = a + N, *c = b + N, *d = c + N;
#pragma omp parallel for schedule(static)
    for (long long k = 0; k < (long long)N; ++k) {
        const int i = (int)(k % n);
        const double av = (i == 0) ? 0.0 : 2.0 * u01(seed, k, 0) - 1.0;
        const double cv = (i == n - 1) ? 0.0 : 2.0 * u01(seed, k, 1) - 1.0;
        const double bv = (std::fabs(av) + std::fabs(cv) + 0.5 + u01(seed, k, 2)) *
                          (u01(seed, k, 3) < 0.5 ? -1.0 : 1.0);
        a[k] = (T)av, b[k] = (T)bv, c[k] = (T)cv, d[k] = (T)(2.0 * u01(seed, k, 4) - 1.0);
    }
    std::vector<double> bb(b, b + N), cc(c, c + N), x(d, d + N);
    CS_CHECK_OK(cs_thomas_solve_serial(nsys, n, a, bb.data(), cc.data(), x.data()));
    std::vector<T> t(4 * N), tx(N);
    for (size_t k = 0; k < 4 * N; ++k) t[k] = (T)h[k];
    for (size_t k = 0; k < N; ++k) {
        tx[k] = (T)x[k];
        P.ref_max = std::max(P.ref_max, std::fabs(x[k]));
    }
    CUDA_CHECK(cudaMalloc(&P.pristine, (size_t)P.R * set_bytes));
    CUDA_CHECK(cudaMalloc(&P.slots, (size_t)P.R * set_bytes));
    CUDA_CHECK(cudaMalloc(&P.ref, N * sizeof(T)));
    CUDA_CHECK(cudaMemcpy(P.pristine, t.data(), set_bytes, cudaMemcpyHostToDevice));
    for (int r = 1; r < P.R; ++r)
        CUDA_CHECK(cudaMemcpy(P.pristine + (size_t)r * 4 * N, P.pristine, set_bytes,
                              cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(P.ref, tx.data(), N * sizeof(T), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMalloc(&P.derr, sizeof *P.derr));
    P.work_bytes = cs_thomas_gpu_chunked_workspace(nsys, n, sizeof(T) == 8 ? CS_THOMAS_GPU_F64
                                                                           : CS_THOMAS_GPU_F32);
    CUDA_CHECK(cudaMalloc(&P.work, P.work_bytes ? P.work_bytes : 16));
    P.swork_bytes = cs_thomas_gpu_scan_workspace(nsys, n, sizeof(T) == 8 ? CS_THOMAS_GPU_F64
                                                                        : CS_THOMAS_GPU_F32);
    CUDA_CHECK(cudaMalloc(&P.swork, P.swork_bytes ? P.swork_bytes : 16));
    if (host_out) host_out->swap(h);
    return P;
}

template <typename T> static void free_point(Point<T> &P)
{
    CUDA_CHECK(cudaFree(P.pristine));
    CUDA_CHECK(cudaFree(P.slots));
    CUDA_CHECK(cudaFree(P.ref));
    CUDA_CHECK(cudaFree(P.derr));
    CUDA_CHECK(cudaFree(P.work));
    CUDA_CHECK(cudaFree(P.swork));
    if (P.spbuf) CUDA_CHECK(cudaFree(P.spbuf));
}

/* ---- the solvers -------------------------------------------------------------------------- */
enum Solver { S_CHUNKED, S_SCAN, S_AUTO, S_FLAT, S_GTSV2, S_GTSV2_NOPIVOT, S_GTSV2_STRIDED, S_COUNT };
static const char *k_solver_name[S_COUNT] = {"chunked", "scan",          "auto",             "flat",
                                             "gtsv2",   "gtsv2_nopivot", "gtsv2StridedBatch"};

static void sp_size(Solver s, int nsys, int n, const double *a, const double *b, const double *c,
                    const double *d, size_t *bytes)
{
    if (s == S_GTSV2) CUSPARSE_CHECK(cusparseDgtsv2_bufferSizeExt(g_sp, n, 1, a, b, c, d, n, bytes));
    if (s == S_GTSV2_NOPIVOT)
        CUSPARSE_CHECK(cusparseDgtsv2_nopivot_bufferSizeExt(g_sp, n, 1, a, b, c, d, n, bytes));
    if (s == S_GTSV2_STRIDED)
        CUSPARSE_CHECK(cusparseDgtsv2StridedBatch_bufferSizeExt(g_sp, n, a, b, c, d, nsys, n, bytes));
}
static void sp_size(Solver s, int nsys, int n, const float *a, const float *b, const float *c,
                    const float *d, size_t *bytes)
{
    if (s == S_GTSV2) CUSPARSE_CHECK(cusparseSgtsv2_bufferSizeExt(g_sp, n, 1, a, b, c, d, n, bytes));
    if (s == S_GTSV2_NOPIVOT)
        CUSPARSE_CHECK(cusparseSgtsv2_nopivot_bufferSizeExt(g_sp, n, 1, a, b, c, d, n, bytes));
    if (s == S_GTSV2_STRIDED)
        CUSPARSE_CHECK(cusparseSgtsv2StridedBatch_bufferSizeExt(g_sp, n, a, b, c, d, nsys, n, bytes));
}
static void sp_solve(Solver s, int nsys, int n, double *a, double *b, double *c, double *d, void *buf)
{
    if (s == S_GTSV2) CUSPARSE_CHECK(cusparseDgtsv2(g_sp, n, 1, a, b, c, d, n, buf));
    if (s == S_GTSV2_NOPIVOT) CUSPARSE_CHECK(cusparseDgtsv2_nopivot(g_sp, n, 1, a, b, c, d, n, buf));
    if (s == S_GTSV2_STRIDED)
        CUSPARSE_CHECK(cusparseDgtsv2StridedBatch(g_sp, n, a, b, c, d, nsys, n, buf));
}
static void sp_solve(Solver s, int nsys, int n, float *a, float *b, float *c, float *d, void *buf)
{
    if (s == S_GTSV2) CUSPARSE_CHECK(cusparseSgtsv2(g_sp, n, 1, a, b, c, d, n, buf));
    if (s == S_GTSV2_NOPIVOT) CUSPARSE_CHECK(cusparseSgtsv2_nopivot(g_sp, n, 1, a, b, c, d, n, buf));
    if (s == S_GTSV2_STRIDED)
        CUSPARSE_CHECK(cusparseSgtsv2StridedBatch(g_sp, n, a, b, c, d, nsys, n, buf));
}
static void ours(cs_thomas_gpu_variant v, int nsys, int n, double *a, double *b, double *c, double *d)
{
    CS_CHECK_OK(cs_thomas_gpu_solve_d(v, nsys, n, a, b, c, d, CS_THOMAS_GPU_DEVICE_PTRS));
}
static void ours(cs_thomas_gpu_variant v, int nsys, int n, float *a, float *b, float *c, float *d)
{
    CS_CHECK_OK(cs_thomas_gpu_solve_f(v, nsys, n, a, b, c, d, CS_THOMAS_GPU_DEVICE_PTRS));
}
static void chunked(int nsys, int n, double *a, double *b, double *c, double *d, void *w, size_t wb)
{
    CS_CHECK_OK(cs_thomas_gpu_chunked_d(nsys, n, a, b, c, d, w, wb, NULL));
}
static void chunked(int nsys, int n, float *a, float *b, float *c, float *d, void *w, size_t wb)
{
    CS_CHECK_OK(cs_thomas_gpu_chunked_f(nsys, n, a, b, c, d, w, wb, NULL));
}
static void scan(int nsys, int n, double *a, double *b, double *c, double *d, void *w, size_t wb)
{
    CS_CHECK_OK(cs_thomas_gpu_scan_d(nsys, n, a, b, c, d, w, wb, NULL));
}
static void scan(int nsys, int n, float *a, float *b, float *c, float *d, void *w, size_t wb)
{
    CS_CHECK_OK(cs_thomas_gpu_scan_f(nsys, n, a, b, c, d, w, wb, NULL));
}

template <typename T> static void run_solver(Point<T> &P, Solver s, int slot)
{
    T *a = P.arr(slot, 0), *b = P.arr(slot, 1), *c = P.arr(slot, 2), *d = P.arr(slot, 3);
    switch (s) {
    case S_CHUNKED: chunked(P.nsys, P.n, a, b, c, d, P.work, P.work_bytes); break;
    case S_SCAN: scan(P.nsys, P.n, a, b, c, d, P.swork, P.swork_bytes); break;
    case S_AUTO: ours(CS_THOMAS_GPU_AUTO, P.nsys, P.n, a, b, c, d); break;
    case S_FLAT: ours(CS_THOMAS_GPU_FLAT, P.nsys, P.n, a, b, c, d); break;
    default: sp_solve(s, P.nsys, P.n, a, b, c, d, P.spbuf); break;
    }
}

/* Median time [ms] of solver s on P (NAN when it did not run); checks every result. */
template <typename T> static double time_solver(Point<T> &P, Solver s)
{
    if (s >= S_GTSV2) {
        size_t bytes = 0;
        sp_size(s, P.nsys, P.n, P.arr(0, 0), P.arr(0, 1), P.arr(0, 2), P.arr(0, 3), &bytes);
        if (P.spbuf) CUDA_CHECK(cudaFree(P.spbuf));
        CUDA_CHECK(cudaMalloc(&P.spbuf, bytes ? bytes : 16));
    }
    const size_t N = P.N;
    CUDA_CHECK(cudaMemcpy(P.slots, P.pristine, (size_t)P.R * 4 * N * sizeof(T),
                          cudaMemcpyDeviceToDevice));
    std::vector<cudaEvent_t> ev(2 * (g_reps + 1));
    for (auto &e : ev) CUDA_CHECK(cudaEventCreate(&e));
    for (int k = 0; k <= g_reps; ++k) { /* slot 0: the warm-up */
        CUDA_CHECK(cudaEventRecord(ev[2 * k]));
        run_solver<T>(P, s, k);
        CUDA_CHECK(cudaEventRecord(ev[2 * k + 1]));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> t;
    double worst = 0.0;
    for (int k = 0; k <= g_reps; ++k) {
        float ms = 0.f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * k], ev[2 * k + 1]));
        if (k > 0) t.push_back(ms);
        double e = max_err_dev<T>(N, P.arr(k, 3), P.ref, P.derr);
        e = P.ref_max > 0 ? e / P.ref_max : e;
        if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
    }
    for (auto &e : ev) CUDA_CHECK(cudaEventDestroy(e));
    const double tol = sizeof(T) == 8 ? 1e-12 : 1e-5;
    if (!(worst <= tol)) {
        ++g_failures;
        fprintf(stderr, "CHECK FAILED: %s nsys=%d n=%d %s: rel err %.3e\n", k_solver_name[s],
                P.nsys, P.n, sizeof(T) == 8 ? "double" : "float", worst);
    }
    return median(t);
}

/* CPU wall clock [ms], median of 3, double: serial Thomas or the OpenMP chunked hybrid. */
static double time_cpu(bool chunked_omp, int nsys, int n, const std::vector<double> &h)
{
    const size_t N = (size_t)nsys * n;
    std::vector<double> b(N), c(N), d(N), t;
    for (int k = 0; k < 3; ++k) {
        memcpy(b.data(), h.data() + N, N * sizeof(double));
        memcpy(c.data(), h.data() + 2 * N, N * sizeof(double));
        memcpy(d.data(), h.data() + 3 * N, N * sizeof(double));
        const double t0 = now_s();
        if (chunked_omp)
            CS_CHECK_OK(cs_thomas_solve_chunked_omp(nsys, n, 0, h.data(), b.data(), c.data(), d.data()));
        else
            CS_CHECK_OK(cs_thomas_solve_serial(nsys, n, h.data(), b.data(), c.data(), d.data()));
        t.push_back((now_s() - t0) * 1e3);
    }
    return median(t);
}

static std::string fmt_ms(double ms)
{
    char buf[32];
    if (std::isnan(ms)) return "–";
    snprintf(buf, sizeof buf, ms < 0.1 ? "%.4f" : ms < 10 ? "%.3f" : "%.1f", ms);
    return buf;
}

/* One table: rows (nsys, n), columns: our solvers, then cuSPARSE's, then the CPU (double). */
template <typename T>
static void run_table(const std::vector<std::pair<int, int>> &shapes, const std::vector<Solver> &sv,
                      uint64_t seed)
{
    const bool dbl = sizeof(T) == 8;
    emit("\n| nsys | n | rows | ");
    for (Solver s : sv) emit("%s [ms] | ", k_solver_name[s]);
    emit("chunked GB/s (%% copy) | chunked vs best cuSPARSE |%s\n", dbl ? " CPU serial [ms] | CPU chunked_omp [ms] |" : "");
    emit("|---:|---:|---:|");
    for (size_t i = 0; i < sv.size() + 2 + (dbl ? 2 : 0); ++i) emit("---:|");
    emit("\n");
    for (auto sh : shapes) {
        std::vector<double> h;
        Point<T> P = make_point<T>(sh.first, sh.second, seed++, dbl ? &h : nullptr);
        std::vector<double> ms(S_COUNT, NAN);
        for (Solver s : sv) {
            if (s == S_FLAT && P.N > (1u << 14)) continue; /* one thread: seconds at 2^24 */
            ms[s] = time_solver<T>(P, s);
        }
        double best_sp = NAN;
        for (Solver s : {S_GTSV2, S_GTSV2_NOPIVOT, S_GTSV2_STRIDED})
            if (!std::isnan(ms[s]) && !(ms[s] >= best_sp)) best_sp = ms[s];
        const double gbs = 5.0 * P.N * sizeof(T) / (ms[S_CHUNKED] * 1e-3) / 1e9;
        emit("| %d | %d | 2^%.1f | ", P.nsys, P.n, std::log2((double)P.N));
        for (Solver s : sv) emit("%s | ", fmt_ms(ms[s]).c_str());
        emit("%.0f (%.0f %%) | %.2f× |", gbs, 100.0 * gbs / g_copy_gbs, best_sp / ms[S_CHUNKED]);
        {
            char pt[96];
            snprintf(pt, sizeof pt, " %s nsys=%d n=2^%.1f", dbl ? "double" : "float", P.nsys,
                     std::log2((double)P.n));
            const double best_ours = std::fmin(ms[S_CHUNKED], ms[S_AUTO]);
            if (P.nsys == 1 && P.n >= (1 << 20)) {
                ++g_t3_pts;
                if (best_sp / best_ours >= 3.0) ++g_t3_met;
                else g_t3_miss += std::string(pt) + " (" + std::to_string(best_sp / best_ours).substr(0, 4) + "×)";
            }
            if (P.N >= ((size_t)1 << 24)) {
                ++g_bw_pts;
                if (100.0 * gbs / g_copy_gbs >= 50.0) ++g_bw_met;
                else g_bw_miss += std::string(pt) + " (" + std::to_string((int)(100.0 * gbs / g_copy_gbs)) + " %)";
            }
            if (ms[S_AUTO] > best_sp) g_slower += std::string(pt) + " (auto " + fmt_ms(ms[S_AUTO]) + " vs " + fmt_ms(best_sp) + " ms)";
        }
        if (dbl)
            emit(" %s | %s |", fmt_ms(time_cpu(false, P.nsys, P.n, h)).c_str(),
                 fmt_ms(time_cpu(true, P.nsys, P.n, h)).c_str());
        emit("\n");
        fflush(stdout);
        free_point(P);
    }
}

/* ---- the bridge: one system over D partitions on D streams ------------------------------- */
/* Median time [ms] of cs_thomas_gpu_bridge_d on P (double) with D partitions; events on the
 * default stream around the call, the partition streams joined back into it. */
static double time_bridge(Point<double> &P, int D, cs_thomas_bridge_sync sync)
{
    const size_t wb = cs_thomas_gpu_bridge_workspace(P.nsys, P.n, D);
    if (wb == 0) return NAN;
    void *work = nullptr, *streams[8];
    CUDA_CHECK(cudaMalloc(&work, wb));
    for (int p = 0; p < D; ++p) CS_CHECK_OK(cs_thomas_gpu_stream_create(&streams[p]));
    std::vector<cudaEvent_t> ev(2 * (g_reps + 1)), joined(D);
    for (auto &e : ev) CUDA_CHECK(cudaEventCreate(&e));
    for (auto &e : joined) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CUDA_CHECK(cudaMemcpy(P.slots, P.pristine, (size_t)P.R * 4 * P.N * sizeof(double),
                          cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int k = 0; k <= g_reps; ++k) {
        CUDA_CHECK(cudaEventRecord(ev[2 * k], 0));
        for (int p = 0; p < D; ++p) CUDA_CHECK(cudaStreamWaitEvent((cudaStream_t)streams[p], ev[2 * k], 0));
        CS_CHECK_OK(cs_thomas_gpu_bridge_d(P.nsys, P.n, D, sync, P.arr(k, 0), P.arr(k, 1), P.arr(k, 2),
                                           P.arr(k, 3), work, wb, streams));
        for (int p = 0; p < D; ++p) {
            CUDA_CHECK(cudaEventRecord(joined[p], (cudaStream_t)streams[p]));
            CUDA_CHECK(cudaStreamWaitEvent(0, joined[p], 0));
        }
        CUDA_CHECK(cudaEventRecord(ev[2 * k + 1], 0));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> t;
    double worst = 0.0;
    for (int k = 0; k <= g_reps; ++k) {
        float ms = 0.f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * k], ev[2 * k + 1]));
        if (k > 0) t.push_back(ms);
        double e = max_err_dev<double>(P.N, P.arr(k, 3), P.ref, P.derr);
        e /= P.ref_max;
        if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
    }
    if (!(worst <= 1e-12)) {
        ++g_failures;
        fprintf(stderr, "CHECK FAILED: bridge D=%d %s n=%d: rel err %.3e\n", D, sync ? "device" : "host", P.n, worst);
    }
    for (auto &e : ev) CUDA_CHECK(cudaEventDestroy(e));
    for (auto &e : joined) CUDA_CHECK(cudaEventDestroy(e));
    for (int p = 0; p < D; ++p) CS_CHECK_OK(cs_thomas_gpu_stream_destroy(streams[p]));
    CUDA_CHECK(cudaFree(work));
    return median(t);
}

static void run_bridge(const std::vector<int> &ns)
{
    emit("\n### The bridge: one system over D partitions on D streams of one GPU, double\n\n");
    emit("Each partition reduces its rows on its own stream; the 2D bridge rows are solved on the "
         "host (host-driven: the host waits, solves, launches the substitutions) or by every "
         "stream after waiting on the others' events (device-side). Times include the streams' "
         "fork and join on the default stream; `chunked` is the same system on one stream.\n\n");
    emit("| n | chunked [ms] |");
    for (int D : {1, 2, 4, 8}) emit(" D=%d host [ms] | D=%d device [ms] |", D, D);
    emit("\n|---:|---:|");
    for (int i = 0; i < 8; ++i) emit("---:|");
    emit("\n");
    for (int n : ns) {
        Point<double> P = make_point<double>(1, n, 600 + n % 97, nullptr);
        emit("| 2^%.0f | %s |", std::log2((double)n), fmt_ms(time_solver<double>(P, S_CHUNKED)).c_str());
        for (int D : {1, 2, 4, 8})
            emit(" %s | %s |", fmt_ms(time_bridge(P, D, CS_THOMAS_BRIDGE_HOST)).c_str(),
                 fmt_ms(time_bridge(P, D, CS_THOMAS_BRIDGE_DEVICE)).c_str());
        emit("\n");
        fflush(stdout);
        free_point(P);
    }
}

/* ---- block-tridiagonal batches ---------------------------------------------------------- */
/* nsys systems of nb block rows of k×k blocks, block diagonally dominant as in tests/test_block.h;
 * both GPU variants (each in its layout, the inputs converted once, untimed) against the CPU
 * block Thomas, serial (the reference) and OpenMP. Compulsory bytes: A, B, C, d read, x written:
 * (3k² + 2k)·8 per block row. */
/* A random block diagonally dominant batch [A | B | C | d] (Flat) into h. */
static void gen_block(int k, int nsys, int nb, uint64_t seed, std::vector<double> &h)
{
    const size_t kk = (size_t)k * k, rows = (size_t)nsys * nb, nblk = rows * kk, nvec = rows * k;
    h.assign(3 * nblk + nvec, 0.0);
    double *A = h.data(), *B = A + nblk, *C = B + nblk, *d = C + nblk;
#pragma omp parallel for schedule(static)
    for (long long r = 0; r < (long long)rows; ++r) {
        const int i = (int)(r % nb);
        for (int a = 0; a < k; ++a) {
            double sum = 0.0;
            for (int c = 0; c < k; ++c) {
                const size_t e = r * kk + a * k + c;
                A[e] = i > 0 ? 2.0 * u01(seed, e, 0) - 1.0 : 0.0;
                C[e] = i < nb - 1 ? 2.0 * u01(seed, e, 1) - 1.0 : 0.0;
                B[e] = c != a ? 2.0 * u01(seed, e, 2) - 1.0 : 0.0;
                sum += std::fabs(A[e]) + std::fabs(B[e]) + std::fabs(C[e]);
            }
            B[r * kk + a * k + a] = (sum + 0.5 + u01(seed, r * k + a, 3)) * (u01(seed, r * k + a, 4) < 0.5 ? -1.0 : 1.0);
            d[r * k + a] = 2.0 * u01(seed, r * k + a, 5) - 1.0;
        }
    }
}

static void run_block(int k, int nsys, int nb, uint64_t seed)
{
    const size_t kk = (size_t)k * k, rows = (size_t)nsys * nb, nblk = rows * kk, nvec = rows * k;
    const size_t set = 3 * nblk + nvec; /* doubles per input set [A | B | C | d] */
    std::vector<double> h;
    gen_block(k, nsys, nb, seed, h);
    double *A = h.data(), *B = A + nblk, *C = B + nblk, *d = C + nblk;
    /* CPU: serial (the reference) and OpenMP, median of 3 */
    std::vector<double> Cw(nblk), x(nvec), ts, to;
    for (int rep = 0; rep < 3; ++rep)
        for (int omp = 0; omp < 2; ++omp) {
            memcpy(Cw.data(), C, nblk * sizeof(double));
            memcpy(x.data(), d, nvec * sizeof(double));
            const double t0 = now_s();
            CS_CHECK_OK(omp ? cs_block_thomas_solve_omp(k, nsys, nb, A, B, Cw.data(), x.data())
                            : cs_block_thomas_solve_serial(k, nsys, nb, A, B, Cw.data(), x.data()));
            (omp ? to : ts).push_back((now_s() - t0) * 1e3);
        }
    double ref_max = 0.0;
    for (double v : x) ref_max = std::max(ref_max, std::fabs(v));
    /* GPU: pristine sets per layout, R copies, the reference in both layouts */
    const int R = g_reps + 1;
    double *pr[2], *sl[2], *ref[2], *tmp;
    unsigned long long *derr;
    CUDA_CHECK(cudaMalloc(&tmp, set * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&derr, sizeof *derr));
    CUDA_CHECK(cudaMemcpy(tmp, h.data(), set * sizeof(double), cudaMemcpyHostToDevice));
    for (int l = 0; l < 2; ++l) {
        CUDA_CHECK(cudaMalloc(&pr[l], R * set * sizeof(double)));
        CUDA_CHECK(cudaMalloc(&sl[l], R * set * sizeof(double)));
        CUDA_CHECK(cudaMalloc(&ref[l], nvec * sizeof(double)));
        if (l == 0) {
            CUDA_CHECK(cudaMemcpy(pr[0], tmp, set * sizeof(double), cudaMemcpyDeviceToDevice));
            CUDA_CHECK(cudaMemcpy(ref[0], x.data(), nvec * sizeof(double), cudaMemcpyHostToDevice));
        } else {
            for (int j = 0; j < 3; ++j)
                CS_CHECK_OK(cs_thomas_gpu_flat_to_interleaved_d(nsys, (int)(nb * kk), tmp + j * nblk, pr[1] + j * nblk));
            CS_CHECK_OK(cs_thomas_gpu_flat_to_interleaved_d(nsys, nb * k, tmp + 3 * nblk, pr[1] + 3 * nblk));
            CUDA_CHECK(cudaMemcpy(tmp, x.data(), nvec * sizeof(double), cudaMemcpyHostToDevice));
            CS_CHECK_OK(cs_thomas_gpu_flat_to_interleaved_d(nsys, nb * k, tmp, ref[1]));
        }
        for (int r = 1; r < R; ++r)
            CUDA_CHECK(cudaMemcpy(pr[l] + r * set, pr[l], set * sizeof(double), cudaMemcpyDeviceToDevice));
    }
    double ms[2];
    for (int l = 0; l < 2; ++l) {
        CUDA_CHECK(cudaMemcpy(sl[l], pr[l], R * set * sizeof(double), cudaMemcpyDeviceToDevice));
        std::vector<cudaEvent_t> ev(2 * R);
        for (auto &e : ev) CUDA_CHECK(cudaEventCreate(&e));
        for (int r = 0; r < R; ++r) {
            double *q = sl[l] + r * set;
            CUDA_CHECK(cudaEventRecord(ev[2 * r]));
            CS_CHECK_OK(cs_block_thomas_gpu_solve_d((cs_block_gpu_variant)l, k, nsys, nb, q, q + nblk,
                                                    q + 2 * nblk, q + 3 * nblk, CS_THOMAS_GPU_DEVICE_PTRS));
            CUDA_CHECK(cudaEventRecord(ev[2 * r + 1]));
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<double> t;
        double worst = 0.0;
        for (int r = 0; r < R; ++r) {
            float f = 0.f;
            CUDA_CHECK(cudaEventElapsedTime(&f, ev[2 * r], ev[2 * r + 1]));
            if (r > 0) t.push_back(f);
            double e = max_err_dev<double>(nvec, sl[l] + r * set + 3 * nblk, ref[l], derr);
            e /= ref_max;
            if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
        }
        for (auto &e : ev) CUDA_CHECK(cudaEventDestroy(e));
        if (!(worst <= 1e-12)) {
            ++g_failures;
            fprintf(stderr, "CHECK FAILED: block %s k=%d: rel err %.3e\n",
                    cs_block_gpu_variant_name((cs_block_gpu_variant)l), k, worst);
        }
        ms[l] = median(t);
    }
    const double bytes = (3.0 * kk + 2.0 * k) * rows * sizeof(double);
    const double best = std::min(ms[0], ms[1]), gbs = bytes / (best * 1e-3) / 1e9;
    emit("| %d | %d | %d | %s | %s | %.0f (%.0f %%) | %s | %s |\n", k, nsys, nb, fmt_ms(ms[0]).c_str(),
         fmt_ms(ms[1]).c_str(), gbs, 100.0 * gbs / g_copy_gbs, fmt_ms(median(ts)).c_str(),
         fmt_ms(median(to)).c_str());
    fflush(stdout);
    for (int l = 0; l < 2; ++l) {
        CUDA_CHECK(cudaFree(pr[l]));
        CUDA_CHECK(cudaFree(sl[l]));
        CUDA_CHECK(cudaFree(ref[l]));
    }
    CUDA_CHECK(cudaFree(tmp));
    CUDA_CHECK(cudaFree(derr));
}

/* One large block system of nb block rows: the GPU chunked hybrid (device pointers) through
 *   ws        cs_block_thomas_gpu_chunked_ws_d: the caller's workspace (allocated once, outside
 *             the timing), the default stream, the staged kernels;
 *   ws, per-thread kernels: the same call with CS_BLOCK_CHUNKED_STAGED=0 (session 17's kernels:
 *             one thread per chunk, global memory read directly);
 *   allocating  cs_block_thomas_gpu_chunked_d (cudaMalloc + cudaFree of the workspace inside
 *             the timed call; staged kernels);
 * each median of g_reps after a warm-up, every result checked against the CPU serial block
 * Thomas (the reference, 1e-12); CPU serial and CPU chunked hybrid (OpenMP), median of 3. */
enum BlockCall { BL_WS = 0, BL_WS_PER_THREAD, BL_ALLOC, BL_NCALLS };
static const char *const k_block_call[BL_NCALLS] = {"ws (caller workspace), staged",
                                                   "ws, per-thread kernels (session 17)",
                                                   "allocating call, staged"};

/* Median time [ms] of one call kind on R prepared copies (slot r at sl + r·set, restored from
 * pr untimed first); *worst: the worst rel err against ref. */
static double time_block_large(BlockCall call, int k, int nb, size_t set, int R, const double *pr,
                               double *sl, const double *ref, double ref_max,
                               unsigned long long *derr, double *worst)
{
    const size_t kk = (size_t)k * k, nblk = (size_t)nb * kk, nvec = (size_t)nb * k;
    CUDA_CHECK(cudaMemcpy(sl, pr, (size_t)R * set * sizeof(double), cudaMemcpyDeviceToDevice));
    const size_t wb = cs_block_thomas_gpu_chunked_workspace(k, 1, nb);
    void *work = NULL;
    CUDA_CHECK(cudaMalloc(&work, wb));
    setenv("CS_BLOCK_CHUNKED_STAGED", call == BL_WS_PER_THREAD ? "0" : "1", 1);
    std::vector<cudaEvent_t> ev(2 * (g_reps + 1));
    for (auto &e : ev) CUDA_CHECK(cudaEventCreate(&e));
    for (int r = 0; r <= g_reps; ++r) {
        double *q = sl + (size_t)(r % R) * set;
        CUDA_CHECK(cudaEventRecord(ev[2 * r]));
        if (call == BL_ALLOC)
            CS_CHECK_OK(cs_block_thomas_gpu_chunked_d(k, 1, nb, q, q + nblk, q + 2 * nblk, q + 3 * nblk,
                                                      CS_THOMAS_GPU_DEVICE_PTRS));
        else
            CS_CHECK_OK(cs_block_thomas_gpu_chunked_ws_d(k, 1, nb, q, q + nblk, q + 2 * nblk, q + 3 * nblk,
                                                         work, wb, NULL));
        CUDA_CHECK(cudaEventRecord(ev[2 * r + 1]));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    unsetenv("CS_BLOCK_CHUNKED_STAGED");
    std::vector<double> t;
    *worst = 0.0;
    for (int r = 0; r <= g_reps; ++r) {
        float f = 0.f;
        CUDA_CHECK(cudaEventElapsedTime(&f, ev[2 * r], ev[2 * r + 1]));
        if (r > 0) t.push_back(f);
        double e = max_err_dev<double>(nvec, sl + (size_t)(r % R) * set + 3 * nblk, ref, derr);
        e /= ref_max;
        if (!(e <= *worst)) *worst = std::isnan(e) ? INFINITY : e;
    }
    for (auto &e : ev) CUDA_CHECK(cudaEventDestroy(e));
    CUDA_CHECK(cudaFree(work));
    if (!(*worst <= 1e-12)) {
        ++g_failures;
        fprintf(stderr, "CHECK FAILED: block chunked (%s) k=%d nb=%d: rel err %.3e\n", k_block_call[call], k,
                nb, *worst);
    }
    return median(t);
}

static void run_block_large(int k, int nb, uint64_t seed)
{
    const size_t kk = (size_t)k * k, nblk = (size_t)nb * kk, nvec = (size_t)nb * k;
    const size_t set = 3 * nblk + nvec;
    std::vector<double> h;
    gen_block(k, 1, nb, seed, h);
    const double *A = h.data(), *B = A + nblk, *C = B + nblk, *d = C + nblk;
    std::vector<double> Cw(nblk), x(nvec), y(nvec), ts, to;
    for (int rep = 0; rep < 3; ++rep)
        for (int omp = 0; omp < 2; ++omp) {
            memcpy(Cw.data(), C, nblk * sizeof(double));
            memcpy(omp ? y.data() : x.data(), d, nvec * sizeof(double));
            const double t0 = now_s();
            CS_CHECK_OK(omp ? cs_block_thomas_solve_chunked_omp(k, 1, nb, A, B, Cw.data(), y.data())
                            : cs_block_thomas_solve_serial(k, 1, nb, A, B, Cw.data(), x.data()));
            (omp ? to : ts).push_back((now_s() - t0) * 1e3);
        }
    double ref_max = 0.0;
    for (double v : x) ref_max = std::max(ref_max, std::fabs(v));
    /* enough copies that a solve never finds its inputs in L2 (>= 3× L2 in all) */
    const int R = std::max(g_reps + 1, (int)((3 * g_l2 + set * 8 - 1) / (set * 8)));
    double *pr, *sl, *ref;
    unsigned long long *derr;
    CUDA_CHECK(cudaMalloc(&pr, (size_t)R * set * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&sl, (size_t)R * set * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&ref, nvec * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&derr, sizeof *derr));
    CUDA_CHECK(cudaMemcpy(pr, h.data(), set * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(ref, x.data(), nvec * sizeof(double), cudaMemcpyHostToDevice));
    for (int r = 1; r < R; ++r)
        CUDA_CHECK(cudaMemcpy(pr + (size_t)r * set, pr, set * sizeof(double), cudaMemcpyDeviceToDevice));
    const double bytes = (3.0 * kk + 2.0 * k) * nb * sizeof(double);
    for (int c = 0; c < BL_NCALLS; ++c) {
        double worst = 0.0;
        const double ms = time_block_large((BlockCall)c, k, nb, set, R, pr, sl, ref, ref_max, derr, &worst);
        const double gbs = bytes / (ms * 1e-3) / 1e9;
        emit("| %d | %d | %s | %s | %.0f (%.1f %%) | %s | %s | %.2e |\n", k, nb, k_block_call[c],
             fmt_ms(ms).c_str(), gbs, 100.0 * gbs / g_copy_gbs, c ? "″" : fmt_ms(median(ts)).c_str(),
             c ? "″" : fmt_ms(median(to)).c_str(), worst);
        fflush(stdout);
    }
    CUDA_CHECK(cudaFree(pr));
    CUDA_CHECK(cudaFree(sl));
    CUDA_CHECK(cudaFree(ref));
    CUDA_CHECK(cudaFree(derr));
}

/* The table of one large block system (k = 2, 3, 4). */
static void block_large_table(void)
{
    emit("\n### One large block-tridiagonal system (chunked hybrid), double\n\n");
    emit("One system of nb block rows: chunks of 16 block rows, the chunks' end rows solved the same "
         "way down to 64 rows, then substitution (solver/cs_block_large_gpu.cu). Staged kernels: a "
         "warp's rows through shared memory with coalesced loads, the reduce on two lanes per chunk; "
         "per-thread: one thread per chunk (session 17). `ws`: the caller's workspace "
         "(cs_block_thomas_gpu_chunked_ws_d); `allocating`: cs_block_thomas_gpu_chunked_d, whose "
         "time includes cudaMalloc/cudaFree of its workspace. GB/s: (3k² + 2k)·8 compulsory bytes per "
         "block row. Checked against the CPU serial block Thomas (1e-12); CPU chunked: the same "
         "hybrid, OpenMP.\n\n");
    emit("| k | nb | GPU call | GPU [ms] | GB/s (%% copy) | CPU serial [ms] | CPU chunked_omp [ms] | rel err |\n"
         "|---:|---:|---|---:|---:|---:|---:|---:|\n");
    for (int k = 2; k <= 4; ++k) run_block_large(k, g_quick ? 3000 : (1 << 20), 700 + k);
}

int main(int argc, char **argv)
{
    const char *outpath = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick"))
            g_quick = true;
        else if (!strcmp(argv[i], "--targets"))
            g_targets = true;
        else if (!strcmp(argv[i], "--block-large"))
            g_block_large = true;
        else if (argv[i][0] != '-')
            outpath = argv[i];
        else {
            fprintf(stderr, "usage: %s [--quick] [--targets | --block-large] [OUT.md]\n", argv[0]);
            return 2;
        }
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    if (outpath && !(g_out = fopen(outpath, "w"))) {
        perror(outpath);
        return 2;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    g_l2 = (size_t)prop.l2CacheSize;
    CUSPARSE_CHECK(cusparseCreate(&g_sp));
    int spver = 0, rt = 0;
    CUSPARSE_CHECK(cusparseGetVersion(g_sp, &spver));
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    g_copy_gbs = measure_copy_gbs(g_quick ? (64u << 20) : (size_t)1 << 30);

    emit("## Large tridiagonal systems: %s\n\n", prop.name);
    emit("Device: %s, %d SMs, L2 %zu MB, CUDA runtime %d, cuSPARSE %d, %d OpenMP threads. "
         "Device-to-device copy (read + write bytes): **%.0f GB/s**.\n",
         prop.name, prop.multiProcessorCount, g_l2 >> 20, rt, spver, omp_get_max_threads(), g_copy_gbs);
    emit("Times: CUDA events around one solve with device pointers, median of %d after a warm-up, "
         "inputs never in L2; every result checked against the CPU Thomas solve (1e-12 double, "
         "1e-5 float). GB/s: 5 compulsory arrays (a, b, c, d read, x written). `chunked` and "
         "`scan` take their workspace from the caller; `auto` is the variant call (library workspace; `warp` "
         "or `warp_staged` up to 1024 rows, `chunked` above); `flat` (one thread) only up to 2^14 rows.\n",
         g_reps);
    if (g_block_large) { /* --block-large: that table only */
        block_large_table();
        emit("\nChecks failed: %d\n", g_failures);
        if (g_out) fclose(g_out);
        CUSPARSE_CHECK(cusparseDestroy(g_sp));
        return g_failures ? 1 : 0;
    }

    std::vector<std::pair<int, int>> one, few;
    for (int e = 10; e <= (g_quick ? 14 : 26); e += (g_quick ? 4 : 1))
        if (!g_targets || e == 20 || e == 21 || e == 24 || e == 25) one.push_back({1, 1 << e});
    if (g_quick) few = {{4, 3000}};
    else few = {{2, 1 << 20}, {4, 1 << 20}, {8, 1 << 20}, {16, 1 << 16}, {32, 1 << 18},
                {64, 1 << 14}, {64, 1 << 18}, {64, 1 << 20}};
    const std::vector<Solver> s1 = {S_CHUNKED, S_SCAN, S_AUTO, S_FLAT, S_GTSV2, S_GTSV2_NOPIVOT};
    const std::vector<Solver> s2 = {S_CHUNKED, S_SCAN, S_AUTO, S_GTSV2_STRIDED};

    emit("\n### One system, double\n");
    run_table<double>(one, s1, 100);
    emit("\n### One system, float\n");
    run_table<float>(one, s1, 200);
    if (g_targets) { /* the issue's sizes only: the dependent launch, then the targets */
        goto targets;
    }
    emit("\n### A few systems (batched cuSPARSE, no pivoting), double\n");
    run_table<double>(few, s2, 300);
    emit("\n### A few systems, float\n");
    run_table<float>(few, s2, 400);


    if (g_quick) run_bridge({5000});
    else run_bridge({1 << 16, 1 << 20, 1 << 24});

    emit("\n### Block-tridiagonal batches (k×k blocks), double\n\n");
    emit("One thread per system; GB/s: (3k² + 2k)·8 bytes per block row (A, B, C, d read, x "
         "written) over the faster variant's time; results checked against the CPU block Thomas "
         "(1e-12). CPU: block Thomas, serial and OpenMP.\n\n");
    emit("| k | nsys | nb | flat [ms] | interleaved [ms] | best GB/s (%% copy) | CPU serial [ms] | "
         "CPU OpenMP [ms] |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 2; k <= 4; ++k) run_block(k, g_quick ? 1000 : 16384, g_quick ? 9 : 64, 500 + k);

    block_large_table();

targets:
    emit("\n### Targets (issue 29)\n\n");
    emit("- >= 3× the faster cuSPARSE, one system, n >= 2^20 (best of chunked and auto): met at %d of %d points%s%s\n",
         g_t3_met, g_t3_pts, g_t3_miss.empty() ? "" : "; missed:", g_t3_miss.c_str());
    emit("- >= 50 %% of copy (5 arrays, chunked) at >= 2^24 rows: met at %d of %d points%s%s\n", g_bw_met,
         g_bw_pts, g_bw_miss.empty() ? "" : "; missed:", g_bw_miss.c_str());
    emit("- auto slower than the faster cuSPARSE at: %s\n", g_slower.empty() ? "no point" : g_slower.c_str());
    emit("\nChecks failed: %d\n", g_failures);
    if (g_out) fclose(g_out);
    CUSPARSE_CHECK(cusparseDestroy(g_sp));
    return g_failures ? 1 : 0;
}
