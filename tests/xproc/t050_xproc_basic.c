/*
 * t050_xproc_basic: a controller traces another process (issue 4).  The
 * targets are fork()ed children running the scripted target of xproc.h (or,
 * for other users, tests/xproc/t052_xproc_exec); the controller is this process
 * unless said otherwise.  Every run prints the collector's lines (xproc.h).
 *
 *   basic        a stream created before the target ever recorded; the target
 *                records 1000 events from each of 3 threads, then "done"
 *   after        the target records 1000 events untraced first; then the
 *                stream is created and it records 1000 more
 *   inspector    the target records without pause; a stream is created,
 *                read and shut down twice while it runs
 *   two_ctl      two controller processes trace one target: each gets every event
 *   two_filters  two streams for one target, each with its own filter
 *   names_ctl    the controller names events with posix_trace_trid_eventid_open
 *                before the target (which opened other names first) records
 *   stop_start   the controller stops and restarts the stream between the
 *                target's batches of 100 events
 *   names_ctl_after  the controller names events once the target has
 *                attached and recorded, then filters by that id
 *   names_ctl_first  the controller names xp/x before the target opens it
 *                (the target opened xp/y before the stream existed); the
 *                target's posix_trace_eventid_open gets the controller's ids
 *   names_ctl_first_attached  the same, the target recording an event (and
 *                so attaching the stream) before it opens the names
 *   names_fork   the target opens xp/b, xp/a, xp/done before any stream,
 *                then forks K; a stream created for K afterwards knows the
 *                names from K's inbox (taken over from its parent's) before
 *                K records: trid_eventid_open(xp/a) gives the target's id
 *   names_exec   the target opens xp/old1..3 before any stream; an
 *                INHERITED stream is created for it (so its new image keeps
 *                its inbox); it execs the scripted target (t052_xproc_exec
 *                target; argv[2]: the program), which opens xp/ev and
 *                xp/done; a stream created afterwards has the new image's
 *                names only
 *   esrch        a pid that does not exist, a zombie
 *   eperm        (root) processes of other users; argv[2]: the t052 program
 *   eperm_ctl    (internal: the unprivileged controller of eperm)
 *   einval_child a stream for another process, used in a fork()ed child of its
 *                controller
 *   wake         blocking reads in the controller woken by the target's events
 *   untraced     the target records with no stream, after its stream was shut
 *                down, after its controller exited
 *   nolib        a target without libposixtrace (/bin/sleep)
 *   log          a stream with a log for another process; argv[2]: log path
 */
#include "xproc.h"

static void print_start(const char *pfx, const char *what, int rc)
{
    printf("%s %s rc=%s\n", pfx, what, tc_errname(rc));
}

/* ---- basic, after ---- */
static int mode_basic(int untraced_first)
{
    trace_event_id_t ev;
    struct xp_proc t = xp_spawn_target("T", &ev);
    if (untraced_first)
        xp_cmd(&t, XP_REC, 1000);
    trace_id_t trid = xp_create(t.pid, 4 << 20, 0, 0, 0);
    CHECK(posix_trace_start(trid));
    if (untraced_first)
        xp_cmd(&t, XP_REC, 1000);
    else
        xp_cmd(&t, XP_REC3, 1000);
    xp_cmd(&t, XP_DONE, 0);
    xp_read_stop_print(trid, "S", 1, 20000);
    char name[TRACE_EVENT_NAME_MAX + 1];
    print_start("S", "get_name(target's id)", posix_trace_eventid_get_name(trid, ev, name));
    printf("S target_id=%u name=%s\n", (unsigned)ev, name);
    CHECK(posix_trace_shutdown(trid));
    xp_finish(&t, "T");
    return 0;
}

/* ---- inspector ---- */
struct insp_shared {
    _Atomic uint64_t completed; /* events whose posix_trace_event returned */
    _Atomic int stop;
};

static struct insp_shared *g_insp;

static int insp_target(struct xp_link *l, void *arg)
{
    (void)arg;
    trace_event_id_t ev = tc_open("xp/tick");
    trace_event_id_t done = tc_open("xp/done");
    xp_put(l->out, 0);
    uint64_t i = 0;
    while (!atomic_load(&g_insp->stop) && i < 2000000) {
        xp_rec(ev, "xp/tick", "T", 0, i);
        atomic_store(&g_insp->completed, ++i);
        if (i % 50 == 0)
            tc_sleep_ms(1);
    }
    xp_rec(done, "xp/done", "T", 0, 0);
    return 0;
}

struct insp_hook {
    uint64_t want;
};

static void insp_stop_hook(struct xp_col *c, const tc_event *e, void *arg)
{
    struct insp_hook *h = arg;
    struct xp_pl p;
    if (e->info.posix_event_id > POSIX_TRACE_UNNAMED_USEREVENT &&
        xp_check_payload(e, &p) && p.seq >= h->want)
        c->stop = 1;
}

