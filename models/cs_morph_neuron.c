/* SWC cells as NEURON's Import3d and bmtk build them (SONATA circuits): where a single-point
 * soma's children attach, bmtk's axon stub, and NEURON's section numbering. */
#include <stdlib.h>
#include <string.h>

#include "cs_morph.h"

#define STUB_LENGTH 30.0 /* [µm] each of bmtk's two axon stub sections */
#define STUB_RADIUS 0.5  /* [µm] (diameter 1 µm) */

static int is_soma_root(const cs_morph *m, int b) {
    return m->branches[b].parent < 0 && m->branches[b].tag == CS_TAG_SOMA;
}

cs_status cs_morph_neuron_import(cs_morph *m, int axon_stub) {
    int soma = -1;
    for (int b = 0; b < m->nbranch && soma < 0; ++b)
        if (is_soma_root(m, b)) soma = b;
    /* Import3d connects the neurites of a single-point soma (our one soma branch) to its centre,
     * each starting at its own first sample (not at the soma's centre, as our SWC reader does) */
    for (int b = 0; soma >= 0 && b < m->nbranch; ++b) {
        cs_branch *br = &m->branches[b];
        if (br->parent != soma || br->tag == CS_TAG_SOMA) continue;
        br->parent_pos = 0.5;
        if (br->npoints >= 3) {
            br->first++;
            br->npoints--;
        }
    }
    if (!axon_stub) return CS_OK;
    if (soma < 0) return cs_error_set(CS_ERR_INVALID, "morphology: bmtk's axon stub needs a soma (SWC type 1)");

    /* drop every axon branch and what hangs from it; parents come before children */
    int *map = malloc((size_t)m->nbranch * sizeof *map);
    cs_branch *nb = malloc((size_t)(m->nbranch + 2) * sizeof *nb);
    cs_point *np = malloc((size_t)(m->npoints + 4) * sizeof *np);
    if (!map || !nb || !np) {
        free(map); free(nb); free(np);
        return cs_error_set(CS_ERR_NOMEM, "morphology: out of memory");
    }
    int n = 0;
    for (int b = 0; b < m->nbranch; ++b) {
        const cs_branch *br = &m->branches[b];
        int gone = br->tag == CS_TAG_AXON || (br->parent >= 0 && map[br->parent] < 0);
        map[b] = gone ? -1 : n;
        if (gone) continue;
        nb[n] = *br;
        nb[n].parent = br->parent < 0 ? -1 : map[br->parent];
        n++;
    }
    memcpy(np, m->points, (size_t)m->npoints * sizeof *np);
    /* the stub: from the soma's centre, along -y (only lengths and radii matter) */
    const cs_branch *sb = &m->branches[soma];
    cs_point a = m->points[sb->first], z = m->points[sb->first + sb->npoints - 1];
    cs_point c = {(a.x + z.x) / 2, (a.y + z.y) / 2, (a.z + z.z) / 2, STUB_RADIUS};
    int p0 = m->npoints;
    for (int k = 0; k < 2; ++k) {
        cs_point s = c, e = c;
        s.y -= STUB_LENGTH * k;
        e.y -= STUB_LENGTH * (k + 1);
        np[p0 + 2 * k] = s;
        np[p0 + 2 * k + 1] = e;
        nb[n + k] = (cs_branch){k ? n : map[soma], CS_TAG_AXON, p0 + 2 * k, 2, 0, k ? 1.0 : 0.5};
    }
    free(map);
    free(m->branches);
    free(m->points);
    m->branches = nb;
    m->nbranch = n + 2;
    m->points = np;
    m->npoints = p0 + 4;
    return CS_OK;
}

int cs_morph_section_order(const cs_morph *m, int axon_last, int *section_branch) {
    int n = 0;
    /* tags in Import3d's order (ascending SWC type), with the stub axon created last */
    for (int pass = 0; pass < 2; ++pass)
        for (int tag = 0; tag < 256; ++tag) {
            if ((tag == CS_TAG_AXON && axon_last) != pass) continue;
            for (int b = 0; b < m->nbranch; ++b)
                if (m->branches[b].tag == tag) section_branch[n++] = b;
        }
    return n;
}
