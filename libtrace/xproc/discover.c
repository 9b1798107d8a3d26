/*
 * Discovery: how a new process image finds the streams it inherits
 * (doc/design.md, "Finding the inherited streams").
 *
 * 1. Its own descriptors: the inbox a former image of this process (exec)
 *    or a parent that exec'd it without forking through the library (vfork,
 *    posix_spawn) left open, at PT_INBOX_FD_MIN.. (or near the descriptor
 *    limit when that is low); where none is there, those above that range
 *    and the 16 highest below it (/proc/self/fd: a former image whose
 *    program had filled the range; scan_fds below says why no others).
 * 2. Its ancestors: a program may close every descriptor before exec
 *    (Python's close_fds, closefrom, close_range, daemons) or dup2 over the
 *    inbox. The nearest ancestor that has an inbox among its descriptors is
 *    the process it would have inherited from; its inherited entries are
 *    what a fork would have given; the same descriptors as in 1 are looked
 *    at (scan_fds). The walk stops at the first ancestor
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
#include <limits.h>
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

/*
 * Where a process's inbox can be (doc/design.md, "Finding the inherited
 * streams"). The library gives an inbox the first free number from
 * pt_inbox_fd_base(): PT_INBOX_FD_MIN, or, under a descriptor limit of at
 * most PT_INBOX_FD_MIN + 16, the 16 numbers below the limit; a fork child
 * keeps its parent's number, a new image's inbox and the shim's moves
 * (fdkeep.c, posixtrace_reserved_fd_repair) pick one the same way. So an
 * inbox is one of its process's descriptors from PT_INBOX_FD_MIN up (above
 * PT_INBOX_FD_MIN + 15 when those were taken), or one of its 16 highest
 * below PT_INBOX_FD_MIN, and only those are looked at: each look is a
 * readlink (2 to 3 us on this project's VMs), and an ancestor without the
 * library (a shell, a terminal, init) may hold hundreds of descriptors,
 * nearly always below PT_INBOX_FD_MIN. Missed: an inbox that got another
 * number because every one its process could give it was taken then.
 */
#define PT_CAND_LOW 16

struct fd_scan {
    pid_t pid;              /* 0: this process */
    struct pt_inbox *copy;
    int found;              /* the descriptor whose inbox is in copy, or -1 */
};

/* Is descriptor fd of the scanned process an inbox? true: its process's
 * own (stop looking); the first one found is kept until then. */
static bool scan_try(struct fd_scan *x, int fd)
{
    static struct pt_inbox tmp; /* 80 KiB: not on the stack */
    char path[64];
    if (x->pid == 0)
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    else
        snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)x->pid, fd);
    if (!read_inbox(path, x->pid == 0 ? fd : -1, &tmp))
        return false;
    bool own = x->pid == 0 ? tmp.pid == (uint32_t)getpid() && tmp.start == pt_start
                           : tmp.pid == (uint32_t)x->pid;
    if (x->found < 0 || own) {
        memcpy(x->copy, &tmp, COPY_BYTES);
        x->found = fd;
    }
    return own;
}

/* The inbox among the descriptors of process pid (0: this one): its
 * descriptor (its own preferred over one it inherited), -ENOENT none,
 * -EACCES may not look. /proc lists descriptors in increasing order. */
static int scan_fds(pid_t pid, struct pt_inbox *copy)
{
    char path[40];
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/fd");
    else
        snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return errno == ENOENT ? -ENOENT : -EACCES;
    struct fd_scan x = { .pid = pid, .copy = copy, .found = -1 };
    int low[PT_CAND_LOW], nlow = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end != '\0' || e->d_name[0] < '0' || e->d_name[0] > '9' || fd > INT_MAX ||
            fd < 3 || (pid == 0 && fd == dirfd(d))) /* never an inbox: pt_inbox_fd_base() */
            continue;
        if (fd < PT_INBOX_FD_MIN)
            low[nlow++ % PT_CAND_LOW] = (int)fd; /* the last 16 seen: the highest */
        else if (scan_try(&x, (int)fd))
            break;
    }
    closedir(d);
    for (int i = 0; x.found < 0 && i < nlow && i < PT_CAND_LOW; i++)
        if (scan_try(&x, low[i]))
            break;
    return x.found >= 0 ? x.found : -ENOENT;
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
    /* a former image whose program had filled that range (inbox.c,
     * posixtrace_reserved_fd_repair) gave it a number above */
    int fd = scan_fds(0, copy);
    return fd >= 0 ? fd : -1;
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
        int rc = scan_fds(p, copy);
        if (rc >= 0)
            return 0;
        if (rc != -ENOENT || p == 1 || pt_proc_ppid(p, &p) != 0)
            return -1;
    }
    return -1;
}
