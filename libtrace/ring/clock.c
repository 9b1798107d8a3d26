/* Choosing and calibrating the recording clock. */
#include "../internal.h"
#include <sched.h>
#include <stdio.h>
#include <string.h>

static int read_first_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char *r = fgets(buf, (int)n, f);
    fclose(f);
    if (!r)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* The "flags" line of /proc/cpuinfo (the first CPU's) into buf, or "". */
static void cpu_flags(char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (strncmp(line, "flags", 5) == 0) {
            snprintf(buf, n, "%s", line);
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    }
    free(line);
    fclose(f);
}

/* Is `word` one of the blank-separated words of `list`? */
static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n) {
        bool starts = p == list || p[-1] == ' ' || p[-1] == '\t' || p[-1] == ':';
        bool ends = p[n] == '\0' || p[n] == ' ' || p[n] == '\t' || p[n] == '\n';
        if (starts && ends)
            return true;
    }
    return false;
}

uint32_t pt_clock_choose(const struct pt_clock_facts *f, const char **why)
{
    const char *env = f->env != NULL ? f->env : "";
    if (strcmp(env, "realtime") == 0)
        return *why = "POSIXTRACE_CLOCK=realtime", PT_CLOCK_REALTIME;
    if (!f->have_tsc)
        return *why = "no cycle counter on this architecture", PT_CLOCK_REALTIME;
    if (!has_word(f->cpu_flags, "constant_tsc") || !has_word(f->cpu_flags, "nonstop_tsc"))
        return *why = "the TSC is not invariant (constant_tsc, nonstop_tsc)", PT_CLOCK_REALTIME;
    if (strcmp(f->clocksource, "tsc") == 0)
        return *why = "invariant TSC, the kernel's clocksource", PT_CLOCK_TSC;
    if (strcmp(env, "tsc") == 0)
        return *why = "invariant TSC, POSIXTRACE_CLOCK=tsc", PT_CLOCK_TSC;
    if (!has_word(f->cpu_flags, "tsc_reliable") && !has_word(f->cpu_flags, "tsc_known_freq"))
        return *why = "invariant TSC, but neither tsc_reliable nor tsc_known_freq, and the "
                      "kernel's clocksource is not tsc", PT_CLOCK_REALTIME;
    return *why = "invariant TSC (tsc_reliable or tsc_known_freq), the kernel's clocksource "
                  "being another", PT_CLOCK_TSC;
}

/*
 * Measure TSC ticks per ns against CLOCK_MONOTONIC_RAW over 2 ms, between
 * two pairs (ticks, ns) each read within PT_CAL_TIGHT_TICKS: a stamp is
 * converted from an anchor at most 2^23 ticks before it, so the rate's error
 * e (at most 2 * PT_CAL_TIGHT_TICKS / the ticks of the window) moves it by at
 * most e * 2^23 ticks: 1.1 us at 1 GHz, less the faster the TSC. Where the
 * clock is too slow to read for such pairs (no vDSO), the window grows to
 * 10 ms.
 * Every run of posixtrace-run waits for this (it used to take 10 ms).
 */
#define PT_CAL_TIGHT_TICKS 256u
#define PT_CAL_TRIES 64
#define PT_CAL_NS (2 * 1000 * 1000)
#define PT_CAL_MAX_NS (10 * 1000 * 1000)

static double calibrate(uint64_t *t0, int64_t *m0)
{
    int64_t m1;
    uint64_t w0, w1, t1;
    *t0 = pt_tsc_pair_within(CLOCK_MONOTONIC_RAW, m0, PT_CAL_TIGHT_TICKS, PT_CAL_TRIES, &w0);
    do
        t1 = pt_tsc_pair_within(CLOCK_MONOTONIC_RAW, &m1, PT_CAL_TIGHT_TICKS, PT_CAL_TRIES, &w1);
    while (m1 - *m0 < PT_CAL_NS ||
           (w0 + w1 > 2 * PT_CAL_TIGHT_TICKS && m1 - *m0 < PT_CAL_MAX_NS));
    return (double)(t1 - *t0) / (double)(m1 - *m0);
}

