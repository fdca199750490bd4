/* auto's solver-level trial (cs_backend.h, cs_backend_cuda_solver_trial): the GPU solvers timed on
 * the network's own matrix without building backend instances. The candidates differ only in the
 * membrane solve (mechanisms, events, detection and sampling run the same kernels whatever the
 * solver), so on large networks, where a whole instance costs seconds of set-up (mechanisms' host
 * init over millions of instances, uploads, graph capture), each candidate's plan alone is built
 * and its step of assembly and solve timed. docs/gpu.md, "Choosing by measurement". Host logic
 * only: no CUDA header here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_backend.h"

#ifdef CS_HAVE_CUDA
#include <limits.h>
#include <omp.h>

#include "cs_backend_cuda_internal.h"
#include "cs_profile.h"

#define CS_TRIAL_WARM 2          /* untimed steps first (first launches, caches) */
#define CS_TRIAL_PROBE 4         /* then a first timed run, which decides the abandon and the steps */
#define CS_TRIAL_MIN_STEPS 8     /* the timed run's fewest steps ... */
#define CS_TRIAL_GPU_SECONDS 0.05 /* ... and its most GPU time [s] (CUDA events: no launch noise) */

/* What every candidate reads: the network's constants and initial v in tree order on the device
 * (converted into each plan's layout there), and cell 0's rows of the constants while every
 * cell's are the same (the backend's shared constants, cs__cuda_shared_constants); the rows with
 * current; and the arrays every candidate's state takes in turn, allocated once at the largest
 * plan's size (the same sizes per candidate would cost 9 device arrays of 16 M doubles each). */
typedef struct {
    const cs_network_desc *net;
    const cs_backend_params *p;
    int *cell_first, *parent;
    double *tree[CS__NCONST + 1];  /* device: u, cdt, d0, b0 [µS, µS, µS, nA]; v_init [mV] */
    double *first[CS__NCONST];     /* host: cell 0's rows of each constant */
    int identical[CS__NCONST];     /* 1: every cell's rows of this constant equal cell 0's */
    unsigned char *current;        /* host: tree-order rows with current (cs__cuda_current_rows) */
    void *stream, *timers;
    size_t cap;                    /* the arrays below hold cap rows (cap doubles, cap bytes) */
    double *v, *i, *g, *d, *rhs, *c[CS__NCONST]; /* device; i and g stay zero */
    unsigned char *flags, *flags_host; /* device and host: the fused step's row flags */
} trial_inputs;

/* One candidate's state in its plan's layout, as the backend keeps it (cs_cuda_state): the
 * arrays are trial_inputs' (v and rhs swap), but for shared constants and pivots, its own. */
typedef struct {
    cs_hines_plan *plan;
    int fused, shared;
    size_t n_int;
    double *c[CS__NCONST], *v, *i, *g, *d, *rhs, *a0;
    double *own[CS__NCONST];       /* shared constants: cell 0's rows, allocated for it */
    int *row_map;                  /* host: each tree-order row's internal row (on the plan's thread) */
} trial_state;

/* A job of the parallel parts: its status and one-line message, kept from its thread */
typedef struct {
    cs_status st;
    char msg[200];
} job_result;

static void keep_error(job_result *r, cs_status st) {
    r->st = st;
    if (st != CS_OK) snprintf(r->msg, sizeof r->msg, "%s", cs_error_message());
    cs_error_clear();
}

/* cs_cuda_alloc from the jobs' threads, one at a time (its budget's count is one variable) */
static cs_status job_alloc(double **p, size_t nrow, const char *what) {
    cs_status st;
#pragma omp critical(cs_trial_alloc)
    st = cs_cuda_alloc((void **)p, (nrow ? nrow : 1) * sizeof(double), what);
    return st;
}

/* The device's part, at once with the plans (its context's creation the first): the stream,
 * the timers and v_init in tree order. */
