// The persistent epoch kernel (solver "epoch"): one block per cell runs all the steps of an epoch,
// so a small network's step costs no launch at all. Cells do not interact within an epoch (spikes
// reach other cells after at least the minimum delay, at epoch boundaries), so no step needs a
// grid-wide barrier. The cell's v, constants, currents and eliminated rows stay in shared memory
// for the whole epoch; the mechanisms' states stay in global memory (L1/L2). The Hines solve goes
// by unbranched chains: a thread eliminates one chain serially, all chains of one height at once,
// so a step costs two barriers per level of branching, and the path from the deepest leaf to the
// root costs one FMA per row (the pivots' continuant; the divisions come after, in parallel).
// (bench/NOTES.md, session 14: row by row by depth, then a reciprocal per row of a chain, each
// left the solve at 70-78 % of the step.) The step is the one of the step kernels (cs_cuda_kernels.cu), with the same
// per-instance formulas (cs_cuda_device.cuh): delivery, currents by mechanism group, assembly
// and solve, state update, detection, sampling.
#include <cuda_runtime.h>
#include <limits.h>
#include <string.h>

extern "C" {
#include "cs_cuda.h"
}
#include "cs_cuda_device.cuh"

#define EP_MAXM 4 /* mechanism groups with a kernel of their own: hh, expsyn, iclamp */

typedef struct {
    int kind, n, pu;
    const int *node;
    const double *w, *p;
    double *st;
    const int *first; /* [ncell + 1] into inst */
    const int *inst;
} ep_mech;

typedef struct {
    const int *cell_first, *chain_first, *chain_head, *chain_len, *hl_first, *hl, *parent, *child_first, *child;
    const double *d0, *cdt, *b0, *u;
    double *v;
    int nmech;
    ep_mech m[EP_MAXM];
    int syn; /* the synapse group, -1 when none */
    const int *syn_cell, *ev_local, *ev_hi;
    const double *ev_weight;
    const int *det_first, *det_idx, *det_row, *det_gid;
    const double *det_thr;
    double *det_vprev;
    const int *cell_row;
    int nprobe;
    const int *probe_first, *probe_idx, *probe_row;
    const double *const *probe_src;
    double *samples;
    const int *imem_first, *imem_idx, *imem_col, *imem_row, *nb_first, *nb_row, *el_first, *el_k;
    const double *nb_g;
    int clamp; /* the iclamp group for i_membrane, -1 when none */
    double *spike_time;
    int *spike_gid;
    int cap;
    int *counters;
    long long *phase_cycles;
    double dt, q10;
    int stride;
} ep_args;

/* shared arrays per row: v, d0, C/dt, b0, u, i, g; the eliminated row's a = u/d', b = rhs'/d'
 * (first its continuant p and S), what a chain's head adds to its parent (−a·u, −a·rhs'), and
 * p_{r+1} in the row's scale; then its structure: ints per row (parent, children's first, child,
 * and at most one chain head, length and height bound each) */
#define EP_ARRAYS 12
#define EP_INTS 6

extern __shared__ double ep_smem[];

/* block 0's thread 0 adds the cycles since *t0 to phase p */
#define EP_PHASE(p)                                 \
    do {                                            \
        if (timing) {                               \
            long long t1 = clock64();               \
            cyc[p] += t1 - t0;                      \
            t0 = t1;                                \
        }                                           \
    } while (0)

