// The kernels of one simulation step on the GPU, and thin wrappers of the CUDA runtime, all
// behind the plain C interface of cs_cuda.h. The mechanism formulas come from
// mechanisms/cs_mech_math.h, shared with the CPU backend.
#include <cuda_runtime.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" {
#include "cs_cuda.h"
}
#include "cs_cuda_device.cuh"
#include "cs_cuda_launch.cuh"
#include "cs_ion.h"

extern "C" int cs_cuda_compiled(void) { return 1; }

extern "C" int cs_cuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    return n;
}

extern "C" void cs_cuda_identity(int dev, char *buf, size_t len) {
    cudaDeviceProp prop;
    int driver = 0;
    if (!len) return;
    buf[0] = 0;
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess || cudaDriverGetVersion(&driver) != cudaSuccess) {
        cudaGetLastError(); /* clear the error: no device is not a failure here */
        return;
    }
    char uuid[33];
    for (int i = 0; i < 16; ++i) snprintf(uuid + 2 * i, 3, "%02x", (unsigned char)prop.uuid.bytes[i]);
    snprintf(buf, len, "%s uuid %s sm_%d%d %d SMs driver %d", prop.name, uuid, prop.major, prop.minor,
             prop.multiProcessorCount, driver);
}

extern "C" int cs_cuda_pdl_supported(int dev) {
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return major >= 9;
}

extern "C" cs_status cs_cuda_select(int dev, char *name, size_t len) {
    CS_CUDA_CALL(cudaSetDevice(dev), "selecting the device");
    cudaDeviceProp prop;
    CS_CUDA_CALL(cudaGetDeviceProperties(&prop, dev), "reading the device's properties");
    snprintf(name, len, "%s", prop.name);
    return CS_OK;
}

/* Device memory taken so far by the simulator, and the budget CABLESIM_GPU_MEMORY_LIMIT
 * (bytes) sets for it: for sharing a GPU, and to test the out-of-memory path for real. */
static size_t cs__allocated, cs__limit = (size_t)-1;
static int cs__limit_read;

extern "C" cs_status cs_cuda_alloc(void **p, size_t bytes, const char *what) {
    *p = NULL;
    if (!cs__limit_read) {
        const char *env = getenv("CABLESIM_GPU_MEMORY_LIMIT");
        if (env && *env) cs__limit = (size_t)strtoull(env, NULL, 10);
        cs__limit_read = 1;
    }
    if (cs__allocated + bytes > cs__limit)
        return cs_error_set(CS_ERR_NOMEM,
                            "GPU: cannot allocate %.1f MiB for %s: CABLESIM_GPU_MEMORY_LIMIT allows %.1f MiB and "
                            "%.1f MiB are in use",
                            bytes / 1048576.0, what, cs__limit / 1048576.0, cs__allocated / 1048576.0);
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        cudaGetLastError();
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        return cs_error_set(e == cudaErrorMemoryAllocation ? CS_ERR_NOMEM : CS_ERR_DEVICE,
                            "GPU: cannot allocate %.1f MiB for %s (%.1f MiB free of %.1f MiB): %s",
                            bytes / 1048576.0, what, free_b / 1048576.0, total_b / 1048576.0,
                            cudaGetErrorString(e));
    }
    cs__allocated += bytes;
    return cudaMemset(*p, 0, bytes ? bytes : 1) == cudaSuccess ? CS_OK : cuda_fail(cudaGetLastError(), what);
}

extern "C" void cs_cuda_free(void *p) {
    if (p) cudaFree(p); /* the budget counts what was taken: frees happen at the end of a run */
}

extern "C" cs_status cs_cuda_upload(void *dst, const void *src, size_t bytes) {
    if (bytes) CS_CUDA_CALL(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "copy to the device");
    return CS_OK;
}

extern "C" cs_status cs_cuda_download(void *dst, const void *src, size_t bytes) {
    if (bytes) CS_CUDA_CALL(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "copy from the device");
    return CS_OK;
}

/* Stream-ordered copies (the pipelined epochs, cs_backend_cuda.c): to the device from pageable
 * memory the driver stages src before returning, so src may change at once; between device
 * arrays; and to pageable host memory, which returns once dst is filled. */
extern "C" cs_status cs_cuda_upload_async(void *dst, const void *src, size_t bytes, void *stream) {
    if (bytes) CS_CUDA_CALL(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream), "copy to the device");
    return CS_OK;
}