static cs_status device_job(trial_inputs *in) {
    const cs_network_desc *net = in->net;
    const size_t nrow = (size_t)net->total_cv;
    char dev[256];
    CS_TRY(cs_cuda_select(in->p->device, dev, sizeof dev));
    CS_TRY(cs_cuda_stream_create(&in->stream));
    CS_TRY(cs_cuda_timer_create(&in->timers, 2));
    CS_TRY(job_alloc(&in->tree[CS__NCONST], nrow, "the trial's matrix"));
    double *v = malloc((nrow ? nrow : 1) * sizeof *v);
    if (!v) return cs_error_set(CS_ERR_NOMEM, "out of memory for %zu CVs", nrow);
    for (size_t c = 0; c < net->ncell; ++c)
        for (int r = in->cell_first[c]; r < in->cell_first[c + 1]; ++r) v[r] = net->cells[c].v_init;
    cs_status st = cs_cuda_upload(in->tree[CS__NCONST], v, nrow * sizeof *v);
    free(v);
    return st;
}

/* Constant k of the matrix: built on the host, checked for identical cells, uploaded (tree order). */
static cs_status constant_job(trial_inputs *in, int k) {
    const cs_network_desc *net = in->net;
    const size_t nrow = (size_t)net->total_cv, n0 = (size_t)in->cell_first[1];
    double *a = cs__cuda_matrix_array(net, in->p->dt, in->cell_first, k);
    if (!a) return cs_error_set(CS_ERR_NOMEM, "out of memory for %zu CVs", nrow);
    in->identical[k] = cs__cuda_identical_cells(in->cell_first, (int)net->ncell, &a, 1);
    cs_status st = CS_OK;
    if (in->identical[k] && !(in->first[k] = malloc(n0 * sizeof(double))))
        st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK && in->identical[k]) memcpy(in->first[k], a, n0 * sizeof(double));
    char dev[256];
    if (st == CS_OK) st = cs_cuda_select(in->p->device, dev, sizeof dev); /* this thread's device */
    if (st == CS_OK) st = job_alloc(&in->tree[k], nrow, "the trial's matrix");
    if (st == CS_OK) st = cs_cuda_upload(in->tree[k], a, nrow * sizeof(double));
    free(a);
    return st;
}

/* The shared arrays for plans of at most cap internal rows */
static cs_status arrays_alloc(trial_inputs *in, size_t cap) {
    const size_t nrow = (size_t)in->net->total_cv;
    in->cap = cap;
    double **arr[] = {&in->v, &in->i, &in->g, &in->d, &in->rhs, &in->c[0], &in->c[1], &in->c[2], &in->c[3]};
    for (size_t k = 0; k < sizeof arr / sizeof arr[0]; ++k) CS_TRY(cs_cuda_alloc((void **)arr[k], cap * sizeof(double), "the trial's state"));
    CS_TRY(cs_cuda_alloc((void **)&in->flags, cap, "the trial's row flags"));
    in->flags_host = malloc(cap);
    if (!in->flags_host) return cs_error_set(CS_ERR_NOMEM, "out of memory for %zu CVs", nrow);
    return CS_OK;
}

static void arrays_free(trial_inputs *in) {
    double *arr[] = {in->v, in->i, in->g, in->d, in->rhs, in->c[0], in->c[1], in->c[2], in->c[3]};
    for (size_t k = 0; k < sizeof arr / sizeof arr[0]; ++k) cs_cuda_free(arr[k]);
    cs_cuda_free(in->flags);
    free(in->flags_host);
}

static void state_free(trial_state *s) {
    for (int k = 0; k < CS__NCONST; ++k) cs_cuda_free(s->own[k]);
    cs_cuda_free(s->a0);
    if (s->plan) cs_hines_gpu_plan_destroy(s->plan);
    free(s->row_map);
    memset(s, 0, sizeof *s);
}

/* The candidate's arrays in its plan's layout: the constants (or cell 0's rows, shared), v, zero
 * i and g, and the fused step's row flags with the network's rows of current (the set-up's). The
 * shared arrays are zeroed first from i (zero throughout: no mechanism adds current here), as
 * fresh ones were: padding rows as the set-up leaves them. */
