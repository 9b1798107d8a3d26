/*
 * What the bench programs share: the scale of their loop counts
 * (POSIXTRACE_BENCH_SCALE), a monotonic clock, and a check of calls that
 * return an error number. Header only: each program is one file.
 */
#ifndef PT_BENCH_UTIL_H
#define PT_BENCH_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* POSIXTRACE_BENCH_SCALE, 1.0 when unset or not a positive number. */
static inline double bench_scale(void)
{
    const char *s = getenv("POSIXTRACE_BENCH_SCALE");
    double k = s != NULL && *s ? strtod(s, NULL) : 1.0;
    return k > 0.0 ? k : 1.0;
}

/* CLOCK_MONOTONIC in seconds. */
static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The kernel's clocksource ("tsc", "kvm-clock", ...), for the reports. */
static inline const char *bench_clocksource(void)
{
    static char cs[64] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f != NULL) {
        if (fgets(cs, sizeof cs, f) != NULL)
            cs[strcspn(cs, "\n")] = '\0';
        fclose(f);
    }
    return cs[0] != '\0' ? cs : "unknown";
}

/* The call returns 0 or an error number; an error ends the program. */
#define BENCH_CHECK(call)                                                            \
    do {                                                                             \
        int rc_ = (call);                                                            \
        if (rc_ != 0) {                                                              \
            fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, #call,    \
                    strerror(rc_));                                                  \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

/* Starts argv[0] (looked up in PATH) in a child, after putting env[]
 * ("NAME=value" entries, NULL-terminated; NULL: none) in its environment
 * and running setup() (NULL: none) there. Its stdout goes into a pipe whose
 * read end is *out; its stdin comes from a pipe whose write end is *in (in
 * NULL: inherited); its stderr goes to the file errpath (NULL: inherited).
 * Returns its pid; a pipe or fork that fails ends the program. */
static inline pid_t bench_spawn(char *const argv[], char *const env[], void (*setup)(void),
                                int *out, int *in, const char *errpath)
{
    int o[2], i[2] = { -1, -1 };
    if (pipe(o) != 0 || (in != NULL && pipe(i) != 0))
        exit(1);
    pid_t pid = fork();
    if (pid < 0)
        exit(1);
    if (pid == 0) {
        for (int k = 0; env != NULL && env[k] != NULL; k++)
            putenv(env[k]);
        if (setup != NULL)
            setup();
        dup2(o[1], 1);
        close(o[0]);
        if (in != NULL) {
            dup2(i[0], 0);
            close(i[1]);
        }
        if (errpath != NULL)
            dup2(open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600), 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(o[1]);
    *out = o[0];
    if (in != NULL) {
        close(i[0]);
        *in = i[1];
    }
    return pid;
}

/* The CPU time, user and system, of a wait4 rusage, in seconds. */
static inline double bench_rusage_cpu(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
           (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

/* Reads what the child pid prints on fd (up to n - 1 bytes, NUL-terminated),
 * closes fd and waits for the child (its resource usage in *ru if not
 * NULL): 0 if it printed something and exited with status 0, else -1. */
static inline int bench_collect(pid_t pid, int fd, char *buf, size_t n, struct rusage *ru)
{
    size_t got = 0;
    ssize_t r;
    while (got + 1 < n && (r = read(fd, buf + got, n - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
    close(fd);
    int st;
    if (wait4(pid, &st, 0, ru) != pid)
        return -1;
    return got > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* One line from fd into buf (NUL-terminated, without its newline): 0, or
 * -1 if nothing came before the end of the file. */
static inline int bench_read_line(int fd, char *buf, size_t n)
{
    size_t k = 0;
    while (k + 1 < n && read(fd, buf + k, 1) == 1 && buf[k] != '\n')
        k++;
    buf[k] = '\0';
    return k > 0 ? 0 : -1;
}

/* Runs the program `self` in a child, with the entries of env[] ("NAME=value",
 * NULL-terminated) put in its environment, under the command prefix pre[]
 * (NULL: none; at most 12 words), after setup() (NULL: none) in the child;
 * its stdout is read, its stderr goes to /dev/null. Returns the number it
 * prints, or -1 if it failed. */
static inline double bench_child(const char *self, char *const env[], char *const pre[],
                                 void (*setup)(void))
{
    char *argv[16];
    int k = 0;
    for (; pre != NULL && pre[k] != NULL && k < 12; k++)
        argv[k] = pre[k];
    argv[k++] = (char *)self;
    argv[k] = NULL;
    int fd;
    pid_t pid = bench_spawn(argv, env, setup, &fd, NULL, "/dev/null");
    char buf[64];
    return bench_collect(pid, fd, buf, sizeof buf, NULL) == 0 ? strtod(buf, NULL) : -1;
}

/* posixtrace-run's report, its last line in errpath ("posixtrace-run: N
 * events in LOG, L lost"): *ev and *lost, -1 each when it is not there. */
static inline void bench_run_report(const char *errpath, long *ev, long *lost)
{
    FILE *f = fopen(errpath, "r");
    char line[512];
    *ev = *lost = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "posixtrace-run: ", 16) == 0)
            sscanf(line + 16, "%ld events in %*s %ld lost", ev, lost);
    if (f != NULL)
        fclose(f);
}

/* This program's path, to run it again: 0, or -1. */
static inline int bench_self(char *self, size_t n)
{
    ssize_t l = readlink("/proc/self/exe", self, n - 1);
    if (l <= 0)
        return -1;
    self[l] = '\0';
    return 0;
}

/* This program's path (to re-execute it) and the shim's in the build tree
 * ($POSIXTRACE_BUILDDIR, else .); -1 with a message if either is missing. */
static inline int bench_paths(char *self, size_t nself, char *shim, size_t nshim)
{
    if (bench_self(self, nself) != 0)
        return -1;
    const char *bd = getenv("POSIXTRACE_BUILDDIR");
    snprintf(shim, nshim, "%s/preload/.libs/libposixtrace-preload.so", bd ? bd : ".");
    if (access(shim, R_OK) != 0) {
        fprintf(stderr, "%s: %s not found\n", program_invocation_short_name, shim);
        return -1;
    }
    return 0;
}

#endif
