/* Private to cs_hines_gpu_launch.cu (its only includer: a kernel template instantiated in two
 * files would be two kernels, each with its own attributes): the kernels of the GPU Hines
 * variants it launches, kept apart from the launches (split by concern when the file passed
 * 1 000 lines). "staged" and "chunked" have kernels of
 * their own (cs_hines_staged_gpu.cu, cs_hines_chunked_gpu.cu).
 *   cs__k_cells        one thread per system on any (slot base, stride) layout: flat,
 *                      interleaved, block_interleaved, variable; parents shared or per row
 *   cs__k_step_cells   the fused membrane step on the same layouts
 *   cs__k_block_shared one CUDA block per group of BS systems, rhs in shared memory
 *   cs__k_fine         one CUDA block per pack, one thread per branch, level by level
 *   cs__k_fine_step    the fused membrane step on fine's packs
 *   cs__k_warp         one warp per pack, packs of one type per block
 *   cs__k_convert      tree order <-> internal layout, one warp per system */
#ifndef CS_HINES_GPU_KERNELS_CUH
#define CS_HINES_GPU_KERNELS_CUH

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "cs_gpu_pdl.cuh"
#include "cs_hines_gpu_impl.h"

/* ---- kernels -------------------------------------------------------------------------------- */
/* Backward sweep stores, for every row k once its children are eliminated, a = u/d' in d[k] and
 * b = rhs'/d' in rhs[k], so that the forward sweep is x[k] = b - a·x[p] (one FMA, no division,
 * and u is not read again). */
template <class T, bool SHARED_P>
__global__ void cs__k_cells(int nslot, const int *__restrict__ slot_base, const int *__restrict__ slot_n,
                            int G, const int *__restrict__ pl, T *d, const T *__restrict__ u, T *rhs)
{
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= nslot) return;
    int n = slot_n[q];
    if (n == 0) return;
    long long b = slot_base[q];
    for (int i = n - 1; i > 0; --i) {
        long long k = b + (long long)i * G;
        int pi = SHARED_P ? __ldg(pl + i) : pl[k];
        long long kp = b + (long long)pi * G;
        T uk = u[k], rk = rhs[k];
        T inv = T(1) / d[k];
        T a = uk * inv;
        d[kp] -= a * uk;
        rhs[kp] -= a * rk;
        d[k] = a;
        rhs[k] = rk * inv;
    }
    rhs[b] /= d[b];
    for (int i = 1; i < n; ++i) {
        long long k = b + (long long)i * G;
        int pi = SHARED_P ? __ldg(pl + i) : pl[k];
        rhs[k] -= d[k] * rhs[b + (long long)pi * G];
    }
}

/* The fused membrane step of cs_hines_gpu.h on any (slot base, stride) layout: one thread per
 * system; each row's d and rhs are assembled as the backward sweep reaches them. Rows go in
 * chunks of D: the loads of the next chunk are issued before the current chunk's dependent chain
 * (one division per row) runs, so every thread keeps D rows of loads in flight. That matters when
 * there are few systems per multiprocessor (65536 cells: ~500 threads per SM), where one row in
 * flight per thread left the step latency-bound. With shared constants only v comes from DRAM
 * (the constants and the flags are one system's rows, in L1/L2): that is what is prefetched; and
 * a row whose shared pivot a0[i] is a number (no current below it) neither stores nor re-reads
 * its own. (Per-system flags cost 3 % at 65536 cells; deeper chunks and a float-seeded
 * reciprocal did not help: the kernel issues ~175 instructions per row, bench/NOTES.md.) No load waits on another DRAM load (a first version chose the pivot's source by a flag
 * bit and lost 8 %: bench/NOTES.md). Mirrored by cs__hines_hplan_step_host. */
struct cs__step_row {
    unsigned f;
    double v, d0, cdt, b0, u;
};

template <bool SHARED_C>
__device__ __forceinline__ void cs__step_prefetch(const cs_hines_step_d &st, int k, cs__step_row &r)
{
    r.v = st.v[k];
    if (!SHARED_C) { /* a shared system's flags and constants are read when the row is processed */
        r.f = __ldg(st.flags + k);
        r.d0 = __ldg(st.d0 + k);
        r.cdt = __ldg(st.cdt + k);
        r.b0 = __ldg(st.b0 + k);
        r.u = __ldg(st.u + k);
    }
}

