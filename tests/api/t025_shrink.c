/*
 * t025_shrink: a target that shrinks the memory of the stream it records
 * into must not kill its controller (issue 13 item 5: SIGBUS).
 *
 *   t025_shrink run-target      the target of `posixtrace-run -o LOG`:
 *                               records 100 events, tries to truncate
 *                               every posixtrace memfd of its parent (the
 *                               controller) through /proc/<ppid>/fd/N and
 *                               its own mapping of the stream through
 *                               /proc/self/map_files, records 100 more
 *   t025_shrink ctl             this process (M) creates a stream for a
 *                               forked target T (same user), which does the
 *                               same; M reads with timedgetnext
 *   t025_shrink ctl-as          the same with T running as uid 65534 (root
 *                               only): the stream is a /dev/shm object T
 *                               owns; T truncates it by name, to 0
 *   t025_shrink ctl-as-handler  ctl-as, and M installs a SIGBUS handler of
 *                               its own (sigaction) right after creating
 *                               the stream, as a program may: it must not
 *                               take the library's protection away; M then
 *                               reads its action back ("M sees_own=1") and
 *                               raises SIGBUS itself ("M own_handler
 *                               calls=1": the program's handler runs)
 *   t025_shrink p-target        the target of `posixtrace-run -p` as another
 *                               user: truncates its stream's /dev/shm object
 *                               (any posixtrace-* object it can open), to 0
 *   t025_shrink xtarget IN OUT  (T of ctl-as, exec'd as uid 65534)
 *
 * T prints, per object tried: "T trunc <how> name=<link> rc=<errno name>"
 * (rc=0: it was truncated), then "T trunc tried=N eperm=N ok=N".
 * M prints "M read n=N T=N errors=N eio=N" (n events, T's user events,
 * POSIX_TRACE_ERROR events, those with EIO), the return codes of
 * get_status, stop and shutdown, then "M done"; M's parent prints "M exit=N"
 * or "M signal=N".
 */
#include "xproc.h"
#include <dirent.h>
#include <signal.h>

enum { S_REC = 1, S_TRUNC, S_EXIT };

static trace_event_id_t ev, wait_ev;
static long tried, eperm, ok;

static void trunc_path(const char *how, const char *path, const char *name)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    int rc = fd < 0 ? errno : ftruncate(fd, 0) == 0 ? 0 : errno;
    if (fd >= 0)
        close(fd);
    printf("T trunc %s name=%s rc=%s\n", how, name, tc_errname(rc));
    tried++;
    eperm += rc == EPERM;
    ok += rc == 0;
}

/* Every posixtrace memfd of pid (the stream's and the alive page). */
static void trunc_ctrl_fds(pid_t pid)
{
    char dir[64], path[400], link[300];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    if (d == NULL) {
        printf("T trunc ctrl-fd opendir rc=%s\n", tc_errname(errno));
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "%s/%.255s", dir, e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (strncmp(link, "/memfd:posixtrace:", 18) == 0 ||
            strncmp(link, "/memfd:posixtrace-alive", 23) == 0)
            trunc_path("ctrl-fd", path, strchr(link, ':') + 1);
    }
    closedir(d);
}

/* This process's own mapping of the stream (and of the alive page). */
static void trunc_own_maps(void)
{
    struct tc_map m[16];
    char path[128];
    int n = tc_find_maps("/memfd:posixtrace:", NULL, m, 16);
    for (int i = 0; i < n; i++) {
        char *name = strstr(m[i].path, "/memfd:posixtrace:");
        name[strcspn(name, " ")] = '\0'; /* " (deleted)" */
        snprintf(path, sizeof path, "/proc/self/map_files/%lx-%lx", (unsigned long)m[i].lo,
                 (unsigned long)m[i].hi);
        trunc_path("own-map", path, name + 7);
    }
}

/* The /dev/shm objects of streams (posixtrace-PID-START-KEY, libtrace/ring/shm.c)
 * of controller pid (another user's; 0: of any controller). */
