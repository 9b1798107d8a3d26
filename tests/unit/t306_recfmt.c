/*
 * t306_recfmt: the encoding of a chunk's records (libtrace/ring/recfmt.h,
 * doc/design.md "Records"): what the writer's helpers write, the decoder
 * reads back exactly; every record the decoder is given from memory another
 * process may write is checked, and a malformed one refused.
 */
#include "unit.h"
#include "internal.h"

#define LEN_MAX 256u
#define ID_MAX 2047u

static unsigned char buf[4096];
static uint32_t pos;

static void put_commit(uint32_t at, uint32_t c)
{
    memcpy(buf + at, &c, 4);
}

static uint32_t add_class(uint8_t k, uint16_t id, uint32_t len, uint64_t addr, bool varlen)
{
    struct pt_rclass cl = { .addr = addr, .len = len, .id = id, .varlen = varlen, .cls = k };
    uint32_t at = pos;
    pt_enc_class(buf + at, &cl);
    put_commit(at, PT_COMMIT(PT_REC_CLASS, PT_CLASS_BYTES));
    pos += PT_CLASS_BYTES;
    return at;
}

static uint32_t add_compact(uint8_t k, uint32_t delta, bool varlen, const void *d, uint32_t len)
{
    uint32_t at = pos, hdr = pt_enc_compact(buf + at, varlen, len);
    memcpy(buf + at + hdr, d, len);
    put_commit(at, PT_COMPACT(k, delta));
    pos += pt_compact_size(varlen, len);
    return at;
}

static uint32_t add_full(uint16_t id, uint32_t flags, uint64_t ts, uint64_t addr, const void *d,
                         uint32_t len)
{
    uint32_t at = pos, size = PT_FULL_HDR + pt_round4(len);
    pt_enc_full(buf + at, id, flags, len, ts, addr);
    memcpy(buf + at + PT_FULL_HDR, d, len);
    put_commit(at, PT_COMMIT(PT_REC_EVENT, size));
    pos += size;
    return at;
}

static uint32_t add_anchor(uint64_t ticks, int64_t ns)
{
    uint32_t at = pos;
    pt_enc_anchor(buf + at, ticks, ns);
    put_commit(at, PT_COMMIT(PT_REC_ANCHOR, PT_ANCHOR_BYTES));
    pos += PT_ANCHOR_BYTES;
    return at;
}

static bool peek_at(const struct pt_dec *d, uint32_t at, struct pt_drec *o)
{
    uint32_t c;
    memcpy(&c, buf + at, 4);
    return pt_dec_peek(d, buf + at, c, (uint32_t)sizeof buf - at, ID_MAX, LEN_MAX, o);
}

/* A chunk as the writer makes one, read back record by record: stamps from
 * ts0 by deltas, through anchors and classes (which move no stamp), an
 * EVENT record (which does), a site whose length varies (VARLEN), data
 * byte for byte, each record's size and data offset. */
