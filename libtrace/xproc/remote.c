/*
 * The controller side of tracing another process: finding the target's
 * inbox, posting a stream in it, ringing the doorbells of the processes that
 * record into a stream, and the keeper thread whose death tells targets that
 * the controller is gone (doc/design.md, "Other processes").
 */
#include "../internal.h"
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Descriptor fdno of pid, opened read-write only if it is a regular file
 * (a memfd is one): first as O_PATH, which opens nothing (a device, a FIFO or
 * a tape named by a hostile number is never opened), then reopened through
 * /proc/self/fd. The descriptor, or -EPERM (we may not look), -ESRCH. */
static int open_regular(pid_t pid, int fdno)
{
    char path[64];
    struct stat sb;
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fdno);
    int o = open(path, O_PATH | O_CLOEXEC);
    if (o < 0)
        return errno == EACCES || errno == EPERM ? -EPERM : -ESRCH;
    int fd = -ESRCH;
    if (fstat(o, &sb) == 0 && S_ISREG(sb.st_mode)) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", o);
        fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
            fd = errno == EACCES || errno == EPERM ? -EPERM : -ESRCH;
    }
    close(o);
    return fd;
}

/* Map the inbox at /proc/<pid>/fd/<fdno> if it is the inbox of (pid, start)
 * (start 0: any). EPERM when we may not look, ESRCH when it is not there.
 * The descriptor may be anything by the time we open it (the number comes
 * from the target, or a member entry anyone can write): opened without
 * blocking or taking a terminal, and mapped only if it is a memfd sealed at
 * the inbox's size, so that its owner cannot shrink it under us (SIGBUS). */
int pt_remote_open_inbox(pid_t pid, uint64_t start, int fdno, struct pt_inbox **out)
{
    int fd = open_regular(pid, fdno);
    if (fd < 0)
        return -fd;
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & PT_INBOX_SEALS) != PT_INBOX_SEALS) {
        close(fd);
        return ESRCH;
    }
    struct pt_inbox *ib = pt_map_whole(fd, PT_INBOX_SIZE, PROT_READ | PROT_WRITE, NULL);
    if (ib == NULL)
        return ESRCH;
    if (ib->magic != PT_INBOX_MAGIC || ib->version != PT_INBOX_VERSION ||
        ib->pid != (uint32_t)pid ||
        (start != 0 && ib->start != start)) {
        munmap(ib, PT_INBOX_SIZE);
        return ESRCH;
    }
    *out = ib;
    return 0;
}

void pt_remote_close_inbox(struct pt_inbox *ib)
{
    munmap(ib, PT_INBOX_SIZE);
}

static bool is_inbox_link(pid_t pid, const char *name)
{
    char path[300];
    snprintf(path, sizeof path, "/proc/%d/fd/%.255s", (int)pid, name);
    return pt_is_inbox_link(path);
}

static int scan_fds(pid_t pid, uint64_t start, struct pt_inbox **ib, bool *foreign)
{
    char path[40];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return errno == EACCES || errno == EPERM ? EPERM : ESRCH;
    int rc = ENOENT;
    struct dirent *e;
    while (rc == ENOENT && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) < 3 || !is_inbox_link(pid, e->d_name))
            continue;
        int r = pt_remote_open_inbox(pid, start, atoi(e->d_name), ib);
        if (r == ESRCH)
            *foreign = true; /* another process's: a fork not finished yet */
        else
            rc = r;
    }
    closedir(d);
    return rc;
}

int pt_remote_find_inbox(pid_t pid, uint64_t *start, struct pt_inbox **ib)
{
    char st;
    if (pt_proc_stat(pid, &st, start) != 0 || st == 'Z' || st == 'X')
        return ESRCH;
    for (int tries = 0;; tries++) {
        bool foreign = false;
        int rc = scan_fds(pid, *start, ib, &foreign);
        if (rc != ENOENT || !foreign || tries == 100)
            return rc;
        struct timespec ms = { 0, 1000 * 1000 };
        nanosleep(&ms, NULL); /* a just-forked child is making its own inbox */
    }
}

/* Post stream s (our memfd fd) in a free entry of the target's inbox,
 * claimed by CAS: EAGAIN when none is free ("no more trace streams can be
 * started now"). Nothing waits: a target that keeps its entries busy only
 * keeps streams from being created for it. */
int pt_remote_post(struct pt_inbox *ib, struct pt_shm *s, int fd, size_t size)
{
    int idx;
    struct pt_inbox_ent *e = pt_inbox_claim(ib, &idx);
    if (e == NULL)
        return EAGAIN;
    pt_inbox_post(e, s, s->named ? -1 : fd, size);
    pt_inbox_ring(ib);
    return 0;
}

/*
 * Start, stop, a new filter or shutdown: every process recording into s
 * reloads its copies at its next event. A member whose process is gone
 * leaves the table.
 */
void pt_remote_ring_members(struct pt_shm *s)
{
    atomic_thread_fence(memory_order_seq_cst); /* the change, then the look */
    for (unsigned m = 0; m < PT_MAX_MEMBERS; m++) {
        struct pt_member *mb = &s->members[m];
        if (atomic_load(&mb->state) != 2)
            continue;
        if (mb->pid == pt_pid && mb->start == pt_start) {
            pt_inbox_ring_self();
            continue;
        }
        struct pt_inbox *ib;
        int rc = pt_remote_open_inbox((pid_t)mb->pid, mb->start, mb->inbox_fd, &ib);
        if (rc == 0) {
            pt_inbox_ring(ib);
            pt_remote_close_inbox(ib);
        } else if (!pt_proc_alive((pid_t)mb->pid, mb->start)) {
            uint32_t two = 2;
            atomic_compare_exchange_strong(&mb->state, &two, 0);
        }
    }
}