template <bool SHARED_P, bool SHARED_C, int D, int DF>
__global__ void cs__k_step_cells(int nslot, const int *__restrict__ slot_base, const int *__restrict__ slot_n,
                                 int G, const int *__restrict__ pl, const cs_hines_step_d st)
{
    /* D: rows per chunk of the backward sweep (only v and the flags when shared), DF: of the
     * forward sweep */
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it */
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= nslot) return;
    const int n = slot_n[q];
    if (n == 0) return;
    const int b = slot_base[q];
    double *__restrict__ wa = st.work_a;
    double *__restrict__ wb = st.work_b;
    double cd = 0.0, cr = 0.0; /* what row i+1 adds to row i when i is its parent */
    cs__step_row cur[D], nxt[D];
#pragma unroll
    for (int j = 0; j < D; ++j)
        if (n - 1 - j >= 0) cs__step_prefetch<SHARED_C>(st, b + (n - 1 - j) * G, cur[j]);
    for (int i0 = n - 1; i0 >= 0; i0 -= D) {
#pragma unroll
        for (int j = 0; j < D; ++j)
            if (i0 - D - j >= 0) cs__step_prefetch<SHARED_C>(st, b + (i0 - D - j) * G, nxt[j]);
#pragma unroll
        for (int j = 0; j < D; ++j) {
            const int i = i0 - j;
            if (i < 0) break;
            const int k = b + i * G;
            cs__step_row &r = cur[j];
            if (SHARED_C) {
                r.f = __ldg(st.flags + i);
                r.d0 = __ldg(st.d0 + i);
                r.cdt = __ldg(st.cdt + i);
                r.b0 = __ldg(st.b0 + i);
                r.u = __ldg(st.u + i);
            }
            double dk = r.d0 + cd, rk = r.cdt * r.v + r.b0 + cr;
            if (r.f & CS_HINES_ROW_CURRENT) {
                double g = st.g[k];
                dk += g;
                rk += g * r.v - st.i[k];
                st.g[k] = 0.0;
                st.i[k] = 0.0;
            }
            if (r.f & CS_HINES_ROW_GATHERS) {
                dk += wa[k];
                rk += wb[k];
            }
            if (i == 0) {
                st.v[k] = rk / dk;
                if (r.f & CS_HINES_ROW_GATHERS) wa[k] = wb[k] = 0.0;
                break;
            }
            double inv = 1.0 / dk, a = r.u * inv;
            double to_d = -a * r.u, to_r = -a * rk;
            if (r.f & CS_HINES_ROW_PARENT_PREV) {
                cd = to_d;
                cr = to_r;
            } else {
                int kp = b + (SHARED_P ? __ldg(pl + i) : pl[k]) * G;
                wa[kp] += to_d;
                wb[kp] += to_r;
                cd = cr = 0.0;
            }
            if (!(SHARED_C && !isnan(__ldg(st.a0 + i)))) wa[k] = a; /* else a0[i] holds it */
            wb[k] = rk * inv;
        }
#pragma unroll
        for (int j = 0; j < D; ++j) cur[j] = nxt[j];
    }
    /* forward: x = b − a·x_parent, the loads of DF rows ahead of the chain */
    double xp = st.v[b];
    unsigned ff[DF];
    double fa[DF], fb[DF];
    for (int i0 = 1; i0 < n; i0 += DF) {
#pragma unroll
        for (int j = 0; j < DF; ++j)
            if (i0 + j < n) {
                const int k = b + (i0 + j) * G;
                ff[j] = __ldg(st.flags + (SHARED_C ? i0 + j : k));
                fa[j] = SHARED_C ? __ldg(st.a0 + i0 + j) : wa[k]; /* not a load that waits on another */
                fb[j] = wb[k];
            }
#pragma unroll
        for (int j = 0; j < DF; ++j) {
            const int i = i0 + j;
            if (i >= n) break;
            const int k = b + i * G;
            double xpar = (ff[j] & CS_HINES_ROW_PARENT_PREV) ? xp : st.v[b + (SHARED_P ? __ldg(pl + i) : pl[k]) * G];
            if (SHARED_C && isnan(fa[j])) fa[j] = wa[k]; /* a row whose pivot varies */
            double x = fb[j] - fa[j] * xpar;
            st.v[k] = x;
            if (ff[j] & CS_HINES_ROW_GATHERS) wa[k] = wb[k] = 0.0;
            xp = x;
        }
    }
}



