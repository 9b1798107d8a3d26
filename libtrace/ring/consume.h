/*
 * The consumer of the writer slots' chains (consume.c): one iterator over a
 * slot's chain of chunks, used by the live reader (reader.c, a record at a
 * time) and by the log flusher (flusher.c, a committed extent at a time).
 * Included by internal.h: a handle holds one struct pt_rslot per slot.
 *
 * Invariants (doc/design.md, "Reading" and "Orphan slots"):
 * - A slot's rhead is a tagged word (tagged.h): (tag << 32) | chunk. The
 *   consumer owns it; LOOP stealers (record.c) take its chunk by CAS, and a
 *   writer publishes its first chunk in it. r->rhead is the value the
 *   consumer followed; r->chunk is its low half, r->off an offset in it.
 * - Nothing read from a chunk is used before rhead is read again unchanged
 *   after it (pt_cons_stolen, a seqlock): a stealer may have taken the chunk
 *   and a writer reused it meanwhile. When rhead moved, the consumer follows
 *   the new value and counts the events of the stolen chunks it had not
 *   consumed, exactly (pt_slot.stolen).
 * - The consumer leaves a chunk only at an END record, by CAS of rhead from
 *   the value it followed, to a next chunk later (seq) than the chunk left:
 *   a chain linked into a loop is read once, then the slot is followed no
 *   more (EBADMSG). A seq not later, or an index out of range, is corrupt
 *   only if rhead did not move meanwhile (else: resync).
 * - An orphan slot (its writer gone, reap.c) read to its end is reclaimed by
 *   CAS of rhead from the value followed; a PENDING record at the read
 *   position of an orphan is withdrawn and counted lost.
 * - A record is checked (pt_chain_rec_sane) before it is used: the memory is
 *   the writers'. A bad record costs the rest of its chunk (EBADMSG).
 */
#ifndef PT_CONSUME_H
#define PT_CONSUME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "shm_layout.h"

struct pt_handle;

struct pt_rslot {             /* the consumer's view of one writer slot */
    uint32_t chunk;           /* PT_NONE: not following this slot */
    uint64_t rhead;           /* value of slot->rhead when we took chunk */
    uint32_t off;
    uint32_t delivered;       /* events delivered from chunk */
    uint64_t stolen_seen;     /* slot->stolen accounted for */
    uint64_t gap;             /* flusher: events lost before the next one, not yet reported */
    uint64_t anchor_ts;
    int64_t anchor_ns;
    int has_anchor;
    int bad;                  /* its chain is corrupt: reported once, no longer followed */
    int seq_known;            /* seq holds the seq of chunk (set when advancing) */
    int dec_ok;               /* its decoder (the handle's decs[i]: the records of chunk up
                                 to off, recfmt.h) is set, from the chunk's ts0 */
    uint64_t seq;
};

/* Chunks the consumer has left, their bytes given back to the cap, not yet
 * back in the pool (consume.c, "cooling"): a ring of the last
 * pt_cool_chunks() of them. Under the same lock as the pt_rslot. */
struct pt_cool {
    uint32_t n, head;
    uint32_t c[PT_COOL_MAX];
};
/* What a look at a slot found. */
enum {
    PT_CONS_NONE = 0,     /* nothing now (an orphan drained is reclaimed), or no longer followed */
    PT_CONS_REC = 1,      /* reader: a committed event at r->off, its header in the view */
    PT_CONS_PENDING = 2,  /* its writer is mid-record (reader: rec.ts its stamp), or a writer
                           * or a stealer is between two steps (rec.ts 0): wait */
    PT_CONS_CUT = 3,      /* flusher: its next chunk is past the flush's limit */
};

/* The reader's view: an event decoded (PENDING: rec.ts its stamp), and its
 * chunk's writer. */
struct pt_cons_rec {
    struct pt_drec rec;
    uint32_t pid;
    uint64_t thread;
};

/* Slot i's next event from the read position, anchors and classes consumed
 * on the way. PT_CONS_REC: it is at r->off, decoded in *p (the consumer
 * moves past it with pt_cons_past once it has copied it and checked
 * pt_cons_stolen). */
int pt_cons_record(struct pt_handle *h, uint32_t i, struct pt_cons_rec *p);
void pt_cons_past(struct pt_handle *h, uint32_t i, const struct pt_cons_rec *p);

/* A stamp in ticks and the anchor (ticks, CLOCK_REALTIME ns) it is
 * converted with (has_a 0: none). */
struct pt_stamp {
    uint64_t ts;
    bool has_a;
    uint64_t a_ticks;
    int64_t a_ns;
};

/* The flusher's view: the committed records [r->off, to) of chunk ch. */
struct pt_cons_extent {
    struct pt_chunk *ch;
    uint32_t to;
    uint32_t nev;          /* events among them (anchors aside) */
    bool end;              /* an END record follows them: the chunk is closed */
    bool bad;              /* a corrupt record follows them (the taker may set it too) */
    bool pending;          /* a record being written follows them */
    struct pt_stamp first; /* the first event's stamp, with the anchor in effect there */
};
/* The consumer takes an extent; false: the chunk was stolen while it copied
 * it (pt_cons_stolen), nothing taken. */
typedef bool pt_cons_take(struct pt_handle *h, uint32_t i, struct pt_cons_extent *x, void *ctx);
struct pt_cons_drain {
    bool partial;          /* the open chunk of a live writer too */
    uint64_t seq_limit;    /* chunks of seq at or past it are left (PT_CONS_CUT)... */
    uint32_t *budget;      /* ...and past this many chunks crossed */
    uint64_t *left_seq;    /* lowered to the seq of the first chunk whose records it may
                            * have left untaken (a chunk it was cut before, an open chunk
                            * not read, a chunk not linked yet): all records of the chunks
                            * of lower seq were taken, or were lost */
    pt_cons_take *take;
    void *ctx;
};
/* Slot i's chain from the read position, each chunk's committed extent
 * handed to d->take: closed chunks, the open chunk's when partial. The
 * events lost to LOOP steals meanwhile are added to r->gap. Returns
 * PT_CONS_NONE, PT_CONS_PENDING or PT_CONS_CUT. */
int pt_cons_drain(struct pt_handle *h, uint32_t i, const struct pt_cons_drain *d);

/* The iterator's steps (consume.c), exposed for unit tests of the chain. */
void pt_chain_follow(struct pt_rslot *r, uint64_t rh);
/* Leave slot i's chunk, read to its end, for `next`; false (EBADMSG, the
 * chain no longer followed) when next is out of range or not later than the
 * chunk left (a loop of chunks), unless rhead moved meanwhile */
bool pt_chain_advance(struct pt_handle *h, uint32_t i, uint32_t next);
/* rhead moved to rh: follow it, the events of stolen chunks not consumed
 * counted lost (and added to *lost_out); false while a stealer has not
 * finished its bookkeeping */
bool pt_chain_resync(struct pt_handle *h, uint32_t i, uint64_t rh, uint64_t *lost_out);
void pt_chain_reclaim_orphan(struct pt_handle *h, uint32_t i);
void pt_chain_abandon_pending(struct pt_handle *h, uint32_t i);

/* The seqlock re-check: the chunk followed (r->rhead) was stolen since the
 * consumer read slot sl's rhead, so what it read from the chunk since then
 * may be another writer's. */
static inline bool pt_cons_stolen(struct pt_slot *sl, const struct pt_rslot *r)
{
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&sl->rhead, memory_order_relaxed) != r->rhead;
}

#endif
