/*
 * <trace.h> - POSIX Trace (IEEE Std 1003.1-2017, Tracing option with the
 * Trace Event Filter, Trace Log and Trace Inherit options), as implemented by
 * posixtrace for Linux.
 *
 * Every type, constant and function of trace.h(0P) is declared here with the
 * standard's prototype.  The limits the pages name are defined below; their
 * values are this implementation's choices and are documented in README.md.
 */
#ifndef POSIXTRACE_TRACE_H
#define POSIXTRACE_TRACE_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#define __pt_restrict
#else
#define __pt_restrict restrict
#endif

/* ---- Limits (runtime invariant values; POSIX minimums in comments) ---- */
#ifndef _POSIX_TRACE_EVENT_NAME_MAX
#define _POSIX_TRACE_EVENT_NAME_MAX 30
#endif
#ifndef _POSIX_TRACE_NAME_MAX
#define _POSIX_TRACE_NAME_MAX 8
#endif
#ifndef _POSIX_TRACE_SYS_MAX
#define _POSIX_TRACE_SYS_MAX 8
#endif
#ifndef _POSIX_TRACE_USER_EVENT_MAX
#define _POSIX_TRACE_USER_EVENT_MAX 32
#endif
/* Longest event name, in characters, not counting the terminating NUL.
 * A buffer for posix_trace_eventid_get_name() needs TRACE_EVENT_NAME_MAX+1 bytes. */
#ifndef TRACE_EVENT_NAME_MAX
#define TRACE_EVENT_NAME_MAX 63
#endif
/* Size of the buffers for trace names and the generation version, terminating
 * NUL included: names are kept to TRACE_NAME_MAX-1 characters. */
#ifndef TRACE_NAME_MAX
#define TRACE_NAME_MAX 256
#endif
/* Streams one process may have created and not yet shut down. */
#ifndef TRACE_SYS_MAX
#define TRACE_SYS_MAX 64
#endif
/* User event names one process (one stream) may define, besides
 * POSIX_TRACE_UNNAMED_USEREVENT. */
#ifndef TRACE_USER_EVENT_MAX
#define TRACE_USER_EVENT_MAX 1024
#endif
/* The POSIX spelling of the user event minimum, as posix_trace_event(3p) names it. */
#ifndef POSIX_TRACE_USER_EVENT_MAX
#define POSIX_TRACE_USER_EVENT_MAX _POSIX_TRACE_USER_EVENT_MAX
#endif

/* ---- Types ---- */
typedef uint32_t trace_event_id_t;
typedef uint64_t trace_id_t;

/* Event type identifiers: 0..255 system event types, 256 the unnamed user
 * event, 257..256+TRACE_USER_EVENT_MAX named user events. */
#define __PT_EVENT_ID_SPACE 2048
typedef struct {
    uint64_t __bits[__PT_EVENT_ID_SPACE / 64];
} trace_event_set_t;

typedef struct {
    uint32_t __magic;
    uint32_t __flags;
    char __name[TRACE_NAME_MAX];
    struct timespec __create_time;
    struct timespec __clock_res;
    size_t __stream_size;
    size_t __max_data_size;
    size_t __log_size;
    int __stream_policy;
    int __log_policy;
    int __inheritance;
    int __block_sec;   /* posixtrace_attr_setblocking (<posixtrace/control.h>): */
    int __block_nsec;  /* a full stream's writers wait this long; 0 0: not at all */
    int __reserved[11];
} trace_attr_t;

struct posix_trace_event_info {
    trace_event_id_t posix_event_id;
    pid_t posix_pid;
    void *posix_prog_address;
    pthread_t posix_thread_id;
    struct timespec posix_timestamp;
    int posix_truncation_status;
};

struct posix_trace_status_info {
    int posix_stream_status;
    int posix_stream_full_status;
    int posix_stream_overrun_status;
    int posix_stream_flush_status;
    int posix_stream_flush_error;
    int posix_log_overrun_status;
    int posix_log_full_status;
};

