/*
 * The records of a chunk: their encoding (doc/design.md "Records"), shared
 * by the writer (record.c, and a writer adopting an orphan's chunk), the
 * consumer (consume.c, reader.c) and the flusher (flusher.c), so that what
 * one writes and the others read cannot drift apart.
 *
 * Records are 4-byte aligned and start with a 32-bit commit word, which the
 * writer stores last (release); 0: nothing here yet.
 * - Bits 31..26 not 0: a COMPACT event of that class (1..PT_NCLASS), bits
 *   25..0 the ticks since the previous event of the chunk (the first: since
 *   the chunk's ts0). Its class, defined earlier in the same chunk by a CLASS
 *   record, gives the event's id and program address, and either its data
 *   length (the data follows the word) or VARLEN (a u32 length follows the
 *   word, then the data). 16 bytes of data take 20.
 * - Bits 31..26 zero: bits 25..22 the record's type, bits 21..0 its size:
 *     EVENT    u16 id, u16 flags, u32 len, u64 ts, u64 addr, data   28 + data
 *              (an event no class fits: truncated, stamped out of order or
 *              too long after the previous one, the chunk's classes used up)
 *     ANCHOR   u64 ticks, i64 CLOCK_REALTIME ns                      20
 *     CLASS    u8 class, u8 flags (VARLEN), u16 id, u32 len, u64 addr 20
 *     END      the chunk's last record: follow its next          PT_END_BYTES
 *     PENDING  a record is being written here, stamped with the u64 at
 *              pt_pending_ts() (8-aligned, in the 16 bytes after the word)
 * Data is padded to 4 bytes. The decoder's state (struct pt_dec: the last
 * event's stamp and the classes defined so far) is per chunk: a chunk reads
 * alone, from its first record, as LOOP steals and the log need.
 */
#ifndef PT_RECFMT_H
#define PT_RECFMT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define PT_NCLASS        63u            /* classes a chunk may define: 1..63 */
#define PT_CLASS_SHIFT   26
#define PT_DELTA_LIMIT   (UINT32_C(1) << PT_CLASS_SHIFT)
#define PT_TYPE_SHIFT    22
#define PT_SIZE_MASK     ((UINT32_C(1) << PT_TYPE_SHIFT) - 1)

/* Record types (class-0 commit words; COMPACT stands for any class). */
enum { PT_REC_EVENT = 1, PT_REC_ANCHOR = 2, PT_REC_END = 3, PT_REC_PENDING = 4,
       PT_REC_CLASS = 5, PT_REC_COMPACT = 15 };
#define PT_COMMIT(type, size)  (((uint32_t)(type) << PT_TYPE_SHIFT) | (uint32_t)(size))
#define PT_COMMIT_CLASS(c)     ((uint32_t)(c) >> PT_CLASS_SHIFT)
#define PT_COMMIT_TYPE(c)      (PT_COMMIT_CLASS(c) != 0 ? (uint32_t)PT_REC_COMPACT \
                                                        : ((uint32_t)(c) >> PT_TYPE_SHIFT) & 15u)
#define PT_COMMIT_SIZE(c)      ((uint32_t)(c) & PT_SIZE_MASK) /* class-0 records */
#define PT_COMPACT(cls, delta) (((uint32_t)(cls) << PT_CLASS_SHIFT) | (uint32_t)(delta))

#define PT_FULL_HDR    28u  /* an EVENT record before its data */
#define PT_ANCHOR_BYTES 20u
#define PT_CLASS_BYTES 20u
#define PT_CLASS_VARLEN 1u
#define PT_END_BYTES   16u  /* room always kept for an END (or PENDING) record */

static inline uint32_t pt_round4(uint32_t n) { return (n + 3u) & ~3u; }

/* A compact event's size: the word, a length if VARLEN, the data. */
static inline uint32_t pt_compact_size(bool varlen, uint32_t len)
{
    return (varlen ? 8u : 4u) + pt_round4(len);
}

/* Where a PENDING record at rec keeps its stamp: 8-aligned (one store,
 * never torn), inside the 16 bytes every record position has. */
static inline void *pt_pending_ts(void *rec)
{
    return (void *)(((uintptr_t)rec + 4 + 7) & ~(uintptr_t)7);
}

/* A class: what its events share. */
struct pt_rclass {
    uint64_t addr;
    uint32_t len;      /* data length, when not varlen */
    uint16_t id;
    uint8_t varlen;
    uint8_t cls;       /* the writer's cache: its index, 0 = empty */
};

/* The decoder's state in one chunk. */
struct pt_dec {
    uint64_t prev;     /* the last event's stamp (first: the chunk's ts0) */
    uint64_t defined;  /* bit k: class k defined */
    struct pt_rclass cls[PT_NCLASS + 1];
};

static inline void pt_dec_reset(struct pt_dec *d, uint64_t ts0)
{
    d->prev = ts0;
    d->defined = 0;
}

/* One record decoded: an event (COMPACT or EVENT: type PT_REC_EVENT, its
 * header in the decoded fields), an ANCHOR (ts: ticks, addr: ns) or a CLASS
 * (def, k). */
