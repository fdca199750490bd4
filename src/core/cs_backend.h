/* The seam between the simulation core and its backends (src/backends/cpu, src/backends/cuda).
 * The core includes only this header; each backend defines the entry points declared here.
 * A backend owns all cell state in its own layout, built once from the network description.
 * The core drives it epoch by epoch: it hands over events, runs an epoch, and collects the
 * epoch's spikes and probe samples. */
#ifndef CS_BACKEND_H
#define CS_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "cs_build.h"
#include "cs_profile.h"

/* [mV] A voltage beyond this (or NaN) stops the run: no membrane reaches it, and it keeps
 * every sample representable in the float32 report. */
#define CS_V_LIMIT 1e6

typedef struct {
    double time;      /* [ms] */
    uint64_t gid;
} cs_spike;

typedef struct {
    double time;      /* [ms] delivery time */
    size_t instance;  /* synapse instance (index into cs_network_desc.inst) */
    double weight;    /* [µS] */
    double *w;        /* the connection's weight vector [CS_MAX_WEIGHTS] when the synapse's type
                         takes one (cs_network_desc.wvec); NULL otherwise */
} cs_target_event;

/* Events in delivery order: time, then instance, then weight, then weight vector (their order
 * in cs_network_desc.wvec: the connections'). A total order, so delivery (and its floating-point
 * sums) does not depend on how many threads produced the spikes. */
int cs_target_event_compare(const void *a, const void *b);

typedef struct {
    const char *solver; /* Hines solver variant for a GPU backend ("auto" when NULL) */
    double dt;        /* [ms] */
    double celsius;   /* [°C] */
    int threads;      /* OpenMP threads */
    int sample_stride;/* probes are sampled every sample_stride steps */
    int device;       /* the GPU of this process (the node-local MPI rank modulo the GPUs); 0 alone */
} cs_backend_params;

/* What one epoch produced. Arrays are owned by the backend, valid until the next epoch. */
typedef struct {
    size_t nspike;
    const cs_spike *spikes;      /* unsorted */
    size_t nrow;                 /* sample rows taken in this epoch */
    const double *samples;       /* [nrow × nprobe] in network-description probe order, each in
                                    its variable's unit ([mV] for v: cs_probe_var.unit) */
    int failed_cell;             /* -1, or the gid whose voltage became non-finite */
    double failed_time;          /* [ms] */
} cs_epoch_result;

/* A result with these spikes and sample rows and no failed cell. */
cs_epoch_result cs_epoch_result_of(size_t nspike, const cs_spike *spikes, size_t nrow, const double *samples);

typedef struct cs_backend cs_backend;

typedef struct {
    const char *name;
    cs_status (*create)(const cs_network_desc *net, const cs_backend_params *p, cs_backend **out);
    /* Initial state (t = 0); fills the first sample row. */
    cs_status (*init)(cs_backend *b, cs_epoch_result *res);
    /* Queue events for delivery in later steps (any order). */
    cs_status (*deliver)(cs_backend *b, size_t n, const cs_target_event *ev);
    /* Start advancing steps [step0, step0 + nsteps). A GPU backend returns at once, so the
     * host can write the previous epoch's output meanwhile; the CPU backend does the work. */
    cs_status (*launch_epoch)(cs_backend *b, int64_t step0, int nsteps);
    /* Finish the launched epoch: its spikes and samples, and phase times added to prof. */
    cs_status (*collect_epoch)(cs_backend *b, cs_profile *prof, cs_epoch_result *res);
    void (*destroy)(cs_backend *b);
    /* One line: the device and the solver it runs (for the summary, the profile, the file). */
    const char *(*describe)(const cs_backend *b);
    /* 1: the next epoch may be launched before the launched one is collected (two epochs in
     * flight, collected in order; the GPU runs them back to back); NULL or 0: one at a time. */
    int (*pipelined)(const cs_backend *b);
} cs_backend_ops;

extern const cs_backend_ops cs_backend_cpu;
/* The CUDA backend, or NULL when this build has no CUDA or the machine no GPU; then
 * cs_backend_cuda_unavailable() says which. */
