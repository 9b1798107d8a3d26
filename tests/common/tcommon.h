/*
 * tcommon.h - helpers shared by the posixtrace test programs (tests/t*.c).
 *
 * Every program prints machine-checkable lines on stdout; the pytest files
 * (tests/<area>/test_*.py) run them and compare with the expected output.
 *
 *   tc_init()            line-buffers stdout and remembers the main thread
 *   tc_errname(e)        "0", "EINVAL", ... (own table, not strerror)
 *   SHOW(label, expr)    prints "label rc=NAME"
 *   CHECK(expr)          expr must return 0, else prints and exits 2
 *   TC_ASSERT(cond)      internal consistency, else prints and exits 3
 *   tc_watchdog(sec)     a helper thread that prints "WATCHDOG" and _exit(99)
 *   tc_alarm_watchdog(s) the same with alarm() (for a fork()ed child)
 *   tc_try / tc_next     read one event (trygetnext / getnext)
 *   tc_print_event       "event id=.. name=.. pid=.. tid=.. len=.. <data> trunc=.."
 *   tc_drain_print       prints every available event then "end"
 */
#ifndef POSIXTRACE_TCOMMON_H
#define POSIXTRACE_TCOMMON_H

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <trace.h>

#define TC_BUFSZ (65536 + 1024)

static pthread_t tc_main_thread;
/* when set, tc_print_event and tc_drain_compact also print timestamps (ns) */
static int tc_show_ts;

static inline const char *tc_errname(int e)
{
    static __thread char other[32];
    switch (e) {
    case 0: return "0";
    case EINVAL: return "EINVAL";
    case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case EPERM: return "EPERM";
    case ESRCH: return "ESRCH";
    case EINTR: return "EINTR";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EBADF: return "EBADF";
    case ENOSPC: return "ENOSPC";
    case EFBIG: return "EFBIG";
    default:
        snprintf(other, sizeof other, "errno%d", e);
        return other;
    }
}

#define SHOW(label, expr) \
    printf("%s rc=%s\n", (label), tc_errname(expr))

#define CHECK(expr) do { \
        int tc_rc_ = (expr); \
        if (tc_rc_ != 0) { \
            printf("CHECK failed %s:%d: %s -> %s\n", __FILE__, __LINE__, \
                   #expr, tc_errname(tc_rc_)); \
            fflush(stdout); \
            exit(2); \
        } \
    } while (0)

#define TC_ASSERT(cond) do { \
        if (!(cond)) { \
            printf("ASSERT failed %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            fflush(stdout); \
            exit(3); \
        } \
    } while (0)

static inline void tc_init(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    tc_main_thread = pthread_self();
}

/* ---- time ---- */
static inline int64_t tc_ts_ns(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static inline int64_t tc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return tc_ts_ns(&ts);
}

static inline int64_t tc_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return tc_ts_ns(&ts);
}

static inline struct timespec tc_ns_ts(int64_t ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    return ts;
}

/* ---- this process's mappings (/proc/self/maps) ---- */
struct tc_map {
    uintptr_t lo, hi;
    unsigned long off;  /* offset in the mapped object */
    char perms[8];      /* "rw-s" ... */
    char path[256];     /* "" for an anonymous mapping */
};

/* The mappings (at most max, in address order) whose path contains `has`
 * and, unless NULL, not `hasnt`: their number (0 if maps cannot be read). */
static inline int tc_find_maps(const char *has, const char *hasnt, struct tc_map *out, int max)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return 0;
    char line[512];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f) != NULL) {
        struct tc_map *m = &out[n];
        unsigned long a, b;
        m->path[0] = '\0';
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %255[^\n]", &a, &b, m->perms, &m->off,
                   m->path) < 4 ||
            strstr(m->path, has) == NULL || (hasnt != NULL && strstr(m->path, hasnt) != NULL))
            continue;
        m->lo = a;
        m->hi = b;
        n++;
    }
    fclose(f);
    return n;
}

/* Where the stream mapped as m starts: a process that attached a stream it
 * did not create keeps its first page as a private copy (libtrace/ring/shm.c,
 * pt_shm_check), so the object's mapping starts at offset 4096 there, right
 * after that page. 0: m is not the start of a stream's mapping. */
static inline uintptr_t tc_stream_base(const struct tc_map *m)
{
    return m->off == 0 || m->off == 4096 ? m->lo - m->off : 0;
}

/* The start of the first writable mapping of a stream whose path contains
 * `has` (tc_stream_base), or 0. */
static inline uintptr_t tc_find_stream(const char *has)
{
    struct tc_map m[32];
    int n = tc_find_maps(has, NULL, m, 32);
    for (int i = 0; i < n; i++)
        if (m[i].perms[1] == 'w' && tc_stream_base(&m[i]) != 0)
            return tc_stream_base(&m[i]);
    return 0;
}

