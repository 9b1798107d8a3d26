/*
 * A lock word in memory that other processes, possibly hostile ones, can
 * write (the names table of a stream: doc/design.md, "Untrusted stream
 * memory").
 *
 * The word is 0 when free, else the thread id of its holder (bit 31: someone
 * waits). Taking it is a CAS 0 -> tid; a waiter sleeps on it with FUTEX_WAIT
 * for at most 50 ms at a time, and after the first sleep checks whether the
 * holder's thread still exists: a holder that died (or a word that names no
 * thread at all) is taken over by CAS. Everything has a deadline: the caller
 * gets ETIMEDOUT, never a hang. Nothing read from the word is ever used as an
 * address: a process scribbling on it can delay or break mutual exclusion in
 * the stream it scribbles on, nothing else (unlike a robust pthread mutex,
 * whose list pointers glibc follows at unlock).
 */
#include "../internal.h"
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOCK_WAITERS 0x80000000u
#define SLOCK_TID     0x3fffffffu
#define SLOCK_TID_MAX (1 << 22) /* PID_MAX_LIMIT */
#define SLOCK_NAP_NS  (50 * 1000 * 1000LL)

static uint32_t self_tid(void)
{
    return (uint32_t)syscall(SYS_gettid) & SLOCK_TID;
}

/* Is the thread that word v names gone (or is v no thread id at all)? */
static bool holder_gone(uint32_t v)
{
    pid_t tid = (pid_t)(v & SLOCK_TID);
    if (tid <= 0 || tid > SLOCK_TID_MAX)
        return true;
    if (kill(tid, 0) != 0 && errno == ESRCH)
        return true;
    char st;
    /* a zombie leader (its main thread exited holding it); unreadable: alive */
    return pt_proc_stat(tid, &st, NULL) == 0 && (st == 'Z' || st == 'X' || st == 'x');
}

/* A relative timeout (pt_futex_wait's is an absolute CLOCK_REALTIME time,
 * which a clock step could stretch past the caller's deadline). */
static void nap(_Atomic uint32_t *w, uint32_t v, int64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL) };
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, v, &ts, NULL, 0);
}

int pt_slock_take(_Atomic uint32_t *w, int timeout_ms)
{
    uint32_t me = self_tid();
    int64_t now = pt_monotonic_ns(), deadline = now + (int64_t)timeout_ms * 1000000LL;
    bool napped = false;
    for (;;) {
        uint32_t v = 0;
        if (atomic_compare_exchange_strong(w, &v, me))
            return 0;
        if (napped && holder_gone(v) && atomic_compare_exchange_strong(w, &v, me))
            return 0; /* its holder died: ours now */
        now = pt_monotonic_ns();
        if (now >= deadline)
            return ETIMEDOUT;
        if (v == 0)
            continue;
        if (!(v & SLOCK_WAITERS) &&
            !atomic_compare_exchange_strong(w, &v, v | SLOCK_WAITERS))
            continue;
        int64_t left = deadline - now;
        nap(w, v | SLOCK_WAITERS, left < SLOCK_NAP_NS ? left : SLOCK_NAP_NS);
        napped = true;
    }
}

/* Let go of it, if it is still ours (another process may have written the
 * word meanwhile: then it is theirs to sort out). */
void pt_slock_drop(_Atomic uint32_t *w)
{
    uint32_t me = self_tid();
    uint32_t v = atomic_load(w);
    while ((v & SLOCK_TID) == me) {
        if (atomic_compare_exchange_weak(w, &v, 0)) {
            if (v & SLOCK_WAITERS)
                pt_futex_wake(w, INT32_MAX);
            return;
        }
    }
}
