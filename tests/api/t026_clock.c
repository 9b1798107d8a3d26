/*
 * t026_clock - the clock of a stream (<posixtrace/control.h>,
 * doc/semantics.md "Timestamps"). Prints
 *   choice source=N tpn=X why=<words>
 *   stream source=N tpn=X
 *   event ts_ok=1 before=B ts=T after=A
 *   log source=N tpn=X
 * for posixtrace_clock_choice(), a stream this process creates (with a log,
 * argv[1]), one of its events bracketed by CLOCK_REALTIME, and the log read
 * back; then the EINVAL cases ("einval ok").
 */
#include "tcommon.h"

#include <fcntl.h>
#include <posixtrace/control.h>

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int src = 0;
    double tpn = 0;
    const char *why = NULL;
    CHECK(posixtrace_clock_choice(&src, &tpn, &why));
    printf("choice source=%d tpn=%.6f why=%s\n", src, tpn, why);
    int fd = open(argv[1], O_CREAT | O_TRUNC | O_RDWR, 0600);
    TC_ASSERT(fd >= 0);
    trace_attr_t attr;
    trace_id_t trid;
    CHECK(posix_trace_attr_init(&attr));
    CHECK(posix_trace_create_withlog(0, &attr, fd, &trid));
    CHECK(posix_trace_start(trid));
    int s2 = 0;
    double t2 = 0;
    CHECK(posixtrace_stream_clock(trid, &s2, &t2));
    printf("stream source=%d tpn=%.6f\n", s2, t2);
    trace_event_id_t ev;
    CHECK(posix_trace_eventid_open("t026", &ev));
    int64_t before = now_ns();
    posix_trace_event(ev, NULL, 0);
    int64_t after = now_ns();
    CHECK(posix_trace_shutdown(trid));
    close(fd);

    fd = open(argv[1], O_RDONLY);
    CHECK(posix_trace_open(fd, &trid));
    CHECK(posixtrace_stream_clock(trid, &s2, &t2));
    for (;;) {
        struct posix_trace_event_info e;
        size_t len;
        int unavailable;
        CHECK(posix_trace_getnext_event(trid, &e, NULL, 0, &len, &unavailable));
        if (unavailable)
            break;
        if (e.posix_event_id != ev)
            continue;
        int64_t ts = (int64_t)e.posix_timestamp.tv_sec * 1000000000 + e.posix_timestamp.tv_nsec;
        printf("event ts_ok=%d before=%lld ts=%lld after=%lld\n",
               before - 10000 <= ts && ts <= after + 10000, (long long)before, (long long)ts,
               (long long)after);
    }
    printf("log source=%d tpn=%.6f\n", s2, t2);
    int e1 = posixtrace_stream_clock(trid, NULL, NULL);
    CHECK(posix_trace_close(trid));
    int e2 = posixtrace_stream_clock(trid, &s2, NULL);
    printf("einval %s\n", e1 == EINVAL && e2 == EINVAL ? "ok" : "bad");
    return 0;
}
