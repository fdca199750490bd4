/* The CUDA backend: all cell state lives on the GPU for the whole run, in the layout of the
 * Hines solver plan (cs_hines_gpu.h) chosen for the batch; every per-step phase runs there
 * (src/backends/cuda/cs_cuda_kernels.cu). This file runs the epochs: per epoch only the epoch's
 * events go to the device and its spikes and samples come back. The set-up is
 * cs_backend_cuda_setup.c. Host logic only: no CUDA header here. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_backend.h"

#ifndef CS_HAVE_CUDA

const cs_backend_ops *cs_backend_cuda(void) { return NULL; }
int cs_backend_cuda_devices(void) { return 0; }
void cs_backend_cuda_identity(int device, char *buf, size_t len) {
    (void)device;
    if (len) buf[0] = 0;
}
const char *cs_backend_cuda_unavailable(void) {
    return "this build has no CUDA support (no CUDA compiler was found when it was configured)";
}
const char *cs_backend_cuda_solver(const cs_backend_ops *ops, const cs_backend *b) {
    (void)ops;
    (void)b;
    return NULL;
}

const char *cs_backend_cuda_resolve(const cs_backend_ops *ops, const cs_network_desc *net, const cs_backend_params *p) {
    (void)ops;
    (void)net;
    (void)p;
    return NULL;
}

#else

#include "cs_backend_cuda_internal.h"

/* Before a buffer that a launched epoch may still use moves: wait for that epoch. */
static cs_status quiesce(cs_backend *be) {
    return be->nlaunched > be->ncollected ? cs_cuda_sync(be->s.stream) : CS_OK;
}

static cs_status ensure_rows(cs_backend *be, size_t rows) {
    size_t np = be->s.nprobe ? (size_t)be->s.nprobe : 1;
    if (rows * np > be->cap_rows_dev) CS_TRY(quiesce(be));
    CS_TRY(cs__cuda_grow_device((void **)&be->s.samples, &be->cap_rows_dev, rows * np, sizeof(double), "probe samples"));
    if (rows * np > be->cap_rows_host) {
        double *p = realloc(be->samples, rows * np * sizeof(double));
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for samples");
        be->samples = p;
        be->cap_rows_host = rows * np;
    }
    return CS_OK;
}

static cs_status cuda_init(cs_backend *be, cs_epoch_result *res) {
    CS_TRY(ensure_rows(be, 1));
    CS_TRY(cs_cuda_first_currents(&be->s));
    CS_TRY(cs_cuda_sample_row(&be->s, 0));
    CS_TRY(cs_cuda_sync(be->s.stream));
    CS_TRY(cs_cuda_download(be->samples, be->s.samples, (size_t)be->s.nprobe * sizeof(double)));
    *res = cs_epoch_result_of(0, NULL, 1, be->samples);
    return CS_OK;
}

/* An epoch's events are those due by the midpoint of its last step [ms]. */
static double due_limit(const cs_backend *be, int64_t step0, int nsteps) {
    return (double)(step0 + nsteps - 1) * be->p.dt + 0.5 * be->p.dt;
}

static cs__cuda_event_layout layout_of(const cs_backend *be, int64_t step0, int nsteps) {
    const cs_cuda_state *s = &be->s;
    return (cs__cuda_event_layout){s->nsyn, s->syn_groups, be->inst_group, be->syn_local,
                                   step0,   nsteps,        be->p.dt,       s->ev_stride};
}

/* Events to the queue; while the next epoch's are ordered ahead (stage_ahead), those due within
 * it to the boundary's own list (be->late). */
static cs_status cuda_deliver(cs_backend *be, size_t n, const cs_target_event *ev) {
    if (!be->ahead.valid) return cs_event_queue_push(&be->ev, n, ev);
    const double limit = due_limit(be, be->ahead.step0, be->ahead.nsteps);
    CS_TRY(cs_target_events_grow(&be->late, &be->cap_late, be->nlate + n));
    for (size_t a = 0, b; a < n; a = b) { /* runs of later events go to the queue at once */
        if (ev[a].time <= limit) {
            be->late[be->nlate++] = ev[a];
            b = a + 1;
            continue;
        }
        for (b = a + 1; b < n && ev[b].time > limit; ++b) continue;
        CS_TRY(cs_event_queue_push(&be->ev, b - a, ev + a));
    }
    return CS_OK;
}

/* While an epoch runs on the GPU: the next one's events already queued (inputs known in advance,
 * spikes of earlier epochs), taken and ordered (cs__cuda_order), for an epoch of nsteps from step0.
 * At the boundary only the events that the epoch's spikes add for the next one are ordered and
 * merged in (stage_events). On the Allen network the staging at the boundary, with the GPU
 * waiting, was ~1.5-2 ms an epoch (session 23). */