template <class T, bool SHARED_P>
__global__ void cs__k_block_shared(const int *__restrict__ group_base, const int *__restrict__ group_rows,
                                   const int *__restrict__ slot_n, const int *__restrict__ pl, T *d,
                                   const T *__restrict__ u, T *rhs)
{
    extern __shared__ __align__(16) unsigned char cs__smem_bs[];
    T *sr = reinterpret_cast<T *>(cs__smem_bs);
    const int G = blockDim.x, j = threadIdx.x, g = blockIdx.x;
    const long long gb = group_base[g];
    const int tot = group_rows[g] * G;
    for (int e = j; e < tot; e += G) sr[e] = rhs[gb + e];
    __syncthreads();
    int n = slot_n[g * G + j];
    if (n > 0) {
        long long b = gb + j;
        for (int i = n - 1; i > 0; --i) {
            long long k = b + (long long)i * G;
            int pi = SHARED_P ? __ldg(pl + i) : pl[k];
            long long kp = b + (long long)pi * G;
            T uk = u[k], rk = sr[j + i * G];
            T inv = T(1) / d[k];
            T a = uk * inv;
            d[kp] -= a * uk;
            sr[j + pi * G] -= a * rk;
            d[k] = a;
            sr[j + i * G] = rk * inv;
        }
        sr[j] /= d[b];
        for (int i = 1; i < n; ++i) {
            long long k = b + (long long)i * G;
            int pi = SHARED_P ? __ldg(pl + i) : pl[k];
            sr[j + i * G] -= d[k] * sr[j + pi * G];
        }
    }
    __syncthreads();
    for (int e = j; e < tot; e += G) rhs[gb + e] = sr[e];
}

/* a type's schedule as the sweeps read it */
struct cs__sched {
    const int *ls;
    const int4 *tk;
    const int *kid;
};

/* type ti's schedule into shared memory at s (cs__hines_type_sched_bytes bytes): tasks with their
 * children relative to the type's first child, level starts relative to its first task. Threads
 * tid of nth; the caller's barrier publishes it. */
__device__ __forceinline__ cs__sched cs__stage_schedule(unsigned char *s, int4 ti, const int *__restrict__ level_start,
                                                        const int4 *__restrict__ tasks, const int *__restrict__ children,
                                                        int tid, int nth)
{
    const int nlev = ti.z;
    const int ntk = level_start[ti.y + nlev] - ti.x; /* tasks of the type, the sentinel excluded */
    const int c0 = tasks[ti.x].w, nkid = tasks[ti.x + ntk].w - c0;
    int4 *s_tk = reinterpret_cast<int4 *>(s);
    int *s_ls = reinterpret_cast<int *>(s_tk + ntk + 1);
    int *s_kid = s_ls + nlev + 1;
    for (int i = tid; i <= ntk; i += nth) {
        int4 t = tasks[ti.x + i];
        t.w -= c0;
        s_tk[i] = t;
    }
    for (int i = tid; i <= nlev; i += nth) s_ls[i] = level_start[ti.y + i] - ti.x;
    for (int i = tid; i < nkid; i += nth) s_kid[i] = children[c0 + i];
    const cs__sched r = {s_ls, s_tk, s_kid};
    return r;
}

/* [p, p + bytes) into L2, a 128-byte line per prefetch, lanes lane of nl */
__device__ __forceinline__ void cs__prefetch_l2(const void *p, long long bytes, int lane, int nl)
{
    if (bytes <= 0) return;
    const char *c = static_cast<const char *>(p);
    for (long long o = (long long)lane * 128; o < bytes; o += (long long)nl * 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(c + o));
    if (lane == 0) asm volatile("prefetch.global.L2 [%0];" ::"l"(c + bytes - 1)); /* the last line when p is not aligned */
}

/* type ti's schedule in device memory, prefetched into L2 by warp 0 when PREFETCH (with ubytes of
 * the pack's u from u, when u is not null) */
