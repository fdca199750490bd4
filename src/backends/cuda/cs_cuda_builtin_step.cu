// The step's merged launches on a network of built-in mechanisms only (hh, expsyn, iclamp), where
// a step is a few microseconds of work and each dependent launch costs one or two
// (cs_backend_cuda.c, step_kernels; busyring × 1 024 on the H200, bench/NOTES.md, session 31).
// Every instance computes what the separate kernels compute (cs_cuda_device.cuh; hh through the
// one compiled body both call), so the results are the same bit for bit (tests/test_backend_cuda.py
// switches them off: CS_CUDA_AFTER_SOLVE=0, CS_CUDA_EVENTS_CURRENT=0, CS_CUDA_SYNAPSES_AHEAD=0).
//
// Before the solve, each expsyn group's events of the step and its current in one launch: a thread
// an instance sums its events into g in delivery order (the step's events are sorted by instance,
// each instance's in delivery order: cs_cuda_events.c), then adds its current. Where two events
// reach one instance in a step, that is the CPU's order of the two additions (the separate
// delivery's atomics add them in any order).
//
// After the solve: hh's state update with its next current, every expsyn group's decay, and
// threshold detection with the NaN watch, in one launch on the main stream instead of a launch each
// on two streams joined by events. Each reads v and writes only its own arrays; each block takes
// one of the three jobs. hh keeps a thread an instance: a lane per gate (three threads an instance,
// its chain of exps a third as long) was slower in this launch on busyring × 1 024 (H200: 0.0177-0.0183 s
// against 0.0165-0.0168).
//
// Inside a graph (ahead), the launch after the solve also adds each expsyn instance's events of
// the next step to its decayed g and gives its next current, so that the next step starts with
// its solve: hh's current is then added atomically beside the synapses'. hh adds first to a CV's
// zeroed i and g, so hh's and one synapse's sum is the same in either order (several synapses at
// one CV were summed in any order before too). A graph's first step does its own events and
// currents (the launch before, the last of a graph, gave none).
#include <cuda_runtime.h>

extern "C" {
#include "cs_cuda.h"
}
#include "cs_cuda_device.cuh"
#include "cs_cuda_launch.cuh"

#define AFTER_THREADS 128 /* a block's threads: busyring × 1 024's hh on 8 multiprocessors */

struct cs_after_solve_args {
    const double *v;
    double *I, *G;
    /* hh (group 0, with its next current: cs_cuda_state.hh_ahead); hh_n 0 when none or done */
    int hh_n, hh_blocks, hh_pu;
    const int *hh_node;
    const double *hh_w, *hh_p;
    double *hh_st, q10;
    /* detection and the NaN watch */
    int det_blocks, ndet, ncell, j, cap;
    const int *det_row, *det_gid, *cell_row;
    const double *det_thr;
    double *det_vprev, *spike_time, dt;
    int *spike_gid, *counters;
    const cs_cuda_step_ctx *ctx;
    /* the expsyn groups: group q's instances in blocks [exp_block[q], exp_block[q + 1]) after
     * detection's */
    int nexp, exp_block[CS_AFTER_SOLVE_EXPSYN + 1], exp_n[CS_AFTER_SOLVE_EXPSYN], exp_pu[CS_AFTER_SOLVE_EXPSYN];
    const double *exp_p[CS_AFTER_SOLVE_EXPSYN];
    double *exp_st[CS_AFTER_SOLVE_EXPSYN];
    /* ahead: also the next step's events (exp_hi: its type's ranges, NULL: none) and currents,
     * hh's and expsyn's, added atomically (cs_cuda_after_solve) */
    int ahead;
    const int *exp_node[CS_AFTER_SOLVE_EXPSYN], *exp_hi[CS_AFTER_SOLVE_EXPSYN], *ev_local;
    const double *ev_weight;
};

/* expsyn instance k's g with its events of step `step` added in delivery order (hi_of: its type's
 * ranges; the step's events sorted by instance) */
