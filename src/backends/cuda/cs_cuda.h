/* The CUDA side of the simulator as seen from C: device memory, and the kernels of one step.
 * No CUDA header is needed to use it; src/backends/cuda/cs_cuda_kernels.cu implements it when the build has
 * CUDA. Every array below is a device pointer; per-CV arrays are in the solver plan's internal
 * layout (n_int entries), and node indices point into that layout. */
#ifndef CS_CUDA_H
#define CS_CUDA_H

#include <stddef.h>

#include "cs_error.h"
#include "cs_mech.h"

#define CS_CUDA_MAX_MECH 32

/* the mechanisms with a current kernel; pas has none: it folds into the matrix at set-up.
 * CS_CUDA_CATALOGUE: a mechanism compiled from NMODL, run through its cs_mech_gpu_ops: a
 * catalogue's, or the built-in exp2syn's (cs__gpu_exp2syn, generated from mechanisms/exp2syn.mod
 * with the same body as its CPU code: CMakeLists.txt). */
typedef enum { CS_CUDA_HH, CS_CUDA_EXPSYN, CS_CUDA_ICLAMP, CS_CUDA_CATALOGUE } cs_cuda_mech_kind;

typedef struct {
    cs_cuda_mech_kind kind;
    int n;
    int *node;          /* [n] */
    double *weight;     /* [n] */
    double *param;      /* [nparam × n], or [nparam] when param_uniform */
    int param_uniform;  /* 1: every instance has the same parameters, stored once (hh: 48 B less
                           traffic per instance and step) */
    int ordered;        /* its type reads or writes an ion concentration (shared among the types
                           on a CV): its state update keeps its place among the others' */
    int advance_ions;   /* its state update may read or write an ion variable (e, i or a
                           concentration): not cs_mech_type.advance_ion_free */
    int ahead;          /* a catalogue synapse group whose state update, inside a graph, also gives
                           the next step's events and current (cs_cuda_advance_ahead): that step
                           then skips both for it (came_ahead) */
    int slot0;          /* with the gather (catalogue groups): its first slot in slot_i, slot_g */
    int slot0_ion[CS_NION]; /* ... in slot_ion[ion], -1 when the type does not write the ion */
    double *state;      /* [nstate × n] */
    /* CS_CUDA_CATALOGUE only: its GPU code and its view (device arrays; v, i, g, t set at each
     * launch; param and state as device arrays of device pointers into param and state) */
    const cs_mech_gpu_ops *gpu;
    cs_mech_view view;
    double **param_ptr, **state_ptr;
} cs_cuda_mech;

/* The persistent epoch kernel (solver "epoch", src/backends/cuda/cs_cuda_epoch.cu): one block per cell runs
 * every step of an epoch with the cell's rows in shared memory, so a small network's step costs
 * no launches. Its structure, on the device, in the tree order of the "flat" layout (row r of
 * cell c is internal row cell_first[c] + r); lists "by cell" are CSR over the cells. */
typedef struct {
    int on;
    int ncell, max_rows, threads;       /* threads per block (one cell per block) */
    size_t smem;                        /* [bytes] shared memory per block */
    int *cell_first;                    /* [ncell + 1] */
    int *chain_first;                   /* [ncell + 1] each cell's unbranched chains (CSR) ... */
    int *chain_head, *chain_len;        /* ... their first local row and length, by height */
    int *hl_first;                      /* [ncell + 1] cell c's height bounds: hl[hl_first[c] ..
                                           hl_first[c + 1] - 1], positions among its chains */
    int *hl;
    int *parent;                        /* [rows] local parent, -1 at the root */
    int *child_first, *child;           /* [rows + 1] children (local rows) of each internal row */
    int *mech_first;                    /* [nmech × (ncell + 1)] instances of group q by cell ... */
    int *mech_inst;                     /* ... their indices in the group, [Σ n] by group */
    int *syn_cell;                      /* [synapses] the cell of each instance of the synapse group */
    int *det_first, *det_idx;           /* detectors by cell */
    int *probe_first, *probe_idx;       /* probes by cell (all but i_membrane's) */
    int *imem_first, *imem_idx;         /* i_membrane probes (q) by cell */
    long long *phase_cycles;            /* [CS_CUDA_EPOCH_PHASES] block 0's clock cycles per phase */
} cs_cuda_epoch;
/* the epoch kernel's phases: delivery, currents, assembly, elimination, substitution, state
 * update, detection, sampling */
#define CS_CUDA_EPOCH_PHASES 8

/* The catalogue groups' currents gathered per CV (cs_cuda_gather.h): list 0 adds slots of
 * slot_i and slot_g to i and g, list 1 + ion slots of slot_ion[ion] to ion_i[ion]. A list: its
 * rows, and row[r]'s slots slot[first[r] .. first[r + 1]) in the CPU's order. */
