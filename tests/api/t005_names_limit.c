/*
 * t005_names_limit: TRACE_USER_EVENT_MAX (1024) user event names per process;
 * past it posix_trace_eventid_open / posix_trace_trid_eventid_open return
 * POSIX_TRACE_UNNAMED_USEREVENT.
 */
#include "tcommon.h"

int main(void)
{
    trace_id_t trid;
    char name[64];
    trace_event_id_t id;
    int bad = 0;
    tc_init();

    /* Half the names before the stream exists, half after. */
    for (unsigned i = 0; i < TRACE_USER_EVENT_MAX / 2; i++) {
        snprintf(name, sizeof name, "ev%u", i);
        int rc = posix_trace_eventid_open(name, &id);
        if (rc != 0 || id != 257 + i) {
            printf("open %s rc=%s id=%u\n", name, tc_errname(rc), (unsigned)id);
            bad++;
        }
    }
    CHECK(posix_trace_create(0, NULL, &trid));
    for (unsigned i = TRACE_USER_EVENT_MAX / 2; i < TRACE_USER_EVENT_MAX - 1; i++) {
        snprintf(name, sizeof name, "ev%u", i);
        int rc = posix_trace_eventid_open(name, &id);
        if (rc != 0 || id != 257 + i) {
            printf("open %s rc=%s id=%u\n", name, tc_errname(rc), (unsigned)id);
            bad++;
        }
    }
    /* the last one through the stream */
    snprintf(name, sizeof name, "ev%u", TRACE_USER_EVENT_MAX - 1);
    {
        int rc = posix_trace_trid_eventid_open(trid, name, &id);
        printf("trid_open last rc=%s id=%u\n", tc_errname(rc), (unsigned)id);
    }
    printf("opened %u names bad=%d\n", TRACE_USER_EVENT_MAX, bad);

    /* Past the limit: the unnamed user event. */
    id = 0;
    SHOW("open one more", posix_trace_eventid_open("one-more", &id));
    printf("one more id=%u\n", (unsigned)id);
    id = 0;
    SHOW("open another", posix_trace_eventid_open("another", &id));
    printf("another id=%u\n", (unsigned)id);
    id = 0;
    SHOW("trid_open one more", posix_trace_trid_eventid_open(trid, "trid-more", &id));
    printf("trid one more id=%u\n", (unsigned)id);
    /* existing names still map to their ids */
    id = 0;
    SHOW("open ev0", posix_trace_eventid_open("ev0", &id));
    printf("ev0 id=%u\n", (unsigned)id);
    id = 0;
    SHOW("open ev1023", posix_trace_eventid_open("ev1023", &id));
    printf("ev1023 id=%u\n", (unsigned)id);
    /* too long is still too long */
    {
        char longname[TRACE_EVENT_NAME_MAX + 2];
        memset(longname, 'q', sizeof longname - 1);
        longname[sizeof longname - 1] = 0;
        SHOW("open too long", posix_trace_eventid_open(longname, &id));
    }

    /* names of the extremes */
    {
        char buf[TRACE_EVENT_NAME_MAX + 1];
        int rc = posix_trace_eventid_get_name(trid, 257, buf);
        printf("get_name 257 rc=%s name=%s\n", tc_errname(rc), rc ? "-" : buf);
        rc = posix_trace_eventid_get_name(trid, 1280, buf);
        printf("get_name 1280 rc=%s name=%s\n", tc_errname(rc), rc ? "-" : buf);
        rc = posix_trace_eventid_get_name(trid, 1281, buf);
        printf("get_name 1281 rc=%s\n", tc_errname(rc));
    }

    /* The type list: 0..7, 256, 257..1280, in id order. */
    {
        trace_event_id_t expect = 0, got;
        int un, n = 0, okorder = 1;
        for (;;) {
            un = -1;
            CHECK(posix_trace_eventtypelist_getnext_id(trid, &got, &un));
            if (un)
                break;
            if ((got >= 8 && got < 256) || got >= 1536)
                continue; /* the shim's system events and system calls (tested with the shim) */
            if (got != expect)
                okorder = 0;
            n++;
            expect = (expect == 7) ? 256 : expect + 1;
            if (n > 5000)
                break;
        }
        printf("list count=%d in_order=%d\n", n, okorder);
    }

    /* recording with the returned unnamed id works */
    CHECK(posix_trace_start(trid));
    posix_trace_event(id, "z", 1);     /* id = ev1023's = 1280 */
    posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, "u", 1);
    CHECK(posix_trace_stop(trid));
    tc_drain_print(trid);
    CHECK(posix_trace_shutdown(trid));
    return 0;
}
