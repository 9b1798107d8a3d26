/*
 * libtrace/ring: one stream's shared memory and the lock-free paths through it
 * (doc/design.md "Shared memory of one stream", "Recording", "Reading").
 * shm_layout.h is the layout every process of a stream shares; this header
 * is what the library's files call.
 *
 * Invariants:
 * - A stream's memory is written by every process attached to it, any of
 *   which may be hostile: nothing read from it (an index, an offset, a
 *   length, a count) is used before it is checked; a process's own
 *   positions (struct pt_wcur, the reader's pt_rslot) are process memory.
 * - The recording path (record.c) takes no lock, makes no system call and
 *   allocates nothing (a full stream with blocking writers on waits on a
 *   futex, outside the fast path: block.c); a chunk has one writer at a time; a slot's rhead is
 *   the consumer's (consume.h), changed by others only by CAS of a tagged
 *   word (tagged.h).
 * - Written bytes never exceed the budgets of the events written: a chunk
 *   closes by charging the cap first (shm.c geometry), so a failed charge is
 *   the stream being full.
 */
#ifndef PT_RING_H
#define PT_RING_H

/* Included by ../internal.h, which gives what this needs. */
struct pt_handle;

/* ---- pool.c: the free-chunk pool (lock-free stack) ---- */
void     pt_pool_init(struct pt_shm *s);
uint32_t pt_pool_pop(struct pt_shm *s);           /* PT_NONE if empty */
void     pt_pool_push(struct pt_shm *s, uint32_t c);   /* pt_pool_refund, then pt_pool_link */
void     pt_pool_refund(struct pt_shm *s, uint32_t c); /* a closed chunk's bytes back to the cap */
void     pt_pool_link(struct pt_shm *s, uint32_t c);   /* onto the free stack, bytes given back */

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
void pt_shm_prefault(struct pt_shm *s, uint32_t c); /* chunk c, never used, mapped here */
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
/* ---- record.c ---- */
#define PT_WCACHE 32u /* a writer's class cache entries (a power of two) */
/* A writer's position in its slot's chain. Private to the writing process:
 * the shared slot is memory every process of the stream can write, so no
 * address the writer computes comes from it (doc/design.md, "Writers keep
 * their cursor"). One per (attachment, slot) of this process; the
 * controller's own slot has one in its handle. */
struct pt_wcur {
    alignas(PT_CACHELINE) uint64_t wpos; /* offset from the stream base of the next record */
    uint64_t wend;      /* a record must end at or before this; 0 forces a switch */
    uint64_t anchor_ts; /* ticks of the last anchor written */
    uint64_t prev_ts;   /* the stamp the next compact event's delta is from (recfmt.h) */
    /* the chunk's classes by (program address, id), PT_WCACHE entries,
     * direct-mapped: a miss defines a new one (or writes an EVENT record
     * once all are used); pt_wcache_none: no cache, EVENT records only */
    struct pt_wclass *cache;
    /* record.c's straight path takes user (system) events shorter than
     * lim_user (lim_sys): max-data-size (PT_SYS_DATA_MAX) + 1; 0 for a
     * controller's slot, which never takes it */
    uint32_t lim_user, lim_sys;
    uint32_t wchunk;    /* chunk being filled, PT_NONE before the first */
    uint32_t nrec;      /* event records in it so far */
    uint32_t pid;       /* the writer's pid, for chunk headers (its thread: the slot's) */
    uint16_t ncls;      /* classes the chunk has defined */
    uint16_t clock;     /* the stream's clock mode (PT_CLOCK_TSC or not), for the straight path */
};
_Static_assert(sizeof(struct pt_wcur) == PT_CACHELINE, "a writer's cursor is one line");
/* A writer's cache entry: the class, and what the straight path needs of
 * it, computed when it is defined. */
struct pt_wclass {
    struct pt_rclass c;
    uint64_t key;  /* pt_wkey(id, len) of its events, pt_wkey_var(id) if VARLEN; 0: empty */
    uint32_t word; /* PT_COMPACT(c.cls, 0) */
    uint32_t hdr;  /* a compact record's bytes before its data: 4, or 8 (VARLEN) */
};
/* Keys of an entry: bit 0 set (an empty entry's key is 0), the id, and the
 * length (at most PT_MAX_MAX_DATA_SIZE) or all ones for any length. */
