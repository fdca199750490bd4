/* Pending events as a few sorted runs (cs_event_queue.h). */
#include "cs_event_queue.h"

#include <stdlib.h>
#include <string.h>

static size_t left(const cs_event_run *r) { return r->n - r->head; }

cs_status cs_event_queue_push(cs_event_queue *q, size_t n, const cs_target_event *ev) {
    if (!n) return CS_OK;
    if (q->nin + n > q->cap_in) {
        size_t nc = q->cap_in ? q->cap_in : 1024;
        while (nc < q->nin + n) nc *= 2;
        cs_target_event *p = realloc(q->in, nc * sizeof *p);
        if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
        q->in = p;
        q->cap_in = nc;
    }
    memcpy(q->in + q->nin, ev, n * sizeof *ev);
    q->nin += n;
    return CS_OK;
}

/* The last two runs into one (their pending parts). */
static cs_status merge_last(cs_event_queue *q) {
    cs_event_run *x = &q->run[q->nrun - 2], *y = &q->run[q->nrun - 1];
    size_t n = left(x) + left(y);
    cs_target_event *m = malloc(n * sizeof *m);
    if (!m) return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
    size_t i = x->head, j = y->head, k = 0;
    while (i < x->n && j < y->n)
        m[k++] = cs_target_event_compare(&x->ev[i], &y->ev[j]) <= 0 ? x->ev[i++] : y->ev[j++];
    while (i < x->n) m[k++] = x->ev[i++];
    while (j < y->n) m[k++] = y->ev[j++];
    free(x->ev);
    free(y->ev);
    *x = (cs_event_run){m, 0, n};
    q->nrun--;
    return CS_OK;
}

/* The events pushed since the last take become a sorted run; runs of similar size merge. */
static cs_status seal_input(cs_event_queue *q) {
    if (!q->nin) return CS_OK;
    qsort(q->in, q->nin, sizeof *q->in, cs_target_event_compare);
    if (q->nrun == CS_EVENT_RUNS_MAX) CS_TRY(merge_last(q));
    q->run[q->nrun++] = (cs_event_run){q->in, 0, q->nin};
    q->in = NULL;
    q->nin = q->cap_in = 0;
    while (q->nrun >= 2 && left(&q->run[q->nrun - 2]) <= 2 * left(&q->run[q->nrun - 1])) CS_TRY(merge_last(q));
    return CS_OK;
}

static cs_status grow_due(cs_event_queue *q) {
    size_t nc = q->cap_due ? 2 * q->cap_due : 1024;
    cs_target_event *p = realloc(q->due, nc * sizeof *p);
    if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
    q->due = p;
    q->cap_due = nc;
    return CS_OK;
}

cs_status cs_event_queue_take(cs_event_queue *q, double t_limit) {
    q->ndue = 0;
    CS_TRY(seal_input(q));
    for (;;) { /* the least head among the runs, while it is due */
        int best = -1;
        for (int r = 0; r < q->nrun; ++r) {
            const cs_event_run *x = &q->run[r];
            if (x->head < x->n && x->ev[x->head].time <= t_limit &&
                (best < 0 || cs_target_event_compare(&x->ev[x->head], &q->run[best].ev[q->run[best].head]) < 0))
                best = r;
        }
        if (best < 0) break;
        if (q->ndue == q->cap_due) CS_TRY(grow_due(q));
        q->due[q->ndue++] = q->run[best].ev[q->run[best].head++];
    }
    int keep = 0; /* drop the runs that are used up */
    for (int r = 0; r < q->nrun; ++r) {
        if (left(&q->run[r])) q->run[keep++] = q->run[r];
        else free(q->run[r].ev);
    }
    q->nrun = keep;
    return CS_OK;
}

size_t cs_event_queue_pending(const cs_event_queue *q) {
    size_t n = q->nin;
    for (int r = 0; r < q->nrun; ++r) n += left(&q->run[r]);
    return n;
}

void cs_event_queue_free(cs_event_queue *q) {
    for (int r = 0; r < q->nrun; ++r) free(q->run[r].ev);
    free(q->in);
    free(q->due);
    memset(q, 0, sizeof *q);
}
