/*
 * Trace controller operations on an active stream: create, start, stop,
 * shutdown, clear, filter, attributes and status.
 */
#include "../internal.h"
#include "../log/logread.h"
#include "../log/logwrite.h"
#include "../ring/pt_bounds.h"
#include <posixtrace/control.h>
#include <posixtrace/events.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

static int attr_ok(const trace_attr_t *a)
{
    return a->__magic == PT_ATTR_MAGIC && a->__stream_size > 0 &&
           a->__stream_size <= PT_MAX_STREAM_SIZE && a->__max_data_size <= PT_MAX_MAX_DATA &&
           pt_attr_block_ns(a) <= PT_BLOCK_MAX_NS;
}

/* The process a new stream is for: this one, or another (remote). */
struct pt_target {
    int remote;
    pid_t pid;
    uint64_t start;
    uid_t uid;                /* its owner (real uid; the /proc entry's group) */
    gid_t gid;
    struct pt_inbox *ib;      /* its inbox; NULL: the library is not loaded in it */
};

static int check_target(pid_t pid, struct pt_target *t)
{
    memset(t, 0, sizeof *t);
    if (pid == 0 || (uint32_t)pid == pt_pid)
        return 0;
    if (pid < 0)
        return ESRCH;
    if (kill(pid, 0) != 0)
        return errno == EPERM ? EPERM : ESRCH;
    t->remote = 1;
    t->pid = pid;
    int rc = pt_remote_find_inbox(pid, &t->start, &t->ib);
    struct stat st;
    char path[32];
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    if (rc == 0 && stat(path, &st) == 0) {
        t->uid = st.st_uid; /* its effective ids */
        t->gid = st.st_gid;
    }
    if (rc == ENOENT) { /* no libposixtrace in it: it records nothing (semantics.md) */
        t->ib = NULL;
        rc = 0;
    }
    return rc;
}

/* Processes other than this one may record into s (a forked child, or the
 * target): they must learn that this controller died. */
static int watch(struct pt_shm *s, const struct pt_target *t)
{
    if (!t->remote && s->inheritance != POSIX_TRACE_INHERITED)
        return 0;
    int fd = pt_keeper_alive(NULL);
    if (fd < 0 || (s->named && pt_keeper_alive_named(&s->alive_key) != 0))
        return EAGAIN;
    s->alive_fd = fd;
    s->watched = 1;
    return 0;
}

static int attach_target(struct pt_shm *s, size_t size, int mfd, const struct pt_target *t,
                         int *att)
{
    *att = -1;
    if (!t->remote) {
        pt_names_lock_local();
        pt_names_init_stream(s);
        int idx = pt_inbox_add_own(s, size, mfd);
        pt_names_unlock_local();
        if (idx < 0)
            return EAGAIN;
        if (s->watched)
            pt_keeper_alive(&pt_att[idx].alive); /* for forked children */
        *att = idx;
        return 0;
    }
    pt_names_init_sys(s);
    if (t->ib != NULL)
        pt_names_copy_from(s, t->ib);
    return t->ib != NULL ? pt_remote_post(t->ib, s, mfd, size) : 0;
}

/* The header's first page is complete once the target is known and the
 * stream watched: our copy becomes private. A named object (another user's
 * target) is given to the target only then, since the target can shrink
 * it (fault.c); a memfd is sealed and privatized after posting. */
static int complete_header(struct pt_shm *s, int mfd, const struct pt_target *t, bool named)
{
    if (t->remote) {
        s->target_pid = (uint32_t)t->pid;
        s->target_start = t->start;
    }
    int rc = watch(s, t);
    if (rc == 0 && named) {
        struct pt_shm_owner o = { t->uid, t->gid };
        rc = pt_shm_privatize(s);
        if (rc == 0)
            rc = pt_shm_give(mfd, &o);
    }
    return rc;
}