static int mode_inspector(void)
{
    g_insp = xp_shared(sizeof *g_insp);
    struct xp_proc t = xp_spawn("T", insp_target, NULL);
    xp_get(t.from, 20000, "target ready");
    for (int session = 1; session <= 2; session++) {
        tc_sleep_ms(30);
        uint64_t c0 = atomic_load(&g_insp->completed);
        trace_id_t trid = xp_create(t.pid, 16 << 20, 0, 0, 0);
        CHECK(posix_trace_start(trid));
        uint64_t c1 = atomic_load(&g_insp->completed);
        struct xp_col c;
        struct insp_hook h = { c1 + 3000 };
        xp_col_init(&c, trid);
        c.hook = insp_stop_hook;
        c.hook_arg = &h;
        int rc = xp_collect(&c, "S", 1000000, 20000);
        /* shut down while the target records */
        CHECK(posix_trace_shutdown(trid));
        struct xp_key *k = NULL;
        for (int i = 0; i < c.nkeys; i++)
            if (strcmp(c.keys[i].name, "xp/tick") == 0)
                k = &c.keys[i];
        printf("session=%d collect rc=%s keys=%d", session, tc_errname(rc), c.nkeys);
        if (k != NULL)
            printf(" no_early=%d covers=%d reached=%d gaps=%ld lost=%ld disorder=%ld bad=%ld"
                   " namebad=%ld pid=%s foreign=%ld",
                   k->first >= c0, k->first <= c1 + 1, k->last >= c1 + 3000, k->gaps, c.lost,
                   k->disorder, k->bad, k->namebad, xp_pidname(k->pid), c.foreign);
        printf("\n");
    }
    atomic_store(&g_insp->stop, 1);
    xp_print_exit("T", xp_wait(t.pid, 20000));
    return 0;
}

/* ---- two controllers ---- */
struct ctl_arg {
    pid_t target;
    const char *role;
};

static int two_ctl_controller(struct xp_link *l, void *arg)
{
    struct ctl_arg *a = arg;
    xp_role_add(getpid(), a->role);
    trace_id_t trid = xp_create(a->target, 4 << 20, 0, 0, 0);
    CHECK(posix_trace_start(trid));
    xp_put(l->out, 1);
    xp_read_stop_print(trid, a->role, 1, 20000);
    CHECK(posix_trace_shutdown(trid));
    return 0;
}

static int mode_two_ctl(void)
{
    struct xp_proc t = xp_spawn_target("T", NULL);
    struct ctl_arg a1 = { t.pid, "C1" }, a2 = { t.pid, "C2" };
    struct xp_proc c1 = xp_spawn("C1", two_ctl_controller, &a1);
    struct xp_proc c2 = xp_spawn("C2", two_ctl_controller, &a2);
    xp_get(c1.from, 20000, "C1 started");
    xp_get(c2.from, 20000, "C2 started");
    xp_cmd(&t, XP_REC3, 500);
    xp_cmd(&t, XP_DONE, 0);
    xp_print_exit("C1", xp_wait(c1.pid, 30000));
    xp_print_exit("C2", xp_wait(c2.pid, 30000));
    xp_finish(&t, "T");
    return 0;
}

/* ---- two streams with different filters ---- */
struct two_ids {
    trace_event_id_t a, b, done;
};

static int filt_target(struct xp_link *l, void *arg)
{
    (void)arg;
    struct two_ids ids = { tc_open("xp/a"), tc_open("xp/b"), tc_open("xp/done") };
    xp_put(l->out, ids.a);
    xp_put(l->out, ids.b);
    xp_get(l->in, 20000, "go");
    for (int i = 0; i < 500; i++) {
        xp_rec(ids.a, "xp/a", "T", 0, (uint64_t)i);
        xp_rec(ids.b, "xp/b", "T", 1, (uint64_t)i);
    }
    xp_rec(ids.done, "xp/done", "T", 0, 0);
    xp_put(l->out, 1);
    xp_get(l->in, 20000, "exit");
    return 0;
}

/* trid's filter: only `out` (SET_EVENTSET) */
static void filter_out(trace_id_t trid, trace_event_id_t out)
{
    trace_event_set_t set;
    CHECK(posix_trace_eventset_empty(&set));
    CHECK(posix_trace_eventset_add(out, &set));
    CHECK(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET));
}

static trace_id_t filtered_stream(pid_t pid, trace_event_id_t out)
{
    trace_id_t trid = xp_create(pid, 4 << 20, 0, 0, 0);
    filter_out(trid, out);
    return trid;
}

static int mode_two_filters(void)
{
    struct xp_proc t = xp_spawn("T", filt_target, NULL);
    trace_event_id_t a = (trace_event_id_t)xp_get(t.from, 20000, "id a");
    trace_event_id_t b = (trace_event_id_t)xp_get(t.from, 20000, "id b");
    trace_id_t s1 = filtered_stream(t.pid, a); /* S1 filters a out */
    trace_id_t s2 = filtered_stream(t.pid, b); /* S2 filters b out */
    CHECK(posix_trace_start(s1));
    CHECK(posix_trace_start(s2));
    xp_put(t.to, 1);
    xp_get(t.from, 20000, "recorded");
    trace_id_t s[2] = { s1, s2 };
    const char *pfx[2] = { "S1", "S2" };
    for (int i = 0; i < 2; i++) {
        xp_read_stop_print(s[i], pfx[i], 1, 20000);
        CHECK(posix_trace_shutdown(s[i]));
    }
    xp_put(t.to, 1);
    xp_print_exit("T", xp_wait(t.pid, 20000));
    return 0;
}

