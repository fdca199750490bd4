/* Reports in bmtk's file layout (docs/sonata-input.md): a finished run's report groups copied
 * into output_dir/<report>.h5, as bmtk writes them, so bmtk's analysis reads them. */
#ifndef CS_OUTPUT_BMTK_H
#define CS_OUTPUT_BMTK_H

#include "cs_error.h"

/* The report groups /report/<groups[k]>/ of the file src, their columns concatenated in that
 * order, into dst as /report/<population>/{data [t × element] float64 [mV], mapping/{node_ids,
 * index_pointer, element_ids, element_pos, time}} with bmtk's rows, t < tstop. */
cs_status cs_output_bmtk_report(const char *src, const char *dst, const char *population, int ngroup,
                                const char *const *groups);

#endif