/* ---- the keeper ----
 * One thread of the controller locks a robust mutex in a small memfd of its
 * own ("posixtrace-alive") and holds it for the life of the process. When
 * the controller dies, however it dies, the kernel marks the mutex
 * FUTEX_OWNER_DIED. Targets map that page read-only (it is not in the
 * stream, which they may scribble over) and test the word with one load
 * (pt_att_ctrl_dead) at their chunk switches and when answering the doorbell. */
static pthread_mutex_t keeper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t keeper_cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t *keeper_req;       /* a mutex for the keeper to take */
static int keeper_started, keeper_rc;
static pthread_mutex_t *alive_m, *alive_named_m;
static int alive_fd = -1;
static uint64_t alive_named_key; /* the random part of its /dev/shm name */

static void *keeper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&keeper_lock);
    for (;;) { /* lock what it is asked to, and hold it until the process ends */
        while (keeper_req == NULL)
            pthread_cond_wait(&keeper_cv, &keeper_lock);
        keeper_rc = pthread_mutex_lock(keeper_req);
        keeper_req = NULL;
        pthread_cond_broadcast(&keeper_cv);
    }
    return NULL;
}

/* keeper_lock held: have the keeper thread take m. */
static int keeper_take(pthread_mutex_t *m)
{
    if (!keeper_started) {
        pthread_t t;
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old); /* it takes no signal of the program's */
        int rc = pthread_create(&t, NULL, keeper_main, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc != 0)
            return rc;
        pthread_detach(t);
        keeper_started = 1;
    }
    keeper_req = m;
    pthread_cond_broadcast(&keeper_cv);
    while (keeper_req != NULL)
        pthread_cond_wait(&keeper_cv, &keeper_lock);
    return keeper_rc;
}

/* fd: a new memfd (seal: sealed at its size) or a new /dev/shm object of
 * ours (O_EXCL): nobody else can resize it under the targets that map it. */
static pthread_mutex_t *map_alive_page(int fd, bool seal)
{
    fchmod(fd, 0644); /* a lock word, nothing else: anyone may watch it */
    void *p = MAP_FAILED;
    if (ftruncate(fd, 4096) == 0 && (!seal || pt_seal_size(fd) == 0))
        p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (pt_robust_init(p) != 0 || keeper_take(p) != 0) {
        munmap(p, 4096);
        return NULL;
    }
    return p;
}

/* The descriptor of this controller's alive page (made on first use), or
 * -1; *word: its lock word, mapped here. */
int pt_keeper_alive(const int **word)
{
    pthread_mutex_lock(&keeper_lock);
    if (alive_m == NULL) {
        int fd = memfd_create("posixtrace-alive", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd >= 0 && (alive_m = map_alive_page(fd, true)) == NULL)
            close(fd);
        else
            alive_fd = fd;
    }
    int fd = alive_m != NULL ? alive_fd : -1;
    if (word != NULL)
        *word = fd >= 0 ? (const int *)&alive_m->__data.__lock : NULL;
    pthread_mutex_unlock(&keeper_lock);
    return fd;
}

/* The same page under a /dev/shm name, for targets of other users, which
 * cannot open our memfd (pt_shm_alive_name; removed by pt_shm_cleanup_stale
 * once we are gone). The name has a random part (in the stream header, which
 * only the target can read) and is created O_EXCL: no other user can make it
 * first and have us adopt an object they can truncate (SIGBUS in the target)
 * or write. A name that exists already is not ours: another key. */
static int create_alive_named(uint64_t *key)
{
    for (int tries = 0; tries < 4; tries++) {
        char name[96];
        uint64_t k = pt_random_key();
        pt_shm_alive_name(pt_pid, pt_start, k, name, sizeof name);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            *key = k;
            return fd;
        }
        if (errno != EEXIST)
            break;
    }
    return -1;
}

static void unlink_alive_named(void)
{
    char name[96];
    pt_shm_alive_name(pt_pid, pt_start, alive_named_key, name, sizeof name);
    shm_unlink(name);
}

static int named_users;

/* 0 and *key (the name's random part), or an error. */
int pt_keeper_alive_named(uint64_t *key)
{
    pthread_mutex_lock(&keeper_lock);
    int rc = 0;
    named_users++;
    if (alive_named_m == NULL) {
        int fd = create_alive_named(&alive_named_key);
        if (fd < 0 || (alive_named_m = map_alive_page(fd, false)) == NULL) {
            rc = EAGAIN;
            if (fd >= 0)
                unlink_alive_named();
        }
        if (fd >= 0)
            close(fd);
    }
    if (rc != 0)
        named_users--;
    *key = alive_named_key;
    pthread_mutex_unlock(&keeper_lock);
    return rc;
}

/* A named stream was shut down: with the last, the name goes (the page
 * stays mapped and held: the keeper never lets go of a lock). */
void pt_keeper_alive_named_done(void)
{
    pthread_mutex_lock(&keeper_lock);
    if (named_users > 0 && --named_users == 0 && alive_named_m != NULL) {
        unlink_alive_named();
        alive_named_m = NULL;
    }
    pthread_mutex_unlock(&keeper_lock);
}

/* The child has no keeper thread; the parent's alive page stays mapped. */
void pt_keeper_atfork_child(void)
{
    keeper_started = 0;
    keeper_req = NULL;
    alive_fd = -1;
    alive_m = alive_named_m = NULL;
    alive_named_key = 0;
    named_users = 0;
    pthread_mutex_init(&keeper_lock, NULL);
    pthread_cond_init(&keeper_cv, NULL);
}