extern "C" cs_status cs_cuda_copy_async(void *dst, const void *src, size_t bytes, void *stream) {
    if (bytes) CS_CUDA_CALL(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream), "copy on the device");
    return CS_OK;
}

extern "C" cs_status cs_cuda_download_async(void *dst, const void *src, size_t bytes, void *stream) {
    if (bytes) CS_CUDA_CALL(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream), "copy from the device");
    return CS_OK;
}

extern "C" cs_status cs_cuda_stream_create_nonblocking(void **stream) {
    cudaStream_t st;
    CS_CUDA_CALL(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "creating a stream");
    *stream = (void *)st;
    return CS_OK;
}

extern "C" cs_status cs_cuda_stream_create_priority(void **stream, int high) {
    int least = 0, greatest = 0;
    CS_CUDA_CALL(cudaDeviceGetStreamPriorityRange(&least, &greatest), "reading the streams' priorities");
    cudaStream_t st;
    CS_CUDA_CALL(cudaStreamCreateWithPriority(&st, cudaStreamDefault, high ? greatest : least), "creating a stream");
    *stream = (void *)st;
    return CS_OK;
}

extern "C" int cs_cuda_sm_count(void) {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" cs_status cs_cuda_stream_create(void **stream) {
    /* A blocking stream: it is ordered with the legacy default stream, on which cudaMemcpy and
     * cudaMemset run. A pageable cudaMemcpy to the device may return before its data has
     * landed, and a non-blocking stream would not wait for it: the epoch's events could be
     * read before they arrive. */
    cudaStream_t st;
    CS_CUDA_CALL(cudaStreamCreate(&st), "creating a stream");
    *stream = (void *)st;
    return CS_OK;
}

extern "C" void cs_cuda_stream_destroy(void *stream) {
    if (stream) cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" size_t cs_cuda_memory_used(void) {
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return total_b - free_b;
}

extern "C" cs_status cs_cuda_sync(void *stream) {
    CS_CUDA_CALL(cudaStreamSynchronize((cudaStream_t)stream), "running the step kernels");
    return CS_OK;
}

// ---- the step context (cs_cuda_device.cuh) ---------------------------------------------------
extern "C" cs_status cs_cuda_alloc_ctx(void **ctx) {
    return cs_cuda_alloc(ctx, sizeof(cs_cuda_step_ctx), "the step context");
}

__global__ void k_epoch_start(cs_cuda_step_ctx *ctx, long long step0, int *c) {
    ctx->step0 = step0;
    ctx->k = 0;
    c[0] = 0;
    c[1] = INT_MAX;
    c[2] = -1;
}

extern "C" cs_status cs_cuda_epoch_start(const cs_cuda_state *s, long long step0) {
    k_epoch_start<<<1, 1, 0, stream_of(s)>>>((cs_cuda_step_ctx *)s->ctx, step0, s->counters);
    CS_LAUNCHED("starting an epoch");
    return CS_OK;
}

/* An epoch's spikes (counters[0] of them, at most cap) into a slot of their own, on the stream
 * after the epoch: the next epoch, launched before this one is collected, reuses the buffers. */
__global__ void k_save_spikes(const int *counters, int cap, const double *t, const int *gid, double *t_to, int *gid_to) {
    const int n = min(counters[0], cap);
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
        t_to[k] = t[k];
        gid_to[k] = gid[k];
    }
}

extern "C" cs_status cs_cuda_save_results(const cs_cuda_state *s, int *counters, double *spike_time, int *spike_gid,
                                          double *samples, size_t nsample) {
    CS_TRY(cs_cuda_copy_async(counters, s->counters, 3 * sizeof(int), s->stream));
    k_save_spikes<<<32, CS_THREADS, 0, stream_of(s)>>>(s->counters, s->cap_spike, s->spike_time, s->spike_gid,
                                                        spike_time, spike_gid);
    CS_LAUNCHED("saving an epoch's spikes");
    return cs_cuda_copy_async(samples, s->samples, nsample * sizeof(double), s->stream);
}

__global__ void k_next_steps(cs_cuda_step_ctx *ctx, int n) {
    cs_pdl_enter();
    ctx->k += n;
}

extern "C" cs_status cs_cuda_next_steps(const cs_cuda_state *s, int n) {
    CS_STEP_LAUNCH(s, "advancing the step", k_next_steps, 1, 1, (cs_cuda_step_ctx *)s->ctx, n);
    return CS_OK;
}