/* ---- Symbolic constants ---- */
/* Stream status */
#define POSIX_TRACE_RUNNING        1
#define POSIX_TRACE_SUSPENDED      2
/* Full status (stream and log) */
#define POSIX_TRACE_FULL           1
#define POSIX_TRACE_NOT_FULL       2
/* Overrun status (stream and log) */
#define POSIX_TRACE_OVERRUN        1
#define POSIX_TRACE_NO_OVERRUN     2
/* Flush status */
#define POSIX_TRACE_FLUSHING       1
#define POSIX_TRACE_NOT_FLUSHING   2
/* Full policies (stream and log) */
#define POSIX_TRACE_LOOP           1
#define POSIX_TRACE_UNTIL_FULL     2
#define POSIX_TRACE_FLUSH          3
#define POSIX_TRACE_APPEND         4
/* Inheritance */
#define POSIX_TRACE_CLOSE_FOR_CHILD 1
#define POSIX_TRACE_INHERITED       2
/* Truncation status */
#define POSIX_TRACE_NOT_TRUNCATED     0
#define POSIX_TRACE_TRUNCATED_RECORD  1
#define POSIX_TRACE_TRUNCATED_READ    2
/* posix_trace_eventset_fill() */
#define POSIX_TRACE_WOPID_EVENTS   1
#define POSIX_TRACE_SYSTEM_EVENTS  2
#define POSIX_TRACE_ALL_EVENTS     3
/* posix_trace_set_filter() */
#define POSIX_TRACE_SET_EVENTSET   1
#define POSIX_TRACE_ADD_EVENTSET   2
#define POSIX_TRACE_SUB_EVENTSET   3

/* Predefined event type identifiers */
#define POSIX_TRACE_START          ((trace_event_id_t)0)
#define POSIX_TRACE_STOP           ((trace_event_id_t)1)
#define POSIX_TRACE_FILTER         ((trace_event_id_t)2)
#define POSIX_TRACE_OVERFLOW       ((trace_event_id_t)3)
#define POSIX_TRACE_RESUME         ((trace_event_id_t)4)
#define POSIX_TRACE_FLUSH_START    ((trace_event_id_t)5)
#define POSIX_TRACE_FLUSH_STOP     ((trace_event_id_t)6)
#define POSIX_TRACE_ERROR          ((trace_event_id_t)7)
#define POSIX_TRACE_UNNAMED_USEREVENT  ((trace_event_id_t)256)
/* The pages use both spellings. */
#define POSIX_TRACE_UNNAMED_USER_EVENT POSIX_TRACE_UNNAMED_USEREVENT

/* ---- Functions ---- */
int  posix_trace_attr_destroy(trace_attr_t *);
int  posix_trace_attr_getclockres(const trace_attr_t *, struct timespec *);
int  posix_trace_attr_getcreatetime(const trace_attr_t *, struct timespec *);
int  posix_trace_attr_getgenversion(const trace_attr_t *, char *);
int  posix_trace_attr_getinherited(const trace_attr_t *__pt_restrict, int *__pt_restrict);
int  posix_trace_attr_getlogfullpolicy(const trace_attr_t *__pt_restrict, int *__pt_restrict);
int  posix_trace_attr_getlogsize(const trace_attr_t *__pt_restrict, size_t *__pt_restrict);
int  posix_trace_attr_getmaxdatasize(const trace_attr_t *__pt_restrict, size_t *__pt_restrict);
int  posix_trace_attr_getmaxsystemeventsize(const trace_attr_t *__pt_restrict,
         size_t *__pt_restrict);
int  posix_trace_attr_getmaxusereventsize(const trace_attr_t *__pt_restrict,
         size_t, size_t *__pt_restrict);
int  posix_trace_attr_getname(const trace_attr_t *, char *);
int  posix_trace_attr_getstreamfullpolicy(const trace_attr_t *__pt_restrict, int *__pt_restrict);
int  posix_trace_attr_getstreamsize(const trace_attr_t *__pt_restrict, size_t *__pt_restrict);
int  posix_trace_attr_init(trace_attr_t *);
int  posix_trace_attr_setinherited(trace_attr_t *, int);
int  posix_trace_attr_setlogfullpolicy(trace_attr_t *, int);
int  posix_trace_attr_setlogsize(trace_attr_t *, size_t);
int  posix_trace_attr_setmaxdatasize(trace_attr_t *, size_t);
int  posix_trace_attr_setname(trace_attr_t *, const char *);
int  posix_trace_attr_setstreamfullpolicy(trace_attr_t *, int);
int  posix_trace_attr_setstreamsize(trace_attr_t *, size_t);
int  posix_trace_clear(trace_id_t);
int  posix_trace_close(trace_id_t);
int  posix_trace_create(pid_t, const trace_attr_t *__pt_restrict, trace_id_t *__pt_restrict);
int  posix_trace_create_withlog(pid_t, const trace_attr_t *__pt_restrict, int,
         trace_id_t *__pt_restrict);
