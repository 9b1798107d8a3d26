/* posixtrace-run's live view: a reader thread copying events out of the
 * stream into a private queue, which the printing thread empties (live_queue.c). */
#ifndef POSIXTRACE_LIVE_QUEUE_H
#define POSIXTRACE_LIVE_QUEUE_H

#include "ptools.h"

/* The queue's bound: at most this many bytes of events copied out and not
 * yet printed (doc/tools.md, "Live view"). */
#define LQ_BYTES_MAX ((size_t)64 << 20)
#define LQ_BLOCK_BYTES ((size_t)1 << 20)

/* One event copied out, inside a block: the info, then len bytes of data,
 * the next event at the following multiple of 8. */
struct lq_event {
    struct posix_trace_event_info info;
    size_t len;
    unsigned char data[];
};

/* A block of events, in the order the stream gave them. */
struct lq_block {
    struct lq_block *next;
    size_t used;               /* bytes of events in data */
    unsigned char data[];
};

struct lq;

/* Starts reading trid in a new thread; NULL (errno) when it cannot. */
struct lq *lq_start(trace_id_t trid);
/* The next block (waiting up to timeout_ms); NULL: none yet, or the end
 * (lq_done tells). The block is the caller's until lq_give_back. */
struct lq_block *lq_take(struct lq *q, int timeout_ms);
void lq_give_back(struct lq *q, struct lq_block *b);
/* The event at *off in b (advancing *off), NULL after the last. */
const struct lq_event *lq_next(const struct lq_block *b, size_t *off);
/* Whether nothing is waiting to be taken. */
int lq_empty(struct lq *q);
/* The stream was stopped: the reader reads what is left, queues it and
 * ends; lq_take then returns NULL once everything was taken. */
void lq_finish(struct lq *q);
/* Whether the reader ended and everything it read was taken. */
int lq_done(struct lq *q);
/* The reader's getnext error (0: none); it ends at one. */
int lq_error(struct lq *q);
/* Joins the reader (asked to end first, if lq_finish was not called) and frees. */
void lq_free(struct lq *q);

#endif
