/* Choosing and calibrating the recording clock. */
#include "internal.h"
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

static int cpu_has_flags(const char *a, const char *b)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return 0;
    char line[4096];
    int ok = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) == 0) {
            ok = strstr(line, a) != NULL && strstr(line, b) != NULL;
            break;
        }
    }
    fclose(f);
    return ok;
}

static uint32_t detect_mode(void)
{
    char cs[64];
    if (!PT_HAVE_TSC)
        return PT_CLOCK_REALTIME;
    if (getenv("POSIXTRACE_CLOCK") && strcmp(getenv("POSIXTRACE_CLOCK"), "realtime") == 0)
        return PT_CLOCK_REALTIME;
    if (read_first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                        cs, sizeof cs) != 0 || strcmp(cs, "tsc") != 0)
        return PT_CLOCK_REALTIME;
    if (!cpu_has_flags(" constant_tsc", " nonstop_tsc"))
        return PT_CLOCK_REALTIME;
    return PT_CLOCK_TSC;
}

/* Measure TSC ticks per ns against CLOCK_MONOTONIC_RAW over ~10 ms (both ends
 * tight pairs: a preemption at either end would skew the rate). */
static double calibrate(void)
{
    int64_t m0, m1;
    uint64_t t0 = pt_tsc_pair(CLOCK_MONOTONIC_RAW, &m0), t1;
    do
        t1 = pt_tsc_pair(CLOCK_MONOTONIC_RAW, &m1);
    while (m1 - m0 < 10 * 1000 * 1000);
    return (double)(t1 - t0) / (double)(m1 - m0);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static uint32_t mode;
static double tpn = 1.0;

static void init_clock(void)
{
    mode = detect_mode();
    if (mode == PT_CLOCK_TSC)
        tpn = calibrate();
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
