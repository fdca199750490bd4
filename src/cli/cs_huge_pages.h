/* The command line's large arrays in transparent huge pages (cs_huge_pages.c). */
#ifndef CS_HUGE_PAGES_H
#define CS_HUGE_PAGES_H

/* Starts this program again, once, with glibc's allocator asking for huge pages
 * (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), unless CABLESIM_HUGE_PAGES=0 or the variable already
 * names that tunable; returns only where it does not (then the environment is as it was). Call
 * first in main, before any thread or MPI. */
void cs_cli_huge_pages(char **argv);

#endif
