/*
 * The layout of one trace stream in shared memory.  See doc/design.md.
 *
 * One memfd per stream holds, in order:
 *   struct pt_shm         header: attributes, status, pool, filter
 *   struct pt_slot[256]   writer slots (one per recording thread and nesting level)
 *   struct pt_name[2048]  the event-name table, indexed by event id
 *   chunks                nchunks * chunk_size bytes of records
 *
 * Who writes what:
 *   - the controller (creator) writes the attributes once, the state word,
 *     the filter, and names;
 *   - a writer thread owns one slot and the chunk it is filling (its write
 *     cursor is in its own process's memory: record.c); it publishes each
 *     record by storing its commit word last, and the chunk it fills (wchunk)
 *     at each chunk switch;
 *   - the reader owns rhead of every slot (shared with LOOP stealers, by CAS)
 *     and returns consumed chunks to the pool.
 */
#ifndef PT_SHM_LAYOUT_H
#define PT_SHM_LAYOUT_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <trace.h>

#define PT_SHM_MAGIC    UINT64_C(0x314d485343525450) /* "PTRCSHM1" little-endian */
#define PT_SHM_VERSION  8u /* 8: records encoded (recfmt.h: classes, stamp deltas,
                              4-byte aligned), chunks carry ts0; 7: chunks grow with the stream, consumed chunks cool before
                              reuse (more chunks); 6: blocking writers (block_ns, the room
                              line); 5: writers' cursors private, slots publish wchunk only */
#define PT_NSLOTS       256u
#define PT_NEST         4u
#define PT_NONE         UINT32_MAX
#define PT_ID_SPACE     __PT_EVENT_ID_SPACE
/* The event type ids (doc/design.md "Event type ids"):
 *      0..7     the standard's system events (POSIX_TRACE_START...)
 *      8..255   the shim's events (<posixtrace/events.def>)
 *    256        POSIX_TRACE_UNNAMED_USEREVENT
 *    257..1280  named user events (TRACE_USER_EVENT_MAX of them)
 *   1281..1535  run-time probes (their names given when a stream is set up)
 *   1536..2047  system calls, by number: PT_SYSCALL_ID_BASE + nr
 * System event types are every id but the user ones (256..1280). */
#define PT_SYS_FIRST    8u   /* the first id the trace system's own events take */
#define PT_SYS_EVENTS   256u
#define PT_USER_ID_MAX  (PT_SYS_EVENTS + TRACE_USER_EVENT_MAX) /* 1280, last user id */
#define PT_PROBE_ID_BASE 1281u
#define PT_PROBE_ID_LAST 1535u
#define PT_SYSCALL_ID_BASE 1536u
#define PT_SYSCALL_NR_MAX  511u
#define PT_ID_MAX       (PT_ID_SPACE - 1)  /* 2047, last valid id */
_Static_assert(PT_USER_ID_MAX < PT_PROBE_ID_BASE && PT_PROBE_ID_LAST < PT_SYSCALL_ID_BASE &&
               PT_SYSCALL_ID_BASE + PT_SYSCALL_NR_MAX == PT_ID_MAX, "the id ranges");
/* A system event type (recordable with posixtrace_sys_event), not a user one. */
static inline int pt_id_is_system(uint32_t id)
{
    return id < PT_SYS_EVENTS || (id > PT_USER_ID_MAX && id <= PT_ID_MAX);
}
#define PT_CACHELINE    64
#define PT_PAGE0        4096 /* the creator's private first page of the header */
/* Geometry (shm.c, doc/design.md "Geometry"): a chunk is at least
 * 1/PT_CHUNKS_PER_STREAM of the stream-min-size, a page to PT_CHUNK_BIG
 * (bigger only for two of the largest records). */
#define PT_CHUNKS_PER_STREAM 1024u
#define PT_CHUNK_BIG    (64u << 10)
/* Consumed chunks go back to the pool only after the consumer has read this
 * many bytes more (consume.c, "cooling"): by then their lines have left its
 * CPU's private caches (1 MiB or less of L2 on current x86), and a writer on
 * another CPU that reuses one does not have to take each line back from the
 * consumer's. At most a quarter of the cap, so that small streams stay small. */
#define PT_COOL_BYTES   (2u << 20)
#define PT_COOL_MAX     (PT_COOL_BYTES / 4096u) /* chunks: the most, with page-sized ones */

/* The records of a chunk: recfmt.h. */
#include "recfmt.h"

