/* cablesim: batched Hines (tree) solvers on the GPU — public API.
 *
 * The batch is described as in cs_solver.h: nsys systems, system s owns the tree-order rows
 * [offset[s], offset[s+1]) and p[r] is the global row of r's parent (p[r] < r, -1 for the first
 * row of each system, and only there). Matrix convention (cs_solver.h):
 *     d[r]·x[r] + u[r]·x[p[r]] + Σ_{children c of r} u[c]·x[c] = rhs[r]
 * offset[0] = 0 and every system has at least one row.
 * The solution overwrites rhs; d is workspace (its contents afterwards are unspecified).
 *
 * A plan is built ONCE from the batch's structure and a variant name; it converts layouts and
 * builds schedules at set-up, never per solve. Variants:
 *   "flat"               one thread per system on the tree-order data (no conversion needed)
 *   "interleaved"        Full-Interleaved: row i of system slot s at i·nslot + s (padded when
 *                        systems differ in size or structure)
 *   "block_interleaved"  groups of BS systems, each group Full-Interleaved (BS = block_size)
 *   "block_shared"       Block-Interleaved with BS = threads of a CUDA block, rhs of the block's
 *                        systems held in shared memory during the solve
 *   "variable"           different morphologies in one batch: systems sorted by size (descending),
 *                        groups of block_size systems, each group padded to its largest system
 *   "fine"               fine-grained: one thread per branch, level by level in one CUDA block per
 *                        pack of systems (greedy packing), branches sorted by length within a
 *                        level, long branches split, trees re-rooted to minimise depth; the pack's
 *                        rows are staged in shared memory when they fit
 *   "warp"               the fine schedule with one warp per pack (one cell, or several small
 *                        ones), packs of one structure per CUDA block; the block stages the
 *                        structure's schedule and its packs' rows in shared memory (the rows of a
 *                        block must fit: about 4 500 rows in double precision)
 *   "staged"             groups of C cells of one structure per warp (C = 4, 2 or 1: 8, 16 or 32
 *                        lanes per cell), each lane running one row per step of a list schedule of
 *                        independent subtrees; the inputs stream through shared memory (cp.async),
 *                        the eliminated rows stay in shared memory and, for the first 24 steps
 *                        (40 with C = 4 in a plan of one launch) where that fits more warps, in
 *                        registers, so the solve moves only the
 *                        compulsory bytes. A structure's rows are stored in the order of its
 *                        schedule (a step's rows are one run of device memory). The planner
 *                        re-roots low trees at their centre, picks C and the register steps by an
 *                        estimate (the groups' steps over the warps that fit, or the longest
 *                        schedule for small batches), and gives each structure of a mixed batch
 *                        its own shape where that is faster, structures of one shape sharing a
 *                        launch (two-way ones only while all its warps run at once); the launches
 *                        run at once, their groups handed out to the warps as they finish. Long
 *                        unbranched sections may be eliminated from both ends at once, one cell
 *                        per warp (two-way sections: a shorter schedule), where all the warps run
 *                        at once and a model of the schedulers' load finds it faster (a mixed
 *                        batch: structures of at most 4 cells per multiprocessor). block_size
 *                        forces C; CS_HINES_FINE_NO_REROOT, CS_HINES_STAGED_NO_REG_STEPS and
 *                        CS_HINES_STAGED_NO_TWO_WAY turn parts off. Cells too large for shared
 *                        memory are refused
 *   "chunked"            a partition ("multisplit") solve for long unbranched sections: every run of
 *                        at least 2·L rows is cut into chunks of at most L interior rows (L =
 *                        block_size, 4..32; 0 → 8, 16 or 32, whichever gives the shortest
 *                        estimated critical path), one thread per chunk eliminates its interior
 *                        into its two end rows (a grid-wide kernel), the remaining reduced tree is
 *                        solved by a "fine" plan (or a chunked one again while it still has such
 *                        runs: a 100 000-row cable takes four levels), then one thread per chunk
 *                        recomputes its interior from the two ends. Interiors are stored 32 chunks
 *                        interleaved (coalesced); the plan holds a workspace for the reduced
 *                        tree's couplings (copied from u every solve, or once with
 *                        const_coupling). A level cuts only where it pays: its interiors are at
 *                        least 1/8 of the rows, or the estimated critical path (the reduced tree's
 *                        longest path in rows, twice, plus 16 + L steps per level) is at least 1/8
 *                        shorter than fine's (twice the longest path); otherwise nothing is cut
 *                        and the solve is exactly the fine plan's. Accepts every batch fine
 *                        accepts
 *   "auto"               chooses from the batch's shape (cs_hines_gpu_plan_variant says which):
 *                        for the solve alone staged below 1024 cells per multiprocessor, and
 *                        above whenever its lanes are at least half busy (every class of Table
 *                        4.1 but small-low, mixed batches too); otherwise
 *                        cells of one structure: warp below ~1000 cells per multiprocessor, warp
 *                        for small cells (<= 128 rows), else interleaved; mixed structures:
 *                        fine, variable from ~1000 per multiprocessor; interleaved / variable
 *                        when the cells are too large to stage, or for the fused step from
 *                        CS_HINES_FUSED_MIN_PER_SM systems per multiprocessor; but chunked (its
 *                        automatic L) for cells too large to stage (over ~4 800 rows) whose runs
 *                        it cuts: at least 1/8 of the rows chunk interiors AND the estimated
 *                        critical path at most half of fine's. Source: the H100 measurements of
 *                        session 16 (bench/NOTES.md, "the chunked Hines variant"): chunked was
 *                        3.6× fine on big30000 (runs of 40-110 rows), 10.5× on the FlyWire cell,
 *                        24× on one cell of 116 152 rows, 1.14× on big10000 (runs of 13-35), and
 *                        lost 13 % where nothing was cut (big2000, runs of 2-6)
 * The per-system variants use no workspace beyond the system itself; "fine", "warp" and "staged"
 * use none either ("chunked" holds one array of its reduced tree's couplings in its plan) (their shared-memory staging is on chip; staged's plan holds one group counter
 * per launch). Padding rows of an internal layout are
 * never read, except by "staged": the padding cells of a group's last, partly filled rows are
 * computed on (the results are written there and never used), and its internal-layout pointers
 * must be aligned to the bytes of one row of a group, at most 16 (cp.async; cs_hines_gpu_malloc's
 * are).
 *
 * Internal layout. Every variant keeps d, u, rhs in its own internal order of
 * cs_hines_gpu_plan_internal_size() elements per array (>= the number of rows; padding rows are
 * never read). A simulator that keeps its state on the device in that order converts once with
 * cs_hines_gpu_to_internal_*() and then calls cs_hines_gpu_solve_internal_*() every step.
 * Re-rooting ("fine", "warp", "staged", and "chunked"'s reduced tree) changes which coupling a row of the internal u holds, so u converts with
 * CS_HINES_COUPLING and node arrays (d, rhs, voltages) with CS_HINES_NODE.
 *
 * Pointers. The tree-order solves accept host or device pointers (told apart with
 * cudaPointerGetAttributes; d, u and rhs must all be host or all device) and return when the
 * solution is in rhs. The internal-layout functions take device pointers only and are
 * asynchronous on the plan's stream (launch errors are reported at once, kernel faults at the
 * next synchronising call such as cs_hines_gpu_sync).
 *
 * Errors: every function returns a cs_solver_status; CUDA failures give CS_SOLVER_ERR_DEVICE and
 * a one-line message (file:line, call, CUDA's text) kept for cs_hines_gpu_last_error(). When the
 * library is built without CUDA every function answers CS_SOLVER_ERR_UNAVAILABLE. */
