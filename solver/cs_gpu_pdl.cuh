/* Programmatic dependent launch (compute capability 9.0 and later): a kernel launched with it is
 * scheduled while the kernel before it on its stream still runs, and waits inside for that one to
 * complete (cs_pdl_wait), so its blocks' launch overlaps its predecessor's tail instead of
 * following it. Used by the tridiagonal library's level kernels and by the simulator's step
 * kernels (bench/NOTES.md, sessions 17 and 30).
 *
 * The rule: a kernel launched by cs_pdl_launch with pdl true must call cs_pdl_wait before it
 * reads anything an earlier kernel wrote, and before it writes anything an earlier kernel reads;
 * kernels here call cs_pdl_wait then cs_pdl_trigger first thing. Both are no-ops in a plain
 * launch. A kernel that triggers only after its wait lets its successor start only once its own
 * predecessor has completed, so "completed" passes down a chain of such launches. */
#ifndef CS_GPU_PDL_CUH
#define CS_GPU_PDL_CUH

#include <cuda_runtime.h>

/* Blocks until the kernel before this one on its stream has completed and its writes are visible
 * (a plain launch: returns at once) */
__device__ __forceinline__ void cs_pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
/* Lets the kernel after this one on its stream be scheduled (once every block has said so) */
__device__ __forceinline__ void cs_pdl_trigger(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}
/* Both, first thing in a kernel that a programmatic launch may start early */
__device__ __forceinline__ void cs_pdl_enter(void)
{
    cs_pdl_wait();
    cs_pdl_trigger();
}

/* kernel<<<g, b, smem, st>>>(args...); with pdl, a programmatic dependent launch. Outside a
 * stream capture a refused attribute falls back to a plain launch; inside one (a CUDA graph being
 * recorded) the error is returned, since a failed call there has already ended the capture. */
template <typename... P, typename... A>
static inline cudaError_t cs_pdl_launch(bool pdl, void (*kernel)(P...), dim3 g, dim3 b, size_t smem,
                                        cudaStream_t st, A... args)
{
    if (pdl) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = g, cfg.blockDim = b, cfg.dynamicSmemBytes = smem, cfg.stream = st;
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = at, cfg.numAttrs = 1;
        const cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, args...);
        if (e == cudaSuccess) return e;
        cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(st, &cap) != cudaSuccess || cap != cudaStreamCaptureStatusNone) return e;
        (void)cudaGetLastError();
    }
    kernel<<<g, b, smem, st>>>(args...);
    return cudaGetLastError();
}

#endif
