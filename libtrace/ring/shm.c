/* Creating, laying out and unmapping the shared memory of one stream. */
#include "../internal.h"
#include "../log/log_format.h"
#include <posixtrace/control.h>
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define PT_PAGE 4096u

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* Largest record an event can need, anchor included. */
static uint32_t max_budget(size_t max_data)
{
    return PT_EVENT_OVERHEAD + pt_round4((uint32_t)pt_max_data_of(max_data));
}


/* The bytes closed chunks may hold at once: stream-min-size, and at least
 * one chunk's room (else no chunk could ever close, and LOOP could not
 * overwrite). */
static uint64_t closed_cap(const trace_attr_t *a, uint32_t chunk_size)
{
    uint64_t room = chunk_size - PT_CHUNK_HDR - PT_END_BYTES;
    return a->__stream_size > room ? a->__stream_size : room;
}

/* The chunk size: a page, or more for streams big enough. Every chunk switch
 * writes the pool's shared cache line (and the chunk header), which a writer
 * on another CPU then takes back at its own switch: writers that switch
 * every 80 events (a page of 48-byte events) no longer scale with their
 * number. So a chunk is at least 1/PT_CHUNKS_PER_STREAM of the stream, up to
 * PT_CHUNK_BIG, and holds at least two of the largest records. */
static uint32_t chunk_size_for(const trace_attr_t *a, uint32_t budget)
{
    uint32_t cs = PT_PAGE;
    while (cs < 2 * budget + PT_CHUNK_HDR + PT_END_BYTES)
        cs *= 2;
    while (cs < PT_CHUNK_BIG && cs < a->__stream_size / PT_CHUNKS_PER_STREAM)
        cs *= 2;
    return cs;
}

/*
 * A chunk holds at least two of the largest records, so a closed chunk wastes
 * at most one budget: it is at least `usable` full. Closing a chunk charges
 * its written bytes to the cap (shm_layout.h), so at most cap / usable
 * chunks are closed at once, each writer slot holds one open chunk, and the
 * consumer keeps at most pt_cool_chunks() consumed ones out of the pool
 * (consume.c, "cooling"): cap / usable + nslots + cool chunks are always
 * enough. The cap, not the number of chunks, is what fills the stream:
 * events whose budgets sum to stream-min-size write at most that many bytes,
 * so they never reach it.
 */
void pt_geometry(const trace_attr_t *a, struct pt_geometry *g)
{
    uint32_t budget = max_budget(a->__max_data_size);
    uint32_t cs = chunk_size_for(a, budget);
    uint32_t usable = cs - PT_CHUNK_HDR - PT_END_BYTES - budget;
    uint64_t cap = closed_cap(a, cs);
    uint64_t data_chunks = (cap + usable - 1) / usable;
    g->chunk_size = cs;
    g->nchunks = (uint32_t)(data_chunks + PT_NSLOTS + 1 + pt_cool_chunks(cap, cs));
    uint64_t hdr = align_up(sizeof(struct pt_shm), PT_CACHELINE);
    uint64_t slots = align_up((uint64_t)PT_NSLOTS * sizeof(struct pt_slot), PT_CACHELINE);
    uint64_t names = align_up((uint64_t)PT_ID_SPACE * sizeof(struct pt_name), PT_PAGE);
    g->total = align_up(hdr + slots, PT_PAGE) + names + (uint64_t)g->nchunks * cs;
}

/* <posixtrace/control.h>: the least log-max-size of a LOOP or UNTIL_FULL
 * log (logwrite.c: its header and PT_LOG_MIN_BLOCKS blocks of the chunk size). */
PT_API int posixtrace_attr_getminlogsize(const trace_attr_t *a, size_t *n)
{
    struct pt_geometry g;
    if (a == NULL || a->__magic != PT_ATTR_MAGIC || n == NULL)
        return EINVAL;
    pt_geometry(a, &g);
    *n = (size_t)PT_LOGF_HDR_SIZE + (size_t)PT_LOG_MIN_BLOCKS * g.chunk_size;
    return 0;
}

/* Maps all of fd, shared, if it is exactly `size` bytes, and closes fd either
 * way: the mapping, or NULL. *st (may be NULL) gets fd's status, for the
 * caller's further checks. Inboxes, streams and alive pages of other
 * processes come this way: their size is checked before anything is read. */
