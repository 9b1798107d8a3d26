/* libposixtrace internals shared between the library's files. */
#ifndef PT_INTERNAL_H
#define PT_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <trace.h>

#include "clock.h"
#include "copy_small.h"
#include "shm_layout.h"
#include "pt_sizes.h"

#define PT_API __attribute__((visibility("default")))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define PT_ATTR_MAGIC 0x50544154u /* "PTAT" */
#define PT_VERSION_STRING "posixtrace 0.1"

/* Attribute defaults and bounds (doc/semantics.md). */
#define PT_DEF_STREAM_SIZE  ((size_t)1 << 20)
#define PT_MAX_STREAM_SIZE  ((size_t)1 << 30)
#define PT_DEF_MAX_DATA     ((size_t)256)
#define PT_MAX_MAX_DATA     ((size_t)PT_MAX_MAX_DATA_SIZE)
#define PT_DEF_LOG_SIZE     ((size_t)16 << 20)
/* System events' data (pt_sizes.h): FILTER's old + new sets, the shim's
 * events; 1024 bytes keep 4 KiB chunks (shm.c). */
#define PT_SYS_DATA_MAX     ((size_t)PT_SYS_DATA_BYTES)
_Static_assert(2 * sizeof(trace_event_set_t) == PT_FILTER_DATA_BYTES,
               "FILTER carries two event sets");
/* Per-event budget: record header plus one anchor record it may need. */
#define PT_EVENT_OVERHEAD   (2 * PT_REC_HDR)
#define PT_ATTR_POLICY_SET  1u /* __flags: stream policy set explicitly */

static inline uint32_t pt_round8(size_t n) { return (uint32_t)((n + 7) & ~(size_t)7); }

/* ---- process.c: this process as a traced process ---- */
#define PT_MAX_ATTACH  TRACE_SYS_MAX /* streams one process records into at once */
#define PT_MAX_THREADS 1024u /* threads recording at once */

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
uint32_t pt_thread_index(void);                   /* pt_threads index + 1, 0 = none */
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

/* ---- procfs.c ---- */
int  pt_proc_stat(pid_t pid, char *state, uint64_t *start);
bool pt_proc_alive(pid_t pid, uint64_t start);
int  pt_proc_ppid(pid_t pid, pid_t *ppid);
int  pt_proc_euid(pid_t pid, uid_t *euid);

/* ---- inbox.c: how controllers in other processes reach this process ----
 * The inbox is a memfd mapped over a page-aligned static object of the
 * library, so that its first part, the want table, is at a link-time address:
 * posix_trace_event() tests one byte of it. A controller that created streams
 * for this process posts them in the inbox's entries (entry i <-> attachment
 * i) and sets the doorbell bit in every want byte; the next event then takes
 * the slow path, which attaches. doc/design.md, "Other processes". */
#include "inbox_layout.h" /* the inbox's memory, as every process sees it */
extern union pt_inbox_mem __posixtrace_want; /* exported: <posixtrace/record.h> */
#define PT_INBOX (&__posixtrace_want.ib)
#define pt_want  (__posixtrace_want.ib.want.b)
static inline uint8_t pt_want_load(uint32_t id)
{
    return __atomic_load_n(&pt_want[id], __ATOMIC_RELAXED);
}
void pt_inbox_init(void);
void pt_inbox_refresh(void);                      /* answer the doorbell */
void pt_inbox_ring_self(void);
void pt_inbox_fork_private(void);
void pt_inbox_atfork_child(void);
void pt_inbox_forget(void);                       /* a raw clone child that cannot have one */
/* exec.c: the next definition of a function the library interposes (libc's) */
void *pt_next_fn(const char *name);
void *pt_next_cached(void *_Atomic *slot, const char *name); /* found once, at first use */
void pt_inbox_before_exec(void);
int posixtrace_reserved_fd_repair(void); /* <posixtrace/record.h> */
int  pt_inbox_add_own(struct pt_shm *s, size_t size, int fd); /* attachment index or -errno */
void pt_inbox_free(int idx);                      /* pt_att_lock held */
struct pt_inbox_ent *pt_inbox_claim(struct pt_inbox *ib, int *idx); /* FREE -> BUSY, or NULL */
void pt_inbox_post(struct pt_inbox_ent *e, const struct pt_shm *s, int ctrl_fd, size_t size);
bool pt_is_inbox_link(const char *path);
void pt_inbox_ring(struct pt_inbox *ib);
/* discover.c: the inbox a new image inherits (its descriptors, its ancestors) */
int  pt_inbox_fd_base(void);                      /* where the inbox descriptor goes */
int  pt_discover_own_fds(struct pt_inbox *copy);  /* its descriptor, or -1 */
int  pt_discover_ancestors(struct pt_inbox *copy); /* 0: the nearest ancestor's */
bool pt_secure(void);                             /* a set-id image (AT_SECURE) */
/* A set-id image joins only streams of a root controller, given by memfd. */
bool pt_discover_trusted(const struct pt_inbox_ent *e);
void pt_discover_keep_trusted(struct pt_inbox *ib); /* drops the other entries */
void pt_member_join(struct pt_shm *s, int att);
void pt_inbox_publish_name(trace_event_id_t id, const char *name);
void pt_names_copy_from(struct pt_shm *s, const struct pt_inbox *ib); /* names.c */