#ifndef CS_HINES_GPU_H
#define CS_HINES_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "cs_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_hines_plan cs_hines_plan;
typedef struct cs_hines_schedules cs_hines_schedules; /* cs_hines_schedules_create */

/* Flags of the fine and staged solvers' set-up optimisations (all on by default). Each has a bit
 * of its own: auto's trial passes one set of flags to every candidate, so a staged flag must not
 * read as a fine one (CS_HINES_STAGED_INVARIANT once shared fine's CS_HINES_FINE_STEP_ALWAYS). */
enum {
    CS_HINES_FINE_NO_REROOT = 1, /* keep the tree-order root (fine, warp, staged) */
    CS_HINES_FINE_NO_SPLIT = 2,  /* do not split long branches */
    CS_HINES_FINE_NO_SORT = 4,   /* keep branches of a level in tree order instead of by length */
    CS_HINES_FINE_GLOBAL = 8,    /* work in device memory even when a pack fits in shared memory */
    CS_HINES_FINE_U_SHARED = 16, /* fine's fused step: u staged in shared memory with d and rhs (24 B a
                                    row) instead of read through L1 (16 B a row: more blocks a
                                    multiprocessor). By default only on packs of several small
                                    distinct cells, where it was faster; slower on packs of one
                                    large cell (bench/NOTES.md, sessions 21 and 28) */
    CS_HINES_FINE_D_GLOBAL = 32, /* fine's fused step: the eliminated diagonal in work_a too (8 B a row
                                    of shared memory) */
    CS_HINES_FINE_STEP_ALWAYS = 64, /* fine fuses the step whatever its packs (by default packs of one
                                    large cell each, and packs of small distinct cells where there
                                    are at least 3 a multiprocessor: where it was measured faster) */
    CS_HINES_FINE_ONE_LAUNCH = 128, /* fine's fused step in one launch sized for the largest pack (by
                                    default one launch per class of packs of similar size) */
    CS_HINES_CHUNKED_CUT_ONLY = 256, /* chunked: no plan (CS_SOLVER_ERR_INVALID) where it would cut
                                    nothing, instead of fine's plan of the whole tree (auto's trial,
                                    which times fine already: cs_hines_gpu_plan_resolve says it) */
    CS_HINES_FINE_STEP_LARGE_ONLY = 512, /* fine fuses the step only on packs of one large cell each
                                    (before session 28; by default also many packs of small distinct
                                    cells, with u and the schedule in shared memory) */
    CS_HINES_FINE_PACK_CAP_TWO = 1024, /* fine: at most cells / (2 multiprocessors) cells a pack
                                    whatever the cells (before session 29; by default / 5 where
                                    most cells are distinct, so that small networks of distinct
                                    cells get several packs a multiprocessor and the fused step) */
    CS_HINES_STAGED_NO_REG_STEPS = 2048, /* staged: keep every eliminated row in shared memory, none in
                                          registers (fewer registers, more shared memory per warp) */
    CS_HINES_STAGED_NO_TWO_WAY = 4096,  /* staged: eliminate every section from its bottom only (no
                                          two-way sections, which shorten the schedules of 1 cell
                                          per warp) */
    CS_HINES_STAGED_INVARIANT = 8192,   /* staged: a cell's arithmetic independent of the other cells
                                          of the batch (bitwise the same x whichever cells share the
                                          plan, e.g. on 1 or 4 GPUs): its root chosen from its
                                          structure alone, no two-way sections, and the children of
                                          a branch point added in a fixed order (never carried).
                                          Off by default: its cost is not measured on a GPU */
    CS_HINES_STAGED_CONSTANTS_PER_CELL = 16384, /* staged, fused step: the ring holds the four
                                          constant arrays for each cell of a group even where the
                                          group's cells share them (by default once per row where
                                          cs_hines_gpu_plan_share_constants finds every group of a
                                          launch sharing: less shared memory, more warps) */
    CS_HINES_STAGED_RECORDS_DEVICE = 32768, /* staged: every one-way launch keeps the eliminated rows'
                                          records (a, b) in device memory: written in the backward
                                          sweep, read back through a ring in the forward sweep, so
                                          that shared memory holds only the rows that other lanes
                                          gather into (fewer bytes a warp, more warps; no register
                                          steps). By default only the launches of a fused plan of
                                          several launches (bench/NOTES.md, "Session 34") */
    CS_HINES_STAGED_RECORDS_SHARED = 65536, /* staged: every record in shared memory (before session 34) */
    CS_HINES_STAGED_ROWS_UNSHARED = 131072 /* staged, records in device memory: each row that others
                                          gather into keeps a shared row of its own for the whole
                                          solve (before session 35); by default rows live at
                                          different steps share one */
};