template <bool PREFETCH>
__device__ __forceinline__ cs__sched cs__global_schedule(int4 ti, const int *__restrict__ level_start, const int4 *__restrict__ tasks,
                                                         const int *__restrict__ children, const void *u, long long ubytes)
{
    if (PREFETCH && threadIdx.x < 32) {
        const int ntk = level_start[ti.y + ti.z] - ti.x;
        const int c0 = tasks[ti.x].w, c1 = tasks[ti.x + ntk].w;
        cs__prefetch_l2(tasks + ti.x, 16LL * (ntk + 1), threadIdx.x, 32);
        cs__prefetch_l2(children + c0, 4LL * (c1 - c0), threadIdx.x, 32);
        if (u) cs__prefetch_l2(u, ubytes, threadIdx.x, 32);
    }
    const cs__sched r = {level_start + ti.y, tasks, children};
    return r;
}

/* The level sweeps of one pack (fine and warp), thread `tid` of `nth`: tasks ls[l] .. ls[l+1]-1
 * form level l; a task is {first row, length, parent row or -1, first child entry}, the next
 * task's fourth field closes its children. WARP: the pack is one warp's, so __syncwarp between
 * levels instead of a block barrier. */
template <class T, bool WARP>
__device__ __forceinline__ void cs__pack_sweeps(T *D, const T *U, T *R, const int *ls, int nlev,
                                                const int4 *tasks, const int *children, int tid, int nth)
{
    /* backward: deepest level first; a branch gathers its children's eliminations into its
     * distal row, then eliminates itself towards its proximal row (carried in registers) */
    for (int l = nlev - 1; l >= 0; --l) {
        const int t1 = ls[l + 1];
        for (int t = ls[l] + tid; t < t1; t += nth) {
            const int4 tk = tasks[t];
            const int c1 = tasks[t + 1].w;
            const int first = tk.x, kd = tk.x + tk.y - 1;
            T dd = D[kd], rr = R[kd];
            for (int c = tk.w; c < c1; ++c) { /* a child's proximal row holds a = u/d', b = rhs'/d' */
                const int kc = children[c];
                const T uc = U[kc];
                dd -= D[kc] * uc;
                rr -= R[kc] * uc;
            }
            for (int k = kd; k > first; --k) {
                const T uk = U[k];
                const T inv = T(1) / dd;
                const T a = uk * inv;
                const T dn = D[k - 1] - a * uk, rn = R[k - 1] - a * rr;
                D[k] = a;
                R[k] = rr * inv;
                dd = dn;
                rr = rn;
            }
            const T inv = T(1) / dd;
            D[first] = U[first] * inv;
            R[first] = rr * inv;
        }
        if (WARP) __syncwarp(); else __syncthreads();
    }
    /* forward: root level first */
    for (int l = 0; l < nlev; ++l) {
        const int t1 = ls[l + 1];
        for (int t = ls[l] + tid; t < t1; t += nth) {
            const int4 tk = tasks[t];
            const int first = tk.x;
            T x = tk.z < 0 ? R[first] : R[first] - D[first] * R[tk.z];
            R[first] = x;
            for (int k = first + 1; k < first + tk.y; ++k) {
                x = R[k] - D[k] * x;
                R[k] = x;
            }
        }
        if (WARP) __syncwarp(); else __syncthreads();
    }
}

/* fine's solve: one block per pack. SMEM: the pack's d, u, rhs copied into shared memory with
 * cp.async (all of a thread's rows in flight at once: a loop of loads and stores waited on each
 * row's loads in turn), after the schedule when SCHED is CS__SCHED_SHARED (sched_bytes) */
