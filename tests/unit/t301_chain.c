/*
 * t301_chain: following a writer slot's chain of chunks from the consumer
 * side (libtrace/ring/consume.c) called directly, over a stream laid out in private
 * memory: pt_chain_advance (the next chunk's seq must be later, so a loop of
 * chunks or an index out of range ends the chain with EBADMSG, unless a
 * stealer moved rhead meanwhile), pt_chain_resync (rhead moved: a writer's
 * first chunk, or LOOP steals counted exactly, waiting for a stealer's
 * bookkeeping), the reclaim of a drained orphan slot and the withdrawal of
 * its pending record, the cooling of chunks left before they go back to the
 * pool. Prints one line per case and a summary; exits 1 if a
 * check failed.
 */
#include "unit.h"
#include <errno.h>
#include <stdatomic.h>

#include "internal.h" /* libtrace's (-I libtrace: tests/unit/local.mk) */
#include "unit_shm.h"

#define NCH 16u
#define RH(tag, chunk) (((uint64_t)(tag) << 32) | (uint32_t)(chunk))

struct fix {
    struct pt_shm *s;
    struct pt_handle *h;
};

/* A stream of NCH chunks, every one taken from the pool (so that a chunk
 * given back is the pool's top); slot 0's consumer at chunk `at` (tag 5). */
static struct fix fix_new(uint32_t at)
{
    struct fix f = { ut_shm_new(NCH, 512), calloc(1, sizeof(struct pt_handle)) };
    if (f.h == NULL)
        exit(2);
    f.h->shm = f.s;
    static struct pt_dec dec;
    f.h->decs = &dec;
    for (uint32_t i = 0; i < NCH; i++) {
        pt_pool_pop(f.s);
        pt_chunk(f.s, i)->seq = 100 + i;
    }
    atomic_store(&pt_slots(f.s)[0].rhead, RH(5, at));
    pt_chain_follow(&f.h->rs[0], RH(5, at));
    return f;
}

static void fix_free(struct fix f)
{
    free(f.h);
    ut_shm_free(f.s);
}

/* Chunk 3 read to its end, closed, linked to 7 (a later seq): the consumer
 * moves to 7 with the tag bumped, chunk 3's bytes go back to the cap at once
 * but the chunk itself cools (not on the pool yet: see cooling below), the
 * seq of 7 remembered, the steals seen kept. */
static void advance_ok(void)
{
    struct fix f = fix_new(3);
    struct pt_rslot *r = &f.h->rs[0];
    atomic_store(&pt_chunk(f.s, 3)->next, 7);
    atomic_store(&pt_chunk(f.s, 3)->end, 120);
    atomic_store(&f.s->used, 500);
    r->off = 128;
    r->delivered = 4;
    r->stolen_seen = 42;
    UT_CHECK(pt_chain_advance(f.h, 0, 7));
    UT_EQ(atomic_load(&pt_slots(f.s)[0].rhead), RH(6, 7));
    UT_EQ(r->rhead, RH(6, 7));
    UT_EQ(r->chunk, 7);
    UT_EQ(r->off, 0);
    UT_EQ(r->delivered, 0);
    UT_EQ(r->stolen_seen, 42);
    UT_EQ(r->seq_known, 1);
    UT_EQ(r->seq, 107);
    UT_EQ((uint32_t)atomic_load(&f.s->pool_top), PT_NONE);
    UT_EQ(f.h->cool.n, 1);
    UT_EQ(f.h->cool.c[0], 3);
    UT_EQ(atomic_load(&f.s->used), 380);
    UT_EQ(atomic_load(&f.s->error_pending), 0);
    UT_EQ(r->bad, 0);
    fix_free(f);
}

/* A next chunk whose seq is not later than the chunk left's (equal, older)
 * is a chain written by someone else: false, EBADMSG, the slot no longer
 * followed, nothing moved, nothing given back. */
static void advance_seq_not_later(void)
{
    for (int older = 0; older < 2; older++) {
        struct fix f = fix_new(3);
        pt_chunk(f.s, 9)->seq = older ? 90 : 103;
        uint64_t top = atomic_load(&f.s->pool_top);
        UT_CHECK(!pt_chain_advance(f.h, 0, 9));
        UT_EQ(atomic_load(&f.s->error_pending), EBADMSG);
        UT_EQ(f.h->rs[0].bad, 1);
        UT_EQ(f.h->rs[0].chunk, 3);
        UT_EQ(atomic_load(&pt_slots(f.s)[0].rhead), RH(5, 3));
        UT_EQ(atomic_load(&f.s->pool_top), top);
        fix_free(f);
    }
}