struct pt_drec {
    uint32_t type;
    uint32_t size;     /* bytes of the record */
    uint32_t doff;     /* where its data starts in it */
    uint32_t id, len, flags;
    uint64_t ts, addr;
    uint32_t k;
    struct pt_rclass def;
};

static inline uint16_t pt_rd16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t pt_rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t pt_rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/*
 * Decode the record at p, whose commit word (read once, with acquire) is c,
 * with `avail` bytes from p to the end of its chunk's records: false if it
 * is not a well-formed EVENT, COMPACT, ANCHOR or CLASS record within them
 * (the memory is the writers': every field is checked before use). Reads the
 * record's header only; d is not changed (pt_dec_apply).
 */
static inline bool pt_dec_peek(const struct pt_dec *d, const unsigned char *p, uint32_t c,
                               uint32_t avail, uint32_t id_max, uint32_t len_max,
                               struct pt_drec *o)
{
    uint32_t k = PT_COMMIT_CLASS(c);
    if (k != 0) {
        if (!((d->defined >> k) & 1))
            return false;
        const struct pt_rclass *cl = &d->cls[k];
        o->type = PT_REC_EVENT;
        o->id = cl->id;
        o->addr = cl->addr;
        o->flags = 0;
        o->ts = d->prev + (c & (PT_DELTA_LIMIT - 1));
        o->doff = cl->varlen ? 8u : 4u;
        if (avail < o->doff)
            return false;
        o->len = cl->varlen ? pt_rd32(p + 4) : cl->len;
        if (o->len > len_max)
            return false;
        o->size = o->doff + pt_round4(o->len);
        return o->size <= avail;
    }
    uint32_t size = PT_COMMIT_SIZE(c);
    o->type = PT_COMMIT_TYPE(c);
    o->size = size;
    if (size > avail || size % 4 != 0)
        return false;
    switch (o->type) {
    case PT_REC_EVENT: {
        if (size < PT_FULL_HDR)
            return false;
        uint32_t w = pt_rd32(p + 4);
        o->id = w & 0xffffu;
        o->flags = w >> 16;
        o->len = pt_rd32(p + 8);
        o->ts = pt_rd64(p + 12);
        o->addr = pt_rd64(p + 20);
        o->doff = PT_FULL_HDR;
        return o->id <= id_max && o->len <= len_max && size == PT_FULL_HDR + pt_round4(o->len);
    }
    case PT_REC_ANCHOR:
        if (size != PT_ANCHOR_BYTES)
            return false;
        o->ts = pt_rd64(p + 4);
        o->addr = pt_rd64(p + 12);
        return true;
    case PT_REC_CLASS:
        if (size != PT_CLASS_BYTES)
            return false;
        o->k = p[4];
        o->def.varlen = p[5] & PT_CLASS_VARLEN;
        o->def.id = pt_rd16(p + 6);
        o->def.len = pt_rd32(p + 8);
        o->def.addr = pt_rd64(p + 12);
        o->def.cls = (uint8_t)o->k;
        return o->k >= 1 && o->k <= PT_NCLASS && (p[5] & ~PT_CLASS_VARLEN) == 0 &&
               o->def.id <= id_max && o->def.len <= len_max;
    default:
        return false;
    }
}

/* The decoder past a record pt_dec_peek accepted. */
static inline void pt_dec_apply(struct pt_dec *d, const struct pt_drec *o)
{
    if (o->type == PT_REC_EVENT) {
        d->prev = o->ts;
    } else if (o->type == PT_REC_CLASS) {
        d->cls[o->k] = o->def;
        d->defined |= UINT64_C(1) << o->k;
    }
}

/* ---- the writer's side (record.c): the headers it writes ---- */
static inline void pt_enc_full(unsigned char *p, uint32_t id, uint32_t flags, uint32_t len,
                               uint64_t ts, uint64_t addr)
{
    uint32_t w = (id & 0xffffu) | (flags << 16);
    memcpy(p + 4, &w, 4);
    memcpy(p + 8, &len, 4);
    memcpy(p + 12, &ts, 8);
    memcpy(p + 20, &addr, 8);
}

/* A compact event's header after its word (its length, if VARLEN): returns
 * where its data goes. */
static inline uint32_t pt_enc_compact(unsigned char *p, bool varlen, uint32_t len)
{
    if (!varlen)
        return 4u;
    memcpy(p + 4, &len, 4);
    return 8u;
}

static inline void pt_enc_anchor(unsigned char *p, uint64_t ticks, int64_t ns)
{
    memcpy(p + 4, &ticks, 8);
    memcpy(p + 12, &ns, 8);
}

static inline void pt_enc_class(unsigned char *p, const struct pt_rclass *cl)
{
    p[4] = cl->cls;
    p[5] = cl->varlen ? PT_CLASS_VARLEN : 0;
    memcpy(p + 6, &cl->id, 2);
    memcpy(p + 8, &cl->len, 4);
    memcpy(p + 12, &cl->addr, 8);
}

#endif