__global__ void k_epoch(const ep_args a, long long step0, int nsteps) {
    const int c = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
    const int base = a.cell_first[c], n = a.cell_first[c + 1] - base;
    double *V = ep_smem, *D0 = V + n, *CDT = D0 + n, *B0 = CDT + n, *U = B0 + n, *I = U + n, *G = I + n;
    double *A = G + n, *B = A + n, *TD = B + n, *TR = TD + n, *PN = TR + n;
    /* the cell's structure, read at every step: on chip too */
    const int c0 = a.chain_first[c], nch = a.chain_first[c + 1] - c0, h0 = a.hl_first[c];
    const int nlev = a.hl_first[c + 1] - h0 - 1, cf0 = a.child_first[base];
    int *parent = (int *)(PN + n), *cfirst = parent + n, *child = cfirst + n + 1, *chead = child + n, *clen = chead + nch;
    int *hl = clen + nch;
    for (int r = tid; r < n; r += nt) {
        V[r] = a.v[base + r];
        D0[r] = a.d0[base + r];
        CDT[r] = a.cdt[base + r];
        B0[r] = a.b0[base + r];
        U[r] = a.u[base + r];
        I[r] = G[r] = 0.0;
        parent[r] = a.parent[base + r];
        cfirst[r] = a.child_first[base + r] - cf0;
        if (r) child[r - 1] = a.child[cf0 + r - 1]; /* n - 1 children */
    }
    if (tid == 0) cfirst[n] = a.child_first[base + n] - cf0;
    for (int x = tid; x < nch; x += nt) {
        chead[x] = a.chain_head[c0 + x];
        clen[x] = a.chain_len[c0 + x];
    }
    for (int x = tid; x <= nlev; x += nt) hl[x] = a.hl[h0 + x];
    const bool timing = c == 0 && tid == 0;
    long long cyc[CS_CUDA_EPOCH_PHASES] = {0, 0, 0, 0, 0, 0, 0, 0}, t0 = timing ? clock64() : 0;
    __syncthreads();
    for (int k = 0; k < nsteps; ++k) {
        const long long step = step0 + k;
        /* events due at this step: the block takes those of its own synapses (every block scans
         * the step's events: cheap on the small networks epoch is for) */
        const int ev_lo = a.ev_hi[k], ev_end = a.ev_hi[k + 1]; /* the only synapse type's (cs_cuda.h) */
        if (a.syn >= 0 && ev_end > ev_lo) { /* the same test in every thread: the barrier is safe */
            const ep_mech &sm = a.m[a.syn];
            for (int e = ev_lo + tid; e < ev_end; e += nt) {
                int s = a.ev_local[e];
                if (a.syn_cell[s] == c) atomicAdd(&sm.st[CS_EXPSYN_G * sm.n + s], a.ev_weight[e]);
            }
            __syncthreads();
        }
        EP_PHASE(0);
        /* currents, group after group (as the step kernels add them) */
        for (int q = 0; q < a.nmech; ++q) {
            const ep_mech &m = a.m[q];
            for (int j = m.first[c] + tid; j < m.first[c + 1]; j += nt) {
                const int i = m.inst[j], r = m.node[i] - base;
                if (m.kind == CS_CUDA_HH)
                    hh_add_current(m.n, i, r, V[r], m.st[CS_HH_M * m.n + i], m.st[CS_HH_H * m.n + i],
                                   m.st[CS_HH_N * m.n + i], m.w, m.p, m.pu, I, G);
                else if (m.kind == CS_CUDA_EXPSYN)
                    expsyn_add_current(m.n, i, r, V[r], m.p, m.pu, m.st, I, G);
                else {
                    double e = iclamp_current(m.n, i, m.p, m.pu, step, a.dt);
                    if (e != 0.0) atomicAdd(&I[r], e);
                }
            }
            __syncthreads();
        }
        EP_PHASE(1);
        /* assembly, every row at once: A, B hold d and rhs until the elimination replaces them */
        for (int r = tid; r < n; r += nt) {
            const double g = G[r], vr = V[r];
            A[r] = D0[r] + g;
            B[r] = CDT[r] * vr + B0[r] + (g * vr - I[r]);
            I[r] = G[r] = 0.0;
        }
        __syncthreads();
        EP_PHASE(2);
        /* elimination, chain by chain, lowest chains first (a chain's child chains are lower).
         * Along a chain the pivots d'_r = d_r − u_{r+1}²/d'_{r+1} would put a reciprocal on the
         * path from row to row; the thread runs their continuant instead, p_r = d_r·p_{r+1} −
         * u_{r+1}²·p_{r+2} (d'_r = p_r/p_{r+1}), and S_r = rhs'_r·p_{r+1} = rhs_r·p_{r+1} −
         * u_{r+1}·S_{r+1}: one FMA per row on the path; the divisions come after, every row at
         * once. p is kept within 2^±500 by exact powers of two (a row's p, p_{r+1} and S share
         * one scale). The chain's last row gathers its child chains' heads (TD, TR); its head
         * leaves what it adds to its parent: −u_h²/d'_h and −u_h·rhs'_h/d'_h. */
        for (int H = 0; H < nlev; ++H) {
            for (int x = hl[H] + tid; x < hl[H + 1]; x += nt) {
                const int h = chead[x], e = h + clen[x] - 1;
                double cd = 0.0, cr = 0.0;
                for (int y = cfirst[e]; y < cfirst[e + 1]; ++y) {
                    const int ch = child[y];
                    cd += TD[ch];
                    cr += TR[ch];
                }
                double p = A[e] + cd, S = B[e] + cr, pn = 1.0; /* p_e, S_e, p_{e+1} */
                A[e] = p;
                B[e] = S;
                PN[e] = pn;
                double nd = e > h ? A[e - 1] : 0.0, nr = e > h ? B[e - 1] : 0.0, nu = U[e];
                for (int r = e - 1; r >= h; --r) {
                    const double d = nd, rk = nr, u1 = nu; /* row r; u1 couples row r + 1 to it */
                    if (r > h) {
                        nd = A[r - 1];
                        nr = B[r - 1];
                    }
                    nu = U[r];
                    const double pr = fma(d, p, -(u1 * u1) * pn), sr = fma(rk, p, -u1 * S);
                    pn = p;
                    p = pr;
                    S = sr;
                    if (!(fabs(p) < 0x1p+500 && fabs(p) > 0x1p-500)) { /* exact: a power of two */
                        const int ex = ilogb(p);
                        p = scalbn(p, -ex);
                        pn = scalbn(pn, -ex);
                        S = scalbn(S, -ex);
                    }
                    A[r] = p;
                    B[r] = S;
                    PN[r] = pn;
                }
                if (h) {
                    const double inv = 1.0 / p, uh = U[h];
                    TD[h] = -(uh * uh) * pn * inv;
                    TR[h] = -uh * S * inv;
                }
            }
            __syncthreads();
        }
        /* the divisions, every row at once: a = u/d' = u·p_{r+1}/p_r, b = rhs'/d' = S_r/p_r; the
         * root's b is its new v */
        for (int r = tid; r < n; r += nt) {
            const double inv = 1.0 / A[r];
            if (r == 0) {
                V[0] = B[0] * inv;
                continue;
            }
            A[r] = U[r] * PN[r] * inv;
            B[r] = B[r] * inv;
        }
        __syncthreads();
        EP_PHASE(3);
        /* substitution, highest chains first (the root's): x = b − a·x_parent; the next row's a
         * and b are loaded before this row's FMA */
        for (int H = nlev - 1; H >= 0; --H) {
            for (int x = hl[H] + tid; x < hl[H + 1]; x += nt) {
                const int h = chead[x], e = h + clen[x] - 1;
                double xr = h ? B[h] - A[h] * V[parent[h]] : V[0];
                V[h] = xr;
                double na = h < e ? A[h + 1] : 0.0, nb = h < e ? B[h + 1] : 0.0;
                for (int r = h + 1; r <= e; ++r) {
                    const double ar = na, br = nb;
                    if (r < e) {
                        na = A[r + 1];
                        nb = B[r + 1];
                    }
                    xr = br - ar * xr;
                    V[r] = xr;
                }
            }
            __syncthreads();
        }
        EP_PHASE(4);
        for (int q = 0; q < a.nmech; ++q) {
            const ep_mech &m = a.m[q];
            if (m.kind == CS_CUDA_HH) { /* a thread per gate: a third of the latency where few instances are */
                const int first = m.first[c], ng = 3 * (m.first[c + 1] - first);
                for (int t = tid; t < ng; t += nt) {
                    const int i = m.inst[first + t / 3], gate = t % 3;
                    double inf, tau, *x = m.st + (size_t)gate * m.n + i;
                    cs_hh_gate_at(V[m.node[i] - base], a.q10, gate, &inf, &tau);
                    *x = cs_cnexp(*x, inf, tau, a.dt);
                }
                continue;
            }
            for (int j = m.first[c] + tid; j < m.first[c + 1]; j += nt) {
                const int i = m.inst[j];
                if (m.kind == CS_CUDA_EXPSYN)
                    m.st[CS_EXPSYN_G * m.n + i] =
                        cs_expsyn_decay(m.st[CS_EXPSYN_G * m.n + i], prm(m.p, CS_EXPSYN_TAU, m.n, i, m.pu), a.dt);
            }
        }
        EP_PHASE(5);
        for (int j = a.det_first[c] + tid; j < a.det_first[c + 1]; j += nt) {
            const int d = a.det_idx[j];
            const double vn = V[a.det_row[d] - base];
            detect_crossing(a.det_vprev[d], vn, a.det_thr[d], step_time(step, a.dt), a.dt, a.det_gid[d], a.spike_time,
                            a.spike_gid, a.cap, a.counters);
            a.det_vprev[d] = vn;
        }
        if (tid == 0 && !isfinite(V[a.cell_row[c] - base]) && atomicMin(&a.counters[1], k) > k) a.counters[2] = c;
        EP_PHASE(6);
        const int row = sample_row_of(step + 1, step0, a.stride);
        if (row >= 0) {
            if (a.probe_src) __syncthreads(); /* probes of states read what the update wrote */
            double *out = a.samples + (size_t)row * a.nprobe;
            for (int j = a.probe_first[c] + tid; j < a.probe_first[c + 1]; j += nt) {
                const int p = a.probe_idx[j];
                const double *src = a.probe_src ? a.probe_src[p] : NULL;
                out[p] = src ? *src : V[a.probe_row[p] - base];
            }
            const ep_mech *cl = a.clamp >= 0 ? &a.m[a.clamp] : NULL;
            for (int j = a.imem_first[c] + tid; j < a.imem_first[c + 1]; j += nt) {
                const int q = a.imem_idx[j];
                out[a.imem_col[q]] = imem_value(q, a.imem_row, a.nb_first, a.nb_row, a.nb_g, a.el_first, a.el_k,
                                                cl ? cl->p : NULL, cl ? cl->n : 0, cl ? cl->pu : 0, V, base, step,
                                                a.dt);
            }
        }
        __syncthreads(); /* the next step's events and currents read and change what this step wrote */
        EP_PHASE(7);
    }
    for (int r = tid; r < n; r += nt) a.v[base + r] = V[r];
    if (timing)
        for (int p = 0; p < CS_CUDA_EPOCH_PHASES; ++p) a.phase_cycles[p] = cyc[p];
}

