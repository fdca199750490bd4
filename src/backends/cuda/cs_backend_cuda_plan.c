/* What the CUDA backend's set-up (cs_backend_cuda_setup.c) and auto's solver-level trial
 * (cs_cuda_solver_trial.c) both build from a network for the Hines solve: the tree structure,
 * the plan's options, the constant arrays of the matrix, the fused step's row flags, and the
 * constants of identical cells. Host logic only. */
#ifdef CS_HAVE_CUDA
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cs_backend_cuda_internal.h"
#include "cs_cable_matrix.h"

cs_status cs__cuda_tree_structure(const cs_network_desc *net, double dt, int **cell_first, int **parent) {
    const size_t nrow = (size_t)net->total_cv;
    *cell_first = malloc((net->ncell + 1) * sizeof **cell_first);
    *parent = malloc((nrow ? nrow : 1) * sizeof **parent);
    if (!*cell_first || !*parent) return cs_error_set(CS_ERR_NOMEM, "out of memory for %zu CVs", nrow);
    int row = 0;
    for (size_t c = 0; c < net->ncell; ++c) {
        (*cell_first)[c] = row;
        row += net->cells[c].geom->ncv;
    }
    (*cell_first)[net->ncell] = row;
    /* each cell writes its own rows: on threads (0.24 s of one core at 16 M rows, before any plan) */
    const long long ncell = (long long)net->ncell;
    int *first = *cell_first, *par = *parent;
#pragma omp parallel for schedule(dynamic, 64) if (nrow >= 1000000)
    for (long long c = 0; c < ncell; ++c) cs_cable_matrix_cell(&net->cells[c], dt, first[c], par, NULL, NULL, NULL, NULL);
    return CS_OK;
}

/* Each step kernel on the main stream scheduled while the one before it runs: a small network's
 * step is a chain of dependent launches of a few microseconds each (H200, bench/NOTES.md, session
 * 30: 1 024 distinct busyring trees' step 22.3 → 19.2 µs, runs 0.0196 → 0.0177 s; the Allen
 * network −2.5 %; where the fused step forks into launches side by side, no change).
 * CS_CUDA_PDL=0: plain launches. */
int cs__cuda_pdl_on(void) {
    const char *e = getenv("CS_CUDA_PDL");
    return !(e && !strcmp(e, "0"));
}

