/*
 * Trace-log reader: the events, merged across writer slots.
 *
 * Each slot (writer) has a cursor over its EVENTS and PACKED blocks in seq
 * order; the cursor holds one block's payload at a time (read with one pread
 * and checked again) and stands on its next event, decoded. A binary heap of
 * the cursors, keyed by (ts, slot), gives the next event of the log
 * (doc/log-format.md, "Order of events").
 */
#include "logread_int.h"

#include <errno.h>
#include <stdlib.h>
#include <trace.h>

#include "../ring/clock.h"

#define LR_HOLD_NS (100 * 1000 * 1000) /* as the live reader: doc/semantics.md */

static int by_slot_seq(const void *a, const void *b)
{
    const struct lr_block *x = a, *y = b;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void lr_events_free(struct pt_logr *l)
{
    for (uint32_t i = 0; i < l->ncur; i++)
        free(l->cur[i].buf);
    free(l->cur);
    free(l->heap);
    free(l->ev);
}

/* Builds the cursors over the EVENTS blocks among all[0..n) (unique seqs). */
int lr_events_index(struct pt_logr *l, const struct lr_block *all, size_t n)
{
    size_t ne = 0;
    for (size_t i = 0; i < n; i++)
        ne += lr_is_events(all[i].type);
    l->ev = malloc((ne ? ne : 1) * sizeof *l->ev);
    if (l->ev == NULL)
        return ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (lr_is_events(all[i].type))
            l->ev[l->nev++] = all[i];
    if (l->nev > 1)
        qsort(l->ev, l->nev, sizeof *l->ev, by_slot_seq);
    uint32_t nslots = 0;
    for (size_t i = 0; i < l->nev; i++)
        nslots += i == 0 || l->ev[i].slot != l->ev[i - 1].slot;
    l->cur = calloc(nslots ? nslots : 1, sizeof *l->cur);
    l->heap = malloc((nslots ? nslots : 1) * sizeof *l->heap);
    if (l->cur == NULL || l->heap == NULL)
        return ENOMEM;
    for (size_t i = 0; i < l->nev; i++) {
        if (i == 0 || l->ev[i].slot != l->ev[i - 1].slot) {
            struct lr_cursor *c = &l->cur[l->ncur++];
            c->slot = l->ev[i].slot;
            c->first = i;
        }
        l->cur[l->ncur - 1].end = i + 1;
    }
    return 0;
}

/* Loads the first block from index i on that reads back intact; 0 if none.
 * The scan decoded its payload whole; read back with the same checksum, it
 * is that payload, so it is not decoded twice here: cur_next decodes it, with
 * every check, and stops at a record that fails them (only a file changed
 * since the scan that kept the block's XXH3 could have one). */
static int cur_load(struct pt_logr *l, struct lr_cursor *c, size_t i)
{
    for (; i < c->end; i++) {
        const struct lr_block *b = &l->ev[i];
        if (lr_read_block(l, b, &c->buf, &c->cap, false) != 0) {
            lr_note_bad(l, b->off); /* changed since the scan, or no memory */
            continue;
        }
        c->blk = i;
        c->off = 0;
        c->plen = b->plen;
        c->a_ticks = b->a_ticks ? b->a_ticks : l->h.tick0;
        c->a_ns = b->a_ticks ? b->a_ns : l->h.real0_ns;
        c->type = b->type;
        c->ps = (struct lr_pstate){ .ts = b->a_ticks, .addr = 0, .id = 0 };
        return 1;
    }
    c->blk = c->end;
    return 0;
}

/* Moves c onto its next event (from c->off on, past anchors): 1, or 0 at
 * the end of the slot. */
static int cur_next(struct pt_logr *l, struct lr_cursor *c)
{
    for (;;) {
        while (c->off < c->plen) {
            const unsigned char *r = c->buf + LR_BLK_HDR + c->off;
            uint32_t left = c->plen - c->off;
            uint32_t size = c->type == LR_PACKED
                                ? lr_packed_rec(r, left, l->max_len, &c->ps, &c->rec)
                                : lr_raw_rec(r, left, l->max_len, &c->rec);
            if (size == 0) { /* not as the scan found it: the rest is skipped */
                lr_note_bad(l, l->ev[c->blk].off);
                c->off = c->plen;
                break;
            }
            if (c->rec.kind == PT_LOGF_REC_EVENT)
                return 1;
            c->a_ticks = c->rec.ts;
            c->a_ns = (int64_t)c->rec.addr;
            c->off += size;
        }
        if (c->blk >= c->end || !cur_load(l, c, c->blk + 1))
            return 0;
    }
}

/* ---- the heap of cursors ---- */
/* Among equal stamps the trace system's own events (slot 0xFFFF) come first:
 * a gap's OVERFLOW and RESUME carry the stamp of the event after the gap. */
static uint32_t tie_rank(uint32_t slot)
{
    return slot == LR_SLOT_SYS ? 0 : slot + 1;
}

static int before(const struct pt_logr *l, uint32_t a, uint32_t b)
{
    const struct lr_cursor *x = &l->cur[a], *y = &l->cur[b];
    int64_t d = (int64_t)(x->rec.ts - y->rec.ts);
    return d != 0 ? d < 0 : tie_rank(x->slot) < tie_rank(y->slot);
}

static void sift_down(struct pt_logr *l, uint32_t i)
{
    uint32_t *h = l->heap, n = l->nheap;
    for (;;) {
        uint32_t m = i, a = 2 * i + 1, b = a + 1;
        if (a < n && before(l, h[a], h[m]))
            m = a;
        if (b < n && before(l, h[b], h[m]))
            m = b;
        if (m == i)
            return;
        uint32_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void prime(struct pt_logr *l)
{
    l->nheap = 0;
    for (uint32_t i = 0; i < l->ncur; i++) {
        struct lr_cursor *c = &l->cur[i];
        if (cur_load(l, c, c->first) && cur_next(l, c))
            l->heap[l->nheap++] = i;
    }
    for (uint32_t i = l->nheap / 2; i-- > 0;)
        sift_down(l, i);
    l->primed = 1;
}

void pt_logr_rewind(struct pt_logr *l)
{
    l->primed = 0;
    l->nheap = 0;
    l->last_ns = INT64_MIN;
}

/* ---- reporting one event ---- */

/* CLOCK_REALTIME ns of the event c stands on. */
static int64_t event_ns(const struct pt_logr *l, const struct lr_cursor *c)
{
    if (l->h.clock_mode != 1)
        return (int64_t)c->rec.ts;
    return pt_ns_after(c->a_ns, (int64_t)(c->rec.ts - c->a_ticks), l->h.ticks_per_ns);
}

/* Reported timestamps do not go back by less than LR_HOLD_NS. */
static int64_t hold(struct pt_logr *l, int64_t ns)
{
    if (ns < l->last_ns && (uint64_t)l->last_ns - (uint64_t)ns < LR_HOLD_NS)
        ns = l->last_ns;
    l->last_ns = ns;
    return ns;
}

static uint32_t report(struct pt_logr *l, const struct lr_cursor *c,
                       struct posix_trace_event_info *ev, void *data, size_t num, size_t *len)
{
    const unsigned char *r = c->buf + LR_BLK_HDR + c->off;
    const struct lr_block *b = &l->ev[c->blk];
    const struct lr_rec *rec = &c->rec;
    size_t n = data == NULL ? 0 : num < rec->len ? num : rec->len;
    ev->posix_event_id = rec->id;
    ev->posix_pid = (pid_t)b->pid;
    ev->posix_prog_address = (void *)(uintptr_t)rec->addr;
    ev->posix_thread_id = (pthread_t)b->thread;
    pt_ns_to_ts(hold(l, event_ns(l, c)), &ev->posix_timestamp);
    ev->posix_truncation_status = n < rec->len ? POSIX_TRACE_TRUNCATED_READ
                                  : (rec->flags & 1u) ? POSIX_TRACE_TRUNCATED_RECORD
                                  : POSIX_TRACE_NOT_TRUNCATED;
    if (n != 0)
        memcpy(data, r + rec->data, n);
    *len = n;
    return rec->size;
}

int pt_logr_next(struct pt_logr *l, struct posix_trace_event_info *ev, void *data,
                 size_t num, size_t *len, int *unavailable)
{
    if (l == NULL || ev == NULL || len == NULL || unavailable == NULL)
        return EINVAL;
    if (!l->primed)
        prime(l);
    if (l->nheap == 0) {
        *len = 0;
        *unavailable = 1;
        return 0;
    }
    struct lr_cursor *c = &l->cur[l->heap[0]];
    c->off += report(l, c, ev, data, num, len);
    if (!cur_next(l, c))
        l->heap[0] = l->heap[--l->nheap];
    sift_down(l, 0);
    *unavailable = 0;
    return 0;
}
