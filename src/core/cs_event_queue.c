/* Pending events as a few sorted runs (cs_event_queue.h). */
#include "cs_event_queue.h"

#include "cs_radix_sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t left(const cs_event_run *r) { return r->n - r->head; }

cs_status cs_target_events_grow(cs_target_event **p, size_t *cap, size_t need) {
    if (need <= *cap) return CS_OK;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need) nc *= 2;
    cs_target_event *x = realloc(*p, nc * sizeof *x);
    if (!x) return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
    *p = x;
    *cap = nc;
    return CS_OK;
}

cs_status cs_event_queue_push(cs_event_queue *q, size_t n, const cs_target_event *ev) {
    if (!n) return CS_OK;
    CS_TRY(cs_target_events_grow(&q->in, &q->cap_in, q->nin + n));
    memcpy(q->in + q->nin, ev, n * sizeof *ev);
    q->nin += n;
    return CS_OK;
}

/* Two arrays in delivery order, a[0 .. na) and b[0 .. nb), into out (a first where they tie). */
static void merge_into(cs_target_event *out, const cs_target_event *a, size_t na, const cs_target_event *b,
                       size_t nb) {
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) out[k++] = cs_target_event_compare(&a[i], &b[j]) <= 0 ? a[i++] : b[j++];
    memcpy(out + k, a + i, (na - i) * sizeof *a);
    memcpy(out + k + (na - i), b + j, (nb - j) * sizeof *b);
}

/* The last two runs into one (their pending parts). */
static cs_status merge_last(cs_event_queue *q) {
    cs_event_run *x = &q->run[q->nrun - 2], *y = &q->run[q->nrun - 1];
    size_t n = left(x) + left(y);
    cs_target_event *m = malloc(n * sizeof *m);
    if (!m) return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
    merge_into(m, x->ev + x->head, left(x), y->ev + y->head, left(y));
    free(x->ev);
    free(y->ev);
    *x = (cs_event_run){m, 0, n};
    q->nrun--;
    return CS_OK;
}

/* In delivery order (cs_event_queue.h). Many events: a radix sort by instance, then by time
 * (stable, so by (time, instance)), then the few ties of both in full order. */
cs_status cs_target_events_sort(cs_target_event *ev, size_t n, cs_target_event **out) {
    *out = ev;
    if (n < 256 || n > UINT32_MAX) {
        qsort(ev, n, sizeof *ev, cs_target_event_compare);
        return CS_OK;
    }
    uint64_t *key = malloc(n * sizeof *key);
    uint32_t *ord = malloc(n * sizeof *ord);
    cs_target_event *s = malloc(n * sizeof *s);
    cs_status st = key && ord && s ? CS_OK : cs_error_set(CS_ERR_NOMEM, "out of memory for events");
    for (size_t k = 0; st == CS_OK && k < n; ++k) ord[k] = (uint32_t)k, key[k] = (uint64_t)ev[k].instance;
    if (st == CS_OK) st = cs_radix_order(key, n, ord);
    for (size_t k = 0; st == CS_OK && k < n; ++k) key[k] = cs_radix_key_double(ev[k].time);
    if (st == CS_OK) st = cs_radix_order(key, n, ord);
    for (size_t k = 0; st == CS_OK && k < n; ++k) s[k] = ev[ord[k]];
    for (size_t a = 0, b; st == CS_OK && a < n; a = b) { /* ties in (time, instance): by the rest */
        for (b = a + 1; b < n && s[b].time == s[a].time && s[b].instance == s[a].instance; ++b) continue;
        for (size_t k = a + 1; k < b; ++k)
            for (size_t j = k; j > a && cs_target_event_compare(&s[j - 1], &s[j]) > 0; --j) {
                cs_target_event t = s[j];
                s[j] = s[j - 1];
                s[j - 1] = t;
            }
    }
    free(key);
    free(ord);
    if (st != CS_OK) {
        free(s);
        return st;
    }
    *out = s;
    return CS_OK;
}

