/* Per-structure schedules shared by several fine and warp plans of one batch (cs_hines_gpu.h,
 * cs_hines_schedules_create). Plain C, no CUDA, set-up time only.
 *
 * fine's and warp's planners first give every distinct structure its schedule (re-rooted, split,
 * levelled: cs__fine_structs_build), which depends on the structure and two flags alone; the pack
 * rows and threads, where they differ, only shape the packs afterwards. auto's trial builds both
 * plans at once, and this phase was about half of each (rand-65536, session 31): made once here,
 * each plan reads the records without writing them. The object keeps the structures' local
 * parents, so that a plan given it checks them row for row (never a plan of another batch). */
#include <stdlib.h>

#include "cs_hines_gpu_impl.h"
#include "cs_hines_tree.h"

struct cs_hines_schedules {
    int nstruct, max_n, flags; /* flags: the CS__FINE_STRUCT_FLAGS the records were planned with */
    long long *first;          /* [nstruct + 1]: structure k's local parents, lp[first[k] .. first[k+1]) */
    int *lp;
    cs__fstruct *fs;
};

void cs_hines_schedules_destroy(cs_hines_schedules *sch)
{
    if (!sch) return;
    cs__fine_structs_free(sch->fs, sch->nstruct);
    free(sch->first);
    free(sch->lp);
    free(sch);
}

cs_solver_status cs_hines_schedules_create(int nsys, const int *offset, const int *p, int fine_flags,
                                           cs_hines_schedules **out)
{
    if (!out) return CS_SOLVER_ERR_INVALID;
    *out = NULL;
    int max_n = 0, *sid = NULL, *rep = NULL, ns = 0;
    cs_solver_status st = cs__hines_check_batch(nsys, offset, p, &max_n, NULL, 0);
    if (st != CS_SOLVER_OK) return st;
    if ((st = cs__hines_structures(nsys, offset, p, &sid, &rep, &ns)) != CS_SOLVER_OK) return st;
    free(sid);
    cs_hines_schedules *sch = calloc(1, sizeof *sch);
    if (sch) {
        sch->nstruct = ns;
        sch->max_n = max_n;
        sch->flags = fine_flags & CS__FINE_STRUCT_FLAGS;
        sch->first = malloc(sizeof(long long) * ((size_t)ns + 1));
    }
    if (sch && sch->first) {
        sch->first[0] = 0;
        for (int k = 0; k < ns; ++k) sch->first[k + 1] = sch->first[k] + offset[rep[k] + 1] - offset[rep[k]];
        sch->lp = malloc(sizeof(int) * (size_t)(sch->first[ns] > 0 ? sch->first[ns] : 1));
    }
    if (sch && sch->lp) /* the local parents copied as the structures are planned, on threads */
        sch->fs = cs__fine_structs_build(ns, rep, offset, p, max_n, sch->flags, sch->lp, sch->first);
    free(rep);
    if (!sch || !sch->fs) {
        cs_hines_schedules_destroy(sch);
        return CS_SOLVER_ERR_NOMEM;
    }
    *out = sch;
    return CS_SOLVER_OK;
}

const cs__fstruct *cs__schedules_match(const cs_hines_schedules *sch, const cs__hines_hplan *hp, const int *p, const int *rep,
                                       int flags, char *msg, size_t msglen)
{
    if ((flags & CS__FINE_STRUCT_FLAGS) != sch->flags) {
        cs__plan_msg(msg, msglen, "the shared schedules were made with other flags (re-rooting, splitting)");
        return NULL;
    }
    int same = hp->nstruct == sch->nstruct && hp->max_n == sch->max_n;
    for (int k = 0; same && k < hp->nstruct; ++k) {
        const int o = hp->offset[rep[k]], n = hp->offset[rep[k] + 1] - o;
        const int *lp = sch->lp + sch->first[k];
        same = n == sch->first[k + 1] - sch->first[k] && lp[0] == -1;
        for (int i = 1; same && i < n; ++i) same = lp[i] == p[o + i] - o;
    }
    if (!same) cs__plan_msg(msg, msglen, "the shared schedules were made for another batch (its structures differ)");
    return same ? sch->fs : NULL;
}
