/*
 * t051_xproc_tree: the Trace Inherit option across fork and exec, with the
 * controller in another process (issue 4).  This process (the controller, C)
 * forks the target T, which waits until the stream is created and started.
 *
 *   inherited  stream POSIX_TRACE_INHERITED.  T opens "tree/common" and
 *              records it, forks C1, then opens "tree/t2" and records it.
 *              C1 opens "tree/c1" (first opened after the fork, as "tree/t2"
 *              in T), records it and "tree/common", forks C2.  C2 opens
 *              "tree/c2", records it and "tree/common", and execs
 *              t052_xproc_exec tree E (same pid, a new image), which records
 *              "exec/ctor" from a constructor, then "tree/exec", "tree/common",
 *              "tree/c1", forks C3 ("tree/c3", "tree/common"), and each
 *              process records "xp/done" before exiting (T, C1, E, C3).
 *   cfc        stream POSIX_TRACE_CLOSE_FOR_CHILD (the default).  T records
 *              "cfc/t", forks C1 which records "cfc/c1" and "cfc/t" and exits,
 *              records "cfc/t" again and execs t052_xproc_exec cfc E (records
 *              "exec/ctor", "cfc/exec", "xp/done").
 *   launch     the launcher pattern (posixtrace-run): T blocks on a pipe; C
 *              creates an INHERITED stream for it and starts it, then lets T
 *              go; T execs t052_xproc_exec launch L right away ("exec/ctor",
 *              "launch/main", "xp/done").
 *
 *   spawn      INHERITED: T records "xp/ev", then starts t052_xproc_exec launch
 *              through posix_spawn (role P) and through vfork + execl (role V).
 *   launch_preload SHIM ASANRT
 *              the launcher pattern with an unmodified program: T execs
 *              /bin/cat /dev/null with LD_PRELOAD=SHIM (libposixtrace-preload.so,
 *              after ASANRT unless "-"); the controller reads once it exited.
 *   fork_first INHERITED: T forks a child K before recording anything
 *              itself; K records 10 "xp/ev" and "xp/done", then T "xp/done".
 *   many       INHERITED: T records "xp/ev", then forks 300 children one after the other (more than
 *              a stream's 256 writer slots); each records "xp/kid" (seq = its
 *              number) and exits, by exit() or _exit() alternately; the
 *              controller reads meanwhile.
 *
 * Prints the collector's lines with prefix S (xproc.h), then "T exit=N",
 * and "pid T=..." for the pids the controller knows.
 */
#include "xproc.h"

#include <spawn.h>

static char g_t052[4096];

static void rec_name(const char *name, const char *role)
{
    xp_rec(tc_open(name), name, role, 0, 0);
}

static void exec_t052(const char *mode, const char *role)
{
    fflush(stdout);
    execl(g_t052, g_t052, mode, role, (char *)NULL);
    printf("exec %s: %s\n", g_t052, strerror(errno));
    fflush(stdout);
    _exit(127);
}

static pid_t fork_child(void)
{
    fflush(stdout);
    pid_t pid = fork();
    TC_ASSERT(pid >= 0);
    if (pid == 0)
        tc_alarm_watchdog(30);
    return pid;
}

static int tree_c2(void)
{
    rec_name("tree/c2", "C2");
    rec_name("tree/common", "C2");
    exec_t052("tree", "E");
    return 127;
}

static int tree_c1(void)
{
    rec_name("tree/c1", "C1");
    rec_name("tree/common", "C1");
    pid_t c2 = fork_child();
    if (c2 == 0)
        exit(tree_c2());
    int st = xp_wait(c2, 25000);
    rec_name("xp/done", "C1");
    return xp_status_code(st);
}

static int target_inherited(struct xp_link *l, void *arg)
{
    (void)arg;
    xp_get(l->in, 20000, "go");
    rec_name("tree/common", "T");
    pid_t c1 = fork_child();
    if (c1 == 0)
        exit(tree_c1());
    rec_name("tree/t2", "T");
    int st = xp_wait(c1, 25000);
    rec_name("xp/done", "T");
    return xp_status_code(st);
}

static int target_cfc(struct xp_link *l, void *arg)
{
    (void)arg;
    xp_get(l->in, 20000, "go");
    rec_name("cfc/t", "T");
    pid_t c1 = fork_child();
    if (c1 == 0) {
        rec_name("cfc/c1", "C1");
        rec_name("cfc/t", "C1");
        exit(0);
    }
    int st = xp_wait(c1, 25000);
    if (xp_status_code(st) != 0)
        return xp_status_code(st);
    xp_rec(tc_open("cfc/t"), "cfc/t", "T", 0, 1);
    exec_t052("cfc", "E");
    return 127;
}

static int target_launch(struct xp_link *l, void *arg)
{
    (void)arg;
    xp_get(l->in, 20000, "go");
    exec_t052("launch", "L");
    return 127;
}

/* posix_spawn and vfork + exec of t052 (launch mode), each a child of T */
static int target_spawn(struct xp_link *l, void *arg)
{
    (void)arg;
    xp_get(l->in, 20000, "go");
    rec_name("xp/ev", "T");
    char *pargv[] = { g_t052, "launch", "P", NULL };
    pid_t p;
    int rc = posix_spawn(&p, g_t052, NULL, NULL, pargv, environ);
    if (rc != 0) {
        printf("posix_spawn: %s\n", strerror(rc));
        return 9;
    }
    int stp = xp_wait(p, 25000);
    fflush(stdout);
    pid_t v = vfork();
    if (v == 0) {
        execl(g_t052, g_t052, "launch", "V", (char *)NULL);
        _exit(127);
    }
    TC_ASSERT(v > 0);
    int stv = xp_wait(v, 25000);
    rec_name("xp/done", "T");
    return xp_status_code(stp) | xp_status_code(stv);
}

