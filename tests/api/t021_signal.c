/*
 * t021_signal: posix_trace_event from signal handlers (it is
 * async-signal-safe, doc/semantics.md).  A thread records in a loop while
 * SIGUSR1 (pthread_kill from another thread) and SIGALRM (setitimer) handlers
 * running on that same thread also record, possibly nested inside the
 * loop's posix_trace_event call or inside each other.  Every event of the
 * loop and of each handler is reported, in order, with intact data.
 */
#include "tcommon.h"

#include <sys/time.h>

enum { LOOPN = 200000 };

struct payload {
    uint32_t tag;    /* 0 loop, 1 SIGUSR1, 2 SIGALRM */
    uint32_t magic;
    uint64_t seq;
    uint64_t check;
};

#define MAGIC 0x516e4a11u
static uint64_t checksum(uint32_t tag, uint64_t s)
{
    return (s + 1) * 0x100000001b3ULL ^ ((uint64_t)tag << 60);
}

static trace_event_id_t g_ev[3];
static volatile sig_atomic_t g_count1, g_count2;
static int g_rdone, g_sdone;   /* __atomic */
static pthread_t g_rec_thread;

static void record(uint32_t tag, uint64_t seq)
{
    struct payload pl = { tag, MAGIC, seq, checksum(tag, seq) };
    posix_trace_event(g_ev[tag], &pl, sizeof pl);
}

static void on_usr1(int sig)
{
    int saved = errno;
    (void)sig;
    record(1, (uint64_t)g_count1);
    g_count1++;
    errno = saved;
}

static void on_alrm(int sig)
{
    int saved = errno;
    (void)sig;
    record(2, (uint64_t)g_count2);
    g_count2++;
    errno = saved;
}

static void *recorder(void *p)
{
    (void)p;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL);

    struct itimerval it = { { 0, 1000 }, { 0, 1000 } };   /* every 1 ms */
    TC_ASSERT(setitimer(ITIMER_REAL, &it, NULL) == 0);
    for (uint64_t i = 0; i < LOOPN; i++) {
        record(0, i);
        if (i % 200 == 199)
            tc_sleep_ms(1);
    }
    struct itimerval off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &off, NULL);
    __atomic_store_n(&g_rdone, 1, __ATOMIC_SEQ_CST);
    /* stay alive (and signalable) until the sender has stopped */
    while (!__atomic_load_n(&g_sdone, __ATOMIC_SEQ_CST))
        tc_sleep_ms(1);
    /* no more handler events from here on */
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    return NULL;
}

static void *sender(void *p)
{
    (void)p;
    long sent = 0;
    while (!__atomic_load_n(&g_rdone, __ATOMIC_SEQ_CST)) {
        pthread_kill(g_rec_thread, SIGUSR1);
        sent++;
        struct timespec ts = { 0, 100000 };   /* 100 us */
        nanosleep(&ts, NULL);
    }
    __atomic_store_n(&g_sdone, 1, __ATOMIC_SEQ_CST);
    return (void *)(intptr_t)sent;
}

int main(void)
{
    trace_id_t trid;
    pthread_t snd;
    struct sigaction sa;
    sigset_t s;
    static tc_event e;

    tc_init();
    /* only the recording thread takes these signals */
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    tc_watchdog(120);

    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_usr1;
    TC_ASSERT(sigaction(SIGUSR1, &sa, NULL) == 0);
    sa.sa_handler = on_alrm;
    TC_ASSERT(sigaction(SIGALRM, &sa, NULL) == 0);

    g_ev[0] = tc_open("loop");
    g_ev[1] = tc_open("usr1");
    g_ev[2] = tc_open("alrm");
    trid = tc_create(64u << 20, 0, POSIX_TRACE_LOOP);
    CHECK(posix_trace_start(trid));

    TC_ASSERT(pthread_create(&g_rec_thread, NULL, recorder, NULL) == 0);
    TC_ASSERT(pthread_create(&snd, NULL, sender, NULL) == 0);
    void *sent;
    pthread_join(snd, &sent);
    pthread_join(g_rec_thread, NULL);
    CHECK(posix_trace_stop(trid));

    uint64_t next[3] = { 0, 0, 0 };
    long bad_order[3] = { 0, 0, 0 }, bad_data = 0, bad_tid = 0, overflow = 0, error = 0,
         other = 0;
    pthread_t rec_tid = g_rec_thread;
    long ts_bad = 0;
    int64_t last_ts = 0;
    while (tc_try(trid, &e)) {
        trace_event_id_t id = e.info.posix_event_id;
        int64_t ts = tc_ts_ns(&e.info.posix_timestamp);
        if (ts < last_ts)
            ts_bad++;
        last_ts = ts;
        if (id == POSIX_TRACE_START || id == POSIX_TRACE_STOP)
            continue;
        if (id == POSIX_TRACE_OVERFLOW) {
            overflow++;
            continue;
        }
        if (id == POSIX_TRACE_ERROR) {
            error++;
            continue;
        }
        int tag = id == g_ev[0] ? 0 : id == g_ev[1] ? 1 : id == g_ev[2] ? 2 : -1;
        if (tag < 0) {
            other++;
            continue;
        }
        struct payload pl;
        if (e.len != sizeof pl || e.info.posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED) {
            bad_data++;
            continue;
        }
        memcpy(&pl, e.data, sizeof pl);
        if (pl.tag != (uint32_t)tag || pl.magic != MAGIC || pl.check != checksum(pl.tag, pl.seq)) {
            bad_data++;
            continue;
        }
        if (!pthread_equal(e.info.posix_thread_id, rec_tid))
            bad_tid++;
        if (pl.seq != next[tag])
            bad_order[tag]++;
        next[tag] = pl.seq + 1;
    }
    printf("loop recorded=%d reported_to=%" PRIu64 " bad_order=%ld\n", LOOPN, next[0],
           bad_order[0]);
    printf("usr1 handled=%ld reported_to=%" PRIu64 " bad_order=%ld\n", (long)g_count1, next[1],
           bad_order[1]);
    printf("alrm handled=%ld reported_to=%" PRIu64 " bad_order=%ld\n", (long)g_count2, next[2],
           bad_order[2]);
    printf("usr1_sent=%ld\n", (long)(intptr_t)sent);
    printf("bad_data=%ld bad_tid=%ld overflow=%ld error=%ld other=%ld\n", bad_data, bad_tid,
           overflow, error, other);
    printf("ts_decreases=%ld\n", ts_bad);
    CHECK(posix_trace_shutdown(trid));
    return 0;
}
