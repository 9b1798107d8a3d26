/*
 * Reading a trace log (doc/log-format.md): opening and indexing it, and what
 * it says besides its events (attributes, status, names). The events:
 * logread_events.c; the scan of the blocks: logread_scan.c; the payloads:
 * logread_payload.c.
 */
#include "../internal.h"
#include "logread_int.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* EBADF unless fd is open for reading; EINVAL unless it is a regular file
 * holding at least a file header; else 0 and its size. */
static int check_fd(int fd, uint64_t *size)
{
    struct stat sb;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY || fstat(fd, &sb) != 0)
        return EBADF;
    if (!S_ISREG(sb.st_mode) || sb.st_size < (off_t)LR_HDR_SIZE)
        return EINVAL;
    *size = (uint64_t)sb.st_size;
    return 0;
}

static int read_header(struct pt_logr *l)
{
    unsigned char p[LR_HDR_SIZE];
    size_t got = 0;
    while (got < sizeof p) {
        ssize_t r = pread(l->fd, p + got, sizeof p - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 && errno == EBADF ? EBADF : EINVAL;
        got += (size_t)r;
    }
    return lr_header_parse(p, &l->h);
}

static void default_status(struct posix_trace_status_info *st)
{
    st->posix_stream_status = POSIX_TRACE_SUSPENDED;
    st->posix_stream_full_status = POSIX_TRACE_NOT_FULL;
    st->posix_stream_overrun_status = POSIX_TRACE_NO_OVERRUN;
    st->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
    st->posix_stream_flush_error = 0;
    st->posix_log_overrun_status = POSIX_TRACE_NO_OVERRUN;
    st->posix_log_full_status = POSIX_TRACE_NOT_FULL;
}

static int by_seq_off(const void *a, const void *b)
{
    const struct lr_block *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Orders the valid blocks by seq; of two with one seq, the first in the
 * file stays and the other counts as invalid. */
static size_t order_blocks(struct pt_logr *l, struct lr_block *all, size_t n)
{
    size_t k = 0;
    if (n > 1)
        qsort(all, n, sizeof *all, by_seq_off);
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && all[i].seq == all[k - 1].seq)
            lr_note_bad(l, all[i].off);
        else
            all[k++] = all[i];
    }
    return k;
}

/* The name table: the union of the entries of the NAMES blocks that read
 * back intact, in seq order (a later entry for an id replaces an earlier). */
static int load_names(struct pt_logr *l, const struct lr_block *all, size_t n)
{
    unsigned char *buf = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        if (all[i].type != LR_NAMES)
            continue;
        if (lr_read_block(l, &all[i], &buf, &cap, true) != 0) {
            lr_note_bad(l, all[i].off); /* changed since the scan */
            continue;
        }
        if (l->named == NULL) {
            l->named = calloc(LR_ID_MAX + 1, 1);
            l->names = calloc(LR_ID_MAX + 1, sizeof *l->names);
            if (l->named == NULL || l->names == NULL) {
                free(buf);
                return ENOMEM;
            }
        }
        lr_names_parse(buf + LR_BLK_HDR, all[i].plen, l);
    }
    free(buf);
    return 0;
}

/* The newest STATUS block that reads back intact is the status. */
static int load_status(struct pt_logr *l, const struct lr_block *all, size_t n)
{
    unsigned char *buf = NULL;
    size_t cap = 0;
    default_status(&l->st);
    for (size_t i = n; i-- > 0;) {
        if (all[i].type != LR_STATUS)
            continue;
        if (lr_read_block(l, &all[i], &buf, &cap, true) == 0 &&
            lr_status_parse(buf + LR_BLK_HDR, all[i].plen, &l->st, &l->lost) == 0) {
            l->status_seq = all[i].seq;
            l->status_flags = lr_rd32(buf + LR_BLK_HDR + PT_LOGF_S_FLAGS);
            break;
        }
        lr_note_bad(l, all[i].off); /* changed since the scan */
    }
    free(buf);
    return 0;
}

static int index_log(struct pt_logr *l, uint64_t fsize)
{
    struct lr_block *all = NULL;
    size_t n = 0;
    int rc = lr_scan(l, fsize, &all, &n);
    long long bad = 0;
    if (rc == 0) {
        n = order_blocks(l, all, n);
        bad = l->bad; /* the blocks found invalid in the file */
        rc = load_names(l, all, n);
    }
    if (rc == 0)
        rc = load_status(l, all, n);
    if (rc == 0)
        lr_gaps(l, all, n, bad);
    if (rc == 0)
        rc = lr_events_index(l, all, n);
    free(all);
    return rc;
}

int pt_logr_open(int fd, struct pt_logr **out)
{
    uint64_t fsize = 0;
    int rc = check_fd(fd, &fsize);
    if (rc != 0)
        return rc;
    struct pt_logr *l = calloc(1, sizeof *l);
    if (l == NULL)
        return ENOMEM;
    l->first_bad = -1;
    l->last_ns = INT64_MIN;
    l->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    rc = l->fd < 0 ? errno : read_header(l);
    if (rc == 0) {
        l->max_len = (uint32_t)PT_RECORD_DATA_MAX(l->h.max_data_size);
        rc = index_log(l, fsize);
    }
    if (rc != 0) {
        pt_logr_close(l);
        return rc;
    }
    *out = l;
    return 0;
}

void pt_logr_close(struct pt_logr *l)
{
    if (l == NULL)
        return;
    lr_events_free(l);
    free(l->named);
    free(l->names);
    if (l->fd >= 0)
        close(l->fd);
    free(l);
}

void pt_logr_attr(const struct pt_logr *l, trace_attr_t *a)
{
    posix_trace_attr_init(a);
    memcpy(a->__name, l->h.name, sizeof a->__name);
    a->__create_time.tv_sec = (time_t)l->h.create_sec;
    a->__create_time.tv_nsec = (long)l->h.create_nsec;
    a->__stream_size = (size_t)l->h.stream_size;
    a->__max_data_size = (size_t)l->h.max_data_size;
    a->__log_size = (size_t)l->h.log_size;
    a->__stream_policy = (int)l->h.stream_policy;
    a->__log_policy = (int)l->h.log_policy;
    a->__inheritance = (int)l->h.inheritance;
    a->__flags |= PT_ATTR_POLICY_SET;
}

void pt_logr_status(const struct pt_logr *l, struct posix_trace_status_info *st)
{
    *st = l->st;
}

int pt_logr_name(const struct pt_logr *l, trace_event_id_t id, char *out)
{
    const char *s = NULL;
    if (id > LR_ID_MAX || out == NULL)
        return EINVAL;
    if (l->named != NULL && l->named[id])
        s = l->names[id];
    else if (id == LR_UNNAMED)
        s = LR_UNNAMED_NAME;
    else
        s = pt_sys_name(id);
    if (s == NULL)
        return EINVAL;
    strcpy(out, s);
    return 0;
}

uint64_t pt_logr_lost(const struct pt_logr *l)
{
    return l->lost;
}

void pt_logr_clock(const struct pt_logr *l, uint32_t *mode, double *ticks_per_ns)
{
    *mode = l->h.clock_mode;
    *ticks_per_ns = l->h.ticks_per_ns;
}

long long pt_logr_bad_blocks(const struct pt_logr *l, long long *first_offset)
{
    if (first_offset != NULL)
        *first_offset = l->first_bad;
    return l->bad;
}

long long pt_logr_missing(const struct pt_logr *l, int *closed)
{
    if (closed != NULL)
        *closed = l->closed;
    return l->missing;
}
