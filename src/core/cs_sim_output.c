/* The simulation's output (cs_sim_internal.h): the file's metadata and reports at set-up, each
 * epoch's samples and spikes, and the end of the file with bmtk's report copies. */
#include <stdlib.h>
#include <string.h>

#include "cs_output_bmtk.h"
#include "cs_sim_internal.h"
#include "cs_version.h"

/* The population of a gid, and its index there. */
int cs__sim_gid_pop(const cs_model *m, uint64_t gid, int *index) {
    int p = 0;
    while (p + 1 < m->npop && gid >= m->pops[p + 1].first_gid) ++p;
    *index = (int)(gid - m->pops[p].first_gid);
    return p;
}

/* the population p's spikes and samples are written under */
static const char *output_name(const cs_model *m, int p) { return cs_population_output_name(&m->pops[p]); }

int cs__sim_first_of_output(const cs_model *m, int p) {
    int q = 0;
    while (strcmp(output_name(m, q), output_name(m, p))) ++q;
    return q;
}

cs_status cs__sim_describe_output(cs_sim *s) {
    const cs_model *m = s->m;
    CS_TRY(cs_output_set_report_precision(s->out, s->o.report_bits ? s->o.report_bits : m->report_bits));
    CS_TRY(cs_output_set_meta_string(s->out, "model", m->path));
    CS_TRY(cs_output_set_meta_string(s->out, "version", CS_VERSION_STRING));
    CS_TRY(cs_output_set_meta_string(s->out, "backend", s->ops->name));
    CS_TRY(cs_output_set_meta_string(s->out, "backend_detail", s->ops->describe(s->be)));
    CS_TRY(cs_output_set_meta_string(s->out, "backend_choice", s->choice.report));
    CS_TRY(cs_output_set_meta_double(s->out, "dt", s->dt));
    CS_TRY(cs_output_set_meta_double(s->out, "tfinal", s->tfinal));
    CS_TRY(cs_output_set_meta_double(s->out, "seed", (double)m->seed));
    CS_TRY(cs_output_set_meta_double(s->out, "threads", s->threads));
    CS_TRY(cs_output_set_meta_double(s->out, "celsius", m->celsius));
    CS_TRY(cs_output_set_meta_double(s->out, "cells", (double)s->net.ncell_global));
    CS_TRY(cs_output_set_meta_double(s->out, "compartments", (double)s->total_cv));
    CS_TRY(cs_output_set_meta_double(s->out, "ranks", s->nrank));
    if (s->nrank > 1)
        CS_TRY(cs_output_set_meta_string(s->out, "output_writer",
                                         s->pario ? "parallel HDF5: every rank writes its report columns and a share of the spikes"
                                                  : "rank 0: samples gathered to it each epoch"));
    for (int p = 0; p < m->npop; ++p)
        if (cs__sim_first_of_output(m, p) == p) CS_TRY(cs_output_add_spike_population(s->out, output_name(m, p)));
    for (int r = 0; r < s->net.nreport; ++r) {
        const int p = s->net.reports[r].pop;
        const cs_population_spec *ps = &m->pops[p];
        const cs_probe_var *pv = s->net.reports[r].var;
        /* the whole report: rank 0 knows every column's CV (cs_dist) */
        size_t first = (size_t)s->dist.report_first[r], ne = (size_t)s->dist.report_first[r + 1] - first;
        size_t nn = ne / (size_t)ps->probes.nloc;
        uint64_t *ids = malloc((nn + 1) * sizeof *ids), *ptr = malloc((nn + 1) * sizeof *ptr);
        uint32_t *el = malloc((ne + 1) * sizeof *el);
        if (!ids || !ptr || !el) {
            free(ids); free(ptr); free(el);
            return cs_error_set(CS_ERR_NOMEM, "out of memory");
        }
        for (size_t k = 0; k < nn; ++k) {
            ids[k] = ps->output_id0 + (uint64_t)cs_probe_cell(ps, (int)k); /* SONATA: its node ids */
            ptr[k] = k * (uint64_t)ps->probes.nloc;
        }
        ptr[nn] = ne;
        /* rank 0 knows every column's CV; a parallel file stores rank 0's mapping */
        for (size_t k = 0; k < ne; ++k) el[k] = s->dist.node ? (uint32_t)s->dist.node[first + k] : 0;
        double interval = s->pop_stride[p] * s->dt;
        int64_t rows = s->nsteps / s->pop_stride[p] + 1;
        cs_status st = cs_output_add_variable_report(s->out, ps->name, pv->kind == CS_PROBE_V ? NULL : pv->name,
                                                     pv->unit, nn, ids, ptr, el, 0.0, (double)rows * interval,
                                                     interval);
        free(ids); free(ptr); free(el);
        CS_TRY(st);
    }
    return cs_output_flush(s->out);
}

/* The writer's name of report r: the population's for its voltage, "POP/VARIABLE" otherwise
 * (cs_output_add_variable_report). */
