/* The CUDA backend: all cell state lives on the GPU for the whole run, in the layout of the
 * Hines solver plan (cs_hines_gpu.h) chosen for the batch; every per-step phase runs there
 * (src/backends/cuda/cs_cuda_kernels.cu). Per epoch only the epoch's events go to the device and its spikes
 * and samples come back. Host logic only: no CUDA header here. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_backend.h"
#include "cs_event_queue.h"
#include "cs_cable_matrix.h"
#include "cs_cuda.h"
#include "cs_mech_math.h"

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

#else

#include "cs_cuda_epoch_setup.h"
#include "cs_cuda_ions.h"
#include "cs_hines_gpu.h"

#define CS_TIMED_STEPS 8        /* steps per epoch timed phase by phase with CUDA events */
#define CS_TIMED_MARKS 8        /* events per timed step: before and after each of 7 phases */
#define CS_SPIKES_PER_DETECTOR 16 /* spike buffer: crossings per detector per epoch */
#define CS_GRAPH_LEVELS 7       /* graphs of 1, 2, 4, .. 64 steps; a run of steps takes at most 7 */

struct cs_backend {
    const cs_network_desc *net;
    cs_backend_params p;
    char device[256];
    cs_hines_plan *plan;
    int fused;                  /* the plan runs the fused step: assembly inside the solve */
    int epoch;                  /* solver "epoch": one persistent kernel per epoch (cs_cuda.h) on
                                   the "flat" plan's layout; the plan itself never solves */
    int shared_constants;       /* identical cells: d0, cdt, b0, u stored once (one cell's rows) */
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
    void *timers;
    size_t mem_bytes;           /* device memory the set-up took [bytes] */
    int64_t step0;
    int nsteps, rows;
    int timed[CS_TIMED_STEPS], ntimed;
    /* CUDA graphs of 2^b steps (the untimed steps of an epoch), by the parity of the v/rhs swap
     * of the separate solve; captured when first needed, dropped when a buffer they name moves */
    int use_graphs;
    /* untimed steps: detection and sampling on a second stream beside the state update (both
     * only read v), forked and joined through two events; NULL: in order (CS_CUDA_FORK=0) */
    void *side, *fork_events;
    int ordered_update;         /* a mechanism writes an ion concentration that another may read in
                                   its state update: the groups' updates run in order, unforked */
    void *graph[2][CS_GRAPH_LEVELS];
    const void *graph_bufs[4];  /* samples, ev_local, ev_weight, ev_hi at capture */
    double *v_first;            /* s->v at set-up: the parity of the swap */
    int cap_ev_hi;
};

static void drop_graphs(cs_backend *be) {
    for (int p = 0; p < 2; ++p)
        for (int b = 0; b < CS_GRAPH_LEVELS; ++b) {
            cs_cuda_graph_destroy(be->graph[p][b]);
            be->graph[p][b] = NULL;
        }
}

static cs_status grow_device(void **p, size_t *cap, size_t need, size_t elem, const char *what) {
    if (need <= *cap) return CS_OK;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    cs_cuda_free(*p);
    *p = NULL;
    *cap = 0;
    CS_TRY(cs_cuda_alloc(p, nc * elem, what));
    *cap = nc;
    return CS_OK;
}

static cs_status solver_fail(cs_solver_status st, const char *what) {
    return cs_error_set(st == CS_SOLVER_ERR_NOMEM ? CS_ERR_NOMEM : CS_ERR_DEVICE, "GPU solver: %s: %s (%s)",
                        what, cs_solver_status_string(st), cs_hines_gpu_last_error());
}

static void cuda_destroy(cs_backend *be) {
    if (!be) return;
    cs_cuda_state *s = &be->s;
    void *dev[] = {s->v, s->rhs, s->d, s->i, s->g, s->d0, s->b0, s->cdt, s->u, s->ev_local, s->ev_weight,
                   s->det_row, s->det_gid, s->det_thr, s->det_vprev, s->cell_row, s->probe_row, s->probe_src,
                   s->imem_col, s->imem_row, s->imem_nb_first, s->imem_nb_row, s->imem_nb_g, s->imem_el_first,
                   s->imem_el_k,
                   s->samples, s->spike_time, s->spike_gid, s->counters, s->flags, s->a0, s->ctx, s->ev_hi};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; ++k) cs_cuda_free(dev[k]);
    for (int m = 0; m < s->nmech; ++m) {
        cs_cuda_free(s->mech[m].node);
        cs_cuda_free(s->mech[m].weight);
        cs_cuda_free(s->mech[m].param);
        cs_cuda_free(s->mech[m].state);
        cs_cuda_free(s->mech[m].param_ptr);
        cs_cuda_free(s->mech[m].state_ptr);
    }
    for (int ion = 0; ion < CS_NION; ++ion) {
        cs_cuda_free(s->ion_e[ion]);
        cs_cuda_free(s->ion_i[ion]);
        cs_cuda_free(s->ion_ci[ion]);
        cs_cuda_free(s->ion_co[ion]);
        cs_cuda_free(s->nernst_rows[ion]);
    }
    cs_cuda_free(s->ev_range);
    drop_graphs(be);
    if (be->plan) cs_hines_gpu_plan_destroy(be->plan);
    cs_cuda_epoch_free(&s->epoch);
    cs_cuda_timer_destroy(be->timers, CS_TIMED_STEPS * CS_TIMED_MARKS);
    cs_cuda_timer_destroy(be->fork_events, 2);
    cs_cuda_stream_destroy(be->side);
    cs_cuda_stream_destroy(s->stream);
    free(be->row_map); free(be->cell_first); free(be->syn_local); free(be->inst_group); free(be->inst_local); cs_event_queue_free(&be->ev); free(be->ev_local);
    free(be->ev_weight); free(be->ev_hi); free(be->samples); free(be->spikes); free(be->spike_time);
    free(be->spike_gid);
    free(be);
}

/* Upload a host array of tree-order values into the internal layout (converted on the device). */
static cs_status upload_tree(cs_backend *be, const double *tree, size_t nrow, double *dst,
                             cs_hines_array_kind kind) {
    double *tmp = NULL;
    CS_TRY(cs_cuda_alloc((void **)&tmp, nrow * sizeof(double), "a conversion buffer"));
    cs_status st = cs_cuda_upload(tmp, tree, nrow * sizeof(double));
    if (st == CS_OK) {
        cs_solver_status ss = cs_hines_gpu_to_internal_d(be->plan, kind, tmp, dst);
        if (ss == CS_SOLVER_OK) ss = cs_hines_gpu_sync(be->plan);
        if (ss != CS_SOLVER_OK) st = solver_fail(ss, "layout conversion");
    }
    cs_cuda_free(tmp);
    return st;
}

static cs_status upload_new(void **dst, const void *src, size_t bytes, const char *what) {
    CS_TRY(cs_cuda_alloc(dst, bytes, what));
    return cs_cuda_upload(*dst, src, bytes);
}

extern const cs_mech_gpu_ops cs__gpu_exp2syn; /* generated from mechanisms/exp2syn.mod (CMakeLists.txt) */

/* The kernel of a mechanism type; -1 for a type without one (a mechanism added to the CPU code
 * but not here must fail at set-up, not run as another). Folded types (pas) never get here. */
