/* The CUDA backend's set-up: the network description into device state (the Hines plan, the
 * mechanisms and ions, detectors, probes, the constants), and its teardown. Host logic only. */
#ifdef CS_HAVE_CUDA
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_backend_cuda_internal.h"
#include "cs_cable_matrix.h"
#include "cs_cuda_epoch_setup.h"
#include "cs_cuda_gather.h"
#include "cs_cuda_ions.h"
#include "cs_mech_math.h"

void cs__cuda_destroy(cs_backend *be) {
    if (!be) return;
    cs_cuda_state *s = &be->s;
    if (s->stream && be->nlaunched > be->ncollected) (void)cs_cuda_sync(s->stream); /* an epoch still in flight */
    const char *show = getenv("CS_CUDA_HOST_TIMES");
    if (show && !strcmp(show, "1") && be->host_epochs)
        fprintf(stderr, "GPU backend, host time at the epochs' starts (%lld epochs, %lld of them ordered ahead and "
                "merged): events taken or merged %.4f s, arrays %.4f s, uploaded %.4f s (staged in all, with the "
                "ranges: %.4f s, of which waiting for the GPU before the event arrays grew %.4f s); launches %.4f s, "
                "of which %lld graph captures %.4f s; ordered ahead while the GPU ran: %.4f s\n",
                be->host_epochs, be->host_merged, be->host_take, be->host_group, be->host_upload, be->host_staged,
                be->host_waited, be->host_launch, be->host_captures, be->host_capture, be->host_ahead);
    cs__cuda_ordered_free(&be->ahead.set);
    cs__cuda_ordered_free(&be->fresh);
    cs__cuda_ordered_free(&be->staged);
    free(be->late);
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
        cs_cuda_free(s->ion_used_rows[ion]);
    }
    cs_cuda_gather_free(s);
    cs_cuda_free(s->ev_range);
    cs__cuda_drop_graphs(be);
    if (be->plan) cs_hines_gpu_plan_destroy(be->plan);
    cs_cuda_epoch_free(&s->epoch);
    for (int e = 0; e < 2; ++e) {
        cs_cuda_timer_destroy(be->slot[e].timers, CS_TIMED_STEPS * CS_TIMED_MARKS);
        cs_cuda_free(be->slot[e].counters);
        cs_cuda_free(be->slot[e].spike_time);
        cs_cuda_free(be->slot[e].spike_gid);
        cs_cuda_free(be->slot[e].samples);
    }
    cs_cuda_timer_destroy(be->done, 2);
    cs_cuda_stream_destroy(be->copy_stream);
    cs_cuda_timer_destroy(be->fork_events, CS_FORK_EVENTS);
    for (int l = 0; l < CS_CUDA_LANES; ++l) cs_cuda_stream_destroy(be->lane[l]);
    cs_cuda_stream_destroy(s->stream);
    free(be->row_map); free(be->cell_first); free(be->syn_local); free(be->inst_group); free(be->inst_local); free(be->hh_node); cs_event_queue_free(&be->ev); free(be->ev_local);
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
        if (ss != CS_SOLVER_OK) st = cs__cuda_solver_fail(ss, "layout conversion");
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
                      {NULL, NULL, NULL}, NULL, NULL, 0, 0.0, NULL, NULL, {NULL, NULL, NULL}, 0, 0};
    for (int ion = 0; ion < CS_NION; ++ion) {
        v.ion_e[ion] = s->ion_e[ion];
        v.ion_i[ion] = s->ion_i[ion];
        v.ion_ci[ion] = s->ion_ci[ion];
        v.ion_co[ion] = s->ion_co[ion];
    }
    cm->gpu = t == &cs_mech_exp2syn ? &cs__gpu_exp2syn : t->gpu; /* the built-in's GPU half */
    cm->view = v;
    /* a candidate for the update ahead (setup_catalogue_ahead): a synapse that touches no ion */
    cm->ahead = t->receives_events && cm->gpu->advance_ahead && !(t->ion_read | t->ion_write | t->conc_read | t->conc_write);
    return CS_OK;
}

/* Each group's instances in the order of their rows in the solver's internal layout (a stable
 * counting sort: the instances of one group at one row keep the network's order, so each row's
 * currents add up as before): the mechanisms' reads of v and the gather's reads of their current
 * slots then follow the rows (neighbouring threads, neighbouring addresses) instead of jumping
 * between the cells of a warp's group. be->inst_local, numbered in network order on entry, is
 * renumbered; count: the groups' instances. CS_CUDA_INSTANCE_ORDER=network keeps the network's order. */
