/* The "staged" GPU Hines kernel: a warp per group of C (4, 2 or 1) cells of one structure, S = 32 / C
 * lanes per cell, each lane one row per step of the structure's schedule (layout, schedule and the
 * choice of C: cs_hines_staged.c, which also emulates this kernel on the host).
 *
 * Why: the solve's compulsory traffic is d, u, rhs read and x written once (32 B per row in
 * double). The per-cell "interleaved" kernel moves twice that (the eliminated rows go to device
 * memory and come back), and the shared-memory kernels ("fine", "warp") hold ~24 medium-high cells
 * per multiprocessor whose level-by-level chains leave them latency-bound (bench/NOTES.md). Here
 * the eliminated rows (a, b: 16 B per row) stay in shared memory, the inputs stream in through a
 * cp.async ring several steps ahead, and a cell's lanes run rows of independent subtrees.
 * Occupancy is what sets the speed: the eliminated rows fill shared memory, and each warp is a
 * chain of dependent steps, so the layout is chosen for the most warps per multiprocessor (8 for
 * medium-high in double: 4 cells × 319 rows × 16 B = 20 KB each). Earlier layouts (32 cells of one
 * lane, then 8 cells of 4 lanes, with one or two rows per lane) ran 1-4 warps per multiprocessor
 * and were latency-bound (Nsight Compute, NOTES.md). Keeping the first steps' eliminated rows in
 * registers (each lane's own, one per step) frees shared memory for more warps (12 for medium-high).
 * A block is one warp; the grid is persistent (groups handed out by a counter), and a warp stages
 * the first steps of its next group while it runs the forward sweep of the current one.
 * With 12 warps per multiprocessor medium-high stayed at 68 % of copy: every step's 8 rows were 8
 * separate 32-byte requests, and the L2's tag lookups were its busiest unit (81 %). Storing rows
 * in schedule order (cs_hines_staged.c) made a step's rows one run: 88 % (branch-free steps,
 * below, had given 2 %; NOTES.md, "Session 6"). */
#include "cs_gpu_pdl.cuh"
#include "cs_hines_gpu_impl.h"
#include "cs_hines_staged_gpu.h"

#define RING CS__STG_RING

/* 1/x without a slow path (a branch per row would serialise the lanes' flags): the hardware
 * estimate, then one cubic Newton step in double (about 2^-22 → 1 ulp), one quadratic step in
 * float. Inputs are diagonals of a diagonally dominant matrix: normal numbers. */
__device__ __forceinline__ double cs__stg_rcp(double x)
{
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
    const double e = fma(-x, r, 1.0);
    return fma(r, fma(e, e, e), r);
}
__device__ __forceinline__ float cs__stg_rcp(float x)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return fmaf(r, fmaf(-x, r, 1.0f), r);
}

/* A lane's share of staging one slot of a step: the slot's row of the NA input arrays (3 for a
 * solve: d, u, rhs; CS__STG_FUSED_ARRAYS for the fused step: d0, u, b0, C/dt, v, i, g) is NA
 * segments of C values, copied in chunks of CB bytes (16, or the whole segment when it is smaller);
 * the slot's C lanes copy them, lane j chunks j, j + C, ... A ring slot is laid out
 * [array][step slot][cell], so that the warp's 32 reads of one array are one contiguous run (no
 * bank conflicts). The fused step's i and g are copied only for rows with current (the schedule's
 * CS__STG_CURRENT): elsewhere they are zero and never read.
 * UC (the fused step, every group of the launch reading a group of equal cells, CS__SL_UC): the
 * four constants are the same for the C cells, so a ring slot holds them once per step slot, after
 * the cells' v, i, g: [v, i, g][step slot][cell] then [d0, u, b0, C/dt][step slot]; lane j copies
 * the constants j, j + C, ... of its slot's row (8 bytes each). 4 cells a warp: 1 KB a ring step,
 * not 1.75 KB. */
template <class T, int C, int NA, bool UC = false>
struct cs__stg_copy {
    static constexpr int NK = UC ? 4 : 0; /* constant arrays held once per slot */
    static constexpr int S = 32 / C, SEG = C * (int)sizeof(T), CB = SEG < 16 ? SEG : 16;
    static constexpr int PER = CB / (int)sizeof(T), CH = SEG / CB, N = (NA - NK) * CH, H = (N + C - 1) / C;
    static constexpr int HK = (NK + C - 1) / C; /* a lane's constants (UC) */
    static constexpr unsigned SLOT_BYTES = (unsigned)((32 * (NA - NK) + NK * S) * sizeof(T));
    const T *src[H]; /* the chunk's array, chunk offset included */
    unsigned dst[H]; /* shared-memory address within ring slot 0 */
    const T *ksrc[HK > 0 ? HK : 1]; /* UC: the lane's constant arrays */
    unsigned kdst[HK > 0 ? HK : 1];
    int nchunk, nk;
    unsigned cur_only; /* bit h: chunk h is of i or g (copied only at rows with current) */
    unsigned konst;    /* bit h: chunk h is of the fused step's constants (read at the group's cbase) */

