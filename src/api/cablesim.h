/* cablesim: the public C API. A small, stable surface over the simulator for programs and
 * language bindings (the Python package loads it with ctypes; the `cablesim` command line uses
 * it too): create a simulation from model JSON text or a file, run it to a time (resumable),
 * read its spikes, traces and profile, free it.
 *
 * Conventions
 *   - Every function that can fail returns an int status: 0 (CS_API_OK) on success, a negative
 *     cs_status code otherwise (-1 input/output, -2 malformed input, -3 invalid parameter,
 *     -4 out of memory, -5 numerical failure, -6 not supported, -7 GPU error, -8 internal).
 *     cs_api_last_error() then gives the one-line message the command line prints after
 *     "cablesim: error: " (naming the file and line, the cell or the parameter). The message
 *     is kept per thread until the next call of this API on that thread.
 *   - Handles are opaque. A handle is used by one thread at a time.
 *   - Units: times in ms, voltages in mV (as in the model format, docs/model-format.md).
 *   - Structs passed in carry their own size (set it with sizeof) so fields can be added at
 *     their end without breaking compiled callers.
 * Installed by the Python package as cablesim/include/cablesim.h beside libcablesim. */
#ifndef CABLESIM_H
#define CABLESIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CS_API_OK 0
#define CS_API_VERSION 1 /* raised on any change of this header; additions only */

typedef struct cs_simulation cs_simulation;

/* Options of a simulation; cs_simulation_options_init fills the defaults (every field 0 or
 * NULL: the model's settings). */
typedef struct {
    size_t size;               /* sizeof(cs_simulation_options) */
    const char *output_path;   /* SONATA HDF5 output; NULL: none (an existing file is overwritten) */
    int threads;               /* OpenMP threads; 0: the model's, else all cores */
    double tfinal;             /* [ms] > 0: overrides the model's run.tfinal */
    double dt;                 /* [ms] > 0: overrides the model's run.dt */
    const char *backend;       /* "cpu", "cuda", "auto"; NULL: the model's */
    const char *solver;        /* the GPU's Hines solver; NULL: "auto" */
    int report_bits;           /* 32 or 64: the file's report storage; 0: the model's */
    int progress;              /* 1: a progress line on stderr for runs longer than a second */
    int keep_spikes;           /* 1: keep spikes in memory (cs_simulation_spikes) */
    int keep_traces;           /* 1: keep every probe's samples in memory (cs_simulation_traces) */
    size_t trace_memory_limit; /* [bytes] bound on the kept samples; a run that would pass it
                                  fails before it starts; 0: no bound */
    int separate_synapses;     /* 1: every synapse its own mechanism instance; 0: a cell's synapses
                                  of one linear type (exp2syn, expsyn) at one compartment with equal
                                  parameters share one, as Arbor's coalesce_synapses (exact in real
                                  arithmetic; docs/sonata-input.md, "Synapses") */
} cs_simulation_options;

void cs_simulation_options_init(cs_simulation_options *o);

/* A simulation from a model file (path; NULL: the built-in default model, models/default.json)
 * or from model JSON text (`name` names it in messages, `base_dir` resolves its relative SWC
 * paths; NULL: "<json>" and the current directory). Builds the network and opens the output. */
int cs_simulation_create_file(const char *path, const cs_simulation_options *o, cs_simulation **out);
int cs_simulation_create_json(const char *json, const char *name, const char *base_dir,
                              const cs_simulation_options *o, cs_simulation **out);
/* Check a model without building it: 0, or the status and message creating it would give. */
int cs_model_check_file(const char *path);
int cs_model_check_json(const char *json, const char *name, const char *base_dir);
/* The output file a SONATA simulation config names (its output_dir, created, and spikes_file;
 * docs/sonata-input.md) into out[n]; "" for a cablesim model file. */
int cs_model_output_path(const char *path, char *out, size_t n);

/* Run from the current time to t [ms], rounded to a whole step (round(t/dt)·dt). Resumable:
 * running to 50 then to 100 gives bitwise the results of running to 100. t before the current
 * time is an error; equal to it, nothing happens. With an output file, t may not pass tfinal
 * (the file's time axis), and the file is closed, marked complete, when the run reaches tfinal;
 * without one, running past tfinal moves tfinal. After a failure the file (if any) is kept,
 * marked incomplete, and every later run returns the same message. */
