/* A backend's pending events, taken epoch by epoch in delivery order (cs_target_event_compare).
 *
 * Why not one array sorted at every epoch: a SONATA circuit's input spikes are known before the
 * run, ~10^6 events for 10 000 cells, and sorting all of them again at each of the run's epochs
 * cost more than the GPU's steps (session 17: ~25 ms an epoch at 10 000 Allen cells). Here
 * the events pushed between two takes are sorted once into a run of their own; runs of similar
 * size are merged (as a binary counter carries), so an event is copied O(log n) times in all; a
 * take merges the runs' due prefixes two by two. A batch of CS_EVENT_DEFER_MIN events or more
 * (the inputs, known before the run) is cut by time into buckets, each sorted into a run only
 * when a take may reach it. Sorting a batch by radix (instance, then time)
 * rather than qsort's comparator took the Allen network's staging from ~3.5 ms an epoch down
 * (session 23: bench/NOTES.md). The order of what a take returns is the total order of
 * cs_target_event_compare, whatever the runs: a run's results do not depend on when events came. */
#ifndef CS_EVENT_QUEUE_H
#define CS_EVENT_QUEUE_H

#include <stddef.h>

#include "cs_backend.h"
#include "cs_error.h"

#define CS_EVENT_RUNS_MAX 64
#define CS_EVENT_DEFER_MIN 32768 /* a batch of this many events or more is cut into buckets */
#define CS_EVENT_BUCKET 8192     /* events a bucket, about */

typedef struct {
    cs_target_event *ev; /* sorted; ev[head, n) pending */
    size_t head, n;
} cs_event_run;

typedef struct {
    cs_target_event *ev; /* unsorted, malloc'd */
    size_t n;
    double tmin; /* [ms] its earliest event's time */
} cs_event_bucket;

typedef struct {
    cs_event_run run[CS_EVENT_RUNS_MAX]; /* by size, largest first */
    cs_event_bucket *defer;              /* a large batch's buckets, sorted into runs when reached */
    size_t ndefer, cap_defer;
    int nrun;
    cs_target_event *in; /* pushed since the last take, unsorted */
    size_t nin, cap_in;
    cs_target_event *due; /* the last take's events, in delivery order */
    size_t ndue, cap_due;
    cs_target_event *tmp; /* the take's merges */
    size_t cap_tmp;
} cs_event_queue;

/* *p (*cap events, contents kept) grown to hold at least need events. */
cs_status cs_target_events_grow(cs_target_event **p, size_t *cap, size_t need);

/* Queue n events (copied). */
cs_status cs_event_queue_push(cs_event_queue *q, size_t n, const cs_target_event *ev);

/* Every pending event with time <= t_limit [ms] into q->due / q->ndue, in delivery order, and
 * out of the queue (q->due is valid until the next take). */
cs_status cs_event_queue_take(cs_event_queue *q, double t_limit);

/* ev[0 .. n) in delivery order (cs_target_event_compare): in place (*out = ev), or into a new
 * array (*out, malloc'd, the caller frees it; ev is left as it was). */
cs_status cs_target_events_sort(cs_target_event *ev, size_t n, cs_target_event **out);

/* Events pending (not yet taken). */
size_t cs_event_queue_pending(const cs_event_queue *q);

void cs_event_queue_free(cs_event_queue *q);

#endif
