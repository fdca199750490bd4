/* Private to the GPU Hines solvers: the host-side plan (layouts, schedules, packing), built in
 * plain C by cs_hines_plan.c and uploaded by cs_hines_gpu.cu. No CUDA types here. */
#ifndef CS_HINES_GPU_IMPL_H
#define CS_HINES_GPU_IMPL_H

#include "cs_hines_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS__HINES_VARIANTS(X)                      \
    X(CS__HV_FLAT, "flat")                         \
    X(CS__HV_INTERLEAVED, "interleaved")           \
    X(CS__HV_BLOCK_INTERLEAVED, "block_interleaved") \
    X(CS__HV_BLOCK_SHARED, "block_shared")         \
    X(CS__HV_VARIABLE, "variable")                 \
    X(CS__HV_FINE, "fine")                         \
    X(CS__HV_WARP, "warp")                         \
    X(CS__HV_STAGED, "staged")                     \
    X(CS__HV_CHUNKED, "chunked")

typedef enum {
#define CS__HV_ENUM(e, name) e,
    CS__HINES_VARIANTS(CS__HV_ENUM)
#undef CS__HV_ENUM
    CS__HV_COUNT,
    CS__HV_AUTO = 100
} cs__hines_variant;

const char *cs__hines_variant_name(int v);
int cs__hines_variant_is_fine(int v); /* fine and warp: packs, branch schedules, re-rooting */
int cs__hines_variant_lookup(const char *name); /* -1 when unknown; CS__HV_AUTO for NULL/"auto" */

/* Largest number of rows of one fine pack that may be staged in shared memory, by precision
 * (227 KB opt-in limit of Hopper over 3 arrays). */
#define CS__HINES_SMEM_BYTES_MAX (227 * 1024)

/* warp: rows of one pack (a warp's cells; one cell always fits whatever its size) and default
 * rows of one CUDA block (opt.fine_pack_rows overrides): 1280 rows in double is 30 KB, so a
 * multiprocessor holds ~24 medium-high cells (bench/NOTES.md, "Hines GPU"). */
#define CS__WARP_PACK_ROWS 384
#define CS__WARP_BLOCK_ROWS 1280
#define CS__WARP_MAX_GROUPS 32 /* launch groups (one stream each) before falling back to one launch */

/* staged: a warp takes a group of C cells of one structure (C = 4, 2 or 1, chosen per plan) and
 * gives each cell S = 32 / C lanes; a step of a schedule has S slots (rows from independent
 * subtrees), one per lane. CS__STG_RING steps of inputs are in flight per warp through cp.async
 * (6 steps of 32 rows of d, u, rhs in double: 4.6 KB). 4 cells of 8 lanes make a medium-high warp
 * 28 KB of shared memory, so 8 warps share a multiprocessor; 8 cells of 4 lanes (4 warps) and 8
 * cells with two slots per lane were latency-bound at one warp per scheduler (bench/NOTES.md).
 * Fewer cells per warp shorten the schedule of large cells (more slots per step) and shrink the
 * shared memory per warp.
 * The eliminated rows of a schedule's first CS__STG_REG_STEPS steps may stay in registers instead
 * (a lane runs one row per step, so they are its own): shared memory then holds only the later
 * steps' rows and the rows that other lanes gather into, and more warps fit a multiprocessor. */
#define CS__STG_MAX_SLOTS 32
/* input arrays of the fused step's ring: d0, u, b0, C/dt, v, i, g (a solve's: d, u, rhs) */
#define CS__STG_FUSED_ARRAYS 7
#ifndef CS__STG_RING /* a build may set it (for both the C planner and the CUDA kernel) to measure another depth */
#define CS__STG_RING 6
#endif
#define CS__STG_REG_STEPS 24
/* More register steps for 4 cells per warp, where shared memory, not registers, holds the warps
 * (big-low: 5 warps of 695-row cells with 24 steps, 6 with 40; 227 registers). Taken only by plans
 * of one launch: beside other launches running at once, its registers crowd them out (bench/NOTES.md,
 * "Session 7"). 0: none for that C; CS__STG_REG_STEPS_MAX: the most of any shape. */