// ---- events ------------------------------------------------------------------------------
#define CS_DELIVER_BLOCKS 32 /* a fixed grid (graphs replay it) striding over the step's events */
__global__ void k_deliver(const cs_cuda_step_ctx *ctx, int j, const int *hi_of, const int *local, const double *w,
                          double *g_syn) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int step = ctx->k + j, lo = hi_of[step], hi = hi_of[step + 1];
    for (int k = lo + blockIdx.x * blockDim.x + threadIdx.x; k < hi; k += gridDim.x * blockDim.x)
        atomicAdd(&g_syn[local[k]], w[k]); /* several events may hit one synapse */
}

/* the step's event range, for a catalogue synapse's net_receive (graphs replay it) */
__global__ void k_event_range(const cs_cuda_step_ctx *ctx, int j, const int *hi_of, int *range) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int step = ctx->k + j;
    range[0] = hi_of[step];
    range[1] = hi_of[step + 1];
}

/* A catalogue mechanism's view for a launch: this step's v, i, g, and where its kernels find
 * the step's time (the context's step + j, plus t_offset [ms]). */
static cs_mech_view catalogue_view(const cs_cuda_state *s, const cs_cuda_mech *m, int j, double t_offset) {
    cs_mech_view v = m->view;
    v.v = s->v;
    v.i = s->i;
    v.g = s->g;
    v.step_ctx = (const cs_mech_step_ctx *)s->ctx;
    v.step_j = j;
    v.t_offset = t_offset;
    return v;
}

/* Each synapse type's events of the step, type after type (their instances are apart). */
extern "C" cs_status cs_cuda_deliver(const cs_cuda_state *s, int j, int came_ahead) {
    for (int q = 0; q < s->nsyn; ++q) {
        const cs_cuda_mech *m = &s->mech[s->syn_groups[q]];
        const int *hi = s->ev_hi + (size_t)q * (size_t)s->ev_stride;
        if (came_ahead && m->ahead) continue; /* delivered by its update in the step before */
        if (m->kind == CS_CUDA_CATALOGUE) {
            CS_STEP_LAUNCH(s, "event range", k_event_range, 1, 1, (const cs_cuda_step_ctx *)s->ctx, j, hi, s->ev_range + 2 * q);
            cs_mech_view v = catalogue_view(s, m, j, 0.0); /* events at the step's start */
            m->gpu->net_receive(&v, s->ev_range + 2 * q, s->ev_local, s->ev_weight, s->stream);
            CS_LAUNCHED("event delivery (catalogue)");
            continue;
        }
        CS_STEP_LAUNCH(s, "event delivery", k_deliver, CS_DELIVER_BLOCKS, CS_THREADS, (const cs_cuda_step_ctx *)s->ctx, j, hi, s->ev_local,
                       s->ev_weight, m->state + (size_t)CS_EXPSYN_G * m->n);
    }
    return CS_OK;
}

// ---- currents: each instance adds weight·i [nA] and weight·g [µS] to its CV ----------------
// Density mechanisms have one instance per CV within a group, so they add without atomics;
// point mechanisms may share a CV and use atomics.
__global__ void k_hh_current(int n, const int *node, const double *w, const double *p, int pu,
                             const double *st, const double *v, double *I, double *G) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    int c = node[k];
    hh_add_current(n, k, c, v[c], st[CS_HH_M * n + k], st[CS_HH_H * n + k], st[CS_HH_N * n + k], w, p, pu, I, G);
}

__global__ void k_expsyn_current(int n, const int *node, const double *p, int pu, const double *st,
                                 const double *v, double *I, double *G) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    int c = node[k];
    expsyn_add_current(n, k, c, v[c], p, pu, st, I, G);
}

__global__ void k_iclamp_current(int n, const int *node, const double *p, int pu, const cs_cuda_step_ctx *ctx, int j,
                                 double dt, double *I) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    double e = iclamp_current(n, k, p, pu, ctx->step0 + ctx->k + j, dt);
    if (e != 0.0) atomicAdd(&I[node[k]], e);
}

// Before the currents, one launch for every ion: zero its current density on the rows where some
// instance uses it (elsewhere it stays 0: a memset of the whole per-CV array moved 8 B a CV a step
// for a few soma rows), and e = Nernst on the rows where a mechanism writes a concentration
// (NEURON's ion_cur). A concentration gone negative or NaN makes e ±1e6 or NaN, which the NaN watch
// then reports as the cell's voltage (the CPU backend names the concentration).
struct cs_ion_step {
    int nzero[CS_NION], nnernst[CS_NION];
    const int *zero_rows[CS_NION], *nernst_rows[CS_NION];
    double *i[CS_NION], *e[CS_NION];
    const double *ci[CS_NION], *co[CS_NION];
};

