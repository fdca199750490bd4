/* The host side of the GPU set-up, timed without a GPU (issue 28, auto's trial): for a model,
 * the network build, the tree-order parents, and each GPU solver's host plan
 * (cs__hines_hplan_build, the planner that cs_hines_gpu_plan_create runs before its uploads),
 * with the options the CUDA backend gives it (fused step, 132 multiprocessors as an H100), then
 * what each resolves to unbuilt (cs__hines_hplan_resolve, asked by auto's trial); and, as auto's
 * solver-level trial does, every plan built at once (OpenMP threads: OMP_NUM_THREADS) and the four
 * constant arrays of the matrix at once.
 *
 *   plan_times [--share[=ROUNDS]] MODEL.json [VARIANT...]   (default: auto staged warp fine chunked variable flat)
 *
 * "chunked+cut" is chunked as auto's trial builds it (CS_HINES_CHUNKED_CUT_ONLY: refused where it
 * would cut nothing). OMP_MAX_ACTIVE_LEVELS=2 lets the plans built at once use their own threads.
 *
 * The wisdom key (auto's first pass over the network) and the parents on threads are timed too.
 *
 * Prints one line per step: its wall time [s], a digest of the plan (FNV-1a over its row map and
 * its schedules: two builds that print the same digest built the same plan) and what the plan
 * became (its whole describe line: staged names each launch's shape); each plan's line gives the
 * process's user and system CPU time [s] and minor page faults of that step (the kernel's zeroing
 * of fresh pages is system time).
 *
 * --share: warp and fine also with their structures' schedules made once (cs_hines_schedules_create,
 * as auto's trial shares them): each plan alone with them (its digest must be the one above), then
 * ROUNDS (default 3) rounds of warp and fine at once, alternated: each its own schedules ("alone"),
 * the schedules made first on every thread ("before"), and made by the first job to start while
 * the other waits ("first"). */
#include <omp.h>
#include <stdint.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cs_build.h"
#include "cs_cable_matrix.h"
#include "cs_error.h"
#include "cs_hines_gpu_impl.h"
#include "cs_model.h"
#include "cs_profile.h"
#include "cs_wisdom.h"

static uint64_t fnv(uint64_t h, const void *data, size_t bytes) {
    const unsigned char *b = data;
    for (size_t k = 0; b && k < bytes; ++k) h = (h ^ b[k]) * 0x100000001b3ull;
    return h;
}
/* the process's user and system CPU time [s] and minor page faults so far */
typedef struct { double user, sys; long faults; } usage;
static usage usage_now(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (usage){r.ru_utime.tv_sec + 1e-6 * r.ru_utime.tv_usec, r.ru_stime.tv_sec + 1e-6 * r.ru_stime.tv_usec, r.ru_minflt};
}
#define H(h, arr, n) fnv(h, (arr), (size_t)(n) * sizeof *(arr))

/* the plan's row map and the arrays its kernels read, with their counts (a chunked plan's sub plan too) */
static uint64_t digest(const cs__hines_hplan *hp, uint64_t h) {
    for (int s = 0; s < hp->nsys; ++s)
        for (int i = 0; i < hp->offset[s + 1] - hp->offset[s]; ++i) {
            long long k = cs__hines_hplan_internal_index(hp, s, i);
            h = fnv(h, &k, sizeof k);
        }
    const int counts[] = {hp->variant, hp->internal_size, hp->nlmap, hp->nslot, hp->npack, hp->ntype, hp->ntask,
                          hp->nchild, hp->nlevel_start, hp->nblock, hp->nlaunch, hp->ngroup, hp->nstype,
                          hp->stg_nslot, hp->stg_nlaunch, hp->chk_nchunk, hp->chk_ngroup, hp->max_pack_rows};
    h = H(h, counts, sizeof counts / sizeof counts[0]);
    h = H(h, hp->lmap, hp->nlmap);
    h = H(h, hp->lusrc, hp->nlmap);
    h = H(h, hp->lorder, hp->nlmap);
    h = H(h, hp->slot_base, hp->nslot);
    h = H(h, hp->slot_n, hp->nslot);
    h = H(h, hp->p_local, hp->p_local ? (hp->shared_p ? hp->max_n : hp->internal_size) : 0);
    h = H(h, hp->pack_base, hp->npack);
    h = H(h, hp->pack_type, hp->npack);
    h = H(h, hp->type_info, 4 * hp->ntype);
    h = H(h, hp->level_start, hp->nlevel_start);
    h = H(h, hp->tasks, 4 * hp->ntask);
    h = H(h, hp->children, hp->nchild);
    h = H(h, hp->block_first, hp->block_first ? hp->nblock + 1 : 0);
    h = H(h, hp->launch_first, hp->launch_first ? hp->nlaunch + 1 : 0);
    h = H(h, hp->group_base, hp->group_base ? hp->ngroup : 0);
    h = H(h, hp->group_type, hp->group_type ? hp->ngroup : 0);
    h = H(h, hp->stg_sched, 2 * hp->stg_nslot);
    h = H(h, hp->stype, 2 * hp->nstype);
    h = H(h, hp->stg_launch, CS__SL_N * hp->stg_nlaunch);
    h = H(h, hp->chk_chunk, 4 * hp->chk_nchunk);
    h = H(h, hp->chk_group, 2 * hp->chk_ngroup);
    h = fnv(h, hp->describe, strlen(hp->describe));
    return hp->chk_sub ? digest(hp->chk_sub, h) : h;
}

