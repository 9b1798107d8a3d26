/*
 * ptools.h -- what posixtrace-run and posixtrace-dump share: reading events
 * from a trace stream (live or a log) through the standard API, decoding
 * them, filtering them, and writing them out (text, JSON Lines, Chrome trace,
 * summary table).
 *
 * Map (one concept per file):
 *   names.c        event-type names of a stream, cached (posix_trace_eventid_get_name)
 *   decode.c       an event's payload -> struct pt_event (generic, from posixtrace_event_desc)
 *   calls.c        per-family knowledge: the function called, absent fields, display sets
 *   xlat.c         the generated tables of names (xlat.h, from tools/xlat/<set>.in)
 *   fmt_value.c    symbolic names of field values (flags, signals, errno, sockaddr...)
 *   fmt_num.c      decimal numbers without printf (the live view's speed)
 *   fmt_escape.c   C-style and JSON escaping of byte strings
 *   fmt_text.c     the one-line text form (strace-like)
 *   fmt_json.c     JSON Lines
 *   fmt_chrome.c   Chrome Trace Event JSON
 *   filter_spec.c  -e SPEC -> a set of event ids
 *   fn_events.c    function and system call names -> the events recording them
 *   proc_end.c     how each process ended (exit events, parents' waits)
 *   inflight.c     calls unfinished at the end (posixtrace:call_unfinished) shown as the call
 *   summary.c      -c: the table per event type
 *   symbolize.c    program addresses -> module+offset, function, file:line
 *   fdtable.c      -y/-yy: what each descriptor of each process names
 *   sink.c         filtering (pid, tid, time window, event set) and dispatch
 *   readloop.c     reading a stream with the getnext family into a sink
 *   util.c         sizes, times, messages
 */
#ifndef POSIXTRACE_PTOOLS_H
#define POSIXTRACE_PTOOLS_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <trace.h>
#include <posixtrace/events.h>
#include <posixtrace/record.h>
#include "../audit/spec.h"

#define PT_SYS_FIRST 8u                /* first id of the shim's system events */
#define PT_ID_MAX 2047u               /* highest valid event type id (doc/design.md) */
#define PT_USER_ID_MAX 1280u          /* highest user event type id */
#define PT_DATA_MAX (65536 + 4096)    /* larger than any event's data */

/* ---- names.c ---- */
struct pt_names {
    trace_id_t trid;
    char *name[PT_ID_MAX + 1];        /* g_strdup'ed, NULL: not looked up yet */
};
void pt_names_init(struct pt_names *n, trace_id_t trid);
void pt_names_clear(struct pt_names *n);
/* The name of id in the stream ("?" + id when the stream has none). */
const char *pt_names_get(struct pt_names *n, trace_event_id_t id);

/* ---- decode.c ---- */
struct pt_field {
    const char *name;
    int type;                  /* enum posixtrace_ftype, or an unknown value */
    uint64_t u;                /* fixed fields */
    const unsigned char *p;    /* variable fields: bytes (inside the event data) */
    uint32_t n;                /* variable fields: byte count present */
    int short_read;            /* variable field cut by the end of the payload */
    int present;               /* 0: the payload ended before this field */
    int absent;                /* present, but not an argument of the function called, or
                                  not filled by the call (failed): not shown (JSON null) */
    int show;                  /* enum pt_show: a set of names other than the type's, or 0 */
};
/* Fields shown with names the descriptor's type does not give (calls.c). */
enum pt_show { PT_SHOW_TYPE = 0, PT_SHOW_FDFLAGS, PT_SHOW_SOCKFLAGS, PT_SHOW_WAITOPTS,
               PT_SHOW_FDCLOEXEC, PT_SHOW_OFLAGS };

enum pt_kind { PT_K_PREDEF, PT_K_CALL, PT_K_SYS, PT_K_USER };