/* ---- remote.c: the controller side ---- */
int  pt_remote_open_inbox(pid_t pid, uint64_t start, int fdno, struct pt_inbox **ib);
void pt_remote_close_inbox(struct pt_inbox *ib);
int  pt_remote_find_inbox(pid_t pid, uint64_t *start, struct pt_inbox **ib);
int  pt_remote_post(struct pt_inbox *ib, struct pt_shm *s, int fd, size_t size);
void pt_remote_ring_members(struct pt_shm *s);
int  pt_keeper_alive(const int **word);
int  pt_keeper_alive_named(uint64_t *key);
void pt_keeper_alive_named_done(void);
void pt_keeper_atfork_child(void);
/* Did the controller of attachment att die? One load of its alive word. */
static inline bool pt_att_ctrl_dead(int att)
{
    const int *w = pt_att[att].alive;
    if (w == NULL)
        return false;
    int v = __atomic_load_n(w, __ATOMIC_RELAXED);
    return v == 0 || (v & 0x40000000) != 0; /* not held, or FUTEX_OWNER_DIED */
}
bool pt_shm_ctrl_dead(struct pt_shm *s);       /* the same, found by stream */

/* ---- reap.c: writers that died ---- */
struct pt_handle;
void pt_reap_dead_writers(struct pt_handle *h);

/* ---- pool.c: the free-chunk pool (lock-free stack) ---- */
void     pt_pool_init(struct pt_shm *s);
uint32_t pt_pool_pop(struct pt_shm *s);           /* PT_NONE if empty */
void     pt_pool_push(struct pt_shm *s, uint32_t c);

/* ---- shm.c: creating and mapping a stream ---- */
struct pt_geometry {
    uint32_t chunk_size, nchunks;
    uint64_t total;
};
void pt_geometry(const trace_attr_t *a, struct pt_geometry *g);
struct pt_shm_owner { uid_t uid; gid_t gid; }; /* a named object for another user */
int  pt_shm_create(const trace_attr_t *a, int has_log, const struct pt_shm_owner *o,
                   struct pt_shm **out, size_t *size, int *fd);
void pt_shm_close_backing(int named, uint64_t key, int fd);
int  pt_shm_give(int fd, const struct pt_shm_owner *o);
/* fault.c: stream memory another process can shrink under us */
int  pt_fault_guard_add(void *p, size_t size);
void pt_fault_guard_remove(void *p);
void pt_shm_name(uint32_t ctrl_pid, uint64_t ctrl_start, uint64_t key, char *buf, size_t n);
void pt_shm_cleanup_stale(void);
void pt_shm_alive_name(uint32_t ctrl_pid, uint64_t ctrl_start, uint64_t key, char *buf,
                       size_t n);
