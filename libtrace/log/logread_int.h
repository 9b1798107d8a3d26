/*
 * Internals of the trace-log reader (logread.c, logread_scan.c,
 * logread_events.c). The format: doc/log-format.md. Everything decoded here
 * comes from an untrusted file and is checked before use.
 */
#ifndef PT_LOGREAD_INT_H
#define PT_LOGREAD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <endian.h>

#include "logread.h"
#include "log_format.h"
#include "../ring/pt_bounds.h"
#include "../ring/pt_sizes.h"

/* the format's constants are log_format.h's, shared with the writer */
#define LR_HDR_SIZE    PT_LOGF_HDR_SIZE
#define LR_HDR_SUM_OFF PT_LOGF_H_SUM
#define LR_BLK_HDR     PT_LOGF_BLK_HDR
#define LR_BLK_SUM_OFF PT_LOGF_B_SUM
#define LR_REC_HDR     PT_LOGF_REC_HDR
#define LR_MIN_BLOCK   4096u
#define LR_MAX_BLOCK   (16u << 20)
#define LR_MAX_DATA    PT_MAX_MAX_DATA_SIZE /* the largest max_data_size */
#define LR_ID_MAX      PT_LOGF_ID_MAX
#define LR_NAME_MAX    63u
#define LR_SLOT_SYS    PT_LOG_SYS_SLOT
#define LR_MIN_LOOP_POS PT_LOG_MIN_BLOCKS
#define LR_UNNAMED     256u
#define LR_UNNAMED_NAME "posix_trace_unnamed_userevent"
#define LR_STATUS_FINAL PT_LOG_STATUS_FINAL           /* STATUS flags: the last flush... */
#define LR_STATUS_TAIL_SHIFT PT_LOG_STATUS_TAIL_SHIFT /* ...and the blocks after it */

enum { LR_EVENTS = PT_LOG_EVENTS, LR_NAMES = PT_LOG_NAMES, LR_STATUS = PT_LOG_STATUS,
       LR_PACKED = PT_LOG_PACKED };

/* A block of events: raw records (EVENTS) or packed ones (PACKED). */
static inline int lr_is_events(uint32_t type)
{
    return type == LR_EVENTS || type == LR_PACKED;
}

static inline uint32_t lr_rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return le32toh(v);
}

static inline uint64_t lr_rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return le64toh(v);
}

/* The file header, decoded and checked. */
struct lr_header {
    uint32_t block_size, flags, clock_mode, create_nsec;
    int64_t create_sec;
    double ticks_per_ns;
    uint64_t stream_size, max_data_size, log_size;
    uint32_t stream_policy, log_policy, inheritance, creator_pid;
    uint64_t tick0;
    int64_t real0_ns;
    char name[256];
};

/* One valid block, as found by the scan. */
struct lr_block {
    uint64_t off, seq, sum, thread, a_ticks;
    int64_t a_ns;
    uint32_t plen, slot, pid, type;
};

/* One record of an EVENTS or PACKED payload, decoded. */
struct lr_rec {
    uint32_t kind;              /* PT_LOGF_REC_EVENT or PT_LOGF_REC_ANCHOR */
    uint32_t size;              /* bytes it takes in the payload */
    uint32_t id, len, flags;    /* flags: bit 0 truncated when recorded */
    uint64_t ts, addr;          /* an anchor's CLOCK_REALTIME ns is in addr */
    uint32_t data;              /* offset of its data from the record's start */
};

/* What a PACKED record is relative to: the previous record of its block. */
struct lr_pstate {
    uint64_t ts, addr;
    uint32_t id;
};

/* One writer slot's place in the merge: its EVENTS and PACKED blocks
 * l->ev[first, end). */
struct lr_cursor {
    uint32_t slot;
    size_t first, end, blk;     /* blk: the block loaded in buf */
    unsigned char *buf;         /* block header + payload of l->ev[blk] */
    size_t cap;
    uint32_t off, plen;         /* next record, in the payload */
    uint32_t type;              /* LR_EVENTS or LR_PACKED */
    struct lr_pstate ps;        /* PACKED: state after the record at off */
    uint64_t a_ticks;           /* anchor in effect (clock_mode 1) */
    int64_t a_ns;
    struct lr_rec rec;          /* the event at off */
};

struct pt_logr {
    int fd;                     /* our own duplicate of the caller's */
    struct lr_header h;
    uint32_t max_len;           /* PT_RECORD_DATA_MAX(max_data_size) */
    struct lr_block *ev;        /* EVENTS blocks, by (slot, seq) */
    size_t nev;
    struct lr_cursor *cur;
    uint32_t ncur;
    uint32_t *heap;             /* cursor indices, earliest head first */
    uint32_t nheap;
    int primed;
    int64_t last_ns;            /* last timestamp reported */
    long long bad, first_bad;
    struct posix_trace_status_info st;
    uint64_t lost;              /* the STATUS block's lost count (0: none) */
    uint64_t status_seq;        /* seq of that STATUS block (0: none) */
    uint32_t status_flags;      /* its flags word (payload offset 28) */
    long long missing;          /* blocks missing (logread_gaps.c) */
    int closed;                 /* the log ends with its final STATUS block */
    unsigned char *named;       /* LR_ID_MAX + 1 flags; NULL: no NAMES block */
    char (*names)[LR_NAME_MAX + 1];
};

/* logread_scan.c */
int  lr_header_parse(const unsigned char *p, struct lr_header *h);
int  lr_scan(struct pt_logr *l, uint64_t fsize, struct lr_block **all, size_t *n);
/* The block positions of a circular log: (log_size - 4096) / block_size, at least 8. */
uint64_t lr_loop_positions(const struct lr_header *h);
void lr_note_bad(struct pt_logr *l, uint64_t off);
int  lr_read_block(const struct pt_logr *l, const struct lr_block *b, unsigned char **buf,
                   size_t *cap, bool payload);
int  lr_events_ok(const unsigned char *p, uint32_t n, uint32_t max_len);
int  lr_packed_ok(const unsigned char *p, uint32_t n, uint32_t max_len);
uint32_t lr_raw_rec(const unsigned char *p, uint32_t n, uint32_t max_len, struct lr_rec *r);
uint32_t lr_packed_rec(const unsigned char *p, uint32_t n, uint32_t max_len,
                       struct lr_pstate *st, struct lr_rec *r);
int  lr_names_parse(const unsigned char *p, uint32_t n, struct pt_logr *l);
int  lr_status_parse(const unsigned char *p, uint32_t n, struct posix_trace_status_info *st,
                     uint64_t *lost);

/* logread_gaps.c */
void lr_gaps(struct pt_logr *l, const struct lr_block *all, size_t n, long long bad);

/* logread_events.c */
void lr_events_free(struct pt_logr *l);
int  lr_events_index(struct pt_logr *l, const struct lr_block *all, size_t n);

#endif
