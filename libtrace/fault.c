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
 * handler after creating such a stream replaces this one (doc/design.md,
 * "Untrusted stream memory").
 */
#include "internal.h"
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#define PT_GUARDS 64u

static struct {
    _Atomic uintptr_t lo, hi;  /* lo 0: a free entry */
    _Atomic uint32_t lost;     /* 1 being replaced, 2 replaced */
} guards[PT_GUARDS];
static struct sigaction prev_bus;
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static int installed;

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
    if (prev_bus.sa_flags & SA_SIGINFO) {
        prev_bus.sa_sigaction(sig, si, uc);
        return;
    }
    if (prev_bus.sa_handler != SIG_DFL && prev_bus.sa_handler != SIG_IGN) {
        prev_bus.sa_handler(sig);
        return;
    }
    sigaction(SIGBUS, &prev_bus, NULL);
    if (si->si_code <= 0 && prev_bus.sa_handler == SIG_DFL)
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
        if (sigaction(SIGBUS, &sa, &prev_bus) == 0)
            installed = 1;
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