static cs_status epoch_fail(cudaError_t e, const char *what) {
    cudaGetLastError();
    return cs_error_set(e == cudaErrorMemoryAllocation ? CS_ERR_NOMEM : CS_ERR_DEVICE, "GPU: %s: %s", what,
                        cudaGetErrorString(e));
}

extern "C" cs_status cs_cuda_epoch_smem(int max_rows, size_t *smem) {
    int dev = 0, max_optin = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&max_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (err != cudaSuccess) return epoch_fail(err, "reading the device's shared memory");
    *smem = (size_t)max_rows * (EP_ARRAYS * sizeof(double) + EP_INTS * sizeof(int)) + 4 * sizeof(int);
    if (*smem > (size_t)max_optin)
        return cs_error_set(CS_ERR_UNSUPPORTED, "solver 'epoch': a cell of %d compartments needs %.0f KiB of shared "
                            "memory, more than the %d KiB a block may have; use another --solver",
                            max_rows, *smem / 1024.0, max_optin / 1024);
    return CS_OK;
}

extern "C" cs_status cs_cuda_epoch_prepare(cs_cuda_state *s) {
    cs_cuda_epoch *e = &s->epoch;
    CS_TRY(cs_cuda_epoch_smem(e->max_rows, &e->smem));
    /* a warp per 64 rows of the largest cell, 1 to 8 warps */
    int warps = (e->max_rows + 63) / 64;
    e->threads = 32 * (warps < 1 ? 1 : warps > 8 ? 8 : warps);
    cudaError_t err = cudaFuncSetAttribute(k_epoch, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)e->smem);
    if (err != cudaSuccess) return epoch_fail(err, "configuring the epoch kernel");
    return CS_OK;
}

