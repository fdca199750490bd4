/* Wisdom: `auto`'s measured choices kept on disk, as FFTW keeps its wisdom, so that the trial of
 * the candidates (seconds to tens of seconds on large networks) runs once per network shape and
 * machine, not once per run.
 *
 * An entry is keyed by a 64-bit hash of what the timing depends on: the network's shape (every
 * cell's tree, every mechanism instance's type and place, detectors, probes), the run's threads
 * and sampling, the trial's length and candidates, the GPU (name, UUID, driver), the CPU model and
 * this build. Parameter values are not in the key: they do not change a step's work.
 *
 * The file (CABLESIM_WISDOM, else $XDG_CACHE_HOME/cablesim/wisdom, else
 * ~/.cache/cablesim/wisdom; CABLESIM_WISDOM=off: none) holds one line per choice:
 *   cablesim-wisdom-1 KEY BACKEND SOLVER PER_STEP_S TRIAL_S
 * It is a cache: a line that does not parse is skipped with one warning naming FILE:LINE, and a
 * file that cannot be read or written costs a new trial, never the run. A run's results do not
 * depend on it: they are those of the chosen candidate named explicitly, bit for bit. */
#ifndef CS_WISDOM_H
#define CS_WISDOM_H

#include <stddef.h>
#include <stdint.h>

#include "cs_backend.h"

typedef struct {
    char backend[16];  /* "cpu" or "cuda" */
    char solver[32];   /* the GPU solver, "-" on the CPU */
    double per_step;   /* [s] the winner's trial time per step */
    double trial;      /* [s] what the trial cost when it ran */
} cs_wisdom_entry;

/* The key of a choice between `backend` ("auto" or "cuda") candidates, p->solver's ("auto" when
 * NULL), on this network. */
uint64_t cs_wisdom_key(const cs_network_desc *net, const cs_backend_params *p, const char *backend,
                       int trial_steps);

/* The wisdom file's path into buf, or 0 when wisdom is off (CABLESIM_WISDOM=off) or no home. */
int cs_wisdom_path(char *buf, size_t len);

/* The last entry of `key` in text[0, len) (a wisdom file's contents); 1 found, 0 not. Malformed
 * lines are skipped; the first is reported through *bad_line (its line number, else 0). */
int cs_wisdom_find(const char *text, size_t len, uint64_t key, cs_wisdom_entry *out, int *bad_line);

/* Look key up in the wisdom file; 1 found. A malformed line warns once on stderr. */
int cs_wisdom_lookup(uint64_t key, cs_wisdom_entry *out, char *path, size_t path_len);

/* Append an entry (one write, O_APPEND: concurrent runs do not interleave lines). A failure warns
 * on stderr and is otherwise ignored. */
void cs_wisdom_store(uint64_t key, const cs_wisdom_entry *e);

#endif
