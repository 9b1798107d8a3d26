/*
 * Discovery: how a new process image finds the streams it inherits
 * (doc/design.md, "Finding the inherited streams").
 *
 * 1. Its own descriptors: the inbox a former image of this process (exec)
 *    or a parent that exec'd it without forking through the library (vfork,
 *    posix_spawn) left open, at PT_INBOX_FD_MIN.. (or near the descriptor
 *    limit when that is low); where none is there, any other descriptor
 *    (/proc/self/fd: a former image whose program had filled that range).
 * 2. Its ancestors: a program may close every descriptor before exec
 *    (Python's close_fds, closefrom, close_range, daemons) or dup2 over the
 *    inbox. The nearest ancestor that has an inbox among its descriptors is
 *    the process it would have inherited from; its inherited entries are
 *    what a fork would have given. The walk stops at the first ancestor
 *    whose descriptors it may not look at (another user's: what a fork
 *    would not cross either), at pid 1, or after PT_ANCESTORS_MAX steps.
 *
 * 3. A set-user-ID or set-group-ID image (AT_SECURE) walks no ancestors and
 *    joins an inherited stream only if its controller is root (effective uid
 *    0 in /proc/<ctrl>/status, the process checked by its start time before
 *    and after) and gives the stream by memfd: everything else in the inbox
 *    was written by the less privileged former image or its controller, and
 *    a named /dev/shm object is owned by the real user, who could replace it.
 *    The kernel decides what the check reads, so the less privileged side
 *    cannot forge it: at most it names another root controller's stream.
 *
 * Neither costs the recording path anything: this runs once, when the
 * library starts in a new image.
 */
#include "../internal.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>

#define PT_ANCESTORS_MAX 64

/* A copy of another inbox: its want table, header and entries; never its
 * names (68 KiB, which no copy uses: a new inbox starts without them). */
#define COPY_BYTES offsetof(struct pt_inbox, names)

/* Read the inbox behind `path` (a descriptor link) into *copy. */
static bool read_inbox(const char *path, int fd, struct pt_inbox *copy)
{
    if (!pt_is_inbox_link(path))
        return false;
    int own = fd < 0 ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) : fd;
    if (own < 0)
        return false;
    bool ok = pread(own, copy, COPY_BYTES, 0) == (ssize_t)COPY_BYTES &&
              copy->magic == PT_INBOX_MAGIC && copy->version == PT_INBOX_VERSION;
    if (fd < 0)
        close(own);
    return ok;
}

int pt_inbox_fd_base(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur > PT_INBOX_FD_MIN + 16)
        return PT_INBOX_FD_MIN;
    return rl.rlim_cur > 3 + 16 ? (int)rl.rlim_cur - 16 : 3;
}

/* Every descriptor of this process (a program that put its own files over
 * the whole probed range made the library give the inbox a number above
 * it: inbox.c, posixtrace_reserved_fd_repair): the inbox of this process
 * preferred, else the first found. */
static int scan_all_fds(struct pt_inbox *copy)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    static struct pt_inbox tmp; /* 80 KiB: not on the stack */
    int found = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end != '\0' || e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d))
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%ld", fd);
        if (!read_inbox(path, (int)fd, &tmp))
            continue;
        bool own = tmp.pid == (uint32_t)getpid() && tmp.start == pt_start;
        if (found < 0 || own) {
            memcpy(copy, &tmp, COPY_BYTES);
            found = (int)fd;
        }
        if (own)
            break;
    }
    closedir(d);
    return found;
}

int pt_discover_own_fds(struct pt_inbox *copy)
{
    int base = pt_inbox_fd_base();
    for (int k = 0; k < 32; k++) {
        int fd = k < 16 ? PT_INBOX_FD_MIN + k : base + k - 16;
        if (k >= 16 && base == PT_INBOX_FD_MIN)
            break;
        char path[64];
        if (fcntl(fd, F_GETFD) < 0)
            continue;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (read_inbox(path, fd, copy))
            return fd;
    }
    return scan_all_fds(copy);
}

/* The inbox among the descriptors of process `pid`: 0 found (its own
 * preferred over one it inherited), ENOENT none, EACCES may not look. */
static int inbox_of(pid_t pid, struct pt_inbox *copy)
{
    char path[300];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return errno == ENOENT ? ENOENT : EACCES;
    static struct pt_inbox tmp; /* 80 KiB: not on the stack */
    int rc = ENOENT;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%d/fd/%.255s", (int)pid, e->d_name);
        if (!read_inbox(path, -1, &tmp))
            continue;
        bool its_own = tmp.pid == (uint32_t)pid;
        if (rc != 0 || its_own)
            memcpy(copy, &tmp, COPY_BYTES);
        rc = 0;
        if (its_own)
            break;
    }
    closedir(d);
    return rc;
}

bool pt_secure(void)
{
    return getauxval(AT_SECURE) != 0;
}

bool pt_discover_trusted(const struct pt_inbox_ent *e)
{
    uid_t euid;
    if (e->ctrl_fd < 0 || !pt_proc_alive((pid_t)e->ctrl_pid, e->ctrl_start))
        return false;
    return pt_proc_euid((pid_t)e->ctrl_pid, &euid) == 0 && euid == 0 &&
           pt_proc_alive((pid_t)e->ctrl_pid, e->ctrl_start);
}

void pt_discover_keep_trusted(struct pt_inbox *ib)
{
    for (unsigned i = 0; i < PT_MAX_ATTACH; i++) {
        if (atomic_load(&ib->ent[i].state) != PT_IE_POSTED || !pt_discover_trusted(&ib->ent[i]))
            memset(&ib->ent[i], 0, sizeof ib->ent[i]);
    }
}

int pt_discover_ancestors(struct pt_inbox *copy)
{
    if (pt_secure())
        return -1; /* set-id: never join a less privileged trace (issue of trust) */
    pid_t p = getppid();
    for (int depth = 0; depth < PT_ANCESTORS_MAX && p > 0; depth++) {
        int rc = inbox_of(p, copy);
        if (rc == 0)
            return 0;
        if (rc != ENOENT || p == 1 || pt_proc_ppid(p, &p) != 0)
            return -1;
    }
    return -1;
}