/* ---- a PRNG for tests that scribble (xorshift64*): reproducible by seed ---- */
static inline uint64_t tc_rnd(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ULL;
}

static inline void tc_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- watchdogs: every blocking call of a test is bounded ---- */
static inline void *tc_watchdog_main(void *arg)
{
    unsigned sec = (unsigned)(uintptr_t)arg;
    tc_sleep_ms((long)sec * 1000);
    static const char msg[] = "WATCHDOG: test blocked too long\n";
    fflush(stdout);
    if (write(1, msg, sizeof msg - 1) < 0) { /* nothing to do */ }
    _exit(99);
    return NULL;
}

static inline void tc_watchdog(unsigned sec)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, tc_watchdog_main, (void *)(uintptr_t)sec) != 0) {
        printf("cannot start watchdog\n");
        exit(2);
    }
    pthread_attr_destroy(&a);
}

static inline void tc_alarm_handler(int sig)
{
    static const char msg[] = "WATCHDOG: test blocked too long (alarm)\n";
    (void)sig;
    if (write(1, msg, sizeof msg - 1) < 0) { /* nothing to do */ }
    _exit(99);
}

static inline void tc_alarm_watchdog(unsigned sec)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tc_alarm_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(sec);
}

/* ---- names of constants ---- */
static inline const char *tc_policy_name(int p)
{
    switch (p) {
    case POSIX_TRACE_LOOP: return "LOOP";
    case POSIX_TRACE_UNTIL_FULL: return "UNTIL_FULL";
    case POSIX_TRACE_FLUSH: return "FLUSH";
    case POSIX_TRACE_APPEND: return "APPEND";
    default: return "?";
    }
}

static inline const char *tc_inherit_name(int p)
{
    switch (p) {
    case POSIX_TRACE_CLOSE_FOR_CHILD: return "CLOSE_FOR_CHILD";
    case POSIX_TRACE_INHERITED: return "INHERITED";
    default: return "?";
    }
}

static inline void tc_print_status(const char *label, trace_id_t trid)
{
    struct posix_trace_status_info st;
    memset(&st, 0x5a, sizeof st);
    int rc = posix_trace_get_status(trid, &st);
    if (rc != 0) {
        printf("%s status rc=%s\n", label, tc_errname(rc));
        return;
    }
    printf("%s status stream=%s full=%s overrun=%s\n", label,
           st.posix_stream_status == POSIX_TRACE_RUNNING ? "RUNNING" :
           st.posix_stream_status == POSIX_TRACE_SUSPENDED ? "SUSPENDED" : "?",
           st.posix_stream_full_status == POSIX_TRACE_FULL ? "FULL" :
           st.posix_stream_full_status == POSIX_TRACE_NOT_FULL ? "NOT_FULL" : "?",
           st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN ? "OVERRUN" :
           st.posix_stream_overrun_status == POSIX_TRACE_NO_OVERRUN ? "NO_OVERRUN" : "?");
}

static inline const char *tc_full_name(int v)
{
    return v == POSIX_TRACE_FULL ? "FULL" : v == POSIX_TRACE_NOT_FULL ? "NOT_FULL" : "?";
}

static inline const char *tc_overrun_name(int v)
{
    return v == POSIX_TRACE_OVERRUN ? "OVERRUN" : v == POSIX_TRACE_NO_OVERRUN ? "NO_OVERRUN"
                                                                           : "?";
}

/* Every field of posix_trace_get_status (the Trace Log option's too). */
static inline void tc_print_full_status(const char *label, trace_id_t trid)
{
    struct posix_trace_status_info st;
    memset(&st, 0x5a, sizeof st);
    int rc = posix_trace_get_status(trid, &st);
    if (rc != 0) {
        printf("%s rc=%s\n", label, tc_errname(rc));
        return;
    }
    printf("%s stream=%s full=%s overrun=%s flush=%s flush_error=%s log_overrun=%s "
           "log_full=%s\n", label,
           st.posix_stream_status == POSIX_TRACE_RUNNING ? "RUNNING" :
           st.posix_stream_status == POSIX_TRACE_SUSPENDED ? "SUSPENDED" : "?",
           tc_full_name(st.posix_stream_full_status),
           tc_overrun_name(st.posix_stream_overrun_status),
           st.posix_stream_flush_status == POSIX_TRACE_FLUSHING ? "FLUSHING" :
           st.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING ? "NOT_FLUSHING" : "?",
           tc_errname(st.posix_stream_flush_error),
           tc_overrun_name(st.posix_log_overrun_status),
           tc_full_name(st.posix_log_full_status));
}

/* ---- event sets ---- */
#define TC_MAX_EVENT_ID 2047u   /* doc/semantics.md: valid ids are 0..2047 */