/* Create a stream traced by this process; with a log when fd >= 0. */
static int create_stream(const trace_attr_t *attr, int fd, const struct pt_target *t,
                         trace_id_t *trid)
{
    if (pt_handle_count() >= TRACE_SYS_MAX)
        return EAGAIN;
    struct pt_shm *s;
    size_t size;
    /* a target of another user cannot open our memfd through /proc */
    struct pt_shm_owner o = { t->uid, t->gid };
    bool other = t->remote && t->ib != NULL && t->uid != geteuid();
    int att = -1, mfd, rc = pt_shm_create(attr, fd >= 0, other ? &o : NULL, &s, &size, &mfd);
    if (rc != 0)
        return rc;
    s->ctrl_fd = mfd;
    rc = complete_header(s, mfd, t, other);
    if (rc == 0)
        rc = attach_target(s, size, mfd, t, &att);
    if (rc == 0 && !other)
        rc = pt_shm_privatize(s); /* the header is complete: keep our copy */
    if (rc != 0) {
        int named = s->named, watched = s->watched;
        uint64_t key = s->key;
        atomic_store(&s->state, PT_ST_SHUTDOWN); /* a posted target lets go */
        if (att < 0 || pt_attach_remove(att)) /* else a writer may still touch it */
            pt_shm_unmap(s, size);
        pt_shm_close_backing(named, key, mfd);
        if (named && watched)
            pt_keeper_alive_named_done();
        return rc;
    }
    struct pt_handle *h = NULL;
    if ((rc = pt_handle_new(s, size, mfd, att, trid, &h)) != 0) {
        atomic_store(&s->state, PT_ST_SHUTDOWN); /* a posted target lets go */
        if (att >= 0)
            pt_attach_remove(att);
    }
    if (rc == 0 && fd >= 0) {
        rc = pt_flush_open(h, fd);
        if (rc == 0 && s->stream_policy == POSIX_TRACE_FLUSH)
            rc = pt_flush_start_thread(h);
        if (rc != 0) {
            if (h->log != NULL)
                pt_flush_close(h);
            atomic_store(&s->state, PT_ST_SHUTDOWN);
            if (att >= 0)
                pt_attach_remove(att);
            pt_handle_destroy(h);
        }
    }
    if (rc != 0) {
        int named = s->named, watched = s->watched;
        uint64_t key = s->key;
        pt_shm_unmap(s, size);
        pt_shm_close_backing(named, key, mfd);
        if (named && watched)
            pt_keeper_alive_named_done();
    }
    return rc;
}

static int create_for(pid_t pid, const trace_attr_t *attr, int fd, trace_id_t *trid)
{
    struct pt_target t;
    int rc = check_target(pid, &t);
    if (rc == 0)
        rc = create_stream(attr, fd, &t, trid);
    if (t.ib != NULL)
        pt_remote_close_inbox(t.ib);
    return rc;
}

PT_API int posix_trace_create(pid_t pid, const trace_attr_t *restrict attr,
                              trace_id_t *restrict trid)
{
    trace_attr_t def;
    if (trid == NULL)
        return EINVAL;
    if (attr == NULL) {
        posix_trace_attr_init(&def);
        attr = &def;
    }
    if (!attr_ok(attr) || attr->__stream_policy == POSIX_TRACE_FLUSH)
        return EINVAL;
    return create_for(pid, attr, -1, trid);
}

PT_API int posix_trace_create_withlog(pid_t pid, const trace_attr_t *restrict attr, int fd,
                                      trace_id_t *restrict trid)
{
    trace_attr_t a;
    if (trid == NULL)
        return EINVAL;
    if (attr == NULL)
        posix_trace_attr_init(&a);
    else
        a = *attr;
    if (!attr_ok(&a))
        return EINVAL;
    if (!(a.__flags & PT_ATTR_POLICY_SET))
        a.__stream_policy = POSIX_TRACE_FLUSH; /* the default with a log */
    int rc = pt_logw_check_fd(fd, a.__log_policy);
    return rc != 0 ? rc : create_for(pid, &a, fd, trid);
}

