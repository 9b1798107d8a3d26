/*
 * Waiting for children (wait, waitpid, wait3, wait4 -> one "wait" event;
 * waitid) and sending signals (kill; killpg as kill of -pgrp; raise).
 * The wait family is given a status word of the shim's own when the caller
 * passes NULL, so that the status is always recorded; else the caller's, so
 * that a bad one fails with EFAULT as without the shim (the kernel writes it
 * after reaping the child); it is read after a call that reaped one.
 */
#include "shim.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

REAL(pid_t, wait4, pid_t, int *, int, struct rusage *);
REAL(pid_t, wait, int *);
REAL(pid_t, waitpid, pid_t, int *, int);
REAL(pid_t, wait3, int *, int, struct rusage *);

enum wkind { W_WAIT, W_WAITPID, W_WAIT3, W_WAIT4 };

static pid_t call_wait(enum wkind k, pid_t pid, int *st, int options, struct rusage *ru)
{
    switch (k) {
    case W_WAIT: return NEXT(wait)(st);
    case W_WAITPID: return NEXT(waitpid)(pid, st, options);
    case W_WAIT3: return NEXT(wait3)(st, options, ru);
    default: return NEXT(wait4)(pid, st, options, ru);
    }
}

static SHIM_NOINLINE pid_t wait_rec(enum wkind k, pid_t pid, int *status, int options,
                                    struct rusage *ru, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_WAIT, ra))
        return call_wait(k, pid, status, options, ru);
    shim_args(2, pid, (unsigned)options, 0);
    int st = 0;
    int *sp = status != NULL ? status : &st;
    pid_t r = call_wait(k, pid, sp, options, ru);
    shim_end(&c, r, r < 0);
    c.flags |= POSIXTRACE_CALL_WITH_FN(POSIXTRACE_FN_WAIT + (int)k); /* wkind's order */
    shim_fix_wait(&c, pid, (unsigned)options, r > 0 ? *sp : 0);
    if (r < 0 && status != NULL)
        c.flags |= POSIXTRACE_CALL_NODATA; /* not read: it may be bad (EFAULT) */
    shim_emit(&c);
    return r;
}

#define WANT_WAIT likely(!posixtrace_wanted(POSIXTRACE_EV_WAIT))

SHIM_API pid_t wait(int *status)
{
    if (WANT_WAIT)
        return NEXT(wait)(status);
    return wait_rec(W_WAIT, -1, status, 0, NULL, RA());
}

SHIM_API pid_t waitpid(pid_t pid, int *status, int options)
{
    if (WANT_WAIT)
        return NEXT(waitpid)(pid, status, options);
    return wait_rec(W_WAITPID, pid, status, options, NULL, RA());
}

SHIM_API pid_t wait3(int *status, int options, struct rusage *ru)
{
    if (WANT_WAIT)
        return NEXT(wait3)(status, options, ru);
    return wait_rec(W_WAIT3, -1, status, options, ru, RA());
}

SHIM_API pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    if (WANT_WAIT)
        return NEXT(wait4)(pid, status, options, ru);
    return wait_rec(W_WAIT4, pid, status, options, ru, RA());
}

REAL(int, waitid, idtype_t, id_t, siginfo_t *, int);

static SHIM_NOINLINE int waitid_rec(idtype_t idtype, id_t id, siginfo_t *info, int options,
                                    const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_WAITID, ra))
        return NEXT(waitid)(idtype, id, info, options);
    shim_args(3, (int64_t)(uint64_t)idtype, (int64_t)(uint64_t)id, (unsigned)options);
    int r = NEXT(waitid)(idtype, id, info, options);
    shim_end(&c, r, r < 0);
    bool ok = r == 0 && info != NULL;
    shim_fix_waitid(&c, (int64_t)(uint64_t)idtype, (int64_t)(uint64_t)id, (unsigned)options,
                    ok ? info->si_pid : 0, ok ? info->si_code : 0, ok ? info->si_status : 0);
    if (r != 0 && info != NULL)
        c.flags |= POSIXTRACE_CALL_NODATA; /* not read: it may be bad (EFAULT) */
    shim_emit(&c);
    return r;
}

