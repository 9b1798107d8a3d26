/*
 * t029_encoding: events read back exactly whatever form their records take
 * in the stream (doc/design.md "Records": compact records of a chunk's
 * classes, VARLEN classes, EVENT records). Every event's data is derived
 * from (thread, index) and checked byte for byte, with its id, its length,
 * its truncation status, its program address (one per call site, the same
 * for every event of a site, different between sites) and its timestamp
 * (non-decreasing in the order read; with `gaps`, within the clock readings
 * around its call).
 *
 * Modes (argv[1]); each prints "MODE events=N sites=S addrs=A trunc=T
 * bad=B order=ok|BAD first=J overflows=O":
 *   sites    100 call sites, 16 bytes each, 6000 events: more sites than a
 *            chunk has classes, and than a writer's cache has entries
 *   lengths  3 call sites, lengths 0..300 (max-data-size 256: the longer ones
 *            truncated), 3000 events: classes whose length varies
 *   threads  4 threads, 100 sites, lengths 8..107, 4000 events each
 *   gaps     3 sites, 40 events with pauses of 0, 1 and 80 ms between
 *            them (past a compact record's stamp delta on any clock)
 *   log      sites, then lengths, then fixed (3 call sites of 13, 129 and
 *            200 bytes each, in runs of 5 events from one site, 3000
 *            events: the flusher's fast paths, lengths of one and two
 *            varint bytes, padded data), into a stream with a log (policy
 *            FLUSH), read back from the log
 *   loop     a 64 KiB LOOP stream, 100 sites, lengths 8..260, 20000 events:
 *            what is read is a run of the last ones, each exact
 */
#include "tcommon.h"

#include <fcntl.h>
#include <stdbool.h>

#define NSITES 100
#define MAXDATA 256
#define SITE_EXPR(k) case k: posix_trace_event(id, d, len); sink = k; break;
#define SITES10(b) SITE_EXPR(b + 0) SITE_EXPR(b + 1) SITE_EXPR(b + 2) SITE_EXPR(b + 3) \
    SITE_EXPR(b + 4) SITE_EXPR(b + 5) SITE_EXPR(b + 6) SITE_EXPR(b + 7) SITE_EXPR(b + 8) \
    SITE_EXPR(b + 9)

static volatile int sink;
static trace_event_id_t ev_id;

/* One call site per k: the store after each call keeps the compiler from
 * sharing one call between them. */
static void emit(int k, trace_event_id_t id, const void *d, size_t len)
{
    switch (k) {
    SITES10(0) SITES10(10) SITES10(20) SITES10(30) SITES10(40)
    SITES10(50) SITES10(60) SITES10(70) SITES10(80) SITES10(90)
    default: abort();
    }
}

enum { M_SITES, M_LENGTHS, M_THREADS, M_GAPS, M_LOG, M_LOOP, M_FIXED };

static int site_of(int mode, uint32_t t, uint32_t j)
{
    if (mode == M_FIXED)
        return (int)((j / 5 + t) % 3); /* runs of 5 from one site */
    return mode == M_LENGTHS || mode == M_GAPS ? (int)((j + t) % 3)
                                               : (int)((j * 37 + t * 11) % NSITES);
}

static size_t len_of(int mode, uint32_t j)
{
    switch (mode) {
    case M_SITES: return 16;
    case M_LENGTHS: return (j * 13) % 301;
    case M_THREADS: return 8 + (j * 7) % 100;
    case M_GAPS: return 8 + j % 5;
    case M_FIXED: return (size_t[]){ 13, 129, 200 }[(j / 5 + 2) % 3]; /* by site: t is 2 */
    default: return 8 + (j * 13) % 253;
    }
}

/* The data of thread t's j-th event: j and t first (when it has 8 bytes),
 * then bytes of (t, j). */
static void data_of(uint32_t t, uint32_t j, unsigned char *d, size_t len)
{
    for (size_t k = 0; k < len; k++)
        d[k] = (unsigned char)(j * 31 + t * 7 + k * 13);
    if (len >= 8) {
        memcpy(d, &j, 4);
        memcpy(d + 4, &t, 4);
    }
}

