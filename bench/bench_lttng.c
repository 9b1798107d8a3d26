/*
 * bench_lttng: posix_trace_event beside an LTTng-UST tracepoint with the
 * same 16-byte payload, in the same run (bench/README.md).
 *
 * The parent makes sure an lttng-sessiond runs (starting one of its own,
 * stopped at the end, if none does), creates a session writing into a
 * temporary directory, enables the tracepoint posixtrace_bench:event16,
 * starts it and runs itself again as the measured child (an LTTng-UST
 * application registers with the session daemon when it starts). The child
 * times, best of REPS loops of N calls each: clock_gettime(CLOCK_REALTIME)
 * (the baseline), the tracepoint (recorded by the session), and
 * posix_trace_event into a running stream of its own (default size, LOOP,
 * no reader); then it fills a stream of the default size with policy
 * UNTIL_FULL to count how many 16-byte events it keeps. The parent stops
 * and destroys the session and divides the bytes of the trace's stream
 * files by the events recorded (the tracepoint calls less those LTTng
 * reports discarded).
 *
 * Without LTTng-UST at configure time, or without the lttng commands at
 * run time, it prints why it skipped and succeeds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <trace.h>

#include "bench_util.h"

#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>

#ifdef HAVE_LTTNG_UST
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "bench_lttng_tp.h"

#define REPS 5
#define PAYLOAD 16

struct payload {
    uint64_t seq, tag;
};

#define BARRIER() __asm__ __volatile__("" ::: "memory")

static double loop_clock(long n)
{
    struct timespec ts;
    double t0 = bench_now();
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_REALTIME, &ts);
        BARRIER();
    }
    return (bench_now() - t0) * 1e9 / (double)n;
}

static double loop_lttng(long n, uint64_t seq0)
{
    double t0 = bench_now();
    for (long i = 0; i < n; i++) {
        lttng_ust_tracepoint(posixtrace_bench, event16, seq0 + (uint64_t)i, 1);
        BARRIER();
    }
    return (bench_now() - t0) * 1e9 / (double)n;
}

static double loop_ours(trace_event_id_t id, long n, uint64_t seq0)
{
    struct payload p = { 0, 1 };
    double t0 = bench_now();
    for (long i = 0; i < n; i++) {
        p.seq = seq0 + (uint64_t)i;
        posix_trace_event(id, &p, sizeof p);
        BARRIER();
    }
    return (bench_now() - t0) * 1e9 / (double)n;
}

/* How many 16-byte events an UNTIL_FULL stream of the default size keeps
 * (its size in *size): record until it is full, read them back. */
static long fill_count(trace_event_id_t id, size_t *size)
{
    trace_attr_t a;
    trace_id_t t;
    BENCH_CHECK(posix_trace_attr_init(&a));
    BENCH_CHECK(posix_trace_attr_getstreamsize(&a, size));
    BENCH_CHECK(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL));
    BENCH_CHECK(posix_trace_create(0, &a, &t));
    BENCH_CHECK(posix_trace_start(t));
    struct payload p = { 0, 2 };
    struct posix_trace_status_info st = { 0 };
    for (long i = 0; i < 100000000L && st.posix_stream_full_status != POSIX_TRACE_FULL; i++) {
        posix_trace_event(id, &p, sizeof p);
        p.seq++;
        if (i % 64 == 0)
            BENCH_CHECK(posix_trace_get_status(t, &st));
    }
    long kept = 0;
    for (;;) {
        struct posix_trace_event_info info;
        char buf[64];
        size_t len;
        int unavailable = 0;
        BENCH_CHECK(posix_trace_trygetnext_event(t, &info, buf, sizeof buf, &len, &unavailable));
        if (unavailable)
            break;
        kept += info.posix_event_id == id;
    }
    BENCH_CHECK(posix_trace_shutdown(t));
    BENCH_CHECK(posix_trace_attr_destroy(&a));
    return kept;
}