static cs_status stage_ahead(cs_backend *be, int64_t step0, int nsteps) {
    const double t0 = cs_now();
    be->ahead.valid = 0;
    be->nlate = 0;
    CS_TRY(cs_event_queue_take(&be->ev, due_limit(be, step0, nsteps)));
    const cs__cuda_event_layout lay = layout_of(be, step0, nsteps);
    CS_TRY(cs__cuda_order(&lay, be->ev.due, be->ev.ndue, 1, &be->ahead.set));
    be->ahead.step0 = step0;
    be->ahead.nsteps = nsteps;
    be->ahead.valid = 1;
    be->host_ahead += cs_now() - t0;
    return CS_OK;
}

/* The epoch's events (due by the midpoint of its last step) go to the device in the GPU's
 * delivery order (cs__cuda_emit): those ordered ahead merged with those delivered since, or, for
 * an epoch not staged ahead (the first; one cut at a run's target), all of them from the queue. */
static cs_status stage_events(cs_backend *be, int64_t step0, int nsteps, size_t *ndue) {
    const cs_cuda_state *s = &be->s;
    const int nsyn = s->nsyn > 0 ? s->nsyn : 1, stride = s->ev_stride;
    int *hi = realloc(be->ev_hi, (size_t)nsyn * (size_t)stride * sizeof *hi);
    if (!hi) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    be->ev_hi = hi;
    const cs__cuda_event_layout lay = layout_of(be, step0, nsteps);
    double t0 = cs_now();
    if (be->ahead.valid && be->ahead.step0 == step0 && be->ahead.nsteps == nsteps) {
        CS_TRY(cs__cuda_order(&lay, be->late, be->nlate, 0, &be->fresh)); /* one sort, not two */
        CS_TRY(cs__cuda_merge_ordered(&be->ahead.set, &be->fresh, &be->staged));
        be->host_merged++;
    } else {
        if (be->ahead.valid) { /* staged ahead for another epoch: back into the queue */
            CS_TRY(cs_event_queue_push(&be->ev, be->ahead.set.n, be->ahead.set.ev));
            CS_TRY(cs_event_queue_push(&be->ev, be->nlate, be->late));
        }
        CS_TRY(cs_event_queue_take(&be->ev, due_limit(be, step0, nsteps)));
        CS_TRY(cs__cuda_order(&lay, be->ev.due, be->ev.ndue, 1, &be->staged));
    }
    be->ahead.valid = 0;
    be->nlate = 0;
    double t1 = cs_now();
    be->host_take += t1 - t0;
    const size_t n = be->staged.n;
    *ndue = n;
    int *loc = realloc(be->ev_local, (n ? n : 1) * sizeof *loc);
    double *w = realloc(be->ev_weight, (n ? n : 1) * sizeof *w);
    if (loc) be->ev_local = loc;
    if (w) be->ev_weight = w;
    if (!loc || !w) return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
    cs__cuda_emit(&lay, &be->staged, loc, w, hi);
    double t2 = cs_now();
    be->host_group += t2 - t1;
    if (!n) return CS_OK;
    size_t cap_l = be->cap_dev_ev, cap_w = be->cap_dev_ev;
    /* room for 65 536 at least (768 KiB): each move drops the graphs, whose recapture (~2 ms, the
     * GPU idle) came 15 times in a run of the Allen network as its epochs' events grew */
    const size_t room = n < 65536 ? 65536 : n;
    if (room > be->cap_dev_ev) { /* the wait is the GPU's epoch, already in the profile's GPU phases */
        const double tq = cs_now();
        CS_TRY(quiesce(be));
        be->host_waited += cs_now() - tq;
    }
    CS_TRY(cs__cuda_grow_device((void **)&be->s.ev_local, &cap_l, room, sizeof(int), "events"));
    CS_TRY(cs__cuda_grow_device((void **)&be->s.ev_weight, &cap_w, room, sizeof(double), "events"));
    be->cap_dev_ev = cap_l;
    /* on the stream: after the epoch in flight, which reads the arrays (pipelined epochs) */
    CS_TRY(cs_cuda_upload_async(be->s.ev_local, loc, n * sizeof *loc, be->s.stream));
    CS_TRY(cs_cuda_upload_async(be->s.ev_weight, w, n * sizeof *w, be->s.stream));
    be->host_upload += cs_now() - t2;
    return CS_OK;
}

#define EV_FORK 0
#define EV_TAIL(l) (1 + (l))
#define EV_GROUP(q) (1 + CS_CUDA_LANES + (q))

/* The main stream waits for group q's last state update on its lane (be->pending only). */
static cs_status wait_group(cs_backend *be, int q) {
    if (!be->pending || be->lane_of[q] < 0) return CS_OK;
    return cs_cuda_stream_wait(be->s.stream, be->fork_events, EV_GROUP(q));
}

/* The main stream waits for everything on the lanes. */
static cs_status join_lanes(cs_backend *be) {
    if (!be->pending) return CS_OK;
    for (int l = 0; l < be->nlanes; ++l) CS_TRY(cs_cuda_stream_wait(be->s.stream, be->fork_events, EV_TAIL(l)));
    be->pending = 0;
    return CS_OK;
}

