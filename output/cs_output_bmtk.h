/* Reports in bmtk's file layout (docs/sonata-input.md): a finished run's report groups copied
 * into output_dir/<report>.h5, as bmtk writes them, so bmtk's analysis reads them. */
#ifndef CS_OUTPUT_BMTK_H
#define CS_OUTPUT_BMTK_H

#include "cs_error.h"

/* One report group of the run's file: /report/<name>/ ("POP" for v, "POP/VARIABLE" otherwise),
 * nloc columns per cell, of which the report takes nsel: the columns sel[k] (ascending; NULL:
 * the first nsel) of each cell, the k-th at SONATA section section[k] (NULL: the soma, 0) and
 * position pos[k] (NULL: 0.5). */
typedef struct {
    const char *name;
    int nloc;
    int nsel;
    const int *sel;
    const int *section;
    const double *pos;
} cs_bmtk_group;

/* The rows a report keeps (bmtk's start_time, end_time, dt) [ms]: t = t_start, t_start + dt, ...
 * below t_end (t_end < 0: tstop; dt 0: every sample of the run; dt is rounded to a multiple of
 * the run's sampling interval). */
typedef struct {
    double t_start, t_end, dt;
} cs_bmtk_rows;

/* The report groups of the file src, their columns concatenated in that order, into dst as
 * /report/<population>/{data [t × element] float64 (the variable's unit), mapping/{node_ids,
 * index_pointer, element_ids, element_pos, time}} with bmtk's rows (`rows`; NULL: every sample,
 * t < tstop). dst is created, or, when append, opened to add another population. */
cs_status cs_output_bmtk_report(const char *src, const char *dst, const char *population, int ngroup,
                                const cs_bmtk_group *groups, const cs_bmtk_rows *rows, int append);

#endif
