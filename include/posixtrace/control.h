/*
 * <posixtrace/control.h> -- posixtrace extension: what a controller can
 * learn about the processes it traces beyond what the standard API says.
 */
#ifndef POSIXTRACE_CONTROL_H
#define POSIXTRACE_CONTROL_H

#include <sys/types.h>
#include <time.h>
#include <trace.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A process that was to record into a stream and noted why it does not. */
struct posixtrace_refusal {
    pid_t pid;
    int err; /* ENOMEM: it could not map the stream (a memory limit, RLIMIT_AS);
                EBADMSG: it found the stream's layout inconsistent with its
                attributes (another process of the tree wrote over it);
                another errno of mapping it */
};

/* For an active stream created for another process (and its children, with
 * the Trace Inherit option): the processes that were to record into it but
 * could not, as they noted it in the stream, up to max of them into out[],
 * their number in *n. 0, or EINVAL (a bad trid, a pre-recorded stream, out
 * or n NULL). What a process notes is in memory every process of the stream
 * can write: at most 16 notes are kept (a slot per pid modulo 16, the last
 * one written wins), and a note is believed only if its errno is one and the
 * process it names is gone or still has the start time it noted. */
int posixtrace_stream_refusals(trace_id_t trid, struct posixtrace_refusal *out, size_t max,
                               size_t *n);

/* The clock a stream's timestamps come from (doc/semantics.md "Timestamps"):
 * the CPU's cycle counter, converted to CLOCK_REALTIME through anchors taken
 * as the events are recorded, or CLOCK_REALTIME read at each event. */
#define POSIXTRACE_CLOCK_TSC      1
#define POSIXTRACE_CLOCK_REALTIME 2

/* For an active or a pre-recorded stream: its clock in *source
 * (POSIXTRACE_CLOCK_*) and, if ticks_per_ns is not NULL, the cycle
 * counter's rate measured when it was created (1.0 for CLOCK_REALTIME).
 * 0, or EINVAL (a bad trid, source NULL). */
int posixtrace_stream_clock(trace_id_t trid, int *source, double *ticks_per_ns);

/* The clock the streams this process creates use, the same way, and in
 * *why (if not NULL) the reason in words (a static string): the kernel's
 * clocksource, the CPU's flags, POSIXTRACE_CLOCK, or a difference between
 * CPUs. The first call chooses (it takes 2 to 10 ms). Always 0. */
int posixtrace_clock_choice(int *source, double *ticks_per_ns, const char **why);

/* Records into the active stream trid, from the controller (as it records
 * START and STOP), the shim's event posixtrace:process_end (doc/events.md)
 * for process pid, which ended with wait status wstatus: how a traced process
 * killed by a signal ended, which it cannot record itself, for a controller
 * that reaped it (posixtrace-run). Recorded while the stream runs or is
 * suspended, unless the filter excludes the event. 0, or EINVAL (a bad trid,
 * a pre-recorded stream, pid <= 0). */
int posixtrace_stream_process_end(trace_id_t trid, pid_t pid, int wstatus);

/* Records into the active stream trid, from the controller, one event
 * posixtrace:call_unfinished (doc/events.md) for each call still in progress
 * in a process recording into the stream: a call a thread of the shim's
 * published as begun and not yet recorded (doc/design.md "Calls in
 * flight"). Processes that ended and threads that are gone are left out;
 * so are calls whose own event type the stream's filter excludes. For a
 * controller ending its trace (posixtrace-run: at the program's end with
 * others still running, --duration, an interrupt, a -p detach), best after
 * posix_trace_stop(): a call that returns later is then not recorded.
 * Recorded while the stream runs or is suspended. 0 and the number recorded
 * in *n (if not NULL), or EINVAL (a bad trid, a pre-recorded stream). */
int posixtrace_stream_unfinished(trace_id_t trid, size_t *n);

/* For a process pid that has not recorded into stream trid (a -p target
 * blocked since before the trace attached), records one event
 * posixtrace:call_unfinished for each of its threads blocked in a system
 * call, as that call's event (syscall:NAME, its fixed arguments, its start
 * unknown: the time of this call), read from /proc/PID/task/TID/syscall
 * (the caller needs the right to read it, as to ptrace pid). Nothing for a
 * process that recorded into the stream: posixtrace_stream_unfinished()
 * covers those (and such a system call of their threads too). 0 and the
 * number recorded in *n (if not NULL), or EINVAL (a bad trid, a
 * pre-recorded stream, pid <= 0). */
int posixtrace_stream_blocked(trace_id_t trid, pid_t pid, size_t *n);

/* Keeps mapped the inbox of each process that joined stream trid since the
 * last call (a controller calls it now and then, posixtrace-run every
 * 100 ms), so that posixtrace_stream_process_end() of a process that died
 * inside calls (killed by a signal: Ctrl-C) first records them as
 * posixtrace:call_unfinished, from the cells the dead process left; the
 * mappings go with the stream. 0, EINVAL (a bad trid, a pre-recorded
 * stream) or ENOMEM. */
int posixtrace_stream_watch(trace_id_t trid);

/* Bounds of the stream attributes (posix_trace_attr_setstreamsize() and
 * posix_trace_attr_setmaxdatasize() refuse more with EINVAL). */
#define POSIXTRACE_STREAM_SIZE_MAX ((size_t)1 << 30)
#define POSIXTRACE_MAX_DATA_SIZE_MAX ((size_t)65536)

/* The smallest log-max-size a LOOP or UNTIL_FULL log of a stream with the
 * attributes a may have: posix_trace_create_withlog() fails with EINVAL
 * below it (the log must hold its header and 8 blocks, and a block is the
 * stream's chunk size, which grows with the stream-min-size and the
 * max-data-size attributes).
 * 0 and *n, or EINVAL (a not initialized, or n NULL). */
int posixtrace_attr_getminlogsize(const trace_attr_t *a, size_t *n);

/* Blocking writers, an extension (doc/semantics.md "Blocking writers"): a
 * writer that finds the stream full waits, up to *timeout per event, for its
 * consumer (a reader of the stream, or the flusher of a FLUSH stream) to
 * make room, instead of losing or overwriting events; only then does the
 * stream-full-policy apply as usual. Never with nobody consuming: then a
 * writer does not wait at all. timeout NULL: off (the default, the standard
 * policies unchanged); else more than 0 and at most
 * POSIXTRACE_BLOCK_TIMEOUT_MAX_MS milliseconds. 0, or EINVAL (a not
 * initialized, a timeout out of that range or not normalized). */
#define POSIXTRACE_BLOCK_TIMEOUT_MAX_MS 10000
int posixtrace_attr_setblocking(trace_attr_t *a, const struct timespec *timeout);
/* The timeout set, {0, 0} when off. 0, or EINVAL (a not initialized, or
 * timeout NULL). posix_trace_get_attr() of an active stream gives its own;
 * a pre-recorded stream's is off. */
int posixtrace_attr_getblocking(const trace_attr_t *a, struct timespec *timeout);
/* The calling thread will read the active stream trid with the getnext
 * family: blocking writers wait for it from now on, as they do once it has
 * called one of them. For a controller that lets the traced program run
 * before its first read (posixtrace-run), which would otherwise lose what
 * the program records meanwhile. No effect without blocking writers. 0, or
 * EINVAL (a bad trid, a pre-recorded stream, a stream with a log: its
 * events are read from the log, and a FLUSH stream's flusher is its
 * consumer). */
int posixtrace_stream_consumer(trace_id_t trid);

#ifdef __cplusplus
}
#endif

#endif
