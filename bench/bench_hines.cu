/* Benchmark of the GPU Hines batch solvers (solver/cs_hines_gpu.h) against the CPU serial and
 * OpenMP solvers, on random trees with the sizes and branch counts of Table 4.1 (seed 000).
 *
 * Method (shared/device/README.md, METHOD.md): CUDA events around the solve alone (internal
 * layout, the simulator's steady state); conversions (tree → internal of d, u, rhs and back of
 * rhs) timed separately; 3 warm-up solves; median of REPS timed solves; before every timed solve
 * d and rhs are restored from a pristine copy and the L2 cache is flushed by writing a buffer of
 * 2.5× its size, so no solve finds its inputs in L2 (this replaces input rotation); inputs are
 * random diagonally dominant systems (never zeros); the last solve of each case is converted
 * back and checked against cs_hines_solve_serial on 64 distinct value sets (every system holds
 * one of them). Effective bandwidth counts compulsory bytes: d, u, rhs read once, rhs written
 * once, and p read once per distinct structure; it is compared with a device-to-device copy
 * measured in the same run (bytes read + written).
 *
 * Usage: bench_hines [--quick] [--targets] [--t3] [--staged] [--mid] [--same-size] [--chunked] [--md FILE] [--max-cells N]
 *   --quick       fewer sizes and repetitions (a smoke run)
 *   --targets     only the cases of targets T3 (256 000 medium-high cells), T4 (256 cells of every
 *                 class) and T5 (mixed against uniform batches)
 *   --t3          only T3's table (for profiling: scripts/gpu_hines_profile.sh)
 *   --mid         only staged (two-way sections allowed, and not) and auto between 256 and 25 600
 *                 cells: every class at 528, 1 056 and 2 560 cells, the mixed batch at 1 024, 2 560
 *                 and 6 400 (where the planner's load model decides; a short device call)
 *   --staged      only the staged solver: every class at 256 and 256 000 cells, the mixed batch
 *                 at 256, 25 600 and 256 000 against its uniform batch and against its own cells
 *                 as six uniform batches (one short device call per kernel change)
 *   --same-size   only the seed's variable batch (its Fig. 4.9): cells of 600 rows and six
 *                 morphologies (8 to 300 branches) mixed, against each morphology in a uniform
 *                 batch, at 256, 1 024, 2 560, 25 600 and 256 000 cells, staged and auto
 *   --chunked     only the long unbranched runs of issue 28: one cable of 100 000 rows, one random
 *                 tree of 116 000 rows with 301 branches, 128 trees of 30 000 rows (8 structures,
 *                 runs of ~100 rows), 2 048 trees of 2 000 rows (runs of ~3); fine, chunked (its
 *                 automatic L, then L = 8, 16, 32) and auto, each checked against the CPU
 *   --md FILE     append the markdown tables to FILE (default: print only)
 * chunked is also in the full tables' variant list. */
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