#define CS__STG_REG_STEPS_MORE(cells) ((cells) == 4 ? 40 : 0)
#define CS__STG_REG_STEPS_MAX 40
/* registers per thread of the double kernel of C cells per warp and R register steps (ptxas -v,
 * sm_90: 64, 66, 68 without register steps for 1, 2, 4 cells, the largest taken; 168, 154, 162
 * with 24; 227 with 40 for 4), for the planner's estimate of the warps per multiprocessor.
 * Re-read after a kernel change: the launch takes the real occupancy from the runtime, the
 * planner's choice of shape does not. */
#define CS__STG_REGS(cells, R) \
    ((R) == 0 ? 68 : (R) == CS__STG_REG_STEPS ? ((cells) == 1 ? 168 : (cells) == 2 ? 154 : 162) : 227)
/* Two-way sections (only with 1 cell per warp, 32 lanes): a long unbranched section hanging from
 * a branch point P is eliminated from both ends. Its top rows T, T+1, ... run downwards on one
 * lane from the first step on (each row's u slot holds the coupling to its child, and the lane
 * carries a fill coupling to P, normalised to 1 at T); its bottom rows run upwards as usual; the
 * two meet at a row M, which then couples to P (its u slot holds T's coupling to P). The critical
 * path falls from the tree's height to about its longest section, less where long sections are
 * cut into pieces (cs_hines_staged_twoway.c): big-low 108 → 32 steps
 * (bench/NOTES.md, "Session 8"). A top row's record has a third value c (its coefficient on
 * u_T·x_P), kept beside a and b; a lane waiting for M's other children holds its carry. */
#define CS__STG_REGS_TW(R) ((R) == 0 ? 64 : 220) /* registers of the two-way kernels (ptxas -v, sm_90) */
/* schedule flags of a staged slot: the low byte of its second int, above it the shared-memory
 * row of the parent (bits 8-19) and of the row itself (bits 20-31). "Parent" is the row that
 * receives the slot's elimination: its tree parent, or in a two-way section the next top row
 * (for a top row) or P (for M). */
enum {
    CS__STG_HOLD = 1,         /* an empty slot whose lane keeps its carry (two-way: M not ready yet) */
    CS__STG_GATHER_IN = 2,    /* other children add their sums into A/B[own]; forward: keep x in B */
    CS__STG_CARRY_OUT = 4,    /* the parent is this stream's next row: pass the elimination in registers */
    CS__STG_START = 8,        /* two-way: the first top row of a section (fill coupling 1) */
    CS__STG_ROOT = 16,
    CS__STG_TOP = 32,         /* two-way: a top row (record a, b, c; carries to the row below) */
    CS__STG_MEET = 64,        /* two-way: M (couples to P through the carried fill) */
    CS__STG_CURRENT = 128     /* fused step: a cell of the structure has current at this row (its i
                                 and g are read and zeroed; cs__staged_mark_current) */
};
#define CS__STG_PAR(w) ((int)(((unsigned)(w) >> 8) & 0xfffu))
#define CS__STG_OWN(w) ((int)((unsigned)(w) >> 20))
#define CS__STG_MAX_SMEM_ROWS 4095 /* 12 bits, the last one a scratch row */
/* fields of a staged launch */
/* CS__SL_UC: the fused step's constants once per slot, not per cell (every group of the launch reads
 * a group of equal cells: cs__staged_share_constants) */
/* CS__SL_GR: the eliminated rows' records (a, b) in device memory, shared rows only for the rows that
 * others gather into (one-way, no register steps; by default the launches of a fused plan of each
 * structure's own shape, cs__staged_gr in cs_hines_staged.c) */
enum { CS__SL_FIRST, CS__SL_GROUPS, CS__SL_CELLS, CS__SL_REG, CS__SL_ROWS, CS__SL_STEPS, CS__SL_TW, CS__SL_UC, CS__SL_GR, CS__SL_N };

