/*
 * t016_until_full: the POSIX_TRACE_UNTIL_FULL stream-full policy.
 *
 * A 64 KiB stream, events of 8 bytes recorded without reading until the
 * stream reports FULL, then 1000 more (tc_fill): the
 * stream stops itself (SUSPENDED, FULL, OVERRUN); start/stop are no-ops while
 * full; reading reports the recorded events then STOP (auto=1); once all is
 * read the stream restarts: OVERFLOW (lost count) + RESUME + START, and new
 * events are recorded.  Two rounds.
 */
#include "tcommon.h"

int main(void)
{
    trace_id_t trid;
    trace_event_id_t ev;
    struct posix_trace_status_info st;
    tc_init();
    tc_watchdog(30);

    tc_show_ts = 1;
    ev = tc_open("seq");
    trid = tc_create(65536, 0, POSIX_TRACE_UNTIL_FULL);
    CHECK(posix_trace_start(trid));
    uint64_t seq = 0;
    for (int round = 1; round <= 2; round++) {
        printf("round %d\n", round);
        uint64_t first = seq;
        int64_t t_fill0 = tc_now_ns();
        uint64_t n_rec = tc_fill(trid, ev, &seq);
        int64_t t_fill1 = tc_now_ns();
        printf("recorded from=%" PRIu64 " n=%" PRIu64 "\n", first, n_rec);
        tc_print_status("full", trid);
        tc_print_status("full again", trid);   /* overrun reset by the first */
        /* start/stop while full: no effect, nothing recorded */
        SHOW("stop while full", posix_trace_stop(trid));
        tc_print_status("after stop", trid);
        SHOW("start while full", posix_trace_start(trid));
        tc_print_status("after start", trid);

        int64_t t_read0 = tc_now_ns();
        long n = tc_drain_compact(trid, ev);
        int64_t t_read1 = tc_now_ns();
        printf("read user=%ld\n", n);
        printf("times fill0=%" PRId64 " fill1=%" PRId64 " read0=%" PRId64 " read1=%" PRId64 "\n",
               t_fill0, t_fill1, t_read0, t_read1);
        CHECK(posix_trace_get_status(trid, &st));
        printf("restarted status stream=%s full=%s\n",
               st.posix_stream_status == POSIX_TRACE_RUNNING ? "RUNNING" : "SUSPENDED",
               st.posix_stream_full_status == POSIX_TRACE_FULL ? "FULL" : "NOT_FULL");
    }
    /* recording works again after the restart */
    seq = 1000000;
    for (int i = 0; i < 3; i++, seq++)
        posix_trace_event(ev, &seq, sizeof seq);
    CHECK(posix_trace_stop(trid));
    tc_drain_compact(trid, ev);
    tc_print_status("end", trid);
    CHECK(posix_trace_shutdown(trid));
    return 0;
}
