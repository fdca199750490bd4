/* Small file-system helpers (cs_fs.h). */
#include "cs_fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

cs_status cs_make_dirs(const char *dir, mode_t mode) {
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return cs_error_set(CS_ERR_IO, "%.200s...: path too long", dir);
    if (!p[0]) return CS_OK;
    for (char *s = p + 1;; ++s) {
        if (*s != '/' && *s) continue;
        const char c = *s;
        *s = 0;
        if (mkdir(p, mode) && errno != EEXIST) return cs_error_set(CS_ERR_IO, "%s: cannot create: %s", p, strerror(errno));
        if (!c) return CS_OK;
        *s = c;
    }
}
