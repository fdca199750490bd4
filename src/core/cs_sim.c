/* The simulation core. Time is cut into epochs no longer than the shortest connection delay:
 * within an epoch cells are independent (the backend runs them without synchronising), and
 * between epochs the spikes of the epoch are exchanged (cs_comm: a single process here; MPI
 * later) and turned into events for their targets, and the epoch's output is written. */
#include "cs_sim.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_artcell.h"
#include "cs_backend.h"
#include "cs_backend_choose.h"
#include "cs_build.h"
#include "cs_comm.h"
#include "cs_dist.h"
#include "cs_memsink.h"
#include "cs_output.h"
#include "cs_output_bmtk.h"
#include "cs_sim_internal.h"
#include "cs_version.h"

#define CS_MAX_EPOCH_MS 10.0 /* [ms] bound on an epoch without short delays: output cadence */

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static cs_status plan_time(cs_sim *s) {
    const cs_model *m = s->m;
    s->dt = s->o.dt > 0 ? s->o.dt : m->dt;
    s->tfinal = s->o.tfinal > 0 ? s->o.tfinal : m->tfinal;
    if (!(isfinite(s->dt) && s->dt > 0))
        return cs_error_set(CS_ERR_INVALID, "dt must be finite and > 0 (got %g ms)", s->dt);
    if (!(isfinite(s->tfinal) && s->tfinal > 0))
        return cs_error_set(CS_ERR_INVALID, "tfinal must be finite and > 0 (got %g ms)", s->tfinal);
    double n = round(s->tfinal / s->dt);
    if (n < 1 || n > 4e18)
        return cs_error_set(CS_ERR_INVALID, "tfinal %g ms / dt %g ms gives %g steps", s->tfinal, s->dt, n);
    s->nsteps = (int64_t)n;

    double min_delay = CS_MAX_EPOCH_MS;
    for (size_t k = 0; k < m->nconn; ++k)
        if (m->conns[k].delay < min_delay) min_delay = m->conns[k].delay;
    if (min_delay < s->dt)
        return cs_error_set(CS_ERR_INVALID, "%s: a connection delay of %g ms is shorter than dt = %g ms",
                            m->path, min_delay, s->dt);
    double e = floor(min_delay / s->dt * (1 + 1e-12));
    /* Over several ranks, epochs of at most half the min delay let the exchange of epoch k run
     * during epoch k+1: a spike at t >= start(k) is due at t + delay >= start(k+2). The
     * results do not depend on the epoch length (events wait in the backend's queue). */
    double half = floor(min_delay / (2 * s->dt) * (1 + 1e-12));
    if (s->nrank > 1 && half >= 1) {
        e = half;
        s->lag = 1;
    }
    s->epoch_steps = (int)(e < (double)s->nsteps ? e : (double)s->nsteps);
    s->half_epoch = (int)(half < (double)s->epoch_steps ? half : (double)s->epoch_steps);

    s->pop_stride = calloc((size_t)m->npop, sizeof *s->pop_stride);
    if (!s->pop_stride) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    int64_t g = 0;
    for (int p = 0; p < m->npop; ++p) {
        if (!m->pops[p].has_probes) continue;
        double iv = m->pops[p].probes.interval, r = round(iv / s->dt);
        if (r < 1 || fabs(r * s->dt - iv) > 1e-9 * iv)
            return cs_error_set(CS_ERR_INVALID,
                                "%s: population '%s': probe interval %g ms is not a whole multiple of dt = %g ms",
                                m->path, m->pops[p].name, iv, s->dt);
        s->pop_stride[p] = (int)r;
        g = gcd64(g, (int64_t)r);
    }
    s->base_stride = g > 0 ? (int)g : 1;
    return CS_OK;
}

/* Outgoing connections by source, as a CSR table. */
static int owned(const cs_sim *s, uint64_t gid) {
    return gid >= s->net.gid0 && gid - s->net.gid0 < s->net.nshare;
}

/* Connections to this rank's cells, by source, as a CSR table over every source gid. */
static cs_status index_connections(cs_sim *s) {
    const cs_model *m = s->m;
    size_t nc = (size_t)s->net.ncell_global;
    s->out_first = calloc(nc + 1, sizeof *s->out_first);
    s->out_conn = malloc((m->nconn ? m->nconn : 1) * sizeof *s->out_conn);
    if (!s->out_first || !s->out_conn) return cs_error_set(CS_ERR_NOMEM, "out of memory for connections");
    for (size_t k = 0; k < m->nconn; ++k)
        if (owned(s, m->conns[k].target)) s->out_first[m->conns[k].source + 1]++;
    for (size_t c = 0; c < nc; ++c) s->out_first[c + 1] += s->out_first[c];
    size_t *fill = calloc(nc + 1, sizeof *fill);
    if (!fill) return cs_error_set(CS_ERR_NOMEM, "out of memory for connections");
    for (size_t k = 0; k < m->nconn; ++k) {
        if (!owned(s, m->conns[k].target)) continue;
        size_t src = m->conns[k].source;
        s->out_conn[s->out_first[src] + fill[src]++] = k;
    }
    free(fill);
    return CS_OK;
}