/* Prints the members of a set as ranges, e.g. "[0-7,256]". */
static inline void tc_fprint_set(FILE *f, const trace_event_set_t *set)
{
    int first = 1;
    long start = -1;
    fputc('[', f);
    for (unsigned id = 0; id <= TC_MAX_EVENT_ID + 1; id++) {
        int m = 0;
        if (id <= TC_MAX_EVENT_ID && posix_trace_eventset_ismember(id, set, &m) != 0) {
            fprintf(f, "<ismember %u failed>", id);
            m = 0;
        }
        if (m && start < 0)
            start = id;
        if (!m && start >= 0) {
            if (!first)
                fputc(',', f);
            first = 0;
            if (start == (long)id - 1)
                fprintf(f, "%ld", start);
            else
                fprintf(f, "%ld-%u", start, id - 1);
            start = -1;
        }
    }
    fputc(']', f);
}

/* ---- events ---- */
typedef struct {
    struct posix_trace_event_info info;
    size_t len;
    unsigned char data[TC_BUFSZ];
} tc_event;

/* trygetnext into e: 1 = an event, 0 = none available; exits on error. */
static inline int tc_try(trace_id_t trid, tc_event *e)
{
    int unavailable = -1;
    e->len = (size_t)-1;
    int rc = posix_trace_trygetnext_event(trid, &e->info, e->data, sizeof e->data,
                                          &e->len, &unavailable);
    if (rc != 0) {
        printf("trygetnext rc=%s\n", tc_errname(rc));
        fflush(stdout);
        exit(2);
    }
    return unavailable == 0;
}

/* getnext (blocking) into e; exits on error. */
static inline int tc_next(trace_id_t trid, tc_event *e)
{
    int unavailable = -1;
    e->len = (size_t)-1;
    int rc = posix_trace_getnext_event(trid, &e->info, e->data, sizeof e->data,
                                       &e->len, &unavailable);
    if (rc != 0) {
        printf("getnext rc=%s\n", tc_errname(rc));
        fflush(stdout);
        exit(2);
    }
    return unavailable == 0;
}

static inline void tc_print_hex(FILE *f, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", p[i]);
}

/*
 * One line per event.  pid prints as "self" when it is getpid(), tid as "main"
 * when it is the main thread (tc_init), else as the number.  The data prints
 * decoded for the system events of doc/semantics.md, as hex otherwise.
 */
static inline void tc_print_event(trace_id_t trid, const tc_event *e)
{
    char name[TRACE_EVENT_NAME_MAX + 1];
    int rc = posix_trace_eventid_get_name(trid, e->info.posix_event_id, name);
    if (rc != 0)
        snprintf(name, sizeof name, "<%s>", tc_errname(rc));
    printf("event id=%u name=%s", (unsigned)e->info.posix_event_id, name);
    if (e->info.posix_pid == getpid())
        printf(" pid=self");
    else
        printf(" pid=%ld", (long)e->info.posix_pid);
    if (pthread_equal(e->info.posix_thread_id, tc_main_thread))
        printf(" tid=main");
    else
        printf(" tid=%lu", (unsigned long)e->info.posix_thread_id);
    printf(" len=%zu", e->len);
    switch (e->info.posix_event_id) {
    case POSIX_TRACE_START:
        if (e->len == sizeof(trace_event_set_t)) {
            trace_event_set_t s;
            memcpy(&s, e->data, sizeof s);
            printf(" filter=");
            tc_fprint_set(stdout, &s);
        } else {
            printf(" data=");
            tc_print_hex(stdout, e->data, e->len);
        }
        break;
    case POSIX_TRACE_STOP:
        if (e->len == sizeof(int)) {
            int a;
            memcpy(&a, e->data, sizeof a);
            printf(" auto=%d", a);
        } else {
            printf(" data=");
            tc_print_hex(stdout, e->data, e->len);
        }
        break;
    case POSIX_TRACE_FILTER:
        if (e->len == 2 * sizeof(trace_event_set_t)) {
            trace_event_set_t s;
            memcpy(&s, e->data, sizeof s);
            printf(" old=");
            tc_fprint_set(stdout, &s);
            memcpy(&s, e->data + sizeof s, sizeof s);
            printf(" new=");
            tc_fprint_set(stdout, &s);
        } else {
            printf(" data=");
            tc_print_hex(stdout, e->data, e->len);
        }
        break;
    case POSIX_TRACE_OVERFLOW:
        if (e->len == sizeof(uint64_t)) {
            uint64_t n;
            memcpy(&n, e->data, sizeof n);
            printf(" lost=%" PRIu64, n);
        } else {
            printf(" data=");
            tc_print_hex(stdout, e->data, e->len);
        }
        break;
    case POSIX_TRACE_ERROR:
        if (e->len == sizeof(int)) {
            int n;
            memcpy(&n, e->data, sizeof n);
            printf(" error=%s", tc_errname(n));
        } else {
            printf(" data=");
            tc_print_hex(stdout, e->data, e->len);
        }
        break;
    default:
        printf(" data=");
        if (e->len <= 64) {
            tc_print_hex(stdout, e->data, e->len);
        } else {
            tc_print_hex(stdout, e->data, 64);
            printf("...");
        }
        break;
    }
    printf(" trunc=%d", e->info.posix_truncation_status);
    if (tc_show_ts)
        printf(" ts=%" PRId64, tc_ts_ns(&e->info.posix_timestamp));
    printf("\n");
}

