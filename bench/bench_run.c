/*
 * bench_run: a program traced by `posixtrace-run -o`, as a user runs it
 * (bench/README.md). One loop, open("/dev/null") + write(16 bytes) + close,
 * run in the same run (alternating rounds, best of each kind):
 *   plain      untraced                                   (the baseline)
 *   minishim   LD_PRELOAD of bench/minishim.c: each call into a memfd ring,
 *              spilled to a file (the least a shim can do)
 *   run -o     posixtrace-run -o LOG, default options
 * For each: the loop process's own CPU time during its loop
 * (CLOCK_PROCESS_CPUTIME_ID around the loop: the cost the shim adds to each
 * call; its start-up, before the loop, apart), the whole run's wall time and the CPU time of
 * every process of the run (wait4: the controller, its reader and flusher
 * threads, the program). Targets: the traced process's CPU at most 100 ns
 * more per call than plain; the whole run's wall time at most 1.5 times
 * the minishim's. Fails if posixtrace-run reports a lost event or
 * logs fewer than the calls made, or the minishim's file lacks records.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_util.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>

#define ROUNDS 5
#define TARGET_CALL_NS 100.0
#define TARGET_WHOLE_RATIO 1.5

static double tv_s(struct timeval t)
{
    return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The loop, in the measured process: prints its own CPU ns per call during
 * the loop, the loop's wall time, and the CPU ns it took before the loop
 * (start-up: the loader, the shim's and the library's initialisation). */
static int loop_main(long n)
{
    static const char data[16] = "0123456789abcdef";
    double c0 = cpu_now(), t0 = bench_now();
    for (long i = 0; i < n; i++) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd < 0 || write(fd, data, sizeof data) != (ssize_t)sizeof data)
            return 1;
        close(fd);
    }
    double t1 = bench_now(), c1 = cpu_now();
    printf("%.3f %.6f %.0f\n", (c1 - c0) / (3.0 * (double)n), t1 - t0, c0);
    return 0;
}

struct result {
    double cpu;   /* the loop process's CPU, ns per call */
    double wall;  /* the whole run, s */
    double all;   /* CPU of every process of the run, s */
    double loop;  /* the loop's own wall time, s */
    double start; /* the loop process's CPU before its loop, ns */
};

enum kind { PLAIN, MINI, RUN, NKINDS };
static const char *const kind_name[NKINDS] = { "plain", "minishim", "posixtrace-run -o" };
static const char *const kind_label[NKINDS] = { "  plain", "  minishim", "  posixtrace-run -o" };
static char self[4096], logpath[256], minipath[256], errpath[256];
static const char *run_bin = POSIXTRACE_RUN_BIN;
static char stream_opt[64];

/* Runs one kind; its stderr goes to errpath. 0, or -1 if it failed. */
static int run_kind(enum kind k, long n, struct result *r)
{
    char nb[48], buf[64], lib[4200], pre[4200], out[4200];
    snprintf(nb, sizeof nb, "BENCH_RUN_N=%ld", n);
    /* the binary libtool's wrapper script runs, as if installed: the
     * wrapper's shell and seds would add ~70 ms to every run */
    snprintf(lib, sizeof lib, "LD_LIBRARY_PATH=%s", BENCH_LIBDIR);
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", BENCH_MINISHIM);
    snprintf(out, sizeof out, "MINISHIM_OUT=%s", minipath);
    char *env[] = { nb, lib, out, k == MINI ? pre : NULL, NULL };
    char *plain[] = { self, NULL };
    char *traced[] = { (char *)run_bin, stream_opt, "-o", logpath, self, NULL };
    double t0 = bench_now();
    int fd;
    pid_t pid = bench_spawn(k == RUN ? traced : plain, env, NULL, &fd, NULL, errpath);
    struct rusage ru;
    int rc = bench_collect(pid, fd, buf, sizeof buf, &ru);
    r->wall = bench_now() - t0;
    r->all = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
    r->cpu = r->loop = r->start = -1;
    if (rc == 0 && sscanf(buf, "%lf %lf %lf", &r->cpu, &r->loop, &r->start) != 3)
        rc = -1;
    return rc;
}

/* Every call made is in the trace, nothing lost: posixtrace-run's last
 * line "N events in LOG, L lost", the minishim's 64-byte records. */
static int check_complete(enum kind k, long n)
{
    struct stat sb;
    if (k == MINI)
        return stat(minipath, &sb) == 0 && sb.st_size / 64 >= 3 * n ? 0 : -1;
    if (k != RUN)
        return 0;
    long ev, lost;
    bench_run_report(errpath, &ev, &lost);
    return ev >= 3 * n && lost == 0 ? 0 : -1;
}

static void print_added(const char *what, double v, double base, double unit)
{
    printf("%-46s %9.1f ns per call (+%.1f, %.2fx)\n", what, v / unit, (v - base) / unit,
           v / base);
}

