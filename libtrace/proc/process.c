/*
 * This process as a traced process: its cached pid, the streams it records
 * into (attachments), and the registry of recording threads.
 *
 * Removing an attachment must not unmap memory a writer is still using. A
 * writer marks itself busy (pt_thread.nest) before it loads an attachment and
 * clears the mark when done; the remover clears the attachment, runs
 * membarrier(PRIVATE_EXPEDITED) so that every thread's mark and load are
 * ordered against that store, then waits for the busy marks to drop: the
 * writers pay two plain stores, the rare remover pays the fence.
 */
#include "../internal.h"
#include <linux/membarrier.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct pt_attach pt_att[PT_MAX_ATTACH];
_Atomic uint64_t pt_att_mask;
struct pt_thread pt_threads[PT_MAX_THREADS] __attribute__((aligned(4096)));
_Static_assert(sizeof pt_threads % 4096 == 0, "the registry is whole pages (clone.c)");
uint32_t pt_pid;

/* pt_threads index + 1; 0 = none. initial-exec: 4 bytes of static TLS, no
 * __tls_get_addr call on the recording path. */
__thread uint32_t pt_tls_index __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
pthread_mutex_t pt_att_lock = PTHREAD_MUTEX_INITIALIZER;
/* Locks of the configuration (names, attachments) this thread holds: a
 * signal handler recording meanwhile must not wait for them (inbox.c). */
__thread uint32_t pt_tls_cfg __attribute__((tls_model("initial-exec")));

void pt_att_lock_take(void)
{
    pthread_mutex_lock(&pt_att_lock);
    pt_tls_cfg++;
}

void pt_att_lock_drop(void)
{
    pt_tls_cfg--;
    pthread_mutex_unlock(&pt_att_lock);
}

bool pt_att_lock_try(void)
{
    if (!pt_mutex_take_or_reset(&pt_att_lock))
        return false;
    pt_tls_cfg++;
    return true;
}
static int have_membarrier;
static _Atomic uint32_t claim_hint;

void pt_handles_atfork_prepare(void);
void pt_handles_atfork_parent(void);

static void thread_exit(void *unused)
{
    (void)unused;
    uint32_t i = pt_tls_index;
    if (i == 0)
        return;
    struct pt_thread *t = &pt_threads[i - 1];
    pt_thread_release_slots(t);
    pt_inflight_clear(i - 1);
    pt_tls_index = 0;
    atomic_store_explicit(&t->used, 0, memory_order_release);
}

/* Take a free registry entry, looking from `start` on (the last entry is
 * the shared fallback: record.c, enter()): its index, or PT_MAX_THREADS. */
static uint32_t entry_take(uint32_t start)
{
    for (uint32_t n = 0; n < PT_MAX_THREADS - 1; n++) {
        uint32_t k = (start + n) % (PT_MAX_THREADS - 1), zero = 0;
        struct pt_thread *t = &pt_threads[k];
        if (atomic_load_explicit(&t->used, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&t->used, &zero, 1))
            return k;
    }
    return PT_MAX_THREADS;
}

/* A taken entry, for thread id tid: no slots, its stack range around ours. */
static void entry_init(struct pt_thread *t, uint32_t tid)
{
    memset(t->epoch, 0, sizeof t->epoch);
    memset(t->slot, 0, sizeof t->slot);
    t->tid = tid;
    t->switches = 0;
    atomic_store_explicit(&t->shared, 0, memory_order_relaxed);
    t->own_pid = 0;
    t->exact = 0;
    pt_thread_stack_init(t);
}

struct pt_thread *pt_thread_self(void)
{
    uint32_t i = pt_tls_index;
    if (likely(i != 0))
        return &pt_threads[i - 1];
    uint32_t k = entry_take(atomic_fetch_add_explicit(&claim_hint, 1, memory_order_relaxed));
    if (k == PT_MAX_THREADS)
        return NULL;
    struct pt_thread *t = &pt_threads[k];
    if (pt_tls_index != 0) { /* a signal handler claimed one meanwhile */
        atomic_store(&t->used, 0);
        return &pt_threads[pt_tls_index - 1];
    }
    entry_init(t, (uint32_t)syscall(SYS_gettid));
    pt_tls_index = k + 1;
    pthread_setspecific(exit_key, (void *)1);
    return t;
}

/* An entry for a thread that has no TLS of its own (a raw thread: clone.c),
 * claimed for thread id tid of process pid: its index, or PT_MAX_THREADS. */