typedef struct {
    const char *variant; /* a name above; NULL means "auto" */
    int block_size;      /* BS: block_interleaved (0 → 64), block_shared (0 → 64: threads per block),
                            variable (0 → 32: systems per padded group), staged (0 → chosen: 4, 2
                            or 1 cells per warp), chunked (0 → 16: most interior rows of a chunk,
                            4..32) */
    int threads;         /* CUDA threads per block: per-system variants (0 → 128), fine (0 → 128; its
                            fused step: 128, or 256 where shared memory leaves fewer than 8 blocks
                            a multiprocessor) */
    int fine_flags;      /* CS_HINES_FINE_* (fine and warp), CS_HINES_STAGED_* (staged),
                            CS_HINES_CHUNKED_CUT_ONLY (chunked) */
    int fine_pack_rows;  /* fine: most rows in one pack (0 → 1536, i.e. 36 KB of shared memory in
                            double precision, 18 KB in single); warp: most rows in one CUDA block
                            of packs (0 → 1280; a block always takes at least one pack) */
    int device;          /* CUDA device ordinal (the current device is set to it) */
    int fused_step;      /* 1: the caller will run cs_hines_gpu_step_internal_d, so "auto" weighs
                            the assembly it saves: per-system variants from CS_HINES_FUSED_MIN_PER_SM
                            systems per multiprocessor instead of warp; a staged plan is built for
                            the fused step (larger rings: it still solves) */
    int dependent_launch; /* 1: the fused step's kernel (fine's, staged's, the per-system variants',
                            on the plan's stream) is a programmatic dependent launch (compute
                            capability 9.0+, cs_gpu_pdl.cuh): scheduled while the caller's kernel
                            before it runs, it waits inside for that one to complete; the kernel
                            lets the caller's next launch do the same. 0 (default): plain launches */
    int const_coupling;  /* 1: every internal-layout solve passes the same u array with the same
                            values (a simulator's constant couplings): "chunked" then copies the
                            reduced tree's part of u once instead of at every solve (tree-order
                            solves copy it every time). 0 (default): u may change between solves */
    const cs_hines_schedules *schedules; /* "fine" and "warp" (also as "auto" resolves): the
                            structures' schedules made once for this batch and these flags
                            (cs_hines_schedules_create), read instead of planned again; the same
                            plan bit for bit. Made for another batch or other CS_HINES_FINE_NO_REROOT /
                            NO_SPLIT: CS_SOLVER_ERR_INVALID. Other variants ignore it. NULL
                            (default): each plan makes its own */
} cs_hines_gpu_options;
/* Systems per multiprocessor from which "auto" picks a per-system variant for the fused step.
 * Measured on an H200 with the full step (bench/NOTES.md, "Full step", session 3): at 124 cells
 * per SM the fused step was faster (2.53e10 compartment-steps/s against 2.30e10 for warp plus an
 * assembly kernel), at 31 the separate assembly (1.47e10 against 0.87e10); between them the
 * crossover was not measured. */
