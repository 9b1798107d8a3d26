/*
 * t011_events: the posix_trace_event_info fields of recorded events.
 *
 * Modes (argv[1]):
 *   threads   4 threads (plus main) record; each event's posix_thread_id is
 *             the recording thread's pthread_self(), posix_pid is getpid(),
 *             posix_event_id the id given, data byte-for-byte
 *   timestamp each posix_timestamp lies within CLOCK_REALTIME readings taken
 *             just before and after the posix_trace_event() call
 *   address   posix_prog_address is the return address of the call: inside
 *             the calling function, just before the next call's return address
 *   order     5000 events: reported oldest first, each exactly once
 */
#include "tcommon.h"

#define NTHREADS 4

static trace_id_t g_trid;
static trace_event_id_t g_ids[NTHREADS + 1];
static pthread_barrier_t g_barrier;

struct targ {
    int idx;
    pthread_t self;
};

static void *thread_main(void *p)
{
    struct targ *t = p;
    unsigned char data[8];
    t->self = pthread_self();
    for (int i = 0; i < 8; i++)
        data[i] = (unsigned char)(t->idx * 16 + i);
    /* all threads alive together, so their pthread_t values are distinct */
    pthread_barrier_wait(&g_barrier);
    posix_trace_event(g_ids[t->idx], data, (size_t)t->idx + 1);
    pthread_barrier_wait(&g_barrier);
    return NULL;
}

static void mode_threads(void)
{
    pthread_t th[NTHREADS];
    struct targ args[NTHREADS + 1];
    static tc_event e;
    char name[16];

    for (int i = 0; i <= NTHREADS; i++) {
        snprintf(name, sizeof name, "thr%d", i);
        g_ids[i] = tc_open(name);
    }
    CHECK(posix_trace_create(0, NULL, &g_trid));
    CHECK(posix_trace_start(g_trid));
    pthread_barrier_init(&g_barrier, NULL, NTHREADS + 1);
    for (int i = 0; i < NTHREADS; i++) {
        args[i].idx = i;
        TC_ASSERT(pthread_create(&th[i], NULL, thread_main, &args[i]) == 0);
    }
    pthread_barrier_wait(&g_barrier);
    pthread_barrier_wait(&g_barrier);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    args[NTHREADS].idx = NTHREADS;
    args[NTHREADS].self = pthread_self();
    posix_trace_event(g_ids[NTHREADS], "main", 4);
    CHECK(posix_trace_stop(g_trid));

    printf("pid=%ld\n", (long)getpid());
    for (int i = 0; i <= NTHREADS; i++)
        printf("thread idx=%d id=%u tid=%lu\n", i, (unsigned)g_ids[i],
               (unsigned long)args[i].self);
    while (tc_try(g_trid, &e)) {
        printf("ev id=%u pid=%ld tid=%lu len=%zu data=", (unsigned)e.info.posix_event_id,
               (long)e.info.posix_pid, (unsigned long)e.info.posix_thread_id, e.len);
        tc_print_hex(stdout, e.data, e.len);
        printf(" trunc=%d\n", e.info.posix_truncation_status);
    }
    CHECK(posix_trace_shutdown(g_trid));
}

static void mode_timestamp(void)
{
    trace_event_id_t ev = tc_open("ts");
    static int64_t before[2000], after[2000];
    static tc_event e;
    int n = 0;

    CHECK(posix_trace_create(0, NULL, &g_trid));
    CHECK(posix_trace_start(g_trid));
    TC_ASSERT(tc_try(g_trid, &e) && e.info.posix_event_id == POSIX_TRACE_START);
    for (int i = 0; i < 2000; i++) {
        before[i] = tc_now_ns();
        posix_trace_event(ev, &i, sizeof i);
        after[i] = tc_now_ns();
        if (i % 100 == 99)
            tc_sleep_ms(1);   /* spread the events over some time */
    }
    CHECK(posix_trace_stop(g_trid));
    while (tc_try(g_trid, &e)) {
        if (e.info.posix_event_id != ev)
            continue;
        int i;
        memcpy(&i, e.data, sizeof i);
        TC_ASSERT(i >= 0 && i < 2000);
        printf("ev seq=%d before=%" PRId64 " ts=%" PRId64 " after=%" PRId64 " nsec=%ld\n", i,
               before[i], tc_ts_ns(&e.info.posix_timestamp), after[i],
               e.info.posix_timestamp.tv_nsec);
        n++;
    }
    printf("count=%d\n", n);
    CHECK(posix_trace_shutdown(g_trid));
}

/* Returns its own return address: the instruction after the call to it. */
__attribute__((noinline)) static void *next_return_address(void)
{
    return __builtin_extract_return_addr(__builtin_return_address(0));
}

static void *g_after_a, *g_after_b1, *g_after_b2;
static trace_event_id_t g_addr_ev;

