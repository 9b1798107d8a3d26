/*
 * libtrace/log: the Trace Log option (doc/design.md "Logs", doc/log-format.md):
 * an active stream's flusher and log writer, and the reader of pre-recorded
 * streams (logread.h). log_format.h is the one definition of the format.
 *
 * Invariants:
 * - A log file is untrusted input to its reader.
 * - A flush takes what the stream held when it began; events it cannot
 *   write are counted lost, never dropped silently.
 */
#ifndef PT_LOG_H
#define PT_LOG_H

/* Included by ../internal.h, which gives what this needs. */
struct pt_handle;

/* ---- flusher.c: an active stream's log ---- */
int  pt_flush_open(struct pt_handle *h, int fd);
int  pt_flush_start_thread(struct pt_handle *h);
int  pt_flush_run(struct pt_handle *h, bool partial, bool marked);
/* One look of the flusher thread (stream-full policy FLUSH): `partial`: the
 * open chunks too (always when the stream is full) */
int  pt_flush_look(struct pt_handle *h, bool partial);
int  pt_flush_now(struct pt_handle *h);
int  pt_flush_close(struct pt_handle *h);
int  pt_flush_clear(struct pt_handle *h);
void pt_flush_status(struct pt_handle *h, struct posix_trace_status_info *st, bool reset);

#endif
