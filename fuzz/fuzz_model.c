/* libFuzzer harness: model JSON parsing (models/cs_model.c), then building the network
 * (src/core/cs_build.c: morphologies, discretisation, mechanisms) for models small enough to build
 * within the fuzzer's time and memory. Errors must be one-line messages; never a crash, a
 * leak or undefined behaviour (ASan + UBSan). SWC paths inside the models do not resolve
 * (base directory /nonexistent): those give errors, as they should. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cs_build.h"
#include "cs_model.h"

#define FUZZ_MAX_CELLS 64        /* build only models this small ... */
#define FUZZ_MAX_CONN 4096       /* ... so that one input takes milliseconds */
#define FUZZ_MAX_NODES 262144.0  /* ... (an upper bound of the nodes of all cells together) */

/* CVs of one branch of `length` [µm] with `hint` CVs asked for (0: the policy), as
 * cs_discretize counts them. */
static double branch_cvs(double length, int hint, const cs_cv_policy *p) {
    if (hint > 0) return hint;
    if (p->cvs_per_branch > 0) return p->cvs_per_branch;
    double n = p->max_cv_length > 0 ? ceil(length / p->max_cv_length) : 1e300;
    return n < 1 ? 1 : n;
}

/* An upper bound of the nodes of one cell of population ps (centre nodes + the branch ends).
 * A model within the cell and connection limits can still ask for a huge discretisation (a
 * cable of 5e8 µm in 10 µm CVs: 5e7 nodes, seconds and gigabytes to build): valid, but too big
 * to fuzz, so such models are parsed and not built. */
static double cell_nodes(const cs_population_spec *ps) {
    const cs_morph_spec *m = &ps->morph;
    const cs_cv_policy *p = &ps->policy;
    double n = 1;
    switch (m->kind) {
    case CS_MORPH_SOMA: return 4;
    case CS_MORPH_CABLE: return n + branch_cvs(m->length, m->ncv, p) + 1;
    case CS_MORPH_BALL_AND_STICK: return n + 2 + branch_cvs(m->dend_length, m->ncv, p) + 1; /* soma: 1 CV */
    case CS_MORPH_RANDOM_TREE: {
        int cv = m->tree.ncv[0] > m->tree.ncv[1] ? m->tree.ncv[0] : m->tree.ncv[1];
        return n + 4 + ldexp(1.0, m->tree.depth + 1) * (cv + 1); /* soma, <= 2^(depth+1) branches */
    }
    case CS_MORPH_BRANCHES:
        for (int b = 0; b < m->nbranch; ++b)
            n += branch_cvs(m->branches[b].length, m->branches[b].ncv, p) + 1;
        return n;
    default: /* SWC: a path under the base directory (/nonexistent) does not resolve, the build
              * fails at once, and that error path is worth fuzzing; any other path might */
        return strncmp(m->swc_path, "/nonexistent/", 13) ? 1e300 : 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *json = malloc(size + 1);
    if (!json) return 0;
    memcpy(json, data, size);
    json[size] = '\0';
    cs_model m;
    memset(&m, 0, sizeof m);
    cs_status s = cs_model_parse(json, "fuzz.json", "/nonexistent", &m);
    double nodes = 0;
    for (int k = 0; s == CS_OK && k < m.npop; ++k) nodes += m.pops[k].count * cell_nodes(&m.pops[k]);
    if (s == CS_OK && m.ncells <= FUZZ_MAX_CELLS && m.nconn <= FUZZ_MAX_CONN && nodes <= FUZZ_MAX_NODES) {
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
