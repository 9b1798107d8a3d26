/*
 * Writing a trace log (doc/log-format.md): the file header, blocks with
 * their checksums, the name table and the status. Blocks are built in a
 * buffer and written in batches: a flush is a few large writes.
 */
#include "../internal.h"
#include "logwrite.h"
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "xxh.h"

#define HDR_SIZE PT_LOGF_HDR_SIZE
#define BLK_HDR PT_LOGF_BLK_HDR
#define PT_LOGW_BATCH 256u /* blocks written per system call at most */
/* A block is a chunk (shm.c), which holds two of the largest records; the
 * reader accepts data up to PT_RECORD_DATA_MAX(max_data_size) (pt_sizes.h),
 * the limit record.c applies. Even the smallest block holds a system event. */
_Static_assert(PT_LOGF_ID_MAX == PT_ID_MAX, "a log holds every event type id");
_Static_assert(BLK_HDR + PT_REC_HDR + PT_SYS_DATA_BYTES <= HDR_SIZE,
               "a 4 KiB block holds the largest system event");

struct pt_logw {
    int fd;
    int sequential;           /* write() in order: not a regular file, or O_APPEND */
    int regular;              /* a regular file: truncated when the log (re)starts */
    int circular;             /* log policy LOOP */
    int until_full;           /* log policy UNTIL_FULL */
    uint32_t block_size;
    uint64_t positions;       /* block positions (LOOP, UNTIL_FULL); else UINT64_MAX */
    uint64_t next_pos;        /* position of the next block to write */
    uint64_t seq;             /* seq of the last block written */
    uint64_t status_pos;      /* position and seq of the last STATUS block */
    uint64_t status_seq;      /* written (seq 0: none) */
    int pending_error;        /* a write failed since pt_logw_take_error() */
    int sticky_error;         /* the last write error of this log: never reset */
    uint32_t blk_events[PT_LOGW_BATCH]; /* events in each block of the batch */
    uint64_t lost_events;     /* in blocks whose write failed, not yet taken */
    /* the batch: blocks to write, as iovecs (header, payload in `stage`,
     * padding) */
    uint64_t batch_pos;       /* position of the first block of the batch */
    uint32_t nblk;
    struct iovec iov[3 * PT_LOGW_BATCH];
    unsigned char hdrs[PT_LOGW_BATCH][BLK_HDR];
    unsigned char *stage;
    size_t stage_len, stage_cap;
    unsigned char *zeros;     /* block_size zero bytes for padding */
    unsigned char *open_payload; /* pt_logw_block() payload not yet sealed */
    uint8_t names_done[PT_ID_MAX + 1];
    struct pt_xxh *xxh;        /* streaming checksum: block header, then payload */
    struct pt_logw_status st;
    unsigned char header[HDR_SIZE];
};

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* EBADF: not open for writing; EINVAL: a file type that cannot hold the log
 * policy (LOOP needs a regular file it can write at any offset). */
int pt_logw_check_fd(int fd, int log_policy)
{
    int fl = fcntl(fd, F_GETFL);
    struct stat sb;
    if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fstat(fd, &sb) != 0)
        return EBADF;
    if (S_ISREG(sb.st_mode))
        return log_policy == POSIX_TRACE_LOOP && (fl & O_APPEND) ? EINVAL : 0;
    if (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode) || S_ISCHR(sb.st_mode))
        return log_policy == POSIX_TRACE_LOOP ? EINVAL : 0;
    return EINVAL;
}