PT_API int posix_trace_flush(trace_id_t trid)
{
    struct pt_handle *h;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    rc = h->log != NULL ? pt_flush_now(h) : EINVAL;
    pt_put(h);
    return rc;
}

/* The stream's filter as it is now (START's data, FILTER's, get_filter). */
void pt_stream_filter(struct pt_shm *s, trace_event_set_t *f)
{
    for (unsigned w = 0; w < PT_ID_SPACE / 64; w++)
        f->__bits[w] = atomic_load_explicit(&s->filter[w], memory_order_relaxed);
}

/* A controller call's system event: through this process's attachment when
 * it traces itself, else through the controller's own slot. */
void pt_ctl_event(struct pt_handle *h, trace_event_id_t id, const void *d, size_t len,
                  uint64_t addr, unsigned flags)
{
    if (h->att >= 0)
        pt_record(h->shm, h->att, id, d, len, addr, flags);
    else
        pt_record_ctl(h->shm, &h->ctl_slot, &h->ctl_cur, h->shm->target_pid, id, d, len, addr,
                      flags);
}

/* The state or filter changed: this process's copies, then everyone else's. */
static void changed(struct pt_handle *h)
{
    if (h->att >= 0) {
        atomic_store(&pt_att[h->att].running, atomic_load(&h->shm->state) == PT_ST_RUNNING);
        pt_want_update();
    }
    pt_remote_ring_members(h->shm);
}

PT_API int posix_trace_start(trace_id_t trid)
{
    struct pt_handle *h;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    struct pt_shm *s = h->shm;
    pthread_mutex_lock(&h->mlock);
    if (atomic_load(&s->state) == PT_ST_SUSPENDED) {
        trace_event_set_t f;
        pt_stream_filter(s, &f);
        pt_ctl_event(h, POSIX_TRACE_START, &f, sizeof f,
                  (uint64_t)(uintptr_t)__builtin_return_address(0), PT_REC_FORCE);
        uint32_t susp = PT_ST_SUSPENDED;
        atomic_compare_exchange_strong(&s->state, &susp, PT_ST_RUNNING);
        changed(h);
    }
    pthread_mutex_unlock(&h->mlock);
    pt_put(h);
    return 0;
}

/* <posixtrace/control.h>: a process's end, from the controller. */
PT_API int posixtrace_stream_process_end(trace_id_t trid, pid_t pid, int wstatus)
{
    struct pt_handle *h;
    struct {
        struct posixtrace_call_hdr hdr;
        uint64_t pid, status;
    } p = { .hdr = { .version = POSIXTRACE_PAYLOAD_VERSION,
                     .hdr_size = sizeof(struct posixtrace_call_hdr),
                     .tid = 0, /* no thread of the controller's: unknown */
                     .flags = POSIXTRACE_CALL_NORETURN },
            .pid = (uint64_t)(int64_t)pid,
            .status = (uint64_t)(int64_t)wstatus };
    if (pid <= 0)
        return EINVAL;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&h->mlock);
    pt_inflight_ended(h, pid); /* the calls it was in, before its end */
    pt_ctl_event(h, POSIXTRACE_EV_PROCESS_END, &p, sizeof p,
              (uint64_t)(uintptr_t)__builtin_return_address(0), PT_REC_FORCE);
    pthread_mutex_unlock(&h->mlock);
    pt_put(h);
    return 0;
}

static void stop_stream(struct pt_handle *h, uint64_t addr)
{
    struct pt_shm *s = h->shm;
    pthread_mutex_lock(&h->mlock);
    uint32_t run = PT_ST_RUNNING;
    if (atomic_compare_exchange_strong(&s->state, &run, PT_ST_SUSPENDED)) {
        pt_block_release(s); /* writers waiting for room give up */
        changed(h);
        int aut = 0;
        pt_ctl_event(h, POSIX_TRACE_STOP, &aut, sizeof aut, addr, PT_REC_FORCE);
    }
    pthread_mutex_unlock(&h->mlock);
}

