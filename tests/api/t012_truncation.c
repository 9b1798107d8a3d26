/*
 * t012_truncation: data truncation when recording (max-data-size,
 * POSIX_TRACE_TRUNCATED_RECORD) and when reading (num_bytes,
 * POSIX_TRACE_TRUNCATED_READ), zero-length data.
 */
#include "tcommon.h"

static unsigned char pattern[70000];

/* Reads the next event with a buffer of num_bytes bytes (followed by a canary). */
static void read_with(trace_id_t trid, size_t num_bytes, const char *label)
{
    static unsigned char buf[70000 + 64];
    struct posix_trace_event_info info;
    size_t len = (size_t)-1;
    int un = -1;
    memset(buf, 0xee, sizeof buf);
    int rc = posix_trace_trygetnext_event(trid, &info, buf, num_bytes, &len, &un);
    if (rc != 0 || un) {
        printf("%s rc=%s unavailable=%d\n", label, tc_errname(rc), un != 0);
        return;
    }
    int canary = 1;
    for (size_t i = num_bytes; i < num_bytes + 64; i++)
        if (buf[i] != 0xee)
            canary = 0;
    printf("%s id=%u num_bytes=%zu len=%zu trunc=%d", label, (unsigned)info.posix_event_id,
           num_bytes, len, info.posix_truncation_status);
    if (info.posix_event_id == POSIX_TRACE_START) {
        /* the filter: checked elsewhere */
    } else if (len <= num_bytes && len <= 32) {
        printf(" data=");
        tc_print_hex(stdout, buf, len);
    } else if (len <= num_bytes) {
        printf(" pattern_ok=%d", memcmp(buf, pattern, len) == 0);
    }
    printf(" canary_ok=%d\n", canary);
}

static trace_id_t make(size_t maxdata, trace_event_id_t *ev)
{
    trace_id_t trid = tc_create(4u << 20, maxdata, 0);
    CHECK(posix_trace_trid_eventid_open(trid, "data", ev));
    CHECK(posix_trace_start(trid));
    read_with(trid, 256, "start");
    return trid;
}

int main(void)
{
    trace_id_t trid;
    trace_event_id_t ev;
    tc_init();
    tc_watchdog(30);
    for (size_t i = 0; i < sizeof pattern; i++)
        pattern[i] = (unsigned char)(i * 7 + 3);

    /* max-data-size 16 */
    printf("-- maxdata 16\n");
    trid = make(16, &ev);
    posix_trace_event(ev, pattern, 10);
    posix_trace_event(ev, pattern, 16);
    posix_trace_event(ev, pattern, 17);
    posix_trace_event(ev, pattern, 1000);
    posix_trace_event(ev, NULL, 0);
    posix_trace_event(ev, pattern, 0);
    read_with(trid, 1024, "rec10");
    read_with(trid, 1024, "rec16");
    read_with(trid, 1024, "rec17");
    read_with(trid, 1024, "rec1000");
    read_with(trid, 1024, "recNULL0");
    read_with(trid, 1024, "rec0");
    /* read buffers smaller than the data */
    posix_trace_event(ev, pattern, 10);
    posix_trace_event(ev, pattern, 10);
    posix_trace_event(ev, pattern, 10);
    posix_trace_event(ev, pattern, 10);
    posix_trace_event(ev, pattern, 100);   /* recorded truncated to 16 */
    posix_trace_event(ev, pattern, 100);
    posix_trace_event(ev, pattern, 0);
    read_with(trid, 4, "read10_into4");
    read_with(trid, 9, "read10_into9");
    read_with(trid, 10, "read10_into10");
    read_with(trid, 0, "read10_into0");
    read_with(trid, 8, "read100rec_into8");
    read_with(trid, 16, "read100rec_into16");
    read_with(trid, 0, "read0_into0");
    CHECK(posix_trace_stop(trid));
    read_with(trid, 3, "stop_into3");
    read_with(trid, 64, "none");
    CHECK(posix_trace_shutdown(trid));

    /* the default max-data-size: 256 */
    printf("-- maxdata default\n");
    trid = make(0, &ev);
    posix_trace_event(ev, pattern, 256);
    posix_trace_event(ev, pattern, 257);
    read_with(trid, 70000, "rec256");
    read_with(trid, 70000, "rec257");
    CHECK(posix_trace_shutdown(trid));

    /* max-data-size 0: no data kept at all */
    printf("-- maxdata 0\n");
    {
        trace_attr_t a;
        CHECK(posix_trace_attr_init(&a));
        CHECK(posix_trace_attr_setmaxdatasize(&a, 0));
        CHECK(posix_trace_create(0, &a, &trid));
        CHECK(posix_trace_attr_destroy(&a));
        CHECK(posix_trace_trid_eventid_open(trid, "data", &ev));
        CHECK(posix_trace_start(trid));
        read_with(trid, 256, "start");
    }
    posix_trace_event(ev, pattern, 5);
    posix_trace_event(ev, NULL, 0);
    read_with(trid, 64, "rec5");
    read_with(trid, 64, "rec0");
    CHECK(posix_trace_shutdown(trid));

    /* max-data-size 65536 (the largest) */
    printf("-- maxdata 65536\n");
    trid = make(65536, &ev);
    posix_trace_event(ev, pattern, 65536);
    posix_trace_event(ev, pattern, 65537);
    posix_trace_event(ev, pattern, 70000);
    read_with(trid, 70000, "rec65536");
    read_with(trid, 70000, "rec65537");
    read_with(trid, 65535, "read70000rec_into65535");
    CHECK(posix_trace_shutdown(trid));
    return 0;
}
