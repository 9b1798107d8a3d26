/*
 * t009_clear: posix_trace_clear discards the recorded events, keeps the
 * name mapping and the running/suspended state, sets the full status to
 * NOT_FULL.
 *
 * Modes (argv[1]):
 *   running    clear a running stream
 *   suspended  clear a suspended stream
 *   full       clear an UNTIL_FULL stream that stopped itself when full
 */
#include "tcommon.h"

static void show_typelist(trace_id_t trid)
{
    trace_event_id_t id;
    int un;
    CHECK(posix_trace_eventtypelist_rewind(trid));
    printf("list [");
    for (int n = 0; n < 400; n++) {
        CHECK(posix_trace_eventtypelist_getnext_id(trid, &id, &un));
        if (un)
            break;
        if ((id >= 8 && id < 256) || id >= 1536)
            continue; /* the shim's system events (tested with the shim) */
        printf("%s%u", n ? "," : "", (unsigned)id);
    }
    printf("]\n");
}

static void mode_running(void)
{
    trace_id_t trid;
    trace_event_id_t a = tc_open("alpha");
    CHECK(posix_trace_create(0, NULL, &trid));
    trace_event_id_t b;
    CHECK(posix_trace_trid_eventid_open(trid, "beta", &b));
    CHECK(posix_trace_start(trid));
    for (int i = 0; i < 10; i++)
        posix_trace_event(a, &i, sizeof i);
    posix_trace_event(b, "b", 1);
    SHOW("clear", posix_trace_clear(trid));
    tc_print_status("cleared", trid);
    tc_drain_print(trid);
    show_typelist(trid);
    char name[TRACE_EVENT_NAME_MAX + 1];
    CHECK(posix_trace_eventid_get_name(trid, b, name));
    printf("name of %u=%s\n", (unsigned)b, name);
    /* still recording */
    posix_trace_event(b, "after", 5);
    posix_trace_event(a, "A", 1);
    tc_drain_print(trid);
    /* clearing an empty stream is fine */
    SHOW("clear empty", posix_trace_clear(trid));
    tc_print_status("cleared empty", trid);
    CHECK(posix_trace_stop(trid));
    tc_drain_print(trid);
    CHECK(posix_trace_shutdown(trid));
}

static void mode_suspended(void)
{
    trace_id_t trid;
    trace_event_id_t a = tc_open("alpha");
    CHECK(posix_trace_create(0, NULL, &trid));
    CHECK(posix_trace_start(trid));
    posix_trace_event(a, "1", 1);
    CHECK(posix_trace_stop(trid));
    SHOW("clear", posix_trace_clear(trid));
    tc_print_status("cleared", trid);
    posix_trace_event(a, "2", 1);   /* suspended: no effect */
    tc_drain_print(trid);
    CHECK(posix_trace_start(trid));
    posix_trace_event(a, "3", 1);
    CHECK(posix_trace_stop(trid));
    tc_drain_print(trid);
    CHECK(posix_trace_shutdown(trid));
}

static void mode_full(void)
{
    trace_id_t trid;
    trace_event_id_t a = tc_open("alpha");
    struct posix_trace_status_info st;
    static tc_event e;

    trid = tc_create(65536, 0, POSIX_TRACE_UNTIL_FULL);
    CHECK(posix_trace_start(trid));
    uint64_t seq = 0;
    tc_fill(trid, a, &seq);
    tc_print_status("filled", trid);
    SHOW("clear", posix_trace_clear(trid));
    CHECK(posix_trace_get_status(trid, &st));
    printf("cleared full=%s\n", st.posix_stream_full_status == POSIX_TRACE_FULL ? "FULL" :
           st.posix_stream_full_status == POSIX_TRACE_NOT_FULL ? "NOT_FULL" : "?");
    /* None of the events recorded before clear is reported; after a start
     * (no-op if running) new events are recorded and reported. */
    CHECK(posix_trace_start(trid));
    uint64_t marker = 0x1122334455667788ULL;
    posix_trace_event(a, &marker, sizeof marker);
    int old = 0, found = 0, other = 0;
    while (tc_try(trid, &e)) {
        if (e.info.posix_event_id == a) {
            uint64_t v;
            memcpy(&v, e.data, sizeof v);
            if (v == marker)
                found++;
            else
                old++;
        } else if (e.info.posix_event_id != POSIX_TRACE_START &&
                   e.info.posix_event_id != POSIX_TRACE_STOP &&
                   e.info.posix_event_id != POSIX_TRACE_OVERFLOW &&
                   e.info.posix_event_id != POSIX_TRACE_RESUME) {
            other++;
        }
    }
    printf("after clear old_events=%d marker=%d other=%d\n", old, found, other);
    tc_print_status("end", trid);
    CHECK(posix_trace_shutdown(trid));
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(30);
    if (argc != 2) {
        printf("usage: t009_clear MODE\n");
        return 2;
    }
    if (!strcmp(argv[1], "running"))
        mode_running();
    else if (!strcmp(argv[1], "suspended"))
        mode_suspended();
    else if (!strcmp(argv[1], "full"))
        mode_full();
    else {
        printf("unknown mode %s\n", argv[1]);
        return 2;
    }
    return 0;
}
