/*
 * libtrace/api: the standard's functions (posix_trace_*: validate, then
 * dispatch) and the process-local objects they name: trace stream
 * identifiers (struct pt_handle), event names, attributes, event sets.
 *
 * Invariants:
 * - A trace stream identifier is valid only in the process that created it;
 *   a handle is referenced (pt_get) while used and destroyed after its last
 *   reference (pt_put).
 * - User event ids are 257..PT_USER_ID_MAX; a stream's name table is
 *   written under its names lock (slock.c), which others may scribble on.
 */
#ifndef PT_API_H
#define PT_API_H

/* Included by ../internal.h, which gives what this needs. */

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

/* ---- handle.c: trace stream identifiers of this process ---- */
#define PT_RD_SYNTH_MAX 8
struct pt_synth {             /* an event the reader reports itself */
    trace_event_id_t id;
    int64_t ns;               /* CLOCK_REALTIME */
    uint32_t len;
    unsigned char data[sizeof(trace_event_set_t)];
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
    struct pt_kept *kept;     /* members' inboxes kept mapped (xproc/inflight.c), or NULL */
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
    struct pt_dec *decs;      /* rs[i]'s decoder: PT_NSLOTS, allocated with the handle
                                 (not in the library's bss: 1 KiB each) */
    struct pt_cool cool;      /* chunks read, cooling before the pool (consume.c) */
    struct pt_synth synth[PT_RD_SYNTH_MAX];
    int nsynth, synth_pos;
    uint64_t lost_reported;   /* lost events already reported in OVERFLOW events */
    int64_t loss_seen_ns;     /* pt_monotonic_ns() at the last loss check (gaps.c), 0: none */
    uint64_t status_lost;     /* the lost count of the log's STATUS blocks (gaps.c) */
    int stop_reported;        /* STOP(auto) reported for the current fill */
    double ticks_per_ns;
    int64_t last_ns;          /* timestamp of the last event reported */
    uint64_t rnow;            /* the reader's last look at the clock, ticks (reader.c) */
    /* event type list cursor */
    uint32_t typelist_pos;
};

/* Look up trid; on success the handle is referenced: release with pt_put. */
int  pt_get(trace_id_t trid, struct pt_handle **h);
void pt_put(struct pt_handle *h);
int  pt_handle_new(struct pt_shm *s, size_t size, int fd, int att, trace_id_t *trid,
                   struct pt_handle **out);
int  pt_get_active(trace_id_t trid, struct pt_handle **h);
/* A controller's system event into h's stream (stream.c; ring.h PT_REC_*). */
void pt_ctl_event(struct pt_handle *h, trace_event_id_t id, const void *d, size_t len,
                  uint64_t addr, unsigned flags);
int  pt_handle_begin_destroy(struct pt_handle *h);
void pt_handle_wait_last(struct pt_handle *h);
void pt_handle_destroy(struct pt_handle *h);      /* after shutdown logic */
int  pt_handle_count(void);
bool pt_handles_lock_try(void);                   /* then pt_handles_atfork_child() drops it */
void pt_handles_atfork_child(void);

/* ---- stream.c ---- */
void pt_stream_status(struct pt_handle *h, struct posix_trace_status_info *st, bool reset);
void pt_stream_filter(struct pt_shm *s, trace_event_set_t *f);

/* ---- syscalls_table.c: the system-call events' descriptors ---- */
struct posixtrace_event_desc;
const struct posixtrace_event_desc *pt_syscall_desc(unsigned nr); /* NULL: no such call */

#endif