uint64_t pt_random_key(void);
int  pt_shm_privatize(struct pt_shm *s);
bool pt_shm_check(const struct pt_shm *s, uint64_t size); /* geometry of a stream we map */
int  pt_robust_init(pthread_mutex_t *m);
int  pt_seal_size(int fd);
bool pt_sealed_size(int fd);
struct stat;
void *pt_map_whole(int fd, uint64_t size, int prot, struct stat *st);
void pt_shm_unmap(struct pt_shm *s, size_t size);
/* The data a record may carry: max-data-size, and system events' data. */
static inline size_t pt_max_data_of(size_t user_max)
{
    return PT_RECORD_DATA_MAX(user_max);
}
/* The largest record of stream s. */
static inline size_t pt_max_record(const struct pt_shm *s)
{
    return PT_REC_HDR + pt_round8(pt_max_data_of(s->max_data));
}

/* ---- names.c ---- */
void pt_names_lock_local(void);
void pt_names_unlock_local(void);
bool pt_names_lock_try(void);
void pt_names_init_stream(struct pt_shm *s);      /* predefined + this process's; locked */
void pt_names_init_sys(struct pt_shm *s);         /* predefined and the shim's */
void pt_names_register_all(struct pt_shm *s);     /* this process's, local lock held */
int  pt_name_lookup_user(struct pt_shm *s, const char *name, trace_event_id_t *id);
int  pt_name_get(struct pt_shm *s, trace_event_id_t id, char *out);
int  pt_local_eventid_open(const char *name, trace_event_id_t *id);
int  pt_stream_eventid_open(struct pt_shm *s, const char *name, trace_event_id_t *id);
const char *pt_sys_name(trace_event_id_t id);

/* ---- record.c ---- */
/* A writer's position in its slot's chain. Private to the writing process:
 * the shared slot is memory every process of the stream can write, so no
 * address the writer computes comes from it (doc/design.md, "Writers keep
 * their cursor"). One per (attachment, slot) of this process; the
 * controller's own slot has one in its handle. */
struct pt_wcur {
    alignas(PT_CACHELINE) uint64_t wpos; /* a line each: no false sharing between writers */      /* offset from the stream base of the next record */
    uint64_t wend;      /* a record must end at or before this; 0 forces a switch */
    uint64_t anchor_ts; /* ticks of the last anchor written */
    uint32_t wchunk;    /* chunk being filled, PT_NONE before the first */
    uint32_t nrec;      /* event records in it so far */
    uint64_t thread;    /* pthread_self() of the writer, for chunk headers */
    uint32_t pid;       /* the writer's pid, for chunk headers */
    uint32_t pad_;
};
extern struct pt_wcur pt_wcurs[PT_MAX_ATTACH * PT_NSLOTS]; /* att * PT_NSLOTS + slot */
_Static_assert(PT_MAX_ATTACH * PT_NSLOTS < 65536, "pt_thread.slot holds a cursor index");
/* The stream's slot index of a pt_thread.slot value v (not 0). */
static inline uint32_t pt_slot_of(uint16_t v)
{
    return (uint32_t)(v - 1) % PT_NSLOTS;
}
#define PT_REC_FORCE 1u   /* record even while suspended (start/stop events) */
#define PT_REC_SYS   2u   /* a system event: data up to PT_SYS_DATA_MAX */
void pt_record(struct pt_shm *s, int att, trace_event_id_t id, const void *data,
               size_t len, uint64_t addr, unsigned flags);
void pt_note_loss(struct pt_shm *s, uint64_t n, uint32_t err);
/* A controller's system event into a stream it does not record into: its own
 * slot (*slot, PT_NONE before the first) and cursor, events stamped with pid.
 * Callers serialize (the handle's mlock). */
void pt_record_ctl(struct pt_shm *s, uint32_t *slot, struct pt_wcur *w, uint32_t pid,
                   trace_event_id_t id, const void *data, size_t len, uint64_t addr,
                   unsigned flags);
void pt_wake_readers(struct pt_shm *s);