template <class T, bool SMEM, int SCHED>
__global__ void cs__k_fine(const int *__restrict__ pack_base, const int *__restrict__ pack_type,
                           const int4 *__restrict__ type_info, const int *__restrict__ level_start,
                           const int4 *__restrict__ tasks, const int *__restrict__ children, int sched_bytes, T *d,
                           const T *__restrict__ u, T *rhs)
{
    static_assert(SMEM || SCHED != CS__SCHED_SHARED, "a schedule in shared memory needs the rows there too");
    extern __shared__ __align__(16) unsigned char cs__smem_fine[];
    const int4 ti = type_info[pack_type[blockIdx.x]];
    const long long base = pack_base[blockIdx.x];
    const int rows = ti.w; /* ti: {first task, first level start, levels, rows} */
    const cs__sched sc = SCHED == CS__SCHED_SHARED
                             ? cs__stage_schedule(cs__smem_fine, ti, level_start, tasks, children, threadIdx.x, blockDim.x)
                             : cs__global_schedule<SCHED == CS__SCHED_L2>(ti, level_start, tasks, children, SMEM ? nullptr : u + base,
                                                                          (long long)rows * sizeof(T));
    T *D, *R;
    const T *U;
    if (SMEM) {
        T *s = reinterpret_cast<T *>(cs__smem_fine + (SCHED == CS__SCHED_SHARED ? sched_bytes : 0));
        T *Us = s + 2 * rows;
        D = s;
        R = s + rows;
        for (int e = threadIdx.x; e < rows; e += blockDim.x) {
            __pipeline_memcpy_async(D + e, d + base + e, sizeof(T));
            __pipeline_memcpy_async(Us + e, u + base + e, sizeof(T));
            __pipeline_memcpy_async(R + e, rhs + base + e, sizeof(T));
        }
        __pipeline_commit();
        __pipeline_wait_prior(0);
        U = Us;
        __syncthreads();
    } else {
        D = d + base;
        U = u + base;
        R = rhs + base;
    }
    cs__pack_sweeps<T, false>(D, U, R, sc.ls, ti.z, sc.tk, sc.kid, threadIdx.x, blockDim.x);
    if (SMEM)
        for (int e = threadIdx.x; e < rows; e += blockDim.x) rhs[base + e] = R[e];
}

/* row e of the pack at base carries current: its g and i join d and rhs, and are zeroed */
__device__ __forceinline__ void cs__fine_add_current(const cs_hines_step_d &st, long long base, int e, double *D, double *R)
{
    const long long k = base + e;
    const double g = st.g[k], v = st.v[k];
    D[e] += g;
    R[e] += g * v - st.i[k];
    st.g[k] = 0.0;
    st.i[k] = 0.0;
}

/* The fused membrane step on fine's packs (cs_hines_gpu.h, cs_hines_step_d): each row's d and rhs
 * are formed as the pack is loaded, d = d0 (+ g), rhs = (cdt·v + b0) (+ (g·v − i)) with i and g read
 * and zeroed only at rows flagged CS_HINES_ROW_CURRENT, and the solution is written to v. Against a
 * separate assembly kernel (80 B a row: d0, b0, cdt, v, i, g read, d, rhs, i, g written) and the
 * solve's reads of d and rhs, a row costs d0, cdt, b0, v, u, its flag byte and v written: ~49 B.
 * SMEM: the pack's D and R in shared memory (and U too when U_SMEM; without it, a pack takes 16 B
 * a row of shared memory instead of 24, so more blocks fit a multiprocessor, and U is read through
 * L1; without D_SMEM, D is work_a: 8 B a row); else D and R are work_a and work_b. SCHED: where
 * the sweeps read the type's schedule (CS__SCHED_*: in device memory, prefetched into L2 with u,
 * or staged in shared memory ahead of the rows, sched_bytes). */