struct pt_event {
    struct posix_trace_event_info info;
    int64_t ts_ns;             /* CLOCK_REALTIME ns */
    trace_event_id_t id;
    const char *name;
    const unsigned char *data;
    size_t len;
    enum pt_kind kind;
    /* PT_K_CALL: a system event with a call header and a descriptor */
    const struct posixtrace_event_desc *desc;
    struct posixtrace_call_hdr hdr;
    unsigned nfields;          /* fields present (<= desc->nfields) */
    struct pt_field f[POSIXTRACE_MAX_FIELDS];
    int cut;                   /* the payload ended before the last field */
    int64_t tid;               /* kernel tid: from the call header, or learned; -1 unknown */
    const char *fn;            /* PT_K_CALL: the function of the family called, or NULL */
    const struct pt_probe *probe; /* a run-time probe's call (its descriptor is probe->desc) */
    int unfinished;            /* a call in progress when the trace ended (inflight.c) */
};
/* Fills e from what getnext returned (info, data, len); names from n. */
/* The field of a call event named name, if the payload holds it, else NULL. */
const struct pt_field *pt_event_field(const struct pt_event *e, const char *name);
void pt_decode(struct pt_event *e, struct pt_names *n, const struct posix_trace_event_info *info,
               const unsigned char *data, size_t len);
#ifndef POSIXTRACE_CALL_ENTRY
#define POSIXTRACE_CALL_ENTRY 4u
#endif
/* Whether a call event has an outcome (ret, errno, duration): not for calls
 * recorded before they happen (exec, exit) or at entry only (flag ENTRY). */
int pt_call_returns(const struct pt_event *e);
/* Start time of a call event (ts - duration for calls that return). */
int64_t pt_event_start_ns(const struct pt_event *e);
/* The pthread_t -> kernel tid map learned from call events. */
void pt_tidmap_learn(pid_t pid, pthread_t th, int64_t tid);
int64_t pt_tidmap_get(pid_t pid, pthread_t th);
void pt_tidmap_free(void);

/* ---- inflight.c: posixtrace:call_unfinished shown as the call, unfinished ---- */
void pt_unfinished_unwrap(struct pt_event *e, struct pt_names *n);

/* ---- probes.c: run-time probes (1281 + k), from their specs ---- */
struct pt_probe {
    struct posixtrace_event_desc desc;
    char name[TRACE_EVENT_NAME_MAX + 1]; /* "probe:OBJECT:FUNCTION", cut to 63 bytes */
    char *spec;
    struct pt_probe_spec sp;
    uint64_t calls;
};
/* A spec checked; FALSE and *err (with the position of the mistake). */
gboolean pt_probe_parse_spec(const char *spec, struct pt_probe_spec *sp, GError **err);
/* Event type id's probe is spec from now on (NULL: not a valid one). */
const struct pt_probe *pt_probe_learn(unsigned id, const char *spec);
const struct pt_probe *pt_probe_get(unsigned id);
uint64_t pt_probe_calls(unsigned id); /* events of the probe decoded so far */
void pt_probes_free(void);
void pt_probe_refine(struct pt_event *e);
/* A probe call's return value as its type says (json: a JSON value). */
void pt_probe_fmt_ret(GString *s, const struct pt_event *e, int json);

/* ---- calls.c ---- */
/* Sets e->fn, the fields' absent and show (called by pt_decode). */
void pt_calls_refine(struct pt_event *e);
/* Appends e's name: "posixtrace:dup2" for a dup event of dup2, else e->name. */
void pt_append_event_name(GString *s, const struct pt_event *e);

/* ---- fmt_value.c ---- */
/* Appends the symbolic form of a fixed field value of type t. */
void pt_fmt_fixed(GString *s, int type, uint64_t v);
/* Appends the symbolic form of a fixed field (its show, else its type). */
void pt_fmt_fixed_field(GString *s, const struct pt_field *f);
/* errno name ("ENOENT"), or "E<n>". */
const char *pt_errno_name(int e, char *buf, size_t size);
const char *pt_signal_name(int sig, char *buf, size_t size);
/* struct sockaddr bytes -> "AF_INET 127.0.0.1:80" and the like. */
void pt_fmt_sockaddr(GString *s, const unsigned char *p, size_t n);
/* Whether a fixed type is shown as a JSON number (else a string). */
int pt_fixed_is_number(int type);