static cs_status order_instances(cs_backend *be, const int *count) {
    const cs_network_desc *net = be->net;
    const char *env = getenv("CS_CUDA_INSTANCE_ORDER");
    if ((env && !strcmp(env, "network")) || !net->ninst) return CS_OK;
    const size_t n_int = be->s.n_int;
    size_t *first = calloc(n_int + 1, sizeof *first), *order = malloc(net->ninst * sizeof *order);
    int next[CS_CUDA_MAX_MECH] = {0};
    if (!first || !order) {
        free(first); free(order);
        return cs_error_set(CS_ERR_NOMEM, "out of memory for %zu mechanism instances", net->ninst);
    }
    for (size_t k = 0; k < net->ninst; ++k)
        if (be->inst_group[k] >= 0) ++first[be->row_map[be->cell_first[net->inst[k].cell] + net->inst[k].node] + 1];
    for (size_t r = 0; r < n_int; ++r) first[r + 1] += first[r];
    const size_t placed = first[n_int];
    for (size_t k = 0; k < net->ninst; ++k)
        if (be->inst_group[k] >= 0) order[first[be->row_map[be->cell_first[net->inst[k].cell] + net->inst[k].node]]++] = k;
    for (size_t q = 0; q < placed; ++q) be->inst_local[order[q]] = next[be->inst_group[order[q]]]++;
    for (int m = 0; m < be->s.nmech; ++m)
        if (next[m] != count[m]) { free(first); free(order); return cs_error_set(CS_ERR_INTERNAL, "instance order: group %d", m); }
    free(first); free(order);
    return CS_OK;
}

/* be->hh_node: hh's CVs on the host when its instances are in row order (order_instances), so
 * that its update can follow each launch of the fused step (cs_backend_cuda.c, hh_after_launch).
 * CS_CUDA_HH_AFTER_LAUNCH=0: after the whole step (for comparisons; the same results). */
