/*
 * Event names and type identifiers.
 *
 * The process keeps its own table of user event names (posix_trace_eventid_open
 * works before any stream exists, and its ids are what the program passes to
 * posix_trace_event). Every stream the process records into gets a copy when
 * it is created and every later name as it is opened, at the same id: for a
 * stream traced by its own process, stream ids and process ids are the same.
 * Stream tables live in shared memory, guarded by a lock word (slock.c) that
 * every party takes with a deadline: a process holding it too long delays
 * names in that stream only, and a controller's call fails with EAGAIN.
 */
#include "../internal.h"
#include "../log/logread.h"
#include <posixtrace/events.h>
#include <string.h>

static const char *const sys_names[] = {
    [0] = "posix_trace_start",       [1] = "posix_trace_stop",
    [2] = "posix_trace_filter",      [3] = "posix_trace_overflow",
    [4] = "posix_trace_resume",      [5] = "posix_trace_flush_start",
    [6] = "posix_trace_flush_stop",  [7] = "posix_trace_error",
};
#define UNNAMED_NAME "posix_trace_unnamed_userevent"

/* This process's user event names, by id - 257 (ids may have gaps: in a
 * process tree sharing an INHERITED stream, ids are allocated in the stream's
 * table). Lock order: local_lock, then pt_att_lock, then stream tables. */
static pthread_mutex_t local_lock = PTHREAD_MUTEX_INITIALIZER;
static char local_names[TRACE_USER_EVENT_MAX][TRACE_EVENT_NAME_MAX + 1];
static uint8_t local_valid[TRACE_USER_EVENT_MAX];
static uint32_t local_count;

const char *pt_sys_name(trace_event_id_t id)
{
    return id < sizeof sys_names / sizeof sys_names[0] ? sys_names[id] : NULL;
}

void pt_names_lock_local(void)
{
    pthread_mutex_lock(&local_lock);
    pt_tls_cfg++;
}

bool pt_names_lock_try(void)
{
    if (!pt_mutex_take_or_reset(&local_lock))
        return false;
    pt_tls_cfg++;
    return true;
}

void pt_names_unlock_local(void)
{
    pt_tls_cfg--;
    pthread_mutex_unlock(&local_lock);
}

/* A traced process's wait for a stream's table: false if another process
 * held it for PT_SLOCK_TARGET_MS (the stream is then left out). */
static bool lock_stream(struct pt_shm *s)
{
    return pt_slock_take(&s->names_lock, PT_SLOCK_TARGET_MS) == 0;
}

static void unlock_stream(struct pt_shm *s)
{
    pt_slock_drop(&s->names_lock);
}

/* Caller holds the stream's names_lock (or owns the stream exclusively). */
static void set_name(struct pt_shm *s, trace_event_id_t id, const char *name)
{
    struct pt_name *n = &pt_names(s)[id];
    size_t len = strnlen(name, TRACE_EVENT_NAME_MAX);
    memcpy(n->name, name, len);
    n->name[len] = '\0';
    atomic_store_explicit(&n->valid, 1, memory_order_release);
}

/* The predefined names and the shim's system events. */
void pt_names_init_sys(struct pt_shm *s)
{
    for (trace_event_id_t id = 0; id < sizeof sys_names / sizeof sys_names[0]; id++)
        set_name(s, id, sys_names[id]);
    for (unsigned i = 0; i < posixtrace_event_ndescs; i++)
        set_name(s, posixtrace_event_descs[i].id, posixtrace_event_descs[i].name);
    for (unsigned nr = 0; nr <= PT_SYSCALL_NR_MAX; nr++) {
        const struct posixtrace_event_desc *d = pt_syscall_desc(nr);
        if (d != NULL)
            set_name(s, d->id, d->name);
    }
    set_name(s, POSIX_TRACE_UNNAMED_USEREVENT, UNNAMED_NAME);
}

void pt_names_init_stream(struct pt_shm *s)
{
    pt_names_init_sys(s);
    for (uint32_t i = 0; i < TRACE_USER_EVENT_MAX; i++)
        if (local_valid[i])
            set_name(s, POSIX_TRACE_UNNAMED_USEREVENT + 1 + i, local_names[i]);
}

static bool id_free(struct pt_shm *s, trace_event_id_t id)
{
    return !atomic_load_explicit(&pt_names(s)[id].valid, memory_order_acquire);
}


/* A new stream for another process gets the names that process opened
 * (read from its inbox: untrusted, each checked). */