const cs_backend_ops *cs_backend_cuda(void);
/* The GPUs this process sees (0 when this build has no CUDA). */
int cs_backend_cuda_devices(void);
/* One line naming GPU `device` (model, UUID, compute capability, driver) into buf; "" when there
 * is none. For keys of measured choices (cs_wisdom.h). */
void cs_backend_cuda_identity(int device, char *buf, size_t len);
const char *cs_backend_cuda_unavailable(void);
/* The Hines solver variant a CUDA backend instance runs ("auto" resolved), or NULL when ops is
 * not the CUDA backend's. */
const char *cs_backend_cuda_solver(const cs_backend_ops *ops, const cs_backend *b);
/* The solver an instance of ops = cs_backend_cuda() for p->solver would report (as
 * cs_backend_cuda_solver), or the one whose solve it would run the same (a "chunked" that would
 * cut nothing: "fine"), found from the network's trees without building it; NULL when only a
 * built instance can tell (or no GPU). `auto`'s trial skips a candidate that would only repeat
 * one it has timed. */
const char *cs_backend_cuda_resolve(const cs_backend_ops *ops, const cs_network_desc *net, const cs_backend_params *p);

/* auto's solver-level trial (cs_backend_choose.c, on large networks; docs/gpu.md, "Choosing by
 * measurement"): each candidate GPU solver's membrane step alone (the fused step where its plan
 * fuses, else the assembly and the solve), on this network's matrix, without building backend
 * instances: the tree structure and the constants are built once, the candidates' plans at once
 * (OpenMP threads, nested: each plan's own loops too), then each plan's steps are timed with CUDA
 * events (a few warm-up steps, a probe of 4, then up to max_steps) in arrays allocated once. i and g stay zero: the solve's cost does
 * not depend on their values. */
typedef struct {
    const char *name;      /* in: a --solver name (not "epoch", whose step is another kernel) */
    char variant[32];      /* out: the variant its plan runs ("auto" resolved); "" when not timed */
    char same_as[32];      /* out: not built: it would run the solve of this variant, which an
                              earlier candidate runs ("chunked" cutting nothing: "fine") */
    double per_step;       /* out: [s] one membrane step; < 0 when not timed */
    double plan_seconds;   /* out: [s] building its plan (on its own thread) */
    double setup_seconds;  /* out: [s] its arrays in its plan's layout (row map, conversions, flags) */
    double steps_seconds;  /* out: [s] its warm-up, probe and timed steps (wall time) */
    int abandoned;         /* out: 1 when its probe was more than abandon × the best so far:
                              per_step is the probe's */
    cs_status status;      /* out: CS_OK, or why it cannot run the network (message) */
    char message[200];
} cs_solver_trial;
/* Where the trial's wall time went [s], for its report (docs/gpu.md, "Choosing by measurement") */
typedef struct {
    double parents;  /* the tree-order structure (every cell's rows' parents) */
    double schedules; /* warp's and fine's shared schedules (before at_once; or in it, by their first job) */
    double at_once;  /* the plans, resolves, constants and the device's set-up, at once (threads) */
    double device;   /* of at_once: the device's job (its context first, the stream, v_init) */
    double constants; /* of at_once: the longest of the four constants' jobs (built, uploaded) */
    double later;    /* plans built after (auto's, where it solves as none of the others) */
    double arrays;   /* the candidates' shared arrays: current rows, state and constants allocated once */
    double rest;     /* what remains: freeing, the stream and timers */
} cs_solver_trial_split;
/* Times cand[0 .. n-1] in order (the abandon rule against the best before each). A candidate that
 * cannot run is marked in its status; the return is an error only when nothing could be timed at
 * all (no device, out of memory for the network's matrix). ops = cs_backend_cuda(). split: NULL,
 * or where the time went. */
cs_status cs_backend_cuda_solver_trial(const cs_backend_ops *ops, const cs_network_desc *net,
                                       const cs_backend_params *p, int max_steps, double abandon,
                                       cs_solver_trial *cand, int n, cs_solver_trial_split *split);

#endif
