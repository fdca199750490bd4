/* Tree utilities shared by the Hines planners (cs_hines_plan.c, cs_hines_plan_fine.c,
 * cs_hines_staged.c, cs_hines_schedules.c): re-rooting a cell's tree at the centre of its longest
 * path; their messages; a batch's distinct structures. Plain C, set-up time only. Internal to the
 * solver library; the public random-tree generator is declared in cs_hines_gpu.h. */
#ifndef CS_HINES_TREE_H
#define CS_HINES_TREE_H

#include <stddef.h>

#include "cs_solver.h"

/* The tree of n rows (local parents lp) as adjacency lists (CSR: adj_first[n + 1], adj[2n]);
 * 0, or -1 when out of memory. The caller frees both. */
int cs__tree_adjacency(int n, const int *lp, int **adj_first_out, int **adj_out);
/* The same into the caller's arrays: adj_first[n + 1], adj[2n], cur[n + 1] (work). */
void cs__tree_adjacency_into(int n, const int *lp, int *adj_first, int *adj, int *cur);

/* The centre of the tree's longest path (the root that makes the tree lowest), of the tree of n
 * rows with local parents lp (tree order) and their adjacency lists; dist, par, queue: n ints of
 * work each. */
int cs__tree_centre(int n, const int *lp, const int *adj_first, const int *adj, int *dist, int *par, int *queue);

/* The tree of n rows (local parents lp) rooted at the centre of its longest path and numbered
 * breadth-first from there: new_of_old[i], the new local parents lp_new (parents first), and for
 * each old row the old row holding the coupling to its new parent (usrc: itself, the child of a
 * reversed edge, or -1 at the new root). Returns the new height in rows, or -1 when out of memory. */
int cs__tree_recentre(int n, const int *lp, int *new_of_old, int *lp_new, int *usrc);

/* Threads for a planner's loop over items that each thread works on with bytes_each of its own:
 * 1 below 16 items, else OpenMP's, at most one per item and within 512 MB of work areas in all. */
int cs__plan_threads(int items, size_t bytes_each);
/* The planners' one-line messages: printf into msg (len bytes; nothing when msg is NULL). */
void cs__plan_msg(char *msg, size_t len, const char *fmt, ...);

/* A batch as the plans take it (cs_hines_gpu.h): CS_SOLVER_ERR_INVALID with a message, or its
 * largest system's rows in *max_n. */
cs_solver_status cs__hines_check_batch(int nsys, const int *offset, const int *p, int *max_n, char *msg, size_t msglen);
/* The distinct structures of a checked batch, numbered in order of first appearance: sid[s] is
 * system s's, rep[k] the first system of structure k (new arrays, the caller's to free). Every
 * caller numbers them alike: the plans and the shared schedules (cs_hines_schedules_create).
 * CS_SOLVER_ERR_NOMEM. */
cs_solver_status cs__hines_structures(int nsys, const int *offset, const int *p, int **sid, int **rep, int *nstruct);

#endif
