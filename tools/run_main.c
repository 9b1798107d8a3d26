/*
 * posixtrace-run [OPTIONS] [--] PROGRAM [ARGS...]   (or -p PID)
 *
 * The trace controller: creates a stream for the program's process
 * (posix_trace_create, or _withlog with -o) before it execs, with the shim
 * preloaded, prints its events as they happen or writes a log, and exits as
 * the program did.
 */
#include "config.h"
#include "run.h"
#include <posixtrace/control.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The trace's own bookkeeping events, not printed unless -e asks (and
 * process_end, which the "+++ killed by" line tells); the system calls that
 * flood a trace (futex), neither recorded nor printed unless -e names them. */
static void default_keep(trace_event_set_t *keep)
{
    static const trace_event_id_t quiet[] = { POSIX_TRACE_START, POSIX_TRACE_STOP,
                                              POSIX_TRACE_FILTER, POSIX_TRACE_FLUSH_START,
                                              POSIX_TRACE_FLUSH_STOP, POSIXTRACE_EV_MODULE,
                                              POSIXTRACE_EV_PROCESS_END, POSIXTRACE_EV_PROBE_DEF,
                                              POSIXTRACE_EV_FDS };
    posix_trace_eventset_fill(keep, POSIX_TRACE_ALL_EVENTS);
    for (size_t i = 0; i < G_N_ELEMENTS(quiet); i++)
        posix_trace_eventset_del(quiet[i], keep);
    pt_filter_drop_floods(keep);
}

static int user_open(void *ctx, const char *name, trace_event_id_t *id)
{
    return posix_trace_trid_eventid_open(*(trace_id_t *)ctx, name, id);
}

static gboolean filter_out(trace_id_t trid, const trace_event_set_t *out)
{
    int rc = posix_trace_set_filter(trid, out, POSIX_TRACE_SET_EVENTSET);
    if (rc != 0)
        pt_warn("-e: posix_trace_set_filter: %s", g_strerror(rc));
    return rc == 0;
}

/* -e: the stream's filter (what is not kept; the predefined events always
 * pass, so losses are reported) and what is printed. */
static gboolean set_filter(const struct run_opts *o, trace_id_t trid, struct pt_sink *k)
{
    GError *err = NULL;
    trace_event_set_t out, base, need;
    k->have_keep = 1;
    default_keep(&base);
    posix_trace_eventset_empty(&need);
    if (o->fds) /* -y: what the descriptor table learns from is recorded, printed or not */
        pt_fds_needed(&need);
    k->keep = base;
    if (o->spec->len == 0 && !o->syscalls) {
        if (o->fds)
            return TRUE;
        /* without -y the shim does not read its descriptors at start (event fds) */
        posix_trace_eventset_empty(&out);
        posix_trace_eventset_add(POSIXTRACE_EV_FDS, &out);
        return filter_out(trid, &out);
    }
    /* without -e, what --syscalls does not record is the flooding calls */
    if (o->spec->len != 0 &&
        !pt_filter_parse(o->spec->str, &base, trid, user_open, &trid, &k->keep, &err)) {
        pt_warn("%s", err->message);
        g_error_free(err);
        return FALSE;
    }
    if (o->spec->len != 0 && pt_filter_syscall_items != 0 && !o->syscalls && !o->quiet)
        pt_warn("-e %s: selects system calls, which are recorded with --syscalls only",
                o->spec->str);
    posix_trace_eventset_fill(&out, POSIX_TRACE_ALL_EVENTS);
    /* The address map is always recorded (--addr, posixtrace-dump --symbolize),
     * the ends posixtrace-run records (the "+++ killed by" lines), and the
     * probes' definitions (posixtrace-dump decodes the probes with them). */
    for (trace_event_id_t id = 0; id <= PT_ID_MAX; id++) {
        int m = 0, n = 0;
        posix_trace_eventset_ismember(id, &k->keep, &m);
        posix_trace_eventset_ismember(id, &need, &n);
        if (m || n || id < PT_SYS_FIRST || id == POSIXTRACE_EV_MODULE ||
            id == POSIXTRACE_EV_PROCESS_END || id == POSIXTRACE_EV_PROBE_DEF)
            posix_trace_eventset_del(id, &out);
    }
    return filter_out(trid, &out);
}

static FILE *print_file; /* --print-to's file, under the live view's stream */