/* A catalogue group on a lane with a launch block of its own (CS_CUDA_SOLO_BLOCK): fork_lanes
 * launches its update before the others', onto SMs still free. */
static int launched_first(const cs_backend *be, int q) {
    const cs_cuda_mech *m = &be->s.mech[q];
    return be->solo_first && be->lane_of[q] >= 0 && m->kind == CS_CUDA_CATALOGUE && m->view.block > 0;
}

/* Group q's state update on lane (its stream), with its next step's events and current where
 * go_ahead (cs_cuda_mech.ahead) */
static cs_status advance_group(const cs_cuda_state *lane, double celsius, int j, int q, int go_ahead) {
    return go_ahead && lane->mech[q].ahead ? cs_cuda_advance_ahead(lane, j, q) : cs_cuda_advance(lane, celsius, j, q, q + 1);
}

/* After the solve, on the lanes (setup_lanes): detection and sampling, and the state updates of
 * the groups that touch no concentration, each group's end marked by its event; the ordered
 * groups on the main stream. go_ahead: the groups with ahead also give the next step's events
 * and currents. Returns with the lanes pending. */
static cs_status fork_lanes(cs_backend *be, int j, int hh_done, int go_ahead) {
    cs_cuda_state *s = &be->s, lane = *s;
    CS_TRY(cs_cuda_timer_record(be->fork_events, EV_FORK, s->stream));
    for (int l = 0; l < be->nlanes; ++l) CS_TRY(cs_cuda_stream_wait(be->lane[l], be->fork_events, EV_FORK));
    for (int q = 0; q < s->nmech; ++q) {
        if (!launched_first(be, q)) continue;
        const int l = be->lane_of[q];
        lane.stream = be->lane[l];
        CS_TRY(advance_group(&lane, be->p.celsius, j, q, go_ahead));
        CS_TRY(cs_cuda_timer_record(be->fork_events, EV_GROUP(q), be->lane[l]));
    }
    lane.stream = be->lane[0];
    CS_TRY(cs_cuda_detect(&lane, j));
    if (!s->probe_src) CS_TRY(cs_cuda_sample(&lane, j));
    for (int q = hh_done; q < s->nmech; ++q) { /* hh_done: group 0 (hh) updated after the step's launches */
        const int l = be->lane_of[q], h = s->merge_head[q];
        lane.stream = l >= 0 ? be->lane[l] : s->stream;
        if (launched_first(be, q)) continue; /* launched above */
        if (h < 0) {
            CS_TRY(advance_group(&lane, be->p.celsius, j, q, go_ahead));
        } else if (h == q) { /* the merged set's one launch; its groups' ends are its end */
            CS_TRY(cs_cuda_merged(&lane, j, q, 0));
            for (int p = q; p < s->nmech; ++p)
                if (s->merge_head[p] == q) CS_TRY(cs_cuda_timer_record(be->fork_events, EV_GROUP(p), be->lane[l]));
            continue;
        } else {
            continue; /* in its head's launch */
        }
        if (l >= 0) CS_TRY(cs_cuda_timer_record(be->fork_events, EV_GROUP(q), be->lane[l]));
    }
    for (int l = 0; l < be->nlanes; ++l) CS_TRY(cs_cuda_timer_record(be->fork_events, EV_TAIL(l), be->lane[l]));
    be->pending = 1;
    if (s->probe_src) { /* probes of states read what the updates write: after them */
        CS_TRY(join_lanes(be));
        CS_TRY(cs_cuda_sample(s, j));
    }
    return be->defer ? CS_OK : join_lanes(be);
}

/* With the gather (cs_cuda_gather.h), after the ions' step: the catalogue groups' currents, which
 * write only their own slots, each on its group's lane (after that group's last update there) or
 * on the main stream, all at once; the built-in groups' on the main stream, which waits for
 * them all: the gather then adds the slots. */
static cs_status fork_currents(cs_backend *be, int j, int came_ahead) {
    cs_cuda_state *s = &be->s, lane = *s;
    CS_TRY(cs_cuda_timer_record(be->fork_events, EV_FORK, s->stream));
    for (int l = 0; l < be->nlanes; ++l) CS_TRY(cs_cuda_stream_wait(be->lane[l], be->fork_events, EV_FORK));
    for (int q = 0; q < s->nmech; ++q) {
        const int l = s->mech[q].kind == CS_CUDA_CATALOGUE ? be->lane_of[q] : -1, h = s->merge_head[q];
        if (came_ahead && s->mech[q].ahead) continue; /* in its slots already (the lanes' join waits for it) */
        if (l < 0) CS_TRY(wait_group(be, q));
        lane.stream = l >= 0 ? be->lane[l] : s->stream;
        if (h < 0)
            CS_TRY(cs_cuda_currents(&lane, j, q, q + 1));
        else if (h == q) /* after the set's update, on the same lane */
            CS_TRY(cs_cuda_merged(&lane, j, q, 1));
    }
    for (int l = 0; l < be->nlanes; ++l) CS_TRY(cs_cuda_timer_record(be->fork_events, EV_TAIL(l), be->lane[l]));
    be->pending = 1;
    return join_lanes(be);
}

