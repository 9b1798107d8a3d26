/*
 * t303_clock: the choice of a stream's clock (libtrace/ring/clock.c,
 * pt_clock_choose) from the facts it is given, for the machines the rule
 * names (doc/semantics.md "Timestamps"): the kernel's clocksource tsc or
 * kvm-clock, the CPU flags of an invariant and a reliable TSC, and
 * POSIXTRACE_CLOCK. Prints one line per case and a summary; exits 1 if a
 * check failed.
 */
#include "unit.h"

#include "internal.h" /* libtrace's (-I libtrace: tests/unit/local.mk) */

#define INV " constant_tsc nonstop_tsc "
enum { TSC = PT_CLOCK_TSC, RT = PT_CLOCK_REALTIME };

static uint32_t choose(int have, const char *env, const char *cs, const char *flags,
                       const char **why)
{
    struct pt_clock_facts f = { have, env, cs, flags };
    return pt_clock_choose(&f, why);
}

/* The kernel's own TSC: taken, whatever the reliability flags. */
static void kernel_tsc(void)
{
    const char *why;
    UT_EQ(choose(1, NULL, "tsc", "flags : fpu tsc" INV "rdtscp", &why), TSC);
    UT_CHECK(strstr(why, "kernel's clocksource") != NULL);
    UT_EQ(choose(1, "", "tsc", "flags : tsc" INV, &why), TSC);
}

/* kvm-clock with an invariant TSC the CPU calls reliable or of known
 * frequency: taken (the case of issue 17's machines). */
static void kvm_clock_reliable(void)
{
    const char *why;
    UT_EQ(choose(1, NULL, "kvm-clock", "flags : tsc" INV "tsc_known_freq tsc_reliable", &why), TSC);
    UT_EQ(choose(1, NULL, "kvm-clock", "flags : tsc" INV "tsc_known_freq", &why), TSC);
    UT_EQ(choose(1, NULL, "kvm-clock", "flags : tsc" INV "tsc_reliable", &why), TSC);
    UT_CHECK(strstr(why, "tsc_reliable or tsc_known_freq") != NULL);
}

/* Not invariant, or not said reliable on another clocksource: CLOCK_REALTIME. */
static void refused(void)
{
    const char *why;
    UT_EQ(choose(1, NULL, "kvm-clock", "flags : tsc" INV, &why), RT);
    UT_EQ(choose(1, NULL, "tsc", "flags : tsc constant_tsc tsc_reliable", &why), RT);
    UT_CHECK(strstr(why, "not invariant") != NULL);
    UT_EQ(choose(1, NULL, "hpet", "flags : tsc nonstop_tsc tsc_known_freq", &why), RT);
    UT_EQ(choose(0, NULL, "tsc", "flags : tsc" INV, &why), RT);
    UT_EQ(choose(1, NULL, "", "", &why), RT);
    /* words, not substrings: "constant_tsc_x" is not constant_tsc */
    UT_EQ(choose(1, NULL, "tsc", "flags : constant_tsc_x nonstop_tsc", &why), RT);
    UT_EQ(choose(1, NULL, "tsc", "flags : xconstant_tsc nonstop_tsc", &why), RT);
}

/* POSIXTRACE_CLOCK: realtime always wins; tsc where it is invariant. */
static void environment(void)
{
    const char *why;
    UT_EQ(choose(1, "realtime", "tsc", "flags : tsc" INV "tsc_reliable", &why), RT);
    UT_CHECK(strcmp(why, "POSIXTRACE_CLOCK=realtime") == 0);
    UT_EQ(choose(1, "tsc", "kvm-clock", "flags : tsc" INV, &why), TSC);
    UT_EQ(choose(1, "tsc", "kvm-clock", "flags : tsc constant_tsc", &why), RT);
    UT_EQ(choose(1, "other", "kvm-clock", "flags : tsc" INV, &why), RT);
}

int main(void)
{
    ut_watchdog(60);
    UT_RUN(kernel_tsc);
    UT_RUN(kvm_clock_reliable);
    UT_RUN(refused);
    UT_RUN(environment);
    return ut_end("t303_clock");
}
