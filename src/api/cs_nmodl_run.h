/* The NMODL compiler (nmodl/cs_nmodl.py), found and run: `cablesim build-catalogue` execs it,
 * the SONATA front end runs it in a child process. */
#ifndef CS_NMODL_RUN_H
#define CS_NMODL_RUN_H

#include <stddef.h>

/* The compiler script and the mechanism headers' folder: $CABLESIM_NMODL_DIR, beside the
 * running binary or the library (PREFIX/share/cablesim/nmodl, .../include), then the source tree
 * this was built from. 0, or -1 with the message printed to stderr. */
int cs_nmodl_find(char *script, char *include, size_t n);
/* python3 (or $CABLESIM_PYTHON) script --include include argv[1..argc-1], NULL-terminated;
 * free() the array only. */
char **cs_nmodl_args(int argc, char **argv, char *script, char *include);
/* Every .mod of dir compiled into the library out, in a child process, its output captured:
 * its exit status, and when not 0 its first error line in msg. */
int cs_nmodl_build_child(const char *dir, const char *out, char *msg, size_t nmsg);

#endif
