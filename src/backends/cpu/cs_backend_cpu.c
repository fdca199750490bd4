/* The CPU backend: cells are cut into batches of contiguous cells (a few thousand CVs each, so
 * a batch's arrays stay in cache); each batch holds its state as flat structure-of-arrays and
 * runs a whole epoch on its own, so OpenMP threads take batches with no barrier inside an
 * epoch. The step is backward Euler with linearised currents (DESIGN.md):
 *   d = d0 + g_m,  rhs = C/dt·v + b0 − (i_m − g_m·v),  solve → v_new   (cs_cable_matrix.h) */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_backend.h"
#include "cs_cable_matrix.h"
#include "cs_event_queue.h"
#include "cs_ion.h"
#include "cs_solver.h"

#define CS_BATCH_TARGET_CV 4096 /* CVs per batch: ~10 arrays × 8 B × 4096 = 320 KiB, about L2 */
#define CS_MAX_MECH 32

typedef struct {
    const cs_mech_type *type;
    int n;
    int *node;                    /* [n] batch row */
    double *weight;               /* [n] */
    double *store;                /* [(nparam + nstate) × n] */
    double *param[CS_MAX_PARAMS];
    double *state[CS_MAX_STATES];
} mech_group;

typedef struct {
    int cell0, ncell;             /* cells (gids) [cell0, cell0 + ncell) */
    int ncv;
    int *cv_off;                  /* [ncell + 1] first row of each cell */
    int *parent;                  /* [ncv] parent row, -1 at a cell's root */
    double *u;                    /* [ncv] off-diagonal −g_axial/Ra [µS] */
    double *d0;                   /* [ncv] C/dt + Σ g_axial + folded conductances [µS] */
    double *b0;                   /* [ncv] folded constant currents [nA] (cs_cable_matrix.h) */
    double *cdt;                  /* [ncv] C/dt [nF/ms = µS] */
    double *v_own;                /* [ncv] [mV] the batch's voltages between epochs */
    /* during its epoch (run_batch), the running thread's scratch (cs_backend.scratch), with v
     * and rhs swapped after each solve; between epochs v = v_own and the others NULL */
    double *v, *rhs;              /* [ncv] [mV] */
    double *i, *g, *d;            /* [ncv] [nA], [µS], [µS] */
    int nmech;
    mech_group mech[CS_MAX_MECH];
    unsigned ions;                /* bit (1 << CS_ION_*): ions some mechanism reads or writes */
    double *ion_e[CS_NION];       /* [ncv] reversal potentials [mV] (NULL for ions not used) */
    double *ion_i[CS_NION];       /* [ncv] ion current densities [mA/cm²], zeroed every step */
    double *ion_ci[CS_NION];      /* [ncv] inside concentrations [mM] (NULL for ions not used) */
    double *ion_co[CS_NION];      /* [ncv] outside concentrations [mM] */
    int nnernst[CS_NION];         /* rows whose mechanisms read the concentrations (style >= READ): */
    int *nernst[CS_NION];         /* e = Nernst at initialisation; first nadvance of them: style WRITE, */
    int nadvance[CS_NION];        /* e = Nernst at every step (cs_ion.h) */
    int nused[CS_NION];           /* rows where some mechanism uses the ion: only there can its */
    int *used[CS_NION];           /* current density be non-zero, so only there is it zeroed */
    char conc_error[256];         /* a concentration gone negative or NaN (set by the batch's thread) */
    int nactive;
    int *active;                  /* [nactive] rows where a mechanism is evaluated every step */
    size_t inst0, ninst;          /* network instances [inst0, inst0 + ninst) live here */
    int *inst_group, *inst_local; /* [ninst] where each instance lives */
    int ndet;
    int *det_row, *det_gid;
    double *det_thr, *det_vprev;  /* [mV] */
    int nprobe;
    int *probe_row;               /* [nprobe] row of a voltage or ion probe */
    const double **probe_src;     /* [nprobe] a state probe's value (a mechanism state's element),
                                     or NULL: v (or the ion array) at probe_row */
    int *probe_ion;               /* [nprobe] an ion probe's CS_ION_*, PROBE_IMEM, or -1 */
    /* i_membrane probes only (NULL otherwise): the electrodes' current of the step [nA] (outward
     * positive, as they add it to i) and their conductance (unused), and each row's children
     * (CSR) for the axial currents */
    double *elec, *elec_tmp;      /* [ncv] [nA], [µS] */
    int *child_first, *child;     /* [ncv + 1], [ncv] */
    size_t *probe_col;            /* [nprobe] column in the epoch's sample rows */
    cs_event_queue ev;            /* pending events */
    cs_spike *spikes;
    size_t nspike, cap_spike;
    int failed_cell;
    double failed_time;
    cs_status status;
    double phase[CS_PHASE_COUNT]; /* [s] */
} batch;