static cs_status push_event(cs_sim *s, size_t *n, cs_target_event ev) {
    if (*n == s->cap_ev) {
        size_t nc = s->cap_ev ? 2 * s->cap_ev : 1024;
        cs_target_event *p = realloc(s->evbuf, nc * sizeof *p);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
        s->evbuf = p;
        s->cap_ev = nc;
    }
    s->evbuf[(*n)++] = ev;
    return CS_OK;
}

/* Synapse instance `syn` of this rank's cell gid (a cell with a morphology). */
static size_t syn_instance(const cs_sim *s, uint64_t gid, int syn) {
    return s->net.syn_instance[(size_t)s->net.local[gid - s->net.gid0] * (size_t)s->net.max_syn + (size_t)syn];
}

/* The synapse type of synapse syn of cell gid. */
static const cs_mech_type *syn_type(const cs_sim *s, uint64_t gid, int syn) {
    int index;
    const cs_population_spec *ps = &s->m->pops[cs__sim_gid_pop(s->m, gid, &index)];
    const cs_point_spec *sp = ps->artificial ? NULL : cs_population_synapse(ps, index, syn);
    return sp ? sp->type : NULL;
}

/* Weight vectors for the connections and model events to this rank's synapses whose type takes
 * them (cs_build.h): slots [0, nwconn) the connections', by model index, then the events'. */
static cs_status setup_weight_vectors(cs_sim *s) {
    const cs_model *m = s->m;
    size_t nc = 0, ne = 0;
    for (int pass = 0; pass < 2; ++pass) {
        nc = ne = 0;
        for (size_t k = 0; k < m->nconn; ++k) {
            const cs_connection *c = &m->conns[k];
            if (!owned(s, c->target) || s->net.local[c->target - s->net.gid0] < 0 ||
                !cs_mech_takes_vector(syn_type(s, c->target, c->synapse)))
                continue;
            if (pass) {
                const double *w = cs_model_conn_weights(m, k);
                double *dst = s->net.wvec + nc * CS_MAX_WEIGHTS;
                for (int j = 0; j < CS_MAX_WEIGHTS; ++j) dst[j] = w ? w[j] : j == 0 ? c->weight : 0.0;
                s->wconn[nc] = k;
                s->wvec_inst[nc] = syn_instance(s, c->target, c->synapse);
            }
            ++nc;
        }
        for (size_t k = 0; k < m->nevent; ++k) {
            const cs_event *e = &m->events[k];
            if (!owned(s, e->target) || s->net.local[e->target - s->net.gid0] < 0 ||
                !cs_mech_takes_vector(syn_type(s, e->target, e->synapse)))
                continue;
            if (pass) {
                double *dst = s->net.wvec + (nc + ne) * CS_MAX_WEIGHTS;
                for (int j = 0; j < CS_MAX_WEIGHTS; ++j) dst[j] = j == 0 ? e->weight : 0.0;
                s->wvec_inst[nc + ne] = syn_instance(s, e->target, e->synapse);
            }
            ++ne;
        }
        if (!pass) {
            s->net.nwvec = nc + ne;
            s->nwconn = nc;
            s->wconn = malloc((nc + 1) * sizeof *s->wconn);
            s->wvec_inst = malloc((nc + ne + 1) * sizeof *s->wvec_inst);
            s->net.wvec = calloc((nc + ne + 1) * CS_MAX_WEIGHTS, sizeof *s->net.wvec);
            if (!s->wconn || !s->wvec_inst || !s->net.wvec) return cs_error_set(CS_ERR_NOMEM, "out of memory");
            s->net.wvec_inst = s->wvec_inst;
        }
    }
    return CS_OK;
}

/* The weight vector of connection conn. */
static double *weight_vector(const cs_sim *s, size_t conn) {
    size_t lo = 0, hi = s->nwconn;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->wconn[mid] < conn) lo = mid + 1;
        else hi = mid;
    }
    return s->net.wvec + lo * CS_MAX_WEIGHTS;
}

/* An event for this rank's cell gid: to its synapse's queue in the backend, or to the artificial
 * cell's (through connection conn; conn SIZE_MAX: a model event, whose weight vector, where its
 * synapse takes one, is the next of *ev_slot). */
static cs_status target_event(cs_sim *s, size_t *nev, uint64_t gid, int syn, double t, double w, size_t conn,
                              size_t *ev_slot) {
    int64_t l = s->net.local[gid - s->net.gid0];
    if (l < 0) return cs_artcells_event(s->art, (size_t)(-1 - l), t, conn, w);
    double *wv = NULL;
    if (s->net.nwvec && cs_mech_takes_vector(syn_type(s, gid, syn))) /* the look-up only where vectors exist */
        wv = conn != SIZE_MAX ? weight_vector(s, conn) : s->net.wvec + (*ev_slot)++ * CS_MAX_WEIGHTS;
    return push_event(s, nev, (cs_target_event){t, syn_instance(s, gid, syn), w, wv});
}


/* Threads per rank: the cores this process may use, shared by the ranks of its host unless
 * the launcher already bound each rank to its own cores. */
static int default_threads(void) {
    int procs = omp_get_num_procs(), local = cs_comm_local_size();
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (local > 1 && procs >= online) procs /= local;
    return procs > 0 ? procs : 1;
}

