/* Small file-system helpers every layer may use. */
#ifndef CS_FS_H
#define CS_FS_H

#include <sys/types.h>

#include "cs_error.h"

/* mkdir -p: `dir` and each missing folder above it, with `mode`; CS_OK when they exist, else a
 * one-line error naming the folder that could not be made. */
cs_status cs_make_dirs(const char *dir, mode_t mode);

#endif