/* chunked (cs_hines_chunked_plan.c): unbranched runs of at least 2·L rows are cut into chunks
 * (top row a, interior rows, bottom row b) of at most L interior rows; L = opt.block_size (0 →
 * CS__CHK_DEFAULT_L), CS__CHK_MIN_L..CS__CHK_MAX_L. The kernels keep one chunk's interior in
 * registers (CS__CHK_MAX_L rows at most). */
#define CS__CHK_DEFAULT_L 16
#define CS__CHK_MIN_L 4
#define CS__CHK_MAX_L 32
#define CS__CHK_LANES 32 /* chunks of one group: row j of a group's chunk q at base + j·32 + q */
/* The planner's estimate of a chunked solve's critical path, in dependent row steps of fine
 * (a load and a division each, ~0.5 µs in device memory): the fine solve of the final reduced
 * tree (2 per row of its longest root-to-leaf path: both sweeps) plus, per chunked level,
 * CS__CHK_LEVEL_STEPS (its three launches and P1's and P3's load latency, ~2-3 µs each) and L
 * (P1's and P3's chains of divisions, in registers). fine alone on the whole tree: 2·path0. A
 * level cuts only where it pays (cs__chunked_pays): its interiors are at least 1/CS__CHK_MIN_SHARE
 * of the rows, or the estimate is at least 1/CS__CHK_MIN_SHARE shorter than fine's; otherwise it
 * cuts nothing and the solve is exactly its fine plan's (no copy of u, no chunk launches).
 * Measured on the H100 (bench/NOTES.md, "Session 16: the chunked Hines variant"): big2000, nothing
 * to cut (estimate = fine's), lost 13 % to that copy and the two launches; big10000 at L = 16,
 * 2 % of its rows cut but its longest path 25 % shorter (estimate 0.82 of fine's), won 14 %. Not
 * measured yet: the constants themselves. */
#define CS__CHK_LEVEL_STEPS 16
#define CS__CHK_MIN_SHARE 8

/* The host plan. All indices are int (the create function refuses batches whose internal size
 * would not fit). "Slot": one thread of a per-system variant; "pack": one CUDA block of fine. */