static void trunc_named(pid_t pid)
{
    char pfx[64], path[300];
    snprintf(pfx, sizeof pfx, pid != 0 ? "posixtrace-%d-" : "posixtrace-", (int)pid);
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        unsigned p, n;
        unsigned long long start, key;
        if (strncmp(e->d_name, pfx, strlen(pfx)) != 0 || strstr(e->d_name, "alive") != NULL ||
            sscanf(e->d_name, "posixtrace-%u-%llu-%llx%n", &p, &start, &key, &n) != 3 ||
            e->d_name[n] != 0)
            continue; /* not a stream (e.g. a benchmark's log, posixtrace-bench-PID.log) */
        snprintf(path, sizeof path, "/dev/shm/%.255s", e->d_name);
        trunc_path("named", path, "posixtrace-PID-START-KEY");
    }
    if (d != NULL)
        closedir(d);
}

static void trunc_all(pid_t ctrl)
{
    tried = eperm = ok = 0;
    if (ctrl != 0)
        trunc_ctrl_fds(ctrl);
    trunc_own_maps();
    trunc_named(ctrl);
    printf("T trunc tried=%ld eperm=%ld ok=%ld\n", tried, eperm, ok);
    fflush(stdout);
}

static void rec(long n)
{
    for (long i = 0; i < n; i++)
        posix_trace_event(ev, &i, sizeof i);
}

/* Wait (recording) until the stream is mapped here: up to 10 s. */
static void wait_mapped(void)
{
    for (int i = 0; i < 1000; i++) {
        struct tc_map m[1];
        if (tc_find_maps("posixtrace:", NULL, m, 1) + tc_find_maps("/dev/shm/posixtrace-", NULL, m, 1) > 0)
            return;
        posix_trace_event(wait_ev, NULL, 0);
        tc_sleep_ms(10);
    }
    printf("T stream never mapped\n");
}

static int run_target(void)
{
    ev = tc_open("shrink/ev");
    wait_ev = tc_open("shrink/wait");
    wait_mapped();
    rec(100);
    trunc_all(getppid());
    rec(100);
    return 0;
}

/* The target of `posixtrace-run -p` (as another user): the controller is
 * not its parent; its stream is the /dev/shm object it was given. */
static int p_target(void)
{
    ev = tc_open("shrink/ev");
    wait_ev = tc_open("shrink/wait");
    printf("T ready\n");
    fflush(stdout);
    wait_mapped();
    rec(100);
    trunc_all(0);
    tc_sleep_ms(500);
    _exit(0); /* recording now would fault: the memory is gone */
}

/* T: commands from M through the pipes. */
static int target_loop(int in, int out)
{
    ev = tc_open("shrink/ev");
    xp_put(out, getpid());
    for (;;) {
        int64_t c = xp_get(in, 30000, "a command");
        switch ((int)(c & 0xff)) {
        case S_REC:
            rec(c >> 8);
            break;
        case S_TRUNC:
            trunc_all(getppid());
            break;
        case S_EXIT:
            fflush(stdout);
            _exit(0); /* no exit handler touching a stream T shrank */
        }
        xp_put(out, 0);
    }
}

static int target_fn(struct xp_link *l, void *arg)
{
    (void)arg;
    return target_loop(l->in, l->out);
}

static int tell(const struct xp_proc *t, int cmd, long a)
{
    xp_put(t->to, (int64_t)a << 8 | cmd);
    int64_t v;
    return xp_tryget(t->from, 5000, &v) == 1;
}

/* M: read until 1 s passes without an event (5 s at most). */
static void read_all(trace_id_t trid, pid_t tpid)
{
    static tc_event e;
    long n = 0, t = 0, errors = 0, eio = 0, quiet = 0;
    int64_t deadline = tc_mono_ns() + 5000000000LL;
    while (tc_mono_ns() < deadline && quiet < 10) {
        struct timespec abst = tc_ns_ts(tc_now_ns() + 100000000LL);
        int un = -1;
        int rc = posix_trace_timedgetnext_event(trid, &e.info, e.data, sizeof e.data, &e.len,
                                                &un, &abst);
        if (rc == ETIMEDOUT) {
            quiet++;
            continue;
        }
        if (rc != 0) {
            printf("M timedgetnext rc=%s\n", tc_errname(rc));
            break;
        }
        quiet = 0;
        if (un)
            continue;
        n++;
        t += e.info.posix_pid == tpid && e.info.posix_event_id == ev;
        if (e.info.posix_event_id == POSIX_TRACE_ERROR) {
            int err = 0;
            if (e.len == sizeof err)
                memcpy(&err, e.data, sizeof err);
            errors++;
            eio += err == EIO;
        }
    }
    printf("M read n=%ld T=%ld errors=%ld eio=%ld\n", n, t, errors, eio);
}