/* The measured child: prints "clock_ns lttng_ns ours_ns tracepoint_calls
 * kept stream_size". */
static int child_main(long n)
{
    if (!lttng_ust_tracepoint_enabled(posixtrace_bench, event16)) {
        fprintf(stderr, "bench_lttng: the tracepoint is not enabled in the child (not "
                "registered with lttng-sessiond?)\n");
        return 1;
    }
    trace_event_id_t id;
    trace_id_t t;
    BENCH_CHECK(posix_trace_eventid_open("posixtrace_bench_event", &id));
    BENCH_CHECK(posix_trace_create(0, NULL, &t));
    BENCH_CHECK(posix_trace_start(t));
    double clk = 1e30, lt = 1e30, ours = 1e30, v;
    uint64_t calls = 0;
    loop_lttng(n, calls); /* the first loop touches LTTng's buffers */
    calls += (uint64_t)n;
    for (int r = 0; r < REPS; r++) { /* alternating: drifts hit all three */
        clk = (v = loop_clock(n)) < clk ? v : clk;
        lt = (v = loop_lttng(n, calls)) < lt ? v : lt;
        calls += (uint64_t)n;
        ours = (v = loop_ours(id, n, calls)) < ours ? v : ours;
    }
    BENCH_CHECK(posix_trace_shutdown(t));
    size_t size = 0;
    long kept = fill_count(id, &size);
    printf("%.3f %.3f %.3f %llu %ld %zu\n", clk, lt, ours, (unsigned long long)calls, kept,
           size);
    return 0;
}

/* ---- the parent: the session around the child ---- */
static char self[4096], dir[64], session[64];
static pid_t sessiond;
static long long trace_bytes;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd) == 0 ? 0 : -1;
}

/* An lttng-sessiond of our own when none answers; 0 when one answers. */
static int ensure_sessiond(void)
{
    if (sh("lttng list >/dev/null 2>&1") == 0)
        return 0;
    sessiond = fork();
    if (sessiond == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 1);
        dup2(nul, 2);
        execlp("lttng-sessiond", "lttng-sessiond", "--no-kernel", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100; i++) {
        usleep(100000);
        if (sh("lttng list >/dev/null 2>&1") == 0)
            return 0;
    }
    return -1;
}

static void stop_sessiond(void)
{
    if (sessiond <= 0)
        return;
    kill(sessiond, SIGTERM);
    for (int i = 0; i < 100 && waitpid(sessiond, NULL, WNOHANG) == 0; i++)
        usleep(100000);
    if (waitpid(sessiond, NULL, WNOHANG) == 0) {
        kill(sessiond, SIGKILL);
        waitpid(sessiond, NULL, 0);
    }
}

/* The trace's stream files (not its metadata or index). */
static int add_stream(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
    const char *base = path + f->base;
    if (flag == FTW_F && strcmp(base, "metadata") != 0 && strstr(path, "/index/") == NULL)
        trace_bytes += (long long)sb->st_size;
    return 0;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb;
    (void)flag;
    (void)f;
    remove(path);
    return 0;
}

/* "Discarded events: N" of the session's channel. */
static long long discarded(void)
{
    char cmd[128], line[256];
    long long d = -1;
    snprintf(cmd, sizeof cmd, "lttng list %s 2>/dev/null", session);
    FILE *p = popen(cmd, "r");
    while (p != NULL && fgets(line, sizeof line, p) != NULL) {
        const char *k = strstr(line, "Discarded events:");
        if (k != NULL)
            d = atoll(k + strlen("Discarded events:"));
    }
    if (p != NULL)
        pclose(p);
    return d;
}

static int run_child(long n, double v[6])
{
    char nb[48], buf[256];
    snprintf(nb, sizeof nb, "BENCH_LTTNG_N=%ld", n);
    char *argv[] = { self, NULL }, *env[] = { nb, NULL };
    int fd;
    pid_t pid = bench_spawn(argv, env, NULL, &fd, NULL, NULL);
    if (bench_collect(pid, fd, buf, sizeof buf, NULL) != 0)
        return -1;
    return sscanf(buf, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) == 6
               ? 0 : -1;
}