/* An event record decoded (consume.c, the flusher), and the log's EVENTS
 * record as it is on disk (log_format.h: 32 bytes, data padded to 8). A
 * stream's records are encoded (recfmt.h), not this. */
struct pt_rec {
    _Atomic uint32_t commit; /* the log's: PT_LOGF_COMMIT(type, size), log_format.h */
    uint32_t id;             /* event type id (anchor: 0) */
    uint64_t ts;             /* clock ticks (TSC or ns, see pt_shm.clock_mode) */
    uint64_t addr;           /* program address (anchor: CLOCK_REALTIME ns) */
    uint32_t len;            /* data bytes stored */
    uint32_t flags;          /* PT_RF_TRUNCATED */
};
#define PT_RF_TRUNCATED 1u
#define PT_REC_HDR      ((uint32_t)sizeof(struct pt_rec)) /* 32: the log's */

/* Chunk header; the chunk's records follow it. */
struct pt_chunk {
    _Atomic uint32_t next;      /* next chunk of the slot's chain; PT_NONE while open */
    _Atomic uint32_t next_free; /* free-pool link */
    uint32_t slot;
    uint32_t slot_gen;
    uint64_t seq;               /* global allocation order */
    _Atomic uint32_t nrec;      /* event records written */
    uint32_t pid;
    uint64_t thread;            /* pthread_t of the writer */
    _Atomic uint32_t end;       /* closed: offset of its END record */
    uint32_t pad0_;
    uint64_t ts0;               /* its first event's stamp: where its deltas start */
    uint8_t pad_[8];
};
#define PT_CHUNK_HDR ((uint32_t)sizeof(struct pt_chunk)) /* 64 */

/* FREE -> OWNED (a writer) -> ORPHAN (its thread exited) -> OWNED (adopted by a
 * new writer, chain kept) or RECLAIM (reader drained it) -> FREE. */
enum { PT_SLOT_FREE = 0, PT_SLOT_OWNED = 1, PT_SLOT_ORPHAN = 2, PT_SLOT_RECLAIM = 3 };

struct pt_slot {
    /* line 0: the writer's */
    _Atomic uint32_t state;
    _Atomic uint32_t gen;      /* bumped at each acquisition */
    uint32_t wchunk;           /* chunk being filled, PT_NONE before the first: published
                                  at each chunk switch, for an adopter and the reported
                                  size; the writer's cursor itself is private (record.c) */
    uint8_t unused_[28];
    uint64_t thread;
    _Atomic uint64_t stolen;   /* LOOP steals from this chain: (count << 40) | records */
    uint32_t pid;
    uint8_t pad0_[4];
    /* line 1: the reader's (and LOOP stealers', by CAS) */
    _Atomic uint64_t rhead;    /* (tag << 32) | chunk being read */
    uint64_t pid_start;        /* the writer process's start time (reap.c), set on acquisition */
    uint8_t pad1_[48];
};

struct pt_name {
    _Atomic uint32_t valid;
    char name[TRACE_EVENT_NAME_MAX + 1];
};

#define PT_STEAL_ONE   (UINT64_C(1) << 40)
#define PT_STEAL_RECS(v) ((v) & (PT_STEAL_ONE - 1))
#define PT_STEAL_COUNT(v) ((v) >> 40)

/* A process recording into the stream (other than through its creator's own
 * calls): the controller rings its inbox doorbell when start, stop, the
 * filter or shutdown change what it must record (inbox.c, remote.c). */
#define PT_MAX_MEMBERS 256u
/* A process that was to record into the stream but could not map it, or
 * found it inconsistent (doc/design.md, "Writers keep their cursor"): its
 * pid, start time and errno, written with pwrite (the stream may not be
 * mapped there) at index pid % PT_REFUSALS, for its controller to say why
 * it is not traced. Anyone may write these: a reader checks the pid it asks
 * about and the errno's range. */
#define PT_REFUSALS 16u
struct pt_refusal {
    uint32_t pid;
    int32_t err;
    uint64_t start;
};
struct pt_member {
    _Atomic uint32_t state;    /* 0 free, 1 being set, 2 valid */
    uint32_t pid;
    uint64_t start;
    int32_t inbox_fd;          /* its inbox memfd, as numbered in that process */
    uint32_t pad_;
};

enum { PT_ST_SUSPENDED = 0, PT_ST_RUNNING = 1, PT_ST_FULL = 2, PT_ST_SHUTDOWN = 3 };
enum { PT_CLOCK_TSC = 1, PT_CLOCK_REALTIME = 2 };

