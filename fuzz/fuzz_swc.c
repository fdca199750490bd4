/* libFuzzer harness: the SWC reader (models/cs_swc.c) on arbitrary bytes.
 * Any input must give a morphology that passes cs_morph_check, or an error with a one-line
 * message; never a crash, a leak or undefined behaviour (ASan + UBSan). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_morph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* the reader takes a path: one scratch file per process */
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/cs_fuzz_swc_%ld.swc", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    cs_morph m = {0};
    cs_swc_options opt = {.scale = 1.0, .min_radius = 0.0};
    cs_status s = cs_morph_load_swc(path, &opt, &m);
    if (s == CS_OK) {
        if (cs_morph_check(&m) != CS_OK) abort(); /* the reader accepted an invalid tree */
    } else if (strchr(cs_error_message(), '\n')) {
        abort(); /* error messages are one line */
    }
    cs_morph_free(&m);
    cs_error_clear();
    return 0;
}
