/*
 * t055_xproc_hostile: a target that writes garbage into the stream it records
 * into must not crash or hang its controller (issue 4: "The reader treats the
 * shared ring as untrusted ... a corrupt stream gives an error, never a crash
 * in the controller").
 *
 *   t055_xproc_hostile REGION SEED
 *
 * The controller R (a child of this process, M) creates a stream named
 * "xphostile" (LOOP, 1 MiB) for the target T and starts it; T records 1000
 * events, then finds the stream's memfd in its own /proc/self/maps and
 * overwrites, with bytes of a PRNG seeded by SEED:
 *   sparse   4000 single bytes anywhere in the mapping
 *   words    2000 aligned 8-byte words anywhere, each 0, all ones, a small
 *            number or a random value (lengths, offsets, indexes)
 *   used     64 bytes in each page in use (a page not all zero: the
 *            header, names, slots and chunks written so far)
 *   all      the whole mapping
 * then records 1000 more events (it may crash or hang doing so: that is its
 * own business).  R reads with timedgetnext for at most 3 s (at most 10^6
 * events), then calls posix_trace_get_status, posix_trace_stop and
 * posix_trace_shutdown.  Prints what R got ("R read ..." and the return
 * codes), "R exit=N" or "R signal=N" (M's view), and whether T survived.
 */
#include "xproc.h"
#include <signal.h>

enum { H_REC = 1, H_CORRUPT, H_EXIT };

static uint64_t g_rng;

static uint64_t rnd(void)
{
    return tc_rnd(&g_rng);
}

/* The stream's writable mappings in this process: [lo, hi) ranges. */
static int find_maps(uintptr_t lo[], uintptr_t hi[], int max)
{
    struct tc_map m[8];
    int n = 0, k = tc_find_maps("posixtrace:xphostile", NULL, m, 8);
    for (int i = 0; i < k && n < max; i++) {
        if (m[i].perms[0] == 'r' && m[i].perms[1] == 'w') {
            lo[n] = m[i].lo;
            hi[n] = m[i].hi;
            n++;
        }
    }
    return n;
}

static const uint64_t words[] = { 0, ~0ULL, 1, 7, 64, 4096, 0x7fffffff, 0x80000000ULL };

static void corrupt(int region, uint64_t seed)
{
    uintptr_t lo[8], hi[8];
    int n = find_maps(lo, hi, 8);
    printf("T mappings=%d\n", n);
    fflush(stdout);
    g_rng = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (int m = 0; m < n; m++) {
        unsigned char *p = (unsigned char *)lo[m];
        size_t size = hi[m] - lo[m];
        switch (region) {
        case 0:
            for (int i = 0; i < 4000; i++)
                p[rnd() % size] = (unsigned char)rnd();
            break;
        case 1:
            for (int i = 0; i < 2000; i++) {
                uint64_t r = rnd();
                uint64_t v = r & 1 ? words[(r >> 1) % 8] : rnd();
                memcpy(p + (rnd() % (size / 8)) * 8, &v, 8);
            }
            break;
        case 2:
            /* 64 random bytes in each page in use (not all zero) */
            for (size_t pg = 0; pg + 4096 <= size; pg += 4096) {
                int used = 0;
                for (size_t i = 0; i < 4096 && !used; i += 8) {
                    uint64_t w;
                    memcpy(&w, p + pg + i, 8);
                    used = w != 0;
                }
                for (int i = 0; used && i < 64; i++)
                    p[pg + rnd() % 4096] = (unsigned char)rnd();
            }
            break;
        default:
            for (size_t i = 0; i < size; i++)
                p[i] = (unsigned char)rnd();
            break;
        }
    }
}

static int hostile_target(struct xp_link *l, void *arg)
{
    (void)arg;
    trace_event_id_t ev = tc_open("xp/ev");
    xp_put(l->out, ev);
    uint64_t seq = 0;
    for (;;) {
        int64_t c = xp_get(l->in, 30000, "a command");
        int64_t a = c >> 8;
        switch ((int)(c & 0xff)) {
        case H_REC:
            for (int64_t i = 0; i < a; i++)
                xp_rec(ev, "xp/ev", "T", 0, seq++);
            break;
        case H_CORRUPT:
            corrupt((int)(a >> 32), (uint64_t)(a & 0xffffffff));
            break;
        case H_EXIT:
            return 0;
        }
        xp_put(l->out, 0);
    }
}

