/*
 * Flushing an active stream to its log (Trace Log option).
 *
 * A flush drains every writer slot's chain with the consumer iterator
 * (consume.c, an extent at a time): the committed records since the last
 * flush are copied, as they are, into EVENTS blocks (one block per chunk
 * fragment, with the writer's pid, thread and the anchor in effect), consumed
 * chunks go back to the pool, and the events the trace system reports itself
 * (FLUSH_START/STOP, OVERFLOW, RESUME, STOP and START of a full stream) go
 * into a block of their own. Then the names not yet written and the status.
 * Ordering across slots is the log reader's job: it merges by timestamp.
 *
 * posix_trace_flush() and shutdown flush in the calling thread; with the
 * stream-full policy FLUSH a thread started here flushes whenever writers
 * find an eighth of the stream in use (pt_flush_due; a futex in the stream)
 * and every 100 ms.
 * Writers never wait for it and never touch the file.
 */
#include "../internal.h"
#include "logpack.h"
#include "logwrite.h"

/* EVENTS blocks hold 32-byte records (log_format.h), struct pt_rec. */
_Static_assert(sizeof(struct pt_rec) == PT_LOGF_REC_HDR, "record header size");
_Static_assert(offsetof(struct pt_rec, commit) == PT_LOGF_R_COMMIT &&
                   offsetof(struct pt_rec, id) == PT_LOGF_R_ID &&
                   offsetof(struct pt_rec, ts) == PT_LOGF_R_TS &&
                   offsetof(struct pt_rec, addr) == PT_LOGF_R_ADDR &&
                   offsetof(struct pt_rec, len) == PT_LOGF_R_LEN &&
                   offsetof(struct pt_rec, flags) == PT_LOGF_R_FLAGS,
               "record header fields");
#include <stdlib.h>
#include <string.h>

#define SYS_MAX 64 /* system events in one flush... */
#define SYS_RESERVE 6 /* ...and room kept for those that frame and end it */
#define SYS_CAP (SYS_MAX + SYS_RESERVE)

#define PT_LOGW_BATCH_MAX 256u
#define PT_FLUSH_PERIOD_NS  (100 * 1000 * 1000)   /* the flusher looks this often */
#define PT_FLUSH_PARTIAL_NS (1000 * 1000 * 1000)  /* open chunks flushed this often */

/* A system event of a flush: its record and data, the anchor it is converted
 * with, and whether a later flush writes it ("Held system events" below). */
struct pt_sysev {
    struct pt_rec r;            /* 32-byte record */
    uint32_t len;
    struct pt_stamp at;         /* converted with this anchor (has_a 0: emit's) */
    uint64_t hold;              /* 0: this flush writes it; else the chunks begun before it */
    bool fresh;                 /* held by this flush, which may have drained before it */
    unsigned char data[sizeof(trace_event_set_t)];
};

struct pt_flush {
    struct pt_logw *w;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;       /* one flush at a time */
    _Atomic uint32_t clearing;  /* clears waiting for the lock: flushes let them in */
    _Atomic uint32_t flushing;  /* an explicit flush is under way */
    _Atomic uint32_t quit;
    int dropped;                /* events were discarded: the log is full */
    struct pt_sysev sys[SYS_CAP]; /* system events of this flush, and those held */
    uint32_t nsys;
    uint32_t sys_dropped;       /* system events left out: more than SYS_MAX */
    int error;                  /* the first write of this flush that failed, 0 */
    uint32_t moved;             /* fragments of slots in this flush */
    uint32_t budget;            /* chunks this flush may still follow */
    uint64_t seq_limit;         /* chunks begun before this flush: seq below it */
    uint64_t left_seq;          /* the drain took every record of the chunks of seq below it */
    bool cut;                   /* the budget or the limit stopped a chain */
    uint32_t first_slot;        /* where the next flush starts (round robin) */
    struct pt_pack pk;          /* the PACKED block being filled */
    unsigned char *scratch;     /* LOOP: a fragment copied before packing */
};

/* A write failed: the log records it in a STATUS block if it can (one more,
 * or over the last one: logwrite.c), with the flush error and the losses. */
static void record_failure(struct pt_handle *h, struct pt_flush *f)
{
    struct posix_trace_status_info st;
    pt_stream_status(h, &st, false);
    pt_logw_status_after_error(f->w, &st, pt_lost_for_status(h));
}

/* Write the batch. The events of the blocks a failed write took with it
 * (this one, or one made inside the writer: names, status) are lost: the
 * writer counted them block by block (pt_logw_take_lost). */
static int commit(struct pt_handle *h, struct pt_flush *f)
{
    int rc = pt_logw_commit(f->w);
    int err = pt_logw_take_error(f->w);
    if (err != 0) {
        uint64_t lost = pt_logw_take_lost(f->w);
        if (lost != 0) {
            atomic_fetch_add(&h->shm->lost, lost);
            atomic_store(&h->shm->overrun, 1);
        }
        pt_logw_status(f->w)->log_overrun = POSIX_TRACE_OVERRUN;
        record_failure(h, f);
        if (f->error == 0)
            f->error = err;
    }
    return rc != 0 ? rc : err;
}

