/* Artificial cells: states, event queues and NET_RECEIVE on the host (cs_artcell.h). */
#include "cs_artcell.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One population's artificial cells of this share: one view over their states. */
typedef struct {
    cs_net_ctx ctx;              /* first: the event services recover the group from it */
    struct cs_artcells *a;
    size_t first;                /* its first cell in net->art */
    cs_mech_view view;
    double *pbuf, *sbuf;         /* [nparam × n], [nstate × n] */
    double *pp[CS_MAX_PARAMS], *sp[CS_MAX_STATES];
} group;

typedef struct {
    double t;                    /* [ms] due */
    int self;                    /* 0: from a connection, 1: a self-event */
    uint64_t key;                /* among equal times: the connection (or model event), or the sending order */
    size_t art;                  /* the cell */
    double flag;                 /* a self-event's flag */
    size_t wslot;                /* from a connection: its weight vector */
} event;

struct cs_artcells {
    const cs_model *m;
    const cs_network_desc *net;
    double celsius, dt;
    int ngroup;
    group *groups;
    size_t *cell_group;          /* [nart] group of each cell */
    size_t *movable;             /* [nart] pool slot of the pending self-event (net_move), SIZE_MAX: none */
    /* connections to these cells: sorted model indices and their weight vectors */
    size_t nwconn;
    size_t *wconn;
    double *w;                   /* [nslot × CS_MAX_WEIGHTS]: the connections', then model events' */
    size_t nslot, cap_slot;
    /* the queue: an indexed binary heap over a pool of events */
    event *pool;
    size_t *heap, *pos, *free_slots;   /* heap of pool slots; pos[slot] in heap; unused slots */
    size_t nheap, cap, nfree;
    uint64_t seq;
    cs_spike **spk;              /* during run(): where spikes go */
    size_t *nspk, *cap_spk;
    cs_status err;               /* a failure inside a callback */
};

static int before(const event *x, const event *y) {
    if (x->t != y->t) return x->t < y->t;
    if (x->self != y->self) return x->self < y->self;
    return x->key < y->key;
}

static void heap_swap(cs_artcells *a, size_t i, size_t j) {
    size_t t = a->heap[i];
    a->heap[i] = a->heap[j];
    a->heap[j] = t;
    a->pos[a->heap[i]] = i;
    a->pos[a->heap[j]] = j;
}