/* 3 -> 4 -> 3: the second step goes back to an earlier seq (the seq known
 * from the first step, although chunk 3 was given back): a loop, refused. */
static void loop_refused(void)
{
    struct fix f = fix_new(3);
    UT_CHECK(pt_chain_advance(f.h, 0, 4));
    UT_EQ(f.h->rs[0].chunk, 4);
    pt_chunk(f.s, 3)->seq = 104; /* even reused with the same seq as 4 */
    UT_CHECK(!pt_chain_advance(f.h, 0, 3));
    UT_EQ(atomic_load(&f.s->error_pending), EBADMSG);
    UT_EQ(f.h->rs[0].chunk, 4);
    UT_EQ(atomic_load(&pt_slots(f.s)[0].rhead), RH(6, 4));
    fix_free(f);
}

/* seqs compare modulo 2^64: a chain going past the wrap is in order. */
static void seq_wraps(void)
{
    struct fix f = fix_new(3);
    pt_chunk(f.s, 3)->seq = UINT64_MAX - 1;
    pt_chunk(f.s, 4)->seq = 1;
    UT_CHECK(pt_chain_advance(f.h, 0, 4));
    UT_EQ(f.h->rs[0].chunk, 4);
    UT_EQ(atomic_load(&f.s->error_pending), 0);
    fix_free(f);
}

/* A next index out of the stream: refused. */
static void out_of_range(void)
{
    uint32_t bad[] = { NCH, NCH + 1, PT_NONE };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct fix f = fix_new(3);
        UT_CHECK(!pt_chain_advance(f.h, 0, bad[i]));
        UT_EQ(atomic_load(&f.s->error_pending), EBADMSG);
        UT_EQ(f.h->rs[0].chunk, 3);
        fix_free(f);
    }
}

/* A LOOP stealer moved rhead since the consumer looked (and the chunk left
 * was reused with a later seq): not corrupt, nothing moves, the caller
 * resyncs. Likewise when the seq is fine but the compare-and-swap loses. */
static void advance_after_steal(void)
{
    for (int seq_ok = 0; seq_ok < 2; seq_ok++) {
        struct fix f = fix_new(3);
        pt_chunk(f.s, 3)->seq = 200; /* reused by a writer */
        pt_chunk(f.s, 9)->seq = seq_ok ? 300 : 150;
        atomic_store(&pt_slots(f.s)[0].rhead, RH(6, 11));
        uint64_t top = atomic_load(&f.s->pool_top);
        UT_CHECK(pt_chain_advance(f.h, 0, 9));
        UT_EQ(atomic_load(&f.s->error_pending), 0);
        UT_EQ(f.h->rs[0].bad, 0);
        UT_EQ(f.h->rs[0].chunk, 3);
        UT_EQ(f.h->rs[0].rhead, RH(5, 3));
        UT_EQ(atomic_load(&pt_slots(f.s)[0].rhead), RH(6, 11));
        UT_EQ(atomic_load(&f.s->pool_top), top);
        fix_free(f);
    }
}

/* rhead went from none to the writer's first chunk: that publication is no
 * steal; the consumer follows the chunk, nothing lost. */
static void resync_first_chunk(void)
{
    struct fix f = fix_new(3);
    pt_chain_follow(&f.h->rs[0], RH(0, PT_NONE));
    uint64_t lost = 0;
    UT_CHECK(pt_chain_resync(f.h, 0, RH(1, 6), &lost));
    UT_EQ(lost, 0);
    UT_EQ(f.h->rs[0].chunk, 6);
    UT_EQ(f.h->rs[0].rhead, RH(1, 6));
    UT_EQ(atomic_load(&f.s->lost), 0);
    fix_free(f);
}

/* Two steals (tag 5 -> 7) that took 7 records, 3 of which the consumer had
 * delivered: 4 lost, counted in the stream and to the caller; the consumer
 * follows the new head with the steals accounted for. */