    __device__ void init(const T *const *arr, unsigned ring0, int s, int j)
    {
        nchunk = 0;
        nk = 0;
        cur_only = 0;
        konst = 0;
#pragma unroll
        for (int h = 0; h < H; ++h) {
            const int q = j + h * C;
            src[h] = arr[0]; /* a chunk this lane does not have is never copied */
            dst[h] = ring0;
            if (q >= N) continue;
            const int k = q / CH + NK, c = q - (q / CH) * CH; /* array k */
            src[h] = arr[k] + c * PER;
            dst[h] = ring0 + (unsigned)((((k - NK) * S + s) * C + c * PER) * sizeof(T));
            if (k >= 5) cur_only |= 1u << h;
            if (NA > 3 && k < 4) konst |= 1u << h;
            nchunk = h + 1;
        }
#pragma unroll
        for (int h = 0; h < HK; ++h) {
            const int k = j + h * C;
            ksrc[h] = arr[0];
            kdst[h] = ring0;
            if (k >= NK) continue;
            ksrc[h] = arr[k];
            kdst[h] = ring0 + (unsigned)((32 * (NA - NK) + k * S + s) * sizeof(T));
            nk = h + 1;
        }
    }
    /* the chunks' sources for the group at `base`, its constants at `cbase` */
    __device__ __forceinline__ void at(long long base, long long cbase, const T *g[H + HK]) const
    {
#pragma unroll
        for (int h = 0; h < H; ++h) g[h] = src[h] + (((konst >> h) & 1u) ? cbase : base);
#pragma unroll
        for (int h = 0; h < HK; ++h) g[H + h] = ksrc[h] + cbase;
    }
    /* copy row `row` (< 0: none; cur: it has current) of the group whose sources are g into ring
     * slot `slot` (not committed). Predicated, not branched: the step stays one basic block, so
     * the compiler can interleave the copy's address arithmetic with the step's floating-point
     * chain. */
    __device__ __forceinline__ void copy(const T *const g[H + HK], int row, bool cur, int slot) const
    {
#pragma unroll
        for (int h = 0; h < H; ++h) {
            const unsigned to = dst[h] + (unsigned)slot * SLOT_BYTES;
            const T *from = g[h] + row * C;
            const int on = row >= 0 && h < nchunk && (cur || !((cur_only >> h) & 1u));
            if (CB == 16)
                asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; @p cp.async.cg.shared.global [%0], [%1], 16; }" ::"r"(to),
                             "l"(from), "r"(on));
            else
                asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; @p cp.async.ca.shared.global [%0], [%1], %3; }" ::"r"(to),
                             "l"(from), "r"(on), "n"(CB));
        }
#pragma unroll
        for (int h = 0; h < HK; ++h) { /* UC: the constants of the row's first cell (all C are equal) */
            const unsigned to = kdst[h] + (unsigned)slot * SLOT_BYTES;
            const T *from = g[H + h] + row * C;
            const int on = row >= 0 && h < nk;
            asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; @p cp.async.ca.shared.global [%0], [%1], %3; }" ::"r"(to), "l"(from),
                         "r"(on), "n"(sizeof(T)));
        }
    }
};

/* Where a lane reads its row's staged inputs in a ring slot: rg, its cell's arrays (32 = S·C
 * apart: d, u, rhs for a solve; d0, u, b0, C/dt, v, i, g for the fused step), or with UC its
 * cell's v, i, g at rg and its slot's constants at rk (S apart). */
template <class T, int S, bool UC>
struct cs__stg_in {
    static constexpr int KS = UC ? S : 32; /* between constant arrays (d0, u, b0, C/dt) from rk */
    static constexpr int V = UC ? 0 : 128; /* v from rg (i, g after it, 32 apart) */
    const T *rk, *rg;
    __device__ __forceinline__ T u() const { return rk[KS]; }
};

/* A row's diagonal and right-hand side from its staged inputs (cs__stg_in): the solve's d and
 * rhs, or the fused step's assembly (cs_hines_gpu.h, cs_hines_step_d)
 *     d = d0 + g,   rhs = C/dt·v + b0 + (g·v − i)
 * after which the row's i and g are zeroed for the next step's mechanisms. */
template <class T, bool FUSED, class In>
__device__ __forceinline__ void cs__stg_row_in(const In &in, int f, bool real, long long at, const cs__stg_fused<T> &fz, T &dd, T &rr)
{
    constexpr int KS = In::KS, V = In::V;
    if (!FUSED) {
        dd = in.rk[0];
        rr = in.rk[2 * KS];
        return;
    }
    const bool cur = f & CS__STG_CURRENT;
    const T v = in.rg[V], g = cur ? in.rg[V + 64] : T(0), i = cur ? in.rg[V + 32] : T(0);
    dd = in.rk[0] + g;
    rr = (in.rk[3 * KS] * v + in.rk[2 * KS]) + (g * v - i);
    if (real && cur && !fz.keep) {
        fz.i[at] = T(0);
        fz.g[at] = T(0);
    }
}

