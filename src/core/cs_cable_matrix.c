#include "cs_cable_matrix.h"

void cs_cable_matrix_cell(const cs_cell_desc *cell, double dt, int row0, int *parent, double *u,
                          double *cdt, double *d0, double *b0) {
    const cs_geometry *g = cell->geom;
    for (int k = 0; k < g->ncv; ++k) {
        int r = row0 + k, pr = g->parent[k] < 0 ? -1 : row0 + g->parent[k];
        /* the path from node k to its parent lies in k's branch (cs_geometry.h): k's Ra */
        double ga = k == 0 ? 0.0 : g->g_axial[k] / cell->Ra[g->tag[k] & (CS_NTAG - 1)]; /* [µS] */
        double c = 1e-5 * cell->cm[g->tag[k] & (CS_NTAG - 1)] * g->area[k] / dt; /* C/dt [µS] */
        if (parent) parent[r] = pr;
        if (u) u[r] = -ga;
        if (cdt) cdt[r] = c;
        if (d0) {
            d0[r] += c + ga;
            if (k > 0) d0[pr] += ga;
        }
        if (b0) b0[r] += 0.0;
    }
}

int cs_cable_matrix_fold(const cs_instance_desc *in, int r, double *d0, double *b0) {
    if (!in->type->fold) return 0;
    double g, ge; /* [µS], [nA] */
    in->type->fold(in->param, in->weight, &g, &ge);
    if (d0) d0[r] += g;
    if (b0) b0[r] += ge;
    return 1;
}