static void resync_steals(void)
{
    struct fix f = fix_new(3);
    struct pt_rslot *r = &f.h->rs[0];
    r->delivered = 3;
    uint64_t st = 2 * PT_STEAL_ONE + 7;
    atomic_store(&pt_slots(f.s)[0].stolen, st);
    uint64_t lost = 10;
    UT_CHECK(pt_chain_resync(f.h, 0, RH(7, 12), &lost));
    UT_EQ(lost, 14);
    UT_EQ(atomic_load(&f.s->lost), 4);
    UT_EQ(r->stolen_seen, st);
    UT_EQ(r->chunk, 12);
    UT_EQ(r->delivered, 0);
    /* one more steal of 5 records, none delivered: 5 more */
    atomic_store(&pt_slots(f.s)[0].stolen, st + PT_STEAL_ONE + 5);
    UT_CHECK(pt_chain_resync(f.h, 0, RH(8, 13), NULL));
    UT_EQ(atomic_load(&f.s->lost), 9);
    /* more delivered than the steal took: nothing lost */
    r->delivered = 50;
    atomic_store(&pt_slots(f.s)[0].stolen, st + 2 * PT_STEAL_ONE + 7);
    UT_CHECK(pt_chain_resync(f.h, 0, RH(9, 14), NULL));
    UT_EQ(atomic_load(&f.s->lost), 9);
    fix_free(f);
}

/* The steal count behind the tag (a stealer between its CAS and its
 * bookkeeping) or ahead of it (a newer steal done): not yet, nothing moves. */
static void resync_waits(void)
{
    for (int ahead = 0; ahead < 2; ahead++) {
        struct fix f = fix_new(3);
        atomic_store(&pt_slots(f.s)[0].stolen, (ahead ? 3 : 1) * PT_STEAL_ONE + 9);
        uint64_t lost = 0;
        UT_CHECK(!pt_chain_resync(f.h, 0, RH(7, 12), &lost));
        UT_EQ(lost, 0);
        UT_EQ(atomic_load(&f.s->lost), 0);
        UT_EQ(f.h->rs[0].chunk, 3);
        UT_EQ(f.h->rs[0].stolen_seen, 0);
        fix_free(f);
    }
}

/* An orphan slot read to its end (no record at the consumer's offset, its
 * chunk open): freed, rhead moved to none by CAS with the tag bumped, the
 * open chunk back in the pool without a refund. */
static void reclaim_drained(void)
{
    struct fix f = fix_new(3);
    struct pt_slot *sl = &pt_slots(f.s)[0];
    atomic_store(&sl->state, PT_SLOT_ORPHAN);
    atomic_store(&f.s->used, 64);
    f.h->rs[0].off = 96;
    pt_chain_reclaim_orphan(f.h, 0);
    UT_EQ(atomic_load(&sl->state), PT_SLOT_FREE);
    UT_EQ(atomic_load(&sl->rhead), RH(6, PT_NONE));
    UT_EQ(f.h->rs[0].chunk, PT_NONE);
    UT_EQ((uint32_t)atomic_load(&f.s->pool_top), 3);
    UT_EQ(atomic_load(&f.s->used), 64);
    fix_free(f);
}

/* Not drained (a record at the offset, or the chunk linked to a next one),
 * raced (rhead moved: a new writer took the slot meanwhile), or not an
 * orphan: the slot stays as it is and nothing goes back to the pool. */
static void reclaim_refused(void)
{
    for (int k = 0; k < 4; k++) {
        struct fix f = fix_new(3);
        struct pt_slot *sl = &pt_slots(f.s)[0];
        uint32_t state = k == 3 ? PT_SLOT_OWNED : PT_SLOT_ORPHAN;
        atomic_store(&sl->state, state);
        uint64_t rh = RH(5, 3);
        if (k == 0)
            atomic_store(pt_commit_at(pt_rec_at(pt_chunk(f.s, 3), 0)), PT_COMMIT(PT_REC_EVENT, 32));
        else if (k == 1)
            atomic_store(&pt_chunk(f.s, 3)->next, 4);
        else if (k == 2)
            atomic_store(&sl->rhead, rh = RH(9, 8));
        uint64_t top = atomic_load(&f.s->pool_top);
        pt_chain_reclaim_orphan(f.h, 0);
        UT_EQ(atomic_load(&sl->state), state);
        UT_EQ(atomic_load(&sl->rhead), rh);
        UT_EQ(atomic_load(&f.s->pool_top), top);
        UT_EQ(f.h->rs[0].chunk, 3);
        fix_free(f);
    }
}