__device__ __forceinline__ void cs__stg_commit() { asm volatile("cp.async.commit_group;"); }

/* a row's eliminated pair (a, b) in shared memory: one 16-byte access (double) instead of two */
template <class T> struct cs__stg_pair;
template <> struct cs__stg_pair<double> { using type = double2; };
template <> struct cs__stg_pair<float> { using type = float2; };

/* One step of the backward sweep on a lane: its slot's row e (from the schedule) is in the ring
 * slot at rg; it first issues the copy of row next_row (step t + RING - 1) into ring slot wslot.
 * The eliminated row goes to registers (ra, rb) in a register step, else to its shared row; its
 * parent gets the elimination by the carry (cd, cr: zero unless this row carries) or added into
 * the parent's shared row. AB[own] holds the sums of the gathering children: shared rows are
 * zeroed for each group, and rows with none point at the scratch row, which stays zero.
 * No branches: every load is made (a slot without a row, or a row without a shared parent, reads
 * the scratch row) and every store is predicated, so a step is one basic block.
 * The carry chain (cd → d1 → 1/d1 → cd of the next step) is kept short: u² and u·r' are formed
 * beside the reciprocal, so that cdn and crn are one product after it. */
template <class T, int C, int NA, bool IN_REGS, bool GR, class Copy, class In>
__device__ __forceinline__ void cs__stg_backward(const Copy &cp, const T *const *gp, int2 next, int wslot, int2 e,
                                                 const In &in, typename cs__stg_pair<T>::type *AB, T &cd, T &cr, T &ra, T &rb,
                                                 const cs__stg_fused<T> &fz, long long at, typename cs__stg_pair<T>::type *rec)
{
    using T2 = typename cs__stg_pair<T>::type;
    asm volatile("cp.async.wait_group %0;" ::"n"(RING - 2));
    __syncwarp(); /* this step's copies and the last step's gathers visible; a ring slot freed */
    cp.copy(gp, next.x, next.y & CS__STG_CURRENT, wslot);
    cs__stg_commit();
    const int f = e.y & 0xff;
    T2 *own = AB + CS__STG_OWN(e.y) * C, *par = AB + CS__STG_PAR(e.y) * C; /* AB: this lane's cell */
    const T2 so = *own, sp = *par; /* no other lane writes the parent's row in this step */
    T dd, rr;
    cs__stg_row_in<T, (NA > 3)>(in, f, e.x >= 0, at + (long long)e.x * C, fz, dd, rr);
    const T d1 = (dd + so.x) + cd, uu = in.u(), r1 = (rr + so.y) + cr;
    const T inv = cs__stg_rcp(d1);
    const T uu2 = uu * uu, ur = uu * r1;
    const T a = uu * inv, b = r1 * inv, cdn = -(uu2 * inv), crn = -(ur * inv);
    const bool real = e.x >= 0, carry = f & CS__STG_CARRY_OUT;
    if (IN_REGS) { ra = a; rb = b; }
    else if (GR) {
        *rec = T2{a, b}; /* every lane: one 32-pair run a step (an empty slot's is never read) */
        /* its shared row (its children's sums, read above) may be another row's from the next
         * step on (cs__staged_assign: rows live at different steps share one) */
        if (real && (f & CS__STG_GATHER_IN)) *own = T2{T(0), T(0)};
    } else if (real) *own = T2{a, b};
    if (real && !(f & (CS__STG_ROOT | CS__STG_CARRY_OUT))) *par = T2{sp.x + cdn, sp.y + crn};
    cd = carry ? cdn : T(0);
    cr = carry ? crn : T(0);
}

/* GR: a lane's record of step s (its slot's (a, b) in device memory) into its entry of forward
 * ring slot `to` (not committed; on: s has a record there) */
template <class T2>
__device__ __forceinline__ void cs__stg_fetch_record(unsigned to, const T2 *from, bool on)
{
    if (sizeof(T2) == 16)
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; @p cp.async.cg.shared.global [%0], [%1], 16; }" ::"r"(to), "l"(from),
                     "r"((int)on));
    else
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; @p cp.async.ca.shared.global [%0], [%1], %3; }" ::"r"(to), "l"(from),
                     "r"((int)on), "n"((int)sizeof(T2)));
}

/* One step of the forward sweep on a lane: x of its slot's row e from its eliminated row and its
 * parent's x (the same slot's previous x for a carry, none for the root, else the parent's shared
 * row); x goes to device memory, and to the row's shared row when children in other slots read it.
 * Branch-free like the backward step. */
