/* Host side of the "staged" GPU Hines variant, after the plan (cs_hines_staged.c): the host
 * emulation of its kernel (the solve and the fused step, operation for operation, for checking
 * the planner without a GPU), the rows with current marked in the schedule, and the constants
 * shared by structure (cs_hines_gpu_plan_share_constants). Plain C, no CUDA. */
#include <stdlib.h>
#include <string.h>

#include "cs_hines_gpu_impl.h"

/* Mirrors cs__k_staged operation for operation (but for the reciprocal's last bit), one cell at a
 * time: A, B, CC are the warp's shared rows (the kernel keeps a row's a, b as one pair; CC: two-way
 * sections' third value), RA, RB, RC the lanes' registers of the register steps, or with the
 * records in device memory (CS__SL_GR) every step's records, whatever its step. The two-way
 * terms vanish for rows without CS__STG_TOP / CS__STG_MEET, which leaves the one-way kernel's
 * operations. */
void cs__staged_solve_host(const cs__hines_hplan *hp, double *d, const double *u, double *rhs)
{
    cs__staged_solve_host_at(hp, d, u, hp->group_base, 0, rhs);
}

void cs__staged_solve_host_at(const cs__hines_hplan *hp, double *d, const double *u, const int *u_base, int fused, double *rhs)
{
    int rows = 0, steps = CS__STG_REG_STEPS_MAX;
    for (int l = 0; l < hp->stg_nlaunch; ++l) {
        const int *L = hp->stg_launch + CS__SL_N * l;
        if (L[CS__SL_ROWS] > rows) rows = L[CS__SL_ROWS];
        if (L[CS__SL_GR] && L[CS__SL_STEPS] > steps) steps = L[CS__SL_STEPS];
    }
    const size_t nreg = (size_t)steps * CS__STG_MAX_SLOTS;
    double *A = malloc(sizeof(double) * 3 * (size_t)(rows + 1)), *B = A ? A + rows + 1 : NULL, *CC = A ? B + rows + 1 : NULL;
    double *RA = malloc(sizeof(double) * 3 * nreg), *RB = RA ? RA + nreg : NULL, *RC = RA ? RB + nreg : NULL;
    if (!A || !RA) { free(A); free(RA); return; }
    for (int l = 0; l < hp->stg_nlaunch; ++l) {
        const int *L = hp->stg_launch + CS__SL_N * l;
        const int C = L[CS__SL_CELLS], S = 32 / C, R = L[CS__SL_REG], gr = L[CS__SL_GR];
        const int uc = fused && L[CS__SL_UC]; /* the fused kernel reads the group's first cell's u */
        for (int g = L[CS__SL_FIRST]; g < L[CS__SL_FIRST] + L[CS__SL_GROUPS]; ++g) {
            const int *sc = hp->stg_sched + 2 * (size_t)hp->stype[2 * hp->group_type[g]];
            const int nsteps = hp->stype[2 * hp->group_type[g] + 1];
            for (int j = 0; j < hp->group_cells[g]; ++j) {
                const long long base = (long long)hp->group_base[g] + j;
                /* a lane's carries: d and rhs terms, and in a top part the fill coupling to P and
                 * P's pending terms; forward: x and u_T·x_P */
                double cd[CS__STG_MAX_SLOTS] = {0}, cr[CS__STG_MAX_SLOTS] = {0}, cg[CS__STG_MAX_SLOTS] = {0};
                double sd[CS__STG_MAX_SLOTS] = {0}, sr[CS__STG_MAX_SLOTS] = {0};
                double xc[CS__STG_MAX_SLOTS] = {0}, yc[CS__STG_MAX_SLOTS] = {0};
                for (int i = 0; i <= L[CS__SL_ROWS]; ++i) A[i] = B[i] = CC[i] = 0.0; /* gathers add; the scratch row stays 0 */
                for (int t = 0; t < nsteps; ++t)
                    for (int s = 0; s < S; ++s) {
                        const int row = sc[2 * (t * S + s)], w = sc[2 * (t * S + s) + 1], f = w & 0xff;
                        const int own = CS__STG_OWN(w), par = CS__STG_PAR(w);
                        if (row < 0) continue; /* the carries stay (a held lane's must) */
                        const long long k = base + (long long)row * C;
                        const double uu = u[(long long)u_base[g] + (uc ? 0 : j) + (long long)row * C];
                        const double dd = (d[k] + A[own]) + cd[s]; /* the carry is 0 unless the slot's last row carried */
                        const double rr = (rhs[k] + B[own]) + cr[s];
                        const double inv = 1.0 / dd; /* the GPU: 1/dd within 1 ulp */
                        const int top = (f & CS__STG_TOP) != 0, meet = (f & CS__STG_MEET) != 0;
                        const double gg = (f & CS__STG_START) ? 1.0 : cg[s], ue = meet ? uu * gg : uu, gt = top ? gg : 0.0;
                        const double a = ue * inv, b = rr * inv, c = top ? gt * inv : meet ? uu : 0.0;
                        if (t < R || gr) { RA[t * S + s] = a; RB[t * S + s] = b; RC[t * S + s] = c; }
                        else { A[own] = a; B[own] = b; CC[own] = c; }
                        if (gr && (f & CS__STG_GATHER_IN)) A[own] = B[own] = 0.0; /* another row's from the next step on */
                        const double xd = meet ? (uu * uu) * sd[s] : 0.0, xr = meet ? uu * sr[s] : 0.0;
                        const double cdn = xd - (ue * ue) * inv, crn = xr - (ue * rr) * inv;
                        const double cgn = -(uu * gt) * inv, sdn = top ? sd[s] - (gt * gt) * inv : 0.0, srn = top ? sr[s] - (gt * rr) * inv : 0.0;
                        const int carry = (f & CS__STG_CARRY_OUT) != 0;
                        cd[s] = carry ? cdn : 0.0;
                        cr[s] = carry ? crn : 0.0;
                        cg[s] = carry ? cgn : 0.0;
                        sd[s] = carry ? sdn : 0.0;
                        sr[s] = carry ? srn : 0.0;
                        if (!(f & (CS__STG_ROOT | CS__STG_CARRY_OUT))) { A[par] += cdn; B[par] += crn; }
                    }
                for (int t = nsteps - 1; t >= 0; --t)
                    for (int s = 0; s < S; ++s) {
                        const int row = sc[2 * (t * S + s)], w = sc[2 * (t * S + s) + 1], f = w & 0xff;
                        const int own = CS__STG_OWN(w), par = CS__STG_PAR(w);
                        if (row < 0) continue;
                        const int in_rec = t < R || gr;
                        const double a = in_rec ? RA[t * S + s] : A[own], b = in_rec ? RB[t * S + s] : B[own];
                        const double c = in_rec ? RC[t * S + s] : CC[own];
                        const double xp = (f & CS__STG_ROOT) ? 0.0 : (f & CS__STG_CARRY_OUT) ? xc[s] : B[par];
                        const double x = (b - a * xp) - ((f & CS__STG_TOP) ? c * yc[s] : 0.0);
                        xc[s] = x;
                        if (f & CS__STG_MEET) yc[s] = c * xp; /* u_T·x_P for the top part, next in this lane */
                        if (f & CS__STG_GATHER_IN) B[own] = x;
                        rhs[base + (long long)row * C] = x;
                    }
            }
        }
    }
    free(A); free(RA);
}