/* A sorted array of n events as the newest run, the queue's from now on (freed on failure too);
 * runs of similar size merge. */
static cs_status add_run(cs_event_queue *q, cs_target_event *sorted, size_t n) {
    if (q->nrun == CS_EVENT_RUNS_MAX) {
        cs_status st = merge_last(q);
        if (st != CS_OK) {
            free(sorted);
            return st;
        }
    }
    q->run[q->nrun++] = (cs_event_run){sorted, 0, n};
    while (q->nrun >= 2 && left(&q->run[q->nrun - 2]) <= 2 * left(&q->run[q->nrun - 1])) CS_TRY(merge_last(q));
    return CS_OK;
}

/* A large batch (the inputs known before the run) cut by time into unsorted buckets of about
 * CS_EVENT_BUCKET events, each sorted when a take may first reach it (its earliest time): the
 * first epoch then sorts ~1 % of them, not all (10 000 Allen cells: 605 000 input events, 0.06-0.1 s
 * before the first step, session 23), and the GPU backend sorts the rest while epochs run. */
static cs_status defer_batch(cs_event_queue *q, const cs_target_event *ev, size_t n) {
    double lo = ev[0].time, hi = ev[0].time;
    for (size_t k = 1; k < n; ++k) lo = ev[k].time < lo ? ev[k].time : lo, hi = ev[k].time > hi ? ev[k].time : hi;
    const size_t nb = (n + CS_EVENT_BUCKET - 1) / CS_EVENT_BUCKET;
    const double width = (hi - lo) / (double)nb;
    size_t *count = calloc(nb, sizeof *count);
    if (!count) return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
    if (q->ndefer + nb > q->cap_defer) {
        size_t nc = q->cap_defer ? 2 * q->cap_defer : 64;
        while (nc < q->ndefer + nb) nc *= 2;
        cs_event_bucket *p = realloc(q->defer, nc * sizeof *p);
        if (!p) {
            free(count);
            return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
        }
        q->defer = p;
        q->cap_defer = nc;
    }
#define CS__BUCKET_OF(t) (width > 0 ? (size_t)fmin((double)(nb - 1), floor(((t) - lo) / width)) : 0)
    for (size_t k = 0; k < n; ++k) count[CS__BUCKET_OF(ev[k].time)]++;
    cs_event_bucket *b = q->defer + q->ndefer;
    cs_status st = CS_OK;
    for (size_t j = 0; j < nb; ++j) {
        b[j] = (cs_event_bucket){count[j] ? malloc(count[j] * sizeof *ev) : NULL, 0, INFINITY};
        if (count[j] && !b[j].ev) st = cs_error_set(CS_ERR_NOMEM, "out of memory for events");
        q->ndefer++; /* freed with the queue, whatever happens next */
    }
    for (size_t k = 0; st == CS_OK && k < n; ++k) {
        cs_event_bucket *x = &b[CS__BUCKET_OF(ev[k].time)];
        x->ev[x->n++] = ev[k];
        x->tmin = ev[k].time < x->tmin ? ev[k].time : x->tmin;
    }
#undef CS__BUCKET_OF
    size_t keep = q->ndefer - nb; /* the empty ones out */
    for (size_t j = keep; j < q->ndefer; ++j)
        if (q->defer[j].n) q->defer[keep++] = q->defer[j];
        else free(q->defer[j].ev);
    q->ndefer = keep;
    free(count);
    return st;
}

/* The events pushed since the last take become a sorted run (a large batch: deferred buckets). */
static cs_status seal_input(cs_event_queue *q) {
    if (!q->nin) return CS_OK;
    cs_status st;
    if (q->nin >= CS_EVENT_DEFER_MIN) {
        st = defer_batch(q, q->in, q->nin);
        free(q->in);
    } else {
        cs_target_event *sorted;
        st = cs_target_events_sort(q->in, q->nin, &sorted);
        if (st != CS_OK || sorted != q->in) free(q->in); /* on failure the events are lost: the run stops */
        if (st == CS_OK) st = add_run(q, sorted, q->nin);
    }
    q->in = NULL;
    q->nin = q->cap_in = 0;
    return st;
}