template <class T, int C, bool IN_REGS>
__device__ __forceinline__ void cs__stg_forward(int2 e, typename cs__stg_pair<T>::type *AB, T *out, T &xc, T ra, T rb)
{
    using T2 = typename cs__stg_pair<T>::type;
    __syncwarp(); /* the parents' x of earlier steps visible */
    const int f = e.y & 0xff;
    T2 *own = AB + CS__STG_OWN(e.y) * C;
    const T xs = AB[CS__STG_PAR(e.y) * C].y;
    const T2 ab = IN_REGS ? T2{ra, rb} : *own;
    const T xp = (f & CS__STG_ROOT) ? T(0) : (f & CS__STG_CARRY_OUT) ? xc : xs;
    const T x = ab.y - ab.x * xp;
    xc = x;
    const bool real = e.x >= 0;
    if (real && (f & CS__STG_GATHER_IN)) own->y = x;
    if (real) out[e.x * C] = x;
}

/* The two-way kernel's steps (cs_hines_gpu_impl.h, CS__STG_TOP; the host's emulation,
 * cs__staged_solve_host, spells out the same operations). Beside cd, cr a lane carries, in a top
 * part, the fill coupling g to the section's branch point P (normalised: 1 at the top row) and
 * P's pending terms sd, sr, which M scales by its u (T's coupling to P). A row's record has a
 * third value c: a top row's coefficient on u_T·x_P, or M's u_T (forward: yc = u_T·x_P for the
 * top rows that follow on its lane). A held slot (CS__STG_HOLD) keeps the lane's carries. */
template <class T, int C, int NA, bool IN_REGS, class Copy, class In>
__device__ __forceinline__ void cs__stg_backward_tw(const Copy &cp, const T *const *gp, int2 next, int wslot, int2 e,
                                                    const In &in, typename cs__stg_pair<T>::type *AB, T *CC, T &cd, T &cr, T &cg,
                                                    T &sd, T &sr, T &ra, T &rb, T &rc, const cs__stg_fused<T> &fz, long long at)
{
    using T2 = typename cs__stg_pair<T>::type;
    asm volatile("cp.async.wait_group %0;" ::"n"(RING - 2));
    __syncwarp();
    cp.copy(gp, next.x, next.y & CS__STG_CURRENT, wslot);
    cs__stg_commit();
    const int f = e.y & 0xff;
    T2 *own = AB + CS__STG_OWN(e.y) * C, *par = AB + CS__STG_PAR(e.y) * C;
    const T2 so = *own, sp = *par;
    T dd, rr;
    cs__stg_row_in<T, (NA > 3)>(in, f, e.x >= 0, at + (long long)e.x * C, fz, dd, rr);
    const T d1 = (dd + so.x) + cd, uu = in.u(), r1 = (rr + so.y) + cr;
    const T inv = cs__stg_rcp(d1);
    const bool top = f & CS__STG_TOP, meet = f & CS__STG_MEET;
    const T g = (f & CS__STG_START) ? T(1) : cg, ue = meet ? uu * g : uu, gt = top ? g : T(0);
    const T a = ue * inv, b = r1 * inv, c = top ? gt * inv : meet ? uu : T(0);
    const T xd = meet ? (uu * uu) * sd : T(0), xr = meet ? uu * sr : T(0);
    const T cdn = xd - (ue * ue) * inv, crn = xr - (ue * r1) * inv;
    const T cgn = -(uu * gt) * inv, sdn = top ? sd - (gt * gt) * inv : T(0), srn = top ? sr - (gt * r1) * inv : T(0);
    const bool real = e.x >= 0, carry = f & CS__STG_CARRY_OUT, hold = f & CS__STG_HOLD;
    if (IN_REGS) { ra = a; rb = b; rc = c; }
    else if (real) { *own = T2{a, b}; CC[CS__STG_OWN(e.y) * C] = c; }
    if (real && !(f & (CS__STG_ROOT | CS__STG_CARRY_OUT))) *par = T2{sp.x + cdn, sp.y + crn};
    cd = carry ? cdn : hold ? cd : T(0);
    cr = carry ? crn : hold ? cr : T(0);
    cg = carry ? cgn : hold ? cg : T(0);
    sd = carry ? sdn : hold ? sd : T(0);
    sr = carry ? srn : hold ? sr : T(0);
}
template <class T, int C, bool IN_REGS>
__device__ __forceinline__ void cs__stg_forward_tw(int2 e, typename cs__stg_pair<T>::type *AB, const T *CC, T *out, T &xc, T &yc, T ra,
                                                   T rb, T rc)
{
    using T2 = typename cs__stg_pair<T>::type;
    __syncwarp();
    const int f = e.y & 0xff;
    T2 *own = AB + CS__STG_OWN(e.y) * C;
    const T xs = AB[CS__STG_PAR(e.y) * C].y;
    const T2 ab = IN_REGS ? T2{ra, rb} : *own;
    const T c = IN_REGS ? rc : CC[CS__STG_OWN(e.y) * C];
    const T xp = (f & CS__STG_ROOT) ? T(0) : (f & CS__STG_CARRY_OUT) ? xc : xs;
    const T x = (ab.y - ab.x * xp) - ((f & CS__STG_TOP) ? c * yc : T(0));
    xc = (f & CS__STG_HOLD) ? xc : x;
    yc = (f & CS__STG_MEET) ? c * xp : yc;
    const bool real = e.x >= 0;
    if (real && (f & CS__STG_GATHER_IN)) own->y = x;
    if (real) out[e.x * C] = x;
}