static cs_status keep_hh_rows(cs_backend *be) {
    const char *env = getenv("CS_CUDA_HH_AFTER_LAUNCH");
    if (env && !strcmp(env, "0")) return CS_OK;
    const cs_cuda_mech *m = &be->s.mech[0];
    int *node = malloc((size_t)m->n * sizeof *node);
    if (!node) return cs_error_set(CS_ERR_NOMEM, "out of memory for hh's %d instances", m->n);
    cs_status st = cs_cuda_download(node, m->node, (size_t)m->n * sizeof *node);
    int sorted = st == CS_OK;
    for (int k = 1; sorted && k < m->n; ++k) sorted = node[k - 1] <= node[k];
    if (sorted) be->hh_node = node;
    else free(node);
    return st;
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
        be->inst_local[k] = count[gi];
        count[gi]++;
    }
    cs_status st = order_instances(be, count);
    for (size_t k = 0; st == CS_OK && k < net->ninst; ++k)
        if (group[k] >= 0) be->syn_local[k] = types[group[k]]->receives_events ? be->inst_local[k] : -1;
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
        for (size_t k = 0; st == CS_OK && k < net->ninst; ++k) {
            if (group[k] != m) continue;
            const cs_instance_desc *in = &net->inst[k];
            const int l = be->inst_local[k];
            node[l] = be->row_map[be->cell_first[in->cell] + in->node];
            w[l] = in->weight;
            for (int j = 0; j < np; ++j) par[(size_t)j * (size_t)n + l] = in->param[j];
        }
        if (st == CS_OK) {
            double *pp[CS_MAX_PARAMS + 1], *sp[CS_MAX_STATES + 1];
            for (int j = 0; j < np; ++j) pp[j] = par + (size_t)j * (size_t)n;
            for (int j = 0; j < ns; ++j) sp[j] = sta + (size_t)j * (size_t)n;
            cs_mech_view view = {n, node, w, v_int, NULL, NULL, pp, sp, 0.0, be->p.dt, be->p.celsius,
                                 {ions->e[0], ions->e[1], ions->e[2]}, {ions->i[0], ions->i[1], ions->i[2]},
                                 {ions->ci[0], ions->ci[1], ions->ci[2]}, {ions->co[0], ions->co[1], ions->co[2]},
                                 NULL, NULL, 0, 0.0, NULL, NULL, {NULL, NULL, NULL}, 0, 0};
            t->init(&view);
            cs_cuda_ions_wrote(ions, t); /* NEURON's order: e after each INITIAL that writes a concentration */
            cs_cuda_mech *cm = &s->mech[m];
            cm->kind = (cs_cuda_mech_kind)kind;
            cm->n = n;
            cm->ordered = (t->conc_read | t->conc_write) != 0;
            cm->advance_ions = !t->advance_ion_free;
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

/* The streams beside the main one (cs_backend_cuda_internal.h, lane): lane 0 takes detection
 * and sampling, and the state updates that touch no concentration go round the lanes, the largest
 * groups first so that they start first. hh with hh_ahead stays on the main stream: its update
 * adds the next step's hh current to i and g. */
int cs__cuda_priority_on(void) {
    const char *prio = getenv("CS_CUDA_PRIORITY");
    return !(prio && !strcmp(prio, "0"));
}

#define CS_CUDA_MECH_BLOCK 128 /* a catalogue kernel's threads a block (nmodl_cuda.py, _BLOCK) */
static cs_status setup_lanes(cs_backend *be) {
    const cs_cuda_state *s = &be->s;
    int order[CS_CUDA_MAX_MECH], nfree = 0, catalogue = 0;
    for (int q = 0; q < s->nmech; ++q) catalogue |= s->mech[q].kind == CS_CUDA_CATALOGUE && s->mech[q].n > 0;
    const char *after = getenv("CS_CUDA_AFTER_SOLVE"); /* 0: the lanes below (for comparisons) */
    if (!catalogue && !(after && !strcmp(after, "0")) && cs_cuda_after_solve_fits(s)) {
        /* built-in mechanisms only: one launch after the solve, and expsyn's events with its
         * current (cs_cuda_builtin_step.cu; CS_CUDA_EVENTS_CURRENT=0: apart, for comparisons):
         * busyring × 1 024's step on the H200 was 19.2 us with the lane below (session 31) */
        const char *ec = getenv("CS_CUDA_EVENTS_CURRENT");
        be->after_solve = 1;
        be->events_current = !(ec && !strcmp(ec, "0"));
        const char *ahead = getenv("CS_CUDA_SYNAPSES_AHEAD"); /* 0: each step's own (for comparisons) */
        be->syn_ahead = be->events_current && !(ahead && !strcmp(ahead, "0")) && cs_cuda_synapses_ahead_fit(s);
        be->nlanes = 0;
        return CS_OK;
    }
    if (!catalogue) {
        /* built-in mechanisms only (hh, expsyn, iclamp): session 17's two streams, group 0 on the
         * main one, the others and detection and sampling on lane 0, joined at the step's end.
         * Measured on an H100 (session 19, the nine real cells, 18 432 cells): the lanes'
         * schedule took 0.49 s where this took 0.42 s; on the Allen network it gained 1.2x. */
        be->defer = 0;
        be->nlanes = 1;
        for (int q = 0; q < s->nmech; ++q) be->lane_of[q] = q == 0 ? -1 : 0;
        CS_TRY(cs_cuda_stream_create(&be->lane[0]));
        return cs_cuda_timer_create(&be->fork_events, CS_FORK_EVENTS);
    }
    be->defer = 1;
    for (int q = 0; q < s->nmech; ++q) {
        be->lane_of[q] = -1;
        if (s->mech[q].n > 0 && !s->mech[q].ordered && !(q == 0 && s->hh_ahead)) order[nfree++] = q;
    }
    /* a unit: a group, or a merged set (setup_merges) under its head; by size, descending
     * (insertion: a few groups) */
    long size[CS_CUDA_MAX_MECH] = {0};
    int nunit = 0;
    for (int a = 0; a < nfree; ++a) {
        const int q = order[a], h = s->merge_head[q];
        size[h >= 0 ? h : q] += s->mech[q].n;
        if (h < 0 || h == q) order[nunit++] = q;
    }
    for (int a = 1; a < nunit; ++a)
        for (int b = a; b > 0 && size[order[b]] > size[order[b - 1]]; --b) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    be->nlanes = nunit + 1 < CS_CUDA_LANES ? nunit + 1 : CS_CUDA_LANES;
    for (int k = 0; k < nunit; ++k) be->lane_of[order[k]] = (k + 1) % be->nlanes;
    for (int q = 0; q < s->nmech; ++q)
        if (s->merge_head[q] >= 0) be->lane_of[q] = be->lane_of[s->merge_head[q]];
    /* A unit of fewer blocks than the device has SMs is bound by one thread's chain, not by the
     * device: its lane has the high priority, so that its blocks start before the pending blocks
     * of the large groups beside it. Measured (session 23, Allen network): NaV's update, 16
     * blocks, waited 21 us for Exp2Syn's 8 994 blocks, then took 71 us against 26 alone.
     * CS_CUDA_PRIORITY=0: every lane (and the main stream) at the same priority. */
    const int sms = cs_cuda_sm_count(), use_prio = cs__cuda_priority_on() && sms > 0;
    int high[CS_CUDA_LANES] = {0};
    for (int k = 0; k < nunit; ++k)
        if (use_prio && size[order[k]] <= (long)CS_CUDA_MECH_BLOCK * sms) high[be->lane_of[order[k]]] = 1;
    be->nhigh = 0;
    for (int l = 0; l < be->nlanes; ++l) {
        CS_TRY(cs_cuda_stream_create_priority(&be->lane[l], high[l]));
        be->nhigh += high[l];
    }
    /* Such a unit of one catalogue group, not merged (a KINETIC update: NaV's takes 254
     * registers), updates its states in blocks of 256 threads launched before the other lanes'
     * updates: 256 threads of ~255 registers take a whole register file, so no other block
     * shares their SM. NaV took 26 us alone and 62 us beside the other updates; this way 38 us,
     * and the Allen network's run 0.816 -> 0.763 s (session 24). CS_CUDA_SOLO_BLOCK=N: blocks of
     * N threads (32..1024), 0: the type's own launch, in the usual order (for comparisons). */
    const char *solo = getenv("CS_CUDA_SOLO_BLOCK");
    const int nb = solo ? atoi(solo) : 256;
    for (int k = 0; nb >= 32 && nb <= 1024 && k < nunit; ++k) {
        const int q = order[k];
        if (high[be->lane_of[q]] && s->merge_head[q] < 0 && s->mech[q].kind == CS_CUDA_CATALOGUE) {
            be->s.mech[q].view.block = nb;
            be->solo_first = 1;
        }
    }
    return cs_cuda_timer_create(&be->fork_events, CS_FORK_EVENTS);
}

/* Where no probe reads a state, the catalogue types' currents skip the stores of the ASSIGNED
 * variables only they read (cs_mech_view.skip_outputs: Exp2Syn's i and g, 16 bytes an instance a
 * step). CS_CUDA_SKIP_OUTPUTS=0: stored (for comparisons; identical results). */
static void setup_skip_outputs(cs_cuda_state *s) {
    const char *env = getenv("CS_CUDA_SKIP_OUTPUTS");
    const int skip = !(env && !strcmp(env, "0")) && !s->probe_src;
    for (int q = 0; q < s->nmech; ++q)
        if (s->mech[q].kind == CS_CUDA_CATALOGUE) s->mech[q].view.skip_outputs = skip;
}

/* The catalogue synapse groups whose state update, inside a graph, also gives the next step's
 * events and current (cs_cuda_advance_ahead): one pass over their instances instead of three
 * launches, and that step's ions and other currents need not wait for them. On the Allen
 * network Exp2Syn's update, delivery and current were 15 + 1 + 19 us a step, the delivery
 * waiting for the other updates (session 32's timeline). Only for a group that touches no ion
 * (cs_mech_view: its calls read nothing the ions' step rewrites), on a lane of its own unit (not
 * merged), with its currents into the gather's slots, and where no probe reads a state (a sample
 * would see the next step's events). CS_CUDA_CATALOGUE_AHEAD=0: none (for comparisons). */
static void setup_catalogue_ahead(cs_backend *be) {
    cs_cuda_state *s = &be->s;
    const char *env = getenv("CS_CUDA_CATALOGUE_AHEAD");
    const int on = !(env && !strcmp(env, "0")) && be->nlanes > 0 && be->defer && s->gather.on && !s->probe_src;
    be->cat_ahead = 0;
    for (int q = 0; q < s->nmech; ++q) {
        cs_cuda_mech *m = &s->mech[q];
        m->ahead = on && m->ahead && m->n > 0 && m->kind == CS_CUDA_CATALOGUE && be->lane_of[q] >= 0 && s->merge_head[q] < 0 &&
                   !m->ordered && !m->advance_ions && cs_cuda_synapse_type(s, q) >= 0;
        be->cat_ahead += m->ahead;
    }
}

/* The small groups of one catalogue that may run on a lane (no concentration read or written)
 * run their currents and their state updates in one launch per phase (merge_head): a network of
 * Allen cells has a dozen soma channel types of ~10 000 instances each, each launch a few
 * microseconds of ramp for little work (bench/NOTES.md, "Session 22"). Large groups keep their
 * own launches (a merged kernel has the registers of its largest type); CS_CUDA_MERGE=0 merges
 * nothing (for comparisons). */
#define CS_CUDA_MERGE_MAX_N 65536 /* instances: at most 512 blocks, under a wave of an H100 */
/* groups per set: a set is one launch (a catalogue's dispatch takes 12 types at most) and a unit
 * of the lanes, so that two sets run side by side. Measured (session 22, Allen network): 14 soma
 * types in one set were two launches one after the other on one lane, 33 + 78 us a step, on
 * the step's critical path */
#define CS_CUDA_MERGE_GROUPS 8

void cs__cuda_merge_sets(int nmech, const int *n, const int *eligible, const void *const *key, int *head) {
    int count[CS_CUDA_MAX_MECH] = {0};
    for (int q = 0; q < nmech; ++q) {
        head[q] = -1;
        if (!eligible[q] || n[q] <= 0 || n[q] > CS_CUDA_MERGE_MAX_N) continue;
        int h = q;
        for (int p = 0; p < q; ++p)
            if (head[p] == p && key[p] == key[q] && count[p] < CS_CUDA_MERGE_GROUPS) h = p;
        head[q] = h;
        ++count[h];
    }
    for (int q = 0; q < nmech; ++q) /* a set of one: its own launches, as before */
        if (head[q] >= 0 && count[head[q]] < 2) head[q] = -1;
}

static void setup_merges(cs_cuda_state *s) {
    const char *env = getenv("CS_CUDA_MERGE");
    const int on = !(env && !strcmp(env, "0"));
    int n[CS_CUDA_MAX_MECH], eligible[CS_CUDA_MAX_MECH];
    const void *key[CS_CUDA_MAX_MECH];
    for (int q = 0; q < s->nmech; ++q) {
        const cs_cuda_mech *m = &s->mech[q];
        n[q] = m->n;
        eligible[q] = on && s->gather.on && m->kind == CS_CUDA_CATALOGUE && m->gpu->current_many && !m->ordered;
        key[q] = eligible[q] ? (const void *)m->gpu->current_many : NULL;
    }
    cs__cuda_merge_sets(s->nmech, n, eligible, key, s->merge_head);
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
    be->shared_constants = be->fused && !be->epoch && ncell > 0 && cs_hines_gpu_plan_shares_constants(be->plan);
    /* identical cells: every cell's rows of each array equal cell 0's bit for bit; keep cell 0's */
    const size_t n0 = ncell ? (size_t)be->cell_first[1] : 0;
    double *first[CS__NCONST] = {NULL};
    for (int k = 0; be->shared_constants && st == CS_OK && k < CS__NCONST; ++k) {
        double *a = cs__cuda_matrix_array(net, be->p.dt, be->cell_first, k);
        first[k] = malloc((n0 ? n0 : 1) * sizeof(double));
        if (!a || !first[k]) st = cs_error_set(CS_ERR_NOMEM, "out of memory for %zu CVs", nrow);
        else {
            be->shared_constants = cs__cuda_identical_cells(be->cell_first, (int)ncell, &a, 1);
            memcpy(first[k], a, n0 * sizeof(double));
        }
        free(a);
    }
    if (st == CS_OK && be->shared_constants) /* one cell's tree-order rows serve every cell */
        st = cs__cuda_shared_constants(net, parent, first, n0, dev, &s->a0);
    else {
        /* a staged fused step: groups of cells with the same constants as another's read that
         * group's rows (cs_hines_gpu_plan_share_constants; CS_CUDA_SHARE_CONSTANTS=0: each its own) */
        const char *env = getenv("CS_CUDA_SHARE_CONSTANTS");
        const int share = be->fused && !be->epoch && !(env && !strcmp(env, "0"));
        for (int k = 0; st == CS_OK && k < CS__NCONST; ++k) {
            double *a = cs__cuda_matrix_array(net, be->p.dt, be->cell_first, k);
            if (!a) st = cs_error_set(CS_ERR_NOMEM, "out of memory for %zu CVs", nrow);
            if (st == CS_OK) st = cs_cuda_alloc((void **)dev[k], s->n_int * sizeof(double), "the cells' constants");
            if (st == CS_OK) st = upload_tree(be, a, nrow, *dev[k], kind[k]);
            if (st == CS_OK && share) {
                cs_solver_status ss = cs_hines_gpu_plan_share_constants(be->plan, a, k == 0, &be->groups_sharing);
                if (ss != CS_SOLVER_OK) st = cs__cuda_solver_fail(ss, "sharing the cells' constants");
            }
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
    be->epoch = be->p.solver && !strcmp(be->p.solver, "epoch");
    if (be->epoch) CS_TRY(cs_cuda_epoch_check(net)); /* its refusals before any set-up */
    /* the main stream carries a step's chain (events, ordered groups, ions, the gather, the solve):
     * the greatest priority, so that its kernels' blocks start before the lanes' large groups'
     * pending ones (setup_lanes); CS_CUDA_PRIORITY=0: every stream at the same priority */
    CS_TRY(cs_cuda_stream_create_priority(&s->stream, cs__cuda_priority_on()));
    size_t mem0 = cs_cuda_memory_used();

    /* tree-order structure of the whole batch */
    size_t nrow = (size_t)net->total_cv;
    int *parent = NULL;
    cs_status st = cs__cuda_tree_structure(net, be->p.dt, &be->cell_first, &parent);
    be->row_map = malloc((nrow ? nrow : 1) * sizeof *be->row_map);
    if (st == CS_OK && !be->row_map) st = cs_error_set(CS_ERR_NOMEM, "out of memory for %zu CVs", nrow);

    if (st == CS_OK) {
        cs_hines_gpu_options opt;
        cs__cuda_plan_options(&be->p, &opt);
        cs_solver_status ss = cs_hines_gpu_plan_create(ncell, be->cell_first, parent, &opt, &be->plan);
        if (ss == CS_SOLVER_OK) ss = cs_hines_gpu_set_stream(be->plan, s->stream);
        if (ss == CS_SOLVER_OK) ss = cs_hines_gpu_plan_row_map(be->plan, be->row_map);
        if (ss != CS_SOLVER_OK && strstr(cs_hines_gpu_last_error(), "unknown variant")) /* name epoch too */
            st = cs_error_set(CS_ERR_INVALID, "--solver: %s, or epoch (a whole epoch in one kernel)",
                              cs_hines_gpu_last_error());
        else if (ss != CS_SOLVER_OK) st = cs__cuda_solver_fail(ss, "building the solver plan");
        else be->fused = opt.fused_step && cs_hines_gpu_plan_fuses(be->plan);
    }
    /* the step's kernels on the main stream as programmatic launches (cs__cuda_pdl_on) */
    s->pdl = cs__cuda_pdl_on() && cs_cuda_pdl_supported(be->p.device);
    s->pdl_stream = s->stream;
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
    if (st == CS_OK) st = cs_cuda_gather_build(s, net, be->inst_group, be->inst_local, be->cell_first, be->row_map);
    if (st == CS_OK) { /* the gather alone writes i and g, setting every row it lists each step (CS_CUDA_KEEP_CURRENTS=0: zeroed anyway) */
        const char *keep = getenv("CS_CUDA_KEEP_CURRENTS");
        be->keep_currents = s->gather.on && s->gather.sole && !(keep && !strcmp(keep, "0"));
    }
    if (st == CS_OK) st = cs_cuda_ions_upload(&ions, s);
    cs_cuda_ions_free(&ions);
    free(v_int);
    if (st == CS_OK && be->fused)
        st = cs__cuda_fused_flags(net, be->plan, be->row_map, be->cell_first, s->n_int, be->shared_constants, &s->flags);
    if (be->epoch) s->hh_ahead = 0; /* the epoch kernel computes every current in its step */
    /* only where the step's launches run side by side: after a single launch the update ran at once
     * anyway, and in the hook it would come before the lanes' fork instead of beside detection
     * (busyring full-1024: 0.0198 → 0.0226 s, session 26) */
    if (st == CS_OK && be->fused && s->hh_ahead && s->mech[0].n > 0 && cs_hines_gpu_plan_step_launches(be->plan) > 1)
        st = keep_hh_rows(be);
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
    if (st == CS_OK) setup_skip_outputs(&be->s);
    if (st == CS_OK && be->epoch) st = cs_cuda_epoch_build(s, net, be->cell_first, be->inst_group, be->inst_local);
    s->dt = be->p.dt;
    s->sample_stride = be->p.sample_stride;
    be->v_first = s->v;
    /* CS_CUDA_GRAPHS=0 launches every kernel directly (for comparisons) */
    const char *graphs = getenv("CS_CUDA_GRAPHS");
    be->use_graphs = !(graphs && !strcmp(graphs, "0"));
    /* graphs of up to 16 steps: with graphs of up to 64, once the timed steps no longer cut the
     * epochs into runs of 15, the nine real cells × 2 048 (8 launches and their hooks a step) ran
     * 0.307-0.309 s against 0.279-0.284 (their captures 0.155 s against 0.136), and auto's trial
     * timed staged with its captures on full-1024 and took warp (H200, session 31).
     * CS_CUDA_GRAPH_STEPS=N: up to N steps (a power of two, 1..64; for comparisons). */
    const char *gsteps = getenv("CS_CUDA_GRAPH_STEPS");
    be->graph_levels = CS_GRAPH_DEFAULT_LEVELS;
    for (int b = 0; gsteps && b < CS_GRAPH_LEVELS; ++b)
        if (atoi(gsteps) == 1 << b) be->graph_levels = b + 1;
    const char *ahead = getenv("CS_CUDA_STAGE_AHEAD"); /* 0: every epoch's events at its start (comparisons) */
    be->stage_ahead = !(ahead && !strcmp(ahead, "0"));
    for (int e = 0; e < 2; ++e) { /* the slots of two epochs in flight (cs_backend_cuda_internal.h) */
        if (st == CS_OK) st = cs_cuda_timer_create(&be->slot[e].timers, CS_TIMED_STEPS * CS_TIMED_MARKS);
        if (st == CS_OK) st = cs_cuda_alloc((void **)&be->slot[e].counters, 4 * sizeof(int), "counters");
        if (st == CS_OK)
            st = cs_cuda_alloc((void **)&be->slot[e].spike_time, (size_t)s->cap_spike * sizeof(double), "spikes");
        if (st == CS_OK) st = cs_cuda_alloc((void **)&be->slot[e].spike_gid, (size_t)s->cap_spike * sizeof(int), "spikes");
    }
    be->timers = be->slot[0].timers;
    if (st == CS_OK) st = cs_cuda_timer_create(&be->done, 2);
    if (st == CS_OK) st = cs_cuda_stream_create_nonblocking(&be->copy_stream);
    const char *pipe = getenv("CS_CUDA_PIPELINE"); /* 0: each epoch collected before the next starts */
    be->pipelined = !be->epoch && !(pipe && !strcmp(pipe, "0"));
    const char *fork = getenv("CS_CUDA_FORK"); /* CS_CUDA_FORK=0: every kernel in order (for comparisons) */
    for (int q = 0; q < CS_CUDA_MAX_MECH; ++q) be->s.merge_head[q] = -1;
    if (st == CS_OK && !(fork && !strcmp(fork, "0"))) {
        setup_merges(&be->s);
        st = setup_lanes(be);
    }
    setup_catalogue_ahead(be); /* clears the candidates where there are no lanes */
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

cs_status cs__cuda_create(const cs_network_desc *net, const cs_backend_params *p, cs_backend **out) {
    if (cs_cuda_device_count() < 1) return cs_error_set(CS_ERR_DEVICE, "backend 'cuda': no CUDA device found");
    if (net->ncell > (size_t)INT_MAX || net->total_cv > (uint64_t)INT_MAX)
        return cs_error_set(CS_ERR_INVALID, "backend 'cuda': more than 2^31 CVs in one batch");
    cs_backend *be = calloc(1, sizeof *be);
    if (!be) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    be->net = net;
    be->p = *p;
    cs_status st = setup(be);
    if (st != CS_OK) {
        cs__cuda_destroy(be);
        return st;
    }
    *out = be;
    return CS_OK;
}

#else
typedef int cs__cuda_setup_absent; /* a build without CUDA: the stubs are in cs_backend_cuda.c */
#endif
