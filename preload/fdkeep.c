/*
 * close_range and closefrom, which close many descriptors at once: the trace
 * system's own descriptor (the inbox, posixtrace_reserved_fd) is left out of
 * the range, so that a program that closes every descriptor before exec
 * (Python's close_fds, daemons) keeps its exec'd image traced. The program
 * sees the call succeed as it would have; only /proc/self/fd still lists the
 * inbox. Calls that close one descriptor (close, dup2, dup3) move the inbox
 * instead (shim_fd_vacate). Not recorded as events (doc/events.md).
 * A raw system call bypasses this: before the process starts a new image
 * (exec: libtrace's posixtrace_before_exec; posix_spawn: fork.c; system and
 * popen: below, since glibc spawns their shell internally, out of the
 * shim's reach) posixtrace_reserved_fd_repair() gives the inbox a new
 * descriptor if its number no longer names it.
 */
#include "shim.h"

#include <limits.h>
#include <stdio.h>
#include <sys/syscall.h>

REAL(int, close_range, unsigned, unsigned, int);
REAL(void, closefrom, int);
REAL(int, close, int);
REAL(int, system, const char *);
REAL(FILE *, popen, const char *, const char *);

/* The reserved descriptor if it lies in [lo, hi], else -1. */
static int reserved_in(unsigned lo, unsigned hi)
{
    int k = posixtrace_reserved_fd();
    return k >= 0 && (unsigned)k >= lo && (unsigned)k <= hi ? k : -1;
}

/* [lo, hi] without k, in two close_range calls: with the system-call mode's
 * syscall:close_range wanted, recorded as the one call the program made
 * (sud.h), the pieces made unrecorded. */
static SHIM_NOINLINE int close_range_around(unsigned lo, unsigned hi, int flags, int k,
                                            const void *ra)
{
    struct shim_call c;
    const struct posixtrace_event_desc *rec = shim_sud_call_begin(&c, SYS_close_range, ra);
    int r = 0;
    if ((unsigned)k > lo)
        r = NEXT(close_range)(lo, (unsigned)k - 1, flags);
    if (r == 0 && (unsigned)k < hi)
        r = NEXT(close_range)((unsigned)k + 1, hi, flags);
    int err = errno;
    if (rec != NULL) {
        const long a[6] = { (long)lo, (long)hi, (long)flags };
        shim_sud_call_end(&c, rec, a, r == 0 ? 0 : -err);
    }
    errno = err;
    return r;
}

SHIM_API int close_range(unsigned lo, unsigned hi, int flags)
{
    int k = reserved_in(lo, hi);
    if (likely(k < 0) || lo > hi)
        return NEXT(close_range)(lo, hi, flags);
    return close_range_around(lo, hi, flags, k, RA());
}

/* glibc's closefrom is close_range(lo, ~0U, 0), one descriptor at a time on
 * a kernel without it */
SHIM_API void closefrom(int lo)
{
    int k = lo < 0 ? -1 : reserved_in((unsigned)lo, UINT_MAX);
    if (likely(k < 0)) {
        NEXT(closefrom)(lo);
        return;
    }
    int saved = errno;
    if (close_range_around((unsigned)lo, UINT_MAX, 0, k, RA()) != 0) {
        for (int fd = lo; fd < k; fd++) /* a kernel without close_range */
            NEXT(close)(fd);
        NEXT(closefrom)(k + 1);
    }
    errno = saved;
}

SHIM_API int system(const char *command)
{
    SHIM_QUIET(posixtrace_reserved_fd_repair());
    return NEXT(system)(command);
}

SHIM_API FILE *popen(const char *command, const char *mode)
{
    SHIM_QUIET(posixtrace_reserved_fd_repair());
    return NEXT(popen)(command, mode);
}
