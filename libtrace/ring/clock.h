/* Timestamps: raw ticks on the recording path, CLOCK_REALTIME at read time. */
#ifndef PT_CLOCK_H
#define PT_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Ticks elapsed before a new anchor (tick, CLOCK_REALTIME) pair is recorded. */
#define PT_ANCHOR_TICKS (UINT64_C(1) << 23)

/* What the choice of the tick source looks at (clock.c gathers it from the
 * environment, /sys and /proc/cpuinfo). */
struct pt_clock_facts {
    int have_tsc;           /* the architecture has a cycle counter we read */
    const char *env;        /* POSIXTRACE_CLOCK: "realtime", "tsc", or NULL */
    const char *clocksource; /* the kernel's current clocksource, "" if unknown */
    const char *cpu_flags;  /* the "flags" line of /proc/cpuinfo, "" if unknown */
};
/* PT_CLOCK_TSC where the TSC is invariant (constant_tsc and nonstop_tsc) and
 * either the kernel uses it as its clocksource, or the CPU says it is
 * reliable (tsc_reliable or tsc_known_freq: virtual machines, whose kernel
 * often prefers kvm-clock), or POSIXTRACE_CLOCK=tsc asks for it; else
 * PT_CLOCK_REALTIME. POSIXTRACE_CLOCK=realtime always wins. *why: the reason,
 * in words (static). doc/semantics.md "Timestamps". */
uint32_t pt_clock_choose(const struct pt_clock_facts *f, const char **why);
/* A TSC that the kernel does not use is also compared between CPUs before it
 * is trusted: further apart than this, CLOCK_REALTIME is used. */
#define PT_TSC_SKEW_MAX_NS 2000
/* This process's choice for the streams it creates (pt_clock_choose, then the
 * comparison between CPUs), made once. */
uint32_t pt_clock_mode(void);
/* TSC ticks per nanosecond, measured once per process (PT_CLOCK_TSC only). */
double pt_clock_ticks_per_ns(void);
/* Why pt_clock_mode() chose what it did, in words. */
const char *pt_clock_why(void);

static inline int64_t pt_ts_ns(const struct timespec *t)
{
    return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static inline int64_t pt_realtime_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return pt_ts_ns(&t);
}

static inline int64_t pt_monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return pt_ts_ns(&t);
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t pt_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
/* Ordered against earlier loads: for the reader's "now". */
static inline uint64_t pt_rdtsc_ordered(void)
{
    __asm__ __volatile__("lfence" ::: "memory");
    return pt_rdtsc();
}
#define PT_HAVE_TSC 1
#else
static inline uint64_t pt_rdtsc(void) { return 0; }
static inline uint64_t pt_rdtsc_ordered(void) { return 0; }
#define PT_HAVE_TSC 0
#endif

/*
 * A tick count and a reading of clock clk taken at the same instant: the clock
 * is read between two ordered TSC reads and paired with their midpoint. A read
 * interrupted or preempted between the two would be off by up to the whole
 * interruption (tens of microseconds on a loaded machine), so the tightest of
 * up to PT_PAIR_TRIES tries is kept, stopping at one within
 * PT_PAIR_TIGHT_TICKS (about a microsecond). Used for anchors and the
 * stream's (tick0, real0_ns); the calibration of the tick rate asks for
 * tighter pairs (pt_tsc_pair_within, the width of the pair in *width).
 */
#define PT_PAIR_TIGHT_TICKS 2048u
#define PT_PAIR_TRIES 8
static inline uint64_t pt_tsc_pair_within(clockid_t clk, int64_t *ns, uint64_t tight, int tries,
                                          uint64_t *width)
{
    uint64_t best = UINT64_MAX, ticks = 0;
    *ns = 0;
    for (int i = 0; i < tries && best > tight; i++) {
        struct timespec t;
        uint64_t t1 = pt_rdtsc_ordered();
        clock_gettime(clk, &t);
        uint64_t t2 = pt_rdtsc_ordered();
        if (t2 - t1 < best) {
            best = t2 - t1;
            ticks = t1 + (t2 - t1) / 2;
            *ns = pt_ts_ns(&t);
        }
    }
    *width = best;
    return ticks;
}

static inline uint64_t pt_tsc_pair(clockid_t clk, int64_t *ns)
{
    uint64_t width;
    return pt_tsc_pair_within(clk, ns, PT_PAIR_TIGHT_TICKS, PT_PAIR_TRIES, &width);
}

/* Current ticks in the given mode. */
static inline uint64_t pt_ticks(uint32_t mode)
{
    return mode == 1 /* PT_CLOCK_TSC */ ? pt_rdtsc() : (uint64_t)pt_realtime_ns();
}

/* CLOCK_REALTIME ns of a stamp `ticks` after an anchor (anchor_ns) at the
 * rate tpn (> 0), saturated at the int64 range: stamps and anchors read
 * from a damaged log or a stream another process wrote can be anything. */
static inline int64_t pt_ns_after(int64_t anchor_ns, int64_t ticks, double tpn)
{
    double d = (double)ticks / tpn;
    int64_t dn = d >= 0x1p63 ? INT64_MAX : d <= -0x1p63 ? INT64_MIN : (int64_t)d, r;
    if (__builtin_add_overflow(anchor_ns, dn, &r))
        return dn > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static inline void pt_ns_to_ts(int64_t ns, struct timespec *t)
{
    t->tv_sec = (time_t)(ns / 1000000000);
    t->tv_nsec = (long)(ns % 1000000000);
    if (t->tv_nsec < 0) {
        t->tv_nsec += 1000000000;
        t->tv_sec -= 1;
    }
}

#endif