typedef struct cs__hines_hplan {
    int variant;
    int nsys, nrows;
    int internal_size;
    int uniform;       /* all systems share one structure */
    int nstruct;       /* distinct structures */
    int max_n;         /* rows of the largest system */

    /* conversion tree ↔ internal, per system s:
     * internal index of local row i = cell_base[s] + (cell_map[s] < 0 ? i·cell_stride
     *                                                : lmap[cell_map[s] + i])
     * the coupling stored at that index is tree u[offset[s] + lusrc[cell_map[s] + i]]
     * (identity when cell_map[s] < 0; -1: none, the re-rooted root) */
    int *offset;       /* [nsys+1] copy of the tree-order offsets */
    int *cell_base;    /* [nsys] */
    int *cell_map;     /* [nsys] */
    int cell_stride;
    int nlmap;
    int *lmap, *lusrc; /* [nlmap] */
    int *lorder;       /* [nlmap] per structure, its rows by increasing lmap: the device conversion
                        * walks a system in internal order, so a warp's writes (to internal) or
                        * reads (from internal) are one contiguous run */

    /* per-system variants (flat, interleaved, block_interleaved, block_shared, variable) */
    int nslot;         /* threads with a system (padding slots have slot_n = 0) */
    int *slot_base;    /* [nslot] internal index of the slot's row 0 */
    int *slot_n;       /* [nslot] rows of the slot's system (0: padding slot) */
    int stride;        /* internal distance between rows i and i+1 of one slot (1 for flat) */
    int shared_p;      /* 1: p_local[i] (length max_n) is every system's parent of local row i;
                          0: p_local[k] (length internal_size) is the local parent of the row at k */
    int *p_local;
    int group;         /* block_shared: systems per CUDA block (= threads) */
    int ngroup;
    int *group_base;   /* [ngroup] block_shared: internal index of the group's first element */
    int *group_rows;   /* [ngroup] block_shared: padded rows of the group's systems */
    int threads;       /* CUDA threads per block */
    int threads_auto;  /* fine: threads came from the default (the fused step may take more) */
    int fine_fuses;    /* fine, and chunked that cuts nothing: the fused step is offered (cs__hines_hplan_fuses) */

    /* fine */
    int npack;
    int *pack_base;    /* [npack] internal index of the pack's first row (rows contiguous) */
    int *pack_type;    /* [npack] */
    int ntype;
    int *type_info;    /* [4·ntype]: first task, first level_start entry, levels, rows */
    int nlevel_start;
    int *level_start;  /* per type: levels+1 absolute task indices */
    int ntask;
    int *tasks;        /* [4·ntask] {first row, length, parent row or -1, first child entry}; each
                          type's list ends with a sentinel whose fourth field closes the last task */
    int nchild;
    int *children;     /* [nchild] first row (pack-local) of each child branch */
    int max_pack_rows; /* shared memory needed: max_pack_rows · 3 · sizeof(real) */
    int fine_global;   /* 1: work in device memory (a pack too big for shared memory) */
    int fine_flags;
    /* warp: blocks of packs of one type, one warp per pack (packs of at most 32 branches per
     * level, usually one cell); the type's schedule is staged once per block */
    int nblock;
    int *block_first;  /* [nblock+1] first pack of each block */
    int block_warps;   /* most packs of one block (CUDA threads = 32 · block_warps) */
    int block_rows;    /* most rows of one block (its packs' rows, staged in shared memory) */
    int sched_bytes;   /* shared memory for the largest type's schedule (16-byte aligned) */
    int nlaunch;       /* launch groups: consecutive blocks of similar shared memory */
    int *launch_first; /* [nlaunch+1] first block of each launch group */
    int *launch_rows;  /* [nlaunch] most rows of one block of the group */
    int *launch_sched; /* [nlaunch] most schedule bytes of one block of the group */
    /* staged: groups (group_base, ngroup) of C cells of one structure, one warp each: row i of
     * the group's cell j at group_base[g] + i·C + j, rows numbered in schedule order (conversions
     * through lmap). Each structure
     * (type) has a schedule of steps of 32 / C slots {row or -1, flags | parent's shared row << 8
     * | own shared row << 20} (stg_sched); the backward sweep runs it forwards, the forward sweep
     * backwards. Per warp, shared memory holds the eliminated rows (a, b) of its group that are
     * not in registers (shared rows, plus a scratch row), a ring of staged inputs, and the
     * schedule. Structures of one shape (C, register steps) share a launch; their groups are
     * consecutive. */
    int stg_nlaunch;
    int *stg_launch;      /* [CS__SL_N·stg_nlaunch] */
    int *stg_type_launch; /* [nstype] */
    int *group_type;   /* [ngroup] */
    int *group_cells;  /* [ngroup] lanes with a cell (the others compute on padding) */
    int *group_cbase;  /* [ngroup] fused step: where group g's constants (d0, u, b0, cdt) are read,
                          group_base of a group whose cells all have the same (cs__staged_share_constants);
                          NULL: each group its own */
    unsigned char *group_same; /* [ngroup] its cells' constants equal their structure's first cell's so far */
    int nstype;
    int *stype;        /* [2·nstype] first slot of the type's schedule in stg_sched, steps */
    int stg_nslot;
    int *stg_sched;    /* [2·stg_nslot] */
    int stg_fused;     /* built for the fused step (opt.fused_step): rings sized for its 7 arrays */
    int stg_slot_constants; /* launches may hold the constants once per slot (CS__SL_UC; not
                               CS_HINES_STAGED_CONSTANTS_PER_CELL) */
    /* chunked: the internal layout is [the reduced tree's, in chk_sub's layout (chk_nr rows)]
     * [the chunks' interiors: groups of CS__CHK_LANES chunks, a group's rows bottom-aligned, so
     * that row j of chunk q of group g (m interior rows, M the group's most) is at
     * chk_group[2g] + (M - m + j)·32 + q, j = 0 the row below a]. Chunks sorted by m, descending. */
    int chk_L;
    int chk_nchunk, chk_ngroup, chk_nr;
    int *chk_chunk;    /* [4·nchunk] {internal a, internal b, the u slot of the edge (a, b) in the
                          reduced layout (it holds b's own coupling in the caller's u), m} */
    int *chk_group;    /* [2·ngroup] {internal index of row 0 of the group, its rows M} */
    struct cs__hines_hplan *chk_sub; /* the reduced tree's plan (fine, or chunked again) */
    /* statistics for describe() */
    long long nbranch_in, nbranch_out; /* branches before / after splitting (sum over systems) */
    int max_levels;    /* most levels of one type */
    char describe[1024];
} cs__hines_hplan;