int main(void)
{
    const char *nenv = getenv("BENCH_RUN_N");
    if (nenv != NULL)
        return loop_main(atol(nenv));
    if (bench_self(self, sizeof self) != 0)
        return 1;
    const char *ss = getenv("BENCH_RUN_STREAM_SIZE");
    snprintf(stream_opt, sizeof stream_opt, "--stream-size=%s", ss != NULL ? ss : "16M");
    if (access(run_bin, X_OK) != 0)
        run_bin = POSIXTRACE_RUN_PATH;
    long n = (long)(200000 * bench_scale());
    if (n < 100)
        n = 100;
    int me = (int)getpid();
    snprintf(logpath, sizeof logpath, "/dev/shm/posixtrace-bench-run-%d.ptl", me);
    snprintf(minipath, sizeof minipath, "/dev/shm/posixtrace-bench-run-%d.mini", me);
    snprintf(errpath, sizeof errpath, "/dev/shm/posixtrace-bench-run-%d.err", me);
    struct result best[NKINDS];
    for (int k = 0; k < NKINDS; k++)
        best[k] = (struct result){ 1e30, 1e30, 1e30, 1e30, 1e30 };
    long logbytes = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < NKINDS; k++) {
            struct result r;
            if (run_kind((enum kind)k, n, &r) != 0 || check_complete((enum kind)k, n) != 0) {
                fprintf(stderr, "bench_run: FAIL: %s: failed, or calls missing from its "
                        "trace (see %s)\n", kind_name[k], errpath);
                unlink(logpath);
                unlink(minipath);
                return 1;
            }
            best[k].cpu = r.cpu < best[k].cpu ? r.cpu : best[k].cpu;
            best[k].wall = r.wall < best[k].wall ? r.wall : best[k].wall;
            best[k].all = r.all < best[k].all ? r.all : best[k].all;
            best[k].loop = r.loop < best[k].loop ? r.loop : best[k].loop;
            best[k].start = r.start < best[k].start ? r.start : best[k].start;
        }
        struct stat sb;
        if (stat(logpath, &sb) == 0)
            logbytes = (long)sb.st_size;
    }
    unlink(logpath);
    unlink(minipath);
    unlink(errpath);
    double calls = 3.0 * (double)n;
    printf("%ld iterations of open(/dev/null)+write(16 B)+close, best of %d alternating "
           "rounds; clocksource %s\n", n, ROUNDS, bench_clocksource());
    printf("the loop process's own CPU time during its loop (CLOCK_PROCESS_CPUTIME_ID):\n");
    printf("%-46s %9.1f ns per call\n", "  plain [baseline]", best[PLAIN].cpu);
    print_added("  minishim", best[MINI].cpu, best[PLAIN].cpu, 1);
    double add = best[RUN].cpu - best[PLAIN].cpu;
    printf("%-46s %9.1f ns per call (+%.1f, %.2fx)   [target <= +%.0f ns]  %s\n",
           "  posixtrace-run -o", best[RUN].cpu, add, best[RUN].cpu / best[PLAIN].cpu,
           TARGET_CALL_NS, add <= TARGET_CALL_NS ? "OK" : "MISSED");
    printf("the loop process's CPU time before its loop (start-up: loader, shim, library):\n");
    for (int k = 0; k < NKINDS; k++)
        printf("%-46s %9.2f ms%s\n", k == PLAIN ? "  plain [baseline]" : kind_label[k],
               best[k].start / 1e6, k == PLAIN ? "" : "   (informational)");
    printf("the whole run, wall time:\n");
    for (int k = 0; k < NKINDS; k++)
        print_added(k == PLAIN ? "  plain [baseline]" : kind_label[k], best[k].wall * 1e9,
                    best[PLAIN].wall * 1e9, calls);
    double wmini = best[MINI].wall - best[PLAIN].wall, wrun = best[RUN].wall - best[PLAIN].wall;
    double ratio = best[RUN].wall / best[MINI].wall;
    printf("%-46s %9.2fx the minishim's whole run   [target <= %.2fx]  %s   (added time: %.1fx "
           "the minishim's)\n", "  posixtrace-run -o", ratio, TARGET_WHOLE_RATIO,
           ratio <= TARGET_WHOLE_RATIO ? "OK" : "MISSED", wrun / wmini);
    printf("the whole run, wall time outside the loop (start-up, exit, reading the log back):\n");
    for (int k = 0; k < NKINDS; k++)
        print_added(k == PLAIN ? "  plain [baseline]" : kind_label[k],
                    (best[k].wall - best[k].loop) * 1e9, (best[PLAIN].wall - best[PLAIN].loop) * 1e9,
                    calls);
    printf("the whole run, CPU time of all its processes:\n");
    for (int k = 0; k < NKINDS; k++)
        print_added(k == PLAIN ? "  plain [baseline]" : kind_label[k], best[k].all * 1e9,
                    best[PLAIN].all * 1e9, calls);
    double cratio = best[RUN].all / best[MINI].all;
    printf("%-46s %9.2fx the minishim's   [target <= %.2fx]  %s   (robust to other load: "
           "no waiting counted)\n", "  posixtrace-run -o", cratio, TARGET_WHOLE_RATIO,
           cratio <= TARGET_WHOLE_RATIO ? "OK" : "MISSED");
    printf("%-46s %9.1f bytes per event (%ld bytes)\n", "log of posixtrace-run -o",
           (double)logbytes / calls, logbytes);
    return 0;
}
