/*
 * posixtrace-run's loop: read events as they come (live) or just wait (log),
 * collect signals, reap children, and end when the program and, following,
 * all its descendants are gone (the controller is their subreaper), when
 * --duration is over, or when the user insists (a second Ctrl-C; the first
 * one with -p).
 */
#include "run.h"
#include "live_queue.h"
#include "readloop.h"

#include <errno.h>
#include <poll.h>
#include <posixtrace/control.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READ_SLICE_MS 50
#define WAIT_SLICE_MS 100

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return pt_ts_ns(&t);
}

/* -p: whether the process is gone (exited, even if not yet reaped). */
static int attached_gone(struct session *s)
{
    static int pidfd = -2;
    if (pidfd == -2)
        pidfd = (int)syscall(SYS_pidfd_open, s->target, 0);
    if (pidfd >= 0) {
        struct pollfd p = { pidfd, POLLIN, 0 };
        return poll(&p, 1, 0) == 1;
    }
    return kill(s->target, 0) != 0 && errno == ESRCH;
}

/* Reaps what exited; 1 when tracing should end. */
/* The process a signal sent to posixtrace-run is forwarded to: none with -p
 * (an interrupt detaches from a process that is not ours, leaving it running). */
static pid_t forward_to(const struct session *s)
{
    return s->attach ? 0 : s->target;
}

static int reap(struct session *s)
{
    if (s->attach)
        return attached_gone(s);
    for (;;) {
        int st;
        pid_t p = waitpid(s->follow ? -1 : s->target, &st, WNOHANG);
        if (p > 0) {
            /* how a process killed by a signal ended: it cannot record it */
            if (WIFSIGNALED(st))
                posixtrace_stream_process_end(s->trid, p, st);
            if (p == s->target) {
                s->target_status = st;
                s->target_done = 1;
            }
            continue;
        }
        if (p == 0)
            return 0; /* someone is still running */
        return errno == ECHILD;
    }
}

/* The printing side of the live view: the events of a block, in order. */
static void print_block(struct session *s, struct lq_block *b)
{
    size_t off = 0;
    const struct lq_event *ev;
    while ((ev = lq_next(b, &off)) != NULL)
        pt_sink_event(s->sink, &s->names, &ev->info, ev->data, ev->len);
    lq_give_back(s->lq, b);
}

/* Lines go out in large writes; whenever the printer has caught up with
 * the reader, at once. A reader of the output that went away (EPIPE: SIGPIPE
 * is blocked) ends tracing, as --duration does. */
static void check_out(struct session *s, int flush)
{
    FILE *fp = s->sink->out.fp;
    if (!s->sink->print_events)
        return;
    int err = 0;
    if (flush && fflush(fp) != 0)
        err = errno;
    else if (ferror(fp))
        err = errno; /* as the write that failed while printing left it */
    if (err == EPIPE) {
        s->sink->print_events = 0;
        s->out_gone = 1;
    }
}

/* Up to READ_SLICE_MS of the live view: what the reader queued. */
static void live_slice(struct session *s)
{
    struct lq_block *b = lq_take(s->lq, READ_SLICE_MS);
    if (b != NULL)
        print_block(s, b);
    check_out(s, b == NULL || lq_empty(s->lq));
    if (lq_done(s->lq) && lq_error(s->lq) != 0)
        s->read_error = lq_error(s->lq);
}

/* Without the reader thread (it could not start): read and print here. */
static void direct_slice(struct session *s)
{
    struct timespec dl;
    int64_t t = now_ns() + READ_SLICE_MS * 1000000LL;
    dl.tv_sec = t / 1000000000;
    dl.tv_nsec = t % 1000000000;
    int rc = pt_read_until(s->trid, &s->names, s->sink, &dl, 1024);
    if (rc != 0 && rc != ETIMEDOUT)
        s->read_error = rc;
    check_out(s, 1);
}

