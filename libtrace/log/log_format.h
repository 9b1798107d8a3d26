/*
 * The trace log format, byte by byte (doc/log-format.md): the one
 * definition of its offsets, sizes, block types and flags, included by the
 * side that writes it (logwrite.c, the flusher's PACKED encoder logpack.h)
 * and the side that reads it (logread*.c), so that they cannot drift apart.
 * All integers little-endian.
 */
#ifndef PT_LOG_FORMAT_H
#define PT_LOG_FORMAT_H

#include "../ring/pt_sizes.h"

/* ---- the file header: one 4 KiB block at offset 0 ---- */
#define PT_LOGF_MAGIC       "PXTRACEL" /* 8 bytes at offset 0 */
#define PT_LOGF_VERSION     3u         /* written (3: ids up to 2047); the reader takes 1..3 */
#define PT_LOGF_VERSION_MIN 1u
#define PT_LOGF_HDR_SIZE    4096u
#define PT_LOGF_ID_MAX      2047u      /* the largest event type id of a record or a name */
enum {
    PT_LOGF_H_VERSION = 8,        /* u32 */
    PT_LOGF_H_HDR_SIZE = 12,      /* u32: PT_LOGF_HDR_SIZE */
    PT_LOGF_H_BLOCK_SIZE = 16,    /* u32 */
    PT_LOGF_H_FLAGS = 20,         /* u32: bit 0, circular (LOOP) */
    PT_LOGF_H_CREATE_SEC = 24,    /* i64 */
    PT_LOGF_H_CREATE_NSEC = 32,   /* u32 */
    PT_LOGF_H_CLOCK = 36,         /* u32: PT_CLOCK_TSC or PT_CLOCK_REALTIME */
    PT_LOGF_H_TICKS_PER_NS = 40,  /* f64 bits */
    PT_LOGF_H_STREAM_SIZE = 48,   /* u64 */
    PT_LOGF_H_MAX_DATA = 56,      /* u64 */
    PT_LOGF_H_LOG_SIZE = 64,      /* u64 */
    PT_LOGF_H_STREAM_POLICY = 72, /* u32 */
    PT_LOGF_H_LOG_POLICY = 76,    /* u32 */
    PT_LOGF_H_INHERIT = 80,       /* u32 */
    PT_LOGF_H_CREATOR = 84,       /* u32: the creator's pid */
    PT_LOGF_H_NAME = 88,          /* the stream's name, NUL-padded */
    PT_LOGF_H_NAME_LEN = 256,
    PT_LOGF_H_TICK0 = 344,        /* u64 */
    PT_LOGF_H_REAL0 = 352,        /* i64 */
    PT_LOGF_H_SUM = PT_LOGF_HDR_SIZE - 8, /* u64: XXH3-64 of the bytes before it */
};
_Static_assert(PT_LOGF_H_NAME + PT_LOGF_H_NAME_LEN <= PT_LOGF_H_TICK0, "log header: name");
_Static_assert(PT_LOGF_H_REAL0 + 8 <= PT_LOGF_H_SUM, "log header: fields before the checksum");

/* ---- blocks: a 64-byte header, then the payload ---- */
#define PT_LOGF_BLK_MAGIC "PXBK" /* 4 bytes at offset 0 */
#define PT_LOGF_BLK_HDR   64u
enum {
    PT_LOGF_B_TYPE = 4,     /* u16: PT_LOG_EVENTS... */
    PT_LOGF_B_SEQ = 8,      /* u64: 1, 2, ... in write order */
    PT_LOGF_B_PLEN = 16,    /* u32: payload bytes */
    PT_LOGF_B_SLOT = 20,    /* u32: writer slot, PT_LOG_SYS_SLOT */
    PT_LOGF_B_PID = 24,     /* u32 */
    PT_LOGF_B_THREAD = 32,  /* u64: pthread_t */
    PT_LOGF_B_ATICKS = 40,  /* u64: anchor ticks */
    PT_LOGF_B_ANS = 48,     /* i64: anchor CLOCK_REALTIME ns */
    PT_LOGF_B_SUM = 56,     /* u64: XXH3-64 of the header before it and the payload */
};
_Static_assert(PT_LOGF_B_SUM + 8 == PT_LOGF_BLK_HDR, "block header: checksum last");

enum { PT_LOG_EVENTS = 1, PT_LOG_NAMES = 2, PT_LOG_STATUS = 3, PT_LOG_PACKED = 4 };
#define PT_LOG_SYS_SLOT   0xFFFFu /* events the trace system reports itself */
#define PT_LOG_MIN_BLOCKS 8u      /* smallest LOOP or UNTIL_FULL log, in blocks */

/* ---- an EVENTS block's records: a 32-byte header, then the data ---- */
#define PT_LOGF_REC_HDR 32u
enum {
    PT_LOGF_R_COMMIT = 0, /* u32: (type << 24) | size */
    PT_LOGF_R_ID = 4,     /* u32 */
    PT_LOGF_R_TS = 8,     /* u64: ticks */
    PT_LOGF_R_ADDR = 16,  /* u64 */
    PT_LOGF_R_LEN = 24,   /* u32: data bytes */
    PT_LOGF_R_FLAGS = 28, /* u32 */
};
_Static_assert(PT_LOGF_R_FLAGS + 4 == PT_LOGF_REC_HDR, "record header");
enum { PT_LOGF_REC_EVENT = 1, PT_LOGF_REC_ANCHOR = 2 }; /* the commit word's type */
#define PT_LOGF_COMMIT(type, size) (((uint32_t)(type) << 24) | (uint32_t)(size))
#define PT_LOGF_COMMIT_TYPE(w)     ((uint32_t)(w) >> 24)
#define PT_LOGF_COMMIT_SIZE(w)     ((uint32_t)(w) & 0xffffffu)

/* ---- a STATUS block's payload: posix_trace_status_info, flags, lost ---- */
enum {
    PT_LOGF_S_STREAM_STATUS = 0,  /* i32 each, posix_trace_status_info's fields */
    PT_LOGF_S_FULL = 4,
    PT_LOGF_S_OVERRUN = 8,
    PT_LOGF_S_FLUSH = 12,
    PT_LOGF_S_FLUSH_ERROR = 16,
    PT_LOGF_S_LOG_OVERRUN = 20,
    PT_LOGF_S_LOG_FULL = 24,
    PT_LOGF_S_FLAGS = 28,         /* u32: PT_LOG_STATUS_FINAL | tail << 8 */
    PT_LOGF_S_LOST = 32,          /* u64: events lost so far */
    PT_LOGF_S_SIZE = 40,
};
/* The STATUS flags word: bit 0, the log's last flush (shutdown, or the flush
 * that filled an UNTIL_FULL log); bits 8..31, the blocks of the log after
 * this one (an in-place rewrite after a failed write). */
#define PT_LOG_STATUS_FINAL      1u
#define PT_LOG_STATUS_TAIL_SHIFT 8u
#define PT_LOG_STATUS_TAIL_MAX   0xFFFFFFu

#endif
