/* Model file or SONATA config: see cs_front.h. */
#include "cs_front.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cs_catalogue_cache.h"
#include "cs_fs.h"
#include "cs_sonata.h"

/* 1 when the file at path is a SONATA config (a file that cannot be read is left to the readers). */
static int is_sonata(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char *buf = malloc(1u << 24);
    size_t n = buf ? fread(buf, 1, (1u << 24) - 1, f) : 0;
    fclose(f);
    if (!buf) return 0;
    buf[n] = 0;
    int yes = cs_sonata_is_config(buf);
    free(buf);
    return yes;
}

cs_status cs_front_load(const char *path, cs_model *m) {
    if (!is_sonata(path)) return cs_model_load_file(path, m);
    cs_sonata_run run;
    memset(m, 0, sizeof *m);
    CS_TRY(cs_sonata_read_run(path, &run));
    /* output_dir exists for the run, as bmtk makes it: the reports go there even when -o puts the
     * main file elsewhere */
    CS_TRY(cs_make_dirs(run.output_dir, 0777));
    char so[CS_PATH_MAX] = "";
    if (run.mechanisms_dir[0]) CS_TRY(cs_catalogue_cached(run.mechanisms_dir, path, so, sizeof so));
    return cs_sonata_load(path, so[0] ? so : NULL, m, &run);
}

cs_status cs_front_output(const char *path, char *out, size_t n) {
    out[0] = 0;
    if (!is_sonata(path)) return CS_OK;
    cs_sonata_run run;
    CS_TRY(cs_sonata_read_run(path, &run));
    CS_TRY(cs_make_dirs(run.output_dir, 0777));
    snprintf(out, n, "%s", run.spikes_file);
    return CS_OK;
}
