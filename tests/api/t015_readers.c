/*
 * t015_readers: posix_trace_getnext_event, posix_trace_trygetnext_event,
 * posix_trace_timedgetnext_event: blocking, waking, timeouts, EINVAL, EINTR.
 *
 * Modes (argv[1]): try_empty getnext_wakes getnext_start timed_past
 *   timed_wait timed_invalid timed_wakes shutdown_getnext shutdown_timed
 *   eintr_getnext eintr_timed two_readers
 */
#include "tcommon.h"

static trace_id_t g_trid;
static trace_event_id_t g_ev;

struct rd {
    int timed;              /* 0 getnext, 1 timedgetnext */
    struct timespec abst;
    int rc, un;
    size_t len;
    struct posix_trace_event_info info;
    unsigned char data[1024];
    int64_t t_call, t_ret;  /* CLOCK_REALTIME around the call */
    int entered, returned;  /* __atomic accesses */
    pthread_t self;
};

static void *reader_main(void *p)
{
    struct rd *r = p;
    r->self = pthread_self();
    r->un = -1;
    r->t_call = tc_now_ns();
    __atomic_store_n(&r->entered, 1, __ATOMIC_SEQ_CST);
    if (r->timed)
        r->rc = posix_trace_timedgetnext_event(g_trid, &r->info, r->data, sizeof r->data,
                                               &r->len, &r->un, &r->abst);
    else
        r->rc = posix_trace_getnext_event(g_trid, &r->info, r->data, sizeof r->data,
                                          &r->len, &r->un);
    r->t_ret = tc_now_ns();
    __atomic_store_n(&r->returned, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* Starts a reader thread, waits until it is about to call, then 200 ms more. */
static void start_reader(pthread_t *th, struct rd *r)
{
    TC_ASSERT(pthread_create(th, NULL, reader_main, r) == 0);
    while (!__atomic_load_n(&r->entered, __ATOMIC_SEQ_CST))
        tc_sleep_ms(1);
    tc_sleep_ms(200);
}

static void drain_start(void)
{
    static tc_event e;
    TC_ASSERT(tc_try(g_trid, &e) && e.info.posix_event_id == POSIX_TRACE_START);
    TC_ASSERT(!tc_try(g_trid, &e));
}

static void setup(int start)
{
    g_ev = tc_open("ev");
    CHECK(posix_trace_create(0, NULL, &g_trid));
    if (start) {
        CHECK(posix_trace_start(g_trid));
        drain_start();
    }
}

static void report(const char *label, const struct rd *r)
{
    /* unavailable is only defined on success */
    printf("%s rc=%s", label, tc_errname(r->rc));
    if (r->rc == 0)
        printf(" unavailable=%d", r->un != 0);
    if (r->rc == 0 && r->un == 0) {
        printf(" id=%u len=%zu data=", (unsigned)r->info.posix_event_id, r->len);
        tc_print_hex(stdout, r->data, r->len < 32 ? r->len : 32);
    }
    printf("\n");
}

static void mode_try_empty(void)
{
    struct posix_trace_event_info info;
    char buf[64];
    size_t len;
    int un;

    setup(0);
    /* suspended, never started, empty */
    un = 0;
    int64_t t0 = tc_mono_ns();
    int rc = posix_trace_trygetnext_event(g_trid, &info, buf, sizeof buf, &len, &un);
    printf("suspended empty rc=%s unavailable=%d\n", tc_errname(rc), un != 0);
    CHECK(posix_trace_start(g_trid));
    drain_start();
    /* running, empty: many calls, none blocks */
    int all = 1;
    for (int i = 0; i < 1000; i++) {
        un = 0;
        rc = posix_trace_trygetnext_event(g_trid, &info, buf, sizeof buf, &len, &un);
        if (rc != 0 || un == 0)
            all = 0;
    }
    printf("running empty x1000 all_unavailable=%d\n", all);
    posix_trace_event(g_ev, "ab", 2);
    un = -1;
    rc = posix_trace_trygetnext_event(g_trid, &info, buf, sizeof buf, &len, &un);
    printf("one event rc=%s unavailable=%d len=%zu\n", tc_errname(rc), un != 0, len);
    un = 0;
    rc = posix_trace_trygetnext_event(g_trid, &info, buf, sizeof buf, &len, &un);
    printf("then rc=%s unavailable=%d\n", tc_errname(rc), un != 0);
    int64_t t1 = tc_mono_ns();
    printf("fast=%d\n", t1 - t0 < 2000000000LL);
    CHECK(posix_trace_shutdown(g_trid));
}

static void mode_getnext_wakes(void)
{
    struct rd r;
    pthread_t th;
    memset(&r, 0, sizeof r);
    setup(1);
    start_reader(&th, &r);
    printf("reader still blocked=%d\n", !__atomic_load_n(&r.returned, __ATOMIC_SEQ_CST));
    int64_t before = tc_now_ns();
    posix_trace_event(g_ev, "wake", 4);
    pthread_join(th, NULL);
    report("getnext", &r);
    int64_t ts = tc_ts_ns(&r.info.posix_timestamp);
    printf("waited=%d returned_after_event=%d\n", before - r.t_call >= 150000000LL,
           r.t_ret >= ts && ts >= before - 10000);
    CHECK(posix_trace_shutdown(g_trid));
}

static void mode_getnext_start(void)
{
    struct rd r;
    pthread_t th;
    memset(&r, 0, sizeof r);
    setup(0);   /* suspended: getnext still blocks (the stream is active) */
    start_reader(&th, &r);
    printf("reader still blocked=%d\n", !__atomic_load_n(&r.returned, __ATOMIC_SEQ_CST));
    CHECK(posix_trace_start(g_trid));
    pthread_join(th, NULL);
    report("getnext", &r);
    CHECK(posix_trace_shutdown(g_trid));
}

static void mode_timed_past(void)
{
    struct rd r;
    setup(1);
    memset(&r, 0, sizeof r);
    r.timed = 1;
    r.abst.tv_sec = 0;
    r.abst.tv_nsec = 0;
    reader_main(&r);
    report("abstime=0", &r);
    printf("immediate=%d\n", r.t_ret - r.t_call < 1000000000LL);
    memset(&r, 0, sizeof r);
    r.timed = 1;
    r.abst = tc_ns_ts(tc_now_ns() - 1000000000LL);
    reader_main(&r);
    report("abstime=now-1s", &r);
    printf("immediate=%d\n", r.t_ret - r.t_call < 1000000000LL);
    memset(&r, 0, sizeof r);
    r.timed = 1;
    r.abst = tc_ns_ts(tc_now_ns());
    reader_main(&r);
    report("abstime=now", &r);
    printf("immediate=%d\n", r.t_ret - r.t_call < 1000000000LL);
    CHECK(posix_trace_shutdown(g_trid));
}

static void mode_timed_wait(void)
{
    struct rd r;
    setup(1);
    for (int ms = 50; ms <= 150; ms += 100) {
        memset(&r, 0, sizeof r);
        r.timed = 1;
        int64_t m0 = tc_mono_ns();
        r.abst = tc_ns_ts(tc_now_ns() + ms * 1000000LL);
        reader_main(&r);
        int64_t m1 = tc_mono_ns();
        char lbl[32];
        snprintf(lbl, sizeof lbl, "timeout %dms", ms);
        report(lbl, &r);
        /* expired only once CLOCK_REALTIME reached abstime */
        printf("%s returned_at_or_after_abstime=%d waited_enough=%d not_too_long=%d\n", lbl,
               r.t_ret >= tc_ts_ns(&r.abst), m1 - m0 >= (ms - 1) * 1000000LL,
               m1 - m0 < 5000000000LL);
    }
    CHECK(posix_trace_shutdown(g_trid));
}

static void mode_timed_invalid(void)
{
    struct rd r;
    static const long bad[] = { 1000000000L, -1L, 2000000000L };
    setup(1);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&r, 0, sizeof r);
        r.timed = 1;
        r.abst.tv_sec = time(NULL) + 1;
        r.abst.tv_nsec = bad[i];
        reader_main(&r);
        char lbl[64];
        snprintf(lbl, sizeof lbl, "empty tv_nsec=%ld", bad[i]);
        report(lbl, &r);
    }
    /* an event immediately available is returned whatever abstime is */
    posix_trace_event(g_ev, "x1", 2);
    posix_trace_event(g_ev, "x2", 2);
    posix_trace_event(g_ev, "x3", 2);
    memset(&r, 0, sizeof r);
    r.timed = 1;
    r.abst.tv_sec = time(NULL) + 1;
    r.abst.tv_nsec = 1000000000L;
    reader_main(&r);
    report("available tv_nsec=1000000000", &r);
    memset(&r, 0, sizeof r);
    r.timed = 1;
    r.abst.tv_sec = 0;
    r.abst.tv_nsec = 0;
    reader_main(&r);
    report("available abstime=0", &r);
    memset(&r, 0, sizeof r);
    r.timed = 1;
    r.abst = tc_ns_ts(tc_now_ns() - 1000000000LL);
    reader_main(&r);
    report("available abstime=now-1s", &r);
    memset(&r, 0, sizeof r);
    r.timed = 1;
    r.abst.tv_sec = 0;
    r.abst.tv_nsec = 0;
    reader_main(&r);
    report("empty again abstime=0", &r);
    CHECK(posix_trace_shutdown(g_trid));
}