__constant__ double k_ion_valence[CS_NION] = CS_ION_VALENCE;

__global__ void k_ions_step(cs_ion_step a, double celsius) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    for (int ion = 0; ion < CS_NION; ++ion) {
        if (k < a.nzero[ion]) a.i[ion][a.zero_rows[ion][k]] = 0.0;
        if (k < a.nnernst[ion]) {
            int r = a.nernst_rows[ion][k];
            a.e[ion][r] = cs_nernst(a.ci[ion][r], a.co[ion][r], k_ion_valence[ion], celsius);
        }
    }
}

extern "C" cs_status cs_cuda_ions_prepare(const cs_cuda_state *s, double celsius) {
    cs_ion_step a = {};
    int most = 0;
    for (int ion = 0; ion < CS_NION; ++ion) {
        if (s->ion_i[ion]) a.nzero[ion] = s->ion_used_n[ion];
        a.nnernst[ion] = s->nernst_n[ion];
        a.zero_rows[ion] = s->ion_used_rows[ion];
        a.nernst_rows[ion] = s->nernst_rows[ion];
        a.i[ion] = s->ion_i[ion];
        a.e[ion] = s->ion_e[ion];
        a.ci[ion] = s->ion_ci[ion];
        a.co[ion] = s->ion_co[ion];
        most = max(most, max(a.nzero[ion], a.nnernst[ion]));
    }
    if (most) {
        CS_STEP_LAUNCH(s, "ion currents zeroed, Nernst", k_ions_step, blocks_for(most), CS_THREADS, a, celsius);
    }
    return CS_OK;
}

/* A catalogue group's view for its currents: at the step's midpoint, each instance's share into
 * its slot where the gather is on (cs_cuda_gather.h). */
static cs_mech_view current_view(const cs_cuda_state *s, const cs_cuda_mech *m, int j) {
    cs_mech_view v = catalogue_view(s, m, j, 0.5 * s->dt);
    if (s->gather.on) {
        v.inst_i = s->gather.slot_i + m->slot0;
        v.inst_g = s->gather.slot_g + m->slot0;
        for (int ion = 0; ion < CS_NION; ++ion)
            v.inst_ion[ion] = m->slot0_ion[ion] >= 0 ? s->gather.slot_ion[ion] + m->slot0_ion[ion] : NULL;
    }
    return v;
}

/* The views of the groups merged under head, and their types' ids, for a *_many call. */
static int merged_views(const cs_cuda_state *s, int j, int head, int currents, cs_mech_view *view,
                        const cs_mech_view **vp, int *id) {
    int n = 0;
    for (int q = head; q < s->nmech; ++q) {
        const cs_cuda_mech *m = &s->mech[q];
        if (s->merge_head[q] != head || !m->n) continue;
        view[n] = currents ? current_view(s, m, j) : catalogue_view(s, m, j, s->dt);
        vp[n] = &view[n];
        id[n++] = m->gpu->many_id;
    }
    return n;
}

extern "C" cs_status cs_cuda_merged(const cs_cuda_state *s, int j, int head, int currents) {
    cs_mech_view view[CS_CUDA_MAX_MECH];
    const cs_mech_view *vp[CS_CUDA_MAX_MECH];
    int id[CS_CUDA_MAX_MECH], n = merged_views(s, j, head, currents, view, vp, id);
    const cs_mech_gpu_ops *ops = s->mech[head].gpu;
    if (n) (currents ? ops->current_many : ops->advance_many)(vp, id, n, s->stream);
    CS_LAUNCHED(currents ? "mechanism currents (merged)" : "state update (merged)");
    return CS_OK;
}

extern "C" int cs_cuda_synapse_type(const cs_cuda_state *s, int q) {
    for (int t = 0; t < s->nsyn; ++t)
        if (s->syn_groups[t] == q) return t;
    return -1;
}

extern "C" cs_status cs_cuda_advance_ahead(const cs_cuda_state *s, int j, int q) {
    const cs_cuda_mech *m = &s->mech[q];
    const int t = cs_cuda_synapse_type(s, q);
    if (!m->n) return CS_OK;
    if (t < 0 || !m->gpu->advance_ahead) return cs_error_set(CS_ERR_INTERNAL, "GPU: group %d has no update ahead", q);
    cs_mech_view v = current_view(s, m, j);
    v.t_offset = s->dt; /* the update at the step's end; the kernel moves on to step j + 1 */
    m->gpu->advance_ahead(&v, s->ev_hi + (size_t)t * (size_t)s->ev_stride, s->ev_local, s->ev_weight, s->stream);
    CS_LAUNCHED("state update with the next step's events and current");
    return CS_OK;
}