typedef struct {
    int nrow, *row, *first, *slot;
} cs_cuda_gather_list;
typedef struct {
    int on;
    double *slot_i, *slot_g;            /* [Σ n of the catalogue groups] [nA], [µS] */
    double *slot_ion[CS_NION];          /* [Σ n of the groups writing the ion] [mA/cm²] */
    cs_cuda_gather_list list[1 + CS_NION];
    int sole;                           /* 1: no other group writes i, g or ion_i (no built-in hh,
                                           expsyn or iclamp): the lists' rows are set, not added to
                                           (their old values are zero: nothing is read) */
} cs_cuda_gather;

typedef struct {
    size_t n_int;                       /* entries of each per-CV array */
    double *v, *rhs, *d, *i, *g;        /* [mV], [mV], [µS], [nA], [µS] */
    double *d0, *cdt, *u;               /* C/dt + Σ g_axial + folded g, C/dt, coupling [µS] */
    double *b0;                         /* folded constant currents [nA] */
    unsigned char *flags;               /* fused step only: cs_hines_gpu_plan_row_flags | rows with currents */
    double *a0;                         /* shared constants only: pivots u/d' without currents [1] */
    int nmech;
    cs_cuda_mech mech[CS_CUDA_MAX_MECH];
    int *ev_local;                      /* [cap] synapse-local instance of each event of the epoch, */
    double *ev_weight;                  /* [cap] [µS] ... grouped by synapse type, each group by time */
    int syn_group;                      /* mech index of the first synapse type, -1 when none (the
                                           epoch kernel's: built-ins only, so expsyn's) */
    int nsyn;                           /* synapse types (mechanism groups that receive events) */
    int syn_groups[CS_CUDA_MAX_MECH];   /* their mech indices, in group order */
    int ev_stride;                      /* ev_hi: [nsyn × ev_stride]; synapse type q's events are
                                           ev_hi[q·stride] ..; step s's end at ev_hi[q·stride + s + 1] */
    int *ev_range;                      /* [2 × CS_CUDA_MAX_MECH] a catalogue synapse's events of the
                                           step: first, end (per synapse type) */
    double *ion_e[CS_NION];             /* [n_int] reversal potentials [mV] (NULL: ion not used) */
    double *ion_i[CS_NION];             /* [n_int] ion current densities [mA/cm²], zeroed each step */
    double *ion_ci[CS_NION], *ion_co[CS_NION]; /* [n_int] concentrations [mM] (NULL: ion not used) */
    int nernst_n[CS_NION];              /* rows whose e follows Nernst every step (cs_cuda_ions.h) */
    int *nernst_rows[CS_NION];          /* [nernst_n] */
    int ion_used_n[CS_NION];            /* rows where some instance uses the ion: ion_i is zeroed */
    int *ion_used_rows[CS_NION];        /* there at each step (elsewhere it stays 0) */
    /* 1: hh is mechanism group 0 and its state update computes the next step's hh current in the
     * same kernel (v and the states read once; one launch less per step); its first current comes
     * from cs_cuda_first_currents. Group 0 adds into i and g first either way, so the sums are the
     * same bit for bit. */
    int hh_ahead;
    /* -1, or the first group of a set of one catalogue's small groups whose currents and state
     * updates run in one launch each (cs_mech_gpu_ops.current_many, advance_many; set with the
     * lanes, used by the lanes' schedule only) */
    int merge_head[CS_CUDA_MAX_MECH];
    int ndet;
    int *det_row, *det_gid;
    double *det_thr, *det_vprev;        /* [mV] */
    int ncell;
    int *cell_row;                      /* [ncell] a CV of each cell, checked for NaN every step */
    int nprobe;
    int *probe_row;                     /* [nprobe] the row of a voltage probe */
    double **probe_src;                 /* [nprobe] what a probe of a mechanism state or an ion current
                                           reads (NULL: v at probe_row); NULL when every probe is v's */
    double *samples;                    /* [rows × nprobe] of the epoch, each in its variable's unit */
    /* i_membrane probes [nA] (k_imem, after k_sample): probe q writes column imem_col[q]; the
     * axial currents from its row's neighbours nb_row with conductances nb_g [µS] (CSR over q,
     * the CPU backend's order: parent, then children), plus the current its clamps inject
     * (instances el_k of the iclamp group imem_clamp, CSR over q) */
    int nimem;
    int *imem_col, *imem_row, *imem_nb_first, *imem_nb_row, *imem_el_first, *imem_el_k;
    double *imem_nb_g;
    int imem_clamp;                     /* mech index of the iclamp group, -1 when none */
    double *spike_time;                 /* [cap_spike] [ms] */
    int *spike_gid;
    int cap_spike;
    int *counters;                      /* [3]: spikes, first failing step (INT_MAX), its cell */
    void *stream;                       /* cudaStream_t */
    /* 1: the step's kernels on pdl_stream (the main stream; not a lane's copy of this state) are
     * programmatic dependent launches (cs_gpu_pdl.cuh: each waits inside for the kernel before) */
    int pdl;
    void *pdl_stream;
    /* Where the step kernels find their step: the epoch's first step and the index of the
     * current one within the epoch live on the device (cs_cuda_step_ctx), so a CUDA graph of
     * steps replays with no argument changing; ev_hi[k] ends step k's events. */
    void *ctx;                          /* cs_cuda_step_ctx on the device */
    int *ev_hi;                         /* [nsyn × ev_stride] (see ev_stride) */
    double dt;                          /* [ms] */
    int sample_stride;                  /* probes are sampled every sample_stride steps */
    cs_cuda_epoch epoch;                /* epoch.on: the persistent epoch kernel runs the steps */
    cs_cuda_gather gather;              /* gather.on: the catalogue groups' currents through slots */
} cs_cuda_state;

