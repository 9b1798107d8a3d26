/*
 * <posixtrace/log.h> -- posixtrace extension: what posix_trace_open() found
 * wrong in a trace log.
 *
 * posix_trace_open() skips blocks of a log that fail their checks (a torn
 * write, flipped bytes: doc/log-format.md) and the standard API reads the
 * intact events only. This says what was skipped.
 */
#ifndef POSIXTRACE_LOG_H
#define POSIXTRACE_LOG_H

#include <trace.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For a pre-recorded stream (posix_trace_open): the number of invalid blocks
 * skipped in *bad_blocks, and the file offset of the first in *first_offset
 * (-1 if none). EINVAL for an active stream or a bad trid or NULL pointer. */
int posixtrace_log_damage(trace_id_t trid, long long *bad_blocks, long long *first_offset);

/* For a pre-recorded stream: the events its stream lost in all, as the log's
 * status (its last STATUS block) records them, in *lost (0 when the log has
 * no status). Events lost because the log could not be written are counted
 * there, and the status's posix_stream_flush_error says why. EINVAL as
 * posixtrace_log_damage(). */
int posixtrace_log_lost(trace_id_t trid, unsigned long long *lost);

#ifdef __cplusplus
}
#endif
#endif
