/* libFuzzer harness: the wisdom file's reader (src/core/cs_wisdom.c) on arbitrary bytes. Any
 * input gives an entry whose fields are what a line may hold, or none; never a crash or a read
 * past the input (ASan + UBSan). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cs_wisdom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cs_wisdom_entry e;
    int bad = 0;
    /* the key of the first line, when there is one, so found entries are exercised too */
    uint64_t key = size >= 8 ? ((uint64_t)data[0] << 8 | data[1]) : 0xab;
    if (cs_wisdom_find((const char *)data, size, key, &e, &bad)) {
        if (strcmp(e.backend, "cpu") && strcmp(e.backend, "cuda")) abort();
        if (!(e.per_step > 0) || !isfinite(e.per_step) || !(e.trial >= 0) || !isfinite(e.trial)) abort();
        if (!memchr(e.solver, 0, sizeof e.solver)) abort();
    }
    if (bad < 0) abort();
    return 0;
}