static void mode_timed_wakes(void)
{
    struct rd r;
    pthread_t th;
    memset(&r, 0, sizeof r);
    setup(1);
    r.timed = 1;
    r.abst = tc_ns_ts(tc_now_ns() + 10000000000LL);   /* +10 s */
    start_reader(&th, &r);
    printf("reader still blocked=%d\n", !__atomic_load_n(&r.returned, __ATOMIC_SEQ_CST));
    posix_trace_event(g_ev, "wake", 4);
    pthread_join(th, NULL);
    report("timedgetnext", &r);
    printf("well before timeout=%d\n", r.t_ret < tc_ts_ns(&r.abst) - 5000000000LL);
    CHECK(posix_trace_shutdown(g_trid));
}

static void mode_shutdown(int timed)
{
    struct rd r;
    pthread_t th;
    memset(&r, 0, sizeof r);
    setup(1);
    r.timed = timed;
    r.abst = tc_ns_ts(tc_now_ns() + 20000000000LL);   /* +20 s */
    start_reader(&th, &r);
    printf("reader still blocked=%d\n", !__atomic_load_n(&r.returned, __ATOMIC_SEQ_CST));
    int64_t t0 = tc_now_ns();
    SHOW("shutdown", posix_trace_shutdown(g_trid));
    pthread_join(th, NULL);
    report(timed ? "timedgetnext" : "getnext", &r);
    printf("woken promptly=%d\n", r.t_ret - t0 < 5000000000LL);
}

