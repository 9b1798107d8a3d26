/*
 * t302_logpack: the PACKED record encoding of trace logs (doc/log-format.md)
 * tested directly: records packed by the flusher's encoder
 * (libtrace/log/logpack.h, pt_pack_put) and read back by the log reader's
 * decoder (libtrace/log/logread_payload.c, lr_packed_rec) come back field for
 * field and byte for byte, and packing what was read gives the same bytes;
 * a block that cannot take a record is left untouched; the varint and
 * zigzag limits; every malformed or cut record is refused by the reader.
 * Prints one line per case and a summary; exits 1 if a check failed.
 */
#include "unit.h"
#include <stdatomic.h>

/* libtrace's (-I libtrace: tests/unit/local.mk) */
#include "internal.h"
#include "log/logpack.h"
#include "log/logread_int.h"

#define MAX_LEN 4096u /* the largest data length the reader is told to accept */

struct orig {
    struct pt_rec rec;
    bool anchor;
    unsigned char data[MAX_LEN];
};

/* Decodes the n bytes of a block packed from `from` (the anchor ticks it
 * began with): each record equal to want[i], its data byte for byte; the
 * records exactly fill the block. Returns the records decoded. */
static uint32_t decode_check(const unsigned char *b, uint32_t n, uint64_t from,
                             const struct orig *want, uint32_t nwant)
{
    struct lr_pstate st = { .ts = from, .addr = 0, .id = 0 };
    uint32_t off = 0, i = 0;
    while (off < n && i < nwant) {
        struct lr_rec r;
        uint32_t size = lr_packed_rec(b + off, n - off, MAX_LEN, &st, &r);
        UT_CHECK(size != 0);
        if (size == 0)
            return i;
        const struct orig *o = &want[i];
        UT_EQ(r.kind, o->anchor ? PT_LOGF_REC_ANCHOR : PT_LOGF_REC_EVENT);
        UT_EQ(r.ts, o->rec.ts);
        UT_EQ(r.addr, o->rec.addr);
        if (!o->anchor) {
            UT_EQ(r.id, o->rec.id);
            UT_EQ(r.len, o->rec.len);
            UT_EQ(r.flags, o->rec.flags & PT_RF_TRUNCATED);
            UT_CHECK(r.data + r.len == size);
            UT_CHECK(memcmp(b + off + r.data, o->data, o->rec.len) == 0);
        }
        off += size;
        i++;
    }
    UT_EQ(off, n);
    UT_EQ(i, nwant);
    UT_EQ(lr_packed_ok(b, n, MAX_LEN), 1);
    return i;
}

/* A record of the generator: mostly small steps, sometimes the extremes. */
static void gen(struct orig *o, uint64_t *rnd, const struct pt_rec *prev)
{
    memset(&o->rec, 0, sizeof o->rec);
    uint64_t k = ut_rnd(rnd);
    o->anchor = k % 40 == 0;
    switch ((k >> 8) % 16) {
    case 0: o->rec.ts = prev->ts - (ut_rnd(rnd) % 1000); break;       /* backwards */
    case 1: o->rec.ts = prev->ts + (UINT64_C(1) << 63); break;         /* INT64_MIN */
    case 2: o->rec.ts = ut_rnd(rnd); break;
    default: o->rec.ts = prev->ts + ut_rnd(rnd) % 5000; break;
    }
    if (o->anchor) {
        o->rec.addr = (k >> 12) % 4 == 0 ? (uint64_t)INT64_MIN : ut_rnd(rnd); /* ns */
        o->rec.len = 0;
        return;
    }
    o->rec.id = (k >> 16) % 3 == 0 ? prev->id : 4 + (uint32_t)(ut_rnd(rnd) % (PT_ID_MAX - 3));
    if (o->rec.id == POSIX_TRACE_OVERFLOW || o->rec.id == POSIX_TRACE_ERROR)
        o->rec.id = 8;
    o->rec.addr = (k >> 20) % 2 ? prev->addr : (k >> 21) % 8 == 0 ? UINT64_MAX : ut_rnd(rnd);
    switch ((k >> 24) % 8) {
    case 0: o->rec.len = 0; break;
    case 1: o->rec.len = MAX_LEN - (uint32_t)(ut_rnd(rnd) % 4); break;
    default: o->rec.len = (uint32_t)(ut_rnd(rnd) % 64); break;
    }
    o->rec.flags = (k >> 28) % 5 == 0 ? PT_RF_TRUNCATED : 0;
    for (uint32_t i = 0; i < o->rec.len; i++)
        o->data[i] = (unsigned char)ut_rnd(rnd);
}

#define BLOCK   8192u
#define NREC    3000u
static struct orig recs[NREC];
static unsigned char blk[BLOCK], again[BLOCK];

/* 3000 generated records packed into 8 KiB blocks, a new block whenever one
 * is full: each block decodes to exactly its records; packing them again,
 * from the same state, gives the same bytes; a refused record leaves the
 * block (and the bytes after it) as they were. */