template <bool SMEM, bool U_SMEM, bool D_SMEM, int SCHED>
__global__ void cs__k_fine_step(const int *__restrict__ order, int first, const int *__restrict__ pack_base, const int *__restrict__ pack_type,
                                const int4 *__restrict__ type_info, const int *__restrict__ level_start,
                                const int4 *__restrict__ tasks, const int *__restrict__ children, int sched_bytes,
                                const cs_hines_step_d st)
{
    static_assert(SMEM || SCHED != CS__SCHED_SHARED, "a schedule in shared memory needs the rows there too");
    extern __shared__ __align__(16) unsigned char cs__smem_fine_step[];
    const int pk = order ? order[first + blockIdx.x] : blockIdx.x; /* launches by class: order */
    const int4 ti = type_info[pack_type[pk]];
    const long long base = pack_base[pk];
    const int rows = ti.w;
    const cs__sched sc = SCHED == CS__SCHED_SHARED
                             ? cs__stage_schedule(cs__smem_fine_step, ti, level_start, tasks, children, threadIdx.x, blockDim.x)
                             : cs__global_schedule<SCHED == CS__SCHED_L2>(ti, level_start, tasks, children,
                                                                          U_SMEM ? nullptr : st.u + base, 8LL * rows);
    /* the schedule (the plan's, never written by a kernel) was staged above while the kernel before
     * this one may still run (a programmatic launch); the rows' arrays only after it has completed */
    cs_pdl_enter();
    double *D = st.work_a + base, *R = st.work_b + base; /* in device memory unless SMEM */
    const double *U = st.u + base;
    if (SMEM) {
        double *s = reinterpret_cast<double *>(cs__smem_fine_step + (SCHED == CS__SCHED_SHARED ? sched_bytes : 0));
        R = s;
        if (D_SMEM) D = s + rows;
        if (U_SMEM) {
            double *Us = s + 2 * rows;
            for (int e = threadIdx.x; e < rows; e += blockDim.x) __pipeline_memcpy_async(Us + e, st.u + base + e, sizeof(double));
            __pipeline_commit();
            U = Us;
        }
    }
    /* the rows' own terms first, FINE_LOADS rows a thread at a time so that their loads are all in
     * flight together (no global store in this loop: nothing for them to wait on), with their flag
     * bytes, which mark the thread's rows with current in `cur` (bit q: the thread's q-th row);
     * then those few rows (their i and g, read and zeroed). A loop over the flags after the terms
     * waited on each row's flag in turn (11 % of the warp samples, big2000 × 8 000, session 27);
     * one loop for the terms and the current was 5 % slower (session 21: more registers) */
    const double *__restrict__ d0 = st.d0 + base, *__restrict__ cdt = st.cdt + base, *__restrict__ b0 = st.b0 + base;
    const double *__restrict__ vin = st.v + base;
    const unsigned char *__restrict__ fl = st.flags + base;
    enum { FINE_LOADS = 4, CUR_BITS = 64 };
    const int stride = blockDim.x;
    unsigned long long cur = 0;
    for (int e0 = threadIdx.x, q0 = 0; e0 < rows; e0 += FINE_LOADS * stride, q0 += FINE_LOADS) {
        double v[FINE_LOADS], a[FINE_LOADS], c[FINE_LOADS], b[FINE_LOADS];
        unsigned char f[FINE_LOADS];
#pragma unroll
        for (int j = 0; j < FINE_LOADS; ++j) {
            const int e = e0 + j * stride;
            if (e < rows) {
                v[j] = vin[e];
                a[j] = __ldg(d0 + e);
                c[j] = __ldg(cdt + e);
                b[j] = __ldg(b0 + e);
                f[j] = __ldg(fl + e);
            }
        }
#pragma unroll
        for (int j = 0; j < FINE_LOADS; ++j) {
            const int e = e0 + j * stride;
            if (e < rows) {
                D[e] = a[j];
                R[e] = c[j] * v[j] + b[j];
                if ((f[j] & CS_HINES_ROW_CURRENT) && q0 + j < CUR_BITS) cur |= 1ULL << (q0 + j);
            }
        }
    }
    for (; cur; cur &= cur - 1) cs__fine_add_current(st, base, threadIdx.x + (__ffsll((long long)cur) - 1) * stride, D, R);
    for (int e = threadIdx.x + CUR_BITS * stride; e < rows; e += stride) /* rows beyond the mask's */
        if (__ldg(fl + e) & CS_HINES_ROW_CURRENT) cs__fine_add_current(st, base, e, D, R);
    if (U_SMEM) __pipeline_wait_prior(0);
    __syncthreads();
    cs__pack_sweeps<double, false>(D, U, R, sc.ls, ti.z, sc.tk, sc.kid, threadIdx.x, blockDim.x);
    for (int e = threadIdx.x; e < rows; e += blockDim.x) st.v[base + e] = R[e];
}

/* "warp": one block per run of packs of one type (block_first), one warp per pack. The block
 * copies its type's schedule into shared memory once (tasks and children relative to the type's
 * first), so no level waits on a global load of its schedule (the fine kernel's levels each
 * wait on one or two: bench/NOTES.md); each warp copies its pack's d, u, rhs with cp.async (all
 * in flight at once, no registers), sweeps with warp barriers only, and writes rhs back. */
