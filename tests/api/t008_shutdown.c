/*
 * t008_shutdown: after posix_trace_shutdown the trid is invalid: every
 * function taking a trid returns EINVAL (and the blocking readers do not
 * block).  Recording afterwards has no effect; new streams still work.
 * The same checks with a never-valid trid (all ones).
 */
#include "tcommon.h"

static void call_all(const char *label, trace_id_t trid)
{
    trace_attr_t a;
    struct posix_trace_status_info st;
    trace_event_set_t set;
    struct posix_trace_event_info info;
    char data[64];
    char name[TRACE_EVENT_NAME_MAX + 1];
    size_t len;
    int un;
    trace_event_id_t id;
    struct timespec abst;

    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_eventset_empty(&set));
    abst = tc_ns_ts(tc_now_ns() + 2000000000LL);   /* 2 s ahead */
#define ONE(fn, ...) printf("%s %s rc=%s\n", label, #fn, tc_errname(fn(__VA_ARGS__)))
    ONE(posix_trace_start, trid);
    ONE(posix_trace_stop, trid);
    ONE(posix_trace_clear, trid);
    ONE(posix_trace_get_attr, trid, &a);
    ONE(posix_trace_get_status, trid, &st);
    ONE(posix_trace_get_filter, trid, &set);
    ONE(posix_trace_set_filter, trid, &set, POSIX_TRACE_SET_EVENTSET);
    ONE(posix_trace_set_filter, trid, &set, POSIX_TRACE_ADD_EVENTSET);
    ONE(posix_trace_eventid_get_name, trid, POSIX_TRACE_START, name);
    ONE(posix_trace_trid_eventid_open, trid, "name", &id);
    ONE(posix_trace_eventtypelist_getnext_id, trid, &id, &un);
    ONE(posix_trace_eventtypelist_rewind, trid);
    ONE(posix_trace_trygetnext_event, trid, &info, data, sizeof data, &len, &un);
    ONE(posix_trace_getnext_event, trid, &info, data, sizeof data, &len, &un);
    ONE(posix_trace_timedgetnext_event, trid, &info, data, sizeof data, &len, &un, &abst);
    ONE(posix_trace_shutdown, trid);
#undef ONE
    CHECK(posix_trace_attr_destroy(&a));
}

int main(void)
{
    trace_id_t trid, other;
    trace_event_id_t ev;
    tc_init();
    tc_watchdog(20);

    ev = tc_open("ev");
    CHECK(posix_trace_create(0, NULL, &trid));
    CHECK(posix_trace_start(trid));
    posix_trace_event(ev, "live", 4);
    /* shut down while running, with an unread event */
    SHOW("shutdown", posix_trace_shutdown(trid));
    call_all("shutdown", trid);
    posix_trace_event(ev, "dead", 4);   /* no stream: no effect, no crash */

    call_all("allones", ~(trace_id_t)0);

    /* a new stream works and does not see the old stream's events */
    CHECK(posix_trace_create(0, NULL, &other));
    tc_print_status("new", other);
    CHECK(posix_trace_start(other));
    posix_trace_event(ev, "new", 3);
    CHECK(posix_trace_stop(other));
    tc_drain_print(other);
    /* the old trid is still invalid (even if the new stream reused its slot) */
    {
        struct posix_trace_status_info st;
        int rc = posix_trace_get_status(trid, &st);
        printf("old trid get_status rc=%s same_as_new=%d\n", tc_errname(rc),
               trid == other);
    }
    CHECK(posix_trace_shutdown(other));
    return 0;
}
