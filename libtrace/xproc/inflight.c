/*
 * Calls in flight (doc/design.md "Calls in flight"): each thread of a traced
 * process publishes the call it is in, in a cell of its process's inbox
 * (inbox_layout.h, PT_INBOX_CELLS_OFF); a controller ending its trace reads
 * every member's cells and records each call still in progress as the
 * event posixtrace:call_unfinished (posixtrace_stream_unfinished); a thread
 * with no call in its cell but blocked in a system call (begun before the
 * trace attached, or made inside libc) as that system call's event, read
 * from /proc/PID/task/TID/syscall.
 *
 * The cell's writer is its thread alone (the shim, preload/shim.h): seq odd,
 * the fields, seq even (release); the reader copies the cell between two
 * reads of seq (acquire) and keeps the copy only if both are the same even
 * value. Everything read is untrusted (the target's memory): the event id is
 * checked against the shim's ids, the argument count bounded.
 */
#include "../internal.h"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdlib.h>
#include <posixtrace/control.h>
#include <posixtrace/events.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* <posixtrace/record.h>: the calling thread's cell (its registry entry's). */
PT_API struct posixtrace_inflight_cell *posixtrace_inflight_cell(void)
{
    struct pt_thread *t = pt_thread_self();
    if (t == NULL || t == &pt_threads[PT_MAX_THREADS - 1]) /* the shared fallback entry */
        return NULL;
    return &pt_inbox_cells(&pt_inbox_obj)[t - pt_threads];
}

/* A thread's end: its registry entry (and so its cell) goes to the next. */
void pt_inflight_clear(uint32_t entry)
{
    if (entry >= PT_MAX_THREADS - 1)
        return;
    struct posixtrace_inflight_cell *c = &pt_inbox_cells(&pt_inbox_obj)[entry];
    if (__atomic_load_n(&c->id, __ATOMIC_RELAXED) != 0)
        __atomic_store_n(&c->id, 0, __ATOMIC_RELEASE);
}

/* A new image keeps its inbox from before the exec: the old image's cells
 * are given back to the memfd as zeros (no page touched, no page kept). */
void pt_inflight_forget(int fd)
{
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, PT_INBOX_CELLS_OFF,
                  (off_t)PT_MAX_THREADS * sizeof(struct posixtrace_inflight_cell)) != 0)
        memset(pt_inbox_cells(&pt_inbox_obj), 0,
               PT_MAX_THREADS * sizeof(struct posixtrace_inflight_cell));
}

/* A consistent copy of cell c (seqlock), or false (being written, torn). */
static bool cell_copy(const struct posixtrace_inflight_cell *c, struct posixtrace_inflight_cell *out)
{
    for (int tries = 0; tries < 4; tries++) {
        uint32_t s1 = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
        if (s1 & 1)
            continue;
        out->id = __atomic_load_n(&c->id, __ATOMIC_RELAXED);
        if (out->id == 0)
            return false;
        out->tid = __atomic_load_n(&c->tid, __ATOMIC_RELAXED);
        out->nargs = __atomic_load_n(&c->nargs, __ATOMIC_RELAXED);
        out->t0 = __atomic_load_n(&c->t0, __ATOMIC_RELAXED);
        for (unsigned i = 0; i < POSIXTRACE_INFLIGHT_ARGS; i++)
            out->arg[i] = __atomic_load_n(&c->arg[i], __ATOMIC_RELAXED);
        atomic_thread_fence(memory_order_acquire);
        if (__atomic_load_n(&c->seq, __ATOMIC_RELAXED) == s1)
            return true;
    }
    return false;
}

/* The call's start in CLOCK_REALTIME ns (the stream's clock; 0: unknown). */
static int64_t start_ns(const struct pt_shm *s, uint64_t t0, int64_t now)
{
    if (t0 == 0)
        return now;
    if (s->clock_mode == PT_CLOCK_REALTIME)
        return (int64_t)t0 <= now ? (int64_t)t0 : now;
    int64_t pair_ns;
    uint64_t ticks = pt_tsc_pair(CLOCK_REALTIME, &pair_ns);
    if (!(s->ticks_per_ns > 0.0) || t0 > ticks)
        return now;
    int64_t ns = pt_ns_after(pair_ns, -(int64_t)(ticks - t0), s->ticks_per_ns);
    return ns <= now ? ns : now;
}

struct unfinished_payload {
    struct posixtrace_call_hdr hdr;
    uint64_t pid, event, nargs;
    uint64_t arg[POSIXTRACE_INFLIGHT_ARGS];
};

static bool filtered_out(const struct pt_handle *h, unsigned id)
{
    return (atomic_load(&h->shm->filter[id >> 6]) >> (id & 63)) & 1;
}

/* posixtrace:call_unfinished for the call `id` of thread tid of pid, begun
 * at t (CLOCK_REALTIME ns; now: unknown), with its first fixed fields. */