static int kind_of(const cs_mech_type *t) {
    if (t == &cs_mech_hh) return CS_CUDA_HH;
    if (t == &cs_mech_expsyn) return CS_CUDA_EXPSYN;
    if (t == &cs_mech_iclamp) return CS_CUDA_ICLAMP;
    if (t->gpu || t == &cs_mech_exp2syn) return CS_CUDA_CATALOGUE;
    return -1;
}

/* A catalogue mechanism's device view: its arrays, device arrays of pointers to its parameter
 * and state rows, the ions (v, i, g and t are set at each launch: cs_cuda_kernels.cu). */
static cs_status setup_catalogue_view(cs_backend *be, cs_cuda_mech *cm, const cs_mech_type *t) {
    cs_cuda_state *s = &be->s;
    int np = t->nparam, ns = t->nstate, n = cm->n;
    double *pp[CS_MAX_PARAMS + 1], *sp[CS_MAX_STATES + 1];
    for (int j = 0; j < np; ++j) pp[j] = cm->param + (size_t)j * (size_t)n;
    for (int j = 0; j < ns; ++j) sp[j] = cm->state + (size_t)j * (size_t)n;
    CS_TRY(upload_new((void **)&cm->param_ptr, pp, (size_t)(np ? np : 1) * sizeof *pp, "mechanism parameters"));
    CS_TRY(upload_new((void **)&cm->state_ptr, sp, (size_t)(ns ? ns : 1) * sizeof *sp, "mechanism states"));
    cs_mech_view v = {n, cm->node, cm->weight, NULL, NULL, NULL, cm->param_ptr, cm->state_ptr,
                      0.0, be->p.dt, be->p.celsius, {NULL, NULL, NULL}, {NULL, NULL, NULL}, {NULL, NULL, NULL},
                      {NULL, NULL, NULL}, NULL, NULL, 0, 0.0};
    for (int ion = 0; ion < CS_NION; ++ion) {
        v.ion_e[ion] = s->ion_e[ion];
        v.ion_i[ion] = s->ion_i[ion];
        v.ion_ci[ion] = s->ion_ci[ion];
        v.ion_co[ion] = s->ion_co[ion];
    }
    cm->gpu = t == &cs_mech_exp2syn ? &cs__gpu_exp2syn : t->gpu; /* the built-in's GPU half */
    cm->view = v;
    return CS_OK;
}

/* Mechanism groups: instances of one type, their CVs mapped to the internal layout; states
 * initialised on the host with the mechanism's own init (the CPU code) and uploaded. */
