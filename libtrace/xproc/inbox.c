/*
 * The inbox: how a controller in another process makes this process record
 * into its streams (doc/design.md, "Other processes").
 *
 * Each process with the library loaded has one inbox, a memfd named
 * "posixtrace-inbox" at a descriptor >= PT_INBOX_FD_MIN, mapped over the
 * static object __posixtrace_want. A controller finds it through
 * /proc/<pid>/fd (which needs ptrace-read permission: the EPERM rule), posts
 * the stream in a free entry it claims by CAS and sets the doorbell bit
 * of every want byte. The next recording call sees a non-zero byte, takes the
 * slow path and calls pt_inbox_refresh(), which attaches the stream (opening
 * it through /proc/<controller>/fd), detaches streams shut down or whose
 * controller died, and reloads the running state and filter of the others.
 *
 * Entry i and attachment i go together: an attachment in use has a non-free
 * entry. The inbox survives exec (its descriptor is inheritable while the
 * process records into any stream) so that the new image, if it loads the
 * library, attaches the same streams; forked children get an inbox of their
 * own with the entries of the inherited streams.
 */
#include "../internal.h"
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

PT_API union pt_inbox_mem pt_inbox_obj __asm__("__posixtrace_want") __attribute__((aligned(4096)));
/* <posixtrace/record.h>: the want table as this library reads it, which is
 * the program's copy when the program holds one (a copy relocation), found
 * by a module that cannot reach the program's symbols (the audit library,
 * in a namespace of its own, whose dlsym finds this library's object). */
PT_API volatile unsigned char *posixtrace_want_table(void)
{
    return pt_want;
}

uint64_t pt_start;
static int inbox_ready;
static dev_t inbox_dev; /* what the inbox's descriptor names (posixtrace_reserved_fd_repair) */
static ino_t inbox_ino;

/* ---- the want bytes ---- */

void pt_inbox_ring(struct pt_inbox *ib)
{
    atomic_fetch_add(&ib->seq, 1);
    for (unsigned w = 0; w < PT_WANT_BYTES / 8; w++)
        __atomic_fetch_or(&ib->want.w[w], PT_WANT_BELLS, __ATOMIC_SEQ_CST);
}

void pt_inbox_ring_self(void)
{
    if (inbox_ready)
        pt_inbox_ring(PT_INBOX);
}

static void clear_bells(void)
{
    for (unsigned w = 0; w < PT_WANT_BYTES / 8; w++)
        __atomic_fetch_and(&PT_INBOX->want.w[w], ~PT_WANT_BELLS, __ATOMIC_SEQ_CST);
}

/* ---- creating and adopting the inbox ---- */

/* Does /proc/<pid>/fd/<n> `path` name an inbox (of any process)? */
bool pt_is_inbox_link(const char *path)
{
    char link[128];
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0)
        return false;
    link[n] = '\0';
    return strncmp(link, "/memfd:" PT_INBOX_NAME, sizeof "/memfd:" PT_INBOX_NAME - 1) == 0;
}

/* Map fd over the static inbox object; fd is the inbox's descriptor from
 * now on (its file remembered, to notice a raw close or dup2 over it). */
static bool map_over(int fd)
{
    void *p = mmap(&pt_inbox_obj, PT_INBOX_SIZE, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED, fd, 0);
    struct stat st;
    if (p == MAP_FAILED || fstat(fd, &st) != 0)
        return p != MAP_FAILED;
    inbox_dev = st.st_dev;
    inbox_ino = st.st_ino;
    return true;
}

/* The new inbox's first bytes, written from where they are (no staging
 * copy of the whole inbox: this runs in every fork child and new image):
 * the want table (tmpl's, or this process's), the header and the entries,
 * and the names at `names` if not NULL. What is not written stays as
 * ftruncate made it: zeros, without pages. */
