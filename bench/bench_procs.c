/*
 * bench_procs: what tracing costs a program that starts many processes, as
 * a build or a shell script does (bench/README.md). One dash loop runs
 * /bin/true N times (a fork and an exec each), untraced and under
 * `posixtrace-run -o`, in alternating rounds, best of each: the whole run's
 * wall time and the CPU time of all its processes (wait4), per process
 * started. Informational: issue 17 sets no target for it. Fails if
 * posixtrace-run reports a lost event or fewer than two events a process
 * (each traced /bin/true records at least its start and its exit).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_util.h"

#include <sys/resource.h>

#define ROUNDS 5

struct result {
    double wall; /* s */
    double cpu;  /* s, every process of the run */
};

static const char *run_bin = POSIXTRACE_RUN_BIN;
static char logpath[256], errpath[256], script[128];

/* One run, traced or not; 0, or -1 if it failed. */
static int run_once(int traced, struct result *r)
{
    char lib[4200];
    snprintf(lib, sizeof lib, "LD_LIBRARY_PATH=%s", BENCH_LIBDIR);
    char *env[] = { lib, NULL };
    char *plain[] = { "/bin/sh", "-c", script, NULL };
    char *run[] = { (char *)run_bin, "-o", logpath, "/bin/sh", "-c", script, NULL };
    char buf[64];
    int fd;
    double t0 = bench_now();
    pid_t pid = bench_spawn(traced ? run : plain, env, NULL, &fd, NULL, errpath);
    struct rusage ru;
    int rc = bench_collect(pid, fd, buf, sizeof buf, &ru);
    r->wall = bench_now() - t0;
    r->cpu = bench_rusage_cpu(&ru);
    return rc == 0 && strncmp(buf, "done", 4) == 0 ? 0 : -1;
}

/* posixtrace-run's last line: "N events in LOG, L lost". */
static int check_complete(long n)
{
    long ev, lost;
    bench_run_report(errpath, &ev, &lost);
    return ev >= 2 * n && lost == 0 ? 0 : -1;
}

int main(void)
{
    if (access(run_bin, X_OK) != 0)
        run_bin = POSIXTRACE_RUN_PATH;
    long n = (long)(300 * bench_scale());
    if (n < 10)
        n = 10;
    snprintf(script, sizeof script,
             "i=0; while [ $i -lt %ld ]; do /bin/true; i=$((i+1)); done; echo done", n);
    int me = (int)getpid();
    snprintf(logpath, sizeof logpath, "/dev/shm/posixtrace-bench-procs-%d.ptl", me);
    snprintf(errpath, sizeof errpath, "/dev/shm/posixtrace-bench-procs-%d.err", me);
    struct result best[2] = { { 1e30, 1e30 }, { 1e30, 1e30 } };
    for (int round = 0; round < ROUNDS; round++) {
        for (int traced = 0; traced < 2; traced++) {
            struct result r;
            if (run_once(traced, &r) != 0 || (traced && check_complete(n) != 0)) {
                fprintf(stderr, "bench_procs: FAIL: %s run failed, or events lost or missing "
                        "(see %s)\n", traced ? "the traced" : "the plain", errpath);
                unlink(logpath);
                return 1;
            }
            best[traced].wall = r.wall < best[traced].wall ? r.wall : best[traced].wall;
            best[traced].cpu = r.cpu < best[traced].cpu ? r.cpu : best[traced].cpu;
        }
    }
    unlink(logpath);
    unlink(errpath);
    printf("%ld processes (/bin/true from a dash loop: fork + exec each), best of %d "
           "alternating rounds; clocksource %s\n", n, ROUNDS, bench_clocksource());
    const char *what[2] = { "wall time", "CPU time of all processes" };
    for (int k = 0; k < 2; k++) {
        double p = k == 0 ? best[0].wall : best[0].cpu, t = k == 0 ? best[1].wall : best[1].cpu;
        printf("the whole run, %s:\n", what[k]);
        printf("%-46s %9.1f us per process\n", "  plain [baseline]", p * 1e6 / (double)n);
        printf("%-46s %9.1f us per process (+%.1f, %.2fx)   (informational)\n",
               "  posixtrace-run -o", t * 1e6 / (double)n, (t - p) * 1e6 / (double)n, t / p);
    }
    return 0;
}
