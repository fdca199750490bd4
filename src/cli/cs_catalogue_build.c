/* `cablesim build-catalogue DIR -o NAME.so [--cuda auto|on|off] [--keep DIR]`: runs the NMODL
 * compiler (nmodl/cs_nmodl.py, Python standard library only) with the mechanism ABI's headers.
 * The compiler is looked for in $CABLESIM_NMODL_DIR, next to the installed binary
 * (PREFIX/share/cablesim/nmodl, headers in PREFIX/share/cablesim/include), then in the source
 * tree this binary was built from. */
#include "cs_catalogue_build.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_file(const char *p) { return access(p, R_OK) == 0; }

int cs_catalogue_build_main(int argc, char **argv) {
    char script[PATH_MAX + 64] = "", include[PATH_MAX + 64] = "";
    const char *env = getenv("CABLESIM_NMODL_DIR");
    if (env && *env) {
        snprintf(script, sizeof script, "%s/cs_nmodl.py", env);
        snprintf(include, sizeof include, "%s/include", env);
        if (!is_file(script)) {
            fprintf(stderr, "cablesim: error: CABLESIM_NMODL_DIR=%s: no cs_nmodl.py there\n", env);
            return 1;
        }
    }
    if (!script[0]) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n] = '\0';
            char *slash = strrchr(exe, '/');
            if (slash) *slash = '\0';
            snprintf(script, sizeof script, "%s/../share/cablesim/nmodl/cs_nmodl.py", exe);
            snprintf(include, sizeof include, "%s/../share/cablesim/include", exe);
            if (!is_file(script)) script[0] = '\0';
        }
    }
#ifdef CS_SOURCE_DIR
    if (!script[0]) {
        snprintf(script, sizeof script, "%s/nmodl/cs_nmodl.py", CS_SOURCE_DIR);
        snprintf(include, sizeof include, "%s/mechanisms", CS_SOURCE_DIR);
    }
#endif
    if (!script[0] || !is_file(script)) {
        fprintf(stderr, "cablesim: error: the NMODL compiler (nmodl/cs_nmodl.py) was not found; set CABLESIM_NMODL_DIR\n");
        return 1;
    }
    const char *py = getenv("CABLESIM_PYTHON");
    if (!py || !*py) py = "python3";
    char **args = calloc((size_t)argc + 6, sizeof *args);
    if (!args) return 1;
    int k = 0;
    args[k++] = (char *)py;
    args[k++] = script;
    args[k++] = "--include";
    args[k++] = include;
    for (int j = 1; j < argc; ++j) args[k++] = argv[j];
    args[k] = NULL;
    fflush(stdout);
    execvp(py, args);
    fprintf(stderr, "cablesim: error: build-catalogue: cannot run %s: %s\n", py, strerror(errno));
    free(args);
    return 1;
}