/* C: cells per warp; R: register steps (0, CS__STG_REG_STEPS or CS__STG_REG_STEPS_MORE(C)), unrolled so that ra/rb stay
 * registers; TW: two-way sections (C = 1 only; the steps above, a third shared value per row after the schedule);
 * NA: input arrays, 3 for a solve (d, u, rhs; x overwrites rhs), CS__STG_FUSED_ARRAYS for the fused step (d = d0,
 * rhs = b0 and fz's arrays; x overwrites fz.v); UC: the fused step's constants once per slot (cs__stg_copy);
 * GR: the eliminated rows' records (a, b) in device memory (sd.rec, the warp's own [step][lane] run, written in
 * the backward sweep, read back through a ring of RING steps ahead in the forward sweep): shared memory holds only
 * the rows that others gather into (CS__SL_GR; one-way, no register steps). */
template <class T, int C, int R, bool TW, int NA, bool UC = false, bool GR = false>
__global__ void __launch_bounds__(32) cs__k_staged(cs__staged_dev sd, T *d, const T *__restrict__ u, T *rhs, cs__stg_fused<T> fz)
{
    using T2 = typename cs__stg_pair<T>::type;
    using copy_t = cs__stg_copy<T, C, NA, UC>;
    using in_t = cs__stg_in<T, 32 / C, UC>;
    constexpr int S = 32 / C;
    extern __shared__ __align__(16) unsigned char cs__smem_stg[];
    /* AB holds the shared rows' (a, b) pairs and a scratch row (for empty slots, the root's parent
     * and register rows without gathers: zero, never written). The schedule of the group's
     * structure is staged too: read from device memory every step it missed L1 and stalled the
     * warp on L2 latency (a quarter of the samples, NOTES.md). */
    T2 *AB0 = reinterpret_cast<T2 *>(cs__smem_stg);
    T *ring = reinterpret_cast<T *>(AB0 + (size_t)(sd.rows + 1) * C);
    constexpr int RS = (int)(copy_t::SLOT_BYTES / sizeof(T)); /* elements per ring slot */
    T2 *fring = reinterpret_cast<T2 *>(ring + RING * RS); /* GR: RING steps of the lanes' records */
    int2 *ssc = reinterpret_cast<int2 *>(fring + (GR ? RING * 32 : 0));
    T *CC0 = reinterpret_cast<T *>(ssc + (size_t)sd.max_steps * S); /* two-way: the records' third values */
    const int lane = threadIdx.x, q = lane / C, j = lane % C; /* lane q of cell j */
    T2 *AB = AB0 + j;
    T2 *const recw = GR ? reinterpret_cast<T2 *>(sd.rec) + (size_t)blockIdx.x * sd.max_steps * 32 + lane : nullptr;
    const unsigned fring_lane = (unsigned)__cvta_generic_to_shared(fring + lane);
    cs_pdl_enter(); /* a programmatic launch: after the kernel before it (its counters too) */
    T *CC = CC0 + j;
    copy_t cp;
    {
        const T *arr[7] = {d, u, rhs, fz.cdt, fz.v, fz.i, fz.g};
        cp.init(arr, (unsigned)__cvta_generic_to_shared(ring), q, j);
    }
    T *const xout = NA > 3 ? fz.v : rhs; /* where x goes */
    const int2 *sched = reinterpret_cast<const int2 *>(sd.sched);
    const T *rg0 = ring + q * C + j; /* this lane's first array in ring slot 0 (laid out [k][slot][cell]) */
    const T *rk0 = UC ? ring + 32 * (NA - 4) + q : rg0; /* its constants (UC: [k][slot] after v, i, g) */
    const int2 *sc = ssc + q;        /* this lane's slot of step 0 */
    T ra[R > 0 ? R : 1], rb[R > 0 ? R : 1], rc[TW && R > 0 ? R : 1], unused;
    int type = sd.group_type[blockIdx.x], nsteps = 0;
    long long base = sd.group_base[blockIdx.x];
    const T *gp[copy_t::H + copy_t::HK];
    cp.at(base, sd.group_cbase[blockIdx.x], gp);
    bool staged = false; /* the group's first steps are in the ring already */
    for (;;) {
        const T2 zero{T(0), T(0)};
        for (int i = lane; i < (sd.rows + 1) * C; i += 32) AB0[i] = zero;
        if (TW)
            for (int i = lane; i < (sd.rows + 1) * C; i += 32) CC0[i] = T(0);
        if (!staged) { /* a new structure (or the first group): its schedule, then the ring's first steps */
            const int2 ty = sd.stype[type];
            nsteps = ty.y;
            __syncwarp();
            for (int i = lane; i < ty.y * S; i += 32) ssc[i] = __ldg(sched + (size_t)ty.x + i);
            __syncwarp();
            for (int t = 0; t < RING - 1; ++t) {
                const int2 en = t < nsteps ? sc[t * S] : make_int2(-1, 0);
                cp.copy(gp, en.x, en.y & CS__STG_CURRENT, t);
                cs__stg_commit();
            }
        }
        /* the warp's next group, handed out as warps finish (next[0]): with launches running at once, a
         * warp that starts late takes fewer groups instead of ending late (a fixed g + gridDim.x
         * made the 256 000-cell mixed batch 5 % slower concurrently than one launch after another) */
        int g2 = 0;
        if (lane == 0) g2 = (int)gridDim.x + atomicAdd(sd.next, 1);
        g2 = __shfl_sync(0xffffffffu, g2, 0);
        const int type2 = g2 < sd.ngroup ? sd.group_type[g2] : -1;
        const long long base2 = g2 < sd.ngroup ? sd.group_base[g2] : 0, cbase2 = g2 < sd.ngroup ? sd.group_cbase[g2] : 0;
        /* backward sweep: step t's inputs were issued RING-1 steps ago */
        T cd = T(0), cr = T(0), cg = T(0), csd = T(0), csr = T(0);
        int2 e = sc[0];
        const long long at = base + j; /* this lane's cell's row 0 in the fused step's i, g */
#pragma unroll
        for (int t = 0; t < R; ++t)
            if (t < nsteps) {
                const int2 en = sc[(t + 1 < nsteps ? t + 1 : t) * S];
                const int2 nr = t + RING - 1 < nsteps ? sc[(t + RING - 1) * S] : make_int2(-1, 0);
                if constexpr (TW)
                    cs__stg_backward_tw<T, C, NA, true>(cp, gp, nr, (t + RING - 1) % RING, e, in_t{rk0 + (t % RING) * RS, rg0 + (t % RING) * RS}, AB, CC, cd, cr, cg, csd,
                                                        csr, ra[t], rb[t], rc[t], fz, at);
                else
                    cs__stg_backward<T, C, NA, true, false>(cp, gp, nr, (t + RING - 1) % RING, e, in_t{rk0 + (t % RING) * RS, rg0 + (t % RING) * RS}, AB, cd, cr,
                                                            ra[t], rb[t], fz, at, nullptr);
                e = en;
            }
        for (int t = R, ri = R % RING; t < nsteps; ++t) {
            const int2 en = sc[(t + 1 < nsteps ? t + 1 : t) * S];
            const int2 nr = t + RING - 1 < nsteps ? sc[(t + RING - 1) * S] : make_int2(-1, 0);
            if constexpr (TW)
                cs__stg_backward_tw<T, C, NA, false>(cp, gp, nr, ri == 0 ? RING - 1 : ri - 1, e, in_t{rk0 + ri * RS, rg0 + ri * RS}, AB, CC, cd, cr, cg, csd, csr,
                                                     unused, unused, unused, fz, at);
            else
                cs__stg_backward<T, C, NA, false, GR>(cp, gp, nr, ri == 0 ? RING - 1 : ri - 1, e, in_t{rk0 + ri * RS, rg0 + ri * RS}, AB, cd, cr, unused, unused, fz,
                                                      at, recw + (size_t)t * 32);
            e = en;
            ri = ri + 1 == RING ? 0 : ri + 1;
        }
        /* the next group of the same structure: stage its first steps while the forward sweep
         * runs (the ring is free) */
        __syncwarp();
        staged = type2 == type;
        T *out = xout + base + j;
        if (g2 < sd.ngroup) cp.at(base2, cbase2, gp);
        if (staged)
            for (int t = 0; t < RING - 1; ++t) {
                const int2 en = t < nsteps ? sc[t * S] : make_int2(-1, 0);
                cp.copy(gp, en.x, en.y & CS__STG_CURRENT, t);
                cs__stg_commit();
            }
        /* forward sweep: the steps in reverse; x goes to device memory once */
        T xc = T(0), yc = T(0);
        e = sc[(nsteps - 1) * S];
        if constexpr (GR) { /* the records of the last RING - 1 steps (R = 0) in flight */
            for (int k = 0; k < RING - 1; ++k) {
                const int s = nsteps - 1 - k;
                cs__stg_fetch_record(fring_lane + (unsigned)(((s + RING) % RING) * 32 * sizeof(T2)), recw + (size_t)(s > 0 ? s : 0) * 32, s >= 0);
                cs__stg_commit();
            }
        }
        for (int t = nsteps - 1, fi = (nsteps - 1) % RING; t >= R; --t) {
            const int2 en = sc[(t > 0 ? t - 1 : 0) * S];
            if constexpr (GR) { /* step t - RING + 1's record into the slot that step t + 1 read */
                const int s = t - RING + 1, ws = fi + 1 == RING ? 0 : fi + 1;
                __syncwarp();
                cs__stg_fetch_record(fring_lane + (unsigned)(ws * 32 * sizeof(T2)), recw + (size_t)(s > 0 ? s : 0) * 32, s >= 0);
                cs__stg_commit();
                asm volatile("cp.async.wait_group %0;" ::"n"(RING - 1));
                const T2 ab = fring[fi * 32 + lane];
                cs__stg_forward<T, C, true>(e, AB, out, xc, ab.x, ab.y);
                fi = fi == 0 ? RING - 1 : fi - 1;
            } else if constexpr (TW) cs__stg_forward_tw<T, C, false>(e, AB, CC, out, xc, yc, unused, unused, unused);
            else cs__stg_forward<T, C, false>(e, AB, out, xc, unused, unused);
            e = en;
        }
#pragma unroll
        for (int t = R - 1; t >= 0; --t)
            if (t < nsteps) {
                const int2 en = sc[(t > 0 ? t - 1 : 0) * S];
                if constexpr (TW) cs__stg_forward_tw<T, C, true>(e, AB, CC, out, xc, yc, ra[t], rb[t], rc[t]);
                else cs__stg_forward<T, C, true>(e, AB, out, xc, ra[t], rb[t]);
                e = en;
            }
        if (g2 >= sd.ngroup) break;
        __syncwarp(); /* the forward sweep's reads of AB end before the next group zeroes them */
        type = type2; base = base2;
    }
    /* the last warp to finish zeroes the counter for the next solve (a memset before each launch
     * cost 0.2-0.3 µs per solve at 256 cells): every warp's last atomicAdd on next[0] comes before
     * its increment of next[1] */
    if (lane == 0) {
        __threadfence();
        if (atomicAdd(sd.next + 1, 1) == (int)gridDim.x - 1) {
            sd.next[0] = 0;
            sd.next[1] = 0;
        }
    }
}