/* This rank's share: partition, build, connections; the same gids on every rank. */
static cs_status build_share(cs_sim *s) {
    const cs_model *m = s->m;
    s->part = calloc((size_t)s->nrank + 1, sizeof *s->part);
    if (!s->part) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    /* the backend setup() picked ("auto": the GPU where there is one) sets the weights */
    CS_TRY(cs_build_partition(m, s->nrank, s->ops != &cs_backend_cpu, s->part));
    CS_TRY(cs_build_network_range(m, s->part[s->rank], s->part[s->rank + 1], &s->net));
    CS_TRY(index_connections(s));
    CS_TRY(setup_weight_vectors(s));
    s->pop_rows = calloc((size_t)m->npop, sizeof *s->pop_rows);
    s->pop_spikes = calloc((size_t)m->npop, sizeof *s->pop_spikes);
    if (!s->pop_rows || !s->pop_spikes) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    return CS_OK;
}

/* A parallel file: this rank's report columns, ascending within each population, and a
 * buffer for an epoch's rows of them (allocated now: nothing allocated during the run can
 * fail on one rank and leave the others in a collective write). */
static uint64_t *sort_cols_key;
static int cmp_col(const void *a, const void *b) {
    uint64_t x = sort_cols_key[*(const size_t *)a], y = sort_cols_key[*(const size_t *)b];
    return (x > y) - (x < y);
}

static cs_status plan_columns(cs_sim *s, size_t max_rows) {
    size_t np = s->net.nprobe;
    s->pcols = malloc((np + 1) * sizeof *s->pcols);
    s->pperm = malloc((np + 1) * sizeof *s->pperm);
    s->colbuf = malloc((max_rows * np + 1) * sizeof *s->colbuf);
    uint64_t *col = malloc((np + 1) * sizeof *col);
    if (!s->pcols || !s->pperm || !s->colbuf || !col) {
        free(col);
        return cs_error_set(CS_ERR_NOMEM, "out of memory for the report columns");
    }
    for (size_t k = 0; k < np; ++k) {
        s->pperm[k] = k;
        col[k] = (uint64_t)s->net.probes[k].col;
    }
    sort_cols_key = col;
    for (int r = 0; r < s->net.nreport; ++r) {
        size_t a = s->net.report_probe_first[r], b = s->net.report_probe_first[r + 1];
        if (b > a) qsort(s->pperm + a, b - a, sizeof *s->pperm, cmp_col);
    }
    sort_cols_key = NULL;
    for (size_t k = 0; k < np; ++k) s->pcols[k] = col[s->pperm[k]];
    free(col);
    return CS_OK;
}

static cs_status setup(cs_sim *s, const cs_model *m, const cs_run_options *o);
static cs_status create_backend(cs_sim *s, const cs_model *m, const cs_run_options *o);

static cs_status create(cs_sim *s, const cs_model *m, const cs_run_options *o) {
    cs_status st = setup(s, m, o);
    /* each stage's failure on any rank is agreed on before the next collective step */
    CS_TRY(cs_comm_agree(st));
    if (s->pario) {
        /* collective, before the expensive build, so an unwritable path fails at once */
        st = cs_output_open_parallel(o->output_path, cs_comm_mpi_handle(), &s->out);
        if (st == CS_ERR_UNSUPPORTED) { /* no parallel HDF5: rank 0 writes (the same on every rank) */
            cs_error_clear();
            s->pario = 0;
            st = s->rank == 0 ? cs_output_open(o->output_path, &s->out) : CS_OK;
        }
        CS_TRY(cs_comm_agree(st));
    }
    CS_TRY(cs_comm_agree(build_share(s)));
    size_t max_rows = (size_t)(s->epoch_steps / s->base_stride) + 2;
    CS_TRY(cs_dist_init(&s->dist, &s->net, s->pario ? 0 : max_rows));
    if (s->pario) CS_TRY(cs_comm_agree(plan_columns(s, max_rows)));
    uint64_t counts[3] = {s->net.total_cv, s->net.nsyn_own, s->net.nsyn_coalesced};
    CS_TRY(cs_comm_allreduce_u64(counts, 3, CS_COMM_SUM));
    s->total_cv = counts[0];
    s->nsyn_own = counts[1];
    s->nsyn_coalesced = counts[2];
    /* results in memory: rank 0 holds the gathered rows (a parallel file gathers none) */
    s->keep = (o->keep_spikes || o->keep_traces) && s->rank == 0;
    cs_memsink_init(&s->mem, (size_t)s->dist.np_global, o->keep_traces && !s->pario, o->trace_memory_limit);
    if (st == CS_OK) st = create_backend(s, m, o);
    /* the backend holds its own state now: what only its set-up read goes (docs/mpi.md) */
    if (st == CS_OK) cs_network_desc_release_setup(&s->net);
    CS_TRY(cs_comm_agree(st));
    /* rank 0 writes the file, or every rank takes part in writing it (docs/mpi.md) */
    if (s->out) st = cs__sim_describe_output(s);
    return cs_comm_agree(st);
}