void cs__cuda_plan_options(const cs_backend_params *p, cs_hines_gpu_options *opt) {
    cs_hines_gpu_options_default(opt);
    const int epoch = p->solver && !strcmp(p->solver, "epoch");
    opt->variant = epoch ? "flat" : p->solver; /* epoch: tree order, cell by cell */
    /* CS_CUDA_FUSED=0: assembly and solve as two kernels (for comparisons) */
    const char *fuse = getenv("CS_CUDA_FUSED");
    opt->fused_step = !(fuse && !strcmp(fuse, "0"));
    opt->device = p->device;
    opt->const_coupling = 1; /* s->u is uploaded once and every solve passes it unchanged */
    opt->dependent_launch = cs__cuda_pdl_on(); /* on the plan's stream only; the solver checks the device */
    /* switches of the plans' flags, NAME=VALUE (for comparisons, except CS_STAGED_INVARIANT=1:
     * staged plans in which a cell's arithmetic does not depend on the other cells on its GPU, the
     * same spike times on 1 or N GPUs; docs/mpi.md). fine_only: with --solver fine only. */
    static const struct {
        const char *name, *value;
        int flag, fine_only;
    } flag_switches[] = {
        {"CS_STAGED_INVARIANT", "1", CS_HINES_STAGED_INVARIANT, 0},
        {"CS_STAGED_REG", "0", CS_HINES_STAGED_NO_REG_STEPS, 0},    /* no register steps */
        {"CS_STAGED_SLOT_CONSTANTS", "0", CS_HINES_STAGED_CONSTANTS_PER_CELL, 0}, /* constants per cell in the rings */
        {"CS_STAGED_RECORDS", "device", CS_HINES_STAGED_RECORDS_DEVICE, 0}, /* the eliminated rows in device memory everywhere */
        {"CS_STAGED_RECORDS", "shared", CS_HINES_STAGED_RECORDS_SHARED, 0}, /* ... nowhere */
        {"CS_STAGED_ROW_REUSE", "0", CS_HINES_STAGED_ROWS_UNSHARED, 0}, /* a shared row a gather row, not reused */
        {"CS_FINE_U_SHARED", "1", CS_HINES_FINE_U_SHARED, 0},       /* u in shared memory on any packs */
        {"CS_FINE_SMALL_STEP", "0", CS_HINES_FINE_STEP_LARGE_ONLY, 0}, /* small packs unfused (before session 28) */
        {"CS_FINE_DISTINCT_CAP", "0", CS_HINES_FINE_PACK_CAP_TWO, 0}, /* the pack cap before session 29 */
        {"CS_FINE_D_GLOBAL", "1", CS_HINES_FINE_D_GLOBAL, 0},       /* the eliminated diagonal in device memory */
        {"CS_FINE_STEP_ALWAYS", "1", CS_HINES_FINE_STEP_ALWAYS, 0}, /* the fused step on any packs */
        {"CS_FINE_ONE_LAUNCH", "1", CS_HINES_FINE_ONE_LAUNCH, 0},   /* the fused step in one launch */
        {"CS_FINE_NO_SPLIT", "1", CS_HINES_FINE_NO_SPLIT, 1},       /* fine's plan without that set-up step */
        {"CS_FINE_NO_SORT", "1", CS_HINES_FINE_NO_SORT, 1},
        {"CS_FINE_NO_REROOT", "1", CS_HINES_FINE_NO_REROOT, 1},
    };
    const int fine = p->solver && !strcmp(p->solver, "fine");
    for (size_t k = 0; k < sizeof flag_switches / sizeof flag_switches[0]; ++k) {
        const char *e = getenv(flag_switches[k].name);
        if (e && !strcmp(e, flag_switches[k].value) && (fine || !flag_switches[k].fine_only))
            opt->fine_flags |= flag_switches[k].flag;
    }
    const char *fpr = getenv("CS_FINE_PACK_ROWS"); /* fine's most rows a pack (default 1 536; for comparisons) */
    if (fpr && atoi(fpr) >= 64 && atoi(fpr) <= 16384 && fine) opt->fine_pack_rows = atoi(fpr);
    const char *fth = getenv("CS_FINE_THREADS"); /* fine's threads a block (a pack), 32..1024 */
    if (fth && atoi(fth) >= 32 && atoi(fth) <= 1024 && fine) opt->threads = atoi(fth);
    /* CS_STAGED_CELLS=1|2|4: staged's cells per warp (for comparisons) */
    const char *sc = getenv("CS_STAGED_CELLS");
    if (sc && (atoi(sc) == 1 || atoi(sc) == 2 || atoi(sc) == 4) && p->solver && !strcmp(p->solver, "staged")) opt->block_size = atoi(sc);
    /* CS_CHUNKED_L: the chunked solver's most interior rows per chunk (4..32; default 16) */
    const char *chunk_l = getenv("CS_CHUNKED_L");
    if (chunk_l && p->solver && !strcmp(p->solver, "chunked")) opt->block_size = atoi(chunk_l);
}

const char *cs__cuda_resolve(const cs_network_desc *net, const cs_backend_params *p) {
    if (!net->ncell || net->total_cv > (uint64_t)INT_MAX) return NULL;
    /* only auto and chunked may run another variant's solve (cs_hines_gpu_plan_resolve) */
    if (p->solver && strcmp(p->solver, "auto") && strcmp(p->solver, "chunked")) return p->solver;
    int *cell_first = NULL, *parent = NULL;
    const char *v = NULL;
    if (cs__cuda_tree_structure(net, p->dt, &cell_first, &parent) == CS_OK) {
        cs_hines_gpu_options opt;
        cs__cuda_plan_options(p, &opt);
        v = cs_hines_gpu_plan_resolve((int)net->ncell, cell_first, parent, &opt);
    }
    cs_error_clear();
    free(cell_first);
    free(parent);
    return v;
}

double *cs__cuda_matrix_array(const cs_network_desc *net, double dt, const int *cell_first, int which) {
    const size_t nrow = (size_t)net->total_cv;
    double *a = calloc(nrow ? nrow : 1, sizeof *a); /* zero: d0 and b0 accumulate */
    if (!a) return NULL;
    /* each cell adds into its own rows only, in its own order: on threads, the same sums */
    const long long ncell = (long long)net->ncell;
#pragma omp parallel for schedule(dynamic, 64) if (nrow >= 1000000)
    for (long long c = 0; c < ncell; ++c)
        cs_cable_matrix_cell(&net->cells[c], dt, cell_first[c], NULL, which == CS__U ? a : NULL,
                             which == CS__CDT ? a : NULL, which == CS__D0 ? a : NULL, which == CS__B0 ? a : NULL);
    /* linear mechanisms (pas) fold into d0 and b0 once; setup_mechanisms skips them */
    for (size_t k = 0; (which == CS__D0 || which == CS__B0) && k < net->ninst; ++k)
        cs_cable_matrix_fold(&net->inst[k], cell_first[net->inst[k].cell] + net->inst[k].node,
                             which == CS__D0 ? a : NULL, which == CS__B0 ? a : NULL);
    return a;
}