/* Close the PACKED block being filled, if any. */
static void pack_close(struct pt_flush *f)
{
    if (f->pk.p != NULL) {
        pt_logw_seal_len(f->w, f->pk.n);
        f->pk.p = NULL;
    }
}

/* Room for one more block in the batch (closes the PACKED block). */
static void make_room(struct pt_handle *h, struct pt_flush *f)
{
    pack_close(f);
    if (pt_logw_batch_full(f->w))
        commit(h, f);
}

static uint64_t now_ticks(struct pt_shm *s)
{
    return pt_ticks(s->clock_mode);
}

/* FLUSH_START, FLUSH_STOP, STOP: the events that frame and end a flush. */
static bool frames_flush(trace_event_id_t id)
{
    return id == POSIX_TRACE_FLUSH_START || id == POSIX_TRACE_FLUSH_STOP ||
           id == POSIX_TRACE_STOP;
}

/* A system event stamped `at->ts`, converted to ns with `at`'s anchor when
 * it has one (a gap's events: the same conversion as the event they precede),
 * else with the anchor read when the system events are written. */
static void add_sys_at(struct pt_flush *f, trace_event_id_t id, const struct pt_stamp *at,
                       const void *d, uint32_t len)
{
    bool framing = frames_flush(id) || id == POSIX_TRACE_ERROR;
    if (f->nsys >= (framing ? SYS_CAP : SYS_MAX)) {
        f->sys_dropped++; /* said by an ERROR event (sys_overflowed) */
        return;
    }
    struct pt_sysev *e = &f->sys[f->nsys++];
    memset(e, 0, offsetof(struct pt_sysev, data));
    e->r.id = id;
    e->r.ts = at->ts;
    e->r.len = len;
    e->at = *at;
    e->len = len;
    if (len)
        memcpy(e->data, d, len);
}

static void add_sys(struct pt_flush *f, trace_event_id_t id, uint64_t ts, const void *d,
                    uint32_t len)
{
    struct pt_stamp at = { .ts = ts };
    add_sys_at(f, id, &at, d, len);
}

/* System events were left out of this flush (more than SYS_MAX: gaps of
 * many writer slots at once): an ERROR event with ENOBUFS says so. */
static void sys_overflowed(struct pt_handle *h, struct pt_flush *f)
{
    if (f->sys_dropped == 0)
        return;
    f->sys_dropped = 0;
    int e = ENOBUFS;
    add_sys(f, POSIX_TRACE_ERROR, now_ticks(h->shm), &e, sizeof e);
}

/* Does sys event i need an ANCHOR record before it (anchor `cur` in effect)? */
static bool sys_anchor_changes(const struct pt_flush *f, uint32_t i, const struct pt_stamp *cur)
{
    const struct pt_stamp *a = &f->sys[i].at;
    return a->a_ticks != cur->a_ticks || a->a_ns != cur->a_ns;
}

static uint32_t sys_size(const struct pt_flush *f, uint32_t i)
{
    return PT_REC_HDR + pt_round8(f->sys[i].len);
}

/* Does system event a go before b: those this flush writes first, then
 * those held, each in timestamp order. */
static bool sys_before(const struct pt_sysev *a, const struct pt_sysev *b)
{
    if ((a->hold == 0) != (b->hold == 0))
        return a->hold == 0;
    return (int64_t)(a->r.ts - b->r.ts) < 0;
}

/* System events in that order (insertion sort: a handful). */
static void sort_sys(struct pt_flush *f)
{
    for (uint32_t i = 1; i < f->nsys; i++) {
        for (uint32_t j = i; j > 0 && sys_before(&f->sys[j], &f->sys[j - 1]); j--) {
            struct pt_sysev e = f->sys[j];
            f->sys[j] = f->sys[j - 1];
            f->sys[j - 1] = e;
        }
    }
}

/*
 * Held system events. A stream's losses and the stop and restart of a full
 * stream (system_events) are stamped after events recorded before them that
 * a flush may leave in the stream: a look with a budget, a chunk begun
 * during the flush, an open chunk, a record being written. Such a report is
 * written by the first flush whose drain took every record of the chunks
 * begun before it, so never in a block older than one of those events: a
 * LOOP log, which overwrites its oldest blocks first, that keeps an event
 * from before a gap keeps the report of the gap (doc/log-format.md, "What
 * the writer guarantees"). The log's last flush writes all.
 */
static void hold_new(struct pt_handle *h, struct pt_flush *f, uint32_t from)
{
    uint64_t seq = atomic_load(&h->shm->chunk_seq); /* the chunks begun so far */
    for (uint32_t i = from; i < f->nsys; i++) {
        f->sys[i].hold = seq;
        f->sys[i].fresh = true;
    }
}

/* The held events this flush writes: those whose chunks its drain took
 * (when held by this flush, only if nothing was recorded from the start of
 * the drain to then: `quiet`), or all in the log's last flush. Returns how
 * many system events it writes. */
