/* Device, memory and streams for C callers of the GPU Thomas solvers that include no CUDA header
 * (cs_thomas_gpu.h, "device and memory"): thin wrappers that turn CUDA errors into
 * cs_solver_status values with a one-line message (cs_thomas_gpu_last_error). */
#include <cuda_runtime.h>

#include <stdio.h>

#include "cs_thomas_gpu.h"
#include "cs_thomas_gpu_impl.cuh"

extern "C" {

cs_solver_status cs_thomas_gpu_device_count(int *count)
{
    if (!count) CS__TG_INVALID("count is NULL");
    *count = 0;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
        (void)cudaGetLastError();
        return CS_SOLVER_OK;
    }
    CS__TG_CUDA(e);
    *count = n;
    return CS_SOLVER_OK;
}

cs_solver_status cs_thomas_gpu_device_name(char *name, size_t len)
{
    if (!name || len == 0) CS__TG_INVALID("no buffer for the device name");
    int dev = 0;
    cudaDeviceProp p;
    CS__TG_CUDA(cudaGetDevice(&dev));
    CS__TG_CUDA(cudaGetDeviceProperties(&p, dev));
    snprintf(name, len, "%s", p.name);
    return CS_SOLVER_OK;
}

cs_solver_status cs_thomas_gpu_set_device(int device)
{
    CS__TG_CUDA(cudaSetDevice(device));
    return CS_SOLVER_OK;
}

cs_solver_status cs_thomas_gpu_get_device(int *device)
{
    if (!device) CS__TG_INVALID("device is NULL");
    CS__TG_CUDA(cudaGetDevice(device));
    return CS_SOLVER_OK;
}

cs_solver_status cs_thomas_gpu_malloc(void **ptr, size_t bytes)
{
    if (!ptr) CS__TG_INVALID("ptr is NULL");
    *ptr = NULL;
    CS__TG_CUDA(cudaMalloc(ptr, bytes ? bytes : 1));
    return CS_SOLVER_OK;
}

cs_solver_status cs_thomas_gpu_free(void *ptr)
{
    CS__TG_CUDA(cudaFree(ptr));
    return CS_SOLVER_OK;
}

cs_solver_status cs_thomas_gpu_to_device(void *dst, const void *src, size_t bytes)
{
    CS__TG_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    /* From pageable memory cudaMemcpy may return before the DMA lands, and kernels on the
     * library's non-blocking streams do not wait for the legacy stream: wait here, so that the
     * bytes are on the device when the call returns (test_thomas_bridge_gpu once read a
     * partly uploaded system on an H100). */
    CS__TG_CUDA(cudaStreamSynchronize(cudaStreamLegacy));
    return CS_SOLVER_OK;
}

cs_solver_status cs_thomas_gpu_to_host(void *dst, const void *src, size_t bytes)
{
    CS__TG_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return CS_SOLVER_OK;
}

cs_solver_status cs_thomas_gpu_synchronize(void)
{
    CS__TG_CUDA(cudaDeviceSynchronize());
    CS__TG_CUDA(cudaGetLastError());
    return CS_SOLVER_OK;
}

cs_solver_status cs_thomas_gpu_stream_create(void **stream)
{
    if (!stream) CS__TG_INVALID("stream is NULL");
    *stream = NULL;
    cudaStream_t s;
    CS__TG_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = (void *)s;
    return CS_SOLVER_OK;
}
cs_solver_status cs_thomas_gpu_stream_synchronize(void *stream)
{
    CS__TG_CUDA(cudaStreamSynchronize((cudaStream_t)stream));
    return CS_SOLVER_OK;
}
cs_solver_status cs_thomas_gpu_stream_destroy(void *stream)
{
    CS__TG_CUDA(cudaStreamDestroy((cudaStream_t)stream));
    return CS_SOLVER_OK;
}

} /* extern "C" */