struct cs_backend {
    const cs_network_desc *net;
    cs_backend_params p;
    int nbatch;
    batch *b;
    size_t *inst_batch;           /* [ninst] batch of each network instance */
    double *samples;              /* [cap_rows × nprobe] [mV] */
    size_t cap_rows;
    size_t rows;                  /* sample rows of the launched epoch */
    cs_spike *spikes;
    size_t cap_spikes;
    /* per OpenMP thread, 4 arrays of the largest batch's CVs: rhs, i, g, d live only during a
     * batch's epoch, so they are the thread's, not the batch's (32 B per CV less to keep) */
    double *scratch;
    size_t max_ncv;
};

#define PROBE_IMEM (-2) /* probe_ion of an i_membrane probe */

/* Point processes that receive no events are the stimuli (the model's "stimuli"): electrodes,
 * whose current is not membrane current (i_membrane). */
static int is_electrode(const cs_mech_type *t) { return t->kind == CS_MECH_POINT && !t->receives_events; }

static void *xcalloc(size_t n, size_t size, int *fail) {
    void *p = calloc(n ? n : 1, size);
    if (!p) *fail = 1;
    return p;
}

static cs_status setup_batch(cs_backend *be, batch *b) {
    const cs_network_desc *net = be->net;
    int fail = 0;
    b->ncv = 0;
    for (int c = 0; c < b->ncell; ++c) b->ncv += net->cells[b->cell0 + c].geom->ncv;
    size_t n = (size_t)b->ncv;
    b->cv_off = xcalloc((size_t)b->ncell + 1, sizeof(int), &fail);
    b->parent = xcalloc(n, sizeof(int), &fail);
    b->u = xcalloc(n, sizeof(double), &fail);
    b->d0 = xcalloc(n, sizeof(double), &fail);
    b->b0 = xcalloc(n, sizeof(double), &fail);
    b->cdt = xcalloc(n, sizeof(double), &fail);
    b->v_own = b->v = xcalloc(n, sizeof(double), &fail);
    if (fail) return cs_error_set(CS_ERR_NOMEM, "out of memory for %d CVs", b->ncv);

    int row = 0;
    for (int c = 0; c < b->ncell; ++c) {
        const cs_cell_desc *cell = &net->cells[b->cell0 + c];
        b->cv_off[c] = row;
        cs_cable_matrix_cell(cell, be->p.dt, row, b->parent, b->u, b->cdt, b->d0, b->b0);
        row += cell->geom->ncv;
    }
    b->cv_off[b->ncell] = row;

    /* mechanism instances of these cells: contiguous in the network description */
    size_t k0 = b->inst0, k1 = b->inst0 + b->ninst;
    b->inst_group = xcalloc(b->ninst, sizeof(int), &fail);
    b->inst_local = xcalloc(b->ninst, sizeof(int), &fail);
    if (fail) return cs_error_set(CS_ERR_NOMEM, "out of memory for mechanism instances");
    for (size_t k = k0; k < k1; ++k) {
        const cs_instance_desc *in = &net->inst[k];
        b->inst_group[k - k0] = -1;
        if (cs_cable_matrix_fold(in, b->cv_off[in->cell - b->cell0] + in->node, b->d0, b->b0)) continue;
        int gidx = -1;
        for (int m = 0; m < b->nmech; ++m)
            if (b->mech[m].type == in->type) gidx = m;
        if (gidx < 0) {
            if (b->nmech == CS_MAX_MECH) return cs_error_set(CS_ERR_INTERNAL, "too many mechanism types");
            gidx = b->nmech++;
            b->mech[gidx].type = in->type;
        }
        b->inst_group[k - k0] = gidx;
        b->inst_local[k - k0] = b->mech[gidx].n++;
    }
    for (int m = 0; m < b->nmech; ++m) {
        mech_group *mg = &b->mech[m];
        int np = mg->type->nparam, ns = mg->type->nstate;
        mg->node = xcalloc((size_t)mg->n, sizeof(int), &fail);
        mg->weight = xcalloc((size_t)mg->n, sizeof(double), &fail);
        mg->store = xcalloc((size_t)(np + ns) * (size_t)mg->n, sizeof(double), &fail);
        if (fail) return cs_error_set(CS_ERR_NOMEM, "out of memory for mechanism '%s'", mg->type->name);
        for (int j = 0; j < np; ++j) mg->param[j] = mg->store + (size_t)j * (size_t)mg->n;
        for (int j = 0; j < ns; ++j) mg->state[j] = mg->store + (size_t)(np + j) * (size_t)mg->n;
    }
    for (size_t k = k0; k < k1; ++k) {
        const cs_instance_desc *in = &net->inst[k];
        if (b->inst_group[k - k0] < 0) continue; /* folded into the matrix */
        mech_group *mg = &b->mech[b->inst_group[k - k0]];
        int l = b->inst_local[k - k0];
        mg->node[l] = b->cv_off[in->cell - b->cell0] + in->node;
        mg->weight[l] = in->weight;
        for (int j = 0; j < mg->type->nparam; ++j) mg->param[j][l] = in->param[j];
    }
    /* ions: per-CV reversal potentials and concentrations from the cells' regions, current
     * accumulators, and the rows where Nernst applies (the highest style of their mechanisms) */
    for (int m = 0; m < b->nmech; ++m) b->ions |= cs_ion_used(b->mech[m].type);
    for (int ion = 0; ion < CS_NION; ++ion) {
        if (!(b->ions & (1u << ion))) continue;
        b->ion_e[ion] = xcalloc(n, sizeof(double), &fail);
        b->ion_i[ion] = xcalloc(n, sizeof(double), &fail);
        b->ion_ci[ion] = xcalloc(n, sizeof(double), &fail);
        b->ion_co[ion] = xcalloc(n, sizeof(double), &fail);
        b->nernst[ion] = xcalloc(n, sizeof(int), &fail);
        b->used[ion] = xcalloc(n, sizeof(int), &fail);
        unsigned char *style = xcalloc(n, 1, &fail), *used = xcalloc(n, 1, &fail);
        if (fail) {
            free(style);
            free(used);
            return cs_error_set(CS_ERR_NOMEM, "out of memory for ions of %d CVs", b->ncv);
        }
        for (int c = 0; c < b->ncell; ++c) {
            const cs_cell_desc *cell = &net->cells[b->cell0 + c];
            for (int r = 0; r < cell->geom->ncv; ++r) {
                int t = cell->geom->tag[r] & (CS_NTAG - 1);
                b->ion_e[ion][b->cv_off[c] + r] = cell->ion_e[ion][t];
                b->ion_ci[ion][b->cv_off[c] + r] = cell->ion_ci[ion][t];
                b->ion_co[ion][b->cv_off[c] + r] = cell->ion_co[ion][t];
            }
        }
        for (int m = 0; m < b->nmech; ++m)
            for (int l = 0; l < b->mech[m].n; ++l) {
                int st = cs_ion_style_of(b->mech[m].type, ion), r = b->mech[m].node[l];
                if (st > style[r]) style[r] = (unsigned char)st;
                if ((cs_ion_used(b->mech[m].type) >> ion) & 1u) used[r] = 1;
            }
        for (int r = 0; r < b->ncv; ++r)
            if (used[r]) b->used[ion][b->nused[ion]++] = r;
        free(used);
        for (int r = 0; r < b->ncv; ++r)
            if (style[r] == CS_ION_STYLE_WRITE) b->nernst[ion][b->nadvance[ion]++] = r;
        b->nnernst[ion] = b->nadvance[ion];
        for (int r = 0; r < b->ncv; ++r)
            if (style[r] == CS_ION_STYLE_READ) b->nernst[ion][b->nnernst[ion]++] = r;
        free(style);
    }
    /* the rows whose i and g the mechanisms touch: the only ones the per-step assembly visits */
    char *mark = xcalloc(n, 1, &fail);
    b->active = xcalloc(n, sizeof(int), &fail);
    if (fail) {
        free(mark);
        return cs_error_set(CS_ERR_NOMEM, "out of memory for %d CVs", b->ncv);
    }
    for (int m = 0; m < b->nmech; ++m)
        for (int l = 0; l < b->mech[m].n; ++l) mark[b->mech[m].node[l]] = 1;
    for (int r = 0; r < b->ncv; ++r)
        if (mark[r]) b->active[b->nactive++] = r;
    free(mark);
    if (cs_hines_check_structure(b->ncell, b->cv_off, b->parent) != CS_SOLVER_OK)
        return cs_error_set(CS_ERR_INTERNAL, "cells %d..%d: the cable matrix is not in tree order", b->cell0,
                            b->cell0 + b->ncell - 1);

    /* detectors and probes of these cells */
    b->det_row = xcalloc(net->ndet, sizeof(int), &fail);
    b->det_gid = xcalloc(net->ndet, sizeof(int), &fail);
    b->det_thr = xcalloc(net->ndet, sizeof(double), &fail);
    b->det_vprev = xcalloc(net->ndet, sizeof(double), &fail);
    b->probe_row = xcalloc(net->nprobe, sizeof(int), &fail);
    b->probe_col = xcalloc(net->nprobe, sizeof(size_t), &fail);
    b->probe_src = xcalloc(net->nprobe, sizeof(double *), &fail);
    b->probe_ion = xcalloc(net->nprobe, sizeof(int), &fail);
    if (fail) return cs_error_set(CS_ERR_NOMEM, "out of memory for detectors and probes");
    for (size_t k = 0; k < net->ndet; ++k) {
        const cs_detector_desc *dd = &net->det[k];
        if (dd->cell < b->cell0 || dd->cell >= b->cell0 + b->ncell) continue;
        b->det_row[b->ndet] = b->cv_off[dd->cell - b->cell0] + dd->node;
        b->det_gid[b->ndet] = dd->cell;
        b->det_thr[b->ndet] = dd->threshold;
        b->ndet++;
    }
    for (size_t k = 0; k < net->nprobe; ++k) {
        const cs_probe_desc *pd = &net->probes[k];
        if (pd->cell < b->cell0 || pd->cell >= b->cell0 + b->ncell) continue;
        b->probe_row[b->nprobe] = b->cv_off[pd->cell - b->cell0] + pd->node;
        b->probe_col[b->nprobe] = k;
        b->probe_ion[b->nprobe] = pd->kind == CS_PROBE_ION ? pd->index : pd->kind == CS_PROBE_IMEM ? PROBE_IMEM : -1;
        if (pd->kind == CS_PROBE_CONC_I || pd->kind == CS_PROBE_CONC_O || pd->kind == CS_PROBE_EREV) {
            double *arr = pd->kind == CS_PROBE_CONC_I   ? b->ion_ci[pd->index]
                          : pd->kind == CS_PROBE_CONC_O ? b->ion_co[pd->index]
                                                        : b->ion_e[pd->index];
            b->probe_src[b->nprobe] = arr + b->probe_row[b->nprobe]; /* the build checked the ion is used there */
        }
        if (pd->kind == CS_PROBE_DENSITY || pd->kind == CS_PROBE_SYNAPSE || pd->kind == CS_PROBE_STIMULUS) {
            /* the build found the instance; a folded one (a linear mechanism) keeps no states */
            int gidx = b->inst_group[pd->inst - b->inst0];
            if (gidx < 0)
                return cs_error_set(CS_ERR_INVALID, "probe of a state of '%s', a linear mechanism folded into the "
                                    "cable matrix, which keeps no states", net->inst[pd->inst].type->name);
            b->probe_src[b->nprobe] = &b->mech[gidx].state[pd->index][b->inst_local[pd->inst - b->inst0]];
        }
        b->nprobe++;
    }
    int imem = 0;
    for (int k = 0; k < b->nprobe; ++k) imem |= b->probe_ion[k] == PROBE_IMEM;
    for (int m = 0; imem && m < b->nmech; ++m)
        if (is_electrode(b->mech[m].type) && b->mech[m].type->ion_write)
            return cs_error_set(CS_ERR_UNSUPPORTED, "i_membrane probes with the stimulus '%s', which writes an ion "
                                "current: not supported", b->mech[m].type->name);
    if (imem) {
        b->elec = xcalloc(n, sizeof(double), &fail);
        b->elec_tmp = xcalloc(n, sizeof(double), &fail);
        b->child_first = xcalloc(n + 1, sizeof(int), &fail);
        b->child = xcalloc(n, sizeof(int), &fail);
        if (fail) return cs_error_set(CS_ERR_NOMEM, "out of memory for i_membrane probes");
        for (int r = 0; r < b->ncv; ++r)
            if (b->parent[r] >= 0) b->child_first[b->parent[r] + 1]++;
        for (int r = 0; r < b->ncv; ++r) b->child_first[r + 1] += b->child_first[r];
        int *fill = xcalloc(n, sizeof(int), &fail);
        if (fail) return cs_error_set(CS_ERR_NOMEM, "out of memory for i_membrane probes");
        for (int r = 0; r < b->ncv; ++r)
            if (b->parent[r] >= 0) b->child[b->child_first[b->parent[r]] + fill[b->parent[r]]++] = r;
        free(fill);
    }
    b->failed_cell = -1;
    return CS_OK;
}