static uint32_t release_held(struct pt_flush *f, bool quiet)
{
    const struct pt_logw_status *ls = pt_logw_status(f->w);
    bool last = ls->stopped || ls->closing;
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->nsys; i++) {
        struct pt_sysev *e = &f->sys[i];
        if (e->hold != 0 && (last || ((!e->fresh || quiet) && f->left_seq >= e->hold)))
            e->hold = 0;
        n += e->hold == 0;
    }
    return n;
}

/* Write the system events as EVENTS blocks of slot 0xFFFF. In TSC mode an
 * ANCHOR record goes before an event converted with another anchor than the
 * one in effect (a gap's events carry the anchor of the event they precede). */
static int emit_sys(struct pt_handle *h, struct pt_flush *f)
{
    struct pt_shm *s = h->shm;
    sort_sys(f);
    uint32_t n = 0; /* those written: the first n */
    while (n < f->nsys && f->sys[n].hold == 0)
        n++;
    bool tsc = s->clock_mode == PT_CLOCK_TSC;
    struct pt_stamp now = { .has_a = tsc };
    if (tsc)
        now.a_ticks = pt_tsc_pair(CLOCK_REALTIME, &now.a_ns);
    for (uint32_t i = 0; i < n; i++)
        if (!tsc || !f->sys[i].at.has_a)
            f->sys[i].at = (struct pt_stamp){ f->sys[i].r.ts, tsc, now.a_ticks, now.a_ns };
    uint32_t i = 0, max = pt_logw_payload_max(f->w);
    while (i < n) {
        struct pt_stamp cur = f->sys[i].at; /* the block header's anchor */
        uint32_t size = 0, k = i;
        for (struct pt_stamp a = cur; k < n; k++) {
            uint32_t need = sys_size(f, k) + (sys_anchor_changes(f, k, &a) ? PT_REC_HDR : 0);
            if (size + need > max)
                break;
            size += need;
            a = f->sys[k].at;
        }
        make_room(h, f);
        struct pt_logw_block b = {
            .type = PT_LOG_EVENTS, .payload_len = size, .slot = PT_LOG_SYS_SLOT,
            .pid = s->target_pid, .anchor_ticks = cur.a_ticks, .anchor_ns = cur.a_ns,
        };
        unsigned char *p = pt_logw_block(f->w, &b);
        for (; i < k; i++) {
            if (sys_anchor_changes(f, i, &cur)) {
                cur = f->sys[i].at;
                struct pt_rec a = { .id = 0, .ts = cur.a_ticks, .addr = (uint64_t)cur.a_ns };
                atomic_store_explicit(&a.commit, PT_LOGF_COMMIT(PT_LOGF_REC_ANCHOR, PT_REC_HDR),
                                      memory_order_relaxed);
                memcpy(p, &a, PT_REC_HDR);
                p += PT_REC_HDR;
            }
            uint32_t rs = sys_size(f, i);
            struct pt_rec r = f->sys[i].r;
            atomic_store_explicit(&r.commit, PT_LOGF_COMMIT(PT_LOGF_REC_EVENT, rs), memory_order_relaxed);
            memcpy(p, &r, PT_REC_HDR);
            memset(p + PT_REC_HDR, 0, rs - PT_REC_HDR);
            memcpy(p + PT_REC_HDR, f->sys[i].data, f->sys[i].len);
            p += rs;
        }
        pt_logw_seal(f->w);
    }
    f->nsys -= n; /* the held ones wait for a later flush */
    memmove(f->sys, f->sys + n, f->nsys * sizeof *f->sys);
    return 0;
}

static bool log_full(struct pt_handle *h, struct pt_flush *f);

/* A new PACKED block for slot i, written by the chunk's writer. */
static void pack_open(struct pt_handle *h, struct pt_flush *f, uint32_t i,
                      const struct pt_chunk *ch)
{
    make_room(h, f);
    struct pt_pack *pk = &f->pk;
    struct pt_logw_block b = {
        .type = PT_LOG_PACKED, .payload_len = pt_logw_payload_max(f->w), .slot = i,
        .pid = ch->pid, .thread = ch->thread, .anchor_ticks = pt_pack_anchor_ticks(pk),
        .anchor_ns = pk->has_a ? pk->a_ns : 0,
    };
    pk->slot = i;
    pk->pid = ch->pid;
    pk->thread = ch->thread;
    pt_pack_begin(pk, pt_logw_block(f->w, &b), b.payload_len);
}

/*
 * The common records, packed without the general decoding: from src + off
 * on, while each is a COMPACT record of a defined class of fixed length
 * (commit word first) and its largest encoding fits in the open block.
 * Returns the offset of the first record it did not take (the general path
 * takes and checks it); *events counts those it took. The same bytes as
 * pt_chain_peek + pt_pack_put give (the same pt_pack_event_head; the
 * classes were checked when their CLASS records were decoded), with the
 * block's and the decoder's state in registers for a run of records, and
 * a loop of its own for records of the class just packed (a loop's call
 * site): 81 instructions an event in all instead of 210
 * (posix_trace_flush of one call site's 16-byte events, callgrind), so
 * that the flusher keeps up with a writer recording back to back
 * (bench/README.md, "bench_log").
 */