static void round_trip(void)
{
    const char a[] = "0123456789abcdef", b[] = "xyz";
    pos = 0;
    memset(buf, 0, sizeof buf);
    add_anchor(1000, 1700000000123456789);
    add_class(1, 300, 16, 0x401234, false);
    add_compact(1, 7, false, a, 16);
    add_compact(1, 0, false, a, 16);
    add_class(2, 301, 0, 0x401300, true);
    add_compact(2, PT_DELTA_LIMIT - 1, true, b, 3);
    add_full(302, PT_RF_TRUNCATED, 500, 0xfffffffffff0, a, 5); /* earlier than prev */
    add_compact(1, 2, false, a, 16);
    put_commit(pos, PT_COMMIT(PT_REC_END, PT_END_BYTES));

    struct pt_dec d;
    pt_dec_reset(&d, 5000);
    struct { uint32_t type, id, len, flags; uint64_t ts, addr; uint32_t size, doff; const char *data; }
    want[] = {
        { PT_REC_ANCHOR, 0, 0, 0, 1000, 1700000000123456789u, 20, 0, NULL },
        { PT_REC_CLASS, 0, 0, 0, 0, 0, 20, 0, NULL },
        { PT_REC_EVENT, 300, 16, 0, 5007, 0x401234, 20, 4, a },
        { PT_REC_EVENT, 300, 16, 0, 5007, 0x401234, 20, 4, a },
        { PT_REC_CLASS, 0, 0, 0, 0, 0, 20, 0, NULL },
        { PT_REC_EVENT, 301, 3, 0, 5007 + PT_DELTA_LIMIT - 1, 0x401300, 12, 8, b },
        { PT_REC_EVENT, 302, 5, PT_RF_TRUNCATED, 500, 0xfffffffffff0, 36, 28, a },
        { PT_REC_EVENT, 300, 16, 0, 502, 0x401234, 20, 4, a },
    };
    uint32_t at = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct pt_drec o;
        UT_CHECK(peek_at(&d, at, &o));
        UT_EQ(o.type, want[i].type);
        UT_EQ(o.size, want[i].size);
        if (o.type == PT_REC_EVENT) {
            UT_EQ(o.id, want[i].id);
            UT_EQ(o.len, want[i].len);
            UT_EQ(o.flags, want[i].flags);
            UT_EQ(o.ts, want[i].ts);
            UT_EQ(o.addr, want[i].addr);
            UT_EQ(o.doff, want[i].doff);
            UT_CHECK(memcmp(buf + at + o.doff, want[i].data, o.len) == 0);
        } else if (o.type == PT_REC_ANCHOR) {
            UT_EQ(o.ts, want[i].ts);
            UT_EQ(o.addr, want[i].addr);
        }
        pt_dec_apply(&d, &o);
        at += o.size;
    }
    UT_EQ(at, pos);
    uint32_t c;
    memcpy(&c, buf + at, 4);
    UT_EQ(PT_COMMIT_TYPE(c), PT_REC_END);
    UT_EQ(PT_COMMIT_SIZE(c), PT_END_BYTES);
}

/* Malformed records, each refused: a class not defined in the chunk, a
 * class index out of range or with unknown flags, sizes that do not match
 * the length or pass the end of the chunk, lengths past the stream's
 * largest, ids past the last, unknown types, anchors of the wrong size. */