static cs_status setup_mechanisms(cs_backend *be, const double *v_int, cs_cuda_ions *ions) {
    const cs_network_desc *net = be->net;
    cs_cuda_state *s = &be->s;
    const cs_mech_type *types[CS_CUDA_MAX_MECH];
    int count[CS_CUDA_MAX_MECH] = {0};
    int *group = malloc((net->ninst ? net->ninst : 1) * sizeof *group);
    be->syn_local = malloc((net->ninst ? net->ninst : 1) * sizeof *be->syn_local);
    be->inst_local = malloc((net->ninst ? net->ninst : 1) * sizeof *be->inst_local);
    be->inst_group = group;
    if (!group || !be->syn_local || !be->inst_local) {
        return cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    s->nmech = 0;
    s->syn_group = -1;
    s->nsyn = 0;
    for (size_t k = 0; k < net->ninst; ++k) {
        be->syn_local[k] = -1;
        group[k] = -1;
        if (net->inst[k].type->fold) continue; /* folded into the matrix at set-up */
        int gi = -1;
        for (int m = 0; m < s->nmech; ++m)
            if (types[m] == net->inst[k].type) gi = m;
        if (gi < 0) {
            if (s->nmech == CS_CUDA_MAX_MECH) {
                return cs_error_set(CS_ERR_UNSUPPORTED, "backend 'cuda': more than %d mechanism types", CS_CUDA_MAX_MECH);
            }
            gi = s->nmech++;
            types[gi] = net->inst[k].type;
            if (types[gi]->receives_events) { /* any number of synapse types, their events apart */
                if (s->syn_group < 0) s->syn_group = gi;
                s->syn_groups[s->nsyn++] = gi;
            }
        }
        group[k] = gi;
        be->syn_local[k] = types[gi]->receives_events ? count[gi] : -1;
        be->inst_local[k] = count[gi];
        count[gi]++;
    }
    cs_status st = CS_OK;
    for (int m = 0; m < s->nmech && st == CS_OK; ++m) {
        const cs_mech_type *t = types[m];
        const int n = count[m], np = t->nparam, ns = t->nstate, kind = kind_of(t);
        if (kind < 0) {
            st = cs_error_set(CS_ERR_UNSUPPORTED, "mechanism \"%s\" has no CUDA code (a catalogue built without "
                              "nvcc, a mechanism that reads t, or a synapse with a weight vector): use --backend cpu", t->name);
            break;
        }
        int *node = malloc((size_t)n * sizeof *node);
        double *w = malloc((size_t)n * sizeof *w);
        double *par = malloc((size_t)(np ? np : 1) * (size_t)n * sizeof *par);
        double *sta = calloc((size_t)(ns ? ns : 1) * (size_t)n, sizeof *sta);
        if (!node || !w || !par || !sta) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
        for (size_t k = 0, l = 0; st == CS_OK && k < net->ninst; ++k) {
            if (group[k] != m) continue;
            const cs_instance_desc *in = &net->inst[k];
            node[l] = be->row_map[be->cell_first[in->cell] + in->node];
            w[l] = in->weight;
            for (int j = 0; j < np; ++j) par[(size_t)j * (size_t)n + l] = in->param[j];
            ++l;
        }
        if (st == CS_OK) {
            double *pp[CS_MAX_PARAMS + 1], *sp[CS_MAX_STATES + 1];
            for (int j = 0; j < np; ++j) pp[j] = par + (size_t)j * (size_t)n;
            for (int j = 0; j < ns; ++j) sp[j] = sta + (size_t)j * (size_t)n;
            cs_mech_view view = {n, node, w, v_int, NULL, NULL, pp, sp, 0.0, be->p.dt, be->p.celsius,
                                 {ions->e[0], ions->e[1], ions->e[2]}, {ions->i[0], ions->i[1], ions->i[2]},
                                 {ions->ci[0], ions->ci[1], ions->ci[2]}, {ions->co[0], ions->co[1], ions->co[2]},
                                 NULL, NULL, 0, 0.0};
            t->init(&view);
            cs_cuda_ions_wrote(ions, t); /* NEURON's order: e after each INITIAL that writes a concentration */
            cs_cuda_mech *cm = &s->mech[m];
            cm->kind = (cs_cuda_mech_kind)kind;
            cm->n = n;
            /* the built-in kernels read parameters shared by every instance from one copy (a
             * catalogue's generated code reads every instance's: its rows stay full) */
            cm->param_uniform = n > 0 && kind != CS_CUDA_CATALOGUE;
            for (int j = 0; cm->param_uniform && j < np; ++j)
                for (int l = 1; cm->param_uniform && l < n; ++l)
                    cm->param_uniform = par[(size_t)j * (size_t)n + l] == par[(size_t)j * (size_t)n];
            if (cm->param_uniform)
                for (int j = 0; j < np; ++j) par[j] = par[(size_t)j * (size_t)n]; /* column 0 of each row */
            const size_t pcount = cm->param_uniform ? (size_t)(np ? np : 1) : (size_t)(np ? np : 1) * (size_t)n;
            st = upload_new((void **)&cm->node, node, (size_t)n * sizeof *node, "mechanism CVs");
            if (st == CS_OK) st = upload_new((void **)&cm->weight, w, (size_t)n * sizeof *w, "mechanism weights");
            if (st == CS_OK) st = upload_new((void **)&cm->param, par, pcount * sizeof *par, "mechanism parameters");
            if (st == CS_OK) st = upload_new((void **)&cm->state, sta, (size_t)(ns ? ns : 1) * (size_t)n * sizeof *sta, "mechanism states");
            if (st == CS_OK && kind == CS_CUDA_CATALOGUE) st = setup_catalogue_view(be, cm, t);
        }
        free(node); free(w); free(par); free(sta);
    }
    /* group and inst_local stay: the probes of states find their instance there */
    /* hh first among the groups: its state update computes its next current (cs_cuda.h) */
    const char *ahead = getenv("CS_CUDA_HH_AHEAD"); /* 0: hh's current in the currents phase (for comparisons) */
    s->hh_ahead = st == CS_OK && s->nmech > 0 && s->mech[0].kind == CS_CUDA_HH && !(ahead && !strcmp(ahead, "0"));
    return st;
}

/* i_membrane probes: per probe, its row's neighbours (parent, then children, in tree order: the
 * CPU backend's order) with their axial conductances −u [µS] from the cell's cable matrix, and
 * the iclamp instances on its CV (a catalogue's electrode there is refused: its current is not
 * known to the gather). */
static cs_status setup_imem(cs_backend *be) {
    const cs_network_desc *net = be->net;
    cs_cuda_state *s = &be->s;
    size_t np = net->nprobe;
    int nq = 0;
    for (size_t k = 0; k < np; ++k) nq += net->probes[k].kind == CS_PROBE_IMEM;
    s->imem_clamp = -1;
    if (!nq) return CS_OK;
    for (int m = 0; m < s->nmech; ++m)
        if (s->mech[m].kind == CS_CUDA_ICLAMP) s->imem_clamp = m;
    int *col = malloc((size_t)nq * sizeof *col), *row = malloc((size_t)nq * sizeof *row);
    int *nb_first = calloc((size_t)nq + 1, sizeof *nb_first), *el_first = calloc((size_t)nq + 1, sizeof *el_first);
    int *nb_row = NULL, *el_k = NULL;
    double *nb_g = NULL;
    size_t nnb = 0, cap_nb = 0, nel = 0, cap_el = 0;
    int cur = -1, ncv = 0;
    int *parent = NULL;
    double *u = NULL, *cdt = NULL, *d0 = NULL, *b0 = NULL;
    cs_status st = col && row && nb_first && el_first ? CS_OK : cs_error_set(CS_ERR_NOMEM, "out of memory");
    int q = 0;
    for (size_t k = 0; k < np && st == CS_OK; ++k) {
        const cs_probe_desc *pd = &net->probes[k];
        if (pd->kind != CS_PROBE_IMEM) continue;
        if (pd->cell != cur) { /* the cell's matrix (local rows) */
            cur = pd->cell;
            ncv = net->cells[cur].geom->ncv;
            free(parent); free(u); free(cdt); free(d0); free(b0);
            parent = malloc((size_t)ncv * sizeof *parent);
            u = malloc((size_t)ncv * sizeof *u);
            cdt = malloc((size_t)ncv * sizeof *cdt);
            d0 = malloc((size_t)ncv * sizeof *d0);
            b0 = malloc((size_t)ncv * sizeof *b0);
            if (!parent || !u || !cdt || !d0 || !b0) {
                st = cs_error_set(CS_ERR_NOMEM, "out of memory");
                break;
            }
            cs_cable_matrix_cell(&net->cells[cur], be->p.dt, 0, parent, u, cdt, d0, b0);
        }
        if (nnb + (size_t)ncv > cap_nb) {
            cap_nb = 2 * (nnb + (size_t)ncv);
            int *a = realloc(nb_row, cap_nb * sizeof *a);
            if (a) nb_row = a;
            double *g = realloc(nb_g, cap_nb * sizeof *g);
            if (g) nb_g = g;
            if (!a || !g) {
                st = cs_error_set(CS_ERR_NOMEM, "out of memory");
                break;
            }
        }
        const int r = pd->node, base = be->cell_first[cur];
        col[q] = (int)k;
        row[q] = be->row_map[base + r];
        if (parent[r] >= 0) {
            nb_row[nnb] = be->row_map[base + parent[r]];
            nb_g[nnb++] = -u[r];
        }
        for (int c = 0; c < ncv; ++c)
            if (parent[c] == r) {
                nb_row[nnb] = be->row_map[base + c];
                nb_g[nnb++] = -u[c];
            }
        nb_first[q + 1] = (int)nnb;
        /* the electrodes on its CV, in instance order */
        for (size_t i = net->cell_inst_first[cur]; i < net->cell_inst_first[cur + 1] && st == CS_OK; ++i) {
            const cs_instance_desc *in = &net->inst[i];
            if (in->node != r || in->type->kind != CS_MECH_POINT || in->type->receives_events) continue;
            if (be->inst_group[i] < 0 || s->mech[be->inst_group[i]].kind != CS_CUDA_ICLAMP) {
                st = cs_error_set(CS_ERR_UNSUPPORTED, "backend 'cuda': an i_membrane probe on the CV of the stimulus "
                                  "'%s' (the GPU knows the current of iclamp only); use --backend cpu", in->type->name);
                break;
            }
            if (nel == cap_el) {
                cap_el = cap_el ? 2 * cap_el : 64;
                int *a = realloc(el_k, cap_el * sizeof *a);
                if (!a) {
                    st = cs_error_set(CS_ERR_NOMEM, "out of memory");
                    break;
                }
                el_k = a;
            }
            el_k[nel++] = be->inst_local[i];
        }
        el_first[q + 1] = (int)nel;
        ++q;
    }
    free(parent); free(u); free(cdt); free(d0); free(b0);
    /* a one-element array where a list is empty (an upload needs a source) */
    if (st == CS_OK && !el_k && !(el_k = calloc(1, sizeof *el_k))) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK && !nb_row && !(nb_row = calloc(1, sizeof *nb_row))) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK && !nb_g && !(nb_g = calloc(1, sizeof *nb_g))) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    s->nimem = nq;
    if (st == CS_OK) st = upload_new((void **)&s->imem_col, col, (size_t)nq * sizeof *col, "i_membrane probes");
    if (st == CS_OK) st = upload_new((void **)&s->imem_row, row, (size_t)nq * sizeof *row, "i_membrane probes");
    if (st == CS_OK) st = upload_new((void **)&s->imem_nb_first, nb_first, ((size_t)nq + 1) * sizeof *nb_first, "i_membrane probes");
    if (st == CS_OK) st = upload_new((void **)&s->imem_el_first, el_first, ((size_t)nq + 1) * sizeof *el_first, "i_membrane probes");
    if (st == CS_OK) st = upload_new((void **)&s->imem_nb_row, nb_row, (nnb ? nnb : 1) * sizeof(int), "i_membrane probes");
    if (st == CS_OK) st = upload_new((void **)&s->imem_nb_g, nb_g, (nnb ? nnb : 1) * sizeof(double), "i_membrane probes");
    if (st == CS_OK) st = upload_new((void **)&s->imem_el_k, el_k, (nel ? nel : 1) * sizeof(int), "i_membrane probes");
    free(col); free(row); free(nb_first); free(el_first); free(nb_row); free(nb_g); free(el_k);
    return st;
}