void posix_trace_event(trace_event_id_t, const void *__pt_restrict, size_t);
int  posix_trace_eventid_equal(trace_id_t, trace_event_id_t, trace_event_id_t);
int  posix_trace_eventid_get_name(trace_id_t, trace_event_id_t, char *);
int  posix_trace_eventid_open(const char *__pt_restrict, trace_event_id_t *__pt_restrict);
int  posix_trace_eventset_add(trace_event_id_t, trace_event_set_t *);
int  posix_trace_eventset_del(trace_event_id_t, trace_event_set_t *);
int  posix_trace_eventset_empty(trace_event_set_t *);
int  posix_trace_eventset_fill(trace_event_set_t *, int);
int  posix_trace_eventset_ismember(trace_event_id_t, const trace_event_set_t *__pt_restrict,
         int *__pt_restrict);
int  posix_trace_eventtypelist_getnext_id(trace_id_t, trace_event_id_t *__pt_restrict,
         int *__pt_restrict);
int  posix_trace_eventtypelist_rewind(trace_id_t);
int  posix_trace_flush(trace_id_t);
int  posix_trace_get_attr(trace_id_t, trace_attr_t *);
int  posix_trace_get_filter(trace_id_t, trace_event_set_t *);
int  posix_trace_get_status(trace_id_t, struct posix_trace_status_info *);
int  posix_trace_getnext_event(trace_id_t, struct posix_trace_event_info *__pt_restrict,
         void *__pt_restrict, size_t, size_t *__pt_restrict, int *__pt_restrict);
int  posix_trace_open(int, trace_id_t *);
int  posix_trace_rewind(trace_id_t);
int  posix_trace_set_filter(trace_id_t, const trace_event_set_t *, int);
int  posix_trace_shutdown(trace_id_t);
int  posix_trace_start(trace_id_t);
int  posix_trace_stop(trace_id_t);
int  posix_trace_timedgetnext_event(trace_id_t, struct posix_trace_event_info *__pt_restrict,
         void *__pt_restrict, size_t, size_t *__pt_restrict, int *__pt_restrict,
         const struct timespec *__pt_restrict);
int  posix_trace_trid_eventid_open(trace_id_t, const char *__pt_restrict,
         trace_event_id_t *__pt_restrict);
int  posix_trace_trygetnext_event(trace_id_t, struct posix_trace_event_info *__pt_restrict,
         void *__pt_restrict, size_t, size_t *__pt_restrict, int *__pt_restrict);

/*
 * posix_trace_event() with no stream taking the event (none running, or the
 * event filtered out by every one) returns at once; the test it makes first,
 * one byte of the library's want table per event type, is made here, inline
 * in the caller, so that such a call costs a load and a branch instead of a
 * call into the library (doc/semantics.md, "posix_trace_event in the
 * header"). Each argument is evaluated once, and the function itself is
 * there as the standard requires: (posix_trace_event)(...), its address,
 * or #undef posix_trace_event. POSIXTRACE_NO_INLINE_EVENT leaves it out.
 */
#if defined(__GNUC__) && !defined(POSIXTRACE_NO_INLINE_EVENT)
extern volatile unsigned char __posixtrace_want[];
static __inline__ __attribute__((__always_inline__)) void
__posixtrace_event(trace_event_id_t __id, const void *__pt_restrict __data, size_t __len)
{
    if (__id < __PT_EVENT_ID_SPACE && __posixtrace_want[__id] == 0)
        return;
    posix_trace_event(__id, __data, __len);
}
#define posix_trace_event(id, data, len) __posixtrace_event((id), (data), (len))
#endif

#ifdef __cplusplus
}
#endif
#undef __pt_restrict
#endif /* POSIXTRACE_TRACE_H */
