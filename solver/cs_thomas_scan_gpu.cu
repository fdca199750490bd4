/* GPU tridiagonal solve as scans (the "scan" variant of cs_thomas_gpu.h; seed 002, the PMPH
 * `tridag` project): three inclusive scans with CUB's single-pass (decoupled look-back)
 * cub::DeviceScan from the CUDA toolkit, their inputs and outputs mapped on the fly by thrust's
 * iterators. The formulation and the restarts at system boundaries are those of
 * cs_thomas_scan_cpu.c:
 *   1. pivots   S_i = [[b_i, -a_i·c_{i-1}], [1, 0]] (a_i = 0 at a system's first row), scanned by
 *               2×2 matrix products (later factor on the left), each product scaled by a power
 *               of two; m_i = P_i[0][0] / P_i[1][0]                    -> workspace m
 *   2. forward  f_i(y) = -a_i/m_i·y + d_i/m_i, scanned by composition; y_i = F_i(0) -> workspace y
 *   3. backward g_i(x) = -c_i/m_i·x + y_i from the last row up (reverse iterators); x_i = G_i(0)
 *               -> d
 * Traffic: scan 1 reads a, b, c and writes m; scan 2 reads a, d, m and writes y; scan 3 reads
 * c, m, y and writes d: 12 arrays for the 5 compulsory ones, plus the scans' own look-back.
 * a, b, c are read only. Workspace: m, y and CUB's temporary storage. */
#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/reverse_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include <stdint.h>

#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

