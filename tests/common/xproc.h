/*
 * xproc.h: helpers of the cross-process tests (tests/xproc/t05N_*.c, tests/api/t025_shrink.c;
 * issue 4: a controller traces other processes).
 *
 * Processes
 *   xp_spawn(role, fn, arg)   fork()s a child that runs fn(link, arg) under an
 *                             alarm() watchdog and exit()s with its result;
 *                             two pipes connect it with the parent
 *   xp_put(fd, v) / xp_get(fd, timeout_ms, what)
 *                             one int64_t through a pipe; xp_get exits the
 *                             process (code 4) on timeout or end of file
 *   xp_wait(pid, timeout_ms)  waitpid() bounded by a timeout (then SIGKILL)
 *   xp_print_exit(label, st)  "label exit=N" or "label signal=N"
 *   xp_role_add(pid, role)    names a pid: printed events show the role
 *   xp_shared(size)           zeroed MAP_SHARED anonymous memory (survives fork)
 *   xp_spawn_target(role, &id) a scripted target (xp_target_loop: records on
 *                             command, xp_cmd()), xp_finish() ends it
 *   xp_spawn_as / xp_spawn_target_as   the same as another user (root only)
 *   The programs use tc_alarm_watchdog, not tc_watchdog: a child fork()ed
 *   while the watchdog thread was starting could inherit an allocator lock
 *   held by it (seen with ASan: the child then hangs in LeakSanitizer's
 *   check at exit).
 *
 * Events
 *   User events carry a struct xp_pl first in their data: who recorded them
 *   (role, thread number, pid, pthread_self), what (the event name the
 *   recorder used, a sequence number) and `extra` pattern bytes that follow.
 *   xp_rec() records one.  The collector (struct xp_col) reads a stream and
 *   checks every event against its payload: posix_pid == the payload pid,
 *   posix_thread_id == the payload thread, the pattern bytes, and
 *   posix_trace_eventid_get_name(posix_event_id) == the payload name.  It
 *   prints one line per (role, thread number, name, id, pid):
 *     "<pfx> user role=T thr=0 name=xp/ev id=257 pid=T tid=... n=1000
 *      seq=0..999 gaps=0 disorder=0 bad=0 namebad=0"
 *   one per (system event, pid): "<pfx> sys name=posix_trace_start pid=C n=1"
 *   then "<pfx> lost=N foreign=N end" (N lost: the sum of the OVERFLOW events).
 *   A pid prints as its role when one was registered with xp_role_add, else
 *   as the number (rawpid= always prints the number).  xp_collect() reads
 *   until N "xp/done" events or a timeout; xp_drain() what is there now.
 */
#ifndef POSIXTRACE_XPROC_H
#define POSIXTRACE_XPROC_H

#include "tcommon.h"

#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

/* ---- pipes ---- */
static inline void xp_put(int fd, int64_t v)
{
    ssize_t n;
    do
        n = write(fd, &v, sizeof v);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof v) {
        printf("xp_put failed (pid %ld): %s\n", (long)getpid(), strerror(errno));
        fflush(stdout);
        exit(4);
    }
}

/* 1 and *v set when a value came within timeout_ms, 0 on timeout, -1 at EOF. */
static inline int xp_tryget(int fd, int timeout_ms, int64_t *v)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int64_t deadline = tc_mono_ns() + (int64_t)timeout_ms * 1000000;
    for (;;) {
        int64_t left = (deadline - tc_mono_ns()) / 1000000;
        if (left < 0)
            return 0;
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            return 0;
        ssize_t n;
        do
            n = read(fd, v, sizeof *v);
        while (n < 0 && errno == EINTR);
        if (n == 0)
            return -1;
        if (n != (ssize_t)sizeof *v) {
            printf("xp_get: short read %zd\n", n);
            fflush(stdout);
            exit(4);
        }
        return 1;
    }
}

static inline int64_t xp_get(int fd, int timeout_ms, const char *what)
{
    int64_t v = 0;
    int r = xp_tryget(fd, timeout_ms, &v);
    if (r != 1) {
        printf("xp_get (pid %ld): %s waiting for %s\n", (long)getpid(),
               r == 0 ? "TIMEOUT" : "EOF", what);
        fflush(stdout);
        exit(4);
    }
    return v;
}