/* The kernel of a shape (cells per warp, register steps, two-way, NA input arrays), or nullptr */
template <class T, int NA>
static cs__staged_kernel_t<T> cs__staged_kernel_na(int cells, int reg_steps, int two_way)
{
    if (two_way) /* one cell per warp only */
        return cells != 1 ? nullptr : reg_steps == 0 ? cs__k_staged<T, 1, 0, true, NA>
                                    : reg_steps == CS__STG_REG_STEPS ? cs__k_staged<T, 1, CS__STG_REG_STEPS, true, NA> : nullptr;
    if (cells == 4 && reg_steps == CS__STG_REG_STEPS_MORE(4)) return cs__k_staged<T, 4, CS__STG_REG_STEPS_MORE(4), false, NA>;
    if (reg_steps != 0 && reg_steps != CS__STG_REG_STEPS) return nullptr;
    switch (cells * 2 + (reg_steps != 0)) {
    case 8: return cs__k_staged<T, 4, 0, false, NA>;
    case 9: return cs__k_staged<T, 4, CS__STG_REG_STEPS, false, NA>;
    case 4: return cs__k_staged<T, 2, 0, false, NA>;
    case 5: return cs__k_staged<T, 2, CS__STG_REG_STEPS, false, NA>;
    case 2: return cs__k_staged<T, 1, 0, false, NA>;
    case 3: return cs__k_staged<T, 1, CS__STG_REG_STEPS, false, NA>;
    default: return nullptr;
    }
}
/* The kernel of records in device memory (GR: one-way, no register steps) */
template <class T, int NA, bool UC>
static cs__staged_kernel_t<T> cs__staged_kernel_gr(int cells)
{
    if (cells == 4) return cs__k_staged<T, 4, 0, false, NA, UC, true>;
    if (cells == 2) return cs__k_staged<T, 2, 0, false, NA, UC, true>;
    if constexpr (!UC) return cells == 1 ? cs__k_staged<T, 1, 0, false, NA, false, true> : nullptr;
    return nullptr;
}
/* The fused step's kernel with the constants once per slot (UC: 4 or 2 cells a warp, one-way) */
static cs__staged_kernel_t<double> cs__staged_kernel_uc(int cells, int reg_steps)
{
    constexpr int NA = CS__STG_FUSED_ARRAYS;
    if (cells == 4 && reg_steps == CS__STG_REG_STEPS_MORE(4)) return cs__k_staged<double, 4, CS__STG_REG_STEPS_MORE(4), false, NA, true>;
    if (reg_steps != 0 && reg_steps != CS__STG_REG_STEPS) return nullptr;
    switch (cells * 2 + (reg_steps != 0)) {
    case 8: return cs__k_staged<double, 4, 0, false, NA, true>;
    case 9: return cs__k_staged<double, 4, CS__STG_REG_STEPS, false, NA, true>;
    case 4: return cs__k_staged<double, 2, 0, false, NA, true>;
    case 5: return cs__k_staged<double, 2, CS__STG_REG_STEPS, false, NA, true>;
    default: return nullptr;
    }
}
/* the fused step exists in double only */
template <class T>
static cs__staged_kernel_t<T> cs__staged_kernel(int cells, int reg_steps, int two_way, int fused, int uc, int gr)
{
    (void)uc;
    if (gr) return fused || reg_steps || two_way ? nullptr : cs__staged_kernel_gr<T, 3, false>(cells);
    return fused ? nullptr : cs__staged_kernel_na<T, 3>(cells, reg_steps, two_way);
}
template <>
cs__staged_kernel_t<double> cs__staged_kernel<double>(int cells, int reg_steps, int two_way, int fused, int uc, int gr)
{
    constexpr int NA = CS__STG_FUSED_ARRAYS;
    if (gr)
        return reg_steps || two_way ? nullptr
               : !fused           ? cs__staged_kernel_gr<double, 3, false>(cells)
               : uc               ? cs__staged_kernel_gr<double, NA, true>(cells)
                                  : cs__staged_kernel_gr<double, NA, false>(cells);
    if (fused && uc) return two_way ? nullptr : cs__staged_kernel_uc(cells, reg_steps);
    return fused ? cs__staged_kernel_na<double, CS__STG_FUSED_ARRAYS>(cells, reg_steps, two_way)
                 : cs__staged_kernel_na<double, 3>(cells, reg_steps, two_way);
}