extern "C" cs_status cs_cuda_currents(const cs_cuda_state *s, int j, int first, int end) {
    for (int q = first; q < end && q < s->nmech; ++q) {
        const cs_cuda_mech *m = &s->mech[q];
        if (!m->n) continue;
        unsigned nb = blocks_for(m->n);
        switch (m->kind) {
        case CS_CUDA_CATALOGUE: {
            cs_mech_view v = current_view(s, m, j);
            m->gpu->current(&v, s->stream);
            break;
        }
        case CS_CUDA_HH:
            if (q == 0 && s->hh_ahead) continue; /* computed by the last state update */
            CS_STEP_LAUNCH(s, "mechanism currents", k_hh_current, nb, CS_THREADS, m->n, m->node, m->weight, m->param, m->param_uniform, m->state,
                           s->v, s->i, s->g);
            break;
        case CS_CUDA_EXPSYN:
            CS_STEP_LAUNCH(s, "mechanism currents", k_expsyn_current, nb, CS_THREADS, m->n, m->node, m->param, m->param_uniform, m->state, s->v,
                           s->i, s->g);
            break;
        case CS_CUDA_ICLAMP:
            CS_STEP_LAUNCH(s, "mechanism currents", k_iclamp_current, nb, CS_THREADS, m->n, m->node, m->param, m->param_uniform,
                           (const cs_cuda_step_ctx *)s->ctx, j, s->dt, s->i);
            break;
        }
        CS_LAUNCHED("mechanism currents");
    }
    return CS_OK;
}

// The slots of each CV added to i, g (list 0) and ion_i (lists 1 + ion), in the CPU's order:
// from the value already there (hh's current with hh_ahead; 0 otherwise), slot after slot. Where
// no other group writes those arrays (sole) the value there is zero and is not read: a row's i
// and g are scattered sectors, a third of the gather's traffic (0 + x is x, bit for bit).
struct cs_gather_args {
    cs_cuda_gather_list list[1 + CS_NION];
    const double *src[1 + CS_NION], *src_g;
    double *dst[1 + CS_NION], *dst_g;
    int sole;
};

__global__ void k_gather(cs_gather_args a) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    for (int l = 0; l <= CS_NION; ++l) {
        const cs_cuda_gather_list L = a.list[l];
        if (k >= L.nrow) continue;
        const int r = L.row[k], end = L.first[k + 1];
        double x = a.sole ? 0.0 : a.dst[l][r];
        if (l == 0) {
            double y = a.sole ? 0.0 : a.dst_g[r];
            for (int q = L.first[k]; q < end; ++q) {
                x += a.src[0][L.slot[q]];
                y += a.src_g[L.slot[q]];
            }
            a.dst_g[r] = y;
        } else {
            for (int q = L.first[k]; q < end; ++q) x += a.src[l][L.slot[q]];
        }
        a.dst[l][r] = x;
    }
}

extern "C" cs_status cs_cuda_gather_currents(const cs_cuda_state *s) {
    const cs_cuda_gather *G = &s->gather;
    if (!G->on) return CS_OK;
    cs_gather_args a = {};
    int most = 0;
    for (int l = 0; l <= CS_NION; ++l) {
        a.list[l] = G->list[l];
        a.src[l] = l ? G->slot_ion[l - 1] : G->slot_i;
        a.dst[l] = l ? s->ion_i[l - 1] : s->i;
        if (!a.src[l] || !a.dst[l]) a.list[l].nrow = 0;
        most = max(most, a.list[l].nrow);
    }
    a.src_g = G->slot_g;
    a.dst_g = s->g;
    a.sole = G->sole;
    if (!most) return CS_OK;
    CS_STEP_LAUNCH(s, "current gather", k_gather, blocks_for(most), CS_THREADS, a);
    return CS_OK;
}

extern "C" cs_status cs_cuda_first_currents(const cs_cuda_state *s) {
    if (!s->hh_ahead) return CS_OK;
    const cs_cuda_mech *m = &s->mech[0];
    CS_STEP_LAUNCH(s, "mechanism currents", k_hh_current, blocks_for(m->n), CS_THREADS, m->n, m->node, m->weight, m->param, m->param_uniform,
                   m->state, s->v, s->i, s->g);
    return CS_OK;
}

