/*
 * posixtrace-run's loop: read events as they come (live) or just wait (log),
 * collect signals, reap children, and end when the program and, following,
 * all its descendants are gone (the controller is their subreaper), when
 * --duration is over, or when the user insists (a second Ctrl-C; the first
 * one with -p).
 */
#include "run.h"
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

void session_loop(struct session *s)
{
    int child = 1, enough = s->attach ? 1 : 2;
    while (!s->read_error) {
        if (s->live) {
            struct timespec dl;
            int64_t t = now_ns() + READ_SLICE_MS * 1000000LL;
            dl.tv_sec = t / 1000000000;
            dl.tv_nsec = t % 1000000000;
            int rc = pt_read_until(s->trid, &s->names, s->sink, &dl, 1024);
            if (rc != 0 && rc != ETIMEDOUT)
                s->read_error = rc;
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
    }
    if (s->read_error)
        pt_warn("reading the stream failed: %s", g_strerror(s->read_error));
}

void session_finish(struct session *s)
{
    if (s->live)
        posix_trace_stop(s->trid); /* a call that returns from now on is not recorded */
    /* the calls still in progress, as posixtrace:call_unfinished events
     * (-o: into the log, before its last flush) */
    posixtrace_stream_unfinished(s->trid, NULL);
    if (s->live) {
        int rc = pt_drain(s->trid, &s->names, s->sink);
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