static void sift_up(cs_artcells *a, size_t i) {
    while (i > 0 && before(&a->pool[a->heap[i]], &a->pool[a->heap[(i - 1) / 2]])) {
        heap_swap(a, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void sift_down(cs_artcells *a, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, b = i;
        if (l < a->nheap && before(&a->pool[a->heap[l]], &a->pool[a->heap[b]])) b = l;
        if (r < a->nheap && before(&a->pool[a->heap[r]], &a->pool[a->heap[b]])) b = r;
        if (b == i) return;
        heap_swap(a, i, b);
        i = b;
    }
}

/* Queue e; its pool slot, or SIZE_MAX when out of memory. */
static size_t push(cs_artcells *a, event e) {
    size_t slot;
    if (a->nfree) {
        slot = a->free_slots[--a->nfree];
    } else {
        if (a->nheap == a->cap) {
            size_t nc = a->cap ? 2 * a->cap : 256;
            event *p = realloc(a->pool, nc * sizeof *p);
            if (p) a->pool = p;
            size_t *h = realloc(a->heap, nc * sizeof *h), *q = h ? realloc(a->pos, nc * sizeof *q) : NULL;
            if (h) a->heap = h;
            if (q) a->pos = q;
            size_t *f = q ? realloc(a->free_slots, nc * sizeof *f) : NULL;
            if (f) a->free_slots = f;
            if (!p || !h || !q || !f) return SIZE_MAX;
            a->cap = nc;
        }
        slot = a->nheap; /* with no free slot, the pool's used slots are exactly the heap's */
    }
    a->pool[slot] = e;
    a->heap[a->nheap] = slot;
    a->pos[slot] = a->nheap++;
    sift_up(a, a->nheap - 1);
    return slot;
}

static size_t pop(cs_artcells *a) {
    size_t slot = a->heap[0];
    heap_swap(a, 0, --a->nheap);
    sift_down(a, 0);
    a->free_slots[a->nfree++] = slot;
    return slot;
}

static cs_status fail(cs_artcells *a, cs_status st) {
    if (a->err == CS_OK) a->err = st;
    return st;
}

/* ---- the event services of cs_net_ctx (group g's instance k) */
static size_t cell_of(cs_net_ctx *c, int k) { return ((group *)c)->first + (size_t)k; }

static void svc_send(cs_net_ctx *c, int k, double t, double flag) {
    cs_artcells *a = ((group *)c)->a;
    size_t art = cell_of(c, k);
    const cs_art_desc *d = &a->net->art[art];
    if (!(t >= ((group *)c)->view.t) || !isfinite(t)) {
        fail(a, cs_error_set(CS_ERR_NUMERIC, "cell %llu (population '%s', cell %d, %s): net_send at t = %g ms to %g ms, "
                                             "before now or not finite",
                             (unsigned long long)d->gid, a->m->pops[d->pop].name, d->index,
                             a->m->pops[d->pop].artificial->name, ((group *)c)->view.t, t));
        return;
    }
    size_t slot = push(a, (event){t, 1, a->seq++, art, flag, 0});
    if (slot == SIZE_MAX) {
        fail(a, cs_error_set(CS_ERR_NOMEM, "out of memory for events"));
        return;
    }
    a->movable[art] = slot;
}

static void svc_event(cs_net_ctx *c, int k, double t) {
    cs_artcells *a = ((group *)c)->a;
    if (*a->nspk == *a->cap_spk) {
        size_t nc = *a->cap_spk ? 2 * *a->cap_spk : 1024;
        cs_spike *p = realloc(*a->spk, nc * sizeof *p);
        if (!p) {
            fail(a, cs_error_set(CS_ERR_NOMEM, "out of memory for spikes"));
            return;
        }
        *a->spk = p;
        *a->cap_spk = nc;
    }
    (*a->spk)[(*a->nspk)++] = (cs_spike){t, a->net->art[cell_of(c, k)].gid};
}

static void svc_move(cs_net_ctx *c, int k, double t) {
    cs_artcells *a = ((group *)c)->a;
    size_t art = cell_of(c, k), slot = a->movable[art];
    const cs_art_desc *d = &a->net->art[art];
    if (slot == SIZE_MAX || !(t >= ((group *)c)->view.t)) {
        fail(a, cs_error_set(CS_ERR_NUMERIC, "cell %llu (population '%s', cell %d, %s): net_move at t = %g ms %s",
                             (unsigned long long)d->gid, a->m->pops[d->pop].name, d->index,
                             a->m->pops[d->pop].artificial->name, ((group *)c)->view.t,
                             slot == SIZE_MAX ? "with no self-event pending" : "to an earlier time"));
        return;
    }
    double old = a->pool[slot].t;
    a->pool[slot].t = t;
    if (t < old) sift_up(a, a->pos[slot]);
    else sift_down(a, a->pos[slot]);
}

/* ---- set-up */
static cs_status build_groups(cs_artcells *a) {
    const cs_network_desc *net = a->net;
    for (size_t k = 0; k < net->nart; ++k)
        if (k == 0 || net->art[k].pop != net->art[k - 1].pop) a->ngroup++;
    a->groups = calloc((size_t)a->ngroup, sizeof *a->groups);
    a->cell_group = malloc(net->nart * sizeof *a->cell_group);
    a->movable = malloc(net->nart * sizeof *a->movable);
    if (!a->groups || !a->cell_group || !a->movable) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    int gi = -1;
    for (size_t k = 0; k < net->nart; ++k) {
        if (k == 0 || net->art[k].pop != net->art[k - 1].pop) a->groups[++gi].first = k;
        a->cell_group[k] = (size_t)gi;
        a->movable[k] = SIZE_MAX;
        a->groups[gi].view.n++;
    }
    for (int g = 0; g < a->ngroup; ++g) {
        group *gr = &a->groups[g];
        const cs_population_spec *ps = &a->m->pops[net->art[gr->first].pop];
        const cs_mech_type *t = ps->artificial;
        size_t n = (size_t)gr->view.n;
        gr->a = a;
        gr->pbuf = malloc(((size_t)t->nparam * n + 1) * sizeof *gr->pbuf);
        gr->sbuf = calloc((size_t)t->nstate * n + 1, sizeof *gr->sbuf);
        if (!gr->pbuf || !gr->sbuf) return cs_error_set(CS_ERR_NOMEM, "out of memory");
        /* per instance: INITIAL may change a parameter (IntFire2's taus) */
        for (int j = 0; j < t->nparam; ++j) {
            gr->pp[j] = gr->pbuf + (size_t)j * n;
            for (size_t i = 0; i < n; ++i) gr->pp[j][i] = ps->artificial_param[j];
        }
        for (int j = 0; j < t->nstate; ++j) gr->sp[j] = gr->sbuf + (size_t)j * n;
        gr->ctx = (cs_net_ctx){svc_send, svc_event, svc_move, NULL, NULL};
        if (ps->play) { /* VecStim: this share's cells' times */
            int c0 = net->art[gr->first].index;
            gr->ctx.play = (const double *const *)(ps->play + c0);
            gr->ctx.nplay = ps->nplay + c0;
        }
        gr->view = (cs_mech_view){.n = (int)n, .param = gr->pp, .state = gr->sp, .t = 0.0, .dt = a->dt,
                                  .celsius = a->celsius, .net = &gr->ctx};
    }
    return CS_OK;
}

/* Weight vectors of the connections to these cells (slots [0, nwconn)), from the model. */
static cs_status build_weights(cs_artcells *a) {
    const cs_model *m = a->m;
    for (int pass = 0; pass < 2; ++pass) {
        a->nwconn = 0;
        for (size_t k = 0; k < m->nconn; ++k) {
            uint64_t tg = m->conns[k].target;
            if (tg < a->net->gid0 || tg - a->net->gid0 >= a->net->nshare || a->net->local[tg - a->net->gid0] >= 0)
                continue;
            if (pass) {
                const double *w = cs_model_conn_weights(m, k);
                double *dst = a->w + a->nwconn * CS_MAX_WEIGHTS;
                for (int j = 0; j < CS_MAX_WEIGHTS; ++j) dst[j] = w ? w[j] : j == 0 ? m->conns[k].weight : 0.0;
                a->wconn[a->nwconn] = k;
            }
            a->nwconn++;
        }
        if (!pass) {
            a->cap_slot = a->nwconn + 64;
            a->wconn = malloc((a->nwconn + 1) * sizeof *a->wconn);
            a->w = malloc(a->cap_slot * CS_MAX_WEIGHTS * sizeof *a->w);
            if (!a->wconn || !a->w) return cs_error_set(CS_ERR_NOMEM, "out of memory for connections");
        }
    }
    a->nslot = a->nwconn;
    return CS_OK;
}

cs_status cs_artcells_create(const cs_model *m, const cs_network_desc *net, double celsius, double dt,
                             cs_artcells **out) {
    *out = NULL;
    if (!net->nart) return CS_OK;
    cs_artcells *a = calloc(1, sizeof *a);
    if (!a) return cs_error_set(CS_ERR_NOMEM, "out of memory");
    a->m = m;
    a->net = net;
    a->celsius = celsius;
    a->dt = dt;
    cs_status st = build_groups(a);
    if (st == CS_OK) st = build_weights(a);
    if (st != CS_OK) {
        cs_artcells_destroy(a);
        return st;
    }
    *out = a;
    return CS_OK;
}

/* Where connection k's weights are (binary search of the sorted wconn). */
static size_t conn_slot(const cs_artcells *a, size_t k) {
    size_t lo = 0, hi = a->nwconn;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->wconn[mid] < k) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

cs_status cs_artcells_init(cs_artcells *a) {
    if (!a) return CS_OK;
    cs_spike *none = NULL;
    size_t n0 = 0, c0 = 0;
    a->spk = &none; /* an INITIAL block fires no spike (NEURON's net_event there reaches no one) */
    a->nspk = &n0;
    a->cap_spk = &c0;
    for (int g = 0; g < a->ngroup; ++g) {
        group *gr = &a->groups[g];
        gr->view.t = 0.0;
        a->m->pops[a->net->art[gr->first].pop].artificial->init(&gr->view);
    }
    for (size_t s = 0; s < a->nwconn; ++s) {
        size_t art = (size_t)(-1 - a->net->local[a->m->conns[a->wconn[s]].target - a->net->gid0]);
        group *gr = &a->groups[a->cell_group[art]];
        const cs_mech_type *t = a->m->pops[a->net->art[art].pop].artificial;
        if (t->net_init) t->net_init(&gr->view, (int)(art - gr->first), a->w + s * CS_MAX_WEIGHTS);
    }
    free(none);
    a->spk = NULL;
    return a->err;
}

cs_status cs_artcells_event(cs_artcells *a, size_t art, double t, size_t conn, double weight) {
    size_t slot;
    if (conn != SIZE_MAX) {
        slot = conn_slot(a, conn);
    } else { /* a model event: a weight vector of its own */
        if (a->nslot == a->cap_slot) {
            size_t nc = 2 * a->cap_slot;
            double *p = realloc(a->w, nc * CS_MAX_WEIGHTS * sizeof *p);
            if (!p) return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
            a->w = p;
            a->cap_slot = nc;
        }
        slot = a->nslot++;
        for (int j = 0; j < CS_MAX_WEIGHTS; ++j) a->w[slot * CS_MAX_WEIGHTS + j] = j ? 0.0 : weight;
    }
    uint64_t key = conn != SIZE_MAX ? (uint64_t)conn : (uint64_t)a->m->nconn + slot;
    if (push(a, (event){t, 0, key, art, 0.0, slot}) == SIZE_MAX)
        return cs_error_set(CS_ERR_NOMEM, "out of memory for events");
    return CS_OK;
}

cs_status cs_artcells_run(cs_artcells *a, double until, cs_spike **spk, size_t *n, size_t *cap) {
    if (!a) return CS_OK;
    a->spk = spk;
    a->nspk = n;
    a->cap_spk = cap;
    while (a->nheap && a->pool[a->heap[0]].t <= until && a->err == CS_OK) {
        size_t slot = pop(a);
        event e = a->pool[slot];
        if (e.self && a->movable[e.art] == slot) a->movable[e.art] = SIZE_MAX;
        group *gr = &a->groups[a->cell_group[e.art]];
        const cs_mech_type *t = a->m->pops[a->net->art[e.art].pop].artificial;
        gr->view.t = e.t;
        double scratch[CS_MAX_WEIGHTS] = {0};
        double *w = e.self ? scratch : a->w + e.wslot * CS_MAX_WEIGHTS;
        t->net_receive_vec(&gr->view, (int)(e.art - gr->first), w, e.self ? e.flag : 0.0);
    }
    a->spk = NULL;
    return a->err;
}

void cs_artcells_destroy(cs_artcells *a) {
    if (!a) return;
    for (int g = 0; a->groups && g < a->ngroup; ++g) {
        free(a->groups[g].pbuf);
        free(a->groups[g].sbuf);
    }
    free(a->groups);
    free(a->cell_group);
    free(a->movable);
    free(a->wconn);
    free(a->w);
    free(a->pool);
    free(a->heap);
    free(a->pos);
    free(a->free_slots);
    free(a);
}