/* Build the host plan. nsm: multiprocessors of the device (to size packs for small batches).
 * variant: a cs__hines_variant (CS__HV_AUTO allowed). Returns CS_SOLVER_OK,
 * CS_SOLVER_ERR_INVALID (message in msg) or CS_SOLVER_ERR_NOMEM. */
cs_solver_status cs__hines_hplan_build(int nsys, const int *offset, const int *p, int variant,
                                       const cs_hines_gpu_options *opt, int nsm,
                                       cs__hines_hplan *hp, char *msg, size_t msglen);
void cs__hines_hplan_free(cs__hines_hplan *hp);

/* The variant whose solve a plan of this batch would run, without building it: opt->variant
 * itself; for "auto" the library's rule (-1 without the fused step: a staged trial plan decides
 * there); for "chunked", CS__HV_FINE where its top level would cut nothing (its solve is then
 * exactly fine's). -1 for an unknown name or a malformed batch (the plan reports those). A few
 * linear passes over the rows: `auto`'s trial asks it before building a candidate that may only
 * repeat one it has timed (src/core/cs_backend_choose.c). */
int cs__hines_hplan_resolve(int nsys, const int *offset, const int *p, const cs_hines_gpu_options *opt, int nsm);

/* Where fine's level sweeps read a pack's schedule (tasks, level starts, children): in device
 * memory as the sweeps reach it, the same with the type's schedule and the pack's u prefetched into
 * L2 when the block starts, or staged in shared memory ahead of the rows (the warp kernel's way).
 * In device memory every level waited on three dependent loads from DRAM (the level's bounds, its
 * tasks, the children): big2000 × 8 000's fine step spent 62 % of its warp samples in the
 * backward sweep, 43 % at its barrier (H100, Nsight Compute, bench/NOTES.md "Session 27"). */
enum { CS__SCHED_GLOBAL = 0, CS__SCHED_L2 = 1, CS__SCHED_SHARED = 2 }; /* fine's sweeps (cs_hines_gpu_kernels.cuh) */

/* bytes of type t's schedule as the warp and fine kernels stage it in shared memory (16-byte
 * aligned: tasks with their sentinel, level starts, children) */
int cs__hines_type_sched_bytes(const cs__hines_hplan *hp, int t);


/* fine's and warp's per-structure schedules (cs_hines_plan_fine.c), one record per distinct
 * structure k (rows of its system rep[k]), planned with the flags' CS__FINE_STRUCT_FLAGS: new
 * records, or NULL when out of memory. lp_all, where not NULL, receives structure k's local
 * parents at lp_all[lp_first[k] ..) (written on the planner's threads). cs_hines_schedules
 * (cs_hines_schedules.c) holds them for several plans. */
typedef struct cs__fstruct cs__fstruct;
#define CS__FINE_STRUCT_FLAGS (CS_HINES_FINE_NO_REROOT | CS_HINES_FINE_NO_SPLIT) /* all they read */
cs__fstruct *cs__fine_structs_build(int nstruct, const int *rep, const int *offset, const int *p, int max_n, int flags,
                                    int *lp_all, const long long *lp_first);
