/*
 * libtrace/xproc: tracing other processes (doc/design.md "Other processes"):
 * this process's inbox and how controllers elsewhere reach it, how a new
 * image finds the inbox it inherits, the controller's side, writers that died.
 *
 * Invariants:
 * - The inbox's first part, the want table, is at a link-time address: the
 *   recording path tests one byte of it (pt_want_load).
 * - Everything a controller or a member process wrote into an inbox is
 *   untrusted: descriptors it names are opened O_PATH first, entries are
 *   claimed by CAS and carry their claimer's pid.
 */
#ifndef PT_XPROC_H
#define PT_XPROC_H

/* Included by ../internal.h, which gives what this needs. */
struct pt_handle;

/* ---- procfs.c ---- */
int  pt_proc_stat(pid_t pid, char *state, uint64_t *start);
bool pt_proc_alive(pid_t pid, uint64_t start);
bool pt_task_alive(pid_t pid, uint32_t tid);      /* a thread of pid, not a zombie */
long pt_task_syscall(pid_t pid, uint32_t tid, uint64_t a[6]); /* blocked in: nr, or -1 */
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
/* Exported as __posixtrace_want (<posixtrace/record.h>, and <trace.h>, whose
 * posix_trace_event tests it inline: a program may hold the object itself, by
 * a copy relocation); named otherwise here, where its type is the inbox's. */
extern union pt_inbox_mem pt_inbox_obj __asm__("__posixtrace_want");
#define PT_INBOX (&pt_inbox_obj.ib)
#define pt_want  (pt_inbox_obj.ib.want.b)
static inline uint8_t pt_want_load(uint32_t id)
{
    return __atomic_load_n(&pt_want[id], __ATOMIC_RELAXED);
}
void pt_inbox_init(void);
/* inflight.c: the calls in flight (doc/design.md "Calls in flight") */
void pt_inflight_forget(int fd);                  /* a new image: the old one's cells */
void pt_inflight_clear(uint32_t entry);           /* a thread's end: its registry entry's */
struct pt_handle;
void pt_inflight_ended(struct pt_handle *h, pid_t pid); /* its kept cells recorded (mlock held) */
void pt_inflight_release(struct pt_handle *h);          /* the kept inboxes let go */
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

#endif