uint32_t pt_thread_claim_foreign(uint32_t tid, uint32_t pid)
{
    uint32_t k = entry_take(0);
    if (k == PT_MAX_THREADS)
        return k;
    struct pt_thread *t = &pt_threads[k];
    entry_init(t, tid);
    t->stk_lo = 0;
    t->stk_len = 0; /* reached only through the foreign table, never by its stack */
    t->exact = 1;
    t->own_pid = pid == pt_pid ? 0 : pid;
    if (t->own_pid != 0 && pt_proc_stat((pid_t)pid, NULL, &t->own_start) != 0)
        t->own_start = 0;
    return k;
}

/* This thread's entry is shared with a raw thread (clone.c): leave it to
 * that thread (its slots stay as they are: someone may be writing), the
 * next event claims a new one. */
void pt_thread_forget(void)
{
    pt_tls_index = 0;
}

/*
 * vfork children. A vfork child runs on its parent's thread, with the
 * parent's memory and TLS, until it execs or exits: recording with the
 * parent's registry entry would write into the parent's slots under the
 * parent's pid. posixtrace_vfork_child() (the shim calls it in the child,
 * right after vfork returned 0) sets the parent thread's entry aside: the
 * child's first event claims an entry of its own, whose slots it acquires
 * with its own pid (pt_writer_id). posixtrace_vfork_parent() (in the
 * parent, when vfork returns) makes the child's slots orphans (the reader
 * drains them), frees its entry and puts the parent's back. Nested vforks
 * (a vfork child that vforks) nest up to PT_VFORK_MAX; deeper ones record
 * nothing (the shared fallback entry counts their events lost).
 */
#define PT_VFORK_MAX 4u
static __thread struct {
    uint32_t depth;
    uint32_t saved[PT_VFORK_MAX]; /* the parent's pt_tls_index */
    uint32_t pid[PT_VFORK_MAX];   /* the child's */
    uint64_t start[PT_VFORK_MAX]; /* its start time, read at its first slot; 0 = not yet */
} tls_vfork __attribute__((tls_model("initial-exec")));

PT_API void posixtrace_vfork_child(void)
{
    uint32_t d = tls_vfork.depth;
    if (d < PT_VFORK_MAX) {
        tls_vfork.saved[d] = pt_tls_index;
        tls_vfork.pid[d] = (uint32_t)syscall(SYS_getpid);
        tls_vfork.start[d] = 0;
    }
    tls_vfork.depth = d + 1;
    pt_tls_index = d < PT_VFORK_MAX ? 0 : PT_MAX_THREADS; /* deeper: the fallback entry */
}

PT_API void posixtrace_vfork_parent(void)
{
    uint32_t d = tls_vfork.depth;
    if (d == 0)
        return;
    tls_vfork.depth = --d;
    if (d >= PT_VFORK_MAX)
        return;
    uint32_t i = pt_tls_index;
    if (i != 0 && i != PT_MAX_THREADS) {
        struct pt_thread *t = &pt_threads[i - 1];
        atomic_store(&t->nest, 0); /* the child may have died inside an event */
        pt_thread_release_slots(t);
        atomic_store_explicit(&t->used, 0, memory_order_release);
    }
    pt_tls_index = tls_vfork.saved[d];
}

/* The pid and start time a new slot of entry t carries: the process's, a
 * raw CLONE_VM child's (clone.c), or a vfork child's own (its start time
 * read once, on this slow path). */
uint32_t pt_writer_id(const struct pt_thread *t, uint64_t *start)
{
    if (unlikely(t->own_pid != 0)) {
        *start = t->own_start;
        return t->own_pid;
    }
    uint32_t d = tls_vfork.depth;
    if (likely(d == 0) || d > PT_VFORK_MAX) {
        *start = pt_start;
        return pt_pid;
    }
    if (tls_vfork.start[d - 1] == 0 &&
        pt_proc_stat((pid_t)tls_vfork.pid[d - 1], NULL, &tls_vfork.start[d - 1]) != 0)
        tls_vfork.start[d - 1] = 0;
    *start = tls_vfork.start[d - 1];
    return tls_vfork.pid[d - 1];
}

/* A vfork child records only into the streams a forked child would
 * inherit (posix_trace_attr_getinherited(3p)). */
bool pt_writer_takes(const struct pt_thread *t, const struct pt_shm *s)
{
    bool child = unlikely(tls_vfork.depth != 0) || unlikely(t->own_pid != 0);
    return !child || s->inheritance == POSIX_TRACE_INHERITED;
}

/* Recompute the ON bits of pt_want from the attachments' running flags and
 * filter copies, a word (8 types) at a time: bits that go on are set before
 * bits that go off are cleared, so a type some stream keeps taking never
 * reads 0, and the doorbell bits are left alone. Racing updates are serialized. */
static pthread_mutex_t want_lock = PTHREAD_MUTEX_INITIALIZER;

bool pt_want_lock_try(void)
{
    if (!pt_mutex_take_or_reset(&want_lock))
        return false;
    pthread_mutex_unlock(&want_lock);
    return true;
}

