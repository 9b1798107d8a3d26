/*
 * libFuzzer target for the live stream reader (libtrace/ring/reader.c, consume.c,
 * reap.c, names.c, gaps.c): any process that records into a stream can
 * write every byte of its shared memory but the creator's private first
 * page (doc/design.md, "Untrusted stream memory"). See fuzz/README.md.
 *
 * Per input: create a real stream (INHERITED, LOOP or UNTIL_FULL by the
 * first byte), let a forked child record events into it (their number and
 * sizes from the second byte) and exit, so that every writer is gone; then
 * apply the rest of the input as patches (4-byte offset into the shared part,
 * 1-byte length, bytes) to the stream's memory, as a hostile writer would,
 * and read it as its controller: trygetnext until nothing is left (bounded),
 * status, attributes, the event type list and names, shutdown. Every call
 * must return 0 or one of its documented errors and every event must be
 * sane; anything else calls abort(), which libFuzzer reports as a crash.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void record_in_child(trace_id_t trid, unsigned nev, unsigned size)
{
    trace_event_id_t a, b;
    unsigned char data[64];
    memset(data, 0x5a, sizeof data);
    pid_t p = fork();
    CHECK(p >= 0);
    if (p == 0) {
        if (posix_trace_eventid_open("fuzz/a", &a) != 0 ||
            posix_trace_eventid_open("fuzz/b", &b) != 0)
            _exit(1);
        for (unsigned i = 0; i < nev; i++)
            posix_trace_event(i % 3 ? a : b, data, (i * 7 + size) % sizeof data);
        _exit(0);
    }
    int st;
    while (waitpid(p, &st, 0) < 0)
        CHECK(errno == EINTR);
    (void)trid;
}

static trace_id_t make_stream(uint8_t how)
{
    trace_attr_t a;
    trace_id_t trid;
    CHECK(posix_trace_attr_init(&a) == 0);
    CHECK(posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED) == 0);
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, how & 1 ? POSIX_TRACE_LOOP
                                                            : POSIX_TRACE_UNTIL_FULL) == 0);
    CHECK(posix_trace_attr_setmaxdatasize(&a, 64) == 0);
    CHECK(posix_trace_attr_setstreamsize(&a, 64 * 1024) == 0);
    CHECK(posix_trace_create(0, &a, &trid) == 0);
    CHECK(posix_trace_attr_destroy(&a) == 0);
    CHECK(posix_trace_start(trid) == 0);
    return trid;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The hostile writer: patches past the private first page. */
static void scribble(trace_id_t trid, const uint8_t *d, size_t n)
{
    struct pt_handle *h;
    CHECK(pt_get(trid, &h) == 0);
    unsigned char *base = (unsigned char *)h->shm;
    size_t size = h->map_size;
    pt_put(h);
    CHECK(size > PT_PAGE0);
    while (n >= 5) {
        size_t off = PT_PAGE0 + rd32(d) % (size - PT_PAGE0), len = d[4] % 33;
        d += 5;
        n -= 5;
        if (len > n)
            len = n;
        if (len > size - off)
            len = size - off;
        memcpy(base + off, d, len);
        d += len;
        n -= len;
    }
}

static void read_events(trace_id_t trid)
{
    static char buf[128];
    for (int i = 0; i < 20000; i++) {
        struct posix_trace_event_info ev;
        size_t len = 0;
        int avail = 0;
        int rc = posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &avail);
        CHECK(rc == 0);
        if (!avail)
            return;
        CHECK(len <= sizeof buf && ev.posix_event_id <= PT_ID_MAX);
        CHECK(ev.posix_timestamp.tv_nsec >= 0 && ev.posix_timestamp.tv_nsec < 1000000000);
        CHECK(ev.posix_truncation_status == POSIX_TRACE_NOT_TRUNCATED ||
              ev.posix_truncation_status == POSIX_TRACE_TRUNCATED_RECORD ||
              ev.posix_truncation_status == POSIX_TRACE_TRUNCATED_READ);
    }
}

static void read_the_rest(trace_id_t trid)
{
    struct posix_trace_status_info st;
    CHECK(posix_trace_get_status(trid, &st) == 0);
    trace_attr_t a;
    CHECK(posix_trace_get_attr(trid, &a) == 0);
    char name[TRACE_NAME_MAX + 1];
    CHECK(posix_trace_attr_getname(&a, name) == 0 && memchr(name, 0, sizeof name) != NULL);
    CHECK(posix_trace_attr_destroy(&a) == 0);
    CHECK(posix_trace_eventtypelist_rewind(trid) == 0);
    for (unsigned i = 0; i <= PT_ID_MAX + 1; i++) {
        trace_event_id_t id;
        int unavail = 0;
        CHECK(posix_trace_eventtypelist_getnext_id(trid, &id, &unavail) == 0);
        if (unavail)
            break;
        char ev[TRACE_EVENT_NAME_MAX];
        int rc = posix_trace_eventid_get_name(trid, id, ev);
        CHECK(rc == 0 || rc == EINVAL);
        CHECK(rc != 0 || memchr(ev, 0, sizeof ev) != NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (n < 2)
        return 0;
    trace_id_t trid = make_stream(d[0]);
    record_in_child(trid, (unsigned)d[1] * 16u, d[0] >> 1);
    scribble(trid, d + 2, n - 2);
    read_events(trid);
    read_the_rest(trid);
    CHECK(posix_trace_shutdown(trid) == 0);
    return 0;
}
