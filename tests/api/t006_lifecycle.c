/*
 * t006_lifecycle: create / start / stop, the START and STOP system events,
 * the stream status, recording while suspended.
 *
 * Modes (argv[1]):
 *   pid        create with a nonexistent pid (ESRCH), with getpid() (works as 0)
 *   startstop  the main scenario (see the pytest file for the expected output)
 *   timing     START/STOP timestamps lie inside the start()/stop() calls
 */
#include "tcommon.h"

#include <limits.h>
#include <sys/wait.h>

static void mode_pid(void)
{
    trace_id_t trid;
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    TC_ASSERT(child > 0);
    TC_ASSERT(waitpid(child, NULL, 0) == child);
    /* the reaped child no longer exists */
    SHOW("create reaped child pid", posix_trace_create(child, NULL, &trid));
    SHOW("create INT_MAX pid", posix_trace_create(INT_MAX, NULL, &trid));

    /* getpid() is the calling process: the same as 0 */
    trace_event_id_t ev = tc_open("bypid");
    SHOW("create getpid()", posix_trace_create(getpid(), NULL, &trid));
    tc_print_status("getpid", trid);
    CHECK(posix_trace_start(trid));
    posix_trace_event(ev, "pid", 3);
    CHECK(posix_trace_stop(trid));
    tc_drain_print(trid);
    CHECK(posix_trace_shutdown(trid));
}

static void mode_startstop(void)
{
    trace_id_t trid;
    trace_event_set_t f;
    trace_event_id_t foo = tc_open("foo");
    trace_event_id_t bar = tc_open("bar");

    SHOW("create", posix_trace_create(0, NULL, &trid));
    /* A stream is created suspended, with an empty filter and no event. */
    tc_print_status("created", trid);
    CHECK(posix_trace_get_filter(trid, &f));
    printf("created filter=");
    tc_fprint_set(stdout, &f);
    printf("\n");
    posix_trace_event(foo, "susp", 4);   /* suspended: no effect */
    tc_drain_print(trid);

    SHOW("start", posix_trace_start(trid));
    tc_print_status("started", trid);
    SHOW("start again", posix_trace_start(trid));
    tc_print_status("started again", trid);
    posix_trace_event(foo, "abcd", 4);
    posix_trace_event(bar, "", 0);
    SHOW("stop", posix_trace_stop(trid));
    tc_print_status("stopped", trid);
    SHOW("stop again", posix_trace_stop(trid));
    tc_print_status("stopped again", trid);
    posix_trace_event(foo, "zz", 2);     /* suspended: no effect */
    tc_drain_print(trid);

    /* A filter set while suspended is carried by the next START. */
    CHECK(posix_trace_eventset_empty(&f));
    CHECK(posix_trace_eventset_add(bar, &f));
    CHECK(posix_trace_set_filter(trid, &f, POSIX_TRACE_SET_EVENTSET));
    SHOW("restart", posix_trace_start(trid));
    posix_trace_event(foo, "\x01\x02", 2);
    posix_trace_event(bar, "filtered", 8);
    SHOW("stop", posix_trace_stop(trid));
    posix_trace_event(foo, "after", 5);
    tc_drain_print(trid);
    tc_print_status("end", trid);
    SHOW("shutdown", posix_trace_shutdown(trid));
}

static void mode_timing(void)
{
    trace_id_t trid;
    static tc_event e;
    CHECK(posix_trace_create(0, NULL, &trid));
    for (int i = 0; i < 5; i++) {
        int64_t b1 = tc_now_ns();
        CHECK(posix_trace_start(trid));
        int64_t a1 = tc_now_ns();
        int64_t b2 = tc_now_ns();
        CHECK(posix_trace_stop(trid));
        int64_t a2 = tc_now_ns();
        TC_ASSERT(tc_try(trid, &e));
        printf("call start before=%" PRId64 " after=%" PRId64 "\n", b1, a1);
        printf("event id=%u ts=%" PRId64 "\n", (unsigned)e.info.posix_event_id,
               tc_ts_ns(&e.info.posix_timestamp));
        TC_ASSERT(tc_try(trid, &e));
        printf("call stop before=%" PRId64 " after=%" PRId64 "\n", b2, a2);
        printf("event id=%u ts=%" PRId64 "\n", (unsigned)e.info.posix_event_id,
               tc_ts_ns(&e.info.posix_timestamp));
        TC_ASSERT(!tc_try(trid, &e));
    }
    CHECK(posix_trace_shutdown(trid));
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(30);
    if (argc != 2) {
        printf("usage: t006_lifecycle MODE\n");
        return 2;
    }
    if (!strcmp(argv[1], "pid"))
        mode_pid();
    else if (!strcmp(argv[1], "startstop"))
        mode_startstop();
    else if (!strcmp(argv[1], "timing"))
        mode_timing();
    else {
        printf("unknown mode %s\n", argv[1]);
        return 2;
    }
    return 0;
}