__attribute__((noinline)) /* a frame of its own: 2 % fewer instructions than inlined */
static uint32_t pack_run(struct pt_pack *pk, struct pt_dec *d, const unsigned char *src,
                         uint32_t off, uint32_t n, uint32_t *events)
{
    if (pk->p == NULL)
        return off;
    unsigned char *out = pk->p;
    uint32_t used = pk->n, room = pk->max, id = pk->id, got = 0;
    uint64_t last = pk->ts, addr = pk->addr, prev = d->prev, defined = d->defined;
    while (off < n) {
        uint32_t c = pt_rd32(src + off), k = PT_COMMIT_CLASS(c);
        if (k == 0 || !((defined >> k) & 1) || d->cls[k].varlen)
            break;
        const struct pt_rclass *cl = &d->cls[k];
        uint32_t len = cl->len, size = 4 + pt_round4(len);
        if (size > n - off || room - used < PT_PACK_HEAD_MAX + len)
            break;
        uint64_t ts = prev + (c & (PT_DELTA_LIMIT - 1));
        unsigned char *o = out + used;
        uint32_t h = pt_pack_event_head(o, PT_PACK_EVENT, ts, cl->id, cl->addr, len, last, id,
                                        addr);
        pt_copy_inline(o + h, src + off + 4, len); /* no call: the state stays in registers */
        used += h + len;
        prev = ts;
        id = cl->id;
        addr = cl->addr;
        off += size;
        got++;
        /* the same class again (a loop's call site): only the stamp moves,
         * by the record's delta, and the head is what pt_pack_event_head
         * gives then (same id and address, zigzag of a delta >= 0) */
        const uint32_t same = c & ~(PT_DELTA_LIMIT - 1);
        while (off < n) {
            uint32_t c2 = pt_rd32(src + off);
            if ((c2 & ~(PT_DELTA_LIMIT - 1)) != same || size > n - off ||
                room - used < PT_PACK_HEAD_MAX + len)
                break;
            uint32_t delta = c2 & (PT_DELTA_LIMIT - 1);
            o = out + used;
            o[0] = PT_PACK_EVENT | PT_PACK_SAME_ID;
            h = 1 + pt_pack_varint(o + 1, (uint64_t)delta << 1);
            h += pt_pack_varint(o + h, len);
            pt_copy_inline(o + h, src + off + 4, len);
            used += h + len;
            prev += delta;
            off += size;
            got++;
        }
        last = prev;
    }
    pk->n = used;
    pk->ts = last;
    pk->id = id;
    pk->addr = addr;
    d->prev = prev;
    *events += got;
    return off;
}

/*
 * Pack the records [r->off, to) of slot i's chunk into PACKED blocks,
 * continuing the slot's open block when the writer is the same. A LOOP
 * stream's stealers may take the chunk: copy it first, then check it was
 * not stolen meanwhile (-1: nothing packed). The records were checked by
 * the iterator's walk, but the memory is the writers': each is checked
 * again as it is read, and *bad set at one that no longer passes. Returns the events left
 * out because an UNTIL_FULL log filled (counted lost by the caller).
 */
static int64_t pack_fragment(struct pt_handle *h, struct pt_flush *f, uint32_t i,
                             struct pt_chunk *ch, uint32_t to, bool *bad)
{
    struct pt_shm *s = h->shm;
    struct pt_rslot *r = &h->rs[i];
    struct pt_pack *pk = &f->pk;
    uint32_t from = r->off, n = to - from;
    const unsigned char *src = (const unsigned char *)pt_rec_at(ch, from);
    if (s->stream_policy == POSIX_TRACE_LOOP) {
        memcpy(f->scratch, src, n);
        if (pt_cons_stolen(&pt_slots(s)[i], r))
            return -1;
        src = f->scratch;
    }
    if (pk->p != NULL && (pk->slot != i || pk->pid != ch->pid || pk->thread != ch->thread))
        pack_close(f);
    if (pk->p == NULL) { /* the anchor in effect where the fragment starts */
        pk->has_a = r->has_anchor;
        pk->a_ticks = r->anchor_ts;
        pk->a_ns = r->anchor_ns;
    }
    int64_t left_out = 0;
    bool full = false;
    uint32_t packed = 0; /* events in the open block since the last count */
    for (uint32_t off = 0; off < n;) {
        if (!full && from % 4 == 0) { /* records keep offsets 4-aligned */
            off = pack_run(pk, &h->decs[i], src, off, n, &packed);
            if (off >= n)
                break;
        }
        /* read once: writers' memory (the commit word was read with acquire by the walk) */
        uint32_t c = pt_rd32(src + off);
        struct pt_drec o = { 0 };
        if (!pt_chain_peek(s, &h->decs[i], src + off, c, from + off, &o) || o.size > n - off) {
            *bad = true;
            break;
        }
        pt_dec_apply(&h->decs[i], &o);
        off += o.size;
        if (o.type == PT_REC_CLASS)
            continue;
        bool anchor = o.type == PT_REC_ANCHOR;
        struct pt_rec rec = { .id = anchor ? 0 : o.id, .ts = o.ts, .addr = o.addr,
                              .len = anchor ? 0 : o.len, .flags = anchor ? 0 : o.flags };
        const unsigned char *data = src + off - o.size + (anchor ? 0 : o.doff);
        if (!full && !pt_pack_put(pk, &rec, anchor, data)) {
            pt_logw_count_events(f->w, packed); /* the block being left's */
            packed = 0;
            full = log_full(h, f);
            if (!full) {
                pack_open(h, f, i, ch);
                if (!pt_pack_put(pk, &rec, anchor, data)) {
                    *bad = true; /* larger than a block: not a record a writer makes */
                    break;
                }
            }
        }
        if (full && !anchor)
            left_out++;
        else if (!anchor)
            packed++;
    }
    pt_logw_count_events(f->w, packed); /* in this block: lost if its write fails */
    r->has_anchor = pk->has_a;
    r->anchor_ts = pk->a_ticks;
    r->anchor_ns = pk->a_ns;
    return left_out;
}