static void build_header(struct pt_logw *w, const struct pt_shm *s)
{
    unsigned char *h = w->header;
    double tpn = s->ticks_per_ns;
    uint64_t tpn_bits;
    memcpy(&tpn_bits, &tpn, sizeof tpn_bits);
    memset(h, 0, HDR_SIZE);
    memcpy(h, PT_LOGF_MAGIC, 8);
    put32(h + PT_LOGF_H_VERSION, PT_LOGF_VERSION);
    put32(h + PT_LOGF_H_HDR_SIZE, HDR_SIZE);
    put32(h + PT_LOGF_H_BLOCK_SIZE, w->block_size);
    put32(h + PT_LOGF_H_FLAGS, w->circular ? 1u : 0u);
    put64(h + PT_LOGF_H_CREATE_SEC, (uint64_t)s->create_sec);
    put32(h + PT_LOGF_H_CREATE_NSEC, (uint32_t)s->create_nsec);
    put32(h + PT_LOGF_H_CLOCK, s->clock_mode);
    put64(h + PT_LOGF_H_TICKS_PER_NS, tpn_bits);
    put64(h + PT_LOGF_H_STREAM_SIZE, s->stream_size);
    put64(h + PT_LOGF_H_MAX_DATA, s->max_data);
    put64(h + PT_LOGF_H_LOG_SIZE, s->log_size);
    put32(h + PT_LOGF_H_STREAM_POLICY, (uint32_t)s->stream_policy);
    put32(h + PT_LOGF_H_LOG_POLICY, (uint32_t)s->log_policy);
    put32(h + PT_LOGF_H_INHERIT, (uint32_t)s->inheritance);
    put32(h + PT_LOGF_H_CREATOR, s->creator_pid);
    memcpy(h + PT_LOGF_H_NAME, s->name, strnlen(s->name, PT_LOGF_H_NAME_LEN - 1));
    put64(h + PT_LOGF_H_TICK0, s->tick0);
    put64(h + PT_LOGF_H_REAL0, (uint64_t)s->real0_ns);
    put64(h + PT_LOGF_H_SUM, pt_xxh3(h, PT_LOGF_H_SUM));
}

static int io_error(int e)
{
    return e == ENOSPC || e == EFBIG ? e : EIO;
}

static int write_all(int fd, const unsigned char *p, size_t n, off_t off, int sequential)
{
    while (n > 0) {
        ssize_t k = sequential ? write(fd, p, n) : pwrite(fd, p, n, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return io_error(k < 0 ? errno : ENOSPC);
        p += k;
        n -= (size_t)k;
        off += k;
    }
    return 0;
}

static int write_header(struct pt_logw *w)
{
    if (w->regular && ftruncate(w->fd, 0) != 0)
        return io_error(errno);
    return write_all(w->fd, w->header, HDR_SIZE, 0, w->sequential);
}

int pt_logw_create(int fd, const struct pt_shm *s, struct pt_logw **out)
{
    struct stat sb;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fstat(fd, &sb) != 0)
        return EBADF;
    struct pt_logw *w = calloc(1, sizeof *w);
    if (w == NULL || (w->xxh = pt_xxh_new()) == NULL) {
        free(w);
        return ENOMEM;
    }
    w->fd = fd;
    w->sequential = !S_ISREG(sb.st_mode) || (fl & O_APPEND);
    w->regular = S_ISREG(sb.st_mode);
    w->circular = s->log_policy == POSIX_TRACE_LOOP;
    w->until_full = s->log_policy == POSIX_TRACE_UNTIL_FULL;
    w->block_size = s->chunk_size;
    w->positions = UINT64_MAX;
    if (w->circular || w->until_full) {
        w->positions = s->log_size > HDR_SIZE ? (s->log_size - HDR_SIZE) / w->block_size : 0;
        if (w->positions < PT_LOG_MIN_BLOCKS) {
            pt_logw_destroy(w);
            return EINVAL;
        }
    }
    w->st.log_full = POSIX_TRACE_NOT_FULL;
    w->st.log_overrun = POSIX_TRACE_NO_OVERRUN;
    w->stage_cap = (size_t)w->block_size * 16;
    w->stage = malloc(w->stage_cap);
    w->zeros = calloc(1, w->block_size);
    if (w->stage == NULL || w->zeros == NULL) {
        pt_logw_destroy(w);
        return ENOMEM;
    }
    build_header(w, s);
    int rc = write_header(w);
    if (rc != 0) {
        pt_logw_destroy(w);
        return rc;
    }
    *out = w;
    return 0;
}

void pt_logw_destroy(struct pt_logw *w)
{
    if (w == NULL)
        return;
    pt_xxh_free(w->xxh);
    free(w->stage);
    free(w->zeros);
    free(w);
}