static cs_status state_build(const trial_inputs *in, const cs_hines_gpu_options *opt, trial_state *s) {
    const cs_network_desc *net = in->net;
    const size_t n0 = (size_t)in->cell_first[1];
    /* its kernels' attributes again: the plans built since (at once) may have set shared ones lower */
    cs_solver_status ss = cs_hines_gpu_plan_prepare(s->plan);
    if (ss == CS_SOLVER_OK) ss = cs_hines_gpu_set_stream(s->plan, in->stream);
    s->fused = opt->fused_step && cs_hines_gpu_plan_fuses(s->plan);
    s->n_int = cs_hines_gpu_plan_internal_size(s->plan);
    s->shared = s->fused && cs_hines_gpu_plan_shares_constants(s->plan) && in->identical[0] && in->identical[1] && in->identical[2] && in->identical[3];
    if (ss != CS_SOLVER_OK) return cs__cuda_solver_fail(ss, "the trial's plan");
    if (s->n_int > in->cap)
        return cs_error_set(CS_ERR_INTERNAL, "the trial's arrays hold %zu rows, its plan needs %zu", in->cap, s->n_int);
    const size_t bytes = (s->n_int ? s->n_int : 1) * sizeof(double);
    s->v = in->v, s->i = in->i, s->g = in->g, s->d = in->d, s->rhs = in->rhs;
    double *zeroed[] = {in->v, in->d, in->rhs, in->c[0], in->c[1], in->c[2], in->c[3]};
    /* on the legacy default stream, which the (blocking) trial stream's conversions then wait for */
    for (size_t k = 0; ss == CS_SOLVER_OK && k < sizeof zeroed / sizeof zeroed[0]; ++k)
        ss = cs_hines_gpu_memcpy(zeroed[k], in->i, bytes);
    if (ss == CS_SOLVER_OK) ss = cs_hines_gpu_to_internal_d(s->plan, CS_HINES_NODE, in->tree[CS__NCONST], s->v);
    if (s->shared) {
        double **dev[CS__NCONST] = {&s->own[0], &s->own[1], &s->own[2], &s->own[3]};
        CS_TRY(cs__cuda_shared_constants(net, in->parent, in->first, n0, dev, &s->a0));
        memcpy(s->c, s->own, sizeof s->c);
    } else {
        static const cs_hines_array_kind kind[CS__NCONST] = {CS_HINES_COUPLING, CS_HINES_NODE, CS_HINES_NODE, CS_HINES_NODE};
        for (int k = 0; k < CS__NCONST; ++k) {
            s->c[k] = in->c[k];
            if (ss == CS_SOLVER_OK) ss = cs_hines_gpu_to_internal_d(s->plan, kind[k], in->tree[k], s->c[k]);
        }
    }
    if (ss == CS_SOLVER_OK) ss = cs_hines_gpu_sync(s->plan);
    if (ss != CS_SOLVER_OK) return cs__cuda_solver_fail(ss, "layout conversion");
    unsigned char *flags = in->flags;
    return s->fused ? cs__cuda_fused_flags_into(net, s->plan, s->row_map, in->current, in->cell_first, s->n_int,
                                                s->shared, in->flags_host, &flags)
                    : CS_OK;
}

/* n membrane steps as the backend's step_kernels runs them: the fused step, or the assembly,
 * the solve and the v/rhs swap. */
static cs_status steps(const trial_inputs *in, trial_state *s, int n) {
    for (int k = 0; k < n; ++k) {
        cs_solver_status ss;
        if (s->fused) {
            cs_hines_step_d step = {s->c[CS__D0], s->c[CS__CDT], s->c[CS__B0], s->c[CS__U], s->v, s->i, s->g,
                                    in->flags, s->d, s->rhs, s->shared, s->a0, 0, NULL, NULL};
            ss = cs_hines_gpu_step_internal_d(s->plan, &step);
        } else {
            CS_TRY(cs_cuda_assemble_rows(in->stream, s->n_int, s->c[CS__D0], s->c[CS__B0], s->c[CS__CDT], s->v, s->i,
                                         s->g, s->d, s->rhs));
            ss = cs_hines_gpu_solve_internal_d(s->plan, s->d, s->c[CS__U], s->rhs);
            double *tmp = s->v; /* the solution is the new v */
            s->v = s->rhs;
            s->rhs = tmp;
        }
        if (ss != CS_SOLVER_OK) return cs__cuda_solver_fail(ss, s->fused ? "fused step" : "solve");
    }
    return CS_OK;
}

/* [s] per step of n steps, timed with CUDA events on the stream */
static cs_status timed_steps(const trial_inputs *in, trial_state *s, int n, double *per_step) {
    CS_TRY(cs_cuda_timer_record(in->timers, 0, in->stream));
    CS_TRY(steps(in, s, n));
    CS_TRY(cs_cuda_timer_record(in->timers, 1, in->stream));
    CS_TRY(cs_cuda_sync(in->stream));
    float ms = 0;
    CS_TRY(cs_cuda_timer_elapsed(in->timers, 0, 1, &ms));
    *per_step = 1e-3 * ms / n;
    return CS_OK;
}