static void destroy_batch(batch *b) {
    free(b->cv_off); free(b->parent); free(b->u); free(b->d0); free(b->b0); free(b->cdt);
    free(b->v_own);
    for (int m = 0; m < b->nmech; ++m) {
        free(b->mech[m].node); free(b->mech[m].weight); free(b->mech[m].store);
    }
    free(b->inst_group); free(b->inst_local); free(b->active);
    free(b->det_row); free(b->det_gid); free(b->det_thr); free(b->det_vprev);
    free(b->probe_row); free(b->probe_col); free(b->probe_src); free(b->probe_ion);
    free(b->elec); free(b->elec_tmp); free(b->child_first); free(b->child);
    cs_event_queue_free(&b->ev); free(b->spikes);
    for (int ion = 0; ion < CS_NION; ++ion) {
        free(b->ion_e[ion]); free(b->ion_i[ion]); free(b->ion_ci[ion]); free(b->ion_co[ion]); free(b->nernst[ion]);
        free(b->used[ion]);
    }
}

static void cpu_destroy(cs_backend *be) {
    if (!be) return;
    for (int k = 0; k < be->nbatch; ++k) destroy_batch(&be->b[k]);
    free(be->b);
    free(be->inst_batch);
    free(be->samples);
    free(be->spikes);
    free(be->scratch);
    free(be);
}

