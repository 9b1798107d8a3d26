/*
 * The recording path: posix_trace_event() and the system events.
 *
 * Lock-free, allocation-free, system-call-free (but for waking a reader that
 * sleeps, and, with blocking writers on, waiting for room in a full stream:
 * block.c; at a chunk switch, a gettid() now and then, clone.c, and mapping a
 * never-used chunk in a process other than the creator, pool.c),
 * async-signal-safe. Each (thread, stream, nesting level) owns a
 * writer slot whose chain of chunks only it appends to, so recording an
 * event is a plain single-producer write:
 *   1. store the timestamp, then PENDING in the commit word (release);
 *   2. write the record body at the cursor's wpos in the current chunk: a
 *      compact record of the event's class, the class defined first if its
 *      call site has none in the chunk yet, or an EVENT record (recfmt.h);
 *   3. store 0 into the commit word just after it (the next record's);
 *   4. store the record's commit word (release).
 * A reader that sees a commit word also sees everything written before it.
 * Shared words are written once per chunk (pool pop, chunk_seq), never per event.
 *
 * The write cursor (struct pt_wcur: chunk, position, end, anchor) is this
 * process's own memory, never the shared slot: every process of a stream can
 * write the slot, and a cursor read from there would let one make another
 * write where it chooses. Every chunk index taken from shared memory (the
 * pool, a steal, an adopted slot) is checked against the geometry of the
 * process's private first page (pt_shm_check) before it is used.
 */
#include "../internal.h"
#include "tagged.h"
#include <posixtrace/events.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct pt_wcur pt_wcurs[PT_MAX_ATTACH * PT_NSLOTS];

/*
 * The writers' class caches (ring.h), one per cursor, are mapped when the
 * process first takes a slot (16 MiB of address space, MAP_NORESERVE, a
 * cursor's 1 KiB touched as it is used) rather than in the library's bss,
 * which every traced program maps when it loads, under whatever memory
 * limit it runs. A cursor that gets none records EVENT records.
 */
struct pt_wclass pt_wcache_none[PT_WCACHE]; /* never written */
static _Atomic(struct pt_wclass *) wcache_area;

static struct pt_wclass *wcache_for(uint32_t k)
{
    struct pt_wclass *a = atomic_load_explicit(&wcache_area, memory_order_acquire);
    if (a == NULL) {
        size_t n = sizeof *a * PT_WCACHE * PT_MAX_ATTACH * PT_NSLOTS;
        void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
                       MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            return pt_wcache_none;
        if (atomic_compare_exchange_strong(&wcache_area, &a, (struct pt_wclass *)m))
            a = m;
        else
            munmap(m, n); /* another thread's is in place (a) */
    }
    return a + (size_t)k * PT_WCACHE;
}

void pt_wake_readers(struct pt_shm *s)
{
    if (atomic_exchange_explicit(&s->waiters, 0, memory_order_acq_rel) != 0) {
        atomic_fetch_add_explicit(&s->wake_seq, 1, memory_order_release);
        pt_futex_wake(&s->wake_seq, 1 << 30);
    }
}

void pt_note_loss(struct pt_shm *s, uint64_t n, uint32_t err)
{
    atomic_fetch_add_explicit(&s->lost, n, memory_order_relaxed);
    atomic_store_explicit(&s->overrun, 1, memory_order_relaxed);
    if (err != 0) {
        uint32_t zero = 0;
        atomic_compare_exchange_strong(&s->error_pending, &zero, err);
    }
}

/* UNTIL_FULL: the stream stops by itself when it has no space left. */
static void mark_full(struct pt_shm *s, uint64_t ts)
{
    uint32_t run = PT_ST_RUNNING;
    /* where this period's losses start, for the reader's per-gap counts */
    atomic_store(&s->full_lost, atomic_load(&s->lost));
    if (atomic_compare_exchange_strong(&s->state, &run, PT_ST_FULL)) {
        atomic_store(&s->full_ts, ts);
        atomic_fetch_add_explicit(&s->wake_seq, 1, memory_order_release);
        pt_futex_wake(&s->wake_seq, 1 << 30);
        if (s->has_log) {
            atomic_store(&s->flush_req, 1);
            pt_futex_wake(&s->flush_req, 1);
        }
    }
}

/* LOOP: take the oldest closed chunk at the head of any slot's chain. */
static uint32_t steal_oldest(struct pt_shm *s)
{
    uint32_t hwm = atomic_load_explicit(&s->slots_hwm, memory_order_acquire);
    for (int attempt = 0; attempt < 8; attempt++) {
        uint32_t best = PT_NONE;
        uint64_t best_rh = 0, best_seq = UINT64_MAX;
        for (uint32_t i = 0; i < hwm && i < PT_NSLOTS; i++) {
            uint64_t rh = atomic_load_explicit(&pt_slots(s)[i].rhead, memory_order_acquire);
            uint32_t c = (uint32_t)rh;
            if (c >= s->nchunks)
                continue;
            struct pt_chunk *ch = pt_chunk(s, c);
            if (atomic_load_explicit(&ch->next, memory_order_acquire) == PT_NONE)
                continue; /* open: its writer is still filling it */
            if (ch->seq < best_seq) {
                best_seq = ch->seq;
                best = i;
                best_rh = rh;
            }
        }
        if (best == PT_NONE)
            return PT_NONE;
        struct pt_slot *v = &pt_slots(s)[best];
        struct pt_chunk *ch = pt_chunk(s, (uint32_t)best_rh);
        uint32_t next = atomic_load_explicit(&ch->next, memory_order_acquire);
        uint64_t nrh = pt_tag_next(best_rh, next);
        if (next != PT_NONE &&
            atomic_compare_exchange_strong(&v->rhead, &best_rh, nrh)) {
            uint64_t n = atomic_load_explicit(&ch->nrec, memory_order_relaxed);
            /* the reader turns this into an exact loss count (reader.c) */
            atomic_fetch_add_explicit(&v->stolen, PT_STEAL_ONE | n, memory_order_release);
            atomic_store_explicit(&s->overrun, 1, memory_order_relaxed);
            return (uint32_t)best_rh;
        }
    }
    return PT_NONE;
}