static volatile sig_atomic_t g_sigs;

static void on_sigusr1(int sig)
{
    (void)sig;
    g_sigs++;
}

static void mode_eintr(int timed)
{
    struct rd r;
    pthread_t th;
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigusr1;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;   /* no SA_RESTART */
    TC_ASSERT(sigaction(SIGUSR1, &sa, NULL) == 0);

    memset(&r, 0, sizeof r);
    setup(1);
    r.timed = timed;
    r.abst = tc_ns_ts(tc_now_ns() + 20000000000LL);
    TC_ASSERT(pthread_create(&th, NULL, reader_main, &r) == 0);
    while (!__atomic_load_n(&r.entered, __ATOMIC_SEQ_CST))
        tc_sleep_ms(1);
    tc_sleep_ms(100);
    /* signal the reader until it returns (a signal that lands before it
     * blocks is simply handled; one that lands while it blocks interrupts) */
    int sent = 0;
    while (!__atomic_load_n(&r.returned, __ATOMIC_SEQ_CST) && sent < 100) {
        pthread_kill(th, SIGUSR1);
        sent++;
        tc_sleep_ms(50);
    }
    if (!__atomic_load_n(&r.returned, __ATOMIC_SEQ_CST)) {
        printf("not interrupted after %d signals: releasing the reader\n", sent);
        posix_trace_event(g_ev, "release", 7);
    }
    pthread_join(th, NULL);
    report(timed ? "timedgetnext" : "getnext", &r);
    printf("handler ran=%d\n", g_sigs > 0);
    /* the call had no effect: a later event is read normally */
    posix_trace_event(g_ev, "next", 4);
    static tc_event e;
    int got = tc_try(g_trid, &e);
    printf("then event=%d id_ok=%d\n", got, got && e.info.posix_event_id == g_ev);
    CHECK(posix_trace_shutdown(g_trid));
}

