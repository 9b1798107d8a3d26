/*
 * bench_log: the Trace Log option's throughput, against baselines measured in
 * the same run (see bench/README.md).
 *
 *  1. recording back to back into a stream without log (the writer's rate);
 *  2. flush throughput: events drained per second by posix_trace_flush() from
 *     a full stream into a log on tmpfs (the flusher's rate);
 *  3. FLUSH policy, no event lost: one writer paced at a given rate, and one
 *     recording back to back, into a 32 MiB stream with policy FLUSH, log
 *     APPEND on tmpfs; the highest rate of those tried at which the log holds
 *     every event (read back and checked);
 *  4. the same back to back with a LOOP log of 64 MiB, whose pages the kernel
 *     allocates once and then reuses: the flusher alone, without the cost of
 *     new page-cache pages;
 *  5. the baseline for 3: how fast tmpfs takes a file of new pages, against
 *     what the log of a writer at full speed needs;
 *  6. reading a pre-recorded stream: posix_trace_getnext_event() events/s.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <trace.h>

#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_path(void)
{
    static char path[256];
    snprintf(path, sizeof path, "/dev/shm/posixtrace-bench-%d.log", (int)getpid());
    return path;
}

/* at any exit, a failed check's too: a 64 MiB log left in /dev/shm
 * otherwise */
static void remove_log(void)
{
    unlink(log_path());
}