// ---- assembly (cs_cable_matrix.h): d = d0 + g_m;  rhs = C/dt·v + b0 − (i − g·v) -----------
__global__ void k_assemble(long n, const double *d0, const double *b0, const double *cdt, const double *v,
                           double *I, double *G, double *d, double *rhs) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    long r = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (r >= n) return;
    double g = G[r];
    d[r] = d0[r] + g;
    rhs[r] = cdt[r] * v[r] + b0[r] - I[r] + g * v[r];
    I[r] = 0.0; /* ready for the next step's currents */
    G[r] = 0.0;
}

extern "C" cs_status cs_cuda_assemble_rows(void *stream, size_t n, const double *d0, const double *b0,
                                            const double *cdt, const double *v, double *i, double *g, double *d,
                                            double *rhs) {
    k_assemble<<<blocks_for((long)n), CS_THREADS, 0, (cudaStream_t)stream>>>((long)n, d0, b0, cdt, v, i, g, d, rhs);
    CS_LAUNCHED("assembly");
    return CS_OK;
}

extern "C" cs_status cs_cuda_assemble(const cs_cuda_state *s) {
    CS_STEP_LAUNCH(s, "assembly", k_assemble, blocks_for((long)s->n_int), CS_THREADS, (long)s->n_int, s->d0, s->b0, s->cdt, s->v, s->i,
                   s->g, s->d, s->rhs);
    return CS_OK;
}

// ---- state update with the new v ------------------------------------------------------------
__global__ void k_hh_advance(int n, const int *node, const double *v, double *st, double q10, double dt) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    double m, h, nn;
    hh_advance_one(n, k, v[node[k]], st, q10, dt, &m, &h, &nn);
}

/* hh's state update, then its current for the next step with the same v and the new states
 * (hh_ahead): what k_hh_advance then k_hh_current compute, reading v, the node and the states once */
__global__ void k_hh_advance_current(int n, int k0, int k1, const int *node, const double *w, const double *p, int pu,
                                     double *st, const double *v, double *I, double *G, double q10, double dt) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int k = k0 + blockIdx.x * blockDim.x + threadIdx.x; /* instances [k0, k1) of n */
    if (k >= k1) return;
    double wi, wg;
    const int c = hh_ahead_instance(n, k, node, w, p, pu, st, v, q10, dt, &wi, &wg);
    I[c] += wi;
    G[c] += wg;
}

__global__ void k_expsyn_advance(int n, const double *p, int pu, double *st, double dt) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    st[CS_EXPSYN_G * n + k] = cs_expsyn_decay(st[CS_EXPSYN_G * n + k], prm(p, CS_EXPSYN_TAU, n, k, pu), dt);
}

extern "C" cs_status cs_cuda_hh_ahead_range(const cs_cuda_state *s, double celsius, int k0, int k1, void *stream) {
    const cs_cuda_mech *m = &s->mech[0];
    if (k1 <= k0) return CS_OK;
    const bool pdl = s->pdl && stream == s->pdl_stream; /* not on a staged launch's own stream */
    CS_CUDA_CALL(cs_pdl_launch(pdl, k_hh_advance_current, dim3(blocks_for(k1 - k0)), dim3(CS_THREADS), 0, (cudaStream_t)stream,
                               m->n, k0, k1, m->node, m->weight, m->param, m->param_uniform, m->state, s->v, s->i, s->g,
                               cs_hh_q10(celsius), s->dt),
                 "state update (hh, with its next current)");
    return CS_OK;
}

extern "C" cs_status cs_cuda_advance(const cs_cuda_state *s, double celsius, int j, int first, int end) {
    double q10 = cs_hh_q10(celsius), dt = s->dt;
    for (int q = first; q < end && q < s->nmech; ++q) {
        const cs_cuda_mech *m = &s->mech[q];
        if (!m->n) continue;
        if (m->kind == CS_CUDA_HH && q == 0 && s->hh_ahead)
            CS_TRY(cs_cuda_hh_ahead_range(s, celsius, 0, m->n, stream_of(s)));
        else if (m->kind == CS_CUDA_HH)
            CS_STEP_LAUNCH(s, "state update", k_hh_advance, blocks_for(m->n), CS_THREADS, m->n, m->node, s->v, m->state, q10, dt);
        else if (m->kind == CS_CUDA_EXPSYN)
            CS_STEP_LAUNCH(s, "state update", k_expsyn_advance, blocks_for(m->n), CS_THREADS, m->n, m->param, m->param_uniform, m->state, dt);
        else if (m->kind == CS_CUDA_CATALOGUE) {
            cs_mech_view v = catalogue_view(s, m, j, dt); /* the state update at the step's end */
            m->gpu->advance(&v, s->stream);
        } else
            continue;
        CS_LAUNCHED("state update");
    }
    return CS_OK;
}