static void round_trip(void)
{
    uint64_t rnd = 12345;
    struct pt_rec prev = { 0 };
    for (uint32_t i = 0; i < NREC; i++) {
        gen(&recs[i], &rnd, &prev);
        if (!recs[i].anchor)
            prev = recs[i].rec;
        else
            prev.ts = recs[i].rec.ts;
    }
    struct pt_pack pk = { 0 }, pk2;
    uint32_t first = 0, blocks = 0, refused = 0;
    memset(blk, 0xa5, sizeof blk);
    pt_pack_begin(&pk, blk, BLOCK);
    pk2 = pk;
    uint64_t from = pk.ts;
    for (uint32_t i = 0; i <= NREC; i++) {
        uint32_t n = pk.n;
        if (i < NREC && pt_pack_put(&pk, &recs[i].rec, recs[i].anchor, recs[i].data))
            continue;
        if (i < NREC) { /* refused: nothing written */
            refused++;
            UT_EQ(pk.n, n);
            bool clean = true;
            for (uint32_t j = n; j < BLOCK; j++)
                clean = clean && blk[j] == 0xa5;
            UT_CHECK(clean);
        }
        decode_check(blk, pk.n, from, recs + first, i - first);
        /* the same records packed again from the same state: same bytes */
        memset(again, 0x5a, sizeof again);
        pt_pack_begin(&pk2, again, BLOCK);
        for (uint32_t j = first; j < i; j++)
            UT_CHECK(pt_pack_put(&pk2, &recs[j].rec, recs[j].anchor, recs[j].data));
        UT_EQ(pk2.n, pk.n);
        UT_CHECK(memcmp(again, blk, pk.n) == 0);
        blocks++;
        if (i == NREC)
            break;
        UT_CHECK(i > first); /* every record fits an empty block */
        first = i;
        memset(blk, 0xa5, sizeof blk);
        pt_pack_begin(&pk, blk, BLOCK); /* the anchor in effect carries over */
        from = pk.ts;
        pk2 = pk;
        i--;
    }
    UT_CHECK(blocks > 10);
    UT_EQ(refused, blocks - 1);
    printf("round_trip: %u records in %u blocks\n", NREC, blocks);
}

/* LEB128 lengths and the zigzag mapping at their limits. */
static void number_limits(void)
{
    unsigned char b[16];
    UT_EQ(pt_pack_varint(b, 0), 1);
    UT_EQ(b[0], 0);
    UT_EQ(pt_pack_varint(b, 127), 1);
    UT_EQ(pt_pack_varint(b, 128), 2);
    UT_EQ(b[0], 0x80);
    UT_EQ(b[1], 1);
    UT_EQ(pt_pack_varint(b, UINT64_MAX), 10);
    UT_EQ(b[9], 1);
    UT_EQ(pt_pack_zigzag(0), 0);
    UT_EQ(pt_pack_zigzag(-1), 1);
    UT_EQ(pt_pack_zigzag(1), 2);
    UT_EQ(pt_pack_zigzag(INT64_MAX), UINT64_MAX - 1);
    UT_EQ(pt_pack_zigzag(INT64_MIN), UINT64_MAX);
}

/* The longest head (every number at its longest) with data, into a block
 * that holds it exactly: taken, the block full; one byte less: refused,
 * the block untouched. */
static void exact_fit(void)
{
    static struct orig o;
    memset(&o, 0, sizeof o);
    o.rec.ts = UINT64_C(1) << 63; /* a delta of INT64_MIN: 10 bytes */
    o.rec.id = PT_ID_MAX;         /* 2 bytes */
    o.rec.addr = UINT64_C(1) << 63;
    o.rec.len = 300;              /* 2 bytes */
    for (uint32_t i = 0; i < o.rec.len; i++)
        o.data[i] = (unsigned char)(i * 7);
    uint32_t need = 1 + 10 + 2 + 10 + 2 + o.rec.len;
    struct pt_pack pk = { 0 };
    memset(blk, 0xa5, sizeof blk);
    pt_pack_begin(&pk, blk, need - 1);
    UT_CHECK(!pt_pack_put(&pk, &o.rec, false, o.data));
    UT_EQ(pk.n, 0);
    UT_EQ(blk[0], 0xa5);
    UT_EQ(blk[need - 2], 0xa5);
    pt_pack_begin(&pk, blk, need);
    UT_CHECK(pt_pack_put(&pk, &o.rec, false, o.data));
    UT_EQ(pk.n, need);
    decode_check(blk, pk.n, 0, &o, 1);
}

/* Four records packed into exactly the bytes doc/log-format.md gives for
 * them ("PACKED payload"): the tag's bits, the zigzag deltas, the id only
 * when it changes, the address only when it changes, an anchor. */
