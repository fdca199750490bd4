/* Host emulation of every Hines plan (cs_hines_plan.c builds them): the conversions to and from
 * a plan's internal layout, its solve and its fused step, row by row as the GPU kernels do them,
 * for checking the planners without a GPU; and the pivot clean-up of the fused step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cs_hines_gpu_impl.h"

/* ---- host emulation ----------------------------------------------------------------------- */
long long cs__hines_hplan_internal_index(const cs__hines_hplan *hp, int s, int i)
{
    int m = hp->cell_map[s];
    return (long long)hp->cell_base[s] + (m < 0 ? (long long)i * hp->cell_stride : hp->lmap[m + i]);
}

void cs__hines_hplan_to_internal_host(const cs__hines_hplan *hp, cs_hines_array_kind kind,
                                      const double *tree, double *internal)
{
    for (int s = 0; s < hp->nsys; ++s) {
        int o = hp->offset[s], n = hp->offset[s + 1] - o, m = hp->cell_map[s];
        for (int i = 0; i < n; ++i) {
            int src = i;
            if (kind == CS_HINES_COUPLING) src = m < 0 ? (i == 0 ? -1 : i) : hp->lusrc[m + i];
            internal[cs__hines_hplan_internal_index(hp, s, i)] = src < 0 ? 0.0 : tree[o + src];
        }
    }
}

void cs__hines_hplan_from_internal_host(const cs__hines_hplan *hp, cs_hines_array_kind kind,
                                        const double *internal, double *tree)
{
    for (int s = 0; s < hp->nsys; ++s) {
        int o = hp->offset[s], n = hp->offset[s + 1] - o, m = hp->cell_map[s];
        for (int i = 0; i < n; ++i) {
            int dst = i;
            if (kind == CS_HINES_COUPLING) dst = m < 0 ? (i == 0 ? -1 : i) : hp->lusrc[m + i];
            if (dst < 0) continue; /* the root's coupling: none */
            tree[o + dst] = internal[cs__hines_hplan_internal_index(hp, s, i)];
        }
    }
}

void cs__hines_hplan_solve_host(const cs__hines_hplan *hp, double *d, const double *u, double *rhs)
{
    if (hp->variant == CS__HV_STAGED) {
        cs__staged_solve_host(hp, d, u, rhs);
        return;
    }
    if (hp->variant == CS__HV_CHUNKED && hp->chk_nchunk == 0) { /* nothing cut: the fine plan alone */
        cs__hines_hplan_solve_host(hp->chk_sub, d, u, rhs);
        return;
    }
    if (hp->variant == CS__HV_CHUNKED) { /* P1, the reduced tree (u'_ab in a copy of its u), P3 */
        double *ur = malloc(sizeof(double) * (size_t)(hp->chk_nr > 0 ? hp->chk_nr : 1));
        if (!ur) {
            for (int k = 0; k < hp->internal_size; ++k) rhs[k] = NAN; /* out of memory: no result */
            return;
        }
        memcpy(ur, u, sizeof(double) * (size_t)hp->chk_nr);
        cs__chunked_p1_host(hp, d, u, rhs, ur);
        cs__hines_hplan_solve_host(hp->chk_sub, d, ur, rhs);
        cs__chunked_p3_host(hp, d, u, rhs);
        free(ur);
        return;
    }
    if (!cs__hines_variant_is_fine(hp->variant)) {
        for (int q = 0; q < hp->nslot; ++q) {
            int n = hp->slot_n[q];
            if (!n) continue;
            long long b = hp->slot_base[q], G = hp->stride;
            for (int i = n - 1; i > 0; --i) {
                long long k = b + i * G;
                int pi = hp->shared_p ? hp->p_local[i] : hp->p_local[k];
                long long kp = b + pi * G;
                double inv = 1.0 / d[k], a = u[k] * inv;
                d[kp] -= a * u[k];
                rhs[kp] -= a * rhs[k];
                d[k] = a;
                rhs[k] *= inv;
            }
            rhs[b] /= d[b];
            for (int i = 1; i < n; ++i) {
                long long k = b + i * G;
                int pi = hp->shared_p ? hp->p_local[i] : hp->p_local[k];
                rhs[k] -= d[k] * rhs[b + pi * G];
            }
        }
        return;
    }
    for (int pk = 0; pk < hp->npack; ++pk) {
        const int *ti = hp->type_info + 4 * hp->pack_type[pk];
        const int *ls = hp->level_start + ti[1];
        int nlev = ti[2];
        double *D = d + hp->pack_base[pk], *R = rhs + hp->pack_base[pk];
        const double *U = u + hp->pack_base[pk];
        for (int l = nlev - 1; l >= 0; --l)
            for (int t = ls[l]; t < ls[l + 1]; ++t) {
                const int *tk = hp->tasks + 4 * t;
                int first = tk[0], len = tk[1], prow = tk[2], c0 = tk[3], c1 = tk[7];
                int kd = first + len - 1;
                double dd = D[kd], rr = R[kd];
                for (int c = c0; c < c1; ++c) { /* a child's proximal row: a = u/d', b = rhs'/d' */
                    int kc = hp->children[c];
                    dd -= D[kc] * U[kc];
                    rr -= R[kc] * U[kc];
                }
                for (int k = kd; k > first; --k) {
                    double inv = 1.0 / dd, a = U[k] * inv;
                    double dn = D[k - 1] - a * U[k], rn = R[k - 1] - a * rr;
                    D[k] = a; R[k] = rr * inv;
                    dd = dn; rr = rn;
                }
                double inv = 1.0 / dd;
                D[first] = U[first] * inv;
                R[first] = rr * inv;
                (void)prow;
            }
        for (int l = 0; l < nlev; ++l)
            for (int t = ls[l]; t < ls[l + 1]; ++t) {
                const int *tk = hp->tasks + 4 * t;
                int first = tk[0], len = tk[1], prow = tk[2];
                double x = prow < 0 ? R[first] : R[first] - D[first] * R[prow];
                R[first] = x;
                for (int k = first + 1; k < first + len; ++k) {
                    x = R[k] - D[k] * x;
                    R[k] = x;
                }
            }
    }
}

