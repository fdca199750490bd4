/* The CUDA backend's state and the helpers its two halves share (private to src/backends/cuda):
 * cs_backend_cuda_setup.c builds the state from the network description, cs_backend_cuda.c runs
 * the epochs, cs_backend_cuda_common.c has what both call. Host logic only: no CUDA header here. */
#ifndef CS_BACKEND_CUDA_INTERNAL_H
#define CS_BACKEND_CUDA_INTERNAL_H

#include "cs_backend.h"
#include "cs_cuda.h"
#include "cs_event_queue.h"
#include "cs_hines_gpu.h"

#define CS_CUDA_LANES 8         /* streams beside the main one in a step (the state updates' fan-out) */
#define CS_FORK_EVENTS (1 + CS_CUDA_LANES + CS_CUDA_MAX_MECH)

#define CS_TIMED_STEPS 8        /* steps per epoch timed phase by phase with CUDA events */
#define CS_TIMED_MARKS 8        /* events per timed step: before and after each of 7 phases */
#define CS_TIMED_EVERY 256      /* steps from one timed epoch to the next, at least */
#define CS_TIMED_SHARE 256      /* an epoch's steps per timed step (at least one, at most CS_TIMED_STEPS) */
#define CS_SPIKES_PER_DETECTOR 16 /* spike buffer: crossings per detector per epoch */
#define CS_GRAPH_LEVELS 7       /* graphs of 1, 2, 4, .. 64 steps at most; a run of steps takes at most 7 */
#define CS_GRAPH_DEFAULT_LEVELS 5 /* ... of 1, 2, 4, 8, 16 steps unless CS_CUDA_GRAPH_STEPS says (setup) */

/* An epoch's events in the GPU's delivery order (cs_cuda_events.c), with their keys (type, step,
 * instance): sets ordered apart merge. */
typedef struct {
    uint64_t *key;       /* [n] */
    cs_target_event *ev; /* [n] */
    size_t n, cap;
} cs__cuda_ordered;

/* One epoch's record while it is in flight (cs_backend.slot). */
typedef struct {
    int64_t step0;
    int nsteps, rows, ntimed;
    int timed[CS_TIMED_STEPS];
    void *timers;
    int *counters;          /* device [3] */
    double *spike_time;     /* device [cap_spike] [ms] */
    int *spike_gid;         /* device [cap_spike] */
    double *samples;        /* device [cap_samples] */
    size_t cap_samples;
} cs__cuda_slot;

