/*
 * bench_live: how fast posixtrace-run's live view prints (issue 18,
 * bench/README.md). The program traced is this one, re-executed as
 * "bench_live emit N": N one-byte read()s of /dev/zero, each recorded by
 * the shim as a call event (lines as dd bs=1's). The stream is large
 * (256M) so that nothing is lost and the printer is what is timed. In the
 * same run:
 *   file       posixtrace-run --print-to FILE: lines / wall time of the run,
 *              less the wall time of tracing `true` (stream set-up)
 *   pipe       posixtrace-run's stderr into a pipe this program reads:
 *              lines / (last line's arrival - first line's)
 *   read only  posixtrace-run -c: the same events read and counted, not
 *              formatted (the reader's and the program's share)
 *   formatting the CPU time of the file run less that of -c: lines per
 *              CPU second of the printer alone (not bounded by the program,
 *              nor by other load on the machine)
 *   cat        cat of the same text to a file and into a pipe
 * Target: file and pipe >= 1,000,000 lines/s. Each is the best of 3 runs.
 * POSIXTRACE_BENCH_SCALE multiplies N (2,000,000).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_util.h"

#include <signal.h>
#include <sys/resource.h>

#define RUNS 3
#define TARGET 1e6

static int emit(long n)
{
    int fd = open("/dev/zero", O_RDONLY);
    char c;
    for (long i = 0; i < n; i++)
        if (read(fd, &c, 1) != 1)
            return 1;
    return 0;
}

/* Starts argv with stdin, stdout and stderr on /dev/null but descriptor
 * to (1 or 2) on fd (-1: none; the parent's copy is closed), other_fd closed. */
static pid_t start(char *const argv[], int to, int fd, int other_fd)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (fd >= 0)
            dup2(fd, to);
        if (other_fd >= 0)
            close(other_fd);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (fd >= 0)
        close(fd);
    return pid;
}

/* 0 when pid exited with status 0; *cpu (if not NULL): its CPU seconds
 * (user + system, with the descendants it waited for: the program traced). */
static int finish(pid_t pid, double *cpu)
{
    int st;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid)
        return -1;
    if (cpu != NULL)
        *cpu = bench_rusage_cpu(&ru);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static double timed(char *const argv[], double *cpu)
{
    double t0 = bench_now();
    if (finish(start(argv, 1, -1, -1), cpu) != 0)
        return -1;
    return bench_now() - t0;
}

static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    long n = 0;
    int c;
    if (f == NULL)
        return -1;
    while ((c = getc_unlocked(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Reads a pipe to its end: lines, and the seconds from the first byte's
 * arrival to the last's. */
static long drain_pipe(int fd, double *span)
{
    static char buf[1 << 16];
    long n = 0;
    double first = 0, last = 0;
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0) {
        last = bench_now();
        if (first == 0)
            first = last;
        for (ssize_t i = 0; i < r; i++)
            n += buf[i] == '\n';
    }
    close(fd);
    *span = last - first;
    return n;
}

static double pipe_rate(char *const argv[], int to, long *lines)
{
    int p[2];
    double span = 0;
    if (pipe(p) != 0)
        return -1;
    pid_t pid = start(argv, to, p[1], p[0]);
    *lines = drain_pipe(p[0], &span);
    if (finish(pid, NULL) != 0 || span <= 0)
        return -1;
    return (double)*lines / span;
}

static double best_max(double a, double b)
{
    return a > b ? a : b;
}

static double best_min(double a, double b)
{
    return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

static void clocksource(void)
{
    char cs[64] = "?";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f != NULL) {
        if (fscanf(f, "%63s", cs) != 1)
            strcpy(cs, "?");
        fclose(f);
    }
    printf("bench_live: clocksource %s, %ld CPUs\n", cs, sysconf(_SC_NPROCESSORS_ONLN));
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "emit") == 0)
        return emit(atol(argv[2]));
    char n[32], out[] = "/tmp/bench_live.XXXXXX", copy[64];
    long count = (long)(2000000 * bench_scale());
    snprintf(n, sizeof n, "%ld", count);
    int fd = mkstemp(out);
    if (fd < 0)
        return 1;
    close(fd);
    snprintf(copy, sizeof copy, "%s.cat", out);
    char *self = argv[0], *run_path = POSIXTRACE_RUN_PATH;
    char *to_file[] = { run_path, "--stream-size", "256M", "--print-to", out, "--", self, "emit", n, NULL };
    char *to_pipe[] = { run_path, "--stream-size", "256M", "--", self, "emit", n, NULL };
    char *read_only[] = { run_path, "--stream-size", "256M", "-c", "--", self, "emit", n, NULL };
    char *start_only[] = { run_path, "--stream-size", "256M", "--", "true", NULL };
    char *cat_file[] = { "sh", "-c", "cat \"$0\" >\"$1\"", out, copy, NULL };
    char *cat_pipe[] = { "cat", out, NULL };
    double t_file = -1, t_read = -1, t_start = -1, t_cat = -1, r_pipe = -1, r_cat_pipe = -1;
    double c_file = -1, c_read = -1, c;
    long lines = 0, pipe_lines = 0, cat_lines = 0;
    signal(SIGPIPE, SIG_IGN);
    clocksource();
    for (int i = 0; i < RUNS; i++) {
        t_start = best_min(t_start, timed(start_only, NULL));
        t_file = best_min(t_file, timed(to_file, &c));
        c_file = best_min(c_file, c);
        t_read = best_min(t_read, timed(read_only, &c));
        c_read = best_min(c_read, c);
        r_pipe = best_max(r_pipe, pipe_rate(to_pipe, 2, &pipe_lines));
    }
    lines = count_lines(out);
    for (int i = 0; i < RUNS; i++) {
        t_cat = best_min(t_cat, timed(cat_file, NULL));
        r_cat_pipe = best_max(r_cat_pipe, pipe_rate(cat_pipe, 1, &cat_lines));
    }
    unlink(out);
    unlink(copy);
    if (t_file <= 0 || t_read <= 0 || t_start <= 0 || r_pipe <= 0 || lines < count) {
        fprintf(stderr, "bench_live: a run failed (%ld lines for %ld reads)\n", lines, count);
        return 1;
    }
    double r_file = (double)lines / (t_file - t_start);
    printf("bench_live: %ld read() calls traced, %ld lines (best of %d)\n", count, lines, RUNS);
    printf("  stream set-up (tracing true)   %8.3f s\n", t_start);
    printf("  read only (-c, no formatting)  %8.3f s  %10.0f events/s\n", t_read,
           (double)lines / (t_read - t_start));
    printf("  live view to a file            %8.3f s  %10.0f lines/s  %s\n", t_file, r_file,
           r_file >= TARGET ? "(target >= 1M: met)" : "(target >= 1M: NOT met)");
    printf("  live view into a pipe                     %10.0f lines/s  %s\n", r_pipe,
           r_pipe >= TARGET ? "(target >= 1M: met)" : "(target >= 1M: NOT met)");
    printf("  formatting and writing         %8.3f CPU s %9.0f lines per CPU second\n",
           c_file - c_read, c_file > c_read ? (double)lines / (c_file - c_read) : 0.0);
    printf("  cat of the text to a file      %8.3f s  %10.0f lines/s\n", t_cat,
           (double)lines / t_cat);
    printf("  cat of the text into a pipe               %10.0f lines/s\n", r_cat_pipe);
    return 0;
}