static void refused(void)
{
    struct pt_dec d;
    struct pt_drec o;
    const char x[32] = { 0 };

    pos = 0;
    pt_dec_reset(&d, 0);
    add_compact(5, 1, false, x, 8); /* class 5 never defined */
    UT_CHECK(!peek_at(&d, 0, &o));

    for (int k = 0; k < 4; k++) {
        pos = 0;
        uint32_t at = add_class(k == 0 ? 0 : k == 1 ? PT_NCLASS + 1 : 3,
                                k == 3 ? ID_MAX + 1 : 300, 8, 0x1000, false);
        if (k == 2)
            buf[at + 5] = 2; /* an unknown flag */
        UT_CHECK(!peek_at(&d, at, &o));
    }
    pos = 0;
    add_class(3, 300, LEN_MAX + 1, 0x1000, false);
    UT_CHECK(!peek_at(&d, 0, &o));

    /* a varlen event whose length passes the largest, or the chunk */
    pos = 0;
    add_class(4, 300, 0, 0x1000, true);
    UT_CHECK(peek_at(&d, 0, &o));
    pt_dec_apply(&d, &o);
    uint32_t at = add_compact(4, 1, true, x, 8);
    UT_CHECK(peek_at(&d, at, &o));
    uint32_t big = LEN_MAX + 4;
    memcpy(buf + at + 4, &big, 4);
    UT_CHECK(!peek_at(&d, at, &o));
    uint32_t c;
    memcpy(&c, buf + at, 4);
    UT_CHECK(!pt_dec_peek(&d, buf + at, c, 4, ID_MAX, LEN_MAX, &o)); /* no room for its length */
    memcpy(buf + at + 4, &(uint32_t){ 8 }, 4);
    UT_CHECK(!pt_dec_peek(&d, buf + at, c, 12, ID_MAX, LEN_MAX, &o)); /* 16 bytes, 12 left */
    UT_CHECK(pt_dec_peek(&d, buf + at, c, 16, ID_MAX, LEN_MAX, &o));

    /* EVENT records: the size must be the header and the padded data */
    pos = 0;
    at = add_full(300, 0, 1, 2, x, 5);
    UT_CHECK(peek_at(&d, at, &o));
    put_commit(at, PT_COMMIT(PT_REC_EVENT, PT_FULL_HDR + 4));
    UT_CHECK(!peek_at(&d, at, &o));
    put_commit(at, PT_COMMIT(PT_REC_EVENT, PT_FULL_HDR + 10)); /* not a multiple of 4 */
    UT_CHECK(!peek_at(&d, at, &o));
    put_commit(at, PT_COMMIT(PT_REC_EVENT, 8)); /* shorter than a header */
    UT_CHECK(!peek_at(&d, at, &o));
    pos = 0;
    at = add_full(ID_MAX + 1, 0, 1, 2, x, 4);
    UT_CHECK(!peek_at(&d, at, &o));
    pos = 0;
    at = add_full(300, 0, 1, 2, x, 8);
    memcpy(&c, buf + at, 4);
    UT_CHECK(!pt_dec_peek(&d, buf + at, c, PT_FULL_HDR + 4, ID_MAX, LEN_MAX, &o));

    /* anchors of another size, unknown types, END/PENDING are not records to decode */
    pos = 0;
    at = add_anchor(1, 2);
    put_commit(at, PT_COMMIT(PT_REC_ANCHOR, 24));
    UT_CHECK(!peek_at(&d, at, &o));
    uint32_t types[] = { 0, 6, 7, 14, PT_REC_END, PT_REC_PENDING };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        put_commit(0, PT_COMMIT(types[i], 20));
        UT_CHECK(!peek_at(&d, 0, &o));
    }
}

/* A PENDING record's stamp: 8-aligned, past its commit word, and inside the
 * 16 bytes every position has before a chunk's end (PT_END_BYTES). */
static void pending_stamp(void)
{
    unsigned char *base = (unsigned char *)(((uintptr_t)buf + 7) & ~(uintptr_t)7);
    for (uint32_t off = 0; off < 64; off += 4) {
        unsigned char *ts = pt_pending_ts(base + off);
        UT_EQ((uintptr_t)ts % 8, 0);
        UT_CHECK(ts >= base + off + 4 && ts + 8 <= base + off + PT_END_BYTES);
    }
}

/* The commit word: class 0 words give type and size; any class is COMPACT,
 * whatever its delta; nothing written is 0. */
static void commit_words(void)
{
    UT_EQ(PT_COMMIT_TYPE(PT_COMMIT(PT_REC_CLASS, 20)), PT_REC_CLASS);
    UT_EQ(PT_COMMIT_SIZE(PT_COMMIT(PT_REC_EVENT, PT_FULL_HDR + 65536)), PT_FULL_HDR + 65536);
    UT_EQ(PT_COMMIT_TYPE(PT_COMPACT(1, 0)), PT_REC_COMPACT);
    UT_EQ(PT_COMMIT_TYPE(PT_COMPACT(PT_NCLASS, PT_DELTA_LIMIT - 1)), PT_REC_COMPACT);
    UT_EQ(PT_COMMIT_CLASS(PT_COMPACT(PT_NCLASS, PT_DELTA_LIMIT - 1)), PT_NCLASS);
    UT_CHECK(PT_COMPACT(1, 0) != 0);
}

int main(void)
{
    ut_watchdog(60);
    UT_RUN(round_trip);
    UT_RUN(refused);
    UT_RUN(pending_stamp);
    UT_RUN(commit_words);
    return ut_end("t306_recfmt");
}