void *pt_map_whole(int fd, uint64_t size, int prot, struct stat *st)
{
    struct stat sb;
    void *p = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && (uint64_t)sb.st_size == size && size != 0 &&
        size <= ((uint64_t)1 << 40))
        p = mmap(NULL, size, prot, MAP_SHARED, fd, 0);
    close(fd);
    if (st != NULL)
        *st = sb;
    return p == MAP_FAILED ? NULL : p;
}

/* A memfd sized for good: it can no longer shrink or grow, and its seals
 * no longer change, so no process that can open it (a target through
 * /proc/<pid>/fd, a third party) can make a mapping of it fault. */
int pt_seal_size(int fd)
{
    return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
}

/* Is fd a memfd that can never shrink? Only such an object of another
 * process is mapped here (a shrunk mapping faults with SIGBUS). */
bool pt_sealed_size(int fd)
{
    int seals = fcntl(fd, F_GET_SEALS);
    return seals >= 0 && (seals & F_SEAL_SHRINK) != 0;
}

/* A process-shared robust mutex: only the alive page's, in memory that only
 * its controller can write (remote.c). */
int pt_robust_init(pthread_mutex_t *m)
{
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    int rc = pthread_mutex_init(m, &ma);
    pthread_mutexattr_destroy(&ma);
    return rc;
}

/* Where the names and the chunks start (the slots start at PT_SLOTS_OFF). */
static uint64_t names_offset(void)
{
    return align_up(PT_SLOTS_OFF + (uint64_t)PT_NSLOTS * sizeof(struct pt_slot), PT_PAGE);
}

static uint64_t chunks_offset(void)
{
    return names_offset() + align_up((uint64_t)PT_ID_SPACE * sizeof(struct pt_name), PT_PAGE);
}

/*
 * Is the geometry on s's first page exactly what its attributes give, for an
 * object of `size` bytes? A process that maps a stream it did not create
 * (a target, an exec'd image) checks this before anything else, then keeps
 * a private copy of that page (pt_shm_privatize, as the creator does): every
 * address its writers compute comes from that copy, whatever any other
 * process of the stream writes into the shared page before or after
 * (doc/design.md, "Writers keep their cursor").
 */
bool pt_shm_check(const struct pt_shm *s, uint64_t size)
{
    if (s->max_data == 0 || s->max_data > PT_MAX_MAX_DATA_SIZE || s->stream_size == 0 ||
        s->stream_size > PT_MAX_STREAM_SIZE || s->block_ns > PT_BLOCK_MAX_NS)
        return false;
    trace_attr_t a;
    memset(&a, 0, sizeof a);
    a.__stream_size = s->stream_size;
    a.__max_data_size = s->max_data;
    struct pt_geometry g;
    pt_geometry(&a, &g);
    bool clock_ok = (s->clock_mode == PT_CLOCK_TSC && s->ticks_per_ns > 0 &&
                     s->ticks_per_ns < 1e6) ||
                    (s->clock_mode == PT_CLOCK_REALTIME && s->ticks_per_ns == 1.0);
    return clock_ok && g.total == size && s->total_size == size &&
           s->chunk_size == g.chunk_size && s->nchunks == g.nchunks &&
           s->cap == closed_cap(&a, g.chunk_size) && s->slots_off == PT_SLOTS_OFF &&
           s->names_off == names_offset() && s->chunks_off == chunks_offset() &&
           s->nslots == PT_NSLOTS;
}