extern "C" cs_status cs_cuda_epoch_run(const cs_cuda_state *s, long long step0, int nsteps, double celsius) {
    const cs_cuda_epoch *e = &s->epoch;
    ep_args a;
    memset(&a, 0, sizeof a);
    a.cell_first = e->cell_first;
    a.chain_first = e->chain_first;
    a.chain_head = e->chain_head;
    a.chain_len = e->chain_len;
    a.hl_first = e->hl_first;
    a.hl = e->hl;
    a.parent = e->parent;
    a.child_first = e->child_first;
    a.child = e->child;
    a.d0 = s->d0;
    a.cdt = s->cdt;
    a.b0 = s->b0;
    a.u = s->u;
    a.v = s->v;
    if (s->nmech > EP_MAXM) return cs_error_set(CS_ERR_INTERNAL, "solver 'epoch': %d mechanism groups", s->nmech);
    a.nmech = s->nmech;
    for (int q = 0; q < s->nmech; ++q) {
        const cs_cuda_mech *m = &s->mech[q];
        a.m[q] = (ep_mech){(int)m->kind, m->n, m->param_uniform, m->node, m->weight, m->param, m->state,
                           e->mech_first + (size_t)q * (e->ncell + 1), e->mech_inst};
    }
    a.syn = s->syn_group;
    a.syn_cell = e->syn_cell;
    a.ev_local = s->ev_local;
    a.ev_hi = s->ev_hi;
    a.ev_weight = s->ev_weight;
    a.det_first = e->det_first;
    a.det_idx = e->det_idx;
    a.det_row = s->det_row;
    a.det_gid = s->det_gid;
    a.det_thr = s->det_thr;
    a.det_vprev = s->det_vprev;
    a.cell_row = s->cell_row;
    a.nprobe = s->nprobe;
    a.probe_first = e->probe_first;
    a.probe_idx = e->probe_idx;
    a.probe_row = s->probe_row;
    a.probe_src = s->probe_src;
    a.samples = s->samples;
    a.imem_first = e->imem_first;
    a.imem_idx = e->imem_idx;
    a.imem_col = s->imem_col;
    a.imem_row = s->imem_row;
    a.nb_first = s->imem_nb_first;
    a.nb_row = s->imem_nb_row;
    a.nb_g = s->imem_nb_g;
    a.el_first = s->imem_el_first;
    a.el_k = s->imem_el_k;
    a.clamp = s->imem_clamp;
    a.spike_time = s->spike_time;
    a.spike_gid = s->spike_gid;
    a.cap = s->cap_spike;
    a.counters = s->counters;
    a.phase_cycles = e->phase_cycles;
    a.dt = s->dt;
    a.q10 = cs_hh_q10(celsius);
    a.stride = s->sample_stride;
    if (!e->ncell || nsteps <= 0) return CS_OK;
    k_epoch<<<e->ncell, e->threads, e->smem, (cudaStream_t)s->stream>>>(a, step0, nsteps);
    cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? CS_OK : epoch_fail(err, "launching the epoch kernel");
}