/* cs_hines_step_d.after_launch: hh's update and next current (hh_ahead) for the instances on rows
 * [row0, row1), on the stream of the launch that wrote their v, so that it overlaps the step's
 * other launches (the real cells' eight staged launches: hh, in somata and axons, waited for all
 * of them). The same kernel on the same instances as after the step: the same results bit for
 * bit. be->hh_node: hh's CVs, ascending. */
static size_t first_at_or_after(const int *node, size_t n, long long row) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (node[mid] < row) lo = mid + 1; else hi = mid;
    }
    return lo;
}
static int hh_after_launch(void *ctx, long long row0, long long row1, void *stream) {
    cs_backend *be = ctx;
    const size_t n = (size_t)be->s.mech[0].n;
    const size_t k0 = first_at_or_after(be->hh_node, n, row0), k1 = first_at_or_after(be->hh_node, n, row1);
    be->hook_status = cs_cuda_hh_ahead_range(&be->s, be->p.celsius, (int)k0, (int)k1, stream);
    return be->hook_status != CS_OK;
}

/* A step's events, then the ions' step and the currents (all at once with the gather and lanes);
 * timer marks 1 and 2 after the events and after the currents (mark >= 0). came_ahead: the
 * groups with ahead got theirs from their update in the step before (fork_lanes). */
static cs_status events_and_currents(cs_backend *be, int j, int mark, int lanes, int came_ahead) {
    cs_cuda_state *s = &be->s;
    for (int q = 0; q < s->nsyn; ++q) /* events change states */
        if (!(came_ahead && s->mech[s->syn_groups[q]].ahead)) CS_TRY(wait_group(be, s->syn_groups[q]));
    CS_TRY(cs_cuda_deliver(s, j, came_ahead));
    if (mark >= 0) CS_TRY(cs_cuda_timer_record(be->timers, mark + 1, s->stream));
    for (int q = 0; q < s->nmech; ++q)
        if (s->mech[q].advance_ions) CS_TRY(wait_group(be, q));
    CS_TRY(cs_cuda_ions_prepare(s, be->p.celsius));
    if (lanes && s->gather.on)
        CS_TRY(fork_currents(be, j, came_ahead));
    else
        for (int q = 0; q < s->nmech; ++q) {
            if (came_ahead && s->mech[q].ahead) continue; /* never without lanes (setup_catalogue_ahead) */
            CS_TRY(wait_group(be, q));
            CS_TRY(cs_cuda_currents(s, j, q, q + 1));
        }
    CS_TRY(cs_cuda_gather_currents(s));
    if (mark >= 0) CS_TRY(cs_cuda_timer_record(be->timers, mark + 2, s->stream));
    return CS_OK;
}

/* The kernels of one step, the context's current step + j; mark >= 0 records timer events
 * mark .. mark + 7 around its phases (a step launched directly, for the profile, in order).
 * Untimed steps with lanes leave work pending on them (join_lanes ends it). With synapses ahead
 * (be->syn_ahead), inside a graph: came_ahead, the previous step's launch after the solve gave this
 * step's events and currents; go_ahead, this step's gives the next one's. */
static cs_status step_kernels(cs_backend *be, int j, int mark, int came_ahead, int go_ahead) {
    cs_cuda_state *s = &be->s;
    const int lanes = mark < 0 && be->nlanes;
    int hh_done = 0;
#define MARK(q) do { if (mark >= 0) CS_TRY(cs_cuda_timer_record(be->timers, mark + (q), s->stream)); } while (0)
    MARK(0);
    if (mark < 0 && be->events_current) { /* built-in mechanisms only: no lanes, ions or gather */
        if (!came_ahead) CS_TRY(cs_cuda_events_currents(s, j));
    } else
        CS_TRY(events_and_currents(be, j, mark, lanes, came_ahead));
    CS_TRY(join_lanes(be)); /* detection, sampling and the updates read v */
    if (be->fused) { /* assembly inside the solve: its time counts as the solver's */
        MARK(3);
        cs_hines_step_d step = {s->d0, s->cdt, s->b0, s->u, s->v, s->i, s->g, s->flags, s->d, s->rhs,
                                be->shared_constants, s->a0, be->keep_currents, NULL, NULL};
        hh_done = mark < 0 && be->hh_node; /* a timed step keeps its phases apart */
        if (hh_done) {
            step.after_launch = hh_after_launch;
            step.after_ctx = be;
            be->hook_status = CS_OK;
        }
        cs_solver_status ss = cs_hines_gpu_step_internal_d(be->plan, &step);
        if (ss != CS_SOLVER_OK) return hh_done && be->hook_status != CS_OK ? be->hook_status : cs__cuda_solver_fail(ss, "fused step");
        MARK(4);
    } else {
        CS_TRY(cs_cuda_assemble(s));
        MARK(3);
        cs_solver_status ss = cs_hines_gpu_solve_internal_d(be->plan, s->d, s->u, s->rhs);
        if (ss != CS_SOLVER_OK) return cs__cuda_solver_fail(ss, "solve");
        MARK(4);
        double *tmp = s->v; /* the solution is the new v */
        s->v = s->rhs;
        s->rhs = tmp;
    }
    if (lanes) return fork_lanes(be, j, hh_done, go_ahead);
    if (mark < 0 && be->after_solve) {
        CS_TRY(cs_cuda_after_solve(s, be->p.celsius, j, hh_done, go_ahead));
        return cs_cuda_sample(s, j);
    }
    CS_TRY(cs_cuda_advance(s, be->p.celsius, j, hh_done, s->nmech));
    MARK(5);
    CS_TRY(cs_cuda_detect(s, j));
    MARK(6);
    CS_TRY(cs_cuda_sample(s, j));
    MARK(7);
#undef MARK
    return CS_OK;
}

