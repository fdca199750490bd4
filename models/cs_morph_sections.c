/* NEURON's section numbering of an SWC cell as Import3d (and so bmtk) builds it: bmtk's and
 * SONATA's afferent_section_id. */
#include "cs_morph.h"

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
