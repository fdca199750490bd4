// Device helpers shared by the step kernels (cs_cuda_kernels.cu) and the persistent epoch kernel
// (cs_cuda_epoch.cu): the step context, a step's time, and each built-in mechanism's work on one
// instance, so both paths compute the same formulas (those of mechanisms/cs_mech_math.h).
#ifndef CS_CUDA_DEVICE_CUH
#define CS_CUDA_DEVICE_CUH

#include "cs_mech.h"
#include "cs_mech_math.h"

typedef cs_mech_step_ctx cs_cuda_step_ctx; /* catalogue kernels read it too (cs_mech_view.step_ctx) */

/* [ms] the time of step `step`: the host's (double)step·dt, never contracted into an FMA */
__device__ inline double step_time(long long step, double dt) { return __dmul_rn((double)step, dt); }

/* a parameter of instance k: stored once for all (uniform) or per instance */
__device__ __forceinline__ double prm(const double *p, int j, int n, int k, int uniform) {
    return uniform ? p[j] : p[(size_t)j * n + k];
}

/* hh instance k at CV c: adds weight·i [nA] and weight·g [µS] (I and G may be shared memory) */
__device__ __forceinline__ void hh_add_current(int n, int k, int c, double vc, double m, double h, double nn,
                                               const double *w, const double *p, int pu, double *I, double *G) {
    double i, g;
    cs_hh_current_at(vc, m, h, nn, prm(p, CS_HH_GNABAR, n, k, pu), prm(p, CS_HH_GKBAR, n, k, pu),
                     prm(p, CS_HH_GL, n, k, pu), prm(p, CS_HH_EL, n, k, pu), prm(p, CS_HH_ENA, n, k, pu),
                     prm(p, CS_HH_EK, n, k, pu), &i, &g);
    I[c] += w[k] * i;
    G[c] += w[k] * g;
}

/* hh instance k's gates after a step at v (cnexp); the new m, h, n stored and returned */
__device__ __forceinline__ void hh_advance_one(int n, int k, double v, double *st, double q10, double dt, double *m,
                                               double *h, double *nn) {
    cs_hh_rates r = cs_hh_rates_at(v, q10);
    *m = cs_cnexp(st[CS_HH_M * n + k], r.minf, r.mtau, dt);
    *h = cs_cnexp(st[CS_HH_H * n + k], r.hinf, r.htau, dt);
    *nn = cs_cnexp(st[CS_HH_N * n + k], r.ninf, r.ntau, dt);
    st[CS_HH_M * n + k] = *m;
    st[CS_HH_H * n + k] = *h;
    st[CS_HH_N * n + k] = *nn;
}

/* hh instance k's update at its CV's v, then its weighted current [nA] and conductance [µS] for
 * the next step with the new gates (cs_cuda_state.hh_ahead) in *wi, *wg; returns the CV. Not
 * inlined, and with no argument a caller fixes: one compiled body for the two kernels that call
 * it (k_hh_advance_current, k_after_solve), which gave h 1 ulp apart when each inlined it (session
 * 31), so that switching between them changes no bit. hh adds first to a CV's zeroed i and g, so
 * adding wi there plainly or atomically gives the same sum. */
static __device__ __noinline__ int hh_ahead_instance(int n, int k, const int *node, const double *w, const double *p,
                                                     int pu, double *st, const double *v, double q10, double dt,
                                                     double *wi, double *wg) {
    const int c = node[k];
    double vc = v[c], m, h, nn, i, g;
    hh_advance_one(n, k, vc, st, q10, dt, &m, &h, &nn);
    cs_hh_current_at(vc, m, h, nn, prm(p, CS_HH_GNABAR, n, k, pu), prm(p, CS_HH_GKBAR, n, k, pu),
                     prm(p, CS_HH_GL, n, k, pu), prm(p, CS_HH_EL, n, k, pu), prm(p, CS_HH_ENA, n, k, pu),
                     prm(p, CS_HH_EK, n, k, pu), &i, &g);
    *wi = w[k] * i;
    *wg = w[k] * g;
    return c;
}

/* expsyn instance k at CV c (v: its voltage): adds its current and conductance atomically (several
 * synapses may share a CV) */