static int open_log(void)
{
    int fd = open(log_path(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror("bench_log: open log");
        exit(1);
    }
    return fd;
}

static void attrs(trace_attr_t *a, size_t stream, int spolicy)
{
    BENCH_CHECK(posix_trace_attr_init(a));
    BENCH_CHECK(posix_trace_attr_setstreamsize(a, stream));
    BENCH_CHECK(posix_trace_attr_setstreamfullpolicy(a, spolicy));
    BENCH_CHECK(posix_trace_attr_setlogfullpolicy(a, POSIX_TRACE_APPEND));
}

#define LOOP_LOG_SIZE ((size_t)64 << 20)

/* Read the log back: count user events, check their sequence (contiguous
 * unless losses are reported; a wrapped LOOP log starts anywhere), sum
 * losses. */
static long last_seq; /* of the last event read back */

static long read_back(long expect, double *secs, uint64_t *lost)
{
    int fd = open(log_path(), O_RDONLY);
    trace_id_t trid;
    BENCH_CHECK(posix_trace_open(fd, &trid));
    struct posix_trace_event_info ev;
    uint64_t buf[8];
    size_t len;
    int unav;
    long n = 0, next = 0;
    *lost = 0;
    double t0 = bench_now();
    for (;;) {
        BENCH_CHECK(posix_trace_getnext_event(trid, &ev, buf, sizeof buf, &len, &unav));
        if (unav)
            break;
        if (ev.posix_event_id == POSIX_TRACE_OVERFLOW)
            *lost += buf[0];
        if (ev.posix_event_id < 256)
            continue;
        if (len != 16 || (long)buf[0] < next || (n > 0 && *lost == 0 && (long)buf[0] != next)) {
            fprintf(stderr, "bench_log: FAIL: event %ld out of order or damaged\n", n);
            exit(1);
        }
        next = (long)buf[0] + 1;
        n++;
    }
    *secs = bench_now() - t0;
    last_seq = next - 1;
    BENCH_CHECK(posix_trace_close(trid));
    close(fd);
    if (expect >= 0 && *lost == 0 && n != expect) {
        fprintf(stderr, "bench_log: FAIL: %ld events in the log, %ld recorded, none reported lost\n",
                n, expect);
        exit(1);
    }
    return n;
}

static double writer_rate(long n)
{
    trace_attr_t a;
    trace_id_t trid;
    trace_event_id_t id;
    attrs(&a, (size_t)n * 64 + (1 << 20), POSIX_TRACE_UNTIL_FULL);
    BENCH_CHECK(posix_trace_create(0, &a, &trid));
    BENCH_CHECK(posix_trace_eventid_open("bench/log", &id));
    BENCH_CHECK(posix_trace_start(trid));
    uint64_t d[2] = { 0, 0 };
    double t0 = bench_now();
    for (long i = 0; i < n; i++) {
        d[0] = (uint64_t)i;
        posix_trace_event(id, d, sizeof d);
    }
    double t = bench_now() - t0;
    BENCH_CHECK(posix_trace_shutdown(trid));
    return (double)n / t;
}

/* 2 and 4: fill a large stream, time one flush, then time reading it back. */
static void flush_and_read(long n, double *flush_rate, double *read_rate)
{
    trace_attr_t a;
    trace_id_t trid;
    trace_event_id_t id;
    int fd = open_log();
    attrs(&a, (size_t)n * 64 + (1 << 20), POSIX_TRACE_UNTIL_FULL);
    BENCH_CHECK(posix_trace_create_withlog(0, &a, fd, &trid));
    BENCH_CHECK(posix_trace_eventid_open("bench/log", &id));
    BENCH_CHECK(posix_trace_start(trid));
    uint64_t d[2] = { 0, 0 };
    for (long i = 0; i < n; i++) {
        d[0] = (uint64_t)i;
        posix_trace_event(id, d, sizeof d);
    }
    double t0 = bench_now();
    BENCH_CHECK(posix_trace_flush(trid));
    *flush_rate = (double)n / (bench_now() - t0);
    BENCH_CHECK(posix_trace_shutdown(trid));
    close(fd);
    double secs;
    uint64_t lost;
    long got = read_back(n, &secs, &lost);
    *read_rate = (double)got / secs;
}

/* 3 and 4: paced writer, FLUSH policy: were all events logged (APPEND), or
 * at least none lost by the stream (LOOP log)? The log's bytes per event in
 * *bpe. */
static int paced(double rate, double seconds, int log_loop, long *recorded, double *bpe)
{
    trace_attr_t a;
    trace_id_t trid;
    trace_event_id_t id;
    int fd = open_log();
    attrs(&a, (size_t)32 << 20, POSIX_TRACE_FLUSH);
    if (log_loop) {
        BENCH_CHECK(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_LOOP));
        BENCH_CHECK(posix_trace_attr_setlogsize(&a, LOOP_LOG_SIZE));
    }
    BENCH_CHECK(posix_trace_create_withlog(0, &a, fd, &trid));
    BENCH_CHECK(posix_trace_eventid_open("bench/log", &id));
    BENCH_CHECK(posix_trace_start(trid));
    uint64_t d[2] = { 0, 0 };
    long n = 0;
    double t0 = bench_now(), t = t0;
    while (t - t0 < seconds) {
        /* at most 256 events between clock reads: a steady rate, not bursts */
        long due = (long)((t - t0) * rate) + 1;
        if (due > n + 256)
            due = n + 256;
        for (; n < due; n++) {
            d[0] = (uint64_t)n;
            posix_trace_event(id, d, sizeof d);
        }
        t = bench_now();
    }
    BENCH_CHECK(posix_trace_shutdown(trid));
    off_t size = lseek(fd, 0, SEEK_END);
    close(fd);
    double secs;
    uint64_t lost;
    long got = read_back(-1, &secs, &lost);
    *recorded = n;
    *bpe = got > 0 ? (double)size / (double)got : 0;
    if (getenv("BENCH_DEBUG"))
        fprintf(stderr, "paced%s: recorded %ld, in log %ld, reported lost %llu\n",
                log_loop ? " (LOOP log)" : "", n, got, (unsigned long long)lost);
    /* a LOOP log keeps the latest events, contiguous, up to the last one */
    return lost == 0 && (got == n || (log_loop && got > 0 && last_seq == n - 1));
}

/* 5: MB/s of writing a new file of `mb` MiB to tmpfs, 1 MiB at a time (what
 * the log on tmpfs costs the kernel, new pages included). */
static double tmpfs_fresh_rate(int mb)
{
    static char block[1 << 20];
    memset(block, 0x5A, sizeof block);
    int fd = open_log();
    double t0 = bench_now();
    for (int i = 0; i < mb; i++) {
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block) {
            perror("bench_log: write");
            exit(1);
        }
    }
    double t = bench_now() - t0;
    close(fd);
    unlink(log_path());
    return mb * 1.048576 / t;
}