/* n steps without timers: through graphs of 2^b steps (captured when first needed; a small
 * network's step is a few microseconds of work, and launching its ~8 kernels one by one cost more
 * than that), or directly when graphs are off. */
static cs_status untimed_steps(cs_backend *be, int n) {
    cs_cuda_state *s = &be->s;
    if (!be->use_graphs) {
        for (int k = 0; k < n; ++k) {
            CS_TRY(step_kernels(be, 0, -1, 0, 0));
            CS_TRY(join_lanes(be)); /* detection reads the step from the context */
            CS_TRY(cs_cuda_next_steps(s, 1));
        }
        return CS_OK;
    }
    const void *bufs[4] = {s->samples, s->ev_local, s->ev_weight, s->ev_hi};
    if (memcmp(bufs, be->graph_bufs, sizeof bufs)) { /* a buffer a graph names has moved */
        cs__cuda_drop_graphs(be);
        memcpy(be->graph_bufs, bufs, sizeof bufs);
    }
    const int ahead = be->syn_ahead || be->cat_ahead;
    for (int b = be->graph_levels - 1; b >= 0; --b) {
        int len = 1 << b;
        while (n >= len) {
            int parity = s->v != be->v_first;
            void **g = &be->graph[parity][b];
            if (*g) { /* replay: the host's view of the swap moves on as the graph's steps do */
                CS_TRY(cs_cuda_graph_launch(*g, s->stream));
                if (!be->fused && (len & 1)) {
                    double *tmp = s->v;
                    s->v = s->rhs;
                    s->rhs = tmp;
                }
            } else {
                const double tc = cs_now();
                CS_TRY(quiesce(be)); /* a capture starts with nothing of an earlier epoch pending */
                CS_TRY(cs_cuda_capture_begin(s->stream));
                cs_status st = CS_OK;
                for (int j = 0; st == CS_OK && j < len; ++j) /* a graph's steps hand on the synapses */
                    st = step_kernels(be, j, -1, ahead && j > 0, ahead && j + 1 < len);
                if (st == CS_OK) st = join_lanes(be); /* a graph ends with its lanes joined */
                if (st == CS_OK) st = cs_cuda_next_steps(s, len);
                be->pending = 0;
                void *exec = NULL;
                cs_status st2 = cs_cuda_capture_end(s->stream, &exec);
                CS_TRY(st);
                CS_TRY(st2);
                *g = exec;
                be->host_capture += cs_now() - tc;
                be->host_captures++;
                CS_TRY(cs_cuda_graph_launch(*g, s->stream));
            }
            n -= len;
        }
    }
    return CS_OK;
}

/* The steps of an epoch of nsteps timed phase by phase for the profile: one in CS_TIMED_SHARE,
 * at least one, at most CS_TIMED_STEPS (CS_CUDA_TIMED_STEPS=N sets that most, 1..CS_TIMED_STEPS).
 * A timed step launches its kernels one by one between CUDA events, outside the graphs and the
 * side stream: with many small kernels (a circuit of Allen cells has ~40 a step) it takes ~2x an
 * untimed step, so timing 8 of an epoch's 20 steps (a 1 ms minimum delay) slowed the whole run,
 * and one in 16 of busyring × 1 024's 100-step epochs (each ~24 us longer, and the epoch's graphs
 * cut into runs of 15 steps) cost it ~7 % (session 31). */
