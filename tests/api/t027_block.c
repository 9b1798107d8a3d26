/*
 * t027_block: blocking writers, an extension (<posixtrace/control.h>
 * posixtrace_attr_setblocking; doc/semantics.md "Blocking writers").
 *
 *   t027_block attr
 *       the attribute's defaults and error codes; posix_trace_get_attr
 *   t027_block slow POLICY BLOCK_MS WRITERS N
 *       a 64 KiB stream (POLICY loop or until-full), BLOCK_MS 0: off;
 *       WRITERS threads record N events each (data: writer << 32 | seq)
 *       while the main thread reads slowly (1 ms asleep every 50 events):
 *       prints what arrived, per writer in order or not, and the losses
 *   t027_block declared POLICY BLOCK_MS WRITERS N
 *       the same, the reader declared with posixtrace_stream_consumer and
 *       reading only 300 ms after the writers began
 *   t027_block flush BLOCK_MS N
 *       the same through a log (policy FLUSH, its flusher the consumer),
 *       one writer, no sleeping: the log read back after shutdown
 *   t027_block noreader BLOCK_MS N
 *       nobody reads the stream: N events take no wait (elapsed time)
 *   t027_block selfreader BLOCK_MS N
 *       the reading thread records itself: it does not wait for itself
 *   t027_block stall BLOCK_MS N
 *       a reader that read once, then stopped: the writer waits once,
 *       BLOCK_MS, then overwrites (LOOP); losses counted exactly
 *   t027_block release stop|shutdown BLOCK_MS
 *       a writer waiting on a stalled reader is released by
 *       posix_trace_stop / posix_trace_shutdown 200 ms later
 */
#include "tcommon.h"

#include <fcntl.h>
#include <posixtrace/control.h>
#include <stdatomic.h>

#define STREAM 65536
#define MAXW 8

static trace_id_t trid;
static trace_event_id_t ev;
static long n_events;
static atomic_int writers_done;
static int64_t writer_ns[MAXW];

static void set_block(trace_attr_t *a, long ms)
{
    if (ms > 0) {
        struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
        CHECK(posixtrace_attr_setblocking(a, &t));
    }
}

static trace_id_t create(int policy, long block_ms)
{
    trace_attr_t a;
    trace_id_t t;
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_setstreamsize(&a, STREAM));
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, policy));
    set_block(&a, block_ms);
    CHECK(posix_trace_create(0, &a, &t));
    CHECK(posix_trace_attr_destroy(&a));
    return t;
}

static void show_get(const char *label, const trace_attr_t *a)
{
    struct timespec t = { -1, -1 };
    int rc = posixtrace_attr_getblocking(a, &t);
    printf("%s rc=%s sec=%ld nsec=%ld\n", label, tc_errname(rc), (long)t.tv_sec, t.tv_nsec);
}

static void show_set(const char *label, long sec, long nsec)
{
    trace_attr_t a;
    CHECK(posix_trace_attr_init(&a));
    struct timespec t = { sec, nsec };
    printf("set %s rc=%s\n", label, tc_errname(posixtrace_attr_setblocking(&a, &t)));
    show_get("  then", &a);
    CHECK(posix_trace_attr_destroy(&a));
}

static int attr_mode(void)
{
    trace_attr_t a, got;
    struct timespec t = { 0, 0 };
    CHECK(posix_trace_attr_init(&a));
    show_get("default", &a);
    printf("get NULL rc=%s\n", tc_errname(posixtrace_attr_getblocking(&a, NULL)));
    printf("set NULL rc=%s\n", tc_errname(posixtrace_attr_setblocking(&a, NULL)));
    show_set("zero", 0, 0);
    show_set("1ns", 0, 1);
    show_set("100ms", 0, 100000000);
    show_set("max", POSIXTRACE_BLOCK_TIMEOUT_MAX_MS / 1000, 0);
    show_set("max+1ns", POSIXTRACE_BLOCK_TIMEOUT_MAX_MS / 1000, 1);
    show_set("negsec", -1, 0);
    show_set("negnsec", 0, -1);
    show_set("nsec1e9", 0, 1000000000);
    show_set("huge", 1L << 40, 0);
    /* the stream keeps it: posix_trace_get_attr */
    set_block(&a, 250);
    CHECK(posix_trace_create(0, &a, &trid));
    CHECK(posix_trace_get_attr(trid, &got));
    show_get("stream", &got);
    CHECK(posix_trace_shutdown(trid));
    CHECK(posixtrace_attr_setblocking(&a, NULL));
    CHECK(posix_trace_create(0, &a, &trid));
    CHECK(posix_trace_get_attr(trid, &got));
    show_get("stream off", &got);
    printf("consumer off rc=%s\n", tc_errname(posixtrace_stream_consumer(trid)));
    CHECK(posix_trace_shutdown(trid));
    printf("consumer shut down rc=%s\n", tc_errname(posixtrace_stream_consumer(trid)));
    printf("consumer bad trid rc=%s\n", tc_errname(posixtrace_stream_consumer((trace_id_t)-1)));
    /* destroyed or never initialized: EINVAL */
    CHECK(posix_trace_attr_destroy(&a));
    show_get("destroyed get", &a);
    t.tv_nsec = 1000;
    printf("destroyed set rc=%s\n", tc_errname(posixtrace_attr_setblocking(&a, &t)));
    printf("NULL attr set rc=%s\n", tc_errname(posixtrace_attr_setblocking(NULL, &t)));
    printf("NULL attr get rc=%s\n", tc_errname(posixtrace_attr_getblocking(NULL, &t)));
    return 0;
}