// ---- threshold detection (interpolated crossing time) and the NaN watch -------------------
__global__ void k_detect(int ndet, const int *row, const int *gid, const double *thr, double *vprev,
                         int ncell, const int *cell_row, const double *v, const cs_cuda_step_ctx *ctx, int j,
                         double dt, double *spike_time, int *spike_gid, int cap, int *counters) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    detect_and_watch(blockIdx.x * blockDim.x + threadIdx.x, ndet, row, gid, thr, vprev, ncell, cell_row, v, ctx, j, dt,
                     spike_time, spike_gid, cap, counters);
}

extern "C" cs_status cs_cuda_detect(const cs_cuda_state *s, int j) {
    int n = s->ndet > s->ncell ? s->ndet : s->ncell;
    if (!n) return CS_OK;
    CS_STEP_LAUNCH(s, "threshold detection", k_detect, blocks_for(n), CS_THREADS, s->ndet, s->det_row, s->det_gid, s->det_thr, s->det_vprev, s->ncell,
                   s->cell_row, s->v, (const cs_cuda_step_ctx *)s->ctx, j, s->dt, s->spike_time, s->spike_gid, s->cap_spike,
                   s->counters);
    return CS_OK;
}

/* row < 0: the row of the context's step + j, when that step ends on the stride (the rows an
 * epoch has sampled before it: one per multiple of stride passed since step0) */
/* The gather of a sample row: probe k reads v at row[k], or, where src is given and src[k] is
 * not NULL, the value src[k] points at (a mechanism state or an ion current density: those
 * arrays never move, unlike v). */
__global__ void k_sample(int n, const int *row, const double *const *src, const double *v, double *out,
                         const cs_cuda_step_ctx *ctx, int j, int stride, int r) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    if (r < 0 && (r = sample_row_of(ctx->step0 + ctx->k + j + 1, ctx->step0, stride)) < 0) return;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const double *p = src ? src[k] : NULL;
    out[(size_t)r * n + k] = p ? *p : v[row[k]];
}

/* i_membrane [nA] of probe q after a step (the CPU backend's membrane_current, in its order of
 * operations): the axial currents in at the new v, plus what its clamps inject at the step's
 * midpoint; at the initial row (ctx NULL) no step has run: no clamp current. */
__global__ void k_imem(int nq, const int *col, const int *row, const int *nb_first, const int *nb_row,
                       const double *nb_g, const int *el_first, const int *el_k, const double *cp, int cn, int cpu,
                       const double *v, double *out, int nprobe, const cs_cuda_step_ctx *ctx, int j, int stride,
                       int r, double dt) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    long long step = -1;
    if (r < 0) {
        step = ctx->step0 + ctx->k + j;
        if ((r = sample_row_of(step + 1, ctx->step0, stride)) < 0) return;
    }
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= nq) return;
    out[(size_t)r * nprobe + col[q]] = imem_value(q, row, nb_first, nb_row, nb_g, el_first, el_k, cp, cn, cpu, v, 0,
                                                  step, dt);
}

static void launch_imem(const cs_cuda_state *s, const cs_cuda_step_ctx *ctx, int j, int stride, int r) {
    const cs_cuda_mech *c = s->imem_clamp >= 0 ? &s->mech[s->imem_clamp] : NULL;
    k_imem<<<blocks_for(s->nimem), CS_THREADS, 0, stream_of(s)>>>(
        s->nimem, s->imem_col, s->imem_row, s->imem_nb_first, s->imem_nb_row, s->imem_nb_g, s->imem_el_first,
        s->imem_el_k, c ? c->param : NULL, c ? c->n : 0, c ? c->param_uniform : 0, s->v, s->samples, s->nprobe, ctx,
        j, stride, r, s->dt);
}

extern "C" cs_status cs_cuda_sample(const cs_cuda_state *s, int j) {
    if (!s->nprobe) return CS_OK;
    k_sample<<<blocks_for(s->nprobe), CS_THREADS, 0, stream_of(s)>>>(
        s->nprobe, s->probe_row, s->probe_src, s->v, s->samples, (const cs_cuda_step_ctx *)s->ctx, j,
        s->sample_stride, -1);
    CS_LAUNCHED("sampling");
    if (s->nimem) {
        launch_imem(s, (const cs_cuda_step_ctx *)s->ctx, j, s->sample_stride, -1);
        CS_LAUNCHED("sampling i_membrane");
    }
    return CS_OK;
}