/* LOOP: make room for w more bytes in closed chunks by taking the oldest:
 * the first taken becomes the writer's new chunk, any further one goes back
 * to the pool. PT_NONE: no room could be made (all closed chunks in flight). */
static uint32_t steal_room(struct pt_shm *s, uint32_t w)
{
    uint32_t got = PT_NONE;
    for (uint32_t n = 0; n < s->nchunks; n++) {
        uint32_t c = steal_oldest(s);
        if (c == PT_NONE)
            break;
        if (got == PT_NONE) {
            pt_used_refund(s, atomic_load_explicit(&pt_chunk(s, c)->end, memory_order_relaxed));
            got = c;
        } else {
            pt_pool_push(s, c); /* gives its bytes back */
        }
        if (pt_used_charge(s, w))
            return got;
    }
    if (got != PT_NONE) { /* refunded already: back to the pool uncharged */
        atomic_store_explicit(&pt_chunk(s, got)->end, 0, memory_order_relaxed);
        pt_pool_push(s, got);
    }
    return PT_NONE;
}

/* A chunk from the pool for a writer closing one of w written bytes (0: its
 * first), the bytes charged to the cap first. PT_NONE: the cap is reached
 * (or, never before it, the pool is empty). */
static uint32_t take_free(struct pt_shm *s, uint32_t w)
{
    if (pt_used_charge(s, w)) {
        uint32_t c = pt_pool_pop(s);
        if (c != PT_NONE)
            return c;
        pt_used_refund(s, w);
    }
    return PT_NONE;
}

static inline unsigned char *rec_at_pos(struct pt_shm *s, uint64_t pos)
{
    return (unsigned char *)s + pos;
}

static inline _Atomic uint32_t *commit_at_pos(struct pt_shm *s, uint64_t pos)
{
    return pt_commit_at(rec_at_pos(s, pos));
}

/* Tell the reader a record stamped ts is being written at pos: it reports
 * no later-stamped event until the commit word changes (ts 0: stamp unknown,
 * it reports nothing). */
static inline void announce(struct pt_shm *s, uint64_t pos, uint64_t ts)
{
    unsigned char *r = rec_at_pos(s, pos);
    atomic_store_explicit((_Atomic uint64_t *)pt_pending_ts(r), ts, memory_order_relaxed);
    atomic_store_explicit(pt_commit_at(r), PT_COMMIT(PT_REC_PENDING, 0), memory_order_release);
}

static void init_chunk(struct pt_shm *s, struct pt_slot *sl, const struct pt_wcur *w,
                       uint32_t idx, uint32_t c, uint64_t ts)
{
    struct pt_chunk *ch = pt_chunk(s, c);
    atomic_store_explicit(&ch->next, PT_NONE, memory_order_relaxed);
    ch->slot = idx;
    ch->slot_gen = atomic_load_explicit(&sl->gen, memory_order_relaxed);
    ch->seq = atomic_fetch_add_explicit(&s->chunk_seq, 1, memory_order_relaxed);
    atomic_store_explicit(&ch->nrec, 0, memory_order_relaxed);
    ch->pid = w->pid;
    ch->thread = sl->thread; /* a label, as the pid */
    ch->ts0 = ts;
    announce(s, pt_chunk_data_off(s, c), ts); /* visible once linked */
}

/* Blocking writers (block.c): the stream is full and its consumer may make
 * room; wait for it, at most the stream's timeout. The record announced at
 * the cursor is withdrawn meanwhile, so that the consumer goes on reporting
 * (and giving back) what other writers stamped after it, and announced
 * again with a new stamp in *ts: the event is stamped when it finds room,
 * still within its call. PT_NONE: no room came in time, or nobody will
 * make it. */
static uint32_t wait_room(struct pt_shm *s, struct pt_wcur *cur, uint32_t w, uint64_t *ts)
{
    int64_t deadline = pt_block_deadline(s);
    bool announced = cur->wend != 0; /* as write_event did */
    _Atomic uint32_t *commit = commit_at_pos(s, cur->wpos);
    for (;;) {
        if (announced)
            atomic_store_explicit(commit, 0, memory_order_release);
        int rc = pt_block_nap(s, w, deadline);
        *ts = pt_ticks(s->clock_mode);
        if (announced)
            announce(s, cur->wpos, *ts);
        if (rc != 0)
            return PT_NONE;
        uint32_t c = take_free(s, w);
        if (c != PT_NONE)
            return c;
    }
}

/* The next chunk of a writer closing one of w written bytes: from the pool;
 * else, with blocking on, what the consumer gives back in time (an
 * outermost call of a thread only: a signal handler may have interrupted
 * a record of its own thread, which holds the reader back); else LOOP
 * steals. PT_NONE: the stream is full (or stopped while the writer
 * waited). *ts: the event's stamp, new if it waited. */
static uint32_t take_chunk(struct pt_shm *s, struct pt_wcur *cur, struct pt_thread *t,
                           uint32_t w, uint64_t *ts)
{
    uint32_t c = take_free(s, w);
    if (c != PT_NONE)
        return c;
    if (w != 0 && t != NULL && atomic_load_explicit(&t->nest, memory_order_relaxed) == 1 &&
        pt_block_may(s)) {
        c = wait_room(s, cur, w, ts);
        if (c != PT_NONE ||
            atomic_load_explicit(&s->state, memory_order_relaxed) != PT_ST_RUNNING)
            return c;
    }
    return s->stream_policy == POSIX_TRACE_LOOP ? steal_room(s, w) : PT_NONE;
}

/* Close the current chunk and continue in a new one, for thread t (NULL: a
 * controller's slot). False: no space, or a raw thread shares t's slot. */