static void *writer_main(void *arg)
{
    uint64_t w = (uint64_t)(uintptr_t)arg;
    int64_t t0 = tc_mono_ns();
    for (long i = 0; i < n_events; i++) {
        uint64_t v = w << 32 | (uint64_t)i;
        posix_trace_event(ev, &v, sizeof v);
    }
    writer_ns[w] = tc_mono_ns() - t0;
    atomic_fetch_add(&writers_done, 1);
    return NULL;
}

/* What a reader saw: per writer, the events and whether each came after
 * the one before it; the losses OVERFLOW reported. */
struct seen {
    long n[MAXW], out_of_order[MAXW];
    int64_t next[MAXW];
    uint64_t overflow;
    long stops, user;
};

static void tally(struct seen *s, const tc_event *e)
{
    if (e->info.posix_event_id == ev && e->len == 8) {
        uint64_t v;
        memcpy(&v, e->data, 8);
        uint32_t w = (uint32_t)(v >> 32);
        int64_t i = (int64_t)(uint32_t)v;
        if (w >= MAXW)
            return;
        s->n[w]++;
        s->user++;
        if (i != s->next[w])
            s->out_of_order[w] += i < s->next[w];
        s->next[w] = i + 1;
    } else if (e->info.posix_event_id == POSIX_TRACE_OVERFLOW && e->len == 8) {
        uint64_t v;
        memcpy(&v, e->data, 8);
        s->overflow += v;
    } else if (e->info.posix_event_id == POSIX_TRACE_STOP) {
        s->stops++;
    }
}

static void print_seen(const struct seen *s, int writers)
{
    for (int w = 0; w < writers; w++)
        printf("writer %d read=%ld last=%" PRId64 " backwards=%ld\n", w, s->n[w],
               s->next[w] - 1, s->out_of_order[w]);
    printf("total read=%ld overflow=%" PRIu64 "\n", s->user, s->overflow);
}

/* timedgetnext, 500 ms at most: 1 an event, 0 none */
static int next_timed(trace_id_t t, tc_event *e, long ms)
{
    int unavailable = -1;
    struct timespec dl = tc_ns_ts(tc_now_ns() + ms * 1000000L);
    int rc = posix_trace_timedgetnext_event(t, &e->info, e->data, sizeof e->data, &e->len,
                                            &unavailable, &dl);
    if (rc == ETIMEDOUT)
        return 0;
    if (rc != 0) {
        printf("timedgetnext rc=%s\n", tc_errname(rc));
        exit(2);
    }
    return !unavailable;
}

static int slow_mode(int policy, long block_ms, int writers, long n, int declare)
{
    static tc_event e;
    struct seen s = { 0 };
    pthread_t th[MAXW];
    n_events = n;
    ev = tc_open("block");
    trid = create(policy, block_ms);
    CHECK(posix_trace_start(trid));
    if (declare) /* the reader says it is there before the writers begin */
        CHECK(posixtrace_stream_consumer(trid));
    else
        tc_try(trid, &e); /* the reader is there: it has read */
    for (int w = 0; w < writers; w++)
        TC_ASSERT(pthread_create(&th[w], NULL, writer_main, (void *)(uintptr_t)w) == 0);
    if (declare)
        tc_sleep_ms(300);
    long k = 0;
    for (;;) {
        if (!next_timed(trid, &e, 500)) {
            if (atomic_load(&writers_done) == writers)
                break;
            continue;
        }
        tally(&s, &e);
        if (++k % 50 == 0)
            tc_sleep_ms(1);
    }
    for (int w = 0; w < writers; w++)
        pthread_join(th[w], NULL);
    print_seen(&s, writers);
    struct posix_trace_status_info st;
    CHECK(posix_trace_get_status(trid, &st));
    printf("overrun=%s\n", tc_overrun_name(st.posix_stream_overrun_status));
    CHECK(posix_trace_shutdown(trid));
    return 0;
}

