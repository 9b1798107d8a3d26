/*
 * bench_probe: the cost a run-time probe (posixtrace-run --probe, issue 16)
 * adds to each call of the probed function (bench/README.md). One loop of
 * cos() calls through the PLT, timed in child processes of this program
 * (re-executed as "bench_probe loop N"), all in the same run:
 *   plain      no tracing                                   (the baseline)
 *   idle       LD_AUDIT=libposixtrace-audit.so, the shim, no stream: the
 *              closure and ffi_call alone
 *   probe      under posixtrace-run -c --probe 'libm.so.6:cos(double x)->double':
 *              every call recorded as an event (x, ret, duration) and
 *              read by posixtrace-run (target: <= 150 ns added per call)
 *   ltrace     plain loop under ltrace -e cos (if installed; fewer calls)
 * Each is the best of 5 runs. POSIXTRACE_BENCH_SCALE multiplies the counts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_util.h"

#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int loop(long n)
{
    volatile double x = 0.5, s = 0;
    double t0 = bench_now();
    for (long i = 0; i < n; i++)
        s += cos(x);
    double t = bench_now() - t0;
    printf("%.3f\n", t * 1e9 / (double)n);
    return s < 0;
}

/* One run of argv (ending with "loop N"): the ns per call it prints, or -1. */
static double once(char *const argv[])
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    double v = -1;
    if (f == NULL || fscanf(f, "%lf", &v) != 1)
        v = -1;
    if (f != NULL)
        fclose(f);
    int st = 0;
    if (rc != 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return v;
}

/* The best of `reps` runs; -1 if one failed. */
static double timed(char *const argv[], int reps)
{
    double best = -1;
    for (int r = 0; r < reps; r++) {
        double v = once(argv);
        if (v < 0)
            return -1;
        if (best < 0 || v < best)
            best = v;
    }
    return best;
}

static int have(const char *prog)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    return system(cmd) == 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "loop") == 0)
        return loop(atol(argv[2]));
    char self[4096], n[32], nl[32];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return 1;
    self[len] = '\0';
    snprintf(n, sizeof n, "%ld", (long)(2000000 * bench_scale()));
    snprintf(nl, sizeof nl, "%ld", (long)(2000 * bench_scale()));
    char *plain[] = { self, "loop", n, NULL };
    char *probe[] = { POSIXTRACE_RUN_PATH, "-q", "-c", "--stream-size", "64M", "--probe",
                      "libm.so.6:cos(double x)->double", self, "loop", n, NULL };
    double p = timed(plain, 5), q = timed(probe, 5), i = -1;
    const char *pre = getenv("POSIXTRACE_PRELOAD");
    if (pre != NULL && *pre != '\0') {
        setenv("LD_PRELOAD", pre, 1);
        setenv("LD_AUDIT", POSIXTRACE_AUDIT_LIB, 1);
        setenv("POSIXTRACE_PROBES", "libm.so.6:cos(double x)->double", 1);
        i = timed(plain, 5);
        unsetenv("LD_PRELOAD");
        unsetenv("LD_AUDIT");
    }
    if (p < 0 || q < 0) {
        fprintf(stderr, "bench_probe: a run failed (plain %.1f, probe %.1f)\n", p, q);
        return 1;
    }
    printf("cos() plain                 %8.1f ns/call\n", p);
    if (i > 0)
        printf("cos() probed, no stream     %8.1f ns/call   added %.1f ns (closure + ffi_call)\n", i,
               i - p);
    printf("cos() probed (recorded)     %8.1f ns/call   added %.1f ns (target <= 150)\n", q, q - p);
    if (have("ltrace")) {
        char *lt[] = { "ltrace", "-o", "/dev/null", "-e", "cos", self, "loop", nl, NULL };
        double l = timed(lt, 3);
        if (l > 0)
            printf("cos() under ltrace          %8.1f ns/call   added %.1f ns (%.0fx the probe's)\n", l,
                   l - p, (l - p) / (q - p > 1 ? q - p : 1));
    } else {
        printf("ltrace: not installed, skipped\n");
    }
    return 0;
}
