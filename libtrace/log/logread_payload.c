/*
 * Trace-log reader: the payloads of EVENTS, PACKED, NAMES and STATUS blocks
 * (doc/log-format.md). A payload that does not parse exactly makes its block
 * invalid.
 */
#include "logread_int.h"

#include <errno.h>
#include <trace.h>

/* The count of an OVERFLOW and the error number of an ERROR are the trace
 * system's own: one it could not have written (pt_bounds.h) makes the record
 * ill-formed, so that a forged or corrupt count is never reported as one
 * (doc/log-format.md "Limits"). */
static int sys_data_ok(uint32_t id, const unsigned char *d, uint32_t len)
{
    if (id == POSIX_TRACE_OVERFLOW)
        return len == 8 && lr_rd64(d) <= PT_LOST_MAX;
    if (id == POSIX_TRACE_ERROR)
        return len == 4 && lr_rd32(d) >= 1 && lr_rd32(d) <= PT_ERRNO_MAX;
    return 1;
}

/* One EVENTS record at p, n bytes left of the payload: its size, or 0 if it
 * is not a well-formed record; *r decoded. */
uint32_t lr_raw_rec(const unsigned char *p, uint32_t n, uint32_t max_len, struct lr_rec *r)
{
    if (n < LR_REC_HDR)
        return 0;
    uint32_t w = lr_rd32(p), type = PT_LOGF_COMMIT_TYPE(w), size = PT_LOGF_COMMIT_SIZE(w);
    uint32_t id = lr_rd32(p + PT_LOGF_R_ID), len = lr_rd32(p + PT_LOGF_R_LEN);
    if (size > n || size < LR_REC_HDR || size % 8 != 0)
        return 0;
    *r = (struct lr_rec){ .kind = type, .size = size, .id = id, .len = len,
                          .flags = lr_rd32(p + PT_LOGF_R_FLAGS), .ts = lr_rd64(p + PT_LOGF_R_TS),
                          .addr = lr_rd64(p + PT_LOGF_R_ADDR), .data = LR_REC_HDR };
    if (type == PT_LOGF_REC_ANCHOR)
        return size == LR_REC_HDR && len == 0 && id == 0 ? size : 0;
    if (type != PT_LOGF_REC_EVENT || id > LR_ID_MAX || len > max_len)
        return 0;
    if (size != LR_REC_HDR + ((len + 7u) & ~7u) || !sys_data_ok(id, p + LR_REC_HDR, len))
        return 0;
    return size;
}

/* 1 when the n bytes at p are a sequence of records that exactly fills them. */
int lr_events_ok(const unsigned char *p, uint32_t n, uint32_t max_len)
{
    uint32_t off = 0;
    struct lr_rec r;
    while (off < n) {
        uint32_t size = lr_raw_rec(p + off, n - off, max_len, &r);
        if (size == 0)
            return 0;
        off += size;
    }
    return 1;
}