/* Local set-up: backend, time plan, and (rank 0) the output file. */
static cs_status setup(cs_sim *s, const cs_model *m, const cs_run_options *o) {
    s->rank = cs_comm_rank();
    s->nrank = cs_comm_size();
    if (s->rank != 0) s->o.progress = 0;
    s->threads = o->threads > 0 ? o->threads : m->threads > 0 ? m->threads : default_threads();
    const char *backend = o->backend ? o->backend : m->backend;
    if (!strcmp(backend, "cpu")) {
        s->ops = &cs_backend_cpu;
    } else if (!strcmp(backend, "cuda")) {
        s->ops = cs_backend_cuda();
        if (!s->ops) return cs_error_set(CS_ERR_UNSUPPORTED, "backend 'cuda': %s", cs_backend_cuda_unavailable());
    } else if (!strcmp(backend, "auto")) {
        s->ops = cs_backend_cuda() ? cs_backend_cuda() : &cs_backend_cpu;
    } else {
        return cs_error_set(CS_ERR_INVALID, "unknown backend '%s' (expected cpu, cuda or auto)", backend);
    }
    CS_TRY(plan_time(s));
    /* open the output before the expensive build, so an unwritable path fails at once; over
     * several ranks every rank opens one file collectively (create()), unless
     * CABLESIM_MPI_OUTPUT=gather asks for rank 0's serial writer */
    const char *how = getenv("CABLESIM_MPI_OUTPUT");
    s->pario = o->output_path && s->nrank > 1 && !(how && !strcmp(how, "gather"));
    if (o->output_path && s->rank == 0 && !s->pario) CS_TRY(cs_output_open(o->output_path, &s->out));
    return CS_OK;
}

/* Over several ranks every rank runs rank 0's choice (docs/mpi.md): rank 0 alone times the
 * candidates ("auto"), on its own share of the cells, and broadcasts the backend and solver;
 * the others build that choice by name (nothing timed), so no two ranks run different
 * backends or solvers. Collective: `st` is this rank's status so far; every rank returns the
 * agreed one. */
static cs_status choose_on_rank0(cs_sim *s, const cs_backend_params *bp, const char *backend, int trial) {
    struct {
        char backend[16], solver[32];
    } pick;
    memset(&pick, 0, sizeof pick);
    cs_status st = CS_OK;
    if (s->rank == 0) {
        st = cs_backend_choose(&s->net, bp, backend, trial, &s->choice);
        if (st == CS_OK) {
            snprintf(pick.backend, sizeof pick.backend, "%s", s->choice.ops->name);
            snprintf(pick.solver, sizeof pick.solver, "%s", s->choice.solver);
        }
    }
    CS_TRY(cs_comm_agree(st));
    CS_TRY(cs_comm_bcast(&pick, sizeof pick, 0));
    if (s->rank == 0) {
        char r[sizeof s->choice.report];
        snprintf(r, sizeof r, "rank 0's choice for all %d ranks (timed on its own share): %.940s", s->nrank,
                 s->choice.report);
        memcpy(s->choice.report, r, sizeof r);
        return CS_OK;
    }
    cs_backend_params named = *bp;
    named.solver = pick.solver[0] ? pick.solver : NULL;
    st = cs_backend_choose(&s->net, &named, pick.backend, trial, &s->choice);
    if (st == CS_OK)
        snprintf(s->choice.report, sizeof s->choice.report, "rank 0's choice for all %d ranks: %s %s", s->nrank,
                 pick.backend, pick.solver);
    return st;
}

static cs_status create_backend(cs_sim *s, const cs_model *m, const cs_run_options *o) {
    const char *backend = o->backend ? o->backend : m->backend;
    cs_backend_params bp = {o->solver, s->dt, m->celsius, s->threads, s->base_stride, 0};
    /* one rank per GPU: the ranks of a host take its GPUs in turn */
    int ndev = cs_backend_cuda_devices();
    bp.device = ndev > 0 ? cs_comm_local_rank() % ndev : 0;
    /* "auto" measures its candidates on this network, for up to an epoch of steps each. The GPU
     * times CS_TIMED_STEPS steps of every epoch phase by phase, without its CUDA graphs: in trial
     * epochs of 32 steps those were a quarter of the steps, against ~4 % in the 200-step epochs
     * of the 256-cell ring, which made the GPU look 1.4x slower than it ran there (H200,
     * bench/NOTES.md, session 12). Up to 128 steps keep them near the run's share. */
    int trial = s->epoch_steps < 128 ? s->epoch_steps : 128;
    if (s->nrank == 1 && s->net.ncell == 0) { /* artificial cells only: nothing for a GPU */
        memset(&s->choice, 0, sizeof s->choice);
        s->choice.ops = &cs_backend_cpu;
        snprintf(s->choice.report, sizeof s->choice.report, "no cell with a morphology: the CPU (no trial)");
    } else if (s->nrank == 1) {
        CS_TRY(cs_backend_choose(&s->net, &bp, backend, trial, &s->choice));
    } else {
        CS_TRY(choose_on_rank0(s, &bp, backend, trial));
    }
    /* a rank whose share is artificial cells only builds no GPU backend (cs_artcell.h) */
    if (s->net.ncell == 0) s->choice.ops = &cs_backend_cpu;
    s->ops = s->choice.ops;
    if (s->choice.solver[0]) bp.solver = s->choice.solver;
    CS_TRY(s->ops->create(&s->net, &bp, &s->be));
    /* one process on a GPU: epochs of half the min delay, each launched behind the one running,
     * so that a spike of epoch k (due after epoch k + 1) is exchanged while epoch k + 1 runs */
    if (s->nrank == 1 && s->half_epoch >= 1 && s->ops->pipelined && s->ops->pipelined(s->be)) {
        s->pipelined = 1;
        s->epoch_steps = s->half_epoch;
    }
    return cs_artcells_create(m, &s->net, m->celsius, s->dt, &s->art);
}