static void init_header(struct pt_shm *s, const trace_attr_t *a, const struct pt_geometry *g,
                        int has_log)
{
    s->version = PT_SHM_VERSION;
    s->clock_mode = pt_clock_mode();
    s->total_size = g->total;
    s->chunk_size = g->chunk_size;
    s->nchunks = g->nchunks;
    s->cap = closed_cap(a, g->chunk_size);
    s->slots_off = PT_SLOTS_OFF;
    s->names_off = names_offset();
    s->chunks_off = chunks_offset();
    s->creator_pid = (uint32_t)pt_pid;
    s->ctrl_pid = (uint32_t)pt_pid;
    s->ctrl_start = pt_start;
    s->target_pid = (uint32_t)pt_pid;
    s->target_start = pt_start;

    s->nslots = PT_NSLOTS;
    s->ticks_per_ns = s->clock_mode == PT_CLOCK_TSC ? pt_clock_ticks_per_ns() : 1.0;
    s->mono0_ns = pt_monotonic_ns();
    if (s->clock_mode == PT_CLOCK_TSC) {
        s->tick0 = pt_tsc_pair(CLOCK_REALTIME, &s->real0_ns);
    } else {
        s->real0_ns = pt_realtime_ns();
        s->tick0 = (uint64_t)s->real0_ns;
    }
    memcpy(s->name, a->__name, sizeof s->name);
    s->name[sizeof s->name - 1] = '\0';
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    s->create_sec = now.tv_sec;
    s->create_nsec = now.tv_nsec;
    s->stream_size = a->__stream_size;
    s->max_data = a->__max_data_size;
    s->log_size = a->__log_size;
    s->stream_policy = a->__stream_policy;
    s->log_policy = a->__log_policy;
    s->inheritance = a->__inheritance;
    s->block_ns = pt_attr_block_ns(a); /* checked by the caller (stream.c attr_ok) */
    s->has_log = has_log;
    atomic_store(&s->state, PT_ST_SUSPENDED);
    for (uint32_t i = 0; i < PT_NSLOTS; i++)
        atomic_store(&pt_slots(s)[i].rhead, PT_NONE);
    pt_pool_init(s);
}

/* The name under /dev/shm of a stream that a process of another user
 * records into (a memfd can only be reached through /proc/<pid>/fd, which
 * needs ptrace rights over the controller: doc/design.md). */
void pt_shm_name(uint32_t ctrl_pid, uint64_t ctrl_start, uint64_t key, char *buf, size_t n)
{
    snprintf(buf, n, "/posixtrace-%u-%llu-%016llx", ctrl_pid, (unsigned long long)ctrl_start,
             (unsigned long long)key);
}

/* A controller's alive page for targets of other users (remote.c); key:
 * random, so that no other user can guess the name and create it first. */
void pt_shm_alive_name(uint32_t ctrl_pid, uint64_t ctrl_start, uint64_t key, char *buf,
                       size_t n)
{
    snprintf(buf, n, "/posixtrace-alive-%u-%llu-%016llx", ctrl_pid,
             (unsigned long long)ctrl_start, (unsigned long long)key);
}

uint64_t pt_random_key(void)
{
    uint64_t key;
    if (getrandom(&key, sizeof key, GRND_NONBLOCK) != (ssize_t)sizeof key)
        key = pt_rdtsc() ^ ((uint64_t)pt_pid << 32);
    return key;
}

/* Is /dev/shm/<name> (dirfd: /dev/shm) what we would have left there: a
 * plain file, mode 0600 (a stream, given to its target's user) or owned by
 * us (an alive page)? Anything else, whoever made it, is not ours to remove. */
static bool stale_looks_ours(int dirfd, const char *name, bool alive)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        return false;
    return alive ? st.st_uid == geteuid() : (st.st_mode & 07777) == 0600;
}

/* Named streams (and alive pages) of controllers that died without
 * shutting them down. */
void pt_shm_cleanup_stale(void)
{
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned pid;
        unsigned long long start, key;
        bool stream = sscanf(e->d_name, "posixtrace-%u-%llu-%llx", &pid, &start, &key) == 3;
        bool alive = !stream &&
                     sscanf(e->d_name, "posixtrace-alive-%u-%llu-%llx", &pid, &start, &key) == 3;
        if ((stream || alive) && !pt_proc_alive((pid_t)pid, start) &&
            stale_looks_ours(dirfd(d), e->d_name, alive)) {
            char name[300];
            snprintf(name, sizeof name, "/%.255s", e->d_name);
            shm_unlink(name);
        }
    }
    closedir(d);
}

static int open_backing(const struct pt_shm_owner *o, uint64_t key, const char *label)
{
    if (o == NULL)
        return memfd_create(label, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    char name[96];
    pt_shm_cleanup_stale();
    pt_shm_name(pt_pid, pt_start, key, name, sizeof name);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 && fchmod(fd, 0600) != 0) {
        close(fd);
        shm_unlink(name);
        errno = EPERM;
        return -1;
    }
    return fd;
}