/*
 * Room in an UNTIL_FULL log, which never grows past log-max-size. A flush
 * writes PACKED blocks, then its "tail": the system events, the names not
 * yet written and a STATUS block.
 * - A PACKED block is opened only if the tail still fits after it, with
 *   PT_SYS_LATE bytes for system events added later in the flush; else the
 *   log is full and the flush is the last (log_full).
 * - A flush that is not the last leaves PT_STOP_BLOCKS free for the one that
 *   stops the stream (an EVENTS block for FLUSH_START, FLUSH_STOP and STOP,
 *   a STATUS block); else it is the last itself (log_fits).
 * - The last flush sheds what does not fit (fit_tail): the other system
 *   events first (the losses stay counted in the STATUS block), then the
 *   names. So every flush starts with PT_STOP_BLOCKS free, and the last fits.
 */
#define PT_STOP_BLOCKS 2u
#define PT_SYS_LATE (8u * (2 * PT_REC_HDR + 8) + (uint32_t)sizeof(trace_event_set_t))

/* At most the EVENTS blocks emit_sys writes for the system events so far and
 * `extra` bytes more: each may need an ANCHOR record, and a block may end
 * short of the largest. */
static uint64_t sys_blocks(const struct pt_flush *f, uint64_t extra)
{
    uint64_t bytes = extra;
    for (uint32_t i = 0; i < f->nsys; i++)
        bytes += PT_REC_HDR + sys_size(f, i);
    uint64_t usable = pt_logw_payload_max(f->w) - 2 * PT_REC_HDR - sizeof(trace_event_set_t);
    return (bytes + usable - 1) / usable;
}

static uint64_t tail_blocks(struct pt_handle *h, const struct pt_flush *f, uint64_t extra,
                            bool names)
{
    return sys_blocks(f, extra) + (names ? pt_logw_names_blocks(f->w, h->shm) : 0) + 1;
}

/* No room for another PACKED block (the one being filled counts: its
 * blocks are counted when sealed). */
static bool log_full(struct pt_handle *h, struct pt_flush *f)
{
    if (pt_logw_status(f->w)->stopped)
        return true;
    uint64_t room = pt_logw_room(f->w);
    uint64_t open = f->pk.p != NULL;
    return room != UINT64_MAX && room <= open + tail_blocks(h, f, PT_SYS_LATE, true);
}

/* After this flush, room is left for the one that stops the stream. */
static bool log_fits(struct pt_handle *h, struct pt_flush *f)
{
    uint64_t room = pt_logw_room(f->w);
    return room == UINT64_MAX || room >= tail_blocks(h, f, 0, true) + PT_STOP_BLOCKS;
}

/* Keep only the system events that frame and end the last flush. */
static void keep_stop_events(struct pt_flush *f)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->nsys; i++) {
        if (!frames_flush(f->sys[i].r.id))
            continue;
        if (n != i)
            f->sys[n] = f->sys[i];
        n++;
    }
    f->nsys = n;
}

/* The tail must fit in the room left: shed what does not. Returns whether
 * the names are written. */
static bool fit_tail(struct pt_handle *h, struct pt_flush *f)
{
    uint64_t room = pt_logw_room(f->w);
    if (room == UINT64_MAX || room >= tail_blocks(h, f, 0, true))
        return true;
    keep_stop_events(f);
    return room >= tail_blocks(h, f, 0, true);
}

/* A LOOP gap in slot i's chain: OVERFLOW (the count) and RESUME just before
 * the first event kept after it, with its stamp converted as it is (the log
 * reader puts slot 0xFFFF first among equal stamps). */
static void gap_events(struct pt_handle *h, struct pt_flush *f, struct pt_rslot *r,
                       const struct pt_stamp *first)
{
    uint64_t n = r->gap;
    r->gap = 0;
    h->lost_reported += n;
    if (!pt_loss_plausible(h, n)) { /* a steal count written by anyone */
        int e = EBADMSG;
        add_sys_at(f, POSIX_TRACE_ERROR, first, &e, sizeof e);
        return;
    }
    add_sys_at(f, POSIX_TRACE_OVERFLOW, first, &n, sizeof n);
    add_sys_at(f, POSIX_TRACE_RESUME, first, NULL, 0);
}