/* the plain solve's kernel in precision T, and for a plan of the fused step (sd.fused) also the
 * fused kernel in double: its larger ring sets the blocks per multiprocessor */
template <class T>
static cudaError_t cs__staged_prepare_t(const cs__staged_dev &sd, int attr_rows, int attr_steps, int *blocks_per_sm)
{
    for (int fused = 0; fused <= (sd.fused && sizeof(T) == sizeof(double)); ++fused) {
        const int uc = fused && sd.uc;
        const cs__staged_kernel_t<T> k = cs__staged_kernel<T>(sd.cells, sd.reg_steps, sd.two_way, fused, uc, sd.gr);
        if (!k) return cudaErrorInvalidValue;
        const int na = fused ? CS__STG_FUSED_ARRAYS : 3;
        /* the kernel's opt-in only grows: another plan's launches of it may need more */
        cudaFuncAttributes fa;
        cudaError_t e = cudaFuncGetAttributes(&fa, k);
        if (e != cudaSuccess) return e;
        const int want = (int)cs__staged_warp_bytes(attr_rows, attr_steps, sd.cells, sd.two_way, na, uc, sd.gr, sizeof(T));
        if (want > fa.maxDynamicSharedSizeBytes) e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, want);
        if (e != cudaSuccess) return e;
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, 32,
                                                          cs__staged_warp_bytes(sd.rows, sd.max_steps, sd.cells, sd.two_way, na, uc, sd.gr, sizeof(T)));
        if (e != cudaSuccess) return e;
    }
    return *blocks_per_sm < 1 ? cudaErrorInvalidConfiguration : cudaSuccess;
}

