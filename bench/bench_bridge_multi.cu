/* Benchmark of the bridge across devices (cs_thomas_gpu_bridge_multi_d/_f,
 * solver/cs_thomas_bridge_multi_gpu.cu): one system of n = 2^24, 2^25, 2^26 rows (double) and
 * 2^26 (float) split evenly over
 *   D = 1           one partition on device 0 (the reference of the speed-up),
 *   D = 2 on 1 GPU  two partitions on device 0, two streams (the algorithm's own cost),
 *   D = count       one partition per device (only with 2 devices or more),
 * both synchronisations. Each partition's arrays live on its device (allocated there, untimed).
 * Then one peer copy of a partition's bridge rows (8 numbers) and a large peer copy, device 1 to
 * device 0.
 *
 * Method: random diagonally dominant systems (a[0] = c[n-1] = 0); CUDA events on device 0's
 * stream around each solve (every other stream waits for the start event, device 0's stream for
 * every stream's end: the fork and join across devices are timed), and the wall time from before
 * the call to the last stream's end; one warm-up, then the median of 7. d is restored (untimed)
 * before every solve; a, b, c are not written. Every solve is checked on each device against the
 * CPU Thomas solve in double of the (precision-rounded) inputs: max|x - ref| / max|ref| <= 1e-12
 * double, 1e-5 float. % copy: 5 compulsory arrays (a, b, c, d read, x written) over the time,
 * against the sum of the device-to-device copy bandwidths of the devices used (measured here).
 *
 * Usage: bench_bridge_multi [--quick] [OUTFILE.md]   (--quick: n = 2^16 and 100003, for the
 *        sanitizer) */
#include <omp.h>

#include <cstring>
#include <string>

#include "cs_solver.h"
#include "cs_thomas_gpu.h"

#include "bench_common.cuh"

static const int g_reps = 7;
static int g_failures = 0;
static bool g_quick = false;
static double g_copy[64]; /* copy bandwidth of each device [GB/s] */

/* The system (double; the rows of all partitions), its reference solution. */
struct Host {
    size_t N = 0;
    std::vector<double> a, b, c, d, x;
    double xmax = 0.0;
};

template <typename T> static Host make_host(size_t N, uint64_t seed)
{
    Host H;
    H.N = N;
    H.a.resize(N), H.b.resize(N), H.c.resize(N), H.d.resize(N), H.x.resize(N);
#pragma omp parallel for schedule(static)
    for (long long k = 0; k < (long long)N; ++k) {
        const double av = (k == 0) ? 0.0 : 2.0 * u01(seed, k, 0) - 1.0;
        const double cv = (k == (long long)N - 1) ? 0.0 : 2.0 * u01(seed, k, 1) - 1.0;
        const double bv = (std::fabs(av) + std::fabs(cv) + 0.5 + u01(seed, k, 2)) *
                          (u01(seed, k, 3) < 0.5 ? -1.0 : 1.0);
        H.a[k] = (T)av, H.b[k] = (T)bv, H.c[k] = (T)cv, H.d[k] = (T)(2.0 * u01(seed, k, 4) - 1.0);
    }
    std::vector<double> bb(H.b), cc(H.c);
    H.x = H.d;
    CS_CHECK_OK(cs_thomas_solve_serial(1, (int)N, H.a.data(), bb.data(), cc.data(), H.x.data()));
    for (double v : H.x) H.xmax = std::max(H.xmax, std::fabs(v));
    return H;
}

/* One partition's device arrays. */
template <typename T> struct Part {
    int dev = 0, rows = 0;
    T *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr, *d0 = nullptr, *ref = nullptr;
    void *work = nullptr;
    size_t wb = 0;
    cudaStream_t st = nullptr;
    cudaEvent_t end = nullptr;
    unsigned long long *derr = nullptr;
};

template <typename T> static void to_dev(T *dst, const double *src, size_t n)
{
    std::vector<T> t(src, src + n);
    CUDA_CHECK(cudaMemcpy(dst, t.data(), n * sizeof(T), cudaMemcpyHostToDevice));
}

