/* Explicit branch lists (NEURON-style sections): each branch is a cylinder attached to its
 * parent at parent_pos (the distal end by default). Positions are laid out along x from the
 * parent's distal point; only lengths, radii and the attachment matter. */
#include <stdlib.h>

#include "cs_model.h"

cs_status cs_morph_from_branches(const cs_branch_spec *b, int n, cs_morph *out) {
    out->nbranch = n;
    out->npoints = 2 * n;
    out->branches = calloc((size_t)n, sizeof *out->branches);
    out->points = calloc((size_t)(2 * n), sizeof *out->points);
    if (!out->branches || !out->points) {
        cs_morph_free(out);
        return cs_error_set(CS_ERR_NOMEM, "out of memory building %d branches", n);
    }
    for (int k = 0; k < n; ++k) {
        cs_point start = {0, 0, 0, b[k].radius};
        if (b[k].parent >= 0) start = out->points[2 * b[k].parent + 1];
        start.r = b[k].radius; /* [µm] each branch is a cylinder of its own radius */
        cs_point end = start;
        end.x += b[k].length;  /* [µm] */
        out->points[2 * k] = start;
        out->points[2 * k + 1] = end;
        out->branches[k] = (cs_branch){b[k].parent, b[k].tag, 2 * k, 2, b[k].ncv, b[k].parent_pos};
    }
    return CS_OK;
}