static bool switch_chunk(struct pt_shm *s, struct pt_slot *sl, struct pt_wcur *cur,
                         struct pt_thread *t, uint64_t *tsp)
{
    if (unlikely(pt_shm_ctrl_dead(s))) {
        pt_inbox_ring_self(); /* the next event detaches the stream */
        return false;
    }
    if (t != NULL && unlikely(pt_thread_foreign(t))) {
        pt_thread_shared_seen(s, cur->nrec, t); /* clone.c */
        return false;
    }
    uint32_t old = cur->wchunk;
    uint32_t w = old == PT_NONE ? 0 : (uint32_t)(cur->wpos - pt_chunk_data_off(s, old));
    uint32_t c = take_chunk(s, cur, t, w, tsp);
    uint64_t ts = *tsp;
    if (c == PT_NONE) {
        if (s->stream_policy != POSIX_TRACE_LOOP)
            mark_full(s, ts);
        return false;
    }
    if (s->stream_policy == POSIX_TRACE_FLUSH && pt_flush_due(s) &&
        atomic_load_explicit(&s->flush_req, memory_order_relaxed) == 0 &&
        atomic_exchange(&s->flush_req, 1) == 0)
        pt_futex_wake(&s->flush_req, 1); /* the flusher drains it */
    uint32_t idx = (uint32_t)(sl - pt_slots(s));
    init_chunk(s, sl, cur, idx, c, ts);
    if (old != PT_NONE) {
        struct pt_chunk *och = pt_chunk(s, old);
        atomic_store_explicit(&och->nrec, cur->nrec, memory_order_relaxed);
        atomic_store_explicit(&och->end, w, memory_order_relaxed); /* what was charged */
        /* END before next: a chunk with a next is finished for good. */
        atomic_store_explicit(commit_at_pos(s, cur->wpos), PT_COMMIT(PT_REC_END, PT_END_BYTES),
                              memory_order_release);
        atomic_store_explicit(&och->next, c, memory_order_release);
    } else {
        uint64_t rh = atomic_load_explicit(&sl->rhead, memory_order_relaxed);
        atomic_store_explicit(&sl->rhead, pt_tag_next(rh, c), memory_order_release);
    }
    sl->wchunk = c; /* published: for an adopter, and the reported size (stream.c) */
    cur->wchunk = c;
    cur->nrec = 0;
    cur->wpos = pt_chunk_data_off(s, c);
    cur->wend = cur->wpos + pt_chunk_room(s);
    cur->anchor_ts = ts - PT_ANCHOR_TICKS; /* the first record gets an anchor */
    cur->prev_ts = ts;                     /* the chunk's ts0 */
    cur->ncls = 0;
    if (cur->cache != pt_wcache_none)
        memset(cur->cache, 0, PT_WCACHE * sizeof *cur->cache);
    return true;
}

/* Publish the last record of an event, of `size` bytes at pos, its body
 * written: 0 into the next record's commit word, then this one's `commit`
 * (release). */
static inline void publish(struct pt_shm *s, uint64_t pos, uint32_t size, uint32_t commit)
{
    atomic_store_explicit(commit_at_pos(s, pos + size), 0, memory_order_relaxed);
    atomic_store_explicit(commit_at_pos(s, pos), commit, memory_order_release);
}

/* A compact event at pos (room checked by the caller): its class's header
 * bytes (hdr: 4, or 8 for VARLEN) and commit word (word: the class, and the
 * delta in ticks after the previous event). */
static inline void put_compact_at(struct pt_shm *s, uint64_t pos, uint32_t hdr, uint32_t word,
                                  uint64_t ts, const void *data, uint32_t len)
{
    unsigned char *r = rec_at_pos(s, pos);
    announce(s, pos, ts);
    if (hdr != 4)
        (void)pt_enc_compact(r, true, len); /* VARLEN: the length after the commit word */
    pt_copy_inline(r + hdr, data, len); /* no call: the straight path stays a leaf */
    publish(s, pos, hdr + pt_round4(len), word);
}

/* A record that goes before the event stamped ts (an ANCHOR, a CLASS) at
 * the cursor: the event is announced past it before it is published. */
static void put_aux(struct pt_shm *s, struct pt_wcur *cur, uint32_t type, uint32_t size,
                    const unsigned char body[], uint64_t ts)
{
    uint64_t pos = cur->wpos;
    memcpy(rec_at_pos(s, pos) + 4, body + 4, size - 4);
    cur->wpos = pos + size;
    announce(s, cur->wpos, ts);
    atomic_store_explicit(commit_at_pos(s, pos), PT_COMMIT(type, size), memory_order_release);
}

/* An anchor pairs the tick counter with CLOCK_REALTIME for the reader. */
static void write_anchor(struct pt_shm *s, struct pt_wcur *cur, uint64_t ts)
{
    int64_t ns;
    unsigned char b[PT_ANCHOR_BYTES];
    uint64_t t = pt_tsc_pair(CLOCK_REALTIME, &ns);
    pt_enc_anchor(b, t, ns);
    put_aux(s, cur, PT_REC_ANCHOR, PT_ANCHOR_BYTES, b, ts);
    cur->anchor_ts = t;
}

/* How an event is written (write_event): compact with a class (cl; `define`:
 * defined first, in slot cl), or as an EVENT record (cl NULL). */
struct plan {
    struct pt_wclass *cl;
    bool define;
    bool varlen;
    uint32_t size;
};

static void plan_event(struct pt_wcur *cur, trace_event_id_t id, uint64_t ts, uint64_t addr,
                       uint32_t len, uint32_t rflags, struct plan *p)
{
    struct pt_wclass *cl = &cur->cache[pt_wcache_at(addr, id)];
    bool site = pt_wcache_site(&cl->c, addr, id);
    p->cl = NULL;
    p->define = false;
    if (rflags == 0 && ts - cur->prev_ts < PT_DELTA_LIMIT && cur->cache != pt_wcache_none) {
        if (pt_wclass_takes(cl, addr, id, len)) {
            p->cl = cl;
            p->varlen = cl->c.varlen;
        } else if (cur->ncls < PT_NCLASS) {
            p->cl = cl;
            p->define = true;
            p->varlen = site; /* the site's length varies: VARLEN from now on */
        }
    }
    p->size = p->cl ? pt_compact_size(p->varlen, len) + (p->define ? PT_CLASS_BYTES : 0)
                    : PT_FULL_HDR + pt_round4(len);
}

