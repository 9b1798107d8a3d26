/*
 * PACKED blocks of a trace log (doc/log-format.md): a writer slot's records
 * re-encoded compactly (varint deltas, no padding) by the flusher, about half
 * the bytes of the recorded form. Written by flusher.c; read by
 * logread_payload.c.
 */
#ifndef PT_LOGPACK_H
#define PT_LOGPACK_H

#include "../internal.h"
#include <string.h>

/* One open PACKED block and the state its next record is encoded against. */
struct pt_pack {
    unsigned char *p;        /* the block's payload area; NULL: no block open */
    uint32_t n, max;         /* bytes used, capacity */
    uint32_t slot, pid;      /* the block header's */
    uint64_t thread;
    uint64_t ts, addr;       /* the previous record's stamp and address */
    uint32_t id;             /* the previous event's id */
    bool has_a;              /* an anchor is in effect ... */
    uint64_t a_ticks;        /* ... this one */
    int64_t a_ns;
};

/* The anchor_ticks a new block's header carries (0: none). */
static inline uint64_t pt_pack_anchor_ticks(const struct pt_pack *pk)
{
    return pk->has_a ? pk->a_ticks : 0;
}

/*
 * The encoding (doc/log-format.md, "PACKED payload"): each record is a tag
 * byte and LEB128 varints relative to the previous record of the block: the
 * stamp as a zigzag delta, the id only when it changes, the address as a
 * zigzag delta only when it changes, then the data length and the data. A
 * 16-byte event usually takes 19 or 20 bytes instead of 48. Inline: the
 * flusher runs this once per event.
 */
#define PT_PACK_EVENT   1u
#define PT_PACK_ANCHOR  2u
#define PT_PACK_TRUNC   4u  /* truncated when recorded */
#define PT_PACK_SAME_ID 8u  /* id omitted: the previous event's */
#define PT_PACK_ADDR    16u /* address delta present (else the previous address) */
#define PT_PACK_HEAD_MAX (1 + 4 * 10)

static inline uint32_t pt_pack_varint(unsigned char *p, uint64_t v)
{
    uint32_t k = 0;
    while (v >= 0x80) {
        p[k++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[k++] = (unsigned char)v;
    return k;
}

static inline uint64_t pt_pack_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* A block was opened at p (max payload bytes): start encoding into it. */
static inline void pt_pack_begin(struct pt_pack *pk, unsigned char *p, uint32_t max)
{
    pk->p = p;
    pk->n = 0;
    pk->max = max;
    pk->ts = pt_pack_anchor_ticks(pk); /* what the reader starts from */
    pk->addr = 0;
    pk->id = 0;
}

/* An event's tag and varints into t, against the previous record's stamp,
 * id and address (last_*): their length. tag: PT_PACK_EVENT, with
 * PT_PACK_TRUNC for a truncated event. */
static inline __attribute__((always_inline)) uint32_t
pt_pack_event_head(unsigned char *t, unsigned tag, uint64_t ts, uint32_t id, uint64_t addr,
                   uint32_t len, uint64_t last_ts, uint32_t last_id, uint64_t last_addr)
{
    if (id == last_id)
        tag |= PT_PACK_SAME_ID;
    if (addr != last_addr)
        tag |= PT_PACK_ADDR;
    t[0] = (unsigned char)tag;
    uint32_t k = 1 + pt_pack_varint(t + 1, pt_pack_zigzag((int64_t)(ts - last_ts)));
    if (!(tag & PT_PACK_SAME_ID))
        k += pt_pack_varint(t + k, id);
    if (tag & PT_PACK_ADDR)
        k += pt_pack_varint(t + k, pt_pack_zigzag((int64_t)(addr - last_addr)));
    return k + pt_pack_varint(t + k, len);
}

/* The record's tag and varints into t: their length. */
static inline __attribute__((always_inline)) uint32_t
pt_pack_head(const struct pt_pack *pk, const struct pt_rec *rec, bool anchor, unsigned char *t)
{
    if (anchor) {
        t[0] = PT_PACK_ANCHOR;
        uint32_t k = 1 + pt_pack_varint(t + 1, pt_pack_zigzag((int64_t)(rec->ts - pk->ts)));
        return k + pt_pack_varint(t + k, pt_pack_zigzag((int64_t)rec->addr));
    }
    unsigned tag = PT_PACK_EVENT | (rec->flags & PT_RF_TRUNCATED ? PT_PACK_TRUNC : 0u);
    return pt_pack_event_head(t, tag, rec->ts, rec->id, rec->addr, rec->len, pk->ts, pk->id,
                              pk->addr);
}

/* Encode one record (an anchor, or an event whose rec->len data bytes are at
 * data) into the open block: false if it does not fit (nothing written). */
static inline __attribute__((always_inline)) bool
pt_pack_put(struct pt_pack *pk, const struct pt_rec *rec, bool anchor, const void *data)
{
    uint32_t len = anchor ? 0 : rec->len;
    if (pk->p == NULL || pk->max - pk->n < len + 2)
        return false;
    unsigned char *d = pk->p + pk->n, t[PT_PACK_HEAD_MAX];
    bool direct = pk->max - pk->n >= PT_PACK_HEAD_MAX + len; /* the worst case fits */
    unsigned char *h = direct ? d : t;
    uint32_t k = pt_pack_head(pk, rec, anchor, h);
    if (k + len > pk->max - pk->n)
        return false;
    if (!direct)
        memcpy(d, t, k);
    pt_copy_small(d + k, data, len);
    pk->n += k + len;
    pk->ts = rec->ts;
    if (anchor) {
        pk->has_a = true;
        pk->a_ticks = rec->ts;
        pk->a_ns = (int64_t)rec->addr;
    } else {
        pk->id = rec->id;
        pk->addr = rec->addr;
    }
    return true;
}

#endif