/* ---- fmt_poll.c ---- */
/* A POLLFDS, EPOLLEVS, TIMESPEC or TIMEVAL field as text or a JSON value;
 * FALSE (nothing appended) for other types. */
gboolean pt_fmt_poll_field(GString *s, const struct pt_field *f, int json);
/* ---- fmt_num.c: decimal numbers without printf ---- */
void pt_append_u64(GString *s, uint64_t v);
void pt_append_i64(GString *s, int64_t v);
void pt_append_padded(GString *s, uint64_t v, int width); /* at least width digits, 0-padded */
void pt_append_sec_us(GString *s, uint64_t ns);           /* "S.UUUUUU" */

/* ---- fmt_escape.c ---- */
/* C-like escaped string in quotes, at most max bytes then "..." (max 0: no limit). */
void pt_esc_c(GString *s, const unsigned char *p, size_t n, size_t max, int more);
/* A JSON string literal (quotes included); invalid UTF-8 bytes as \u00XX. */
void pt_esc_json(GString *s, const unsigned char *p, size_t n);
void pt_esc_json_str(GString *s, const char *str);
void pt_hex(GString *s, const unsigned char *p, size_t n);
/* Whether bytes look like text (printable, maybe a trailing NUL). */
int pt_is_text(const unsigned char *p, size_t n);

/* ---- options of the output (shared by run and dump) ---- */
enum pt_format { PT_FMT_TEXT, PT_FMT_JSON, PT_FMT_CHROME };
/* Time column of the text output: when each call started (strace's -r,
 * -t, -tt, -ttt: delta, clock, abs, epoch), rel since the first event. */
enum pt_timefmt { PT_TIME_REL, PT_TIME_ABS, PT_TIME_EPOCH, PT_TIME_NONE, PT_TIME_CLOCK,
                  PT_TIME_DELTA };
/* -Z/-z: which calls are shown. */
enum pt_outcome { PT_SHOW_ALL_CALLS, PT_SHOW_FAILED, PT_SHOW_SUCCESSFUL };

struct pt_symbolizer;

struct pt_out {
    FILE *fp;
    enum pt_format format;
    enum pt_timefmt timefmt;
    int64_t t0;                /* relative times from here (first event) */
    int have_t0;
    int64_t prev_start;        /* PT_TIME_DELTA: start of the previous line's call */
    int end_pending;           /* the event printed next tells end_pid's end (JSON field) */
    pid_t end_pid;
    int end_status;
    int have_prev;
    size_t strsize;            /* strings/buffers shown up to this many bytes (0: all) */
    int show_addr;
    struct pt_symbolizer *sym; /* NULL: addresses in hex */
    struct pt_fds *fds;        /* -y/-yy: descriptors named, NULL: numbers only */
    /* chrome */
    int chrome_n;              /* events written so far */
    GHashTable *chrome_pids;   /* pid -> its program and threads (fmt_chrome.c) */
};
int pt_parse_format(const char *s, enum pt_format *f);
int pt_parse_timefmt(const char *s, enum pt_timefmt *t);

/* ---- fmt_text.c / fmt_json.c / fmt_chrome.c ---- */
void pt_text_event(struct pt_out *o, const struct pt_event *e);
void pt_json_event(struct pt_out *o, const struct pt_event *e);
void pt_chrome_begin(struct pt_out *o);
void pt_chrome_event(struct pt_out *o, const struct pt_event *e);
void pt_chrome_end(struct pt_out *o);
/* The time column / fields shared by text and JSON. */
void pt_fmt_time(GString *s, struct pt_out *o, int64_t ns);
/* Appends e's decoded arguments as text (a, b, c). */
void pt_text_args(GString *s, const struct pt_out *o, const struct pt_event *e);
/* -y: {"fd":"/etc/passwd","ret":"..."}, the descriptor fields (and result)
 * whose file, pipe or socket is known (fmt_json.c; JSON and Chrome). */