__device__ __forceinline__ double expsyn_events(double g, int k, const int *hi_of, int step, const int *local,
                                                const double *w) {
    const int hi = hi_of[step + 1];
    int a = hi_of[step], b = hi; /* the first of the step's events at an instance >= k */
    while (a < b) {
        const int mid = a + (b - a) / 2;
        if (local[mid] < k) a = mid + 1;
        else b = mid;
    }
    for (; a < hi && local[a] == k; ++a) g += w[a];
    return g;
}

__global__ void __launch_bounds__(AFTER_THREADS) k_after_solve(cs_after_solve_args a) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int b = blockIdx.x;
    if (b < a.hh_blocks) { /* first: the longest chains start first */
        const int k = b * AFTER_THREADS + threadIdx.x;
        if (k >= a.hh_n) return;
        double wi, wg;
        const int c = hh_ahead_instance(a.hh_n, k, a.hh_node, a.hh_w, a.hh_p, a.hh_pu, a.hh_st, a.v, a.q10, a.dt, &wi, &wg);
        if (a.ahead) { /* beside the synapses' currents */
            atomicAdd(&a.I[c], wi);
            atomicAdd(&a.G[c], wg);
        } else {
            a.I[c] += wi;
            a.G[c] += wg;
        }
        return;
    }
    b -= a.hh_blocks;
    if (b < a.det_blocks) {
        detect_and_watch(b * AFTER_THREADS + threadIdx.x, a.ndet, a.det_row, a.det_gid, a.det_thr, a.det_vprev,
                         a.ncell, a.cell_row, a.v, a.ctx, a.j, a.dt, a.spike_time, a.spike_gid, a.cap, a.counters);
        return;
    }
    b -= a.det_blocks;
    for (int q = 0; q < a.nexp; ++q) {
        if (b >= a.exp_block[q + 1]) continue;
        const int k = (b - a.exp_block[q]) * AFTER_THREADS + threadIdx.x, n = a.exp_n[q];
        if (k >= n) return;
        double *st = a.exp_st[q], g = cs_expsyn_decay(st[CS_EXPSYN_G * n + k], prm(a.exp_p[q], CS_EXPSYN_TAU, n, k, a.exp_pu[q]), a.dt);
        if (a.ahead && a.exp_hi[q]) g = expsyn_events(g, k, a.exp_hi[q], a.ctx->k + a.j + 1, a.ev_local, a.ev_weight);
        st[CS_EXPSYN_G * n + k] = g;
        if (a.ahead) {
            const int c = a.exp_node[q][k];
            expsyn_add_current(n, k, c, a.v[c], a.exp_p[q], a.exp_pu[q], st, a.I, a.G);
        }
        return;
    }
}

/* expsyn instance k's events of the step, then its current */
__global__ void k_expsyn_events_current(const cs_cuda_step_ctx *ctx, int j, const int *hi_of, const int *local,
                                        const double *w, int n, const int *node, const double *p, int pu, double *st,
                                        const double *v, double *I, double *G) {
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    st[CS_EXPSYN_G * n + k] = expsyn_events(st[CS_EXPSYN_G * n + k], k, hi_of, ctx->k + j, local, w);
    const int c = node[k];
    expsyn_add_current(n, k, c, v[c], p, pu, st, I, G);
}

extern "C" cs_status cs_cuda_events_currents(const cs_cuda_state *s, int j) {
    for (int q = 0; q < s->nmech; ++q) {
        const cs_cuda_mech *m = &s->mech[q];
        const int t = cs_cuda_synapse_type(s, q);
        if (m->kind != CS_CUDA_EXPSYN || t < 0 || !m->n) {
            CS_TRY(cs_cuda_currents(s, j, q, q + 1)); /* hh (ahead: nothing), iclamp */
            continue;
        }
        CS_STEP_LAUNCH(s, "event delivery and expsyn's current", k_expsyn_events_current, blocks_for(m->n), CS_THREADS,
                       (const cs_cuda_step_ctx *)s->ctx, j, s->ev_hi + (size_t)t * (size_t)s->ev_stride, s->ev_local,
                       s->ev_weight, m->n, m->node, m->param, m->param_uniform, m->state, s->v, s->i, s->g);
    }
    return CS_OK;
}

