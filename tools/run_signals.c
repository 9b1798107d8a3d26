/*
 * Signals of the controller. SIGCHLD and the signals a user sends to stop a
 * program are blocked and collected with sigtimedwait: a signal another
 * process sent to posixtrace-run is forwarded to the program; one the
 * terminal sent (Ctrl-C, Ctrl-\) already reached the program, which is in
 * the same process group, and is not sent twice. Either way tracing goes on
 * until the program is gone, so the trace is still shut down, flushed and
 * summarized.
 */
#include "run.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static const int handled[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
                               SIGWINCH, SIGCONT };

static void the_set(sigset_t *s)
{
    sigemptyset(s);
    for (size_t i = 0; i < G_N_ELEMENTS(handled); i++)
        sigaddset(s, handled[i]);
}

void run_signals_block(sigset_t *oldmask)
{
    sigset_t s;
    the_set(&s);
    /* a write to a pipe nobody reads fails with EPIPE instead (the live view
     * then ends tracing); the program gets the caller's mask back */
    sigaddset(&s, SIGPIPE);
    sigprocmask(SIG_BLOCK, &s, oldmask);
}

static int is_interrupt(int sig)
{
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
}

int run_signals_poll(pid_t target, int timeout_ms, int *child)
{
    sigset_t s;
    siginfo_t si;
    struct timespec t = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
    int interrupts = 0;
    the_set(&s);
    for (;;) {
        int sig = sigtimedwait(&s, &si, &t);
        if (sig < 0)
            return interrupts; /* EAGAIN: nothing (more) pending; EINTR */
        t.tv_sec = 0;
        t.tv_nsec = 0;
        if (sig == SIGCHLD) {
            *child = 1;
            continue;
        }
        /* SIGWINCH and SIGCONT reach the program from the terminal/kernel too. */
        if (si.si_code <= 0 && si.si_pid != getpid() && target > 0 && sig != SIGCONT &&
            sig != SIGWINCH)
            kill(target, sig);
        interrupts += is_interrupt(sig);
    }
}

void run_exit_like(int status)
{
    if (WIFEXITED(status))
        exit(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit nocore = { 0, 0 };
        sigset_t s;
        fflush(NULL);
        setrlimit(RLIMIT_CORE, &nocore); /* the program already dumped one, if any */
        signal(sig, SIG_DFL);
        sigemptyset(&s);
        sigaddset(&s, sig);
        sigprocmask(SIG_UNBLOCK, &s, NULL);
        raise(sig);
        exit(128 + sig);
    }
    exit(RUN_EXIT_FAIL);
}