struct cs_backend {
    const cs_network_desc *net;
    cs_backend_params p;
    char device[256];
    cs_hines_plan *plan;
    int fused;                  /* the plan runs the fused step: assembly inside the solve */
    int epoch;                  /* solver "epoch": one persistent kernel per epoch (cs_cuda.h) on
                                   the "flat" plan's layout; the plan itself never solves */
    int shared_constants;       /* identical cells: d0, cdt, b0, u stored once (one cell's rows) */
    long long groups_sharing;   /* staged: groups of cells that read another group's constants */
    int keep_currents;          /* the gather sets every row's i and g each step: the solve need not zero them */
    int *hh_node;               /* [mech[0].n] with hh_ahead and a fused step: hh's CVs on the host,
                                   ascending (instances in row order), so that its update runs
                                   after each of the step's launches on that launch's rows
                                   (cs_hines_step_d.after_launch); NULL: after the whole step */
    cs_status hook_status;      /* the last after_launch's status */
    int *row_map;               /* [total rows] internal index of each tree-order row */
    int *cell_first;            /* [ncell + 1] first tree-order row of each cell */
    cs_cuda_state s;
    int ginst_group[16];
    int *syn_local;             /* [ninst] expsyn-local index of a synapse instance, -1 otherwise */
    int *inst_group, *inst_local; /* [ninst] mechanism group of an instance (-1: folded), its index there */
    cs_event_queue ev;          /* pending events (host) */
    int *ev_local;              /* staging for the epoch's events */
    double *ev_weight;
    size_t cap_dev_ev;
    int *ev_hi;                 /* [nsyn × s.ev_stride] the epoch's event ranges (cs_cuda.h) */
    size_t cap_rows_dev, cap_rows_host;
    double *samples;            /* host copy of the epoch's samples [mV] */
    cs_spike *spikes;
    double *spike_time;
    int *spike_gid;
    void *timers;               /* the launching epoch's slot's timers */
    size_t mem_bytes;           /* device memory the set-up took [bytes] */
    int64_t step0;
    int nsteps, rows;
    int timed[CS_TIMED_STEPS], ntimed;
    int since_timed;            /* steps launched since the last timed epoch's start (timed_steps) */
    double phase_step[CS_TIMED_MARKS - 1]; /* [s] the last timed epoch's phases per step */
    /* Epochs in flight (docs/gpu.md, "Pipelined epochs"): the core may launch epoch e + 1 before
     * it collects epoch e. Epoch e's results are saved at its end, on the stream, into slot e % 2
     * (the next epoch reuses the step kernels' counters, spike and sample buffers), then done
     * event e % 2 is recorded; collect waits for that event only, and copies the slot back on
     * copy_stream, which the running epoch does not hold up. Its timers are slot e % 2's. */
    cs__cuda_slot slot[2];
    long long nlaunched, ncollected;
    void *done;                 /* 2 events: slot e's results saved */
    void *copy_stream;          /* non-blocking */
    int pipelined;              /* 0 when CS_CUDA_PIPELINE=0 or with the epoch kernel */
    /* CUDA graphs of 2^b steps (the untimed steps of an epoch), by the parity of the v/rhs swap
     * of the separate solve; captured when first needed, dropped when a buffer they name moves */
    int use_graphs;
    int graph_levels;           /* graphs of 1, 2, .. 2^(graph_levels - 1) steps */
    /* Untimed steps: after the solve, the work that only reads v and writes its own arrays runs
     * on nlanes streams beside the main one (cs_backend_cuda.c, step_kernels): detection and
     * sampling on lane 0, and the state update of each group whose lane_of >= 0. A group that
     * reads or writes an ion concentration (in its update, CaDynamics writes cai and SK reads
     * it) stays on the main stream, in group order, as the CPU runs them. Inside a graph the
     * main stream goes on to the next step at once: it waits for a group's update (event
     * 1 + CS_CUDA_LANES + q) just before that group's next events and current, or, where the
     * update may touch an ion variable (not cs_mech_type.advance_ion_free), before the ions'
     * step, which rewrites e and i; and for every lane (event 1 + l, its last work) before the
     * solve, which overwrites v. Event 0 is the fork. pending: lanes hold work the main stream
     * has not waited for. Networks of built-in mechanisms only keep one lane, joined at the end
     * of each step (defer 0: setup_lanes says why). nlanes 0: every kernel in order
     * (CS_CUDA_FORK=0). */
    void *lane[CS_CUDA_LANES], *fork_events;
    int nlanes, pending;
    int nhigh;                  /* lanes of the high priority (setup_lanes) */
    int solo_first;             /* groups with a launch block of their own (view.block: a latency-
                                   bound KINETIC update) fork first (setup_lanes) */
    int after_solve;            /* 1: no lanes; an untimed step's updates and detection in one
                                   launch (cs_cuda_after_solve; setup_lanes) */
    int events_current;         /* 1 (with after_solve): an untimed step's events and currents by
                                   cs_cuda_events_currents */
    int syn_ahead;              /* 1 (with events_current): inside a graph, the launch after the
                                   solve gives the next step's (cs_cuda_after_solve, ahead) */
    int cat_ahead;              /* catalogue synapse groups updated ahead inside graphs
                                   (cs_cuda_mech.ahead; setup_catalogue_ahead) */
    int defer;                  /* 0: the lanes join at the end of every step (networks of
                                   built-in mechanisms only: setup_lanes) */
    int lane_of[CS_CUDA_MAX_MECH]; /* -1: the main stream */
    void *graph[2][CS_GRAPH_LEVELS];
    const void *graph_bufs[4];  /* samples, ev_local, ev_weight, ev_hi at capture */
    double *v_first;            /* s->v at set-up: the parity of the swap */
    int cap_ev_hi;
    /* [s] host time of launch_epoch, while the GPU waits at an epoch's start: the events' staging
     * (the queue's take, their grouping, the uploads), then the launches; added to the profile's
     * event delivery (staging) at collect. CS_CUDA_HOST_TIMES=1 prints their sums at the end. */
    double host_take, host_group, host_upload, host_launch, host_staged, host_staged_counted;
    double host_waited; /* of host_staged: waiting for the epoch in flight before the event arrays grew */
    double host_capture; /* [s] of host_launch: the graphs' captures (host_captures of them) */
    double host_ahead;   /* [s] ordering the next epoch's events while the GPU runs (not waited on) */
    long long host_epochs, host_captures, host_merged;
    /* the next epoch's events ordered while the current one runs (stage_ahead), and those
     * delivered since that fall within it (late, unsorted); CS_CUDA_STAGE_AHEAD=0: all at the
     * boundary (for comparisons). staged: the epoch's set as it goes to the device; fresh: scratch */
    int stage_ahead;
    struct {
        cs__cuda_ordered set;
        int64_t step0;
        int nsteps, valid;
    } ahead;
    cs_target_event *late;
    size_t nlate, cap_late;
    cs__cuda_ordered fresh, staged;
};

