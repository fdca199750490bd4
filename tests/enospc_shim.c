/* LD_PRELOAD shim for tests/test_output_enospc.py: a disk that fills up.
 *
 * Files whose path ends in $CS_ENOSPC_SUFFIX (default ".h5") may grow by $CS_ENOSPC_AFTER
 * bytes in total; then the disk is full, as a real (non copy-on-write) file system is: a
 * write that would grow a file past the budget is cut short, and the next fails with ENOSPC;
 * posix_fallocate beyond it fails with ENOSPC; writes inside a file's current size (space
 * already allocated) still succeed. Other descriptors (stderr, the model file) are untouched,
 * so error messages still get out. Without CS_ENOSPC_AFTER the shim does nothing.
 *
 * HDF5's default (sec2) driver writes with pwrite; write and pwrite64 are covered too in case
 * a build uses them. Not usable under AddressSanitizer, which intercepts the same calls. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static long long cs__budget = -2; /* [bytes] left; -1: no limit; -2: not read yet */

static long long cs__left(void) {
    if (cs__budget == -2) {
        const char *s = getenv("CS_ENOSPC_AFTER");
        cs__budget = s && *s ? atoll(s) : -1;
    }
    return cs__budget;
}

/* Is fd a file whose path ends in the suffix under test? */
static int cs__watched(int fd) {
    if (fd <= 2) return 0;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = '\0';
    const char *suffix = getenv("CS_ENOSPC_SUFFIX");
    if (!suffix || !*suffix) suffix = ".h5";
    size_t ls = strlen(suffix);
    return (size_t)n >= ls && strcmp(path + n - ls, suffix) == 0;
}

/* How many of `count` bytes written at `offset` (-1: the current position) may go to fd;
 * -1 with errno = ENOSPC once the budget is spent. */
static ssize_t cs__allow(int fd, size_t count, off_t offset) {
    if (count == 0 || cs__left() < 0 || !cs__watched(fd)) return (ssize_t)count;
    struct stat st;
    if (fstat(fd, &st) != 0) return (ssize_t)count;
    if (offset < 0) offset = lseek(fd, 0, SEEK_CUR);
    long long end = (long long)offset + (long long)count;
    long long grow = end - (long long)st.st_size; /* [bytes] new space this write needs */
    if (grow <= 0) return (ssize_t)count;
    if (grow > cs__budget) {
        long long fits = (long long)count - (grow - cs__budget);
        if (fits <= 0) {
            errno = ENOSPC;
            return -1;
        }
        count = (size_t)fits;
        grow = cs__budget;
    }
    cs__budget -= grow;
    return (ssize_t)count;
}

/* Reserving space counts against the budget like writing it. */
static int cs__allow_reserve(int fd, off_t offset, off_t len) {
    if (cs__left() < 0 || !cs__watched(fd)) return 0;
    struct stat st;
    if (fstat(fd, &st) != 0) return 0;
    long long grow = (long long)offset + (long long)len - (long long)st.st_size;
    if (grow <= 0) return 0;
    if (grow > cs__budget) return ENOSPC;
    cs__budget -= grow;
    return 0;
}

typedef ssize_t (*cs__write_fn)(int, const void *, size_t);
typedef ssize_t (*cs__pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*cs__pwrite64_fn)(int, const void *, size_t, off64_t);
typedef int (*cs__fallocate_fn)(int, off_t, off_t);
typedef int (*cs__fallocate64_fn)(int, off64_t, off64_t);

ssize_t write(int fd, const void *buf, size_t count) {
    static cs__write_fn real;
    if (!real) real = (cs__write_fn)dlsym(RTLD_NEXT, "write");
    ssize_t n = cs__allow(fd, count, -1);
    return n < 0 ? -1 : real(fd, buf, (size_t)n);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    static cs__pwrite_fn real;
    if (!real) real = (cs__pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
    ssize_t n = cs__allow(fd, count, (off_t)offset);
    return n < 0 ? -1 : real(fd, buf, (size_t)n, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t offset) {
    static cs__pwrite64_fn real;
    if (!real) real = (cs__pwrite64_fn)dlsym(RTLD_NEXT, "pwrite64");
    ssize_t n = cs__allow(fd, count, (off_t)offset);
    return n < 0 ? -1 : real(fd, buf, (size_t)n, offset);
}

int posix_fallocate(int fd, off_t offset, off_t len) {
    static cs__fallocate_fn real;
    if (!real) real = (cs__fallocate_fn)dlsym(RTLD_NEXT, "posix_fallocate");
    int e = cs__allow_reserve(fd, offset, len);
    return e ? e : real(fd, offset, len);
}

int posix_fallocate64(int fd, off64_t offset, off64_t len) {
    static cs__fallocate64_fn real;
    if (!real) real = (cs__fallocate64_fn)dlsym(RTLD_NEXT, "posix_fallocate64");
    int e = cs__allow_reserve(fd, (off_t)offset, (off_t)len);
    return e ? e : real(fd, offset, len);
}