/* The event as planned, at the cursor (room checked). */
static void put_event(struct pt_shm *s, struct pt_wcur *cur, const struct plan *p,
                      trace_event_id_t id, uint64_t ts, uint64_t addr, const void *data,
                      uint32_t len, uint32_t rflags)
{
    if (p->cl == NULL) {
        uint64_t pos = cur->wpos;
        unsigned char *r = rec_at_pos(s, pos);
        uint32_t size = PT_FULL_HDR + pt_round4(len);
        announce(s, pos, ts);
        pt_enc_full(r, id, rflags, len, ts, addr);
        pt_copy_small(r + PT_FULL_HDR, data, len);
        cur->wpos = pos + size;
        publish(s, pos, size, PT_COMMIT(PT_REC_EVENT, size));
    } else {
        if (p->define) {
            unsigned char b[PT_CLASS_BYTES];
            uint8_t cls = (uint8_t)++cur->ncls;
            *p->cl = (struct pt_wclass){
                .c = { .addr = addr, .len = len, .id = (uint16_t)id, .varlen = p->varlen,
                       .cls = cls },
                .key = p->varlen ? pt_wkey_var(id) : pt_wkey(id, len),
                .word = PT_COMPACT(cls, 0),
                .hdr = pt_compact_size(p->varlen, 0),
            };
            pt_enc_class(b, &p->cl->c);
            put_aux(s, cur, PT_REC_CLASS, PT_CLASS_BYTES, b, ts);
        }
        uint64_t pos = cur->wpos;
        cur->wpos = pos + pt_compact_size(p->varlen, len);
        put_compact_at(s, pos, p->cl->hdr, p->cl->word | (uint32_t)(ts - cur->prev_ts), ts, data,
                       len);
    }
    cur->prev_ts = ts;
}

/* The general case: chunk switch, anchors and classes as needed. A switch
 * that waited for room (block.c) gives the event a new stamp; a call's
 * duration in its payload stays the call's own, without the wait. */
static bool write_event(struct pt_shm *s, struct pt_slot *sl, struct pt_wcur *cur,
                        struct pt_thread *t, trace_event_id_t id, uint64_t ts,
                        const void *data, uint32_t len, uint64_t addr, uint32_t rflags)
{
    bool tsc = s->clock_mode == PT_CLOCK_TSC;
    bool anchor = ts - cur->anchor_ts >= PT_ANCHOR_TICKS;
    if (cur->wchunk != PT_NONE && cur->wend != 0)
        announce(s, cur->wpos, ts); /* before the chunk switch or the anchor */
    struct plan p;
    plan_event(cur, id, ts, addr, len, rflags, &p);
    uint64_t need = p.size + (anchor && tsc ? PT_ANCHOR_BYTES : 0);
    if (cur->wpos + need > cur->wend) {
        if (!switch_chunk(s, sl, cur, t, &ts)) {
            if (cur->wchunk != PT_NONE) /* withdraw the announcement */
                atomic_store_explicit(commit_at_pos(s, cur->wpos), 0, memory_order_release);
            return false;
        }
        anchor = true;
        plan_event(cur, id, ts, addr, len, rflags, &p);
    }
    if (anchor) {
        if (tsc)
            write_anchor(s, cur, ts);
        else
            cur->anchor_ts = ts;
    }
    put_event(s, cur, &p, id, ts, addr, data, len, rflags);
    cur->nrec++;
    return true;
}

/* The controller of stream s (attached here) died. A chunk switch is rare:
 * finding the attachment by scanning them is fine. */
bool pt_shm_ctrl_dead(struct pt_shm *s)
{
    for (int i = 0; i < (int)PT_MAX_ATTACH; i++)
        if (atomic_load_explicit(&pt_att[i].shm, memory_order_relaxed) == s)
            return pt_att_ctrl_dead(i);
    return false;
}

/* The chunk an adopted slot's writer was filling: the one the slot
 * published, or (its writer died in a chunk switch, between linking the new
 * chunk and publishing it) the chunk that one links to. PT_NONE: none, or
 * the published index is not a chunk of this stream (scribbled). */
static uint32_t adopted_chunk(struct pt_shm *s, struct pt_slot *sl)
{
    uint32_t c = sl->wchunk;
    for (int hop = 0; c < s->nchunks && hop < 2; hop++) {
        uint32_t n = atomic_load_explicit(&pt_chunk(s, c)->next, memory_order_acquire);
        if (n == PT_NONE)
            return c;
        c = n;
    }
    return PT_NONE;
}

/* An orphan's cursor, found again from the chunk itself (nothing of the
 * previous writer's cursor is in shared memory): its records are walked
 * from the chunk's start, each decoded and checked (pt_chain_peek), up to the
 * first commit word that is not a whole record. Its writer may have died in
 * the middle of a record (its process was killed, or exec'd while another
 * thread recorded): a record announced but never committed is withdrawn
 * and counted lost. The chunk switch that follows (wend 0) closes the chain
 * at the position found here. No chunk to continue: a new chain (the old
 * one, if any, is left to the reader). */
static void adopt_cursor(struct pt_shm *s, struct pt_slot *sl, struct pt_wcur *w)
{
    w->wchunk = adopted_chunk(s, sl);
    w->nrec = 0;
    if (w->wchunk == PT_NONE) {
        if (sl->wchunk != PT_NONE) /* another process wrote over the slot */
            pt_note_loss(s, 1, EBADMSG);
        return;
    }
    uint64_t base = pt_chunk_data_off(s, w->wchunk);
    uint32_t off = 0, room = pt_chunk_room(s);
    struct pt_dec d; /* sizes of compact events need the chunk's classes */
    pt_dec_reset(&d, 0);
    while (off < room) {
        unsigned char *r = rec_at_pos(s, base + off);
        uint32_t c = atomic_load_explicit(pt_commit_at(r), memory_order_acquire);
        struct pt_drec o;
        if (PT_COMMIT_TYPE(c) == PT_REC_PENDING) {
            if (atomic_compare_exchange_strong(pt_commit_at(r), &c, 0))
                pt_note_loss(s, 1, 0);
            break;
        }
        if (c == 0 || !pt_chain_peek(s, &d, r, c, off, &o) || off + o.size > room)
            break;
        pt_dec_apply(&d, &o);
        w->nrec += o.type == PT_REC_EVENT;
        off += o.size;
    }
    w->wpos = base + off;
}