#define CS_HINES_FUSED_MIN_PER_SM 120
/* Most rows of distinct structures (tree shapes, each counted once) "staged" plans; more are
 * refused. Its planner shapes every structure on its own, several times over, at a cost that grows
 * faster than its rows: 1 024 distinct busyring trees (160 000 rows) took 7 s of set-up, 2 000
 * distinct trees of 2 036 rows more than 200 s (H100 host, session 11). The nine real cells are
 * 5 790 rows. */
#define CS_HINES_STAGED_MAX_DISTINCT_ROWS 65536

/* Fill *opt with the defaults (auto, defaults for every parameter, device 0). */
void cs_hines_gpu_options_default(cs_hines_gpu_options *opt);

/* 1 when the library was compiled with CUDA, else 0. */
int cs_hines_gpu_compiled(void);
/* Number of usable CUDA devices (0 when none or not compiled; never an error). */
int cs_hines_gpu_device_count(void);
/* Name of device `dev` into buf (empty when none). */
void cs_hines_gpu_device_name(int dev, char *buf, size_t len);
/* The last error message of this library on this thread ("" when none). */
const char *cs_hines_gpu_last_error(void);

/* Schedules of a batch's distinct structures for "fine" and "warp" plans (plain C, no GPU; the
 * batch and fine_flags as the plans will take them): their planners' per-structure phase, about
 * half of each plan's host time, done once for several plans (auto's trial builds warp's and
 * fine's at once: cs_hines_gpu_options.schedules). The caller owns it: plans read it while
 * cs_hines_gpu_plan_create runs (several at once on threads may), keep nothing of it, and it is
 * destroyed once they are built. CS_SOLVER_ERR_INVALID for a bad batch, CS_SOLVER_ERR_NOMEM. */
