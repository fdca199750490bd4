/* Choosing the backend and the GPU solver by measurement (cs_backend_choose.h). */
#include "cs_backend_choose.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_wisdom.h"

/* GPU solvers tried for "auto": the library's own rule first (it alone knows the fused
 * per-system step and identical cells' shared constants), then the variants that won on some
 * network of the benchmarks. interleaved is left out: on mixed cells it pads every cell to the
 * largest (2.5× the memory on the real-cell network) and variable covers it on uniform ones.
 * epoch (one kernel per epoch) wins where launches bound the step: small networks. chunked
 * (long unbranched runs cut into chunks solved in parallel) is tried beside fine, for networks of
 * distinct large cells (issue 28). */
static const char *const gpu_candidates[] = {"auto", "staged", "warp", "fine", "chunked", "variable", "epoch"};
#define NGPU_CAND (sizeof gpu_candidates / sizeof gpu_candidates[0])
/* Above this many compartments "auto" does not time the CPU: its set-up alone took seconds, and
 * on every such benchmark network the GPU was 10-20× faster (bench/NOTES.md, session 11; the
 * closest, 741 120 compartments of real cells, 14× on an H100). */
#define CS_AUTO_CPU_MAX_CV 500000
/* The CPU is chosen over the GPU only when its trial is faster by more than this factor. Its
 * trial (the best of two epochs) flatters it: on the 256-cell ring (H100, session 13) the CPU's
 * trial said 0.022-0.024 ms per step and its runs took 0.025-0.032, while the GPU's trial
 * (0.0225) matched its runs (0.022); with no margin, auto took the CPU in one run of three, 25 %
 * slower than staged. The cost where the CPU is truly faster by less: at most this factor. */
#define CS_AUTO_CPU_MARGIN 1.10

/* A candidate whose warm-up epoch is slower per step than this factor times the best timed so
 * far is not timed further (its two timed epochs would only confirm it): on distinct big cells
 * (session 16) `variable` ran 5-15× slower than `fine` and its epochs were most of the trial.
 * The warm-up includes first-launch costs (graph capture, caches), hence the generous factor. */
#define CS_AUTO_ABANDON 3.0

/* From this many compartments (where the CPU is not a candidate), "auto" ranks the GPU solvers
 * by their membrane step alone (cs_backend_cuda_solver_trial: no instance built) instead of whole
 * instances: each whole candidate costs a set-up of ~0.1-0.3 s per million compartments (session
 * 20, H100 host: 1.3-4.7 s at 12-16 M), so five candidates pass ~2 s from about here. Below it
 * the whole-instance trial stays: it also weighs what the solvers' layouts do to the other
 * kernels, and costs little. CABLESIM_AUTO_SOLVER_TRIAL overrides it (cs_backend_solver_trial_min). */
#define CS_AUTO_SOLVER_TRIAL_CV 2000000

typedef struct {
    char name[48];      /* "cpu" or "cuda <variant>" */
    double per_step;    /* [s] */
    double setup;       /* [s] building the throw-away instance */
    int abandoned;      /* 1: stopped after its warm-up, per_step is the warm-up's */
} timing;

/* Build one candidate, run a warm-up epoch and two timed ones, destroy it. *variant gets the
 * solver the instance resolved to (GPU), so duplicates of "auto" are not timed twice. Stops
 * after the warm-up when that is CS_AUTO_ABANDON times slower per step than best (> 0). */
