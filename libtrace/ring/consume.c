/*
 * The consumer iterator over one writer slot's chain of chunks (consume.h),
 * the one walk of the reader (reader.c: a record at a time) and the log
 * flusher (flusher.c: a committed extent at a time). Each look starts where
 * the consumer stands: rhead read again (a first chunk, or LOOP steals,
 * counted exactly), the chunk index checked; then the consumer's read of the
 * chunk, validated by the seqlock re-check; then, at an END record, the move
 * to the next chunk; an orphan slot read to its end is reclaimed.
 */
#include "../internal.h"
#include "tagged.h"
#include <string.h>

#define PT_CONS_GUARD (1 << 20) /* chunks and records one look passes, at most */
/* The steps of a look, inlined into it: the reader's look is then one
 * function, as it was in reader.c (steps called out of line made the
 * reader slower, measured) */
#define PT_STEP static inline __attribute__((always_inline))

/* The steps of a look, besides the PT_CONS_* results. */
enum { LOOK_AT = -1, LOOK_AGAIN = -2, LOOK_END = -3, LOOK_WAIT = -4 };

static void chain_error(struct pt_handle *h, uint32_t err)
{
    uint32_t zero = 0;
    atomic_compare_exchange_strong(&h->shm->error_pending, &zero, err);
}

/* The seq of the chunk slot r's consumer stands in. */
static uint64_t here_seq(struct pt_handle *h, const struct pt_rslot *r)
{
    return r->seq_known ? r->seq : pt_chunk(h->shm, r->chunk)->seq;
}

/* The flusher's drain d leaves records in chunks of seq `seq` or later. */
static void left_from(const struct pt_cons_drain *d, uint64_t seq)
{
    if (d != NULL && d->left_seq != NULL && seq < *d->left_seq)
        *d->left_seq = seq;
}

/* Start following the chain at rh (after a steal, a reclaim or a new writer). */
void pt_chain_follow(struct pt_rslot *r, uint64_t rh)
{
    r->rhead = rh;
    r->chunk = (uint32_t)rh;
    r->off = 0;
    r->delivered = 0;
    r->has_anchor = 0;
    r->seq_known = 0;
    r->dec_ok = 0;
}

/*
 * Cooling: the chunk the consumer has just read is in its CPU's caches. A
 * writer on another CPU that took it from the pool at once (the pool is a
 * stack: it would) would have to take every line of it back from there, one
 * at a time (measured: a writer with a reader thread took 20 to 25 ns per
 * event instead of 13 in chunks not read lately). So a chunk left goes back
 * to the pool only once the consumer has left pt_cool_chunks() more (at most
 * PT_COOL_BYTES): its bytes go back to the cap at once, so what the stream
 * holds does not change, and the geometry has that many chunks more.
 */
static void cool(struct pt_handle *h, uint32_t c)
{
    struct pt_shm *s = h->shm;
    struct pt_cool *q = &h->cool;
    uint32_t max = pt_cool_chunks(s->cap, s->chunk_size);
    pt_pool_refund(s, c);
    if (max > PT_COOL_MAX)
        max = PT_COOL_MAX;
    if (q->n < max) {
        q->c[(q->head + q->n++) % max] = c;
        return;
    }
    if (max != 0) {
        uint32_t warm = c;
        c = q->c[q->head];
        q->c[q->head] = warm;
        q->head = (q->head + 1) % max;
    }
    pt_pool_link(s, c);
}

/*
 * Move slot i's consumer from its chunk, read to its end, to `next`, and give
 * the chunk left back (cool). A writer links its chunks in the order it
 * took them, each with a later `seq` (record.c, init_chunk): an index out of
 * range, or a seq not later than the chunk left's (as it read when we came
 * to it), is a chain written by someone else, maybe a loop that would be
 * read again and again: EBADMSG, and the slot is followed no more. Unless
 * the chunk left was stolen meanwhile (rhead moved; a writer may have reused
 * it, with a later seq): then nothing moves, and the next look resyncs.
 */