/* What drain_slot's taker needs besides the extent. */
struct take_ctx {
    struct pt_flush *f;
    uint64_t *lost_full;
};

/* Take an extent of slot i into the batch (pt_cons_take): false when it was
 * stolen while copied. */
static bool take_extent(struct pt_handle *h, uint32_t i, struct pt_cons_extent *x, void *ctx)
{
    struct take_ctx *c = ctx;
    struct pt_flush *f = c->f;
    struct pt_rslot *r = &h->rs[i];
    int64_t left_out = pack_fragment(h, f, i, x->ch, x->to, &x->bad);
    if (left_out < 0)
        return false;
    if (left_out > 0) {
        *c->lost_full += (uint64_t)left_out; /* "not yet flushed shall be discarded" */
        f->dropped = 1;
    }
    if (r->gap != 0 && (uint64_t)left_out < x->nev)
        gap_events(h, f, r, &x->first);
    f->moved++;
    return true;
}

/* Flush slot i: closed chunks always, the open chunk's committed part when
 * `partial`; the chunks begun since the flush began are the next one's. */
static void drain_slot(struct pt_handle *h, struct pt_flush *f, uint32_t i, bool partial,
                       uint64_t *lost_full)
{
    struct take_ctx c = { f, lost_full };
    struct pt_cons_drain d = {
        .partial = partial, .seq_limit = f->seq_limit, .budget = &f->budget,
        .left_seq = &f->left_seq, .take = take_extent, .ctx = &c,
    };
    if (pt_cons_drain(h, i, &d) == PT_CONS_CUT)
        f->cut = true;
}

/* A system event of this flush (gaps.c): `when` is its stamp in ticks. */
static void put_sys(struct pt_handle *h, trace_event_id_t id, uint64_t when, const void *d,
                    uint32_t len)
{
    add_sys(h->log, id, when, d, len);
}

/* Losses, internal errors, and the stop and restart of a full stream
 * (`drained`: it may restart). A stream that is full reports its losses at
 * its restart. Returns whether it restarted. */
static bool system_events(struct pt_handle *h, struct pt_flush *f, bool drained)
{
    struct pt_shm *s = h->shm;
    uint64_t now = now_ticks(s);
    uint32_t st = atomic_load(&s->state);
    if (st == PT_ST_FULL && !h->stop_reported) {
        int aut = 1;
        add_sys(f, POSIX_TRACE_STOP, atomic_load(&s->full_ts), &aut, sizeof aut);
        h->stop_reported = 1;
    }
    if (st == PT_ST_FULL)
        return drained && !pt_logw_status(f->w)->stopped && pt_restart_full(h, put_sys, now);
    uint64_t lost = atomic_load(&s->lost);
    if (atomic_load(&s->state) != PT_ST_FULL) /* else: at its restart */
        pt_report_losses(h, put_sys, now, lost);
    return false;
}

/* The log filled (UNTIL_FULL): the stream stops, STOP is the last event
 * (after the FLUSH_STOP of an explicit flush). */
static void log_filled(struct pt_handle *h, struct pt_flush *f, bool marked)
{
    struct pt_logw_status *ls = pt_logw_status(f->w);
    if (ls->stopped)
        return;
    ls->stopped = 1;
    ls->log_full = POSIX_TRACE_FULL;
    struct pt_shm *s = h->shm;
    uint32_t run = PT_ST_RUNNING;
    atomic_compare_exchange_strong(&s->state, &run, PT_ST_SUSPENDED);
    if (h->att >= 0) {
        atomic_store(&pt_att[h->att].running, 0);
        pt_want_update();
    }
    int aut = 1;
    uint64_t now = now_ticks(s);
    if (marked)
        add_sys(f, POSIX_TRACE_FLUSH_STOP, now, NULL, 0);
    add_sys(f, POSIX_TRACE_STOP, now + 1, &aut, sizeof aut);
}

void pt_flush_status(struct pt_handle *h, struct posix_trace_status_info *st, bool reset)
{
    struct pt_flush *f = h->log;
    struct pt_logw_status *ls = pt_logw_status(f->w);
    st->posix_stream_flush_status = atomic_load(&f->flushing) ? POSIX_TRACE_FLUSHING
                                                              : POSIX_TRACE_NOT_FLUSHING;
    st->posix_stream_flush_error = ls->flush_error;
    st->posix_log_overrun_status = ls->log_overrun;
    st->posix_log_full_status = ls->log_full;
    if (reset) {
        ls->flush_error = 0;
        ls->log_overrun = POSIX_TRACE_NO_OVERRUN;
    }
}

/* A full UNTIL_FULL log takes nothing more: drain the stream, count the
 * events as lost, write nothing. */