/* ---- the fused step -------------------------------------------------------------------------- */
/* the per-system variants: one thread per system on a (slot base, stride) layout */
static int cs__per_system(const cs__hines_hplan *hp)
{
    return hp->variant == CS__HV_FLAT || hp->variant == CS__HV_INTERLEAVED || hp->variant == CS__HV_BLOCK_INTERLEAVED ||
           hp->variant == CS__HV_VARIABLE;
}

/* fine fuses where it was measured to pay (hp->fine_fuses). A chunked plan that cuts nothing runs
 * its reduced tree's plan, which is then fine (cs__chunked_pays: a level that does not pay is
 * planned fine), so it fuses as that fine plan does; one that cuts has its own fused step
 * (cs__hines_hplan_step_host). */
int cs__hines_hplan_fuses(const cs__hines_hplan *hp)
{
    return cs__per_system(hp) || (hp->variant == CS__HV_FINE && hp->fine_fuses) ||
           (hp->variant == CS__HV_CHUNKED && (hp->chk_nchunk > 0 || hp->fine_fuses)) ||
           (hp->variant == CS__HV_STAGED && hp->stg_fused);
}

int cs__hines_hplan_shares_constants(const cs__hines_hplan *hp) { return cs__per_system(hp) && hp->uniform; }

static inline int cs__slot_parent(const cs__hines_hplan *hp, long long k, int i)
{
    return hp->shared_p ? hp->p_local[i] : hp->p_local[k];
}

void cs__hines_hplan_row_flags(const cs__hines_hplan *hp, unsigned char *flags)
{
    memset(flags, 0, (size_t)hp->internal_size);
    if (!cs__per_system(hp)) return; /* staged: its schedule has the structure; fine's packs and chunked need none */
    for (int q = 0; q < hp->nslot; ++q) {
        long long b = hp->slot_base[q], G = hp->stride;
        for (int i = 1; i < hp->slot_n[q]; ++i) {
            long long k = b + i * G;
            int pi = cs__slot_parent(hp, k, i);
            if (pi == i - 1) flags[k] |= CS_HINES_ROW_PARENT_PREV;
            else flags[b + pi * G] |= CS_HINES_ROW_GATHERS;
        }
    }
}

int cs_hines_clean_pivots(int n, const int *p_local, const double *d0, const double *u,
                          const unsigned char *has_current, double *a0)
{
    double *d = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    unsigned char *dirty = malloc((size_t)(n > 0 ? n : 1));
    if (!d || !dirty) {
        free(d);
        free(dirty);
        return -1;
    }
    memcpy(d, d0, sizeof(double) * (size_t)n);
    memcpy(dirty, has_current, (size_t)n);
    for (int i = n - 1; i > 0; --i) {
        double a = u[i] / d[i];
        a0[i] = dirty[i] ? NAN : a;
        d[p_local[i]] -= a * u[i];
        dirty[p_local[i]] |= dirty[i];
    }
    if (n > 0) a0[0] = NAN; /* the root's pivot is never used */
    free(d);
    free(dirty);
    return 0;
}