/* ---- handle.c: trace stream identifiers of this process ---- */
#define PT_RD_SYNTH_MAX 8
struct pt_synth {             /* an event the reader reports itself */
    trace_event_id_t id;
    int64_t ns;               /* CLOCK_REALTIME */
    uint32_t len;
    unsigned char data[sizeof(trace_event_set_t)];
};
struct pt_rslot {             /* the reader's view of one writer slot */
    uint32_t chunk;           /* PT_NONE: not following this slot */
    uint64_t rhead;           /* value of slot->rhead when we took chunk */
    uint32_t off;
    uint32_t delivered;       /* events delivered from chunk */
    uint64_t stolen_seen;     /* slot->stolen accounted for */
    uint64_t gap;             /* flusher: events lost before the next one, not yet reported */
    uint64_t anchor_ts;
    int64_t anchor_ns;
    int has_anchor;
    int bad;                  /* its chain is corrupt: reported once, no longer followed */
    int seq_known;            /* seq holds the seq of chunk (set by pt_chain_advance) */
    uint64_t seq;
};
struct pt_flush;   /* flusher.c */
struct pt_logr;    /* logread.c */
enum { PT_H_ACTIVE = 0, PT_H_PRERECORDED = 1 };
struct pt_handle {
    int used;
    int kind;                 /* PT_H_ACTIVE or PT_H_PRERECORDED */
    struct pt_flush *log;     /* an active stream's log, or NULL */
    struct pt_logr *logr;     /* a pre-recorded stream */
    uint32_t gen;
    uint32_t owner_pid;
    int att;                  /* attachment index when tracing itself, else -1 */
    uint32_t ctl_slot;        /* slot for the controller's system events (att < 0) */
    struct pt_wcur ctl_cur;   /* its write cursor */
    int64_t reap_ns;          /* last look for dead writers (reap.c) */
    int fd;
    struct pt_shm *shm;
    size_t map_size;
    int refs;
    int dying;
    pthread_cond_t cv;        /* refs reached 0 */
    pthread_mutex_t rlock;    /* one reader at a time */
    pthread_mutex_t mlock;    /* event type list cursor */
    /* reader state (under rlock) */
    struct pt_rslot rs[PT_NSLOTS];
    struct pt_synth synth[PT_RD_SYNTH_MAX];
    int nsynth, synth_pos;
    uint64_t lost_reported;   /* lost events already reported in OVERFLOW events */
    int64_t loss_seen_ns;     /* pt_monotonic_ns() at the last loss check (gaps.c), 0: none */
    uint64_t status_lost;     /* the lost count of the log's STATUS blocks (gaps.c) */
    int stop_reported;        /* STOP(auto) reported for the current fill */
    double ticks_per_ns;
    int64_t last_ns;          /* timestamp of the last event reported */
    /* event type list cursor */
    uint32_t typelist_pos;
};

/* Look up trid; on success the handle is referenced: release with pt_put. */
int  pt_get(trace_id_t trid, struct pt_handle **h);
void pt_put(struct pt_handle *h);
int  pt_handle_new(struct pt_shm *s, size_t size, int fd, int att, trace_id_t *trid,
                   struct pt_handle **out);
int  pt_get_active(trace_id_t trid, struct pt_handle **h);
int  pt_handle_begin_destroy(struct pt_handle *h);
void pt_handle_wait_last(struct pt_handle *h);
void pt_handle_destroy(struct pt_handle *h);      /* after shutdown logic */
int  pt_handle_count(void);
bool pt_handles_lock_try(void);                   /* then pt_handles_atfork_child() drops it */
void pt_handles_atfork_child(void);

/* ---- gaps.c: losses and full-stream restarts (reader and flusher) ---- */
/* Where a reporter puts one system event; `when` is its own kind of stamp. */
typedef void pt_sys_put(struct pt_handle *h, trace_event_id_t id, uint64_t when, const void *d,
                        uint32_t len);
/* ERROR for a pending internal error, then OVERFLOW (the count) and RESUME
 * for the losses counted up to `lost` not reported yet. */
void pt_report_losses(struct pt_handle *h, pt_sys_put *put, uint64_t when, uint64_t lost);
/* Whether n more events can have been lost since the last check (a count in
 * shared memory, which any attached process may have written). */
bool pt_loss_plausible(struct pt_handle *h, uint64_t n);
uint64_t pt_lost_for_status(struct pt_handle *h);
/* Restarts a FULL stream (false: it was not full): the gap's losses, then
 * START with the filter. */
bool pt_restart_full(struct pt_handle *h, pt_sys_put *put, uint64_t when);

/* ---- chain.c: following a writer slot's chain (reader and flusher) ---- */
void pt_chain_error(struct pt_handle *h, uint32_t err);
void pt_chain_follow(struct pt_rslot *r, uint64_t rh);
/* Leave slot i's chunk, read to its end, for `next`; false (EBADMSG, the
 * chain no longer followed) when next is out of range or not later than the
 * chunk left (a loop of chunks) */