static int session_run(long n, double v[6], long long *disc)
{
    snprintf(dir, sizeof dir, "/tmp/posixtrace-bench-lttng-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(session, sizeof session, "posixtrace-bench-%d", (int)getpid());
    int rc = -1;
    if (sh("lttng create %s --output=%s >/dev/null", session, dir) != 0)
        goto out;
    /* sub-buffers large enough that the consumer daemon keeps up */
    if (sh("lttng enable-channel -u -s %s --subbuf-size=1M --num-subbuf=8 ch >/dev/null",
           session) == 0 &&
        sh("lttng enable-event -u -s %s -c ch posixtrace_bench:event16 >/dev/null",
           session) == 0 &&
        sh("lttng start %s >/dev/null", session) == 0) {
        rc = run_child(n, v);
        if (sh("lttng stop %s >/dev/null", session) != 0)
            rc = -1;
        *disc = discarded();
    }
    sh("lttng destroy %s >/dev/null", session);
    nftw(dir, add_stream, 16, FTW_PHYS);
out:
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}

static int lttng_main(void)
{
    if (sh("command -v lttng >/dev/null 2>&1 && command -v lttng-sessiond >/dev/null 2>&1") != 0) {
        printf("bench_lttng: skipped: the lttng commands are not installed (lttng-tools)\n");
        return 0;
    }
    if (bench_self(self, sizeof self) != 0)
        return 1;
    if (ensure_sessiond() != 0) {
        stop_sessiond();
        printf("bench_lttng: skipped: no lttng-sessiond answers and none could be started\n");
        return 0;
    }
    long n = (long)(2000000 * bench_scale());
    n = n < 1000 ? 1000 : n;
    double v[6];
    long long disc = -1;
    int rc = session_run(n, v, &disc);
    stop_sessiond();
    if (rc != 0 || disc < 0) {
        fprintf(stderr, "bench_lttng: FAIL: the LTTng session or the child failed\n");
        return 1;
    }
    double clk = v[0], lt = v[1], ours = v[2], recorded = v[3] - (double)disc;
    printf("16-byte event, best of %d loops of %ld calls, same run; clocksource %s\n", REPS, n,
           bench_clocksource());
    printf("%-50s %8.2f ns/call  1.00x\n", "clock_gettime(CLOCK_REALTIME) [baseline]", clk);
    printf("%-50s %8.2f ns/event %5.2fx clock_gettime\n",
           "LTTng-UST tracepoint, session recording", lt, lt / clk);
    printf("%-50s %8.2f ns/event %5.2fx clock_gettime %5.2fx LTTng-UST   [target <= 1.00x] %s\n",
           "posix_trace_event, running stream (LOOP)", ours, ours / clk, ours / lt,
           ours <= lt ? "OK" : "MISSED");
    double lbytes = recorded > 0 ? (double)trace_bytes / recorded : 0;
    printf("%-50s %8.2f bytes/event (%lld bytes of stream files, %.0f events, %lld "
           "discarded)\n", "LTTng-UST recorded trace", lbytes, trace_bytes, recorded, disc);
    double obytes = (double)v[5] / v[4];
    printf("%-50s %8.2f bytes/event (a stream of %.0f bytes keeps %.0f events)   "
           "[target <= LTTng-UST] %s\n", "posix_trace_event, stream (default size)", obytes,
           v[5], v[4], obytes <= lbytes ? "OK" : "MISSED");
    return 0;
}
#endif

int main(void)
{
#ifdef HAVE_LTTNG_UST
    const char *n = getenv("BENCH_LTTNG_N");
    return n != NULL ? child_main(atol(n)) : lttng_main();
#else
    printf("bench_lttng: skipped: configure did not find LTTng-UST (liblttng-ust-dev)\n");
    return 0;
#endif
}