cs_status cs_sim_create(const cs_model *m, const cs_run_options *o, cs_sim **out) {
    *out = NULL;
    cs_sim *s = calloc(1, sizeof *s);
    if (!s) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    s->m = m;
    s->o = *o;
    s->finalized = -1;
    cs_status st = create(s, m, o);
    if (st != CS_OK) {
        /* nothing was simulated: leave no empty output file behind */
        if (s->out) {
            cs_output_close(s->out, 0);
            s->out = NULL;
            if (s->rank == 0) remove(o->output_path);
        }
        cs_sim_destroy(s);
        return st;
    }
    *out = s;
    return CS_OK;
}

/* Every rank's spikes of an epoch, in any order (the gather's, the GPU's atomics'): as events,
 * to this rank's cells. Only spikes with a target here cost more than a look-up, and nothing is
 * sorted: the backends order their queued events totally (cs_target_event_compare: time,
 * instance, weight), so what a cell receives does not depend on the order of the spikes or on
 * the partition, and the writer sorts each population's spikes by (time, id) for the file. */
static cs_status exchange(cs_sim *s, const cs_spike *sp, size_t n) {
    const cs_model *m = s->m;
    size_t nev = 0;
    for (size_t k = 0; k < n; ++k)
        for (size_t c = s->out_first[sp[k].gid]; c < s->out_first[sp[k].gid + 1]; ++c) {
            const cs_connection *cn = &m->conns[s->out_conn[c]];
            CS_TRY(target_event(s, &nev, cn->target, cn->synapse, sp[k].time + cn->delay, cn->weight, s->out_conn[c],
                                NULL));
        }
    CS_TRY(s->ops->deliver(s->be, nev, s->evbuf));
    s->nspike += n;
    return CS_OK;
}

/* The progress line of one cs_sim_run_to call, from step0 to target. */
static void progress(const cs_sim *s, int64_t step0, int64_t target, double start, double *last, int final) {
    double now = cs_now();
    if (!s->o.progress || (!final && now - *last < 1.0) || now - start < 1.0) return;
    if (!final && s->step >= target) return; /* the final call prints the last line, once */
    *last = now;
    double frac = target > step0 ? (double)(s->step - step0) / (double)(target - step0) : 1.0, el = now - start;
    double eta = frac > 0 ? el * (1 - frac) / frac : 0;
    int tty = isatty(fileno(stderr));
    fprintf(stderr, "%s[%3.0f%%] t = %.1f / %.1f ms  spikes %llu  elapsed %.1f s  remaining %.1f s%s",
            tty ? "\r" : "", 100 * frac, (double)s->step * s->dt, (double)target * s->dt,
            (unsigned long long)s->nspike, el, eta, tty && !final ? "   " : "\n");
    fflush(stderr);
}

/* Copy an epoch's spikes and samples out of the backend, which may reuse its buffers as soon
 * as the next epoch is launched. */
static cs_status keep_results(cs_sim *s, const cs_epoch_result *res) {
    size_t ns = res->nrow * s->net.nprobe;
    if (res->nspike > s->cap_spk) {
        cs_spike *p = realloc(s->spk, res->nspike * sizeof *p);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for spikes");
        s->spk = p;
        s->cap_spk = res->nspike;
    }
    if (ns > s->cap_smp) {
        double *p = realloc(s->smp, ns * sizeof *p);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for samples");
        s->smp = p;
        s->cap_smp = ns;
    }
    if (res->nspike) memcpy(s->spk, res->spikes, res->nspike * sizeof *s->spk);
    /* backends number their cells locally */
    for (size_t k = 0; k < res->nspike; ++k) s->spk[k].gid = s->net.cells[s->spk[k].gid].gid;
    if (ns) memcpy(s->smp, res->samples, ns * sizeof *s->smp);
    s->nspk = res->nspike;
    s->nrow = res->nrow;
    return CS_OK;
}

/* The initial state: row 0 of the samples and the external events (kicks) to this rank's
 * cells, which are known in advance. Once, at the first cs_sim_run_to. */
static cs_status begin_run(cs_sim *s) {
    const cs_model *m = s->m;
    cs_epoch_result res;
    cs_status loc = s->ops->init(s->be, &res);
    CS_TRY(cs_comm_agree(loc));
    CS_TRY(cs__sim_write_samples(s, 0, res.nrow, res.samples));
    size_t nev = 0, ev_slot = s->nwconn;
    if (loc == CS_OK) loc = cs_artcells_init(s->art);
    for (size_t k = 0; k < m->nevent && loc == CS_OK; ++k)
        if (owned(s, m->events[k].target))
            loc = target_event(s, &nev, m->events[k].target, m->events[k].synapse, m->events[k].time,
                               m->events[k].weight, SIZE_MAX, &ev_slot);
    if (loc == CS_OK) loc = s->ops->deliver(s->be, nev, s->evbuf);
    s->row = 1;
    s->started = 1;
    s->last_flush = cs_now();
    /* what a crash loses: at most this much wall time of output. CABLESIM_FLUSH_SECONDS sets it
     * (tests that fill the disk at chosen sizes need a layout that does not depend on speed) */
    const char *every = getenv("CABLESIM_FLUSH_SECONDS");
    s->flush_every = every && *every && atof(every) > 0 ? atof(every) : 1.0;
    return cs_comm_agree(loc);
}

