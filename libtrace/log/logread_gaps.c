/*
 * Trace-log reader: blocks missing, and whether the log was closed
 * (doc/log-format.md "Order of blocks", "What a reader reports").
 *
 * A correct writer numbers its blocks 1, 2, ... with no gap, even when a
 * write fails, so the valid blocks of a log hold every seq up to the newest
 * (a LOOP log: the newest n, n its block positions; the older ones were
 * overwritten). A seq that no valid block holds is a block missing, unless
 * an invalid block found in the file accounts for it. Removing the newest
 * blocks leaves no gap: the writer's last STATUS block says it is final and
 * how many blocks follow it, and a log that does not end so is "not closed"
 * (its writer was killed, is still writing it, or its end was removed).
 */
#include "logread_int.h"

#include <limits.h>

/* The seq of the log's last block, as its final STATUS block says; 0 when
 * the newest valid STATUS block is not final. */
static uint64_t final_end(const struct pt_logr *l)
{
    uint64_t tail = l->status_flags >> LR_STATUS_TAIL_SHIFT;
    if (l->status_seq == 0 || !(l->status_flags & LR_STATUS_FINAL) ||
        l->status_seq > UINT64_MAX - tail)
        return 0;
    return l->status_seq + tail;
}

/* all: the n valid blocks by seq, one per seq; bad: the invalid blocks found
 * in the file. Sets l->missing and l->closed. */
void lr_gaps(struct pt_logr *l, const struct lr_block *all, size_t n, long long bad)
{
    uint64_t newest = n > 0 ? all[n - 1].seq : 0, end = final_end(l), lo = 1;
    l->closed = end != 0 && end >= newest;
    if (!l->closed)
        end = newest;
    if ((l->h.flags & 1u) && end > lr_loop_positions(&l->h))
        lo = end - lr_loop_positions(&l->h) + 1;
    uint64_t present = 0;
    for (size_t i = 0; i < n; i++)
        present += all[i].seq >= lo && all[i].seq <= end;
    uint64_t absent = end >= lo ? end - lo + 1 - present : 0;
    uint64_t accounted = bad > 0 ? (uint64_t)bad : 0;
    absent = absent > accounted ? absent - accounted : 0;
    l->missing = absent > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)absent;
}