/* Median event time [ms] and wall time [ms] of the solve over D partitions on devs. */
template <typename T>
static void time_split(const Host &H, int D, const int *devs, cs_thomas_bridge_sync sync,
                       double *ms_ev, double *ms_wall)
{
    std::vector<Part<T>> P(D);
    size_t off = 0;
    for (int p = 0; p < D; ++p) {
        Part<T> &q = P[p];
        q.dev = devs[p], q.rows = (int)(H.N / D + (p < (int)(H.N % D) ? 1 : 0));
        const size_t m = (size_t)q.rows, bytes = m * sizeof(T);
        CUDA_CHECK(cudaSetDevice(q.dev));
        CUDA_CHECK(cudaMalloc(&q.a, bytes));
        CUDA_CHECK(cudaMalloc(&q.b, bytes));
        CUDA_CHECK(cudaMalloc(&q.c, bytes));
        CUDA_CHECK(cudaMalloc(&q.d, bytes));
        CUDA_CHECK(cudaMalloc(&q.d0, bytes));
        CUDA_CHECK(cudaMalloc(&q.ref, bytes));
        to_dev<T>(q.a, H.a.data() + off, m), to_dev<T>(q.b, H.b.data() + off, m);
        to_dev<T>(q.c, H.c.data() + off, m), to_dev<T>(q.d0, H.d.data() + off, m);
        to_dev<T>(q.ref, H.x.data() + off, m);
        q.wb = cs_thomas_gpu_bridge_multi_workspace(q.rows, D);
        CUDA_CHECK(cudaMalloc(&q.work, q.wb));
        CUDA_CHECK(cudaMalloc(&q.derr, sizeof *q.derr));
        CUDA_CHECK(cudaStreamCreateWithFlags(&q.st, cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreateWithFlags(&q.end, cudaEventDisableTiming));
        off += m;
    }
    std::vector<const T *> a(D), c(D);
    std::vector<T *> b(D), d(D);
    std::vector<int> rows(D);
    std::vector<void *> work(D), st(D);
    std::vector<size_t> wb(D);
    for (int p = 0; p < D; ++p)
        a[p] = P[p].a, b[p] = P[p].b, c[p] = P[p].c, d[p] = P[p].d, rows[p] = P[p].rows,
        work[p] = P[p].work, wb[p] = P[p].wb, st[p] = P[p].st;
    CUDA_CHECK(cudaSetDevice(devs[0]));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    std::vector<double> tev, twall;
    double worst = 0.0;
    for (int k = 0; k <= g_reps; ++k) {
        for (int p = 0; p < D; ++p) {
            CUDA_CHECK(cudaSetDevice(P[p].dev));
            CUDA_CHECK(cudaMemcpy(P[p].d, P[p].d0, (size_t)P[p].rows * sizeof(T), cudaMemcpyDeviceToDevice));
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        CUDA_CHECK(cudaSetDevice(devs[0]));
        const double w0 = now_s();
        CUDA_CHECK(cudaEventRecord(e0, P[0].st));
        for (int p = 1; p < D; ++p) CUDA_CHECK(cudaStreamWaitEvent(P[p].st, e0, 0));
        cs_solver_status s;
        if (sizeof(T) == 8)
            s = cs_thomas_gpu_bridge_multi_d(D, rows.data(), devs, sync, (const double *const *)a.data(),
                                             (double *const *)b.data(), (const double *const *)c.data(),
                                             (double *const *)d.data(), work.data(), wb.data(), st.data());
        else
            s = cs_thomas_gpu_bridge_multi_f(D, rows.data(), devs, sync, (const float *const *)a.data(),
                                             (float *const *)b.data(), (const float *const *)c.data(),
                                             (float *const *)d.data(), work.data(), wb.data(), st.data());
        CS_CHECK_OK(s);
        for (int p = 1; p < D; ++p) {
            CUDA_CHECK(cudaSetDevice(P[p].dev));
            CUDA_CHECK(cudaEventRecord(P[p].end, P[p].st));
            CUDA_CHECK(cudaSetDevice(devs[0]));
            CUDA_CHECK(cudaStreamWaitEvent(P[0].st, P[p].end, 0));
        }
        CUDA_CHECK(cudaEventRecord(e1, P[0].st));
        CUDA_CHECK(cudaEventSynchronize(e1));
        const double w1 = now_s();
        float ms = 0.f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (k > 0) tev.push_back(ms), twall.push_back(1e3 * (w1 - w0));
        for (int p = 0; p < D; ++p) {
            CUDA_CHECK(cudaSetDevice(P[p].dev));
            CUDA_CHECK(cudaMemset(P[p].derr, 0, sizeof *P[p].derr));
            err_kernel<T><<<1024, 256>>>((size_t)P[p].rows, P[p].d, P[p].ref, P[p].derr);
            unsigned long long bits = 0;
            CUDA_CHECK(cudaMemcpy(&bits, P[p].derr, sizeof bits, cudaMemcpyDeviceToHost));
            double e;
            memcpy(&e, &bits, sizeof e);
            e /= H.xmax;
            if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
        }
    }
    const double tol = sizeof(T) == 8 ? 1e-12 : 1e-5;
    if (!(worst <= tol)) {
        ++g_failures;
        fprintf(stderr, "CHECK FAILED: bridge multi D=%d %s N=%zu %s: rel err %.3e\n", D,
                sync ? "device" : "host", H.N, sizeof(T) == 8 ? "double" : "float", worst);
    }
    for (auto &q : P) {
        CUDA_CHECK(cudaSetDevice(q.dev));
        T *arrays[] = {q.a, q.b, q.c, q.d, q.d0, q.ref};
        for (T *x : arrays) CUDA_CHECK(cudaFree(x));
        CUDA_CHECK(cudaFree(q.work));
        CUDA_CHECK(cudaFree(q.derr));
        CUDA_CHECK(cudaStreamDestroy(q.st));
        CUDA_CHECK(cudaEventDestroy(q.end));
    }
    CUDA_CHECK(cudaSetDevice(devs[0]));
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    *ms_ev = median(tev), *ms_wall = median(twall);
}

/* One table row per configuration and synchronisation. */
template <typename T> static void run_size(size_t N, int ndev, uint64_t seed)
{
    const Host H = make_host<T>(N, seed);
    struct Cfg {
        const char *name;
        std::vector<int> devs;
    };
    std::vector<Cfg> cfgs = {{"1 partition, GPU 0", {0}}, {"2 partitions, GPU 0", {0, 0}}};
    if (ndev >= 2) {
        std::vector<int> all(ndev);
        for (int i = 0; i < ndev; ++i) all[i] = i;
        cfgs.push_back({"one partition per GPU", all});
    }
    double t1 = NAN;
    for (const Cfg &g : cfgs) {
        const int D = (int)g.devs.size();
        double agg = 0.0;
        bool seen[64] = {};
        for (int dv : g.devs)
            if (!seen[dv]) seen[dv] = true, agg += g_copy[dv];
        for (int sy = 1; sy >= 0; --sy) { /* device-side first: D = 1's is the reference */
            double ms = NAN, wall = NAN;
            time_split<T>(H, D, g.devs.data(), (cs_thomas_bridge_sync)sy, &ms, &wall);
            if (D == 1 && sy == 1) t1 = ms;
            const double gbs = 5.0 * N * sizeof(T) / (ms * 1e-3) / 1e9;
            int direct = 1;
            CS_CHECK_OK(cs_thomas_gpu_bridge_multi_peer(D, g.devs.data(), &direct));
            emit("| 2^%.0f | %s | %s (D=%d) | %s | %.3f | %.3f | %.2fx | %.0f (%.0f %%) | %s |\n",
                 std::log2((double)N), sizeof(T) == 8 ? "double" : "float", g.name, D,
                 sy ? "device" : "host", ms, wall, t1 / ms, gbs, 100.0 * gbs / agg,
                 sy == 0 ? "to the host" : D == 1 || !seen[1] ? "local" : direct ? "peer" : "staged via host");
            fflush(stdout);
        }
    }
}

/* One peer copy of `bytes` from device 1 to device 0 [ms], median of 51, events on device 1. */
static double time_peer(size_t bytes)
{
    void *src, *dst;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMalloc(&dst, bytes));
    CUDA_CHECK(cudaSetDevice(1));
    CUDA_CHECK(cudaMalloc(&src, bytes));
    CUDA_CHECK(cudaMemset(src, 0, bytes));
    cudaStream_t st;
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    std::vector<double> t;
    for (int k = -3; k < 51; ++k) {
        CUDA_CHECK(cudaEventRecord(e0, st));
        CUDA_CHECK(cudaMemcpyPeerAsync(dst, 0, src, 1, bytes, st));
        CUDA_CHECK(cudaEventRecord(e1, st));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (k >= 0) t.push_back(ms);
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    CUDA_CHECK(cudaStreamDestroy(st));
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaFree(dst));
    return median(t);
}

int main(int argc, char **argv)
{
    const char *outpath = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick")) g_quick = true;
        else outpath = argv[i];
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    ndev = std::min(ndev, 64);
    if (outpath && !(g_out = fopen(outpath, "w"))) {
        perror(outpath);
        return 2;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    for (int dv = 0; dv < ndev; ++dv) {
        CUDA_CHECK(cudaSetDevice(dv));
        g_copy[dv] = measure_copy_gbs(g_quick ? (64u << 20) : (size_t)1 << 30);
    }
    CUDA_CHECK(cudaSetDevice(0));
    int direct = 0;
    if (ndev >= 2) {
        const int pair[2] = {0, 1};
        CS_CHECK_OK(cs_thomas_gpu_bridge_multi_peer(2, pair, &direct));
    }
    emit("\n### The bridge across devices: one system over D GPUs (%d × %s)\n\n", ndev, prop.name);
    emit("Device-to-device copy (read + write bytes) of GPU 0: %.0f GB/s. ", g_copy[0]);
    if (ndev >= 2)
        emit("Peer access between GPU 0 and GPU 1: %s.\n", direct ? "yes (the bridge copies go peer to peer)"
                                                              : "no (the driver stages peer copies through the host)");
    else
        emit("One device: the multi-GPU rows are left out.\n");
    emit("One system of n rows split evenly, each partition's arrays on its device; CUDA events on "
         "GPU 0's stream around the call with the fork and join across devices, and the wall "
         "time; median of %d after a warm-up; every solve checked against the CPU Thomas solve "
         "(1e-12 double, 1e-5 float). Speed-up: over D = 1 with the device-side bridge. %% copy: "
         "5 arrays over the time, against the summed copy bandwidth of the GPUs used.\n\n", g_reps);
    emit("| n | type | partitions | bridge | events [ms] | wall [ms] | speed-up | GB/s (%% copy) | bridge copies |\n"
         "|---:|---|---|---|---:|---:|---:|---:|---|\n");
    if (g_quick) {
        run_size<double>(1 << 16, ndev, 11);
        run_size<float>(100003, ndev, 12);
    } else {
        for (int e = 24; e <= 26; ++e) run_size<double>((size_t)1 << e, ndev, 10 + e);
        run_size<float>((size_t)1 << 26, ndev, 40);
    }
    if (ndev >= 2) {
        const double small = time_peer(64), big = time_peer((size_t)256 << 20);
        emit("\nOne peer copy GPU 1 -> GPU 0 (cudaMemcpyPeerAsync, events, median of 51): "
             "bridge rows (8 doubles, 64 B) %.1f µs; 256 MB %.2f ms (%.0f GB/s).\n",
             1e3 * small, big, (double)(256u << 20) / (big * 1e-3) / 1e9);
    }
    emit("\nChecks failed: %d\n", g_failures);
    if (g_out) fclose(g_out);
    return g_failures ? 1 : 0;
}
