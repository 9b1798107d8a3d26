/*
 * The free-chunk pool: a lock-free LIFO of chunk indices (a Treiber stack whose
 * top word carries a 32-bit tag against ABA), plus a bump counter handing out
 * chunks never used before, so that untouched chunks cost no memory (a
 * writer in a process other than the creator maps such a chunk in one call
 * before writing it: shm.c, pt_shm_prefault).
 * The top word is a tagged word (tagged.h).
 *
 * Writers pop (once per chunk, not per event); the reader pushes chunks it
 * has consumed. Reading a stale next_free of a chunk popped meanwhile is
 * harmless: the tag makes the CAS fail.
 *
 * The cap (shm_layout.h): a closed chunk (its `next` set) carries its
 * written bytes, `end`, in `used`; pushing it back gives them back. An open
 * chunk pushed back (an orphan's, consume.c) was never charged. The consumer
 * gives a chunk's bytes back when it leaves it, and links it onto the stack
 * later (consume.c, "cooling").
 */
#include "../internal.h"
#include "tagged.h"

void pt_pool_init(struct pt_shm *s)
{
    atomic_store(&s->pool_top, (uint64_t)PT_NONE); /* tag 0 */
    atomic_store(&s->free_count, s->nchunks);
    atomic_store(&s->fresh_next, 0);
    atomic_store(&s->used, 0);
}

uint32_t pt_pool_pop(struct pt_shm *s)
{
    uint64_t top = atomic_load_explicit(&s->pool_top, memory_order_acquire);
    for (;;) {
        uint32_t idx = (uint32_t)top;
        if (idx == PT_NONE)
            break;
        if (idx >= s->nchunks) /* corrupt: treat as empty */
            return PT_NONE;
        uint32_t next = atomic_load_explicit(&pt_chunk(s, idx)->next_free,
                                             memory_order_relaxed);
        if (atomic_compare_exchange_weak_explicit(&s->pool_top, &top,
                                                  pt_tag_next(top, next),
                                                  memory_order_acquire,
                                                  memory_order_acquire)) {
            atomic_fetch_sub_explicit(&s->free_count, 1, memory_order_relaxed);
            return idx;
        }
    }
    uint32_t fresh = atomic_load_explicit(&s->fresh_next, memory_order_relaxed);
    while (fresh < s->nchunks) {
        if (atomic_compare_exchange_weak_explicit(&s->fresh_next, &fresh, fresh + 1,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed)) {
            atomic_fetch_sub_explicit(&s->free_count, 1, memory_order_relaxed);
            pt_shm_prefault(s, fresh);
            return fresh;
        }
    }
    return PT_NONE;
}

void pt_pool_refund(struct pt_shm *s, uint32_t idx)
{
    struct pt_chunk *c = pt_chunk(s, idx);
    if (atomic_load_explicit(&c->next, memory_order_acquire) != PT_NONE)
        pt_used_refund(s, atomic_load_explicit(&c->end, memory_order_relaxed));
}

void pt_pool_push(struct pt_shm *s, uint32_t idx)
{
    pt_pool_refund(s, idx);
    pt_pool_link(s, idx);
}

void pt_pool_link(struct pt_shm *s, uint32_t idx)
{
    struct pt_chunk *c = pt_chunk(s, idx);
    uint64_t top = atomic_load_explicit(&s->pool_top, memory_order_relaxed);
    do {
        atomic_store_explicit(&c->next_free, (uint32_t)top, memory_order_relaxed);
    } while (!atomic_compare_exchange_weak_explicit(&s->pool_top, &top,
                                                    pt_tag_next(top, idx),
                                                    memory_order_release,
                                                    memory_order_relaxed));
    atomic_fetch_add_explicit(&s->free_count, 1, memory_order_relaxed);
}