/* The launch (cells per warp) of group g's structure */
static int cs__staged_group_cells(const cs__hines_hplan *hp, int g)
{
    return hp->stg_launch[CS__SL_N * hp->stg_type_launch[hp->group_type[g]] + CS__SL_CELLS];
}

void cs__staged_mark_current(cs__hines_hplan *hp, const unsigned char *flags)
{
    for (int g = 0; g < hp->ngroup; ++g) {
        const int C = cs__staged_group_cells(hp, g), S = 32 / C, type = hp->group_type[g];
        int *sc = hp->stg_sched + 2 * (size_t)hp->stype[2 * type];
        const long long n = (long long)hp->stype[2 * type + 1] * S;
        for (long long k = 0; k < n; ++k) {
            const int row = sc[2 * k];
            if (row < 0) continue;
            for (int j = 0; j < hp->group_cells[g]; ++j)
                if (flags[(long long)hp->group_base[g] + (long long)row * C + j] & CS_HINES_ROW_CURRENT) sc[2 * k + 1] |= CS__STG_CURRENT;
        }
    }
}

/* Mirrors the fused kernel: its assembly (cs__stg_row_in) row by row, then the solve */
int cs__staged_step_host(const cs__hines_hplan *hp, const cs_hines_step_d *st)
{
    const size_t n = (size_t)hp->internal_size;
    double *d = calloc(n ? n : 1, sizeof *d), *rhs = calloc(n ? n : 1, sizeof *rhs);
    if (!d || !rhs) { free(d); free(rhs); return -1; }
    const int *cbase = hp->group_cbase ? hp->group_cbase : hp->group_base; /* where the constants are read */
    for (int pass = 0; pass < 2; ++pass) { /* 0: assemble; 1: solve, then x into v */
        if (pass == 1) cs__staged_solve_host_at(hp, d, st->u, cbase, 1, rhs);
        for (int g = 0; g < hp->ngroup; ++g) {
            const int C = cs__staged_group_cells(hp, g), S = 32 / C, type = hp->group_type[g];
            const int uc = hp->stg_launch[CS__SL_N * hp->stg_type_launch[type] + CS__SL_UC]; /* constants of cell 0 */
            const int *sc = hp->stg_sched + 2 * (size_t)hp->stype[2 * type];
            const long long ns = (long long)hp->stype[2 * type + 1] * S;
            for (long long q = 0; q < ns; ++q) {
                const int row = sc[2 * q], cur = (sc[2 * q + 1] & CS__STG_CURRENT) != 0;
                if (row < 0) continue;
                for (int j = 0; j < hp->group_cells[g]; ++j) {
                    const long long k = (long long)hp->group_base[g] + (long long)row * C + j;
                    const long long kc = (long long)cbase[g] + (long long)row * C + (uc ? 0 : j);
                    if (pass == 1) { st->v[k] = rhs[k]; continue; }
                    const double v = st->v[k], gg = cur ? st->g[k] : 0.0, ii = cur ? st->i[k] : 0.0;
                    d[k] = st->d0[kc] + gg;
                    rhs[k] = (st->cdt[kc] * v + st->b0[kc]) + (gg * v - ii);
                    if (cur && !st->keep_currents) st->i[k] = st->g[k] = 0.0;
                }
            }
        }
    }
    free(d);
    free(rhs);
    return 0;
}

