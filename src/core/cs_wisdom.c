/* Wisdom: auto's measured choices on disk (cs_wisdom.h). */
#include "cs_wisdom.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_fs.h"
#include "cs_version.h"

#define CS_WISDOM_TAG "cablesim-wisdom-1"
#define CS_WISDOM_BLOCK 4096 /* geometries or instances a block of the key's hash */
#define CS_WISDOM_MAX_BYTES (64u << 20) /* a larger file is not read: a new trial instead */

/* FNV-1a, 64 bits, byte by byte (strings) */
static uint64_t mix(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
static uint64_t mix_str(uint64_t h, const char *s) { return mix(h, s, strlen(s) + 1); }
/* A 64-bit word at once (FNV's step, then its high bits folded down): the network's arrays in an
 * eighth of FNV's steps over their bytes, which took 0.23-0.3 s of auto's trial at 16 M
 * compartments and 12 M instances. */
static uint64_t mix_u64(uint64_t h, uint64_t x) {
    h = (h ^ x) * 0x100000001b3ull;
    return h ^ (h >> 29);
}
/* n ints, two a word */
static uint64_t mix_ints(uint64_t h, const int *a, size_t n) {
    size_t i = 0;
    for (; i + 1 < n; i += 2) h = mix_u64(h, (uint64_t)(uint32_t)a[i] | (uint64_t)(uint32_t)a[i + 1] << 32);
    return i < n ? mix_u64(h, (uint32_t)a[i]) : h;
}

/* The CPU's model name (first "model name" line of /proc/cpuinfo), or "". */
static void cpu_model(char *buf, size_t len) {
    buf[0] = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            const char *c = strchr(line, ':');
            snprintf(buf, len, "%s", c ? c + 1 : line);
            break;
        }
    fclose(f);
}

uint64_t cs_wisdom_key(const cs_network_desc *net, const cs_backend_params *p, const char *backend,
                       int trial_steps) {
    uint64_t h = 0xcbf29ce484222325ull;
    /* this build, the machine */
    h = mix_str(h, CS_VERSION_STRING " " __DATE__ " " __TIME__);
    char id[512];
    cs_backend_cuda_identity(p->device, id, sizeof id);
    h = mix_str(h, id);
    cpu_model(id, sizeof id);
    h = mix_str(h, id);
    /* the choice asked for and the run's settings that change a step's work */
    h = mix_str(h, backend);
    h = mix_str(h, p->solver ? p->solver : "auto");
    h = mix_u64(h, (uint64_t)trial_steps);
    h = mix_u64(h, (uint64_t)p->threads);
    h = mix_u64(h, (uint64_t)p->sample_stride);
    /* the network's shape */
    h = mix_u64(h, net->ncell);
    h = mix_u64(h, net->total_cv);
    h = mix_u64(h, (uint64_t)net->ngeom);
    /* the long arrays in fixed blocks hashed on threads, then the blocks' hashes in order: the
     * same key whatever the threads (0.26 s of one core at 41 M compartments, 35 M instances) */
    const size_t nblk_geom = ((size_t)net->ngeom + CS_WISDOM_BLOCK - 1) / CS_WISDOM_BLOCK;
    const size_t nblk_inst = (net->ninst + CS_WISDOM_BLOCK - 1) / CS_WISDOM_BLOCK;
    uint64_t *blk = malloc((nblk_geom + nblk_inst + 1) * sizeof *blk);
    if (!blk) return 0; /* no key: never found, so a trial (cs_wisdom.h) */
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t b = 0; b < nblk_geom + nblk_inst; ++b) {
        uint64_t hb = 0xcbf29ce484222325ull;
        if (b < nblk_geom) { /* each geometry's CVs and parents */
            const size_t hi = (b + 1) * CS_WISDOM_BLOCK < (size_t)net->ngeom ? (b + 1) * CS_WISDOM_BLOCK : (size_t)net->ngeom;
            for (size_t g = b * CS_WISDOM_BLOCK; g < hi; ++g) {
                hb = mix_u64(hb, (uint64_t)net->geoms[g].ncv);
                hb = mix_ints(hb, net->geoms[g].parent, (size_t)net->geoms[g].ncv);
            }
        } else { /* the instances: type, cell and CV; the types come in runs, each name hashed once a run */
            const size_t lo = (b - nblk_geom) * CS_WISDOM_BLOCK;
            const size_t hi = lo + CS_WISDOM_BLOCK < net->ninst ? lo + CS_WISDOM_BLOCK : net->ninst;
            const cs_mech_type *type = NULL;
            uint64_t name = 0;
            for (size_t i = lo; i < hi; ++i) {
                const cs_instance_desc *in = &net->inst[i];
                if (in->type != type) name = mix_str(0xcbf29ce484222325ull, (type = in->type)->name);
                hb = mix_u64(hb, name);
                hb = mix_u64(hb, ((uint64_t)(uint32_t)in->cell << 32) | (uint32_t)in->node);
            }
        }
        blk[b] = hb;
    }
    for (size_t b = 0; b < nblk_geom + nblk_inst; ++b) h = mix_u64(h, blk[b]);
    free(blk);
    for (size_t c = 0; c < net->ncell; ++c) h = mix_u64(h, (uint64_t)(net->cells[c].geom - net->geoms));
    for (size_t d = 0; d < net->ndet; ++d)
        h = mix_u64(h, ((uint64_t)(uint32_t)net->det[d].cell << 32) | (uint32_t)net->det[d].node);
    h = mix_u64(h, net->nprobe);
    for (size_t q = 0; q < net->nprobe; ++q)
        h = mix_u64(h, ((uint64_t)net->probes[q].kind << 48) ^ ((uint64_t)(uint32_t)net->probes[q].cell << 16) ^
                           (uint64_t)(uint32_t)net->probes[q].node);
    return h;
}

