/*
 * t048_log_dump: reads a trace log back with posix_trace_open() (a
 * pre-recorded trace stream) and prints what it holds.
 *
 *   t048_log_dump PATH [full] [checks] [norewind] [skipflush]
 *
 * Prints the attributes (posix_trace_get_attr), the status
 * (posix_trace_get_status, twice: never reset for a pre-recorded stream), the
 * event type list, then every event with posix_trace_getnext_event:
 *  - events named "seq" written by t042_log_write (16 bytes: s, s * K) print as
 *    runs "user seq=A..B n=N pid=P tid=T first_ts= last_ts=" while they are
 *    consecutive and intact (unless "full");
 *  - any other event prints "event id= name= pid= tid= len= <data> trunc= ts=",
 *    with the data of the system events decoded and else in full hex;
 * then "end n=<events> user=<seq events> backwards=<timestamps lower than the
 * previous one>".  With "skipflush", FLUSH_START and FLUSH_STOP are not printed
 * (runs go on across them) but counted: "flush marks start=N stop=M
 * unpaired=<a STOP not right after a START's flush, or a START left open>".  Then (unless "norewind") posix_trace_rewind and a second
 * read compared with the first; the end of the log for getnext and
 * timedgetnext.  With "checks": the functions a pre-recorded stream does not
 * take, a short read buffer, close and the trid afterwards.
 */
#include "tcommon.h"

#include <fcntl.h>

#define SEQ_K 0x9E3779B97F4A7C15ULL

static trace_id_t trid;
/* t042_log_write opens "seq" first: 257 even when the log lost its names */
static trace_event_id_t ev_seq = 257;
static int full, skipflush;

static const char *pol(int p) { return tc_policy_name(p); }

static void print_status(const char *label)
{
    tc_print_full_status(label, trid);
}

static void print_attr(void)
{
    trace_attr_t a;
    char name[TRACE_NAME_MAX], gv[TRACE_NAME_MAX];
    size_t ss = 0, md = 0, ls = 0;
    int sp = 0, lp = 0, inh = 0;
    struct timespec ct, res;
    int rc = posix_trace_get_attr(trid, &a);
    if (rc != 0) {
        printf("attr rc=%s\n", tc_errname(rc));
        return;
    }
    CHECK(posix_trace_attr_getname(&a, name));
    CHECK(posix_trace_attr_getgenversion(&a, gv));
    CHECK(posix_trace_attr_getstreamsize(&a, &ss));
    CHECK(posix_trace_attr_getmaxdatasize(&a, &md));
    CHECK(posix_trace_attr_getlogsize(&a, &ls));
    CHECK(posix_trace_attr_getstreamfullpolicy(&a, &sp));
    CHECK(posix_trace_attr_getlogfullpolicy(&a, &lp));
    CHECK(posix_trace_attr_getinherited(&a, &inh));
    CHECK(posix_trace_attr_getcreatetime(&a, &ct));
    CHECK(posix_trace_attr_getclockres(&a, &res));
    printf("attr name=\"%s\" ssize=%zu maxdata=%zu lsize=%zu stream=%s log=%s inherit=%s "
           "create=%" PRId64 "\n", name, ss, md, ls, pol(sp), pol(lp), tc_inherit_name(inh),
           tc_ts_ns(&ct));
    printf("attr genversion=\"%s\" clockres=%" PRId64 "\n", gv, tc_ts_ns(&res));
    CHECK(posix_trace_attr_destroy(&a));
}

static void print_types(void)
{
    trace_event_id_t id;
    int un = 0;
    char name[TRACE_EVENT_NAME_MAX + 1];
    CHECK(posix_trace_eventtypelist_rewind(trid));
    printf("types");
    for (int guard = 0; guard < 5000; guard++) {
        CHECK(posix_trace_eventtypelist_getnext_id(trid, &id, &un));
        if (un)
            break;
        int rc = posix_trace_eventid_get_name(trid, id, name);
        printf(" %u:%s", (unsigned)id, rc == 0 ? name : tc_errname(rc));
        if (rc == 0 && strcmp(name, "seq") == 0)
            ev_seq = id;
    }
    printf("\n");
}

static void print_one(const tc_event *e)
{
    char name[TRACE_EVENT_NAME_MAX + 1];
    int rc = posix_trace_eventid_get_name(trid, e->info.posix_event_id, name);
    if (rc != 0)
        snprintf(name, sizeof name, "<%s>", tc_errname(rc));
    printf("event id=%u name=%s pid=%ld tid=%lu len=%zu", (unsigned)e->info.posix_event_id,
           name, (long)e->info.posix_pid, (unsigned long)e->info.posix_thread_id, e->len);
    switch (e->info.posix_event_id) {
    case POSIX_TRACE_START:
        if (e->len == sizeof(trace_event_set_t)) {
            trace_event_set_t s;
            memcpy(&s, e->data, sizeof s);
            printf(" filter=");
            tc_fprint_set(stdout, &s);
            goto tail;
        }
        break;
    case POSIX_TRACE_STOP:
    case POSIX_TRACE_ERROR:
        if (e->len == sizeof(int)) {
            int a;
            memcpy(&a, e->data, sizeof a);
            if (e->info.posix_event_id == POSIX_TRACE_STOP)
                printf(" auto=%d", a);
            else
                printf(" error=%s", tc_errname(a));
            goto tail;
        }
        break;
    case POSIX_TRACE_OVERFLOW:
        if (e->len == sizeof(uint64_t)) {
            uint64_t n;
            memcpy(&n, e->data, sizeof n);
            printf(" lost=%" PRIu64, n);
            goto tail;
        }
        break;
    default:
        break;
    }
    printf(" data=");
    tc_print_hex(stdout, e->data, e->len);
tail:
    printf(" trunc=%d ts=%" PRId64 "\n", e->info.posix_truncation_status,
           tc_ts_ns(&e->info.posix_timestamp));
}