static cs_status time_candidate(const cs_backend_ops *ops, const cs_network_desc *net, const cs_backend_params *p,
                                int k, const timing *done, int ndone, double best_so_far, timing *t) {
    cs_backend *be = NULL;
    double ts = cs_now();
    CS_TRY(ops->create(net, p, &be));
    t->setup = cs_now() - ts;
    const char *variant = cs_backend_cuda_solver(ops, be);
    snprintf(t->name, sizeof t->name, "%s%s%s", ops->name, variant ? " " : "", variant ? variant : "");
    for (int j = 0; j < ndone; ++j)
        if (!strcmp(done[j].name, t->name)) { /* resolved to one already timed */
            ops->destroy(be);
            t->per_step = -1;
            return CS_OK;
        }
    cs_epoch_result res;
    cs_profile prof;
    memset(&prof, 0, sizeof prof);
    cs_status st = ops->init(be, &res);
    double best = -1;
    for (int r = 0; st == CS_OK && r < 3; ++r) {
        double t0 = cs_now();
        st = ops->launch_epoch(be, (int64_t)r * k, k);
        if (st == CS_OK) st = ops->collect_epoch(be, &prof, &res);
        double el = cs_now() - t0;
        if (r > 0 && (best < 0 || el < best)) best = el; /* r = 0 warms up */
        if (r == 0 && st == CS_OK && best_so_far > 0 && el / k > CS_AUTO_ABANDON * best_so_far) {
            best = el;
            t->abandoned = 1;
            break;
        }
    }
    ops->destroy(be);
    t->per_step = best / k;
    return st;
}

/* 1 when the named GPU solver was timed already, as what "auto" resolved to: building it again
 * only to find the duplicate cost each time a set-up (4-6 s at 16 M compartments, session 16). */
static int already_timed(const cs_backend_ops *ops, const char *solver, const timing *done, int ndone) {
    char name[sizeof done->name];
    snprintf(name, sizeof name, "%s %s", ops->name, solver);
    for (int j = 0; j < ndone; ++j)
        if (!strcmp(done[j].name, name)) return 1;
    return 0;
}

/* a candidate's trial time as the choice weighs it: the CPU's times its margin */
static double weighed(const timing *t) {
    return strncmp(t->name, "cpu", 3) ? t->per_step : t->per_step * CS_AUTO_CPU_MARGIN;
}

static void append(char *buf, size_t len, const char *fmt, const char *a, double b) {
    size_t n = strlen(buf);
    if (n + 1 < len) snprintf(buf + n, len - n, fmt, a, b);
}

