/*
 * Mappings another process can shrink under the controller.
 *
 * A stream for a process of another user is a /dev/shm object that the
 * target owns (it must open it for writing; tmpfs objects cannot be
 * sealed), so the target can ftruncate it, and every later access of the
 * controller to the vanished pages would be SIGBUS. The controller's own
 * first page of the header is private (pt_shm_privatize, before the target
 * can open the object) and never faults. For the rest, a SIGBUS handler,
 * installed with the first such stream, recognizes a fault inside one of
 * these mappings, replaces the whole shared part by private zeros (the
 * stream is lost to this process: what the target wrote there is gone, and
 * nothing the target writes reaches it any more), marks it so that its
 * readers report POSIX_TRACE_ERROR (EIO) and an overrun, and returns: the
 * faulting access runs again and reads zeros. No jump, no per-thread state:
 * whichever thread of the controller faulted, it goes on.
 *
 * A fault anywhere else, and a SIGBUS sent by a process, go to the action
 * that was installed before (the program's handler, or the default: the
 * process dies as it would have). A program that installs its own SIGBUS
 * action later (sigaction, signal, bsd_signal: the library interposes them)
 * does not replace this handler: while it is installed, the program's
 * SIGBUS action is kept as the one chained to, and is what the program
 * reads back; other signals, and SIGBUS before any such stream, go straight
 * to the C library (doc/design.md, "Untrusted stream memory").
 */
#include "../internal.h"
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

int __sigaction(int sig, const struct sigaction *act, struct sigaction *old); /* glibc's */

#define PT_GUARDS 64u

static struct {
    _Atomic uintptr_t lo, hi;  /* lo 0: a free entry */
    _Atomic uint32_t lost;     /* 1 being replaced, 2 replaced */
} guards[PT_GUARDS];
static struct sigaction prev_bus; /* the program's action: chained to */
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int installed;

/* The stream at lo (size hi - lo) is gone from under us: private zeros, made
 * to read as an empty stream that lost its events. */
static void replace(uintptr_t lo, uintptr_t hi)
{
    struct pt_shm *s = (struct pt_shm *)lo;
    void *p = mmap((void *)(lo + PT_PAGE0), hi - lo - PT_PAGE0, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p == MAP_FAILED)
        return;
    for (uint32_t i = 0; i < PT_NSLOTS; i++)
        atomic_store(&pt_slots(s)[i].rhead, PT_NONE);
    pt_pool_init(s);
    atomic_store(&s->error_pending, (uint32_t)EIO);
    atomic_store(&s->overrun, 1);
}

/* The action the program had: run it, or restore it (a fault then happens
 * again and kills as it would have; a sent signal is raised again). */
static void chain(int sig, siginfo_t *si, void *uc)
{
    struct sigaction prev = prev_bus; /* the program may change it meanwhile */
    if (prev.sa_flags & SA_SIGINFO) {
        prev.sa_sigaction(sig, si, uc);
        return;
    }
    if (prev.sa_handler == SIG_IGN)
        return;
    if (prev.sa_handler != SIG_DFL) {
        prev.sa_handler(sig);
        return;
    }
    atomic_store(&installed, 0); /* the default action, for good: the process dies */
    __sigaction(SIGBUS, &prev, NULL);
    if (si->si_code <= 0)
        raise(SIGBUS);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    for (uint32_t g = 0; si->si_code > 0 && g < PT_GUARDS; g++) {
        uintptr_t lo = atomic_load(&guards[g].lo), hi = atomic_load(&guards[g].hi);
        if (lo == 0 || a < lo + PT_PAGE0 || a >= hi)
            continue;
        uint32_t zero = 0;
        if (atomic_compare_exchange_strong(&guards[g].lost, &zero, 1)) {
            replace(lo, hi);
            atomic_store(&guards[g].lost, 2);
        }
        while (atomic_load(&guards[g].lost) != 2) /* another thread is replacing it */
            ;
        return;
    }
    chain(sig, si, uc);
}

/* Stream memory at p (size bytes) that another process can shrink. */
int pt_fault_guard_add(void *p, size_t size)
{
    pthread_mutex_lock(&guard_lock);
    int rc = EAGAIN;
    if (!installed) {
        struct sigaction sa = { 0 };
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        if (__sigaction(SIGBUS, &sa, &prev_bus) == 0)
            atomic_store(&installed, 1);
    }
    for (uint32_t g = 0; installed && g < PT_GUARDS && rc != 0; g++) {
        if (atomic_load(&guards[g].lo) != 0)
            continue;
        atomic_store(&guards[g].lost, 0);
        atomic_store(&guards[g].hi, (uintptr_t)p + size);
        atomic_store(&guards[g].lo, (uintptr_t)p);
        rc = 0;
    }
    pthread_mutex_unlock(&guard_lock);
    return rc;
}

/* Before p is unmapped. */
void pt_fault_guard_remove(void *p)
{
    for (uint32_t g = 0; g < PT_GUARDS; g++) { /* no lock: fork children come here */
        uintptr_t lo = (uintptr_t)p;
        atomic_compare_exchange_strong(&guards[g].lo, &lo, 0);
    }
}

/* ---- the program's SIGBUS action while ours is installed ---- */

/* sigaction(2) as the program sees it: for SIGBUS, once the handler above
 * is installed, the program's action is kept (and chained to) instead of
 * replacing it. Async-signal-safe, like the call it stands for. */
PT_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig != SIGBUS || !atomic_load(&installed))
        return __sigaction(sig, act, old);
    struct sigaction cur = prev_bus;
    if (act != NULL)
        prev_bus = *act;
    if (old != NULL)
        *old = cur;
    return 0;
}

/* signal() and bsd_signal(): glibc's own call its internal sigaction, which
 * the one above does not see. For SIGBUS while the handler is installed:
 * the BSD semantics glibc gives them (SA_RESTART, the signal blocked in its
 * handler) through the sigaction above; anything else: glibc's own (which
 * also honours siginterrupt()), found at the first call. */
typedef sighandler_t (*signal_fn)(int, sighandler_t);
static void *_Atomic real_signal, *_Atomic real_bsd_signal;

/* glibc's function at *slot; SIG_ERR with ENOSYS from a C library without it */
static sighandler_t next_signal(void *_Atomic *slot, const char *name, int sig, sighandler_t h)
{
    signal_fn f = (signal_fn)pt_next_cached(slot, name);
    if (f == NULL) {
        errno = ENOSYS;
        return SIG_ERR;
    }
    return f(sig, h);
}

static sighandler_t sigbus_bsd(sighandler_t h)
{
    struct sigaction act = { 0 }, old;
    act.sa_handler = h;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, SIGBUS);
    act.sa_flags = SA_RESTART;
    if (h == SIG_ERR || sigaction(SIGBUS, &act, &old) != 0) {
        errno = EINVAL;
        return SIG_ERR;
    }
    return old.sa_handler;
}

PT_API sighandler_t signal(int sig, sighandler_t h)
{
    if (sig == SIGBUS && atomic_load(&installed))
        return sigbus_bsd(h);
    return next_signal(&real_signal, "signal", sig, h);
}

PT_API sighandler_t bsd_signal(int sig, sighandler_t h)
{
    if (sig == SIGBUS && atomic_load(&installed))
        return sigbus_bsd(h);
    return next_signal(&real_bsd_signal, "bsd_signal", sig, h);
}
