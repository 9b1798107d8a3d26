/*
 * t304_flush_gap: where the log flusher writes the report of a full
 * stream's gap (libtrace/flusher.c, "Held system events"). A 1 MiB stream
 * fills and loses events; one look of the flusher thread (pt_flush_look,
 * as the thread takes it of a FLUSH stream; called here on an UNTIL_FULL
 * stream, so that no thread runs meanwhile) drains a quarter of the stream's
 * chunks and restarts it, the other events from before the gap still in the
 * stream; more events; posix_trace_flush() writes the rest. The log is a
 * LOOP log of 8 blocks, which keeps the flush's last blocks: events from
 * before the gap and from after it. The report of the gap must be kept with
 * them, between the two: STOP (auto), OVERFLOW with the count lost, RESUME,
 * START (doc/log-format.md, "What the writer guarantees"). Written with the
 * look's blocks, it was overwritten, and the gap went unreported.
 * Prints one line per case and a summary; exits 1 if a check failed.
 */
#include "unit.h"
#include <fcntl.h>
#include <trace.h>
#include <posixtrace/control.h>

#include "internal.h" /* libtrace's (-I libtrace: tests/unit/local.mk) */

#define LATE 100 /* events recorded while the stream is full: lost */
#define AFTER 50 /* events recorded after its restart */
#define MAXEV 100000

static struct { trace_event_id_t id; uint64_t v; } got[MAXEV];
static size_t ngot;

/* The stream has lost events (it is full: it takes no more). */
static int lost(trace_id_t trid)
{
    struct posix_trace_status_info st;
    if (posix_trace_get_status(trid, &st) != 0)
        exit(2);
    return st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN;
}

/* Events 0, 1, ... until the stream is full, and LATE more. Returns the
 * next number. */
static uint64_t fill(trace_id_t trid, trace_event_id_t id)
{
    uint64_t n = 0;
    while (!lost(trid) && n < 10 * 1000 * 1000) {
        posix_trace_event(id, &n, sizeof n);
        n++;
    }
    for (int i = 0; i < LATE; i++, n++)
        posix_trace_event(id, &n, sizeof n);
    return n;
}

/* Looks of the flusher thread until the stream runs again: how many. */
static int restart_by_looks(trace_id_t trid)
{
    struct pt_handle *h;
    if (pt_get(trid, &h) != 0)
        exit(2);
    int looks = 0;
    while (atomic_load(&h->shm->state) == PT_ST_FULL && looks < 8) {
        pt_flush_look(h, false);
        looks++;
    }
    if (atomic_load(&h->shm->state) != PT_ST_RUNNING)
        looks = 0;
    pt_put(h);
    return looks;
}

/* Every event of the log at `path`: the trace system's and the user's
 * (their number). */
static void read_log(const char *path)
{
    int fd = open(path, O_RDONLY);
    trace_id_t trid;
    if (fd < 0 || posix_trace_open(fd, &trid) != 0)
        exit(2);
    ngot = 0;
    for (;;) {
        struct posix_trace_event_info ev;
        uint64_t d[32] = { 0 };
        size_t len;
        int unav;
        if (posix_trace_getnext_event(trid, &ev, d, sizeof d, &len, &unav) != 0 || unav ||
            ngot == MAXEV)
            break;
        got[ngot].id = ev.posix_event_id;
        got[ngot++].v = d[0];
    }
    posix_trace_close(trid);
    close(fd);
}

/* The user events of the log: one jump in their numbers, from before the
 * gap to after it, and just before the first after it, the gap's report. */
static void check_gap(trace_event_id_t id, uint64_t restart_at)
{
    size_t jump = 0, jumps = 0, users = 0;
    uint64_t prev = 0;
    for (size_t i = 0; i < ngot; i++) {
        if (got[i].id != id)
            continue;
        if (users++ > 0 && got[i].v != prev + 1) {
            jump = i;
            jumps++;
        }
        prev = got[i].v;
    }
    UT_EQ(jumps, 1);
    if (jumps != 1 || jump < 5)
        return;
    size_t last = jump - 5; /* the last event from before the gap, then four of the system's */
    UT_EQ(got[last].id, id);
    UT_CHECK(got[last].v < restart_at - LATE); /* events from before the gap are kept */
    UT_EQ(got[jump].v, restart_at);
    UT_EQ(got[last + 1].id, POSIX_TRACE_STOP);
    UT_EQ(got[last + 2].id, POSIX_TRACE_OVERFLOW);
    UT_EQ(got[last + 2].v, restart_at - got[last].v - 1);
    UT_EQ(got[last + 3].id, POSIX_TRACE_RESUME);
    UT_EQ(got[last + 4].id, POSIX_TRACE_START);
}

static void loop_log_keeps_gap(void)
{
    char path[] = "/tmp/t303-XXXXXX";
    int fd = mkstemp(path);
    trace_attr_t a;
    size_t min;
    trace_id_t trid;
    trace_event_id_t id;
    if (fd < 0 || posix_trace_attr_init(&a) != 0 ||
        posix_trace_attr_setstreamsize(&a, (size_t)1 << 20) != 0 ||
        posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL) != 0 ||
        posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_LOOP) != 0 ||
        posixtrace_attr_getminlogsize(&a, &min) != 0 || posix_trace_attr_setlogsize(&a, 2 * min) != 0 ||
        posix_trace_create_withlog(0, &a, fd, &trid) != 0 ||
        posix_trace_eventid_open("t303/n", &id) != 0 || posix_trace_start(trid) != 0)
        exit(2);
    uint64_t n = fill(trid, id);
    int looks = restart_by_looks(trid);
    UT_CHECK(looks >= 1);
    uint64_t restart_at = n;
    for (int i = 0; i < AFTER; i++, n++)
        posix_trace_event(id, &n, sizeof n);
    UT_EQ(posix_trace_flush(trid), 0);
    read_log(path);
    check_gap(id, restart_at);
    UT_EQ(posix_trace_shutdown(trid), 0);
    read_log(path); /* the same after the log's last flush */
    check_gap(id, restart_at);
    close(fd);
    unlink(path);
}

int main(void)
{
    ut_watchdog(60);
    UT_RUN(loop_log_keeps_gap);
    return ut_end("t304_flush_gap");
}