static struct pt_slot *acquire_slot(struct pt_shm *s, struct pt_thread *t, uint32_t att,
                                    uint32_t level, struct pt_wcur **wp)
{
    for (int pass = 0; pass < 2; pass++) {
        uint32_t want = pass == 0 ? PT_SLOT_FREE : PT_SLOT_ORPHAN;
        for (uint32_t i = 0; i < PT_NSLOTS; i++) {
            struct pt_slot *sl = &pt_slots(s)[i];
            uint32_t st = want;
            if (atomic_load_explicit(&sl->state, memory_order_relaxed) != want ||
                !atomic_compare_exchange_strong(&sl->state, &st, PT_SLOT_OWNED))
                continue;
            atomic_fetch_add_explicit(&sl->gen, 1, memory_order_relaxed);
            struct pt_wcur *w = &pt_wcurs[att * PT_NSLOTS + i];
            w->cache = wcache_for(att * PT_NSLOTS + i);
            if (want == PT_SLOT_ORPHAN) {
                adopt_cursor(s, sl, w);
            } else {
                w->wchunk = PT_NONE;
                sl->wchunk = PT_NONE;
            }
            w->pid = pt_writer_id(t, &sl->pid_start);
            w->lim_user = (uint32_t)s->max_data + 1;
            w->lim_sys = PT_SYS_DATA_MAX + 1;
            w->clock = (uint16_t)s->clock_mode;
            sl->pid = w->pid;
            sl->thread = (uint64_t)pthread_self();
            w->wend = 0; /* new chunk first: an adopted chain gets one headed with our pid */
            *wp = w;
            uint32_t hwm = atomic_load(&s->slots_hwm);
            while (hwm < i + 1 && !atomic_compare_exchange_weak(&s->slots_hwm, &hwm, i + 1))
                ;
            t->slot[att][level] = (uint16_t)(att * PT_NSLOTS + i + 1);
            return sl;
        }
    }
    return NULL;
}

/* posixtrace_sys_call: the time from the call's start t0 (call clock) to the
 * event's timestamp ts (stream s's clock), in ns, into the payload's header.
 * The payload is the caller's own buffer (non-const at the API). */
static inline __attribute__((always_inline)) void put_duration(struct pt_shm *s, uint64_t ts,
                                                               uint64_t t0, const void *data)
{
    uint32_t m = atomic_load_explicit(&pt_call_mode, memory_order_acquire);
    int64_t d = (int64_t)((likely(s->clock_mode == m) ? ts : pt_ticks(m)) - t0);
    if (d < 0)
        d = 0;
    uint64_t ns = (uint64_t)(m == PT_CLOCK_TSC ? (int64_t)((double)d * pt_call_ns_per_tick) : d);
    memcpy((char *)data + offsetof(struct posixtrace_call_hdr, duration_ns), &ns, 8);
}

static bool filtered(struct pt_shm *s, trace_event_id_t id)
{
    return (atomic_load_explicit(&s->filter[id >> 6], memory_order_relaxed) >> (id & 63)) & 1;
}

/* Before thread t takes a slot in stream s (attachment att): a raw clone
 * child becomes a process of its own first (it may lose s: a stream not
 * inherited); an entry a raw thread shares takes no slot (clone.c); a vfork
 * child takes inherited streams only. False: no event recorded. */
static bool may_acquire(struct pt_shm *s, int att, struct pt_thread *t)
{
    if (unlikely(!pt_registry_live())) {
        pt_clone_adopt();
        if (atomic_load_explicit(&pt_att[att].shm, memory_order_relaxed) != s)
            return false; /* not inherited */
        t->epoch[att] = pt_att[att].epoch;
    }
    if (unlikely(pt_clone_lost)) {
        if (s->inheritance == POSIX_TRACE_INHERITED)
            pt_note_loss(s, 1, EAGAIN);
        return false;
    }
    if (unlikely(atomic_load_explicit(&t->shared, memory_order_relaxed))) {
        if ((uint32_t)syscall(SYS_gettid) == t->tid)
            pt_thread_forget(); /* this thread's next event takes a new entry */
        pt_note_loss(s, 1, 0);
        return false;
    }
    return pt_writer_takes(t, s);
}

/* Record one event into stream s (attachment att) from thread t, which is
 * marked busy (t->nest >= 1). */
static void record_one(struct pt_shm *s, int att, struct pt_thread *t, trace_event_id_t id,
                       const void *data, size_t len, uint64_t addr, unsigned flags, uint64_t t0)
{
    uint32_t level = atomic_load_explicit(&t->nest, memory_order_relaxed) - 1;
    if (unlikely(id > PT_ID_MAX)) {
        pt_note_loss(s, 1, EINVAL);
        return;
    }
    if (filtered(s, id))
        return;
    uint32_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (st != PT_ST_RUNNING && !(flags & PT_REC_FORCE && st == PT_ST_SUSPENDED)) {
        if (st == PT_ST_FULL)
            pt_note_loss(s, 1, 0);
        return;
    }
    if (t == &pt_threads[PT_MAX_THREADS - 1] || level >= PT_NEST) {
        pt_note_loss(s, 1, EAGAIN);
        return;
    }
    if (unlikely(t->epoch[att] != pt_att[att].epoch)) {
        memset(t->slot[att], 0, sizeof t->slot[att]);
        t->epoch[att] = pt_att[att].epoch;
    }
    uint16_t v = t->slot[att][level];
    if (unlikely(v == 0) && !may_acquire(s, att, t))
        return;
    struct pt_wcur *w = v ? &pt_wcurs[v - 1] : NULL;
    struct pt_slot *sl = v ? &pt_slots(s)[pt_slot_of(v)]
                           : acquire_slot(s, t, (uint32_t)att, level, &w);
    if (sl == NULL) {
        pt_note_loss(s, 1, EAGAIN);
        return;
    }
    uint32_t rflags = 0;
    size_t max = flags & PT_REC_SYS ? PT_SYS_DATA_MAX : s->max_data;
    if (len > max) {
        len = max;
        rflags = PT_RF_TRUNCATED;
    }
    uint64_t ts = pt_ticks(s->clock_mode);
    if (t0 != 0)
        put_duration(s, ts, t0, data);
    if (!write_event(s, sl, w, t, id, ts, data, (uint32_t)len, addr, rflags)) {
        pt_note_loss(s, 1, 0);
        return;
    }
    if (unlikely(atomic_load_explicit(&s->waiters, memory_order_relaxed) != 0))
        pt_wake_readers(s);
}

