/* The model readers' front door: a cablesim model file or a SONATA simulation config, told
 * apart by content (docs/sonata-input.md). A SONATA circuit's mechanisms_dir is compiled into
 * a catalogue first, cached by the content of its .mod files (cs_front_catalogue). */
#ifndef CS_FRONT_H
#define CS_FRONT_H

#include <stddef.h>

#include "cs_model.h"

/* Read a model file or a SONATA simulation config into m. */
cs_status cs_front_load(const char *path, cs_model *m);
/* The output file a SONATA config names (output_dir/spikes_file), its folder created; "" for
 * a cablesim model file. */
cs_status cs_front_output(const char *path, char *out, size_t n);

#endif