/* An unsigned LEB128 number of at most 10 bytes at p[*k..n): 1 and *v, or 0. */
static int varint_long(const unsigned char *p, uint32_t n, uint32_t *k, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (*k >= n)
            return 0;
        unsigned char b = p[(*k)++];
        if (i == 9 && b > 1)
            return 0; /* more than 64 bits */
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

/* Most numbers of a PACKED record take one byte: that case inline. */
static inline int varint(const unsigned char *p, uint32_t n, uint32_t *k, uint64_t *v)
{
    if (*k < n && p[*k] < 0x80) {
        *v = p[(*k)++];
        return 1;
    }
    return varint_long(p, n, k, v);
}

static uint64_t unzigzag(uint64_t v)
{
    return (v >> 1) ^ (0 - (v & 1));
}

/* One PACKED record at p, n bytes left of the payload (doc/log-format.md):
 * its size, or 0 if it is not well-formed; *r decoded, *st advanced. */
uint32_t lr_packed_rec(const unsigned char *p, uint32_t n, uint32_t max_len,
                       struct lr_pstate *st, struct lr_rec *r)
{
    uint32_t k = 1;
    uint64_t v;
    if (n < 2)
        return 0;
    unsigned tag = p[0], kind = tag & 3u;
    if ((tag & 0xe0u) != 0 || (kind != PT_LOGF_REC_EVENT && kind != PT_LOGF_REC_ANCHOR))
        return 0;
    if (!varint(p, n, &k, &v))
        return 0;
    *r = (struct lr_rec){ .kind = kind, .ts = st->ts + unzigzag(v) };
    if (kind == PT_LOGF_REC_ANCHOR) {
        if ((tag & 0x1cu) != 0 || !varint(p, n, &k, &v))
            return 0;
        r->addr = unzigzag(v);
    } else {
        r->flags = (tag >> 2) & 1u;
        r->id = st->id;
        if (!(tag & 8u)) {
            if (!varint(p, n, &k, &v) || v > LR_ID_MAX)
                return 0;
            r->id = (uint32_t)v;
        }
        r->addr = st->addr;
        if (tag & 16u) {
            if (!varint(p, n, &k, &v))
                return 0;
            r->addr = st->addr + unzigzag(v);
        }
        if (!varint(p, n, &k, &v) || v > max_len || v > n - k)
            return 0;
        r->len = (uint32_t)v;
        r->data = k;
        if (!sys_data_ok(r->id, p + k, r->len))
            return 0;
        k += r->len;
        st->id = r->id;
        st->addr = r->addr;
    }
    st->ts = r->ts;
    r->size = k;
    return k;
}

/* 1 when the n bytes at p are a sequence of PACKED records that exactly
 * fills them. */
int lr_packed_ok(const unsigned char *p, uint32_t n, uint32_t max_len)
{
    uint32_t off = 0;
    struct lr_pstate st = { 0, 0, 0 };
    struct lr_rec r;
    while (off < n) {
        uint32_t size = lr_packed_rec(p + off, n - off, max_len, &st, &r);
        if (size == 0)
            return 0;
        off += size;
    }
    return 1;
}

/* The event-name table at p (n bytes): 0, or EINVAL if it does not parse.
 * With l, also stores the names into l (l->named and l->names allocated). */
int lr_names_parse(const unsigned char *p, uint32_t n, struct pt_logr *l)
{
    uint32_t off = 0;
    while (off < n) {
        if (n - off < 8)
            return EINVAL;
        uint32_t id = lr_rd32(p + off), len = lr_rd32(p + off + 4);
        if (id > LR_ID_MAX || len < 1 || len > LR_NAME_MAX)
            return EINVAL;
        uint32_t size = 8 + ((len + 3u) & ~3u);
        if (size > n - off || memchr(p + off + 8, '\0', len) != NULL)
            return EINVAL;
        if (l != NULL) {
            memcpy(l->names[id], p + off + 8, len);
            l->names[id][len] = '\0';
            l->named[id] = 1;
        }
        off += size;
    }
    return 0;
}

static int one_of(int32_t v, int a, int b) { return v == a || v == b; }

/* The STATUS payload at p (n bytes): 0 and *st, *lost, or EINVAL (also for
 * a flush error that is no errno or a lost count beyond PT_LOST_MAX). */
int lr_status_parse(const unsigned char *p, uint32_t n, struct posix_trace_status_info *st,
                    uint64_t *lost)
{
    if (n != PT_LOGF_S_SIZE)
        return EINVAL;
    int32_t v[7];
    for (int i = 0; i < 7; i++)
        v[i] = (int32_t)lr_rd32(p + PT_LOGF_S_STREAM_STATUS + 4 * i); /* up to S_LOG_FULL */
    if (!one_of(v[0], POSIX_TRACE_RUNNING, POSIX_TRACE_SUSPENDED) ||
        !one_of(v[1], POSIX_TRACE_FULL, POSIX_TRACE_NOT_FULL) ||
        !one_of(v[2], POSIX_TRACE_OVERRUN, POSIX_TRACE_NO_OVERRUN) ||
        !one_of(v[3], POSIX_TRACE_FLUSHING, POSIX_TRACE_NOT_FLUSHING) ||
        v[4] < 0 || v[4] > PT_ERRNO_MAX || lr_rd64(p + PT_LOGF_S_LOST) > PT_LOST_MAX ||
        !one_of(v[5], POSIX_TRACE_OVERRUN, POSIX_TRACE_NO_OVERRUN) ||
        !one_of(v[6], POSIX_TRACE_FULL, POSIX_TRACE_NOT_FULL))
        return EINVAL;
    st->posix_stream_status = v[0];
    st->posix_stream_full_status = v[1];
    st->posix_stream_overrun_status = v[2];
    st->posix_stream_flush_status = v[3];
    st->posix_stream_flush_error = v[4];
    st->posix_log_overrun_status = v[5];
    st->posix_log_full_status = v[6];
    *lost = lr_rd64(p + PT_LOGF_S_LOST);
    return 0;
}