int cs__cuda_identical_cells(const int *cell_first, int ncell, double *const *arrays, int narrays) {
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

static cs_status upload_new(void **dst, const void *src, size_t bytes, const char *what) {
    CS_TRY(cs_cuda_alloc(dst, bytes, what));
    return cs_cuda_upload(*dst, src, bytes);
}

cs_status cs__cuda_shared_constants(const cs_network_desc *net, const int *parent, double *const first[CS__NCONST],
                                    size_t n0, double **dev[CS__NCONST], double **a0_dev) {
    cs_status st = CS_OK;
    first[CS__U][0] = 0.0; /* the root has no coupling */
    for (int k = 0; st == CS_OK && k < CS__NCONST; ++k)
        st = upload_new((void **)dev[k], first[k], n0 * sizeof(double), "the cells' constants");
    /* pivots of the rows with no current in their subtree in any cell: the same every step
     * (cell 0 starts at row 0, so its parents are local) */
    double *a0 = malloc((n0 ? n0 : 1) * sizeof *a0);
    unsigned char *has_current = calloc(n0 ? n0 : 1, 1);
    for (size_t k = 0; has_current && k < net->ninst; ++k)
        if (!net->inst[k].type->fold) has_current[net->inst[k].node] = 1;
    if (st == CS_OK && (!a0 || !has_current ||
                        cs_hines_clean_pivots((int)n0, parent, first[CS__D0], first[CS__U], has_current, a0)))
        st = cs_error_set(CS_ERR_NOMEM, "out of memory");
    free(has_current);
    if (st == CS_OK) st = upload_new((void **)a0_dev, a0, n0 * sizeof *a0, "the cells' pivots");
    free(a0);
    return st;
}

unsigned char *cs__cuda_current_rows(const cs_network_desc *net, const int *cell_first) {
    const size_t nrow = (size_t)net->total_cv;
    unsigned char *cur = calloc(nrow ? nrow : 1, 1);
    for (size_t k = 0; cur && k < net->ninst; ++k)
        if (!net->inst[k].type->fold) cur[cell_first[net->inst[k].cell] + net->inst[k].node] = 1;
    return cur;
}

cs_status cs__cuda_fused_flags_into(const cs_network_desc *net, cs_hines_plan *plan, const int *row_map,
                                    const unsigned char *current, const int *cell_first, size_t n_int,
                                    int shared_constants, unsigned char *flags, unsigned char **dev) {
    cs_solver_status ss = cs_hines_gpu_plan_row_flags(plan, flags);
    if (ss != CS_SOLVER_OK) return cs__cuda_solver_fail(ss, "row flags of the fused step");
    const long long nrow = (long long)net->total_cv;
#pragma omp parallel for schedule(static) if (nrow >= 1000000) /* row_map: one internal row each */
    for (long long r = 0; r < nrow; ++r)
        if (current[r]) flags[row_map[r]] |= CS_HINES_ROW_CURRENT;
    ss = cs_hines_gpu_plan_set_current(plan, flags); /* staged keeps them in its schedule */
    if (ss != CS_SOLVER_OK) return cs__cuda_solver_fail(ss, "rows with current of the fused step");
    size_t n = n_int ? n_int : 1;
    const unsigned char *up = flags;
    unsigned char *local = NULL;
    if (shared_constants) { /* one cell's rows, each the union over the cells (cs_hines_step_d) */
        n = (size_t)cell_first[1];
        if (!(local = calloc(n, 1))) return cs_error_set(CS_ERR_NOMEM, "out of memory");
        for (size_t c = 0; c < net->ncell; ++c)
            for (size_t r = 0; r < n; ++r) local[r] |= flags[row_map[cell_first[c] + r]];
        up = local;
    }
    cs_status st = *dev ? cs_cuda_upload(*dev, up, n) : upload_new((void **)dev, up, n, "row flags");
    free(local);
    return st;
}

cs_status cs__cuda_fused_flags(const cs_network_desc *net, cs_hines_plan *plan, const int *row_map,
                               const int *cell_first, size_t n_int, int shared_constants, unsigned char **dev) {
    unsigned char *flags = malloc(n_int ? n_int : 1), *current = cs__cuda_current_rows(net, cell_first);
    cs_status st = flags && current ? CS_OK : cs_error_set(CS_ERR_NOMEM, "out of memory");
    *dev = NULL;
    if (st == CS_OK)
        st = cs__cuda_fused_flags_into(net, plan, row_map, current, cell_first, n_int, shared_constants, flags, dev);
    free(flags);
    free(current);
    return st;
}

#else
typedef int cs__cuda_plan_absent; /* a build without CUDA */
#endif