static const char *report_name(const cs_sim *s, int r, char *buf, size_t n) {
    const cs_report_desc *rd = &s->net.reports[r];
    if (rd->var->kind == CS_PROBE_V) return s->m->pops[rd->pop].name;
    snprintf(buf, n, "%s/%s", s->m->pops[rd->pop].name, rd->var->name);
    return buf;
}

/* Rows of a population are counted once, on its first report. */
static int first_of_pop(const cs_sim *s, int r) {
    return r == 0 || s->net.reports[r - 1].pop != s->net.reports[r].pop;
}

/* Write one epoch's samples: base row r was taken at step (row0 + r)·base_stride. Collective:
 * the rows of every rank meet on rank 0, which writes them; an output failure is kept in
 * s->werr for the next agreement. */
cs_status cs__sim_write_samples(cs_sim *s, int64_t row0, size_t nrow, const double *local) {
    char name[2 * CS_NAME_MAX + 2];
    if (s->pario) {
        /* every rank writes its own columns of the kept rows (collective, per report) */
        size_t np = s->net.nprobe;
        for (int r = 0; r < s->net.nreport; ++r) {
            const int p = s->net.reports[r].pop;
            size_t a = s->net.report_probe_first[r], nl = s->net.report_probe_first[r + 1] - a, nk = 0;
            int keep = s->pop_stride[p] / s->base_stride;
            for (size_t i = 0; i < nrow; ++i) {
                if ((row0 + (int64_t)i) % keep) continue;
                for (size_t j = 0; j < nl; ++j) s->colbuf[nk * nl + j] = local[i * np + s->pperm[a + j]];
                ++nk;
            }
            if (nk && s->werr == CS_OK)
                s->werr = cs_output_append_columns_d(s->out, report_name(s, r, name, sizeof name), nk, nl,
                                                     s->pcols + a, s->colbuf);
            if (first_of_pop(s, r)) s->pop_rows[p] += (int64_t)nk;
        }
        return CS_OK;
    }
    const double *samples;
    CS_TRY(cs_dist_samples(&s->dist, local, nrow, &samples));
    size_t np = (size_t)s->dist.np_global;
    /* kept for the next agreement, like an output failure (rank 0 alone keeps results) */
    if (s->keep && samples && s->werr == CS_OK) s->werr = cs_memsink_append_rows(&s->mem, nrow, samples);
    /* each report's kept rows of the epoch in one append: one HDF5 write per report, not per
     * row (a SONATA node type recorded by several reports is several reports) */
    size_t maxne = 0;
    for (int r = 0; r < s->net.nreport; ++r) {
        size_t ne = (size_t)(s->dist.report_first[r + 1] - s->dist.report_first[r]);
        if (ne > maxne) maxne = ne;
    }
    double *buf = NULL;
    if (s->out && samples && s->werr == CS_OK && !(buf = malloc((nrow * maxne > 0 ? nrow * maxne : 1) * sizeof *buf)))
        return cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (int r = 0; r < s->net.nreport; ++r) {
        const int p = s->net.reports[r].pop;
        size_t first = (size_t)s->dist.report_first[r], ne = (size_t)s->dist.report_first[r + 1] - first, nk = 0;
        int keep = s->pop_stride[p] / s->base_stride;
        for (size_t i = 0; i < nrow; ++i) {
            if ((row0 + (int64_t)i) % keep) continue;
            if (buf) memcpy(buf + nk * ne, samples + i * np + first, ne * sizeof(double));
            ++nk;
            if (first_of_pop(s, r)) s->pop_rows[p]++;
        }
        if (buf && nk && s->werr == CS_OK)
            s->werr = cs_output_append_samples_d(s->out, report_name(s, r, name, sizeof name), nk, buf);
    }
    free(buf);
    return CS_OK;
}

