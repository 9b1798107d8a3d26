/*
 * Children and threads made by a raw clone system call, which runs no
 * pthread_atfork handler (doc/design.md, "Raw clone children").
 *
 * A child with memory of its own (no CLONE_VM) starts with copies of
 * everything the recording path reads: the cached pid, the thread's
 * tls_index, the registry entry and its slots, and the shared mappings of
 * the streams and of the inbox. The registry (pt_threads) is therefore kept
 * in a private anonymous mapping marked MADV_WIPEONFORK: in such a child it
 * reads as zeros, so the fast path's own loads (the entry's slot and epoch)
 * send its first event to the general path, where the slot acquisition
 * (and the doorbell's answer) see the registry's live mark gone and make the
 * child a process of its own, as the fork handler would have. It costs the
 * recording path nothing: the registry stays at its link-time address.
 *
 * A raw thread (CLONE_VM without CLONE_SETTLS) shares its parent thread's
 * TLS, hence its registry entry, but not its stack. Each entry keeps the
 * range of stack addresses its claiming thread has recorded from
 * (pt_thread_stack_init), and every event first checks that the stack
 * pointer lies in it (pt_on_own_stack: a subtraction and a compare against
 * the entry's first cache line). Outside it, before anything of the entry
 * is touched, pt_thread_resolve asks the kernel who is recording: the
 * claiming thread (on a deeper stack, a signal stack, a coroutine's) widens
 * the range and goes on; any other thread records with an entry of its own,
 * found by its thread id in a small table (one gettid() per event for such
 * a thread), with its own slots, and with its own pid if it is a process of
 * its own sharing our memory (CLONE_VM without CLONE_THREAD, e.g. with
 * CLONE_VFORK). A range that would grow past PT_STACK_SPAN_MAX (stacks far
 * apart: a signal stack on the heap) is no longer checked; then only the
 * older backstop remains: at every PT_TID_CHECK_EVERY-th chunk switch of an
 * entry the switching thread compares its tid with the one that claimed
 * the entry; a foreign one counts the chunk's events lost (EBADMSG: they may
 * be damaged) and marks the entry shared: from then on its events take the
 * general path, where the claiming thread moves to a new entry and any
 * other counts its events lost.
 */
#include "../internal.h"
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PT_TID_CHECK_EVERY 8u /* a gettid() costs about 100 ns; a chunk ~80 events */
#define PT_STACK_BELOW   ((uintptr_t)256 << 10) /* first range: below the claim's frame */
#define PT_STACK_ABOVE   ((uintptr_t)64 << 10)  /* and above it */
#define PT_STACK_MARGIN  ((uintptr_t)64 << 10)  /* each widening adds this beyond sp */
#define PT_STACK_SPAN_MAX ((uintptr_t)64 << 20) /* wider: not checked any more */
#define PT_FOREIGN_MAX   16u                    /* raw threads with an entry at once */

int pt_clone_lost;

/* At start-up, before any thread claims an entry. Without MADV_WIPEONFORK
 * (Linux < 4.14) the mark survives a raw clone: such a child is not told
 * apart (the limit stays as it was). */
void pt_registry_init(void)
{
    void *p = mmap(pt_threads, sizeof pt_threads, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != MAP_FAILED)
        madvise(p, sizeof pt_threads, MADV_WIPEONFORK);
    atomic_store(&pt_threads[PT_MAX_THREADS - 1].used, 1); /* the live mark */
}

/* The locks a fork's handlers hold across it, taken without waiting: the
 * child has one thread, so a lock it finds held was held by a thread of the
 * parent at the clone, which does not exist here, in the middle of changing
 * what it guards. */
static bool take_fork_locks(void)
{
    bool names = pt_names_lock_try();
    bool att = pt_att_lock_try();
    bool handles = pt_handles_lock_try();
    bool want = pt_want_lock_try();
    if (names && att && handles && want)
        return true;
    if (handles)
        pt_handles_atfork_child(); /* the parent's identifiers go; drops it */
    if (att)
        pt_att_lock_drop();
    if (names)
        pt_names_unlock_local();
    return false;
}