/* Start over as a new log (posix_trace_clear). */
int pt_logw_reset(struct pt_logw *w)
{
    w->nblk = 0;
    w->stage_len = 0;
    memset(w->blk_events, 0, sizeof w->blk_events);
    w->lost_events = 0;
    if (w->regular) { /* truncated: the log starts over; a pipe's goes on */
        w->next_pos = 0;
        w->seq = 0;
        w->status_seq = 0;
    }
    w->sticky_error = 0;
    memset(w->names_done, 0, sizeof w->names_done);
    w->st.log_full = POSIX_TRACE_NOT_FULL;
    w->st.log_overrun = POSIX_TRACE_NO_OVERRUN;
    w->st.stopped = 0;
    if (!w->regular) /* a pipe cannot be rewound: the log simply goes on */
        return 0;
    return write_header(w);
}

struct pt_logw_status *pt_logw_status(struct pt_logw *w)
{
    return &w->st;
}

uint32_t pt_logw_payload_max(const struct pt_logw *w)
{
    return w->block_size - BLK_HDR;
}

/* Blocks that may still be written before an UNTIL_FULL log is full. */
uint64_t pt_logw_room(const struct pt_logw *w)
{
    if (!w->until_full)
        return UINT64_MAX;
    uint64_t used = w->next_pos + w->nblk;
    return used < w->positions ? w->positions - used : 0;
}

/* At most the blocks the next pt_logw_names() writes. */
uint64_t pt_logw_names_blocks(const struct pt_logw *w, struct pt_shm *s)
{
    uint64_t bytes = 0;
    struct pt_name *t = pt_names(s);
    for (uint32_t id = 0; id <= PT_ID_MAX; id++) {
        if ((!w->names_done[id] || w->circular) &&
            atomic_load_explicit(&t[id].valid, memory_order_relaxed))
            bytes += 8 + TRACE_EVENT_NAME_MAX + 1;
    }
    return (bytes + pt_logw_payload_max(w) - 1) / pt_logw_payload_max(w);
}

/* Full: commit before adding a block. */
bool pt_logw_batch_full(const struct pt_logw *w)
{
    return w->nblk == PT_LOGW_BATCH || w->stage_len + w->block_size > w->stage_cap;
}

static unsigned char *add_header(struct pt_logw *w, const struct pt_logw_block *b,
                                 uint32_t payload_len)
{
    if (w->nblk == 0)
        w->batch_pos = w->next_pos;
    unsigned char *p = w->hdrs[w->nblk];
    memset(p, 0, BLK_HDR);
    memcpy(p, PT_LOGF_BLK_MAGIC, 4);
    p[PT_LOGF_B_TYPE] = (unsigned char)b->type;
    put64(p + PT_LOGF_B_SEQ, w->seq + 1 + w->nblk);
    put32(p + PT_LOGF_B_PLEN, payload_len);
    put32(p + PT_LOGF_B_SLOT, b->slot);
    put32(p + PT_LOGF_B_PID, b->pid);
    put64(p + PT_LOGF_B_THREAD, b->thread);
    put64(p + PT_LOGF_B_ATICKS, b->anchor_ticks);
    put64(p + PT_LOGF_B_ANS, (uint64_t)b->anchor_ns);
    return p;
}

static void finish(struct pt_logw *w, unsigned char *hdr, const void *payload, uint32_t n)
{
    pt_xxh_reset(w->xxh);
    pt_xxh_update(w->xxh, hdr, PT_LOGF_B_SUM);
    pt_xxh_update(w->xxh, payload, n);
    put64(hdr + PT_LOGF_B_SUM, pt_xxh_digest(w->xxh));
    struct iovec *v = &w->iov[3 * w->nblk];
    v[0] = (struct iovec){ hdr, BLK_HDR };
    v[1] = (struct iovec){ (void *)payload, n };
    v[2] = (struct iovec){ w->zeros, w->block_size - BLK_HDR - n };
    w->nblk++;
}

/* A block whose payload (at most pt_logw_payload_max bytes) the caller
 * writes into the returned area, then seals with pt_logw_seal(). The batch
 * must not be full. Not sealing drops it. */
unsigned char *pt_logw_block(struct pt_logw *w, const struct pt_logw_block *b)
{
    add_header(w, b, b->payload_len);
    w->open_payload = w->stage + w->stage_len;
    return w->open_payload;
}

/* Seal with a payload of n bytes (at most what pt_logw_block announced). */
void pt_logw_seal_len(struct pt_logw *w, uint32_t n)
{
    put32(w->hdrs[w->nblk] + PT_LOGF_B_PLEN, n);
    pt_logw_seal(w);
}