struct pt_shm {
    /* identity and geometry (written once at creation) */
    uint64_t magic;
    uint32_t version;
    uint32_t clock_mode;
    uint64_t total_size;
    uint32_t chunk_size;
    uint32_t nchunks;
    uint64_t slots_off, names_off, chunks_off;
    uint32_t creator_pid;
    uint32_t nslots;
    double ticks_per_ns;       /* calibration at creation */
    uint64_t tick0;            /* (tick0, mono0) origin for refining it */
    int64_t mono0_ns;
    int64_t real0_ns;          /* CLOCK_REALTIME at tick0 */
    /* attributes */
    char name[TRACE_NAME_MAX];
    int64_t create_sec, create_nsec;
    uint64_t stream_size, max_data, log_size;
    int32_t stream_policy, log_policy, inheritance, has_log;
    /* tracing other processes (doc/design.md, "Other processes") */
    uint64_t key;              /* random: tells this stream from any other */
    uint32_t target_pid;       /* the process the stream was created for */
    uint32_t ctrl_pid;         /* the controller (creator) */
    uint64_t target_start, ctrl_start; /* their start times (/proc/<pid>/stat) */
    int32_t ctrl_fd;           /* the stream's memfd in the controller */
    uint32_t watched;          /* 1: alive_fd names the controller's alive page */
    int32_t alive_fd;          /* its memfd number in the controller (remote.c) */
    uint32_t pad_alive_;
    uint32_t named;            /* 1: a /dev/shm object (pt_shm_name), not a memfd */
    uint32_t pad_named_;
    uint64_t alive_key;        /* named: the random part of the alive page's name */
    uint64_t cap;              /* bytes closed chunks may hold: max(stream-min-size, one
                                  chunk's room) (shm.c, "Geometry" in doc/design.md) */
    uint64_t block_ns;         /* blocking writers: how long one waits for room, 0: never
                                  (at most PT_BLOCK_MAX_NS; block.c) */
    /* Everything above is written once, by the creator, before any other
     * process sees the stream; the creator then keeps a private copy of this
     * first page (pt_shm_privatize), so that another process writing into
     * the stream cannot change the geometry the controller relies on.
     * Everything below is shared and may be written by any party. */
    /* the names table's lock: 0 or its holder's thread id (slock.c); never
     * a pointer, since anyone may write it */
    alignas(PT_PAGE0) _Atomic uint32_t names_lock;
    alignas(PT_CACHELINE) struct pt_member members[PT_MAX_MEMBERS];
    alignas(PT_CACHELINE) struct pt_refusal refusals[PT_REFUSALS];
    alignas(PT_CACHELINE) _Atomic uint32_t state;
    _Atomic uint32_t overrun;
    _Atomic uint32_t error_pending;
    _Atomic uint32_t slots_hwm;
    _Atomic uint64_t lost;
    _Atomic uint64_t full_ts;
    _Atomic uint64_t full_lost;  /* `lost` when the stream last became FULL */
    alignas(PT_CACHELINE) _Atomic uint64_t pool_top; /* (tag << 32) | chunk */
    _Atomic uint32_t free_count;
    _Atomic uint32_t fresh_next;   /* chunks never handed out start here */
    _Atomic uint64_t chunk_seq;
    _Atomic uint64_t used;     /* bytes written in closed chunks not yet back in the pool */
    alignas(PT_CACHELINE) _Atomic uint32_t wake_seq;
    _Atomic uint32_t waiters;
    _Atomic uint32_t flush_req;  /* FLUSH policy: writers ask the flusher to run */
    /* blocking writers (block.c; only with block_ns): consumers bump
     * room_seq for each chunk they give back and wake it when room_waiters
     * is not 0; consumer is the consuming thread's id (0: none yet) */
    alignas(PT_CACHELINE) _Atomic uint32_t room_seq;
    _Atomic uint32_t room_waiters;
    _Atomic uint32_t consumer;
    uint32_t pad_room_;
    _Atomic uint64_t stalled;  /* (1 << 32) | room_seq when a wait last timed out */
    alignas(PT_CACHELINE) _Atomic uint64_t filter[PT_ID_SPACE / 64];
};