static int timed_steps(cs_backend *be, int nsteps) {
    /* an epoch is timed when CS_TIMED_EVERY steps have passed since the last timed one's start
     * (the first is): the epochs of half the min delay (pipelined, 20 steps on the Allen network)
     * would otherwise time one step in 20 */
    if (be->since_timed > 0 && be->since_timed < CS_TIMED_EVERY) {
        be->since_timed += nsteps;
        return 0;
    }
    be->since_timed = nsteps;
    int most = CS_TIMED_STEPS;
    const char *e = getenv("CS_CUDA_TIMED_STEPS");
    if (e && atoi(e) >= 1 && atoi(e) <= CS_TIMED_STEPS) most = atoi(e);
    int n = nsteps / CS_TIMED_SHARE;
    if (n > most) n = most;
    if (n > nsteps) n = nsteps;
    return n < 1 ? 1 : n;
}

/* The epoch's kernels, after its events are staged (cuda_launch_epoch). */
static cs_status launch_steps(cs_backend *be, int64_t step0, int nsteps) {
    cs_cuda_state *s = &be->s;
    CS_TRY(cs_cuda_epoch_start(s, (long long)step0));
    if (be->epoch) { /* one launch, timed as a whole; its phases from block 0's clock */
        CS_TRY(cs_cuda_timer_record(be->timers, 0, s->stream));
        CS_TRY(cs_cuda_epoch_run(s, (long long)step0, nsteps, be->p.celsius));
        return cs_cuda_timer_record(be->timers, 1, s->stream);
    }

    /* a few steps, spread over the epoch, run directly between timer events (timed_steps) */
    const int ntime = timed_steps(be, nsteps), every = ntime ? nsteps / ntime : nsteps;
    be->ntimed = 0;
    for (int k = 0; k < nsteps;) {
        if (k % every == 0 && be->ntimed < ntime) {
            CS_TRY(step_kernels(be, 0, be->ntimed * CS_TIMED_MARKS, 0, 0));
            CS_TRY(cs_cuda_next_steps(s, 1));
            be->timed[be->ntimed++] = k++;
            continue;
        }
        int next = be->ntimed < ntime ? (k / every + 1) * every : nsteps;
        if (next > nsteps) next = nsteps;
        CS_TRY(untimed_steps(be, next - k));
        k = next;
    }
    return CS_OK;
}

static cs_status cuda_launch_epoch(cs_backend *be, int64_t step0, int nsteps) {
    cs_cuda_state *s = &be->s;
    const int stride = be->p.sample_stride;
    if (be->nlaunched - be->ncollected > 1)
        return cs_error_set(CS_ERR_INTERNAL, "GPU: a third epoch launched before the first was collected");
    const int e = (int)(be->nlaunched & 1);
    be->step0 = step0;
    be->nsteps = nsteps;
    be->rows = (int)((step0 + nsteps) / stride - step0 / stride);
    CS_TRY(ensure_rows(be, (size_t)be->rows + 1));
    const size_t nsample = (size_t)be->rows * (size_t)s->nprobe;
    if (nsample > be->slot[e].cap_samples) { /* slot e's last epoch was collected: free to move */
        CS_TRY(cs__cuda_grow_device((void **)&be->slot[e].samples, &be->slot[e].cap_samples, nsample,
                                    sizeof(double), "probe samples"));
    }
    const size_t nsyn = s->nsyn > 0 ? (size_t)s->nsyn : 1;
    if (nsteps > be->cap_ev_hi) {
        CS_TRY(quiesce(be));
        cs_cuda_free(s->ev_hi);
        s->ev_hi = NULL;
        be->cap_ev_hi = 0;
        CS_TRY(cs_cuda_alloc((void **)&s->ev_hi, nsyn * ((size_t)nsteps + 1) * sizeof(int), "event ranges"));
        be->cap_ev_hi = nsteps;
    }
    s->ev_stride = be->cap_ev_hi + 1; /* changes only with ev_hi's address (graphs are then dropped) */
    size_t due = 0;
    const double t0 = cs_now();
    CS_TRY(stage_events(be, step0, nsteps, &due));
    CS_TRY(cs_cuda_upload_async(s->ev_hi, be->ev_hi, nsyn * (size_t)s->ev_stride * sizeof(int), s->stream));
    const double t1 = cs_now();
    be->host_staged += t1 - t0;
    be->host_epochs++;
    be->timers = be->slot[e].timers;
    CS_TRY(launch_steps(be, step0, nsteps));
    /* the epoch's results into slot e, then its done event (cuda_collect_epoch) */
    CS_TRY(cs_cuda_save_results(s, be->slot[e].counters, be->slot[e].spike_time, be->slot[e].spike_gid,
                                be->slot[e].samples, nsample));
    CS_TRY(cs_cuda_timer_record(be->done, e, s->stream));
    be->slot[e].step0 = step0;
    be->slot[e].nsteps = nsteps;
    be->slot[e].rows = be->rows;
    be->slot[e].ntimed = be->ntimed;
    memcpy(be->slot[e].timed, be->timed, sizeof be->timed);
    be->nlaunched++;
    be->host_launch += cs_now() - t1;
    if (be->stage_ahead) CS_TRY(stage_ahead(be, step0 + nsteps, nsteps)); /* the GPU is busy meanwhile */
    return CS_OK;
}