int main(void)
{
    atexit(remove_log);
    long n = 4000000;
    double scale = bench_scale();
    if (scale > 0 && scale < 1)
        n = (long)((double)n * scale);
    printf("posixtrace bench_log (same-run baselines; log on /dev/shm, 16-byte events)\n");
    double wr = 0, fr = 0, rr = 0;
    for (int rep = 0; rep < 3; rep++) { /* best of 3 */
        double w = writer_rate(n), f, r;
        flush_and_read(n, &f, &r);
        wr = w > wr ? w : wr;
        fr = f > fr ? f : fr;
        rr = r > rr ? r : rr;
    }
    printf("record back to back, no log [baseline]     %7.1f Mev/s\n", wr / 1e6);
    printf("posix_trace_flush drain rate               %7.1f Mev/s   %.2fx the writer\n",
           fr / 1e6, fr / wr);
    printf("posix_trace_getnext_event, pre-recorded    %7.1f Mev/s   %.2fx the writer\n",
           rr / 1e6, rr / wr);
    /* paced rates, then three runs back to back: the flusher keeps up when
     * none of those loses an event */
    static const double rates[] = { 1e6, 10e6, 20e6, 1e12, 1e12, 1e12 };
    double secs = 0.5 * (scale < 1 ? scale * 2 : 1);
    double best = 0, b2b = 1e30, bpe = 0;
    int kept = 1;
    for (unsigned i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        long rec;
        double b;
        int ok = paced(rates[i], secs, 0, &rec, &b);
        double achieved = (double)rec / secs;
        printf("FLUSH policy, writer %-18s %7.1f Mev/s   %s\n",
               rates[i] > 1e11 ? "back to back:" : "at target rate:", achieved / 1e6,
               ok ? "every event logged" : "events lost (reported in the log)");
        if (ok && achieved > best)
            best = achieved;
        if (rates[i] > 1e11) {
            kept &= ok;
            b2b = achieved < b2b ? achieved : b2b;
            bpe = b;
        }
    }
    printf("FLUSH policy, writer back to back (3 runs): %s; slowest %.1f Mev/s = %.2fx the "
           "writer without log   [target: every event logged]  %s\n",
           kept ? "every event logged" : "events lost", b2b / 1e6, b2b / wr,
           kept ? "OK" : "MISSED");
    printf("FLUSH policy, highest rate with no event lost: %.1f Mev/s = %.2fx the writer "
           "without log\n", best / 1e6, best / wr);
    /* the log's pages allocated once: the flusher against the writer alone */
    int loop_kept = 1;
    double loop_slowest = 1e30;
    for (int i = 0; i < 3; i++) {
        long rec;
        double b;
        int ok = paced(1e12, secs, 1, &rec, &b);
        double achieved = (double)rec / secs;
        printf("FLUSH policy, back to back, LOOP log of 64 MiB: %5.1f Mev/s   %s\n",
               achieved / 1e6, ok ? "no event lost by the stream" : "events lost (reported)");
        loop_kept &= ok;
        loop_slowest = achieved < loop_slowest ? achieved : loop_slowest;
    }
    printf("FLUSH policy, back to back, log pages reused (3 runs): %s; slowest %.1f Mev/s = "
           "%.2fx the writer without log   [target: none lost]  %s\n",
           loop_kept ? "no event lost" : "events lost", loop_slowest / 1e6, loop_slowest / wr,
           loop_kept ? "OK" : "MISSED");
    /* last, so that its freed pages do not serve the runs above */
    double fresh = tmpfs_fresh_rate(scale < 1 ? 256 : 1024);
    double need = loop_slowest * bpe / 1e6;
    printf("tmpfs, writing a file of new pages [baseline]  %7.0f MB/s\n", fresh);
    printf("APPEND log of a writer at %.1f Mev/s (%.1f bytes/event) needs %7.0f MB/s = %.2fx "
           "what new tmpfs pages took\n", loop_slowest / 1e6, bpe, need, need / fresh);
    unlink(log_path());
    return 0;
}
