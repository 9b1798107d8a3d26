/*
 * t030_logread: reads trace logs (pre-recorded streams) through the public
 * API: posix_trace_open, posix_trace_get_attr, posix_trace_get_status,
 * posix_trace_eventtypelist_getnext_id, posix_trace_eventid_get_name,
 * posix_trace_getnext_event, posix_trace_rewind, posix_trace_close.
 * The logs are written by tests/lib/logfmt.py (doc/log-format.md).
 *
 *   t030_logread dump [-b NUM] [-f OFF] FILE...   per file: "file PATH",
 *       "open rc=..", then attr, status, types, one "ev" line per event,
 *       "end n=N", "rewind rc=0 n=N same=1" (a second pass after
 *       posix_trace_rewind, compared by digest), "close rc=0". NUM: the data
 *       buffer (0: NULL). Before the printed pass it reads up to 3 events and
 *       rewinds. OFF: right after posix_trace_open, flip bit OFF % 8 of the
 *       file's byte OFF (the log changes under the reader).
 *   t030_logread open [-w] PATH...       "open PATH rc=.." (-w: O_WRONLY)
 *   t030_logread badfd                   posix_trace_open(-1), of a closed fd
 *   t030_logread bench FILE              "n=N", then "checked=N bad=N" (a second pass
 *                                         from posix_trace_rewind checks logfmt.bulk's
 *                                         events one by one), then the rate
 *                                         (informational: rates belong in make bench)
 */
#include "tcommon.h"

#include <fcntl.h>

static unsigned char buf[TC_BUFSZ];

static void print_str(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c > 0x20 && c < 0x7f && c != '\\')
            putchar(c);
        else
            printf("\\x%02x", c);
    }
}

static void print_attr(trace_id_t trid)
{
    trace_attr_t a;
    char name[TRACE_NAME_MAX];
    struct timespec ct;
    size_t ss, md, ls;
    int sp, lp, inh;
    CHECK(posix_trace_get_attr(trid, &a));
    CHECK(posix_trace_attr_getname(&a, name));
    CHECK(posix_trace_attr_getcreatetime(&a, &ct));
    CHECK(posix_trace_attr_getstreamsize(&a, &ss));
    CHECK(posix_trace_attr_getmaxdatasize(&a, &md));
    CHECK(posix_trace_attr_getlogsize(&a, &ls));
    CHECK(posix_trace_attr_getstreamfullpolicy(&a, &sp));
    CHECK(posix_trace_attr_getlogfullpolicy(&a, &lp));
    CHECK(posix_trace_attr_getinherited(&a, &inh));
    printf("attr name=");
    print_str(name);
    printf(" create=%lld.%09ld stream_size=%zu max_data=%zu log_size=%zu"
           " stream_policy=%s log_policy=%s inherit=%s\n",
           (long long)ct.tv_sec, ct.tv_nsec, ss, md, ls, tc_policy_name(sp),
           tc_policy_name(lp), tc_inherit_name(inh));
    posix_trace_attr_destroy(&a);
}

static const char *pick(int v, int a, const char *an, int b, const char *bn)
{
    return v == a ? an : v == b ? bn : "?";
}

static void print_status(trace_id_t trid)
{
    struct posix_trace_status_info st;
    CHECK(posix_trace_get_status(trid, &st));
    printf("status stream=%s full=%s overrun=%s flush=%s flush_error=%d log_overrun=%s"
           " log_full=%s\n",
           pick(st.posix_stream_status, POSIX_TRACE_RUNNING, "RUNNING",
                POSIX_TRACE_SUSPENDED, "SUSPENDED"),
           pick(st.posix_stream_full_status, POSIX_TRACE_FULL, "FULL",
                POSIX_TRACE_NOT_FULL, "NOT_FULL"),
           pick(st.posix_stream_overrun_status, POSIX_TRACE_OVERRUN, "OVERRUN",
                POSIX_TRACE_NO_OVERRUN, "NO_OVERRUN"),
           pick(st.posix_stream_flush_status, POSIX_TRACE_FLUSHING, "FLUSHING",
                POSIX_TRACE_NOT_FLUSHING, "NOT_FLUSHING"),
           st.posix_stream_flush_error,
           pick(st.posix_log_overrun_status, POSIX_TRACE_OVERRUN, "OVERRUN",
                POSIX_TRACE_NO_OVERRUN, "NO_OVERRUN"),
           pick(st.posix_log_full_status, POSIX_TRACE_FULL, "FULL",
                POSIX_TRACE_NOT_FULL, "NOT_FULL"));
}