/* the epoch kernel's time, shared among the phases as block 0's cycles were (not pipelined:
 * the phase cycles are the last epoch's) */
static cs_status epoch_profile(cs_backend *be, cs_profile *prof) {
    static const cs_phase phase_of[CS_CUDA_EPOCH_PHASES] = {CS_PHASE_EVENTS, CS_PHASE_CURRENT, CS_PHASE_ASSEMBLE,
                                                            CS_PHASE_SOLVE,  CS_PHASE_SOLVE,   CS_PHASE_UPDATE,
                                                            CS_PHASE_DETECT, CS_PHASE_SAMPLE};
    float ms = 0;
    long long cyc[CS_CUDA_EPOCH_PHASES];
    CS_TRY(cs_cuda_timer_elapsed(be->timers, 0, 1, &ms));
    CS_TRY(cs_cuda_download(cyc, be->s.epoch.phase_cycles, sizeof cyc));
    double total = 0;
    for (int p = 0; p < CS_CUDA_EPOCH_PHASES; ++p) total += (double)cyc[p];
    for (int p = 0; total > 0 && p < CS_CUDA_EPOCH_PHASES; ++p)
        prof->seconds[phase_of[p]] += 1e-3 * ms * (double)cyc[p] / total;
    const char *show = getenv("CS_EPOCH_CYCLES"); /* 1: block 0's cycles per step and phase, on stderr */
    if (show && !strcmp(show, "1") && be->nsteps > 0) {
        fprintf(stderr, "epoch kernel, cycles per step (block 0):");
        for (int p = 0; p < CS_CUDA_EPOCH_PHASES; ++p) fprintf(stderr, " %.0f", (double)cyc[p] / be->nsteps);
        fprintf(stderr, "; %.2f us per step\n", 1e3 * ms / be->nsteps);
    }
    return CS_OK;
}

/* The oldest launched epoch's results: its done event waited for (not the epoch launched after
 * it, which may be running), its slot copied back on the copy stream. */
static cs_status cuda_collect_epoch(cs_backend *be, cs_profile *prof, cs_epoch_result *res) {
    cs_cuda_state *s = &be->s;
    if (be->ncollected >= be->nlaunched) return cs_error_set(CS_ERR_INTERNAL, "GPU: no epoch to collect");
    const int e = (int)(be->ncollected++ & 1);
    const cs__cuda_slot *sl = &be->slot[e];
    CS_TRY(cs_cuda_timer_sync(be->done, e));
    static const cs_phase phase_of[CS_TIMED_MARKS - 1] = {CS_PHASE_EVENTS, CS_PHASE_CURRENT, CS_PHASE_ASSEMBLE,
                                                          CS_PHASE_SOLVE, CS_PHASE_UPDATE, CS_PHASE_DETECT,
                                                          CS_PHASE_SAMPLE};
    /* the host's part, less its waits for the GPU, whose time the GPU phases hold already
     * (big2000 × 8 000's profile gave event delivery 0.083 s of a 0.334 s run, 20 % of a step, while
     * its steps are ~97 % solve: by the code, the first spikes' wait for the epoch in flight;
     * session 27, not yet measured apart) */
    prof->seconds[CS_PHASE_EVENTS] += be->host_staged - be->host_waited - be->host_staged_counted;
    be->host_staged_counted = be->host_staged - be->host_waited;
    if (be->epoch) CS_TRY(epoch_profile(be, prof));
    if (!be->epoch && sl->ntimed) { /* a timed epoch: its steps' phases, per step */
        for (int k = 0; k + 1 < CS_TIMED_MARKS; ++k) be->phase_step[k] = 0;
        for (int j = 0; j < sl->ntimed; ++j)
            for (int k = 0; k + 1 < CS_TIMED_MARKS; ++k) {
                float ms;
                CS_TRY(cs_cuda_timer_elapsed(sl->timers, j * CS_TIMED_MARKS + k, j * CS_TIMED_MARKS + k + 1, &ms));
                be->phase_step[k] += 1e-3 * ms / sl->ntimed;
            }
    }
    for (int k = 0; !be->epoch && k + 1 < CS_TIMED_MARKS; ++k) /* an untimed one: the last timed one's */
        prof->seconds[phase_of[k]] += be->phase_step[k] * sl->nsteps;
    int counters[3];
    CS_TRY(cs_cuda_download_async(counters, sl->counters, sizeof counters, be->copy_stream));
    CS_TRY(cs_cuda_sync(be->copy_stream));
    if (counters[0] > s->cap_spike)
        return cs_error_set(CS_ERR_INTERNAL, "GPU: %d spikes in one epoch, more than the %d the buffer holds "
                                             "(%d per detector)", counters[0], s->cap_spike, CS_SPIKES_PER_DETECTOR);
    int ns = counters[0];
    CS_TRY(cs_cuda_download_async(be->spike_time, sl->spike_time, (size_t)ns * sizeof(double), be->copy_stream));
    CS_TRY(cs_cuda_download_async(be->spike_gid, sl->spike_gid, (size_t)ns * sizeof(int), be->copy_stream));
    CS_TRY(cs_cuda_download_async(be->samples, sl->samples, (size_t)sl->rows * (size_t)s->nprobe * sizeof(double),
                                  be->copy_stream));
    CS_TRY(cs_cuda_sync(be->copy_stream));
    for (int k = 0; k < ns; ++k) be->spikes[k] = (cs_spike){be->spike_time[k], (uint64_t)be->spike_gid[k]};
    *res = cs_epoch_result_of((size_t)ns, be->spikes, (size_t)sl->rows, be->samples);
    if (counters[1] != INT_MAX) {
        res->failed_cell = counters[2];
        res->failed_time = (double)(sl->step0 + counters[1] + 1) * be->p.dt;
    }
    return CS_OK;
}

