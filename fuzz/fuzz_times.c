/* libFuzzer harness: VecStim spike-time files (models/cs_model_artificial.c,
 * cs_spike_times_parse) on arbitrary bytes. Any input must give, per cell, finite times >= 0 in
 * ascending order, or an error with a one-line message; never a crash, a leak or undefined
 * behaviour (ASan + UBSan). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cs_model.h"

#define NCELL 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = '\0'; /* the reader takes text: a NUL ends it, as a file with one is refused before */
    double *times[NCELL] = {0};
    int n[NCELL] = {0};
    cs_status s = cs_spike_times_parse(text, "fuzz.txt", NCELL, times, n);
    for (int c = 0; c < NCELL; ++c) {
        for (int k = 0; s == CS_OK && k < n[c]; ++k)
            if (!(isfinite(times[c][k]) && times[c][k] >= 0 && (k == 0 || times[c][k] >= times[c][k - 1])))
                abort(); /* the reader accepted a time it must refuse */
        free(times[c]);
    }
    if (s != CS_OK && strchr(cs_error_message(), '\n')) abort(); /* error messages are one line */
    cs_error_clear();
    free(text);
    return 0;
}
