/*
 * libtrace/proc: this process as a traced process (doc/design.md
 * "Process-local state"): the streams it records into (pt_att), its thread
 * registry (pt_threads), fork and raw clone children.
 *
 * Invariants:
 * - pt_att[i] changes meaning only under pt_att_lock, and its epoch is
 *   bumped when it does; a writer that saw an old epoch takes a new slot.
 * - A pt_thread entry is used by one thread at a time; a raw thread on the
 *   same TLS is told apart by its stack (pt_on_own_stack) or by gettid().
 * - The registry is wipe-on-fork: a raw clone child reads zeros and adopts
 *   itself on its first slow path (clone.c).
 */
#ifndef PT_PROC_H
#define PT_PROC_H

/* Included by ../internal.h, which gives what this needs. */

/* ---- process.c: this process as a traced process ---- */

/*
 * A stream this process records into. `running` and `filter` are this
 * process's copies of the stream's state and filter, kept by the controller
 * calls (start, stop, set_filter), so that an event of a stopped stream or a
 * filtered-out type is dropped with a few loads of process memory, before the
 * recording path touches the stream. They only ever let more events through
 * than the stream's own words, which the recording path checks again.
 */
struct pt_attach {
    _Atomic uint32_t running;
    uint32_t epoch;           /* bumped each time this entry changes meaning */
    _Atomic(struct pt_shm *) shm;
    size_t map_size;
    _Atomic uint64_t filter[PT_ID_SPACE / 64];
    uint64_t key;             /* the stream's key (its inbox entry has the same index) */
    int own;                  /* created by this process: its handle manages it */
    int member;               /* index in the stream's member table, or -1 */
    const int *alive;         /* the controller's alive word (mapped read-only), or NULL */
};

/* Per-thread recording state, in static memory so that another thread may
 * look at it (shutdown's grace period) without touching freed TLS. */
struct pt_thread {
    alignas(PT_CACHELINE) _Atomic uint32_t nest; /* >0 while inside the recording path */
    _Atomic uint32_t calls;       /* recording calls completed (quiescence) */
    _Atomic uint32_t used;
    uint32_t tid;                 /* the claiming thread's (clone.c: raw threads) */
    uint32_t switches;            /* chunk switches, for the tid check's pace */
    _Atomic uint32_t shared;      /* a raw thread was seen on it: no slot any more */
    uintptr_t stk_lo, stk_len;    /* the stack the claiming thread records from, as far as
                                     seen: [stk_lo, stk_lo + stk_len); clone.c */
    uint32_t own_pid;             /* a foreign entry's process, if not this one's (clone.c) */
    uint32_t exact;               /* a raw thread shares its TLS: gettid() at every event */
    uint64_t own_start;
    uint32_t epoch[PT_MAX_ATTACH];
    uint16_t slot[PT_MAX_ATTACH][PT_NEST]; /* 0 = none, else 1 + the writer's cursor
                                              index in pt_wcurs (pt_slot_of) */
};

extern struct pt_attach pt_att[PT_MAX_ATTACH];
extern _Atomic uint64_t pt_att_mask;
/* Event types some running attached stream takes (1) or none does (0): the
 * union of the streams' complements of their filters, a byte per type so the
 * test is one load. The first (and, when no stream runs or the event is
 * filtered out, only) thing posix_trace_event() looks at. */

/* Page-aligned, whole pages: clone.c maps it wipe-on-fork. */
extern struct pt_thread pt_threads[PT_MAX_THREADS];
extern uint32_t pt_pid;
extern uint64_t pt_start;                         /* this process's start time */
extern pthread_mutex_t pt_att_lock;
extern __thread uint32_t pt_tls_cfg;
void pt_att_lock_take(void);
void pt_att_lock_drop(void);

void pt_process_init(void);
struct pt_thread *pt_thread_self(void);          /* NULL if none free */
void pt_attach_set(int idx, struct pt_shm *shm, size_t size, uint64_t key, int own);
/* Waits for this process's writers (2 s at most), then forgets the stream:
 * false when one is still recording after that, and its memory must stay
 * mapped (process.c, grace_period). */
