/*
 * Plausibility bounds for the counters and error numbers posixtrace reads
 * back from memory other processes can write (a live stream's shared
 * memory) or from a file (a log's STATUS block, its OVERFLOW and ERROR
 * events). A value outside them is corrupt: reported as such (EBADMSG, a
 * damaged block), never printed as a number. The library (gaps.c,
 * logread_payload.c) and the tools (tools/sink.c) share them
 * (doc/semantics.md "Corrupt counters", doc/log-format.md "STATUS").
 */
#ifndef PT_BOUNDS_H
#define PT_BOUNDS_H

/* The most events a stream may have lost in all: 2^56. A lost event costs
 * its writer at least a nanosecond (the record.c fast path, failing), and
 * each writer slot counts its own; 2^56 is 256 writers losing one event per
 * nanosecond for over three days, or one writer for over two years. A
 * random 64-bit value, or a negative count wrapped around, exceeds it with
 * a probability of 255/256. */
#define PT_LOST_MAX (1ull << 56)

/* The largest errno value Linux defines (EHWPOISON, 133). An error number
 * outside 1..PT_ERRNO_MAX is not one the system could have produced. */
#define PT_ERRNO_MAX 133

#endif
