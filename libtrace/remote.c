/*
 * The controller side of tracing another process: finding the target's
 * inbox, posting a stream in it, ringing the doorbells of the processes that
 * record into a stream, and the keeper thread whose death tells targets that
 * the controller is gone (doc/design.md, "Other processes").
 */
#include "internal.h"
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Map the inbox at /proc/<pid>/fd/<fdno> if it is the inbox of (pid, start)
 * (start 0: any). EPERM when we may not look, ESRCH when it is not there. */
int pt_remote_open_inbox(pid_t pid, uint64_t start, int fdno, struct pt_inbox **out)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fdno);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return errno == EACCES || errno == EPERM ? EPERM : ESRCH;
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size == PT_INBOX_SIZE)
        p = mmap(NULL, PT_INBOX_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return ESRCH;
    struct pt_inbox *ib = p;
    if (ib->magic != PT_INBOX_MAGIC || ib->version != 1 || ib->pid != (uint32_t)pid ||
        (start != 0 && ib->start != start)) {
        munmap(p, PT_INBOX_SIZE);
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
    char path[300], link[128];
    snprintf(path, sizeof path, "/proc/%d/fd/%.255s", (int)pid, name);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0)
        return false;
    link[n] = '\0';
    return strncmp(link, "/memfd:" PT_INBOX_NAME, sizeof "/memfd:" PT_INBOX_NAME - 1) == 0;
}

/*
 * The inbox of process pid, and its start time. EPERM: we may not trace it
 * (reading /proc/<pid>/fd needs what ptrace needs); ENOENT: it has no inbox
 * (libposixtrace is not loaded in it).
 */
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

/* Post stream s (our memfd fd) in a free entry of the target's inbox. */
int pt_remote_post(struct pt_inbox *ib, struct pt_shm *s, int fd, size_t size)
{
    if (pt_inbox_lock(ib) != 0)
        return EAGAIN;
    int rc = EAGAIN;
    for (unsigned i = 0; i < PT_MAX_ATTACH; i++) {
        struct pt_inbox_ent *e = &ib->ent[i];
        if (atomic_load(&e->state) != PT_IE_FREE)
            continue;
        atomic_store(&e->state, PT_IE_BUSY);
        e->ctrl_fd = s->named ? -1 : fd;
        e->ctrl_pid = pt_pid;
        e->ctrl_start = pt_start;
        e->inherit = s->inheritance;
        e->key = s->key;
        e->size = size;
        atomic_store(&e->state, PT_IE_POSTED);
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&ib->lock);
    if (rc == 0)
        pt_inbox_ring(ib);
    return rc;
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
 * A thread of the controller holds each watched stream's robust ctrl_alive
 * mutex for the stream's life. When the controller process dies, however it
 * dies, the kernel marks the mutexes its threads held FUTEX_OWNER_DIED: the
 * targets see it with one load (pt_ctrl_dead) at their next chunk switch. */
static pthread_mutex_t keeper_call = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t keeper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t keeper_cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t *keeper_req;
static int keeper_op, keeper_rc, keeper_started;

static void *keeper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&keeper_lock);
    for (;;) {
        while (keeper_req == NULL)
            pthread_cond_wait(&keeper_cv, &keeper_lock);
        if (keeper_op)
            keeper_rc = pthread_mutex_lock(keeper_req);
        else
            keeper_rc = pthread_mutex_unlock(keeper_req);
        keeper_req = NULL;
        pthread_cond_broadcast(&keeper_cv);
    }
    return NULL;
}

static int keeper_do(pthread_mutex_t *m, int op)
{
    pthread_mutex_lock(&keeper_call);
    pthread_mutex_lock(&keeper_lock);
    int rc = 0;
    if (!keeper_started) {
        pthread_t t;
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old); /* it takes no signal of the program's */
        rc = pthread_create(&t, NULL, keeper_main, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc == 0) {
            pthread_detach(t);
            keeper_started = 1;
        }
    }
    if (rc == 0) {
        keeper_req = m;
        keeper_op = op;
        pthread_cond_broadcast(&keeper_cv);
        while (keeper_req != NULL)
            pthread_cond_wait(&keeper_cv, &keeper_lock);
        rc = keeper_rc;
    }
    pthread_mutex_unlock(&keeper_lock);
    pthread_mutex_unlock(&keeper_call);
    return rc;
}

int pt_keeper_hold(pthread_mutex_t *m)
{
    return keeper_do(m, 1);
}

void pt_keeper_release(pthread_mutex_t *m)
{
    keeper_do(m, 0);
}

/* The child has no keeper thread (the parent's keeps the parent's streams). */
void pt_keeper_atfork_child(void)
{
    keeper_started = 0;
    keeper_req = NULL;
    pthread_mutex_init(&keeper_lock, NULL);
    pthread_mutex_init(&keeper_call, NULL);
    pthread_cond_init(&keeper_cv, NULL);
}