/* The steps of the epoch that starts at step0, in a run to target. */
static int epoch_length(const cs_sim *s, int64_t step0, int64_t target) {
    return (int)(target - step0 < s->epoch_steps ? target - step0 : s->epoch_steps);
}

/* The time loop, from s->step to `target` (<= s->nsteps). Every rank runs the same epochs; a
 * failure on one rank (a NaN, an output error) is agreed on at the next epoch boundary, so
 * every rank returns the same error. Epochs are cut at `target`: the results do not depend on
 * where epochs end (events wait in the backend's queue), so a run continued from here gives
 * what one call would have given. No epoch is in flight when it returns. */
static cs_status advance(cs_sim *s, int64_t target) {
    const cs_model *m = s->m;
    cs_epoch_result res;
    cs_status loc = CS_OK;
    double start = cs_now(), last = start;
    int64_t step0 = s->step;
    int n = epoch_length(s, s->step, target);
    if (n > 0) loc = s->ops->launch_epoch(s->be, s->step, n);
    while (n > 0) {
        /* pipelined: the next epoch goes behind this one before it is collected; its events are
         * all known, since this epoch's spikes are due after it (epochs of half the min delay) */
        const int next = epoch_length(s, s->step + n, target);
        if (s->pipelined && loc == CS_OK && next > 0) loc = s->ops->launch_epoch(s->be, s->step + n, next);
        if (loc == CS_OK) loc = s->ops->collect_epoch(s->be, &s->prof, &res);
        s->step += n;
        if (loc == CS_OK && res.failed_cell >= 0) {
            const cs_cell_desc *c = &s->net.cells[res.failed_cell];
            loc = cs_error_set(CS_ERR_NUMERIC,
                               "cell %llu (population '%s', cell %d): the voltage became NaN, infinite or out of range "
                               "(|V| > %g mV) at t = %.4f ms; check the model's parameters or try a smaller dt",
                               (unsigned long long)c->gid, m->pops[c->pop].name, c->index, CS_V_LIMIT,
                               res.failed_time);
        }
        if (loc == CS_OK) loc = keep_results(s, &res);
        /* the artificial cells' events due by the epoch's end + dt/2 (cs_artcell.h) */
        if (loc == CS_OK) {
            double ta = cs_now();
            loc = cs_artcells_run(s->art, ((double)s->step + 0.5) * s->dt, &s->spk, &s->nspk, &s->cap_spk);
            s->prof.seconds[CS_PHASE_EVENTS] += cs_now() - ta;
        }
        if (loc == CS_OK) loc = s->werr;
        double t0 = cs_now();
        /* agree, and start gathering this epoch's spikes; without lag they become the next
         * epoch's events before it starts, with lag those of the previous epoch do, while
         * this epoch's travel during the next one */
        CS_TRY(cs_dist_start(&s->dist, loc, s->spk, s->nspk));
        cs_spike *sp;
        size_t ns;
        CS_TRY(cs_dist_finish(&s->dist, s->lag, &sp, &ns));
        loc = exchange(s, sp, ns);
        n = next;
        double t1 = cs_now();
        if (!s->pipelined && loc == CS_OK && n > 0) loc = s->ops->launch_epoch(s->be, s->step, n);
        /* ... and the output is written while the next epoch runs (on a GPU) */
        double t2 = cs_now();
        /* a parallel file: every rank writes, whatever its own state (collective) */
        if (loc == CS_OK || s->pario) {
            cs_status w = cs__sim_write_spikes(s, sp, ns);
            if (loc == CS_OK) loc = w;
        }
        cs_status w = cs__sim_write_samples(s, s->row, s->nrow, s->smp); /* collective: every rank takes part */
        if (loc == CS_OK) loc = w;
        s->row += (int64_t)s->nrow;
        int flush = t2 - s->last_flush > s->flush_every;
        if (s->pario) CS_TRY(cs_comm_bcast(&flush, sizeof flush, 0)); /* rank 0's clock decides */
        if (s->out && s->werr == CS_OK && flush) {
            s->werr = cs_output_flush(s->out);
            s->last_flush = t2;
        }
        s->prof.seconds[CS_PHASE_EXCHANGE] += t1 - t0;
        s->prof.seconds[CS_PHASE_OUTPUT] += cs_now() - t2;
        progress(s, step0, target, start, &last, 0);
    }
    if (s->pario) loc = cs_comm_agree(loc); /* the last spikes are written collectively */
    int end = s->step == s->nsteps;
    if (end && s->lag && loc == CS_OK) {
        /* the last epoch's spikes: to the file (their events fall past tfinal). A run paused
         * before tfinal leaves them in flight: the next epoch's exchange receives them. */
        double t0 = cs_now();
        cs_spike *sp;
        size_t ns;
        CS_TRY(cs_dist_finish(&s->dist, 0, &sp, &ns));
        loc = exchange(s, sp, ns);
        s->prof.seconds[CS_PHASE_EXCHANGE] += cs_now() - t0;
        if (loc == CS_OK) loc = cs__sim_write_spikes(s, sp, ns);
    }
    CS_TRY(cs_comm_agree(loc != CS_OK ? loc : s->werr));
    s->wall += cs_now() - start;
    progress(s, step0, target, start, &last, 1);
    if (!end || s->finalized == s->step) return CS_OK;
    s->finalized = s->step;
    /* the profile over ranks: mean in s->prof, and min and max (once: several ranks never
     * run past their tfinal) */
    s->prof_min = s->prof_max = s->prof;
    if (s->nrank > 1) {
        CS_TRY(cs_comm_allreduce_double(s->prof.seconds, CS_PHASE_COUNT, CS_COMM_SUM));
        CS_TRY(cs_comm_allreduce_double(s->prof_min.seconds, CS_PHASE_COUNT, CS_COMM_MIN));
        CS_TRY(cs_comm_allreduce_double(s->prof_max.seconds, CS_PHASE_COUNT, CS_COMM_MAX));
        for (int k = 0; k < CS_PHASE_COUNT; ++k) s->prof.seconds[k] /= s->nrank;
        CS_TRY(cs_comm_allreduce_double(&s->wall, 1, CS_COMM_MAX));
    }
    return CS_OK;
}