void pt_names_copy_from(struct pt_shm *s, const struct pt_inbox *ib)
{
    for (uint32_t i = 0; i < TRACE_USER_EVENT_MAX; i++) {
        const struct pt_name *n = &ib->names[i];
        char buf[TRACE_EVENT_NAME_MAX + 1];
        if (!atomic_load_explicit(&n->valid, memory_order_acquire))
            continue;
        memcpy(buf, n->name, sizeof buf);
        buf[TRACE_EVENT_NAME_MAX] = '\0';
        if (buf[0] != '\0')
            set_name(s, POSIX_TRACE_UNNAMED_USEREVENT + 1 + i, buf);
    }
}

/* A stream this process starts recording into (another process's) gets
 * this process's names at their ids; local_lock held. A name whose id the
 * stream already gives another name keeps its place in this process only
 * (doc/semantics.md). */
void pt_names_register_all(struct pt_shm *s)
{
    if (!lock_stream(s))
        return;
    for (uint32_t i = 0; i < TRACE_USER_EVENT_MAX; i++) {
        trace_event_id_t id = POSIX_TRACE_UNNAMED_USEREVENT + 1 + i;
        if (local_valid[i] && id_free(s, id))
            set_name(s, id, local_names[i]);
    }
    unlock_stream(s);
}

static int name_ok(const char *name)
{
    if (name == NULL)
        return EINVAL;
    return strnlen(name, TRACE_EVENT_NAME_MAX + 1) > TRACE_EVENT_NAME_MAX ? ENAMETOOLONG : 0;
}

/* The id for a name new to this process: the one a stream it records into
 * already gives it (another process of the tree opened it), else the lowest
 * free here and in every such stream. 0: none left. */
static trace_event_id_t choose_id(const char *name, struct pt_shm **ss, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        trace_event_id_t x;
        if (pt_name_lookup_user(ss[k], name, &x) == 0 && x > POSIX_TRACE_UNNAMED_USEREVENT &&
            !local_valid[x - POSIX_TRACE_UNNAMED_USEREVENT - 1])
            return x;
    }
    for (trace_event_id_t x = POSIX_TRACE_UNNAMED_USEREVENT + 1; x <= PT_USER_ID_MAX; x++) {
        bool ok = !local_valid[x - POSIX_TRACE_UNNAMED_USEREVENT - 1];
        for (unsigned k = 0; k < n && ok; k++)
            ok = id_free(ss[k], x);
        if (ok)
            return x;
    }
    return 0;
}

static trace_event_id_t add_name(const char *name)
{
    struct pt_shm *ss[PT_MAX_ATTACH];
    unsigned n = 0;
    pt_att_lock_take();
    for (uint32_t i = 0; i < PT_MAX_ATTACH; i++) {
        struct pt_shm *s = atomic_load(&pt_att[i].shm);
        if (s != NULL && lock_stream(s))
            ss[n++] = s;
    }
    trace_event_id_t nid = local_count < TRACE_USER_EVENT_MAX ? choose_id(name, ss, n) : 0;
    if (nid != 0) {
        uint32_t i = nid - POSIX_TRACE_UNNAMED_USEREVENT - 1;
        strcpy(local_names[i], name);
        local_valid[i] = 1;
        local_count++;
        pt_inbox_publish_name(nid, name);
        for (unsigned k = 0; k < n; k++)
            if (id_free(ss[k], nid))
                set_name(ss[k], nid, name);
    }
    for (unsigned k = 0; k < n; k++)
        unlock_stream(ss[k]);
    pt_att_lock_drop();
    return nid != 0 ? nid : POSIX_TRACE_UNNAMED_USEREVENT;
}

int pt_local_eventid_open(const char *name, trace_event_id_t *id)
{
    int rc = name_ok(name);
    if (rc != 0 || id == NULL)
        return rc ? rc : EINVAL;
    if (strcmp(name, UNNAMED_NAME) == 0) {
        *id = POSIX_TRACE_UNNAMED_USEREVENT;
        return 0;
    }
    /* A stream a controller posted for this process but that no event has
     * attached yet may already name it (posix_trace_trid_eventid_open, from
     * the top down): attach it now, so that choose_id finds the name in its
     * table and "the previously assigned identifier" is returned. Only this
     * process does anything here; the controller waits for nothing. */
    if (unlikely(pt_want_load(0) & PT_WANT_BELL))
        pt_inbox_refresh();
    pt_names_lock_local();
    for (uint32_t i = 0; i < TRACE_USER_EVENT_MAX; i++) {
        if (local_valid[i] && strcmp(local_names[i], name) == 0) {
            *id = POSIX_TRACE_UNNAMED_USEREVENT + 1 + i;
            pt_names_unlock_local();
            return 0;
        }
    }
    *id = add_name(name);
    pt_names_unlock_local();
    return 0;
}

