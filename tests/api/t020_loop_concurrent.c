/*
 * t020_loop_concurrent: a small (64 KiB) LOOP stream overwritten by 4
 * concurrent writers while a reader drains it.  No crash; each thread's
 * reported events have strictly increasing sequence numbers and intact data;
 * every OVERFLOW is immediately followed by RESUME; and
 * reported + lost (sum of the OVERFLOW counts) == recorded
 * (START + 4 x PER user events + STOP).
 */
#include "tcommon.h"

enum { NT = 4, PER = 50000 };

struct payload {
    uint32_t thread;
    uint32_t magic;
    uint64_t seq;
    uint64_t check;
};

#define MAGIC 0x10091009u
static uint64_t checksum(uint32_t t, uint64_t s)
{
    return ~(s * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)t << 48);
}

static trace_id_t g_trid;
static trace_event_id_t g_ev;
static pthread_barrier_t g_bar;

static void *writer(void *p)
{
    uint32_t t = (uint32_t)(uintptr_t)p;
    pthread_barrier_wait(&g_bar);
    for (uint64_t s = 0; s < PER; s++) {
        struct payload pl = { t, MAGIC, s, checksum(t, s) };
        posix_trace_event(g_ev, &pl, sizeof pl);
    }
    return NULL;
}

static uint64_t g_reported, g_lost, g_user[NT], g_last[NT];
static long g_ts_bad;
static int64_t g_last_ts, g_ts_max_back;
static long g_order_bad, g_data_bad, g_overflow, g_resume, g_resume_bad, g_start, g_stop,
    g_error, g_other;

static void *reader(void *p)
{
    (void)p;
    static tc_event e;
    int expect_resume = 0;
    for (;;) {
        if (!tc_next(g_trid, &e))
            continue;
        trace_event_id_t id = e.info.posix_event_id;
        int64_t ts = tc_ts_ns(&e.info.posix_timestamp);
        if (ts < g_last_ts) {
            g_ts_bad++;
            if (g_last_ts - ts > g_ts_max_back)
                g_ts_max_back = g_last_ts - ts;
            printf("timestamp decrease: id=%u ts=%" PRId64 " after %" PRId64 "\n",
                   (unsigned)id, ts, g_last_ts);
        }
        g_last_ts = ts;
        if (expect_resume && id != POSIX_TRACE_RESUME)
            g_resume_bad++;
        if (id == POSIX_TRACE_OVERFLOW) {
            uint64_t n = 0;
            if (e.len == sizeof n)
                memcpy(&n, e.data, sizeof n);
            else
                g_data_bad++;
            g_lost += n;
            g_overflow++;
            expect_resume = 1;
            continue;
        }
        if (id == POSIX_TRACE_RESUME) {
            if (!expect_resume)
                g_resume_bad++;
            expect_resume = 0;
            g_resume++;
            continue;
        }
        g_reported++;
        if (id == POSIX_TRACE_START) {
            g_start++;
            continue;
        }
        if (id == POSIX_TRACE_STOP) {
            g_stop++;
            return NULL;
        }
        if (id == POSIX_TRACE_ERROR) {
            g_error++;
            continue;
        }
        if (id != g_ev) {
            g_other++;
            continue;
        }
        struct payload pl;
        if (e.len != sizeof pl) {
            g_data_bad++;
            continue;
        }
        memcpy(&pl, e.data, sizeof pl);
        if (pl.thread >= NT || pl.magic != MAGIC || pl.check != checksum(pl.thread, pl.seq)) {
            g_data_bad++;
            continue;
        }
        if (g_user[pl.thread] && pl.seq <= g_last[pl.thread])
            g_order_bad++;
        g_last[pl.thread] = pl.seq;
        g_user[pl.thread]++;
    }
}

int main(void)
{
    pthread_t w[NT], r;
    tc_init();
    tc_watchdog(120);

    g_ev = tc_open("loop");
    g_trid = tc_create(65536, 0, POSIX_TRACE_LOOP);
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

    uint64_t recorded = 1 + (uint64_t)NT * PER + 1;
    uint64_t user = 0;
    for (int i = 0; i < NT; i++)
        user += g_user[i];
    printf("recorded=%" PRIu64 " reported=%" PRIu64 " lost=%" PRIu64 " balance_ok=%d\n",
           recorded, g_reported, g_lost, g_reported + g_lost == recorded);
    printf("user_reported=%" PRIu64 " overflow_events=%ld some_lost=%d\n", user, g_overflow,
           g_lost > 0);
    printf("order_bad=%ld data_bad=%ld resume_bad=%ld resume_eq_overflow=%d\n", g_order_bad,
           g_data_bad, g_resume_bad, g_resume == g_overflow);
    printf("stop=%ld start_le_1=%d error=%ld other=%ld\n", g_stop, g_start <= 1, g_error,
           g_other);
    printf("global_ts_decreases=%ld\n", g_ts_bad);
    if (g_ts_bad)
        printf("max_decrease_ns=%" PRId64 "\n", g_ts_max_back);
    static tc_event e;
    printf("left=%d\n", tc_try(g_trid, &e));
    CHECK(posix_trace_shutdown(g_trid));
    return 0;
}