/* Time one candidate whose plan is built: warm-up, a probe of a few steps, then up to max_steps
 * (CS_TRIAL_GPU_SECONDS at most), unless the probe is abandon × slower than best (> 0). */
static cs_status time_one(const trial_inputs *in, const cs_hines_gpu_options *opt, trial_state *s, int max_steps,
                          double abandon, double best, cs_solver_trial *t) {
    double t0 = cs_now();
    cs_status st = state_build(in, opt, s);
    t->setup_seconds = cs_now() - t0;
    if (st != CS_OK) return st;
    t0 = cs_now();
    st = steps(in, s, CS_TRIAL_WARM);
    if (st == CS_OK) st = cs_cuda_sync(in->stream);
    double probe = 0;
    if (st == CS_OK) st = timed_steps(in, s, CS_TRIAL_PROBE, &probe);
    t->per_step = probe;
    if (st == CS_OK && abandon > 0 && best > 0 && probe > abandon * best) {
        t->abandoned = 1;
    } else if (st == CS_OK) {
        int n = probe > 0 ? (int)(CS_TRIAL_GPU_SECONDS / probe) : max_steps;
        if (n > max_steps) n = max_steps;
        if (n < CS_TRIAL_MIN_STEPS) n = CS_TRIAL_MIN_STEPS;
        st = timed_steps(in, s, n, &t->per_step);
    }
    t->steps_seconds = cs_now() - t0;
    return st;
}

static int is_variant(const char *name, const char *v) { return v && name && !strcmp(name, v); }

/* only auto and chunked may solve as another variant (cs_hines_gpu_plan_resolve) */
static int needs_resolve(const char *name) { return !name || !strcmp(name, "auto") || !strcmp(name, "chunked"); }

/* the jobs of the parallel parts: JOB_PLAN + c, JOB_RESOLVE + c (candidate c), JOB_CONST + k,
 * JOB_DEVICE, JOB_CURRENT */
enum { JOB_PLAN = 0, JOB_RESOLVE = 1 << 20, JOB_CONST = 2 << 20, JOB_DEVICE = 3 << 20, JOB_CURRENT = 4 << 20,
       JOB_INDEX = (1 << 20) - 1 };

/* One candidate's plan and its row map (0.08-0.1 s of a core at 16 M rows: here, at once with the
 * other jobs, rather than one candidate after the other), on this thread; its failure kept in r. */
static void build_plan(const trial_inputs *in, const cs_hines_gpu_options *opt, trial_state *ts, cs_solver_trial *t,
                       job_result *r) {
    const cs_network_desc *net = in->net;
    const size_t nrow = (size_t)net->total_cv;
    const double t0 = cs_now();
    cs_solver_status ss = cs_hines_gpu_plan_create((int)net->ncell, in->cell_first, in->parent, opt, &ts->plan);
    if (ss == CS_SOLVER_OK && !(ts->row_map = malloc((nrow ? nrow : 1) * sizeof *ts->row_map))) ss = CS_SOLVER_ERR_NOMEM;
    if (ss == CS_SOLVER_OK) ss = cs_hines_gpu_plan_row_map(ts->plan, ts->row_map);
    t->plan_seconds = cs_now() - t0;
    r->st = CS_OK;
    if (ss != CS_SOLVER_OK) {
        if (ts->plan) cs_hines_gpu_plan_destroy(ts->plan);
        ts->plan = NULL;
        free(ts->row_map);
        ts->row_map = NULL;
        keep_error(r, cs__cuda_solver_fail(ss, "building the solver plan"));
    }
}

/* warp's and fine's planners give every distinct structure the same schedule (it reads neither's
 * pack sizes): made once for the candidates of these two with one set of flags (the plans are the
 * same bit for bit), before the plans at once, on every thread. Measured (H200, rand-262144, 41 M
 * compartments, session 32): the schedules 0.40-0.46 s, then the plans at once 1.53-1.65 -> 1.05 s;
 * made by the first of the two jobs while the other waited instead: 1.50-1.71 s with them.
 * CS_TRIAL_SHARE_SCHEDULES=0: each its own (for comparisons). */
static int share_schedules(void) {
    const char *e = getenv("CS_TRIAL_SHARE_SCHEDULES");
    return !(e && !strcmp(e, "0"));
}

