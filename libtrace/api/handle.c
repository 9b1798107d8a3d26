/*
 * Trace stream identifiers: an index into this process's table with a
 * generation, valid only in the process that created the stream. Callers
 * hold a reference for the length of a call; shutdown waits for the others.
 */
#include "../internal.h"
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct pt_handle handles[TRACE_SYS_MAX];
_Atomic int pt_live_streams; /* active streams of this process (exec.c) */
static pthread_mutex_t hlock = PTHREAD_MUTEX_INITIALIZER;
/* Bit i: handles[i].used (under hlock). The table is 1.6 MB, a page and
 * more per handle: the loops over it at exit, exec and fork visit the used
 * entries only, or every traced process (which has none) would fault in 64
 * pages of zeros at each of them. */
static uint64_t used_bits;
_Static_assert(TRACE_SYS_MAX <= 64, "a bit per handle");

static void set_used(struct pt_handle *h, int used)
{
    uint64_t bit = (uint64_t)1 << (h - handles);
    h->used = used;
    used_bits = used ? used_bits | bit : used_bits & ~bit;
}

void pt_handles_atfork_prepare(void) { pthread_mutex_lock(&hlock); }
void pt_handles_atfork_parent(void) { pthread_mutex_unlock(&hlock); }
bool pt_handles_lock_try(void)
{
    return pt_mutex_take_or_reset(&hlock);
}

/* In a child, the parent's identifiers are invalid: drop them, closing the
 * descriptors (inherited attachments keep their own mapping). */
void pt_handles_atfork_child(void)
{
    for (uint64_t m = used_bits; m != 0; m &= m - 1) {
        struct pt_handle *h = &handles[__builtin_ctzll(m)];
        if (h->fd >= 0)
            close(h->fd);
        int kept = h->att >= 0 && atomic_load(&pt_att[h->att].shm) == h->shm;
        if (!kept && h->shm != NULL)
            pt_shm_unmap(h->shm, h->map_size);
        h->kept = NULL; /* the parent's: its mappings are left as they are */
        free(h->decs);
        h->decs = NULL;
        set_used(h, 0);
        h->refs = 0;
    }
    atomic_store(&pt_live_streams, 0);
    pthread_mutex_unlock(&hlock);
}

static trace_id_t make_trid(int idx, uint32_t gen)
{
    return ((trace_id_t)gen << 8) | (trace_id_t)(idx + 1);
}

int pt_get(trace_id_t trid, struct pt_handle **out)
{
    uint64_t idx = (trid & 0xff) - 1;
    if (trid == 0 || idx >= TRACE_SYS_MAX)
        return EINVAL;
    struct pt_handle *h = &handles[idx];
    pthread_mutex_lock(&hlock);
    if (!h->used || h->dying || h->gen != (uint32_t)(trid >> 8) || h->owner_pid != pt_pid) {
        pthread_mutex_unlock(&hlock);
        return EINVAL;
    }
    h->refs++;
    pthread_mutex_unlock(&hlock);
    *out = h;
    return 0;
}

/* pt_get for operations on an active stream only (EINVAL for a pre-recorded
 * one, as the pages require). */
int pt_get_active(trace_id_t trid, struct pt_handle **out)
{
    int rc = pt_get(trid, out);
    if (rc == 0 && (*out)->kind != PT_H_ACTIVE) {
        pt_put(*out);
        return EINVAL;
    }
    return rc;
}

void pt_put(struct pt_handle *h)
{
    pthread_mutex_lock(&hlock);
    /* shutdown holds one reference and waits for the others */
    if (--h->refs <= 1 && h->dying)
        pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&hlock);
}