/* the host plan of a variant with the options the CUDA backend gives it, 132 multiprocessors
 * (with shared schedules where sch is not NULL) */
static cs_solver_status host_plan_shared(int ncell, const int *first, const int *parent, const char *variant,
                                         const cs_hines_schedules *sch, cs__hines_hplan *hp, char *msg, size_t len) {
    cs_hines_gpu_options opt;
    cs_hines_gpu_options_default(&opt);
    char name[32];
    snprintf(name, sizeof name, "%s", variant);
    char *plus = strchr(name, '+');
    if (plus && !strcmp(plus, "+cut")) { /* chunked+cut: as auto's trial builds chunked */
        *plus = 0;
        opt.fine_flags |= CS_HINES_CHUNKED_CUT_ONLY;
    }
    if (plus && !strcmp(plus, "+records")) { /* staged+records: CS_STAGED_RECORDS=device */
        *plus = 0;
        opt.fine_flags |= CS_HINES_STAGED_RECORDS_DEVICE;
    }
    opt.variant = name;
    opt.fused_step = 1;
    opt.const_coupling = 1;
    opt.schedules = sch;
    return cs__hines_hplan_build(ncell, first, parent, cs__hines_variant_lookup(name), &opt, 132, hp, msg, len);
}

static cs_solver_status host_plan(int ncell, const int *first, const int *parent, const char *variant,
                                  cs__hines_hplan *hp, char *msg, size_t len) {
    return host_plan_shared(ncell, first, parent, variant, NULL, hp, msg, len);
}

/* warp's and fine's plans at once (one thread each, nested regions as the trial's), their
 * schedules: 0 each its own, 1 made first on every thread, 2 made by the first job to start while
 * the other waits. Prints the wall time and both digests. */