#include "cs_hines_gpu.h"
#include "cs_solver.h"

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)
#define CKS(call)                                                                             \
    do {                                                                                      \
        cs_solver_status s_ = (call);                                                         \
        if (s_ != CS_SOLVER_OK) {                                                             \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,                 \
                    cs_solver_status_string(s_), cs_hines_gpu_last_error());                  \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

static int g_reps = 20;
static FILE *g_md = NULL;
static double g_copy_bw = 0; /* [GB/s] */
static void *g_flush = NULL;
static size_t g_flush_bytes = 0;
static std::vector<std::string> g_rows;

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t g_rng = 88172645463325252ull;
static double urand()
{
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return (double)(g_rng >> 11) * 0x1.0p-53;
}

/* a batch in tree order: structure + values (system s holds value set s % NSET) */
#define NSET 64
struct Batch {
    std::string name;
    int nsys = 0;
    std::vector<int> offset, p, sset; /* sset[s]: structure index of system s */
    std::vector<double> d, u, rhs;
    int nstruct = 0;
    long long struct_rows = 0;        /* Σ rows over distinct structures (p bytes) */
    std::vector<std::vector<double>> ref; /* per (structure, value set): reference solution */
    std::vector<int> ref_first;       /* per (structure·NSET + set): first system holding it */
};

/* structures: list of local parent arrays; pattern: structure index of each system */
static void make_batch(Batch &b, const std::vector<std::vector<int>> &structs, const std::vector<int> &pattern)
{
    b.nsys = (int)pattern.size();
    b.nstruct = (int)structs.size();
    b.struct_rows = 0;
    for (auto &s : structs) b.struct_rows += (long long)s.size();
    b.offset.assign(b.nsys + 1, 0);
    for (int s = 0; s < b.nsys; ++s) b.offset[s + 1] = b.offset[s] + (int)structs[pattern[s]].size();
    size_t nr = (size_t)b.offset[b.nsys];
    b.p.resize(nr); b.d.resize(nr); b.u.resize(nr); b.rhs.resize(nr);
    b.sset = pattern;
    /* value sets per structure */
    std::vector<std::vector<double>> vd(structs.size() * NSET), vu(structs.size() * NSET), vr(structs.size() * NSET);
    for (size_t k = 0; k < structs.size(); ++k) {
        const std::vector<int> &lp = structs[k];
        int n = (int)lp.size();
        for (int v = 0; v < NSET; ++v) {
            std::vector<double> &d = vd[k * NSET + v], &u = vu[k * NSET + v], &r = vr[k * NSET + v];
            d.resize(n); u.resize(n); r.resize(n);
            for (int i = 0; i < n; ++i) { u[i] = i ? -(0.1 + urand()) : 0.0; d[i] = 0.05 + 0.5 * urand(); }
            for (int i = 1; i < n; ++i) { d[i] -= u[i]; d[lp[i]] -= u[i]; }
            for (int i = 0; i < n; ++i) r[i] = -70.0 + 10.0 * urand();
        }
    }
    b.ref_first.assign(structs.size() * NSET, -1);
#pragma omp parallel for schedule(static)
    for (int s = 0; s < b.nsys; ++s) {
        int k = pattern[s], v = s % NSET, o = b.offset[s];
        const std::vector<int> &lp = structs[k];
        int n = (int)lp.size();
        for (int i = 0; i < n; ++i) {
            b.p[o + i] = i ? lp[i] + o : -1;
            b.d[o + i] = vd[k * NSET + v][i];
            b.u[o + i] = vu[k * NSET + v][i];
            b.rhs[o + i] = vr[k * NSET + v][i];
        }
    }
    for (int s = 0; s < b.nsys; ++s) {
        int key = pattern[s] * NSET + s % NSET;
        if (b.ref_first[key] < 0) b.ref_first[key] = s;
    }
    b.ref.assign(structs.size() * NSET, std::vector<double>());
    for (size_t key = 0; key < b.ref_first.size(); ++key) {
        int s = b.ref_first[key];
        if (s < 0) continue;
        int o = b.offset[s], n = b.offset[s + 1] - o;
        std::vector<int> off = {0, n}, pl(n);
        std::vector<double> d(b.d.begin() + o, b.d.begin() + o + n), x(b.rhs.begin() + o, b.rhs.begin() + o + n);
        for (int i = 0; i < n; ++i) pl[i] = i ? b.p[o + i] - o : -1;
        CKS(cs_hines_solve_serial(1, off.data(), pl.data(), d.data(), b.u.data() + o, x.data()));
        b.ref[key] = x;
    }
}

/* max relative error of a tree-order solution against the references */
template <class T>
static double check_solution(const Batch &b, const std::vector<T> &x)
{
    double e = 0, m = 0;
    for (int s = 0; s < b.nsys; ++s) {
        const std::vector<double> &r = b.ref[b.sset[s] * NSET + s % NSET];
        int o = b.offset[s];
        for (size_t i = 0; i < r.size(); ++i) {
            double a = fabs((double)x[o + i] - r[i]);
            if (!(a <= e)) e = a;
            m = std::max(m, fabs(r[i]));
        }
    }
    return e / m;
}

static void flush_l2(cudaStream_t st)
{
    CK(cudaMemsetAsync(g_flush, (int)(urand() * 255), g_flush_bytes, st));
}

struct Result {
    double solve_us, conv_us, err;
    std::string desc, variant;
};

template <class T>
static Result run_gpu(const Batch &b, const cs_hines_gpu_options &opt)
{
    Result res;
    cs_hines_plan *pl = NULL;
    CKS(cs_hines_gpu_plan_create(b.nsys, b.offset.data(), b.p.data(), &opt, &pl));
    res.desc = cs_hines_gpu_plan_describe(pl);
    res.variant = cs_hines_gpu_plan_variant(pl);
    size_t nr = b.d.size(), ni = cs_hines_gpu_plan_internal_size(pl);
    std::vector<T> hd(b.d.begin(), b.d.end()), hu(b.u.begin(), b.u.end()), hr(b.rhs.begin(), b.rhs.end());
    T *td, *tu, *tr, *id, *iu, *ir, *pd, *pr;
    CK(cudaMalloc(&td, nr * sizeof(T))); CK(cudaMalloc(&tu, nr * sizeof(T))); CK(cudaMalloc(&tr, nr * sizeof(T)));
    CK(cudaMalloc(&id, ni * sizeof(T))); CK(cudaMalloc(&iu, ni * sizeof(T))); CK(cudaMalloc(&ir, ni * sizeof(T)));
    CK(cudaMalloc(&pd, ni * sizeof(T))); CK(cudaMalloc(&pr, ni * sizeof(T)));
    CK(cudaMemset(id, 0, ni * sizeof(T))); CK(cudaMemset(iu, 0, ni * sizeof(T))); CK(cudaMemset(ir, 0, ni * sizeof(T)));
    CK(cudaMemcpy(td, hd.data(), nr * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(tu, hu.data(), nr * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(tr, hr.data(), nr * sizeof(T), cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    /* conversions (timed: d, u, rhs in; rhs out) */
    std::vector<double> tc;
    for (int r = 0; r < g_reps + 2; ++r) {
        flush_l2(0);
        CK(cudaEventRecord(e0));
        if (sizeof(T) == 8) {
            CKS(cs_hines_gpu_to_internal_d(pl, CS_HINES_NODE, (double *)td, (double *)pd));
            CKS(cs_hines_gpu_to_internal_d(pl, CS_HINES_COUPLING, (double *)tu, (double *)iu));
            CKS(cs_hines_gpu_to_internal_d(pl, CS_HINES_NODE, (double *)tr, (double *)pr));
            CKS(cs_hines_gpu_from_internal_d(pl, CS_HINES_NODE, (double *)pr, (double *)tr));
        } else {
            CKS(cs_hines_gpu_to_internal_f(pl, CS_HINES_NODE, (float *)td, (float *)pd));
            CKS(cs_hines_gpu_to_internal_f(pl, CS_HINES_COUPLING, (float *)tu, (float *)iu));
            CKS(cs_hines_gpu_to_internal_f(pl, CS_HINES_NODE, (float *)tr, (float *)pr));
            CKS(cs_hines_gpu_from_internal_f(pl, CS_HINES_NODE, (float *)pr, (float *)tr));
        }
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 2) tc.push_back(ms * 1e3);
    }
    res.conv_us = median(tc);
    /* solves */
    std::vector<double> ts;
    for (int r = 0; r < g_reps + 3; ++r) {
        CK(cudaMemcpyAsync(id, pd, ni * sizeof(T), cudaMemcpyDeviceToDevice));
        CK(cudaMemcpyAsync(ir, pr, ni * sizeof(T), cudaMemcpyDeviceToDevice));
        flush_l2(0);
        CK(cudaEventRecord(e0));
        if (sizeof(T) == 8) CKS(cs_hines_gpu_solve_internal_d(pl, (double *)id, (double *)iu, (double *)ir));
        else CKS(cs_hines_gpu_solve_internal_f(pl, (float *)id, (float *)iu, (float *)ir));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 3) ts.push_back(ms * 1e3);
    }
    res.solve_us = median(ts);
    /* check the last solve */
    if (sizeof(T) == 8) CKS(cs_hines_gpu_from_internal_d(pl, CS_HINES_NODE, (double *)ir, (double *)tr));
    else CKS(cs_hines_gpu_from_internal_f(pl, CS_HINES_NODE, (float *)ir, (float *)tr));
    CKS(cs_hines_gpu_sync(pl));
    std::vector<T> x(nr);
    CK(cudaMemcpy(x.data(), tr, nr * sizeof(T), cudaMemcpyDeviceToHost));
    res.err = check_solution(b, x);
    cudaFree(td); cudaFree(tu); cudaFree(tr); cudaFree(id); cudaFree(iu); cudaFree(ir); cudaFree(pd); cudaFree(pr);
    cudaEventDestroy(e0); cudaEventDestroy(e1);
    cs_hines_gpu_plan_destroy(pl);
    return res;
}

static double cpu_time_us(const Batch &b, int omp)
{
    std::vector<double> d(b.d.size()), x(b.d.size()), t;
    int reps = 3;
    for (int r = 0; r < reps; ++r) {
        std::copy(b.d.begin(), b.d.end(), d.begin());
        std::copy(b.rhs.begin(), b.rhs.end(), x.begin());
        double t0 = omp_get_wtime();
        if (omp) CKS(cs_hines_solve_omp(b.nsys, b.offset.data(), b.p.data(), d.data(), b.u.data(), x.data()));
        else CKS(cs_hines_solve_serial(b.nsys, b.offset.data(), b.p.data(), d.data(), b.u.data(), x.data()));
        t.push_back((omp_get_wtime() - t0) * 1e6);
        if (r == 0 && t[0] > 2e5) reps = 1; /* long runs: one is enough */
    }
    double e = check_solution(b, x);
    if (!(e < 1e-12)) { fprintf(stderr, "CPU check failed: %g\n", e); exit(3); }
    return median(t);
}

struct Cfg {
    const char *label, *variant;
    int bs, threads, flags, pack_rows;
};

static void emit(const Batch &b, const char *cls, const Cfg &c, const char *prec, const Result &r,
                 double cpu_serial_us)
{
    size_t es = prec[0] == 'd' ? 8 : 4;
    double bytes = 4.0 * es * (double)b.d.size() + 4.0 * (double)b.struct_rows;
    double bw = bytes / (r.solve_us * 1e-6) / 1e9;
    char line[1024];
    snprintf(line, sizeof line, "| %s | %d | %s | %s | %s | %.1f | %.1f | %.0f | %.0f%% | %.1f | %.1e |",
             cls, b.nsys, c.label, r.variant.c_str(), prec, r.solve_us, r.conv_us, bw, 100.0 * bw / g_copy_bw,
             cpu_serial_us > 0 ? cpu_serial_us / r.solve_us : 0.0, r.err);
    printf("%s   [%s]\n", line, r.desc.c_str());
    fflush(stdout);
    g_rows.push_back(line);
    if (g_md) { fprintf(g_md, "%s\n", line); fflush(g_md); }
    double tol = es == 8 ? 1e-12 : 1e-5;
    if (!(r.err <= tol)) { fprintf(stderr, "CHECK FAILED: %s %s %s err %g\n", cls, c.label, prec, r.err); exit(4); }
}

static Result run_cfg(const Batch &b, const Cfg &c, const char *prec)
{
    cs_hines_gpu_options o;
    cs_hines_gpu_options_default(&o);
    o.variant = c.variant; o.block_size = c.bs; o.threads = c.threads; o.fine_flags = c.flags; o.fine_pack_rows = c.pack_rows;
    return prec[0] == 'd' ? run_gpu<double>(b, o) : run_gpu<float>(b, o);
}

static void table_header(const char *title)
{
    char line[512];
    snprintf(line, sizeof line, "\n### %s\n\n| class | cells | config | variant | prec | solve [µs] | convert [µs] | eff. BW [GB/s] | of copy | × CPU serial | max rel. err |\n|---|---|---|---|---|---|---|---|---|---|---|", title);
    printf("%s\n", line);
    g_rows.push_back(line);
    if (g_md) { fprintf(g_md, "%s\n", line); fflush(g_md); }
}

static void ratio_row(const char *what, long long cells, const char *label, double r, const char *note)
{
    char line[256];
    snprintf(line, sizeof line, "| %s | %lld | %s | | d | ratio %.2f | %s | | | | |", what, cells, label, r, note);
    printf("%s\n", line);
    g_rows.push_back(line);
    if (g_md) { fprintf(g_md, "%s\n", line); fflush(g_md); }
}

/* The seed's variable batch (its Fig. 4.9, "multi" against "mono"): cells of one size, 600 rows,
 * and six morphologies from few branches to many, mixed round-robin, against each morphology alone
 * in a uniform batch of the same number of cells (so of rows). What a mix of morphologies costs
 * where the sizes do not differ (the six classes of Table 4.1 differ in size as well). */
static const int SAME_ROWS = 600, SAME_BRANCHES[6] = {8, 30, 60, 120, 200, 300};

static void same_size_section(const std::vector<long long> &sizes, const Cfg *cfgs, int ncfg)
{
    std::vector<std::vector<int>> mor(6);
    for (int k = 0; k < 6; ++k) {
        mor[k].resize(SAME_ROWS);
        if (cs_hines_random_tree(SAME_ROWS, SAME_BRANCHES[k], 2000 + k, mor[k].data()) != 0) {
            fprintf(stderr, "random tree of %d rows, %d branches failed\n", SAME_ROWS, SAME_BRANCHES[k]);
            exit(2);
        }
    }
    table_header("Same size, different morphologies (the seed's Fig. 4.9): cells of 600 rows with 8, 30, 60, 120, 200 "
                 "and 300 branches, mixed round-robin, against each morphology in a uniform batch of as many cells, double");
    for (long long n : sizes) {
        std::vector<int> pat((size_t)n);
        for (size_t s = 0; s < pat.size(); ++s) pat[s] = (int)(s % 6);
        Batch m;
        make_batch(m, mor, pat);
        std::vector<double> mixed(ncfg), best(ncfg, 0), sum(ncfg, 0);
        std::vector<int> best_k(ncfg, 0);
        for (int c = 0; c < ncfg; ++c) {
            const Result rm = run_cfg(m, cfgs[c], "d");
            emit(m, "same-size mixed", cfgs[c], "d", rm, 0);
            mixed[c] = rm.solve_us;
        }
        for (int k = 0; k < 6; ++k) {
            Batch u;
            make_batch(u, {mor[k]}, std::vector<int>((size_t)n, 0));
            char lab[64];
            snprintf(lab, sizeof lab, "same-size uniform, %d branches", SAME_BRANCHES[k]);
            for (int c = 0; c < ncfg; ++c) {
                const Result ru = run_cfg(u, cfgs[c], "d");
                emit(u, lab, cfgs[c], "d", ru, 0);
                if (k == 0 || ru.solve_us < best[c]) { best[c] = ru.solve_us; best_k[c] = k; }
                sum[c] += ru.solve_us;
            }
        }
        for (int c = 0; c < ncfg; ++c) {
            char note[64];
            snprintf(note, sizeof note, "fastest uniform: %d branches", SAME_BRANCHES[best_k[c]]);
            ratio_row("same-size mixed/fastest uniform", n, cfgs[c].label, mixed[c] / best[c], note);
            ratio_row("same-size mixed/mean uniform", n, cfgs[c].label, mixed[c] / (sum[c] / 6), "");
        }
    }
}

int main(int argc, char **argv)
{
    int quick = 0, targets = 0, t3_only = 0, staged_only = 0, mid = 0, same_size = 0, chunked_only = 0;
    long long max_cells = 256000;
    const char *md = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--targets")) targets = 1;
        else if (!strcmp(argv[i], "--t3")) targets = t3_only = 1;
        else if (!strcmp(argv[i], "--staged")) staged_only = targets = 1; /* targets: skips the full tables */
        else if (!strcmp(argv[i], "--mid")) mid = 1;
        else if (!strcmp(argv[i], "--same-size")) same_size = 1;
        else if (!strcmp(argv[i], "--chunked")) chunked_only = 1;
        else if (!strcmp(argv[i], "--md") && i + 1 < argc) md = argv[++i];
        else if (!strcmp(argv[i], "--max-cells") && i + 1 < argc) max_cells = atoll(argv[++i]);
    }
    if (cs_hines_gpu_device_count() <= 0) { printf("SKIP: no CUDA device\n"); return 77; }
    if (quick) g_reps = 5;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_flush_bytes = (size_t)(2.5 * prop.l2CacheSize);
    CK(cudaMalloc(&g_flush, g_flush_bytes));
    /* copy bandwidth: 1 GiB device to device, bytes read + written */
    {
        size_t n = (size_t)1 << 30;
        void *a, *c;
        CK(cudaMalloc(&a, n)); CK(cudaMalloc(&c, n));
        CK(cudaMemset(a, 1, n));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        std::vector<double> t;
        for (int r = 0; r < 23; ++r) {
            CK(cudaEventRecord(e0));
            CK(cudaMemcpyAsync(c, a, n, cudaMemcpyDeviceToDevice));
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 3) t.push_back(ms);
        }
        g_copy_bw = 2.0 * n / (median(t) * 1e-3) / 1e9;
        cudaFree(a); cudaFree(c);
    }
    char hdr[512];
    snprintf(hdr, sizeof hdr, "## Hines GPU benchmark: %s (%d SMs, %.0f MB L2), device-to-device copy %.0f GB/s; CPU: %d OpenMP threads\n\n"
             "Solve = internal-layout solve alone (median of %d, L2 flushed before each); convert = tree→internal of d, u, rhs + rhs back. "
             "Eff. BW = (d, u, rhs read + rhs written + p once per structure) / solve time. × CPU serial = cs_hines_solve_serial time / GPU solve time.",
             prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1e6, g_copy_bw, omp_get_max_threads(), g_reps);
    printf("%s\n", hdr);
    g_rows.push_back(hdr);
    if (md) {
        g_md = fopen(md, "w");
        if (!g_md) { fprintf(stderr, "cannot write %s\n", md); return 2; }
        fprintf(g_md, "%s\n", hdr);
        fflush(g_md);
    }

    /* structures of the six classes */
    std::vector<std::vector<int>> cls(6);
    for (int k = 0; k < 6; ++k) {
        cls[k].resize(cs_hines_table41[k].size);
        if (cs_hines_random_tree(cs_hines_table41[k].size, cs_hines_table41[k].nbranch, 1000 + k, cls[k].data()) != 0) return 2;
    }
    std::vector<long long> sizes = quick ? std::vector<long long>{256, 25600} : std::vector<long long>{256, 2560, 25600, 256000};
    const Cfg all[] = {
        {"flat", "flat", 0, 0, 0, 0},
        {"interleaved", "interleaved", 0, 0, 0, 0},
        {"block_interleaved BS=64", "block_interleaved", 64, 0, 0, 0},
        {"block_shared", "block_shared", 64, 0, 0, 0},
        {"variable", "variable", 0, 0, 0, 0},
        {"fine", "fine", 0, 0, 0, 0},
        {"fine no-split", "fine", 0, 0, CS_HINES_FINE_NO_SPLIT, 0},
        {"fine no-opt", "fine", 0, 0, 7, 0},
        {"warp", "warp", 0, 0, 0, 0},
        {"staged", "staged", 0, 0, 0, 0},
        {"staged one-way", "staged", 0, 0, CS_HINES_STAGED_NO_TWO_WAY, 0}, /* A/B of two-way sections */
        {"chunked", "chunked", 0, 0, 0, 0},
        {"auto", "auto", 0, 0, 0, 0},
    };
    const int nall = (int)(sizeof all / sizeof all[0]);
    enum { C_FLAT = 0, C_INTERLEAVED = 1, C_BI = 2, C_VARIABLE = 4, C_FINE = 5, C_FINE_NOSPLIT = 6, C_FINE_NOOPT = 7, C_WARP = 8, C_STAGED = 9,
           C_ONE_WAY = 10, C_CHUNKED = 11 };
    const int C_AUTO = nall - 1;
    if (chunked_only) {
        table_header("Long unbranched runs (issue 28): fine, chunked, auto, double");
        const Cfg pick[] = {all[C_FINE], all[C_CHUNKED], {"chunked L=8", "chunked", 8, 0, 0, 0}, {"chunked L=16", "chunked", 16, 0, 0, 0},
                            {"chunked L=32", "chunked", 32, 0, 0, 0}, all[C_AUTO]};
        struct Case { const char *name; int rows, nbranch, nstruct, cells; };
        const Case cases[] = {{"cable 100000", 100000, 1, 1, 1}, {"tree 116000/301", 116000, 301, 1, 1},
                              {"trees 30000/301", 30000, 301, 8, 128}, {"trees 2000/667", 2000, 667, 8, 2048}};
        for (const Case &cs : cases) {
            std::vector<std::vector<int>> st((size_t)cs.nstruct);
            for (int k = 0; k < cs.nstruct; ++k) {
                st[k].resize((size_t)cs.rows);
                if (cs.nbranch == 1)
                    for (int i = 0; i < cs.rows; ++i) st[k][i] = i - 1;
                else if (cs_hines_random_tree(cs.rows, cs.nbranch, 2800 + k, st[k].data()) != 0) return 2;
            }
            std::vector<int> pattern((size_t)cs.cells);
            for (int c = 0; c < cs.cells; ++c) pattern[c] = c % cs.nstruct;
            Batch b;
            make_batch(b, st, pattern);
            const double ts = cpu_time_us(b, 0);
            for (const Cfg &c : pick) emit(b, cs.name, c, "d", run_cfg(b, c, "d"), ts);
        }
        if (g_md) fclose(g_md);
        cudaFree(g_flush);
        return 0;
    }
    if (same_size) {
        const Cfg pick[] = {all[C_STAGED], all[C_AUTO]};
        std::vector<long long> ss;
        for (long long n : {256LL, 1024LL, 2560LL, 25600LL, 256000LL}) /* 1 024: where the planner's choice turns */
            if (n <= max_cells) ss.push_back(n);
        same_size_section(ss, pick, 2);
        if (g_md) fclose(g_md);
        cudaFree(g_flush);
        return 0;
    }
    if (staged_only) {
        table_header("staged: every class at 256 and 256 000 cells, double");
        for (long long n : {256LL, 256000LL})
            for (int k = 0; k < 6; ++k) {
                Batch c6;
                make_batch(c6, {cls[k]}, std::vector<int>((size_t)std::min(n, max_cells), 0));
                emit(c6, cs_hines_table41[k].name, all[C_STAGED], "d", run_cfg(c6, all[C_STAGED], "d"), 0);
                if (n == 256) emit(c6, cs_hines_table41[k].name, all[C_ONE_WAY], "d", run_cfg(c6, all[C_ONE_WAY], "d"), 0);
            }
        sizes = {256, 25600, 256000};
    }
    if (mid) { /* the sizes between: where the planner's load model decides two-way sections */
        table_header("staged between 256 and 25 600 cells: every class at 528, 1 056 and 2 560 cells, the mixed batch at "
                     "1 024, 2 560 and 6 400 (six classes round-robin), double");
        for (long long n : {528LL, 1056LL, 2560LL})
            for (int k = 0; k < 6; ++k) {
                Batch c6;
                make_batch(c6, {cls[k]}, std::vector<int>((size_t)n, 0));
                for (int c : {(int)C_STAGED, (int)C_ONE_WAY, C_AUTO}) emit(c6, cs_hines_table41[k].name, all[c], "d", run_cfg(c6, all[c], "d"), 0);
            }
        for (long long n : {1024LL, 2560LL, 6400LL}) {
            std::vector<int> pat((size_t)n);
            for (size_t s = 0; s < pat.size(); ++s) pat[s] = (int)(s % 6);
            Batch m;
            make_batch(m, cls, pat);
            for (int c : {(int)C_STAGED, (int)C_ONE_WAY}) emit(m, "mixed", all[c], "d", run_cfg(m, all[c], "d"), 0);
        }
        if (g_md) fclose(g_md);
        cudaFree(g_flush);
        return 0;
    }
    if (targets && !staged_only) { /* only the cases of T3, T4 and T5 (one short device call) */
        table_header("T3: 256 000 medium-high cells, double and float");
        Batch b;
        make_batch(b, {cls[3]}, std::vector<int>((size_t)std::min<long long>(256000, max_cells), 0));
        const Cfg no_reg = {"staged no-reg", "staged", 0, 0, CS_HINES_STAGED_NO_REG_STEPS, 0};
        const Cfg t3[] = {all[C_INTERLEAVED], all[C_WARP], all[C_STAGED], no_reg, all[C_AUTO]};
        for (const Cfg &c : t3) emit(b, "medium-high", c, "d", run_cfg(b, c, "d"), 0);
        for (const Cfg &c : t3) emit(b, "medium-high", c, "f", run_cfg(b, c, "f"), 0);
        if (t3_only) return 0;
        table_header("staged with and without register steps, 256 000 cells of every class, double");
        for (int k = 0; k < 6 && max_cells >= 256000; ++k) {
            if (k == 3) continue; /* above */
            Batch c6;
            make_batch(c6, {cls[k]}, std::vector<int>(256000, 0));
            const Cfg cs6[] = {all[C_INTERLEAVED], all[C_STAGED], no_reg};
            for (const Cfg &c : cs6) emit(c6, cs_hines_table41[k].name, c, "d", run_cfg(c6, c, "d"), 0);
        }
        table_header("T4: 256 cells of every class, double");
        for (int k = 0; k < 6; ++k) {
            Batch s;
            make_batch(s, {cls[k]}, std::vector<int>(256, 0));
            const int pick[] = {C_FLAT, C_INTERLEAVED, C_FINE, C_WARP, C_STAGED, C_AUTO};
            for (int c : pick) emit(s, cs_hines_table41[k].name, all[c], "d", run_cfg(s, all[c], "d"), 0);
        }
    }
    /* ---- 1. every class, every size, every variant (double); CPU reference ---- */
    if (!targets) table_header("Uniform batches, double precision");
    std::vector<std::vector<double>> cpu_serial(6, std::vector<double>(sizes.size(), 0));
    for (int k = 0; k < 6 && !targets; ++k)
        for (size_t si = 0; si < sizes.size(); ++si) {
            if (sizes[si] > max_cells) continue;
            if (sizes[si] >= 256000 && k != 3 && quick) continue;
            Batch b;
            make_batch(b, {cls[k]}, std::vector<int>((size_t)sizes[si], 0));
            double ts = cpu_time_us(b, 0), to = cpu_time_us(b, 1);
            cpu_serial[k][si] = ts;
            char line[512];
            snprintf(line, sizeof line, "| %s | %lld | CPU serial | - | d | %.1f | - | %.0f | - | 1.0 | - |\n| %s | %lld | CPU OpenMP | - | d | %.1f | - | %.0f | - | %.1f | - |",
                     cs_hines_table41[k].name, sizes[si], ts, 32.0 * b.d.size() / ts / 1e3, cs_hines_table41[k].name, sizes[si], to,
                     32.0 * b.d.size() / to / 1e3, ts / to);
            printf("%s\n", line);
            g_rows.push_back(line);
            if (g_md) { fprintf(g_md, "%s\n", line); fflush(g_md); }
            for (int c = 0; c < nall; ++c) {
                if (quick && (c == C_FINE_NOSPLIT || c == C_FINE_NOOPT)) continue;
                /* at the largest size only medium-high gets every variant (device time) */
                if (sizes[si] >= 256000 && k != 3 && c != C_INTERLEAVED && c != C_FINE && c != C_WARP && c != C_STAGED && c != C_AUTO) continue;
                if (c == C_ONE_WAY && sizes[si] >= 256000) continue; /* the same plans as staged there */
                emit(b, cs_hines_table41[k].name, all[c], "d", run_cfg(b, all[c], "d"), ts);
            }
        }
    /* ---- 2. single precision, medium-high ---- */
    if (!targets) table_header("Uniform batches, single precision (medium-high)");
    for (size_t si = 0; si < sizes.size() && !targets; ++si) {
        if (sizes[si] > max_cells) continue;
        Batch b;
        make_batch(b, {cls[3]}, std::vector<int>((size_t)sizes[si], 0));
        for (int c = 0; c < nall; ++c) {
            if (c == C_FLAT || c == C_FINE_NOSPLIT || c == C_FINE_NOOPT) continue;
            emit(b, "medium-high", all[c], "f", run_cfg(b, all[c], "f"), cpu_serial[3][si]);
        }
    }
    /* ---- 3. block size sweeps at the largest size, medium-high ---- */
    if (!targets) {
        long long n = std::min<long long>(sizes.back(), max_cells);
        Batch b;
        make_batch(b, {cls[3]}, std::vector<int>((size_t)n, 0));
        table_header("Block-Interleaved / Block-Shared BS sweep and fine solver shape sweep (medium-high, double)");
        int bss[] = {32, 64, 128, 256, 512};
        for (int bs : bss) {
            char lab[64];
            snprintf(lab, sizeof lab, "block_interleaved BS=%d", bs);
            Cfg c = {lab, "block_interleaved", bs, 0, 0, 0};
            emit(b, "medium-high", c, "d", run_cfg(b, c, "d"), cpu_serial[3][sizes.size() - 1]);
        }
        int bss2[] = {32, 64, 128};
        for (int bs : bss2) {
            char lab[64];
            snprintf(lab, sizeof lab, "block_shared BS=%d", bs);
            Cfg c = {lab, "block_shared", bs, 0, 0, 0};
            emit(b, "medium-high", c, "d", run_cfg(b, c, "d"), cpu_serial[3][sizes.size() - 1]);
        }
        int th[] = {64, 128};
        int pr[] = {768, 1536};
        for (int t : th)
            for (int r : pr) {
                char lab[64];
                snprintf(lab, sizeof lab, "fine T=%d rows=%d", t, r);
                Cfg c = {lab, "fine", 0, t, 0, r};
                emit(b, "medium-high", c, "d", run_cfg(b, c, "d"), cpu_serial[3][sizes.size() - 1]);
            }
        Batch s;
        make_batch(s, {cls[3]}, std::vector<int>(256, 0));
        int th2[] = {32, 64, 128, 256};
        for (int t : th2) {
            char lab[64];
            snprintf(lab, sizeof lab, "fine T=%d", t);
            Cfg c = {lab, "fine", 0, t, 0, 0};
            emit(s, "medium-high", c, "d", run_cfg(s, c, "d"), cpu_serial[3][0]);
        }
    }
    /* ---- 4. mixed batches vs uniform of the same compartments ---- */
    table_header("Mixed batches (six classes round-robin) vs a uniform medium-high batch of the same compartment count, double; "
                 "staged also against the same cells as six uniform batches solved one after another (alone)");
    for (size_t si = 0; si < sizes.size(); ++si) {
        if (sizes[si] > max_cells) continue;
        std::vector<int> pat((size_t)sizes[si]);
        for (size_t s = 0; s < pat.size(); ++s) pat[s] = (int)(s % 6);
        Batch m;
        make_batch(m, cls, pat);
        long long rows = m.offset[m.nsys];
        Batch u;
        make_batch(u, {cls[3]}, std::vector<int>((size_t)((rows + 318) / 319), 0));
        double tsm = cpu_time_us(m, 0);
        const int pick[] = {C_INTERLEAVED, C_BI, C_VARIABLE, C_FINE, C_WARP, C_STAGED, C_ONE_WAY, C_AUTO};
        for (int c : pick) {
            if ((staged_only && c != C_STAGED && c != C_ONE_WAY) || (c == C_ONE_WAY && sizes[si] >= 256000)) continue;
            Result rm = run_cfg(m, all[c], "d");
            emit(m, "mixed", all[c], "d", rm, tsm);
            Result ru = run_cfg(u, all[c], "d");
            emit(u, "uniform (same rows)", all[c], "d", ru, 0);
            char line[256];
            snprintf(line, sizeof line, "| mixed/uniform | %lld | %s | | d | ratio %.2f | | | | | |", sizes[si], all[c].label,
                     (rm.solve_us / m.d.size()) / (ru.solve_us / u.d.size()));
            printf("%s\n", line);
            g_rows.push_back(line);
            if (g_md) { fprintf(g_md, "%s\n", line); fflush(g_md); }
            if (c != C_STAGED) continue;
            /* the cost of mixing itself: the mixed batch's own cells as six uniform batches, solved
             * one after another (a caller who sorts cells by class); their times add */
            double alone_us = 0;
            for (int k = 0; k < 6; ++k) {
                const long long nk = (sizes[si] - k + 5) / 6; /* systems s < n with s % 6 == k */
                if (nk <= 0) continue;
                Batch one;
                make_batch(one, {cls[k]}, std::vector<int>((size_t)nk, 0));
                const Result r1 = run_cfg(one, all[c], "d");
                char lab[64];
                snprintf(lab, sizeof lab, "alone: %s", cs_hines_table41[k].name);
                emit(one, lab, all[c], "d", r1, 0);
                alone_us += r1.solve_us;
            }
            snprintf(line, sizeof line, "| mixed/alone | %lld | %s | | d | ratio %.2f | | | | | |", sizes[si], all[c].label,
                     rm.solve_us / alone_us);
            printf("%s\n", line);
            g_rows.push_back(line);
            if (g_md) { fprintf(g_md, "%s\n", line); fflush(g_md); }
        }
    }
    if (g_md) fclose(g_md);
    cudaFree(g_flush);
    return 0;
}