/* Prints every event available now (trygetnext), then "end". */
static inline int tc_drain_print(trace_id_t trid)
{
    static tc_event e;
    int n = 0;
    while (tc_try(trid, &e)) {
        tc_print_event(trid, &e);
        n++;
    }
    printf("end\n");
    return n;
}

/*
 * Reads every available event (trygetnext).  Events of type `ev` carry a
 * uint64_t sequence number first in their data; consecutive ones print as
 * one line "user seq=A..B n=N" (a jump starts a new line); any other event
 * prints with tc_print_event.  Ends with "end".  Returns the user events read.
 */
static inline void tc_print_run(uint64_t first, uint64_t last, long run,
                                int64_t ts_first, int64_t ts_last)
{
    printf("user seq=%" PRIu64 "..%" PRIu64 " n=%ld", first, last, run);
    if (tc_show_ts)
        printf(" first_ts=%" PRId64 " last_ts=%" PRId64, ts_first, ts_last);
    printf("\n");
}

static inline long tc_drain_compact(trace_id_t trid, trace_event_id_t ev)
{
    static tc_event e;
    long n = 0, run = 0;
    uint64_t first = 0, last = 0;
    int64_t ts_first = 0, ts_last = 0;
    while (tc_try(trid, &e)) {
        int64_t ts = tc_ts_ns(&e.info.posix_timestamp);
        if (e.info.posix_event_id == ev && e.len >= sizeof(uint64_t)) {
            uint64_t s;
            memcpy(&s, e.data, sizeof s);
            if (run && s == last + 1) {
                last = s;
                ts_last = ts;
                run++;
            } else {
                if (run)
                    tc_print_run(first, last, run, ts_first, ts_last);
                first = last = s;
                ts_first = ts_last = ts;
                run = 1;
            }
            n++;
            continue;
        }
        if (run)
            tc_print_run(first, last, run, ts_first, ts_last);
        run = 0;
        tc_print_event(trid, &e);
    }
    if (run)
        tc_print_run(first, last, run, ts_first, ts_last);
    printf("end\n");
    return n;
}

/*
 * Records events of type ev (data: the uint64_t sequence number *seq, then
 * incremented) in batches of 1000 until posix_trace_get_status reports the
 * stream FULL (a stream really holds more than its stream-min-size, so the
 * number needed is not known in advance), then one more batch of 1000 (lost
 * for UNTIL_FULL, overwriting for LOOP).  Gives up after 5 million events
 * (prints "never full").  Returns the number of events recorded.
 */
static inline uint64_t tc_fill(trace_id_t trid, trace_event_id_t ev, uint64_t *seq)
{
    uint64_t n = 0;
    struct posix_trace_status_info st;
    for (;;) {
        for (int i = 0; i < 1000; i++, n++, (*seq)++)
            posix_trace_event(ev, seq, sizeof *seq);
        CHECK(posix_trace_get_status(trid, &st));
        if (st.posix_stream_full_status == POSIX_TRACE_FULL)
            break;
        if (n >= 5000000) {
            printf("never full\n");
            break;
        }
    }
    for (int i = 0; i < 1000; i++, n++, (*seq)++)
        posix_trace_event(ev, seq, sizeof *seq);
    return n;
}

static inline trace_event_id_t tc_open(const char *name)
{
    trace_event_id_t id = 0;
    CHECK(posix_trace_eventid_open(name, &id));
    return id;
}

/* Creates a stream for the calling process; attributes from the arguments
 * (0 means default for the sizes). */
static inline trace_id_t tc_create(size_t streamsize, size_t maxdata, int policy)
{
    trace_attr_t a;
    trace_id_t trid;
    CHECK(posix_trace_attr_init(&a));
    if (streamsize)
        CHECK(posix_trace_attr_setstreamsize(&a, streamsize));
    if (maxdata)
        CHECK(posix_trace_attr_setmaxdatasize(&a, maxdata));
    if (policy)
        CHECK(posix_trace_attr_setstreamfullpolicy(&a, policy));
    CHECK(posix_trace_create(0, &a, &trid));
    CHECK(posix_trace_attr_destroy(&a));
    return trid;
}

#endif /* POSIXTRACE_TCOMMON_H */
