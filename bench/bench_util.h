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

/* Runs the program `self` in a child, with the entries of env[] ("NAME=value",
 * NULL-terminated) put in its environment, under the command prefix pre[]
 * (NULL: none; at most 12 words), after setup() (NULL: none) in the child;
 * its stdout is read, its stderr goes to /dev/null. Returns the number it
 * prints, or -1 if it failed. */
static inline double bench_child(const char *self, char *const env[], char *const pre[],
                                 void (*setup)(void))
{
    int p[2];
    if (pipe(p) != 0)
        exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; env[i] != NULL; i++)
            putenv(env[i]);
        if (setup != NULL)
            setup();
        dup2(p[1], 1);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        char *argv[16];
        int k = 0;
        for (; pre != NULL && pre[k] != NULL && k < 12; k++)
            argv[k] = pre[k];
        argv[k++] = (char *)self;
        argv[k] = NULL;
        execvp(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    char buf[64] = "";
    ssize_t r = read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    if (r <= 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return strtod(buf, NULL);
}

/* This program's path (to re-execute it) and the shim's in the build tree
 * ($POSIXTRACE_BUILDDIR, else .); -1 with a message if either is missing. */
static inline int bench_paths(char *self, size_t nself, char *shim, size_t nshim)
{
    ssize_t l = readlink("/proc/self/exe", self, nself - 1);
    if (l <= 0)
        return -1;
    self[l] = '\0';
    const char *bd = getenv("POSIXTRACE_BUILDDIR");
    snprintf(shim, nshim, "%s/preload/.libs/libposixtrace-preload.so", bd ? bd : ".");
    if (access(shim, R_OK) != 0) {
        fprintf(stderr, "%s: %s not found\n", program_invocation_short_name, shim);
        return -1;
    }
    return 0;
}

#endif
