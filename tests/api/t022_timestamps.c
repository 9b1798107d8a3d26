/*
 * t022_timestamps: timestamps over a long run.  2 threads record
 * sporadically (about every 50 ms, with jitter) for argv[1] seconds (default
 * 60), each posix_trace_event call bracketed by CLOCK_REALTIME readings;
 * a reader thread drains concurrently with posix_trace_getnext_event.
 * Prints every call ("rec") and every reported event in order ("ev"); the
 * pytest file checks each timestamp against its bracket and the order of
 * events whose calls do not overlap.
 */
#include "tcommon.h"

enum { MAXREC = 4000 };

struct rec {
    int64_t before, after;
};

static trace_id_t g_trid;
static trace_event_id_t g_ev;
static int g_seconds = 60;
static struct rec g_rec[2][MAXREC];
static int g_nrec[2];

struct evr {
    uint32_t thread, seq;
    int64_t ts;
    pthread_t tid;
};
static struct evr g_evs[2 * MAXREC + 16];
static int g_nev;
static pthread_t g_tid[2];

static void *writer(void *p)
{
    uint32_t t = (uint32_t)(uintptr_t)p;
    unsigned seed = 12345u + t;
    int64_t end = tc_mono_ns() + (int64_t)g_seconds * 1000000000LL;
    g_tid[t] = pthread_self();
    uint32_t k = 0;
    while (tc_mono_ns() < end && k < MAXREC) {
        uint32_t pl[2] = { t, k };
        int64_t b = tc_now_ns();
        posix_trace_event(g_ev, pl, sizeof pl);
        int64_t a = tc_now_ns();
        g_rec[t][k].before = b;
        g_rec[t][k].after = a;
        k++;
        /* 25..75 ms */
        tc_sleep_ms(25 + (long)(rand_r(&seed) % 51));
    }
    g_nrec[t] = (int)k;
    return NULL;
}

static void *reader(void *p)
{
    (void)p;
    static tc_event e;
    for (;;) {
        if (!tc_next(g_trid, &e))
            continue;
        if (e.info.posix_event_id == POSIX_TRACE_STOP)
            return NULL;
        if (e.info.posix_event_id != g_ev) {
            printf("other event id=%u\n", (unsigned)e.info.posix_event_id);
            continue;
        }
        uint32_t pl[2];
        TC_ASSERT(e.len == sizeof pl);
        memcpy(pl, e.data, sizeof pl);
        TC_ASSERT(g_nev < (int)(sizeof g_evs / sizeof g_evs[0]));
        g_evs[g_nev].thread = pl[0];
        g_evs[g_nev].seq = pl[1];
        g_evs[g_nev].ts = tc_ts_ns(&e.info.posix_timestamp);
        g_evs[g_nev].tid = e.info.posix_thread_id;
        g_nev++;
    }
}

int main(int argc, char **argv)
{
    pthread_t w[2], r;
    static tc_event e;
    tc_init();
    if (argc > 1)
        g_seconds = atoi(argv[1]);
    tc_watchdog((unsigned)g_seconds + 60);

    g_ev = tc_open("tick");
    g_trid = tc_create(4u << 20, 0, POSIX_TRACE_LOOP);
    CHECK(posix_trace_start(g_trid));
    TC_ASSERT(tc_try(g_trid, &e) && e.info.posix_event_id == POSIX_TRACE_START);
    TC_ASSERT(pthread_create(&r, NULL, reader, NULL) == 0);
    for (int i = 0; i < 2; i++)
        TC_ASSERT(pthread_create(&w[i], NULL, writer, (void *)(uintptr_t)i) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(w[i], NULL);
    CHECK(posix_trace_stop(g_trid));
    pthread_join(r, NULL);

    for (int t = 0; t < 2; t++)
        for (int k = 0; k < g_nrec[t]; k++)
            printf("rec t=%d seq=%d before=%" PRId64 " after=%" PRId64 "\n", t, k,
                   g_rec[t][k].before, g_rec[t][k].after);
    for (int i = 0; i < g_nev; i++)
        printf("ev t=%u seq=%u ts=%" PRId64 " tid_ok=%d\n", g_evs[i].thread, g_evs[i].seq,
               g_evs[i].ts,
               g_evs[i].thread < 2 && pthread_equal(g_evs[i].tid, g_tid[g_evs[i].thread]));
    printf("done recs=%d evs=%d\n", g_nrec[0] + g_nrec[1], g_nev);
    CHECK(posix_trace_shutdown(g_trid));
    return 0;
}
