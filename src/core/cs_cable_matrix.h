/* The constant part of the cable equation's matrix, shared by every backend. For a cell's
 * rows [row0, row0 + ncv) in tree order (DESIGN.md):
 *   u[r]   = −g_axial[r]/Ra                  coupling to the parent row [µS]
 *   cdt[r] = C_r/dt = 1e-5·cm·A_r/dt          [nF/ms = µS]  (C = cm·A·1e-8 µF = cm·A·1e-5 nF)
 *   d0[r]  = C_r/dt + Σ faces g_axial         [µS]
 *   b0[r]  = 0                                [nA]
 * Linear mechanisms with constant conductance (pas) are folded in once: their g adds to d0 and
 * their g·e to b0, so no per-step work remains for them. A step then assembles
 *   d = d0 + g_m,   rhs = cdt·v + b0 − (i_m − g_m·v)   from the other mechanisms' i_m, g_m. */
#ifndef CS_CABLE_MATRIX_H
#define CS_CABLE_MATRIX_H

#include "cs_build.h"

/* Fill rows [row0, row0 + ncv) for one cell (d0 and b0 must be zero there beforehand). Any of
 * the outputs may be NULL: a backend may build them one at a time to hold less memory. */
void cs_cable_matrix_cell(const cs_cell_desc *cell, double dt, int row0, int *parent, double *u,
                          double *cdt, double *d0, double *b0);

/* Fold a mechanism instance at row r into d0 and b0 (either may be NULL) when its type is linear
 * with constant conductance; returns 1 when folded, 0 when the instance must be evaluated every
 * step. */
int cs_cable_matrix_fold(const cs_instance_desc *in, int r, double *d0, double *b0);

#endif