/* ---- names opened by the controller first ---- */
/* The target's names, opened in the other order than the controller's (so
 * that a per-process numbering would give different ids); a and b sent. */
static struct two_ids open_reversed(struct xp_link *l)
{
    struct two_ids ids;
    ids.b = tc_open("xp/b");
    ids.a = tc_open("xp/a");
    ids.done = tc_open("xp/done");
    xp_put(l->out, ids.a);
    xp_put(l->out, ids.b);
    return ids;
}

static int names_target(struct xp_link *l, void *arg)
{
    (void)arg;
    struct two_ids ids = open_reversed(l);
    xp_get(l->in, 20000, "go");
    for (int i = 0; i < 100; i++) {
        xp_rec(ids.b, "xp/b", "T", 0, (uint64_t)i);
        xp_rec(ids.a, "xp/a", "T", 0, (uint64_t)i);
    }
    xp_rec(ids.done, "xp/done", "T", 0, 0);
    xp_put(l->out, 1);
    xp_get(l->in, 20000, "exit");
    return 0;
}

static int mode_names_ctl(void)
{
    struct xp_proc t = xp_spawn("T", names_target, NULL);
    trace_event_id_t la = (trace_event_id_t)xp_get(t.from, 20000, "id a");
    trace_event_id_t lb = (trace_event_id_t)xp_get(t.from, 20000, "id b");
    trace_id_t s1 = xp_create(t.pid, 4 << 20, 0, 0, 0);
    trace_id_t s2 = xp_create(t.pid, 4 << 20, 0, 0, 0);
    trace_event_id_t a1 = 0, c1 = 0, a2 = 0;
    print_start("S1", "trid_eventid_open(xp/a)", posix_trace_trid_eventid_open(s1, "xp/a", &a1));
    print_start("S1", "trid_eventid_open(xp/c)", posix_trace_trid_eventid_open(s1, "xp/c", &c1));
    print_start("S2", "trid_eventid_open(xp/a)", posix_trace_trid_eventid_open(s2, "xp/a", &a2));
    printf("ids target_a=%u target_b=%u S1_a=%u S1_c=%u S2_a=%u\n", (unsigned)la, (unsigned)lb,
           (unsigned)a1, (unsigned)c1, (unsigned)a2);
    filter_out(s2, a2);
    CHECK(posix_trace_start(s1));
    CHECK(posix_trace_start(s2));
    xp_put(t.to, 1);
    xp_get(t.from, 20000, "recorded");
    trace_id_t s[2] = { s1, s2 };
    const char *pfx[2] = { "S1", "S2" };
    for (int i = 0; i < 2; i++) {
        xp_read_stop_print(s[i], pfx[i], 1, 20000);
        char nm[TRACE_EVENT_NAME_MAX + 1];
        trace_event_id_t ids[2] = { a1, c1 };
        for (int j = 0; j < 2 && i == 0; j++) {
            int rc = posix_trace_eventid_get_name(s[i], ids[j], nm);
            printf("%s get_name(%u) rc=%s name=%s\n", pfx[i], (unsigned)ids[j], tc_errname(rc),
                   rc == 0 ? nm : "-");
        }
        CHECK(posix_trace_shutdown(s[i]));
    }
    xp_put(t.to, 1);
    xp_print_exit("T", xp_wait(t.pid, 20000));
    return 0;
}

/* The controller names an event after the target has attached and recorded:
 * it gets the target's id, and filtering by it works. */
static int names_after_target(struct xp_link *l, void *arg)
{
    (void)arg;
    struct two_ids ids = open_reversed(l);
    for (uint64_t phase = 0; phase < 2; phase++) {
        xp_get(l->in, 20000, "go");
        for (uint64_t i = 0; i < 100; i++) {
            xp_rec(ids.b, "xp/b", "T", 0, phase * 100 + i);
            xp_rec(ids.a, "xp/a", "T", 0, phase * 100 + i);
        }
        xp_rec(ids.done, "xp/done", "T", 0, phase);
        xp_put(l->out, 1);
    }
    xp_get(l->in, 20000, "exit");
    return 0;
}

