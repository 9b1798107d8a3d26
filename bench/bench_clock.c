/*
 * bench_clock: do event timestamps stay within 10 µs of CLOCK_REALTIME over
 * a long trace, in both clock modes (bench/README.md)?
 *
 * Two children run at the same time, one with POSIXTRACE_CLOCK=tsc and one
 * with POSIXTRACE_CLOCK=realtime. Each records, every 500 µs for the whole
 * duration (60 s times POSIXTRACE_BENCH_SCALE), one event numbered i between
 * two reads of clock_gettime(CLOCK_REALTIME) t0[i] and t1[i]; then it reads
 * the stream back and measures how far each event's timestamp falls outside
 * [t0[i], t1[i]] (0 inside). Target: at most 10 µs for every event.
 *
 * With BENCH_CLOCK_SLEW=1 (and CAP_SYS_TIME), the parent also slews the
 * system clock during the run with adjtimex(ADJ_OFFSET_SINGLESHOT), as
 * adjtime(3) and an NTP daemon do: +4 ms, then -4 ms, in turn (the kernel
 * slews at 500 ppm, so each takes 8 s; the clock ends where it would have
 * been, give or take what was under way at the end). Off by default: it
 * changes the time of day of the whole machine.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <trace.h>
#include <posixtrace/control.h>

#include "bench_util.h"

#include <stdint.h>
#include <sys/timex.h>

#define PERIOD_NS 500000L
#define TARGET_NS 10000.0
#define SLEW_US 4000L

static uint64_t rt_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int child_main(double seconds)
{
    long n = (long)(seconds * 1e9 / PERIOD_NS);
    uint64_t *t0 = calloc((size_t)n, sizeof *t0), *t1 = calloc((size_t)n, sizeof *t1);
    if (t0 == NULL || t1 == NULL)
        return 1;
    trace_event_id_t id;
    trace_attr_t a;
    trace_id_t t;
    BENCH_CHECK(posix_trace_eventid_open("posixtrace_bench_clock", &id));
    BENCH_CHECK(posix_trace_attr_init(&a));
    BENCH_CHECK(posix_trace_attr_setstreamsize(&a, (size_t)n * 64 + ((size_t)1 << 20)));
    BENCH_CHECK(posix_trace_create(0, &a, &t));
    BENCH_CHECK(posix_trace_start(t));
    struct timespec period = { 0, PERIOD_NS };
    for (long i = 0; i < n; i++) {
        uint64_t seq = (uint64_t)i;
        t0[i] = rt_ns();
        posix_trace_event(id, &seq, sizeof seq);
        t1[i] = rt_ns();
        nanosleep(&period, NULL);
    }
    BENCH_CHECK(posix_trace_stop(t));
    int source = 0;
    BENCH_CHECK(posixtrace_stream_clock(t, &source, NULL));
    double worst = 0, sum = 0;
    long seen = 0, over = 0, worst_at = -1;
    for (;;) {
        struct posix_trace_event_info ev;
        uint64_t seq;
        size_t len;
        int unavailable = 0;
        BENCH_CHECK(posix_trace_trygetnext_event(t, &ev, &seq, sizeof seq, &len, &unavailable));
        if (unavailable)
            break;
        if (ev.posix_event_id != id || len != sizeof seq || seq >= (uint64_t)n)
            continue;
        uint64_t ts = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u +
                      (uint64_t)ev.posix_timestamp.tv_nsec;
        double off = ts < t0[seq] ? (double)(t0[seq] - ts) : ts > t1[seq] ? (double)(ts - t1[seq]) : 0;
        seen++;
        sum += off;
        over += off > TARGET_NS;
        if (off > worst) {
            worst = off;
            worst_at = (long)seq;
        }
    }
    BENCH_CHECK(posix_trace_shutdown(t));
    printf("%s %ld %ld %.0f %.1f %ld %.1f\n", source == POSIXTRACE_CLOCK_TSC ? "tsc" : "realtime",
           seen, n, worst, seen ? sum / (double)seen : 0.0, over,
           worst_at >= 0 ? (double)worst_at * PERIOD_NS / 1e9 : 0.0);
    return seen == n ? 0 : 1;
}

static pid_t start_child(const char *self, const char *clock, double seconds, int *fd)
{
    char s[48], c[48];
    snprintf(s, sizeof s, "BENCH_CLOCK_CHILD=%.3f", seconds);
    snprintf(c, sizeof c, "POSIXTRACE_CLOCK=%s", clock);
    char *argv[] = { (char *)self, NULL }, *env[] = { s, c, NULL };
    return bench_spawn(argv, env, NULL, fd, NULL, NULL);
}

/* One slew of the system clock by us microseconds; 0 or an errno. */
static int slew(long us)
{
    struct timex tx = { .modes = ADJ_OFFSET_SINGLESHOT, .offset = us };
    return adjtimex(&tx) < 0 ? errno : 0;
}

int main(void)
{
    const char *c = getenv("BENCH_CLOCK_CHILD");
    if (c != NULL)
        return child_main(atof(c));
    char self[4096];
    if (bench_self(self, sizeof self) != 0)
        return 1;
    double seconds = 60.0 * bench_scale();
    const char *sl = getenv("BENCH_CLOCK_SLEW");
    int want_slew = sl != NULL && strcmp(sl, "1") == 0, slews = 0, slew_err = 0;
    static const char *const modes[2] = { "tsc", "realtime" };
    int fd[2];
    pid_t pid[2];
    for (int m = 0; m < 2; m++)
        pid[m] = start_child(self, modes[m], seconds, &fd[m]);
    double start = bench_now();
    long dir = SLEW_US;
    while (want_slew && !slew_err && bench_now() - start < seconds - 8.0) {
        slew_err = slew(dir);
        slews += slew_err == 0;
        dir = -dir;
        sleep(8);
    }
    if (slews % 2 == 1) /* undo the last one, so the clock ends where it began */
        slew(dir);
    printf("event timestamps against clock_gettime(CLOCK_REALTIME) read around each event, "
           "one event per %ld us for %.0f s; clocksource %s; ", PERIOD_NS / 1000, seconds,
           bench_clocksource());
    if (!want_slew)
        printf("clock not slewed (BENCH_CLOCK_SLEW=1 slews it)\n");
    else if (slew_err != 0 && slews == 0)
        printf("slewing refused: %s\n", strerror(slew_err));
    else
        printf("clock slewed %d times by %+ld/%+ld us at 500 ppm\n", slews, SLEW_US, -SLEW_US);
    int failed = 0;
    for (int m = 0; m < 2; m++) {
        char buf[256], used[32] = "";
        int rc = bench_collect(pid[m], fd[m], buf, sizeof buf, NULL);
        long seen = 0, n = 0, over = 0;
        double worst = 0, mean = 0, at = 0;
        if (rc != 0 || sscanf(buf, "%31s %ld %ld %lf %lf %ld %lf", used, &seen, &n, &worst,
                              &mean, &over, &at) != 7) {
            fprintf(stderr, "bench_clock: FAIL: POSIXTRACE_CLOCK=%s: the child failed or lost "
                    "events\n", modes[m]);
            failed = 1;
            continue;
        }
        printf("POSIXTRACE_CLOCK=%-8s (stream clock %-8s) %ld events: outside by at most %.0f ns "
               "(at %.1f s), mean %.1f ns, %ld over 10 us   [target <= 10 us]  %s\n", modes[m],
               used, seen, worst, at, mean, over, worst <= TARGET_NS ? "OK" : "MISSED");
    }
    return failed;
}