bool pt_chain_advance(struct pt_handle *h, uint32_t i, uint32_t next);
bool pt_chain_resync(struct pt_handle *h, uint32_t i, uint64_t rh, uint64_t *lost_out);
void pt_chain_reclaim_orphan(struct pt_handle *h, uint32_t i);
void pt_chain_abandon_pending(struct pt_handle *h, uint32_t i);
/* A record of a chain at chunk offset off, its header read into rec: well
 * formed and within the chunk (the memory is the writers': check before use). */
static inline bool pt_chain_rec_sane(struct pt_shm *s, uint32_t commit, const struct pt_rec *rec,
                                     uint32_t off)
{
    uint32_t type = PT_COMMIT_TYPE(commit), size = PT_COMMIT_SIZE(commit);
    if (size % 8 != 0 || off + size > pt_chunk_room(s) + PT_END_BYTES)
        return false;
    switch (type) {
    case PT_REC_END:
        return size == PT_END_BYTES;
    case PT_REC_ANCHOR:
        return size == PT_REC_HDR;
    case PT_REC_EVENT: /* its header is inside the record before it is read */
        return size >= PT_REC_HDR && rec->id <= PT_ID_MAX &&
               rec->len <= pt_max_record(s) - PT_REC_HDR &&
               size == PT_REC_HDR + pt_round8(rec->len);
    default:
        return false;
    }
}

/* ---- reader.c ---- */
int  pt_read_next(struct pt_handle *h, struct posix_trace_event_info *ev, void *data,
                  size_t num, size_t *len, int *unavailable, int mode,
                  const struct timespec *abstime);
enum { PT_READ_TRY = 0, PT_READ_BLOCK = 1, PT_READ_TIMED = 2 };
void pt_reader_drain(struct pt_handle *h);        /* posix_trace_clear */
void pt_reader_init(struct pt_handle *h);

/* ---- flusher.c: an active stream's log ---- */
int  pt_flush_open(struct pt_handle *h, int fd);
int  pt_flush_start_thread(struct pt_handle *h);
int  pt_flush_run(struct pt_handle *h, bool partial, bool marked);
int  pt_flush_now(struct pt_handle *h);
int  pt_flush_close(struct pt_handle *h);
int  pt_flush_clear(struct pt_handle *h);
void pt_flush_status(struct pt_handle *h, struct posix_trace_status_info *st, bool reset);

/* ---- stream.c ---- */
void pt_stream_status(struct pt_handle *h, struct posix_trace_status_info *st, bool reset);
void pt_stream_filter(struct pt_shm *s, trace_event_set_t *f);

/* ---- the call clock (clock.c) ---- */
extern _Atomic uint32_t pt_call_mode; /* 0: none yet, else PT_CLOCK_* */
extern double pt_call_ns_per_tick;
void pt_call_clock_adopt(uint32_t clock_mode, double ticks_per_ns);
static inline uint64_t pt_call_ticks(void)
{
    uint32_t m = atomic_load_explicit(&pt_call_mode, memory_order_acquire);
    return m == PT_CLOCK_TSC ? pt_rdtsc() : m == PT_CLOCK_REALTIME ? (uint64_t)pt_realtime_ns() : 0;
}

/* ---- slock.c: a lock word others may scribble on (the stream's names) ---- */
#define PT_SLOCK_CTL_MS    1000 /* a controller waits this long, then fails (EAGAIN) */
#define PT_SLOCK_TARGET_MS 2000 /* a traced process: then it leaves the stream out */
int  pt_slock_take(_Atomic uint32_t *w, int timeout_ms); /* 0 or ETIMEDOUT */
void pt_slock_drop(_Atomic uint32_t *w);

/* ---- futex ---- */
int pt_futex_wait(_Atomic uint32_t *addr, uint32_t val, const struct timespec *abs_realtime);
int pt_futex_wake(_Atomic uint32_t *addr, int n);

/* ---- syscalls_table.c: the system-call events' descriptors ---- */
struct posixtrace_event_desc;
const struct posixtrace_event_desc *pt_syscall_desc(unsigned nr); /* NULL: no such call */

#endif