static void live_start(struct session *s)
{
    if ((s->lq = lq_start(s->trid)) == NULL)
        pt_warn("starting the reader thread: %s (reading in the printing thread)",
                g_strerror(errno));
}

void session_loop(struct session *s)
{
    int child = 1, enough = s->attach ? 1 : 2;
    int64_t watched = 0;
    if (s->live)
        live_start(s);
    while (!s->read_error && !s->out_gone) {
        if (s->live) {
            if (s->lq != NULL)
                live_slice(s);
            else
                direct_slice(s);
            s->interrupts += run_signals_poll(forward_to(s), 0, &child);
        } else {
            s->interrupts += run_signals_poll(forward_to(s), WAIT_SLICE_MS, &child);
        }
        if (s->attach || child) {
            child = 0;
            if (reap(s))
                break;
        }
        if ((s->end_ns != 0 && now_ns() >= s->end_ns) || s->interrupts >= enough)
            break;
        if (now_ns() - watched >= (int64_t)WAIT_SLICE_MS * 1000000) {
            posixtrace_stream_watch(s->trid); /* new processes' calls in flight, kept visible */
            watched = now_ns();
        }
    }
    if (s->read_error)
        pt_warn("reading the stream failed: %s", g_strerror(s->read_error));
}

/* After the stream stopped: everything the reader read, and what was left
 * in the stream, printed; unless the user interrupts again (a slow terminal
 * may take long): the rest is then only counted, and said so. */
static int live_drain(struct session *s)
{
    int child = 0, before = s->interrupts;
    uint64_t shown_at = 0;
    if (s->lq == NULL)
        return pt_drain(s->trid, &s->names, s->sink);
    lq_finish(s->lq);
    while (!lq_done(s->lq)) {
        struct lq_block *b = lq_take(s->lq, WAIT_SLICE_MS);
        if (b != NULL)
            print_block(s, b);
        check_out(s, 0);
        s->interrupts += run_signals_poll(forward_to(s), 0, &child);
        if (s->interrupts > before && s->sink->print_events && !s->out_gone) {
            check_out(s, 1);
            s->sink->print_events = 0;
            shown_at = s->sink->shown;
            before = -1;
        }
    }
    if (before < 0)
        pt_warn("interrupted: the last %" G_GUINT64_FORMAT " events read were not printed",
                (guint64)(s->sink->shown - shown_at));
    int rc = lq_error(s->lq);
    lq_free(s->lq);
    s->lq = NULL;
    check_out(s, 1);
    return rc;
}

void session_finish(struct session *s)
{
    if (s->live)
        posix_trace_stop(s->trid); /* a call that returns from now on is not recorded */
    /* the calls still in progress, as posixtrace:call_unfinished events
     * (-o: into the log, before its last flush) */
    posixtrace_stream_unfinished(s->trid, NULL);
    if (s->attach) /* -p: a target blocked since before the attach */
        posixtrace_stream_blocked(s->trid, s->target, NULL);
    if (s->live) {
        int rc = live_drain(s);
        if (rc != 0 && !s->read_error)
            pt_warn("reading the stream failed: %s", g_strerror(rc));
    }
    if (s->untraced != NULL)
        untraced_collect(s->untraced, s->trid); /* before the stream goes */
    int rc = posix_trace_shutdown(s->trid);
    if (rc != 0)
        pt_warn("shutting the stream down: %s", g_strerror(rc));
    if (rc == ENOSPC || rc == EFBIG)
        s->write_error = rc; /* the last flush failed */
    pt_names_clear(&s->names);
}

void session_wait_rest(struct session *s)
{
    int child = 1;
    while (!s->target_done && !s->attach) {
        s->interrupts += run_signals_poll(forward_to(s), WAIT_SLICE_MS, &child);
        if (s->interrupts >= 2)
            return;
        if (child) {
            child = 0;
            reap(s);
        }
    }
}