/* A named stream's object becomes its target's (to open it for writing),
 * once the header is complete and our copy of its first page private
 * (pt_shm_privatize): from now on the target can shrink it (fault.c). */
int pt_shm_give(int fd, const struct pt_shm_owner *o)
{
    return fchown(fd, o->uid, o->gid) == 0 ? 0 : EPERM;
}

int pt_shm_create(const trace_attr_t *a, int has_log, const struct pt_shm_owner *o,
                  struct pt_shm **out, size_t *size, int *fdp)
{
    struct pt_geometry g;
    pt_geometry(a, &g);
    char label[32 + TRACE_NAME_MAX];
    snprintf(label, sizeof label, "posixtrace:%.200s", a->__name);
    uint64_t key = pt_random_key();
    int fd = open_backing(o, key, label);
    if (fd < 0)
        return errno == EMFILE || errno == ENFILE ? EAGAIN : errno == EPERM ? EPERM : ENOMEM;
    /* Reserve the memory now (the page calls stream-min-size memory
     * "reserved"): running out later would be SIGBUS in a traced program,
     * and page faults would land on the recording path. A memfd is then
     * sealed at that size: a target that opens it through /proc cannot
     * shrink it under the controller (SIGBUS) either. */
    if (ftruncate(fd, (off_t)g.total) != 0 || fallocate(fd, 0, 0, (off_t)g.total) != 0 ||
        (o == NULL && pt_seal_size(fd) != 0)) {
        pt_shm_close_backing(o != NULL, key, fd);
        return ENOMEM;
    }
    void *p = mmap(NULL, g.total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) {
        pt_shm_close_backing(o != NULL, key, fd);
        return ENOMEM;
    }
    if (o != NULL && pt_fault_guard_add(p, g.total) != 0) {
        munmap(p, g.total);
        pt_shm_close_backing(1, key, fd);
        return EAGAIN;
    }
    struct pt_shm *s = p;
    init_header(s, a, &g, has_log);
    s->key = key;
    s->named = o != NULL;
    atomic_store(&s->names_lock, 0);
    s->magic = PT_SHM_MAGIC;
    atomic_thread_fence(memory_order_release);
    *out = s;
    *size = g.total;
    *fdp = fd;
    return 0;
}

/* The controller's own copy of the header's first page (its geometry and
 * identity), taken once every field of it is written: what other processes
 * write there no longer shows. Anonymous memory, not a private mapping of
 * the object: truncating a file takes even the private copies of its pages
 * away (fault.c). */
int pt_shm_privatize(struct pt_shm *s)
{
    _Static_assert(offsetof(struct pt_shm, names_lock) == PT_PAGE0, "first page");
    unsigned char copy[PT_PAGE0];
    memcpy(copy, s, PT_PAGE0);
    void *p = mmap(s, PT_PAGE0, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                   -1, 0);
    if (p == MAP_FAILED)
        return ENOMEM;
    memcpy(p, copy, PT_PAGE0);
    return 0;
}

/*
 * Chunk c, never handed out before, is about to be written here. The
 * creator mapped the whole stream with MAP_POPULATE; another process (a
 * target, a forked child) maps it without, and would take a page fault at
 * each page of the chunk (a write fault maps one page; 13 to 17 thousand of
 * them in a 2-million-event burst, measured). One madvise maps the chunk's
 * pages at once instead, only the chunks a process uses (a traced program
 * that records little does not map the whole stream). An old kernel
 * without MADV_POPULATE_WRITE: the faults, as before.
 */
void pt_shm_prefault(struct pt_shm *s, uint32_t c)
{
#ifdef MADV_POPULATE_WRITE
    if (s->creator_pid != pt_pid)
        (void)madvise(pt_chunk(s, c), s->chunk_size, MADV_POPULATE_WRITE);
#else
    (void)s;
    (void)c;
#endif
}

/* Close a stream's backing object (and remove its name, if it has one). */
void pt_shm_close_backing(int named, uint64_t key, int fd)
{
    if (named) {
        char name[96];
        pt_shm_name(pt_pid, pt_start, key, name, sizeof name);
        shm_unlink(name);
    }
    close(fd);
}

void pt_shm_unmap(struct pt_shm *s, size_t size)
{
    pt_fault_guard_remove(s);
    munmap(s, size);
}