void pt_fds_json(GString *s, const struct pt_out *o, const struct pt_event *e);
/* Appends e's arguments as a JSON object. */
void pt_json_args(GString *s, const struct pt_out *o, const struct pt_event *e);

/* ---- filter_spec.c ---- */
/* Builds the set of ids SPEC selects (comma-separated classes and names,
 * '!' excludes, '*' globs); a SPEC starting with '!' starts from base (NULL:
 * all events). Names are looked up in trid's event-type list. user_open: called for a plain
 * name that matches nothing (run: posix_trace_trid_eventid_open); returns 0
 * and the id, or an error. Returns FALSE with *err set. */
typedef int (*pt_user_open_fn)(void *ctx, const char *name, trace_event_id_t *id);
/* How many -e items selected system calls only (syscall:NAME events). */
extern unsigned pt_filter_syscall_items;
/* Takes out of s the system calls that flood a trace (futex): the classes
 * and posixtrace-run's default set leave them out; a name selects them. */
void pt_filter_drop_floods(trace_event_set_t *s);
gboolean pt_filter_parse(const char *spec, const trace_event_set_t *base, trace_id_t trid,
                         pt_user_open_fn user_open, void *ctx, trace_event_set_t *keep,
                         GError **err);
/* The classes a spec may name, for --help. */
#define PT_FILTER_CLASSES "process, thread, file, net, trace, user, syscall, probe, all"

/* ---- fn_events.c: functions and system calls -> the shim's events ---- */
/* The names of the events ("open") recording the C function or system call
 * fn ("openat", "wait4", "clone"): an empty array when none does. The
 * strings are static; g_ptr_array_unref the array. */
GPtrArray *pt_events_of_fn(const char *fn);
/* The functions event ev records (g_free'd strings), or NULL. */
GPtrArray *pt_fn_of_event(const char *ev);

/* ---- proc_end.c: how each process ended ("+++ exited with 0 +++") ---- */
/* "exited with 0", "killed by SIGSEGV (core dumped)" from a wait status. */
void pt_end_text(GString *s, int wstatus);
/* Writes pid's end in o's format: a text line, a Chrome instant, in JSON a
 * record of its own unless in_event (the event telling it was printed with
 * a "process_end" field). */
void pt_end_print(struct pt_out *o, pid_t pid, int64_t ts, int wstatus, int in_event);
/* "exit_status":..,"signal":..,"core_dumped":..,"text":".." */
void pt_end_json_fields(GString *s, int wstatus);
/* Whether e tells the end of a process not told yet (ended: pids whose exit
 * event was seen); its pid and wait status. */
int pt_end_of(GHashTable *ended, const struct pt_event *e, pid_t *pid, int *wstatus);
/* fmt_chrome.c: a process's end, an instant event on the process. */
void pt_chrome_end_event(struct pt_out *o, pid_t pid, int64_t ts, int wstatus);

/* ---- summary.c ---- */
struct pt_summary;
struct pt_summary *pt_summary_new(void);
void pt_summary_add(struct pt_summary *s, const struct pt_event *e);
void pt_summary_print(struct pt_summary *s, FILE *fp);
void pt_summary_free(struct pt_summary *s);

/* ---- symbolize.c ---- */
struct pt_symbolizer *pt_sym_new(void);
/* Learns the address map from an event (module-map events of the shim). */
void pt_sym_learn(struct pt_symbolizer *y, const struct pt_event *e);
/* Processes are live: maps not learned from the trace come from /proc. */
void pt_sym_set_live(struct pt_symbolizer *y);
/* Learns the map of a live process from /proc/PID/maps. */
void pt_sym_learn_proc(struct pt_symbolizer *y, pid_t pid);
/* Appends addr of process pid symbolized ("main+0x1b (prog.c:12)",
 * "libc.so.6+0x2a1f0", or "0x..." when nothing is known). */