/* Adoption is impossible: the child records nothing and counts every event
 * of an inherited stream as lost (EAGAIN), since a stream in the middle of
 * being attached or detached cannot be trusted. It keeps no inbox: no
 * controller can reach it. */
static void adopt_lost(void)
{
    pt_inbox_fork_private();
    pt_inbox_forget();
    pt_pid = (uint32_t)syscall(SYS_getpid);
    pt_registry_child();
    pt_clone_lost = 1;
}

/* A raw clone child's first slow path: become a process of our own, as the
 * fork handlers would have made us (process.c: pt_process_child), before
 * anything is written into the parent's inbox or slots. A signal handler
 * that interrupts this and records counts its event lost (busy). */
void pt_clone_adopt(void)
{
    static int busy;
    if (pt_registry_live() || busy)
        return;
    busy = 1;
    int saved = errno;
    if (take_fork_locks())
        pt_process_child();
    else
        adopt_lost();
    errno = saved;
    busy = 0;
}

/* At a chunk switch of t's slot: is the thread switching not the one that
 * claimed t (a raw thread on the same TLS)? One gettid() every few
 * switches of the entry. */
bool pt_thread_foreign(struct pt_thread *t)
{
    if (++t->switches % PT_TID_CHECK_EVERY != 0)
        return false;
    return (uint32_t)syscall(SYS_gettid) != t->tid;
}

/* A raw thread was caught on t's slot sl in stream s: both threads wrote
 * that chunk at once, so its events count as lost, with EBADMSG (its
 * records may be damaged: the reader reports what it cannot parse the same
 * way). No slot of t is used again: the slots stay as they are, owned, since
 * the other thread may be writing (the reaper frees them with the process). */
void pt_thread_shared_seen(struct pt_shm *s, uint32_t nrec, struct pt_thread *t)
{
    pt_note_loss(s, nrec != 0 ? nrec : 1, EBADMSG);
    atomic_store(&t->shared, 1);
    memset(t->slot, 0, sizeof t->slot);
}

/* ---- raw threads: told apart by their stack ---- */

void pt_thread_stack_init(struct pt_thread *t)
{
    uintptr_t sp = pt_stack_pointer();
    t->stk_lo = sp > PT_STACK_BELOW ? sp - PT_STACK_BELOW : 0;
    t->stk_len = sp - t->stk_lo + PT_STACK_ABOVE;
}

/* The claiming thread of t records at sp, outside its range: take sp in
 * (with a margin), or stop checking when the range would get too wide. */
static void stack_widen(struct pt_thread *t, uintptr_t sp)
{
    uintptr_t lo = t->stk_lo, hi = lo + t->stk_len, nlo = lo, nhi = hi;
    if (sp < lo)
        nlo = sp > PT_STACK_MARGIN ? sp - PT_STACK_MARGIN : 0;
    if (sp >= hi)
        nhi = sp + PT_STACK_MARGIN;
    if (nhi - nlo > PT_STACK_SPAN_MAX) {
        nlo = 0;
        nhi = UINTPTR_MAX; /* every stack pointer passes */
    }
    t->stk_lo = nlo;
    t->stk_len = nhi - nlo;
}

/* Raw threads with an entry: (thread id, entry index). tid 0: free;
 * UINT32_MAX: being set up or taken back. Private to the process (a fork
 * child has none: pt_foreign_clear). */
static struct {
    _Atomic uint32_t tid;
    uint32_t idx;
} foreign[PT_FOREIGN_MAX];

void pt_foreign_clear(void)
{
    for (uint32_t i = 0; i < PT_FOREIGN_MAX; i++)
        atomic_store(&foreign[i].tid, 0);
}

/* Take back the entries of raw threads that are gone (no exit hook runs for
 * them): their slots become orphans, as a thread's do at its exit. */