static int flush_mode(long block_ms, long n)
{
    static tc_event e;
    struct seen s = { 0 };
    char path[] = "/tmp/t027_block_XXXXXX";
    int fd = mkstemp(path);
    TC_ASSERT(fd >= 0);
    n_events = n;
    ev = tc_open("block");
    trace_attr_t a;
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_setstreamsize(&a, STREAM));
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH));
    CHECK(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND));
    set_block(&a, block_ms);
    CHECK(posix_trace_create_withlog(0, &a, fd, &trid));
    CHECK(posix_trace_attr_destroy(&a));
    printf("consumer with log rc=%s\n", tc_errname(posixtrace_stream_consumer(trid)));
    CHECK(posix_trace_start(trid));
    writer_main((void *)0);
    CHECK(posix_trace_shutdown(trid));
    close(fd);
    fd = open(path, O_RDONLY);
    unlink(path);
    TC_ASSERT(fd >= 0);
    CHECK(posix_trace_open(fd, &trid));
    while (tc_next(trid, &e))
        tally(&s, &e);
    CHECK(posix_trace_close(trid));
    print_seen(&s, 1);
    return 0;
}

/* Nobody reads (noreader), or the one reader is this thread (selfreader):
 * 20 streams' worth of events, no wait. */
static int noreader_mode(int self, long block_ms, long n)
{
    static tc_event e;
    ev = tc_open("block");
    trid = create(POSIX_TRACE_LOOP, block_ms);
    CHECK(posix_trace_start(trid));
    if (self)
        tc_try(trid, &e);
    n_events = n;
    writer_main((void *)0);
    printf("elapsed_ms=%" PRId64 "\n", writer_ns[0] / 1000000);
    struct posix_trace_status_info st;
    CHECK(posix_trace_get_status(trid, &st));
    printf("overrun=%s\n", tc_overrun_name(st.posix_stream_overrun_status));
    CHECK(posix_trace_shutdown(trid));
    return 0;
}

static void *read_once(void *arg)
{
    static tc_event e;
    (void)arg;
    tc_try(trid, &e);
    return NULL;
}

/* A reader thread that reads once and is gone: the consumer is there, but stalled. */
static void stalled_reader(void)
{
    pthread_t r;
    TC_ASSERT(pthread_create(&r, NULL, read_once, NULL) == 0);
    pthread_join(r, NULL);
}

static int stall_mode(long block_ms, long n)
{
    static tc_event e;
    struct seen s = { 0 };
    ev = tc_open("block");
    trid = create(POSIX_TRACE_LOOP, block_ms);
    CHECK(posix_trace_start(trid));
    stalled_reader();
    n_events = n;
    writer_main((void *)0);
    printf("elapsed_ms=%" PRId64 "\n", writer_ns[0] / 1000000);
    CHECK(posix_trace_stop(trid));
    while (next_timed(trid, &e, 200))
        tally(&s, &e);
    print_seen(&s, 1);
    printf("read+lost=%" PRIu64 "\n", (uint64_t)s.user + s.overflow);
    CHECK(posix_trace_shutdown(trid));
    return 0;
}

static int release_mode(const char *how, long block_ms)
{
    pthread_t th;
    ev = tc_open("block");
    trid = create(POSIX_TRACE_LOOP, block_ms);
    CHECK(posix_trace_start(trid));
    stalled_reader();
    n_events = 1000000; /* 20 streams' worth: waits at the first full chunk switch */
    int64_t t0 = tc_mono_ns();
    TC_ASSERT(pthread_create(&th, NULL, writer_main, NULL) == 0);
    tc_sleep_ms(200);
    if (strcmp(how, "stop") == 0)
        CHECK(posix_trace_stop(trid));
    else
        CHECK(posix_trace_shutdown(trid));
    int64_t t1 = tc_mono_ns();
    pthread_join(th, NULL);
    printf("released_ms=%" PRId64 " writer_ms=%" PRId64 "\n", (tc_mono_ns() - t1) / 1000000,
           (tc_mono_ns() - t0) / 1000000);
    if (strcmp(how, "stop") == 0)
        CHECK(posix_trace_shutdown(trid));
    return 0;
}

static int policy_of(const char *p)
{
    return strcmp(p, "until-full") == 0 ? POSIX_TRACE_UNTIL_FULL : POSIX_TRACE_LOOP;
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(120);
    const char *m = argc > 1 ? argv[1] : "";
    if (strcmp(m, "attr") == 0)
        return attr_mode();
    if ((strcmp(m, "slow") == 0 || strcmp(m, "declared") == 0) && argc == 6)
        return slow_mode(policy_of(argv[2]), atol(argv[3]), atoi(argv[4]) % MAXW, atol(argv[5]),
                         m[0] == 'd');
    if (strcmp(m, "flush") == 0 && argc == 4)
        return flush_mode(atol(argv[2]), atol(argv[3]));
    if ((strcmp(m, "noreader") == 0 || strcmp(m, "selfreader") == 0) && argc == 4)
        return noreader_mode(m[0] == 's', atol(argv[2]), atol(argv[3]));
    if (strcmp(m, "stall") == 0 && argc == 4)
        return stall_mode(atol(argv[2]), atol(argv[3]));
    if (strcmp(m, "release") == 0 && argc == 4)
        return release_mode(argv[2], atol(argv[3]));
    fprintf(stderr, "usage: see the comment at the top\n");
    return 2;
}
