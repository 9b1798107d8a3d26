/*
 * t017_loop: the POSIX_TRACE_LOOP stream-full policy.
 *
 * A 64 KiB stream, events of 8 bytes recorded without reading until the
 * stream reports FULL (overwriting), then 1000 more (tc_fill): the
 * most recent events are kept; the gap is reported where it is as OVERFLOW
 * (number lost) + RESUME, timestamped like the first event kept after it;
 * overrun status set, then reset by get_status; full status FULL while
 * overwriting.
 *
 * Modes (argv[1]):
 *   nostart    START filtered out: only user events in the stream
 *   withstart  START recorded (and overwritten: it counts as lost)
 *   middle     some events read before the overwrite: gap in the middle
 */
#include "tcommon.h"

int main(int argc, char **argv)
{
    trace_id_t trid;
    trace_event_id_t ev;
    trace_event_set_t f;
    tc_init();
    tc_watchdog(30);
    if (argc != 2) {
        printf("usage: t017_loop MODE\n");
        return 2;
    }
    const char *mode = argv[1];
    tc_show_ts = 1;
    ev = tc_open("seq");
    trid = tc_create(65536, 0, POSIX_TRACE_LOOP);
    if (strcmp(mode, "withstart") != 0) {
        CHECK(posix_trace_eventset_empty(&f));
        CHECK(posix_trace_eventset_add(POSIX_TRACE_START, &f));
        CHECK(posix_trace_set_filter(trid, &f, POSIX_TRACE_SET_EVENTSET));
    }
    CHECK(posix_trace_start(trid));
    uint64_t seq = 0;
    if (!strcmp(mode, "middle")) {
        for (int i = 0; i < 300; i++, seq++)
            posix_trace_event(ev, &seq, sizeof seq);
        tc_print_status("part", trid);
        /* read the first 100 */
        static tc_event e;
        for (int i = 0; i < 100; i++) {
            TC_ASSERT(tc_try(trid, &e));
            uint64_t s;
            memcpy(&s, e.data, sizeof s);
            TC_ASSERT(e.info.posix_event_id == ev && s == (uint64_t)i);
        }
        printf("read first 100\n");
    }
    tc_fill(trid, ev, &seq);
    printf("recorded total=%" PRIu64 "\n", seq);
    tc_print_status("overwritten", trid);
    tc_print_status("overwritten again", trid);
    long n = tc_drain_compact(trid, ev);
    printf("read user=%ld\n", n);
    tc_print_status("drained", trid);

    /* no loss afterwards */
    for (int i = 0; i < 10; i++, seq++)
        posix_trace_event(ev, &seq, sizeof seq);
    CHECK(posix_trace_stop(trid));
    tc_show_ts = 0;
    tc_drain_compact(trid, ev);
    tc_print_status("end", trid);
    CHECK(posix_trace_shutdown(trid));
    return 0;
}
