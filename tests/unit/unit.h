/*
 * unit.h - helpers of the unit tests of libtrace's internal parts
 * (tests/unit/t3NN_*.c): checks that count and report, a watchdog, and an
 * in-memory stream layout for the pool and the chunk chain.
 *
 * The programs link libtrace's objects (tests/unit/local.mk: libptcore) and
 * include its internal headers through -I libtrace: each includes them in
 * one place, after this file.
 */
#ifndef POSIXTRACE_UNIT_H
#define POSIXTRACE_UNIT_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ut_checks, ut_failed;

/* A check: counted; a failure is printed ("FAIL file:line: expression") and
 * makes the program exit with 1 at ut_end(), the other checks still run. */
#define UT_CHECK(cond) do { \
    ut_checks++; \
    if (!(cond)) { \
        ut_failed++; \
        printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    } \
} while (0)

/* Two integers equal; both printed when not. */
#define UT_EQ(a, b) do { \
    uint64_t ut_a_ = (uint64_t)(a), ut_b_ = (uint64_t)(b); \
    ut_checks++; \
    if (ut_a_ != ut_b_) { \
        ut_failed++; \
        printf("FAIL %s:%d: %s == %s (0x%" PRIx64 " != 0x%" PRIx64 ")\n", __FILE__, __LINE__, \
               #a, #b, ut_a_, ut_b_); \
    } \
} while (0)

/* Runs one case of the program, by name. */
#define UT_RUN(fn) do { \
    int ut_before_ = ut_failed; \
    fn(); \
    printf("%s %s\n", ut_failed == ut_before_ ? "ok" : "FAILED", #fn); \
    fflush(stdout); \
} while (0)

/* The summary line the pytest file checks; the exit status. */
static inline int ut_end(const char *prog)
{
    printf("%s: %d checks, %d failed\n", prog, ut_checks, ut_failed);
    return ut_failed != 0;
}

/* The whole program is bounded: SIGALRM's default action ends it. */
static inline void ut_watchdog(unsigned sec)
{
    alarm(sec);
}

/* Deterministic pseudo-random numbers (xorshift64*). */
static inline uint64_t ut_rnd(uint64_t *st)
{
    uint64_t x = *st;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *st = x;
    return x * UINT64_C(2685821657736338717);
}

#endif