template <class T>
__global__ void cs__k_warp(const int *__restrict__ block_first, const int *__restrict__ pack_base,
                           const int *__restrict__ pack_type, const int4 *__restrict__ type_info,
                           const int *__restrict__ level_start, const int4 *__restrict__ tasks,
                           const int *__restrict__ children, int sched_bytes, T *d,
                           const T *__restrict__ u, T *rhs)
{
    extern __shared__ __align__(16) unsigned char cs__smem_warp[];
    const int p0 = block_first[blockIdx.x], np = block_first[blockIdx.x + 1] - p0;
    const int4 ti = type_info[pack_type[p0]];
    const int rows = ti.w, nlev = ti.z;
    const cs__sched sc = cs__stage_schedule(cs__smem_warp, ti, level_start, tasks, children, threadIdx.x, blockDim.x);
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    T *D = reinterpret_cast<T *>(cs__smem_warp + sched_bytes) + (size_t)w * 3 * rows;
    T *U = D + rows, *R = U + rows;
    long long base = 0;
    if (w < np) {
        base = pack_base[p0 + w];
        for (int e = lane; e < rows; e += 32) {
            __pipeline_memcpy_async(D + e, d + base + e, sizeof(T));
            __pipeline_memcpy_async(U + e, u + base + e, sizeof(T));
            __pipeline_memcpy_async(R + e, rhs + base + e, sizeof(T));
        }
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    if (w >= np) return;
    cs__pack_sweeps<T, true>(D, U, R, sc.ls, nlev, sc.tk, sc.kid, lane, 32);
    for (int e = lane; e < rows; e += 32) rhs[base + e] = R[e];
}

/* one warp per system; coupling arrays follow the re-rooted edges (lusrc) and the root's
 * coupling is 0 in the internal layout and not written back. A system with a row map (lmap) and
 * at most stage_rows rows goes through shared memory: its tree-order values are read (or
 * written) as one contiguous run, and its internal rows are taken in internal order (lorder), so
 * both sides of the copy are contiguous. Taken in tree order instead, the internal side scattered
 * once staged stored rows in schedule order (medium-high 2.6 → 6.1 ms); taken in internal order
 * without staging, the tree side did (big-high 5.0 → 7.6 ms; bench/NOTES.md). */
template <class T, bool TO_INTERNAL>
__global__ void cs__k_convert(int nsys, const int *__restrict__ offset, const int *__restrict__ cell_base,
                              const int *__restrict__ cell_map, int stride, const int *__restrict__ lmap,
                              const int *__restrict__ lusrc, const int *__restrict__ lorder, int coupling, int stage_rows,
                              const T *__restrict__ src, T *__restrict__ dst)
{
    extern __shared__ __align__(16) unsigned char cs__smem_conv[];
    const int s = (int)((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5);
    const int lane = threadIdx.x & 31;
    if (s >= nsys) return; /* the whole warp */
    const int o = offset[s], n = offset[s + 1] - o, m = cell_map[s];
    const long long cb = cell_base[s];
    if (m < 0 || n > stage_rows) {
        for (int q = lane; q < n; q += 32) {
            const int i = m < 0 ? q : lorder[m + q];
            const long long k = cb + (m < 0 ? (long long)i * stride : (long long)lmap[m + i]);
            int tr = i;
            if (coupling) tr = m < 0 ? (i == 0 ? -1 : i) : lusrc[m + i];
            if (TO_INTERNAL) dst[k] = tr < 0 ? T(0) : src[o + tr];
            else if (tr >= 0) dst[o + tr] = src[k];
        }
        return;
    }
    T *tree = reinterpret_cast<T *>(cs__smem_conv) + (size_t)(threadIdx.x >> 5) * stage_rows; /* this system, tree order */
    if (TO_INTERNAL || coupling) /* from internal, the row without an edge keeps its value */
        for (int i = lane; i < n; i += 32) tree[i] = TO_INTERNAL ? src[o + i] : dst[o + i];
    __syncwarp();
    for (int q = lane; q < n; q += 32) {
        const int i = lorder[m + q], tr = coupling ? lusrc[m + i] : i;
        const long long k = cb + lmap[m + i];
        if (TO_INTERNAL) dst[k] = tr < 0 ? T(0) : tree[tr];
        else if (tr >= 0) tree[tr] = src[k];
    }
    if (TO_INTERNAL) return;
    __syncwarp();
    for (int i = lane; i < n; i += 32) dst[o + i] = tree[i];
}

#endif
