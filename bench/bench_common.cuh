/* Shared by the GPU benchmarks (one translation unit each): checked CUDA/cuSPARSE/solver calls,
 * the output (stdout and an optional Markdown file), medians, reproducible random numbers, the
 * device-side error check of a timed result, and the device-to-device copy bandwidth that the
 * benchmarks report their bandwidth against. */
#ifndef CS_BENCH_COMMON_CUH
#define CS_BENCH_COMMON_CUH

#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <time.h>
#include <vector>

#include "cs_thomas_gpu.h"

#define CUDA_CHECK(expr)                                                                      \
    do {                                                                                      \
        cudaError_t e_ = (expr);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)
#define CUSPARSE_CHECK(expr)                                                                  \
    do {                                                                                      \
        cusparseStatus_t s_ = (expr);                                                         \
        if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cusparseGetErrorString(s_)); \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)
#define CS_CHECK_OK(expr)                                                                     \
    do {                                                                                      \
        cs_solver_status s_ = (expr);                                                         \
        if (s_ != CS_SOLVER_OK) {                                                             \
            fprintf(stderr, "%s:%d: %s: status %d: %s\n", __FILE__, __LINE__, #expr, (int)s_,  \
                    cs_thomas_gpu_last_error());                                              \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

static FILE *g_out = NULL; /* the Markdown file, when given */

static void emit(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (g_out) {
        va_start(ap, fmt);
        vfprintf(g_out, fmt, ap);
        va_end(ap);
    }
}

static double median(std::vector<double> v)
{
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static inline uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static inline double u01(uint64_t seed, uint64_t k, int j)
{
    return (double)(splitmix(seed ^ (k * 8 + (uint64_t)j) * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

/* max |x - ref| into *err (as the bits of a non-negative double; NaN counts as +inf) */
template <typename T>
__global__ void err_kernel(size_t n, const T *__restrict__ x, const T *__restrict__ ref,
                           unsigned long long *err)
{
    double m = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double e = fabs((double)x[i] - (double)ref[i]);
        if (!(e <= 1e300)) e = INFINITY;
        m = fmax(m, e);
    }
    for (int o = 16; o > 0; o >>= 1) m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) atomicMax(err, (unsigned long long)__double_as_longlong(m));
}

/* ---- copy bandwidth ------------------------------------------------------------------------- */
static double measure_copy_gbs(size_t bytes)
{
    void *x, *y;
    CUDA_CHECK(cudaMalloc(&x, bytes));
    CUDA_CHECK(cudaMalloc(&y, bytes));
    CUDA_CHECK(cudaMemset(x, 0x5a, bytes));
    CUDA_CHECK(cudaMemset(y, 0xa5, bytes));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    std::vector<double> t;
    for (int k = -3; k < 20; ++k) {
        CUDA_CHECK(cudaEventRecord(e0));
        CUDA_CHECK(cudaMemcpyAsync((k & 1) ? x : y, (k & 1) ? y : x, bytes, cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (k >= 0) t.push_back(ms);
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(y));
    return 2.0 * bytes / (median(t) * 1e-3) / 1e9;
}

#endif