static bool write_inbox(int fd, const struct pt_inbox *tmpl, const struct pt_name *names)
{
    enum { HDR = offsetof(struct pt_inbox, seq), NAMES = offsetof(struct pt_inbox, names) };
    unsigned char hdr[NAMES - HDR]; /* seq .. the entries: 4 KiB */
    if (tmpl != NULL)
        memcpy(hdr, (const unsigned char *)tmpl + HDR, sizeof hdr);
    else
        memset(hdr, 0, sizeof hdr);
#define PUT(field, v) \
    do { \
        __typeof__(((struct pt_inbox *)0)->field) v_ = (v); \
        memcpy(hdr + offsetof(struct pt_inbox, field) - HDR, &v_, sizeof v_); \
    } while (0)
    PUT(magic, PT_INBOX_MAGIC);
    PUT(version, PT_INBOX_VERSION);
    PUT(pid, pt_pid);
    PUT(start, pt_start);
    PUT(fd, fd);
    PUT(uid, (uint32_t)getuid());
#undef PUT
    struct iovec iov[3] = {
        { (void *)(tmpl != NULL ? tmpl->want.b : pt_want), PT_WANT_BYTES },
        { hdr, sizeof hdr },
        { (void *)names, sizeof tmpl->names },
    };
    _Static_assert(offsetof(struct pt_inbox, want) == 0 && PT_WANT_BYTES == HDR, "want, then seq");
    int n = names != NULL ? 3 : 2;
    size_t len = NAMES + (n == 3 ? sizeof tmpl->names : 0);
    return pwritev(fd, iov, n, 0) == (ssize_t)len;
}

/* A new inbox holding `tmpl` (the want table, header and entries to start
 * with; NULL: none) and `names` (NULL: none), at descriptor `at`
 * (replacing what is there: a forked child's copy of its parent's inbox)
 * or at the first free one from PT_INBOX_FD_MIN. */
