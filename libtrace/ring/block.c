/*
 * Blocking writers, an extension (doc/semantics.md "Blocking writers",
 * doc/design.md "Blocking writers"): with the stream's block_ns set, a
 * writer whose chunk switch finds the cap reached waits, bounded, for the
 * consumer to give chunks back, before its policy takes over.
 *
 * Nothing here is on the fast path: a writer comes here only from a failed
 * charge, a consumer only when it gives a chunk back with blocking on.
 * The wake-up: a writer increments room_waiters, reads room_seq, and
 * FUTEX_WAITs on it; a consumer gives the chunk back, increments room_seq,
 * then reads room_waiters (all sequentially consistent): either the
 * consumer sees the waiter and wakes it, or the writer's wait finds
 * room_seq changed and returns at once. So a consumer makes a system call
 * only when a writer waits. Writers still nap at most PT_BLOCK_NAP_NS at a
 * time: room_waiters is shared memory anyone may write, and a stop, a
 * shutdown or a dead controller is noticed at the next nap.
 */
#include "../internal.h"
#include <limits.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PT_BLOCK_NAP_NS (10 * 1000 * 1000)
#define PT_BLOCK_FLUSHER UINT32_MAX /* no thread has this id */
#define PT_STALLED(seq) ((UINT64_C(1) << 32) | (uint64_t)(seq))

static uint32_t self_tid(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

/* Whether a writer of stream s that found it full should wait at all:
 * blocking on, a consumer there that is not this very thread (a reader
 * recording into its own stream, or a signal handler interrupting the
 * reader, would wait for itself), the stream running, and the consumer not
 * known stalled (a wait timed out and it gave nothing back since). */
bool pt_block_may(struct pt_shm *s)
{
    if (s->block_ns == 0)
        return false;
    uint32_t c = atomic_load_explicit(&s->consumer, memory_order_relaxed);
    if (c == 0 || atomic_load_explicit(&s->state, memory_order_relaxed) != PT_ST_RUNNING)
        return false;
    uint32_t seq = atomic_load(&s->room_seq);
    if (atomic_load_explicit(&s->stalled, memory_order_relaxed) == PT_STALLED(seq))
        return false;
    return c != self_tid();
}

/* The deadline of a wait beginning now (CLOCK_MONOTONIC ns). The FLUSH
 * policy's flusher is asked to run at once rather than at its next tick. */
int64_t pt_block_deadline(struct pt_shm *s)
{
    uint64_t ns = s->block_ns < PT_BLOCK_MAX_NS ? s->block_ns : PT_BLOCK_MAX_NS;
    if (s->stream_policy == POSIX_TRACE_FLUSH && atomic_exchange(&s->flush_req, 1) == 0)
        pt_futex_wake(&s->flush_req, 1);
    return pt_monotonic_ns() + (int64_t)ns;
}

/* One nap of a writer that needs w bytes under the cap. 0: look again;
 * ETIMEDOUT: the deadline passed (the consumer is marked stalled: writers
 * stop waiting until it gives a chunk back); ECANCELED: nobody will make
 * room (the stream stopped or shut down, its controller died, or the
 * consumer left). */
int pt_block_nap(struct pt_shm *s, uint32_t w, int64_t deadline)
{
    int64_t now = pt_monotonic_ns();
    if (now >= deadline) {
        atomic_store_explicit(&s->stalled, PT_STALLED(atomic_load(&s->room_seq)),
                              memory_order_relaxed);
        return ETIMEDOUT;
    }
    atomic_fetch_add(&s->room_waiters, 1);
    uint32_t seq = atomic_load(&s->room_seq);
    if (atomic_load_explicit(&s->used, memory_order_relaxed) + w > s->cap &&
        atomic_load_explicit(&s->state, memory_order_relaxed) == PT_ST_RUNNING) {
        int64_t nap = deadline - now < PT_BLOCK_NAP_NS ? deadline - now : PT_BLOCK_NAP_NS;
        struct timespec dl;
        pt_ns_to_ts(pt_realtime_ns() + nap, &dl);
        pt_futex_wait(&s->room_seq, seq, &dl);
    }
    atomic_fetch_sub(&s->room_waiters, 1);
    if (atomic_load_explicit(&s->state, memory_order_relaxed) != PT_ST_RUNNING ||
        atomic_load_explicit(&s->consumer, memory_order_relaxed) == 0 || pt_shm_ctrl_dead(s))
        return ECANCELED;
    return 0;
}

/* A consumer gave a chunk back (consume.c), blocking on. */
void pt_block_room_made(struct pt_shm *s)
{
    atomic_fetch_add(&s->room_seq, 1);
    if (atomic_load(&s->room_waiters) != 0)
        pt_futex_wake(&s->room_seq, INT_MAX);
}

/* The calling thread consumes stream s (a reader's getnext, the flusher's
 * thread): writers may wait for it, unless they are this thread. The
 * thread id is cached per thread, refreshed in a forked child. */
void pt_block_consumer(struct pt_shm *s)
{
    static __thread uint32_t tid, tid_pid;
    if (tid_pid != pt_pid) {
        tid = self_tid();
        tid_pid = pt_pid;
    }
    if (atomic_load_explicit(&s->consumer, memory_order_relaxed) != tid)
        atomic_store_explicit(&s->consumer, tid, memory_order_relaxed);
}

/* The FLUSH policy's flusher thread consumes s from now on (it never
 * records: no thread id needed, and none that a writer could have). */
void pt_block_flusher(struct pt_shm *s)
{
    if (s->block_ns != 0)
        atomic_store(&s->consumer, PT_BLOCK_FLUSHER);
}

/* Stop, shutdown: waiting writers give up now rather than at their next nap. */
void pt_block_release(struct pt_shm *s)
{
    if (s->block_ns == 0)
        return;
    atomic_fetch_add(&s->room_seq, 1);
    pt_futex_wake(&s->room_seq, INT_MAX);
}