static int mode_names_ctl_after(void)
{
    struct xp_proc t = xp_spawn("T", names_after_target, NULL);
    trace_event_id_t la = (trace_event_id_t)xp_get(t.from, 20000, "id a");
    trace_event_id_t lb = (trace_event_id_t)xp_get(t.from, 20000, "id b");
    trace_id_t s = xp_create(t.pid, 4 << 20, 0, 0, 0);
    CHECK(posix_trace_start(s));
    xp_put(t.to, 1);
    xp_get(t.from, 20000, "recorded");
    struct xp_col c;
    xp_col_init(&c, s);
    xp_collect(&c, "S", 1, 20000);
    trace_event_id_t a = 0, b = 0;
    print_start("S", "trid_eventid_open(xp/a)", posix_trace_trid_eventid_open(s, "xp/a", &a));
    print_start("S", "trid_eventid_open(xp/b)", posix_trace_trid_eventid_open(s, "xp/b", &b));
    printf("ids target_a=%u target_b=%u S_a=%u S_b=%u\n", (unsigned)la, (unsigned)lb,
           (unsigned)a, (unsigned)b);
    filter_out(s, a);
    xp_put(t.to, 1);
    xp_get(t.from, 20000, "recorded");
    xp_collect(&c, "S", 2, 20000);
    CHECK(posix_trace_stop(s));
    xp_drain(&c);
    xp_print(&c, "S");
    CHECK(posix_trace_shutdown(s));
    xp_put(t.to, 1);
    xp_print_exit("T", xp_wait(t.pid, 20000));
    return 0;
}

/* ---- names opened by the controller before the target opens them ---- */
/* The target opens xp/y before any stream exists (id sent); once told, it
 * opens xp/x (which the controller registered first) and xp/y again, sends
 * the three ids and records 10 events of each, then xp/done. `arg` != NULL:
 * it records an event first (so the stream is attached before the opens). */
static int names_first_target(struct xp_link *l, void *arg)
{
    trace_event_id_t y = tc_open("xp/y");
    xp_put(l->out, y);
    xp_get(l->in, 20000, "go");
    trace_event_id_t done = tc_open("xp/done");
    if (arg != NULL)
        xp_rec(done, "xp/done", "T", 0, 0);
    trace_event_id_t x = 0, y2 = 0;
    TC_ASSERT(posix_trace_eventid_open("xp/x", &x) == 0);
    TC_ASSERT(posix_trace_eventid_open("xp/y", &y2) == 0);
    xp_put(l->out, x);
    xp_put(l->out, y2);
    for (uint64_t i = 0; i < 10; i++) {
        xp_rec(x, "xp/x", "T", 0, i);
        xp_rec(y, "xp/y", "T", 0, i);
    }
    xp_rec(done, "xp/done", "T", 0, 1);
    xp_put(l->out, 1);
    xp_get(l->in, 20000, "exit");
    return 0;
}

static int mode_names_ctl_first(int attached)
{
    struct xp_proc t = xp_spawn("T", names_first_target, attached ? "attached" : NULL);
    trace_event_id_t ty = (trace_event_id_t)xp_get(t.from, 20000, "id y");
    trace_id_t s = xp_create(t.pid, 4 << 20, 0, 0, 0);
    trace_event_id_t cx = 0, cy = 0;
    print_start("S", "trid_eventid_open(xp/x)", posix_trace_trid_eventid_open(s, "xp/x", &cx));
    print_start("S", "trid_eventid_open(xp/y)", posix_trace_trid_eventid_open(s, "xp/y", &cy));
    CHECK(posix_trace_start(s));
    xp_put(t.to, 1);
    trace_event_id_t tx = (trace_event_id_t)xp_get(t.from, 20000, "id x");
    trace_event_id_t ty2 = (trace_event_id_t)xp_get(t.from, 20000, "id y again");
    printf("ids S_x=%u S_y=%u target_x=%u target_y=%u target_y2=%u\n", (unsigned)cx,
           (unsigned)cy, (unsigned)tx, (unsigned)ty, (unsigned)ty2);
    xp_get(t.from, 20000, "recorded");
    xp_read_stop_print(s, "S", attached ? 2 : 1, 20000);
    trace_event_id_t ids[2] = { cx, cy };
    for (int j = 0; j < 2; j++) {
        char nm[TRACE_EVENT_NAME_MAX + 1];
        int rc = posix_trace_eventid_get_name(s, ids[j], nm);
        printf("S get_name(%u) rc=%s name=%s\n", (unsigned)ids[j], tc_errname(rc),
               rc == 0 ? nm : "-");
    }
    CHECK(posix_trace_shutdown(s));
    xp_put(t.to, 1);
    xp_print_exit("T", xp_wait(t.pid, 20000));
    return 0;
}