struct r_arg {
    struct xp_proc t;
    int region;
    uint64_t seed;
};

/* a command to T; 1 if it answered within 3 s */
static int tell(const struct xp_proc *t, int cmd, int64_t a)
{
    xp_put(t->to, a << 8 | cmd);
    int64_t v;
    return xp_tryget(t->from, 3000, &v) == 1;
}

static int controller(struct xp_link *l, void *arg)
{
    struct r_arg *r = arg;
    static tc_event e;
    (void)l;
    trace_attr_t a;
    trace_id_t trid;
    xp_attr(&a, 1 << 20, 0, POSIX_TRACE_LOOP, 0);
    CHECK(posix_trace_attr_setname(&a, "xphostile"));
    CHECK(posix_trace_create(r->t.pid, &a, &trid));
    CHECK(posix_trace_start(trid));
    printf("T rec1=%d\n", tell(&r->t, H_REC, 1000));
    printf("T corrupt=%d\n", tell(&r->t, H_CORRUPT, (int64_t)r->region << 32 | (int64_t)r->seed));
    int t_ok = tell(&r->t, H_REC, 1000);
    long n = 0, errs = 0, sys_error = 0, timeouts = 0;
    int64_t deadline = tc_mono_ns() + 3000000000LL;
    while (tc_mono_ns() < deadline && n < 1000000) {
        struct timespec abst = tc_ns_ts(tc_now_ns() + 100000000LL);
        int un = -1;
        int rc = posix_trace_timedgetnext_event(trid, &e.info, e.data, sizeof e.data, &e.len,
                                                &un, &abst);
        if (rc == ETIMEDOUT) {
            timeouts++;
            if (timeouts >= 3)
                break; /* quiet: done */
            continue;
        }
        if (rc != 0) {
            errs++;
            if (errs > 100)
                break;
            continue;
        }
        if (un)
            continue;
        n++;
        if (e.info.posix_event_id == POSIX_TRACE_ERROR && sys_error++ == 0) {
            int err = 0;
            if (e.len == sizeof err)
                memcpy(&err, e.data, sizeof err);
            printf("R first error event=%s\n", tc_errname(err));
        }
    }
    printf("R read returned events=%d errors=%d\n", n > 0, errs > 0);
    printf("R read n=%ld errs=%ld error_events=%ld t_rec2=%d\n", n, errs, sys_error, t_ok);
    struct posix_trace_status_info st;
    printf("R get_status rc=%s\n", tc_errname(posix_trace_get_status(trid, &st)));
    printf("R stop rc=%s\n", tc_errname(posix_trace_stop(trid)));
    printf("R shutdown rc=%s\n", tc_errname(posix_trace_shutdown(trid)));
    return 0;
}

int main(int argc, char **argv)
{
    tc_init();
    tc_alarm_watchdog(50); /* not tc_watchdog: see xproc.h */
    if (argc < 3)
        return 2;
    static const char *const regions[] = { "sparse", "words", "used", "all" };
    int region = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(argv[1], regions[i]) == 0)
            region = i;
    if (region < 0)
        return 2;
    xp_role_add(getpid(), "M");
    struct r_arg ra;
    ra.t = xp_spawn("T", hostile_target, NULL);
    xp_get(ra.t.from, 20000, "target id");
    ra.region = region;
    ra.seed = (uint64_t)strtoull(argv[2], NULL, 10);
    struct xp_proc r = xp_spawn("R", controller, &ra);
    xp_print_exit("R", xp_wait(r.pid, 30000));
    /* T: still there? tell it to exit. T may have died of its own corrupt
     * stream (its writes go through it). */
    xp_end_hostile(&ra.t, H_EXIT, 3000, "T");
    return 0;
}