static inline uint64_t pt_wkey(uint32_t id, uint32_t len)
{
    return (uint64_t)len << 32 | (uint64_t)id << 1 | 1u;
}
static inline uint64_t pt_wkey_var(uint32_t id)
{
    return (uint64_t)UINT32_MAX << 32 | (uint64_t)id << 1 | 1u;
}
extern struct pt_wclass pt_wcache_none[PT_WCACHE];
/* The cache entry of events from addr with type id. */
static inline uint32_t pt_wcache_at(uint64_t addr, uint32_t id)
{
    return ((uint32_t)addr ^ (uint32_t)(addr >> 5) ^ id) % PT_WCACHE;
}
/* The entry holds a class of the events from addr with type id (of another
 * length, it is redefined VARLEN: record.c, plan_event). */
static inline bool pt_wcache_site(const struct pt_rclass *cl, uint64_t addr, uint32_t id)
{
    return cl->cls != 0 && cl->addr == addr && cl->id == id;
}
/* The entry holds the class an event of len bytes from addr with type id
 * is written with (a site's class fits it by length, or is VARLEN). */
static inline bool pt_wclass_takes(const struct pt_wclass *cl, uint64_t addr, uint32_t id,
                                   uint32_t len)
{
    return cl->c.addr == addr && (cl->key == pt_wkey(id, len) || cl->key == pt_wkey_var(id));
}
extern struct pt_wcur pt_wcurs[PT_MAX_ATTACH * PT_NSLOTS]; /* att * PT_NSLOTS + slot */
_Static_assert(PT_MAX_ATTACH * PT_NSLOTS < 65536, "pt_thread.slot holds a cursor index");
/* The stream's slot index of a pt_thread.slot value v (not 0). */
static inline uint32_t pt_slot_of(uint16_t v)
{
    return (uint32_t)(v - 1) % PT_NSLOTS;
}
#define PT_REC_FORCE 1u   /* record even while suspended (start/stop events) */
#define PT_REC_SYS   2u   /* a system event: data up to PT_SYS_DATA_MAX */
#define PT_REC_NOFILTER 4u /* pt_record_ctl: the caller applied the filter (xproc/inflight.c) */
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

/* ---- block.c: blocking writers, an extension (doc/design.md "Blocking writers") ---- */
bool    pt_block_may(struct pt_shm *s);          /* a writer that found s full: wait at all? */
int64_t pt_block_deadline(struct pt_shm *s);     /* of a wait beginning now (monotonic ns) */
int     pt_block_nap(struct pt_shm *s, uint32_t w, int64_t deadline); /* 0, ETIMEDOUT, ECANCELED */
void    pt_block_room_made(struct pt_shm *s);
void    pt_block_consumer(struct pt_shm *s);     /* this thread consumes s */
void    pt_block_flusher(struct pt_shm *s);      /* the FLUSH policy's thread consumes s */
void    pt_block_release(struct pt_shm *s);      /* stop, shutdown: waiters give up */
/* A consumer gave a chunk back: a writer waiting for room is woken (one
 * load of the private first page when blocking is off). */
static inline void pt_block_room(struct pt_shm *s)
{
    if (unlikely(s->block_ns != 0))
        pt_block_room_made(s);
}

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

/* ---- a record of a chain, decoded and checked (the consumer, consume.c;
 * the flusher; an adopting writer) ---- */
/* The record p at chunk offset off, its commit word c (read with acquire),
 * decoded with d: well formed and within the chunk (the memory is the
 * writers': checked before use). */
static inline bool pt_chain_peek(const struct pt_shm *s, const struct pt_dec *d,
                                 const unsigned char *p, uint32_t c, uint32_t off,
                                 struct pt_drec *o)
{
    uint32_t lim = pt_chunk_room(s) + PT_END_BYTES;
    if (off >= lim || off % 4 != 0)
        return false;
    return pt_dec_peek(d, p, c, lim - off, PT_ID_MAX, (uint32_t)pt_max_data_of(s->max_data), o);
}

/* ---- reader.c ---- */
int  pt_read_next(struct pt_handle *h, struct posix_trace_event_info *ev, void *data,
                  size_t num, size_t *len, int *unavailable, int mode,
                  const struct timespec *abstime);
enum { PT_READ_TRY = 0, PT_READ_BLOCK = 1, PT_READ_TIMED = 2 };
void pt_reader_drain(struct pt_handle *h);        /* posix_trace_clear */
int  pt_reader_init(struct pt_handle *h);       /* 0, ENOMEM */

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

#endif
