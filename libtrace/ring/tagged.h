/*
 * Tagged words: a 64-bit word shared by several parties who change it by
 * compare-and-swap, holding a 32-bit value (a chunk index, or PT_NONE) in its
 * low half and a tag in its high half:
 *
 *     word = (tag << 32) | value
 *
 * Invariant: every change of the word bumps the tag by one (modulo 2^32), so
 * a compare-and-swap from a word read earlier fails if anyone changed it
 * meanwhile, even back to the same value (ABA). The words: a slot's rhead
 * (the consumer moving on, a LOOP stealer taking a chunk, a writer's first
 * chunk, an orphan reclaimed) and the pool's top (pool.c). A word set to a
 * bare value (PT_NONE at creation) has tag 0.
 */
#ifndef PT_TAGGED_H
#define PT_TAGGED_H

#include <stdint.h>

/* The word that replaces `word` by `value`: its tag bumped. */
static inline uint64_t pt_tag_next(uint64_t word, uint32_t value)
{
    return (((word >> 32) + 1) << 32) | value;
}

/* The tag of a word: how many times it changed (modulo 2^32). */
static inline uint64_t pt_tag_of(uint64_t word)
{
    return word >> 32;
}

#endif
