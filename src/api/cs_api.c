/* The public C API (cablesim.h) over the model reader and the simulation core. */
#include "cablesim.h"

#include <stdlib.h>
#include <string.h>

#include "cs_comm.h"
#include "cs_error.h"
#include "cs_front.h"
#include "cs_model.h"
#include "cs_profile.h"
#include "cs_sim.h"
#include "cs_version.h"

struct cs_simulation {
    cs_model model;
    int has_model;
    cs_sim *sim;
    char *output_path, *backend, *solver; /* owned copies: the core keeps the pointers */
};

/* The part of a caller's struct that this build knows: callers compiled against an older,
 * shorter struct leave the newer fields at their defaults. */
#define CS__SIZED_COPY(dst, src)                                                  \
    do {                                                                          \
        size_t cs__n = (src)->size < sizeof *(dst) ? (src)->size : sizeof *(dst); \
        memcpy((dst), (src), cs__n);                                              \
        (dst)->size = sizeof *(dst);                                              \
    } while (0)

void cs_simulation_options_init(cs_simulation_options *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

static char *dup_or_null(const char *s, int *failed) {
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *failed = 1;
    return d;
}

/* Take the model (already in h->model), copy the options and build the simulation. */
static int create(cs_simulation *h, const cs_simulation_options *given, cs_simulation **out) {
    cs_simulation_options o;
    cs_simulation_options_init(&o);
    if (given) {
        if (given->size < sizeof(size_t)) {
            cs_simulation_free(h);
            return cs_error_set(CS_ERR_INVALID, "cs_simulation_options: size not set (use cs_simulation_options_init)");
        }
        CS__SIZED_COPY(&o, given);
    }
    int nomem = 0;
    h->output_path = dup_or_null(o.output_path, &nomem);
    h->backend = dup_or_null(o.backend, &nomem);
    h->solver = dup_or_null(o.solver, &nomem);
    if (nomem) {
        cs_simulation_free(h);
        return cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    if (o.report_bits != 0 && o.report_bits != 32 && o.report_bits != 64) {
        cs_simulation_free(h);
        return cs_error_set(CS_ERR_INVALID, "report precision: expected 32 or 64 bits, got %d", o.report_bits);
    }
    if (o.threads < 0 || o.threads > 4096) {
        cs_simulation_free(h);
        return cs_error_set(CS_ERR_INVALID, "threads: expected an integer in [1, 4096], got %d", o.threads);
    }
    cs_run_options ro = {.output_path = h->output_path, .threads = o.threads, .tfinal = o.tfinal, .dt = o.dt,
                         .backend = h->backend, .solver = h->solver, .report_bits = o.report_bits,
                         .progress = o.progress, .keep_spikes = o.keep_spikes, .keep_traces = o.keep_traces,
                         .trace_memory_limit = o.trace_memory_limit};
    if (o.separate_synapses) h->model.separate_synapses = 1;
    cs_status st = cs_sim_create(&h->model, &ro, &h->sim);
    if (st != CS_OK) {
        cs_simulation_free(h);
        return st;
    }
    *out = h;
    return CS_OK;
}

/* The model read (st: how that went) becomes h's, or h goes: over MPI a model one rank cannot
 * read stops them all. */
static int adopt_model(cs_simulation *h, cs_status st, const cs_simulation_options *o, cs_simulation **out) {
    cs_status agreed = cs_comm_agree(st);
    if (agreed != CS_OK) {
        if (st == CS_OK) cs_model_free(&h->model);
        free(h);
        return agreed;
    }
    h->has_model = 1;
    return create(h, o, out);
}

int cs_simulation_create_file(const char *path, const cs_simulation_options *o, cs_simulation **out) {
    cs_error_clear();
    if (!out) return cs_error_set(CS_ERR_INVALID, "cs_simulation_create_file: out is NULL");
    *out = NULL;
    cs_simulation *h = calloc(1, sizeof *h);
    if (!h) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    return adopt_model(h, path ? cs_front_load(path, &h->model) : cs_model_load_default(&h->model), o, out);
}

int cs_simulation_create_json(const char *json, const char *name, const char *base_dir,
                              const cs_simulation_options *o, cs_simulation **out) {
    cs_error_clear();
    if (!out) return cs_error_set(CS_ERR_INVALID, "cs_simulation_create_json: out is NULL");
    *out = NULL;
    if (!json) return cs_error_set(CS_ERR_INVALID, "cs_simulation_create_json: json is NULL");
    cs_simulation *h = calloc(1, sizeof *h);
    if (!h) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    return adopt_model(h, cs_model_parse(json, name ? name : "<json>", base_dir ? base_dir : ".", &h->model), o, out);
}

int cs_model_check_file(const char *path) {
    cs_error_clear();
    if (!path) return cs_error_set(CS_ERR_INVALID, "cs_model_check_file: path is NULL");
    cs_model m;
    cs_status st = cs_front_load(path, &m);
    if (st == CS_OK) cs_model_free(&m);
    return st;
}

int cs_model_output_path(const char *path, char *out, size_t n) {
    cs_error_clear();
    if (!path || !out || !n) return cs_error_set(CS_ERR_INVALID, "cs_model_output_path: NULL argument");
    return cs_front_output(path, out, n);
}

int cs_model_check_json(const char *json, const char *name, const char *base_dir) {
    cs_error_clear();
    if (!json) return cs_error_set(CS_ERR_INVALID, "cs_model_check_json: json is NULL");
    cs_model m;
    cs_status st = cs_model_parse(json, name ? name : "<json>", base_dir ? base_dir : ".", &m);
    if (st == CS_OK) cs_model_free(&m);
    return st;
}

int cs_simulation_run(cs_simulation *sim, double t) {
    cs_error_clear();
    if (!sim) return cs_error_set(CS_ERR_INVALID, "cs_simulation_run: sim is NULL");
    return cs_sim_run_to(sim->sim, t);
}

int cs_simulation_set_progress(cs_simulation *sim, int on) {
    cs_error_clear();
    if (!sim) return cs_error_set(CS_ERR_INVALID, "cs_simulation_set_progress: sim is NULL");
    cs_sim_set_progress(sim->sim, on);
    return CS_OK;
}

int cs_simulation_get_info(const cs_simulation *sim, cs_simulation_info *info) {
    cs_error_clear();
    if (!sim || !info || info->size < sizeof(size_t))
        return cs_error_set(CS_ERR_INVALID, "cs_simulation_get_info: NULL argument or size not set");
    cs_sim_stats st;
    cs_sim_get_stats(sim->sim, &st);
    const cs_memsink *mem = cs_sim_memory(sim->sim);
    cs_simulation_info i = {
        .size = sizeof i,
        .time = (double)st.step * st.dt,
        .dt = st.dt,
        .tfinal = st.tfinal,
        .steps = st.step,
        .cells = st.ncell,
        .compartments = st.ncv,
        .spikes = st.nspike,
        .threads = st.threads,
        .backend = st.backend,
        .backend_detail = cs_sim_backend_detail(sim->sim),
        .wall_seconds = st.wall_seconds,
        .probes = cs_sim_probe_count(sim->sim),
        .trace_rows = mem->nrow,
        .sample_interval = cs_sim_sample_interval(sim->sim),
        .kept_spikes = mem->nspike,
        .synapses = st.nsyn,
        .synapse_instances = st.nsyn_instances,
    };
    size_t n = info->size < sizeof i ? info->size : sizeof i;
    memcpy(info, &i, n);
    info->size = n;
    return CS_OK;
}

static const cs_memsink *sort_key;
static int cmp_spike(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double tx = sort_key->time[x], ty = sort_key->time[y];
    if (tx != ty) return tx < ty ? -1 : 1;
    uint64_t gx = sort_key->gid[x], gy = sort_key->gid[y];
    return (gx > gy) - (gx < gy);
}

int cs_simulation_spikes(const cs_simulation *sim, size_t n, uint64_t *gid, double *time) {
    cs_error_clear();
    if (!sim) return cs_error_set(CS_ERR_INVALID, "cs_simulation_spikes: sim is NULL");
    const cs_memsink *mem = cs_sim_memory(sim->sim);
    if (n > mem->nspike)
        return cs_error_set(CS_ERR_INVALID, "cs_simulation_spikes: %zu spikes asked for, %zu kept", n, mem->nspike);
    if (n && (!gid || !time)) return cs_error_set(CS_ERR_INVALID, "cs_simulation_spikes: NULL array");
    if (!n) return CS_OK;
    size_t *order = malloc(mem->nspike * sizeof *order);
    if (!order) return cs_error_set(CS_ERR_NOMEM, "out of memory for %zu spikes", mem->nspike);
    for (size_t k = 0; k < mem->nspike; ++k) order[k] = k;
    /* not reentrant across threads using different handles at once (a static key): qsort has
     * no context argument in C11; the calls are short */
    sort_key = mem;
    qsort(order, mem->nspike, sizeof *order, cmp_spike);
    sort_key = NULL;
    for (size_t k = 0; k < n; ++k) {
        gid[k] = mem->gid[order[k]];
        time[k] = mem->time[order[k]];
    }
    free(order);
    return CS_OK;
}

int cs_simulation_traces(const cs_simulation *sim, size_t nrow, double *rows) {
    cs_error_clear();
    if (!sim) return cs_error_set(CS_ERR_INVALID, "cs_simulation_traces: sim is NULL");
    const cs_memsink *mem = cs_sim_memory(sim->sim);
    if (nrow > mem->nrow)
        return cs_error_set(CS_ERR_INVALID, "cs_simulation_traces: %zu rows asked for, %zu kept", nrow, mem->nrow);
    if (nrow && mem->ncol) {
        if (!rows) return cs_error_set(CS_ERR_INVALID, "cs_simulation_traces: rows is NULL");
        memcpy(rows, mem->rows, nrow * mem->ncol * sizeof *rows);
    }
    return CS_OK;
}

int cs_simulation_cells(const cs_simulation *sim, size_t n, const uint64_t *gid, const char **population,
                        uint64_t *index) {
    cs_error_clear();
    if (!sim || (n && (!gid || !population || !index)))
        return cs_error_set(CS_ERR_INVALID, "cs_simulation_cells: NULL argument");
    const cs_model *m = &sim->model;
    for (size_t k = 0; k < n; ++k) {
        /* the populations hold consecutive gids, in order: the last that starts at or below */
        int lo = 0, hi = m->npop; /* answer in [lo, hi) */
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (m->pops[mid].first_gid <= gid[k]) lo = mid;
            else hi = mid;
        }
        const cs_population_spec *ps = m->npop ? &m->pops[lo] : NULL;
        if (!ps || gid[k] < ps->first_gid || gid[k] - ps->first_gid >= (uint64_t)ps->count)
            return cs_error_set(CS_ERR_INVALID, "cs_simulation_cells: gid %llu is no cell of this model (%llu cells)",
                                (unsigned long long)gid[k], (unsigned long long)m->ncells);
        population[k] = cs_population_output_name(ps);
        index[k] = ps->output_id0 + (gid[k] - ps->first_gid);
    }
    return CS_OK;
}

int cs_simulation_probe(const cs_simulation *sim, size_t j, cs_probe_info *p) {
    cs_error_clear();
    if (!sim || !p || p->size < sizeof(size_t))
        return cs_error_set(CS_ERR_INVALID, "cs_simulation_probe: NULL argument or size not set");
    size_t np = cs_sim_probe_count(sim->sim);
    if (j >= np) return cs_error_set(CS_ERR_INVALID, "cs_simulation_probe: column %zu of %zu", j, np);
    cs_sim_probe q;
    cs_sim_probe_info(sim->sim, j, &q);
    /* a SONATA population's name and node id, not the internal group's name and index in it */
    const cs_population_spec *ps = &sim->model.pops[q.pop];
    cs_probe_info i = {.size = sizeof i, .population = cs_population_output_name(ps),
                       .index = (int)(ps->output_id0 + (uint64_t)q.index),
                       .gid = q.gid, .branch = q.loc.branch, .pos = q.loc.pos, .cv = q.cv,
                       .variable = q.variable, .unit = q.unit};
    size_t n = p->size < sizeof i ? p->size : sizeof i;
    memcpy(p, &i, n);
    p->size = n;
    return CS_OK;
}

int cs_simulation_profile(const cs_simulation *sim, int n, const char **names, double *seconds, double *share) {
    cs_error_clear();
    if (!sim) return cs_error_set(CS_ERR_INVALID, "cs_simulation_profile: sim is NULL");
    cs_sim_stats st;
    cs_sim_get_stats(sim->sim, &st);
    double sh[CS_PHASE_COUNT];
    cs_profile_shares(&st.profile, sh);
    for (int k = 0; k < CS_PHASE_COUNT && k < n; ++k) {
        if (names) names[k] = cs_phase_names[k];
        if (seconds) seconds[k] = st.profile.seconds[k];
        if (share) share[k] = sh[k];
    }
    return CS_PHASE_COUNT;
}

int cs_simulation_print_summary(const cs_simulation *sim, FILE *f) {
    cs_error_clear();
    if (!sim || !f) return cs_error_set(CS_ERR_INVALID, "cs_simulation_print_summary: NULL argument");
    cs_sim_print_summary(sim->sim, f);
    return CS_OK;
}

void cs_simulation_free(cs_simulation *sim) {
    if (!sim) return;
    cs_sim_destroy(sim->sim);
    if (sim->has_model) cs_model_free(&sim->model);
    free(sim->output_path);
    free(sim->backend);
    free(sim->solver);
    free(sim);
}

const char *cs_api_last_error(void) { return cs_error_message(); }

const char *cs_api_version(void) { return CS_VERSION_STRING; }

int cs_api_init(int *argc, char ***argv) {
    cs_error_clear();
    return cs_comm_init(argc, argv);
}

void cs_api_finalize(void) { cs_comm_finalize(); }

int cs_api_rank(void) { return cs_comm_rank(); }