namespace {

template <typename T> struct Mat2 {
    T m00, m01, m10, m11;
};
template <typename T> struct Aff { /* y -> al·y + be */
    T al, be;
};

/* op(earlier prefix l, later element r) = r·l, scaled so that its largest entry is in [0.5, 1) */
template <typename T> struct MatMul {
    __host__ __device__ Mat2<T> operator()(const Mat2<T> &l, const Mat2<T> &r) const
    {
        Mat2<T> p = {r.m00 * l.m00 + r.m01 * l.m10, r.m00 * l.m01 + r.m01 * l.m11,
                     r.m10 * l.m00 + r.m11 * l.m10, r.m10 * l.m01 + r.m11 * l.m11};
        const T mx = fmax(fmax(fabs(p.m00), fabs(p.m01)), fmax(fabs(p.m10), fabs(p.m11)));
        if (mx > T(0) && isfinite(mx)) {
            int e;
            frexp(mx, &e);
            p.m00 = ldexp(p.m00, -e), p.m01 = ldexp(p.m01, -e);
            p.m10 = ldexp(p.m10, -e), p.m11 = ldexp(p.m11, -e);
        }
        return p;
    }
};
/* op(earlier l, later r) = r∘l */
template <typename T> struct Compose {
    __host__ __device__ Aff<T> operator()(const Aff<T> &l, const Aff<T> &r) const
    {
        return Aff<T>{r.al * l.al, r.al * l.be + r.be};
    }
};

template <typename T> struct PivotIn { /* row i -> S_i */
    const T *a, *b, *c;
    int64_t n;
    __host__ __device__ Mat2<T> operator()(int64_t i) const
    {
        const bool first = (i % n == 0);
        return Mat2<T>{b[i], first ? T(0) : -a[i] * c[i - 1], T(1), T(0)};
    }
};
template <typename T> struct PivotOut {
    __host__ __device__ T operator()(const Mat2<T> &p) const { return p.m00 / p.m10; }
};
template <typename T> struct ForwardIn { /* row i -> f_i */
    const T *a, *d, *m;
    int64_t n;
    __host__ __device__ Aff<T> operator()(int64_t i) const
    {
        const T ai = (i % n == 0) ? T(0) : a[i];
        return Aff<T>{-ai / m[i], d[i] / m[i]};
    }
};
template <typename T> struct BackwardIn { /* j-th row from the end, i = N-1-j -> g_i */
    const T *c, *m, *y;
    int64_t N, n;
    __host__ __device__ Aff<T> operator()(int64_t j) const
    {
        const int64_t i = N - 1 - j;
        const T ci = (i % n == n - 1) ? T(0) : c[i];
        return Aff<T>{-ci / m[i], y[i]};
    }
};
template <typename T> struct ValueAt0 { /* F(0) */
    __host__ __device__ T operator()(const Aff<T> &f) const { return f.be; }
};

typedef thrust::counting_iterator<int64_t> Rows;
template <typename T> using PivIt = thrust::transform_iterator<PivotIn<T>, Rows, Mat2<T>>;
template <typename T> using PivOutIt = thrust::transform_output_iterator<PivotOut<T>, T *>;
template <typename T> using FwdIt = thrust::transform_iterator<ForwardIn<T>, Rows, Aff<T>>;
template <typename T> using FwdOutIt = thrust::transform_output_iterator<ValueAt0<T>, T *>;
template <typename T> using BwdIt = thrust::transform_iterator<BackwardIn<T>, Rows, Aff<T>>;
template <typename T>
using BwdOutIt = thrust::transform_output_iterator<ValueAt0<T>, thrust::reverse_iterator<T *>>;

size_t round256(size_t b) { return (b + 255) / 256 * 256; }

/* The three scans; with work == NULL only *temp_bytes is set (CUB's largest temporary storage). */
template <typename T>
cudaError_t scans(int64_t N, int64_t n, const T *a, const T *b, const T *c, T *d, T *m, T *y,
                  void *temp, size_t *temp_bytes, cudaStream_t stream)
{
    const PivIt<T> pin(Rows(0), PivotIn<T>{a, b, c, n});
    const PivOutIt<T> pout(m, PivotOut<T>());
    const FwdIt<T> fin(Rows(0), ForwardIn<T>{a, d, m, n});
    const FwdOutIt<T> fout(y, ValueAt0<T>());
    const BwdIt<T> bin(Rows(0), BackwardIn<T>{c, m, y, N, n});
    const BwdOutIt<T> bout(thrust::reverse_iterator<T *>(d + N), ValueAt0<T>());
    if (!temp) {
        size_t s1 = 0, s2 = 0, s3 = 0;
        cudaError_t e = cub::DeviceScan::InclusiveScan(nullptr, s1, pin, pout, MatMul<T>(), N, stream);
        if (e == cudaSuccess)
            e = cub::DeviceScan::InclusiveScan(nullptr, s2, fin, fout, Compose<T>(), N, stream);
        if (e == cudaSuccess)
            e = cub::DeviceScan::InclusiveScan(nullptr, s3, bin, bout, Compose<T>(), N, stream);
        *temp_bytes = s1 > s2 ? (s1 > s3 ? s1 : s3) : (s2 > s3 ? s2 : s3);
        return e;
    }
    size_t tb = *temp_bytes;
    cudaError_t e = cub::DeviceScan::InclusiveScan(temp, tb, pin, pout, MatMul<T>(), N, stream);
    tb = *temp_bytes;
    if (e == cudaSuccess)
        e = cub::DeviceScan::InclusiveScan(temp, tb, fin, fout, Compose<T>(), N, stream);
    tb = *temp_bytes;
    if (e == cudaSuccess)
        e = cub::DeviceScan::InclusiveScan(temp, tb, bin, bout, Compose<T>(), N, stream);
    return e;
}

template <typename T> size_t scan_workspace(int64_t N)
{
    size_t temp = 0;
    if (scans<T>(N, 1, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &temp, 0) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return 2 * round256((size_t)N * sizeof(T)) + round256(temp);
}

/* Arguments checked, work >= scan_workspace<T>(N) bytes. */
template <typename T>
cs_solver_status scan_run(int nsys, int n, const T *a, const T *b, const T *c, T *d, void *work,
                          cudaStream_t stream)
{
    const int64_t N = (int64_t)nsys * n;
    const size_t arr = round256((size_t)N * sizeof(T));
    T *m = (T *)work, *y = (T *)((char *)work + arr);
    void *temp = (char *)work + 2 * arr;
    size_t temp_bytes = 0;
    CS__TG_CUDA(scans<T>(N, n, a, b, c, d, m, y, nullptr, &temp_bytes, stream));
    CS__TG_CUDA(scans<T>(N, n, a, b, c, d, m, y, temp, &temp_bytes, stream));
    CS__TG_CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}

template <typename T>
cs_solver_status scan_checked(int nsys, int n, const T *a, T *b, const T *c, T *d, void *work,
                              size_t work_bytes, void *stream)
{
    if (nsys < 0 || n < 1) CS__TG_INVALID("scan: bad batch shape nsys=%d n=%d", nsys, n);
    if (nsys == 0) return CS_SOLVER_OK;
    if (!a || !b || !c || !d) CS__TG_INVALID("scan: NULL array");
    const size_t need = scan_workspace<T>((int64_t)nsys * n);
    if (need == 0) CS__TG_INVALID("scan: cannot size CUB's temporary storage");
    if (!work || work_bytes < need)
        CS__TG_INVALID("scan: workspace of %zu bytes, %zu needed", work ? work_bytes : 0, need);
    if (((uintptr_t)work & 255) != 0) CS__TG_INVALID("scan: workspace not 256-byte aligned");
    return scan_run<T>(nsys, n, a, b, c, d, work, (cudaStream_t)stream);
}

template <typename T>
cs_solver_status scan_owned(int nsys, int n, const T *a, const T *b, const T *c, T *d)
{
    const size_t need = scan_workspace<T>((int64_t)nsys * n);
    if (need == 0) CS__TG_INVALID("scan: cannot size CUB's temporary storage");
    void *ws = NULL;
    cs_solver_status st = cs__thomas_ws_lock(need, &ws);
    if (st != CS_SOLVER_OK) return st;
    st = scan_run<T>(nsys, n, a, b, c, d, ws, (cudaStream_t)0);
    cs__thomas_ws_unlock();
    return st;
}

} // namespace

cs_solver_status cs__thomas_scan_owned(int nsys, int n, const double *a, const double *b,
                                       const double *c, double *d)
{
    return scan_owned<double>(nsys, n, a, b, c, d);
}
cs_solver_status cs__thomas_scan_owned(int nsys, int n, const float *a, const float *b,
                                       const float *c, float *d)
{
    return scan_owned<float>(nsys, n, a, b, c, d);
}

extern "C" {

size_t cs_thomas_gpu_scan_workspace(int nsys, int n, cs_thomas_gpu_precision prec)
{
    if (nsys <= 0 || n <= 0) return 0;
    return prec == CS_THOMAS_GPU_F32 ? scan_workspace<float>((int64_t)nsys * n)
                                     : scan_workspace<double>((int64_t)nsys * n);
}

cs_solver_status cs_thomas_gpu_scan_d(int nsys, int n, const double *a, double *b,
                                      const double *c, double *d, void *work, size_t work_bytes,
                                      void *stream)
{
    return scan_checked<double>(nsys, n, a, b, c, d, work, work_bytes, stream);
}

cs_solver_status cs_thomas_gpu_scan_f(int nsys, int n, const float *a, float *b, const float *c,
                                      float *d, void *work, size_t work_bytes, void *stream)
{
    return scan_checked<float>(nsys, n, a, b, c, d, work, work_bytes, stream);
}

} /* extern "C" */
