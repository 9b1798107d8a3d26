/*
 * <posixtrace/log.h> -- posixtrace extension: what posix_trace_open() found
 * wrong in a trace log.
 *
 * posix_trace_open() skips blocks of a log that fail their checks (a torn
 * write, flipped bytes: doc/log-format.md) and the standard API reads the
 * intact events only. This says what was skipped, and what is missing.
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

/* For a pre-recorded stream: whether blocks are missing from the log, which
 * posixtrace_log_damage() cannot count (a block removed leaves no invalid
 * block behind). The writer numbers its blocks 1, 2, ... with no gap
 * (doc/log-format.md "Order of blocks"); *missing is the number of those
 * numbers no block of the file holds, less the invalid blocks, which may be
 * them (a LOOP log: of the numbers its positions should hold, the newest).
 * *closed is 1 when the log ends with the final STATUS block its writer
 * writes when it closes the log (posix_trace_shutdown, or the flush that
 * filled an UNTIL_FULL log) and 0 when not: its writer was killed or is
 * still writing it, or blocks were removed from its end, or it was written
 * by a version of the library before this report. A log read while it is
 * written may show blocks missing. EINVAL as posixtrace_log_damage(). */
int posixtrace_log_missing(trace_id_t trid, long long *missing, int *closed);

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