/* a "seq" event of t042_log_write, intact: its sequence number */
static int seq_of(const tc_event *e, uint64_t *s)
{
    uint64_t d[2];
    if (e->info.posix_event_id != ev_seq || e->len != sizeof d ||
        e->info.posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED)
        return 0;
    memcpy(d, e->data, sizeof d);
    if (d[1] != d[0] * SEQ_K)
        return 0;
    *s = d[0];
    return 1;
}

struct run {
    long n;
    uint64_t first, last;
    pid_t pid;
    pthread_t tid;
    int64_t ts_first, ts_last;
};

static void flush_run(struct run *r)
{
    if (r->n)
        printf("user seq=%" PRIu64 "..%" PRIu64 " n=%ld pid=%ld tid=%lu first_ts=%" PRId64
               " last_ts=%" PRId64 "\n", r->first, r->last, r->n, (long)r->pid,
               (unsigned long)r->tid, r->ts_first, r->ts_last);
    r->n = 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t hash_event(uint64_t h, const tc_event *e)
{
    h = fnv(h, &e->info.posix_event_id, sizeof e->info.posix_event_id);
    h = fnv(h, &e->info.posix_pid, sizeof e->info.posix_pid);
    h = fnv(h, &e->info.posix_prog_address, sizeof e->info.posix_prog_address);
    h = fnv(h, &e->info.posix_thread_id, sizeof e->info.posix_thread_id);
    h = fnv(h, &e->info.posix_timestamp.tv_sec, sizeof e->info.posix_timestamp.tv_sec);
    h = fnv(h, &e->info.posix_timestamp.tv_nsec, sizeof e->info.posix_timestamp.tv_nsec);
    h = fnv(h, &e->info.posix_truncation_status, sizeof e->info.posix_truncation_status);
    h = fnv(h, &e->len, sizeof e->len);
    return fnv(h, e->data, e->len);
}

static int next(tc_event *e)
{
    int un = -1;
    e->len = (size_t)-1;
    int rc = posix_trace_getnext_event(trid, &e->info, e->data, sizeof e->data, &e->len, &un);
    if (rc != 0) {
        printf("getnext rc=%s\n", tc_errname(rc));
        exit(2);
    }
    return un == 0;
}

/* Reads to the end; prints when `print`; returns the number of events and
 * their hash in *h. */
static long read_all(int print, uint64_t *h)
{
    static tc_event e;
    struct run r = { 0 };
    long n = 0, user = 0, back = 0, fstart = 0, fstop = 0, unpaired = 0;
    int open_flush = 0;
    int64_t prev = INT64_MIN;
    int64_t t0 = tc_mono_ns();
    *h = 0xcbf29ce484222325ULL;
    while (next(&e)) {
        int64_t ts = tc_ts_ns(&e.info.posix_timestamp);
        uint64_t s;
        n++;
        *h = hash_event(*h, &e);
        if (ts < prev)
            back++;
        prev = ts;
        if (!print)
            continue;
        if (skipflush && (e.info.posix_event_id == POSIX_TRACE_FLUSH_START ||
                          e.info.posix_event_id == POSIX_TRACE_FLUSH_STOP)) {
            if (e.info.posix_event_id == POSIX_TRACE_FLUSH_START) {
                fstart++;
                unpaired += open_flush;
                open_flush = 1;
            } else {
                fstop++;
                unpaired += !open_flush;
                open_flush = 0;
            }
            continue;
        }
        if (!full && seq_of(&e, &s)) {
            user++;
            if (r.n && s == r.last + 1 && e.info.posix_pid == r.pid &&
                pthread_equal(e.info.posix_thread_id, r.tid)) {
                r.last = s;
                r.ts_last = ts;
                r.n++;
                continue;
            }
            flush_run(&r);
            r.n = 1;
            r.first = r.last = s;
            r.pid = e.info.posix_pid;
            r.tid = e.info.posix_thread_id;
            r.ts_first = r.ts_last = ts;
            continue;
        }
        if (e.info.posix_event_id == ev_seq)
            user++;
        flush_run(&r);
        print_one(&e);
    }
    if (print) {
        flush_run(&r);
        if (skipflush)
            printf("flush marks start=%ld stop=%ld unpaired=%ld\n", fstart, fstop,
                   unpaired + open_flush);
        printf("end n=%ld user=%ld backwards=%ld ms=%" PRId64 "\n", n, user, back,
               (tc_mono_ns() - t0) / 1000000);
    }
    return n;
}

static void at_end(void)
{
    static tc_event e;
    int un = 0;
    int64_t t0 = tc_mono_ns();
    int rc = posix_trace_getnext_event(trid, &e.info, e.data, sizeof e.data, &e.len, &un);
    int64_t t1 = tc_mono_ns();
    printf("at end getnext rc=%s unavailable=%d ms=%" PRId64 "\n", tc_errname(rc), un != 0,
           (t1 - t0) / 1000000);
    struct timespec abst = tc_ns_ts(tc_now_ns() + 3000000000LL);
    un = 0;
    rc = posix_trace_timedgetnext_event(trid, &e.info, e.data, sizeof e.data, &e.len, &un, &abst);
    printf("at end timedgetnext rc=%s unavailable=%d ms=%" PRId64 "\n", tc_errname(rc), un != 0,
           (tc_mono_ns() - t1) / 1000000);
}

static void checks(void)
{
    static tc_event e;
    int un = 0;
    trace_event_set_t set;
    trace_event_id_t id;
    posix_trace_eventset_empty(&set);

    SHOW("prerecorded trygetnext",
         posix_trace_trygetnext_event(trid, &e.info, e.data, sizeof e.data, &e.len, &un));
    SHOW("prerecorded start", posix_trace_start(trid));
    SHOW("prerecorded stop", posix_trace_stop(trid));
    SHOW("prerecorded clear", posix_trace_clear(trid));
    SHOW("prerecorded flush", posix_trace_flush(trid));
    SHOW("prerecorded set_filter", posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET));
    SHOW("prerecorded get_filter", posix_trace_get_filter(trid, &set));
    SHOW("prerecorded trid_eventid_open", posix_trace_trid_eventid_open(trid, "seq", &id));
    SHOW("prerecorded shutdown", posix_trace_shutdown(trid));
    int eq = -1;
    eq = posix_trace_eventid_equal(trid, POSIX_TRACE_START, POSIX_TRACE_START);
    printf("prerecorded eventid_equal same=%d", eq != 0);
    eq = posix_trace_eventid_equal(trid, POSIX_TRACE_START, POSIX_TRACE_STOP);
    printf(" different=%d\n", eq != 0);

    /* a read buffer smaller than the data: TRUNCATED_READ */
    CHECK(posix_trace_rewind(trid));
    e.len = (size_t)-1;
    int rc = posix_trace_getnext_event(trid, &e.info, e.data, 4, &e.len, &un);
    printf("short read rc=%s unavailable=%d id=%u len=%zu trunc=%d\n", tc_errname(rc), un,
           (unsigned)e.info.posix_event_id, e.len, e.info.posix_truncation_status);
    /* still usable after the status calls above */
    print_status("status after checks");

    SHOW("close", posix_trace_close(trid));
    SHOW("closed getnext",
         posix_trace_getnext_event(trid, &e.info, e.data, sizeof e.data, &e.len, &un));
    SHOW("closed rewind", posix_trace_rewind(trid));
    SHOW("closed close", posix_trace_close(trid));
    struct posix_trace_status_info st;
    SHOW("closed get_status", posix_trace_get_status(trid, &st));
    trace_attr_t a;
    SHOW("closed get_attr", posix_trace_get_attr(trid, &a));
    char name[TRACE_EVENT_NAME_MAX + 1];
    SHOW("closed eventid_get_name", posix_trace_eventid_get_name(trid, 0, name));
}