/* share[c] = 1 for the candidates that share (warp, fine with the first one's flags); 0 for all
 * where fewer than two would */
static void sharing_candidates(const cs_solver_trial *cand, const cs_hines_gpu_options *opt, int n, int *share) {
    int first = -1, count = 0;
    for (int c = 0; c < n; ++c) {
        share[c] = (is_variant(cand[c].name, "warp") || is_variant(cand[c].name, "fine")) &&
                   (first < 0 || opt[c].fine_flags == opt[first].fine_flags);
        if (share[c] && first < 0) first = c;
        count += share[c];
    }
    for (int c = 0; count < 2 && c < n; ++c) share[c] = 0;
}

/* The most threads of each plan's own loops (the planners' inner OpenMP regions; nested inside the
 * jobs' region): CS_TRIAL_PLAN_THREADS, by default the process's OpenMP threads (the cores that
 * the other jobs leave, shared by the plans; bench/NOTES.md, "Session 22: auto's trial on big
 * cells"); 1: one thread each (no nesting, as before). */
static int plan_threads(void) {
    const char *e = getenv("CS_TRIAL_PLAN_THREADS");
    const int n = e && *e ? atoi(e) : 0;
    return n >= 1 ? n : omp_get_max_threads();
}

cs_status cs_backend_cuda_solver_trial(const cs_backend_ops *ops, const cs_network_desc *net,
                                       const cs_backend_params *p, int max_steps, double abandon,
                                       cs_solver_trial *cand, int n, cs_solver_trial_split *split) {
    if (!cs_backend_cuda()) return cs_error_set(CS_ERR_UNSUPPORTED, "backend 'cuda': %s", cs_backend_cuda_unavailable());
    if (ops != cs_backend_cuda())
        return cs_error_set(CS_ERR_UNSUPPORTED, "backend 'cuda': the solver-level trial runs the CUDA backend's solvers only");
    if (!net->ncell || net->total_cv > (uint64_t)INT_MAX)
        return cs_error_set(CS_ERR_INVALID, "backend 'cuda': no cells, or more than 2^31 CVs in one batch");
    for (int c = 0; c < n; ++c) {
        cs_solver_trial *t = &cand[c];
        t->variant[0] = t->same_as[0] = t->message[0] = 0;
        t->per_step = -1;
        t->plan_seconds = t->setup_seconds = t->steps_seconds = 0;
        t->abandoned = 0;
        t->status = CS_OK;
    }
    cs_solver_trial_split sp;
    memset(&sp, 0, sizeof sp);
    double tw = cs_now();
    trial_inputs in;
    memset(&in, 0, sizeof in);
    in.net = net;
    in.p = p;
    cs_status st = cs__cuda_tree_structure(net, p->dt, &in.cell_first, &in.parent);
    sp.parents = cs_now() - tw;
    cs_hines_gpu_options *opt = calloc((size_t)n, sizeof *opt);
    trial_state *ts = calloc((size_t)n, sizeof *ts);
    job_result *res = calloc((size_t)(CS__NCONST + 2 + n), sizeof *res); /* constants, device, current, plans */
    job_result *plan_res = res ? res + CS__NCONST + 2 : NULL;
    const char **resolved = calloc((size_t)n, sizeof *resolved);
    cs_backend_params *q = calloc((size_t)n, sizeof *q);
    if (st == CS_OK && (!opt || !ts || !res || !resolved || !q)) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (int c = 0; st == CS_OK && c < n; ++c) {
        q[c] = *p;
        q[c].solver = cand[c].name;
        cs__cuda_plan_options(&q[c], &opt[c]);
        /* chunked cutting nothing is fine's plan, thrown away (~1 s of a core at 16 M rows): not
         * built but where no other candidate times fine (then again below, without the flag) */
        if (is_variant(cand[c].name, "chunked")) opt[c].fine_flags |= CS_HINES_CHUNKED_CUT_ONLY;
    }
    /* warp's and fine's schedules, once for both (NULL where they could not be made: each plan then
     * makes its own) */
    int *share = calloc((size_t)n, sizeof *share);
    cs_hines_schedules *sch = NULL;
    if (st == CS_OK && !share) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK && share_schedules()) {
        sharing_candidates(cand, opt, n, share);
        for (int c = 0; c < n; ++c) {
            if (!share[c]) continue;
            if (!sch) {
                const double t0 = cs_now();
                if (cs_hines_schedules_create((int)net->ncell, in.cell_first, in.parent, opt[c].fine_flags, &sch) != CS_SOLVER_OK)
                    sch = NULL;
                sp.schedules = cs_now() - t0;
            }
            opt[c].schedules = sch;
        }
    }
    /* 1. at once, the longest first: the plans of the named candidates (host planning and
     * uploads; cs_hines_gpu_plan_create selects the device on its thread), what auto and chunked
     * would solve as (cs_hines_gpu_plan_resolve: a few passes over the rows), the four constants
     * (built on the host, uploaded), the device's context, stream and v_init, and the rows with
     * current */
    tw = cs_now();
    int *job = calloc((size_t)(CS__NCONST + 2 + 2 * n), sizeof *job), njob = 0;
    if (st == CS_OK && !job) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (int c = 0; st == CS_OK && c < n; ++c)
        if (cand[c].name && strcmp(cand[c].name, "auto")) job[njob++] = JOB_PLAN + c;
    if (st == CS_OK) job[njob++] = JOB_DEVICE;
    for (int c = 0; st == CS_OK && c < n; ++c)
        if (needs_resolve(cand[c].name)) job[njob++] = JOB_RESOLVE + c;
        else resolved[c] = cand[c].name;
    for (int k = 0; st == CS_OK && k < CS__NCONST; ++k) job[njob++] = JOB_CONST + k;
    if (st == CS_OK) job[njob++] = JOB_CURRENT;
    const int levels = omp_get_max_active_levels(), pt = plan_threads();
    if (pt > 1 && levels < 2) omp_set_max_active_levels(2);
    if (st == CS_OK) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(njob < omp_get_max_threads() ? njob : omp_get_max_threads())
        for (int j = 0; j < njob; ++j) {
            const int c = job[j] & JOB_INDEX;
            if (job[j] >= JOB_CURRENT) {
                if (!(in.current = cs__cuda_current_rows(net, in.cell_first)))
                    keep_error(&res[CS__NCONST + 1], cs_error_set(CS_ERR_NOMEM, "out of memory"));
            } else if (job[j] >= JOB_DEVICE) {
                const double t0 = cs_now();
                keep_error(&res[CS__NCONST], device_job(&in));
                sp.device = cs_now() - t0;
            } else if (job[j] >= JOB_CONST) {
                omp_set_num_threads(pt); /* its loop over the cells */
                const double t0 = cs_now();
                keep_error(&res[c], constant_job(&in, c));
                const double dt = cs_now() - t0;
#pragma omp critical(cs_trial_split)
                if (dt > sp.constants) sp.constants = dt;
            }
            else if (job[j] >= JOB_RESOLVE)
                resolved[c] = cs_hines_gpu_plan_resolve((int)net->ncell, in.cell_first, in.parent, &opt[c]);
            else {
                omp_set_num_threads(pt); /* this thread's nested regions: the plan's loops */
                build_plan(&in, &opt[c], &ts[c], &cand[c], &plan_res[c]);
            }
        }
        for (int k = 0; k < CS__NCONST + 2 && st == CS_OK; ++k)
            if (res[k].st != CS_OK) st = cs_error_set(res[k].st, "%s", res[k].msg);
    }
    cs_hines_schedules_destroy(sch); /* both plans built: theirs no longer */
    for (int c = 0; c < n; ++c) opt[c].schedules = NULL;
    free(share);
    sp.at_once = cs_now() - tw;
    /* a candidate that would solve as another candidate by its name is not timed: that one is
     * (auto that resolves to chunked: chunked's plan is the same, and auto's planner took 3.0 s
     * where chunked's took 1.35 s on big10000, bench/plan_times); else the first of a solve */
    for (int c = 0; st == CS_OK && c < n; ++c) {
        if (!resolved[c] || is_variant(cand[c].name, resolved[c])) continue;
        for (int e = 0; e < n && !cand[c].same_as[0]; ++e)
            if (e != c && (is_variant(cand[e].name, resolved[c]) || (e < c && is_variant(resolved[e], resolved[c]))))
                snprintf(cand[c].same_as, sizeof cand[c].same_as, "%s", resolved[c]);
    }
    /* 2. auto's plan where it solves as none of the others (usually none), and chunked's where it
     * was not built (CS_HINES_CHUNKED_CUT_ONLY) but must be timed */
    tw = cs_now();
    njob = 0;
    for (int c = 0; st == CS_OK && c < n; ++c) {
        if (ts[c].plan || cand[c].same_as[0]) continue;
        if (opt[c].fine_flags & CS_HINES_CHUNKED_CUT_ONLY) {
            opt[c].fine_flags &= ~CS_HINES_CHUNKED_CUT_ONLY;
            plan_res[c].st = CS_OK;
        }
        if (plan_res[c].st == CS_OK) job[njob++] = c;
    }
    if (st == CS_OK && njob) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(njob < omp_get_max_threads() ? njob : omp_get_max_threads())
        for (int j = 0; j < njob; ++j) {
            omp_set_num_threads(pt);
            build_plan(&in, &opt[job[j]], &ts[job[j]], &cand[job[j]], &plan_res[job[j]]);
        }
    }
    omp_set_max_active_levels(levels);
    free(job);
    sp.later = cs_now() - tw;
    /* the candidates' arrays, once, at the largest plan's size */
    tw = cs_now();
    size_t cap = 1;
    for (int c = 0; c < n; ++c)
        if (ts[c].plan && !cand[c].same_as[0] && cs_hines_gpu_plan_internal_size(ts[c].plan) > cap)
            cap = cs_hines_gpu_plan_internal_size(ts[c].plan);
    if (st == CS_OK) st = arrays_alloc(&in, cap);
    sp.arrays = cs_now() - tw;
    /* 3. one after the other: each plan's steps timed, then its state freed */
    double best = -1;
    for (int c = 0; st == CS_OK && c < n; ++c) {
        cs_solver_trial *t = &cand[c];
        if (t->same_as[0]) {
            state_free(&ts[c]); /* built before it was known (auto, or chunked without the flag) */
            continue;
        }
        if (plan_res[c].st != CS_OK) {
            t->status = plan_res[c].st;
            snprintf(t->message, sizeof t->message, "%s", plan_res[c].msg);
            continue;
        }
        snprintf(t->variant, sizeof t->variant, "%s", cs_hines_gpu_plan_variant(ts[c].plan));
        for (int e = 0; e < c && !t->same_as[0]; ++e) /* resolved unbuilt to NULL: known now */
            if (cand[e].per_step >= 0 && !strcmp(cand[e].variant, t->variant))
                snprintf(t->same_as, sizeof t->same_as, "%s", t->variant);
        if (t->same_as[0]) {
            t->variant[0] = 0;
            state_free(&ts[c]);
            continue;
        }
        cs_status sc = time_one(&in, &opt[c], &ts[c], max_steps, abandon, best, t);
        state_free(&ts[c]);
        if (sc != CS_OK) { /* this candidate cannot run the network: left out */
            t->status = sc;
            t->per_step = -1;
            snprintf(t->message, sizeof t->message, "%s", cs_error_message());
            cs_error_clear();
            continue;
        }
        if (!t->abandoned && (best < 0 || t->per_step < best)) best = t->per_step;
    }
    tw = cs_now();
    for (int c = 0; ts && c < n; ++c) state_free(&ts[c]);
    arrays_free(&in);
    for (int k = 0; k <= CS__NCONST; ++k) cs_cuda_free(in.tree[k]);
    for (int k = 0; k < CS__NCONST; ++k) free(in.first[k]);
    if (in.timers) cs_cuda_timer_destroy(in.timers, 2);
    if (in.stream) cs_cuda_stream_destroy(in.stream);
    free(in.current);
    free(in.cell_first);
    free(in.parent);
    free(opt);
    free(ts);
    free(res);
    free(resolved);
    free(q);
    sp.rest = cs_now() - tw;
    if (split) *split = sp;
    return st;
}

#else

cs_status cs_backend_cuda_solver_trial(const cs_backend_ops *ops, const cs_network_desc *net,
                                       const cs_backend_params *p, int max_steps, double abandon,
                                       cs_solver_trial *cand, int n, cs_solver_trial_split *split) {
    (void)ops, (void)net, (void)p, (void)max_steps, (void)abandon, (void)cand, (void)n, (void)split;
    return cs_error_set(CS_ERR_UNSUPPORTED, "backend 'cuda': %s", cs_backend_cuda_unavailable());
}

#endif