/*
 * Mark this thread busy (see process.c) around the recording. A thread with no
 * registry entry of its own (more than PT_MAX_THREADS - 1 at once) shares the
 * last one, atomically, and only counts its events as lost.
 */
static inline struct pt_thread *enter(void)
{
    struct pt_thread *t = pt_thread_self();
    if (t != NULL && unlikely(!pt_on_own_stack(t)))
        t = pt_thread_resolve(t); /* a raw thread on this TLS, or a new stack (clone.c) */
    if (unlikely(t == NULL)) {
        t = &pt_threads[PT_MAX_THREADS - 1];
        atomic_fetch_add(&t->nest, 1);
    } else {
        atomic_store_explicit(&t->nest, atomic_load_explicit(&t->nest, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
    atomic_signal_fence(memory_order_seq_cst);
    return t;
}

static inline void leave(struct pt_thread *t)
{
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&t->calls, atomic_load_explicit(&t->calls, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (unlikely(t == &pt_threads[PT_MAX_THREADS - 1]))
        atomic_fetch_sub(&t->nest, 1);
    else
        atomic_store_explicit(&t->nest, atomic_load_explicit(&t->nest, memory_order_relaxed) - 1,
                              memory_order_relaxed);
}

void pt_record(struct pt_shm *s, int att, trace_event_id_t id, const void *data, size_t len,
               uint64_t addr, unsigned flags)
{
    struct pt_thread *t = enter();
    record_one(s, att, t, id, data, len, addr, flags | PT_REC_SYS, 0);
    leave(t);
}

/* Would attachment i take event id? Process-local words only. */
static inline bool wanted(uint32_t i, trace_event_id_t id)
{
    if (!atomic_load_explicit(&pt_att[i].running, memory_order_relaxed))
        return false;
    if (unlikely(id > PT_ID_MAX))
        return true; /* counted as lost with EINVAL */
    uint64_t w = atomic_load_explicit(&pt_att[i].filter[id >> 6], memory_order_relaxed);
    return !((w >> (id & 63)) & 1);
}

/* Any number of streams, any nesting level, any id; flags PT_REC_SYS for
 * system events. */
__attribute__((noinline)) static void event_general(trace_event_id_t id, const void *data,
                                                    size_t len, uint64_t addr, unsigned flags,
                                                    uint64_t t0)
{
    struct pt_thread *t = enter();
    uint64_t mask = atomic_load_explicit(&pt_att_mask, memory_order_relaxed);
    while (mask != 0) {
        uint32_t i = (uint32_t)__builtin_ctzll(mask);
        mask &= mask - 1;
        if (!wanted(i, id))
            continue;
        /* loaded after enter(): see the grace period in process.c */
        struct pt_shm *s = atomic_load_explicit(&pt_att[i].shm, memory_order_acquire);
        if (s != NULL)
            record_one(s, (int)i, t, id, data, len, addr, flags, t0);
    }
    leave(t);
}

/*
 * The straight path and its exits. Every way off it is a tail call of at
 * most six arguments (all in registers) into one of the out-of-line
 * functions below, and it copies the data without calling memcpy
 * (pt_copy_inline): no call on the way, nothing recomputed. A stream not
 * stamped by the TSC leaves it for event_realtime, which reads its clock
 * and goes on the same way: with no call in it, the TSC path keeps more in
 * registers that need no saving (0.8 ns less per event, 12.2 against
 * 13.0, and 1.3 ns more in realtime mode, 29.6 against 28.3; six paired
 * runs each, clocksource tsc).
 * posix_trace_event runs about 153 instructions per 16-byte event
 * (callgrind), against 192 when the general path's calls sat inside the
 * straight one, and takes 2 ns less (bench/README, "Two writers on a
 * shared VM": the fewer instructions besides its TSC read, the less an
 * event loses on a shared core). The event's id and the recording flags
 * travel as one argument (id <= PT_ID_MAX < 1 << 16 there), an id and a
 * length too.
 */
#define PT_IDF(id, flags) ((uint32_t)(id) | (uint32_t)(flags) << 16)
#define PT_IDL(id, len) ((uint64_t)(id) | (uint64_t)(len) << 32)
/* p is a pointer to keep: GCC forgets how it was computed (an array's
 * base and an index) and so keeps one register instead of two. */
#define PT_OPAQUE(p) __asm__("" : "+r"(p))

/* The entry of a thread the straight path let through: it has one, and
 * records from its own stack. */
static inline struct pt_thread *fast_thread(void)
{
    return &pt_threads[pt_thread_index() - 1];
}

/* The end of a straight call: one call more, not busy any more. */
static inline void fast_leave(struct pt_thread *t)
{
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&t->calls, atomic_load_explicit(&t->calls, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&t->nest, 0, memory_order_relaxed);
}

/* Off the path before the thread was marked busy: a controller rang (the
 * inbox is read first), the thread has no entry or is not on its stack,
 * the call is nested in another (a signal handler's), several streams or
 * none are attached. */
__attribute__((noinline)) static void event_slow(uint32_t idf, const void *data, size_t len,
                                                 uint64_t addr, uint64_t t0)
{
    trace_event_id_t id = idf & 0xffffu;
    if (unlikely(pt_want_load(id) & PT_WANT_BELL)) {
        pt_inbox_refresh(); /* a controller posted or changed a stream */
        if (!(pt_want_load(id) & PT_WANT_ON))
            return;
    }
    event_general(id, data, len, addr, idf >> 16, t0);
}

/* Off the path with the thread marked busy, before anything was written:
 * the stream went away, the thread has no slot in it yet (or one of a
 * stream attached before), the stream is not running, or the data is
 * longer than its maximum. Unmarked, the general
 * path takes the event from the start. */
__attribute__((noinline)) static void event_redo(uint32_t idf, const void *data, size_t len,
                                                 uint64_t addr, uint64_t t0)
{
    struct pt_thread *t = fast_thread();
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&t->nest, 0, memory_order_relaxed);
    event_general(idf & 0xffffu, data, len, addr, idf >> 16, t0);
}

/* Off the path once stamped (ts): the class is not in the cursor's cache,
 * the delta or the anchor is due, or the chunk is full. The general write
 * into stream s with cursor w (of the level-0 slot), then the path's end. */
__attribute__((noinline)) static void event_write(struct pt_shm *s, struct pt_wcur *w,
                                                  uint64_t idl, uint64_t ts, const void *data,
                                                  uint64_t addr)
{
    struct pt_thread *t = fast_thread();
    uint16_t v = (uint16_t)(w - pt_wcurs + 1);
    if (!write_event(s, &pt_slots(s)[pt_slot_of(v)], w, t, (uint32_t)idl & 0xffffu, ts, data,
                     (uint32_t)(idl >> 32), addr, 0))
        pt_note_loss(s, 1, 0);
    if (unlikely(atomic_load_explicit(&s->waiters, memory_order_relaxed) != 0))
        pt_wake_readers(s);
    fast_leave(t);
}

/* A reader of s sleeps: wake it (still busy: s stays mapped), then end. */
__attribute__((noinline)) static void event_wake(struct pt_shm *s)
{
    pt_wake_readers(s);
    fast_leave(fast_thread());
}

static inline __attribute__((always_inline)) void
event_stamped(struct pt_shm *s, struct pt_thread *t, struct pt_wcur *w, trace_event_id_t id,
              const void *data, size_t len, uint64_t addr, uint64_t t0, uint64_t ts);

/* The straight path of a stream not stamped by the TSC: its clock read
 * here, so that the TSC path calls nothing and keeps its values in
 * registers that need no saving. */
__attribute__((noinline)) static void event_realtime(struct pt_shm *s, struct pt_wcur *w,
                                                     uint64_t idl, const void *data,
                                                     uint64_t addr, uint64_t t0)
{
    uint64_t ts = (uint64_t)pt_realtime_ns();
    event_stamped(s, fast_thread(), w, (uint32_t)idl & 0xffffu, data, (size_t)(idl >> 32), addr,
                  t0, ts);
}

/*
 * A wanted, valid event. The straight path: an outermost call of a thread
 * with an entry, one attached stream, running, the thread's level-0 slot
 * already acquired, data within max-data-size, the event's class in the
 * cursor's cache, its stamp within a delta of the previous one, room left
 * in the chunk and no anchor due. A stream not stamped by the TSC goes on
 * in event_realtime after the checks up to the stamp. Inlined into the system events'
 * entry points (sys_event: a call and a frame less per intercepted call);
 * event_wanted below for posix_trace_event.
 */
static inline __attribute__((always_inline)) void
event_wanted_inline(trace_event_id_t id, const void *data, size_t len, uint64_t addr,
                    uint8_t want, unsigned flags, uint64_t t0)
{
    uint64_t mask = atomic_load_explicit(&pt_att_mask, memory_order_relaxed);
    uint32_t ti = pt_thread_index();
    if (unlikely((want & PT_WANT_BELL) || ti == 0 || mask == 0 || (mask & (mask - 1)) != 0)) {
        event_slow(PT_IDF(id, flags), data, len, addr, t0);
        return;
    }
    struct pt_thread *t = &pt_threads[ti - 1];
    PT_OPAQUE(t);
    /* the stack first, before anything of t is written (clone.c) */
    if (unlikely(!pt_on_own_stack(t) || atomic_load_explicit(&t->nest, memory_order_relaxed))) {
        event_slow(PT_IDF(id, flags), data, len, addr, t0);
        return;
    }
    atomic_store_explicit(&t->nest, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    uint32_t i = (uint32_t)__builtin_ctzll(mask);
    struct pt_attach *a = &pt_att[i];
    PT_OPAQUE(a);
    /* loaded after the busy mark: see the grace period in process.c */
    struct pt_shm *s = atomic_load_explicit(&a->shm, memory_order_acquire);
    uint16_t v = t->slot[i][0];
    if (unlikely(s == NULL || v == 0 || t->epoch[i] != a->epoch ||
                 atomic_load_explicit(&s->state, memory_order_relaxed) != PT_ST_RUNNING)) {
        event_redo(PT_IDF(id, flags), data, len, addr, t0);
        return;
    }
    /* &pt_wcurs[v - 1] (v >= 1), computed as one shift and one add */
    struct pt_wcur *w =
        (struct pt_wcur *)((uintptr_t)pt_wcurs - sizeof *w + (uintptr_t)v * sizeof *w);
    PT_OPAQUE(w);
    if (unlikely(len >= (flags & PT_REC_SYS ? w->lim_sys : w->lim_user))) {
        event_redo(PT_IDF(id, flags), data, len, addr, t0);
        return;
    }
    if (unlikely(w->clock != PT_CLOCK_TSC)) {
        event_realtime(s, w, PT_IDL(id, len), data, addr, t0);
        return;
    }
    event_stamped(s, t, w, id, data, len, addr, t0, pt_rdtsc());
}

/*
 * The straight path once stamped (ts) with the thread t marked busy, its
 * cursor w into stream s: the class in the cache, within a delta, room in
 * the chunk, no anchor due: a compact record.
 */
static inline __attribute__((always_inline)) void
event_stamped(struct pt_shm *s, struct pt_thread *t, struct pt_wcur *w, trace_event_id_t id,
              const void *data, size_t len, uint64_t addr, uint64_t t0, uint64_t ts)
{
    if (t0 != 0)
        put_duration(s, ts, t0, data);
    const struct pt_wclass *cl = &w->cache[pt_wcache_at(addr, id)];
    uint64_t pos = w->wpos, delta = ts - w->prev_ts;
    uint32_t hdr = cl->hdr, word = cl->word;
    uint32_t size = hdr + pt_round4((uint32_t)len);
    if (unlikely(!pt_wclass_takes(cl, addr, id, (uint32_t)len) ||
                 delta >= PT_DELTA_LIMIT || ts - w->anchor_ts >= PT_ANCHOR_TICKS ||
                 pos + size > w->wend)) {
        event_write(s, w, PT_IDL(id, len), ts, data, addr);
        return;
    }
    w->wpos = pos + size; /* the cursor first: then w need not live across the copy */
    w->nrec++;
    w->prev_ts = ts;
    put_compact_at(s, pos, hdr, word | (uint32_t)delta, ts, data, (uint32_t)len);
    if (unlikely(atomic_load_explicit(&s->waiters, memory_order_relaxed) != 0)) {
        event_wake(s);
        return;
    }
    fast_leave(t);
}

__attribute__((noinline)) static void event_wanted(trace_event_id_t id, const void *data,
                                                   size_t len, uint64_t addr, uint8_t want,
                                                   unsigned flags, uint64_t t0)
{
    event_wanted_inline(id, data, len, addr, want, flags, t0);
}

/* The function itself: <trace.h>'s inline test in front of it is left out
 * of the library's build (POSIXTRACE_NO_INLINE_EVENT, libtrace/local.mk),
 * and here in any case (the fuzzers compile these sources themselves). */
#undef posix_trace_event

/*
 * No stream running, or the event filtered out by every stream: one byte load
 * from pt_want (which <trace.h> makes in the caller before calling here). Ids past the last valid one take the general path
 * so that running streams count them as lost.
 */
PT_API __attribute__((aligned(64))) void posix_trace_event(trace_event_id_t id, const void *restrict data, size_t len)
{
    uint64_t addr;
    if (likely(id <= PT_ID_MAX)) {
        uint8_t want = pt_want_load(id);
        if (likely(want == 0))
            return;
        addr = (uint64_t)(uintptr_t)__builtin_return_address(0);
        event_wanted(id, data, data ? len : 0, addr, want, 0, 0);
        return;
    }
    if (atomic_load_explicit(&pt_att_mask, memory_order_relaxed) == 0)
        return;
    addr = (uint64_t)(uintptr_t)__builtin_return_address(0);
    event_general(id, data, data ? len : 0, addr, 0, 0);
}

/* A system event (ids 8..255, probes, system calls: pt_id_is_system);
 * t0 != 0: a call's start, for its duration. The straight path inline: the
 * shim's every call comes here. */
static inline __attribute__((always_inline)) void sys_event(trace_event_id_t id, const void *data,
                                                            size_t len, const void *prog_addr,
                                                            uint64_t t0)
{
    if (id < PT_SYS_FIRST || !pt_id_is_system(id))
        return;
    uint8_t want = pt_want_load(id);
    if (want == 0)
        return;
    event_wanted_inline(id, data, data ? len : 0, (uint64_t)(uintptr_t)prog_addr, want,
                        PT_REC_SYS, t0);
}

/* <posixtrace/record.h>: a system event from the trace system (the shim). */
PT_API void posixtrace_sys_event(trace_event_id_t id, const void *data, size_t len,
                                 const void *prog_addr)
{
    sys_event(id, data, len, prog_addr, 0);
}

/* <posixtrace/record.h>: the start of a call, in ticks of the process's call
 * clock (the clock of the first stream it attached); 0 if it has none yet.
 * A pending attachment is settled first, so that the call's event finds
 * its stream. */
PT_API uint64_t posixtrace_call_begin(trace_event_id_t id)
{
    if (id < PT_SYS_FIRST || !pt_id_is_system(id))
        return 0;
    if (unlikely(pt_want_load(id) & PT_WANT_BELL))
        pt_inbox_refresh();
    return pt_call_ticks();
}

/* <posixtrace/record.h>: a call's event; its duration is written into the
 * payload's header against the event's own timestamp. */
PT_API void posixtrace_sys_call(trace_event_id_t id, void *data, size_t len,
                                const void *prog_addr, uint64_t t0)
{
    if (data == NULL || len < sizeof(struct posixtrace_call_hdr))
        t0 = 0;
    sys_event(id, data, len, prog_addr, t0);
}

/* A controller's own system events (START, STOP, FILTER) into a stream it
 * does not record into: a slot of its own, taken at the first one. */
void pt_record_ctl(struct pt_shm *s, uint32_t *slot, struct pt_wcur *w, uint32_t pid,
                   trace_event_id_t id, const void *data, size_t len, uint64_t addr,
                   unsigned flags)
{
    uint32_t st = atomic_load(&s->state);
    if (st != PT_ST_RUNNING && !(flags & PT_REC_FORCE && st == PT_ST_SUSPENDED))
        return;
    if (!(flags & PT_REC_NOFILTER) && ((atomic_load(&s->filter[id >> 6]) >> (id & 63)) & 1))
        return;
    if (*slot == PT_NONE) {
        /* the lowest free slot, like a writer's: readers scan slots up to
         * the highest ever used, once per event */
        for (uint32_t i = 0; i < PT_NSLOTS && *slot == PT_NONE; i++) {
            struct pt_slot *sl = &pt_slots(s)[i];
            uint32_t free_ = PT_SLOT_FREE;
            if (!atomic_compare_exchange_strong(&sl->state, &free_, PT_SLOT_OWNED))
                continue;
            atomic_fetch_add(&sl->gen, 1);
            sl->pid = pid;
            sl->pid_start = 0; /* no process of its own: reap.c leaves it alone */
            sl->thread = 0;
            sl->wchunk = PT_NONE;
            *w = (struct pt_wcur){ .wchunk = PT_NONE, .pid = pid, .cache = pt_wcache_none };
            uint32_t hwm = atomic_load(&s->slots_hwm);
            while (hwm < i + 1 && !atomic_compare_exchange_weak(&s->slots_hwm, &hwm, i + 1))
                ;
            *slot = i;
        }
        if (*slot == PT_NONE) {
            pt_note_loss(s, 1, EAGAIN);
            return;
        }
    }
    struct pt_slot *sl = &pt_slots(s)[*slot];
    if (len > PT_SYS_DATA_MAX)
        len = PT_SYS_DATA_MAX;
    if (!write_event(s, sl, w, NULL, id, pt_ticks(s->clock_mode), data, (uint32_t)len, addr, 0))
        pt_note_loss(s, 1, 0);
    pt_wake_readers(s);
}