void cs__fine_structs_free(cs__fstruct *fs, int nstruct);
/* The records of opt->schedules for this plan's structures and flags, or NULL with a message
 * where they were made for another batch or other flags. */
const cs__fstruct *cs__schedules_match(const cs_hines_schedules *sch, const cs__hines_hplan *hp, const int *p, const int *rep,
                                       int flags, char *msg, size_t msglen);
/* fine and warp (cs_hines_plan_fine.c): the plan of a batch with distinct structures sid[s]
 * (rep[id]: a system of structure id); fs: their schedules (cs__schedules_match), or NULL to
 * plan them (then freed with the plan's other work). */
cs_solver_status cs__plan_fine(cs__hines_hplan *hp, const int *p, const int *sid, const int *rep, const cs__fstruct *fs,
                               const cs_hines_gpu_options *opt, int nsm, char *msg, size_t msglen);

/* staged (cs_hines_staged.c): the plan, the shared memory of one warp for elements of `elem`
 * bytes (slot_constants: the fused step's four constant arrays once per slot, CS__SL_UC;
 * records_device: the forward sweep's ring of records, CS__SL_GR), and the host emulation (the
 * kernel's order of operations). */
cs_solver_status cs__plan_staged(cs__hines_hplan *hp, const int *p, const int *sid, const int *rep,
                                 const cs_hines_gpu_options *opt, int nsm, char *msg, size_t msglen);
size_t cs__staged_warp_bytes(int rows, int max_steps, int cells, int two_way, int arrays, int slot_constants, int records_device,
                             size_t elem);
/* The ready list of the staged schedulers: rows bucketed by depth, so that a free slot takes the
 * deepest first; *top: no bucket above it holds a row. */
static inline void cs__ready_push(int r, const int *depth, int *bucket_head, int *next, int *top)
{
    next[r] = bucket_head[depth[r]];
    bucket_head[depth[r]] = r;
    if (depth[r] > *top) *top = depth[r];
}
/* The deepest row of that list that no row of this step (rows, S slots) shares a receiver with
 * (their gathers would race), taken off the list; -1 when there is none. With top_of (two-way): a
 * section's top (top_of[r] == r) only from step rel[r], and only when may_start. */
static inline int cs__ready_take(int *bucket_head, int *next, int top, const int *recv, const int *rows, int S, const int *top_of,
                                 const int *rel, int t, int may_start)
{
    for (int dpt = top; dpt >= 0; --dpt)
        for (int r = bucket_head[dpt], prev = -1; r >= 0; prev = r, r = next[r]) {
            if (top_of && top_of[r] == r && (rel[r] > t || !may_start)) continue;
            int clash = 0;
            for (int s2 = 0; s2 < S; ++s2) clash |= rows[s2] > 0 && r > 0 && recv[rows[s2]] == recv[r];
            if (clash) continue;
            if (prev < 0) bucket_head[dpt] = next[r]; else next[prev] = next[r];
            return r;
        }
    return -1;
}
/* The two-way schedule of one structure (cs_hines_staged_twoway.c) of n rows (local parents lp,
 * parents first) with S slots per step, into sched (as cs__staged_schedule's, room for 2n + 64
 * steps), and per row the row whose coupling to its parent its u slot holds (edge). Returns the
 * steps, -1 when out of memory, -2 when no two-way schedule was found (use the one-way one). */
int cs__staged_schedule_tw(int n, const int *lp, int S, int *sched, int *edge);
/* The share of the lanes that a staged plan keeps busy (rows over slots, all groups). */
double cs__staged_lane_use(const cs__hines_hplan *hp);
/* Free the arrays cs__plan_staged allocated (and only those), e.g. of a plan that was tried. */
void cs__staged_release(cs__hines_hplan *hp);
void cs__staged_solve_host(const cs__hines_hplan *hp, double *d, const double *u, double *rhs);
/* the same, group g's u read at u_base[g] (+ row·C + lane): the fused step's shared constants;
 * fused: the fused kernel's reads (a launch with CS__SL_UC reads its groups' first lane's u) */
