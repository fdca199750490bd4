/* The Allen Institute's axon replacement by two stubs (cs_morph.h, cs_morph_replace_axon). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cs_morph.h"

/* Length-weighted mean diameter of branch b [µm]: NEURON's diam of a one-segment 3-d section. */
static double mean_diam(const cs_morph *m, int b) {
    const cs_branch *br = &m->branches[b];
    double len = 0.0, acc = 0.0;
    for (int i = 1; i < br->npoints; ++i) {
        const cs_point *p = &m->points[br->first + i - 1], *q = &m->points[br->first + i];
        double dx = q->x - p->x, dy = q->y - p->y, dz = q->z - p->z, l = sqrt(dx * dx + dy * dy + dz * dz);
        len += l;
        acc += l * (p->r + q->r); /* diameter = 2·mean radius */
    }
    return len > 0 ? acc / len : 2.0 * m->points[br->first].r;
}

cs_status cs_morph_replace_axon(cs_morph *m, const cs_axon_stub *stub) {
    CS_CHECK(stub->length > 0 && isfinite(stub->length), CS_ERR_INVALID, "axon stub: length %g (must be > 0)",
             stub->length);
    const int nb = m->nbranch;
    int soma = -1, first_axon = -1, last_axon = -1;
    int *keep = calloc((size_t)nb + 1, sizeof *keep), *newidx = calloc((size_t)nb + 1, sizeof *newidx);
    cs_branch *br = calloc((size_t)nb + 2, sizeof *br);
    cs_point *pt = calloc((size_t)m->npoints + 4, sizeof *pt);
    if (!keep || !newidx || !br || !pt) {
        free(keep); free(newidx); free(br); free(pt);
        return cs_error_set(CS_ERR_NOMEM, "axon stub: out of memory");
    }
    /* parents come first, so a subtree is removed by following the parent's mark */
    for (int b = 0; b < nb; ++b) {
        const cs_branch *x = &m->branches[b];
        int axon = x->tag == CS_TAG_AXON || (x->parent >= 0 && !keep[x->parent]);
        keep[b] = !axon;
        if (x->tag == CS_TAG_AXON) {
            if (first_axon < 0) first_axon = b;
            last_axon = b;
        }
        if (keep[b] && soma < 0 && x->tag == CS_TAG_SOMA) soma = b;
    }
    double d[2];
    for (int k = 0; k < 2; ++k)
        d[k] = stub->diam[k] > 0 ? stub->diam[k] : first_axon < 0 ? 1.0 : mean_diam(m, k ? last_axon : first_axon);
    int n = 0, np = 0;
    for (int b = 0; b < nb; ++b) {
        if (!keep[b]) continue;
        const cs_branch *x = &m->branches[b];
        newidx[b] = n;
        br[n] = *x;
        br[n].parent = x->parent < 0 ? -1 : newidx[x->parent];
        br[n].first = np;
        memcpy(pt + np, m->points + x->first, (size_t)x->npoints * sizeof *pt);
        np += x->npoints;
        ++n;
    }
    if (soma < 0) {
        free(keep); free(newidx); free(br); free(pt);
        return cs_error_set(CS_ERR_INVALID, "axon stub: the morphology has no soma to attach it to");
    }
    /* the stubs run along x from the soma's first point; only their lengths and radii matter */
    cs_point o = m->points[m->branches[soma].first];
    for (int k = 0; k < 2; ++k) {
        br[n] = (cs_branch){k == 0 ? newidx[soma] : n - 1, CS_TAG_AXON, np, 2, 0, k == 0 ? stub->parent_pos : 1.0};
        pt[np] = (cs_point){o.x + k * stub->length, o.y, o.z, 0.5 * d[k]};
        pt[np + 1] = (cs_point){o.x + (k + 1) * stub->length, o.y, o.z, 0.5 * d[k]};
        np += 2;
        ++n;
    }
    free(keep);
    free(newidx);
    free(m->branches);
    free(m->points);
    m->branches = br;
    m->nbranch = n;
    m->points = pt;
    m->npoints = np;
    return cs_morph_check(m);
}