__device__ __forceinline__ void expsyn_add_current(int n, int k, int c, double v, const double *p, int pu,
                                                   const double *st, double *I, double *G) {
    double g = st[CS_EXPSYN_G * n + k];
    atomicAdd(&I[c], g * (v - prm(p, CS_EXPSYN_E, n, k, pu)));
    atomicAdd(&G[c], g);
}

/* iclamp instance k during step `step`: its current [nA] (outward positive, as it adds to i), 0
 * when off; clamps are evaluated at the step's midpoint */
__device__ __forceinline__ double iclamp_current(int n, int k, const double *p, int pu, long long step, double dt) {
    double t = __dadd_rn(step_time(step, dt), __dmul_rn(0.5, dt));
    return cs_iclamp_on(t, prm(p, CS_ICLAMP_DELAY, n, k, pu), prm(p, CS_ICLAMP_DURATION, n, k, pu))
               ? -prm(p, CS_ICLAMP_AMPLITUDE, n, k, pu)
               : 0.0;
}

/* a threshold crossing between vp and vn during the step ending at t + dt: its interpolated time
 * goes to the spike buffer (slot counted in counters[0], kept while below cap) */
__device__ __forceinline__ void detect_crossing(double vp, double vn, double th, double t, double dt, int gid,
                                                double *spike_time, int *spike_gid, int cap, int *counters) {
    if (vp < th && vn >= th) {
        int slot = atomicAdd(&counters[0], 1);
        if (slot < cap) {
            spike_time[slot] = t + dt * (th - vp) / (vn - vp);
            spike_gid[slot] = gid;
        }
    }
}

/* detector k's crossing in the step (the context's step + j, ending at v), and the NaN watch of
 * cell k: the first step whose v at the cell's row is not finite, and the cell, in counters[1..2] */
__device__ __forceinline__ void detect_and_watch(int k, int ndet, const int *row, const int *gid, const double *thr,
                                                 double *vprev, int ncell, const int *cell_row, const double *v,
                                                 const cs_cuda_step_ctx *ctx, int j, double dt, double *spike_time,
                                                 int *spike_gid, int cap, int *counters) {
    int step = ctx->k + j; /* within the epoch */
    double t = step_time(ctx->step0 + step, dt);
    if (k < ndet) {
        double vn = v[row[k]];
        detect_crossing(vprev[k], vn, thr[k], t, dt, gid[k], spike_time, spike_gid, cap, counters);
        vprev[k] = vn;
    }
    if (k < ncell && !isfinite(v[cell_row[k]])) {
        if (atomicMin(&counters[1], step) > step) counters[2] = k; /* racy only among equal steps */
    }
}

/* the sample row of the step ending at end_step (the rows an epoch has sampled before it: one per
 * multiple of stride passed since step0), -1 when it does not end on the stride */
__device__ __forceinline__ int sample_row_of(long long end_step, long long step0, int stride) {
    if (end_step % stride) return -1;
    return (int)(end_step / stride - step0 / stride - 1);
}

/* i_membrane [nA] of probe q (the CPU backend's membrane_current, in its order of operations):
 * the axial currents in at v from its row's neighbours, minus what its clamps inject during step
 * `step` (none when step < 0: the initial row). v[r - off] is row r's voltage. */
__device__ __forceinline__ double imem_value(int q, const int *row, const int *nb_first, const int *nb_row,
                                            const double *nb_g, const int *el_first, const int *el_k,
                                            const double *cp, int cn, int cpu, const double *v, int off,
                                            long long step, double dt) {
    const double vr = v[row[q] - off];
    double in = 0.0;
    for (int k = nb_first[q]; k < nb_first[q + 1]; ++k)
        in = __dadd_rn(in, __dmul_rn(nb_g[k], __dsub_rn(v[nb_row[k] - off], vr)));
    double e = 0.0; /* [nA] the clamps' current, outward positive (as they add it to i) */
    if (step >= 0)
        for (int k = el_first[q]; k < el_first[q + 1]; ++k) e = __dadd_rn(e, iclamp_current(cn, el_k[k], cp, cpu, step, dt));
    return __dsub_rn(in, e);
}

#endif