/* Probes of mechanism states and ion currents: a device pointer per probe into the state rows
 * ([nstate × n] per group) or an ion array, gathered by k_sample; none when every probe is v's.
 * The built-in kernels (hh, expsyn, iclamp) keep their STATEs only: their ASSIGNED variables
 * (hh.i, expsyn.i) are the CPU backend's. */
static cs_status setup_probe_sources(cs_backend *be) {
    const cs_network_desc *net = be->net;
    cs_cuda_state *s = &be->s;
    size_t np = net->nprobe, nsrc = 0;
    for (size_t k = 0; k < np; ++k) nsrc += net->probes[k].kind != CS_PROBE_V;
    if (!nsrc) return CS_OK;
    double **src = calloc(np, sizeof *src);
    if (!src) return cs_error_set(CS_ERR_NOMEM, "out of memory for probes");
    cs_status st = CS_OK;
    for (size_t k = 0; k < np && st == CS_OK; ++k) {
        const cs_probe_desc *pd = &net->probes[k];
        if (pd->kind == CS_PROBE_V) continue;
        if (pd->kind == CS_PROBE_IMEM) continue; /* setup_imem */
        int row = be->row_map[be->cell_first[pd->cell] + pd->node];
        if (pd->kind == CS_PROBE_ION || pd->kind == CS_PROBE_CONC_I || pd->kind == CS_PROBE_CONC_O ||
            pd->kind == CS_PROBE_EREV) { /* the build checked that the ion is used there */
            double *arr = pd->kind == CS_PROBE_ION      ? s->ion_i[pd->index]
                          : pd->kind == CS_PROBE_CONC_I ? s->ion_ci[pd->index]
                          : pd->kind == CS_PROBE_CONC_O ? s->ion_co[pd->index]
                                                        : s->ion_e[pd->index];
            src[k] = arr + row;
            continue;
        }
        int gi = be->inst_group[pd->inst];
        const cs_mech_type *t = net->inst[pd->inst].type;
        if (gi < 0) {
            st = cs_error_set(CS_ERR_INVALID, "probe of a state of '%s', a linear mechanism folded into the cable "
                              "matrix, which keeps no states", t->name);
            break;
        }
        const cs_cuda_mech *cm = &s->mech[gi];
        if (cm->kind != CS_CUDA_CATALOGUE && pd->index >= t->nstate_solved) {
            st = cs_error_set(CS_ERR_UNSUPPORTED, "backend 'cuda': probe of '%s.%s', an ASSIGNED variable the "
                              "built-in GPU kernels do not keep (its STATEs they do); use --backend cpu", t->name,
                              t->states[pd->index].name);
            break;
        }
        src[k] = cm->state + (size_t)pd->index * (size_t)cm->n + (size_t)be->inst_local[pd->inst];
    }
    if (st == CS_OK) st = upload_new((void **)&s->probe_src, src, np * sizeof *src, "probes");
    free(src);
    if (st == CS_OK) st = setup_imem(be);
    return st;
}

/* 1 when every cell's rows of each array equal cell 0's bit for bit (same structure assumed). */
static int identical_cells(const int *cell_first, int ncell, double *const *arrays, int narrays) {
    size_t n0 = (size_t)cell_first[1];
    for (int c = 1; c < ncell; ++c) {
        if ((size_t)(cell_first[c + 1] - cell_first[c]) != n0) return 0;
        for (int a = 0; a < narrays; ++a) /* the root's u is undefined: compare from row 1 */
            if (memcmp(arrays[a] + cell_first[c] + 1, arrays[a] + 1, (n0 - 1) * sizeof(double)) ||
                (a < 3 && arrays[a][cell_first[c]] != arrays[a][0]))
                return 0;
    }
    return 1;
}

/* The fused step's row flags: the plan's structure bits, plus CS_HINES_ROW_CURRENT at every CV
 * where a mechanism that was not folded into the matrix adds current (only there does the
 * step read and clear i and g). */
static cs_status setup_fused_flags(cs_backend *be) {
    const cs_network_desc *net = be->net;
    unsigned char *flags = malloc(be->s.n_int ? be->s.n_int : 1);
    if (!flags) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    cs_solver_status ss = cs_hines_gpu_plan_row_flags(be->plan, flags);
    if (ss != CS_SOLVER_OK) {
        free(flags);
        return solver_fail(ss, "row flags of the fused step");
    }
    for (size_t k = 0; k < net->ninst; ++k)
        if (!net->inst[k].type->fold)
            flags[be->row_map[be->cell_first[net->inst[k].cell] + net->inst[k].node]] |= CS_HINES_ROW_CURRENT;
    ss = cs_hines_gpu_plan_set_current(be->plan, flags); /* staged keeps them in its schedule */
    if (ss != CS_SOLVER_OK) {
        free(flags);
        return solver_fail(ss, "rows with current of the fused step");
    }
    size_t n = be->s.n_int ? be->s.n_int : 1;
    if (be->shared_constants) { /* one cell's rows, each the union over the cells (cs_hines_step_d) */
        n = (size_t)be->cell_first[1];
        unsigned char *local = calloc(n, 1);
        if (!local) { free(flags); return cs_error_set(CS_ERR_NOMEM, "out of memory"); }
        for (size_t c = 0; c < net->ncell; ++c)
            for (size_t r = 0; r < n; ++r) local[r] |= flags[be->row_map[be->cell_first[c] + r]];
        free(flags);
        flags = local;
    }
    cs_status st = upload_new((void **)&be->s.flags, flags, n, "row flags");
    free(flags);
    return st;
}

/* One constant array of the matrix (CS__U, CS__CDT, CS__D0 with pas folded in, CS__B0 likewise)
 * of every cell in tree order. The set-up builds the four one at a time, so the host holds one
 * (8 B per CV) rather than four at once (docs/mpi.md, host memory). */
enum { CS__U, CS__CDT, CS__D0, CS__B0, CS__NCONST };
static double *matrix_array(const cs_backend *be, int which) {
    const cs_network_desc *net = be->net;
    const size_t nrow = (size_t)net->total_cv;
    double *a = calloc(nrow ? nrow : 1, sizeof *a); /* zero: d0 and b0 accumulate */
    if (!a) return NULL;
    for (size_t c = 0; c < net->ncell; ++c)
        cs_cable_matrix_cell(&net->cells[c], be->p.dt, be->cell_first[c], NULL, which == CS__U ? a : NULL,
                             which == CS__CDT ? a : NULL, which == CS__D0 ? a : NULL, which == CS__B0 ? a : NULL);
    /* linear mechanisms (pas) fold into d0 and b0 once; setup_mechanisms skips them */
    for (size_t k = 0; (which == CS__D0 || which == CS__B0) && k < net->ninst; ++k)
        cs_cable_matrix_fold(&net->inst[k], be->cell_first[net->inst[k].cell] + net->inst[k].node,
                             which == CS__D0 ? a : NULL, which == CS__B0 ? a : NULL);
    return a;
}

/* The constants on the device: in the solver's layout, or, for a network of identical cells with
 * a fused per-system step, one cell's rows for all (with the pivots of its rows that no current
 * reaches, a0). parent: the tree-order parents. */