/* An orphan's record announced (PENDING) and never committed: withdrawn
 * (its word back to 0) and counted lost once; a committed one is left. */
static void abandon_pending(void)
{
    struct fix f = fix_new(3);
    struct pt_slot *sl = &pt_slots(f.s)[0];
    atomic_store(&sl->state, PT_SLOT_ORPHAN);
    f.h->rs[0].off = 64;
    _Atomic uint32_t *c = pt_commit_at(pt_rec_at(pt_chunk(f.s, 3), 64));
    atomic_store(c, PT_COMMIT(PT_REC_PENDING, 48));
    pt_chain_abandon_pending(f.h, 0);
    UT_EQ(atomic_load(c), 0);
    UT_EQ(atomic_load(&f.s->lost), 1);
    UT_EQ(atomic_load(&f.s->overrun), 1);
    pt_chain_abandon_pending(f.h, 0);
    UT_EQ(atomic_load(&f.s->lost), 1);
    atomic_store(c, PT_COMMIT(PT_REC_EVENT, 48));
    pt_chain_abandon_pending(f.h, 0);
    UT_EQ(atomic_load(c), PT_COMMIT(PT_REC_EVENT, 48));
    UT_EQ(atomic_load(&f.s->lost), 1);
    fix_free(f);
}

/* Chunks left go back to the pool in the order they were left, each only
 * once the consumer has left pt_cool_chunks() more (4 here: a quarter of
 * the 8 KiB cap in 512-byte chunks), their bytes refunded when left: a
 * writer does not get the chunk the consumer has just read (its lines are in
 * the consumer CPU's caches). Chain 3 -> 7 -> 8 -> 9 -> 10 -> 11 -> 12. */
static void cooling(void)
{
    struct fix f = fix_new(3);
    uint32_t chain[] = { 3, 7, 8, 9, 10, 11, 12 };
    UT_EQ(pt_cool_chunks(f.s->cap, f.s->chunk_size), 4);
    atomic_store(&f.s->used, 6 * 100);
    for (uint32_t k = 0; k + 1 < sizeof chain / sizeof chain[0]; k++) {
        atomic_store(&pt_chunk(f.s, chain[k])->next, chain[k + 1]);
        atomic_store(&pt_chunk(f.s, chain[k])->end, 100);
    }
    for (uint32_t k = 0; k < 4; k++) {
        UT_CHECK(pt_chain_advance(f.h, 0, chain[k + 1]));
        UT_EQ(atomic_load(&f.s->used), (6 - k - 1) * 100);
        UT_EQ((uint32_t)atomic_load(&f.s->pool_top), PT_NONE);
    }
    UT_EQ(f.h->cool.n, 4);
    UT_CHECK(pt_chain_advance(f.h, 0, 11)); /* leaves 10: 3 goes to the pool */
    UT_EQ((uint32_t)atomic_load(&f.s->pool_top), 3);
    UT_EQ(atomic_load(&f.s->used), 100);
    UT_CHECK(pt_chain_advance(f.h, 0, 12)); /* leaves 11: 7 follows */
    UT_EQ((uint32_t)atomic_load(&f.s->pool_top), 7);
    UT_EQ(atomic_load(&pt_chunk(f.s, 7)->next_free), 3);
    UT_EQ(atomic_load(&f.s->used), 0); /* refunded once each, not again */
    UT_EQ(pt_pool_pop(f.s), 7);
    UT_EQ(pt_pool_pop(f.s), 3);
    UT_EQ(pt_pool_pop(f.s), PT_NONE);
    UT_EQ(f.h->cool.n, 4);
    fix_free(f);
}

int main(void)
{
    ut_watchdog(60);
    UT_RUN(advance_ok);
    UT_RUN(advance_seq_not_later);
    UT_RUN(loop_refused);
    UT_RUN(seq_wraps);
    UT_RUN(out_of_range);
    UT_RUN(advance_after_steal);
    UT_RUN(resync_first_chunk);
    UT_RUN(resync_steals);
    UT_RUN(resync_waits);
    UT_RUN(reclaim_drained);
    UT_RUN(reclaim_refused);
    UT_RUN(abandon_pending);
    UT_RUN(cooling);
    return ut_end("t301_chain");
}
