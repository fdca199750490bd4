/* The structure the persistent epoch kernel (solver "epoch", src/backends/cuda/cs_cuda_epoch.cu) reads: each
 * cell's unbranched chains by height, children lists, and the per-cell lists of mechanism instances, detectors
 * and probes, built on the host from the network description and uploaded. Host logic only. */
#include <stdlib.h>
#include <string.h>

#include "cs_cuda_epoch_setup.h"
#include "cs_ion.h"

#ifdef CS_HAVE_CUDA

static cs_status upload_ints(int **dst, const int *src, size_t n, const char *what) {
    CS_TRY(cs_cuda_alloc((void **)dst, (n ? n : 1) * sizeof(int), what));
    return cs_cuda_upload(*dst, src, n * sizeof(int));
}

/* CSR over the cells of n items with cell key[k]: first[ncell + 1], idx (the items by cell, in
 * their order) */
static cs_status by_cell(size_t n, const int *key, int ncell, int **first_out, int **idx_out) {
    int *first = calloc((size_t)ncell + 2, sizeof *first), *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!first || !idx) {
        free(first);
        free(idx);
        return cs_error_set(CS_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < n; ++k) first[key[k] + 2]++;
    for (int c = 0; c < ncell; ++c) first[c + 2] += first[c + 1];
    for (size_t k = 0; k < n; ++k) idx[first[key[k] + 1]++] = (int)k;
    *first_out = first;
    *idx_out = idx;
    return CS_OK;
}

static cs_status upload_by_cell(size_t n, const int *key, int ncell, int **dfirst, int **didx, const char *what) {
    int *first = NULL, *idx = NULL;
    CS_TRY(by_cell(n, key, ncell, &first, &idx));
    cs_status st = upload_ints(dfirst, first, (size_t)ncell + 1, what);
    if (st == CS_OK) st = upload_ints(didx, idx, n, what);
    free(first);
    free(idx);
    return st;
}

/* Each cell's unbranched chains (runs of consecutive rows, each the only child of the one
 * before), ordered by height (0: ends in a leaf; else one more than its highest child chain), the
 * local parents and the children lists of every row. */
static cs_status build_tree(cs_cuda_epoch *e, const cs_network_desc *net, const int *cell_first) {
    const int ncell = (int)net->ncell, nrow = cell_first[ncell];
    const size_t nr = (size_t)nrow + 1;
    int *parent = malloc(nr * sizeof *parent), *nchild = calloc(nr, sizeof *nchild);
    int *head = malloc(nr * sizeof *head), *len = malloc(nr * sizeof *len), *height = malloc(nr * sizeof *height);
    int *chain_of = malloc(nr * sizeof *chain_of), *chain_head = malloc(nr * sizeof *chain_head);
    int *chain_len = malloc(nr * sizeof *chain_len), *chain_first = malloc(((size_t)ncell + 1) * sizeof *chain_first);
    int *hl = malloc((nr + (size_t)ncell) * sizeof *hl), *hl_first = malloc(((size_t)ncell + 1) * sizeof *hl_first);
    int *child_first = calloc(nr + 1, sizeof *child_first), *child = malloc(nr * sizeof *child);
    cs_status st = CS_OK;
    if (!parent || !nchild || !head || !len || !height || !chain_of || !chain_head || !chain_len || !chain_first ||
        !hl || !hl_first || !child_first || !child)
        st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    int nchain = 0, nh = 0;
    for (int c = 0; st == CS_OK && c < ncell; ++c) {
        const int b = cell_first[c], n = cell_first[c + 1] - b;
        const int *gp = net->cells[c].geom->parent; /* local, parents before children (tree order) */
        if (n > e->max_rows) e->max_rows = n;
        for (int r = 0; r < n; ++r) {
            parent[b + r] = r ? gp[r] : -1;
            if (r) {
                nchild[b + gp[r]]++;
                child_first[b + gp[r] + 2]++;
            }
        }
        /* the cell's chains (k local), the chain of each row */
        int k = 0;
        for (int r = 0; r < n; ++r) {
            if (r && parent[b + r] == r - 1 && nchild[b + r - 1] == 1) { /* continues the chain of r - 1 */
                len[k - 1]++;
                chain_of[b + r] = k - 1;
                continue;
            }
            head[k] = r;
            len[k] = 1;
            height[k] = 0;
            chain_of[b + r] = k++;
        }
        /* heights: child chains start at later rows, so they are final when their parent's is set */
        int maxh = 0;
        for (int j = k - 1; j > 0; --j) {
            int pj = chain_of[b + parent[b + head[j]]];
            if (height[j] + 1 > height[pj]) height[pj] = height[j] + 1;
        }
        for (int j = 0; j < k; ++j)
            if (height[j] > maxh) maxh = height[j];
        /* counting sort of the chains by height: hl[nh + H] is where height H starts */
        chain_first[c] = nchain;
        hl_first[c] = nh;
        for (int H = 0; H <= maxh + 1; ++H) hl[nh + H] = 0;
        for (int j = 0; j < k; ++j) hl[nh + height[j] + 1]++;
        for (int H = 1; H <= maxh + 1; ++H) hl[nh + H] += hl[nh + H - 1];
        int *pos = malloc(((size_t)maxh + 1) * sizeof *pos);
        if (!pos) {
            st = cs_error_set(CS_ERR_NOMEM, "out of memory");
            break;
        }
        memcpy(pos, hl + nh, ((size_t)maxh + 1) * sizeof *pos);
        for (int j = 0; j < k; ++j) {
            int at = nchain + pos[height[j]]++;
            chain_head[at] = head[j];
            chain_len[at] = len[j];
        }
        free(pos);
        nchain += k;
        nh += maxh + 2;
    }
    if (st == CS_OK) {
        chain_first[ncell] = nchain;
        hl_first[ncell] = nh;
        /* children of each row (global index), listed as local rows */
        for (int r = 0; r < nrow; ++r) child_first[r + 2] += child_first[r + 1];
        for (int c = 0; c < ncell; ++c)
            for (int r = cell_first[c] + 1; r < cell_first[c + 1]; ++r)
                child[child_first[cell_first[c] + parent[r] + 1]++] = r - cell_first[c];
    }
    const char *what = "the epoch kernel's rows";
    if (st == CS_OK) st = upload_ints(&e->chain_head, chain_head, (size_t)nchain, what);
    if (st == CS_OK) st = upload_ints(&e->chain_len, chain_len, (size_t)nchain, what);
    if (st == CS_OK) st = upload_ints(&e->chain_first, chain_first, (size_t)ncell + 1, what);
    if (st == CS_OK) st = upload_ints(&e->hl, hl, (size_t)nh, what);
    if (st == CS_OK) st = upload_ints(&e->hl_first, hl_first, (size_t)ncell + 1, what);
    if (st == CS_OK) st = upload_ints(&e->parent, parent, (size_t)nrow, what);
    if (st == CS_OK) st = upload_ints(&e->child_first, child_first, (size_t)nrow + 1, what);
    if (st == CS_OK) st = upload_ints(&e->child, child, (size_t)(nrow > ncell ? nrow - ncell : 0), what);
    if (st == CS_OK) st = upload_ints(&e->cell_first, cell_first, (size_t)ncell + 1, what);
    free(parent); free(nchild); free(head); free(len); free(height); free(chain_of); free(chain_head);
    free(chain_len); free(chain_first); free(hl); free(hl_first); free(child_first); free(child);
    return st;
}