/* The deferred buckets a take to t_limit may reach (their earliest event due), sorted into runs. */
static cs_status sort_reached(cs_event_queue *q, double t_limit) {
    for (size_t j = 0; j < q->ndefer;) {
        cs_event_bucket x = q->defer[j];
        if (!(x.tmin <= t_limit)) {
            ++j;
            continue;
        }
        q->defer[j] = q->defer[--q->ndefer]; /* out of the list: the run owns it now */
        if (!x.n) {
            free(x.ev);
            continue;
        }
        cs_target_event *sorted;
        cs_status st = cs_target_events_sort(x.ev, x.n, &sorted);
        if (st != CS_OK || sorted != x.ev) free(x.ev);
        CS_TRY(st);
        CS_TRY(add_run(q, sorted, x.n));
    }
    return CS_OK;
}

/* a buffer of at least n events (its contents are not kept) */
static cs_status reserve(cs_target_event **p, size_t *cap, size_t n) {
    if (n <= *cap) return CS_OK;
    size_t nc = *cap ? *cap : 1024;
    while (nc < n) nc *= 2;
    free(*p);
    *p = malloc(nc * sizeof **p);
    *cap = *p ? nc : 0;
    return *p ? CS_OK : cs_error_set(CS_ERR_NOMEM, "out of memory for events");
}

/* Each run's due events are a prefix of its pending part (runs are sorted by time first): they
 * are copied one after the other, then merged two by two, log2(runs) passes. */
cs_status cs_event_queue_take(cs_event_queue *q, double t_limit) {
    q->ndue = 0;
    CS_TRY(seal_input(q));
    CS_TRY(sort_reached(q, t_limit));
    size_t cut[CS_EVENT_RUNS_MAX], seg[CS_EVENT_RUNS_MAX + 1], total = 0;
    int nseg = 0;
    for (int r = 0; r < q->nrun; ++r) {
        const cs_event_run *x = &q->run[r];
        size_t lo = x->head, hi = x->n; /* the first event after t_limit */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (x->ev[mid].time <= t_limit) lo = mid + 1;
            else hi = mid;
        }
        cut[r] = lo;
        total += lo - x->head;
    }
    CS_TRY(reserve(&q->due, &q->cap_due, total));
    CS_TRY(reserve(&q->tmp, &q->cap_tmp, total));
    seg[0] = 0;
    for (int r = 0; r < q->nrun; ++r) {
        cs_event_run *x = &q->run[r];
        size_t m = cut[r] - x->head;
        if (!m) continue;
        memcpy(q->due + seg[nseg], x->ev + x->head, m * sizeof *x->ev);
        seg[nseg + 1] = seg[nseg] + m;
        ++nseg;
        x->head = cut[r];
    }
    while (nseg > 1) { /* merge segments 2i and 2i + 1 into tmp, then swap */
        int out = 0;
        for (int g = 0; g < nseg; g += 2) {
            const size_t lo = seg[g], mid = seg[g + 1], end = g + 1 < nseg ? seg[g + 2] : mid;
            merge_into(q->tmp + lo, q->due + lo, mid - lo, q->due + mid, end - mid);
            seg[out++] = lo;
        }
        seg[out] = total;
        nseg = out;
        cs_target_event *t = q->due;
        size_t c = q->cap_due;
        q->due = q->tmp, q->cap_due = q->cap_tmp;
        q->tmp = t, q->cap_tmp = c;
    }
    q->ndue = total;
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
    for (size_t j = 0; j < q->ndefer; ++j) n += q->defer[j].n;
    return n;
}

void cs_event_queue_free(cs_event_queue *q) {
    for (int r = 0; r < q->nrun; ++r) free(q->run[r].ev);
    free(q->in);
    free(q->due);
    free(q->tmp);
    for (size_t j = 0; j < q->ndefer; ++j) free(q->defer[j].ev);
    free(q->defer);
    memset(q, 0, sizeof *q);
}