bool pt_chain_advance(struct pt_handle *h, uint32_t i, uint32_t next)
{
    struct pt_shm *s = h->shm;
    struct pt_rslot *r = &h->rs[i];
    uint64_t left = here_seq(h, r), seq = 0;
    if (next >= s->nchunks || (int64_t)((seq = pt_chunk(s, next)->seq) - left) <= 0) {
        /* a LOOP stealer may have taken the chunk left since we looked, and a
         * writer reused it (a later seq): only a chain still ours is corrupt;
         * else the next look sees rhead moved and resyncs */
        if (pt_cons_stolen(&pt_slots(s)[i], r))
            return true;
        chain_error(h, EBADMSG);
        r->bad = 1;
        return false;
    }
    uint64_t nrh = pt_tag_next(r->rhead, next);
    uint64_t expect = r->rhead;
    if (atomic_compare_exchange_strong(&pt_slots(s)[i].rhead, &expect, nrh)) {
        cool(h, r->chunk);
        pt_block_room(s);
        uint64_t stolen = r->stolen_seen;
        pt_chain_follow(r, nrh);
        r->stolen_seen = stolen;
        r->seq = seq;
        r->seq_known = 1;
    }
    return true;
}

/*
 * rhead moved under us: a writer gave the slot its first chunk, or LOOP
 * stealers took chunks. Count the events of stolen chunks we had not reported.
 * Returns false while a stealer has not finished its bookkeeping yet.
 */
bool pt_chain_resync(struct pt_handle *h, uint32_t i, uint64_t rh, uint64_t *lost_out)
{
    struct pt_slot *sl = &pt_slots(h->shm)[i];
    struct pt_rslot *r = &h->rs[i];
    uint64_t steals = pt_tag_of(rh) - pt_tag_of(r->rhead);
    if ((uint32_t)r->rhead == PT_NONE && steals > 0)
        steals--; /* the writer's own first-chunk publication */
    uint64_t st = atomic_load_explicit(&sl->stolen, memory_order_acquire);
    uint64_t done = PT_STEAL_COUNT(st) - PT_STEAL_COUNT(r->stolen_seen);
    if (done < steals)
        return false;
    if (done > steals) /* a newer steal completed: look again */
        return false;
    if (steals > 0) {
        uint64_t recs = PT_STEAL_RECS(st) - PT_STEAL_RECS(r->stolen_seen);
        uint64_t lost = recs > r->delivered ? recs - r->delivered : 0;
        if (lost)
            atomic_fetch_add_explicit(&h->shm->lost, lost, memory_order_relaxed);
        if (lost_out != NULL)
            *lost_out += lost;
    }
    r->stolen_seen = st;
    pt_chain_follow(r, rh);
    return true;
}

/* An orphan slot whose writer died in the middle of a record (reap.c): the
 * record at the consumer's position was announced and will never be
 * committed. Withdraw it and count it lost (an adopting writer may race us
 * to it: whoever changes the word counts it). */
void pt_chain_abandon_pending(struct pt_handle *h, uint32_t i)
{
    struct pt_shm *s = h->shm;
    struct pt_rslot *r = &h->rs[i];
    if (r->chunk >= s->nchunks || r->off >= pt_chunk_room(s) + PT_END_BYTES - 4 ||
        atomic_load_explicit(&pt_slots(s)[i].state, memory_order_acquire) != PT_SLOT_ORPHAN)
        return;
    _Atomic uint32_t *c = pt_commit_at(pt_rec_at(pt_chunk(s, r->chunk), r->off));
    uint32_t v = atomic_load_explicit(c, memory_order_acquire);
    if (PT_COMMIT_TYPE(v) == PT_REC_PENDING && atomic_compare_exchange_strong(c, &v, 0))
        pt_note_loss(s, 1, 0);
}

/* An orphan slot (its thread exited, or its process died) read to the end
 * frees itself, and its open chunk goes back to the pool. */