/* the launcher pattern with an unmodified program: the LD_PRELOAD shim
 * (argv[2]; argv[3]: ASan's runtime to preload first, or "-") */
static char **g_argv;

static int target_launch_preload(struct xp_link *l, void *arg)
{
    (void)arg;
    xp_get(l->in, 20000, "go");
    char pre[8192];
    if (strcmp(g_argv[3], "-") != 0) {
        snprintf(pre, sizeof pre, "%s %s", g_argv[3], g_argv[2]);
        setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", 1);
    } else {
        snprintf(pre, sizeof pre, "%s", g_argv[2]);
    }
    setenv("LD_PRELOAD", pre, 1);
    fflush(stdout);
    execl("/bin/cat", "cat", "/dev/null", (char *)NULL);
    printf("exec /bin/cat: %s\n", strerror(errno));
    return 127;
}

/* the names of the first 3 events read */
static char g_first[3][TRACE_EVENT_NAME_MAX + 1];
static int g_nfirst;

static void first_hook(struct xp_col *c, const tc_event *e, void *arg)
{
    (void)arg;
    if (g_nfirst < 3 &&
        posix_trace_eventid_get_name(c->trid, e->info.posix_event_id, g_first[g_nfirst]) == 0)
        g_nfirst++;
}

/* T forks before it has recorded anything itself */
static int target_fork_first(struct xp_link *l, void *arg)
{
    (void)arg;
    xp_get(l->in, 20000, "go");
    pid_t k = fork_child();
    if (k == 0) {
        trace_event_id_t ev = tc_open("xp/ev");
        for (uint64_t i = 0; i < 10; i++)
            xp_rec(ev, "xp/ev", "K", 0, i);
        rec_name("xp/done", "K");
        exit(0);
    }
    int st = xp_wait(k, 25000);
    rec_name("xp/done", "T");
    return xp_status_code(st);
}

/* NKIDS children one after the other, each records one event and exits
 * (exit() or _exit(), alternately) */
#define NKIDS 300

static int target_many(struct xp_link *l, void *arg)
{
    (void)arg;
    trace_event_id_t kid = tc_open("xp/kid");
    xp_get(l->in, 20000, "go");
    rec_name("xp/ev", "T");
    int bad = 0;
    for (int i = 0; i < NKIDS; i++) {
        fflush(stdout);
        pid_t k = fork();
        TC_ASSERT(k >= 0);
        if (k == 0) {
            xp_rec(kid, "xp/kid", "K", 0, (uint64_t)i);
            if (i % 2)
                _exit(0);
            exit(0);
        }
        bad += xp_status_code(xp_wait(k, 20000)) != 0;
    }
    rec_name("xp/done", "T");
    return bad;
}

int main(int argc, char **argv)
{
    tc_init();
    tc_alarm_watchdog(50); /* not tc_watchdog: see xproc.h */
    if (argc < 2)
        return 2;
    ssize_t n = readlink("/proc/self/exe", g_t052, sizeof g_t052 - 20);
    TC_ASSERT(n > 0);
    g_t052[n] = '\0';
    char *slash = strrchr(g_t052, '/');
    TC_ASSERT(slash != NULL);
    strcpy(slash + 1, "t052_xproc_exec");

    const char *m = argv[1];
    xp_fn fn;
    int inherit, ndone;
    if (strcmp(m, "inherited") == 0) {
        fn = target_inherited;
        inherit = POSIX_TRACE_INHERITED;
        ndone = 4;
    } else if (strcmp(m, "cfc") == 0) {
        fn = target_cfc;
        inherit = POSIX_TRACE_CLOSE_FOR_CHILD;
        ndone = 1;
    } else if (strcmp(m, "launch") == 0) {
        fn = target_launch;
        inherit = POSIX_TRACE_INHERITED;
        ndone = 1;
    } else if (strcmp(m, "spawn") == 0) {
        fn = target_spawn;
        inherit = POSIX_TRACE_INHERITED;
        ndone = 3;
    } else if (strcmp(m, "launch_preload") == 0 && argc > 3) {
        fn = target_launch_preload;
        inherit = POSIX_TRACE_INHERITED;
        ndone = 0; /* read once it has exited */
        g_argv = argv;
    } else if (strcmp(m, "fork_first") == 0) {
        fn = target_fork_first;
        inherit = POSIX_TRACE_INHERITED;
        ndone = 2;
    } else if (strcmp(m, "many") == 0) {
        fn = target_many;
        inherit = POSIX_TRACE_INHERITED;
        ndone = 1;
    } else {
        printf("unknown mode %s\n", m);
        return 2;
    }
    xp_role_add(getpid(), "C");
    struct xp_proc t = xp_spawn("T", fn, NULL);
    trace_id_t trid = xp_create(t.pid, 4 << 20, 0, 0, inherit);
    CHECK(posix_trace_start(trid));
    xp_put(t.to, 1);
    struct xp_col c;
    xp_col_init(&c, trid);
    c.anypid = fn == target_many;
    c.hook = first_hook;
    xp_collect(&c, "S", ndone, 15000);
    int st = xp_wait(t.pid, 20000);
    tc_sleep_ms(100); /* anything recorded late would show now */
    CHECK(posix_trace_stop(trid));
    xp_drain(&c);
    xp_print(&c, "S");
    CHECK(posix_trace_shutdown(trid));
    xp_print_exit("T", st);
    printf("pid T=%ld\n", (long)t.pid);
    printf("first=%s,%s,%s\n", g_first[0], g_first[1], g_first[2]);
    return 0;
}
