/*
 * Following one writer slot's chain of chunks from the consumer side, shared
 * by the reader (reader.c) and the log flusher (flusher.c): the consumer's
 * position, what happens when rhead moves under it (a first chunk, or LOOP
 * steals, counted exactly), reclaiming an orphan slot, and checking a record
 * read from untrusted shared memory.
 */
#include "internal.h"
#include <string.h>

void pt_chain_error(struct pt_handle *h, uint32_t err)
{
    uint32_t zero = 0;
    atomic_compare_exchange_strong(&h->shm->error_pending, &zero, err);
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
}

/*
 * Move slot i's consumer from its chunk, read to its end, to `next`, and give
 * the chunk left back to the pool. A writer links its chunks in the order it
 * took them, each with a later `seq` (record.c, init_chunk): an index out of
 * range, or a seq not later than the chunk left's (as it read when we came
 * to it), is a chain written by someone else, maybe a loop that would be
 * read again and again: EBADMSG, and the slot is followed no more. Unless
 * the chunk left was stolen meanwhile (rhead moved; a writer may have reused
 * it, with a later seq): then nothing moves, and the caller resyncs.
 */
bool pt_chain_advance(struct pt_handle *h, uint32_t i, uint32_t next)
{
    struct pt_shm *s = h->shm;
    struct pt_rslot *r = &h->rs[i];
    uint64_t left = r->seq_known ? r->seq : pt_chunk(s, r->chunk)->seq, seq = 0;
    if (next >= s->nchunks || (int64_t)((seq = pt_chunk(s, next)->seq) - left) <= 0) {
        /* a LOOP stealer may have taken the chunk left since we looked, and a
         * writer reused it (a later seq): only a chain still ours is corrupt;
         * else the caller sees rhead moved and resyncs */
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&pt_slots(s)[i].rhead, memory_order_relaxed) != r->rhead)
            return true;
        pt_chain_error(h, EBADMSG);
        r->bad = 1;
        return false;
    }
    uint64_t nrh = (((r->rhead >> 32) + 1) << 32) | next;
    uint64_t expect = r->rhead;
    if (atomic_compare_exchange_strong(&pt_slots(s)[i].rhead, &expect, nrh)) {
        pt_pool_push(s, r->chunk);
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
    uint64_t steals = (rh >> 32) - (r->rhead >> 32);
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
    _Atomic uint32_t *c = &pt_rec_at(pt_chunk(s, r->chunk), r->off)->commit;
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
                         ? atomic_load_explicit(&pt_rec_at(ch, r->off)->commit, memory_order_acquire)
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
    uint64_t nrh = (((r->rhead >> 32) + 1) << 32) | PT_NONE, expect = r->rhead;
    if (!atomic_compare_exchange_strong_explicit(&sl->rhead, &expect, nrh, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        atomic_store(&sl->state, PT_SLOT_ORPHAN);
        return;
    }
    pt_chain_follow(r, nrh);
    atomic_store_explicit(&sl->state, PT_SLOT_FREE, memory_order_release);
    if (chunk != PT_NONE)
        pt_pool_push(s, chunk);
}

