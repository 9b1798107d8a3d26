/*
 * t024_streamsize: the stream size posix_trace_get_attr() reports against
 * what the stream holds.
 *
 * For each case (stream-min-size S, T writer threads, policy): a stream with
 * max-data-size 256 and START filtered out; the stream size reported before
 * start (no writer yet); T threads, all alive at once, each record one
 * event of 256 bytes, then (once all have) `per` - 1 more, enough to
 * overfill the stream; with the threads still alive:
 * the status and the stream size reported; then everything is read: the
 * events read and the OVERFLOW lost counts.  One line per case, checked by
 * test_stream_size.py.
 */
#include "tcommon.h"

struct job {
    trace_event_id_t ev;
    uint64_t per;
    pthread_barrier_t *bar;
};

static void *writer(void *p)
{
    struct job *j = p;
    unsigned char buf[256];
    memset(buf, 0x5a, sizeof buf);
    pthread_barrier_wait(j->bar); /* all alive */
    memcpy(buf, &(uint64_t){ 0 }, sizeof(uint64_t));
    posix_trace_event(j->ev, buf, sizeof buf); /* each holds a writer slot and a chunk */
    pthread_barrier_wait(j->bar);
    for (uint64_t i = 1; i < j->per; i++) {
        memcpy(buf, &i, sizeof i);
        posix_trace_event(j->ev, buf, sizeof buf);
    }
    pthread_barrier_wait(j->bar); /* recorded */
    pthread_barrier_wait(j->bar); /* read */
    return NULL;
}

static size_t reported(trace_id_t trid)
{
    trace_attr_t a;
    size_t n = 0;
    CHECK(posix_trace_get_attr(trid, &a));
    CHECK(posix_trace_attr_getstreamsize(&a, &n));
    CHECK(posix_trace_attr_destroy(&a));
    return n;
}

/* Reads everything: user events into *read, OVERFLOW lost counts into *lost. */
static void read_all(trace_id_t trid, trace_event_id_t ev, uint64_t *read, uint64_t *lost)
{
    static tc_event e;
    *read = *lost = 0;
    while (tc_try(trid, &e)) {
        if (e.info.posix_event_id == ev) {
            TC_ASSERT(e.len == 256);
            (*read)++;
        } else if (e.info.posix_event_id == POSIX_TRACE_OVERFLOW) {
            uint64_t n;
            TC_ASSERT(e.len == sizeof n);
            memcpy(&n, e.data, sizeof n);
            *lost += n;
        }
    }
}

static void one(size_t S, int threads, int policy)
{
    trace_event_id_t ev;
    trace_event_set_t f;
    size_t evsize;
    trace_attr_t a;
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_getmaxusereventsize(&a, 256, &evsize));
    CHECK(posix_trace_attr_destroy(&a));
    trace_id_t trid = tc_create(S, 256, policy);
    CHECK(posix_trace_trid_eventid_open(trid, "sized", &ev));
    CHECK(posix_trace_eventset_empty(&f));
    CHECK(posix_trace_eventset_add(POSIX_TRACE_START, &f));
    CHECK(posix_trace_set_filter(trid, &f, POSIX_TRACE_SET_EVENTSET));
    size_t before = reported(trid);
    CHECK(posix_trace_start(trid));

    /* twice what the stream could hold if it held 256 KiB more than asked */
    uint64_t per = (2 * ((uint64_t)S + 256 * 1024) / (evsize - 32)) / (uint64_t)threads + 1;
    pthread_t th[8];
    pthread_barrier_t bar;
    struct job j = { ev, per, &bar };
    pthread_barrier_init(&bar, NULL, (unsigned)threads + 1);
    for (int t = 0; t < threads; t++)
        TC_ASSERT(pthread_create(&th[t], NULL, writer, &j) == 0);
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    struct posix_trace_status_info st;
    CHECK(posix_trace_get_status(trid, &st));
    size_t after = reported(trid);
    uint64_t nread, lost;
    read_all(trid, ev, &nread, &lost);
    pthread_barrier_wait(&bar);
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&bar);
    printf("S=%zu threads=%d policy=%s evsize=%zu written=%" PRIu64 " before=%zu"
           " reported=%zu read=%" PRIu64 " lost=%" PRIu64 " full=%d overrun=%d\n",
           S, threads, tc_policy_name(policy), evsize, per * (uint64_t)threads, before, after,
           nread, lost, st.posix_stream_full_status == POSIX_TRACE_FULL,
           st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN);
    CHECK(posix_trace_shutdown(trid));
}

int main(void)
{
    static const size_t sizes[] = { 4096, 65536, 1u << 20, 16u << 20 };
    static const int pol[] = { POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_LOOP };
    tc_init();
    tc_watchdog(100);
    for (size_t p = 0; p < 2; p++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (int t = 1; t <= 4; t += 3)
                one(sizes[i], t, pol[p]);
    return 0;
}