PT_API int posix_trace_stop(trace_id_t trid)
{
    struct pt_handle *h;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    stop_stream(h, (uint64_t)(uintptr_t)__builtin_return_address(0));
    pt_put(h);
    return 0;
}


PT_API int posix_trace_shutdown(trace_id_t trid)
{
    struct pt_handle *h;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    if (pt_handle_begin_destroy(h) != 0) {
        pt_put(h);
        return EINVAL;
    }
    struct pt_shm *s = h->shm;
    /* a full stream is read to the end and restarts (its losses reported)... */
    if (h->log != NULL && atomic_load(&s->state) == PT_ST_FULL)
        pt_flush_run(h, true, false);
    /* ...then "as if posix_trace_stop() had been invoked", then the last flush */
    stop_stream(h, (uint64_t)(uintptr_t)__builtin_return_address(0));
    if (h->att >= 0) {
        atomic_store(&pt_att[h->att].running, 0);
        pt_want_update();
    }
    atomic_store(&s->state, PT_ST_SHUTDOWN);
    pt_block_release(s);
    pt_remote_ring_members(s); /* the other processes let go of it */
    atomic_fetch_add(&s->wake_seq, 1);
    pt_futex_wake(&s->wake_seq, 1 << 30);
    pt_handle_wait_last(h);
    if (h->log != NULL)
        rc = pt_flush_close(h);
    bool quiet = h->att < 0 || pt_attach_remove(h->att);
    int named = s->named;
    uint64_t key = s->key;
    if (quiet) /* else a writer still inside may touch it: leave it mapped */
        pt_shm_unmap(s, h->map_size);
    pt_shm_close_backing(named, key, h->fd);
    if (named)
        pt_keeper_alive_named_done();
    pt_handle_destroy(h);
    return rc == ENOSPC || rc == EFBIG ? rc : 0;
}

PT_API int posix_trace_clear(trace_id_t trid)
{
    struct pt_handle *h;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    if (h->log != NULL) {
        rc = pt_flush_clear(h); /* the flusher's positions, under its lock */
    } else {
        pthread_mutex_lock(&h->rlock);
        pt_reader_drain(h);
        pthread_mutex_unlock(&h->rlock);
    }
    pt_put(h);
    return rc == ENOSPC || rc == EFBIG ? rc : 0;
}

/* The memory reserved for event records now (posix_trace_attr_getlogsize.3p.txt:
 * "the current total memory size reserved for system and user trace events"):
 * the cap on closed chunks, plus the room of each writer's open chunk. */
static size_t reserved_now(struct pt_shm *s)
{
    uint64_t n = 0;
    uint32_t hwm = atomic_load(&s->slots_hwm);
    for (uint32_t i = 0; i < hwm && i < PT_NSLOTS; i++) {
        struct pt_slot *sl = &pt_slots(s)[i];
        uint32_t st = atomic_load_explicit(&sl->state, memory_order_acquire);
        if ((st == PT_SLOT_OWNED || st == PT_SLOT_ORPHAN) && sl->wchunk < s->nchunks)
            n++;
    }
    return (size_t)(s->cap + n * pt_chunk_room(s));
}

PT_API int posix_trace_get_attr(trace_id_t trid, trace_attr_t *a)
{
    struct pt_handle *h;
    int rc = pt_get(trid, &h);
    if (rc != 0)
        return rc;
    if (a == NULL) {
        pt_put(h);
        return EINVAL;
    }
    if (h->kind == PT_H_PRERECORDED) {
        pt_logr_attr(h->logr, a);
        pt_put(h);
        return 0;
    }
    struct pt_shm *s = h->shm;
    posix_trace_attr_init(a);
    a->__flags |= PT_ATTR_POLICY_SET;
    memcpy(a->__name, s->name, sizeof a->__name);
    a->__name[TRACE_NAME_MAX - 1] = '\0';
    a->__create_time.tv_sec = (time_t)s->create_sec;
    a->__create_time.tv_nsec = (long)s->create_nsec;
    a->__stream_size = reserved_now(s);
    a->__max_data_size = s->max_data;
    a->__log_size = s->log_size;
    a->__stream_policy = s->stream_policy;
    a->__log_policy = s->log_policy;
    a->__inheritance = s->inheritance;
    a->__block_sec = (int)(s->block_ns / 1000000000u);
    a->__block_nsec = (int)(s->block_ns % 1000000000u);
    pt_put(h);
    return 0;
}