static cs_status setup_constants(cs_backend *be, const int *parent) {
    const cs_network_desc *net = be->net;
    cs_cuda_state *s = &be->s;
    const size_t nrow = (size_t)net->total_cv, ncell = net->ncell;
    double **dev[CS__NCONST] = {&s->u, &s->cdt, &s->d0, &s->b0};
    const cs_hines_array_kind kind[CS__NCONST] = {CS_HINES_COUPLING, CS_HINES_NODE, CS_HINES_NODE, CS_HINES_NODE};
    cs_status st = CS_OK;
    be->shared_constants = be->fused && !be->epoch && ncell > 0 && cs_hines_gpu_plan_uniform(be->plan) &&
                           strcmp(cs_hines_gpu_plan_variant(be->plan), "staged") != 0; /* it stages its rows */
    /* identical cells: every cell's rows of each array equal cell 0's bit for bit; keep cell 0's */
    const size_t n0 = ncell ? (size_t)be->cell_first[1] : 0;
    double *first[CS__NCONST] = {NULL};
    for (int k = 0; be->shared_constants && st == CS_OK && k < CS__NCONST; ++k) {
        double *a = matrix_array(be, k);
        first[k] = malloc((n0 ? n0 : 1) * sizeof(double));
        if (!a || !first[k]) st = cs_error_set(CS_ERR_NOMEM, "out of memory for %zu CVs", nrow);
        else {
            be->shared_constants = identical_cells(be->cell_first, (int)ncell, &a, 1);
            memcpy(first[k], a, n0 * sizeof(double));
        }
        free(a);
    }
    if (st == CS_OK && be->shared_constants) { /* one cell's tree-order rows serve every cell */
        first[CS__U][0] = 0.0; /* the root has no coupling */
        for (int k = 0; st == CS_OK && k < CS__NCONST; ++k)
            st = upload_new((void **)dev[k], first[k], n0 * sizeof(double), "the cells' constants");
        /* pivots of the rows with no current in their subtree in any cell: the same every
         * step (cell 0 starts at row 0, so its parents are local) */
        double *a0 = malloc((n0 ? n0 : 1) * sizeof *a0);
        unsigned char *has_current = calloc(n0 ? n0 : 1, 1);
        for (size_t k = 0; has_current && k < net->ninst; ++k)
            if (!net->inst[k].type->fold) has_current[net->inst[k].node] = 1;
        if (st == CS_OK && (!a0 || !has_current ||
                            cs_hines_clean_pivots((int)n0, parent, first[CS__D0], first[CS__U], has_current, a0)))
            st = cs_error_set(CS_ERR_NOMEM, "out of memory");
        free(has_current);
        if (st == CS_OK) st = upload_new((void **)&s->a0, a0, n0 * sizeof *a0, "the cells' pivots");
        free(a0);
    } else {
        for (int k = 0; st == CS_OK && k < CS__NCONST; ++k) {
            double *a = matrix_array(be, k);
            if (!a) st = cs_error_set(CS_ERR_NOMEM, "out of memory for %zu CVs", nrow);
            if (st == CS_OK) st = cs_cuda_alloc((void **)dev[k], s->n_int * sizeof(double), "the cells' constants");
            if (st == CS_OK) st = upload_tree(be, a, nrow, *dev[k], kind[k]);
            free(a);
        }
    }
    for (int k = 0; k < CS__NCONST; ++k) free(first[k]);
    return st;
}