extern "C" cs_status cs_cuda_sample_row(const cs_cuda_state *s, int r) {
    if (!s->nprobe) return CS_OK;
    k_sample<<<blocks_for(s->nprobe), CS_THREADS, 0, stream_of(s)>>>(s->nprobe, s->probe_row, s->probe_src, s->v,
                                                                     s->samples, NULL, 0, 1, r);
    CS_LAUNCHED("sampling");
    if (s->nimem) {
        launch_imem(s, NULL, 0, 1, r);
        CS_LAUNCHED("sampling i_membrane");
    }
    return CS_OK;
}

// ---- CUDA graphs -------------------------------------------------------------------------------
extern "C" cs_status cs_cuda_capture_begin(void *stream) {
    /* relaxed: the solver sets its device (cudaSetDevice) inside a solve */
    CS_CUDA_CALL(cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeRelaxed), "capturing steps");
    return CS_OK;
}

extern "C" cs_status cs_cuda_capture_end(void *stream, void **exec) {
    cudaGraph_t g = NULL;
    CS_CUDA_CALL(cudaStreamEndCapture((cudaStream_t)stream, &g), "capturing steps");
    cudaGraphExec_t e = NULL;
    /* kernels keep their streams' priorities (the lanes of latency-bound groups: setup_lanes) */
    cudaError_t err = cudaGraphInstantiate(&e, g, cudaGraphInstantiateFlagUseNodePriority);
    cudaGraphDestroy(g);
    if (err != cudaSuccess) return cuda_fail(err, "instantiating a graph of steps");
    *exec = (void *)e;
    return CS_OK;
}

extern "C" cs_status cs_cuda_graph_launch(void *exec, void *stream) {
    CS_CUDA_CALL(cudaGraphLaunch((cudaGraphExec_t)exec, (cudaStream_t)stream), "launching a graph of steps");
    return CS_OK;
}

extern "C" void cs_cuda_graph_destroy(void *exec) {
    if (exec) cudaGraphExecDestroy((cudaGraphExec_t)exec);
}

// ---- timing --------------------------------------------------------------------------------
extern "C" cs_status cs_cuda_timer_create(void **pool, int n) {
    cudaEvent_t *ev = (cudaEvent_t *)calloc((size_t)n, sizeof(cudaEvent_t));
    if (!ev) return cs_error_set(CS_ERR_NOMEM, "out of memory for timers");
    for (int k = 0; k < n; ++k) {
        cudaError_t e = cudaEventCreate(&ev[k]);
        if (e != cudaSuccess) {
            for (int j = 0; j < k; ++j) cudaEventDestroy(ev[j]);
            free(ev);
            return cuda_fail(e, "creating timing events");
        }
    }
    *pool = ev;
    return CS_OK;
}

extern "C" void cs_cuda_timer_destroy(void *pool, int n) {
    cudaEvent_t *ev = (cudaEvent_t *)pool;
    if (!ev) return;
    for (int k = 0; k < n; ++k) cudaEventDestroy(ev[k]);
    free(ev);
}

extern "C" cs_status cs_cuda_timer_record(void *pool, int k, void *stream) {
    CS_CUDA_CALL(cudaEventRecord(((cudaEvent_t *)pool)[k], (cudaStream_t)stream), "recording a timing event");
    return CS_OK;
}

extern "C" cs_status cs_cuda_stream_wait(void *stream, void *pool, int k) {
    CS_CUDA_CALL(cudaStreamWaitEvent((cudaStream_t)stream, ((cudaEvent_t *)pool)[k], 0), "waiting for an event");
    return CS_OK;
}

extern "C" cs_status cs_cuda_timer_sync(void *pool, int k) {
    CS_CUDA_CALL(cudaEventSynchronize(((cudaEvent_t *)pool)[k]), "running the step kernels");
    return CS_OK;
}

extern "C" cs_status cs_cuda_timer_elapsed(void *pool, int a, int b, float *ms) {
    cudaEvent_t *ev = (cudaEvent_t *)pool;
    CS_CUDA_CALL(cudaEventElapsedTime(ms, ev[a], ev[b]), "reading a timing event");
    return CS_OK;
}