/* ---- names_fork: names a fork child's inbox takes from its parent's ---- */
static int fork_names_target(struct xp_link *l, void *arg)
{
    (void)arg;
    struct two_ids ids = open_reversed(l);
    pid_t k = fork();
    if (k == 0) {
        xp_put(l->out, getpid());
        xp_get(l->in, 20000, "go");
        for (uint64_t i = 0; i < 10; i++) {
            xp_rec(ids.a, "xp/a", "K", 0, i);
            xp_rec(ids.b, "xp/b", "K", 0, i);
        }
        xp_rec(ids.done, "xp/done", "K", 0, 0);
        xp_put(l->out, 1);
        xp_get(l->in, 20000, "exit");
        _exit(0);
    }
    int st = xp_wait(k, 30000);
    return k > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

static int mode_names_fork(void)
{
    struct xp_proc t = xp_spawn("T", fork_names_target, NULL);
    trace_event_id_t la = (trace_event_id_t)xp_get(t.from, 20000, "id a");
    trace_event_id_t lb = (trace_event_id_t)xp_get(t.from, 20000, "id b");
    pid_t k = (pid_t)xp_get(t.from, 20000, "K's pid");
    xp_role_add(k, "K");
    trace_id_t s = xp_create(k, 4 << 20, 0, 0, 0);
    /* before K records (and so attaches): known from K's inbox only */
    trace_event_id_t ca = 0;
    print_start("S", "trid_eventid_open(xp/a)", posix_trace_trid_eventid_open(s, "xp/a", &ca));
    printf("ids target_a=%u target_b=%u S_a=%u\n", (unsigned)la, (unsigned)lb, (unsigned)ca);
    CHECK(posix_trace_start(s));
    xp_put(t.to, 1);
    xp_get(t.from, 20000, "recorded");
    xp_read_stop_print(s, "S", 1, 20000);
    CHECK(posix_trace_shutdown(s));
    xp_put(t.to, 1);
    xp_print_exit("T", xp_wait(t.pid, 40000));
    return 0;
}

/* ---- names_exec: a new image's inbox forgets the old image's names ---- */
static int exec_names_target(struct xp_link *l, void *arg)
{
    tc_open("xp/old1");
    tc_open("xp/old2");
    tc_open("xp/old3");
    xp_put(l->out, 1);
    xp_get(l->in, 20000, "exec");
    char in[16], out[16];
    snprintf(in, sizeof in, "%d", l->in);
    snprintf(out, sizeof out, "%d", l->out);
    if (fcntl(l->in, F_SETFD, 0) != 0 || fcntl(l->out, F_SETFD, 0) != 0)
        return 2;
    execl((const char *)arg, (const char *)arg, "target", "T", in, out, (char *)NULL);
    return 3;
}

static int mode_names_exec(const char *t052)
{
    struct xp_proc t = xp_spawn("T", exec_names_target, (void *)t052);
    xp_get(t.from, 20000, "names opened");
    /* an inherited stream: the new image keeps the process's inbox */
    trace_id_t s1 = xp_create(t.pid, 4 << 20, 0, 0, POSIX_TRACE_INHERITED);
    CHECK(posix_trace_start(s1));
    xp_put(t.to, 1);
    trace_event_id_t ev = (trace_event_id_t)xp_get(t.from, 20000, "id of xp/ev, after the exec");
    trace_id_t s = xp_create(t.pid, 4 << 20, 0, 0, 0);
    printf("ids target_ev=%u\n", (unsigned)ev);
    trace_event_id_t ids[4] = { 257, 258, 259, ev };
    for (int i = 0; i < 4; i++) {
        trace_event_id_t id = ids[i];
        char nm[TRACE_EVENT_NAME_MAX + 1];
        int rc = posix_trace_eventid_get_name(s, id, nm);
        printf("S get_name(%u) rc=%s name=%s\n", (unsigned)id, tc_errname(rc), rc == 0 ? nm : "-");
    }
    CHECK(posix_trace_shutdown(s));
    CHECK(posix_trace_shutdown(s1));
    xp_cmd(&t, XP_EXIT, 0);
    xp_print_exit("T", xp_wait(t.pid, 20000));
    return 0;
}

/* ---- stop and start by the controller while the target records ---- */
static int mode_stop_start(void)
{
    struct xp_proc t = xp_spawn_target("T", NULL);
    trace_id_t trid = xp_create(t.pid, 4 << 20, 0, 0, 0);
    CHECK(posix_trace_start(trid));
    xp_cmd(&t, XP_REC, 100);  /* seq 0..99: recorded */
    CHECK(posix_trace_stop(trid));
    xp_cmd(&t, XP_REC, 100);  /* 100..199: stream suspended */
    CHECK(posix_trace_start(trid));
    xp_cmd(&t, XP_REC, 100);  /* 200..299: recorded */
    xp_cmd(&t, XP_DONE, 0);
    xp_read_stop_print(trid, "S", 1, 20000);
    CHECK(posix_trace_shutdown(trid));
    xp_finish(&t, "T");
    return 0;
}

/* ---- ESRCH ---- */
static int quick_exit_fn(struct xp_link *l, void *arg)
{
    (void)l;
    (void)arg;
    return 0;
}

/* 1 once pid is a zombie (state Z in /proc/pid/stat), within 10 s */
static int wait_zombie(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    for (int i = 0; i < 10000; i++) {
        FILE *f = fopen(path, "r");
        if (f == NULL)
            return 0;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        if (p != NULL && p[1] == ' ' && p[2] == 'Z')
            return 1;
        tc_sleep_ms(1);
    }
    return 0;
}

static int mode_esrch(void)
{
    trace_id_t trid;
    struct xp_proc z = xp_spawn(NULL, quick_exit_fn, NULL);
    printf("zombie=%d\n", wait_zombie(z.pid));
    print_start("zombie", "create", posix_trace_create(z.pid, NULL, &trid));
    xp_print_exit("zombie", xp_wait(z.pid, 20000));
    struct xp_proc t = xp_spawn(NULL, quick_exit_fn, NULL);
    xp_print_exit("child", xp_wait(t.pid, 20000));
    print_start("exited", "create", posix_trace_create(t.pid, NULL, &trid));
    int fd = open("/tmp", O_TMPFILE | O_RDWR, 0600);
    TC_ASSERT(fd >= 0);
    print_start("exited", "create_withlog", posix_trace_create_withlog(t.pid, NULL, fd, &trid));
    /* above the largest pid the kernel hands out (pid_max <= 4194304) */
    print_start("nosuch", "create", posix_trace_create(4194304 + 1000, NULL, &trid));
    print_start("nosuch", "create_withlog",
                posix_trace_create_withlog(4194304 + 1000, NULL, fd, &trid));
    close(fd);
    return 0;
}

/* ---- EPERM: processes of other users (run as root) ---- */
static char g_self[4096];

static int mode_eperm(const char *t052)
{
    if (geteuid() != 0) {
        printf("skip: not root (needs setuid to scratch uids)\n");
        return 0;
    }
    xp_role_add(getpid(), "M");
    struct xp_proc ta = xp_spawn_target_as(t052, XP_UID_A, "TA"); /* same uid as the controller */
    struct xp_proc tb = xp_spawn_target_as(t052, XP_UID_B, "TB"); /* another user */
    /* the unprivileged controller: this program again, as UID_A */
    int fd = open("/tmp", O_TMPFILE | O_RDWR, 0666);
    TC_ASSERT(fd >= 0);
    int up[2];
    xp_pipe(up);
    char sm[16], sa[16], sb[16], sfd[16], sto[16], sfrom[16], sup[16];
    snprintf(sm, sizeof sm, "%ld", (long)getpid());
    snprintf(sa, sizeof sa, "%ld", (long)ta.pid);
    snprintf(sb, sizeof sb, "%ld", (long)tb.pid);
    snprintf(sfd, sizeof sfd, "%d", fd);
    snprintf(sto, sizeof sto, "%d", ta.to);
    snprintf(sfrom, sizeof sfrom, "%d", ta.from);
    snprintf(sup, sizeof sup, "%d", up[1]);
    char *argv[] = { g_self, "eperm_ctl", sm, sa, sb, sfd, sto, sfrom, sup, NULL };
    int keep[4] = { fd, ta.to, ta.from, up[1] };
    pid_t c = xp_spawn_as(XP_UID_A, argv, keep, 4);
    close(up[1]);
    xp_print_exit("C", xp_wait(c, 40000));
    close(fd);
    /* root (CAP_SYS_PTRACE) traces a process of another user */
    trace_id_t trid;
    int rc = posix_trace_create(ta.pid, NULL, &trid);
    print_start("root", "create(TA)", rc);
    if (rc == 0) {
        CHECK(posix_trace_start(trid));
        xp_cmd(&ta, XP_REC, 100);
        xp_cmd(&ta, XP_DONE, 0);
        xp_read_stop_print(trid, "R", 1, 10000);
        CHECK(posix_trace_shutdown(trid));
    }
    xp_finish(&ta, "TA");
    xp_finish(&tb, "TB");
    return 0;
}

/* The unprivileged controller: argv: M TA TB logfd ta.to ta.from up */
static int mode_eperm_ctl(char **argv)
{
    pid_t m = (pid_t)atol(argv[2]), ta = (pid_t)atol(argv[3]), tb = (pid_t)atol(argv[4]);
    int fd = atoi(argv[5]);
    struct xp_proc t = { ta, atoi(argv[6]), atoi(argv[7]) };
    xp_role_add(m, "M");
    xp_role_add(ta, "TA");
    xp_role_add(tb, "TB");
    xp_role_add(getpid(), "C");
    printf("C uid=%ld\n", (long)getuid());
    trace_id_t trid;
    print_start("C", "create(root M)", posix_trace_create(m, NULL, &trid));
    print_start("C", "create_withlog(root M)", posix_trace_create_withlog(m, NULL, fd, &trid));
    print_start("C", "create(TB other uid)", posix_trace_create(tb, NULL, &trid));
    print_start("C", "create_withlog(TB other uid)",
                posix_trace_create_withlog(tb, NULL, fd, &trid));
    int rc = posix_trace_create(ta, NULL, &trid);
    print_start("C", "create(TA same uid)", rc);
    if (rc != 0)
        return 0;
    CHECK(posix_trace_start(trid));
    xp_cmd(&t, XP_REC, 100);
    xp_cmd(&t, XP_DONE, 0);
    xp_read_stop_print(trid, "C", 1, 10000);
    CHECK(posix_trace_shutdown(trid));
    return 0;
}

/* ---- a trid used in a fork()ed child of the controller ---- */
static int mode_einval_child(void)
{
    struct xp_proc t = xp_spawn_target("T", NULL);
    trace_id_t trid = xp_create(t.pid, 0, 0, 0, 0);
    CHECK(posix_trace_start(trid));
    fflush(stdout);
    pid_t k = fork();
    TC_ASSERT(k >= 0);
    if (k == 0) {
        tc_alarm_watchdog(20);
        struct posix_trace_status_info st;
        struct posix_trace_event_info info;
        trace_event_set_t set;
        trace_event_id_t id;
        char data[64];
        size_t len;
        int un;
        CHECK(posix_trace_eventset_empty(&set));
#define ONE(fn, ...) printf("child %s rc=%s\n", #fn, tc_errname(fn(__VA_ARGS__)))
        ONE(posix_trace_get_status, trid, &st);
        ONE(posix_trace_set_filter, trid, &set, POSIX_TRACE_SET_EVENTSET);
        ONE(posix_trace_trid_eventid_open, trid, "childname", &id);
        ONE(posix_trace_trygetnext_event, trid, &info, data, sizeof data, &len, &un);
        ONE(posix_trace_stop, trid);
        ONE(posix_trace_start, trid);
        ONE(posix_trace_clear, trid);
        ONE(posix_trace_shutdown, trid);
#undef ONE
        fflush(stdout);
        exit(0);
    }
    xp_print_exit("child", xp_wait(k, 20000));
    xp_cmd(&t, XP_REC, 10);
    xp_cmd(&t, XP_DONE, 0);
    xp_read_stop_print(trid, "S", 1, 20000);
    CHECK(posix_trace_shutdown(trid));
    xp_finish(&t, "T");
    return 0;
}

/* ---- blocking reads woken by the target ---- */
static void print_read(const char *what, trace_id_t trid, int rc, int un, const tc_event *e)
{
    printf("%s rc=%s unavailable=%d", what, tc_errname(rc), un);
    struct xp_pl p;
    if (rc == 0 && !un && xp_check_payload(e, &p)) {
        char nm[TRACE_EVENT_NAME_MAX + 1] = "?";
        posix_trace_eventid_get_name(trid, e->info.posix_event_id, nm);
        printf(" name=%s pid=%s seq=%" PRIu64, nm, xp_pidname(e->info.posix_pid), p.seq);
    }
    printf("\n");
}

static int mode_wake(void)
{
    static tc_event e;
    struct xp_proc t = xp_spawn_target("T", NULL);
    trace_id_t trid = xp_create(t.pid, 0, 0, 0, 0);
    CHECK(posix_trace_start(trid));
    int n = 0;
    while (tc_try(trid, &e))
        n++;
    printf("before: %d event(s)\n", n);
    int un = -1;
    xp_cmd(&t, XP_SLEEPREC, 1);
    struct timespec abst = tc_ns_ts(tc_now_ns() + 20000000000LL);
    int rc = posix_trace_timedgetnext_event(trid, &e.info, e.data, sizeof e.data, &e.len, &un,
                                            &abst);
    print_read("timedgetnext", trid, rc, un, &e);
    xp_cmd(&t, XP_SLEEPREC, 1);
    un = -1;
    rc = posix_trace_getnext_event(trid, &e.info, e.data, sizeof e.data, &e.len, &un);
    print_read("getnext", trid, rc, un, &e);
    abst = tc_ns_ts(tc_now_ns() + 200000000LL);
    un = -1;
    rc = posix_trace_timedgetnext_event(trid, &e.info, e.data, sizeof e.data, &e.len, &un, &abst);
    print_read("timedgetnext(nothing)", trid, rc, un, &e);
    CHECK(posix_trace_shutdown(trid));
    xp_finish(&t, "T");
    return 0;
}

/* ---- recording without anyone tracing ---- */
static int exiting_controller(struct xp_link *l, void *arg)
{
    pid_t target = *(pid_t *)arg;
    trace_id_t trid = xp_create(target, 0, 0, 0, 0);
    CHECK(posix_trace_start(trid));
    xp_put(l->out, 1);
    xp_get(l->in, 20000, "exit");
    return 0; /* exit() without shutting the stream down */
}

static void phase_read(const char *pfx, const struct xp_proc *t, int rec3)
{
    trace_id_t trid = xp_create(t->pid, 8 << 20, 0, 0, 0);
    CHECK(posix_trace_start(trid));
    xp_cmd(t, rec3 ? XP_REC3 : XP_REC, 1000);
    xp_cmd(t, XP_DONE, 0);
    xp_read_stop_print(trid, pfx, 1, 20000);
    CHECK(posix_trace_shutdown(trid));
}

static int mode_untraced(void)
{
    struct xp_proc t = xp_spawn_target("T", NULL);
    xp_cmd(&t, XP_REC3, 30000);             /* nobody traces it yet */
    phase_read("P1", &t, 0);
    xp_cmd(&t, XP_REC3, 30000);             /* its stream was shut down */
    pid_t target = t.pid;
    struct xp_proc c = xp_spawn("C", exiting_controller, &target);
    xp_get(c.from, 20000, "C started");
    xp_put(c.to, 1);
    xp_print_exit("C", xp_wait(c.pid, 20000));
    xp_cmd(&t, XP_REC3, 30000);             /* its controller exited */
    phase_read("P2", &t, 1);
    xp_finish(&t, "T");
    return 0;
}

/* ---- a target without the library ---- */
static int mode_nolib(void)
{
    int p[2];
    xp_pipe(p); /* close-on-exec: EOF once the child has exec'd */
    fflush(stdout);
    pid_t pid = fork();
    TC_ASSERT(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        execl("/bin/sleep", "sleep", "20", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    int64_t v;
    printf("exec wait=%d\n", xp_tryget(p[0], 20000, &v));
    xp_role_add(pid, "T");
    xp_role_add(getpid(), "C");
    trace_id_t trid;
    int rc = posix_trace_create(pid, NULL, &trid);
    print_start("S", "create(sleep)", rc);
    if (rc == 0) {
        CHECK(posix_trace_start(trid));
        tc_sleep_ms(200);
        struct xp_col c;
        xp_col_init(&c, trid);
        xp_drain(&c);
        CHECK(posix_trace_stop(trid));
        xp_drain(&c);
        xp_print(&c, "S");
        CHECK(posix_trace_shutdown(trid));
    }
    kill(pid, SIGKILL);
    xp_print_exit("T", xp_wait(pid, 20000));
    return 0;
}

/* ---- a log ---- */
static int mode_log(const char *path)
{
    struct xp_proc t = xp_spawn_target("T", NULL);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    TC_ASSERT(fd >= 0);
    trace_attr_t a;
    trace_id_t trid;
    xp_attr(&a, 1 << 20, 0, 0, 0);
    CHECK(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND));
    print_start("L", "create_withlog", posix_trace_create_withlog(t.pid, &a, fd, &trid));
    CHECK(posix_trace_start(trid));
    xp_cmd(&t, XP_REC3, 2000);
    xp_cmd(&t, XP_DONE, 0);
    CHECK(posix_trace_shutdown(trid));
    close(fd);
    xp_finish(&t, "T");
    fd = open(path, O_RDONLY);
    TC_ASSERT(fd >= 0);
    print_start("L", "open", posix_trace_open(fd, &trid));
    struct xp_col c;
    xp_col_init(&c, trid);
    print_start("L", "read", xp_drain_log(&c));
    xp_print(&c, "L");
    CHECK(posix_trace_close(trid));
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    tc_init();
    if (argc < 2) {
        printf("usage: t050_xproc_basic MODE [ARG]\n");
        return 2;
    }
    const char *m = argv[1];
    if (strcmp(m, "eperm_ctl") != 0) {
        tc_alarm_watchdog(50); /* not tc_watchdog: see xproc.h */
        xp_role_add(getpid(), "C");
    } else {
        tc_alarm_watchdog(40);
    }
    ssize_t n = readlink("/proc/self/exe", g_self, sizeof g_self - 1);
    TC_ASSERT(n > 0);
    g_self[n] = '\0';
    if (strcmp(m, "basic") == 0)
        return mode_basic(0);
    if (strcmp(m, "after") == 0)
        return mode_basic(1);
    if (strcmp(m, "inspector") == 0)
        return mode_inspector();
    if (strcmp(m, "two_ctl") == 0)
        return mode_two_ctl();
    if (strcmp(m, "two_filters") == 0)
        return mode_two_filters();
    if (strcmp(m, "names_ctl") == 0)
        return mode_names_ctl();
    if (strcmp(m, "stop_start") == 0)
        return mode_stop_start();
    if (strcmp(m, "names_ctl_after") == 0)
        return mode_names_ctl_after();
    if (strcmp(m, "names_ctl_first") == 0)
        return mode_names_ctl_first(0);
    if (strcmp(m, "names_fork") == 0)
        return mode_names_fork();
    if (strcmp(m, "names_ctl_first_attached") == 0)
        return mode_names_ctl_first(1);
    if (strcmp(m, "esrch") == 0)
        return mode_esrch();
    if (strcmp(m, "names_exec") == 0 && argc > 2)
        return mode_names_exec(argv[2]);
    if (strcmp(m, "eperm") == 0 && argc > 2)
        return mode_eperm(argv[2]);
    if (strcmp(m, "eperm_ctl") == 0 && argc > 8)
        return mode_eperm_ctl(argv);
    if (strcmp(m, "einval_child") == 0)
        return mode_einval_child();
    if (strcmp(m, "wake") == 0)
        return mode_wake();
    if (strcmp(m, "untraced") == 0)
        return mode_untraced();
    if (strcmp(m, "nolib") == 0)
        return mode_nolib();
    if (strcmp(m, "log") == 0 && argc > 2)
        return mode_log(argv[2]);
    printf("unknown mode %s\n", m);
    return 2;
}
