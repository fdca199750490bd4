/* A kernel timeline without Nsight Systems (the lent GPU machine has Nsight Compute only): a CUDA
 * injection library (CUDA_INJECTION64_PATH) that records every kernel's start and end on the
 * device with CUPTI's activity API, graph-launched kernels included, with their concurrency kept
 * (CONCURRENT_KERNEL records), and writes them at exit as CSV to $CS_TRACE_OUT (default
 * trace.csv): "Start (ns)","Duration (ns)","Strm","Name" (bench/trace/trace_steps.py reads it).
 * Built and used by bench/trace/gpu_trace.sh. */
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *out;

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records) {
    *size = (size_t)16 << 20;
    *buf = aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid) {
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *r = NULL;
    while (out && cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
        fprintf(out, "%llu,%llu,%u,\"", (unsigned long long)k->start, (unsigned long long)(k->end - k->start),
                k->streamId);
        for (const char *c = k->name; c && *c; ++c) fputc(*c == '"' ? '\'' : *c, out);
        fputs("\"\n", out);
    }
    free(buf);
}

static void finish(void) {
    cuptiActivityFlushAll(1);
    if (out) fclose(out);
    out = NULL;
}

int InitializeInjection(void) {
    const char *path = getenv("CS_TRACE_OUT");
    out = fopen(path && *path ? path : "trace.csv", "w");
    if (!out) return 0;
    fputs("\"Start (ns)\",\"Duration (ns)\",\"Strm\",\"Name\"\n", out);
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
        fputs("cupti_trace: CUPTI refused the activity callbacks\n", stderr);
        return 0;
    }
    atexit(finish);
    return 1;
}
