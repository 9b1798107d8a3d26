/*
 * What the bench programs share: the scale of their loop counts
 * (POSIXTRACE_BENCH_SCALE), a monotonic clock, and a check of calls that
 * return an error number. Header only: each program is one file.
 */
#ifndef PT_BENCH_UTIL_H
#define PT_BENCH_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

#endif