static void drain_all(struct pt_handle *h, struct pt_flush *f, bool partial, uint64_t *lost,
                      uint32_t budget)
{
    pt_reap_dead_writers(h);
    f->budget = budget;
    f->seq_limit = atomic_load(&h->shm->chunk_seq);
    f->left_seq = UINT64_MAX;
    f->cut = false;
    uint32_t hwm = atomic_load(&h->shm->slots_hwm);
    if (hwm > PT_NSLOTS)
        hwm = PT_NSLOTS;
    /* each flush starts one slot further, so that a budget spent on one
     * fast writer's chain is not always spent before the same others */
    uint32_t first = hwm != 0 ? f->first_slot++ % hwm : 0;
    for (uint32_t k = 0; k < hwm; k++)
        drain_slot(h, f, (first + k) % hwm, partial, lost);
    pack_close(f);
}

static void discard_all(struct pt_handle *h, struct pt_flush *f, bool partial)
{
    struct pt_shm *s = h->shm;
    uint64_t lost = 0;
    drain_all(h, f, partial, &lost, UINT32_MAX);
    f->nsys = 0;
    f->sys_dropped = 0;
    if (lost) {
        atomic_fetch_add(&s->lost, lost);
        h->lost_reported += lost;
        pt_logw_status(f->w)->log_overrun = POSIX_TRACE_OVERRUN;
    }
    commit(h, f); /* writes nothing */
}

/* Take the flush lock, after any posix_trace_clear() waiting for it: a
 * mutex lets a thread that flushes in a loop take it again and again before
 * a waiting clear gets its turn (seconds, seen with two threads flushing). */
static void lock_after_clears(struct pt_flush *f)
{
    for (int i = 0; i < 100; i++) { /* at most about a second */
        uint32_t c = atomic_load(&f->clearing);
        if (c == 0)
            break;
        struct timespec dl;
        pt_ns_to_ts(pt_realtime_ns() + 10 * 1000 * 1000, &dl);
        pt_futex_wait(&f->clearing, c, &dl);
    }
    pthread_mutex_lock(&f->lock);
}

/* A full stream may restart once this much of it is free: "The trace system
 * shall restart the trace stream when it is empty and may restart it sooner"
 * (posix_trace_attr_getinherited.3p.txt, stream-full-policy UNTIL_FULL, which
 * FLUSH follows); sooner, so that a flusher stalled for a while costs the
 * events recorded until a quarter is free, not a whole stream's worth. */
static bool quarter_free(struct pt_shm *s)
{
    return atomic_load_explicit(&s->used, memory_order_relaxed) <= s->cap - s->cap / 4;
}

/* One flush. `partial`: also the open chunks' committed records; `marked`:
 * an explicit flush, framed by FLUSH_START and FLUSH_STOP. It takes the
 * chunks begun before it started, following at most `budget` of them from
 * one to the next. */
static int flush_run(struct pt_handle *h, bool partial, bool marked, uint32_t budget)
{
    struct pt_flush *f = h->log;
    struct pt_shm *s = h->shm;
    lock_after_clears(f);
    if (pt_logw_status(f->w)->stopped) {
        discard_all(h, f, partial);
        pthread_mutex_unlock(&f->lock);
        return 0;
    }
    uint64_t lost_full = 0;
    bool restarted = false; /* its STATUS says so, even with the report held */
    f->moved = 0;
    f->error = 0;
    if (marked)
        add_sys(f, POSIX_TRACE_FLUSH_START, now_ticks(s), NULL, 0);
    bool quiet = atomic_load(&s->state) != PT_ST_RUNNING; /* nothing recorded meanwhile... */
    drain_all(h, f, partial, &lost_full, budget);
    quiet = quiet && atomic_load(&s->state) != PT_ST_RUNNING; /* ...as far as we can tell */
    if (f->dropped) { /* the log filled: STOP is its last event */
        log_filled(h, f, marked);
        pt_logw_status(f->w)->log_overrun = POSIX_TRACE_OVERRUN;
        atomic_fetch_add(&s->lost, lost_full);
        h->lost_reported += lost_full;
        f->dropped = 0;
    } else {
        uint32_t from = f->nsys;
        restarted = system_events(h, f, partial && (!f->cut || quarter_free(s)));
        hold_new(h, f, from);
        if (marked)
            add_sys(f, POSIX_TRACE_FLUSH_STOP, now_ticks(s), NULL, 0);
        if ((marked || restarted || f->moved != 0 || release_held(f, quiet) != 0) &&
            !log_fits(h, f))
            log_filled(h, f, false); /* the next flush would not fit: this is the last */
    }
    int rc = 0;
    uint32_t ready = release_held(f, quiet); /* all, if this flush is the log's last */
    if (marked || restarted || f->moved != 0 || ready != 0) { /* an idle look writes nothing */
        sys_overflowed(h, f);
        bool names = fit_tail(h, f);
        rc = emit_sys(h, f);
        if (rc == 0 && names)
            rc = pt_logw_names(f->w, s);
        if (rc == 0) {
            struct posix_trace_status_info st;
            pt_logw_predict_wrap(f->w, 1);
            pt_stream_status(h, &st, false);
            rc = pt_logw_status_block(f->w, &st, pt_lost_for_status(h));
        }
    }
    for (uint32_t i = 0; i < f->nsys; i++)
        f->sys[i].fresh = false; /* held: a later drain comes after them */
    commit(h, f);
    rc = f->error != 0 ? f->error : rc; /* any write of this flush */
    pthread_mutex_unlock(&f->lock);
    return rc;
}