cs_solver_status cs_hines_schedules_create(int nsys, const int *offset, const int *p, int fine_flags,
                                           cs_hines_schedules **out);
void cs_hines_schedules_destroy(cs_hines_schedules *sch);

/* Build a plan. p and offset are host arrays in the convention above (copied: the caller may
 * free them). opt may be NULL (defaults). CS_SOLVER_ERR_INVALID for a bad structure or an
 * unknown variant name, CS_SOLVER_ERR_UNAVAILABLE without CUDA or a device. */
cs_solver_status cs_hines_gpu_plan_create(int nsys, const int *offset, const int *p,
                                          const cs_hines_gpu_options *opt, cs_hines_plan **out);
void cs_hines_gpu_plan_destroy(cs_hines_plan *plan);
/* The variant whose solve a plan of opt->variant would run on device opt->device, without
 * building it (a few passes over the rows, no device memory): the name itself; for "auto" the
 * variant it would choose (NULL without the fused step, where a trial plan decides); for
 * "chunked", "fine" where it would cut nothing (its solve is then exactly fine's). NULL for an
 * unknown name, a malformed batch, or no CUDA or device (create says why). */
const char *cs_hines_gpu_plan_resolve(int nsys, const int *offset, const int *p, const cs_hines_gpu_options *opt);

/* The variant the plan runs ("auto" resolved), its internal size (elements per array), and a
 * one-line description of its shape (groups, packs, levels, padding) for logs and benchmarks. */
const char *cs_hines_gpu_plan_variant(const cs_hines_plan *plan);
size_t cs_hines_gpu_plan_internal_size(const cs_hines_plan *plan);
const char *cs_hines_gpu_plan_describe(const cs_hines_plan *plan);
/* Internal index of every tree-order row (host array of nrows entries), for a simulator that
 * assembles d and rhs directly in the internal layout. */
cs_solver_status cs_hines_gpu_plan_row_map(const cs_hines_plan *plan, int *internal_of_row);

/* Apply the plan's kernel attributes again (the dynamic shared memory its kernels launch with)
 * on its device. They belong to the kernels, not to the plan: a plan built later may have set a
 * kernel it shares with this one (fine's, staged's of one shape, a chunked plan's reduced-tree
 * fine) to less, and this plan's launches would then fail. cs_hines_gpu_plan_create applies them;
 * call this before using a plan when others were built since it (auto's solver-level trial builds
 * its candidates' plans at once, then times them one after the other). */
cs_solver_status cs_hines_gpu_plan_prepare(cs_hines_plan *plan);

/* Run the plan's work on this CUDA stream (a cudaStream_t; NULL = the default stream). */
cs_solver_status cs_hines_gpu_set_stream(cs_hines_plan *plan, void *stream);
/* Wait for the plan's stream; reports kernel faults. */
cs_solver_status cs_hines_gpu_sync(cs_hines_plan *plan);