SHIM_API int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_WAITID)))
        return NEXT(waitid)(idtype, id, info, options);
    return waitid_rec(idtype, id, info, options, RA());
}

REAL(int, kill, pid_t, int);
REAL(int, killpg, pid_t, int);
REAL(int, raise, int);

/*
 * A signal that may reach the calling process may end it inside the call
 * (its default action, or a handler that exits or longjmps): such a call is
 * recorded before it is made (NORETURN, ret 0, like exec), and if it
 * returns, a second event of the same type records its result (ret, err,
 * duration). Any other call is recorded once, after it returns.
 * kill's pid reaches the caller when it is its own pid, 0 (its group), -1
 * (POSIX: every process it may signal; Linux spares the caller but not, say,
 * its controller) or -pgrp of its own group; killpg's pgrp when it is 0 or
 * its own group. Signal 0 sends nothing.
 */
static bool hits_self(int pg, pid_t pid, int sig)
{
    if (sig == 0)
        return false;
    if (pg)
        return pid == 0 || pid == getpgrp();
    if (pid == 0 || pid == -1)
        return true;
    return pid > 0 ? pid == getpid() : pid == -getpgrp();
}

/* The shim's own getpid/getpgrp: not recorded as system calls. */
static bool kill_hits_self(int pg, pid_t pid, int sig)
{
    unsigned char was = shim_sud_enter();
    bool r = hits_self(pg, pid, sig);
    shim_sud_restore(was);
    return r;
}

enum sigkind { S_KILL, S_KILLPG, S_RAISE };

static int call_sig(enum sigkind k, pid_t pid, int sig)
{
    switch (k) {
    case S_KILL: return NEXT(kill)(pid, sig);
    case S_KILLPG: return NEXT(killpg)(pid, sig);
    default: return NEXT(raise)(sig);
    }
}

static void sig_fields(struct shim_call *c, enum sigkind k, pid_t pid, int sig)
{
    if (k != S_RAISE)
        c->flags |= POSIXTRACE_CALL_WITH_FN(k == S_KILLPG ? POSIXTRACE_FN_KILLPG
                                                           : POSIXTRACE_FN_KILL);
    if (k != S_RAISE)
        shim_fix_kill(c, k == S_KILLPG ? -pid : pid, sig);
    else
        shim_fix_raise(c, sig);
}

static SHIM_NOINLINE int sig_rec(enum sigkind k, pid_t pid, int sig, bool self, const void *ra)
{
    unsigned id = k == S_RAISE ? POSIXTRACE_EV_RAISE : POSIXTRACE_EV_KILL;
    struct shim_call c;
    if (!shim_begin(&c, id, ra))
        return call_sig(k, pid, sig);
    if (self) { /* the event before, then (if the call returns) the result */
        shim_noreturn(&c);
        sig_fields(&c, k, pid, sig);
        shim_emit(&c);
        uint64_t t0 = c.t0;
        shim_begin(&c, id, ra);
        c.t0 = t0;
    }
    int r = call_sig(k, pid, sig);
    shim_end(&c, r, r != 0);
    sig_fields(&c, k, pid, sig);
    shim_emit(&c);
    return r;
}

#define KILL_UNWANTED likely(!posixtrace_wanted(POSIXTRACE_EV_KILL))

SHIM_API int kill(pid_t pid, int sig)
{
    if (KILL_UNWANTED)
        return NEXT(kill)(pid, sig);
    return sig_rec(S_KILL, pid, sig, kill_hits_self(0, pid, sig), RA());
}

SHIM_API int killpg(pid_t pgrp, int sig)
{
    if (KILL_UNWANTED)
        return NEXT(killpg)(pgrp, sig);
    return sig_rec(S_KILLPG, pgrp, sig, kill_hits_self(1, pgrp, sig), RA());
}

/* raise(sig) signals the calling thread: recorded before unless sig is 0. */
SHIM_API int raise(int sig)
{
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_RAISE)))
        return NEXT(raise)(sig);
    return sig_rec(S_RAISE, 0, sig, sig != 0, RA());
}