/* "types ID=NAME ..." from the event type list; then the ids 8 and 1281,
 * which have no name unless the log's table gives 8 one. */
static void print_types(trace_id_t trid)
{
    char name[TRACE_EVENT_NAME_MAX + 1];
    printf("types");
    for (int n = 0; n < 5000; n++) {
        trace_event_id_t id;
        int unavailable = -1;
        CHECK(posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable));
        if (unavailable)
            break;
        int rc = posix_trace_eventid_get_name(trid, id, name);
        printf(" %u=", (unsigned)id);
        if (rc == 0)
            print_str(name);
        else
            printf("<%s>", tc_errname(rc));
    }
    printf("\n");
    int rc = posix_trace_eventid_get_name(trid, 1281, name);
    printf("name 1281 rc=%s\n", tc_errname(rc));
}

/* Reads the next event into buf (num bytes; 0: data NULL): 1, or 0 at the end. */
static int next(trace_id_t trid, size_t num, struct posix_trace_event_info *ev, size_t *len)
{
    int unavailable = -1;
    *len = (size_t)-1;
    int rc = posix_trace_getnext_event(trid, ev, num ? buf : NULL, num, len, &unavailable);
    if (rc != 0) {
        printf("getnext rc=%s\n", tc_errname(rc));
        exit(2);
    }
    return unavailable == 0;
}

static void print_event(const struct posix_trace_event_info *ev, size_t len)
{
    printf("ev id=%u pid=%ld tid=%lu addr=%#lx ts=%lld.%09ld len=%zu trunc=%d data=",
           (unsigned)ev->posix_event_id, (long)ev->posix_pid,
           (unsigned long)ev->posix_thread_id, (unsigned long)(uintptr_t)ev->posix_prog_address,
           (long long)ev->posix_timestamp.tv_sec, ev->posix_timestamp.tv_nsec, len,
           ev->posix_truncation_status);
    tc_print_hex(stdout, buf, len);
    printf("\n");
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t digest(const struct posix_trace_event_info *ev, size_t len, uint64_t h)
{
    uint64_t f[8] = { ev->posix_event_id, (uint64_t)ev->posix_pid,
                      (uint64_t)(uintptr_t)ev->posix_prog_address,
                      (uint64_t)ev->posix_thread_id, (uint64_t)ev->posix_timestamp.tv_sec,
                      (uint64_t)ev->posix_timestamp.tv_nsec,
                      (uint64_t)ev->posix_truncation_status, len };
    return mix(mix(h, f, sizeof f), buf, len);
}

/* All events: printed (print) or not; returns the count, *h their digest. */
static long pass(trace_id_t trid, size_t num, int print, uint64_t *h)
{
    struct posix_trace_event_info ev;
    size_t len;
    long n = 0;
    *h = 0xcbf29ce484222325ull;
    while (next(trid, num, &ev, &len)) {
        if (print)
            print_event(&ev, len);
        *h = digest(&ev, len, *h);
        n++;
    }
    return n;
}

/* Flips bit off % 8 of byte off of the file at path. */
static void flip(const char *path, long off)
{
    unsigned char c;
    int fd = open(path, O_RDWR);
    if (fd < 0 || pread(fd, &c, 1, off) != 1) {
        printf("cannot flip %s at %ld\n", path, off);
        exit(2);
    }
    c ^= (unsigned char)(1u << (off % 8));
    TC_ASSERT(pwrite(fd, &c, 1, off) == 1);
    close(fd);
}

static void dump(const char *path, size_t num, long flip_off)
{
    printf("file %s\n", path);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        printf("cannot open %s\n", path);
        exit(2);
    }
    trace_id_t trid;
    int rc = posix_trace_open(fd, &trid);
    printf("open rc=%s\n", tc_errname(rc));
    if (rc == 0 && flip_off >= 0)
        flip(path, flip_off);
    if (rc == 0) {
        struct posix_trace_event_info ev;
        size_t len;
        uint64_t h1, h2;
        print_attr(trid);
        print_status(trid);
        print_types(trid);
        for (int i = 0; i < 3 && next(trid, num, &ev, &len); i++)
            ;
        CHECK(posix_trace_rewind(trid));
        long n1 = pass(trid, num, 1, &h1);
        printf("end n=%ld\n", n1);
        rc = posix_trace_rewind(trid);
        long n2 = pass(trid, num, 0, &h2);
        printf("rewind rc=%s n=%ld same=%d\n", tc_errname(rc), n2, h1 == h2);
        printf("close rc=%s\n", tc_errname(posix_trace_close(trid)));
    }
    close(fd);
}

