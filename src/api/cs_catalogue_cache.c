/* mechanisms_dir → catalogue, cached by the sources' content: see cs_catalogue_cache.h. */
#include "cs_catalogue_cache.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_fs.h"
#include "cs_nmodl_run.h"
#include "cs_mech.h"
#include "cs_version.h"

#define MAX_MODS 4096

typedef struct { uint64_t a, b; } hash128;

/* Two FNV-1a streams with different offsets and primes: 128 bits, so a collision between two
 * source sets is out of reach by accident (this is no defence against a forged cache: the
 * cache folder is the user's own). */
static void feed(hash128 *h, const void *p, size_t n) {
    const unsigned char *c = p;
    for (size_t k = 0; k < n; ++k) {
        h->a = (h->a ^ c[k]) * 0x100000001b3ull;
        h->b = (h->b ^ c[k]) * 0x00000100000001B3ull * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    }
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* bmtk's VecStim (vecevent.mod): cablesim's virtual nodes need no NEURON artificial cell for
 * their spikes, so the file (NEURON-only C in VERBATIM) is left out. */
static int is_vecstim(const char *text) { return strstr(text, "ARTIFICIAL_CELL VecStim") != NULL; }

static cs_status read_all(const char *path, char **text, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return cs_error_set(CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *text = n >= 0 && n < (64l << 20) ? malloc((size_t)n + 1) : NULL;
    if (!*text || fread(*text, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(*text);
        return cs_error_set(CS_ERR_IO, "%s: cannot read (or larger than 64 MiB)", path);
    }
    fclose(f);
    (*text)[n] = 0;
    *len = (size_t)n;
    return CS_OK;
}

/* The .mod files of dir and of dir/modfiles (bmtk's layout), sorted, VecStim left out. */
static cs_status list_mods(const char *dir, const char *config, char **paths, int *n) {
    *n = 0;
    for (int sub = 0; sub < 2; ++sub) {
        char d[4096];
        snprintf(d, sizeof d, sub ? "%s/modfiles" : "%s", dir);
        DIR *dd = opendir(d);
        if (!dd) {
            if (!sub) return cs_error_set(CS_ERR_IO, "%s: mechanisms_dir %s: cannot open: %s", config, dir, strerror(errno));
            continue;
        }
        for (struct dirent *e; (e = readdir(dd)) && *n < MAX_MODS;) {
            size_t l = strlen(e->d_name);
            if (l <= 4 || strcmp(e->d_name + l - 4, ".mod")) continue;
            char *p = malloc(strlen(d) + l + 2);
            if (!p) break;
            sprintf(p, "%s/%s", d, e->d_name);
            paths[(*n)++] = p;
        }
        closedir(dd);
    }
    if (*n) qsort(paths, (size_t)*n, sizeof *paths, cmp_str);
    return CS_OK;
}

/* Hash the kept sources and copy them into stage (a fresh folder), or only count them when
 * stage is NULL. */
static cs_status hash_mods(char **paths, int n, hash128 *h, const char *stage, int *kept) {
    const int abi = CS_MECH_ABI_VERSION;
    *h = (hash128){0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
    feed(h, CS_VERSION_STRING, sizeof CS_VERSION_STRING);
    feed(h, &abi, sizeof abi);
    feed(h, CS_NMODL_DIGEST, sizeof CS_NMODL_DIGEST); /* a new compiler compiles again */
    *kept = 0;
    for (int k = 0; k < n; ++k) {
        char *text = NULL;
        size_t len = 0;
        CS_TRY(read_all(paths[k], &text, &len));
        if (is_vecstim(text)) {
            free(text);
            continue;
        }
        const char *base = strrchr(paths[k], '/') ? strrchr(paths[k], '/') + 1 : paths[k];
        feed(h, base, strlen(base) + 1);
        feed(h, text, len + 1);
        ++*kept;
        if (stage) {
            char out[4200];
            snprintf(out, sizeof out, "%s/%s", stage, base);
            FILE *f = fopen(out, "wb");
            int ok = f && fwrite(text, 1, len, f) == len;
            if (f && fclose(f)) ok = 0;
            if (!ok) {
                free(text);
                return cs_error_set(CS_ERR_IO, "%s: cannot write: %s", out, strerror(errno));
            }
        }
        free(text);
    }
    return CS_OK;
}

static cs_status cache_dir(char *out, size_t n) {
    const char *env = getenv("CABLESIM_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && *env) snprintf(out, n, "%s", env);
    else if (xdg && *xdg) snprintf(out, n, "%s/cablesim/catalogues", xdg);
    else if (home && *home) snprintf(out, n, "%s/.cache/cablesim/catalogues", home);
    else return cs_error_set(CS_ERR_IO, "no cache folder for compiled mechanisms: set CABLESIM_CACHE_DIR");
    return cs_make_dirs(out, 0700);
}

cs_status cs_catalogue_cached(const char *dir, const char *config, char *so, size_t n) {
    so[0] = 0;
    char *paths[MAX_MODS];
    int np = 0, kept = 0;
    CS_TRY(list_mods(dir, config, paths, &np));
    hash128 h;
    cs_status st = hash_mods(paths, np, &h, NULL, &kept);
    char cache[4096], stage[4200] = "";
    if (st == CS_OK && kept) st = cache_dir(cache, sizeof cache);
    if (st == CS_OK && kept) {
        snprintf(so, n, "%s/%016" PRIx64 "%016" PRIx64 ".so", cache, h.a, h.b);
        if (access(so, R_OK) != 0) {
            /* the kept sources, copied (and hashed again: what is compiled is what was hashed),
             * built beside, then renamed: a concurrent run never sees half a library */
            snprintf(stage, sizeof stage, "%s/build.%ld", cache, (long)getpid());
            hash128 h2;
            if (mkdir(stage, 0700) && errno != EEXIST)
                st = cs_error_set(CS_ERR_IO, "%s: cannot create: %s", stage, strerror(errno));
            if (st == CS_OK) st = hash_mods(paths, np, &h2, stage, &kept);
            if (st == CS_OK && (h2.a != h.a || h2.b != h.b))
                st = cs_error_set(CS_ERR_IO, "%s: mechanisms_dir %s changed while it was read", config, dir);
            char tmp[4300];
            snprintf(tmp, sizeof tmp, "%s.%ld.tmp.so", so, (long)getpid());
            char msg[1024];
            if (st == CS_OK && cs_nmodl_build_child(stage, tmp, msg, sizeof msg) != 0) {
                remove(tmp);
                /* the compiler names the staged copy: name the file it copies instead */
                const char *at = strstr(msg, stage), *base = at ? at + strlen(stage) + 1 : msg;
                const char *orig = NULL;
                for (int k = 0; at && k < np && !orig; ++k) {
                    const char *b = strrchr(paths[k], '/') + 1;
                    if (!strncmp(base, b, strlen(b))) orig = paths[k];
                }
                if (orig) st = cs_error_set(CS_ERR_PARSE, "%s: mechanisms_dir: %s%s", config, orig, base + strlen(strrchr(orig, '/') + 1));
                else st = cs_error_set(CS_ERR_PARSE, "%s: mechanisms_dir %s: %s", config, dir, msg);
            } else if (st == CS_OK && rename(tmp, so) != 0) {
                remove(tmp);
                st = cs_error_set(CS_ERR_IO, "%s: cannot write: %s", so, strerror(errno));
            }
        }
    }
    if (stage[0]) { /* the staged copies */
        for (int k = 0; k < np; ++k) {
            const char *base = strrchr(paths[k], '/') + 1;
            char p[4400];
            snprintf(p, sizeof p, "%s/%s", stage, base);
            remove(p);
        }
        rmdir(stage);
    }
    for (int k = 0; k < np; ++k) free(paths[k]);
    if (st != CS_OK) so[0] = 0;
    return st;
}
