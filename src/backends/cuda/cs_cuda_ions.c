/* Ions on the CUDA backend, host side (cs_cuda_ions.h). */
#include "cs_cuda_ions.h"

#include <stdlib.h>
#include <string.h>

#include "cs_ion.h"

#ifdef CS_HAVE_CUDA

static void nernst(cs_cuda_ions *h, int ion, int count) {
    static const double z[CS_NION] = CS_ION_VALENCE;
    for (int k = 0; k < count; ++k) {
        int r = h->rows[ion][k];
        h->e[ion][r] = cs_nernst(h->ci[ion][r], h->co[ion][r], z[ion], h->celsius);
    }
}

cs_status cs_cuda_ions_build(const cs_network_desc *net, const int *cell_first, const int *row_map, size_t n_int,
                             double celsius, cs_cuda_ions *h) {
    memset(h, 0, sizeof *h);
    h->celsius = celsius;
    unsigned ions = 0;
    for (size_t k = 0; k < net->ninst; ++k) ions |= cs_ion_used(net->inst[k].type);
    size_t n = n_int ? n_int : 1;
    for (int ion = 0; ion < CS_NION; ++ion) {
        if (!(ions & (1u << ion))) continue;
        h->e[ion] = calloc(n, sizeof(double));
        h->i[ion] = calloc(n, sizeof(double));
        h->ci[ion] = calloc(n, sizeof(double));
        h->co[ion] = calloc(n, sizeof(double));
        h->rows[ion] = calloc(n, sizeof(int));
        h->used[ion] = calloc(n, sizeof(int));
        unsigned char *style = calloc(n, 1), *used = calloc(n, 1);
        if (!h->e[ion] || !h->i[ion] || !h->ci[ion] || !h->co[ion] || !h->rows[ion] || !h->used[ion] || !style ||
            !used) {
            free(style);
            free(used);
            return cs_error_set(CS_ERR_NOMEM, "out of memory for ions");
        }
        for (size_t c = 0; c < net->ncell; ++c) {
            const cs_cell_desc *cell = &net->cells[c];
            for (int r = 0; r < cell->geom->ncv; ++r) {
                int t = cell->geom->tag[r] & (CS_NTAG - 1), row = row_map[cell_first[c] + r];
                h->e[ion][row] = cell->ion_e[ion][t];
                h->ci[ion][row] = cell->ion_ci[ion][t];
                h->co[ion][row] = cell->ion_co[ion][t];
            }
        }
        for (size_t k = 0; k < net->ninst; ++k) {
            const cs_instance_desc *in = &net->inst[k];
            int st = cs_ion_style_of(in->type, ion), row = row_map[cell_first[in->cell] + in->node];
            if (st > style[row]) style[row] = (unsigned char)st;
            if ((cs_ion_used(in->type) >> ion) & 1u) used[row] = 1;
        }
        for (size_t r = 0; r < n_int; ++r)
            if (used[r]) h->used[ion][h->nused[ion]++] = (int)r;
        free(used);
        for (size_t r = 0; r < n_int; ++r)
            if (style[r] == CS_ION_STYLE_WRITE) h->rows[ion][h->nadvance[ion]++] = (int)r;
        h->nrows[ion] = h->nadvance[ion];
        for (size_t r = 0; r < n_int; ++r)
            if (style[r] == CS_ION_STYLE_READ) h->rows[ion][h->nrows[ion]++] = (int)r;
        free(style);
        nernst(h, ion, h->nrows[ion]);
    }
    return CS_OK;
}

void cs_cuda_ions_wrote(cs_cuda_ions *h, const cs_mech_type *t) {
    for (int ion = 0; ion < CS_NION; ++ion)
        if (((t->conc_write >> ion) & 1u) && h->rows[ion]) nernst(h, ion, h->nrows[ion]);
}

static cs_status put(double **dst, const double *src, size_t n, const char *what) {
    if (!src) return CS_OK;
    if (!*dst) CS_TRY(cs_cuda_alloc((void **)dst, n * sizeof(double), what));
    return cs_cuda_upload(*dst, src, n * sizeof(double));
}

cs_status cs_cuda_ions_upload(const cs_cuda_ions *h, cs_cuda_state *s) {
    size_t n = s->n_int ? s->n_int : 1;
    for (int ion = 0; ion < CS_NION; ++ion) {
        CS_TRY(put(&s->ion_e[ion], h->e[ion], n, "reversal potentials"));
        CS_TRY(put(&s->ion_i[ion], h->i[ion], n, "ion currents"));
        CS_TRY(put(&s->ion_ci[ion], h->ci[ion], n, "ion concentrations"));
        CS_TRY(put(&s->ion_co[ion], h->co[ion], n, "ion concentrations"));
        s->nernst_n[ion] = h->nadvance[ion];
        s->ion_used_n[ion] = h->nused[ion];
        if (h->nused[ion] && !s->ion_used_rows[ion]) {
            size_t bytes = (size_t)h->nused[ion] * sizeof(int);
            CS_TRY(cs_cuda_alloc((void **)&s->ion_used_rows[ion], bytes, "ion rows"));
            CS_TRY(cs_cuda_upload(s->ion_used_rows[ion], h->used[ion], bytes));
        }
        if (h->nadvance[ion] && !s->nernst_rows[ion]) {
            size_t bytes = (size_t)h->nadvance[ion] * sizeof(int);
            CS_TRY(cs_cuda_alloc((void **)&s->nernst_rows[ion], bytes, "Nernst rows"));
            CS_TRY(cs_cuda_upload(s->nernst_rows[ion], h->rows[ion], bytes));
        }
    }
    return CS_OK;
}

void cs_cuda_ions_free(cs_cuda_ions *h) {
    for (int ion = 0; ion < CS_NION; ++ion) {
        free(h->e[ion]); free(h->i[ion]); free(h->ci[ion]); free(h->co[ion]); free(h->rows[ion]);
        free(h->used[ion]);
    }
    memset(h, 0, sizeof *h);
}

#endif