cudaError_t cs__staged_prepare(const cs__staged_dev &sd, int attr_rows, int attr_steps, int blocks_per_sm[2])
{
    cudaError_t e = cs__staged_prepare_t<double>(sd, attr_rows, attr_steps, &blocks_per_sm[0]);
    return e != cudaSuccess ? e : cs__staged_prepare_t<float>(sd, attr_rows, attr_steps, &blocks_per_sm[1]);
}

template <class T>
static cudaError_t cs__staged_launch_t(const cs__staged_dev &sd, T *d, const T *u, T *rhs, const cs__stg_fused<T> &fz, cudaStream_t stream,
                                       bool pdl = false)
{
    const int fused = fz.v != nullptr, na = fused ? CS__STG_FUSED_ARRAYS : 3, uc = fused && sd.uc;
    const cs__staged_kernel_t<T> k = cs__staged_kernel<T>(sd.cells, sd.reg_steps, sd.two_way, fused, uc, sd.gr);
    if (!k) return cudaErrorInvalidValue;
    long long grid = (long long)sd.blocks_per_sm * sd.nsm;
    if (grid > sd.ngroup) grid = sd.ngroup;
    return cs_pdl_launch(pdl, k, dim3((unsigned)grid), dim3(32),
                         cs__staged_warp_bytes(sd.rows, sd.max_steps, sd.cells, sd.two_way, na, uc, sd.gr, sizeof(T)), stream, sd, d, u, rhs, fz);
}
template <class T>
cudaError_t cs__staged_launch(const cs__staged_dev &sd, T *d, const T *u, T *rhs, cudaStream_t stream)
{
    return cs__staged_launch_t<T>(sd, d, u, rhs, cs__stg_fused<T>{nullptr, nullptr, nullptr, nullptr, 0}, stream);
}
template cudaError_t cs__staged_launch<double>(const cs__staged_dev &, double *, const double *, double *, cudaStream_t);
template cudaError_t cs__staged_launch<float>(const cs__staged_dev &, float *, const float *, float *, cudaStream_t);

cudaError_t cs__staged_launch_step(const cs__staged_dev &sd, const cs_hines_step_d &st, cudaStream_t stream, bool pdl)
{
    const cs__stg_fused<double> fz{st.cdt, st.v, st.i, st.g, st.keep_currents};
    return cs__staged_launch_t<double>(sd, const_cast<double *>(st.d0), st.u, const_cast<double *>(st.b0), fz, stream, pdl);
}
