/* SONATA circuits as input (docs/sonata-input.md): a simulation config (with its circuit config)
 * read into the same cs_model that the JSON model reader fills, plus what the run needs beyond
 * it (where bmtk would write its output). Everything after the model (build, partition,
 * backends, output) is shared with the JSON front end. */
#ifndef CS_SONATA_H
#define CS_SONATA_H

#include "cs_model.h"

typedef struct {
    char output_dir[CS_PATH_MAX];  /* the config's output.output_dir, created by the caller */
    char spikes_file[CS_PATH_MAX]; /* output_dir/spikes_file: the run's SONATA file */
    char sort_order[16];           /* "time" (default), "id" or "none": output.spikes_sort_order */
    int nreport;                   /* membrane reports (written into spikes_file's /report/) */
    char report_name[16][CS_NAME_MAX];
    char mechanisms_dir[CS_PATH_MAX]; /* components.mechanisms_dir, "" when none */
} cs_sonata_run;

/* Only the run's settings (output, mechanisms_dir): what a caller needs before cs_sonata_load. */
cs_status cs_sonata_read_run(const char *config_path, cs_sonata_run *run);

/* 1 when `json` is a SONATA simulation or circuit config (it has "networks", "network", or
 * "manifest" with "run"/"components"), 0 for a cablesim model file. */
int cs_sonata_is_config(const char *json);

/* Read a simulation config and everything it names into `m` (and, when run is not NULL, the
 * run's output settings). `catalogue` is a compiled mechanisms_dir to load first, or NULL.
 * Any malformed or missing part is one line naming the file and the dataset, row or key. */
cs_status cs_sonata_load(const char *config_path, const char *catalogue, cs_model *m, cs_sonata_run *run);

#endif
