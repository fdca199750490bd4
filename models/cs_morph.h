/* Cell morphologies: a tree of unbranched branches, each a polyline of frustums.
 * Sources: SWC files (cs_swc.c) and generators (cs_morph_gen.c).
 * Units: positions and radii in µm. */
#ifndef CS_MORPH_H
#define CS_MORPH_H

#include <stdint.h>

#include "cs_error.h"

/* SWC structure identifiers, used as region tags. */
enum { CS_TAG_UNDEFINED = 0, CS_TAG_SOMA = 1, CS_TAG_AXON = 2, CS_TAG_DEND = 3, CS_TAG_APIC = 4 };

typedef struct {
    double x, y, z; /* [µm] */
    double r;       /* radius [µm], > 0 */
} cs_point;

typedef struct {
    int parent;     /* parent branch, or -1 when attached to the cell's root point; parent < own index */
    int tag;        /* CS_TAG_* (SWC type of the branch's samples) */
    int first;      /* index of the branch's proximal point in cs_morph.points */
    int npoints;    /* >= 2: points[first .. first+npoints-1], proximal to distal */
    int ncv_hint;   /* > 0: the generator asked for this many CVs; 0: use the CV policy */
    double parent_pos; /* where on its parent it attaches, NEURON's child.connect(parent(x)): 1 the
                          distal end (SWC files and generators), 0 the proximal end, in (0, 1) the
                          centre node of the parent's CV that contains it; unused for roots */
} cs_branch;

typedef struct {
    int nbranch;
    cs_branch *branches; /* depth-first order: every parent before its children */
    int npoints;
    cs_point *points;
} cs_morph;

/* Options for reading SWC files. */
typedef struct {
    double scale;      /* multiply coordinates and radii by this (e.g. 1e-3 for nm files); 1 by default */
    double min_radius; /* [µm] radii below this are raised to it; 0 (default) makes a radius <= 0 an error */
    int neurites_at_soma_centre; /* 1: neurites of a one- or three-point soma attach at its middle,
                                    soma(0.5), and start at their own first sample, as NEURON's
                                    Import3d makes them (bmtk's cells); 0 (default): at its distal
                                    end, from the soma sample's position */
} cs_swc_options;

/* Read an SWC file. Handles single-point, three-point and multi-sample somas, CRLF/LF,
 * comments, and samples in any order. A malformed file gives CS_ERR_PARSE with a message
 * "FILE:LINE: what is wrong". */
cs_status cs_morph_load_swc(const char *path, const cs_swc_options *opt, cs_morph *out);

/* Generators. Every length and radius [µm] must be finite and > 0. */
cs_status cs_morph_soma(double radius, cs_morph *out);            /* cylinder of length 2r: area 4πr² */
cs_status cs_morph_cable(double length, double radius, int ncv, cs_morph *out); /* one branch, ncv 0 = policy */
cs_status cs_morph_ball_and_stick(double soma_radius, double dend_length, double dend_radius,
                                  int dend_ncv, cs_morph *out);   /* branch 0 soma, branch 1 dendrite */

/* Arbor's busyring cell: a soma, then `depth` levels of dendrite. Each terminal of level k
 * splits in two with probability p(k); branch length and CV count also interpolate linearly
 * from the first to the last value of their pairs over the levels. */
typedef struct {
    double soma_radius;          /* [µm] */
    double dend_radius;          /* [µm] */
    int depth;                   /* number of dendrite levels (>= 1) */
    double branch_prob[2];       /* probability of splitting at the first and last level */
    double length[2];            /* [µm] branch length at the first and last level */
    int ncv[2];                  /* CVs per branch at the first and last level */
} cs_random_tree_params;
cs_status cs_morph_random_tree(const cs_random_tree_params *p, uint64_t seed, cs_morph *out);

/* The Allen Institute's axon replacement (bmtk's fix_axon_peri / fix_axon_allactive): every axon
 * branch (tag 2) and its subtree removed, then two stubs appended, each `length` [µm] long, the
 * first attached to the first soma branch at parent_pos (0.5 perisomatic, 1 all-active), the
 * second to the first's distal end, with diameters diam[0], diam[1] [µm]. diam[k] <= 0 asks for
 * the removed axon's own: k = 0 its first branch's, k = 1 its last branch's length-weighted mean
 * diameter (NEURON's sec.diam of a one-segment section), 1 µm if it had none. */
typedef struct {
    int on;
    double length;     /* [µm] */
    double diam[2];    /* [µm] */
    double parent_pos; /* [0, 1] */
} cs_axon_stub;
cs_status cs_morph_replace_axon(cs_morph *m, const cs_axon_stub *stub);

void cs_morph_free(cs_morph *m);
/* Length of a branch along its polyline [µm]. */
double cs_branch_length(const cs_morph *m, int b);
/* Check the invariants above (parents before children, >= 2 finite points per branch, radii > 0,
 * every branch longer than 0, parent_pos in [0, 1]); CS_ERR_INVALID with a message naming the
 * branch otherwise. */
cs_status cs_morph_check(const cs_morph *m);

#endif