static void record_unfinished(struct pt_handle *h, pid_t pid, uint32_t tid, unsigned id,
                              int64_t t, int64_t now, const uint64_t *arg, unsigned nargs)
{
    struct unfinished_payload p = {
        .hdr = { .version = POSIXTRACE_PAYLOAD_VERSION,
                 .hdr_size = sizeof(struct posixtrace_call_hdr),
                 .duration_ns = (uint64_t)(now - t),
                 .tid = tid,
                 .flags = POSIXTRACE_CALL_NORETURN },
        .pid = (uint64_t)(int64_t)pid,
        .event = id,
        .nargs = nargs < POSIXTRACE_INFLIGHT_ARGS ? nargs : POSIXTRACE_INFLIGHT_ARGS,
    };
    for (unsigned k = 0; k < p.nargs; k++)
        p.arg[k] = arg[k];
    /* no program address: the call's is not published */
    pt_ctl_event(h, POSIXTRACE_EV_CALL_UNFINISHED, &p, sizeof p, 0, PT_REC_FORCE | PT_REC_NOFILTER);
}

/* The calls in flight in the cells of inbox ib of pid, each recorded;
 * seen[] (if not NULL) gets the threads that had one (recorded or filtered
 * out). alive: only threads still there (the process runs); else pid died
 * inside its calls (posixtrace_stream_process_end). */
static unsigned inbox_cells(struct pt_handle *h, pid_t pid, struct pt_inbox *ib, bool alive,
                            uint32_t *seen, unsigned *nseen)
{
    unsigned found = 0;
    const struct posixtrace_inflight_cell *cells = pt_inbox_cells(ib);
    for (uint32_t i = 0; i < PT_MAX_THREADS; i++) {
        struct posixtrace_inflight_cell c;
        if (!cell_copy(&cells[i], &c) || c.id < PT_SYS_FIRST || c.id >= PT_SYS_EVENTS ||
            posixtrace_event_desc(c.id) == NULL || (alive && !pt_task_alive(pid, c.tid)))
            continue;
        if (seen != NULL)
            seen[(*nseen)++] = c.tid;
        if (filtered_out(h, c.id))
            continue; /* the call's own type is filtered out */
        int64_t now = pt_realtime_ns();
        uint64_t arg[POSIXTRACE_INFLIGHT_ARGS];
        for (unsigned k = 0; k < POSIXTRACE_INFLIGHT_ARGS; k++)
            arg[k] = (uint64_t)c.arg[k];
        record_unfinished(h, pid, c.tid, c.id, start_ns(h->shm, c.t0, now), now, arg, c.nargs);
        found++;
    }
    return found;
}

/* mb is a valid member of the stream, another process than this one. */
static bool other_member(const struct pt_member *mb)
{
    return atomic_load(&mb->state) == 2 && mb->pid != 0 &&
           !(mb->pid == pt_pid && mb->start == pt_start);
}

/* A member's inbox kept mapped (posixtrace_stream_watch, below). */
struct pt_kept {
    uint32_t pid;
    uint64_t start;
    struct pt_inbox *ib;
};

/* The inbox of process (pid, start) that h keeps mapped, or NULL. */
static struct pt_inbox *kept_inbox(const struct pt_handle *h, uint32_t pid, uint64_t start)
{
    for (unsigned k = 0; h->kept != NULL && k < PT_MAX_MEMBERS; k++)
        if (h->kept[k].ib != NULL && h->kept[k].pid == pid && h->kept[k].start == start)
            return h->kept[k].ib;
    return NULL;
}

static unsigned member_cells(struct pt_handle *h, const struct pt_member *mb, uint32_t *seen,
                             unsigned *nseen)
{
    pid_t pid = (pid_t)mb->pid;
    struct pt_inbox *ib = kept_inbox(h, mb->pid, mb->start);
    if (ib != NULL) /* mapped already: no second mapping */
        return inbox_cells(h, pid, ib, true, seen, nseen);
    if (pt_remote_open_inbox(pid, mb->start, mb->inbox_fd, &ib) != 0)
        return 0;
    unsigned found = inbox_cells(h, pid, ib, true, seen, nseen);
    pt_remote_close_inbox(ib);
    return found;
}

/* A thread with no cell blocked in a system call (a call begun before the
 * trace attached, -p; one libc makes inside, such as a futex wait): the
 * system call's event (syscall:NAME), from /proc/PID/task/TID/syscall, its
 * fixed arguments in order, its start unknown (the time the trace ended). */
static unsigned blocked_tasks(struct pt_handle *h, pid_t pid, const uint32_t *seen, unsigned nseen)
{
    char path[40];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return 0;
    unsigned found = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        uint32_t tid = (uint32_t)strtoul(de->d_name, NULL, 10);
        unsigned k = 0;
        while (k < nseen && seen[k] != tid)
            k++;
        uint64_t a[6], arg[POSIXTRACE_INFLIGHT_ARGS];
        long nr = tid != 0 && k == nseen ? pt_task_syscall(pid, tid, a) : -1;
        unsigned id = PT_SYSCALL_ID_BASE + (unsigned)nr;
        const struct posixtrace_event_desc *ds;
        if (nr < 0 || nr > (long)PT_SYSCALL_NR_MAX ||
            (ds = posixtrace_event_desc(id)) == NULL || filtered_out(h, id))
            continue;
        unsigned n = 0; /* field i is argument i (syscalls.def) */
        for (unsigned i = 0; i < ds->nfields && i < 6 && n < POSIXTRACE_INFLIGHT_ARGS; i++)
            if (ds->fields[i].type < POSIXTRACE_F_VARIABLE)
                arg[n++] = a[i];
        int64_t now = pt_realtime_ns();
        record_unfinished(h, pid, tid, id, now, now, arg, n);
        found++;
    }
    closedir(d);
    return found;
}