static int create_inbox(const struct pt_inbox *tmpl, int at, const struct pt_name *names)
{
    int fd = memfd_create(PT_INBOX_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    int hi = at >= 0 ? dup3(fd, at, O_CLOEXEC) : fcntl(fd, F_DUPFD_CLOEXEC, pt_inbox_fd_base());
    if (hi >= 0) {
        close(fd);
        fd = hi;
    }
    fchmod(fd, 0600);
    /* zeros, without pages yet; sealed: controllers map only an inbox that
     * cannot shrink under them (remote.c) */
    if (ftruncate(fd, PT_INBOX_SIZE) != 0 || pt_seal_size(fd) != 0) {
        close(fd);
        return -1;
    }
    if (!write_inbox(fd, tmpl, names) || !map_over(fd)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Keep the entries of streams children inherit; drop the others. */
static void keep_inherited(struct pt_inbox *ib)
{
    memset(ib->want.b, 0, sizeof ib->want.b); /* (a copy has no names: discover.c) */
    for (unsigned i = 0; i < PT_MAX_ATTACH; i++) {
        if (atomic_load(&ib->ent[i].state) != PT_IE_POSTED ||
            ib->ent[i].inherit != POSIX_TRACE_INHERITED)
            memset(&ib->ent[i], 0, sizeof ib->ent[i]);
    }
    pt_inbox_ring(ib); /* attach them at the first event */
}

/* A new image keeps its inbox from before the exec: the old image's names
 * are given back to the memfd as zeros. The pages the names fill are
 * punched (a memset would give pages to the names of every image, which
 * mostly has none), the ends shared with other fields set to zeros. */
static void forget_names(int fd)
{
    const size_t off = offsetof(struct pt_inbox, names), len = sizeof PT_INBOX->names;
    size_t lo = (off + 4095) & ~(size_t)4095, hi = (off + len) & ~(size_t)4095;
    unsigned char *base = (unsigned char *)PT_INBOX;
    if (hi <= lo || fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo,
                              (off_t)(hi - lo)) != 0) {
        memset(base + off, 0, len);
        return;
    }
    memset(base + off, 0, lo - off);
    memset(base + hi, 0, off + len - hi);
}

void pt_inbox_init(void)
{
    static struct pt_inbox found;
    if (inbox_ready)
        return;
    if (pt_proc_stat(getpid(), NULL, &pt_start) != 0)
        pt_start = 0;
    int fd = pt_discover_own_fds(&found);
    if (fd >= 0 && pt_secure()) {
        /* a set-id image: a new inbox (the old one is the less privileged
         * side's), with only the entries of root controllers (discover.c) */
        bool own = found.pid == pt_pid && found.start == pt_start;
        if (!own)
            keep_inherited(&found);
        memset(found.want.b, 0, sizeof found.want.b);
        pt_discover_keep_trusted(&found);
        pt_inbox_ring(&found);
        close(fd);
        inbox_ready = create_inbox(&found, -1, NULL) >= 0;
        if (inbox_ready)
            pt_inbox_refresh();
        return;
    }
    if (fd >= 0 && found.pid == pt_pid && found.start == pt_start) {
        /* our own, from before an exec: keep it, attach its streams */
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        if (map_over(fd)) {
            PT_INBOX->fd = fd;
            memset(pt_want, 0, PT_WANT_BYTES);
            forget_names(fd); /* the old image's */
            pt_inflight_forget(fd); /* the old image's threads */
            inbox_ready = 1;
            pt_inbox_ring(PT_INBOX);
            pt_inbox_refresh();
            return;
        }
    }
    if (fd >= 0 || pt_discover_ancestors(&found) == 0) {
        /* a parent's or an ancestor's: inherit its inherited streams */
        keep_inherited(&found);
        if (fd >= 0)
            close(fd);
        if (create_inbox(&found, -1, NULL) >= 0) {
            inbox_ready = 1;
            pt_inbox_refresh();
        }
        return;
    }
    inbox_ready = create_inbox(NULL, -1, NULL) >= 0;
}

/* First thing in a forked child: the page is still the parent's inbox,
 * shared; make it a private copy before anything writes to it. */
void pt_inbox_fork_private(void)
{
    if (!inbox_ready)
        return;
    /* not the cells (64 KiB): the child's new inbox starts without them */
    static struct pt_inbox copy; /* no malloc: this runs in fork children */
    memcpy(&copy, PT_INBOX, sizeof copy);
    void *p = mmap(&pt_inbox_obj, PT_INBOX_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != MAP_FAILED)
        memcpy(p, &copy, sizeof copy);
}

/* The forked child: a new inbox with the inherited streams' entries. The
 * attachments themselves were kept or dropped by process.c's handler. */
void pt_inbox_atfork_child(void)
{
    if (!inbox_ready)
        return;
    pt_proc_stat(getpid(), NULL, &pt_start);
    /* the want table, header and entries (the names are taken from the
     * private page as they are) */
    static struct pt_inbox copy; /* no malloc, not 75 KiB of stack */
    memcpy(&copy, PT_INBOX, offsetof(struct pt_inbox, names));
    int old = copy.fd;
    bool pending = false; /* posted, not yet attached by the parent: ours too */
    for (unsigned i = 0; i < PT_MAX_ATTACH; i++) {
        bool p = atomic_load(&copy.ent[i].state) == PT_IE_POSTED &&
                 copy.ent[i].inherit == POSIX_TRACE_INHERITED;
        if (atomic_load(&pt_att[i].shm) == NULL && !p)
            memset(&copy.ent[i], 0, sizeof copy.ent[i]);
        pending |= atomic_load(&pt_att[i].shm) == NULL && p;
    }
    /* not the parent's shared want bytes: ours (its bells cleared) */
    for (unsigned w = 0; w < PT_WANT_BYTES / 8; w++)
        copy.want.w[w] &= PT_WANT_ONS;
    /* at the parent's number: a controller looking sees one or the other */
    if (create_inbox(&copy, old, PT_INBOX->names) < 0) {
        inbox_ready = 0; /* no inbox: stay with the private copy */
        close(old);
    } else if (pending) {
        pt_inbox_ring(PT_INBOX); /* attach them at the first event */
    }
    for (unsigned i = 0; i < PT_MAX_ATTACH; i++) {
        struct pt_shm *s = atomic_load(&pt_att[i].shm);
        if (s == NULL)
            continue;
        pt_att[i].own = 0;
        pt_att[i].member = -1;
        pt_member_join(s, (int)i);
    }
}

/* A raw clone child that cannot become a process of its own (clone.c):
 * its page is a private copy already; the descriptor is its copy of the
 * parent's inbox, which it must not answer for. */
void pt_inbox_forget(void)
{
    if (!inbox_ready)
        return;
    clear_bells();
    close(PT_INBOX->fd);
    inbox_ready = 0;
}

/* ---- entries ---- */

static void set_inheritable(void)
{
    bool any = false;
    for (unsigned i = 0; i < PT_MAX_ATTACH && !any; i++)
        any = atomic_load(&PT_INBOX->ent[i].state) == PT_IE_POSTED;
    int fl = fcntl(PT_INBOX->fd, F_GETFD);
    if (fl >= 0)
        fcntl(PT_INBOX->fd, F_SETFD, any ? fl & ~FD_CLOEXEC : fl | FD_CLOEXEC);
}

/* A BUSY entry whose claimer is gone: it died between claiming and posting
 * (a controller killed in posix_trace_create). A claim that names no
 * process (pid 0) is left alone: nobody can tell when it ends. */
static bool abandoned(uint32_t st)
{
    uint32_t pid = st >> 8;
    if ((st & 0xffu) != PT_IE_BUSY || pid == 0 || pid == pt_pid)
        return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Claim a free entry of ib: CAS of its state FREE -> BUSY by us (no lock:
 * the inbox is another process's memory, and nothing in it may steer us);
 * if none is free, one abandoned by a dead claimer. NULL if none. */
struct pt_inbox_ent *pt_inbox_claim(struct pt_inbox *ib, int *idx)
{
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned i = 0; i < PT_MAX_ATTACH; i++) {
            uint32_t st = atomic_load(&ib->ent[i].state);
            if (st != PT_IE_FREE && (pass == 0 || !abandoned(st)))
                continue;
            if (atomic_compare_exchange_strong(&ib->ent[i].state, &st, PT_IE_BUSY_BY(pt_pid))) {
                *idx = (int)i;
                return &ib->ent[i];
            }
        }
    }
    return NULL;
}

/* Fill the entry e we claimed (BUSY) with stream s of this process, ctrl_fd
 * its memfd here (-1: a named object), and post it: the state is stored
 * last, so a reader that sees POSTED sees the rest. */
void pt_inbox_post(struct pt_inbox_ent *e, const struct pt_shm *s, int ctrl_fd, size_t size)
{
    e->ctrl_fd = ctrl_fd;
    e->ctrl_pid = pt_pid;
    e->ctrl_start = pt_start;
    e->inherit = s->inheritance;
    e->key = s->key;
    e->size = size;
    atomic_store(&e->state, PT_IE_POSTED);
}

/* An entry and attachment for a stream this process created for itself. */
int pt_inbox_add_own(struct pt_shm *s, size_t size, int fd)
{
    pt_att_lock_take();
    int idx = -EAGAIN;
    if (!inbox_ready) {
        /* no inbox: still trace ourselves, in any free attachment */
        for (unsigned i = 0; i < PT_MAX_ATTACH && idx < 0; i++)
            if (atomic_load(&pt_att[i].shm) == NULL)
                idx = (int)i;
        if (idx >= 0)
            pt_attach_set(idx, s, size, s->key, 1);
        pt_att_lock_drop();
        return idx;
    }
    for (unsigned i = 0; i < PT_MAX_ATTACH; i++) {
        struct pt_inbox_ent *e = &PT_INBOX->ent[i];
        uint32_t free_ = PT_IE_FREE;
        if (atomic_load(&pt_att[i].shm) != NULL ||
            !atomic_compare_exchange_strong(&e->state, &free_, PT_IE_BUSY_BY(pt_pid)))
            continue;
        pt_inbox_post(e, s, fd, size);
        pt_attach_set((int)i, s, size, s->key, 1);
        idx = (int)i;
        break;
    }
    if (idx >= 0)
        set_inheritable();
    pt_att_lock_drop();
    return idx;
}

/* Entry idx is free again (its attachment is gone). pt_att_lock held. */
void pt_inbox_free(int idx)
{
    if (!inbox_ready)
        return;
    struct pt_inbox_ent *e = &PT_INBOX->ent[idx];
    memset((char *)e + sizeof e->state, 0, sizeof *e - sizeof e->state);
    atomic_store(&e->state, PT_IE_FREE); /* last: a controller may claim it now */
    set_inheritable();
}

/* A user event name this process opened, for controllers to come. */
void pt_inbox_publish_name(trace_event_id_t id, const char *name)
{
    uint32_t i = id - POSIX_TRACE_UNNAMED_USEREVENT - 1;
    if (!inbox_ready || i >= TRACE_USER_EVENT_MAX)
        return;
    struct pt_name *n = &PT_INBOX->names[i];
    size_t len = strnlen(name, TRACE_EVENT_NAME_MAX);
    memcpy(n->name, name, len);
    n->name[len] = '\0';
    atomic_store_explicit(&n->valid, 1, memory_order_release);
}

/* ---- membership: who the controller rings ---- */

/* Claim member entry m if it is free, or (reclaim) held by a process that
 * is gone; an entry of ours from before an exec is taken over as it is. */
static bool claim_member(struct pt_shm *s, unsigned m, bool reclaim)
{
    struct pt_member *mb = &s->members[m];
    uint32_t st = atomic_load(&mb->state);
    if (st == 2 && mb->pid == pt_pid && mb->start == pt_start)
        return atomic_compare_exchange_strong(&mb->state, &st, 1);
    if (st == 2 && reclaim && !pt_proc_alive((pid_t)mb->pid, mb->start))
        return atomic_compare_exchange_strong(&mb->state, &st, 1);
    uint32_t zero = 0;
    return !reclaim && st == 0 && atomic_compare_exchange_strong(&mb->state, &zero, 1);
}

void pt_member_join(struct pt_shm *s, int att)
{
    if (!inbox_ready)
        return;
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned m = 0; m < PT_MAX_MEMBERS; m++) {
            if (!claim_member(s, m, pass == 1))
                continue;
            s->members[m].pid = pt_pid;
            s->members[m].start = pt_start;
            s->members[m].inbox_fd = PT_INBOX->fd;
            atomic_store(&s->members[m].state, 2);
            pt_att[att].member = (int)m;
            atomic_thread_fence(memory_order_seq_cst); /* then read state and filter */
            return;
        }
    }
}