/* each mechanism group's instances by cell (net->inst is sorted by cell, so a group's instances
 * come in cell order), and the synapses' cells */
static cs_status build_mechanisms(cs_cuda_epoch *e, const cs_cuda_state *s, const cs_network_desc *net,
                                  const int *inst_group, const int *inst_local) {
    const int ncell = (int)net->ncell, nm = s->nmech;
    size_t total = 0, off[CS_CUDA_MAX_MECH + 1];
    for (int q = 0; q < nm; ++q) {
        off[q] = total;
        total += (size_t)s->mech[q].n;
    }
    int *first = calloc((size_t)nm * ((size_t)ncell + 1) + 1, sizeof *first);
    int *inst = malloc((total ? total : 1) * sizeof *inst);
    int *syn_cell = malloc((s->syn_group >= 0 && s->mech[s->syn_group].n ? (size_t)s->mech[s->syn_group].n : 1) *
                           sizeof *syn_cell);
    size_t fill[CS_CUDA_MAX_MECH];
    cs_status st = first && inst && syn_cell ? CS_OK : cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (int q = 0; q < nm; ++q) fill[q] = off[q];
    for (size_t k = 0; st == CS_OK && k < net->ninst; ++k) {
        const int q = inst_group[k];
        if (q < 0) continue; /* folded into the matrix */
        const int c = net->inst[k].cell;
        inst[fill[q]++] = inst_local[k];
        first[(size_t)q * (ncell + 1) + c + 1]++;
        if (q == s->syn_group) syn_cell[inst_local[k]] = c;
    }
    for (int q = 0; st == CS_OK && q < nm; ++q) { /* counts to absolute positions in inst */
        int *f = first + (size_t)q * (ncell + 1);
        f[0] = (int)off[q];
        for (int c = 0; c < ncell; ++c) f[c + 1] += f[c];
    }
    if (st == CS_OK) st = upload_ints(&e->mech_first, first, (size_t)nm * ((size_t)ncell + 1), "the epoch kernel's mechanisms");
    if (st == CS_OK) st = upload_ints(&e->mech_inst, inst, total, "the epoch kernel's mechanisms");
    if (st == CS_OK)
        st = upload_ints(&e->syn_cell, syn_cell, s->syn_group >= 0 ? (size_t)s->mech[s->syn_group].n : 0,
                         "the epoch kernel's synapses");
    free(first); free(inst); free(syn_cell);
    return st;
}

