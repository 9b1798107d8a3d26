/*
 * The size limits every part of posixtrace shares: the recording path
 * (record.c, shm.c), the flusher and log writer (logwrite.c), the log reader
 * (logread*.c) and the LD_PRELOAD shim (preload/shim.h). Defined here once,
 * with no other dependency, so that what the writers accept and what the
 * reader accepts cannot drift apart (doc/log-format.md, doc/design.md
 * "Geometry"). Plain unsigned constants: usable in #if and _Static_assert.
 */
#ifndef PT_SIZES_H
#define PT_SIZES_H

/* The largest max-data-size attribute (posix_trace_attr_setmaxdatasize()):
 * a user event carries at most this many bytes of data. */
#define PT_MAX_MAX_DATA_SIZE 65536u

/* The largest data of a system event: POSIX_TRACE_FILTER's two event sets
 * (old and new, 512 bytes) and the shim's events (header, fields, cut
 * strings, stacks). A record of a stream may thus carry
 * max(max-data-size, PT_SYS_DATA_BYTES) bytes of data; the log reader
 * accepts exactly that. */
#define PT_SYS_DATA_BYTES 1024u

/* The data of POSIX_TRACE_FILTER: two trace_event_set_t. */
#define PT_FILTER_DATA_BYTES 512u

_Static_assert(PT_FILTER_DATA_BYTES <= PT_SYS_DATA_BYTES,
               "FILTER's two event sets must fit a system event");
_Static_assert(PT_SYS_DATA_BYTES <= PT_MAX_MAX_DATA_SIZE,
               "a system event must not exceed the largest user event");
_Static_assert(PT_SYS_DATA_BYTES % 8 == 0, "records are 8-byte aligned");

/* The data a record of a stream of max-data-size user_max may carry. */
#define PT_RECORD_DATA_MAX(user_max) \
    ((user_max) > PT_SYS_DATA_BYTES ? (user_max) : PT_SYS_DATA_BYTES)

#endif