void cs__staged_solve_host_at(const cs__hines_hplan *hp, double *d, const double *u, const int *u_base, int fused, double *rhs);
/* The fused step on a staged plan: mark CS__STG_CURRENT in the schedule of every structure at the
 * rows where any of its cells has CS_HINES_ROW_CURRENT in flags (one byte per internal row); and
 * the host emulation of the fused kernel (the assembly of cs__stg_row_in, then the solve), which
 * reads the marks, not st->flags. Returns 0, or -1 when out of memory. */
void cs__staged_mark_current(cs__hines_hplan *hp, const unsigned char *flags);
int cs__staged_step_host(const cs__hines_hplan *hp, const cs_hines_step_d *st);
/* Narrows the groups that may read another's constants (cs_hines_gpu_plan_share_constants) by one
 * constant array in tree order: per structure, a cell whose rows equal, bit for bit, those of the
 * structure's first cell (in every array passed since first_array); a group of only such cells
 * reads the rows of the structure's first full group of them (group_cbase). Returns the groups
 * that read another's rows (0 for a plan of another variant or not fused: group_cbase stays
 * NULL), or -1 when out of memory. */
long long cs__staged_share_constants(cs__hines_hplan *hp, const double *tree, int first_array);

/* The estimate for chunk lengths Ls[0..nL) of a batch (global parents p, nrows rows), from its
 * unbranched runs alone (each level cuts a run of n >= 2L rows into (n + L + 1)/(L + 2) chunks and
 * leaves 2 rows a chunk): per L, the interior rows of the first level, the levels, the longest
 * root-to-leaf path of the final reduced tree (rows) and of the uncut tree (path0). Returns 0, or
 * -1 when out of memory. */
typedef struct {
    int L, levels, path, path0;
    long long interior;
} cs__chk_estimate;
int cs__chunked_estimate(int nrows, const int *p, int nL, const int *Ls, cs__chk_estimate *est);
/* chunked (cs_hines_chunked_plan.c), in two steps around the reduced tree's plan, which
 * cs__hines_hplan_build (cs_hines_plan.c) builds in between into hp->chk_sub (so that the
 * chunked planner calls no planner back):
 *   cs__chunked_reduce   the chunks and the reduced tree (red: its offsets, parents and the
 *                        variant to plan it with: chunked while it has runs to cut, else fine);
 *   cs__chunked_layout   the internal layout, maps and chunk records, once hp->chk_sub exists;
 *   cs__chunked_reduced_free  red's arrays (after either step, on success or failure).
 * cs__chunked_release frees the plan's chunk arrays (not chk_sub: cs__hines_hplan_free does).
 * The host emulation's two chunk phases (the kernels' order of operations); the solve of the
 * reduced tree between them (ur: a copy of u's first chk_nr rows) is cs__hines_hplan_solve_host's. */
typedef struct {
    int sub_variant;
    int *offset_r, *p_r; /* [nsys + 1], [reduced rows] */
    void *work;          /* the chunks found (private) */
} cs__chk_reduced;
/* (opt->block_size: L, or 0 for the automatic L, cs__chunked_pick_L's; the L taken: hp->chk_L) */
cs_solver_status cs__chunked_reduce(cs__hines_hplan *hp, const int *p, const cs_hines_gpu_options *opt,
                                    cs__chk_reduced *red, char *msg, size_t msglen);
cs_solver_status cs__chunked_layout(cs__hines_hplan *hp, const cs_hines_gpu_options *opt, const cs__chk_reduced *red,
                                    char *msg, size_t msglen);
