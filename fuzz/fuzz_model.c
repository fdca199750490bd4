/* libFuzzer harness: model JSON parsing (models/cs_model.c), then building the network
 * (src/cs_build.c: morphologies, discretisation, mechanisms) for models small enough to build
 * within the fuzzer's time and memory. Errors must be one-line messages; never a crash, a
 * leak or undefined behaviour (ASan + UBSan). SWC paths inside the models do not resolve
 * (base directory /nonexistent): those give errors, as they should. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cs_build.h"
#include "cs_model.h"

#define FUZZ_MAX_CELLS 64     /* build only models this small ... */
#define FUZZ_MAX_CONN 4096    /* ... so that one input takes milliseconds */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *json = malloc(size + 1);
    if (!json) return 0;
    memcpy(json, data, size);
    json[size] = '\0';
    cs_model m;
    memset(&m, 0, sizeof m);
    cs_status s = cs_model_parse(json, "fuzz.json", "/nonexistent", &m);
    if (s == CS_OK && m.ncells <= FUZZ_MAX_CELLS && m.nconn <= FUZZ_MAX_CONN) {
        cs_network_desc net;
        memset(&net, 0, sizeof net);
        s = cs_build_network(&m, &net);
        cs_network_desc_free(&net);
    }
    if (s != CS_OK && strchr(cs_error_message(), '\n')) abort(); /* messages are one line */
    cs_model_free(&m);
    cs_error_clear();
    free(json);
    return 0;
}