int cs_cuda_compiled(void);
int cs_cuda_device_count(void);
/* 1 when GPU dev can launch kernels as programmatic dependents (compute capability 9.0+) */
int cs_cuda_pdl_supported(int dev);
/* One line naming device dev (model, UUID, compute capability, SMs, driver); "" when it cannot be read. */
void cs_cuda_identity(int dev, char *buf, size_t len);
/* Select device dev and give its name. */
cs_status cs_cuda_select(int dev, char *name, size_t len);
cs_status cs_cuda_alloc(void **p, size_t bytes, const char *what);
void cs_cuda_free(void *p);
cs_status cs_cuda_upload(void *dst, const void *src, size_t bytes);
cs_status cs_cuda_download(void *dst, const void *src, size_t bytes);
cs_status cs_cuda_stream_create(void **stream);
/* Copies ordered on a stream: to the device (pageable src, staged by the driver before the call
 * returns), within the device, and back (pageable dst: filled when the call returns). */
cs_status cs_cuda_upload_async(void *dst, const void *src, size_t bytes, void *stream);
cs_status cs_cuda_copy_async(void *dst, const void *src, size_t bytes, void *stream);
cs_status cs_cuda_download_async(void *dst, const void *src, size_t bytes, void *stream);
/* A stream not ordered with the legacy default stream (nor, so, with the blocking ones): copies
 * of a finished epoch's results while the next epoch runs. */
cs_status cs_cuda_stream_create_nonblocking(void **stream);
/* A blocking stream of the device's greatest priority (high) or its least: the block scheduler
 * starts a high-priority kernel's pending blocks first, in graphs too. */
cs_status cs_cuda_stream_create_priority(void **stream, int high);
/* The device's SMs (0 when unknown). */
int cs_cuda_sm_count(void);
void cs_cuda_stream_destroy(void *stream);
cs_status cs_cuda_sync(void *stream);
/* Device memory in use on the current device [bytes] (all processes), 0 when unknown. */
size_t cs_cuda_memory_used(void);

/* The phases of a step; each launches on s->stream and returns at once. The step is the
 * device context's current one plus j (a graph of n steps is captured with j = 0 .. n-1, then
 * cs_cuda_next_steps(s, n)); its time is (step0 + k + j)·dt, computed on the device with the
 * host's rounding (no fused multiply-add), so the results do not depend on the launch path. */
cs_status cs_cuda_epoch_start(const cs_cuda_state *s, long long step0); /* k = 0; counters reset */
/* each synapse type's events of the step; came_ahead: not those of the groups with ahead, whose
 * update in the step before delivered them (cs_cuda_advance_ahead) */
cs_status cs_cuda_deliver(const cs_cuda_state *s, int j, int came_ahead);
/* before the currents: the ion current densities zeroed, e = Nernst where concentrations change */
cs_status cs_cuda_ions_prepare(const cs_cuda_state *s, double celsius);
/* the currents of mechanism groups [first, end), added in group order */
cs_status cs_cuda_currents(const cs_cuda_state *s, int j, int first, int end);
/* catalogue synapse group q (mech[q].ahead), inside a graph: its state update after step j's solve,
 * then its events and current of step j + 1 into its slots, in one launch (advance_ahead) */
cs_status cs_cuda_advance_ahead(const cs_cuda_state *s, int j, int q);
int cs_cuda_synapse_type(const cs_cuda_state *s, int q); /* group q's synapse type (ev_hi), -1: none */
/* with the gather: the slots added per CV to i, g and ion_i, in the CPU's order */
cs_status cs_cuda_gather_currents(const cs_cuda_state *s);
cs_status cs_cuda_first_currents(const cs_cuda_state *s); /* with hh_ahead: the first step's hh current */
/* with hh_ahead: hh's update and next current for its instances [k0, k1) on stream: all of them
 * after the step (cs_cuda_advance), or those of one launch's rows after it (cs_hines_step_d.after_launch) */