void pt_sym_addr(struct pt_symbolizer *y, GString *s, pid_t pid, uint64_t addr);
void pt_sym_free(struct pt_symbolizer *y);

/* ---- fdtable.c: -y/-yy, what each descriptor names (from the trace) ---- */
struct pt_fds;
struct pt_fds *pt_fds_new(int level);  /* 1: -y, 2: -yy (socket protocols, addresses) */
void pt_fds_free(struct pt_fds *t);
int pt_fds_level(const struct pt_fds *t); /* 0 for NULL */
/* Appends what descriptor field f of e names, as the table was before e
 * (pipe's and fopen's output descriptors: as e makes them); 0 if unknown. */
int pt_fds_field(struct pt_fds *t, const struct pt_event *e, const struct pt_field *f,
                 GString *s);
/* Appends what the descriptor e returns names (open, socket, dup...); 0 if none. */
int pt_fds_result(struct pt_fds *t, const struct pt_event *e, GString *s);
/* After e was written: the changes it makes. */
void pt_fds_learn(struct pt_fds *t, const struct pt_event *e);
/* Adds the events the table learns from. */
void pt_fds_needed(trace_event_set_t *set);

/* ---- sink.c: what to do with each event ---- */
struct pt_sink {
    struct pt_out out;
    int print_events;          /* 0 with -c alone */
    struct pt_summary *summary;/* NULL unless -c/-C */
    trace_event_set_t keep;    /* -e */
    enum pt_outcome outcome;   /* -Z/-z: calls that return, by outcome */
    int have_keep;
    GArray *pids, *tids;       /* --pid/--tid (int64), NULL: all */
    int64_t from_ns, to_ns;    /* time window: relative to t0 unless abs */
    int from_abs, to_abs, have_from, have_to;
    /* counters */
    uint64_t events, shown, lost, errors;
    uint64_t trace_errors;     /* POSIX_TRACE_ERROR events: records missing or corrupt */
    int64_t first_ns, last_ns;
    GHashTable *ended;         /* pids whose end was printed from their exit event */
    /* every event read, decoded, before the filters (NULL: none) */
    void (*observe)(void *ctx, const struct pt_event *e);
    void *observe_ctx;
};
void pt_sink_init(struct pt_sink *k);
void pt_sink_begin(struct pt_sink *k);
/* Decodes, counts, filters and writes one event. */
void pt_sink_event(struct pt_sink *k, struct pt_names *n, const struct posix_trace_event_info *info,
                   const unsigned char *data, size_t len);
void pt_sink_end(struct pt_sink *k);
void pt_sink_free(struct pt_sink *k);

/* ---- util.c ---- */
extern const char *pt_prog;
void pt_warn(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
gboolean pt_parse_size(const char *s, size_t *out);
/* An option's whole number in [lo, hi]; FALSE and *err naming the option,
 * the value and the range. */
gboolean pt_int_opt(const char *opt, const char *value, long lo, long hi, long *out,
                    GError **err);
/* n for messages ("64K (65536 bytes)"); g_free it. */
char *pt_size_text(size_t n);
gboolean pt_parse_seconds(const char *s, int64_t *ns, int *absolute);
int64_t pt_ts_ns(const struct timespec *ts);
/* a - b and a + b, saturated at the int64 range: timestamps read from a
 * damaged or hostile trace can be anything */
int64_t pt_ns_sub(int64_t a, int64_t b);
int64_t pt_ns_add(int64_t a, int64_t b);
/* |v| as an unsigned number (INT64_MIN included) */
static inline uint64_t pt_ns_abs(int64_t v)
{
    return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}
const char *pt_strerror(int e);
const char *pt_policy_name(int p);
/* "clock: tsc (the cycle counter, N ticks/ns, ...)" or "clock: realtime (...)"
 * for a clock of <posixtrace/control.h> (--info of both tools); g_free it. */
char *pt_clock_text(int source, double ticks_per_ns);

#endif