cs_status cs_sim_run_to(cs_sim *s, double t) {
    if (s->failed != CS_OK) return cs_error_set(s->failed, "%s", s->failmsg);
    if (!(isfinite(t) && t >= 0))
        return cs_error_set(CS_ERR_INVALID, "run to t = %g ms: expected a finite time >= 0", t);
    double n = round(t / s->dt);
    if (n > 4e18) return cs_error_set(CS_ERR_INVALID, "run to t = %g ms: %g steps of dt = %g ms", t, n, s->dt);
    int64_t target = (int64_t)n;
    if (target < s->step)
        return cs_error_set(CS_ERR_INVALID, "run to t = %g ms: the simulation is already at t = %g ms", t,
                            (double)s->step * s->dt);
    if (target > s->nsteps) {
        if (s->o.output_path)
            return cs_error_set(CS_ERR_INVALID,
                                "run to t = %g ms: past tfinal = %g ms, the end of the output file's time axis "
                                "(set tfinal when creating the simulation)", t, s->tfinal);
        if (s->nrank > 1)
            return cs_error_set(CS_ERR_INVALID, "run to t = %g ms: past tfinal = %g ms on %d ranks", t, s->tfinal,
                                s->nrank);
        s->nsteps = target; /* nothing is sized by tfinal without a file: the run goes on */
        s->tfinal = t;
    }
    if (s->started && target == s->step) return CS_OK;
    cs_status st = CS_OK;
    if (s->keep) st = cs_memsink_reserve_rows(&s->mem, (size_t)(target / s->base_stride) + 1);
    st = cs_comm_agree(st); /* rank 0 keeps the results; every rank stops */
    if (st == CS_OK && !s->started) st = begin_run(s);
    if (st == CS_OK) st = advance(s, target);
    if (st == CS_OK && s->o.output_path && s->step == s->nsteps) st = cs_comm_agree(cs__sim_finish_output(s, 1));
    if (st != CS_OK) {
        if (s->out) {
            const char *path = s->o.output_path;
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", cs_error_message());
            cs__sim_finish_output(s, 0);
            cs_error_clear();
            cs_error_set(st, "%s (output %s is marked incomplete)", msg, path);
        }
        s->failed = st;
        snprintf(s->failmsg, sizeof s->failmsg, "%s", cs_error_message());
    }
    return st;
}

cs_status cs_sim_run(cs_sim *s) { return cs_sim_run_to(s, s->tfinal); }

void cs_sim_set_progress(cs_sim *s, int on) { s->o.progress = on && s->rank == 0; }

void cs_sim_destroy(cs_sim *s) {
    if (!s) return;
    if (s->out) cs_output_close(s->out, 0);
    if (s->be) s->ops->destroy(s->be);
    cs_artcells_destroy(s->art);
    free(s->wconn);
    free(s->wvec_inst);
    free(s->net.wvec); /* the core's (cs_build.h), before the description goes */
    s->net.wvec = NULL;
    cs_network_desc_free(&s->net);
    cs_dist_free(&s->dist);
    free(s->part);
    free(s->pop_stride);
    free(s->out_first);
    free(s->out_conn);
    free(s->evbuf);
    free(s->pop_rows);
    free(s->pop_spikes);
    free(s->spk);
    free(s->smp);
    free(s->pcols);
    free(s->pperm);
    free(s->colbuf);
    cs_memsink_free(&s->mem);
    free(s);
}

void cs_sim_get_stats(const cs_sim *s, cs_sim_stats *st) {
    st->ncell = s->net.ncell_global;
    st->ncv = s->total_cv;
    st->nsteps = s->nsteps;
    st->step = s->step;
    st->dt = s->dt;
    st->tfinal = s->tfinal;
    st->nspike = s->nspike;
    st->wall_seconds = s->wall;
    st->threads = s->threads;
    st->backend = s->ops->name;
    st->profile = s->prof;
    st->nsyn = s->nsyn_own;
    st->nsyn_instances = s->nsyn_own - s->nsyn_coalesced;
}