int pt_name_lookup_user(struct pt_shm *s, const char *name, trace_event_id_t *id)
{
    struct pt_name *t = pt_names(s);
    for (trace_event_id_t i = POSIX_TRACE_UNNAMED_USEREVENT; i <= PT_USER_ID_MAX; i++) {
        if (atomic_load_explicit(&t[i].valid, memory_order_acquire) &&
            strncmp(t[i].name, name, sizeof t[i].name) == 0) {
            *id = i;
            return 0;
        }
    }
    return ENOENT;
}

/* For a stream whose traced process is another one: the stream table
 * decides. A target holding the table's lock for PT_SLOCK_CTL_MS makes it
 * fail with EAGAIN (doc/semantics.md). */
int pt_stream_eventid_open(struct pt_shm *s, const char *name, trace_event_id_t *id)
{
    int rc = name_ok(name);
    if (rc != 0 || id == NULL)
        return rc ? rc : EINVAL;
    if (pt_slock_take(&s->names_lock, PT_SLOCK_CTL_MS) != 0)
        return EAGAIN;
    if (pt_name_lookup_user(s, name, id) == 0) {
        unlock_stream(s);
        return 0;
    }
    /* from the top down: the traced process allocates its own names from
     * the bottom up, and registers them here when it attaches */
    struct pt_name *t = pt_names(s);
    *id = POSIX_TRACE_UNNAMED_USEREVENT;
    for (trace_event_id_t i = PT_USER_ID_MAX; i > POSIX_TRACE_UNNAMED_USEREVENT; i--) {
        if (!atomic_load_explicit(&t[i].valid, memory_order_relaxed)) {
            set_name(s, i, name);
            *id = i;
            break;
        }
    }
    unlock_stream(s);
    return 0;
}

int pt_name_get(struct pt_shm *s, trace_event_id_t id, char *out)
{
    if (id > PT_ID_MAX || out == NULL)
        return EINVAL;
    struct pt_name *n = &pt_names(s)[id];
    if (!atomic_load_explicit(&n->valid, memory_order_acquire))
        return EINVAL;
    size_t len = strnlen(n->name, TRACE_EVENT_NAME_MAX);
    memcpy(out, n->name, len);
    out[len] = '\0';
    return 0;
}

PT_API int posix_trace_eventid_open(const char *restrict name, trace_event_id_t *restrict id)
{
    return pt_local_eventid_open(name, id);
}

PT_API int posix_trace_trid_eventid_open(trace_id_t trid, const char *restrict name,
                                         trace_event_id_t *restrict id)
{
    struct pt_handle *h;
    int rc = pt_get_active(trid, &h); /* "it shall be an active trace stream" */
    if (rc != 0)
        return rc;
    rc = h->att >= 0 ? pt_local_eventid_open(name, id) : pt_stream_eventid_open(h->shm, name, id);
    pt_put(h);
    return rc;
}

PT_API int posix_trace_eventid_get_name(trace_id_t trid, trace_event_id_t id, char *name)
{
    struct pt_handle *h;
    int rc = pt_get(trid, &h);
    if (rc != 0)
        return rc;
    rc = h->kind == PT_H_PRERECORDED ? pt_logr_name(h->logr, id, name)
                                     : pt_name_get(h->shm, id, name);
    pt_put(h);
    return rc;
}

PT_API int posix_trace_eventid_equal(trace_id_t trid, trace_event_id_t a, trace_event_id_t b)
{
    (void)trid; /* ids are comparable as numbers within one stream */
    return a == b;
}

PT_API int posix_trace_eventtypelist_getnext_id(trace_id_t trid, trace_event_id_t *restrict id,
                                                int *restrict unavailable)
{
    struct pt_handle *h;
    int rc = pt_get(trid, &h);
    if (rc != 0)
        return rc;
    if (id == NULL || unavailable == NULL) {
        pt_put(h);
        return EINVAL;
    }
    pthread_mutex_lock(&h->mlock);
    *unavailable = 1;
    while (h->typelist_pos <= PT_ID_MAX) {
        uint32_t i = h->typelist_pos++;
        char buf[TRACE_EVENT_NAME_MAX + 1];
        bool named = h->kind == PT_H_PRERECORDED
                         ? pt_logr_name(h->logr, i, buf) == 0
                         : atomic_load_explicit(&pt_names(h->shm)[i].valid,
                                                memory_order_acquire) != 0;
        if (named) {
            *id = i;
            *unavailable = 0;
            break;
        }
    }
    pthread_mutex_unlock(&h->mlock);
    pt_put(h);
    return 0;
}

PT_API int posix_trace_eventtypelist_rewind(trace_id_t trid)
{
    struct pt_handle *h;
    int rc = pt_get(trid, &h);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&h->mlock);
    h->typelist_pos = 0;
    pthread_mutex_unlock(&h->mlock);
    pt_put(h);
    return 0;
}
