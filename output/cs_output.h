/* Simulation output: one HDF5 file in the SONATA layout (spikes + voltage report), plus the
 * run's metadata and per-phase profile. Written incrementally, epoch by epoch, and flushed so a
 * run that dies leaves a readable file; the root attribute `status` reads "incomplete" until
 * cs_output_close(..., complete=1) sets it to "complete".
 *
 * Layout:
 *   /spikes/<pop>/timestamps   float64 [n]  attr units="ms"      (group attr sorting: HDF5 enum
 *                              of uint8 {none=0, by_id=1, by_time=2} = by_time; libsonata needs
 *                              the enum, not a string)
 *   /spikes/<pop>/node_ids     uint64  [n]
 *   /report/<pop>/data         float32 [n_times × n_elements]  attr units="mV"
 *   /report/<pop>/mapping/{node_ids uint64 [n_nodes], index_pointers uint64 [n_nodes+1],
 *                          element_ids uint32 [n_elements], time float64 [3] = tstart,tstop,dt (attr units="ms")}
 *   /report/<pop>/<variable>/{data, mapping/...}  the same for another probed variable ("hh.m",
 *                          "ina"), data's units its own (cs_output_add_variable_report)
 *   /metadata (group, attributes: name -> string or double)
 *   /profile/{phase (strings), seconds float64, share float64}
 * The time axis is [tstart, tstop) as in SONATA: row k is at tstart + k*dt, tstop excluded.
 * While the file is incomplete, mapping/time describes the rows flushed so far.
 * See docs/output-format.md.
 */
#ifndef CS_OUTPUT_H
#define CS_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "cs_error.h"

typedef struct cs_output cs_output;

/* Create (truncate) the file. An unwritable path gives CS_ERR_IO naming the path. */
cs_status cs_output_open(const char *path, cs_output **out);

/* Create (truncate) one file written by every rank of an MPI communicator (`comm` points to
 * an MPI_Comm; it is duplicated) through parallel HDF5. Collective: every later call on it is
 * collective too, with the same arguments on every rank, except that
 *   - cs_output_append_spikes: every rank passes the same spikes; each writes a share of them;
 *   - cs_output_append_columns_d: each rank passes the report columns it holds;
 *   - metadata values, the profile and the mapping datasets of cs_output_add_report are
 *     taken from rank 0.
 * Every rank returns the same status. The profile (variable-length strings, which HDF5 1.10
 * cannot write in parallel) and `status` = "complete" are added by rank 0 alone after the
 * collective close, so the file reads exactly as a serial one. CS_ERR_UNSUPPORTED when this
 * build has no MPI or its HDF5 is not parallel. */
cs_status cs_output_open_parallel(const char *path, const void *comm, cs_output **out);

/* Declare a spike population (must precede cs_output_append_spikes for it). */
cs_status cs_output_add_spike_population(cs_output *o, const char *population);
/* Declare a voltage report for a population: n_nodes cells (node_ids), cell k owning elements
 * [index_pointers[k], index_pointers[k+1]); element_ids name the CV of each element. Times
 * tstart..tstop [ms] every dt [ms]. */
cs_status cs_output_add_report(cs_output *o, const char *population, size_t n_nodes,
                               const uint64_t *node_ids, const uint64_t *index_pointers,
                               const uint32_t *element_ids, double tstart, double tstop, double dt);

/* The same for another variable of the population's probes (variable NULL: the voltage, as
 * above): /report/<population>/<variable>/{data, mapping}, data's attribute units = `units`.
 * Its samples are appended under the name "<population>/<variable>". */
cs_status cs_output_add_variable_report(cs_output *o, const char *population, const char *variable,
                                        const char *units, size_t n_nodes, const uint64_t *node_ids,
                                        const uint64_t *index_pointers, const uint32_t *element_ids, double tstart,
                                        double tstop, double dt);

/* After the file is closed: every population's spikes sorted by node id, then time, in place,
 * `sorting` by_id (SONATA's spikes_sort_order "id"; cs_output_sort.c). One process. */
cs_status cs_output_sort_spikes_by_id(const char *path);

/* Append spikes (times [ms], node ids within the population). */
cs_status cs_output_append_spikes(cs_output *o, const char *population, size_t n,
                                  const double *times, const uint64_t *node_ids);
/* Append n_times rows of samples [mV], row-major [n_times × n_elements] of that report.
 * Appending more rows than the time axis holds is CS_ERR_INVALID. */
cs_status cs_output_append_samples(cs_output *o, const char *population, size_t n_times,
                                   const float *rows);

/* The same from rows in double precision (converted to the report's storage type). */
cs_status cs_output_append_samples_d(cs_output *o, const char *population, size_t n_times,
                                     const double *rows);
/* Append n_times rows of which the caller fills the columns cols[0..ncols) (ascending):
 * rows is [n_times × ncols] [mV]. On a parallel file every rank calls it with the same
 * n_times and its own columns (ncols may be 0); together they fill every column. In a serial
 * file the columns not given keep the fill value 0. */
cs_status cs_output_append_columns_d(cs_output *o, const char *population, size_t n_times, size_t ncols,
                                     const uint64_t *cols, const double *rows);
/* Storage of reports declared from now on: 32 (float32, SONATA's default) or 64 bits
 * (float64, for comparisons finer than float32 resolves). */
cs_status cs_output_set_report_precision(cs_output *o, int bits);

/* Metadata attributes under /metadata. */
cs_status cs_output_set_meta_string(cs_output *o, const char *name, const char *value);
cs_status cs_output_set_meta_double(cs_output *o, const char *name, double value);

/* Per-phase profile: names, seconds, and the share of a step [0..1] of each phase. */
cs_status cs_output_write_profile(cs_output *o, size_t nphase, const char *const *names,
                                  const double *seconds, const double *share);

/* Make everything appended so far durable and readable by another process (H5Fflush). */
cs_status cs_output_flush(cs_output *o);

/* Close. complete=1 marks the file complete; 0 leaves it marked incomplete (a failed run).
 * complete=1 with a report short of its time axis, or after a failed write, is an error and
 * leaves the file incomplete. Always releases o, even on error; o == NULL is a no-op. */
cs_status cs_output_close(cs_output *o, int complete);

#endif