/*
 * A TSC the kernel does not use as its clocksource was not checked by it for
 * agreement between CPUs (with tsc_reliable the kernel skips that check).
 * A thread of ours visits each CPU it may run on and compares the TSC there
 * with what the calibration (t0, m0, tpn), made on another CPU, predicts
 * from CLOCK_MONOTONIC_RAW: the largest difference, in ns, or -1 if it could
 * not look (then the TSC is not trusted).
 */
struct skew_check {
    uint64_t t0;
    int64_t m0;
    double tpn;
    int64_t worst_ns;
};

static void *skew_thread(void *p)
{
    struct skew_check *c = p;
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0)
        return NULL;
    int64_t worst = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &all))
            continue;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0)
            continue; /* not allowed there any more: nothing of ours runs there */
        int64_t m;
        uint64_t t = pt_tsc_pair(CLOCK_MONOTONIC_RAW, &m);
        double want = (double)c->t0 + (double)(m - c->m0) * c->tpn;
        double d = ((double)t - want) / c->tpn;
        int64_t dn = (int64_t)(d < 0 ? -d : d);
        if (dn > worst)
            worst = dn;
    }
    c->worst_ns = worst;
    return NULL;
}

static int64_t tsc_skew_ns(uint64_t t0, int64_t m0, double tpn)
{
    struct skew_check c = { t0, m0, tpn, -1 };
    pthread_t th;
    if (pthread_create(&th, NULL, skew_thread, &c) != 0)
        return -1;
    pthread_join(th, NULL);
    return c.worst_ns;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static uint32_t mode;
static double tpn = 1.0;
static const char *mode_why = "";
static char skew_why[96];

static void init_clock(void)
{
    struct pt_clock_facts f = { PT_HAVE_TSC, getenv("POSIXTRACE_CLOCK"), "", "" };
    char cs[64] = "", flags[4096];
    if (read_first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                        cs, sizeof cs) != 0)
        cs[0] = '\0';
    cpu_flags(flags, sizeof flags);
    f.clocksource = cs;
    f.cpu_flags = flags;
    mode = pt_clock_choose(&f, &mode_why);
    if (mode != PT_CLOCK_TSC)
        return;
    uint64_t t0;
    int64_t m0;
    tpn = calibrate(&t0, &m0);
    const char *env = getenv("POSIXTRACE_CLOCK");
    if (strcmp(cs, "tsc") == 0 && !(env != NULL && strcmp(env, "tsc") == 0))
        return; /* the kernel keeps it in agreement between CPUs */
    int64_t skew = tsc_skew_ns(t0, m0, tpn);
    if (skew < 0 || skew > PT_TSC_SKEW_MAX_NS) {
        snprintf(skew_why, sizeof skew_why, skew < 0 ? "the TSC could not be compared between CPUs"
                 : "the TSC differs between CPUs by %lld ns", (long long)skew);
        mode_why = skew_why;
        mode = PT_CLOCK_REALTIME;
        tpn = 1.0;
    }
}

uint32_t pt_clock_mode(void)
{
    pthread_once(&once, init_clock);
    return mode;
}

double pt_clock_ticks_per_ns(void)
{
    pthread_once(&once, init_clock);
    return tpn;
}

const char *pt_clock_why(void)
{
    pthread_once(&once, init_clock);
    return mode_why;
}

/* The call clock (<posixtrace/record.h>, posixtrace_call_begin): adopted
 * from the first stream the process attaches, so that a call's start and the
 * event's timestamp usually come from the same counter. Under pt_att_lock. */
_Atomic uint32_t pt_call_mode;
double pt_call_ns_per_tick = 1.0;

void pt_call_clock_adopt(uint32_t clock_mode, double ticks_per_ns)
{
    if (atomic_load(&pt_call_mode) != 0)
        return;
    if (clock_mode == PT_CLOCK_TSC) {
        if (!(ticks_per_ns > 0.01 && ticks_per_ns < 100.0)) /* untrusted memory */
            return;
        pt_call_ns_per_tick = 1.0 / ticks_per_ns;
    } else if (clock_mode != PT_CLOCK_REALTIME) {
        return;
    }
    atomic_store_explicit(&pt_call_mode, clock_mode, memory_order_release);
}