void pt_stream_status(struct pt_handle *h, struct posix_trace_status_info *st, bool reset)
{
    struct pt_shm *s = h->shm;
    uint32_t state = atomic_load(&s->state);
    st->posix_stream_status = state == PT_ST_RUNNING ? POSIX_TRACE_RUNNING
                                                     : POSIX_TRACE_SUSPENDED;
    /* FULL while an UNTIL_FULL stream is stopped for lack of space, or while
     * less than a chunk's room is left under the cap (a LOOP stream overwrites) */
    bool full = state == PT_ST_FULL || pt_used_full(s);
    st->posix_stream_full_status = full ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL;
    uint32_t ovr = reset ? atomic_exchange(&s->overrun, 0) : atomic_load(&s->overrun);
    st->posix_stream_overrun_status = ovr ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
    st->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
    st->posix_stream_flush_error = 0;
    st->posix_log_overrun_status = POSIX_TRACE_NO_OVERRUN;
    st->posix_log_full_status = POSIX_TRACE_NOT_FULL;
    if (h->log != NULL)
        pt_flush_status(h, st, reset);
}

PT_API int posix_trace_get_status(trace_id_t trid, struct posix_trace_status_info *st)
{
    struct pt_handle *h;
    int rc = pt_get(trid, &h);
    if (rc != 0)
        return rc;
    if (st == NULL)
        rc = EINVAL;
    else if (h->kind == PT_H_PRERECORDED)
        pt_logr_status(h->logr, st); /* the completed stream's; never reset */
    else
        pt_stream_status(h, st, true);
    pt_put(h);
    return rc;
}

/* ---- pre-recorded streams (Trace Log option) ---- */

PT_API int posix_trace_open(int fd, trace_id_t *trid)
{
    if (trid == NULL)
        return EINVAL;
    struct pt_logr *l;
    int rc = pt_logr_open(fd, &l);
    if (rc != 0)
        return rc;
    struct pt_handle *h;
    rc = pt_handle_new(NULL, 0, -1, -1, trid, &h);
    if (rc != 0) {
        pt_logr_close(l);
        return rc;
    }
    h->kind = PT_H_PRERECORDED;
    h->logr = l;
    return 0;
}

static int get_prerecorded(trace_id_t trid, struct pt_handle **h)
{
    int rc = pt_get(trid, h);
    if (rc == 0 && (*h)->kind != PT_H_PRERECORDED) {
        pt_put(*h);
        return EINVAL;
    }
    return rc;
}

PT_API int posix_trace_rewind(trace_id_t trid)
{
    struct pt_handle *h;
    int rc = get_prerecorded(trid, &h);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&h->rlock);
    pt_logr_rewind(h->logr);
    pthread_mutex_unlock(&h->rlock);
    pt_put(h);
    return 0;
}

PT_API int posix_trace_close(trace_id_t trid)
{
    struct pt_handle *h;
    int rc = get_prerecorded(trid, &h);
    if (rc != 0)
        return rc;
    if (pt_handle_begin_destroy(h) != 0) {
        pt_put(h);
        return EINVAL;
    }
    pt_handle_wait_last(h);
    pt_logr_close(h->logr);
    pt_handle_destroy(h);
    return 0;
}

/* <posixtrace/log.h> */
PT_API int posixtrace_log_damage(trace_id_t trid, long long *bad_blocks, long long *first_offset)
{
    struct pt_handle *h;
    if (bad_blocks == NULL || first_offset == NULL)
        return EINVAL;
    int rc = get_prerecorded(trid, &h);
    if (rc != 0)
        return rc;
    *bad_blocks = pt_logr_bad_blocks(h->logr, first_offset);
    pt_put(h);
    return 0;
}