__attribute__((noinline)) static void recorder_a(int v)
{
    posix_trace_event(g_addr_ev, &v, sizeof v);
    g_after_a = next_return_address();
}

__attribute__((noinline)) static void recorder_b(int v)
{
    posix_trace_event(g_addr_ev, &v, sizeof v);
    g_after_b1 = next_return_address();
    v += 100;
    posix_trace_event(g_addr_ev, &v, sizeof v);
    g_after_b2 = next_return_address();
}

static void mode_address(void)
{
    static tc_event e;
    void *addr[4] = { 0 };
    int seen = 0;

    g_addr_ev = tc_open("addr");
    CHECK(posix_trace_create(0, NULL, &g_trid));
    CHECK(posix_trace_start(g_trid));
    /* called through a volatile pointer so that the compiler cannot clone
     * (constant-propagate) the recorders: their addresses are the code run */
    void (*volatile ra_fn)(int) = recorder_a;
    void (*volatile rb_fn)(int) = recorder_b;
    ra_fn(1);
    rb_fn(2);
    ra_fn(3);
    CHECK(posix_trace_stop(g_trid));
    while (tc_try(g_trid, &e)) {
        if (e.info.posix_event_id != g_addr_ev)
            continue;
        int v;
        memcpy(&v, e.data, sizeof v);
        int slot = v == 1 ? 0 : v == 2 ? 1 : v == 102 ? 2 : v == 3 ? 3 : -1;
        TC_ASSERT(slot >= 0);
        addr[slot] = e.info.posix_prog_address;
        seen++;
    }
    printf("seen=%d\n", seen);
    /* each address lies after the function's entry, before the return
     * address of the next call in that function, and close to it */
    char *fa = (char *)(uintptr_t)recorder_a, *fb = (char *)(uintptr_t)recorder_b;
    char *a0 = addr[0], *a1 = addr[1], *a2 = addr[2], *a3 = addr[3];
    char *ra = g_after_a, *rb1 = g_after_b1, *rb2 = g_after_b2;
    printf("a in recorder_a=%d\n", a0 > fa && a0 < ra && ra - a0 < 256);
    printf("b1 in recorder_b=%d\n", a1 > fb && a1 < rb1 && rb1 - a1 < 256);
    printf("b2 in recorder_b=%d\n", a2 > rb1 && a2 < rb2 && rb2 - a2 < 256);
    printf("same call site same address=%d\n", a0 == a3);
    printf("two call sites differ=%d\n", a1 != a2);
    printf("not main=%d\n", a0 != a1);
    CHECK(posix_trace_shutdown(g_trid));
}

static void mode_order(void)
{
    enum { N = 5000 };
    trace_event_id_t ev = tc_open("seq");
    static tc_event e;
    static int seen[N];
    int count = 0, in_order = 1, dups = 0, last = -1, others = 0;

    CHECK(posix_trace_create(0, NULL, &g_trid));
    CHECK(posix_trace_start(g_trid));
    for (int i = 0; i < N; i++) {
        posix_trace_event(ev, &i, sizeof i);
        /* read some while recording: resources are reused, nothing repeats */
        if (i % 1000 == 999) {
            for (int k = 0; k < 300 && tc_try(g_trid, &e); k++) {
                if (e.info.posix_event_id != ev) {
                    others++;
                    continue;
                }
                int v;
                memcpy(&v, e.data, sizeof v);
                if (v <= last)
                    in_order = 0;
                last = v;
                if (v >= 0 && v < N && seen[v]++)
                    dups++;
                count++;
            }
        }
    }
    CHECK(posix_trace_stop(g_trid));
    while (tc_try(g_trid, &e)) {
        if (e.info.posix_event_id != ev) {
            others++;
            continue;
        }
        int v;
        memcpy(&v, e.data, sizeof v);
        if (v <= last)
            in_order = 0;
        last = v;
        if (v >= 0 && v < N && seen[v]++)
            dups++;
        count++;
    }
    printf("count=%d in_order=%d dups=%d system_events=%d\n", count, in_order, dups, others);
    int un = 0;
    size_t len;
    struct posix_trace_event_info info;
    char buf[16];
    SHOW("trygetnext after all", posix_trace_trygetnext_event(g_trid, &info, buf, sizeof buf,
                                                             &len, &un));
    printf("unavailable=%d\n", un != 0);
    CHECK(posix_trace_shutdown(g_trid));
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(30);
    if (argc != 2) {
        printf("usage: t011_events MODE\n");
        return 2;
    }
    if (!strcmp(argv[1], "threads"))
        mode_threads();
    else if (!strcmp(argv[1], "timestamp"))
        mode_timestamp();
    else if (!strcmp(argv[1], "address"))
        mode_address();
    else if (!strcmp(argv[1], "order"))
        mode_order();
    else {
        printf("unknown mode %s\n", argv[1]);
        return 2;
    }
    return 0;
}