static void warp_fine_at_once(int ncell, const int *first, const int *parent, int mode) {
    static const char *const name[] = {"alone", "before", "first"}, *const var[2] = {"warp", "fine"};
    cs_hines_schedules *sch = NULL;
    cs__hines_hplan hp[2];
    memset(hp, 0, sizeof hp);
    uint64_t dig[2] = {0, 0};
    int claimed = 0, made = 0, failed = 0;
    const usage u0 = usage_now();
    const double t = cs_now();
    double t_sch = 0;
    if (mode == 1) {
        failed = cs_hines_schedules_create(ncell, first, parent, 0, &sch) != CS_SOLVER_OK;
        t_sch = cs_now() - t;
    }
    const int nt = omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(2) reduction(| : failed)
    for (int k = 0; k < 2; ++k) {
        omp_set_num_threads(nt);
        if (mode == 2) {
            int mine;
#pragma omp atomic capture
            mine = claimed++;
            if (mine == 0) {
                const double t1 = cs_now();
                failed |= cs_hines_schedules_create(ncell, first, parent, 0, &sch) != CS_SOLVER_OK;
                t_sch = cs_now() - t1;
#pragma omp atomic write
                made = 1;
            } else {
                for (int m = 0; !m;) {
#pragma omp atomic read
                    m = made;
                    if (!m) nanosleep(&(struct timespec){0, 100000}, NULL);
                }
            }
        }
        char msg[256];
        failed |= host_plan_shared(ncell, first, parent, var[k], sch, &hp[k], msg, sizeof msg) != CS_SOLVER_OK;
    }
    cs_hines_schedules_destroy(sch);
    const double el = cs_now() - t;
    const usage u1 = usage_now();
    for (int k = 0; k < 2 && !failed; ++k) dig[k] = digest(&hp[k], 0xcbf29ce484222325ull);
    for (int k = 0; k < 2; ++k) cs__hines_hplan_free(&hp[k]);
    char what[40];
    snprintf(what, sizeof what, "warp+fine at once, %s", name[mode]);
    printf("%-28s %8.3f s  warp %016llx fine %016llx%s (schedules %.3f s) [user %.2f sys %.2f s, %ld faults]\n", what, el,
           (unsigned long long)dig[0], (unsigned long long)dig[1], failed ? " FAILED" : "", t_sch, u1.user - u0.user,
           u1.sys - u0.sys, u1.faults - u0.faults);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int rounds = 0;
    if (argc > 1 && !strncmp(argv[1], "--share", 7)) {
        rounds = argv[1][7] == '=' ? atoi(argv[1] + 8) : 3;
        ++argv, --argc;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s [--share[=ROUNDS]] MODEL.json [VARIANT...]\n", argv[0]);
        return 2;
    }
    static const char *const all[] = {"auto", "staged", "warp", "fine", "chunked", "variable", "flat"};
    const char *const *variants = argc > 2 ? (const char *const *)argv + 2 : all;
    const int nvar = argc > 2 ? argc - 2 : (int)(sizeof all / sizeof all[0]);
    cs_model m;
    double t = cs_now();
    if (cs_model_load_file(argv[1], &m) != CS_OK) {
        fprintf(stderr, "%s\n", cs_error_message());
        return 1;
    }
    printf("%-28s %8.3f s\n", "model read", cs_now() - t);
    cs_network_desc net;
    t = cs_now();
    if (cs_build_network(&m, &net) != CS_OK) {
        fprintf(stderr, "%s\n", cs_error_message());
        return 1;
    }
    printf("%-28s %8.3f s  (%zu cells, %llu CVs, %zu instances)\n", "network build", cs_now() - t, net.ncell,
           (unsigned long long)net.total_cv, net.ninst);
    t = cs_now();
    const cs_backend_params bp = {NULL, 0.025, 6.3, 1, 1, 0};
    const uint64_t key = cs_wisdom_key(&net, &bp, "cuda", 128); /* auto's first work, before its trial */
    printf("%-28s %8.3f s  (%016llx)\n", "wisdom key", cs_now() - t, (unsigned long long)key);
    const int ncell = (int)net.ncell;
    int *first = malloc(((size_t)ncell + 1) * sizeof *first);
    int *parent = malloc((net.total_cv ? net.total_cv : 1) * sizeof *parent);
    if (!first || !parent) return 1;
    t = cs_now();
    int row = 0;
    for (int c = 0; c < ncell; ++c) { /* as the CUDA backend's set-up */
        first[c] = row;
        cs_cable_matrix_cell(&net.cells[c], 0.025, row, parent, NULL, NULL, NULL, NULL);
        row += net.cells[c].geom->ncv;
    }
    first[ncell] = row;
    printf("%-28s %8.3f s\n", "parents", cs_now() - t);
    { /* as cs__cuda_tree_structure now builds them: each cell's rows on a thread, into a new array */
        int *par2 = malloc((net.total_cv ? net.total_cv : 1) * sizeof *par2);
        if (!par2) return 1;
        t = cs_now();
#pragma omp parallel for schedule(dynamic, 64)
        for (int c = 0; c < ncell; ++c) cs_cable_matrix_cell(&net.cells[c], 0.025, first[c], par2, NULL, NULL, NULL, NULL);
        const double el = cs_now() - t;
        printf("%-28s %8.3f s  (%d threads, %s)\n", "parents on threads", el, omp_get_max_threads(),
               memcmp(par2, parent, net.total_cv * sizeof *par2) ? "DIFFER" : "the same");
        free(par2);
    }
    double *a = calloc(net.total_cv ? net.total_cv : 1, sizeof *a);
    t = cs_now();
    for (int c = 0; c < ncell; ++c) cs_cable_matrix_cell(&net.cells[c], 0.025, first[c], NULL, NULL, NULL, a, NULL);
    printf("%-28s %8.3f s\n", "one matrix array (d0)", cs_now() - t);
    free(a);
    for (int k = 0; k < nvar; ++k) {
        cs__hines_hplan hp;
        char msg[256];
        const usage u0 = usage_now();
        t = cs_now();
        cs_solver_status st = host_plan(ncell, first, parent, variants[k], &hp, msg, sizeof msg);
        const double el = cs_now() - t;
        const usage u1 = usage_now();
        char use[80];
        snprintf(use, sizeof use, "[user %.2f sys %.2f s, %ld faults]", u1.user - u0.user, u1.sys - u0.sys, u1.faults - u0.faults);
        char what[40];
        snprintf(what, sizeof what, "plan %s", variants[k]);
        if (st != CS_SOLVER_OK) printf("%-28s %8.3f s  refused: %s %s\n", what, el, msg, use);
        else {
            printf("%-28s %8.3f s  %016llx %s %s: %s\n", what, el,
                   (unsigned long long)digest(&hp, 0xcbf29ce484222325ull), use, cs__hines_variant_name(hp.variant), hp.describe);
            /* what auto's trial then does on the host per timed candidate (cs_hines_gpu_plan_row_map,
             * cs_hines_gpu_plan_row_flags): the row map and the fused step's flags, into new arrays */
            int *map = malloc((size_t)hp.nrows * sizeof *map);
            unsigned char *fl = malloc(hp.internal_size ? (size_t)hp.internal_size : 1);
            t = cs_now();
            for (int sy = 0; map && sy < hp.nsys; ++sy)
                for (int i = 0; i < hp.offset[sy + 1] - hp.offset[sy]; ++i)
                    map[hp.offset[sy] + i] = (int)cs__hines_hplan_internal_index(&hp, sy, i);
            const double el_map = cs_now() - t;
            t = cs_now();
            if (fl && cs__hines_hplan_fuses(&hp)) cs__hines_hplan_row_flags(&hp, fl);
            printf("%-28s %8.3f s  (row flags %.3f s%s)\n", "  its row map", el_map, cs_now() - t,
                   cs__hines_hplan_fuses(&hp) ? "" : ", does not fuse");
            free(map);
            free(fl);
            cs__hines_hplan_free(&hp);
        }
        fflush(stdout);
    }
    /* auto's solver-level trial (src/backends/cuda/cs_cuda_solver_trial.c) builds the candidates'
     * plans at once, one OpenMP thread each: the wall time of that, and the four constant arrays
     * built at once as it builds them */
    const usage u0 = usage_now();
    t = cs_now();
    int refused = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : refused)
    for (int k = 0; k < nvar; ++k) {
        cs__hines_hplan hp;
        char msg[256];
        if (host_plan(ncell, first, parent, variants[k], &hp, msg, sizeof msg) == CS_SOLVER_OK)
            cs__hines_hplan_free(&hp);
        else
            ++refused;
    }
    const double el = cs_now() - t;
    const usage u1 = usage_now();
    printf("%-28s %8.3f s  (%d threads, %d refused) [user %.2f sys %.2f s, %ld faults]\n", "plans at once", el,
           omp_get_max_threads(), refused, u1.user - u0.user, u1.sys - u0.sys, u1.faults - u0.faults);
    t = cs_now();
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < 4; ++k) {
        double *arr = calloc(net.total_cv ? net.total_cv : 1, sizeof *arr);
        for (int c = 0; arr && c < ncell; ++c)
            cs_cable_matrix_cell(&net.cells[c], 0.025, first[c], NULL, k == 0 ? arr : NULL, k == 1 ? arr : NULL,
                                 k == 2 ? arr : NULL, k == 3 ? arr : NULL);
        free(arr);
    }
    printf("%-28s %8.3f s\n", "four matrix arrays at once", cs_now() - t);
    fflush(stdout);
    for (int k = 0; k < nvar; ++k) { /* what auto's trial asks before building a candidate */
        cs_hines_gpu_options opt;
        cs_hines_gpu_options_default(&opt);
        opt.variant = variants[k];
        opt.fused_step = 1;
        t = cs_now();
        const int v = cs__hines_hplan_resolve(ncell, first, parent, &opt, 132);
        char what[40];
        snprintf(what, sizeof what, "resolve %s", variants[k]);
        printf("%-28s %8.3f s  %s\n", what, cs_now() - t, v < 0 ? "(unknown)" : cs__hines_variant_name(v));
    }
    if (rounds > 0) {
        cs_hines_schedules *sch = NULL;
        t = cs_now();
        if (cs_hines_schedules_create(ncell, first, parent, 0, &sch) != CS_SOLVER_OK) return 1;
        printf("%-28s %8.3f s  (%d threads)\n", "schedules", cs_now() - t, omp_get_max_threads());
        static const char *const wf[2] = {"warp", "fine"};
        for (int k = 0; k < 2; ++k) {
            cs__hines_hplan hp;
            char msg[256], what[40];
            snprintf(what, sizeof what, "plan %s shared", wf[k]);
            t = cs_now();
            if (host_plan_shared(ncell, first, parent, wf[k], sch, &hp, msg, sizeof msg) != CS_SOLVER_OK) {
                printf("%-28s refused: %s\n", what, msg);
                continue;
            }
            const double el = cs_now() - t;
            printf("%-28s %8.3f s  %016llx %s: %s\n", what, el,
                   (unsigned long long)digest(&hp, 0xcbf29ce484222325ull), cs__hines_variant_name(hp.variant), hp.describe);
            cs__hines_hplan_free(&hp);
        }
        cs_hines_schedules_destroy(sch);
        fflush(stdout);
        for (int r = 0; r < rounds; ++r)
            for (int mode = 0; mode < 3; ++mode) warp_fine_at_once(ncell, first, parent, (mode + r) % 3);
    }
    free(first);
    free(parent);
    cs_network_desc_free(&net);
    cs_model_free(&m);
    return 0;
}