static cs_status setup(cs_backend *be) {
    const cs_network_desc *net = be->net;
    cs_cuda_state *s = &be->s;
    int ncell = (int)net->ncell;
    CS_TRY(cs_cuda_select(be->p.device, be->device, sizeof be->device)); /* one GPU per rank */
    CS_TRY(cs_cuda_stream_create(&s->stream));
    size_t mem0 = cs_cuda_memory_used();

    /* tree-order structure of the whole batch */
    be->cell_first = malloc(((size_t)ncell + 1) * sizeof *be->cell_first);
    size_t nrow = (size_t)net->total_cv;
    int *parent = malloc((nrow ? nrow : 1) * sizeof *parent);
    be->row_map = malloc((nrow ? nrow : 1) * sizeof *be->row_map);
    cs_status st = CS_OK;
    if (!be->cell_first || !parent || !be->row_map)
        st = cs_error_set(CS_ERR_NOMEM, "out of memory for %zu CVs", nrow);
    int row = 0;
    for (int c = 0; st == CS_OK && c < ncell; ++c) {
        be->cell_first[c] = row;
        cs_cable_matrix_cell(&net->cells[c], be->p.dt, row, parent, NULL, NULL, NULL, NULL);
        row += net->cells[c].geom->ncv;
    }
    if (st == CS_OK) be->cell_first[ncell] = row;

    if (st == CS_OK) {
        cs_hines_gpu_options opt;
        cs_hines_gpu_options_default(&opt);
        be->epoch = be->p.solver && !strcmp(be->p.solver, "epoch");
        opt.variant = be->epoch ? "flat" : be->p.solver; /* epoch: tree order, cell by cell */
        /* CS_CUDA_FUSED=0: assembly and solve as two kernels (for comparisons) */
        const char *fuse = getenv("CS_CUDA_FUSED");
        opt.fused_step = !(fuse && !strcmp(fuse, "0"));
        opt.device = be->p.device;
        opt.const_coupling = 1; /* s->u is uploaded once and every solve passes it unchanged */
        /* CS_CHUNKED_L: the chunked solver's most interior rows per chunk (4..32; default 16) */
        const char *chunk_l = getenv("CS_CHUNKED_L");
        if (chunk_l && be->p.solver && !strcmp(be->p.solver, "chunked")) opt.block_size = atoi(chunk_l);
        cs_solver_status ss = cs_hines_gpu_plan_create(ncell, be->cell_first, parent, &opt, &be->plan);
        if (ss == CS_SOLVER_OK) ss = cs_hines_gpu_set_stream(be->plan, s->stream);
        if (ss == CS_SOLVER_OK) ss = cs_hines_gpu_plan_row_map(be->plan, be->row_map);
        if (ss != CS_SOLVER_OK && strstr(cs_hines_gpu_last_error(), "unknown variant")) /* name epoch too */
            st = cs_error_set(CS_ERR_INVALID, "--solver: %s, or epoch (a whole epoch in one kernel)",
                              cs_hines_gpu_last_error());
        else if (ss != CS_SOLVER_OK) st = solver_fail(ss, "building the solver plan");
        else be->fused = opt.fused_step && cs_hines_gpu_plan_fuses(be->plan);
    }
    double *v_int = NULL;
    if (st == CS_OK) {
        s->n_int = cs_hines_gpu_plan_internal_size(be->plan);
        size_t bytes = s->n_int * sizeof(double);
        double **state[] = {&s->v, &s->rhs, &s->d, &s->i, &s->g};
        for (size_t k = 0; st == CS_OK && k < sizeof state / sizeof state[0]; ++k)
            st = cs_cuda_alloc((void **)state[k], bytes, "the cells' state");
        st = st == CS_OK ? setup_constants(be, parent) : st;
        free(parent);
        parent = NULL;
        /* v in the internal layout on the host (the mechanisms' initial states), then on the device */
        v_int = calloc(s->n_int ? s->n_int : 1, sizeof *v_int);
        double *v = malloc((nrow ? nrow : 1) * sizeof *v);
        if ((!v_int || !v) && st == CS_OK) st = cs_error_set(CS_ERR_NOMEM, "out of memory");
        for (int c = 0; st == CS_OK && c < ncell; ++c)
            for (int r = be->cell_first[c]; r < be->cell_first[c + 1]; ++r) {
                v[r] = net->cells[c].v_init;
                v_int[be->row_map[r]] = v[r];
            }
        if (st == CS_OK) st = upload_tree(be, v, nrow, s->v, CS_HINES_NODE);
        free(v);
    }
    free(parent);
    /* ions some mechanism uses: reversal potentials and concentrations by the CV's region (on the
     * host for the mechanisms' initial states, and on the device, again after them), currents */
    cs_cuda_ions ions = {0};
    if (st == CS_OK) st = cs_cuda_ions_build(net, be->cell_first, be->row_map, s->n_int, be->p.celsius, &ions);
    if (st == CS_OK) st = cs_cuda_ions_upload(&ions, s);
    if (st == CS_OK) st = cs_cuda_alloc((void **)&s->ev_range, 2 * CS_CUDA_MAX_MECH * sizeof(int), "event ranges");
    if (st == CS_OK) st = setup_mechanisms(be, v_int, &ions);
    if (st == CS_OK) st = cs_cuda_ions_upload(&ions, s);
    cs_cuda_ions_free(&ions);
    free(v_int);
    if (st == CS_OK && be->fused) st = setup_fused_flags(be);
    if (be->epoch) s->hh_ahead = 0; /* the epoch kernel computes every current in its step */
    CS_TRY(st);

    /* detectors, the NaN watch, probes, spike buffer, counters */
    int nd = (int)net->ndet, np = (int)net->nprobe;
    int *det_row = malloc(((size_t)nd + 1) * sizeof(int)), *det_gid = malloc(((size_t)nd + 1) * sizeof(int));
    double *det_thr = malloc(((size_t)nd + 1) * sizeof(double)), *det_vp = malloc(((size_t)nd + 1) * sizeof(double));
    int *cell_row = malloc(((size_t)ncell + 1) * sizeof(int)), *probe_row = malloc(((size_t)np + 1) * sizeof(int));
    if (!det_row || !det_gid || !det_thr || !det_vp || !cell_row || !probe_row)
        st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (int k = 0; st == CS_OK && k < nd; ++k) {
        const cs_detector_desc *dd = &net->det[k];
        det_row[k] = be->row_map[be->cell_first[dd->cell] + dd->node];
        det_gid[k] = dd->cell;
        det_thr[k] = dd->threshold;
        det_vp[k] = net->cells[dd->cell].v_init;
    }
    for (int c = 0; st == CS_OK && c < ncell; ++c) cell_row[c] = be->row_map[be->cell_first[c]];
    for (int k = 0; st == CS_OK && k < np; ++k)
        probe_row[k] = be->row_map[be->cell_first[net->probes[k].cell] + net->probes[k].node];
    s->ndet = nd;
    s->ncell = ncell;
    s->nprobe = np;
    s->cap_spike = nd * CS_SPIKES_PER_DETECTOR + 1024;
    if (st == CS_OK) st = upload_new((void **)&s->det_row, det_row, ((size_t)nd + 1) * sizeof(int), "detectors");
    if (st == CS_OK) st = upload_new((void **)&s->det_gid, det_gid, ((size_t)nd + 1) * sizeof(int), "detectors");
    if (st == CS_OK) st = upload_new((void **)&s->det_thr, det_thr, ((size_t)nd + 1) * sizeof(double), "detectors");
    if (st == CS_OK) st = upload_new((void **)&s->det_vprev, det_vp, ((size_t)nd + 1) * sizeof(double), "detectors");
    if (st == CS_OK) st = upload_new((void **)&s->cell_row, cell_row, ((size_t)ncell + 1) * sizeof(int), "cells");
    if (st == CS_OK) st = upload_new((void **)&s->probe_row, probe_row, ((size_t)np + 1) * sizeof(int), "probes");
    if (st == CS_OK) st = cs_cuda_alloc((void **)&s->spike_time, (size_t)s->cap_spike * sizeof(double), "spikes");
    if (st == CS_OK) st = cs_cuda_alloc((void **)&s->spike_gid, (size_t)s->cap_spike * sizeof(int), "spikes");
    if (st == CS_OK) st = cs_cuda_alloc((void **)&s->counters, 4 * sizeof(int), "counters");
    if (st == CS_OK) st = cs_cuda_alloc_ctx(&s->ctx);
    if (st == CS_OK) st = setup_probe_sources(be);
    if (st == CS_OK && be->epoch) st = cs_cuda_epoch_build(s, net, be->cell_first, be->inst_group, be->inst_local);
    s->dt = be->p.dt;
    s->sample_stride = be->p.sample_stride;
    be->v_first = s->v;
    /* CS_CUDA_GRAPHS=0 launches every kernel directly (for comparisons) */
    const char *graphs = getenv("CS_CUDA_GRAPHS");
    be->use_graphs = !(graphs && !strcmp(graphs, "0"));
    if (st == CS_OK) st = cs_cuda_timer_create(&be->timers, CS_TIMED_STEPS * CS_TIMED_MARKS);
    const char *fork = getenv("CS_CUDA_FORK"); /* CS_CUDA_FORK=0: every kernel in order (for comparisons) */
    for (size_t k = 0; k < net->ninst; ++k) be->ordered_update |= net->inst[k].type->conc_write != 0;
    if (st == CS_OK && !(fork && !strcmp(fork, "0"))) {
        st = cs_cuda_stream_create(&be->side);
        if (st == CS_OK) st = cs_cuda_timer_create(&be->fork_events, 2);
    }
    free(det_row); free(det_gid); free(det_thr); free(det_vp); free(cell_row); free(probe_row);
    CS_TRY(st);
    size_t mem1 = cs_cuda_memory_used();
    be->mem_bytes = mem1 > mem0 ? mem1 - mem0 : 0;
    be->spike_time = malloc((size_t)s->cap_spike * sizeof(double));
    be->spike_gid = malloc((size_t)s->cap_spike * sizeof(int));
    be->spikes = malloc((size_t)s->cap_spike * sizeof(cs_spike));
    if (!be->spike_time || !be->spike_gid || !be->spikes) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    return CS_OK;
}

static cs_status cuda_create(const cs_network_desc *net, const cs_backend_params *p, cs_backend **out) {
    if (cs_cuda_device_count() < 1) return cs_error_set(CS_ERR_DEVICE, "backend 'cuda': no CUDA device found");
    if (net->ncell > (size_t)INT_MAX || net->total_cv > (uint64_t)INT_MAX)
        return cs_error_set(CS_ERR_INVALID, "backend 'cuda': more than 2^31 CVs in one batch");
    cs_backend *be = calloc(1, sizeof *be);
    if (!be) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    be->net = net;
    be->p = *p;
    cs_status st = setup(be);
    if (st != CS_OK) {
        cuda_destroy(be);
        return st;
    }
    *out = be;
    return CS_OK;
}