void pt_logw_seal(struct pt_logw *w)
{
    unsigned char *hdr = w->hdrs[w->nblk];
    uint32_t n = (uint32_t)hdr[16] | (uint32_t)hdr[17] << 8 | (uint32_t)hdr[18] << 16 |
                 (uint32_t)hdr[19] << 24;
    finish(w, hdr, w->open_payload, n);
    w->stage_len += (n + 63) & ~(size_t)63;
}

/* Bytes written are added to *written, even when it fails. */
static int write_iov(struct pt_logw *w, struct iovec *v, int n, uint64_t pos,
                     uint64_t *written)
{
    off_t off = (off_t)(HDR_SIZE + pos * w->block_size);
    while (n > 0) {
        ssize_t k = w->sequential ? writev(w->fd, v, n) : pwritev(w->fd, v, n, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return io_error(k < 0 ? errno : ENOSPC);
        off += k;
        *written += (uint64_t)k;
        while (n > 0 && (size_t)k >= v->iov_len) {
            k -= (ssize_t)v->iov_len;
            v++;
            n--;
        }
        if (n > 0) {
            v->iov_base = (char *)v->iov_base + k;
            v->iov_len -= (size_t)k;
        }
    }
    return 0;
}

/* A circular log about to wrap with the batch and `extra` more blocks is
 * full and overwrites: say so in the status written with them. */
void pt_logw_predict_wrap(struct pt_logw *w, uint32_t extra)
{
    if (w->circular && w->next_pos + w->nblk + extra > w->positions) {
        w->st.log_full = POSIX_TRACE_FULL;
        w->st.log_overrun = POSIX_TRACE_OVERRUN;
    }
}

/* The batch's write failed after `written` bytes. A regular file is cut
 * back to the last whole block written (unless a circular log wrapped), so
 * that no torn block is left, and keeps those blocks; with no STATUS block
 * in the log yet, one block less, to make room for the one that records the
 * failure (pt_logw_status_after_error). Returns the blocks kept, or -1 when
 * the file could not be cut (batch_kept: the reader finds the torn block
 * invalid). The next block takes the seq of the first block not kept. */
static int64_t unwrite_batch(struct pt_logw *w, uint64_t written)
{
    if (!w->regular || (w->circular && w->batch_pos + w->nblk > w->positions))
        return -1;
    uint64_t keep = written / w->block_size;
    if (keep > w->nblk)
        keep = w->nblk;
    if (keep > 0 && w->status_seq == 0)
        keep--;
    if (ftruncate(w->fd, (off_t)(HDR_SIZE + (w->batch_pos + keep) * w->block_size)) != 0)
        return -1;
    return (int64_t)keep;
}

/* Of a batch whose write failed after `written` bytes: *whole, the blocks
 * in the log whole (the others' events are lost), and *used, the block
 * positions and seq numbers it took. They are the same when the failed
 * write could be undone (unwrite_batch); else the torn block stays in the
 * file (a reader finds it invalid) and takes its position and seq, so that
 * the blocks written next continue the numbering with no gap: a reader takes
 * a seq number that no block accounts for as a block missing (log-format.md
 * "Order of blocks"). */
static void batch_kept(struct pt_logw *w, uint64_t written, uint32_t *whole, uint32_t *used)
{
    int64_t kept = unwrite_batch(w, written);
    if (kept >= 0) {
        *whole = *used = (uint32_t)kept;
        return;
    }
    uint64_t b = w->block_size, n = written / b, torn = written % b != 0;
    *whole = n < w->nblk ? (uint32_t)n : w->nblk;
    *used = n + torn < w->nblk ? (uint32_t)(n + torn) : w->nblk;
}

/* After `n` blocks of the batch were written whole: where the last STATUS
 * block among them is. */
static void note_status(struct pt_logw *w, uint32_t n)
{
    for (uint32_t i = n; i-- > 0;) {
        if (w->hdrs[i][4] == PT_LOG_STATUS) {
            w->status_pos = w->batch_pos + i;
            w->status_seq = w->seq + 1 + i;
            return;
        }
    }
}

/* Write the batch to the file (a circular log in two runs at the wrap). Of
 * a batch whose write failed, the whole blocks written are kept and the
 * rest undone (unwrite_batch); the events of the blocks undone are lost
 * (pt_logw_take_lost). */
int pt_logw_commit(struct pt_logw *w)
{
    uint32_t done = 0;
    uint64_t written = 0;
    int rc = 0;
    while (done < w->nblk && rc == 0) {
        uint64_t pos = w->batch_pos + done;
        uint32_t run = w->nblk - done;
        if (w->circular) {
            pos %= w->positions;
            if (pos + run > w->positions)
                run = (uint32_t)(w->positions - pos);
        }
        rc = write_iov(w, &w->iov[3 * done], (int)(3 * run), pos, &written);
        done += run;
    }
    uint32_t whole = w->nblk, used = w->nblk;
    if (rc != 0)
        batch_kept(w, written, &whole, &used);
    if (w->circular && w->next_pos + used > w->positions) {
        w->st.log_full = POSIX_TRACE_FULL;
        w->st.log_overrun = POSIX_TRACE_OVERRUN;
    }
    note_status(w, whole);
    for (uint32_t i = whole; i < w->nblk; i++)
        w->lost_events += w->blk_events[i];
    memset(w->blk_events, 0, sizeof w->blk_events);
    w->next_pos += used;
    w->seq += used;
    w->nblk = 0;
    w->stage_len = 0;
    if (rc != 0) {
        w->st.flush_error = rc;
        w->pending_error = rc;
        w->sticky_error = rc;
        memset(w->names_done, 0, sizeof w->names_done); /* they may not have made it */
    }
    return rc;
}

/* n events more in the block being filled (the one pt_logw_block opened). */
void pt_logw_count_events(struct pt_logw *w, uint32_t n)
{
    w->blk_events[w->nblk] += n;
}

/* The events of blocks whose write failed since the last call; clears it. */
uint64_t pt_logw_take_lost(struct pt_logw *w)
{
    uint64_t n = w->lost_events;
    w->lost_events = 0;
    return n;
}

/* The error of a write that failed since the last call, or 0; clears it. */
int pt_logw_take_error(struct pt_logw *w)
{
    int e = w->pending_error;
    w->pending_error = 0;
    return e;
}

/* Names not yet written (all of them again for a circular log, whose older
 * NAMES blocks may have been overwritten). */
int pt_logw_names(struct pt_logw *w, struct pt_shm *s)
{
    if (w->circular)
        memset(w->names_done, 0, sizeof w->names_done);
    struct pt_name *t = pt_names(s);
    uint32_t max = pt_logw_payload_max(w), id = 0;
    while (id <= PT_ID_MAX) {
        struct pt_logw_block b = { .type = PT_LOG_NAMES };
        unsigned char *p = NULL;
        uint32_t n = 0;
        for (; id <= PT_ID_MAX; id++) {
            if (w->names_done[id] || !atomic_load_explicit(&t[id].valid, memory_order_acquire))
                continue;
            uint32_t len = (uint32_t)strnlen(t[id].name, TRACE_EVENT_NAME_MAX);
            uint32_t esz = 8 + ((len + 3) & ~3u);
            if (len == 0)
                continue;
            if (n + esz > max)
                break;
            if (p == NULL) {
                if (pt_logw_batch_full(w) && pt_logw_commit(w) != 0)
                    return w->st.flush_error;
                p = pt_logw_block(w, &b);
            }
            put32(p + n, id);
            put32(p + n + 4, len);
            memset(p + n + 8, 0, esz - 8);
            memcpy(p + n + 8, t[id].name, len);
            n += esz;
            w->names_done[id] = 1;
        }
        if (p == NULL)
            break;
        put32(w->hdrs[w->nblk] + PT_LOGF_B_PLEN, n);
        pt_logw_seal(w);
    }
    return 0;
}

/* The STATUS flags word: final when the log takes no more flushes (its
 * writer closes it, or an UNTIL_FULL log filled), with the `tail` blocks
 * written after this one; 0 (not final) when the tail does not fit in it. */
static uint32_t status_flags(const struct pt_logw *w, uint64_t tail)
{
    if (!(w->st.stopped || w->st.closing) || tail > PT_LOG_STATUS_TAIL_MAX)
        return 0;
    return PT_LOG_STATUS_FINAL | (uint32_t)tail << PT_LOG_STATUS_TAIL_SHIFT;
}

static void put_status(unsigned char *p, const struct posix_trace_status_info *st,
                       int flush_error, uint64_t lost, uint32_t flags)
{
    put32(p + PT_LOGF_S_STREAM_STATUS, (uint32_t)st->posix_stream_status);
    put32(p + PT_LOGF_S_FULL, (uint32_t)st->posix_stream_full_status);
    put32(p + PT_LOGF_S_OVERRUN, (uint32_t)st->posix_stream_overrun_status);
    put32(p + PT_LOGF_S_FLUSH, (uint32_t)st->posix_stream_flush_status);
    put32(p + PT_LOGF_S_FLUSH_ERROR, (uint32_t)flush_error);
    put32(p + PT_LOGF_S_LOG_OVERRUN, (uint32_t)st->posix_log_overrun_status);
    put32(p + PT_LOGF_S_LOG_FULL, (uint32_t)st->posix_log_full_status);
    put32(p + PT_LOGF_S_FLAGS, flags);
    put64(p + PT_LOGF_S_LOST, lost);
}

/* The flush error a STATUS block records: the stream's, or, once it was
 * reset (posix_trace_get_status), the last write error of the log, which
 * stays: the log is missing events for good (log-format.md "STATUS"). */
static int status_error(const struct pt_logw *w, const struct posix_trace_status_info *st)
{
    return st->posix_stream_flush_error != 0 ? st->posix_stream_flush_error : w->sticky_error;
}

int pt_logw_status_block(struct pt_logw *w, const struct posix_trace_status_info *st,
                         uint64_t lost)
{
    struct pt_logw_block b = { .type = PT_LOG_STATUS, .payload_len = PT_LOGF_S_SIZE };
    if (pt_logw_batch_full(w) && pt_logw_commit(w) != 0)
        return w->st.flush_error;
    unsigned char *p = pt_logw_block(w, &b);
    put_status(p, st, status_error(w, st), lost, status_flags(w, 0));
    pt_logw_seal(w);
    return 0;
}

/* Rewrite the last STATUS block written, in place and with its seq, with
 * this status: it holds no events, so nothing is lost by it. Blocks written
 * after it stay: a final status counts them (its tail), so that a reader
 * knows where the log ends. */
static int status_in_place(struct pt_logw *w, const struct posix_trace_status_info *st,
                           uint64_t lost)
{
    if (w->status_seq == 0 || w->sequential ||
        (w->circular && w->next_pos - w->status_pos >= w->positions))
        return ENOSPC; /* none, or overwritten since (a circular log wrapped) */
    unsigned char blk[BLK_HDR + PT_LOGF_S_SIZE];
    struct pt_logw_block b = { .type = PT_LOG_STATUS };
    uint64_t seq = w->seq;
    w->seq = w->status_seq - 1; /* add_header numbers the block seq + 1 */
    memcpy(blk, add_header(w, &b, PT_LOGF_S_SIZE), BLK_HDR);
    w->seq = seq;
    put_status(blk + BLK_HDR, st, status_error(w, st), lost,
               status_flags(w, w->seq - w->status_seq));
    pt_xxh_reset(w->xxh);
    pt_xxh_update(w->xxh, blk, 56);
    pt_xxh_update(w->xxh, blk + BLK_HDR, PT_LOGF_S_SIZE);
    put64(blk + 56, pt_xxh_digest(w->xxh));
    uint64_t pos = w->circular ? w->status_pos % w->positions : w->status_pos;
    return write_all(w->fd, blk, sizeof blk, (off_t)(HDR_SIZE + pos * w->block_size), 0);
}

/* After a failed write (the batch is empty): record the status in the log
 * as a new STATUS block if one still fits, else over the last one written.
 * 0 when the log has it. */
int pt_logw_status_after_error(struct pt_logw *w, const struct posix_trace_status_info *st,
                               uint64_t lost)
{
    pt_logw_status_block(w, st, lost);
    int rc = pt_logw_commit(w);
    if (rc != 0)
        rc = status_in_place(w, st, lost);
    pt_logw_take_error(w); /* this one was about the status alone */
    return rc;
}