/* 8 bits -> 8 bytes, each 0 or PT_WANT_ON (bit k -> byte k): the byte in
 * every byte, byte k keeping bit k, then each non-zero byte made 1 (adding
 * 0x7f to its low 7 bits carries into its bit 7, never into the next byte). */
static uint64_t spread_bits(uint32_t bits)
{
    const uint64_t lo7 = UINT64_C(0x7f7f7f7f7f7f7f7f);
    uint64_t x = (uint64_t)(bits & 0xff) * UINT64_C(0x0101010101010101) &
                 UINT64_C(0x8040201008040201);
    uint64_t y = ((x & lo7) + lo7) | x;
    return (y >> 7) & PT_WANT_ONS;
}
_Static_assert(PT_WANT_ON == 1, "spread_bits makes bytes of 0 and 1");

_Static_assert(PT_WANT_BYTES == PT_ID_SPACE, "a want byte per id, a filter bit per id");

/* The want table from the running attachments' filters: a filter word (64
 * ids) at a time, the attachments looked at once (per id and attachment,
 * it took 158 000 instructions at every process start). The bells are kept. */
void pt_want_update(void)
{
    pthread_mutex_lock(&want_lock);
    uint32_t run[PT_MAX_ATTACH], n = 0;
    for (uint32_t i = 0; i < PT_MAX_ATTACH; i++)
        if (atomic_load(&pt_att[i].shm) != NULL && atomic_load(&pt_att[i].running))
            run[n++] = i;
    for (uint32_t j = 0; j < PT_ID_SPACE / 64; j++) {
        uint64_t take = 0; /* a bit per id some running stream takes */
        for (uint32_t a = 0; a < n; a++)
            take |= ~atomic_load(&pt_att[run[a]].filter[j]);
        for (uint32_t b = 0; b < 8; b++) {
            uint64_t on = spread_bits((uint32_t)(take >> (8 * b)) & 0xff);
            uint64_t *w = &PT_INBOX->want.w[j * 8 + b];
            if ((__atomic_load_n(w, __ATOMIC_RELAXED) & PT_WANT_ONS) == on)
                continue; /* only bells change it elsewhere: nothing to do */
            __atomic_fetch_or(w, on, __ATOMIC_RELAXED);
            __atomic_fetch_and(w, on | ~PT_WANT_ONS, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&want_lock);
}

void pt_thread_release_slots(struct pt_thread *t)
{
    atomic_fetch_add_explicit(&t->nest, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    for (uint32_t a = 0; a < PT_MAX_ATTACH; a++) {
        struct pt_shm *s = atomic_load_explicit(&pt_att[a].shm, memory_order_acquire);
        if (s == NULL || t->epoch[a] != pt_att[a].epoch)
            continue;
        for (uint32_t l = 0; l < PT_NEST; l++) {
            if (t->slot[a][l] == 0)
                continue;
            struct pt_slot *sl = &pt_slots(s)[pt_slot_of(t->slot[a][l])];
            atomic_store_explicit(&sl->state, PT_SLOT_ORPHAN, memory_order_release);
            t->slot[a][l] = 0;
        }
    }
    atomic_signal_fence(memory_order_seq_cst);
    atomic_fetch_sub_explicit(&t->nest, 1, memory_order_relaxed);
}

/* Attachment idx (free) now stands for stream shm. pt_att_lock held. */
void pt_attach_set(int idx, struct pt_shm *shm, size_t size, uint64_t key, int own)
{
    struct pt_attach *a = &pt_att[idx];
    a->epoch++;
    a->map_size = size;
    a->key = key;
    a->own = own;
    a->member = -1;
    a->alive = NULL;
    atomic_store(&a->running, 0);
    for (unsigned w = 0; w < PT_ID_SPACE / 64; w++)
        atomic_store(&a->filter[w], 0);
    pt_call_clock_adopt(shm->clock_mode, shm->ticks_per_ns);
    atomic_store_explicit(&a->shm, shm, memory_order_release);
    atomic_fetch_or(&pt_att_mask, UINT64_C(1) << idx);
}

/* A thread still inside the recording path after this long is not coming
 * out (a raw thread that shared its entry left its nesting count wrong, a
 * thread gone in the middle: clone.c): its stream's memory is not unmapped. */
#define PT_GRACE_MAX_NS 2000000000LL

/* Whether thread entry t is out of the recording path, or has finished the
 * call it was in (its count of completed calls moved from `calls`). */
static bool thread_quiet(struct pt_thread *t, uint32_t calls)
{
    return atomic_load_explicit(&t->nest, memory_order_acquire) == 0 ||
           atomic_load_explicit(&t->calls, memory_order_acquire) != calls;
}

/* Wait until no other thread is inside the recording path: true, or false
 * after PT_GRACE_MAX_NS in all with one still inside. */
static bool grace_period(void)
{
    if (have_membarrier)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    else
        atomic_thread_fence(memory_order_seq_cst);
    uint32_t self = pt_tls_index;
    int64_t deadline = 0;
    for (uint32_t k = 0; k < PT_MAX_THREADS; k++) {
        struct pt_thread *t = &pt_threads[k];
        if (k + 1 == self || atomic_load(&t->used) == 0)
            continue;
        uint32_t calls = atomic_load_explicit(&t->calls, memory_order_acquire);
        for (unsigned spin = 0; !thread_quiet(t, calls); spin++) {
            if (spin < 1000)
                continue;
            sched_yield();
            if (spin % 1024 != 0)
                continue;
            int64_t now = pt_monotonic_ns();
            if (deadline == 0)
                deadline = now + PT_GRACE_MAX_NS;
            else if (now > deadline)
                return false;
        }
    }
    return true;
}

/* Every recording call of this process that began before now has ended. */
void pt_quiesce_writers(void)
{
    (void)grace_period();
}

bool pt_attach_remove_locked(int idx)
{
    atomic_fetch_and(&pt_att_mask, ~(UINT64_C(1) << idx));
    atomic_store(&pt_att[idx].running, 0);
    atomic_store_explicit(&pt_att[idx].shm, NULL, memory_order_release);
    pt_want_update();
    return grace_period();
}

/* A stream this process created goes: its attachment and inbox entry. */
bool pt_attach_remove(int idx)
{
    pt_att_lock_take();
    bool quiet = pt_attach_remove_locked(idx);
    pt_inbox_free(idx);
    pt_att_lock_drop();
    return quiet;
}

/* Before exec: the new image takes new slots; ours become orphans that the
 * reader drains and frees. Other threads vanish with the exec. */
void pt_release_all_slots(void)
{
    for (uint32_t k = 0; k < PT_MAX_THREADS - 1; k++) {
        if (atomic_load(&pt_threads[k].used))
            pt_thread_release_slots(&pt_threads[k]);
    }
}

static void atfork_prepare(void)
{
    pt_names_lock_local();
    pt_att_lock_take();
    pt_handles_atfork_prepare();
}

static void atfork_parent(void)
{
    pt_handles_atfork_parent();
    pt_att_lock_drop();
    pt_names_unlock_local();
}

/* The registry after a fork: only this thread's entry, with its new tid
 * (the copy of the others' is wiped on fork, or was copied). */
void pt_registry_child(void)
{
    uint32_t self = pt_tls_index;
    for (uint32_t k = 0; k < PT_MAX_THREADS - 1; k++) {
        if (k + 1 != self)
            atomic_store(&pt_threads[k].used, 0);
    }
    if (self != 0 && self < PT_MAX_THREADS) {
        struct pt_thread *t = &pt_threads[self - 1];
        atomic_store(&t->used, 1);
        t->tid = (uint32_t)syscall(SYS_gettid);
    }
    pt_foreign_clear();
    atomic_store(&pt_threads[PT_MAX_THREADS - 1].used, 1); /* the live mark */
}

/* A forked child, with the names and attachment locks held (dropped here):
 * only the forking thread exists; streams created with
 * POSIX_TRACE_CLOSE_FOR_CHILD stop being recorded into, inherited ones go on
 * with the child's pid in fresh writer slots. Also a raw clone child's
 * (clone.c), which has the page private already. */
void pt_process_child(void)
{
    pt_inbox_fork_private();
    pt_pid = (uint32_t)getpid();
    pt_registry_child();
    for (uint32_t i = 0; i < PT_MAX_ATTACH; i++) {
        struct pt_shm *s = atomic_load(&pt_att[i].shm);
        if (s == NULL)
            continue;
        pt_att[i].epoch++;
        if (s->inheritance != POSIX_TRACE_INHERITED) {
            atomic_fetch_and(&pt_att_mask, ~(UINT64_C(1) << i));
            atomic_store(&pt_att[i].running, 0);
            atomic_store(&pt_att[i].shm, NULL);
            pt_shm_unmap(s, pt_att[i].map_size);
        }
    }
    pt_want_update();
    pt_inbox_atfork_child();
    pt_keeper_atfork_child();
    pt_handles_atfork_child();
    pt_att_lock_drop();
    pt_names_unlock_local();
}

static void atfork_child(void)
{
    pt_process_child();
}

__attribute__((constructor)) void pt_process_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    pt_registry_init();
    pt_pid = (uint32_t)getpid();
    pthread_key_create(&exit_key, thread_exit);
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
        have_membarrier = 1;
    pt_inbox_init();
}