cs_status cs__sim_write_spikes(cs_sim *s, const cs_spike *sp, size_t n) {
    const cs_model *m = s->m;
    if (!n) return CS_OK;
    int *pop = malloc(n * sizeof *pop), *index = malloc(n * sizeof *index);
    int *pop_out = malloc((size_t)m->npop * sizeof *pop_out);
    if (!pop || !index || !pop_out) {
        free(pop); free(index); free(pop_out);
        return cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    for (size_t j = 0; j < n; ++j) pop[j] = cs__sim_gid_pop(m, sp[j].gid, &index[j]);
    for (size_t j = 0; j < n && s->keep && s->werr == CS_OK; ++j)
        s->werr = cs_memsink_append_spike(&s->mem, sp[j].gid, sp[j].time);
    double *t = malloc(n * sizeof *t);
    uint64_t *id = malloc(n * sizeof *id);
    if (!t || !id) {
        free(t); free(id); free(pop); free(index); free(pop_out);
        return cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    for (int j = 0; j < m->npop; ++j) pop_out[j] = cs__sim_first_of_output(m, j);
    for (int p = 0; p < m->npop; ++p) {
        if (pop_out[p] != p) continue;
        size_t k = 0;
        for (size_t j = 0; j < n; ++j)
            if (pop_out[pop[j]] == p) {
                t[k] = sp[j].time;
                id[k++] = m->pops[pop[j]].output_id0 + (uint64_t)index[j];
                s->pop_spikes[pop[j]]++;
            }
        if (k && s->out && s->werr == CS_OK) s->werr = cs_output_append_spikes(s->out, output_name(m, p), k, t, id);
    }
    free(t); free(id); free(pop); free(index); free(pop_out);
    return CS_OK;
}

/* The parts [i, j) of one report file on one SONATA population (m->report_parts), copied from
 * the finished file into dst under that population (rank 0). */
static cs_status write_bmtk_population(const cs_sim *s, const char *dst, int i, int j, int append) {
    const cs_model *m = s->m;
    cs_bmtk_group *groups = calloc((size_t)(j - i), sizeof *groups);
    char (*names)[2 * CS_NAME_MAX + 2] = calloc((size_t)(j - i), sizeof *names);
    int *sec = NULL;
    double *pos = NULL;
    size_t nsel = 0;
    for (int k = i; k < j; ++k) nsel += (size_t)m->report_parts[k].nloc;
    if (groups && names) {
        sec = malloc(nsel * sizeof *sec);
        pos = malloc(nsel * sizeof *pos);
    }
    if (!groups || !names || !sec || !pos) {
        free(groups); free(names); free(sec); free(pos);
        return cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    size_t o = 0;
    for (int k = i; k < j; ++k) {
        const cs_report_part *rp = &m->report_parts[k];
        const cs_probe_spec *pr = &m->pops[rp->pop].probes;
        for (int l = 0; l < rp->nloc; ++l) {
            sec[o + (size_t)l] = pr->loc_section ? pr->loc_section[rp->loc[l]] : 0;
            pos[o + (size_t)l] = pr->locs[rp->loc[l]].pos;
        }
        const cs_probe_var *pv = &pr->vars[rp->var];
        if (pv->kind == CS_PROBE_V) snprintf(names[k - i], sizeof names[k - i], "%s", m->pops[rp->pop].name);
        else snprintf(names[k - i], sizeof names[k - i], "%s/%s", m->pops[rp->pop].name, pv->name);
        groups[k - i] = (cs_bmtk_group){names[k - i], pr->nloc, rp->nloc, rp->loc, sec + o, pos + o};
        o += (size_t)rp->nloc;
    }
    const cs_report_part *p0 = &m->report_parts[i]; /* the parts of one file share its rows */
    const cs_bmtk_rows rows = {p0->t_start, p0->t_end, p0->dt};
    cs_status st = cs_output_bmtk_report(s->o.output_path, dst, output_name(m, p0->pop), j - i, groups, &rows,
                                         append);
    free(groups); free(names); free(sec); free(pos);
    return st;
}

/* SONATA reports, copied from the finished file into bmtk's layout: output_dir/<file>.h5, one
 * group per SONATA population (rank 0). */
static cs_status write_bmtk_reports(const cs_sim *s) {
    const cs_model *m = s->m;
    const cs_report_part *rp = m->report_parts;
    for (int a = 0, b; a < m->nreport_part; a = b) {
        for (b = a + 1; b < m->nreport_part && !strcmp(rp[b].file, rp[a].file);) ++b;
        char dst[CS_PATH_MAX + CS_NAME_MAX + 8];
        snprintf(dst, sizeof dst, "%s/%s.h5", m->report_dir, rp[a].file);
        for (int i = a, j; i < b; i = j) {
            for (j = i + 1; j < b && !strcmp(output_name(m, rp[j].pop), output_name(m, rp[i].pop));) ++j;
            CS_TRY(write_bmtk_population(s, dst, i, j, i > a));
        }
    }
    return CS_OK;
}

cs_status cs__sim_finish_output(cs_sim *s, int complete) {
    if (!s->out) return CS_OK;
    double share[CS_PHASE_COUNT];
    cs_profile_shares(&s->prof, share);
    cs_status st = cs_output_write_profile(s->out, CS_PHASE_COUNT, cs_phase_names, s->prof.seconds, share);
    if (st == CS_OK) st = cs_output_set_meta_double(s->out, "wall_seconds", s->wall);
    cs_status st2 = cs_output_close(s->out, complete && st == CS_OK);
    s->out = NULL;
    if (st == CS_OK && st2 == CS_OK && complete && s->rank == 0 && s->m->report_dir[0]) st = write_bmtk_reports(s);
    if (st == CS_OK && st2 == CS_OK && complete && s->rank == 0 && s->m->spikes_by_id)
        st = cs_output_sort_spikes_by_id(s->o.output_path);
    return st != CS_OK ? st : st2;
}
