/* The backends' event queue (src/core/cs_event_queue.h): whatever the pushes and takes, each take
 * returns exactly the pending events due by its time limit, in the total order of
 * cs_target_event_compare, as one sort of everything pending would; nothing is lost or taken
 * twice. Reference: the old way, an array sorted in full at every take (qsort). Batches of 256 or
 * more events take the radix sort (cs_radix_sort.h), smaller ones qsort. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_suite.h"
#include "cs_event_queue.h"

static unsigned long long rng = 88172645463325252ULL;
static unsigned next(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

/* an event at or after t0 [ms]; times on a coarse grid so that ties in time (and in instance and
 * weight) are common and the later keys decide */
static double wvec[2][4]; /* two connections' weight vectors: the last key, by address */
static cs_target_event event_after(double t0) {
    unsigned v = next() % 3;
    cs_target_event e = {t0 + 0.025 * (double)(next() % 200), next() % 7, 0.001 * (double)(next() % 3),
                         v ? wvec[v - 1] : NULL};
    return e;
}

static void run_case(int big_first, int rounds) {
    cs_event_queue q = {0};
    size_t cap = 1 << 20, nref = 0, total = 0, taken = 0;
    cs_target_event *ref = malloc(cap * sizeof *ref), batch[512];
    ck_assert_ptr_nonnull(ref);
    if (big_first == 1) { /* the inputs known before the run: many, over the whole run (0 .. 125 ms) */
        for (int k = 0; k < 50000; ++k) {
            ref[nref] = event_after(0.0);
            ref[nref++].time *= 25.0;
        }
        total = nref;
        ck_assert_int_eq(cs_event_queue_push(&q, nref, ref), CS_OK);
    }
    double t = 0.0;
    for (int r = 0; r < rounds; ++r) {
        if (big_first == 2 && r == rounds / 2) { /* a large batch mid-run: cut into deferred buckets */
            for (int k = 0; k < 40000; ++k) {
                ck_assert(nref < cap);
                ref[nref] = event_after(t + 0.5);
                ref[nref].time += 0.25 * (double)(next() % 400);
                ck_assert_int_eq(cs_event_queue_push(&q, 1, &ref[nref]), CS_OK);
                ++nref, ++total;
            }
        }
        /* an epoch's spikes become events at least one epoch ahead, in bursts of any size */
        int nb = (int)(next() % 4);
        for (int b = 0; b < nb; ++b) {
            size_t n = next() % 512;
            for (size_t k = 0; k < n; ++k) batch[k] = event_after(t + 0.5);
            ck_assert_int_eq(cs_event_queue_push(&q, n, batch), CS_OK);
            ck_assert(nref + n <= cap);
            memcpy(ref + nref, batch, n * sizeof *batch);
            nref += n;
            total += n;
        }
        t += 0.5;
        double limit = t + 0.0125;
        qsort(ref, nref, sizeof *ref, cs_target_event_compare);
        size_t due = 0;
        while (due < nref && ref[due].time <= limit) ++due;
        ck_assert_int_eq(cs_event_queue_take(&q, limit), CS_OK);
        ck_assert_uint_eq(q.ndue, due);
        for (size_t k = 0; k < due; ++k) ck_assert_int_eq(cs_target_event_compare(&q.due[k], &ref[k]), 0);
        memmove(ref, ref + due, (nref - due) * sizeof *ref);
        nref -= due;
        taken += due;
        ck_assert_uint_eq(cs_event_queue_pending(&q), nref);
        ck_assert_int_le(q.nrun, CS_EVENT_RUNS_MAX);
    }
    ck_assert_int_eq(cs_event_queue_take(&q, 1e300), CS_OK); /* the rest, in order */
    ck_assert_uint_eq(q.ndue, nref);
    qsort(ref, nref, sizeof *ref, cs_target_event_compare);
    for (size_t k = 0; k < nref; ++k) ck_assert_int_eq(cs_target_event_compare(&q.due[k], &ref[k]), 0);
    ck_assert_uint_eq(taken + q.ndue, total);
    ck_assert_uint_eq(cs_event_queue_pending(&q), 0);
    cs_event_queue_free(&q);
    free(ref);
}

START_TEST(spikes_only) { run_case(0, 400); }
END_TEST

START_TEST(inputs_known_in_advance) { run_case(1, 300); }
END_TEST

/* a batch of CS_EVENT_DEFER_MIN or more events mid-run: its buckets sorted as takes reach them */
START_TEST(large_batch_mid_run) { run_case(2, 300); }
END_TEST

START_TEST(empty_takes) {
    cs_event_queue q = {0};
    ck_assert_int_eq(cs_event_queue_take(&q, 10.0), CS_OK);
    ck_assert_uint_eq(q.ndue, 0);
    cs_target_event e = {5.0, 1, 0.5, NULL};
    ck_assert_int_eq(cs_event_queue_push(&q, 1, &e), CS_OK);
    ck_assert_int_eq(cs_event_queue_take(&q, 4.999), CS_OK);
    ck_assert_uint_eq(q.ndue, 0);
    ck_assert_int_eq(cs_event_queue_take(&q, 5.0), CS_OK); /* due at exactly the limit */
    ck_assert_uint_eq(q.ndue, 1);
    ck_assert_double_eq(q.due[0].time, 5.0);
    ck_assert_uint_eq(cs_event_queue_pending(&q), 0);
    cs_event_queue_free(&q);
}
END_TEST

int main(void) {
    Suite *s = suite_create("event_queue");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, spikes_only);
    tcase_add_test(tc, inputs_known_in_advance);
    tcase_add_test(tc, large_batch_mid_run);
    tcase_add_test(tc, empty_takes);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
