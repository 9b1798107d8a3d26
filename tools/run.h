/* posixtrace-run: the trace controller (run_*.c). */
#ifndef POSIXTRACE_RUN_H
#define POSIXTRACE_RUN_H

#include "ptools.h"

#include <signal.h>

/* Exit statuses of posixtrace-run's own failures (like env(1), timeout(1)). */
#define RUN_EXIT_FAIL 125      /* bad option, tracing could not be set up */
#define RUN_EXIT_NOEXEC 126    /* the program cannot be executed */
#define RUN_EXIT_NOTFOUND 127  /* the program does not exist */

/* -k/--stack: frames per call (the shim's SHIM_STACK_MAX), and without N. */
#define SHIM_STACK_FRAMES_MAX 64
#define RUN_STACK_DEFAULT 16
/* --block without MS: how long a writer waits for room, in ms. */
#define RUN_BLOCK_DEFAULT_MS 100

/* live_out.c: the live view's output over fd (stderr's or --print-to's):
 * a stdio stream with a buffer of RUN_OUT_BUFFER, writing whole lines. */
#define RUN_OUT_BUFFER ((size_t)1 << 20)
FILE *run_live_out(int fd);

struct run_opts {
    char *output, *print_to, *format, *timefmt, *policy, *log_policy, *name;
    char *stream_size, *max_data, *log_size, *duration;
    GString *spec;
    GPtrArray *probes;         /* --probe, --probes: the specs, checked */
    gboolean no_follow, follow, summary, summary_too, addr, quiet, version, info, no_preload;
    gboolean failed_only, successful_only, relative;
    gint strsize, stack, pid, t_count;
    gint fds;                  /* -y: 1, -yy: 2 (descriptors named; the fds event recorded) */
    gboolean syscalls;         /* --syscalls: POSIXTRACE_SYSCALLS=1 for the shim */
    gint block_ms;             /* --block[=MS]: writers wait this long for room; 0: off */
    gchar **argv;              /* the program and its arguments */
};

/* run_opts.c: parses argv; FALSE (message written) on bad options. */
gboolean run_parse(int argc, char **argv, struct run_opts *o);
void run_opts_free(struct run_opts *o);

/* run_launch.c: $env, else installed, else built (NULL: none). */
const char *run_lib_path(const char *env, const char *installed, const char *built);

/* run_probes.c: --probe, --probes (issue 16). */
gboolean run_probe_add(const char *spec, GError **err);
gboolean run_probes_file(const char *path, GError **err);
guint run_probes_count(void);
/* run_ltrace.c: OBJECT:FN's spec from ltrace's prototype files, or NULL (err set). */
gchar *run_ltrace_spec(const char *object, const char *fn, GError **err);
gchar **run_probes_env(gchar **env); /* LD_AUDIT, POSIXTRACE_PROBES; names the probes */
void run_probes_report(void);       /* probes with no call recorded */
void run_probes_free(void);

/* run_attr.c: the stream's attributes from the options. */
gboolean run_attr(const struct run_opts *o, trace_attr_t *a);
/* The live view's default stream size, from the machine's memory. */
size_t run_live_stream_size(void);

/* run_launch.c: starting the program. */
struct launch {
    pid_t pid;
    int go_fd;                 /* write a byte: the child may exec */
    int err_fd;                /* the child's exec errno arrives here */
};
/* 0, or the exit status to use (127/126 with a message) when the program
 * cannot be run. */
int run_check_program(const char *prog);
/* Forks the child, which waits for run_go(); 0 or an errno. */
int run_fork(struct launch *l, const struct run_opts *o, const sigset_t *oldmask);
/* Lets the child exec; returns 0, or the errno of a failed exec. */
int run_go(struct launch *l);
/* Tells the child to give up (tracing could not be set up). */
void run_abort(struct launch *l);

/* run_signals.c */
void run_signals_block(sigset_t *oldmask);
/* Collects pending signals (waiting up to timeout_ms); forwards those sent
 * by another process to target; returns how many interrupts (SIGINT, SIGTERM,
 * SIGHUP) arrived. *child: set when SIGCHLD arrived. */
int run_signals_poll(pid_t target, int timeout_ms, int *child);
/* Exits as the program did: its exit status, or its death by signal. */
G_GNUC_NORETURN void run_exit_like(int status);

/* run_untraced.c: processes of the traced tree that were not traced. */
struct untraced;
struct untraced *untraced_new(void);
/* pid is to start a traced image of path (search: looked up in PATH). */
void untraced_expect(struct untraced *u, pid_t pid, const char *path, int search);
void untraced_event(void *u, const struct pt_event *e); /* a pt_sink observer */
/* What untraced_event does with an event of pid whose id untraced_needs()
 * does not name (and that is no predefined one): it needs no decoding. */
void untraced_seen(struct untraced *u, pid_t pid);
gboolean untraced_needs(trace_event_id_t id);
/* One line per process expected that never started tracing, with the
 * reason when the program file tells it; returns how many. */
/* Before the stream is shut down: what processes that could not join noted
 * there (posixtrace_stream_refusals), for untraced_report. */
void untraced_collect(struct untraced *u, trace_id_t trid);
guint untraced_report(struct untraced *u);
void untraced_free(struct untraced *u);

/* run_session.c: the controller's loop. */
struct session {
    trace_id_t trid;
    int live;                  /* events printed as they come (no log) */
    struct pt_sink *sink;
    struct pt_names names;
    pid_t target;              /* the program (or -p PID) */
    int attach;                /* -p: not our child */
    int follow;                /* wait for every descendant (subreaper) */
    int64_t end_ns;            /* --duration: CLOCK_REALTIME end, 0: none */
    int target_status, target_done;
    int interrupts;
    int read_error;
    int write_error;           /* -o: a write of the log failed (errno), 0 */
    struct untraced *untraced; /* NULL: not looked for (-e leaves out what it needs) */
    struct lq *lq;             /* live: the reader thread's queue (live_queue.h), or NULL */
    int out_gone;              /* live: the output's reader went away (EPIPE) */
};
void session_loop(struct session *s);
/* Stops and shuts the stream down (live: after reading what is left). */
void session_finish(struct session *s);
/* Waits for the target (and, following, its descendants) after tracing ended. */
void session_wait_rest(struct session *s);

/* run_report.c: the end-of-run line (events, losses, why, what to do). */
void run_report_live(const struct run_opts *o, struct session *s, const trace_attr_t *a,
                     const struct posix_trace_status_info *st);
/* -o: reads the log back (counts, losses, processes not traced, -c table).
 * Returns 1 when the log is incomplete: a write failed (s->write_error, or
 * as the log's status records it) and events were lost with it. */
int run_report_log(const struct run_opts *o, struct session *s, const trace_attr_t *a);

#endif
