/* `cablesim build-catalogue DIR -o NAME.so [--cuda auto|on|off] [--keep DIR]`: runs the NMODL
 * compiler (nmodl/cs_nmodl.py, Python standard library only) with the mechanism ABI's headers,
 * found by cs_nmodl_find (src/api/cs_nmodl_run.h). */
#include "cs_catalogue_build.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_nmodl_run.h"

int cs_catalogue_build_main(int argc, char **argv) {
    char script[PATH_MAX + 64], include[PATH_MAX + 64];
    if (cs_nmodl_find(script, include, sizeof script)) return 1;
    char **args = cs_nmodl_args(argc, argv, script, include);
    if (!args) return 1;
    fflush(stdout);
    execvp(args[0], args);
    fprintf(stderr, "cablesim: error: build-catalogue: cannot run %s: %s\n", args[0], strerror(errno));
    free(args);
    return 1;
}

