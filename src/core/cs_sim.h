/* A simulation: a model built into a network, driven epoch by epoch on a backend, with spikes
 * exchanged between epochs and output streamed to HDF5. */
#ifndef CS_SIM_H
#define CS_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "cs_error.h"
#include "cs_memsink.h"
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
    int keep_spikes;         /* 1: keep every spike in memory (cs_sim_memory) */
    int keep_traces;         /* 1: keep every sample row in memory (single process, or rank 0
                                gathering the samples; a parallel file gathers none) */
    size_t trace_memory_limit; /* [bytes] bound on the kept rows; 0: none */
} cs_run_options;

typedef struct cs_sim cs_sim;

cs_status cs_sim_create(const cs_model *m, const cs_run_options *o, cs_sim **out);
/* Run to tfinal. On failure the output file is kept, marked incomplete. */
cs_status cs_sim_run(cs_sim *s);
/* Run from where the simulation stands to step round(t / dt), i.e. t [ms] rounded to a whole
 * step; a later call continues from there, and the results are bitwise those of one call (the
 * epochs are cut at t; results do not depend on where epochs end). t before the current time
 * is an error; t equal to it does nothing. Past tfinal: an error when writing a file (its time
 * axis ends at tfinal) or over several ranks; otherwise tfinal moves to t. The file is closed,
 * marked complete, when the run reaches tfinal; after a failure it is kept, marked incomplete,
 * and every later call returns the failure's message. */
cs_status cs_sim_run_to(cs_sim *s, double t);
/* Show (1) or hide (0) the progress line of the next runs (rank 0 only). */
void cs_sim_set_progress(cs_sim *s, int on);
void cs_sim_destroy(cs_sim *s);

typedef struct {
    uint64_t ncell, ncv;      /* cells, compartments (CVs, zero-area nodes included) */
    int64_t nsteps;           /* planned, to tfinal */
    int64_t step;             /* done */
    double dt, tfinal;        /* [ms] */
    uint64_t nspike;
    double wall_seconds;      /* [s] the time loop */
    int threads;
    const char *backend;
    cs_profile profile;
    uint64_t nsyn, nsyn_instances; /* the cells' own (SONATA) synapses, and the mechanism
                                      instances they take after coalescing */
} cs_sim_stats;

void cs_sim_get_stats(const cs_sim *s, cs_sim_stats *st);
void cs_sim_print_summary(const cs_sim *s, FILE *f);

/* Results kept in memory (cs_run_options keep_spikes / keep_traces): spikes by global gid in
 * the order of the epochs (within one, any order); sample rows every cs_sim_sample_interval
 * from t = 0, one column per probe (cs_sim_probe_info), every probe at the finest interval of
 * the model's populations. */
const cs_memsink *cs_sim_memory(const cs_sim *s);
double cs_sim_sample_interval(const cs_sim *s); /* [ms] */

typedef struct {
    int pop;            /* population */
    int index;          /* cell within it */
    uint64_t gid;
    cs_location loc;    /* on the cell */
    uint64_t cv;        /* the compartment (element id of the report) */
    const char *variable; /* "v", "hh.m", "ina", "syn.g" (probes.variables) */
    const char *unit;   /* its unit: "mV", "1", "mA/cm2", "uS" ... */
} cs_sim_probe;
size_t cs_sim_probe_count(const cs_sim *s);
void cs_sim_probe_info(const cs_sim *s, size_t column, cs_sim_probe *p);
/* The backend and solver the run uses, in words. */
const char *cs_sim_backend_detail(const cs_sim *s);

#endif
