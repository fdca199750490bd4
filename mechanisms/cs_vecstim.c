/* VecStim: an artificial cell that fires at the times of its vector (NEURON's vecevent.mod,
 * share/examples/nrniv/netcon/, see PROVENANCE.md). NEURON's file reads its Vector through
 * VERBATIM C, which the NMODL subset refuses, so this type is written in C over the same ABI:
 * INITIAL sends a self-event to the first time; each self-event fires (net_event) and sends one
 * to the next time. Events from connections are ignored, as in NEURON. The times come from the
 * model (the population's "artificial": {"times" | "times_file"}: docs/model-format.md), through
 * the view's net->play, ascending and >= 0 (checked by the model reader). */
#include <stddef.h>

#include "cs_mech.h"

enum { VS_INDEX, VS_ETIME, VS_NSTATE };

static const cs_mech_field params[] = {{NULL, NULL, 0, 0, 0}};
static const cs_mech_field states[] = {{"index", "1", 0, 0, 0}, {"etime", "ms", 0, 0, 0}, {NULL, NULL, 0, 0, 0}};

/* The next time of instance k into etime, or index -1 past the last (NEURON's element()). */
static void element(const cs_mech_view *m, int k) {
    double *index = &m->state[VS_INDEX][k];
    int i = (int)*index;
    if (i < 0) return;
    if (i < m->net->nplay[k]) {
        m->state[VS_ETIME][k] = m->net->play[k][i];
        *index += 1.0;
    } else {
        *index = -1.0;
    }
}

static void init(const cs_mech_view *m) {
    for (int k = 0; k < m->n; ++k) {
        m->state[VS_INDEX][k] = 0.0;
        m->state[VS_ETIME][k] = 0.0;
        element(m, k);
        if (m->state[VS_INDEX][k] > 0) m->net->send(m->net, k, m->state[VS_ETIME][k], 1.0);
    }
}

static void receive(const cs_mech_view *m, int k, double *w, double flag) {
    (void)w;
    if (flag != 1.0) return;
    m->net->event(m->net, k, m->t);
    element(m, k);
    if (m->state[VS_INDEX][k] > 0) m->net->send(m->net, k, m->state[VS_ETIME][k], 1.0);
}

const cs_mech_type cs_mech_VecStim = {"VecStim", CS_MECH_POINT, 1, 0, params, VS_NSTATE, states, init, NULL, NULL,
                                      NULL, NULL, 0u, 0u, NULL, 0, .artificial = 1, .nweight = 1,
                                      .net_receive_vec = receive, .net_init = NULL};
