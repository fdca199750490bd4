/* GPU layout conversions of cs_thomas_gpu.h (split from cs_thomas_gpu.cu): Flat <->
 * Full-Interleaved (a tiled transpose) and the variable-size packing of var_cp (systems of
 * n_s <= n_max rows padded with identity rows into an n_max × nsys interleaved batch). Device
 * pointers, asynchronous on the default stream. */
#include <cuda_runtime.h>

#include <stdio.h>

#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

/* ---- kernels ------------------------------------------------------------------------------ */
/* Transpose of a rows × cols row-major matrix (Flat is nsys × n, Interleaved is n × nsys), in
 * 32 × 32 tiles numbered along one grid dimension (either side may exceed 65535 tiles). */
template <typename T>
__global__ void cs__transpose_kernel(int rows, int cols, unsigned tiles_x, const T *__restrict__ src,
                                     T *__restrict__ dst)
{
    __shared__ T tile[32][33];
    const int c0 = (int)(blockIdx.x % tiles_x) * 32, r0 = (int)(blockIdx.x / tiles_x) * 32;
    for (int k = threadIdx.y; k < 32; k += blockDim.y) {
        const int r = r0 + k, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[k][threadIdx.x] = src[(size_t)r * cols + c];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < 32; k += blockDim.y) {
        const int c = c0 + k, r = r0 + threadIdx.x; /* dst row c, column r */
        if (c < cols && r < rows) dst[(size_t)c * rows + r] = tile[threadIdx.x][k];
    }
}

template <typename T>
__global__ void cs__var_pack_kernel(int nsys, int n_max, const int *__restrict__ offset,
                                    const T *__restrict__ a, const T *__restrict__ b,
                                    const T *__restrict__ c, const T *__restrict__ d,
                                    T *__restrict__ ai, T *__restrict__ bi, T *__restrict__ ci,
                                    T *__restrict__ di)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y;
    if (s >= nsys) return;
    const int o = offset[s], ns = offset[s + 1] - o;
    const size_t k = (size_t)i * nsys + s;
    if (i < ns) {
        ai[k] = (i == 0) ? T(0) : a[o + i];
        bi[k] = b[o + i];
        ci[k] = (i == ns - 1) ? T(0) : c[o + i];
        di[k] = d[o + i];
    } else {
        ai[k] = T(0);
        bi[k] = T(1);
        ci[k] = T(0);
        di[k] = T(0);
    }
}

template <typename T>
__global__ void cs__var_unpack_kernel(int nsys, int n_max, const int *__restrict__ offset,
                                      const T *__restrict__ xi, T *__restrict__ x)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y;
    if (s >= nsys) return;
    const int o = offset[s], ns = offset[s + 1] - o;
    if (i < ns) x[o + i] = xi[(size_t)i * nsys + s];
}

/* ---- launchers ---------------------------------------------------------------------------- */
template <typename T>
static cs_solver_status cs__transpose(int rows, int cols, const T *src, T *dst)
{
    if (rows < 0 || cols < 0) CS__TG_INVALID("bad shape %d x %d", rows, cols);
    if (rows == 0 || cols == 0) return CS_SOLVER_OK;
    if (!src || !dst) CS__TG_INVALID("NULL array");
    const size_t tx = ((size_t)cols + 31) / 32, ty = ((size_t)rows + 31) / 32;
    if (tx * ty > 0x7fffffffu) CS__TG_INVALID("shape %d x %d too large for the transpose", rows, cols);
    cs__transpose_kernel<T><<<(unsigned)(tx * ty), dim3(32, 8)>>>(rows, cols, (unsigned)tx, src, dst);
    CS__TG_CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}

template <typename T>
static cs_solver_status cs__var_pack(int nsys, int n_max, const int *offset, const T *a,
                                     const T *b, const T *c, const T *d, T *ai, T *bi, T *ci, T *di)
{
    if (nsys < 0 || n_max < 1 || n_max > 65535) CS__TG_INVALID("bad shape nsys=%d n_max=%d (n_max <= 65535)", nsys, n_max);
    if (nsys == 0) return CS_SOLVER_OK;
    if (!offset || !a || !b || !c || !d || !ai || !bi || !ci || !di) CS__TG_INVALID("NULL array");
    dim3 grid((nsys + 127) / 128, n_max);
    cs__var_pack_kernel<T><<<grid, 128>>>(nsys, n_max, offset, a, b, c, d, ai, bi, ci, di);
    CS__TG_CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}

template <typename T>
static cs_solver_status cs__var_unpack(int nsys, int n_max, const int *offset, const T *xi, T *x)
{
    if (nsys < 0 || n_max < 1 || n_max > 65535) CS__TG_INVALID("bad shape nsys=%d n_max=%d (n_max <= 65535)", nsys, n_max);
    if (nsys == 0) return CS_SOLVER_OK;
    if (!offset || !xi || !x) CS__TG_INVALID("NULL array");
    dim3 grid((nsys + 127) / 128, n_max);
    cs__var_unpack_kernel<T><<<grid, 128>>>(nsys, n_max, offset, xi, x);
    CS__TG_CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}

/* ---- extern "C" API ----------------------------------------------------------------------- */
extern "C" {

cs_solver_status cs_thomas_gpu_flat_to_interleaved_d(int nsys, int n, const double *src, double *dst)
{
    return cs__transpose<double>(nsys, n, src, dst);
}
cs_solver_status cs_thomas_gpu_interleaved_to_flat_d(int nsys, int n, const double *src, double *dst)
{
    return cs__transpose<double>(n, nsys, src, dst);
}
cs_solver_status cs_thomas_gpu_flat_to_interleaved_f(int nsys, int n, const float *src, float *dst)
{
    return cs__transpose<float>(nsys, n, src, dst);
}
cs_solver_status cs_thomas_gpu_interleaved_to_flat_f(int nsys, int n, const float *src, float *dst)
{
    return cs__transpose<float>(n, nsys, src, dst);
}

cs_solver_status cs_thomas_gpu_var_pack_d(int nsys, int n_max, const int *offset, const double *a,
                                          const double *b, const double *c, const double *d,
                                          double *ai, double *bi, double *ci, double *di)
{
    return cs__var_pack<double>(nsys, n_max, offset, a, b, c, d, ai, bi, ci, di);
}
cs_solver_status cs_thomas_gpu_var_unpack_d(int nsys, int n_max, const int *offset,
                                            const double *xi, double *x)
{
    return cs__var_unpack<double>(nsys, n_max, offset, xi, x);
}
cs_solver_status cs_thomas_gpu_var_pack_f(int nsys, int n_max, const int *offset, const float *a,
                                          const float *b, const float *c, const float *d,
                                          float *ai, float *bi, float *ci, float *di)
{
    return cs__var_pack<float>(nsys, n_max, offset, a, b, c, d, ai, bi, ci, di);
}
cs_solver_status cs_thomas_gpu_var_unpack_f(int nsys, int n_max, const int *offset,
                                            const float *xi, float *x)
{
    return cs__var_unpack<float>(nsys, n_max, offset, xi, x);
}

} /* extern "C" */