static void member_leave(struct pt_shm *s, int att)
{
    int m = pt_att[att].member;
    if (m >= 0 && (unsigned)m < PT_MAX_MEMBERS && s->members[m].pid == pt_pid)
        atomic_store(&s->members[m].state, 0);
    pt_att[att].member = -1;
}

/* ---- answering the doorbell ---- */

/* This process's copies of a stream's state and filter. */
static void load_copies(int i, struct pt_shm *s)
{
    uint32_t st = atomic_load(&s->state);
    for (unsigned w = 0; w < PT_ID_SPACE / 64; w++)
        atomic_store(&pt_att[i].filter[w], atomic_load(&s->filter[w]));
    atomic_store(&pt_att[i].running, st == PT_ST_RUNNING || st == PT_ST_FULL);
}

/* What a /dev/shm name led to must be a plain file of `owner` (or of root,
 * with any_root), that nobody else may write (forbid: the mode bits that
 * must be clear), of `size` bytes: checked on the descriptor, before
 * mapping. Another user could have made the name first. */
static bool named_ok(int fd, uid_t owner, bool any_root, mode_t forbid, uint64_t size)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == size &&
           (st.st_uid == owner || (any_root && st.st_uid == 0)) && (st.st_mode & forbid) == 0;
}

/* Opens a /dev/shm name (no link followed, no blocking) and checks it. */
static int open_named(const char *name, int flags, uid_t owner, bool any_root, mode_t forbid,
                      uint64_t size)
{
    int fd = shm_open(name, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0);
    if (fd >= 0 && !named_ok(fd, owner, any_root, forbid, size)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* A memfd through /proc/<controller>/fd; a controller of another user (one
 * with CAP_SYS_PTRACE) gives us a /dev/shm object made ours, mode 0600. */
static int open_backing(const struct pt_inbox_ent *e)
{
    char path[128];
    if (e->ctrl_fd >= 0) {
        snprintf(path, sizeof path, "/proc/%u/fd/%d", e->ctrl_pid, e->ctrl_fd);
        return open(path, O_RDWR | O_CLOEXEC);
    }
    pt_shm_name(e->ctrl_pid, e->ctrl_start, e->key, path, sizeof path);
    return open_named(path, O_RDWR, getuid(), false, 077, e->size);
}

/* Tell the controller why we do not record into the stream behind fd
 * (posixtrace_stream_refusals): our entry of its refusal table, by pwrite. */
static void note_refusal(int fd, int err)
{
    struct pt_refusal r = { .pid = pt_pid, .err = err, .start = pt_start };
    off_t at = (off_t)(offsetof(struct pt_shm, refusals) + (pt_pid % PT_REFUSALS) * sizeof r);
    if (pwrite(fd, &r, sizeof r, at) != (ssize_t)sizeof r) { /* nothing more to tell */ }
}

/* The stream e names, mapped, its geometry checked (pt_shm_check) and its
 * first page made private: nothing another process of the stream writes
 * moves our writes. NULL if it cannot be; a stream that is there but
 * cannot be mapped (ENOMEM: a memory limit) or is inconsistent (EBADMSG)
 * is told why (note_refusal). */
static struct pt_shm *open_stream(const struct pt_inbox_ent *e, size_t *size)
{
    if (pt_secure() && !pt_discover_trusted(e))
        return NULL; /* a set-id image and a less privileged controller */
    int fd = open_backing(e);
    if (fd < 0)
        return NULL;
    if (e->ctrl_fd >= 0 && !pt_sealed_size(fd)) { /* could shrink under us */
        close(fd);
        return NULL;
    }
    int keep = fcntl(fd, F_DUPFD_CLOEXEC, 0); /* pt_map_whole closes fd */
    struct pt_shm *s = pt_map_whole(fd, e->size, PROT_READ | PROT_WRITE, NULL);
    int err = s == NULL ? (errno != 0 ? errno : ENOMEM) : 0;
    if (s != NULL && (e->size < sizeof(struct pt_shm) || s->magic != PT_SHM_MAGIC ||
                      s->version != PT_SHM_VERSION || s->key != e->key ||
                      atomic_load(&s->state) == PT_ST_SHUTDOWN ||
                      !pt_proc_alive((pid_t)e->ctrl_pid, e->ctrl_start))) {
        munmap(s, e->size); /* not this stream, or not any more */
        s = NULL;
    } else if (s != NULL && !pt_shm_check(s, e->size)) {
        err = EBADMSG;
    } else if (s != NULL && pt_shm_privatize(s) != 0) {
        err = ENOMEM;
    }
    if (err != 0 && s != NULL) {
        munmap(s, e->size);
        s = NULL;
    }
    if (err != 0 && keep >= 0 && e->size >= sizeof(struct pt_shm))
        note_refusal(keep, err);
    if (keep >= 0)
        close(keep);
    *size = e->size;
    return s;
}

/* The owner of process pid (its effective uid), or (uid_t)-1. */
static uid_t proc_uid(uint32_t pid)
{
    char path[32];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%u", pid);
    return stat(path, &st) == 0 ? st.st_uid : (uid_t)-1;
}

/* The controller's alive word, read-only, in *word (NULL: it cannot be
 * watched). false: the stream says it is watched through a named page, and
 * that page is missing or not the controller's (or root's), writable by
 * others or of the wrong size: not attached (see named_ok). */
static bool map_alive(const struct pt_inbox_ent *e, struct pt_shm *s, const int **word)
{
    *word = NULL;
    if (!s->watched || s->alive_fd < 0)
        return true;
    char path[96];
    int fd;
    if (e->ctrl_fd >= 0) {
        snprintf(path, sizeof path, "/proc/%u/fd/%d", e->ctrl_pid, s->alive_fd);
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } else { /* a controller of another user: its page by name */
        pt_shm_alive_name(e->ctrl_pid, e->ctrl_start, s->alive_key, path, sizeof path);
        fd = open_named(path, O_RDONLY, proc_uid(e->ctrl_pid), true, 022, 4096);
    }
    if (fd >= 0 && e->ctrl_fd >= 0 && !pt_sealed_size(fd)) { /* could shrink under us */
        close(fd);
        fd = -1;
    }
    const char *p = fd < 0 ? NULL : pt_map_whole(fd, 4096, PROT_READ, NULL);
    if (p != NULL)
        *word = (const int *)(p + offsetof(pthread_mutex_t, __data.__lock));
    return p != NULL || e->ctrl_fd >= 0;
}

static void unmap_alive(int i)
{
    if (pt_att[i].alive != NULL && !pt_att[i].own)
        munmap((void *)((uintptr_t)pt_att[i].alive & ~(uintptr_t)4095), 4096);
    pt_att[i].alive = NULL;
}

static void attach_entry(int i, const struct pt_inbox_ent *e)
{
    size_t size;
    struct pt_shm *s = open_stream(e, &size);
    if (s == NULL) {
        pt_inbox_free(i);
        return;
    }
    const int *alive;
    if (!map_alive(e, s, &alive)) {
        pt_shm_unmap(s, size);
        pt_inbox_free(i);
        return;
    }
    pt_names_register_all(s);
    pt_attach_set(i, s, size, e->key, 0);
    pt_att[i].alive = alive;
    if (pt_att_ctrl_dead(i)) {
        if (pt_attach_remove_locked(i)) { /* else a writer may still touch them */
            unmap_alive(i);
            pt_shm_unmap(s, size);
        }
        pt_inbox_free(i);
        return;
    }
    pt_member_join(s, i);
    load_copies(i, s);
    pt_want_update();
}

static void detach(int i)
{
    struct pt_shm *s = atomic_load(&pt_att[i].shm);
    size_t size = pt_att[i].map_size;
    member_leave(s, i);
    if (pt_attach_remove_locked(i)) { /* else a writer may still touch them */
        unmap_alive(i);
        pt_shm_unmap(s, size);
    }
    pt_inbox_free(i);
}

/* Attach, detach, reload, until no controller rang meanwhile; then the
 * doorbell bits go. They are cleared last, so that the other threads' events
 * keep coming to the slow path (and wait for us) until the new attachments
 * are in place: an event that began after a controller's start returned is
 * recorded, whichever thread records it. */
static void refresh_locked(void)
{
    for (int round = 0; round < 8; round++) {
        uint32_t seq = atomic_load(&PT_INBOX->seq);
        /* an entry seen POSTED (acquire) is complete, and stays as it is
         * until this process frees it */
        struct pt_inbox_ent posted[PT_MAX_ATTACH];
        for (unsigned i = 0; i < PT_MAX_ATTACH; i++) {
            bool p = atomic_load(&PT_INBOX->ent[i].state) == PT_IE_POSTED;
            if (p)
                posted[i] = PT_INBOX->ent[i];
            atomic_store(&posted[i].state, p ? PT_IE_POSTED : PT_IE_FREE);
        }
        for (unsigned i = 0; i < PT_MAX_ATTACH; i++) {
            struct pt_shm *s = atomic_load(&pt_att[i].shm);
            if (s != NULL && pt_att[i].own)
                continue; /* its handle keeps it */
            if (s == NULL) {
                if (atomic_load(&posted[i].state) == PT_IE_POSTED)
                    attach_entry((int)i, &posted[i]);
                continue;
            }
            if (atomic_load(&s->state) == PT_ST_SHUTDOWN || pt_att_ctrl_dead((int)i))
                detach((int)i);
            else
                load_copies((int)i, s);
        }
        pt_want_update();
        set_inheritable();
        clear_bells();
        if (atomic_load(&PT_INBOX->seq) == seq)
            return;
    }
    pt_inbox_ring_self();
}

/* Answer the doorbell. A thread that finds another at it waits for it (the
 * configuration is then complete); a signal handler that interrupted this
 * thread's own configuration work records with what is there. */
void pt_inbox_refresh(void)
{
    if (unlikely(!pt_registry_live()) && pt_tls_cfg == 0)
        pt_clone_adopt(); /* a raw clone child: not the parent's inbox */
    if (!inbox_ready || pt_tls_cfg != 0)
        return;
    int saved = errno;
    pt_names_lock_local(); /* lock order: names, then attachments (names.c) */
    pt_att_lock_take();
    if (__atomic_load_n(&pt_want[0], __ATOMIC_ACQUIRE) & PT_WANT_BELL)
        refresh_locked(); /* else another thread just did it */
    pt_att_lock_drop();
    pt_names_unlock_local();
    errno = saved;
}

/* ---- exec ---- */

/* Attach what is pending, and let the new image have the inbox (if the
 * process records into any stream), with our slots given up. */
void pt_inbox_before_exec(void)
{
    if (!inbox_ready)
        return;
    posixtrace_reserved_fd_repair();
    pt_inbox_refresh();
    set_inheritable();
    pt_release_all_slots();
}

/* ---- keeping the descriptor (posixtrace_reserved_fd, <posixtrace/record.h>) ---- */

PT_API int posixtrace_reserved_fd(void)
{
    return inbox_ready ? PT_INBOX->fd : -1;
}

/* The members entries of this process name its inbox by number. */
static void renumber_members(int fd)
{
    for (unsigned i = 0; i < PT_MAX_ATTACH; i++) {
        struct pt_shm *s = atomic_load(&pt_att[i].shm);
        int m = pt_att[i].member;
        if (s != NULL && m >= 0 && (unsigned)m < PT_MAX_MEMBERS && s->members[m].pid == pt_pid)
            s->members[m].inbox_fd = fd;
    }
}

/* The program is about to close or replace the inbox's descriptor: give the
 * inbox another number (inheritable as the old one was). In a vfork child,
 * whose memory is its parent's, only the child's descriptor moves: the image
 * it execs finds it by probing. Returns the new number, or -1. */
PT_API int posixtrace_reserved_fd_move(void)
{
    if (!inbox_ready)
        return -1;
    int saved = errno;
    int old = PT_INBOX->fd, fl = fcntl(old, F_GETFD);
    int fd = fl < 0 ? -1 : fcntl(old, F_DUPFD_CLOEXEC, pt_inbox_fd_base());
    if (fd >= 0 && !(fl & FD_CLOEXEC))
        fcntl(fd, F_SETFD, 0);
    if (fd >= 0 && (uint32_t)getpid() == PT_INBOX->pid) {
        pt_att_lock_take();
        PT_INBOX->fd = fd;
        renumber_members(fd);
        pt_att_lock_drop();
    }
    errno = saved;
    return fd;
}

/* Does the inbox's number still name the inbox? */
static bool fd_intact(void)
{
    struct stat st;
    return fstat(PT_INBOX->fd, &st) == 0 && st.st_dev == inbox_dev && st.st_ino == inbox_ino;
}

/* Before the process starts a new image (exec, posix_spawn, system, popen):
 * if the program closed the inbox's descriptor or put another file at its
 * number behind the interposers' back (a raw system call: fdkeep.c sees only
 * libc's calls), the inbox gets a new descriptor, so that the new image still
 * finds its streams when no ancestor holds them (doc/design.md, "Finding the
 * inherited streams"). A new memfd with what the inbox holds now, mapped in
 * its place; members renumbered; the doorbell rung, for whatever a
 * controller posted to the old one meanwhile. Nothing in a vfork child,
 * whose memory is its parent's (its image finds the parent's inbox). */
PT_API int posixtrace_reserved_fd_repair(void)
{
    if (!inbox_ready || (uint32_t)getpid() != PT_INBOX->pid)
        return -1;
    int saved = errno;
    pt_names_lock_local(); /* lock order: names, then attachments */
    pt_att_lock_take();
    int fd = PT_INBOX->fd;
    if (!fd_intact()) {
        fd = create_inbox(PT_INBOX, -1, PT_INBOX->names);
        if (fd >= 0) {
            renumber_members(fd);
            set_inheritable();
            pt_inbox_ring(PT_INBOX);
        } else {
            inbox_ready = 0; /* no inbox to keep: as a process that could not make one */
        }
    }
    pt_att_lock_drop();
    pt_names_unlock_local();
    errno = saved;
    return fd;
}
