/* libFuzzer harness: the Allen Cell Types importer (models/cs_allen.c) on arbitrary fit-file
 * text, with both processings (by the input's first byte). Errors must be one-line messages
 * naming the file; never a crash, a leak or undefined behaviour (ASan + UBSan). The fuzzing
 * build loads no catalogue, so genome mechanisms other than the built-ins give errors; the
 * built-ins (pas, hh) and every section, passive and conditions rule are reached. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cs_allen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *json = malloc(size + 1);
    if (!json) return 0;
    memcpy(json, data, size);
    json[size] = '\0';
    cs_model m;
    memset(&m, 0, sizeof m);
    cs_population_spec pop;
    memset(&pop, 0, sizeof pop);
    const char *proc = size && (data[0] & 1) ? "aibs_allactive" : "aibs_perisomatic";
    cs_status s = cs_allen_population_text(json, "fuzz_fit.json", "/nonexistent.swc", proc, &m, &pop);
    if (s != CS_OK && (strchr(cs_error_message(), '\n') || !strstr(cs_error_message(), "fuzz_fit.json")))
        abort(); /* one line, naming the file */
    free(pop.density);
    cs_error_clear();
    free(json);
    return 0;
}