cs_status cs_backend_solver_trial_min(uint64_t *min_cv) {
    *min_cv = CS_AUTO_SOLVER_TRIAL_CV;
    const char *e = getenv("CABLESIM_AUTO_SOLVER_TRIAL");
    if (!e || !*e) return CS_OK;
    if (!strcmp(e, "off")) {
        *min_cv = UINT64_MAX;
        return CS_OK;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(e, &end, 10);
    if (*e == '-' || errno || !end || *end)
        return cs_error_set(CS_ERR_INVALID, "CABLESIM_AUTO_SOLVER_TRIAL='%.40s': expected a number of compartments "
                            "(from which auto times the GPU solvers' steps alone) or 'off'", e);
    *min_cv = (uint64_t)v;
    return CS_OK;
}

/* The end of a trial: the choice, its report's last words, and its wisdom entry. shown: the
 * candidate as the report names it ("cuda fine"); solver: the name to build it by ("" on the CPU). */
static void conclude(cs_backend_choice *out, const cs_backend_ops *ops, const char *shown, const char *solver,
                     double per_step, double t0, uint64_t key) {
    out->ops = ops;
    snprintf(out->solver, sizeof out->solver, "%s", solver ? solver : "");
    out->trial_seconds = cs_now() - t0;
    append(out->report, sizeof out->report, " chosen: %s (trial %.2f s)", shown, out->trial_seconds);
    cs_wisdom_entry w = {"", "", per_step, out->trial_seconds};
    snprintf(w.backend, sizeof w.backend, "%s", ops == &cs_backend_cpu ? "cpu" : "cuda");
    snprintf(w.solver, sizeof w.solver, "%s", out->solver[0] ? out->solver : "-");
    cs_wisdom_store(key, &w);
}

/* From this many compartments the solver-level trial does not try epoch: it wins only where
 * kernel launches bound a step (the 256-cell ring, session 14), and on the 18 432 real cells (11.9 M
 * compartments, H100, session 21) its whole-instance trial cost 2.4 s of a 5.4 s trial to measure
 * 3.12 ms a step against staged's 0.38. */
#define CS_AUTO_EPOCH_MAX_CV 2000000

/* The solver-level trial (above CS_AUTO_SOLVER_TRIAL_CV, the GPU only): the Hines solvers ranked
 * by their membrane step alone; epoch, a whole step of its own, keeps its whole-instance trial
 * below CS_AUTO_EPOCH_MAX_CV (reached only with the threshold set lower) where it does not
 * refuse, and is chosen only when its whole step is faster than the best solver's membrane step
 * alone (which the run's step can only exceed). */
static cs_status choose_by_solver(const cs_network_desc *net, const cs_backend_params *p, const cs_backend_ops *gpu,
                                  int trial_steps, uint64_t min_cv, uint64_t key, double t0, cs_backend_choice *out) {
    cs_solver_trial cand[NGPU_CAND];
    int n = 0, epoch = 0;
    for (size_t k = 0; k < NGPU_CAND; ++k) {
        if (!strcmp(gpu_candidates[k], "epoch")) {
            epoch = 1;
            continue;
        }
        memset(&cand[n], 0, sizeof cand[n]);
        cand[n++].name = gpu_candidates[k];
    }
    const double before = cs_now() - t0; /* the wisdom key (a pass over the network) and its look-up */
    cs_solver_trial_split sp;
    CS_TRY(cs_backend_cuda_solver_trial(gpu, net, p, trial_steps, CS_AUTO_ABANDON, cand, n, &sp));
    snprintf(out->report, sizeof out->report,
             "auto: solver-level trial (%.3g M compartments, from %.3g M): each GPU solver's membrane step alone, "
             "up to %d steps:", (double)net->total_cv / 1e6, (double)min_cv / 1e6, trial_steps);
    int best = -1, first_fail = -1;
    for (int c = 0; c < n; ++c) {
        const cs_solver_trial *t = &cand[c];
        char note[128];
        if (t->same_as[0])
            snprintf(note, sizeof note, " %s solves as %s, not timed again;", t->name, t->same_as);
        else if (t->status != CS_OK) {
            snprintf(note, sizeof note, " %s refused;", t->name);
            if (first_fail < 0) first_fail = c;
        } else
            snprintf(note, sizeof note, " cuda %s %.3g ms/step (%splan %.2f s, set-up %.2f s, steps %.2f s);", t->variant,
                     1e3 * t->per_step, t->abandoned ? "probe only, " : "", t->plan_seconds, t->setup_seconds,
                     t->steps_seconds);
        append(out->report, sizeof out->report, "%s", note, 0.0);
        if (t->status == CS_OK && !t->same_as[0] && !t->abandoned && (best < 0 || t->per_step < cand[best].per_step))
            best = c;
    }
    { /* where the trial's time went (the candidates' own set-up and steps above) */
        char split[320];
        snprintf(split, sizeof split,
                 " its time: key %.2f, parents %.2f, warp's and fine's schedules %.2f, plans, constants and device at "
                 "once %.2f (the device %.2f, the longest constant %.2f), later plans %.2f, arrays %.2f, freeing %.2f s;",
                 before, sp.parents, sp.schedules, sp.at_once, sp.device, sp.constants, sp.later, sp.arrays, sp.rest);
        append(out->report, sizeof out->report, "%s", split, 0.0);
    }
    timing te = {"", -1, 0, 0};
    int epoch_ok = 0;
    if (epoch && net->total_cv >= CS_AUTO_EPOCH_MAX_CV) {
        append(out->report, sizeof out->report, " %s not tried from %.3g M compartments;", "epoch", CS_AUTO_EPOCH_MAX_CV / 1e6);
        epoch = 0;
    }
    if (epoch) { /* its refusals come before any set-up (cs_cuda_epoch_check) */
        cs_backend_params q = *p;
        q.solver = "epoch";
        const double tc = cs_now();
        cs_status st = time_candidate(gpu, net, &q, trial_steps, NULL, 0, best < 0 ? -1 : cand[best].per_step, &te);
        if (st != CS_OK) {
            append(out->report, sizeof out->report, " %s refused after %.2f s;", q.solver, cs_now() - tc);
            cs_error_clear();
        } else {
            append(out->report, sizeof out->report, " %s %.3g ms/step (whole step", te.name, 1e3 * te.per_step);
            append(out->report, sizeof out->report, "%s, set-up %.2f s);", te.abandoned ? ", warm-up only" : "",
                   te.setup);
            epoch_ok = !te.abandoned;
        }
    }
    if (epoch_ok && (best < 0 || te.per_step < cand[best].per_step)) {
        conclude(out, gpu, te.name, "epoch", te.per_step, t0, key);
        return CS_OK;
    }
    if (best < 0) {
        out->trial_seconds = cs_now() - t0;
        return cs_error_set(first_fail >= 0 ? cand[first_fail].status : CS_ERR_INTERNAL, "%s",
                            first_fail >= 0 ? cand[first_fail].message : "auto: no GPU solver could be timed");
    }
    char shown[64];
    snprintf(shown, sizeof shown, "cuda %s", cand[best].variant);
    conclude(out, gpu, shown, cand[best].name, cand[best].per_step, t0, key);
    return CS_OK;
}

/* A choice measured before on a network of this shape on this machine (cs_wisdom.h): 1 when
 * taken. Only a candidate this call would have timed is taken. */
static int from_wisdom(uint64_t key, const cs_backend_ops *gpu, int want_cpu, const cs_backend_params *p, double t0,
                       cs_backend_choice *out) {
    cs_wisdom_entry w;
    char path[4096];
    if (!cs_wisdom_lookup(key, &w, path, sizeof path)) return 0;
    if (!strcmp(w.backend, "cpu")) {
        if (!want_cpu) return 0;
        out->ops = &cs_backend_cpu;
        out->solver[0] = 0;
    } else {
        int known = p->solver && strcmp(p->solver, "auto") ? !strcmp(w.solver, p->solver) : 0;
        for (size_t k = 0; !known && k < NGPU_CAND; ++k) known = !strcmp(w.solver, gpu_candidates[k]);
        if (!gpu || !known) return 0;
        out->ops = gpu;
        snprintf(out->solver, sizeof out->solver, "%s", w.solver);
    }
    out->trial_seconds = cs_now() - t0;
    snprintf(out->report, sizeof out->report,
             "auto: from wisdom (%.400s): %s%s%s, %.3g ms/step when its trial of %.2f s measured it "
             "(CABLESIM_WISDOM=off measures again)",
             path, w.backend, out->solver[0] ? " " : "", out->solver, 1e3 * w.per_step, w.trial);
    return 1;
}

cs_status cs_backend_choose(const cs_network_desc *net, const cs_backend_params *p, const char *backend,
                            int trial_steps, cs_backend_choice *out) {
    memset(out, 0, sizeof *out);
    const cs_backend_ops *gpu = cs_backend_cuda();
    const int want_cpu = !strcmp(backend, "cpu") ||
                         (!strcmp(backend, "auto") && (!gpu || net->total_cv <= CS_AUTO_CPU_MAX_CV));
    const int want_gpu = !strcmp(backend, "cuda") || (!strcmp(backend, "auto") && gpu);
    if (!want_cpu && !want_gpu) {
        if (!strcmp(backend, "cuda"))
            return cs_error_set(CS_ERR_UNSUPPORTED, "backend 'cuda': %s", cs_backend_cuda_unavailable());
        return cs_error_set(CS_ERR_INVALID, "unknown backend '%s' (expected cpu, cuda or auto)", backend);
    }
    if (want_gpu && !gpu) return cs_error_set(CS_ERR_UNSUPPORTED, "backend 'cuda': %s", cs_backend_cuda_unavailable());
    const int solver_named = p->solver && strcmp(p->solver, "auto");
    if (want_gpu && solver_named) snprintf(out->solver, sizeof out->solver, "%s", p->solver);
    if (!want_gpu || (!want_cpu && solver_named)) { /* one candidate: nothing to measure */
        out->ops = want_gpu ? gpu : &cs_backend_cpu;
        snprintf(out->report, sizeof out->report, "%s", want_gpu ? "solver named: no trial" :
                 !strcmp(backend, "auto") ? "auto: no GPU, so the CPU (no trial)" : "backend named: no trial");
        return CS_OK;
    }
    if (trial_steps < 1) trial_steps = 1;
    double t0 = cs_now();
    const uint64_t key = cs_wisdom_key(net, p, backend, trial_steps);
    if (from_wisdom(key, gpu, want_cpu, p, t0, out)) return CS_OK;
    if (want_gpu && !want_cpu && !solver_named) { /* the GPU solvers only: by their step alone when large */
        uint64_t min_cv;
        CS_TRY(cs_backend_solver_trial_min(&min_cv));
        if (net->total_cv >= min_cv) return choose_by_solver(net, p, gpu, trial_steps, min_cv, key, t0, out);
    }

    /* the candidates: the CPU (for "auto"), then the GPU solvers */
    const char *names[1 + NGPU_CAND];
    const cs_backend_ops *ops[1 + NGPU_CAND];
    int n = 0;
    if (want_cpu) { names[n] = NULL; ops[n++] = &cs_backend_cpu; }
    if (solver_named) { names[n] = p->solver; ops[n++] = gpu; }
    else for (size_t k = 0; k < NGPU_CAND; ++k) { names[n] = gpu_candidates[k]; ops[n++] = gpu; }

    timing done[1 + NGPU_CAND];
    int ndone = 0, best = -1, first_fail = -1;
    const char *best_solver = NULL;
    cs_status fail_status = CS_OK;
    char fail_msg[256] = "";
    snprintf(out->report, sizeof out->report, "auto: %d steps timed per candidate:", trial_steps);
    for (int c = 0; c < n; ++c) {
        cs_backend_params q = *p;
        q.solver = names[c];
        timing t = {"", -1, 0, 0};
        if (names[c] && already_timed(ops[c], names[c], done, ndone)) continue; /* "auto" resolved to it */
        /* one that would run the solve of one timed already (chunked cutting nothing is fine):
         * known from the trees, before its set-up of seconds */
        const char *same = names[c] && ndone > 0 ? cs_backend_cuda_resolve(ops[c], net, &q) : NULL;
        if (same && strcmp(same, names[c]) && already_timed(ops[c], same, done, ndone)) {
            char note[96];
            snprintf(note, sizeof note, " %s solves as %s, not timed again;", names[c], same);
            append(out->report, sizeof out->report, "%s", note, 0.0);
            continue;
        }
        const double best_so_far = best < 0 ? -1 : weighed(&done[best]);
        const double tc = cs_now();
        cs_status st = time_candidate(ops[c], net, &q, trial_steps, done, ndone, best_so_far, &t);
        if (st != CS_OK) { /* this candidate cannot run the network: leave it out */
            if (first_fail < 0) {
                first_fail = c;
                fail_status = st;
                snprintf(fail_msg, sizeof fail_msg, "%s", cs_error_message());
            }
            append(out->report, sizeof out->report, " %s refused after %.2f s;", names[c] ? names[c] : "cpu",
                   cs_now() - tc);
            cs_error_clear();
            continue;
        }
        if (t.per_step < 0) continue; /* a duplicate */
        append(out->report, sizeof out->report, " %s %.3g ms/step", t.name, 1e3 * t.per_step);
        append(out->report, sizeof out->report, t.abandoned ? "%s (warm-up only, set-up %.2f s);" : "%s (set-up %.2f s);",
               "", t.setup);
        if (!t.abandoned && (best < 0 || weighed(&t) < weighed(&done[best]))) {
            best = ndone;
            best_solver = names[c];
        }
        done[ndone++] = t;
    }
    out->trial_seconds = cs_now() - t0;
    if (best < 0) {
        cs_error_clear();
        return cs_error_set(fail_status != CS_OK ? fail_status : CS_ERR_INTERNAL, "%s", fail_msg);
    }
    conclude(out, strncmp(done[best].name, "cpu", 3) ? gpu : &cs_backend_cpu, done[best].name, best_solver,
             done[best].per_step, t0, key);
    return CS_OK;
}