void pt_chain_reclaim_orphan(struct pt_handle *h, uint32_t i)
{
    struct pt_shm *s = h->shm;
    struct pt_slot *sl = &pt_slots(s)[i];
    struct pt_rslot *r = &h->rs[i];
    uint32_t st = PT_SLOT_ORPHAN;
    if (!atomic_compare_exchange_strong(&sl->state, &st, PT_SLOT_RECLAIM))
        return;
    uint32_t chunk = r->chunk < s->nchunks ? r->chunk : PT_NONE;
    if (chunk != PT_NONE) {
        struct pt_chunk *ch = pt_chunk(s, chunk);
        uint32_t c = r->off < pt_chunk_room(s) + PT_END_BYTES - 4
                         ? atomic_load_explicit(pt_commit_at(pt_rec_at(ch, r->off)),
                                                memory_order_acquire)
                         : 0;
        if (c != 0 || atomic_load_explicit(&ch->next, memory_order_acquire) != PT_NONE) {
            atomic_store(&sl->state, PT_SLOT_ORPHAN); /* not drained after all */
            return;
        }
    }
    /* by CAS from what we followed: while we looked, the slot may have been
     * freed, taken by a new writer (a thread starting late takes the lowest
     * free slot), filled, stolen from, and left again; then it is not drained
     * (the next look resyncs) */
    uint64_t nrh = pt_tag_next(r->rhead, PT_NONE), expect = r->rhead;
    if (!atomic_compare_exchange_strong_explicit(&sl->rhead, &expect, nrh, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        atomic_store(&sl->state, PT_SLOT_ORPHAN);
        return;
    }
    pt_chain_follow(r, nrh);
    atomic_store_explicit(&sl->state, PT_SLOT_FREE, memory_order_release);
    if (chunk != PT_NONE) {
        pt_pool_push(s, chunk);
        pt_block_room(s);
    }
}

static bool is_orphan(struct pt_slot *sl)
{
    return atomic_load_explicit(&sl->state, memory_order_acquire) == PT_SLOT_ORPHAN;
}

/*
 * Where a look at slot i starts: rhead read again (a move is followed: a
 * steal's events not consumed go to the lost count, and to *lost), the chunk
 * index checked. LOOK_AT: r->chunk is a chunk of the stream. An index out of
 * range: the reader (`records`) reports the chain corrupt; the flusher takes
 * the slot as empty, and reclaims it if an orphan.
 */
PT_STEP int enter(struct pt_handle *h, uint32_t i, uint64_t *lost, bool records)
{
    struct pt_shm *s = h->shm;
    struct pt_slot *sl = &pt_slots(s)[i];
    struct pt_rslot *r = &h->rs[i];
    uint64_t rh = atomic_load_explicit(&sl->rhead, memory_order_acquire);
    if (rh != r->rhead && !pt_chain_resync(h, i, rh, lost))
        return LOOK_WAIT; /* a stealer is finishing its bookkeeping */
    if (r->chunk == PT_NONE || (r->chunk >= s->nchunks && !records)) {
        if (is_orphan(sl))
            pt_chain_reclaim_orphan(h, i);
        return PT_CONS_NONE;
    }
    if (r->chunk >= s->nchunks) {
        chain_error(h, EBADMSG);
        r->bad = 1;
        return PT_CONS_NONE;
    }
    if (!r->dec_ok) { /* a chunk followed: its records decode from its ts0 (validated
                         with what is read from it, pt_cons_stolen) */
        pt_dec_reset(&h->decs[i], pt_chunk(s, r->chunk)->ts0);
        r->dec_ok = 1;
    }
    return LOOK_AT;
}

/* At an END record: on to `next`, unless it is not linked yet, or past a
 * flush's limit (d: the flusher's, else the reader). */
PT_STEP int cross(struct pt_handle *h, uint32_t i, uint32_t next, const struct pt_cons_drain *d)
{
    struct pt_shm *s = h->shm;
    if (next == PT_NONE) { /* its writer is linking the next chunk */
        if (d != NULL)
            left_from(d, here_seq(h, &h->rs[i]) + 1);
        return LOOK_WAIT;
    }
    /* a flush takes what the stream held when it began: a chunk begun
     * since is the next flush's (else chasing a writer as fast as the
     * flusher would never end) */
    if (d != NULL && next < s->nchunks &&
        (*d->budget == 0 || (int64_t)(pt_chunk(s, next)->seq - d->seq_limit) >= 0)) {
        left_from(d, pt_chunk(s, next)->seq);
        return PT_CONS_CUT;
    }
    if (!pt_chain_advance(h, i, next)) /* the chunk left: consumed */
        return PT_CONS_NONE;
    if (d != NULL)
        (*d->budget)--;
    return LOOK_AGAIN;
}

/* Drop the rest of a corrupt chunk: wait for its successor, if any. */
static void skip_chunk(struct pt_handle *h, uint32_t i)
{
    chain_error(h, EBADMSG);
    h->rs[i].off = pt_chunk_room(h->shm); /* reads as "no more" until a next appears */
}

/* The reader's read of the record at r->off: its commit word, then the
 * record (a PENDING one's stamp, and the word again: the writer overwrites
 * the stamp as it writes), then the chunk's next, then the seqlock
 * re-check. Anchors and classes are consumed on the way. */
PT_STEP int look_record(struct pt_handle *h, uint32_t i, struct pt_cons_rec *p, uint32_t *next)
{
    struct pt_shm *s = h->shm;
    struct pt_slot *sl = &pt_slots(s)[i];
    struct pt_rslot *r = &h->rs[i];
    struct pt_chunk *ch = pt_chunk(s, r->chunk);
    unsigned char *rec = pt_rec_at(ch, r->off);
    uint32_t commit = 0;
    bool ok = false;
    if (r->off < pt_chunk_room(s) + PT_END_BYTES - 4)
        commit = atomic_load_explicit(pt_commit_at(rec), memory_order_acquire);
    uint32_t type = PT_COMMIT_TYPE(commit);
    if (type == PT_REC_PENDING && r->off > pt_chunk_room(s)) {
        type = 0; /* corrupt: no writer announces past the room (its stamp would lie past
                     the chunk) */
    } else if (type == PT_REC_PENDING) {
        p->rec.ts = atomic_load_explicit((_Atomic uint64_t *)pt_pending_ts(rec),
                                         memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(pt_commit_at(rec), memory_order_relaxed) != commit)
            return LOOK_AGAIN; /* written meanwhile */
    } else if (commit != 0 && type != PT_REC_END) {
        ok = pt_chain_peek(s, &h->decs[i], rec, commit, r->off, &p->rec);
    }
    p->pid = ch->pid;
    p->thread = ch->thread;
    *next = atomic_load_explicit(&ch->next, memory_order_acquire);
    if (pt_cons_stolen(sl, r))
        return LOOK_AGAIN; /* stolen while we looked */
    if (commit == 0) {
        if (*next != PT_NONE && r->off >= pt_chunk_room(s))
            type = PT_REC_END; /* past a corrupt tail */
        else {
            if (is_orphan(sl))
                pt_chain_reclaim_orphan(h, i);
            return PT_CONS_NONE;
        }
    }
    if (type == PT_REC_PENDING) {
        if (is_orphan(sl)) {
            pt_chain_abandon_pending(h, i); /* its writer died mid-record */
            return LOOK_AGAIN;
        }
        return PT_CONS_PENDING; /* p->rec.ts read while the word was PENDING */
    }
    if (type == PT_REC_END)
        return LOOK_END;
    if (!ok) {
        skip_chunk(h, i);
        return LOOK_AGAIN;
    }
    if (p->rec.type == PT_REC_EVENT)
        return PT_CONS_REC;
    if (p->rec.type == PT_REC_ANCHOR) {
        r->anchor_ts = p->rec.ts;
        r->anchor_ns = (int64_t)p->rec.addr;
        r->has_anchor = 1;
    }
    pt_dec_apply(&h->decs[i], &p->rec); /* an anchor (no state) or a class */
    r->off += p->rec.size;
    return LOOK_AGAIN;
}

/* The committed records from r->off: up to an END record (x->end), a
 * PENDING or not yet committed one, or a corrupt one (x->bad). Counts the
 * events in x->nev and gives the first one's stamp in x->first, with the
 * anchor in effect there (x->first comes in with the anchor in effect at
 * r->off). Returns the end offset. */
static uint32_t walk(struct pt_shm *s, struct pt_chunk *ch, uint32_t off,
                     const struct pt_dec *from, struct pt_cons_extent *x)
{
    struct pt_dec d = *from;
    while (off < pt_chunk_room(s) + PT_END_BYTES - 4) {
        unsigned char *r = pt_rec_at(ch, off);
        uint32_t c = atomic_load_explicit(pt_commit_at(r), memory_order_acquire);
        if (c == 0)
            break;
        if (PT_COMMIT_TYPE(c) == PT_REC_PENDING) {
            x->pending = true;
            break;
        }
        if (PT_COMMIT_TYPE(c) == PT_REC_END) {
            x->end = true;
            break;
        }
        struct pt_drec o;
        if (!pt_chain_peek(s, &d, r, c, off, &o)) {
            x->bad = true;
            break;
        }
        pt_dec_apply(&d, &o);
        if (o.type == PT_REC_ANCHOR) {
            if (x->nev == 0)
                x->first = (struct pt_stamp){ 0, true, o.ts, (int64_t)o.addr };
        } else if (o.type == PT_REC_EVENT) {
            if (x->nev == 0)
                x->first.ts = o.ts;
            x->nev++;
        }
        off += o.size;
    }
    return off;
}

/* A closed chunk (its next is set) read from the start: its END offset and
 * event count are in its header. The records are checked by the taker. */
static bool closed_whole(struct pt_shm *s, struct pt_cons_extent *x)
{
    struct pt_chunk *ch = x->ch;
    if (atomic_load_explicit(&ch->next, memory_order_acquire) == PT_NONE)
        return false;
    uint32_t e = atomic_load_explicit(&ch->end, memory_order_relaxed);
    unsigned char *r = pt_rec_at(ch, e <= pt_chunk_room(s) ? e : 0); /* END fits past room */
    if (e > pt_chunk_room(s) || e % 4 != 0 ||
        atomic_load_explicit(pt_commit_at(r), memory_order_relaxed) !=
            PT_COMMIT(PT_REC_END, PT_END_BYTES))
        return false; /* not as expected: walk it */
    x->to = e;
    x->nev = atomic_load_explicit(&ch->nrec, memory_order_relaxed);
    x->end = true;
    return true;
}

/* The flusher's read of r->chunk: its committed extent from r->off, handed
 * to d->take (closed chunks; the open chunk's when d->partial). */
PT_STEP int look_extent(struct pt_handle *h, uint32_t i, const struct pt_cons_drain *d,
                       uint32_t *next)
{
    struct pt_shm *s = h->shm;
    struct pt_slot *sl = &pt_slots(s)[i];
    struct pt_rslot *r = &h->rs[i];
    if (is_orphan(sl))
        pt_chain_abandon_pending(h, i); /* its writer died mid-record */
    struct pt_cons_extent x = { .ch = pt_chunk(s, r->chunk) };
    x.first = (struct pt_stamp){ 0, true, s->tick0, s->real0_ns }; /* the stream's anchor */
    if (r->has_anchor)
        x.first = (struct pt_stamp){ 0, true, r->anchor_ts, r->anchor_ns };
    if (!d->partial && atomic_load_explicit(&x.ch->next, memory_order_acquire) == PT_NONE &&
        atomic_load_explicit(&sl->state, memory_order_acquire) == PT_SLOT_OWNED) {
        left_from(d, here_seq(h, r));
        return PT_CONS_NONE; /* its writer's open chunk: not read until a partial flush */
    }
    /* a whole closed chunk needs no walk, unless a gap's events need its first stamp */
    if (r->off != 0 || r->gap != 0 || !closed_whole(s, &x))
        x.to = walk(s, x.ch, r->off, &h->decs[i], &x);
    if (x.to > r->off && (x.end || d->partial || x.bad)) {
        if (!d->take(h, i, &x, d->ctx))
            return LOOK_AGAIN; /* stolen: resync */
        r->off = x.to;
        r->delivered += x.nev;
    }
    if (x.bad) {
        chain_error(h, EBADMSG);
        r->off = pt_chunk_room(s); /* skip the rest of this chunk */
        x.end = atomic_load_explicit(&x.ch->next, memory_order_acquire) != PT_NONE;
    }
    if (!x.end) {
        if (!d->partial || x.pending) /* records not taken, or one being written */
            left_from(d, here_seq(h, r));
        pt_chain_reclaim_orphan(h, i); /* drained: its records are taken */
        return PT_CONS_NONE;
    }
    *next = atomic_load_explicit(&x.ch->next, memory_order_acquire);
    return LOOK_END;
}

/* The iterator: `records` (p) for the reader, else d for the flusher. */
PT_STEP int look(struct pt_handle *h, uint32_t i, bool records, struct pt_cons_rec *p,
                  const struct pt_cons_drain *d)
{
    struct pt_rslot *r = &h->rs[i];
    if (r->bad) /* a corrupt chain, reported once */
        return PT_CONS_NONE;
    for (int guard = 0; guard < PT_CONS_GUARD; guard++) {
        int k = enter(h, i, records ? NULL : &r->gap, records);
        if (k == LOOK_WAIT && !records)
            left_from(d, 0); /* a stealer between two steps: where we stand is unknown */
        if (k == LOOK_AT) {
            uint32_t next = PT_NONE;
            k = records ? look_record(h, i, p, &next) : look_extent(h, i, d, &next);
            if (k == LOOK_END)
                k = cross(h, i, next, records ? NULL : d);
        }
        if (k == LOOK_WAIT) {
            if (records)
                p->rec.ts = 0; /* its stamp is unknown */
            return PT_CONS_PENDING;
        }
        if (k != LOOK_AGAIN)
            return k;
    }
    if (records) {
        chain_error(h, EBADMSG); /* a chain that never ends (a loop of chunks) */
        r->bad = 1;
    } else {
        left_from(d, 0);
    }
    return PT_CONS_NONE;
}

void pt_cons_past(struct pt_handle *h, uint32_t i, const struct pt_cons_rec *p)
{
    h->rs[i].off += p->rec.size;
    pt_dec_apply(&h->decs[i], &p->rec);
}

int pt_cons_record(struct pt_handle *h, uint32_t i, struct pt_cons_rec *p)
{
    return look(h, i, true, p, NULL);
}

int pt_cons_drain(struct pt_handle *h, uint32_t i, const struct pt_cons_drain *d)
{
    return look(h, i, false, NULL, d);
}