int main(int argc, char **argv)
{
    int do_checks = 0, rewind = 1;
    tc_init();
    tc_watchdog(120);
    if (argc < 2) {
        printf("usage: t048_log_dump PATH [full] [checks] [norewind]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "full") == 0)
            full = 1;
        else if (strcmp(argv[i], "checks") == 0)
            do_checks = 1;
        else if (strcmp(argv[i], "norewind") == 0)
            rewind = 0;
        else if (strcmp(argv[i], "skipflush") == 0)
            skipflush = 1;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        printf("open %s failed: errno %d\n", argv[1], errno);
        return 2;
    }
    int64_t t0 = tc_mono_ns();
    int rc = posix_trace_open(fd, &trid);
    printf("open rc=%s ms=%" PRId64 "\n", tc_errname(rc), (tc_mono_ns() - t0) / 1000000);
    if (rc != 0)
        return 0;
    print_attr();
    print_status("status");
    print_status("status again");
    print_types();
    uint64_t h1, h2;
    long n1 = read_all(1, &h1);
    if (rewind) {
        at_end();
        rc = posix_trace_rewind(trid);
        long n2 = read_all(0, &h2);
        printf("rewind rc=%s n=%ld same=%d\n", tc_errname(rc), n2, n1 == n2 && h1 == h2);
    }
    if (do_checks)
        checks();
    else
        CHECK(posix_trace_close(trid));
    close(fd);
    printf("done\n");
    return 0;
}