/* fine's fused step (cs__k_fine_step): every row assembled (into the work arrays, which stand
 * for the kernel's D and R), the packs' sweeps, the solution into v */
static void cs__fine_step_host(const cs__hines_hplan *hp, const cs_hines_step_d *st)
{
    double *wa = st->work_a, *wb = st->work_b;
    for (long long k = 0; k < hp->internal_size; ++k) cs__step_row_host(st, k, 1, wa + k, wb + k);
    cs__hines_hplan_solve_host(hp, wa, st->u, wb);
    memcpy(st->v, wb, sizeof(double) * (size_t)hp->internal_size);
}

/* Mirrors cs__k_step_cells in cs_hines_gpu_kernels.cuh operation for operation (fine: cs__fine_step_host;
 * chunked that cuts: its kernels' phases, cs_hines_chunked_plan.c). */
void cs__hines_hplan_step_host(const cs__hines_hplan *hp, const cs_hines_step_d *st)
{
    if (hp->variant == CS__HV_CHUNKED && hp->chk_nchunk > 0) { /* the reduced rows, P1, the reduced tree, P3 */
        double *ur = malloc(sizeof(double) * (size_t)(hp->chk_nr > 0 ? hp->chk_nr : 1));
        if (!ur) {
            for (int k = 0; k < hp->internal_size; ++k) st->v[k] = NAN; /* out of memory: no result */
            return;
        }
        cs__chunked_reduced_in_host(hp, st, ur);
        cs__chunked_p1_step_host(hp, st, ur);
        cs__hines_hplan_solve_host(hp->chk_sub, st->work_a, ur, st->v);
        cs__chunked_p3_step_host(hp, st);
        free(ur);
        return;
    }
    if (hp->variant == CS__HV_FINE || hp->variant == CS__HV_CHUNKED) { /* chunked that cuts nothing: its fine plan */
        cs__fine_step_host(hp, st);
        return;
    }
    const unsigned char *F = st->flags;
    double *v = st->v, *wa = st->work_a, *wb = st->work_b;
    for (int q = 0; q < hp->nslot; ++q) {
        int n = hp->slot_n[q];
        if (!n) continue;
        long long b = hp->slot_base[q], G = hp->stride;
        double cd = 0.0, cr = 0.0; /* what row i+1 adds to row i when i is its parent */
        for (int i = n - 1; i >= 0; --i) {
            long long k = b + i * G, kc = st->shared_constants ? i : k;
            unsigned f = F[kc];
            double vk = v[k];
            double dk = st->d0[kc] + cd, rk = st->cdt[kc] * vk + st->b0[kc] + cr;
            if (f & CS_HINES_ROW_CURRENT) {
                double g = st->g[k];
                dk += g;
                rk += g * vk - st->i[k];
                st->g[k] = 0.0;
                st->i[k] = 0.0;
            }
            if (f & CS_HINES_ROW_GATHERS) {
                dk += wa[k];
                rk += wb[k];
            }
            if (i == 0) {
                v[k] = rk / dk;
                if (f & CS_HINES_ROW_GATHERS) wa[k] = wb[k] = 0.0;
                break;
            }
            double uk = st->u[kc], inv = 1.0 / dk, a = uk * inv;
            double to_d = -a * uk, to_r = -a * rk;
            if (f & CS_HINES_ROW_PARENT_PREV) {
                cd = to_d;
                cr = to_r;
            } else {
                long long kp = b + cs__slot_parent(hp, k, i) * G;
                wa[kp] += to_d;
                wb[kp] += to_r;
                cd = cr = 0.0;
            }
            if (!(st->shared_constants && !isnan(st->a0[i]))) wa[k] = a; /* else a0 holds it */
            wb[k] = rk * inv;
        }
        double xp = v[b];
        for (int i = 1; i < n; ++i) {
            long long k = b + i * G;
            unsigned f = F[st->shared_constants ? i : k];
            double xpar = (f & CS_HINES_ROW_PARENT_PREV) ? xp : v[b + cs__slot_parent(hp, k, i) * G];
            double a = st->shared_constants ? st->a0[i] : wa[k];
            if (st->shared_constants && isnan(a)) a = wa[k]; /* a row whose pivot varies */
            double x = wb[k] - a * xpar;
            v[k] = x;
            if (f & CS_HINES_ROW_GATHERS) wa[k] = wb[k] = 0.0;
            xp = x;
        }
    }
}
