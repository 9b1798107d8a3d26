/*
 * Losses and the restart of a full stream, as a reader (reader.c) and the
 * log flusher (flusher.c) report them. Both put the same system events in
 * the same order; only where they go differs (the reader's queue of events
 * to deliver, stamped in ns; the flusher's block of system events, stamped
 * in ticks), so the stamp is the caller's and passes through as it is.
 *
 * Pages: posix_trace_attr_getinherited.3p.txt (UNTIL_FULL: "The trace
 * system shall restart the trace stream when it is empty and may restart it
 * sooner. A POSIX_TRACE_START trace event shall be reported before reporting
 * the next recorded trace event"); trace.h.0p.txt (POSIX_TRACE_OVERFLOW,
 * POSIX_TRACE_RESUME, POSIX_TRACE_ERROR). Choices: doc/semantics.md.
 */
#include "../internal.h"
#include "pt_bounds.h"

/* Whether n events can have been lost since the last look: a lost event
 * costs its writer at least a nanosecond, and a stream has PT_NSLOTS
 * writers, so at most PT_NSLOTS per nanosecond since then (since the
 * stream's creation, at the first look), a second more for the clocks,
 * and never more than PT_LOST_MAX (pt_bounds.h). */
bool pt_loss_plausible(struct pt_handle *h, uint64_t n)
{
    int64_t now = pt_monotonic_ns();
    if (h->loss_seen_ns == 0) {
        int64_t created = h->shm->create_sec * 1000000000 + h->shm->create_nsec;
        int64_t age = pt_realtime_ns() - created;
        h->loss_seen_ns = now - (age > 0 ? age : 0);
    }
    uint64_t since = (uint64_t)(now - h->loss_seen_ns) + 1000000000u;
    h->loss_seen_ns = now;
    return n <= PT_LOST_MAX && n / PT_NSLOTS <= since;
}

/* The lost count a log's STATUS block records: the stream's as long as it
 * grows plausibly; a jump that could not be real (memory written by another
 * process) is not taken, and the count stays where it was (the log has the
 * ERROR events with EBADMSG that say so). */
uint64_t pt_lost_for_status(struct pt_handle *h)
{
    uint64_t now = atomic_load(&h->shm->lost);
    if (now > h->status_lost && pt_loss_plausible(h, now - h->status_lost))
        h->status_lost = now;
    return h->status_lost;
}

/* The stream's lost count and pending error live in memory every process
 * attached to the stream can write: one that could not be (an unknown errno,
 * a count growing faster than pt_loss_plausible allows) is reported as an
 * ERROR event with EBADMSG, never as the number. */
void pt_report_losses(struct pt_handle *h, pt_sys_put *put, uint64_t when, uint64_t lost)
{
    struct pt_shm *s = h->shm;
    uint32_t err = atomic_exchange(&s->error_pending, 0);
    if (err != 0) {
        int e = err <= PT_ERRNO_MAX ? (int)err : EBADMSG;
        put(h, POSIX_TRACE_ERROR, when, &e, sizeof e);
    }
    if (lost <= h->lost_reported)
        return;
    uint64_t n = lost - h->lost_reported;
    h->lost_reported = lost;
    if (!pt_loss_plausible(h, n)) {
        int e = EBADMSG; /* corrupt: not a count of events */
        put(h, POSIX_TRACE_ERROR, when, &e, sizeof e);
        return;
    }
    put(h, POSIX_TRACE_OVERFLOW, when, &n, sizeof n);
    put(h, POSIX_TRACE_RESUME, when, NULL, 0);
}

bool pt_restart_full(struct pt_handle *h, pt_sys_put *put, uint64_t when)
{
    struct pt_shm *s = h->shm;
    uint32_t full = PT_ST_FULL;
    if (!atomic_compare_exchange_strong(&s->state, &full, PT_ST_RUNNING))
        return false;
    pt_quiesce_writers(); /* writers that saw FULL have counted their loss */
    h->stop_reported = 0;
    /* this gap's losses: all so far, or those before the stream filled again */
    pt_report_losses(h, put, when,
                     atomic_load(&s->state) != PT_ST_FULL ? atomic_load(&s->lost)
                                                          : atomic_load(&s->full_lost));
    trace_event_set_t f;
    pt_stream_filter(s, &f);
    put(h, POSIX_TRACE_START, when, &f, sizeof f);
    return true;
}