int pt_flush_run(struct pt_handle *h, bool partial, bool marked)
{
    return flush_run(h, partial, marked, UINT32_MAX);
}

/* The chunks one look of the flusher thread may follow (each flush takes
 * only chunks begun before it, see drain_slot): of a full stream, a quarter,
 * after which it restarts. */
static uint32_t look_budget(struct pt_shm *s)
{
    return atomic_load(&s->state) == PT_ST_FULL ? s->nchunks / 4 : UINT32_MAX;
}

int pt_flush_look(struct pt_handle *h, bool partial)
{
    if (atomic_load(&h->shm->state) == PT_ST_FULL)
        partial = true; /* open chunks too; it restarts once a quarter is free */
    return flush_run(h, partial, false, look_budget(h->shm));
}

static void *flusher_main(void *arg)
{
    struct pt_handle *h = arg;
    struct pt_flush *f = h->log;
    struct pt_shm *s = h->shm;
    int64_t last_partial = pt_realtime_ns();
    while (!atomic_load(&f->quit)) {
        struct timespec dl;
        pt_ns_to_ts(pt_realtime_ns() + PT_FLUSH_PERIOD_NS, &dl);
        if (atomic_load(&s->flush_req) == 0)
            pt_futex_wait(&s->flush_req, 0, &dl);
        /* 1 while busy: writers switching chunks leave it be and make no
         * wake-up call (record.c) */
        atomic_store(&s->flush_req, 1);
        if (atomic_load(&f->quit))
            break;
        /* open chunks too, now and then, so that a quiet stream reaches the log */
        int64_t now = pt_realtime_ns();
        bool partial = now - last_partial >= PT_FLUSH_PARTIAL_NS;
        if (partial)
            last_partial = now;
        pt_flush_look(h, partial);
        if (f->moved != 0 && pt_flush_due(s))
            continue; /* still busy: go again without sleeping */
        atomic_store(&s->flush_req, 0);
        atomic_thread_fence(memory_order_seq_cst);
        if (f->moved != 0 && pt_flush_due(s)) /* filled meanwhile: a writer saw 1 */
            atomic_store(&s->flush_req, 1);
    }
    return NULL;
}

int pt_flush_open(struct pt_handle *h, int fd)
{
    struct pt_flush *f = calloc(1, sizeof *f);
    if (f == NULL)
        return ENOMEM;
    f->scratch = malloc(h->shm->chunk_size);
    if (f->scratch == NULL) {
        free(f);
        return ENOMEM;
    }
    int rc = pt_logw_create(fd, h->shm, &f->w);
    if (rc != 0) {
        free(f->scratch);
        free(f);
        return rc;
    }
    pthread_mutex_init(&f->lock, NULL);
    h->log = f;
    return 0;
}

/* The stream-full policy FLUSH: start the flusher thread. */
int pt_flush_start_thread(struct pt_handle *h)
{
    struct pt_flush *f = h->log;
    if (pthread_create(&f->thread, NULL, flusher_main, h) != 0)
        return EAGAIN;
    pt_block_flusher(h->shm); /* blocking writers wait for it (block.c) */
    pthread_setname_np(f->thread, "posixtrace-log");
    f->started = 1;
    return 0;
}

/* posix_trace_flush(): flush now, in the calling thread. */
int pt_flush_now(struct pt_handle *h)
{
    struct pt_flush *f = h->log;
    atomic_store(&f->flushing, 1);
    int rc = pt_flush_run(h, true, true);
    atomic_store(&f->flushing, 0);
    return rc;
}

/* Shutdown: stop the thread, flush everything, close the log. */
int pt_flush_close(struct pt_handle *h)
{
    struct pt_flush *f = h->log;
    if (f->started) {
        atomic_store(&f->quit, 1);
        atomic_store(&h->shm->flush_req, 1);
        pt_futex_wake(&h->shm->flush_req, 1);
        pthread_join(f->thread, NULL);
    }
    pt_logw_status(f->w)->closing = 1; /* its STATUS blocks say the log ends */
    int rc = pt_flush_run(h, true, true);
    pthread_mutex_destroy(&f->lock);
    pt_logw_destroy(f->w);
    free(f->scratch);
    free(f);
    h->log = NULL;
    return rc;
}

/* posix_trace_clear() on a stream with log: the log starts over. */
int pt_flush_clear(struct pt_handle *h)
{
    struct pt_flush *f = h->log;
    atomic_fetch_add(&f->clearing, 1); /* flushes wait for us (lock_after_clears) */
    pthread_mutex_lock(&f->lock); /* the flusher uses the same read positions */
    atomic_fetch_sub(&f->clearing, 1);
    pt_futex_wake(&f->clearing, INT32_MAX);
    pt_reader_drain(h);
    for (uint32_t i = 0; i < PT_NSLOTS; i++)
        h->rs[i].gap = 0;
    f->nsys = 0;
    f->sys_dropped = 0;
    f->dropped = 0;
    int rc = pt_logw_reset(f->w); /* drops the batch */
    pthread_mutex_unlock(&f->lock);
    return rc;
}