static void record(int mode, uint32_t t, uint32_t n, int64_t *before, int64_t *after)
{
    unsigned char d[512];
    for (uint32_t j = 0; j < n; j++) {
        size_t len = len_of(mode, j);
        data_of(t, j, d, len);
        if (mode == M_GAPS)
            tc_sleep_ms(j % 3 == 2 ? 80 : (long)(j % 3));
        if (before != NULL)
            before[j] = tc_now_ns();
        emit(site_of(mode, t, j), ev_id, d, len);
        if (after != NULL)
            after[j] = tc_now_ns();
    }
}

struct rec_arg { int mode; uint32_t t, n; };
static void *record_thread(void *p)
{
    struct rec_arg *a = p;
    record(a->mode, a->t, a->n, NULL, NULL);
    return NULL;
}

/* ---- the checks, over what the reader returns ---- */
struct check {
    int mode;
    uint32_t tnum;             /* the thread number events too short to carry it have */
    uint32_t next[8];          /* per thread: the index expected next */
    pthread_t tid[8];
    int ntid;
    void *addr[NSITES];
    long events, trunc, bad, first, overflows;
    int order_bad;
    int64_t last_ns;
    const int64_t *before, *after;
};

static int thread_index(struct check *c, pthread_t th)
{
    for (int i = 0; i < c->ntid; i++)
        if (pthread_equal(c->tid[i], th))
            return i;
    if (c->ntid == 8)
        return -1;
    c->tid[c->ntid] = th;
    return c->ntid++;
}

static void check_event(struct check *c, const tc_event *e, bool lossy)
{
    if (e->info.posix_event_id != ev_id) { /* START, STOP, FLUSH_*, OVERFLOW, RESUME */
        c->overflows += e->info.posix_event_id == POSIX_TRACE_OVERFLOW;
        return;
    }
    int ti = thread_index(c, e->info.posix_thread_id);
    uint32_t t = c->tnum, j = ti < 0 ? 0 : c->next[ti];
    if (e->len >= 8) { /* the thread's own number and the index are in it */
        memcpy(&j, e->data, 4);
        memcpy(&t, e->data + 4, 4);
    } else if (c->mode == M_THREADS || c->mode == M_LOOP) {
        c->bad++;
        return;
    }
    if (ti < 0 || (lossy ? j < c->next[ti] : j != c->next[ti])) {
        c->bad++;
        return;
    }
    if (c->events == 0)
        c->first = j;
    c->next[ti] = j + 1;
    size_t len = len_of(c->mode, j), kept = len > MAXDATA ? MAXDATA : len;
    unsigned char want[512];
    data_of(t, j, want, len);
    int trunc = len > MAXDATA;
    c->trunc += trunc;
    if (e->len != kept || memcmp(e->data, want, kept) != 0 ||
        e->info.posix_truncation_status !=
            (trunc ? POSIX_TRACE_TRUNCATED_RECORD : POSIX_TRACE_NOT_TRUNCATED))
        c->bad++;
    int k = site_of(c->mode, t, j);
    if (c->addr[k] == NULL)
        c->addr[k] = e->info.posix_prog_address;
    else if (c->addr[k] != e->info.posix_prog_address)
        c->bad++;
    int64_t ns = tc_ts_ns(&e->info.posix_timestamp);
    if (ns < c->last_ns)
        c->order_bad = 1;
    c->last_ns = ns;
    /* the stamp within its call, give or take the clocks' conversion */
    if (c->before != NULL && (ns < c->before[j] - 20000 || ns > c->after[j] + 20000)) {
        printf("gap stamp j=%u ns=%lld before=%lld after=%lld\n", j, (long long)ns,
               (long long)c->before[j], (long long)c->after[j]);
        c->bad++;
    }
    c->events++;
}

static void report(const char *label, struct check *c)
{
    int sites = 0, distinct = 0;
    for (int k = 0; k < NSITES; k++) {
        if (c->addr[k] == NULL)
            continue;
        sites++;
        int dup = 0;
        for (int m = 0; m < k; m++)
            dup |= c->addr[m] == c->addr[k];
        distinct += !dup;
    }
    printf("%s events=%ld sites=%d addrs=%d trunc=%ld bad=%ld order=%s first=%ld overflows=%ld\n",
           label, c->events, sites, distinct, c->trunc, c->bad, c->order_bad ? "BAD" : "ok",
           c->first, c->overflows);
    fflush(stdout);
}