bool pt_attach_remove(int idx);
bool pt_attach_remove_locked(int idx);            /* the same, pt_att_lock held */
void pt_release_all_slots(void);                  /* before exec: every thread's slots */
void pt_thread_release_slots(struct pt_thread *t);
void pt_want_update(void);                        /* after running/filter changes */
void pt_quiesce_writers(void);                    /* wait out this process's writers */
/* pt_threads index + 1, 0 = none: this thread's (static TLS, initial-exec, so
 * the recording path reads it with one load, no call) */
extern __thread uint32_t pt_tls_index __attribute__((tls_model("initial-exec")));
static inline uint32_t pt_thread_index(void)
{
    return pt_tls_index;
}
uint32_t pt_writer_id(const struct pt_thread *t, uint64_t *start); /* a new slot's pid, start */
uint32_t pt_thread_claim_foreign(uint32_t tid, uint32_t pid); /* index, PT_MAX_THREADS: none */
/* false: a vfork child or a raw CLONE_VM child (t), stream not inherited */
bool pt_writer_takes(const struct pt_thread *t, const struct pt_shm *s);
void pt_process_child(void);                      /* a forked child's setup; names, att locks held */
void pt_thread_forget(void);                      /* this thread's next event claims a new entry */
/* For a raw clone child (clone.c), which has one thread: take m without
 * waiting; false if a thread of the parent held it at the clone (it does not
 * exist here), and m is then made usable again, not taken. */
static inline bool pt_mutex_take_or_reset(pthread_mutex_t *m)
{
    if (pthread_mutex_trylock(m) == 0)
        return true;
    pthread_mutex_init(m, NULL);
    return false;
}
bool pt_att_lock_try(void);
bool pt_want_lock_try(void);                      /* taken and dropped: false if held */

/* ---- clone.c: children and threads the library's fork handlers never saw ----
 * The registry is wipe-on-fork: in a child made by a raw clone (no CLONE_VM)
 * it reads as zeros, so the child's first event reaches a slow path, which
 * makes it a process of its own (pt_clone_adopt). A raw thread (CLONE_VM,
 * the parent thread's TLS) is caught at a chunk switch by its tid. */
void pt_registry_init(void);
void pt_registry_child(void);                     /* after a fork: only this thread's entry */
static inline bool pt_registry_live(void)         /* false: a raw clone child, not adopted yet */
{
    return atomic_load_explicit(&pt_threads[PT_MAX_THREADS - 1].used, memory_order_relaxed) != 0;
}
void pt_clone_adopt(void);                        /* slow paths: no-op unless !pt_registry_live() */
extern int pt_clone_lost;                         /* adoption impossible: events counted lost */
bool pt_thread_foreign(struct pt_thread *t);      /* at a chunk switch: a raw thread's? */
/* The stack pointer of the caller. */
static inline __attribute__((always_inline)) uintptr_t pt_stack_pointer(void)
{
    uintptr_t sp;
#if defined(__x86_64__)
    __asm__("mov %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
    __asm__("mov %0, sp" : "=r"(sp));
#else
    volatile char here;
    sp = (uintptr_t)&here;
#endif
    return sp;
}
/* Is the recording thread on the stack t's claiming thread records from?
 * A raw thread on the same TLS (hence the same entry) runs on another
 * stack: two loads of the entry's first line, a subtraction, a compare. */
static inline bool pt_on_own_stack(const struct pt_thread *t)
{
    return pt_stack_pointer() - t->stk_lo < t->stk_len;
}
void pt_thread_stack_init(struct pt_thread *t);   /* at a claim: around the stack pointer */
/* The entry to record with when pt_on_own_stack(t) fails: t (its claiming
 * thread on a stack not seen yet: the range grows), or an entry of the raw
 * thread's own, or NULL (none free: its events count lost). */
struct pt_thread *pt_thread_resolve(struct pt_thread *t);
void pt_foreign_clear(void);                      /* in a fork child: no raw thread there */
void pt_thread_shared_seen(struct pt_shm *s, uint32_t nrec, struct pt_thread *t);

#endif
