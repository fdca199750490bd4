/* A simulation: a model built into a network, driven epoch by epoch on a backend, with spikes
 * exchanged between epochs and output streamed to HDF5. */
#ifndef CS_SIM_H
#define CS_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "cs_error.h"
#include "cs_model.h"
#include "cs_profile.h"

typedef struct {
    const char *output_path; /* HDF5 output; NULL for none */
    int threads;             /* 0: the model's setting, or all cores */
    double tfinal, dt;       /* [ms] override the model's when > 0 */
    const char *backend;     /* NULL: the model's ("cpu", "cuda", "auto") */
    const char *solver;      /* Hines solver variant of the GPU backend; NULL: "auto" */
    int report_bits;         /* 32 or 64: report storage; 0: the model's */
    int progress;            /* 1: show a progress line on stderr for runs longer than a second */
} cs_run_options;

typedef struct cs_sim cs_sim;

cs_status cs_sim_create(const cs_model *m, const cs_run_options *o, cs_sim **out);
/* Run to tfinal. On failure the output file is kept, marked incomplete. */
cs_status cs_sim_run(cs_sim *s);
void cs_sim_destroy(cs_sim *s);

typedef struct {
    uint64_t ncell, ncv;      /* cells, compartments (CVs, zero-area nodes included) */
    int64_t nsteps;
    double dt, tfinal;        /* [ms] */
    uint64_t nspike;
    double wall_seconds;      /* [s] the time loop */
    int threads;
    const char *backend;
    cs_profile profile;
} cs_sim_stats;

void cs_sim_get_stats(const cs_sim *s, cs_sim_stats *st);
void cs_sim_print_summary(const cs_sim *s, FILE *f);

#endif