static void drain(trace_id_t trid, struct check *c, bool lossy)
{
    static tc_event e;
    while (tc_try(trid, &e))
        check_event(c, &e, lossy);
}

static const char *const names[] = { "sites", "lengths", "threads", "gaps", "log", "loop" };

static void run_live(int mode)
{
    size_t size = mode == M_LOOP ? 65536 : 8u << 20;
    trace_id_t trid = tc_create(size, MAXDATA, mode == M_LOOP ? POSIX_TRACE_LOOP
                                                              : POSIX_TRACE_UNTIL_FULL);
    CHECK(posix_trace_start(trid));
    static int64_t before[64], after[64];
    struct check c = { .mode = mode };
    if (mode == M_THREADS) {
        pthread_t th[4];
        struct rec_arg a[4];
        for (uint32_t t = 0; t < 4; t++) {
            a[t] = (struct rec_arg){ mode, t + 1, 4000 };
            TC_ASSERT(pthread_create(&th[t], NULL, record_thread, &a[t]) == 0);
        }
        for (int t = 0; t < 4; t++)
            TC_ASSERT(pthread_join(th[t], NULL) == 0);
    } else {
        uint32_t n = mode == M_SITES ? 6000 : mode == M_LENGTHS ? 3000
                   : mode == M_GAPS ? 40 : 20000;
        bool gaps = mode == M_GAPS; /* the clock read around each event */
        record(mode, 0, n, gaps ? before : NULL, gaps ? after : NULL);
        if (gaps) {
            c.before = before;
            c.after = after;
        }
    }
    CHECK(posix_trace_stop(trid));
    drain(trid, &c, mode == M_LOOP);
    report(names[mode], &c);
    CHECK(posix_trace_shutdown(trid));
}

/* sites then lengths through a log: both checked as read from it */
static void run_log(const char *path)
{
    trace_attr_t a;
    trace_id_t trid;
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_setmaxdatasize(&a, MAXDATA));
    CHECK(posix_trace_attr_setstreamsize(&a, 8u << 20));
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH));
    CHECK(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND));
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    TC_ASSERT(fd >= 0);
    CHECK(posix_trace_create_withlog(0, &a, fd, &trid));
    CHECK(posix_trace_attr_destroy(&a));
    CHECK(posix_trace_start(trid));
    record(M_SITES, 0, 6000, NULL, NULL);
    CHECK(posix_trace_flush(trid));
    record(M_LENGTHS, 1, 3000, NULL, NULL);
    static int64_t before[3000], after[3000]; /* the fixed set's stamps, checked too */
    record(M_FIXED, 2, 3000, before, after);
    CHECK(posix_trace_shutdown(trid));
    close(fd);
    fd = open(path, O_RDONLY);
    TC_ASSERT(fd >= 0);
    CHECK(posix_trace_open(fd, &trid));
    struct check cs = { .mode = M_SITES }, cl = { .mode = M_LENGTHS, .tnum = 1 },
                 cf = { .mode = M_FIXED, .tnum = 2, .before = before, .after = after };
    static tc_event e;
    while (tc_next(trid, &e)) {
        if (e.info.posix_event_id == ev_id && e.len >= 8 && memcmp(e.data + 4, "\1\0\0\0", 4) == 0)
            check_event(&cl, &e, false);
        else if (e.info.posix_event_id == ev_id && e.len >= 8 &&
                 memcmp(e.data + 4, "\2\0\0\0", 4) == 0)
            check_event(&cf, &e, false);
        else if (e.info.posix_event_id == ev_id && e.len < 8)
            check_event(&cl, &e, false);
        else
            check_event(&cs, &e, false);
    }
    report("log-sites", &cs);
    report("log-lengths", &cl);
    report("log-fixed", &cf);
    CHECK(posix_trace_close(trid));
    close(fd);
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(120);
    TC_ASSERT(argc >= 2);
    ev_id = tc_open("encoding/ev");
    for (int m = 0; m < (int)(sizeof names / sizeof names[0]); m++) {
        if (strcmp(argv[1], names[m]) != 0)
            continue;
        if (m == M_LOG) {
            TC_ASSERT(argc == 3);
            run_log(argv[2]);
        } else {
            run_live(m);
        }
        return 0;
    }
    return 2;
}