int pt_handle_new(struct pt_shm *s, size_t size, int fd, int att, trace_id_t *trid,
                  struct pt_handle **out)
{
    pthread_mutex_lock(&hlock);
    int i = ~used_bits != 0 ? __builtin_ctzll(~used_bits) : 64; /* the first free */
    if (i < TRACE_SYS_MAX) {
        struct pt_handle *h = &handles[i];
        uint32_t gen = h->gen + 1;
        memset(h, 0, sizeof *h);
        h->gen = gen & 0xffffff;
        set_used(h, 1);
        h->owner_pid = pt_pid;
        h->att = att;
        h->fd = fd;
        h->shm = s;
        h->map_size = size;
        h->ctl_slot = PT_NONE;
        pthread_cond_init(&h->cv, NULL);
        pthread_mutex_init(&h->rlock, NULL);
        pthread_mutex_init(&h->mlock, NULL);
        if (s != NULL && pt_reader_init(h) != 0) {
            set_used(h, 0);
            pthread_mutex_unlock(&hlock);
            return ENOMEM;
        }
        if (s != NULL)
            atomic_fetch_add(&pt_live_streams, 1);
        *trid = make_trid(i, h->gen);
        if (out != NULL)
            *out = h;
        pthread_mutex_unlock(&hlock);
        return 0;
    }
    pthread_mutex_unlock(&hlock);
    return EAGAIN;
}

/* Mark h dying (new lookups fail) and wait until the caller's reference is
 * the last one. Returns EINVAL if someone else is already shutting it down. */
int pt_handle_begin_destroy(struct pt_handle *h)
{
    pthread_mutex_lock(&hlock);
    if (h->dying) {
        pthread_mutex_unlock(&hlock);
        return EINVAL;
    }
    h->dying = 1;
    pthread_mutex_unlock(&hlock);
    return 0;
}

void pt_handle_wait_last(struct pt_handle *h)
{
    pthread_mutex_lock(&hlock);
    while (h->refs > 1)
        pthread_cond_wait(&h->cv, &hlock);
    pthread_mutex_unlock(&hlock);
}

void pt_handle_destroy(struct pt_handle *h)
{
    pt_inflight_release(h);
    pthread_mutex_lock(&hlock);
    if (h->shm != NULL)
        atomic_fetch_sub(&pt_live_streams, 1);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->rlock);
    pthread_mutex_destroy(&h->mlock);
    free(h->decs);
    h->decs = NULL;
    set_used(h, 0);
    h->dying = 0;
    h->refs = 0;
    pthread_mutex_unlock(&hlock);
}

int pt_handle_count(void)
{
    pthread_mutex_lock(&hlock);
    int n = __builtin_popcountll(used_bits);
    pthread_mutex_unlock(&hlock);
    return n;
}

int pt_futex_wait(_Atomic uint32_t *addr, uint32_t val, const struct timespec *abs_realtime)
{
    long rc = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME,
                      val, abs_realtime, NULL, FUTEX_BITSET_MATCH_ANY);
    return rc == 0 ? 0 : errno;
}

int pt_futex_wake(_Atomic uint32_t *addr, int n)
{
    long rc = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, n, NULL, NULL, 0);
    return rc < 0 ? errno : 0;
}

/* "If the process exits ... the trace streams that the process had created
 * and that have not yet been shut down, shall be automatically shut down":
 * at exit (and when the library is unloaded), logs get their last flush. */
void pt_handles_shutdown_all(void)
{
    pthread_mutex_lock(&hlock);
    uint64_t m = used_bits;
    pthread_mutex_unlock(&hlock);
    for (; m != 0; m &= m - 1) {
        int i = __builtin_ctzll(m);
        pthread_mutex_lock(&hlock);
        struct pt_handle *h = &handles[i];
        int live = h->used && !h->dying && h->owner_pid == pt_pid && h->kind == PT_H_ACTIVE;
        trace_id_t trid = make_trid(i, h->gen);
        pthread_mutex_unlock(&hlock);
        if (live)
            posix_trace_shutdown(trid);
    }
}

__attribute__((destructor)) static void shutdown_at_exit(void)
{
    pt_handles_shutdown_all();
}
