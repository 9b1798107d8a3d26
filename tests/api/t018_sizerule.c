/*
 * t018_sizerule: "if the sum of the maximum memory sizes of a set of trace
 * events ... is less than or equal to the stream-min-size attribute of that
 * trace stream, the system provides the necessary resources for recording all
 * those trace events, without loss".  With stream size S and user events of
 * data length d, floor(S / getmaxusereventsize(d)) events recorded without
 * reading are all read back: no OVERFLOW, no overrun, nothing else.
 *
 * Variants: START filtered out (only the user events in the stream) or
 * recorded (then it takes getmaxsystemeventsize() of the budget); one thread
 * or T threads all alive at once sharing the events; a mix of sizes.
 */
#include "tcommon.h"

static unsigned char payload[2048];

struct job {
    trace_event_id_t ev;
    size_t d;
    uint64_t from, count;
    pthread_barrier_t *bar;
};

static void record_range(const struct job *j)
{
    unsigned char buf[2048];
    memcpy(buf, payload, sizeof buf);
    for (uint64_t i = j->from; i < j->from + j->count; i++) {
        if (j->d >= sizeof i)
            memcpy(buf, &i, sizeof i);
        posix_trace_event(j->ev, buf, j->d);
    }
}

static void *thread_main(void *p)
{
    struct job *j = p;
    pthread_barrier_wait(j->bar);   /* all alive: each holds its own writer slot */
    record_range(j);
    pthread_barrier_wait(j->bar);
    return NULL;
}

static trace_id_t make(size_t S, int policy, int withstart, trace_event_id_t *ev,
                       trace_attr_t *a)
{
    trace_id_t trid;
    trace_event_set_t f;
    CHECK(posix_trace_attr_init(a));
    CHECK(posix_trace_attr_setstreamsize(a, S));
    CHECK(posix_trace_attr_setstreamfullpolicy(a, policy));
    CHECK(posix_trace_create(0, a, &trid));
    CHECK(posix_trace_trid_eventid_open(trid, "sized", ev));
    CHECK(posix_trace_eventset_empty(&f));
    if (!withstart)
        CHECK(posix_trace_eventset_add(POSIX_TRACE_START, &f));
    CHECK(posix_trace_set_filter(trid, &f, POSIX_TRACE_SET_EVENTSET));
    CHECK(posix_trace_start(trid));
    return trid;
}

/* Reads everything; returns the user events read; counts the others. */
static uint64_t read_all(trace_id_t trid, trace_event_id_t ev, size_t d, uint64_t *start,
                         uint64_t *other, uint64_t *bad, int check_seq)
{
    static tc_event e;
    uint64_t got = 0;
    *start = *other = *bad = 0;
    while (tc_try(trid, &e)) {
        if (e.info.posix_event_id == POSIX_TRACE_START) {
            (*start)++;
            continue;
        }
        if (e.info.posix_event_id != ev) {
            (*other)++;
            continue;
        }
        size_t want = d < 256 ? d : 256;
        if (d != (size_t)-1 && e.len != want)
            (*bad)++;
        else if (check_seq && d >= 8) {
            uint64_t s;
            memcpy(&s, e.data, sizeof s);
            if (s != got)
                (*bad)++;
        }
        got++;
    }
    return got;
}

static void one(size_t S, size_t d, int policy, int threads, int withstart)
{
    trace_attr_t a;
    trace_event_id_t ev;
    size_t evsize, syssize;
    trace_id_t trid = make(S, policy, withstart, &ev, &a);
    CHECK(posix_trace_attr_getmaxusereventsize(&a, d, &evsize));
    CHECK(posix_trace_attr_getmaxsystemeventsize(&a, &syssize));
    CHECK(posix_trace_attr_destroy(&a));

    uint64_t n = (S - (withstart ? syssize : 0)) / evsize;
    if (threads <= 1) {
        struct job j = { ev, d, 0, n, NULL };
        record_range(&j);
    } else {
        pthread_t th[64];
        struct job jobs[64];
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, (unsigned)threads + 1);
        uint64_t from = 0;
        for (int t = 0; t < threads; t++) {
            uint64_t c = n / (uint64_t)threads + ((uint64_t)t < n % (uint64_t)threads);
            jobs[t] = (struct job){ ev, d, from, c, &bar };
            from += c;
            TC_ASSERT(pthread_create(&th[t], NULL, thread_main, &jobs[t]) == 0);
        }
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        for (int t = 0; t < threads; t++)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&bar);
    }
    struct posix_trace_status_info st;
    CHECK(posix_trace_get_status(trid, &st));
    uint64_t start, other, bad;
    uint64_t got = read_all(trid, ev, d, &start, &other, &bad, threads <= 1);
    printf("S=%zu d=%zu policy=%s threads=%d start=%d evsize=%zu n=%" PRIu64 " read=%" PRIu64
           " start_read=%" PRIu64 " other=%" PRIu64 " bad=%" PRIu64 " overrun=%d stream=%s\n",
           S, d, tc_policy_name(policy), threads, withstart, evsize, n, got, start, other, bad,
           st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN,
           st.posix_stream_status == POSIX_TRACE_RUNNING ? "RUNNING" : "SUSPENDED");
    CHECK(posix_trace_shutdown(trid));
}

/* Alternating data lengths 0 and 256 (sizes 64 and 320) up to the budget. */
static void mixed(size_t S, int policy)
{
    trace_attr_t a;
    trace_event_id_t ev;
    size_t small, big;
    trace_id_t trid = make(S, policy, 0, &ev, &a);
    CHECK(posix_trace_attr_getmaxusereventsize(&a, 0, &small));
    CHECK(posix_trace_attr_getmaxusereventsize(&a, 256, &big));
    CHECK(posix_trace_attr_destroy(&a));
    size_t used = 0;
    uint64_t n = 0;
    for (;;) {
        size_t sz = (n % 2) ? big : small;
        if (used + sz > S)
            break;
        posix_trace_event(ev, payload, (n % 2) ? 256 : 0);
        used += sz;
        n++;
    }
    struct posix_trace_status_info st;
    CHECK(posix_trace_get_status(trid, &st));
    uint64_t start, other, bad;
    uint64_t got = read_all(trid, ev, (size_t)-1, &start, &other, &bad, 0);
    printf("S=%zu mixed policy=%s n=%" PRIu64 " read=%" PRIu64 " other=%" PRIu64
           " overrun=%d\n", S, tc_policy_name(policy), n, got, other,
           st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN);
    CHECK(posix_trace_shutdown(trid));
}

int main(void)
{
    static const size_t lens[] = { 0, 8, 24, 100, 256, 1000 };
    static const int pol[] = { POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL };
    tc_init();
    tc_watchdog(50);
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (unsigned char)i;
    for (size_t p = 0; p < 2; p++) {
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
            one(65536, lens[l], pol[p], 1, 0);
        one(65536, 8, pol[p], 1, 1);
        one(1u << 20, 8, pol[p], 1, 0);
        one(1u << 20, 256, pol[p], 1, 1);
        one(4096, 8, pol[p], 1, 0);
        one(65536, 8, pol[p], 16, 0);
        one(65536, 8, pol[p], 64, 1);
        mixed(65536, pol[p]);
    }
    return 0;
}
