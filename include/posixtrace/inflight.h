/*
 * <posixtrace/inflight.h> -- posixtrace extension: the layout of a thread's
 * call in flight, as the trace system publishes it (<posixtrace/record.h>
 * posixtrace_inflight_cell(), <posixtrace/control.h>
 * posixtrace_stream_unfinished()).
 */
#ifndef POSIXTRACE_INFLIGHT_H
#define POSIXTRACE_INFLIGHT_H

#include <stdint.h>

/* Calls in progress (doc/design.md "Calls in flight"). Each thread of a
 * traced process has one cell in its process's inbox, which controllers map:
 * an interposer that times a call publishes there, before making it, which
 * call it is (event id, start, the first integer arguments) and clears it
 * once the call's event is recorded, so that a controller ending its trace
 * can report the calls still blocked (posixtrace_stream_unfinished(),
 * <posixtrace/control.h>). Only the thread writes its cell, with plain
 * stores: `seq` odd while the other fields change (a seqlock: a reader
 * copies the cell between two equal even reads of seq), `id` 0 when no call
 * is in progress. */
#define POSIXTRACE_INFLIGHT_ARGS 3
struct posixtrace_inflight_cell {
    uint32_t seq;         /* odd: being written */
    uint32_t id;          /* the call's event id, 0: none */
    uint32_t tid;         /* the thread's kernel id */
    uint32_t nargs;       /* arguments published (<= POSIXTRACE_INFLIGHT_ARGS) */
    uint64_t t0;          /* the call's start: posixtrace_call_begin() */
    int64_t arg[POSIXTRACE_INFLIGHT_ARGS]; /* the event's first fixed fields, in order */
    uint64_t pad_[2];
};

#endif