static cs_status ensure_rows(cs_backend *be, size_t rows) {
    size_t np = be->s.nprobe ? (size_t)be->s.nprobe : 1;
    CS_TRY(grow_device((void **)&be->s.samples, &be->cap_rows_dev, rows * np, sizeof(double), "probe samples"));
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

static cs_status cuda_deliver(cs_backend *be, size_t n, const cs_target_event *ev) {
    return cs_event_queue_push(&be->ev, n, ev);
}

/* One step's events of one synapse type, [lo, hi) in delivery order, grouped by instance
 * (stable: each instance's keep their order), so the GPU delivers instances in parallel
 * (cs_mech_gpu_ops.net_receive). A step's events are usually few: insertion sort; many (inputs
 * that all fire at once), a sort by (instance, position). */
typedef struct {
    int loc, pos;
    double w;
} cs__ev_key;

static int cs__ev_key_compare(const void *x, const void *y) {
    const cs__ev_key *a = x, *b = y;
    if (a->loc != b->loc) return a->loc < b->loc ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

static cs_status group_by_instance(int *loc, double *w, size_t lo, size_t hi) {
    if (hi - lo > 64) {
        cs__ev_key *key = malloc((hi - lo) * sizeof *key);
        if (!key) return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
        for (size_t k = lo; k < hi; ++k) key[k - lo] = (cs__ev_key){loc[k], (int)(k - lo), w[k]};
        qsort(key, hi - lo, sizeof *key, cs__ev_key_compare);
        for (size_t k = lo; k < hi; ++k) loc[k] = key[k - lo].loc, w[k] = key[k - lo].w;
        free(key);
        return CS_OK;
    }
    for (size_t k = lo + 1; k < hi; ++k) {
        int l = loc[k];
        double x = w[k];
        size_t j = k;
        for (; j > lo && loc[j - 1] > l; --j) {
            loc[j] = loc[j - 1];
            w[j] = w[j - 1];
        }
        loc[j] = l;
        w[j] = x;
    }
    return CS_OK;
}

/* The epoch's events (due by the midpoint of its last step) go to the device, grouped by
 * synapse type, with the range of each step in each group (cs_cuda.h, ev_stride): events due by
 * a step's midpoint are delivered at its start. */
static cs_status stage_events(cs_backend *be, int64_t step0, int nsteps, size_t *ndue) {
    const double dt = be->p.dt;
    const cs_cuda_state *s = &be->s;
    const int nsyn = s->nsyn > 0 ? s->nsyn : 1, stride = s->ev_stride;
    int *hi = realloc(be->ev_hi, (size_t)nsyn * (size_t)stride * sizeof *hi);
    if (!hi) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    be->ev_hi = hi;
    CS_TRY(cs_event_queue_take(&be->ev, (double)(step0 + nsteps - 1) * dt + 0.5 * dt));
    const cs_target_event *ev = be->ev.due; /* in delivery order; then each type's, step by step */
    const size_t due = be->ev.ndue;
    *ndue = due;
    int *loc = realloc(be->ev_local, (due ? due : 1) * sizeof *loc);
    double *w = realloc(be->ev_weight, (due ? due : 1) * sizeof *w);
    if (loc) be->ev_local = loc;
    if (w) be->ev_weight = w;
    if (!loc || !w) return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
    size_t n = 0;
    for (int q = 0; q < nsyn; ++q) {
        int *h = hi + (size_t)q * (size_t)stride;
        size_t e = 0;
        h[0] = (int)n;
        for (int k = 0; k < nsteps; ++k) {
            double t = (double)(step0 + k) * dt;
            for (; e < due && ev[e].time <= t + 0.5 * dt; ++e) {
                if (s->nsyn && be->inst_group[ev[e].instance] != s->syn_groups[q]) continue;
                loc[n] = be->syn_local[ev[e].instance];
                w[n++] = ev[e].weight;
            }
            CS_TRY(group_by_instance(loc, w, (size_t)h[k], n));
            h[k + 1] = (int)n;
        }
    }
    if (!due) return CS_OK;
    size_t cap_l = be->cap_dev_ev, cap_w = be->cap_dev_ev;
    CS_TRY(grow_device((void **)&be->s.ev_local, &cap_l, due, sizeof(int), "events"));
    CS_TRY(grow_device((void **)&be->s.ev_weight, &cap_w, due, sizeof(double), "events"));
    be->cap_dev_ev = cap_l;
    CS_TRY(cs_cuda_upload(be->s.ev_local, loc, due * sizeof *loc));
    return cs_cuda_upload(be->s.ev_weight, w, due * sizeof *w);
}

/* The kernels of one step, the context's current step + j; mark >= 0 records timer events
 * mark .. mark + 7 around its phases (a step launched directly, for the profile). */
static cs_status step_kernels(cs_backend *be, int j, int mark) {
    cs_cuda_state *s = &be->s;
#define MARK(q) do { if (mark >= 0) CS_TRY(cs_cuda_timer_record(be->timers, mark + (q), s->stream)); } while (0)
    MARK(0);
    CS_TRY(cs_cuda_deliver(s, j));
    MARK(1);
    CS_TRY(cs_cuda_currents(s, j, be->p.celsius));
    MARK(2);
    if (be->fused) { /* assembly inside the solve: its time counts as the solver's */
        MARK(3);
        cs_hines_step_d step = {s->d0, s->cdt, s->b0, s->u, s->v, s->i, s->g, s->flags, s->d, s->rhs,
                                be->shared_constants, s->a0};
        cs_solver_status ss = cs_hines_gpu_step_internal_d(be->plan, &step);
        if (ss != CS_SOLVER_OK) return solver_fail(ss, "fused step");
        MARK(4);
    } else {
        CS_TRY(cs_cuda_assemble(s));
        MARK(3);
        cs_solver_status ss = cs_hines_gpu_solve_internal_d(be->plan, s->d, s->u, s->rhs);
        if (ss != CS_SOLVER_OK) return solver_fail(ss, "solve");
        MARK(4);
        double *tmp = s->v; /* the solution is the new v */
        s->v = s->rhs;
        s->rhs = tmp;
    }
    if (mark < 0 && be->side && !be->ordered_update) {
        /* untimed: detection and sampling (they read v and write spikes and samples) and the
         * state update of mechanism groups 1.. beside group 0's (each reads v and writes its own
         * states; hh as group 0 also its next current): ~3 of the ~9 dependent launches of a
         * small network's step leave the critical path */
        cs_cuda_state side = *s;
        side.stream = be->side;
        CS_TRY(cs_cuda_timer_record(be->fork_events, 0, s->stream));
        CS_TRY(cs_cuda_stream_wait(be->side, be->fork_events, 0));
        CS_TRY(cs_cuda_detect(&side, j));
        if (!s->probe_src) CS_TRY(cs_cuda_sample(&side, j));
        CS_TRY(cs_cuda_advance(&side, be->p.celsius, j, 1, s->nmech));
        CS_TRY(cs_cuda_advance(s, be->p.celsius, j, 0, 1));
        CS_TRY(cs_cuda_timer_record(be->fork_events, 1, be->side));
        CS_TRY(cs_cuda_stream_wait(s->stream, be->fork_events, 1));
        /* probes of states read what the update writes: after it */
        if (s->probe_src) CS_TRY(cs_cuda_sample(s, j));
    } else {
        CS_TRY(cs_cuda_advance(s, be->p.celsius, j, 0, s->nmech));
        MARK(5);
        CS_TRY(cs_cuda_detect(s, j));
        MARK(6);
        CS_TRY(cs_cuda_sample(s, j));
        MARK(7);
    }
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
            CS_TRY(step_kernels(be, 0, -1));
            CS_TRY(cs_cuda_next_steps(s, 1));
        }
        return CS_OK;
    }
    const void *bufs[4] = {s->samples, s->ev_local, s->ev_weight, s->ev_hi};
    if (memcmp(bufs, be->graph_bufs, sizeof bufs)) { /* a buffer a graph names has moved */
        drop_graphs(be);
        memcpy(be->graph_bufs, bufs, sizeof bufs);
    }
    for (int b = CS_GRAPH_LEVELS - 1; b >= 0; --b) {
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
                CS_TRY(cs_cuda_capture_begin(s->stream));
                cs_status st = CS_OK;
                for (int j = 0; st == CS_OK && j < len; ++j) st = step_kernels(be, j, -1);
                if (st == CS_OK) st = cs_cuda_next_steps(s, len);
                void *exec = NULL;
                cs_status st2 = cs_cuda_capture_end(s->stream, &exec);
                CS_TRY(st);
                CS_TRY(st2);
                *g = exec;
                CS_TRY(cs_cuda_graph_launch(*g, s->stream));
            }
            n -= len;
        }
    }
    return CS_OK;
}

