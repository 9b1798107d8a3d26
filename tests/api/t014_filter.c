/*
 * t014_filter: posix_trace_set_filter / posix_trace_get_filter.
 *
 * Modes (argv[1]):
 *   setget    SET/ADD/SUB round trips through get_filter, invalid how
 *   record    filtered events are not recorded; FILTER events (old + new
 *             sets) only while running; START carries the filter
 *   system    the filter applies to system events: filtered START / STOP
 */
#include "tcommon.h"

#include <stdarg.h>

static void show_filter(const char *label, trace_id_t trid)
{
    trace_event_set_t f;
    memset(&f, 0xa5, sizeof f);
    int rc = posix_trace_get_filter(trid, &f);
    printf("%s get_filter rc=%s filter=", label, tc_errname(rc));
    tc_fprint_set(stdout, &f);
    printf("\n");
}

static trace_event_set_t set_of(int n, ...)
{
    trace_event_set_t s;
    va_list ap;
    CHECK(posix_trace_eventset_empty(&s));
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        CHECK(posix_trace_eventset_add((trace_event_id_t)va_arg(ap, int), &s));
    va_end(ap);
    return s;
}

static void mode_setget(void)
{
    trace_id_t trid;
    trace_event_set_t s;
    CHECK(posix_trace_create(0, NULL, &trid));
    show_filter("initial", trid);

    s = set_of(2, 257, 300);
    SHOW("SET {257,300}", posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
    show_filter("after SET", trid);
    s = set_of(3, 258, 300, 1280);
    SHOW("ADD {258,300,1280}", posix_trace_set_filter(trid, &s, POSIX_TRACE_ADD_EVENTSET));
    show_filter("after ADD", trid);
    s = set_of(3, 257, 1280, 999);
    SHOW("SUB {257,1280,999}", posix_trace_set_filter(trid, &s, POSIX_TRACE_SUB_EVENTSET));
    show_filter("after SUB", trid);

    s = set_of(1, 0);
    static const int bad_how[] = { 0, 4, -1, 1000 };
    for (size_t i = 0; i < sizeof bad_how / sizeof bad_how[0]; i++) {
        char lbl[32];
        snprintf(lbl, sizeof lbl, "how=%d", bad_how[i]);
        SHOW(lbl, posix_trace_set_filter(trid, &s, bad_how[i]));
    }
    show_filter("after invalid how", trid);

    CHECK(posix_trace_eventset_fill(&s, POSIX_TRACE_SYSTEM_EVENTS));
    SHOW("SET system", posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
    show_filter("after SET system", trid);
    CHECK(posix_trace_eventset_fill(&s, POSIX_TRACE_ALL_EVENTS));
    SHOW("SUB all", posix_trace_set_filter(trid, &s, POSIX_TRACE_SUB_EVENTSET));
    show_filter("after SUB all", trid);
    SHOW("ADD all", posix_trace_set_filter(trid, &s, POSIX_TRACE_ADD_EVENTSET));
    show_filter("after ADD all", trid);
    CHECK(posix_trace_eventset_empty(&s));
    SHOW("SET empty", posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
    show_filter("after SET empty", trid);
    /* none of this recorded a FILTER event: the stream is suspended */
    CHECK(posix_trace_start(trid));
    CHECK(posix_trace_stop(trid));
    tc_drain_print(trid);
    CHECK(posix_trace_shutdown(trid));
}

static void mode_record(void)
{
    trace_id_t trid;
    trace_event_set_t s;
    trace_event_id_t foo = tc_open("foo"), bar = tc_open("bar"), baz = tc_open("baz");
    CHECK(posix_trace_create(0, NULL, &trid));

    s = set_of(1, (int)bar);
    CHECK(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));   /* suspended */
    CHECK(posix_trace_start(trid));
    posix_trace_event(foo, "f1", 2);
    posix_trace_event(bar, "b1", 2);
    posix_trace_event(baz, "z1", 2);
    s = set_of(1, (int)foo);
    SHOW("ADD {foo} running", posix_trace_set_filter(trid, &s, POSIX_TRACE_ADD_EVENTSET));
    posix_trace_event(foo, "f2", 2);
    posix_trace_event(bar, "b2", 2);
    posix_trace_event(baz, "z2", 2);
    s = set_of(2, (int)foo, (int)bar);
    SHOW("SUB {foo,bar} running", posix_trace_set_filter(trid, &s, POSIX_TRACE_SUB_EVENTSET));
    posix_trace_event(foo, "f3", 2);
    posix_trace_event(bar, "b3", 2);
    posix_trace_event(baz, "z3", 2);
    s = set_of(2, (int)baz, POSIX_TRACE_UNNAMED_USEREVENT);
    SHOW("SET {baz,unnamed} running", posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
    posix_trace_event(foo, "f4", 2);
    posix_trace_event(baz, "z4", 2);
    posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, "u4", 2);
    /* an invalid how records nothing */
    SHOW("how=0 running", posix_trace_set_filter(trid, &s, 0));
    CHECK(posix_trace_stop(trid));
    /* suspended: no FILTER event */
    CHECK(posix_trace_eventset_empty(&s));
    SHOW("SET empty suspended", posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
    tc_drain_print(trid);
    show_filter("end", trid);
    CHECK(posix_trace_shutdown(trid));
}

static void mode_system(void)
{
    trace_id_t trid;
    trace_event_set_t s;
    trace_event_id_t foo = tc_open("foo");
    CHECK(posix_trace_create(0, NULL, &trid));

    s = set_of(1, POSIX_TRACE_START);
    CHECK(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
    SHOW("start with START filtered", posix_trace_start(trid));
    tc_print_status("started", trid);
    posix_trace_event(foo, "1", 1);
    SHOW("stop", posix_trace_stop(trid));
    s = set_of(1, POSIX_TRACE_STOP);
    CHECK(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
    SHOW("start", posix_trace_start(trid));
    posix_trace_event(foo, "2", 1);
    SHOW("stop with STOP filtered", posix_trace_stop(trid));
    tc_print_status("stopped", trid);
    tc_drain_print(trid);
    CHECK(posix_trace_shutdown(trid));
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(30);
    if (argc != 2) {
        printf("usage: t014_filter MODE\n");
        return 2;
    }
    if (!strcmp(argv[1], "setget"))
        mode_setget();
    else if (!strcmp(argv[1], "record"))
        mode_record();
    else if (!strcmp(argv[1], "system"))
        mode_system();
    else {
        printf("unknown mode %s\n", argv[1]);
        return 2;
    }
    return 0;
}