int cs_wisdom_path(char *buf, size_t len) {
    const char *env = getenv("CABLESIM_WISDOM");
    if (env && !strcmp(env, "off")) return 0;
    if (env && *env) return snprintf(buf, len, "%s", env) < (int)len;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg) return snprintf(buf, len, "%s/cablesim/wisdom", xdg) < (int)len;
    if (home && *home) return snprintf(buf, len, "%s/.cache/cablesim/wisdom", home) < (int)len;
    return 0;
}

/* One line: the tag, the key, backend, solver, two finite non-negative times; 1 when it parses. */
static int parse_line(const char *line, uint64_t *key, cs_wisdom_entry *e) {
    char tag[24], backend[16], solver[32];
    uint64_t k;
    double per_step, trial;
    int used = 0;
    if (sscanf(line, "%23s %" SCNx64 " %15s %31s %lf %lf %n", tag, &k, backend, solver, &per_step, &trial, &used) != 6)
        return 0;
    if (strcmp(tag, CS_WISDOM_TAG) || line[used] != 0) return 0;
    if (strcmp(backend, "cpu") && strcmp(backend, "cuda")) return 0;
    if (!(per_step > 0 && per_step < 1e9) || !(trial >= 0 && trial < 1e9)) return 0; /* also NaN */
    *key = k;
    snprintf(e->backend, sizeof e->backend, "%s", backend);
    snprintf(e->solver, sizeof e->solver, "%s", solver);
    e->per_step = per_step;
    e->trial = trial;
    return 1;
}

int cs_wisdom_find(const char *text, size_t len, uint64_t key, cs_wisdom_entry *out, int *bad_line) {
    int found = 0, lineno = 0;
    *bad_line = 0;
    char line[256];
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && text[j] != '\n') ++j;
        ++lineno;
        const size_t n = j - i;
        uint64_t k;
        cs_wisdom_entry e;
        if (n > 0) {
            int ok = n < sizeof line && !memchr(text + i, 0, n);
            if (ok) {
                memcpy(line, text + i, n);
                line[n] = 0;
                ok = parse_line(line, &k, &e);
            }
            if (!ok && !*bad_line) *bad_line = lineno;
            if (ok && k == key) { /* the last one wins: a later trial replaces an earlier */
                *out = e;
                found = 1;
            }
        }
        i = j + 1;
    }
    return found;
}

int cs_wisdom_lookup(uint64_t key, cs_wisdom_entry *out, char *path, size_t path_len) {
    if (!cs_wisdom_path(path, path_len)) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0; /* none yet */
    char *text = malloc(CS_WISDOM_MAX_BYTES);
    size_t n = text ? fread(text, 1, CS_WISDOM_MAX_BYTES, f) : 0;
    fclose(f);
    int bad = 0, found = text ? cs_wisdom_find(text, n, key, out, &bad) : 0;
    free(text);
    if (bad) fprintf(stderr, "cablesim: warning: %s:%d: not a wisdom line; skipped (CABLESIM_WISDOM, docs/gpu.md)\n", path, bad);
    return found;
}

void cs_wisdom_store(uint64_t key, const cs_wisdom_entry *e) {
    char path[4096], line[256];
    if (!cs_wisdom_path(path, sizeof path)) return;
    int n = snprintf(line, sizeof line, CS_WISDOM_TAG " %016" PRIx64 " %s %s %.6g %.3f\n", key, e->backend,
                     e->solver[0] ? e->solver : "-", e->per_step, e->trial);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        if (cs_make_dirs(dir, 0755) != CS_OK) cs_error_clear(); /* open() below says why it failed */
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    ssize_t w = fd >= 0 ? write(fd, line, (size_t)n) : -1;
    int err = errno;
    if (fd >= 0 && close(fd) != 0 && w == n) { w = -1; err = errno; }
    if (w != n) fprintf(stderr, "cablesim: warning: %s: cannot record auto's choice (%s); the next run measures again\n",
                        path, strerror(err));
}
