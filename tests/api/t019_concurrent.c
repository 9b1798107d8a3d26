/*
 * t019_concurrent: 4 threads x 50000 events into a 64 MiB stream while a
 * reader drains it concurrently with posix_trace_getnext_event: every
 * (thread, seq) is reported exactly once, in each thread's order, with
 * non-decreasing timestamps per thread, each within CLOCK_REALTIME readings
 * around its call, the right thread id and intact data.
 */
#include "tcommon.h"

enum { NT = 4, PER = 50000 };

struct payload {
    uint32_t thread;
    uint32_t magic;
    uint64_t seq;
    uint64_t check;
};

#define MAGIC 0x5eed1234u
static uint64_t checksum(uint32_t t, uint64_t s)
{
    return (s * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)t << 56) ^ 0xabcdef;
}

static trace_id_t g_trid;
static trace_event_id_t g_ev;
static pthread_t g_self[NT];
/* CLOCK_REALTIME around each call, and the reported timestamp, per (thread, seq) */
static int64_t g_before[NT][PER], g_after[NT][PER], g_ts[NT][PER];
static pthread_barrier_t g_bar;

static void *writer(void *p)
{
    uint32_t t = (uint32_t)(uintptr_t)p;
    g_self[t] = pthread_self();
    pthread_barrier_wait(&g_bar);
    for (uint64_t s = 0; s < PER; s++) {
        struct payload pl = { t, MAGIC, s, checksum(t, s) };
        g_before[t][s] = tc_now_ns();
        posix_trace_event(g_ev, &pl, sizeof pl);
        g_after[t][s] = tc_now_ns();
    }
    return NULL;
}

struct tstate {
    uint64_t next, count, order_bad, ts_bad, tid_bad, data_bad;
    int64_t last_ts, max_back;
    pthread_t tid;
    int tid_set;
};
static struct tstate g_st[NT];
static long g_start, g_stop, g_overflow, g_error, g_other, g_bad, g_pid_bad, g_global_ts_bad;
static int64_t g_last_ts, g_ts_max_back;

static void *reader(void *p)
{
    (void)p;
    static tc_event e;
    for (;;) {
        if (!tc_next(g_trid, &e)) {
            g_bad++;
            continue;
        }
        if (e.info.posix_pid != getpid())
            g_pid_bad++;
        /* doc/semantics.md: reported timestamps never decrease */
        int64_t gts = tc_ts_ns(&e.info.posix_timestamp);
        if (gts < g_last_ts) {
            g_global_ts_bad++;
            if (g_last_ts - gts > g_ts_max_back)
                g_ts_max_back = g_last_ts - gts;
        }
        g_last_ts = gts;
        switch (e.info.posix_event_id) {
        case POSIX_TRACE_START: g_start++; continue;
        case POSIX_TRACE_STOP: g_stop++; return NULL;
        case POSIX_TRACE_OVERFLOW: g_overflow++; continue;
        case POSIX_TRACE_ERROR: g_error++; continue;
        default: break;
        }
        if (e.info.posix_event_id != g_ev) {
            g_other++;
            continue;
        }
        struct payload pl;
        if (e.len != sizeof pl) {
            g_bad++;
            continue;
        }
        memcpy(&pl, e.data, sizeof pl);
        if (pl.thread >= NT || pl.magic != MAGIC) {
            g_bad++;
            continue;
        }
        struct tstate *s = &g_st[pl.thread];
        if (pl.check != checksum(pl.thread, pl.seq))
            s->data_bad++;
        if (pl.seq != s->next)
            s->order_bad++;
        s->next = pl.seq + 1;
        int64_t ts = tc_ts_ns(&e.info.posix_timestamp);
        if (pl.seq < PER)
            g_ts[pl.thread][pl.seq] = ts;
        if (s->count && ts < s->last_ts) {
            s->ts_bad++;
            if (s->last_ts - ts > s->max_back)
                s->max_back = s->last_ts - ts;
        }
        s->last_ts = ts;
        if (!s->tid_set) {
            s->tid = e.info.posix_thread_id;
            s->tid_set = 1;
        } else if (!pthread_equal(s->tid, e.info.posix_thread_id)) {
            s->tid_bad++;
        }
        s->count++;
    }
}

int main(void)
{
    pthread_t w[NT], r;
    tc_init();
    tc_watchdog(120);

    g_ev = tc_open("conc");
    g_trid = tc_create(64u << 20, 0, POSIX_TRACE_LOOP);
    pthread_barrier_init(&g_bar, NULL, NT + 1);
    CHECK(posix_trace_start(g_trid));
    TC_ASSERT(pthread_create(&r, NULL, reader, NULL) == 0);
    for (int i = 0; i < NT; i++)
        TC_ASSERT(pthread_create(&w[i], NULL, writer, (void *)(uintptr_t)i) == 0);
    pthread_barrier_wait(&g_bar);
    for (int i = 0; i < NT; i++)
        pthread_join(w[i], NULL);
    CHECK(posix_trace_stop(g_trid));
    pthread_join(r, NULL);

    for (int i = 0; i < NT; i++) {
        struct tstate *s = &g_st[i];
        printf("thread %d count=%" PRIu64 " last=%" PRIu64 " order_bad=%" PRIu64
               " ts_bad=%" PRIu64 " data_bad=%" PRIu64 " tid_ok=%d tid_bad=%" PRIu64
               " max_back_ns=%" PRId64 "\n",
               i, s->count, s->next, s->order_bad, s->ts_bad, s->data_bad,
               s->tid_set && pthread_equal(s->tid, g_self[i]), s->tid_bad, s->max_back);
    }
    /* each timestamp within [before - 10 us, after + 10 us] of its call */
    long outside = 0;
    int64_t worst = 0;
    for (int t = 0; t < NT; t++)
        for (int k = 0; k < PER; k++) {
            int64_t ts = g_ts[t][k], d = 0;
            if (ts < g_before[t][k] - 10000)
                d = g_before[t][k] - ts;
            else if (ts > g_after[t][k] + 10000)
                d = ts - g_after[t][k];
            if (d) {
                outside++;
                if (d > worst)
                    worst = d;
            }
        }
    printf("timestamps_outside_call=%ld\n", outside);
    if (outside)
        printf("worst_outside_ns=%" PRId64 "\n", worst);
    printf("start=%ld stop=%ld overflow=%ld error=%ld other=%ld bad=%ld pid_bad=%ld\n", g_start,
           g_stop, g_overflow, g_error, g_other, g_bad, g_pid_bad);
    printf("global_ts_decreases=%ld\n", g_global_ts_bad);
    if (g_global_ts_bad)
        printf("max_decrease_ns=%" PRId64 "\n", g_ts_max_back);
    tc_print_status("end", g_trid);
    static tc_event e;
    printf("left=%d\n", tc_try(g_trid, &e));
    CHECK(posix_trace_shutdown(g_trid));
    return 0;
}