/* ---- tree-order solves (host or device pointers; synchronous) ------------------------- */
cs_solver_status cs_hines_gpu_solve_d(cs_hines_plan *plan, double *d, const double *u, double *rhs);
cs_solver_status cs_hines_gpu_solve_f(cs_hines_plan *plan, float *d, const float *u, float *rhs);

/* ---- internal-layout solves (device pointers; asynchronous) --------------------------- */
cs_solver_status cs_hines_gpu_solve_internal_d(cs_hines_plan *plan, double *d, const double *u,
                                               double *rhs);
cs_solver_status cs_hines_gpu_solve_internal_f(cs_hines_plan *plan, float *d, const float *u,
                                               float *rhs);

/* ---- one membrane step: assembly fused into the solve (double; device pointers; asynchronous)
 * For the per-system variants (flat, interleaved, block_interleaved, variable), "fine", "chunked"
 * and "staged" plans built with fused_step = 1 (see cs_hines_gpu_plan_fuses,
 * cs_hines_gpu_plan_set_current; staged, fine and chunked form rhs as (cdt·v + b0) + (g·v − i);
 * staged uses neither work array, fine's packs too large for shared memory use them as their d
 * and rhs; chunked where it cuts nothing is fine's step, and where it cuts it assembles the rows
 * of its reduced tree into work_a and v, which that tree's unfused solve then overwrites with
 * their solution, and its chunks' interiors as P1 and P3 reach them: work_b unused). In the internal
 * layout, every row's diagonal and right-hand side are
 * built as the sweep reaches them and never stored:
 *     d   = d0 + g                     (g only at rows flagged CS_HINES_ROW_CURRENT)
 *     rhs = cdt·v + b0 − (i − g·v)
 * and the solution overwrites v. i and g are read and zeroed at flagged rows only (so a
 * mechanism kernel adds into them between steps); elsewhere they are never touched. work_a and
 * work_b (internal size each) hold the eliminated rows between the sweeps and the sums a branch
 * point gathers from its children: zero them once before the first step; every step leaves them
 * ready for the next. Compared with an assembly pass followed by cs_hines_gpu_solve_internal_d,
 * the step never writes or re-reads d and rhs, and reads i and g only where they can be non-zero. */
enum {
    CS_HINES_ROW_CURRENT = 1,     /* the caller's bit: i and g may be non-zero at this row */
    CS_HINES_ROW_PARENT_PREV = 2, /* structure: the row's parent is the row before it (the sweep
                                     carries the elimination in registers) */
    CS_HINES_ROW_GATHERS = 4      /* structure: a child that is not the next row adds into this
                                     row through work_a and work_b */
};
typedef struct {
    const double *d0;        /* constant part of the diagonal (C/dt + axial + linear membrane) [µS] */
    const double *cdt;       /* weight of v in rhs: C/dt [µS] */
    const double *b0;        /* constant part of rhs (linear membrane currents) [nA] */
    const double *u;         /* coupling of a row to its parent [µS] (internal, CS_HINES_COUPLING) */
    double *v;               /* in: v(t); out: v(t + dt) [mV] */
    double *i, *g;           /* membrane current [nA] and conductance [µS] added by mechanisms */
    const unsigned char *flags; /* per internal row: cs_hines_gpu_plan_row_flags | CS_HINES_ROW_CURRENT;
                                with shared constants one system's rows (max_n entries, like a0):
                                the structure bits and CS_HINES_ROW_CURRENT where any system may
                                carry current (i and g are read there in every system, so they must
                                be zero where a system has none) */
    double *work_a, *work_b; /* workspace (the system's own d and rhs storage), zeroed once */
    int shared_constants;    /* 0: d0, cdt, b0, u are internal-layout arrays; 1: they hold the rows
                                of one system in tree order (max_n entries), shared by every system:
                                for a uniform plan whose systems are identical cells, it saves their
                                bytes per row (32 of ~80) and their memory */
    const double *a0;        /* shared constants only (one system's rows): the pivot u/d' of every
                                row with no current in its subtree in any system, which is the same
                                every step, and NaN at the others (cs_hines_clean_pivots). The step
                                reads it there instead of storing and re-reading it per system */
    int keep_currents;       /* staged only: 1 leaves i and g as they are after reading them (the
                                caller sets, not adds, every row's i and g before each step, and a
                                row it never sets stays zero): saves their 16 B a row of stores.
                                0 (and every other variant): zeroed after reading */
    /* Optional (NULL: none): called on the host for each launch of the step, right after it is
     * queued, with the internal rows [row0, row1) whose v that launch writes and the CUDA stream
     * (a cudaStream_t) it runs on. Work the caller queues there on those rows (a mechanism's
     * state update from the new v) starts as soon as that launch ends, beside the step's other
     * launches; it is joined into the plan's stream before the step returns. "staged" calls it
     * once per launch (its structures' launches run side by side; the ranges tile the rows, in
     * no promised order: staged queues its launches last first), every other variant once,
     * with all rows, on the plan's stream. A non-zero return ends the step with
     * CS_SOLVER_ERR_INVALID (the caller keeps its own error). */
    int (*after_launch)(void *ctx, long long row0, long long row1, void *stream);
    void *after_ctx;
} cs_hines_step_d;
/* 1 when every system of the plan has the same structure (tree-order parents), else 0. */
int cs_hines_gpu_plan_uniform(const cs_hines_plan *plan);
/* staged, fused step: the launches whose warps hold the four constants once per row
 * (cs_hines_gpu_plan_share_constants), and their warps per multiprocessor (the most of them) in
 * *warps_per_sm (may be NULL); 0 for any other plan. */