/* The slots follow the header at a fixed offset. */
#define PT_SLOTS_OFF ((sizeof(struct pt_shm) + PT_CACHELINE - 1) / PT_CACHELINE * PT_CACHELINE)
static inline struct pt_slot *pt_slots(struct pt_shm *s)
{ return (struct pt_slot *)((char *)s + PT_SLOTS_OFF); }
static inline struct pt_name *pt_names(struct pt_shm *s)
{ return (struct pt_name *)((char *)s + s->names_off); }
static inline struct pt_chunk *pt_chunk(struct pt_shm *s, uint32_t i)
{ return (struct pt_chunk *)((char *)s + s->chunks_off + (uint64_t)i * s->chunk_size); }
/* The record at offset off of chunk c's records; its commit word. */
static inline unsigned char *pt_rec_at(struct pt_chunk *c, uint32_t off)
{ return (unsigned char *)c + PT_CHUNK_HDR + off; }
static inline _Atomic uint32_t *pt_commit_at(void *rec) { return (_Atomic uint32_t *)rec; }
static inline uint32_t pt_chunk_room(const struct pt_shm *s)
{ return s->chunk_size - PT_CHUNK_HDR - PT_END_BYTES; }
static inline uint64_t pt_chunk_data_off(const struct pt_shm *s, uint32_t i)
{ return s->chunks_off + (uint64_t)i * s->chunk_size + PT_CHUNK_HDR; }
/* How many consumed chunks the consumer keeps out of the pool (consume.c),
 * for a stream of that cap and chunk size; the geometry has as many more
 * chunks. */
static inline uint32_t pt_cool_chunks(uint64_t cap, uint32_t chunk_size)
{
    uint64_t bytes = cap / 4 < PT_COOL_BYTES ? cap / 4 : PT_COOL_BYTES;
    return (uint32_t)(bytes / chunk_size);
}
/* The cap: a writer closing a chunk of w written bytes first charges them
 * to `used`; the charge fails (the stream is full) if closed chunks would
 * then hold more than `cap` bytes. The pool gives them back (pool.c). */
static inline bool pt_used_charge(struct pt_shm *s, uint32_t w)
{
    uint64_t u = atomic_load_explicit(&s->used, memory_order_relaxed);
    do {
        if (u + w > s->cap)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&s->used, &u, u + w,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed));
    return true;
}
static inline void pt_used_refund(struct pt_shm *s, uint32_t w)
{
    uint64_t u = atomic_load_explicit(&s->used, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&s->used, &u, u > w ? u - w : 0,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}
/* Less than one chunk of the cap left: the next chunk closed may not fit
 * (full status of a LOOP stream, which then overwrites). */
static inline bool pt_used_full(struct pt_shm *s)
{
    return atomic_load_explicit(&s->used, memory_order_relaxed) + pt_chunk_room(s) > s->cap;
}
/* Policy FLUSH: the flusher is due once an eighth of the cap is in closed
 * chunks. Writers test this at each chunk switch (record.c) and the flusher
 * goes on while it holds (flusher.c); starting early leaves the other seven
 * eighths to absorb the flusher's stalls (the kernel allocating log pages,
 * being scheduled out). */
static inline bool pt_flush_due(struct pt_shm *s)
{
    return atomic_load_explicit(&s->used, memory_order_relaxed) > s->cap / 8;
}
_Static_assert(sizeof(struct pt_slot) == 2 * PT_CACHELINE, "slot layout");
/* The layout every process of a stream reads (PT_SHM_VERSION): sizes and
 * offsets that a change must show in the version. */
_Static_assert(sizeof(struct pt_rec) == 32 && offsetof(struct pt_rec, id) == 4 &&
               offsetof(struct pt_rec, ts) == 8 && offsetof(struct pt_rec, addr) == 16 &&
               offsetof(struct pt_rec, len) == 24 && offsetof(struct pt_rec, flags) == 28,
               "the log's record header layout (log_format.h)");
_Static_assert(sizeof(struct pt_chunk) == 64 && offsetof(struct pt_chunk, seq) == 16 &&
               offsetof(struct pt_chunk, end) == 40 && offsetof(struct pt_chunk, ts0) == 48,
               "chunk header layout");
_Static_assert(offsetof(struct pt_slot, rhead) == PT_CACHELINE,
               "a slot's reader line starts on its second cache line");
_Static_assert(sizeof(struct pt_name) == 4 + TRACE_EVENT_NAME_MAX + 1, "name table entry");
_Static_assert(offsetof(struct pt_shm, magic) == 0 && offsetof(struct pt_shm, version) == 8,
               "magic and version first: a reader checks them before anything else");

#endif