/* <posixtrace/control.h> */
PT_API int posixtrace_stream_unfinished(trace_id_t trid, size_t *n)
{
    struct pt_handle *h;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    size_t found = 0;
    uint32_t seen[PT_MAX_THREADS];
    pthread_mutex_lock(&h->mlock);
    for (unsigned m = 0; m < PT_MAX_MEMBERS; m++) {
        const struct pt_member *mb = &h->shm->members[m];
        if (!other_member(mb))
            continue;
        unsigned nseen = 0;
        found += member_cells(h, mb, seen, &nseen);
        found += blocked_tasks(h, (pid_t)mb->pid, seen, nseen);
    }
    pthread_mutex_unlock(&h->mlock);
    pt_put(h);
    if (n != NULL)
        *n = found;
    return 0;
}

/* <posixtrace/control.h> */
PT_API int posixtrace_stream_blocked(trace_id_t trid, pid_t pid, size_t *n)
{
    struct pt_handle *h;
    if (pid <= 0)
        return EINVAL;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    size_t found = 0;
    bool member = false;
    pthread_mutex_lock(&h->mlock);
    for (unsigned m = 0; m < PT_MAX_MEMBERS && !member; m++)
        member = atomic_load(&h->shm->members[m].state) == 2 &&
                 h->shm->members[m].pid == (uint32_t)pid;
    if (!member)
        found = blocked_tasks(h, pid, NULL, 0);
    pthread_mutex_unlock(&h->mlock);
    pt_put(h);
    if (n != NULL)
        *n = found;
    return 0;
}

/* ---- members' inboxes kept mapped (posixtrace_stream_watch): a process
 * killed inside a call takes its inbox's memfd with it unless a controller
 * maps it; mapped, its cells outlive it, and its end shows the calls it died
 * in, as strace shows them before "+++ killed by SIGINT +++". ---- */
static void keep_member(struct pt_handle *h, const struct pt_member *mb)
{
    for (unsigned k = 0; k < PT_MAX_MEMBERS; k++) {
        if (h->kept[k].ib != NULL)
            continue;
        if (pt_remote_open_inbox((pid_t)mb->pid, mb->start, mb->inbox_fd, &h->kept[k].ib) != 0)
            h->kept[k].ib = NULL;
        h->kept[k].pid = mb->pid;
        h->kept[k].start = mb->start;
        return;
    }
}

/* <posixtrace/control.h> */
PT_API int posixtrace_stream_watch(trace_id_t trid)
{
    struct pt_handle *h;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&h->mlock);
    if (h->kept == NULL)
        h->kept = calloc(PT_MAX_MEMBERS, sizeof *h->kept);
    /* let go of processes gone and reaped (ended normally: a killed child of
     * the controller stays a zombie until its end is recorded) */
    for (unsigned k = 0; h->kept != NULL && k < PT_MAX_MEMBERS; k++)
        if (h->kept[k].ib != NULL && kill((pid_t)h->kept[k].pid, 0) != 0 && errno == ESRCH) {
            pt_remote_close_inbox(h->kept[k].ib);
            h->kept[k].ib = NULL;
        }
    for (unsigned m = 0; h->kept != NULL && m < PT_MAX_MEMBERS; m++) {
        const struct pt_member *mb = &h->shm->members[m];
        if (other_member(mb) && kept_inbox(h, mb->pid, mb->start) == NULL)
            keep_member(h, mb);
    }
    rc = h->kept != NULL ? 0 : ENOMEM;
    pthread_mutex_unlock(&h->mlock);
    pt_put(h);
    return rc;
}

/* pid ended (under h->mlock, before its process_end is recorded): the calls
 * its kept inbox shows in flight, recorded; the inbox let go. */
void pt_inflight_ended(struct pt_handle *h, pid_t pid)
{
    for (unsigned k = 0; h->kept != NULL && k < PT_MAX_MEMBERS; k++) {
        struct pt_kept *e = &h->kept[k];
        if (e->ib == NULL || e->pid != (uint32_t)pid)
            continue;
        inbox_cells(h, pid, e->ib, false, NULL, NULL);
        pt_remote_close_inbox(e->ib);
        e->ib = NULL;
    }
}

/* The handle goes: every kept inbox let go. */
void pt_inflight_release(struct pt_handle *h)
{
    for (unsigned k = 0; h->kept != NULL && k < PT_MAX_MEMBERS; k++)
        if (h->kept[k].ib != NULL)
            pt_remote_close_inbox(h->kept[k].ib);
    free(h->kept);
    h->kept = NULL;
}