/* Two threads reading one stream concurrently: every event reported once. */
enum { TWO_N = 20000 };
static volatile int g_done;
static int g_seen[TWO_N];
static int g_count[2], g_bad[2];

static void *two_reader(void *p)
{
    int me = (int)(intptr_t)p;
    struct posix_trace_event_info info;
    int v;
    size_t len;
    int un;
    for (;;) {
        struct timespec abst = tc_ns_ts(tc_now_ns() + 20000000LL);
        int rc = posix_trace_timedgetnext_event(g_trid, &info, &v, sizeof v, &len, &un, &abst);
        if (rc == ETIMEDOUT) {
            if (g_done)
                break;
            continue;
        }
        if (rc != 0) {
            g_bad[me]++;
            break;
        }
        if (un || info.posix_event_id != g_ev)
            continue;
        if (len != sizeof v || v < 0 || v >= TWO_N) {
            g_bad[me]++;
            continue;
        }
        __atomic_fetch_add(&g_seen[v], 1, __ATOMIC_RELAXED);
        g_count[me]++;
    }
    return NULL;
}

static void mode_two_readers(void)
{
    pthread_t th[2];
    g_ev = tc_open("ev");
    g_trid = tc_create(16u << 20, 0, 0);   /* room for all: no loss */
    CHECK(posix_trace_start(g_trid));
    drain_start();
    for (int i = 0; i < 2; i++)
        TC_ASSERT(pthread_create(&th[i], NULL, two_reader, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < TWO_N; i++)
        posix_trace_event(g_ev, &i, sizeof i);
    tc_sleep_ms(100);
    g_done = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    int once = 0, missing = 0, dup = 0;
    for (int i = 0; i < TWO_N; i++) {
        if (g_seen[i] == 1)
            once++;
        else if (g_seen[i] == 0)
            missing++;
        else
            dup++;
    }
    printf("two readers total=%d once=%d missing=%d dup=%d bad=%d\n",
           g_count[0] + g_count[1], once, missing, dup, g_bad[0] + g_bad[1]);
    CHECK(posix_trace_shutdown(g_trid));
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(15);
    if (argc != 2) {
        printf("usage: t015_readers MODE\n");
        return 2;
    }
    const char *m = argv[1];
    if (!strcmp(m, "try_empty"))
        mode_try_empty();
    else if (!strcmp(m, "getnext_wakes"))
        mode_getnext_wakes();
    else if (!strcmp(m, "getnext_start"))
        mode_getnext_start();
    else if (!strcmp(m, "timed_past"))
        mode_timed_past();
    else if (!strcmp(m, "timed_wait"))
        mode_timed_wait();
    else if (!strcmp(m, "timed_invalid"))
        mode_timed_invalid();
    else if (!strcmp(m, "timed_wakes"))
        mode_timed_wakes();
    else if (!strcmp(m, "shutdown_getnext"))
        mode_shutdown(0);
    else if (!strcmp(m, "shutdown_timed"))
        mode_shutdown(1);
    else if (!strcmp(m, "eintr_getnext"))
        mode_eintr(0);
    else if (!strcmp(m, "eintr_timed"))
        mode_eintr(1);
    else if (!strcmp(m, "two_readers"))
        mode_two_readers();
    else {
        printf("unknown mode %s\n", m);
        return 2;
    }
    return 0;
}