/* The steps of an epoch of nsteps timed phase by phase for the profile: one in 16, at least one,
 * at most CS_TIMED_STEPS (CS_CUDA_TIMED_STEPS=N sets that most, 1..CS_TIMED_STEPS). A timed step
 * launches its kernels one by one between CUDA events, outside the graphs and the side stream:
 * with many small kernels (a circuit of Allen cells has ~40 a step) it takes ~2x an untimed
 * step, so timing 8 of an epoch's 20 steps (a 1 ms minimum delay) slowed the whole run. */
static int timed_steps(int nsteps) {
    int most = CS_TIMED_STEPS;
    const char *e = getenv("CS_CUDA_TIMED_STEPS");
    if (e && atoi(e) >= 1 && atoi(e) <= CS_TIMED_STEPS) most = atoi(e);
    int n = nsteps / 16;
    if (n > most) n = most;
    if (n > nsteps) n = nsteps;
    return n < 1 ? 1 : n;
}

static cs_status cuda_launch_epoch(cs_backend *be, int64_t step0, int nsteps) {
    cs_cuda_state *s = &be->s;
    const int stride = be->p.sample_stride;
    be->step0 = step0;
    be->nsteps = nsteps;
    be->rows = (int)((step0 + nsteps) / stride - step0 / stride);
    CS_TRY(ensure_rows(be, (size_t)be->rows + 1));
    const size_t nsyn = s->nsyn > 0 ? (size_t)s->nsyn : 1;
    if (nsteps > be->cap_ev_hi) {
        cs_cuda_free(s->ev_hi);
        s->ev_hi = NULL;
        be->cap_ev_hi = 0;
        CS_TRY(cs_cuda_alloc((void **)&s->ev_hi, nsyn * ((size_t)nsteps + 1) * sizeof(int), "event ranges"));
        be->cap_ev_hi = nsteps;
    }
    s->ev_stride = be->cap_ev_hi + 1; /* changes only with ev_hi's address (graphs are then dropped) */
    size_t due = 0;
    CS_TRY(stage_events(be, step0, nsteps, &due));
    CS_TRY(cs_cuda_upload(s->ev_hi, be->ev_hi, nsyn * (size_t)s->ev_stride * sizeof(int)));
    CS_TRY(cs_cuda_epoch_start(s, (long long)step0));
    if (be->epoch) { /* one launch, timed as a whole; its phases from block 0's clock */
        CS_TRY(cs_cuda_timer_record(be->timers, 0, s->stream));
        CS_TRY(cs_cuda_epoch_run(s, (long long)step0, nsteps, be->p.celsius));
        return cs_cuda_timer_record(be->timers, 1, s->stream);
    }

    /* a few steps, spread over the epoch, run directly between timer events (timed_steps) */
    const int ntime = timed_steps(nsteps), every = nsteps / ntime;
    be->ntimed = 0;
    for (int k = 0; k < nsteps;) {
        if (k % every == 0 && be->ntimed < ntime) {
            CS_TRY(step_kernels(be, 0, be->ntimed * CS_TIMED_MARKS));
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

/* the epoch kernel's time, shared among the phases as block 0's cycles were */
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

static cs_status cuda_collect_epoch(cs_backend *be, cs_profile *prof, cs_epoch_result *res) {
    cs_cuda_state *s = &be->s;
    CS_TRY(cs_cuda_sync(s->stream));
    static const cs_phase phase_of[CS_TIMED_MARKS - 1] = {CS_PHASE_EVENTS, CS_PHASE_CURRENT, CS_PHASE_ASSEMBLE,
                                                          CS_PHASE_SOLVE, CS_PHASE_UPDATE, CS_PHASE_DETECT,
                                                          CS_PHASE_SAMPLE};
    double scale = be->ntimed ? (double)be->nsteps / be->ntimed : 0;
    if (be->epoch) CS_TRY(epoch_profile(be, prof));
    for (int j = 0; !be->epoch && j < be->ntimed; ++j)
        for (int k = 0; k + 1 < CS_TIMED_MARKS; ++k) {
            float ms;
            CS_TRY(cs_cuda_timer_elapsed(be->timers, j * CS_TIMED_MARKS + k, j * CS_TIMED_MARKS + k + 1, &ms));
            prof->seconds[phase_of[k]] += 1e-3 * ms * scale;
        }
    int counters[3];
    CS_TRY(cs_cuda_download(counters, s->counters, sizeof counters));
    if (counters[0] > s->cap_spike)
        return cs_error_set(CS_ERR_INTERNAL, "GPU: %d spikes in one epoch, more than the %d the buffer holds "
                                             "(%d per detector)", counters[0], s->cap_spike, CS_SPIKES_PER_DETECTOR);
    int ns = counters[0];
    CS_TRY(cs_cuda_download(be->spike_time, s->spike_time, (size_t)ns * sizeof(double)));
    CS_TRY(cs_cuda_download(be->spike_gid, s->spike_gid, (size_t)ns * sizeof(int)));
    for (int k = 0; k < ns; ++k) be->spikes[k] = (cs_spike){be->spike_time[k], (uint64_t)be->spike_gid[k]};
    CS_TRY(cs_cuda_download(be->samples, s->samples, (size_t)be->rows * (size_t)s->nprobe * sizeof(double)));
    *res = cs_epoch_result_of((size_t)ns, be->spikes, (size_t)be->rows, be->samples);
    if (counters[1] != INT_MAX) {
        res->failed_cell = counters[2];
        res->failed_time = (double)(be->step0 + counters[1] + 1) * be->p.dt;
    }
    return CS_OK;
}

static const char *cuda_describe(const cs_backend *be) {
    static _Thread_local char text[512];
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
    return text;
}

static const cs_backend_ops cs__cuda_ops = {"cuda", cuda_create, cuda_init, cuda_deliver, cuda_launch_epoch,
                                            cuda_collect_epoch, cuda_destroy, cuda_describe};

const cs_backend_ops *cs_backend_cuda(void) { return cs_cuda_device_count() > 0 ? &cs__cuda_ops : NULL; }

int cs_backend_cuda_devices(void) { return cs_cuda_device_count(); }

void cs_backend_cuda_identity(int device, char *buf, size_t len) { cs_cuda_identity(device, buf, len); }

const char *cs_backend_cuda_unavailable(void) { return "no CUDA device found on this machine"; }

const char *cs_backend_cuda_solver(const cs_backend_ops *ops, const cs_backend *b) {
    if (ops != &cs__cuda_ops || !b) return NULL;
    return b->epoch ? "epoch" : cs_hines_gpu_plan_variant(b->plan);
}

#endif
