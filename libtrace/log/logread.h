/*
 * Reading a trace log (doc/log-format.md): the pre-recorded streams of
 * posix_trace_open(). The file is untrusted input.
 */
#ifndef PT_LOGREAD_H
#define PT_LOGREAD_H

#include <stdint.h>
#include <trace.h>

struct pt_logr;

/* Read and index the log open on fd (read access, any file offset; the
 * descriptor stays the caller's: the reader reads through a duplicate of it).
 * 0, or EINVAL when fd holds no valid log header (or is not a regular file),
 * EBADF when fd is not open for reading, EMFILE (no descriptor left for the
 * duplicate), ENOMEM. */
int  pt_logr_open(int fd, struct pt_logr **out);
void pt_logr_close(struct pt_logr *l);

/* The next event, oldest first: 0 with *unavailable = 0, or 0 with
 * *unavailable != 0 at the end (never blocks). num/data/len/truncation as
 * posix_trace_getnext_event(). */
int  pt_logr_next(struct pt_logr *l, struct posix_trace_event_info *ev, void *data,
                  size_t num, size_t *len, int *unavailable);
void pt_logr_rewind(struct pt_logr *l);

/* Attributes (as posix_trace_get_attr() fills them, from the file header),
 * status (from the last STATUS block), names (from all NAMES blocks). */
void pt_logr_attr(const struct pt_logr *l, trace_attr_t *a);
void pt_logr_status(const struct pt_logr *l, struct posix_trace_status_info *st);
int  pt_logr_name(const struct pt_logr *l, trace_event_id_t id, char *out); /* EINVAL: none */

/* Where reading stopped short, for tools: number of block positions found
 * invalid (torn, corrupt) and the file offset of the first one, or -1. */
long long pt_logr_bad_blocks(const struct pt_logr *l, long long *first_offset);
/* Blocks missing from the log: seq numbers (doc/log-format.md "Order of
 * blocks") that neither a valid block nor an invalid one accounts for; and
 * in *closed whether the log ends with the final STATUS block of its writer
 * (else its end may be missing). */
long long pt_logr_missing(const struct pt_logr *l, int *closed);
/* The events lost in all, as the log's status records it (0 with none). */
uint64_t pt_logr_lost(const struct pt_logr *l);
/* The clock its stamps come from (PT_CLOCK_*, checked when the header was
 * read) and its ticks per ns. */
void pt_logr_clock(const struct pt_logr *l, uint32_t *mode, double *ticks_per_ns);

#endif