static inline void xp_pipe(int fds[2])
{
    if (pipe2(fds, O_CLOEXEC) != 0) {
        printf("pipe2: %s\n", strerror(errno));
        exit(2);
    }
}

/* copies src into dst[size], cut to size - 1 characters */
static inline void xp_strcpy(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* ---- shared memory and roles ---- */
static inline void *xp_shared(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    TC_ASSERT(p != MAP_FAILED);
    return p;
}

#define XP_MAX_ROLES 64
static struct {
    pid_t pid;
    char role[8];
} xp_roles[XP_MAX_ROLES];
static int xp_nroles;

static inline void xp_role_add(pid_t pid, const char *role)
{
    TC_ASSERT(xp_nroles < XP_MAX_ROLES);
    xp_roles[xp_nroles].pid = pid;
    xp_strcpy(xp_roles[xp_nroles].role, sizeof xp_roles[0].role, role);
    xp_nroles++;
}

/* The role registered for pid (the latest), else the number. */
static inline const char *xp_pidname(pid_t pid)
{
    static __thread char buf[24];
    for (int i = xp_nroles - 1; i >= 0; i--)
        if (xp_roles[i].pid == pid)
            return xp_roles[i].role;
    snprintf(buf, sizeof buf, "%ld", (long)pid);
    return buf;
}

/* ---- processes ---- */
struct xp_link {
    int in;   /* child reads what the parent xp_put()s on xp_proc.to */
    int out;  /* child writes, the parent reads xp_proc.from */
};

struct xp_proc {
    pid_t pid;
    int to;
    int from;
};

typedef int (*xp_fn)(struct xp_link *l, void *arg);

static inline struct xp_proc xp_spawn(const char *role, xp_fn fn, void *arg)
{
    int down[2], up[2];
    xp_pipe(down);
    xp_pipe(up);
    fflush(stdout);
    pid_t pid = fork();
    TC_ASSERT(pid >= 0);
    if (pid == 0) {
        struct xp_link l = { down[0], up[1] };
        close(down[1]);
        close(up[0]);
        tc_alarm_watchdog(40);
        int rc = fn(&l, arg);
        fflush(stdout);
        exit(rc);
    }
    close(down[0]);
    close(up[1]);
    if (role != NULL)
        xp_role_add(pid, role);
    struct xp_proc p = { pid, down[1], up[0] };
    return p;
}

/* waitpid bounded by timeout_ms: the status, or -1 after killing it. */
static inline int xp_wait(pid_t pid, int timeout_ms)
{
    int st;
    int64_t deadline = tc_mono_ns() + (int64_t)timeout_ms * 1000000;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (r < 0 && errno != EINTR) {
            printf("waitpid %ld: %s\n", (long)pid, strerror(errno));
            return -1;
        }
        if (tc_mono_ns() > deadline) {
            printf("TIMEOUT waiting for pid %ld: killed\n", (long)pid);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        tc_sleep_ms(1);
    }
}

static inline void xp_print_exit(const char *label, int st)
{
    if (st == -1)
        printf("%s timeout\n", label);
    else if (WIFEXITED(st))
        printf("%s exit=%d\n", label, WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        printf("%s signal=%d\n", label, WTERMSIG(st));
    else
        printf("%s status=%#x\n", label, st);
}

/* An exit status as a small number for a parent process to aggregate:
 * 0 = exited 0. */
static inline int xp_status_code(int st)
{
    if (st == -1)
        return 90;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 100 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* ---- stream creation for another process ---- */
static inline void xp_attr(trace_attr_t *a, size_t streamsize, size_t maxdata, int policy,
                           int inherit)
{
    CHECK(posix_trace_attr_init(a));
    if (streamsize)
        CHECK(posix_trace_attr_setstreamsize(a, streamsize));
    if (maxdata)
        CHECK(posix_trace_attr_setmaxdatasize(a, maxdata));
    if (policy)
        CHECK(posix_trace_attr_setstreamfullpolicy(a, policy));
    if (inherit)
        CHECK(posix_trace_attr_setinherited(a, inherit));
}

/* Creates a stream for pid (sizes 0: defaults); exits on failure. */
static inline trace_id_t xp_create(pid_t pid, size_t streamsize, size_t maxdata, int policy,
                                   int inherit)
{
    trace_attr_t a;
    trace_id_t trid;
    xp_attr(&a, streamsize, maxdata, policy, inherit);
    int rc = posix_trace_create(pid, &a, &trid);
    if (rc != 0) {
        printf("create for %s rc=%s\n", xp_pidname(pid), tc_errname(rc));
        fflush(stdout);
        exit(2);
    }
    CHECK(posix_trace_attr_destroy(&a));
    return trid;
}

/* ---- payloads ---- */
#define XP_MAGIC 0x50525058u /* "XPRP" */

struct xp_pl {
    uint32_t magic;
    uint32_t thr;
    int32_t pid;
    uint32_t extra;  /* pattern bytes after the payload */
    uint64_t tid;
    uint64_t seq;
    char role[8];
    char name[24];
};

static inline unsigned char xp_pat(uint64_t seq, size_t i)
{
    return (unsigned char)(seq * 31u + i * 7u + 5u);
}

/* Fills buf (sizeof(struct xp_pl) + extra bytes) and returns its length. */
static inline size_t xp_fill(void *buf, const char *name, const char *role, unsigned thr,
                             uint64_t seq, size_t extra)
{
    struct xp_pl p;
    memset(&p, 0, sizeof p);
    p.magic = XP_MAGIC;
    p.thr = thr;
    p.pid = (int32_t)getpid();
    p.extra = (uint32_t)extra;
    p.tid = (uint64_t)pthread_self();
    p.seq = seq;
    xp_strcpy(p.role, sizeof p.role, role);
    xp_strcpy(p.name, sizeof p.name, name);
    memcpy(buf, &p, sizeof p);
    unsigned char *x = (unsigned char *)buf + sizeof p;
    for (size_t i = 0; i < extra; i++)
        x[i] = xp_pat(seq, i);
    return sizeof p + extra;
}

#define XP_EXTRA 16

/* Records one event of type id named name (what the recorder opened). */
static inline void xp_rec(trace_event_id_t id, const char *name, const char *role,
                          unsigned thr, uint64_t seq)
{
    unsigned char buf[sizeof(struct xp_pl) + XP_EXTRA];
    size_t n = xp_fill(buf, name, role, thr, seq, XP_EXTRA);
    posix_trace_event(id, buf, n);
}

/* ---- the collector ---- */
#define XP_MAX_KEYS 64
#define XP_MAX_SYS 32

struct xp_key {
    char role[8];
    unsigned thr;
    char name[24];
    trace_event_id_t id;
    pid_t pid;
    uint64_t tid;
    long n;
    uint64_t first, last;
    long gaps, disorder, bad, namebad;
};

struct xp_sys {
    trace_event_id_t id;
    pid_t pid;
    long n;
};

struct xp_col {
    trace_id_t trid;
    const char *done_name;  /* payload name of "done" events (default xp/done) */
    int ndone;              /* done events seen */
    long lost;              /* sum of the OVERFLOW events' counts */
    long foreign;           /* user events without a valid payload */
    long total;             /* events read */
    int stop;               /* set by the hook: xp_collect returns */
    int anypid;             /* one key for all pids of a role (bad counts
                               events whose posix_pid is not the recorder's) */
    int nkeys, nsys;
    struct xp_key keys[XP_MAX_KEYS];
    struct xp_sys sys[XP_MAX_SYS];
    /* optional: called for every event read (after it was counted) */
    void (*hook)(struct xp_col *c, const tc_event *e, void *arg);
    void *hook_arg;
};

static inline void xp_col_init(struct xp_col *c, trace_id_t trid)
{
    memset(c, 0, sizeof *c);
    c->trid = trid;
    c->done_name = "xp/done";
}

static inline int xp_check_payload(const tc_event *e, struct xp_pl *p)
{
    if (e->len < sizeof *p)
        return 0;
    memcpy(p, e->data, sizeof *p);
    if (p->magic != XP_MAGIC)
        return 0;
    p->role[sizeof p->role - 1] = '\0';
    p->name[sizeof p->name - 1] = '\0';
    return 1;
}

static inline struct xp_key *xp_key_of(struct xp_col *c, const struct xp_pl *p,
                                       const tc_event *e)
{
    for (int i = 0; i < c->nkeys; i++) {
        struct xp_key *k = &c->keys[i];
        if (k->thr == p->thr && k->id == e->info.posix_event_id &&
            (c->anypid || k->pid == e->info.posix_pid) && strcmp(k->role, p->role) == 0 &&
            strcmp(k->name, p->name) == 0)
            return k;
    }
    if (c->nkeys == XP_MAX_KEYS) {
        printf("collector: too many keys\n");
        exit(3);
    }
    struct xp_key *k = &c->keys[c->nkeys++];
    memset(k, 0, sizeof *k);
    memcpy(k->role, p->role, sizeof k->role);
    k->thr = p->thr;
    memcpy(k->name, p->name, sizeof k->name);
    k->id = e->info.posix_event_id;
    k->pid = e->info.posix_pid;
    k->tid = (uint64_t)e->info.posix_thread_id;
    return k;
}

static inline void xp_count_sys(struct xp_col *c, const tc_event *e)
{
    for (int i = 0; i < c->nsys; i++) {
        if (c->sys[i].id == e->info.posix_event_id && c->sys[i].pid == e->info.posix_pid) {
            c->sys[i].n++;
            return;
        }
    }
    if (c->nsys == XP_MAX_SYS)
        return;
    c->sys[c->nsys].id = e->info.posix_event_id;
    c->sys[c->nsys].pid = e->info.posix_pid;
    c->sys[c->nsys].n = 1;
    c->nsys++;
}

static inline void xp_count_user(struct xp_col *c, const tc_event *e)
{
    struct xp_pl p;
    if (!xp_check_payload(e, &p)) {
        c->foreign++;
        return;
    }
    struct xp_key *k = xp_key_of(c, &p, e);
    int bad = p.pid != (int32_t)e->info.posix_pid ||
              p.tid != (uint64_t)e->info.posix_thread_id ||
              e->len != sizeof p + p.extra ||
              e->info.posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED;
    for (size_t i = 0; !bad && i < p.extra; i++)
        bad = e->data[sizeof p + i] != xp_pat(p.seq, i);
    k->bad += bad;
    char nm[TRACE_EVENT_NAME_MAX + 1];
    if (posix_trace_eventid_get_name(c->trid, e->info.posix_event_id, nm) != 0 ||
        strcmp(nm, p.name) != 0)
        k->namebad++;
    if (k->n == 0) {
        k->first = p.seq;
    } else if (p.seq == k->last + 1) {
        /* in order */
    } else if (p.seq > k->last) {
        k->gaps += (long)(p.seq - k->last - 1);
    } else {
        k->disorder++;
    }
    if (k->n == 0 || p.seq > k->last)
        k->last = p.seq;
    k->n++;
    if (c->done_name && strcmp(p.name, c->done_name) == 0)
        c->ndone++;
}

static inline void xp_count(struct xp_col *c, const tc_event *e)
{
    c->total++;
    if (e->info.posix_event_id == POSIX_TRACE_OVERFLOW && e->len == sizeof(uint64_t)) {
        uint64_t n;
        memcpy(&n, e->data, sizeof n);
        c->lost += (long)n;
    }
    if (e->info.posix_event_id < POSIX_TRACE_UNNAMED_USEREVENT)
        xp_count_sys(c, e);
    else
        xp_count_user(c, e);
    if (c->hook)
        c->hook(c, e, c->hook_arg);
}

/*
 * Reads events (timedgetnext, in slices of 100 ms) until ndone_want "done"
 * events were seen, or timeout_ms passed.  Returns 0, or ETIMEDOUT (prints
 * "<pfx> collect TIMEOUT ndone=N"), or the error of timedgetnext (printed).
 */
static inline int xp_collect(struct xp_col *c, const char *pfx, int ndone_want, int timeout_ms)
{
    static tc_event e;
    int64_t deadline = tc_mono_ns() + (int64_t)timeout_ms * 1000000;
    while (c->ndone < ndone_want && !c->stop) {
        if (tc_mono_ns() > deadline) {
            printf("%s collect TIMEOUT ndone=%d total=%ld\n", pfx, c->ndone, c->total);
            return ETIMEDOUT;
        }
        struct timespec abst = tc_ns_ts(tc_now_ns() + 100000000LL);
        int unavailable = -1;
        e.len = 0;
        int rc = posix_trace_timedgetnext_event(c->trid, &e.info, e.data, sizeof e.data, &e.len,
                                                &unavailable, &abst);
        if (rc == ETIMEDOUT)
            continue;
        if (rc != 0) {
            printf("%s timedgetnext rc=%s\n", pfx, tc_errname(rc));
            return rc;
        }
        if (unavailable)
            continue;
        xp_count(c, &e);
    }
    return 0;
}

/* Reads what is available now (trygetnext). */
static inline void xp_drain(struct xp_col *c)
{
    static tc_event e;
    while (tc_try(c->trid, &e))
        xp_count(c, &e);
}

/* Reads a pre-recorded stream (posix_trace_open) to its end. */
static inline int xp_drain_log(struct xp_col *c)
{
    static tc_event e;
    for (;;) {
        int unavailable = -1;
        int rc = posix_trace_getnext_event(c->trid, &e.info, e.data, sizeof e.data, &e.len,
                                           &unavailable);
        if (rc != 0)
            return rc;
        if (unavailable)
            return 0;
        xp_count(c, &e);
    }
}

static inline const char *xp_sysname(trace_id_t trid, trace_event_id_t id)
{
    static __thread char nm[TRACE_EVENT_NAME_MAX + 1];
    if (posix_trace_eventid_get_name(trid, id, nm) != 0)
        snprintf(nm, sizeof nm, "id%u", (unsigned)id);
    return nm;
}

static inline int xp_key_cmp(const void *a, const void *b)
{
    const struct xp_key *x = a, *y = b;
    int r = strcmp(x->role, y->role);
    if (r == 0)
        r = (x->thr > y->thr) - (x->thr < y->thr);
    if (r == 0)
        r = strcmp(x->name, y->name);
    if (r == 0)
        r = (x->id > y->id) - (x->id < y->id);
    if (r == 0)
        r = (x->pid > y->pid) - (x->pid < y->pid);
    return r;
}

static inline void xp_print(struct xp_col *c, const char *pfx)
{
    qsort(c->keys, (size_t)c->nkeys, sizeof c->keys[0], xp_key_cmp);
    for (int i = 0; i < c->nsys; i++)
        printf("%s sys name=%s pid=%s n=%ld\n", pfx, xp_sysname(c->trid, c->sys[i].id),
               xp_pidname(c->sys[i].pid), c->sys[i].n);
    for (int i = 0; i < c->nkeys; i++) {
        struct xp_key *k = &c->keys[i];
        printf("%s user role=%s thr=%u name=%s id=%u pid=%s rawpid=%ld tid=%" PRIu64
               " n=%ld seq=%" PRIu64 "..%" PRIu64 " gaps=%ld disorder=%ld bad=%ld"
               " namebad=%ld\n",
               pfx, k->role, k->thr, k->name, (unsigned)k->id, xp_pidname(k->pid),
               (long)k->pid, k->tid, k->n, k->first, k->last, k->gaps, k->disorder, k->bad,
               k->namebad);
    }
    printf("%s lost=%ld foreign=%ld end\n", pfx, c->lost, c->foreign);
}

/* The usual end of a stream's reading: until ndone_want "done" events (or
 * timeout_ms), posix_trace_stop, what is left, then the counts printed
 * under pfx. */
static inline void xp_read_stop_print(trace_id_t trid, const char *pfx, int ndone_want,
                                      int timeout_ms)
{
    struct xp_col c;
    xp_col_init(&c, trid);
    xp_collect(&c, pfx, ndone_want, timeout_ms);
    CHECK(posix_trace_stop(trid));
    xp_drain(&c);
    xp_print(&c, pfx);
}

/* ---- /dev/shm ---- */
#define XP_SHM_MAX 512

struct xp_shmlist {
    int n;
    char name[XP_SHM_MAX][256];
};

#include <dirent.h>

static inline void xp_shm_list(struct xp_shmlist *l)
{
    l->n = 0;
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && l->n < XP_SHM_MAX) {
        if (de->d_name[0] == '.')
            continue;
        xp_strcpy(l->name[l->n++], sizeof l->name[0], de->d_name);
    }
    closedir(d);
}

/* Prints "<label> shm_new=a,b" : names in now and not in before ("-" if none). */
static inline void xp_shm_print_new(const char *label, const struct xp_shmlist *before)
{
    static struct xp_shmlist now;
    xp_shm_list(&now);
    printf("%s shm_new=", label);
    int any = 0;
    for (int i = 0; i < now.n; i++) {
        int found = 0;
        for (int j = 0; j < before->n && !found; j++)
            found = strcmp(now.name[i], before->name[j]) == 0;
        if (!found) {
            printf("%s%s", any ? "," : "", now.name[i]);
            any = 1;
        }
    }
    printf("%s\n", any ? "" : "-");
}

/* ---- a scripted target ----
 * xp_target_loop(role, in, out): opens "xp/ev" and "xp/done", xp_put()s the
 * id of "xp/ev" on out, then obeys commands read from in (XP_CMD(cmd, n)),
 * answering each with an xp_put of 0 on out once done:
 *   XP_REC n       the main thread records n "xp/ev" (thread number 0)
 *   XP_REC3 n      the main thread and two more threads (1, 2) record n each
 *   XP_SLEEPREC n  sleeps 300 ms, then records n (no answer: the controller
 *                  is blocked reading meanwhile)
 *   XP_DONE        records one "xp/done"
 *   XP_EXIT        returns 0 (the process exits normally)
 * Sequence numbers run on per thread number across commands.  Commands are
 * waited for at most timeout_ms each (then exit code 4). */
enum { XP_REC = 1, XP_REC3, XP_SLEEPREC, XP_DONE, XP_EXIT };
#define XP_CMD(cmd, n) ((int64_t)(n) << 8 | (int64_t)(cmd))

struct xp_recjob {
    trace_event_id_t id;
    const char *role;
    unsigned thr;
    uint64_t *seq;
    long n;
};

static inline void *xp_recjob_run(void *arg)
{
    struct xp_recjob *j = arg;
    for (long i = 0; i < j->n; i++)
        xp_rec(j->id, "xp/ev", j->role, j->thr, (*j->seq)++);
    return NULL;
}

static inline int xp_target_loop(const char *role, int in, int out, int timeout_ms)
{
    static uint64_t seq[3];
    trace_event_id_t ev = tc_open("xp/ev");
    trace_event_id_t done = tc_open("xp/done");
    uint64_t ndone = 0;
    xp_put(out, ev);
    for (;;) {
        int64_t c = xp_get(in, timeout_ms, "a command");
        long n = (long)(c >> 8);
        switch ((int)(c & 0xff)) {
        case XP_REC: {
            struct xp_recjob j = { ev, role, 0, &seq[0], n };
            xp_recjob_run(&j);
            break;
        }
        case XP_REC3: {
            pthread_t th[2];
            struct xp_recjob j[3];
            for (unsigned t = 0; t < 3; t++) {
                struct xp_recjob x = { ev, role, t, &seq[t], n };
                j[t] = x;
            }
            for (int t = 0; t < 2; t++)
                TC_ASSERT(pthread_create(&th[t], NULL, xp_recjob_run, &j[t + 1]) == 0);
            xp_recjob_run(&j[0]);
            for (int t = 0; t < 2; t++)
                pthread_join(th[t], NULL);
            break;
        }
        case XP_SLEEPREC: {
            tc_sleep_ms(300);
            struct xp_recjob j = { ev, role, 0, &seq[0], n };
            xp_recjob_run(&j);
            continue;
        }
        case XP_DONE:
            xp_rec(done, "xp/done", role, 0, ndone++);
            break;
        case XP_EXIT:
            return 0;
        default:
            printf("target: unknown command %" PRId64 "\n", c);
            return 5;
        }
        xp_put(out, 0);
    }
}

/* The parent's side: sends a command and waits for its answer. */
static inline void xp_cmd(const struct xp_proc *p, int cmd, long n)
{
    xp_put(p->to, XP_CMD(cmd, n));
    if (cmd != XP_SLEEPREC && cmd != XP_EXIT)
        xp_get(p->from, 30000, "the target's answer");
}

static inline int xp_target_fn(struct xp_link *l, void *arg)
{
    return xp_target_loop((const char *)arg, l->in, l->out, 30000);
}

/* Spawns a scripted target; *ev gets its id of "xp/ev". */
static inline struct xp_proc xp_spawn_target(const char *role, trace_event_id_t *ev)
{
    struct xp_proc p = xp_spawn(role, xp_target_fn, (void *)role);
    int64_t id = xp_get(p.from, 30000, "the target's event id");
    if (ev != NULL)
        *ev = (trace_event_id_t)id;
    return p;
}

/* Tells a scripted target to exit, waits for it, prints "<role> exit=N". */
static inline void xp_finish(const struct xp_proc *p, const char *role)
{
    xp_cmd(p, XP_EXIT, 0);
    xp_print_exit(role, xp_wait(p->pid, 30000));
}

/* Tells a target that may be dead (of its own corrupt stream) to exit by
 * writing `bye` to it (no SIGPIPE), waits for it at most ms, prints
 * "<role> gone" if it could not be told, then "<role> exited|died|hung". */
static inline void xp_end_hostile(const struct xp_proc *t, int64_t bye, int ms, const char *role)
{
    signal(SIGPIPE, SIG_IGN);
    if (write(t->to, &bye, sizeof bye) != (ssize_t)sizeof bye)
        printf("%s gone\n", role);
    int st = xp_wait(t->pid, ms);
    printf("%s %s\n", role, st == -1 ? "hung" : WIFEXITED(st) ? "exited" : "died");
}

/* Waits until *flag >= v (shared memory between processes). */
static inline void xp_flag_wait(_Atomic int *flag, int v, int timeout_ms, const char *what)
{
    int64_t deadline = tc_mono_ns() + (int64_t)timeout_ms * 1000000;
    while (atomic_load(flag) < v) {
        if (tc_mono_ns() > deadline) {
            printf("TIMEOUT (pid %ld) waiting for %s\n", (long)getpid(), what);
            fflush(stdout);
            exit(4);
        }
        tc_sleep_ms(1);
    }
}

/* ---- processes of other users (root only) ---- */
#include <grp.h>

#define XP_UID_A 65534
#define XP_UID_B 65533

/* fork, drop to uid (and gid uid, no groups), exec argv; the descriptors in
 * keep[] stay open across the exec. */
static inline pid_t xp_spawn_as(uid_t uid, char *const argv[], const int keep[], int nkeep)
{
    fflush(stdout);
    pid_t pid = fork();
    TC_ASSERT(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < nkeep; i++)
            fcntl(keep[i], F_SETFD, 0);
        TC_ASSERT(setgroups(0, NULL) == 0);
        TC_ASSERT(setgid(uid) == 0);
        TC_ASSERT(setuid(uid) == 0);
        execv(argv[0], argv);
        printf("exec %s: %s\n", argv[0], strerror(errno));
        fflush(stdout);
        _exit(127);
    }
    return pid;
}

/* A program run as uid, with pipes like xp_spawn_target's: its argv is
 * head[0..nhead) then the numbers of its ends of the two pipes. */
static inline struct xp_proc xp_spawn_piped_as(uid_t uid, char *const *head, int nhead)
{
    int down[2], up[2];
    xp_pipe(down);
    xp_pipe(up);
    char in[16], out[16];
    snprintf(in, sizeof in, "%d", down[0]);
    snprintf(out, sizeof out, "%d", up[1]);
    char *argv[8];
    TC_ASSERT(nhead >= 1 && nhead <= 5);
    for (int i = 0; i < nhead; i++)
        argv[i] = head[i];
    argv[nhead] = in;
    argv[nhead + 1] = out;
    argv[nhead + 2] = NULL;
    int keep[2] = { down[0], up[1] };
    struct xp_proc p;
    p.pid = xp_spawn_as(uid, argv, keep, 2);
    close(down[0]);
    close(up[1]);
    p.to = down[1];
    p.from = up[0];
    return p;
}

/* The scripted target (t052_xproc_exec target) running as uid, with pipes
 * like xp_spawn_target's. */
static inline struct xp_proc xp_spawn_target_as(const char *t052, uid_t uid, const char *role)
{
    char *head[] = { (char *)t052, "target", (char *)role };
    struct xp_proc p = xp_spawn_piped_as(uid, head, 3);
    xp_role_add(p.pid, role);
    xp_get(p.from, 20000, "target id");
    return p;
}

/* The path of a test program next to this one. */
static inline void xp_sibling(char *buf, size_t size, const char *name)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    TC_ASSERT(n > 0);
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    TC_ASSERT(slash != NULL && (size_t)(slash + 1 - buf) + strlen(name) < size);
    strcpy(slash + 1, name);
}

#endif /* POSIXTRACE_XPROC_H */
