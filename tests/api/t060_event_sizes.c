/*
 * t060_event_sizes: events of the largest sizes, written and read back
 * through every path (issue 12: a log reader that rejected the blocks of
 * events larger than 512 bytes).
 *
 *   t060_event_sizes MODE MAXDATA [LOG]
 *
 * MODE live: a stream without a log, read with posix_trace_trygetnext_event
 * after posix_trace_stop. MODE flush: a stream with a log on LOG (stream
 * policy FLUSH, log APPEND), posix_trace_flush after each round. MODE loop:
 * the same with log policy LOOP (log-max-size 16 MiB). Logs are read back
 * with posix_trace_open + posix_trace_getnext_event after shutdown.
 *
 * max-data-size MAXDATA. ROUNDS rounds, each recording in this order:
 * user event "big" with MAXDATA bytes, with MAXDATA + 1 (truncated when
 * recorded), with 0; system event POSIXTRACE_SYS_LAST with 1024 and 1025
 * bytes (the system event limit, PT_SYS_DATA_BYTES; the second truncated).
 * Event k (0-based over all events recorded) has data byte i =
 * (i * 131 + k * 17 + 1) & 0xff.
 *
 * Prints "big id=N", then one line per event read: "ev id= len= trunc=
 * fnv=" (FNV-1a 64 of the data read) for ids >= 8, "pre id=" for the
 * predefined events (0..7); then "end", and for a log "damage bad= first=".
 *
 *   t060_event_sizes deep N
 *
 * Recurses N calls deep, then opens and closes /dev/null (under
 * posixtrace-run --stack=64: a stack event of the most frames). Prints
 * "deep fd_ok=1".
 */
#include "tcommon.h"

#include <fcntl.h>
#include <posixtrace/log.h>
#include <posixtrace/record.h>

#define ROUNDS 3
#define SYS_BYTES 1024u

static unsigned char *buf, *rd;
static unsigned seq;

static void fill(size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)((i * 131 + seq * 17 + 1) & 0xff);
    seq++;
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void record_round(trace_id_t trid, trace_event_id_t big, size_t maxdata)
{
    fill(maxdata);
    posix_trace_event(big, buf, maxdata);
    fill(maxdata + 1);
    posix_trace_event(big, buf, maxdata + 1);
    fill(0);
    posix_trace_event(big, buf, 0);
    fill(SYS_BYTES);
    posixtrace_sys_event(POSIXTRACE_SYS_LAST, buf, SYS_BYTES, NULL);
    fill(SYS_BYTES + 1);
    posixtrace_sys_event(POSIXTRACE_SYS_LAST, buf, SYS_BYTES + 1, NULL);
    (void)trid;
}

static void print_one(const struct posix_trace_event_info *ev, size_t len)
{
    if (ev->posix_event_id < POSIXTRACE_SYS_FIRST) {
        printf("pre id=%u\n", (unsigned)ev->posix_event_id);
        return;
    }
    printf("ev id=%u len=%zu trunc=%d fnv=%016" PRIx64 "\n", (unsigned)ev->posix_event_id, len,
           ev->posix_truncation_status == POSIX_TRACE_TRUNCATED_RECORD, fnv(rd, len));
}

/* Every event of trid; getnext (a log) or trygetnext (an active stream). */
static void read_all(trace_id_t trid, int logged, size_t cap)
{
    for (;;) {
        struct posix_trace_event_info ev;
        size_t len = 0;
        int unavail = 0;
        int rc = logged ? posix_trace_getnext_event(trid, &ev, rd, cap, &len, &unavail)
                        : posix_trace_trygetnext_event(trid, &ev, rd, cap, &len, &unavail);
        if (rc != 0) {
            printf("read rc=%s\n", tc_errname(rc));
            break;
        }
        if (unavail)
            break;
        print_one(&ev, len);
    }
    printf("end\n");
}

static void make_attr(trace_attr_t *a, const char *mode, size_t maxdata)
{
    CHECK(posix_trace_attr_init(a));
    CHECK(posix_trace_attr_setmaxdatasize(a, maxdata));
    CHECK(posix_trace_attr_setstreamsize(a, (size_t)4 << 20));
    if (strcmp(mode, "live") == 0) {
        CHECK(posix_trace_attr_setstreamfullpolicy(a, POSIX_TRACE_UNTIL_FULL));
        return;
    }
    CHECK(posix_trace_attr_setstreamfullpolicy(a, POSIX_TRACE_FLUSH));
    if (strcmp(mode, "loop") == 0) {
        CHECK(posix_trace_attr_setlogfullpolicy(a, POSIX_TRACE_LOOP));
        CHECK(posix_trace_attr_setlogsize(a, (size_t)16 << 20));
    }
}

static void read_log(const char *path, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    TC_ASSERT(fd >= 0);
    trace_id_t trid;
    CHECK(posix_trace_open(fd, &trid));
    read_all(trid, 1, cap);
    long long bad = -2, first = -2;
    CHECK(posixtrace_log_damage(trid, &bad, &first));
    printf("damage bad=%lld first=%lld\n", bad, first);
    CHECK(posix_trace_close(trid));
    close(fd);
}

static int __attribute__((noinline)) deep(int n)
{
    if (n > 0) {
        int r = deep(n - 1);
        __asm__ volatile("" ::: "memory"); /* not a tail call */
        return r;
    }
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(60);
    if (argc == 3 && strcmp(argv[1], "deep") == 0) {
        printf("deep fd_ok=%d\n", deep(atoi(argv[2])));
        return 0;
    }
    if (argc < 3 || (strcmp(argv[1], "live") != 0 && argc < 4))
        return 2;
    const char *mode = argv[1];
    size_t maxdata = strtoul(argv[2], NULL, 10);
    int logged = strcmp(mode, "live") != 0;
    size_t cap = maxdata + 2 * SYS_BYTES;
    buf = malloc(cap);
    rd = malloc(cap);
    TC_ASSERT(buf != NULL && rd != NULL);
    trace_attr_t a;
    make_attr(&a, mode, maxdata);
    trace_id_t trid;
    int fd = -1;
    if (logged) {
        fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        TC_ASSERT(fd >= 0);
        CHECK(posix_trace_create_withlog(0, &a, fd, &trid));
    } else {
        CHECK(posix_trace_create(0, &a, &trid));
    }
    trace_event_id_t big;
    CHECK(posix_trace_eventid_open("big", &big));
    printf("big id=%u\n", (unsigned)big);
    CHECK(posix_trace_start(trid));
    for (int r = 0; r < ROUNDS; r++) {
        record_round(trid, big, maxdata);
        if (logged)
            CHECK(posix_trace_flush(trid));
    }
    CHECK(posix_trace_stop(trid));
    if (!logged) {
        read_all(trid, 0, cap);
        CHECK(posix_trace_shutdown(trid));
    } else {
        CHECK(posix_trace_shutdown(trid));
        close(fd);
        read_log(argv[3], cap);
    }
    posix_trace_attr_destroy(&a);
    free(buf);
    free(rd);
    return 0;
}