static gboolean setup_sink(const struct run_opts *o, struct pt_sink *k)
{
    pt_sink_init(k);
    if (o->format != NULL)
        pt_parse_format(o->format, &k->out.format);
    static const enum pt_timefmt t_styles[] = { PT_TIME_REL, PT_TIME_CLOCK, PT_TIME_ABS,
                                                PT_TIME_EPOCH };
    if (o->timefmt != NULL)
        pt_parse_timefmt(o->timefmt, &k->out.timefmt);
    else if (o->relative)
        k->out.timefmt = PT_TIME_DELTA;
    else
        k->out.timefmt = t_styles[o->t_count];
    k->outcome = o->failed_only ? PT_SHOW_FAILED
                 : o->successful_only ? PT_SHOW_SUCCESSFUL : PT_SHOW_ALL_CALLS;
    k->out.show_addr = o->addr;
    if (o->fds && o->output == NULL)
        k->out.fds = pt_fds_new(o->fds);
    if (o->addr) {
        k->out.sym = pt_sym_new();
        pt_sym_set_live(k->out.sym);
    }
    if (o->summary || o->summary_too)
        k->summary = pt_summary_new();
    k->print_events = o->output == NULL && (!o->summary || o->summary_too);
    if (o->print_to != NULL && (k->out.fp = fopen(o->print_to, "we")) == NULL) {
        pt_warn("%s: %s", o->print_to, g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

/* The live view writes in large writes of whole lines (live_out.c),
 * flushed whenever it caught up (run_session.c); if that stream cannot be
 * made, line by line through the FILE as it is. */
static void live_output(struct pt_sink *k)
{
    FILE *fp = k->print_events ? run_live_out(fileno(k->out.fp)) : NULL;
    if (fp == NULL)
        return;
    print_file = k->out.fp != stderr ? k->out.fp : NULL;
    k->out.fp = fp;
}

static int create(const struct run_opts *o, pid_t pid, const trace_attr_t *a, int logfd,
                  trace_id_t *trid)
{
    int rc = logfd >= 0 ? posix_trace_create_withlog(pid, a, logfd, trid)
                        : posix_trace_create(pid, a, trid);
    if (rc == 0)
        return 0;
    if (rc == EPERM)
        pt_warn("cannot trace %s (pid %ld): %s (another user's process needs CAP_SYS_PTRACE)",
                o->pid ? "the process" : o->argv[0], (long)pid, g_strerror(rc));
    else if (rc == ESRCH)
        pt_warn("no process %ld", (long)pid);
    else
        pt_warn("cannot create the trace stream: %s", g_strerror(rc));
    return rc;
}

static int open_log(const struct run_opts *o)
{
    if (o->output == NULL)
        return -1;
    int fd = open(o->output, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        pt_warn("%s: %s", o->output, g_strerror(errno));
    return fd;
}

static void reap_failed_child(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

/* Starts tracing the program or the process; 0 or an exit status. */
static int start(const struct run_opts *o, struct session *s, struct launch *l,
                 const trace_attr_t *a, int logfd, const sigset_t *oldmask)
{
    int rc;
    if (o->pid == 0 && (rc = run_fork(l, o, oldmask)) != 0) {
        pt_warn("fork: %s", g_strerror(rc));
        return RUN_EXIT_FAIL;
    }
    s->target = o->pid ? o->pid : l->pid;
    if (create(o, s->target, a, logfd, &s->trid) != 0) {
        if (o->pid == 0) {
            run_abort(l);
            reap_failed_child(l->pid);
        }
        return RUN_EXIT_FAIL;
    }
    pt_names_init(&s->names, s->trid);
    if (!set_filter(o, s->trid, s->sink) || (rc = posix_trace_start(s->trid)) != 0) {
        if (rc != 0)
            pt_warn("posix_trace_start: %s", g_strerror(rc));
        if (o->pid == 0) {
            run_abort(l);
            reap_failed_child(l->pid);
        }
        posix_trace_shutdown(s->trid);
        return RUN_EXIT_FAIL;
    }
    if (s->live) /* --block: the program's writers wait for us from its first event */
        posixtrace_stream_consumer(s->trid);
    if (o->pid == 0 && (rc = run_go(l)) != 0) {
        pt_warn("%s: %s", o->argv[0], g_strerror(rc));
        reap_failed_child(l->pid);
        posix_trace_shutdown(s->trid);
        return rc == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC;
    }
    return 0;
}

/* Processes not traced are looked for when the shim is preloaded and the
 * events that tell (exec, posix_spawn, process_start) are all kept. */
static void watch_untraced(const struct run_opts *o, struct session *s)
{
    static const trace_event_id_t need[] = { POSIXTRACE_EV_PROCESS_START, POSIXTRACE_EV_EXEC,
                                             POSIXTRACE_EV_SPAWN };
    if (o->no_preload)
        return;
    for (size_t i = 0; i < G_N_ELEMENTS(need); i++) {
        int m = 0;
        posix_trace_eventset_ismember(need[i], &s->sink->keep, &m);
        if (!m)
            return;
    }
    s->untraced = untraced_new();
    if (o->pid == 0)
        untraced_expect(s->untraced, s->target, o->argv[0], 1);
    s->sink->observe = untraced_event;
    s->sink->observe_ctx = s->untraced;
}

static int64_t end_time(const struct run_opts *o)
{
    int64_t d = 0;
    int abs = 0;
    struct timespec now;
    if (o->duration == NULL)
        return 0;
    if (!pt_parse_seconds(o->duration, &d, &abs) || abs || d <= 0) {
        pt_warn("--duration: a positive number of seconds");
        exit(RUN_EXIT_FAIL);
    }
    clock_gettime(CLOCK_REALTIME, &now);
    return pt_ts_ns(&now) + d;
}

static int finish(const struct run_opts *o, struct session *s, const trace_attr_t *a)
{
    struct posix_trace_status_info st = { 0 };
    int incomplete = 0;
    posix_trace_get_status(s->trid, &st);
    s->write_error = st.posix_stream_flush_error;
    session_finish(s);
    if (o->output == NULL) {
        pt_sink_end(s->sink);
        run_report_live(o, s, a, &st);
        if (s->sink->lost == 0)
            run_probes_report();
    } else {
        incomplete = run_report_log(o, s, a);
    }
    if (s->sink->out.fp != stderr)
        fclose(s->sink->out.fp);
    if (print_file != NULL)
        fclose(print_file);
    print_file = NULL;
    s->sink->out.fp = stderr;
    if (!s->attach && !s->target_done)
        session_wait_rest(s);
    if (incomplete)
        return RUN_EXIT_FAIL; /* the log lacks events: a write of it failed */
    if (o->pid != 0)
        return 0;
    return s->target_done ? -1 : 128 + SIGINT;
}

/* --info: what a trace taken now would use. */
static int run_info(void)
{
    int src = 0;
    double tpn = 0;
    const char *why = "";
    posixtrace_clock_choice(&src, &tpn, &why);
    char *t = pt_clock_text(src, tpn);
    printf("%s: %s\n", t, why);
    g_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    struct run_opts o;
    struct pt_sink k;
    struct session s = { 0 };
    struct launch l = { 0 };
    trace_attr_t a;
    sigset_t oldmask;
    int logfd, rc;
    pt_prog = "posixtrace-run";
    if (!run_parse(argc, argv, &o))
        return RUN_EXIT_FAIL;
    if (o.version) {
        printf("posixtrace-run (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        return 0;
    }
    if (o.info)
        return run_info();
    int64_t end_ns = end_time(&o);
    if (o.pid == 0 && (rc = run_check_program(o.argv[0])) != 0)
        return rc;
    if (!run_attr(&o, &a) || !setup_sink(&o, &k))
        return RUN_EXIT_FAIL;
    if (o.output != NULL && (logfd = open_log(&o)) < 0)
        return RUN_EXIT_FAIL;
    if (o.output == NULL)
        logfd = -1;
    s.sink = &k;
    s.live = o.output == NULL;
    s.attach = o.pid != 0;
    s.follow = !o.no_follow && !s.attach;
    s.end_ns = end_ns;
    run_signals_block(&oldmask);
    if (s.follow)
        prctl(PR_SET_CHILD_SUBREAPER, 1);
    if ((rc = start(&o, &s, &l, &a, logfd, &oldmask)) != 0)
        return rc;
    watch_untraced(&o, &s);
    if (s.live) {
        live_output(&k);
        pt_sink_begin(&k);
    }
    session_loop(&s);
    rc = finish(&o, &s, &a);
    if (logfd >= 0)
        close(logfd);
    pt_sink_free(&k);
    untraced_free(s.untraced);
    pt_tidmap_free();
    posix_trace_attr_destroy(&a);
    run_opts_free(&o);
    if (rc >= 0)
        return rc;
    run_exit_like(s.target_status);
}