void cs__chunked_reduced_free(cs__chk_reduced *red);
void cs__chunked_release(cs__hines_hplan *hp);
long long cs__chunked_cost(const cs__chk_estimate *e); /* chunked's critical path (steps) */
int cs__chunked_pays(const cs__chk_estimate *e, int nrows);
/* The automatic L (block_size 0): 8, 16 or 32, whichever gives the shortest estimate (16 on ties
 * or when out of memory). */
int cs__chunked_pick_L(int nrows, const int *p);
/* The same, and the estimate at the L it picks (chosen->L 0 when out of memory) */
int cs__chunked_pick_L_est(int nrows, const int *p, cs__chk_estimate *chosen);
/* "auto"'s test (cs_hines_gpu.h): at least 1/CS__CHK_MIN_SHARE of the rows are chunk interiors
 * AND the critical path estimate is at most half of fine's (stricter than cutting: auto leaves
 * fine only for a clear gain), at chunk length L (0 or out of range:
 * the automatic L). */
int cs__chunked_auto(int nrows, const int *p, int L);
void cs__chunked_p1_host(const cs__hines_hplan *hp, double *d, const double *u, double *rhs, double *ur);
void cs__chunked_p3_host(const cs__hines_hplan *hp, const double *d, const double *u, double *rhs);
/* The fused step on a chunked plan that cuts (cs_hines_chunked_gpu.h): the reduced rows assembled
 * into work_a and v (u into ur, chk_nr entries), P1 and P3 assembling the interiors; the reduced
 * tree's solve on (work_a, ur, v) between P1 and P3 is cs__hines_hplan_step_host's. */
void cs__chunked_reduced_in_host(const cs__hines_hplan *hp, const cs_hines_step_d *st, double *ur);
void cs__chunked_p1_step_host(const cs__hines_hplan *hp, const cs_hines_step_d *st, double *ur);
void cs__chunked_p3_step_host(const cs__hines_hplan *hp, const cs_hines_step_d *st);

/* Internal index of local row i of system s (the conversions' map). */
long long cs__hines_hplan_internal_index(const cs__hines_hplan *hp, int s, int i);

/* Host emulation of the plan (double): conversions and the solve, executed in the kernels'
 * order. For checking the planner on machines without a GPU. */
void cs__hines_hplan_to_internal_host(const cs__hines_hplan *hp, cs_hines_array_kind kind,
                                      const double *tree, double *internal);
void cs__hines_hplan_from_internal_host(const cs__hines_hplan *hp, cs_hines_array_kind kind,
                                        const double *internal, double *tree);
void cs__hines_hplan_solve_host(const cs__hines_hplan *hp, double *d, const double *u, double *rhs);

/* The fused step (cs_hines_gpu_step_internal_d) on per-system variants, fine and chunked:
 * whether the variant runs it, the structure bits of every internal row (per-system variants
 * only), and a host emulation of the kernels (same order of operations) for checking them on
 * machines without a GPU. */
int cs__hines_hplan_fuses(const cs__hines_hplan *hp);
int cs__hines_hplan_shares_constants(const cs__hines_hplan *hp);
void cs__hines_hplan_row_flags(const cs__hines_hplan *hp, unsigned char *flags);
void cs__hines_hplan_step_host(const cs__hines_hplan *hp, const cs_hines_step_d *st);
/* The fused step's row k on the host, as the kernels form it: d = d0 (+ g), rhs = (cdt·v + b0)
 * (+ (g·v − i)), g and i of a row flagged CS_HINES_ROW_CURRENT zeroed when zero is set. */
static inline void cs__step_row_host(const cs_hines_step_d *st, long long k, int zero, double *d, double *rhs)
{
    const double vk = st->v[k];
    *d = st->d0[k];
    *rhs = st->cdt[k] * vk + st->b0[k];
    if (st->flags[k] & CS_HINES_ROW_CURRENT) {
        const double gk = st->g[k];
        *d += gk;
        *rhs += gk * vk - st->i[k];
        if (zero) st->g[k] = st->i[k] = 0.0;
    }
}

#ifdef __cplusplus
}
#endif
#endif