/* Over several ranks: the partition, the exchange, and every phase's min / mean / max. */
static void print_ranks(const cs_sim *s, FILE *f) {
    const cs_dist *d = &s->dist;
    fprintf(f, "  %d ranks (this is rank %d: gids [%llu, %llu)); spike exchange every %g ms, %s\n", s->nrank,
            s->rank, (unsigned long long)s->part[s->rank], (unsigned long long)s->part[s->rank + 1],
            s->epoch_steps * s->dt,
            s->lag ? "overlapped with the next epoch (Iallgatherv)" : "blocking (min delay < 2 dt)");
    fprintf(f, "  exchange on this rank: %llu epochs, %.4f s waiting, %.4f s in flight%s\n",
            (unsigned long long)d->nexchange, d->wait, d->flight,
            s->lag ? " (hidden behind an epoch's computation)" : "");
    fprintf(f, "  per-rank phase seconds   %10s %10s %10s\n", "min", "mean", "max");
    for (int k = 0; k < CS_PHASE_COUNT; ++k)
        fprintf(f, "    %-22s %10.4f %10.4f %10.4f\n", cs_phase_names[k], s->prof_min.seconds[k], s->prof.seconds[k],
                s->prof_max.seconds[k]);
}

void cs_sim_print_summary(const cs_sim *s, FILE *f) {
    const cs_model *m = s->m;
    double cs = (double)s->total_cv * (double)s->nsteps;
    fprintf(f, "cablesim %s: %s\n", CS_VERSION_STRING, m->path);
    fprintf(f, "  %llu cells, %llu compartments, %lld steps of %g ms to %g ms, backend %s, %d thread%s\n",
            (unsigned long long)s->net.ncell_global, (unsigned long long)s->total_cv, (long long)s->nsteps,
            s->dt, s->tfinal, s->ops->name, s->threads, s->threads == 1 ? "" : "s");
    fprintf(f, "  %s\n", s->ops->describe(s->be));
    if (s->choice.trial_seconds > 0) fprintf(f, "  %s\n", s->choice.report);
    /* one line per population of the output: a SONATA population's node types (and the groups
     * of its nodes that different reports record) are internal groups, summed here */
    for (int p = 0; p < m->npop; ++p) {
        if (cs__sim_first_of_output(m, p) != p) continue;
        const char *name = cs_population_output_name(&m->pops[p]);
        long long cells = 0, rows = 0, groups = 0;
        unsigned long long spikes = 0;
        for (int q = p; q < m->npop; ++q)
            if (!strcmp(cs_population_output_name(&m->pops[q]), name)) {
                cells += m->pops[q].count;
                spikes += s->pop_spikes[q];
                rows = s->pop_rows[q] > rows ? s->pop_rows[q] : rows; /* every sampled group has the same rows */
                ++groups;
            }
        fprintf(f, "  population %-12s %8lld cells %10llu spikes  %8lld sample rows", name, cells, spikes, rows);
        if (groups > 1) fprintf(f, "  (%lld groups of node types and reports)", groups);
        fputc('\n', f);
    }
    if (s->nsyn_coalesced)
        fprintf(f, "  synapses: %llu of the cells' own in %llu mechanism instances (coalesced: a linear type "
                   "at one compartment with equal parameters; --separate-synapses keeps them apart)\n",
                (unsigned long long)s->nsyn_own, (unsigned long long)(s->nsyn_own - s->nsyn_coalesced));
    fprintf(f, "  run time %.6g s: %.3g compartment-steps per second\n", s->wall,
            s->wall > 0 ? cs / s->wall : 0.0);
    if (s->o.output_path) fprintf(f, "  output: %s\n", s->o.output_path);
    if (s->nrank > 1) print_ranks(s, f);
    cs_profile_print(&s->prof, s->wall, s->threads, s->ops->describe(s->be), f);
}

const cs_memsink *cs_sim_memory(const cs_sim *s) { return &s->mem; }

double cs_sim_sample_interval(const cs_sim *s) { return s->base_stride * s->dt; }

size_t cs_sim_probe_count(const cs_sim *s) { return (size_t)s->dist.np_global; }

void cs_sim_probe_info(const cs_sim *s, size_t column, cs_sim_probe *p) {
    const cs_model *m = s->m;
    int r = 0;
    while (r + 1 < s->net.nreport && column >= (size_t)s->dist.report_first[r + 1]) ++r;
    int pop = s->net.nreport ? s->net.reports[r].pop : 0;
    const cs_population_spec *ps = &m->pops[pop];
    size_t k = s->net.nreport ? column - (size_t)s->dist.report_first[r] : column;
    int nloc = ps->probes.nloc > 0 ? ps->probes.nloc : 1;
    p->pop = pop;
    p->index = cs_probe_cell(ps, (int)(k / (size_t)nloc));
    p->gid = ps->first_gid + (uint64_t)p->index;
    p->loc = ps->has_probes ? ps->probes.locs[k % (size_t)nloc] : (cs_location){0, 0.0};
    p->cv = s->dist.node ? s->dist.node[column] : 0;
    p->variable = s->net.nreport ? s->net.reports[r].var->name : "v";
    p->unit = s->net.nreport ? s->net.reports[r].var->unit : "mV";
}

const char *cs_sim_backend_detail(const cs_sim *s) { return s->ops->describe(s->be); }