static void known_bytes(void)
{
    static struct orig o[4];
    memset(o, 0, sizeof o);
    o[0].rec = (struct pt_rec){ .id = 300, .ts = 100, .addr = 0x400000, .len = 2 };
    memcpy(o[0].data, "ab", 2);
    o[1].rec = (struct pt_rec){ .id = 300, .ts = 90, .addr = 0x400000, .len = 0,
                                .flags = PT_RF_TRUNCATED };
    o[2].rec = (struct pt_rec){ .ts = 1000, .addr = 5 };
    o[2].anchor = true;
    o[3].rec = (struct pt_rec){ .id = 301, .ts = 1001, .addr = 0x3ffff0, .len = 1 };
    o[3].data[0] = 'z';
    static const unsigned char want[] = {
        0x11, 0xc8, 0x01, 0xac, 0x02, 0x80, 0x80, 0x80, 0x04, 0x02, 'a', 'b', /* EVENT|ADDR */
        0x0d, 0x13, 0x00,                   /* EVENT|TRUNC|SAME_ID, ts -10, len 0 */
        0x02, 0x9c, 0x0e, 0x0a,             /* ANCHOR, ts +910, 5 ns */
        0x11, 0x02, 0xad, 0x02, 0x1f, 0x01, 'z', /* id 301, addr -16 */
    };
    struct pt_pack pk = { 0 };
    memset(blk, 0xa5, sizeof blk);
    pt_pack_begin(&pk, blk, BLOCK);
    for (int i = 0; i < 4; i++)
        UT_CHECK(pt_pack_put(&pk, &o[i].rec, o[i].anchor, o[i].data));
    UT_EQ(pk.n, sizeof want);
    UT_CHECK(memcmp(blk, want, sizeof want) == 0);
    for (uint32_t i = 0; i < pk.n && i < sizeof want; i++)
        if (blk[i] != want[i])
            printf("byte %u: 0x%02x, expected 0x%02x\n", i, blk[i], want[i]);
    decode_check(blk, pk.n, 0, o, 4);
    UT_EQ(pt_pack_anchor_ticks(&pk), 1000);
}

/* Every proper prefix of a record, and records broken one way or another,
 * are refused (0) by the reader; a packed block with its last byte cut is
 * not well formed. */
static void reader_refuses(void)
{
    static struct orig o;
    memset(&o, 0, sizeof o);
    o.rec.ts = 77;
    o.rec.id = 300;
    o.rec.addr = 0x400000;
    o.rec.len = 5;
    memcpy(o.data, "hello", 5);
    struct pt_pack pk = { 0 };
    pt_pack_begin(&pk, blk, BLOCK);
    UT_CHECK(pt_pack_put(&pk, &o.rec, false, o.data));
    struct lr_pstate st;
    struct lr_rec r;
    for (uint32_t n = 0; n < pk.n; n++) {
        st = (struct lr_pstate){ 0, 0, 0 };
        UT_EQ(lr_packed_rec(blk, n, MAX_LEN, &st, &r), 0);
    }
    UT_EQ(lr_packed_ok(blk, pk.n - 1, MAX_LEN), 0);
    st = (struct lr_pstate){ 0, 0, 0 };
    UT_EQ(lr_packed_rec(blk, pk.n, 4, &st, &r), 0); /* longer than max_len */
    unsigned char bad[][16] = {
        { 0x21, 0, 5, 0 },                 /* a reserved tag bit */
        { 0x00, 0, 5, 0 },                 /* kind 0 */
        { 0x03, 0, 5, 0 },                 /* kind 3 */
        { 0x01, 0, 0x80, 0x10, 0 },        /* id 2048 */
        { 0x06, 0, 0 },                    /* an anchor marked truncated */
        { 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 5, 0 },
        { 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 5, 0 }, /* > 64 bits */
        { 0x01, 0, POSIX_TRACE_OVERFLOW, 4, 1, 2, 3, 4 }, /* an OVERFLOW count not of 8 bytes */
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        st = (struct lr_pstate){ 0, 0, 0 };
        uint32_t got = lr_packed_rec(bad[i], sizeof bad[i], MAX_LEN, &st, &r);
        if (got != 0)
            printf("bad[%u] taken (%u bytes)\n", i, got);
        UT_EQ(got, 0);
    }
    /* and the same shapes well formed are taken (so each refusal above is
     * for the defect named) */
    unsigned char good[][16] = {
        { 0x01, 0, 5, 0 },
        { 0x01, 0, 0x80, 0x0a, 0 },        /* id 1280 */
        { 0x02, 0, 0 },                    /* an anchor */
        { 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 5, 0 },
        { 0x01, 0, POSIX_TRACE_OVERFLOW, 8, 1, 2, 3, 4, 5, 6, 7, 0 },
    };
    uint32_t sizes[] = { 4, 5, 3, 13, 12 };
    for (unsigned i = 0; i < sizeof good / sizeof good[0]; i++) {
        st = (struct lr_pstate){ 0, 0, 0 };
        UT_EQ(lr_packed_rec(good[i], sizes[i], MAX_LEN, &st, &r), sizes[i]);
    }
}

int main(void)
{
    ut_watchdog(60);
    UT_RUN(number_limits);
    UT_RUN(known_bytes);
    UT_RUN(round_trip);
    UT_RUN(exact_fit);
    UT_RUN(reader_refuses);
    return ut_end("t302_logpack");
}
