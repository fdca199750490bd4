/* Discretisation of a morphology into control volumes (CVs) for the cable equation.
 *
 * Node layout (NEURON's, so that our traces can be compared node for node): a zero-area root
 * node 0 at the proximal end of the root branches; each branch with n CVs contributes n nodes at
 * the centres of n equal-length pieces, followed by one zero-area node at its distal end, where
 * its children attach. Nodes are numbered in Hines order: every parent before its children and
 * each branch contiguous. */
#ifndef CS_GEOMETRY_H
#define CS_GEOMETRY_H

#include "cs_error.h"
#include "cs_morph.h"

typedef struct {
    double max_cv_length; /* [µm] n = ceil(L / max_cv_length) when > 0 */
    int cvs_per_branch;   /* when > 0, overrides max_cv_length */
    int bmtk_odd;         /* 1: n = 1 + 2·floor(L / (2·max_cv_length)) (bmtk's set_segment_dl, dL =
                             max_cv_length), so the discretisation is the one bmtk gives NEURON */
} cs_cv_policy;

typedef struct {
    int ncv;              /* nodes, including the zero-area root and branch-end nodes */
    int *parent;          /* [ncv] parent node, parent[0] = -1, parent[i] < i */
    double *area;         /* [ncv] membrane area [µm²]; 0 at the zero-area nodes */
    double *g_axial;      /* [ncv] axial conductance to the parent [µS] (per unit 1/Ra: multiply by 1/Ra[Ω·cm]) */
    int *tag;             /* [ncv] region tag of the node's branch */
    int nbranch;
    int *branch_first;    /* [nbranch] first centre node */
    int *branch_ncv;      /* [nbranch] number of centre nodes (>= 1) */
    int *branch_proximal; /* [nbranch] node at the proximal end: 0 or the parent's distal node */
    /* the distal node of branch b is branch_first[b] + branch_ncv[b] */
} cs_geometry;

/* g_axial is computed for Ra = 1 Ω·cm; the simulator divides by the cell's Ra. */
cs_status cs_discretize(const cs_morph *m, const cs_cv_policy *policy, cs_geometry *out);
void cs_geometry_free(cs_geometry *g);

/* Node at a location, NEURON's rule: pos 0 is the proximal node, pos 1 the distal node, any
 * other pos in (0,1) the centre node of the piece that contains it. -1 when the branch does
 * not exist or pos is outside [0,1]. */
int cs_geometry_locate(const cs_geometry *g, int branch, double pos);

#endif