int cs_hines_gpu_plan_slot_constants(const cs_hines_plan *plan, int *warps_per_sm);
/* 1 when the plan's variant runs cs_hines_gpu_step_internal_d, else 0. */
int cs_hines_gpu_plan_fuses(const cs_hines_plan *plan);
/* The launches of its fused step that run side by side, each calling cs_hines_step_d.after_launch
 * (staged: one per launch shape, often several for cells of several morphologies); 1 for every
 * other variant, 0 for a NULL plan. */
int cs_hines_gpu_plan_step_launches(const cs_hines_plan *plan);
/* 1 when its fused step takes shared constants (cs_hines_step_d.shared_constants): a per-system
 * variant whose systems all have one structure; else 0 (fine, chunked and staged read their own
 * constants per row). */
int cs_hines_gpu_plan_shares_constants(const cs_hines_plan *plan);
/* The structure bits (CS_HINES_ROW_PARENT_PREV, CS_HINES_ROW_GATHERS) of every internal row
 * into a host array of internal-size bytes (padding rows 0). CS_SOLVER_ERR_UNAVAILABLE when
 * the plan does not fuse. */
cs_solver_status cs_hines_gpu_plan_row_flags(const cs_hines_plan *plan, unsigned char *flags);
/* The rows where the fused step's i and g can be non-zero: flags is a host array of one byte per
 * internal row, CS_HINES_ROW_CURRENT where a mechanism adds current. A "staged" plan (built with
 * fused_step = 1: its rings stage d0, u, b0, C/dt, v and, at those rows only, i and g) marks them
 * in its schedule and needs this call before its first step, and again when rows gain current
 * (marks are only added: a marked row without current reads and zeroes zeros); it does not read
 * step->flags, nor take shared constants. The per-system variants and fine read step->flags
 * instead and ignore this call. */
cs_solver_status cs_hines_gpu_plan_set_current(cs_hines_plan *plan, const unsigned char *flags);
/* A "staged" plan built with fused_step = 1 lets a group of cells read its constants (d0, u, b0,
 * cdt) from another group of the same structure when every cell of both has the same values, bit
 * for bit (cells of one morphology and parameters: a circuit's cell types). The rows read are a
 * few groups', which stay in L2, so the step's DRAM traffic drops by 32 of ~80 B a row. Pass the
 * four arrays one at a time (host memory for one), in tree order as cs_hines_gpu_to_internal_d
 * takes them: first_array = 1 with the first; each call narrows the sharing to the cells that
 * also agree on that array, so after the fourth it holds for all four. Call again (from the first)
 * whenever the constants change, and before a CUDA graph captures a step. *groups_shared (may
 * be NULL): the groups that now read another's rows. A launch whose groups all read such a group
 * then holds the four constants once per row in its warps' rings, not once per cell (fewer bytes
 * of shared memory a warp, more warps; not with CS_HINES_STAGED_CONSTANTS_PER_CELL). Any other
 * plan: a no-op (0 groups).
 * CS_SOLVER_ERR_NOMEM, or CS_SOLVER_ERR_INVALID for a NULL array. */