static int blocks_of(long n, long per_block) { return (int)((n + per_block - 1) / per_block); }

extern "C" int cs_cuda_after_solve_fits(const cs_cuda_state *s) {
    int nexp = 0;
    for (int q = 0; q < s->nmech; ++q) {
        const cs_cuda_mech *m = &s->mech[q];
        if (!m->n || m->kind == CS_CUDA_ICLAMP) continue; /* no state */
        if (m->kind == CS_CUDA_HH && q == 0 && s->hh_ahead) continue;
        if (m->kind != CS_CUDA_EXPSYN || ++nexp > CS_AFTER_SOLVE_EXPSYN) return 0;
    }
    return 1;
}

extern "C" int cs_cuda_synapses_ahead_fit(const cs_cuda_state *s) {
    if (s->probe_src || !s->hh_ahead) return 0; /* a probe of g would see the next step's events */
    for (int q = 1; q < s->nmech; ++q)
        if (s->mech[q].n && s->mech[q].kind != CS_CUDA_EXPSYN) return 0;
    return cs_cuda_after_solve_fits(s);
}

extern "C" cs_status cs_cuda_after_solve(const cs_cuda_state *s, double celsius, int j, int hh_done, int ahead) {
    cs_after_solve_args a = {};
    a.ahead = ahead;
    a.ev_local = s->ev_local;
    a.ev_weight = s->ev_weight;
    a.v = s->v;
    a.I = s->i;
    a.G = s->g;
    a.dt = s->dt;
    const cs_cuda_mech *hh = s->nmech > 0 && s->mech[0].kind == CS_CUDA_HH && s->hh_ahead && !hh_done ? &s->mech[0] : NULL;
    if (hh && hh->n) {
        a.hh_n = hh->n;
        a.hh_blocks = blocks_of(hh->n, AFTER_THREADS);
        a.hh_node = hh->node;
        a.hh_w = hh->weight;
        a.hh_p = hh->param;
        a.hh_pu = hh->param_uniform;
        a.hh_st = hh->state;
        a.q10 = cs_hh_q10(celsius);
    }
    a.ndet = s->ndet;
    a.ncell = s->ncell;
    a.det_blocks = blocks_of(s->ndet > s->ncell ? s->ndet : s->ncell, AFTER_THREADS);
    a.det_row = s->det_row;
    a.det_gid = s->det_gid;
    a.det_thr = s->det_thr;
    a.det_vprev = s->det_vprev;
    a.cell_row = s->cell_row;
    a.ctx = (const cs_cuda_step_ctx *)s->ctx;
    a.j = j;
    a.spike_time = s->spike_time;
    a.spike_gid = s->spike_gid;
    a.cap = s->cap_spike;
    a.counters = s->counters;
    for (int q = 0; q < s->nmech; ++q) {
        const cs_cuda_mech *m = &s->mech[q];
        if (m->kind != CS_CUDA_EXPSYN || !m->n) continue;
        if (a.nexp == CS_AFTER_SOLVE_EXPSYN) return cs_error_set(CS_ERR_INTERNAL, "GPU: more expsyn groups than one launch takes");
        a.exp_n[a.nexp] = m->n;
        a.exp_pu[a.nexp] = m->param_uniform;
        a.exp_p[a.nexp] = m->param;
        a.exp_st[a.nexp] = m->state;
        a.exp_node[a.nexp] = m->node;
        const int t = cs_cuda_synapse_type(s, q);
        a.exp_hi[a.nexp] = t < 0 ? NULL : s->ev_hi + (size_t)t * (size_t)s->ev_stride;
        a.exp_block[a.nexp + 1] = a.exp_block[a.nexp] + blocks_of(m->n, AFTER_THREADS);
        a.nexp++;
    }
    const int nb = a.hh_blocks + a.det_blocks + a.exp_block[a.nexp];
    if (!nb) return CS_OK;
    CS_STEP_LAUNCH(s, "state update and threshold detection", k_after_solve, nb, AFTER_THREADS, a);
    return CS_OK;
}