int cs_simulation_run(cs_simulation *sim, double t);
/* Show (1) or hide (0) the progress line on stderr of the next runs (runs over a second). */
int cs_simulation_set_progress(cs_simulation *sim, int on);

/* The state and the size of the results. */
typedef struct {
    size_t size;               /* sizeof(cs_simulation_info), set by the caller */
    double time;               /* [ms] the current time: steps done × dt */
    double dt, tfinal;         /* [ms] */
    int64_t steps;             /* steps done */
    uint64_t cells, compartments;
    uint64_t spikes;           /* spikes so far (also when not kept in memory) */
    int threads;
    const char *backend;       /* "cpu" or "cuda" (what "auto" chose) */
    const char *backend_detail; /* the backend and its solver, in words */
    double wall_seconds;       /* [s] spent running */
    size_t probes;             /* columns of the traces */
    size_t trace_rows;         /* rows of the traces kept in memory */
    double sample_interval;    /* [ms] between rows of the traces */
    size_t kept_spikes;        /* spikes kept in memory */
    uint64_t synapses;         /* the cells' own synapses (a SONATA circuit's edges), all ranks */
    uint64_t synapse_instances; /* the mechanism instances they take: fewer where coalesced
                                  (cs_simulation_options.separate_synapses) */
} cs_simulation_info;
int cs_simulation_get_info(const cs_simulation *sim, cs_simulation_info *info);

/* The kept spikes, sorted by time then gid: n (<= info.kept_spikes) into gid[] and time[] [ms]. */
int cs_simulation_spikes(const cs_simulation *sim, size_t n, uint64_t *gid, double *time);
/* The cells of n gids: population[k], the name of gid[k]'s population (a model's population; a
 * SONATA config's node population, also where reports split it into several groups), and
 * index[k], its cell there (SONATA: its node id), as the output file names them. Strings live
 * as long as the simulation. A gid that is no cell of the model is an error naming it. */
int cs_simulation_cells(const cs_simulation *sim, size_t n, const uint64_t *gid, const char **population,
                        uint64_t *index);
/* The kept traces: rows [nrow × info.probes] (nrow <= info.trace_rows), each column in its
 * variable's unit (cs_probe_info: [mV] for v), row r at
 * r·info.sample_interval ms. Every probe is sampled at the finest interval of the model's
 * populations (the file keeps each population at its own interval). */
int cs_simulation_traces(const cs_simulation *sim, size_t nrow, double *rows);

/* Column j of the traces: which probe it is. Strings live as long as the simulation. */
typedef struct {
    size_t size;               /* sizeof(cs_probe_info), set by the caller */
    const char *population;    /* a model's population; a SONATA config's node population */
    int index;                 /* the cell within its population (SONATA: its node id there) */
    uint64_t gid;
    int branch;
    double pos;                /* [0, 1] along the branch */
    uint64_t cv;               /* the compartment: element id of the report */
    const char *variable;      /* what the column holds (probes.variables): "v", "hh.m", "ina", "syn.g" */
    const char *unit;          /* its unit: "mV", "1", "mA/cm2", "uS" ... */
} cs_probe_info;
int cs_simulation_probe(const cs_simulation *sim, size_t j, cs_probe_info *p);

/* The profile: the number of phases (with n >= it, names[k] [static strings], seconds[k] [s]
 * summed over threads, share[k] [0, 1] of a step are filled; any may be NULL). */
int cs_simulation_profile(const cs_simulation *sim, int n, const char **names, double *seconds,
                          double *share);

/* The summary and profile table the command line prints. */
int cs_simulation_print_summary(const cs_simulation *sim, FILE *f);

/* Free the simulation (NULL: nothing). An output file not complete yet is closed marked
 * incomplete. */
void cs_simulation_free(cs_simulation *sim);

/* The one-line message of this thread's last failure ("" when none). */
const char *cs_api_last_error(void);
/* "0.1.0". */
const char *cs_api_version(void);

/* Processes: under mpirun a program calls cs_api_init first and cs_api_finalize last (a
 * single process needs neither); cs_api_rank is this process's rank (0 alone). */
int cs_api_init(int *argc, char ***argv);
void cs_api_finalize(void);
int cs_api_rank(void);

#ifdef __cplusplus
}
#endif
#endif
