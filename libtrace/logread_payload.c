/*
 * Trace-log reader: the payloads of EVENTS, NAMES and STATUS blocks
 * (doc/log-format.md). A payload that does not parse exactly makes its block
 * invalid.
 */
#include "logread_int.h"

#include <errno.h>
#include <trace.h>

/* One record at p, n >= 8 bytes left of the payload: its size, or 0 if it
 * is not a well-formed record. */
static uint32_t record_ok(const unsigned char *p, uint32_t n, uint32_t max_len)
{
    if (n < LR_REC_HDR)
        return 0;
    uint32_t w = lr_rd32(p), type = w >> 24, size = w & 0xffffffu;
    uint32_t id = lr_rd32(p + 4), len = lr_rd32(p + 24);
    if (size > n || size < LR_REC_HDR || size % 8 != 0)
        return 0;
    if (type == LR_REC_ANCHOR)
        return size == LR_REC_HDR && len == 0 && id == 0 ? size : 0;
    if (type != LR_REC_EVENT || id > LR_ID_MAX || len > max_len)
        return 0;
    return size == LR_REC_HDR + ((len + 7u) & ~7u) ? size : 0;
}

/* 1 when the n bytes at p are a sequence of records that exactly fills them. */
int lr_events_ok(const unsigned char *p, uint32_t n, uint32_t max_len)
{
    uint32_t off = 0;
    while (off < n) {
        uint32_t size = record_ok(p + off, n - off, max_len);
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

/* The STATUS payload at p (n bytes): 0 and *st, or EINVAL. */
int lr_status_parse(const unsigned char *p, uint32_t n, struct posix_trace_status_info *st)
{
    if (n != 40)
        return EINVAL;
    int32_t v[7];
    for (int i = 0; i < 7; i++)
        v[i] = (int32_t)lr_rd32(p + 4 * i);
    if (!one_of(v[0], POSIX_TRACE_RUNNING, POSIX_TRACE_SUSPENDED) ||
        !one_of(v[1], POSIX_TRACE_FULL, POSIX_TRACE_NOT_FULL) ||
        !one_of(v[2], POSIX_TRACE_OVERRUN, POSIX_TRACE_NO_OVERRUN) ||
        !one_of(v[3], POSIX_TRACE_FLUSHING, POSIX_TRACE_NOT_FLUSHING) ||
        v[4] < 0 || v[4] > 4095 ||
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
    return 0;
}
