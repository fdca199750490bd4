/* Running the NMODL compiler (nmodl/cs_nmodl.py): where it is, and a build in a child
 * process (the SONATA front end compiles a circuit's mechanisms_dir: cs_catalogue_cache.c). */
#define _GNU_SOURCE /* dladdr */
#include "cs_nmodl_run.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int is_file(const char *p) { return access(p, R_OK) == 0; }

/* The compiler script and the headers' folder; 0, or -1 with the message printed. */
int cs_nmodl_find(char *script, char *include, size_t n) {
    script[0] = include[0] = '\0';
    const char *env = getenv("CABLESIM_NMODL_DIR");
    if (env && *env) {
        snprintf(script, n, "%s/cs_nmodl.py", env);
        snprintf(include, n, "%s/include", env);
        if (!is_file(script)) {
            fprintf(stderr, "cablesim: error: CABLESIM_NMODL_DIR=%s: no cs_nmodl.py there\n", env);
            return -1;
        }
    }
    if (!script[0]) {
        char exe[PATH_MAX];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k > 0) {
            exe[k] = '\0';
            char *slash = strrchr(exe, '/');
            if (slash) *slash = '\0';
            snprintf(script, n, "%s/../share/cablesim/nmodl/cs_nmodl.py", exe);
            snprintf(include, n, "%s/../share/cablesim/include", exe);
            if (!is_file(script)) script[0] = '\0';
        }
    }
    Dl_info info;
    if (!script[0] && dladdr((void *)cs_nmodl_find, &info) && info.dli_fname) {
        char lib[PATH_MAX];
        snprintf(lib, sizeof lib, "%s", info.dli_fname);
        char *slash = strrchr(lib, '/');
        if (slash) *slash = '\0';
        snprintf(script, n, "%s/../share/cablesim/nmodl/cs_nmodl.py", slash ? lib : ".");
        snprintf(include, n, "%s/../share/cablesim/include", slash ? lib : ".");
        if (!is_file(script)) script[0] = '\0';
    }
#ifdef CS_SOURCE_DIR
    if (!script[0]) {
        snprintf(script, n, "%s/nmodl/cs_nmodl.py", CS_SOURCE_DIR);
        snprintf(include, n, "%s/mechanisms", CS_SOURCE_DIR);
    }
#endif
    if (!script[0] || !is_file(script)) {
        fprintf(stderr, "cablesim: error: the NMODL compiler (nmodl/cs_nmodl.py) was not found; set CABLESIM_NMODL_DIR\n");
        return -1;
    }
    return 0;
}

/* python3 cs_nmodl.py --include INCLUDE args... as a NULL-terminated list (args[0..4] static). */
char **cs_nmodl_args(int argc, char **argv, char *script, char *include) {
    const char *py = getenv("CABLESIM_PYTHON");
    if (!py || !*py) py = "python3";
    char **args = calloc((size_t)argc + 6, sizeof *args);
    if (!args) return NULL;
    int k = 0;
    args[k++] = (char *)py;
    args[k++] = script;
    args[k++] = "--include";
    args[k++] = include;
    for (int j = 1; j < argc; ++j) args[k++] = argv[j];
    return args;
}

int cs_nmodl_build_child(const char *dir, const char *out, char *msg, size_t nmsg) {
    char script[PATH_MAX + 64], include[PATH_MAX + 64];
    msg[0] = '\0';
    if (cs_nmodl_find(script, include, sizeof script)) return 1;
    char *argv[] = {"build-catalogue", (char *)dir, "-o", (char *)out, NULL};
    char **args = cs_nmodl_args(4, argv, script, include);
    int fd[2];
    if (!args || pipe(fd)) {
        free(args);
        snprintf(msg, nmsg, "cannot start the NMODL compiler");
        return 1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) { /* the compiler's output, chatter and errors, into the pipe */
        close(fd[0]);
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        execvp(args[0], args);
        fprintf(stderr, "cablesim: error: cannot run %s: %s\n", args[0], strerror(errno));
        _exit(127);
    }
    free(args);
    close(fd[1]);
    char buf[65536];
    size_t n = 0;
    for (ssize_t r; (r = read(fd[0], buf + n, sizeof buf - 1 - n)) > 0;) n += (size_t)r;
    close(fd[0]);
    buf[n] = '\0';
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) status = 1 << 8;
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (rc) { /* its first error line, or its last line */
        const char *line = strstr(buf, "error: ");
        line = line ? line + 7 : buf;
        size_t k = strcspn(line, "\n");
        snprintf(msg, nmsg, "%.*s", (int)k, line);
    }
    return rc;
}