/* The group of every system: the last group whose base is at or before the system's (group_base
 * ascends; a system is lane j < C of its group) */
static int cs__staged_group_of(const cs__hines_hplan *hp, int sy)
{
    int lo = 0, hi = hp->ngroup - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (hp->group_base[mid] <= hp->cell_base[sy]) lo = mid; else hi = mid - 1;
    }
    return lo;
}

long long cs__staged_share_constants(cs__hines_hplan *hp, const double *tree, int first_array)
{
    if (hp->variant != CS__HV_STAGED || !hp->stg_fused || hp->ngroup == 0) return 0;
    if (first_array || !hp->group_same) {
        free(hp->group_same);
        hp->group_same = malloc((size_t)hp->ngroup);
        if (!hp->group_same) return -1;
        memset(hp->group_same, 1, (size_t)hp->ngroup);
    }
    int *first = malloc(sizeof(int) * (size_t)hp->nstype), *rep = malloc(sizeof(int) * (size_t)hp->nstype);
    int *cbase = hp->group_cbase ? hp->group_cbase : malloc(sizeof(int) * (size_t)hp->ngroup);
    if (!first || !rep || !cbase) {
        free(first); free(rep);
        if (cbase != hp->group_cbase) free(cbase);
        return -1;
    }
    hp->group_cbase = cbase;
    unsigned char *same = hp->group_same;
    for (int t = 0; t < hp->nstype; ++t) first[t] = rep[t] = -1;
    /* cells of one structure have their rows in one tree order (one lmap), so equal values in
     * tree order are equal values in the internal layout */
    for (int sy = 0; sy < hp->nsys; ++sy) {
        const int g = cs__staged_group_of(hp, sy), t = hp->group_type[g];
        if (first[t] < 0) { first[t] = sy; continue; }
        const int o = hp->offset[sy], o0 = hp->offset[first[t]], n = hp->offset[sy + 1] - o;
        if (same[g]) same[g] = memcmp(tree + o, tree + o0, sizeof(double) * (size_t)n) == 0;
    }
    for (int g = 0; g < hp->ngroup; ++g) { /* a full group of equal cells: each lane's rows are the structure's */
        const int t = hp->group_type[g];
        if (rep[t] < 0 && same[g] && hp->group_cells[g] == cs__staged_group_cells(hp, g)) rep[t] = g;
    }
    long long shared = 0;
    for (int g = 0; g < hp->ngroup; ++g) {
        const int r = rep[hp->group_type[g]], use = same[g] && r >= 0;
        cbase[g] = hp->group_base[use ? r : g];
        shared += use && r != g;
    }
    /* a launch of several cells a warp whose groups all read a group of equal cells: its rings
     * hold the constants once per row (CS__SL_UC) */
    for (int l = 0; l < hp->stg_nlaunch; ++l) {
        int *L = hp->stg_launch + CS__SL_N * l, all = hp->stg_slot_constants && L[CS__SL_CELLS] > 1 && !L[CS__SL_TW];
        for (int g = L[CS__SL_FIRST]; all && g < L[CS__SL_FIRST] + L[CS__SL_GROUPS]; ++g)
            all = same[g] && rep[hp->group_type[g]] >= 0;
        L[CS__SL_UC] = all;
    }
    free(first); free(rep);
    return shared;
}