/* 0 when CS_CUDA_PRIORITY=0: every stream at the same priority (for comparisons); 1 otherwise:
 * the main stream and the lanes of latency-bound groups at the device's greatest (setup_lanes). */
int cs__cuda_priority_on(void);
/* programmatic dependent launches of the step's kernels (CS_CUDA_PDL=0: plain launches) */
int cs__cuda_pdl_on(void);

/* cs_cuda_events.c: where an epoch's events go on the GPU. */
typedef struct {
    int nsyn;                 /* synapse types (0: every event is one type's, q = 0) */
    const int *syn_groups;    /* [nsyn] each type's mechanism group */
    const int *inst_group;    /* [ninst] an instance's group (-1: none) */
    const int *syn_local;     /* [ninst] its index among its type's instances */
    int64_t step0;            /* the epoch's first step */
    int nsteps;               /* its steps */
    double dt;                /* [ms] */
    int stride;               /* hi's row length, >= nsteps + 1 */
} cs__cuda_event_layout;
/* An epoch's events as the GPU delivers them: by synapse type, then by step (an event goes to the
 * first step whose midpoint it is due by), then by instance, each instance's in delivery order
 * (cs_target_event_compare); events of no synapse type are left out. cs__cuda_order puts
 * ev[0 .. due) in that order into out (its earlier contents dropped); in_order: ev is in delivery
 * order already; 0: any order (the boundary's few, not sorted first). */
cs_status cs__cuda_order(const cs__cuda_event_layout *lay, const cs_target_event *ev, size_t due, int in_order,
                         cs__cuda_ordered *out);
/* a and b (ordered for one layout, no event in both) as one ordered set: by key, then delivery order */
cs_status cs__cuda_merge_ordered(const cs__cuda_ordered *a, const cs__cuda_ordered *b, cs__cuda_ordered *out);
/* The device's arrays: each event's instance index among its type's (loc[o->n]) and weight
 * (w[o->n]), and hi[q * stride + k] .. hi[q * stride + k + 1], the range of type q's step k. */
void cs__cuda_emit(const cs__cuda_event_layout *lay, const cs__cuda_ordered *o, int *loc, double *w, int *hi);
void cs__cuda_ordered_free(cs__cuda_ordered *o);
/* cs_backend_cuda_common.c: the graphs, dropped (a buffer they name moved, or the end) */
void cs__cuda_drop_graphs(cs_backend *be);
/* a device buffer of at least need elements of elem bytes (its contents are not kept) */
cs_status cs__cuda_grow_device(void **p, size_t *cap, size_t need, size_t elem, const char *what);
/* a solver status as the backend's error */
cs_status cs__cuda_solver_fail(cs_solver_status st, const char *what);
/* cs_backend_ops.create and .destroy (cs_backend_cuda_setup.c) */
cs_status cs__cuda_create(const cs_network_desc *net, const cs_backend_params *p, cs_backend **out);
void cs__cuda_destroy(cs_backend *be);