static cs_status cpu_create(const cs_network_desc *net, const cs_backend_params *p, cs_backend **out) {
    cs_backend *be = calloc(1, sizeof *be);
    if (!be) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    be->net = net;
    be->p = *p;
    /* batches: contiguous cells, about CS_BATCH_TARGET_CV CVs each, and at least 4 per thread
     * when there are enough cells, so dynamic scheduling can balance uneven cells. */
    size_t target = CS_BATCH_TARGET_CV;
    size_t per_thread = net->total_cv / ((size_t)p->threads * 4);
    if (per_thread < target) target = per_thread > 0 ? per_thread : 1;
    be->b = calloc(net->ncell ? net->ncell : 1, sizeof *be->b);
    be->inst_batch = calloc(net->ninst ? net->ninst : 1, sizeof *be->inst_batch);
    if (!be->b || !be->inst_batch) {
        cpu_destroy(be);
        return cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    size_t c = 0, k = 0;
    while (c < net->ncell) {
        batch *b = &be->b[be->nbatch++];
        b->cell0 = (int)c;
        size_t cv = 0;
        while (c < net->ncell && (cv == 0 || cv + (size_t)net->cells[c].geom->ncv <= target)) {
            cv += (size_t)net->cells[c].geom->ncv;
            ++c;
        }
        b->ncell = (int)c - b->cell0;
        b->inst0 = k;
        while (k < net->ninst && net->inst[k].cell < (int)c) be->inst_batch[k++] = (size_t)(be->nbatch - 1);
        b->ninst = k - b->inst0;
    }
    cs_status st = CS_OK;
    for (int j = 0; j < be->nbatch && st == CS_OK; ++j) st = setup_batch(be, &be->b[j]);
    for (int j = 0; st == CS_OK && j < be->nbatch; ++j)
        if ((size_t)be->b[j].ncv > be->max_ncv) be->max_ncv = (size_t)be->b[j].ncv;
    if (st == CS_OK && !(be->scratch = malloc(4 * (be->max_ncv ? be->max_ncv : 1) * (size_t)p->threads * sizeof(double))))
        st = cs_error_set(CS_ERR_NOMEM, "out of memory for %d threads' scratch", p->threads);
    if (st != CS_OK) {
        cpu_destroy(be);
        return st;
    }
    *out = be;
    return CS_OK;
}

static cs_mech_view view_of(const batch *b, const mech_group *mg, double t, const cs_backend_params *p) {
    cs_mech_view v = {mg->n, mg->node, mg->weight, b->v, b->i, b->g, mg->param, mg->state,
                      t, p->dt, p->celsius, {NULL, NULL, NULL}, {NULL, NULL, NULL}, {NULL, NULL, NULL},
                      {NULL, NULL, NULL}, NULL, NULL, 0, 0.0, NULL, NULL, {NULL, NULL, NULL}, 0, 0};
    for (int ion = 0; ion < CS_NION; ++ion) {
        v.ion_e[ion] = b->ion_e[ion];
        v.ion_i[ion] = b->ion_i[ion];
        v.ion_ci[ion] = b->ion_ci[ion];
        v.ion_co[ion] = b->ion_co[ion];
    }
    return v;
}

/* Reversal potentials from the concentrations (NEURON's ion_style): on the first `count` rows of
 * the ion's Nernst list (nadvance: every step; nnernst: at initialisation). A concentration gone
 * negative or NaN ends the run, naming the cell and the mechanisms that write it. */
static void nernst_rows(const cs_backend *be, batch *b, int ion, int count, double t) {
    static const double z[CS_NION] = CS_ION_VALENCE;
    static const char *const stem[CS_NION] = {"na", "k", "ca"};
    const int *rows = b->nernst[ion];
    for (int k = 0; k < count; ++k) {
        int r = rows[k];
        double ci = b->ion_ci[ion][r], co = b->ion_co[ion][r];
        if (!(ci >= 0.0 && co >= 0.0) && !b->conc_error[0]) {
            int c = 0;
            while (b->cv_off[c + 1] <= r) ++c;
            const char *by = "";
            for (int m = 0; m < b->nmech && !by[0]; ++m)
                if ((b->mech[m].type->conc_write >> ion) & 1u) by = b->mech[m].type->name;
            snprintf(b->conc_error, sizeof b->conc_error,
                     "cell %llu: %s%c became %g mM (negative or NaN) at t = %g ms on CV %d, written by mechanism '%s'",
                     (unsigned long long)be->net->cells[b->cell0 + c].gid, stem[ion], ci >= 0.0 ? 'o' : 'i',
                     ci >= 0.0 ? co : ci, t, r - b->cv_off[c], by[0] ? by : "(none)");
        }
        b->ion_e[ion][r] = cs_nernst(ci, co, z[ion], be->p.celsius);
    }
}

static cs_status ensure_rows(cs_backend *be, size_t rows) {
    if (rows <= be->cap_rows) return CS_OK;
    double *s = realloc(be->samples, rows * (be->net->nprobe ? be->net->nprobe : 1) * sizeof(double));
    if (!s) return cs_error_set(CS_ERR_NOMEM, "out of memory for probe samples");
    be->samples = s;
    be->cap_rows = rows;
    return CS_OK;
}

/* The total membrane current of row r [nA] after a step (NEURON's i_membrane_, capacitive plus
 * ionic, electrodes excluded): by Kirchhoff at the solved voltages, what flows in axially plus
 * what the electrodes inject. Backward Euler makes it C/dt·Δv + i_ion + g_ion·Δv exactly, the
 * linearised currents of the step (folded ones included). */
static double membrane_current(const batch *b, int r) {
    const double *v = b->v;
    double in = 0.0;
    if (b->parent[r] >= 0) in += -b->u[r] * (v[b->parent[r]] - v[r]); /* u = −g_axial [µS] */
    for (int k = b->child_first[r]; k < b->child_first[r + 1]; ++k) {
        int c = b->child[k];
        in += -b->u[c] * (v[c] - v[r]);
    }
    return in - b->elec[r];
}

static void sample_row(const cs_backend *be, const batch *b, size_t row) {
    double *out = be->samples + row * be->net->nprobe;
    for (int k = 0; k < b->nprobe; ++k)
        out[b->probe_col[k]] = b->probe_src[k]               ? *b->probe_src[k]
                               : b->probe_ion[k] >= 0          ? b->ion_i[b->probe_ion[k]][b->probe_row[k]]
                               : b->probe_ion[k] == PROBE_IMEM ? membrane_current(b, b->probe_row[k])
                                                               : b->v[b->probe_row[k]];
}

static cs_status cpu_init(cs_backend *be, cs_epoch_result *res) {
    CS_TRY(ensure_rows(be, 1));
    for (int j = 0; j < be->nbatch; ++j) {
        batch *b = &be->b[j];
        for (int c = 0; c < b->ncell; ++c)
            for (int r = b->cv_off[c]; r < b->cv_off[c + 1]; ++r) b->v[r] = be->net->cells[b->cell0 + c].v_init;
        /* NEURON's order: the ions' init (Nernst where concentrations are read), then each
         * mechanism's INITIAL, after which a written concentration updates e again */
        for (int ion = 0; ion < CS_NION; ++ion)
            if (b->nernst[ion]) nernst_rows(be, b, ion, b->nnernst[ion], 0.0);
        for (int m = 0; m < b->nmech; ++m) {
            cs_mech_view v = view_of(b, &b->mech[m], 0.0, &be->p);
            b->mech[m].type->init(&v);
            for (int ion = 0; ion < CS_NION; ++ion)
                if ((b->mech[m].type->conc_write >> ion) & 1u) nernst_rows(be, b, ion, b->nnernst[ion], 0.0);
        }
        if (b->conc_error[0]) return cs_error_set(CS_ERR_NUMERIC, "%s", b->conc_error);
        for (int k = 0; k < b->ndet; ++k) b->det_vprev[k] = b->v[b->det_row[k]];
    }
    /* NET_RECEIVE's INITIAL, on each connection's weight vector (cs_build.h) */
    for (size_t k = 0; k < be->net->nwvec; ++k) {
        size_t in = be->net->wvec_inst[k];
        batch *b = &be->b[be->inst_batch[in]];
        mech_group *mg = &b->mech[b->inst_group[in - b->inst0]];
        cs_mech_view v = view_of(b, mg, 0.0, &be->p);
        if (mg->type->net_init) mg->type->net_init(&v, b->inst_local[in - b->inst0], be->net->wvec + k * CS_MAX_WEIGHTS);
    }
    for (int j = 0; j < be->nbatch; ++j) sample_row(be, &be->b[j], 0);
    *res = cs_epoch_result_of(0, NULL, 1, be->samples);
    return CS_OK;
}

static cs_status cpu_deliver(cs_backend *be, size_t n, const cs_target_event *ev) {
    for (size_t k = 0; k < n; ++k) CS_TRY(cs_event_queue_push(&be->b[be->inst_batch[ev[k].instance]].ev, 1, &ev[k]));
    return CS_OK;
}

static int push_spike(batch *b, double t, int gid) {
    if (b->nspike == b->cap_spike) {
        size_t nc = b->cap_spike ? 2 * b->cap_spike : 64;
        cs_spike *p = realloc(b->spikes, nc * sizeof *p);
        if (!p) return -1;
        b->spikes = p;
        b->cap_spike = nc;
    }
    b->spikes[b->nspike++] = (cs_spike){t, (uint64_t)gid};
    return 0;
}

/* One batch through one epoch's steps, on the running thread's scratch (run_batch). */
static void run_steps(cs_backend *be, batch *b, int64_t step0, int nsteps) {
    const double dt = be->p.dt;
    const int stride = be->p.sample_stride;
    size_t next_ev = 0, row = 0;
    b->nspike = 0;
    /* the epoch's events: those due by its last step's midpoint, in delivery order */
    cs_status st = cs_event_queue_take(&b->ev, (double)(step0 + nsteps - 1) * dt + 0.5 * dt);
    if (st != CS_OK) {
        b->status = st;
        return;
    }
    const cs_target_event *due = b->ev.due;
    const size_t ndue = b->ev.ndue;
    double *restrict i = b->i, *restrict g = b->g, *restrict d = b->d;

    for (int s = 0; s < nsteps; ++s) {
        const int64_t step = step0 + s;
        const double t = (double)step * dt; /* [ms] start of the step */
        double t0 = cs_now(), t1;

        /* events due by the step's midpoint are delivered at its start (NEURON's rule) */
        while (next_ev < ndue && due[next_ev].time <= t + 0.5 * dt) {
            const cs_target_event *e = &due[next_ev++];
            size_t k = e->instance - b->inst0;
            mech_group *mg = &b->mech[b->inst_group[k]];
            cs_mech_view v = view_of(b, mg, t, &be->p);
            if (e->w) { /* a weight vector: NET_RECEIVE sees the event's own time, as in NEURON */
                v.t = e->time;
                mg->type->net_receive_vec(&v, b->inst_local[k], e->w, 0.0);
            } else {
                mg->type->net_receive(&v, b->inst_local[k], e->weight);
            }
        }
        t1 = cs_now(); b->phase[CS_PHASE_EVENTS] += t1 - t0; t0 = t1;

        /* i and g were zeroed by the previous step's assembly (above before the first); where
         * mechanisms write a concentration, e follows it (NEURON's ion_cur, before the currents) */
        for (int ion = 0; ion < CS_NION; ++ion) {
            for (int k = 0; k < b->nused[ion]; ++k) b->ion_i[ion][b->used[ion][k]] = 0.0;
            if (b->nadvance[ion]) nernst_rows(be, b, ion, b->nadvance[ion], t);
        }
        if (b->conc_error[0]) return;
        for (int m = 0; m < b->nmech; ++m) {
            cs_mech_view v = view_of(b, &b->mech[m], t + 0.5 * dt, &be->p);
            b->mech[m].type->current(&v);
        }
        if (b->elec) {
            /* i_membrane probes: the electrodes' current of the step once more, apart (current()
             * is a function of the state, evaluated twice already for g), so that i and the
             * run are bit for bit those of a run without the probe */
            for (int m = 0; m < b->nmech; ++m)
                if (is_electrode(b->mech[m].type))
                    for (int l = 0; l < b->mech[m].n; ++l)
                        b->elec[b->mech[m].node[l]] = b->elec_tmp[b->mech[m].node[l]] = 0.0;
            for (int m = 0; m < b->nmech; ++m) {
                if (!is_electrode(b->mech[m].type)) continue;
                cs_mech_view v = view_of(b, &b->mech[m], t + 0.5 * dt, &be->p);
                v.i = b->elec;
                v.g = b->elec_tmp;
                b->mech[m].type->current(&v);
            }
        }
        t1 = cs_now(); b->phase[CS_PHASE_CURRENT] += t1 - t0; t0 = t1;

        /* d = d0 and rhs = C/dt·v + b0 were written by the previous solve (or init); add the
         * mechanisms' part on the rows they touch, in the GPU assembly's order of operations */
        {
            const double *restrict v = b->v;
            double *restrict rhs = b->rhs;
            for (int k = 0; k < b->nactive; ++k) {
                int r = b->active[k];
                d[r] += g[r];
                rhs[r] = rhs[r] - i[r] + g[r] * v[r];
                i[r] = 0.0;
                g[r] = 0.0;
            }
        }
        t1 = cs_now(); b->phase[CS_PHASE_ASSEMBLE] += t1 - t0; t0 = t1;

        /* the solve also writes the next step's passive system into the old v buffer */
        cs_hines_next next = {b->d0, b->cdt, b->b0, b->v};
        cs_hines_solve_ilp_next(b->ncell, b->cv_off, b->parent, d, b->u, b->rhs, &next);
        t1 = cs_now(); b->phase[CS_PHASE_SOLVE] += t1 - t0; t0 = t1;

        { double *tmp = b->v; b->v = b->rhs; b->rhs = tmp; } /* the solution is the new v */
        for (int m = 0; m < b->nmech; ++m) {
            cs_mech_view v = view_of(b, &b->mech[m], t + dt, &be->p);
            b->mech[m].type->advance(&v);
        }
        t1 = cs_now(); b->phase[CS_PHASE_UPDATE] += t1 - t0; t0 = t1;

        /* upward threshold crossings, time interpolated linearly inside the step */
        for (int k = 0; k < b->ndet; ++k) {
            double vp = b->det_vprev[k], vn = b->v[b->det_row[k]], th = b->det_thr[k];
            if (vp < th && vn >= th) {
                if (push_spike(b, t + dt * (th - vp) / (vn - vp), b->det_gid[k])) {
                    b->status = cs_error_set(CS_ERR_NOMEM, "out of memory for spikes");
                    return;
                }
            }
            b->det_vprev[k] = vn;
        }
        /* a runaway voltage spreads through its whole cell in one solve, so one CV per cell
         * (its first) is enough to catch it in the step it happens */
        for (int c = 0; c < b->ncell; ++c) {
            if (!(fabs(b->v[b->cv_off[c]]) <= CS_V_LIMIT)) {
                b->failed_cell = b->cell0 + c;
                b->failed_time = t + dt;
                return;
            }
        }
        t1 = cs_now(); b->phase[CS_PHASE_DETECT] += t1 - t0; t0 = t1;

        if ((step + 1) % stride == 0) sample_row(be, b, row++);
        t1 = cs_now(); b->phase[CS_PHASE_SAMPLE] += t1 - t0;
    }
}

/* One batch through one epoch. rhs, i, g, d are the thread's scratch: the first step's system
 * is set up here, its passive part with the operations the solve uses for the next one
 * (cs_hines_next), so the results do not depend on epoch boundaries; v is back in the batch's
 * own storage at the end. */
static void run_batch(cs_backend *be, batch *b, int64_t step0, int nsteps) {
    const size_t n = (size_t)b->ncv;
    double *sc = be->scratch + 4 * be->max_ncv * (size_t)omp_get_thread_num();
    b->rhs = sc;
    b->d = sc + be->max_ncv;
    b->i = sc + 2 * be->max_ncv;
    b->g = sc + 3 * be->max_ncv;
    for (size_t r = 0; r < n; ++r) {
        b->d[r] = b->d0[r];
        b->rhs[r] = b->cdt[r] * b->v[r] + b->b0[r];
    }
    memset(b->i, 0, n * sizeof *b->i);
    memset(b->g, 0, n * sizeof *b->g);
    run_steps(be, b, step0, nsteps);
    if (b->v != b->v_own) memcpy(b->v_own, b->v, n * sizeof *b->v);
    b->v = b->v_own;
    b->rhs = b->d = b->i = b->g = NULL;
}

static cs_status cpu_launch_epoch(cs_backend *be, int64_t step0, int nsteps) {
    int stride = be->p.sample_stride;
    be->rows = (size_t)((step0 + nsteps) / stride - step0 / stride);
    CS_TRY(ensure_rows(be, be->rows + 1));
    int nb = be->nbatch;
#pragma omp parallel for schedule(dynamic, 1) num_threads(be->p.threads)
    for (int j = 0; j < nb; ++j) run_batch(be, &be->b[j], step0, nsteps);
    return CS_OK;
}

static cs_status cpu_collect_epoch(cs_backend *be, cs_profile *prof, cs_epoch_result *res) {
    int nb = be->nbatch;
    *res = cs_epoch_result_of(0, NULL, be->rows, be->samples);
    size_t nspike = 0;
    for (int j = 0; j < nb; ++j) {
        batch *b = &be->b[j];
        if (b->status != CS_OK) return b->status;
        if (b->conc_error[0]) return cs_error_set(CS_ERR_NUMERIC, "%s", b->conc_error);
        if (b->failed_cell >= 0 && (res->failed_cell < 0 || b->failed_time < res->failed_time)) {
            res->failed_cell = b->failed_cell;
            res->failed_time = b->failed_time;
        }
        nspike += b->nspike;
        for (int k = 0; k < CS_PHASE_COUNT; ++k) {
            prof->seconds[k] += b->phase[k];
            b->phase[k] = 0;
        }
    }
    if (nspike > be->cap_spikes) {
        cs_spike *p = realloc(be->spikes, nspike * sizeof *p);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for spikes");
        be->spikes = p;
        be->cap_spikes = nspike;
    }
    nspike = 0;
    for (int j = 0; j < nb; ++j) {
        if (be->b[j].nspike) memcpy(be->spikes + nspike, be->b[j].spikes, be->b[j].nspike * sizeof(cs_spike));
        nspike += be->b[j].nspike;
    }
    res->nspike = nspike;
    res->spikes = be->spikes;
    return CS_OK;
}

static const char *cpu_describe(const cs_backend *be) {
    static _Thread_local char text[160];
    snprintf(text, sizeof text, "CPU, %d thread%s over %d batches of cells; Hines solve: 8 cells in lockstep (ilp)",
             be->p.threads, be->p.threads == 1 ? "" : "s", be->nbatch);
    return text;
}

const cs_backend_ops cs_backend_cpu = {"cpu", cpu_create, cpu_init, cpu_deliver, cpu_launch_epoch,
                                       cpu_collect_epoch, cpu_destroy, cpu_describe, NULL};
