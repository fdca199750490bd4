/* Large arrays in transparent huge pages (docs/performance.md, "Start-up and huge pages").
 *
 * A network of 41 M compartments allocates tens of GB on the host while it is built, planned and
 * set up, much of it on 16 threads at once, and each 4 KiB page's first touch is a page fault; on
 * the H200 host (Linux 6.18) those faults serialised the threads: auto's trial took 2.6-3.0 s, of
 * which the kernel's time was most. With glibc's allocator asking for huge pages (2 MiB, where the
 * system's transparent huge pages are "madvise", the usual setting) the trial took 1.8 s and the
 * process's system time fell 46 → 9 s (bench/NOTES.md, session 30). glibc reads that setting,
 * GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc 2.35 and later; older ones ignore it), only when a
 * process starts, so the command line starts itself again once with it added. */
#include "cs_huge_pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CS_TUNABLE "glibc.malloc.hugetlb"

void cs_cli_huge_pages(char **argv) {
#ifdef __linux__
    const char *off = getenv("CABLESIM_HUGE_PAGES");
    if (off && !strcmp(off, "0")) return;
    const char *was = getenv("GLIBC_TUNABLES");
    if (was && strstr(was, CS_TUNABLE)) return; /* the user's choice, or this function's, already */
    char *old = was ? strdup(was) : NULL;
    if (was && !old) return;
    char tunables[4096];
    const int n = snprintf(tunables, sizeof tunables, "%s%s" CS_TUNABLE "=1", old ? old : "", old && *old ? ":" : "");
    if (n > 0 && (size_t)n < sizeof tunables && !setenv("GLIBC_TUNABLES", tunables, 1))
        execv("/proc/self/exe", argv); /* returns only on failure */
    /* not started again (no /proc, the binary gone): on as we are, the environment as it was */
    if (old) setenv("GLIBC_TUNABLES", old, 1);
    else unsetenv("GLIBC_TUNABLES");
    free(old);
#else
    (void)argv;
#endif
}
