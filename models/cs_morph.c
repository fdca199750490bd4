/* Morphology helpers: free, branch length, structural check. */
#include "cs_morph.h"

#include <math.h>
#include <stdlib.h>

void cs_morph_free(cs_morph *m) {
    if (!m) return;
    free(m->branches);
    free(m->points);
    m->branches = NULL;
    m->points = NULL;
    m->nbranch = 0;
    m->npoints = 0;
}

double cs_branch_length(const cs_morph *m, int b) {
    if (!m || b < 0 || b >= m->nbranch) return 0.0;
    const cs_branch *br = &m->branches[b];
    double len = 0.0; /* [µm] */
    for (int i = 1; i < br->npoints; ++i) {
        const cs_point *p = &m->points[br->first + i - 1], *q = &m->points[br->first + i];
        double dx = q->x - p->x, dy = q->y - p->y, dz = q->z - p->z;
        len += sqrt(dx * dx + dy * dy + dz * dz);
    }
    return len;
}

cs_status cs_morph_check(const cs_morph *m) {
    CS_CHECK(m != NULL, CS_ERR_INVALID, "morphology: NULL");
    CS_CHECK(m->nbranch >= 1 && m->branches != NULL, CS_ERR_INVALID, "morphology: no branches");
    CS_CHECK(m->npoints >= 2 && m->points != NULL, CS_ERR_INVALID, "morphology: no points");
    for (int b = 0; b < m->nbranch; ++b) {
        const cs_branch *br = &m->branches[b];
        CS_CHECK(br->parent >= -1 && br->parent < b, CS_ERR_INVALID,
                 "morphology: branch %d has parent %d (must be -1 or a smaller index)", b, br->parent);
        CS_CHECK(br->npoints >= 2, CS_ERR_INVALID, "morphology: branch %d has %d points (needs >= 2)", b,
                 br->npoints);
        CS_CHECK(br->first >= 0 && br->first <= m->npoints - br->npoints, CS_ERR_INVALID,
                 "morphology: branch %d points [%d, %d) outside the %d points", b, br->first,
                 br->first + br->npoints, m->npoints);
        CS_CHECK(br->ncv_hint >= 0, CS_ERR_INVALID, "morphology: branch %d has ncv_hint %d < 0", b,
                 br->ncv_hint);
        CS_CHECK(br->parent < 0 || (br->parent_pos >= 0.0 && br->parent_pos <= 1.0), CS_ERR_INVALID,
                 "morphology: branch %d attaches at %g of its parent (must be in [0, 1])", b, br->parent_pos);
        for (int i = 0; i < br->npoints; ++i) {
            const cs_point *p = &m->points[br->first + i];
            CS_CHECK(isfinite(p->x) && isfinite(p->y) && isfinite(p->z) && isfinite(p->r), CS_ERR_INVALID,
                     "morphology: branch %d point %d is not finite", b, i);
            CS_CHECK(p->r > 0, CS_ERR_INVALID, "morphology: branch %d point %d has radius %g (must be > 0)", b,
                     i, p->r);
        }
        double len = cs_branch_length(m, b);
        CS_CHECK(isfinite(len) && len > 0, CS_ERR_INVALID, "morphology: branch %d has length %g (must be > 0)",
                 b, len);
    }
    return CS_OK;
}