static void foreign_reap(void)
{
    pid_t pid = (pid_t)syscall(SYS_getpid);
    for (uint32_t i = 0; i < PT_FOREIGN_MAX; i++) {
        uint32_t tid = atomic_load(&foreign[i].tid);
        if (tid == 0 || tid == UINT32_MAX || syscall(SYS_tgkill, pid, tid, 0) == 0 ||
            errno != ESRCH || !atomic_compare_exchange_strong(&foreign[i].tid, &tid, UINT32_MAX))
            continue;
        struct pt_thread *t = &pt_threads[foreign[i].idx];
        atomic_store(&t->nest, 0); /* it may have died inside an event */
        pt_thread_release_slots(t);
        atomic_store_explicit(&t->used, 0, memory_order_release);
        atomic_store(&foreign[i].tid, 0);
    }
}

/* The entry of raw thread tid: found, or claimed; NULL if none is free. */
static struct pt_thread *foreign_entry(uint32_t tid)
{
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < PT_FOREIGN_MAX; i++)
            if (atomic_load_explicit(&foreign[i].tid, memory_order_acquire) == tid)
                return &pt_threads[foreign[i].idx];
        for (uint32_t i = 0; i < PT_FOREIGN_MAX; i++) {
            uint32_t zero = 0;
            if (!atomic_compare_exchange_strong(&foreign[i].tid, &zero, UINT32_MAX))
                continue;
            uint32_t k = pt_thread_claim_foreign(tid, (uint32_t)syscall(SYS_getpid));
            if (k == PT_MAX_THREADS) {
                atomic_store(&foreign[i].tid, 0);
                return NULL;
            }
            foreign[i].idx = k;
            atomic_store_explicit(&foreign[i].tid, tid, memory_order_release);
            return &pt_threads[k];
        }
        foreign_reap(); /* full: some may be gone */
    }
    return NULL;
}

struct pt_thread *pt_thread_resolve(struct pt_thread *t)
{
    int saved = errno;
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    struct pt_thread *r = t;
    if (tid == t->tid && !t->exact)
        stack_widen(t, pt_stack_pointer());
    else
        r = foreign_entry(tid);
    errno = saved;
    return r;
}

/* ---- glibc's clone(): a thread about to share this one's TLS ----
 * A raw thread whose stack lies inside the range its parent thread records
 * from (a buffer on that stack) cannot be told apart by its stack. When it
 * is made through glibc's clone() (the library interposes it), the parent
 * thread's entry is switched to exact mode before the clone: its range
 * empties, so every event of either thread asks the kernel who it is
 * (pt_thread_resolve: one gettid(), about 100 ns here) and the raw thread
 * gets an entry of its own from its first event, wherever its stack is.
 * The parent thread stays in that mode for its life. A clone made by the
 * system call itself (not through glibc) is not seen here. */
typedef int (*clone_fn)(int (*)(void *), void *, int, void *, ...);
static void *_Atomic real_clone;

static void thread_exact(void)
{
    struct pt_thread *t = pt_thread_self();
    if (t == NULL || t == &pt_threads[PT_MAX_THREADS - 1])
        return;
    t->exact = 1;
    t->stk_lo = 0;
    t->stk_len = 0;
}

PT_API int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    va_list ap;
    va_start(ap, arg); /* glibc's clone reads them whatever the flags */
    pid_t *ptid = va_arg(ap, pid_t *);
    void *tls = va_arg(ap, void *);
    pid_t *ctid = va_arg(ap, pid_t *);
    va_end(ap);
    if ((flags & CLONE_VM) && !(flags & CLONE_SETTLS))
        thread_exact();
    clone_fn next = (clone_fn)pt_next_cached(&real_clone, "clone");
    if (next == NULL) { /* a C library without clone() */
        errno = ENOSYS;
        return -1;
    }
    return next(fn, stack, flags, arg, ptid, tls, ctid);
}
