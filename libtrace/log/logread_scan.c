/*
 * Trace-log reader: the file header and the scan of the block positions
 * (doc/log-format.md). Every value from the file is checked before use.
 */
#include "logread_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include "xxh.h"
#include <trace.h>

#define LR_SCAN_BYTES (1u << 20) /* blocks read per pread, at least one */

static int is_pow2(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

static int policies_ok(const struct lr_header *h)
{
    int circular = (h->flags & 1u) != 0;
    if (h->stream_policy < POSIX_TRACE_LOOP || h->stream_policy > POSIX_TRACE_FLUSH)
        return 0;
    if (h->log_policy != POSIX_TRACE_LOOP && h->log_policy != POSIX_TRACE_UNTIL_FULL &&
        h->log_policy != POSIX_TRACE_APPEND)
        return 0;
    if (h->inheritance != POSIX_TRACE_CLOSE_FOR_CHILD &&
        h->inheritance != POSIX_TRACE_INHERITED)
        return 0;
    return circular == (h->log_policy == POSIX_TRACE_LOOP);
}

static void header_decode(const unsigned char *p, struct lr_header *h)
{
    uint64_t tpn = lr_rd64(p + PT_LOGF_H_TICKS_PER_NS);
    h->block_size = lr_rd32(p + PT_LOGF_H_BLOCK_SIZE);
    h->flags = lr_rd32(p + PT_LOGF_H_FLAGS);
    h->create_sec = (int64_t)lr_rd64(p + PT_LOGF_H_CREATE_SEC);
    h->create_nsec = lr_rd32(p + PT_LOGF_H_CREATE_NSEC);
    h->clock_mode = lr_rd32(p + PT_LOGF_H_CLOCK);
    memcpy(&h->ticks_per_ns, &tpn, sizeof tpn);
    h->stream_size = lr_rd64(p + PT_LOGF_H_STREAM_SIZE);
    h->max_data_size = lr_rd64(p + PT_LOGF_H_MAX_DATA);
    h->log_size = lr_rd64(p + PT_LOGF_H_LOG_SIZE);
    h->stream_policy = lr_rd32(p + PT_LOGF_H_STREAM_POLICY);
    h->log_policy = lr_rd32(p + PT_LOGF_H_LOG_POLICY);
    h->inheritance = lr_rd32(p + PT_LOGF_H_INHERIT);
    h->creator_pid = lr_rd32(p + PT_LOGF_H_CREATOR);
    memcpy(h->name, p + 88, sizeof h->name);
    h->tick0 = lr_rd64(p + PT_LOGF_H_TICK0);
    h->real0_ns = (int64_t)lr_rd64(p + PT_LOGF_H_REAL0);
}

/* p: the first LR_HDR_SIZE bytes of the file. 0 or EINVAL. */
int lr_header_parse(const unsigned char *p, struct lr_header *h)
{
    uint32_t version = lr_rd32(p + PT_LOGF_H_VERSION);
    if (memcmp(p, PT_LOGF_MAGIC, 8) != 0 || version < PT_LOGF_VERSION_MIN ||
        version > PT_LOGF_VERSION || lr_rd32(p + PT_LOGF_H_HDR_SIZE) != LR_HDR_SIZE ||
        pt_xxh3(p, LR_HDR_SUM_OFF) != lr_rd64(p + LR_HDR_SUM_OFF))
        return EINVAL;
    header_decode(p, h);
    if (!is_pow2(h->block_size) || h->block_size < LR_MIN_BLOCK ||
        h->block_size > LR_MAX_BLOCK || (h->flags & ~1u) != 0 ||
        h->create_nsec > 999999999u || (h->clock_mode != 1 && h->clock_mode != 2) ||
        !isfinite(h->ticks_per_ns) || !(h->ticks_per_ns > 0) ||
        h->max_data_size > LR_MAX_DATA || !policies_ok(h) ||
        memchr(h->name, '\0', sizeof h->name) == NULL)
        return EINVAL;
    return 0;
}

void lr_note_bad(struct pt_logr *l, uint64_t off)
{
    l->bad++;
    if (l->first_bad < 0 || off < (uint64_t)l->first_bad)
        l->first_bad = (long long)off;
}

/* pread until n bytes, end of file or an error: the bytes read. */
static size_t pread_full(int fd, unsigned char *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

/* The checksum of the block at b (header and payload_len <= B - 64 payload
 * bytes present): header bytes 0..55 followed by the payload. Moves the
 * header next to the payload, so b's header is garbage afterwards. */
static uint64_t block_sum(unsigned char *b, uint32_t plen)
{
    memmove(b + 8, b, LR_BLK_SUM_OFF);
    return pt_xxh3(b + 8, LR_BLK_SUM_OFF + (size_t)plen);
}

static int payload_ok(const struct pt_logr *l, uint32_t type, const unsigned char *p,
                      uint32_t n)
{
    struct posix_trace_status_info st;
    uint64_t lost;
    switch (type) {
    case LR_EVENTS: return lr_events_ok(p, n, l->max_len);
    case LR_PACKED: return lr_packed_ok(p, n, l->max_len);
    case LR_NAMES: return lr_names_parse(p, n, NULL) == 0;
    case LR_STATUS: return lr_status_parse(p, n, &st, &lost) == 0;
    default: return 0;
    }
}

/* Decodes and checks the block of B bytes (fewer: avail) at b, file offset
 * off, its payload too when `payload`. 1: valid, *out filled (b's header is
 * clobbered); 0: invalid. */
static int block_check(const struct pt_logr *l, unsigned char *b, size_t avail, uint64_t off,
                       bool payload, struct lr_block *out)
{
    if (avail < LR_BLK_HDR || memcmp(b, PT_LOGF_BLK_MAGIC, 4) != 0)
        return 0;
    struct lr_block k = {
        .off = off, .seq = lr_rd64(b + PT_LOGF_B_SEQ), .sum = lr_rd64(b + LR_BLK_SUM_OFF),
        .thread = lr_rd64(b + PT_LOGF_B_THREAD), .a_ticks = lr_rd64(b + PT_LOGF_B_ATICKS),
        .a_ns = (int64_t)lr_rd64(b + PT_LOGF_B_ANS), .plen = lr_rd32(b + PT_LOGF_B_PLEN),
        .slot = lr_rd32(b + PT_LOGF_B_SLOT), .pid = lr_rd32(b + PT_LOGF_B_PID),
        .type = b[PT_LOGF_B_TYPE] | (uint32_t)b[PT_LOGF_B_TYPE + 1] << 8,
    };
    if (k.type < LR_EVENTS || k.type > LR_PACKED || k.seq == 0 ||
        k.plen > l->h.block_size - LR_BLK_HDR || k.plen > avail - LR_BLK_HDR)
        return 0;
    if (lr_is_events(k.type) && k.slot > 255 && k.slot != LR_SLOT_SYS)
        return 0;
    if (block_sum(b, k.plen) != k.sum ||
        (payload && !payload_ok(l, k.type, b + LR_BLK_HDR, k.plen)))
        return 0;
    *out = k;
    return 1;
}

/* Block positions to read: for a circular log n = max(8, (log_size - 4096) / B),
 * those present in the file; else every whole block in the file. *partial:
 * the file ends inside a block position that counts. */
uint64_t lr_loop_positions(const struct lr_header *h)
{
    uint64_t n = h->log_size > LR_HDR_SIZE ? (h->log_size - LR_HDR_SIZE) / h->block_size : 0;
    return n < LR_MIN_LOOP_POS ? LR_MIN_LOOP_POS : n;
}

static uint64_t positions(const struct lr_header *h, uint64_t fsize, int *partial)
{
    uint64_t B = h->block_size, have = (fsize - LR_HDR_SIZE) / B;
    *partial = (fsize - LR_HDR_SIZE) % B != 0;
    if (h->flags & 1u) {
        uint64_t n = lr_loop_positions(h);
        if (have >= n) {
            have = n;
            *partial = 0;
        }
    }
    return have;
}

struct lr_vec {
    struct lr_block *v;
    size_t n, cap;
};

static int vec_push(struct lr_vec *v, const struct lr_block *b)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 64;
        struct lr_block *nv = realloc(v->v, cap * sizeof *nv);
        if (nv == NULL)
            return ENOMEM;
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = *b;
    return 0;
}

/* Checks the blocks of one read: cnt positions from pos, got bytes at buf. */
static int scan_chunk(struct pt_logr *l, unsigned char *buf, size_t got, uint64_t pos,
                      uint64_t cnt, struct lr_vec *v)
{
    size_t B = l->h.block_size;
    for (uint64_t j = 0; j < cnt; j++) {
        uint64_t off = LR_HDR_SIZE + (pos + j) * B;
        size_t have = got > j * B ? got - j * B : 0;
        struct lr_block k;
        if (have >= B && block_check(l, buf + j * B, B, off, true, &k)) {
            if (vec_push(v, &k) != 0)
                return ENOMEM;
        } else {
            lr_note_bad(l, off);
        }
    }
    return 0;
}

/* Reads every block position of the file (of fsize >= 4096 bytes): the valid
 * blocks in file order in *all (malloc'ed), the invalid ones counted. */
int lr_scan(struct pt_logr *l, uint64_t fsize, struct lr_block **all, size_t *n)
{
    int partial, rc = 0;
    size_t B = l->h.block_size, per = B >= LR_SCAN_BYTES ? 1 : LR_SCAN_BYTES / B;
    uint64_t npos = positions(&l->h, fsize, &partial);
    struct lr_vec v = { 0 };
    if (partial)
        lr_note_bad(l, LR_HDR_SIZE + npos * B);
    unsigned char *buf = npos ? malloc(per * B) : NULL;
    if (npos && buf == NULL)
        return ENOMEM;
    for (uint64_t pos = 0; pos < npos && rc == 0; pos += per) {
        uint64_t cnt = npos - pos < per ? npos - pos : per;
        size_t got = pread_full(l->fd, buf, (size_t)cnt * B, LR_HDR_SIZE + pos * B);
        rc = scan_chunk(l, buf, got, pos, cnt, &v);
    }
    free(buf);
    if (rc != 0) {
        free(v.v);
        return rc;
    }
    *all = v.v;
    *n = v.n;
    return 0;
}

/* Reads block b again (header and payload) into *buf, growing it: 0 when it
 * is still the block the scan found (same header fields and checksum) and,
 * with `payload`, its payload still parses; else EIO (the file changed), or
 * ENOMEM. */
int lr_read_block(const struct pt_logr *l, const struct lr_block *b, unsigned char **buf,
                  size_t *cap, bool payload)
{
    size_t need = LR_BLK_HDR + (size_t)b->plen;
    if (*cap < need) {
        unsigned char *nb = realloc(*buf, need);
        if (nb == NULL)
            return ENOMEM;
        *buf = nb;
        *cap = need;
    }
    struct lr_block k;
    size_t got = pread_full(l->fd, *buf, need, b->off);
    if (got != need || !block_check(l, *buf, need, b->off, payload, &k) || k.seq != b->seq ||
        k.sum != b->sum || k.plen != b->plen || k.type != b->type || k.slot != b->slot)
        return EIO;
    return 0;
}