PT_API int posixtrace_log_missing(trace_id_t trid, long long *missing, int *closed)
{
    struct pt_handle *h;
    if (missing == NULL || closed == NULL)
        return EINVAL;
    int rc = get_prerecorded(trid, &h);
    if (rc != 0)
        return rc;
    *missing = pt_logr_missing(h->logr, closed);
    pt_put(h);
    return 0;
}

PT_API int posixtrace_log_lost(trace_id_t trid, unsigned long long *lost)
{
    struct pt_handle *h;
    if (lost == NULL)
        return EINVAL;
    int rc = get_prerecorded(trid, &h);
    if (rc != 0)
        return rc;
    *lost = pt_logr_lost(h->logr);
    pt_put(h);
    return 0;
}

/* <posixtrace/control.h>: the processes that noted why they do not record
 * into the active stream trid (open_stream in inbox.c). */
PT_API int posixtrace_stream_refusals(trace_id_t trid, struct posixtrace_refusal *out, size_t max,
                                      size_t *n)
{
    struct pt_handle *h;
    if (out == NULL || n == NULL)
        return EINVAL;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    *n = 0;
    for (uint32_t i = 0; i < PT_REFUSALS && *n < max; i++) {
        struct pt_refusal r;
        memcpy(&r, &h->shm->refusals[i], sizeof r); /* anyone's to write: a copy, checked */
        uint64_t start = 0;
        if (r.pid == 0 || r.pid > INT32_MAX || r.pid % PT_REFUSALS != i || r.err <= 0 ||
            r.err > PT_ERRNO_MAX ||
            (pt_proc_stat((pid_t)r.pid, NULL, &start) == 0 && start != r.start))
            continue;
        out[*n].pid = (pid_t)r.pid;
        out[(*n)++].err = r.err;
    }
    pt_put(h);
    return 0;
}

PT_API int posix_trace_get_filter(trace_id_t trid, trace_event_set_t *set)
{
    struct pt_handle *h;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    if (set == NULL)
        rc = EINVAL;
    else
        pt_stream_filter(h->shm, set);
    pt_put(h);
    return rc;
}

PT_API int posix_trace_set_filter(trace_id_t trid, const trace_event_set_t *set, int how)
{
    struct pt_handle *h;
    int rc = pt_get_active(trid, &h);
    if (rc != 0)
        return rc;
    if (set == NULL ||
        (how != POSIX_TRACE_SET_EVENTSET && how != POSIX_TRACE_ADD_EVENTSET &&
         how != POSIX_TRACE_SUB_EVENTSET)) {
        pt_put(h);
        return EINVAL;
    }
    struct pt_shm *s = h->shm;
    trace_event_set_t both[2];
    pthread_mutex_lock(&h->mlock);
    pt_stream_filter(s, &both[0]);
    for (unsigned w = 0; w < PT_ID_SPACE / 64; w++) {
        uint64_t v = set->__bits[w];
        if (how == POSIX_TRACE_ADD_EVENTSET)
            v |= both[0].__bits[w];
        else if (how == POSIX_TRACE_SUB_EVENTSET)
            v = both[0].__bits[w] & ~v;
        both[1].__bits[w] = v;
        atomic_store_explicit(&s->filter[w], v, memory_order_relaxed);
        if (h->att >= 0)
            atomic_store_explicit(&pt_att[h->att].filter[w], v, memory_order_relaxed);
    }
    changed(h);
    if (atomic_load(&s->state) == PT_ST_RUNNING)
        pt_ctl_event(h, POSIX_TRACE_FILTER, both, sizeof both,
                  (uint64_t)(uintptr_t)__builtin_return_address(0), 0);
    pthread_mutex_unlock(&h->mlock);
    pt_put(h);
    return 0;
}
