/* The gather of the catalogue mechanisms' currents, host side (cs_cuda_gather.h). */
#include "cs_cuda_gather.h"

#include <stdlib.h>
#include <string.h>

#ifdef CS_HAVE_CUDA

/* The pairs (row, slot), in the order the CPU adds them, as lists by row (a stable counting
 * sort: a row keeps its pairs' order), uploaded. */
static cs_status upload_list(cs_cuda_gather_list *L, size_t n_int, size_t npair, const int *prow, const int *pslot) {
    int *pos = calloc(n_int + 1, sizeof(int)), *row = NULL, *first = NULL, *slot = NULL;
    cs_status st = pos ? CS_OK : cs_error_set(CS_ERR_NOMEM, "out of memory for the current gather");
    int nrow = 0;
    for (size_t p = 0; st == CS_OK && p < npair; ++p) nrow += pos[prow[p]]++ == 0;
    if (st == CS_OK) {
        row = malloc(((size_t)nrow + 1) * sizeof(int));
        first = malloc(((size_t)nrow + 1) * sizeof(int));
        slot = malloc((npair + 1) * sizeof(int));
        if (!row || !first || !slot) st = cs_error_set(CS_ERR_NOMEM, "out of memory for the current gather");
    }
    if (st == CS_OK) {
        int k = 0, acc = 0;
        for (size_t r = 0; r < n_int; ++r) {
            if (!pos[r]) continue;
            int c = pos[r];
            row[k] = (int)r;
            first[k++] = acc;
            pos[r] = acc; /* from now on: the next free place of row r's slots */
            acc += c;
        }
        first[nrow] = acc;
        for (size_t p = 0; p < npair; ++p) slot[pos[prow[p]]++] = pslot[p];
        L->nrow = nrow;
        st = cs_cuda_alloc((void **)&L->row, ((size_t)nrow + 1) * sizeof(int), "the current gather");
        if (st == CS_OK) st = cs_cuda_upload(L->row, row, (size_t)nrow * sizeof(int));
        if (st == CS_OK) st = cs_cuda_alloc((void **)&L->first, ((size_t)nrow + 1) * sizeof(int), "the current gather");
        if (st == CS_OK) st = cs_cuda_upload(L->first, first, ((size_t)nrow + 1) * sizeof(int));
        if (st == CS_OK) st = cs_cuda_alloc((void **)&L->slot, (npair + 1) * sizeof(int), "the current gather");
        if (st == CS_OK) st = cs_cuda_upload(L->slot, slot, npair * sizeof(int));
    }
    free(pos); free(row); free(first); free(slot);
    return st;
}

cs_status cs_cuda_gather_build(cs_cuda_state *s, const cs_network_desc *net, const int *inst_group,
                               const int *inst_local, const int *cell_first, const int *row_map) {
    cs_cuda_gather *G = &s->gather;
    memset(G, 0, sizeof *G);
    const char *env = getenv("CS_CUDA_GATHER"); /* 0: the catalogues' atomics (for comparisons) */
    if (env && !strcmp(env, "0")) return CS_OK;
    unsigned writes[CS_CUDA_MAX_MECH] = {0}; /* the ions each group's type writes */
    for (size_t k = 0; k < net->ninst; ++k)
        if (inst_group[k] >= 0) writes[inst_group[k]] = net->inst[k].type->ion_write;
    size_t total = 0, total_ion[CS_NION] = {0};
    for (int q = 0; q < s->nmech; ++q) {
        cs_cuda_mech *m = &s->mech[q];
        m->slot0 = -1;
        for (int ion = 0; ion < CS_NION; ++ion) m->slot0_ion[ion] = -1;
        if (m->kind != CS_CUDA_CATALOGUE || m->n <= 0) continue;
        m->slot0 = (int)total;
        total += (size_t)m->n;
        for (int ion = 0; ion < CS_NION; ++ion)
            if ((writes[q] >> ion) & 1u) {
                m->slot0_ion[ion] = (int)total_ion[ion];
                total_ion[ion] += (size_t)m->n;
            }
    }
    if (!total) return CS_OK;
    size_t most = total;
    int *prow = malloc(most * sizeof(int)), *pslot = malloc(most * sizeof(int));
    cs_status st = prow && pslot ? CS_OK : cs_error_set(CS_ERR_NOMEM, "out of memory for the current gather");
    /* list 0: every catalogue instance; list 1 + ion: those whose type writes the ion; each in
     * group order, then instance order (at one row, a group's instances keep the network's order: order_instances in cs_backend_cuda_setup.c) */
    for (int list = 0; st == CS_OK && list <= CS_NION; ++list) {
        size_t np = 0;
        for (int q = 0; q < s->nmech; ++q) {
            const cs_cuda_mech *m = &s->mech[q];
            int base = list == 0 ? m->slot0 : m->slot0_ion[list - 1];
            if (base < 0) continue;
            for (size_t k = 0; k < net->ninst; ++k) {
                if (inst_group[k] != q) continue;
                const cs_instance_desc *in = &net->inst[k];
                prow[np] = row_map[cell_first[in->cell] + in->node];
                pslot[np++] = base + inst_local[k];
            }
        }
        if (np) st = upload_list(&G->list[list], s->n_int, np, prow, pslot);
    }
    free(prow);
    free(pslot);
    if (st == CS_OK) st = cs_cuda_alloc((void **)&G->slot_i, total * sizeof(double), "current slots");
    if (st == CS_OK) st = cs_cuda_alloc((void **)&G->slot_g, total * sizeof(double), "current slots");
    for (int ion = 0; st == CS_OK && ion < CS_NION; ++ion)
        if (total_ion[ion]) st = cs_cuda_alloc((void **)&G->slot_ion[ion], total_ion[ion] * sizeof(double), "ion current slots");
    G->on = st == CS_OK;
    /* CS_CUDA_GATHER_ADD=1: add to what is there even so (for comparisons) */
    const char *add = getenv("CS_CUDA_GATHER_ADD");
    G->sole = !(add && !strcmp(add, "1"));
    for (int q = 0; q < s->nmech; ++q)
        if (s->mech[q].kind != CS_CUDA_CATALOGUE && s->mech[q].n > 0) G->sole = 0;
    return st;
}

void cs_cuda_gather_free(cs_cuda_state *s) {
    cs_cuda_gather *G = &s->gather;
    cs_cuda_free(G->slot_i);
    cs_cuda_free(G->slot_g);
    for (int ion = 0; ion < CS_NION; ++ion) cs_cuda_free(G->slot_ion[ion]);
    for (int l = 0; l <= CS_NION; ++l) {
        cs_cuda_free(G->list[l].row);
        cs_cuda_free(G->list[l].first);
        cs_cuda_free(G->list[l].slot);
    }
    memset(G, 0, sizeof *G);
}

#endif
