/*
 * Waiting for children (wait, waitpid, wait3, wait4 -> one "wait" event;
 * waitid) and sending signals (kill; killpg as kill of -pgrp).
 * The wait family is given a status word of the shim's own when the caller
 * passes NULL, so that the status is always recorded; else the caller's, so
 * that a bad one fails with EFAULT as without the shim (the kernel writes it
 * after reaping the child); it is read after a call that reaped one.
 */
#include "shim.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

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
    int st = 0;
    int *sp = status != NULL ? status : &st;
    pid_t r = call_wait(k, pid, sp, options, ru);
    shim_end(&c, r, r < 0);
    shim_fix(&c, (uint64_t)(int64_t)pid);
    shim_fix(&c, (uint64_t)(unsigned)options);
    shim_fix(&c, (uint64_t)(int64_t)(r > 0 ? *sp : 0));
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
    int r = NEXT(waitid)(idtype, id, info, options);
    shim_end(&c, r, r < 0);
    shim_fix(&c, (uint64_t)idtype);
    shim_fix(&c, (uint64_t)id);
    shim_fix(&c, (uint64_t)(unsigned)options);
    bool ok = r == 0 && info != NULL;
    shim_fix(&c, (uint64_t)(int64_t)(ok ? info->si_pid : 0));
    shim_fix(&c, (uint64_t)(int64_t)(ok ? info->si_code : 0));
    shim_fix(&c, (uint64_t)(int64_t)(ok ? info->si_status : 0));
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

static SHIM_NOINLINE int kill_rec(int pg, pid_t pid, int sig, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_KILL, ra))
        return pg ? NEXT(killpg)(pid, sig) : NEXT(kill)(pid, sig);
    int r = pg ? NEXT(killpg)(pid, sig) : NEXT(kill)(pid, sig);
    shim_end(&c, r, r < 0);
    shim_fix(&c, (uint64_t)(int64_t)(pg ? -pid : pid));
    shim_fix(&c, (uint64_t)(int64_t)sig);
    shim_emit(&c);
    return r;
}

SHIM_API int kill(pid_t pid, int sig)
{
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_KILL)))
        return NEXT(kill)(pid, sig);
    return kill_rec(0, pid, sig, RA());
}

SHIM_API int killpg(pid_t pgrp, int sig)
{
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_KILL)))
        return NEXT(killpg)(pgrp, sig);
    return kill_rec(1, pgrp, sig, RA());
}