cs_solver_status cs_hines_gpu_plan_share_constants(cs_hines_plan *plan, const double *tree, int first_array, long long *groups_shared);
cs_solver_status cs_hines_gpu_step_internal_d(cs_hines_plan *plan, const cs_hines_step_d *step);
/* Plain C, no GPU: a0 of cs_hines_step_d from one system of n rows in tree order
 * (p_local[0] = -1, p_local[i] < i): a0[i] = u[i]/d'[i], d' being d0 after the elimination of
 * the children, where no row of i's subtree has has_current set (for any system); NaN where one
 * has. Returns 0, or -1 when out of memory. */
int cs_hines_clean_pivots(int n, const int *p_local, const double *d0, const double *u,
                          const unsigned char *has_current, double *a0);

/* ---- conversions on the device (device pointers; asynchronous) ------------------------ */
typedef enum {
    CS_HINES_NODE = 0,    /* one value per row: d, rhs, voltages, currents */
    CS_HINES_COUPLING = 1 /* u: the coupling of a row to its parent */
} cs_hines_array_kind;
/* tree (nrows entries) → internal (internal_size entries; padding rows are left untouched; the
 * coupling of each system's root — tree-order or re-rooted — is written as 0). */
cs_solver_status cs_hines_gpu_to_internal_d(cs_hines_plan *plan, cs_hines_array_kind kind,
                                            const double *tree, double *internal);
cs_solver_status cs_hines_gpu_to_internal_f(cs_hines_plan *plan, cs_hines_array_kind kind,
                                            const float *tree, float *internal);
/* internal → tree. For CS_HINES_COUPLING the tree-order root rows (no coupling) are left untouched. */
cs_solver_status cs_hines_gpu_from_internal_d(cs_hines_plan *plan, cs_hines_array_kind kind,
                                              const double *internal, double *tree);
cs_solver_status cs_hines_gpu_from_internal_f(cs_hines_plan *plan, cs_hines_array_kind kind,
                                              const float *internal, float *tree);

/* ---- device memory helpers (for callers without CUDA headers) ------------------------- */
cs_solver_status cs_hines_gpu_malloc(void **ptr, size_t bytes);
void cs_hines_gpu_free(void *ptr);
/* Synchronous copy in any direction (host or device pointers on either side). */
cs_solver_status cs_hines_gpu_memcpy(void *dst, const void *src, size_t bytes);

/* ---- test utility (plain C, always available) ------------------------------------------ */
/* A random tree of n rows with exactly nbranch branches (a branch: a maximal chain of rows in
 * which every row but the last has exactly one child), in tree order (parents before children,
 * each branch contiguous). p_local[0] = -1, p_local[i] < i. Used to stand in for the six
 * NeuroMorpho cells of Table 4.1 of seed 000, whose files were not found. Requires
 * 1 <= nbranch <= n. Returns 0, or -1 for bad arguments or no memory. */
int cs_hines_random_tree(int n, int nbranch, uint64_t seed, int *p_local);
/* Number of branches of a tree in the convention above (p_local local, p_local[0] = -1). */
int cs_hines_count_branches(int n, const int *p_local);

/* Table 4.1 of seed 000: the six morphology classes (compartments, branches). */
typedef struct {
    const char *name;
    int size;     /* compartments (rows) */
    int nbranch;  /* branches */
} cs_hines_morph_class;
extern const cs_hines_morph_class cs_hines_table41[6];

#ifdef __cplusplus
}
#endif
#endif