static void open_paths(int argc, char **argv, int i)
{
    int wr = i < argc && strcmp(argv[i], "-w") == 0;
    for (i += wr; i < argc; i++) {
        int fd = open(argv[i], wr ? O_WRONLY : O_RDONLY);
        if (fd < 0) {
            printf("cannot open %s\n", argv[i]);
            exit(2);
        }
        trace_id_t trid;
        int rc = posix_trace_open(fd, &trid);
        printf("open %s rc=%s\n", argv[i], tc_errname(rc));
        if (rc == 0)
            posix_trace_close(trid);
        close(fd);
    }
}

static void badfd(void)
{
    trace_id_t trid;
    printf("open -1 rc=%s\n", tc_errname(posix_trace_open(-1, &trid)));
    int fd = open("/dev/null", O_RDONLY);
    close(fd);
    printf("open closed rc=%s\n", tc_errname(posix_trace_open(fd, &trid)));
}

static void bench(const char *path)
{
    int fd = open(path, O_RDONLY);
    trace_id_t trid;
    uint64_t h;
    if (fd < 0) {
        printf("cannot open %s\n", path);
        exit(2);
    }
    int64_t t0 = tc_mono_ns();
    CHECK(posix_trace_open(fd, &trid));
    int64_t t1 = tc_mono_ns();
    long n = pass(trid, 256, 0, &h);
    int64_t t2 = tc_mono_ns();
    printf("n=%ld\n", n);
    CHECK(posix_trace_rewind(trid));
    /* logfmt.bulk's event i: slot s = i % 4, id 257 + s, pid 100 + s, data i
     * (8 bytes, little endian), timestamps increasing with i */
    struct posix_trace_event_info ev;
    size_t len;
    long k = 0, bad = 0;
    int64_t last = INT64_MIN;
    while (next(trid, 256, &ev, &len)) {
        uint64_t d = 0;
        for (int j = 7; j >= 0; j--)
            d = d << 8 | buf[j];
        int64_t ts = (int64_t)ev.posix_timestamp.tv_sec * 1000000000 + ev.posix_timestamp.tv_nsec;
        if (ev.posix_event_id != (trace_event_id_t)(257 + k % 4) || ev.posix_pid != 100 + k % 4 ||
            len != 8 || d != (uint64_t)k || ts <= last)
            bad++;
        last = ts;
        k++;
    }
    printf("checked=%ld bad=%ld\n", k, bad);
    printf("open_ms=%.1f read_ms=%.1f rate=%.0f events/s\n", (t1 - t0) / 1e6, (t2 - t1) / 1e6,
           n / ((t2 - t1) / 1e9));
    CHECK(posix_trace_close(trid));
    close(fd);
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(120);
    if (argc >= 2 && strcmp(argv[1], "dump") == 0) {
        int i = 2;
        size_t num = sizeof buf;
        long flip_off = -1;
        for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
            if (strcmp(argv[i], "-b") == 0)
                num = (size_t)strtoul(argv[i + 1], NULL, 0);
            else if (strcmp(argv[i], "-f") == 0)
                flip_off = strtol(argv[i + 1], NULL, 0);
        }
        if (num > sizeof buf)
            num = sizeof buf;
        for (; i < argc; i++)
            dump(argv[i], num, flip_off);
    } else if (argc >= 2 && strcmp(argv[1], "open") == 0) {
        open_paths(argc, argv, 2);
    } else if (argc == 2 && strcmp(argv[1], "badfd") == 0) {
        badfd();
    } else if (argc == 3 && strcmp(argv[1], "bench") == 0) {
        bench(argv[2]);
    } else {
        fprintf(stderr, "usage: t030_logread dump [-b NUM] [-f OFF] FILE... | open [-w] PATH... |"
                        " badfd | bench FILE\n");
        return 2;
    }
    return 0;
}