cs_status cs_cuda_hh_ahead_range(const cs_cuda_state *s, double celsius, int k0, int k1, void *stream);
cs_status cs_cuda_assemble(const cs_cuda_state *s); /* also zeroes i and g for the next step */
/* the same on n rows of raw device arrays, on a stream (auto's solver-level trial) */
cs_status cs_cuda_assemble_rows(void *stream, size_t n, const double *d0, const double *b0, const double *cdt,
                                const double *v, double *i, double *g, double *d, double *rhs);
/* the state update of mechanism groups [first, end): each group's states are its own, so groups
 * may run on different streams */
cs_status cs_cuda_advance(const cs_cuda_state *s, double celsius, int j, int first, int end);
/* the currents (currents 1: into the gather's slots) or the state updates (0) of the groups q with
 * merge_head[q] == head, in one launch of their catalogue's dispatch kernel */
cs_status cs_cuda_merged(const cs_cuda_state *s, int j, int head, int currents);
cs_status cs_cuda_detect(const cs_cuda_state *s, int j);
/* Where cs_cuda_after_solve_fits, before the solve: each expsyn group's events of the step and its
 * current in one launch, the other groups' currents as cs_cuda_currents (cs_cuda_builtin_step.cu) */
cs_status cs_cuda_events_currents(const cs_cuda_state *s, int j);
/* After the solve, where cs_cuda_after_solve_fits (built-in mechanisms only: hh as group 0 with
 * hh_ahead, up to CS_AFTER_SOLVE_EXPSYN expsyn groups, iclamps): the state updates (hh's unless
 * hh_done) and detection in one launch on the main stream (cs_cuda_builtin_step.cu) */
#define CS_AFTER_SOLVE_EXPSYN 4
int cs_cuda_after_solve_fits(const cs_cuda_state *s);
/* ahead 1: also the next step's (j + 1's) expsyn events and currents, hh's and expsyn's; fits
 * where hh is group 0 with hh_ahead, every other group expsyn, and no probe reads a state */
cs_status cs_cuda_after_solve(const cs_cuda_state *s, double celsius, int j, int hh_done, int ahead);
int cs_cuda_synapses_ahead_fit(const cs_cuda_state *s);
cs_status cs_cuda_sample(const cs_cuda_state *s, int j); /* only at steps that end on the stride */
cs_status cs_cuda_sample_row(const cs_cuda_state *s, int row); /* now, into row (the initial state) */
cs_status cs_cuda_next_steps(const cs_cuda_state *s, int n); /* k += n */
/* After an epoch, on its stream: its counters, spikes and first nsample samples into device
 * arrays of their own (a slot of the pipelined epochs, cs_backend_cuda.c). */
cs_status cs_cuda_save_results(const cs_cuda_state *s, int *counters, double *spike_time, int *spike_gid,
                               double *samples, size_t nsample);
cs_status cs_cuda_alloc_ctx(void **ctx);

/* The persistent epoch kernel: checks that the device holds a block of s->epoch (its shared
 * memory) and sets it up for launches; then runs nsteps steps from step0 (the epoch's events
 * staged as for the step kernels) and leaves v, the states, spikes and samples as they would. */
cs_status cs_cuda_epoch_prepare(cs_cuda_state *s);
/* The shared memory [B] of a block of the epoch kernel for cells of at most max_rows
 * compartments; refuses (CS_ERR_UNSUPPORTED, one line) more than the device lets a block have. */
cs_status cs_cuda_epoch_smem(int max_rows, size_t *smem);
cs_status cs_cuda_epoch_run(const cs_cuda_state *s, long long step0, int nsteps, double celsius);

/* CUDA graphs: capture what is launched on a stream between begin and end into an executable
 * graph; launch it on that stream. */
cs_status cs_cuda_capture_begin(void *stream);
cs_status cs_cuda_capture_end(void *stream, void **exec);
cs_status cs_cuda_graph_launch(void *exec, void *stream);
void cs_cuda_graph_destroy(void *exec);

/* Timing with CUDA events: a pool of n events. */
cs_status cs_cuda_timer_create(void **pool, int n);
void cs_cuda_timer_destroy(void *pool, int n);
cs_status cs_cuda_timer_record(void *pool, int k, void *stream);
/* stream waits until event k of the pool (recorded on another stream) has happened: a fork or join */
cs_status cs_cuda_stream_wait(void *stream, void *pool, int k);
/* Wait until event k of the pool has happened. */
cs_status cs_cuda_timer_sync(void *pool, int k);
/* Milliseconds between events a and b (both recorded and completed). */
cs_status cs_cuda_timer_elapsed(void *pool, int a, int b, float *ms);

#endif