static volatile sig_atomic_t own_calls;

static void own_handler(int sig)
{
    (void)sig;
    own_calls++;
}

/* The program's own SIGBUS handler, installed after the stream exists. */
static void install_own(void)
{
    struct sigaction sa = { 0 };
    sa.sa_handler = own_handler;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGBUS, &sa, NULL) != 0 ? errno : 0);
}

static void check_own(void)
{
    struct sigaction old;
    CHECK(sigaction(SIGBUS, NULL, &old) != 0 ? errno : 0);
    printf("M sees_own=%d\n", old.sa_handler == own_handler);
    raise(SIGBUS);
    printf("M own_handler calls=%d\n", (int)own_calls);
}

static int controller(struct xp_proc *t, int own)
{
    trace_attr_t a;
    trace_id_t trid;
    xp_attr(&a, 1 << 20, 0, POSIX_TRACE_LOOP, 0);
    CHECK(posix_trace_create(t->pid, &a, &trid));
    if (own)
        install_own();
    CHECK(posix_trace_start(trid));
    CHECK(posix_trace_eventid_open("shrink/ev", &ev));
    printf("T rec1=%d\n", tell(t, S_REC, 1000));
    printf("T trunc=%d\n", tell(t, S_TRUNC, 0));
    printf("T rec2=%d\n", tell(t, S_REC, 1000));
    read_all(trid, t->pid);
    struct posix_trace_status_info st;
    printf("M get_status rc=%s\n", tc_errname(posix_trace_get_status(trid, &st)));
    printf("M stop rc=%s\n", tc_errname(posix_trace_stop(trid)));
    printf("M shutdown rc=%s\n", tc_errname(posix_trace_shutdown(trid)));
    if (own)
        check_own();
    printf("M done\n");
    fflush(stdout);
    int64_t bye = S_EXIT;
    if (write(t->to, &bye, sizeof bye) != (ssize_t)sizeof bye)
        printf("T gone\n");
    return 0;
}

static int ctl_main(struct xp_link *l, void *arg)
{
    (void)l;
    signal(SIGPIPE, SIG_IGN); /* T may have died of the memory it shrank */
    struct xp_proc t;
    if (arg == NULL) {
        t = xp_spawn("T", target_fn, NULL);
        xp_get(t.from, 20000, "target id");
    } else {
        char self[512];
        xp_sibling(self, sizeof self, "t025_shrink");
        char *head[] = { self, "xtarget" };
        t = xp_spawn_piped_as(XP_UID_A, head, 2);
        xp_get(t.from, 20000, "target id");
    }
    controller(&t, arg == (void *)2);
    int st = xp_wait(t.pid, 5000);
    xp_print_exit("T", st);
    return 0;
}

int main(int argc, char **argv)
{
    tc_init();
    tc_alarm_watchdog(50);
    if (argc >= 2 && strcmp(argv[1], "run-target") == 0)
        return run_target();
    if (argc >= 2 && strcmp(argv[1], "p-target") == 0)
        return p_target();
    if (argc >= 4 && strcmp(argv[1], "xtarget") == 0)
        return target_loop(atoi(argv[2]), atoi(argv[3]));
    if (argc < 2 || (strcmp(argv[1], "ctl") != 0 && strcmp(argv[1], "ctl-as") != 0 &&
                     strcmp(argv[1], "ctl-as-handler") != 0))
        return 2;
    int as = strcmp(argv[1], "ctl") != 0, own = strcmp(argv[1], "ctl-as-handler") == 0;
    if (as && geteuid() != 0) {
        printf("SKIP not root\n");
        return 0;
    }
    /* M runs in a child so that its death by a signal shows */
    struct xp_proc m = xp_spawn("M", ctl_main, own ? (void *)2 : as ? (void *)1 : NULL);
    xp_print_exit("M", xp_wait(m.pid, 40000));
    return 0;
}
