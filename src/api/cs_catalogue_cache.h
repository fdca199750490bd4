/* A SONATA circuit's mechanisms_dir compiled into a catalogue, cached by content: the cache
 * key is a 128-bit hash of every .mod file's name and bytes (and cablesim's version), computed
 * from the sources at every load, so a cached library is only ever the build of exactly the
 * sources present now. Like NEURON's nrnivmodl output, the result is code that runs with the
 * user's rights. */
#ifndef CS_CATALOGUE_CACHE_H
#define CS_CATALOGUE_CACHE_H

#include <stddef.h>

#include "cs_error.h"

/* The catalogue of dir's .mod files (built now, or found in the cache); `config` names the file
 * that asked, in messages. Cache: $CABLESIM_CACHE_DIR, else $XDG_CACHE_HOME/cablesim/catalogues,
 * else ~/.cache/cablesim/catalogues. */
cs_status cs_catalogue_cached(const char *dir, const char *config, char *so, size_t n);

#endif