/* detectors, probes and i_membrane probes by cell */
static cs_status build_lists(cs_cuda_epoch *e, const cs_network_desc *net) {
    const int ncell = (int)net->ncell;
    size_t np = net->nprobe, nv = 0, nq = 0;
    int *det_cell = malloc((net->ndet ? net->ndet : 1) * sizeof *det_cell);
    int *probe_cell = malloc((np ? np : 1) * sizeof *probe_cell), *imem_cell = malloc((np ? np : 1) * sizeof *imem_cell);
    int *probe_of = malloc((np ? np : 1) * sizeof *probe_of);
    cs_status st = det_cell && probe_cell && imem_cell && probe_of ? CS_OK : cs_error_set(CS_ERR_NOMEM, "out of memory");
    for (size_t k = 0; st == CS_OK && k < net->ndet; ++k) det_cell[k] = net->det[k].cell;
    /* i_membrane probes are numbered in probe order (the backend's set-up numbers them so) */
    for (size_t k = 0; st == CS_OK && k < np; ++k) {
        if (net->probes[k].kind == CS_PROBE_IMEM) imem_cell[nq++] = net->probes[k].cell;
        else {
            probe_cell[nv] = net->probes[k].cell;
            probe_of[nv++] = (int)k;
        }
    }
    if (st == CS_OK) st = upload_by_cell(net->ndet, det_cell, ncell, &e->det_first, &e->det_idx, "detectors");
    if (st == CS_OK) st = upload_by_cell(nq, imem_cell, ncell, &e->imem_first, &e->imem_idx, "probes");
    int *first = NULL, *idx = NULL;
    if (st == CS_OK) st = by_cell(nv, probe_cell, ncell, &first, &idx);
    for (size_t j = 0; st == CS_OK && j < nv; ++j) idx[j] = probe_of[idx[j]]; /* the probe's own index */
    if (st == CS_OK) st = upload_ints(&e->probe_first, first, (size_t)ncell + 1, "probes");
    if (st == CS_OK) st = upload_ints(&e->probe_idx, idx, nv, "probes");
    free(first); free(idx); free(det_cell); free(probe_cell); free(imem_cell); free(probe_of);
    return st;
}

static cs_status refuse_catalogue(void) {
    return cs_error_set(CS_ERR_UNSUPPORTED, "solver 'epoch': mechanisms from catalogues and exp2syn are not "
                        "supported (only hh, pas, expsyn, iclamp); use another --solver");
}
static cs_status refuse_ions(void) {
    return cs_error_set(CS_ERR_UNSUPPORTED, "solver 'epoch': ion currents are not supported; use another --solver");
}

cs_status cs_cuda_epoch_check(const cs_network_desc *net) {
    /* in cs_cuda_epoch_build's order: the set-up's groups (kind_of), its ions (cs_cuda_ions_build) */
    for (size_t k = 0; k < net->ninst; ++k)
        if (!net->inst[k].type->fold && (net->inst[k].type->gpu || net->inst[k].type == &cs_mech_exp2syn))
            return refuse_catalogue();
    for (size_t k = 0; k < net->ninst; ++k)
        if (cs_ion_used(net->inst[k].type)) return refuse_ions();
    int max_rows = 0;
    for (size_t c = 0; c < net->ncell; ++c)
        if (net->cells[c].geom->ncv > max_rows) max_rows = net->cells[c].geom->ncv;
    size_t smem;
    return cs_cuda_epoch_smem(max_rows, &smem);
}

cs_status cs_cuda_epoch_build(cs_cuda_state *s, const cs_network_desc *net, const int *cell_first,
                              const int *inst_group, const int *inst_local) {
    cs_cuda_epoch *e = &s->epoch;
    for (int q = 0; q < s->nmech; ++q)
        if (s->mech[q].kind == CS_CUDA_CATALOGUE) return refuse_catalogue();
    for (int ion = 0; ion < CS_NION; ++ion)
        if (s->ion_i[ion]) return refuse_ions();
    e->ncell = (int)net->ncell;
    CS_TRY(build_tree(e, net, cell_first));
    CS_TRY(build_mechanisms(e, s, net, inst_group, inst_local));
    CS_TRY(build_lists(e, net));
    CS_TRY(cs_cuda_alloc((void **)&e->phase_cycles, CS_CUDA_EPOCH_PHASES * sizeof(long long), "the epoch profile"));
    e->on = 1;
    return cs_cuda_epoch_prepare(s);
}

void cs_cuda_epoch_free(cs_cuda_epoch *e) {
    void *p[] = {e->cell_first, e->chain_first, e->chain_head, e->chain_len, e->hl_first, e->hl, e->parent,
                 e->child_first, e->child,
                 e->mech_first, e->mech_inst, e->syn_cell, e->det_first, e->det_idx, e->probe_first,
                 e->probe_idx, e->imem_first, e->imem_idx, e->phase_cycles};
    for (size_t k = 0; k < sizeof p / sizeof p[0]; ++k) cs_cuda_free(p[k]);
    memset(e, 0, sizeof *e);
}

#endif