/* cs_backend_cuda_plan.c: what the set-up and auto's solver-level trial (cs_cuda_solver_trial.c)
 * both build for the Hines solve. */
/* The batch's tree-order structure: each cell's first row (cell_first[ncell + 1]) and the rows'
 * parents (malloc'd; the caller frees both, also on failure). */
cs_status cs__cuda_tree_structure(const cs_network_desc *net, double dt, int **cell_first, int **parent);
/* The solver plan's options for the backend's parameters (p->solver, the CS_* switches). */
void cs__cuda_plan_options(const cs_backend_params *p, cs_hines_gpu_options *opt);
/* The solver variant a network's plan would run (cs_backend_cuda_resolve's work): NULL where
 * that cannot be said. */
const char *cs__cuda_resolve(const cs_network_desc *net, const cs_backend_params *p);
/* One constant array of the matrix (CS__U, CS__CDT, CS__D0 with pas folded in, CS__B0 likewise)
 * of every cell in tree order (malloc'd; NULL when out of memory). The set-up builds the four one
 * at a time, so the host holds one (8 B per CV) rather than four at once (docs/mpi.md). */
enum { CS__U, CS__CDT, CS__D0, CS__B0, CS__NCONST };
double *cs__cuda_matrix_array(const cs_network_desc *net, double dt, const int *cell_first, int which);
/* 1 when every cell's rows of each array equal cell 0's bit for bit (same structure assumed;
 * arrays in tree order, in CS__U .. order). */
int cs__cuda_identical_cells(const int *cell_first, int ncell, double *const *arrays, int narrays);
/* Identical cells with a fused per-system step: cell 0's tree-order rows of the four constants
 * (first[k], n0 rows each; first[CS__U][0] is set to 0) uploaded into *dev[k], and the pivots of
 * its rows that no current reaches into *a0 (cs_hines_step_d.a0). parent: tree-order parents. */
cs_status cs__cuda_shared_constants(const cs_network_desc *net, const int *parent, double *const first[CS__NCONST],
                                    size_t n0, double **dev[CS__NCONST], double **a0);
/* The fused step's row flags on the device (*dev): the plan's structure bits, plus
 * CS_HINES_ROW_CURRENT at every CV where a mechanism that was not folded into the matrix adds
 * current (only there does the step read and clear i and g), also handed to the plan
 * (cs_hines_gpu_plan_set_current); with shared constants one cell's rows, each the union over
 * the cells. */
cs_status cs__cuda_fused_flags(const cs_network_desc *net, cs_hines_plan *plan, const int *row_map,
                               const int *cell_first, size_t n_int, int shared_constants, unsigned char **dev);
/* The tree-order rows where a mechanism that was not folded into the matrix adds current: one
 * byte each, 1 there (calloc'd; NULL when out of memory). */
unsigned char *cs__cuda_current_rows(const cs_network_desc *net, const int *cell_first);
/* The merged sets of mechanism groups (cs_cuda_state.merge_head; cs_backend_cuda_setup.c): of the
 * nmech groups, those eligible (a catalogue type with a dispatch kernel, no concentration, the
 * gather on) with 1 to 65 536 instances n[q], in sets of 2 to 8 groups of one key (the catalogue's
 * dispatch), each group joining the latest set of its key with room; head[q] is the first group of
 * q's set, or -1 (not merged). */
void cs__cuda_merge_sets(int nmech, const int *n, const int *eligible, const void *const *key, int *head);
/* cs__cuda_fused_flags from the current rows of cs__cuda_current_rows, with the caller's host
 * array flags (n_int bytes) and device array *dev (large enough; NULL: allocated) */
cs_status cs__cuda_fused_flags_into(const cs_network_desc *net, cs_hines_plan *plan, const int *row_map,
                                    const unsigned char *current, const int *cell_first, size_t n_int,
                                    int shared_constants, unsigned char *flags, unsigned char **dev);

#endif