static int cuda_pipelined(const cs_backend *be) { return be->pipelined; }

static const char *cuda_describe(const cs_backend *be) {
    static _Thread_local char text[2048];
    if (be->epoch) {
        snprintf(text, sizeof text, "GPU %s, %.1f MiB of device memory (%.0f B per compartment); Hines solver "
                 "'epoch': one persistent kernel per epoch, a block of %d threads per cell, its rows in %.1f KiB of "
                 "shared memory, solved chain by chain", be->device, be->mem_bytes / 1048576.0,
                 be->net->total_cv ? (double)be->mem_bytes / (double)be->net->total_cv : 0.0, be->s.epoch.threads,
                 be->s.epoch.smem / 1024.0);
        return text;
    }
    snprintf(text, sizeof text, "GPU %s, %.1f MiB of device memory (%.0f B per compartment); Hines solver '%s'%s (%s)",
             be->device, be->mem_bytes / 1048576.0,
             be->net->total_cv ? (double)be->mem_bytes / (double)be->net->total_cv : 0.0,
             cs_hines_gpu_plan_variant(be->plan), be->fused ? (be->shared_constants ? ", assembly fused into the solve, identical cells share their constants"
                                                : ", assembly fused into the solve") : "",
             cs_hines_gpu_plan_describe(be->plan));
    if (be->groups_sharing > 0) {
        const size_t len = strlen(text);
        snprintf(text + len, sizeof text - len, "; %lld groups of cells read another group's constants", be->groups_sharing);
        int warps = 0;
        const int slot_launches = cs_hines_gpu_plan_slot_constants(be->plan, &warps);
        const size_t len2 = strlen(text);
        if (slot_launches > 0)
            snprintf(text + len2, sizeof text - len2, " (once a row in %d launch%s' rings: up to %d warps a multiprocessor)",
                     slot_launches, slot_launches == 1 ? "" : "es", warps);
    }
    if (be->hh_node) {
        const size_t len = strlen(text);
        snprintf(text + len, sizeof text - len, "; hh's state update follows each launch of the step on its rows");
    }
    if (be->cat_ahead) {
        const size_t len = strlen(text);
        snprintf(text + len, sizeof text - len, "; %d catalogue synapse type%s updated ahead: each gives the next "
                 "step's events and current in its state update (a graph's first step excepted)", be->cat_ahead,
                 be->cat_ahead == 1 ? "" : "s");
    }
    if (be->after_solve) {
        const size_t len = strlen(text);
        snprintf(text + len, sizeof text - len, "; the state updates and detection in one launch after the solve%s",
                 be->syn_ahead ? ", which also gives the next step's expsyn events and currents (a graph's first step "
                                 "excepted)"
                 : be->events_current ? ", expsyn's events in its current's" : "");
    }
    return text;
}

static const cs_backend_ops cs__cuda_ops = {"cuda", cs__cuda_create, cuda_init, cuda_deliver, cuda_launch_epoch,
                                            cuda_collect_epoch, cs__cuda_destroy, cuda_describe, cuda_pipelined};

const cs_backend_ops *cs_backend_cuda(void) { return cs_cuda_device_count() > 0 ? &cs__cuda_ops : NULL; }

int cs_backend_cuda_devices(void) { return cs_cuda_device_count(); }

void cs_backend_cuda_identity(int device, char *buf, size_t len) { cs_cuda_identity(device, buf, len); }

const char *cs_backend_cuda_unavailable(void) { return "no CUDA device found on this machine"; }

const char *cs_backend_cuda_solver(const cs_backend_ops *ops, const cs_backend *b) {
    if (ops != &cs__cuda_ops || !b) return NULL;
    return b->epoch ? "epoch" : cs_hines_gpu_plan_variant(b->plan);
}

const char *cs_backend_cuda_resolve(const cs_backend_ops *ops, const cs_network_desc *net, const cs_backend_params *p) {
    return ops == &cs__cuda_ops ? cs__cuda_resolve(net, p) : NULL;
}

#endif
