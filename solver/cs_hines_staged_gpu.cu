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

/* A lane's share of staging one slot of a step: the slot's row of d, u, rhs is 3 segments of C
 * values, copied in chunks of CB bytes (16, or the whole segment when it is smaller); the slot's
 * C lanes copy them, lane j chunks j, j + C, ... A ring slot is laid out [array][step slot][cell],
 * so that the warp's 32 reads of one array are one contiguous run (no bank conflicts). */
template <class T, int C>
struct cs__stg_copy {
    static constexpr int S = 32 / C, SEG = C * (int)sizeof(T), CB = SEG < 16 ? SEG : 16;
    static constexpr int PER = CB / (int)sizeof(T), CH = SEG / CB, N = 3 * CH, H = (N + C - 1) / C;
    static constexpr unsigned SLOT_BYTES = (unsigned)(S * 3 * C * sizeof(T));
    const T *src[H]; /* the chunk's array, chunk offset included */
    unsigned dst[H]; /* shared-memory address within ring slot 0 */
    int nchunk;

    __device__ void init(const T *d, const T *u, const T *rhs, unsigned ring0, int s, int j)
    {
        nchunk = 0;
#pragma unroll
        for (int h = 0; h < H; ++h) {
            const int q = j + h * C;
            src[h] = d; /* a chunk this lane does not have is never copied */
            dst[h] = ring0;
            if (q >= N) continue;
            const int k = q / CH, c = q - k * CH;
            src[h] = (k == 0 ? d : k == 1 ? u : rhs) + c * PER;
            dst[h] = ring0 + (unsigned)(((k * S + s) * C + c * PER) * sizeof(T));
            nchunk = h + 1;
        }
    }
    /* the chunks' sources for the group at `base` */
    __device__ __forceinline__ void at(long long base, const T *g[H]) const
    {
#pragma unroll
        for (int h = 0; h < H; ++h) g[h] = src[h] + base;
    }
    /* copy row `row` (< 0: none) of the group whose sources are g into ring slot `slot` (not
     * committed). Predicated, not branched: the step stays one basic block, so the compiler can
     * interleave the copy's address arithmetic with the step's floating-point chain. */
    __device__ __forceinline__ void copy(const T *const g[H], int row, int slot) const
    {
#pragma unroll
        for (int h = 0; h < H; ++h) {
            const unsigned to = dst[h] + (unsigned)slot * SLOT_BYTES;
            const T *from = g[h] + row * C;
            const int on = row >= 0 && h < nchunk;
            if (CB == 16)
                asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; @p cp.async.cg.shared.global [%0], [%1], 16; }" ::"r"(to),
                             "l"(from), "r"(on));
            else
                asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; @p cp.async.ca.shared.global [%0], [%1], %3; }" ::"r"(to),
                             "l"(from), "r"(on), "n"(CB));
        }
    }
};

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
template <class T, int C, bool IN_REGS>
__device__ __forceinline__ void cs__stg_backward(const cs__stg_copy<T, C> &cp, const T *const *gp, int next_row, int wslot, int2 e,
                                                 const T *rg, typename cs__stg_pair<T>::type *AB, T &cd, T &cr, T &ra, T &rb)
{
    using T2 = typename cs__stg_pair<T>::type;
    asm volatile("cp.async.wait_group %0;" ::"n"(RING - 2));
    __syncwarp(); /* this step's copies and the last step's gathers visible; a ring slot freed */
    cp.copy(gp, next_row, wslot);
    cs__stg_commit();
    const int f = e.y & 0xff;
    T2 *own = AB + CS__STG_OWN(e.y) * C, *par = AB + CS__STG_PAR(e.y) * C; /* AB: this lane's cell */
    const T2 so = *own, sp = *par; /* no other lane writes the parent's row in this step */
    const T d1 = (rg[0] + so.x) + cd, uu = rg[32], r1 = (rg[64] + so.y) + cr; /* arrays 32 = S·C apart */
    const T inv = cs__stg_rcp(d1);
    const T uu2 = uu * uu, ur = uu * r1;
    const T a = uu * inv, b = r1 * inv, cdn = -(uu2 * inv), crn = -(ur * inv);
    const bool real = e.x >= 0, carry = f & CS__STG_CARRY_OUT;
    if (IN_REGS) { ra = a; rb = b; }
    else if (real) *own = T2{a, b};
    if (real && !(f & (CS__STG_ROOT | CS__STG_CARRY_OUT))) *par = T2{sp.x + cdn, sp.y + crn};
    cd = carry ? cdn : T(0);
    cr = carry ? crn : T(0);
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
template <class T, int C, bool IN_REGS>
__device__ __forceinline__ void cs__stg_backward_tw(const cs__stg_copy<T, C> &cp, const T *const *gp, int next_row, int wslot, int2 e,
                                                    const T *rg, typename cs__stg_pair<T>::type *AB, T *CC, T &cd, T &cr, T &cg,
                                                    T &sd, T &sr, T &ra, T &rb, T &rc)
{
    using T2 = typename cs__stg_pair<T>::type;
    asm volatile("cp.async.wait_group %0;" ::"n"(RING - 2));
    __syncwarp();
    cp.copy(gp, next_row, wslot);
    cs__stg_commit();
    const int f = e.y & 0xff;
    T2 *own = AB + CS__STG_OWN(e.y) * C, *par = AB + CS__STG_PAR(e.y) * C;
    const T2 so = *own, sp = *par;
    const T d1 = (rg[0] + so.x) + cd, uu = rg[32], r1 = (rg[64] + so.y) + cr;
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
 * registers; TW: two-way sections (C = 1 only; the steps above, a third shared value per row after the schedule). */
template <class T, int C, int R, bool TW>
__global__ void __launch_bounds__(32) cs__k_staged(cs__staged_dev sd, T *d, const T *__restrict__ u, T *rhs)
{
    using T2 = typename cs__stg_pair<T>::type;
    using copy_t = cs__stg_copy<T, C>;
    constexpr int S = 32 / C;
    extern __shared__ __align__(16) unsigned char cs__smem_stg[];
    /* AB holds the shared rows' (a, b) pairs and a scratch row (for empty slots, the root's parent
     * and register rows without gathers: zero, never written). The schedule of the group's
     * structure is staged too: read from device memory every step it missed L1 and stalled the
     * warp on L2 latency (a quarter of the samples, NOTES.md). */
    T2 *AB0 = reinterpret_cast<T2 *>(cs__smem_stg);
    T *ring = reinterpret_cast<T *>(AB0 + (size_t)(sd.rows + 1) * C);
    int2 *ssc = reinterpret_cast<int2 *>(ring + RING * S * 3 * C);
    T *CC0 = reinterpret_cast<T *>(ssc + (size_t)sd.max_steps * S); /* two-way: the records' third values */
    const int lane = threadIdx.x, q = lane / C, j = lane % C; /* lane q of cell j */
    T2 *AB = AB0 + j;
    T *CC = CC0 + j;
    copy_t cp;
    cp.init(d, u, rhs, (unsigned)__cvta_generic_to_shared(ring), q, j);
    const int2 *sched = reinterpret_cast<const int2 *>(sd.sched);
    const T *rg0 = ring + q * C + j; /* this lane's d in ring slot 0 (laid out [k][slot][cell]) */
    constexpr int RS = S * 3 * C;    /* elements per ring slot */
    const int2 *sc = ssc + q;        /* this lane's slot of step 0 */
    T ra[R > 0 ? R : 1], rb[R > 0 ? R : 1], rc[TW && R > 0 ? R : 1], unused;
    int type = sd.group_type[blockIdx.x], nsteps = 0;
    long long base = sd.group_base[blockIdx.x];
    const T *gp[copy_t::H];
    cp.at(base, gp);
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
                cp.copy(gp, t < nsteps ? sc[t * S].x : -1, t);
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
        const long long base2 = g2 < sd.ngroup ? sd.group_base[g2] : 0;
        /* backward sweep: step t's inputs were issued RING-1 steps ago */
        T cd = T(0), cr = T(0), cg = T(0), csd = T(0), csr = T(0);
        int2 e = sc[0];
#pragma unroll
        for (int t = 0; t < R; ++t)
            if (t < nsteps) {
                const int2 en = sc[(t + 1 < nsteps ? t + 1 : t) * S];
                const int nr = t + RING - 1 < nsteps ? sc[(t + RING - 1) * S].x : -1;
                if constexpr (TW)
                    cs__stg_backward_tw<T, C, true>(cp, gp, nr, (t + RING - 1) % RING, e, rg0 + (t % RING) * RS, AB, CC, cd, cr, cg, csd, csr,
                                                    ra[t], rb[t], rc[t]);
                else
                    cs__stg_backward<T, C, true>(cp, gp, nr, (t + RING - 1) % RING, e, rg0 + (t % RING) * RS, AB, cd, cr, ra[t], rb[t]);
                e = en;
            }
        for (int t = R, ri = R % RING; t < nsteps; ++t) {
            const int2 en = sc[(t + 1 < nsteps ? t + 1 : t) * S];
            const int nr = t + RING - 1 < nsteps ? sc[(t + RING - 1) * S].x : -1;
            if constexpr (TW)
                cs__stg_backward_tw<T, C, false>(cp, gp, nr, ri == 0 ? RING - 1 : ri - 1, e, rg0 + ri * RS, AB, CC, cd, cr, cg, csd, csr, unused,
                                                 unused, unused);
            else
                cs__stg_backward<T, C, false>(cp, gp, nr, ri == 0 ? RING - 1 : ri - 1, e, rg0 + ri * RS, AB, cd, cr, unused, unused);
            e = en;
            ri = ri + 1 == RING ? 0 : ri + 1;
        }
        /* the next group of the same structure: stage its first steps while the forward sweep
         * runs (the ring is free) */
        __syncwarp();
        staged = type2 == type;
        T *out = rhs + base + j;
        if (g2 < sd.ngroup) cp.at(base2, gp);
        if (staged)
            for (int t = 0; t < RING - 1; ++t) {
                cp.copy(gp, t < nsteps ? sc[t * S].x : -1, t);
                cs__stg_commit();
            }
        /* forward sweep: the steps in reverse; x goes to device memory once */
        T xc = T(0), yc = T(0);
        e = sc[(nsteps - 1) * S];
        for (int t = nsteps - 1; t >= R; --t) {
            const int2 en = sc[(t > 0 ? t - 1 : 0) * S];
            if constexpr (TW) cs__stg_forward_tw<T, C, false>(e, AB, CC, out, xc, yc, unused, unused, unused);
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

/* The kernel of a shape (cells per warp, register steps), or nullptr */
template <class T>
static cs__staged_kernel_t<T> cs__staged_kernel(int cells, int reg_steps, int two_way)
{
    if (two_way) /* one cell per warp only */
        return cells != 1 ? nullptr : reg_steps == 0 ? cs__k_staged<T, 1, 0, true>
                                    : reg_steps == CS__STG_REG_STEPS ? cs__k_staged<T, 1, CS__STG_REG_STEPS, true> : nullptr;
    if (cells == 4 && reg_steps == CS__STG_REG_STEPS_MORE(4)) return cs__k_staged<T, 4, CS__STG_REG_STEPS_MORE(4), false>;
    if (reg_steps != 0 && reg_steps != CS__STG_REG_STEPS) return nullptr;
    switch (cells * 2 + (reg_steps != 0)) {
    case 8: return cs__k_staged<T, 4, 0, false>;
    case 9: return cs__k_staged<T, 4, CS__STG_REG_STEPS, false>;
    case 4: return cs__k_staged<T, 2, 0, false>;
    case 5: return cs__k_staged<T, 2, CS__STG_REG_STEPS, false>;
    case 2: return cs__k_staged<T, 1, 0, false>;
    case 3: return cs__k_staged<T, 1, CS__STG_REG_STEPS, false>;
    default: return nullptr;
    }
}

template <class T>
static cudaError_t cs__staged_prepare_t(const cs__staged_dev &sd, int attr_rows, int attr_steps, int *blocks_per_sm)
{
    const cs__staged_kernel_t<T> k = cs__staged_kernel<T>(sd.cells, sd.reg_steps, sd.two_way);
    if (!k) return cudaErrorInvalidValue;
    cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)cs__staged_warp_bytes(attr_rows, attr_steps, sd.cells, sd.two_way, sizeof(T)));
    if (e != cudaSuccess) return e;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, 32, cs__staged_warp_bytes(sd.rows, sd.max_steps, sd.cells, sd.two_way, sizeof(T)));
    if (e != cudaSuccess) return e;
    return *blocks_per_sm < 1 ? cudaErrorInvalidConfiguration : cudaSuccess;
}

cudaError_t cs__staged_prepare(const cs__staged_dev &sd, int attr_rows, int attr_steps, int blocks_per_sm[2])
{
    cudaError_t e = cs__staged_prepare_t<double>(sd, attr_rows, attr_steps, &blocks_per_sm[0]);
    return e != cudaSuccess ? e : cs__staged_prepare_t<float>(sd, attr_rows, attr_steps, &blocks_per_sm[1]);
}

template <class T>
cudaError_t cs__staged_launch(const cs__staged_dev &sd, T *d, const T *u, T *rhs, cudaStream_t stream)
{
    const cs__staged_kernel_t<T> k = cs__staged_kernel<T>(sd.cells, sd.reg_steps, sd.two_way);
    if (!k) return cudaErrorInvalidValue;
    long long grid = (long long)sd.blocks_per_sm * sd.nsm;
    if (grid > sd.ngroup) grid = sd.ngroup;
    k<<<(int)grid, 32, cs__staged_warp_bytes(sd.rows, sd.max_steps, sd.cells, sd.two_way, sizeof(T)), stream>>>(sd, d, u, rhs);
    return cudaGetLastError();
}
template cudaError_t cs__staged_launch<double>(const cs__staged_dev &, double *, const double *, double *, cudaStream_t);
template cudaError_t cs__staged_launch<float>(const cs__staged_dev &, float *, const float *, float *, cudaStream_t);
