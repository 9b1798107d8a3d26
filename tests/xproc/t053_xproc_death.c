/*
 * t053_xproc_death: controllers and targets that die (issue 4).
 *
 *   kill_ctl      a controller process C traces the target T, reads 1000 of its
 *                 events and is killed (SIGKILL) while T keeps recording.  T goes
 *                 on and exits normally; a new stream for T (created by this
 *                 process, M) gets T's later events; /dev/shm names that appeared
 *                 and stay are printed after the next create + shutdown.
 *   kill_ctl_log PATH
 *                 C creates a stream with a log on PATH for T, T records 3 x 1000
 *                 events and "done", C calls posix_trace_flush and is killed;
 *                 T records 3 x 1000 more and exits normally; M opens the log with
 *                 posix_trace_open and reads it.
 *   kill_ctl_otheruser
 *                 (root) C, privileged, traces T running as uid 65534 (its stream
 *                 is then a /dev/shm object, doc/semantics.md), reads T's 1000
 *                 events and is killed; T records on and unmaps it; the object
 *                 stays until the next create for another user's process (by M),
 *                 which removes it.
 *   exec_ctl      C traces T, then execs /bin/true while T records.
 *   stuck         T (INHERITED stream, controller M) forks T1 and T2.  T1
 *                 records 100 events, then one whose data runs into a PROT_NONE
 *                 page: the copy faults inside posix_trace_event, after the
 *                 record was begun, and T1's SIGSEGV handler blocks.  M kills T1
 *                 (SIGKILL); T reaps it; then T2 records 1000 events and "done",
 *                 and T "done".  M's reader must skip the half-written record.
 *   stuck_zombie  the same, but T reaps T1 only after M has read everything (T1
 *                 is a zombie while M reads).
 *   burst         T forks W1, W2, W3 one after the other; each records 8 KiB
 *                 events from two threads without pause and is killed (SIGKILL)
 *                 by M while its threads are in posix_trace_event; M reads all
 *                 the while in another thread.  Then T2 records 1000 events.
 */
#include "xproc.h"

#include <sys/mman.h>

static struct xp_shmlist g_shm_before;

/* ---- kill -9 of the controller ---- */
struct tick_shared {
    _Atomic uint64_t completed;
    _Atomic int stop;
};

static struct tick_shared *g_tick;

/* records "xp/tick" until told to stop, then "xp/done" */
static int tick_target(struct xp_link *l, void *arg)
{
    (void)arg;
    trace_event_id_t ev = tc_open("xp/tick");
    trace_event_id_t done = tc_open("xp/done");
    xp_put(l->out, 0);
    uint64_t i = 0;
    while (!atomic_load(&g_tick->stop) && i < 3000000) {
        xp_rec(ev, "xp/tick", "T", 0, i);
        atomic_store(&g_tick->completed, ++i);
        if (i % 50 == 0)
            tc_sleep_ms(1);
    }
    xp_rec(done, "xp/done", "T", 0, 0);
    xp_get(l->in, 20000, "exit");
    return 0;
}

static void wait_ticks(uint64_t more)
{
    uint64_t want = atomic_load(&g_tick->completed) + more;
    int64_t deadline = tc_mono_ns() + 20000000000LL;
    while (atomic_load(&g_tick->completed) < want && tc_mono_ns() < deadline)
        tc_sleep_ms(1);
    printf("target progressed=%d\n", atomic_load(&g_tick->completed) >= want);
}

static void count_ticks_hook(struct xp_col *c, const tc_event *e, void *arg)
{
    long *want = arg;
    struct xp_pl p;
    if (e->info.posix_event_id > POSIX_TRACE_UNNAMED_USEREVENT && xp_check_payload(e, &p) &&
        --*want <= 0)
        c->stop = 1;
}

/* Lines of /proc/pid/maps containing needle. */
static int count_maps_of(pid_t pid, const char *needle)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%ld/maps", (long)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL)
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

/* ... naming the memfd of the stream named "xpdeath" */
static int count_maps(pid_t pid)
{
    return count_maps_of(pid, "memfd:posixtrace:xpdeath");
}

/* After its controller died: T must unmap the stream (within 5 s, while it
 * keeps recording). */
static void check_unmapped_of(pid_t t, const char *needle)
{
    int64_t deadline = tc_mono_ns() + 5000000000LL;
    int n;
    while ((n = count_maps_of(t, needle)) != 0 && tc_mono_ns() < deadline)
        tc_sleep_ms(10);
    printf("T maps_dead_stream=%d\n", n);
}

static void check_unmapped(pid_t t)
{
    check_unmapped_of(t, "memfd:posixtrace:xpdeath");
}

static trace_id_t named_stream(pid_t target)
{
    trace_attr_t a;
    trace_id_t trid;
    xp_attr(&a, 4 << 20, 0, 0, 0);
    CHECK(posix_trace_attr_setname(&a, "xpdeath"));
    CHECK(posix_trace_create(target, &a, &trid));
    CHECK(posix_trace_attr_destroy(&a));
    return trid;
}

/* Start trid and read it until 1000 "tick" events came: *rc, xp_collect's. */
static int read_1000_ticks(trace_id_t trid, const char *pfx, int *rc)
{
    CHECK(posix_trace_start(trid));
    struct xp_col c;
    long want = 1000;
    xp_col_init(&c, trid);
    c.hook = count_ticks_hook;
    c.hook_arg = &want;
    *rc = xp_collect(&c, pfx, 1, 20000);
    return want <= 0;
}

static int ctl_reader(struct xp_link *l, void *arg)
{
    int rc;
    int seen = read_1000_ticks(named_stream(*(pid_t *)arg), "C", &rc);
    xp_put(l->out, rc == 0 && seen);
    for (;;)
        pause(); /* killed here */
    return 0;
}

/* A new stream for T after the death: gets what T records from now on. */
static void retrace(const struct xp_proc *t)
{
    trace_id_t trid = xp_create(t->pid, 4 << 20, 0, 0, 0);
    int rc;
    int seen = read_1000_ticks(trid, "M", &rc);
    printf("M retrace read1000=%d rc=%s\n", seen, tc_errname(rc));
    CHECK(posix_trace_shutdown(trid));
}

static void own_stream_cycle(void)
{
    trace_id_t trid;
    CHECK(posix_trace_create(0, NULL, &trid));
    CHECK(posix_trace_shutdown(trid));
}

static int mode_kill_ctl(void)
{
    g_tick = xp_shared(sizeof *g_tick);
    xp_role_add(getpid(), "M");
    struct xp_proc t = xp_spawn("T", tick_target, NULL);
    xp_get(t.from, 20000, "target ready");
    pid_t target = t.pid;
    struct xp_proc c = xp_spawn("C", ctl_reader, &target);
    printf("C read1000=%d\n", (int)xp_get(c.from, 25000, "C reading"));
    printf("T maps_live_stream=%d\n", count_maps(t.pid) > 0);
    kill(c.pid, SIGKILL);
    xp_print_exit("C", xp_wait(c.pid, 20000));
    wait_ticks(2000);
    check_unmapped(t.pid);
    retrace(&t);
    atomic_store(&g_tick->stop, 1);
    xp_put(t.to, 1);
    xp_print_exit("T", xp_wait(t.pid, 20000));
    own_stream_cycle();
    xp_shm_print_new("after", &g_shm_before);
    return 0;
}

/* ---- exec of the controller ---- */
static int ctl_exec(struct xp_link *l, void *arg)
{
    int rc;
    int seen = read_1000_ticks(named_stream(*(pid_t *)arg), "C", &rc);
    xp_put(l->out, rc == 0 && seen);
    xp_get(l->in, 20000, "exec");
    fflush(stdout);
    execl("/bin/true", "true", (char *)NULL);
    return 127;
}

static int mode_exec_ctl(void)
{
    g_tick = xp_shared(sizeof *g_tick);
    xp_role_add(getpid(), "M");
    struct xp_proc t = xp_spawn("T", tick_target, NULL);
    xp_get(t.from, 20000, "target ready");
    pid_t target = t.pid;
    struct xp_proc c = xp_spawn("C", ctl_exec, &target);
    printf("C read1000=%d\n", (int)xp_get(c.from, 25000, "C reading"));
    printf("T maps_live_stream=%d\n", count_maps(t.pid) > 0);
    xp_put(c.to, 1);
    xp_print_exit("C", xp_wait(c.pid, 20000));
    wait_ticks(2000);
    check_unmapped(t.pid);
    retrace(&t);
    atomic_store(&g_tick->stop, 1);
    xp_put(t.to, 1);
    xp_print_exit("T", xp_wait(t.pid, 20000));
    own_stream_cycle();
    xp_shm_print_new("after", &g_shm_before);
    return 0;
}

/* ---- kill -9 of a privileged controller of another user's process ---- */
/* /dev/shm names "posixtrace-<pid>-..." (doc/semantics.md) */
static int count_shm_of(pid_t ctl)
{
    static struct xp_shmlist l;
    char prefix[64];
    int n = snprintf(prefix, sizeof prefix, "posixtrace-%ld-", (long)ctl);
    int count = 0;
    xp_shm_list(&l);
    for (int i = 0; i < l.n; i++)
        count += strncmp(l.name[i], prefix, (size_t)n) == 0;
    return count;
}

static int ctl_other(struct xp_link *l, void *arg)
{
    struct xp_proc *t = arg;
    trace_id_t trid = named_stream(t->pid);
    CHECK(posix_trace_start(trid));
    xp_cmd(t, XP_REC, 1000);
    xp_cmd(t, XP_DONE, 0);
    struct xp_col c;
    xp_col_init(&c, trid);
    int rc = xp_collect(&c, "C", 1, 20000);
    xp_put(l->out, rc == 0 && c.total >= 1002);
    for (;;)
        pause(); /* killed here */
    return 0;
}

static int mode_kill_ctl_otheruser(void)
{
    if (geteuid() != 0) {
        printf("skip: not root (needs setuid to a scratch uid)\n");
        return 0;
    }
    char t052[4096];
    xp_sibling(t052, sizeof t052, "t052_xproc_exec");
    xp_role_add(getpid(), "M");
    struct xp_proc t = xp_spawn_target_as(t052, XP_UID_A, "T");
    struct xp_proc c = xp_spawn("C", ctl_other, &t);
    printf("C read=%d\n", (int)xp_get(c.from, 25000, "C reading"));
    printf("shm_live=%d\n", count_shm_of(c.pid));
    char needle[64];
    snprintf(needle, sizeof needle, "posixtrace-%ld-", (long)c.pid);
    printf("T maps_live_stream=%d\n", count_maps_of(t.pid, needle) > 0);
    kill(c.pid, SIGKILL);
    xp_print_exit("C", xp_wait(c.pid, 20000));
    xp_cmd(&t, XP_REC, 1000);
    check_unmapped_of(t.pid, needle);
    printf("shm_after_kill=%d\n", count_shm_of(c.pid));
    trace_id_t trid = xp_create(t.pid, 4 << 20, 0, 0, 0);
    printf("shm_after_next_create=%d\n", count_shm_of(c.pid));
    CHECK(posix_trace_start(trid));
    xp_cmd(&t, XP_REC, 100);
    xp_cmd(&t, XP_DONE, 0);
    xp_read_stop_print(trid, "M", 1, 20000);
    CHECK(posix_trace_shutdown(trid));
    printf("shm_mine_after_shutdown=%d\n", count_shm_of(getpid()));
    xp_finish(&t, "T");
    xp_shm_print_new("after", &g_shm_before);
    return 0;
}

/* ---- kill -9 of a controller with a log ---- */
static int ctl_log(struct xp_link *l, void *arg)
{
    const char *path = arg;
    pid_t target = (pid_t)xp_get(l->in, 20000, "target pid");
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    TC_ASSERT(fd >= 0);
    trace_attr_t a;
    trace_id_t trid;
    xp_attr(&a, 1 << 20, 0, 0, 0);
    CHECK(posix_trace_attr_setname(&a, "xpdeath"));
    CHECK(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND));
    int rc = posix_trace_create_withlog(target, &a, fd, &trid);
    if (rc != 0) {
        printf("C create_withlog rc=%s\n", tc_errname(rc));
        return 2;
    }
    CHECK(posix_trace_start(trid));
    xp_put(l->out, 1);
    xp_get(l->in, 20000, "flush");
    printf("C flush rc=%s\n", tc_errname(posix_trace_flush(trid)));
    xp_put(l->out, 1);
    for (;;)
        pause();
    return 0;
}

static int mode_kill_ctl_log(const char *path)
{
    xp_role_add(getpid(), "M");
    struct xp_proc t = xp_spawn_target("T", NULL);
    struct xp_proc c = xp_spawn("C", ctl_log, (void *)path);
    xp_put(c.to, t.pid);
    xp_get(c.from, 20000, "C started");
    xp_cmd(&t, XP_REC3, 1000);
    xp_cmd(&t, XP_DONE, 0);
    xp_put(c.to, 1);
    xp_get(c.from, 20000, "C flushed");
    printf("T maps_live_stream=%d\n", count_maps(t.pid) > 0);
    kill(c.pid, SIGKILL);
    xp_print_exit("C", xp_wait(c.pid, 20000));
    xp_cmd(&t, XP_REC3, 1000);
    check_unmapped(t.pid);
    xp_finish(&t, "T");
    int fd = open(path, O_RDONLY);
    TC_ASSERT(fd >= 0);
    trace_id_t trid;
    int rc = posix_trace_open(fd, &trid);
    printf("L open rc=%s\n", tc_errname(rc));
    if (rc == 0) {
        struct xp_col col;
        xp_col_init(&col, trid);
        printf("L read rc=%s\n", tc_errname(xp_drain_log(&col)));
        xp_print(&col, "L");
        CHECK(posix_trace_close(trid));
    }
    close(fd);
    xp_shm_print_new("after", &g_shm_before);
    return 0;
}

/* ---- a target killed in the middle of a record ---- */
struct stuck_shared {
    _Atomic int stuck;      /* T1 is blocked inside posix_trace_event */
    _Atomic int t1_killed;  /* M killed T1 */
    _Atomic int read_all;   /* M has read everything (stuck_zombie) */
    _Atomic int t1_pid, t2_pid;
};

static struct stuck_shared *g_st;

static void segv_block(int sig)
{
    (void)sig;
    atomic_store(&g_st->stuck, 1);
    for (;;)
        pause();
}

static void stuck_writer(trace_event_id_t ev, trace_event_id_t big)
{
    for (uint64_t i = 0; i < 100; i++)
        xp_rec(ev, "xp/ev", "T1", 0, i);
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    TC_ASSERT(m != MAP_FAILED);
    unsigned char tmp[sizeof(struct xp_pl) + 64];
    xp_fill(tmp, "xp/big", "T1", 0, 100, 64);
    unsigned char *data = m + pg - sizeof tmp;
    memcpy(data, tmp, sizeof tmp);
    TC_ASSERT(mprotect(m + pg, (size_t)pg, PROT_NONE) == 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = segv_block;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    posix_trace_event(big, data, 2048); /* faults while copying; never returns */
    printf("T1: posix_trace_event returned\n");
    exit(6);
}

/* T2, a child that records 1000 "xp/ev" and one "xp/done" after a sibling
 * died; its pid published at *pid (for the main process's roles). Returns
 * its wait status. */
static int run_t2(trace_event_id_t ev, trace_event_id_t done, _Atomic int *pid)
{
    pid_t t2 = fork();
    TC_ASSERT(t2 >= 0);
    if (t2 == 0) {
        tc_alarm_watchdog(30);
        for (uint64_t i = 0; i < 1000; i++)
            xp_rec(ev, "xp/ev", "T2", 0, i);
        xp_rec(done, "xp/done", "T2", 0, 0);
        exit(0);
    }
    atomic_store(pid, t2);
    return xp_wait(t2, 20000);
}

static int stuck_target(struct xp_link *l, void *arg)
{
    int zombie = *(int *)arg;
    trace_event_id_t ev = tc_open("xp/ev");
    trace_event_id_t big = tc_open("xp/big");
    trace_event_id_t done = tc_open("xp/done");
    xp_get(l->in, 20000, "go");
    xp_rec(ev, "xp/ev", "T", 0, 0);
    fflush(stdout);
    pid_t t1 = fork();
    TC_ASSERT(t1 >= 0);
    if (t1 == 0) {
        stuck_writer(ev, big);
        exit(7);
    }
    atomic_store(&g_st->t1_pid, t1);
    xp_flag_wait(&g_st->t1_killed, 1, 25000, "T1 killed");
    int st1 = 0;
    if (!zombie)
        st1 = xp_wait(t1, 20000);
    int st2 = run_t2(ev, done, &g_st->t2_pid);
    xp_rec(done, "xp/done", "T", 0, 0);
    if (zombie) {
        xp_flag_wait(&g_st->read_all, 1, 25000, "M read all");
        st1 = xp_wait(t1, 20000);
    }
    xp_put(l->out, st1);
    xp_put(l->out, st2);
    return 0;
}

static void t1_hook(struct xp_col *c, const tc_event *e, void *arg)
{
    long *n = arg;
    struct xp_pl p;
    if (e->info.posix_event_id > POSIX_TRACE_UNNAMED_USEREVENT && xp_check_payload(e, &p) &&
        strcmp(p.role, "T1") == 0 && ++*n >= 100)
        c->stop = 1;
}

static int mode_stuck(int zombie)
{
    g_st = xp_shared(sizeof *g_st);
    xp_role_add(getpid(), "M");
    struct xp_proc t = xp_spawn("T", stuck_target, &zombie);
    trace_id_t trid = xp_create(t.pid, 4 << 20, 4096, 0, POSIX_TRACE_INHERITED);
    CHECK(posix_trace_start(trid));
    xp_put(t.to, 1);
    xp_flag_wait(&g_st->stuck, 1, 20000, "T1 stuck in posix_trace_event");
    pid_t t1 = atomic_load(&g_st->t1_pid);
    xp_role_add(t1, "T1");
    /* read T1's 100 complete events: the reader now stands at its
     * unfinished record */
    struct xp_col c;
    long n = 0;
    xp_col_init(&c, trid);
    c.hook = t1_hook;
    c.hook_arg = &n;
    int rc = xp_collect(&c, "S", 1000, 20000);
    printf("S read T1's 100 rc=%s n=%ld\n", tc_errname(rc), n);
    c.hook = NULL;
    c.stop = 0;
    kill(t1, SIGKILL);
    atomic_store(&g_st->t1_killed, 1);
    rc = xp_collect(&c, "S", 2, 20000);
    printf("S collect rc=%s\n", tc_errname(rc));
    tc_print_status("S", trid);
    xp_role_add(atomic_load(&g_st->t2_pid), "T2");
    atomic_store(&g_st->read_all, 1);
    int64_t st1 = xp_get(t.from, 25000, "T1 status");
    int64_t st2 = xp_get(t.from, 25000, "T2 status");
    xp_print_exit("T1", (int)st1);
    xp_print_exit("T2", (int)st2);
    xp_print_exit("T", xp_wait(t.pid, 20000));
    CHECK(posix_trace_stop(trid));
    xp_drain(&c);
    xp_print(&c, "S");
    CHECK(posix_trace_shutdown(trid));
    return 0;
}

/* ---- bursts killed ---- */
#define NW 3
#define BIG_EXTRA 8192

struct wthr {
    _Atomic uint64_t started;   /* seq + 1 of the call begun last */
    _Atomic uint64_t completed; /* seq + 1 of the call returned last */
};

struct burst_shared {
    struct wthr w[NW][2];
    _Atomic int pid[NW];
    _Atomic int round;   /* M: start writer number round */
    _Atomic int killed;  /* M: writers killed so far */
    _Atomic int t2_pid;
};

static struct burst_shared *g_b;
static trace_event_id_t g_big;

struct wjob {
    int w, thr;
};

static void *burst_thread(void *arg)
{
    struct wjob *j = arg;
    struct wthr *s = &g_b->w[j->w][j->thr];
    char role[16];
    snprintf(role, sizeof role, "W%d", j->w + 1);
    static _Thread_local unsigned char buf[sizeof(struct xp_pl) + BIG_EXTRA];
    for (uint64_t i = 0;; i++) {
        size_t n = xp_fill(buf, "xp/big", role, (unsigned)j->thr, i, BIG_EXTRA);
        atomic_store(&s->started, i + 1);
        posix_trace_event(g_big, buf, n);
        atomic_store(&s->completed, i + 1);
    }
    return NULL;
}

static void burst_writer(int w)
{
    pthread_t th;
    struct wjob j0 = { w, 0 }, j1 = { w, 1 };
    TC_ASSERT(pthread_create(&th, NULL, burst_thread, &j1) == 0);
    burst_thread(&j0);
}

static int burst_target(struct xp_link *l, void *arg)
{
    (void)arg;
    trace_event_id_t ev = tc_open("xp/ev");
    trace_event_id_t done = tc_open("xp/done");
    g_big = tc_open("xp/big");
    xp_get(l->in, 20000, "go");
    xp_rec(ev, "xp/ev", "T", 0, 0);
    int bad = 0;
    for (int w = 0; w < NW; w++) {
        xp_flag_wait(&g_b->round, w + 1, 25000, "round");
        fflush(stdout);
        pid_t p = fork();
        TC_ASSERT(p >= 0);
        if (p == 0) {
            burst_writer(w);
            exit(0);
        }
        atomic_store(&g_b->pid[w], p);
        int st = xp_wait(p, 25000);
        if (!(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
            bad++;
    }
    int st2 = run_t2(ev, done, &g_b->t2_pid);
    xp_rec(done, "xp/done", "T", 0, 0);
    xp_put(l->out, bad);
    xp_put(l->out, st2);
    return 0;
}

struct reader_arg {
    struct xp_col c;
    int rc;
};

static void *burst_reader(void *arg)
{
    struct reader_arg *r = arg;
    r->rc = xp_collect(&r->c, "S", 2, 40000);
    return NULL;
}

static int mode_burst(void)
{
    g_b = xp_shared(sizeof *g_b);
    xp_role_add(getpid(), "M");
    struct xp_proc t = xp_spawn("T", burst_target, NULL);
    trace_id_t trid = xp_create(t.pid, 16 << 20, BIG_EXTRA + 256, 0, POSIX_TRACE_INHERITED);
    CHECK(posix_trace_start(trid));
    static struct reader_arg r;
    xp_col_init(&r.c, trid);
    pthread_t rd;
    TC_ASSERT(pthread_create(&rd, NULL, burst_reader, &r) == 0);
    xp_put(t.to, 1);
    int midcall = 0;
    for (int w = 0; w < NW; w++) {
        atomic_store(&g_b->round, w + 1);
        int64_t deadline = tc_mono_ns() + 20000000000LL;
        while (atomic_load(&g_b->pid[w]) == 0 && tc_mono_ns() < deadline)
            tc_sleep_ms(1);
        /* let both threads get going, then kill at a varying point */
        while ((atomic_load(&g_b->w[w][0].completed) < 50 ||
                atomic_load(&g_b->w[w][1].completed) < 50) && tc_mono_ns() < deadline)
            sched_yield();
        for (int spin = 0; spin < 1000 * (w + 1); spin++)
            atomic_load(&g_b->w[w][0].completed);
        pid_t p = atomic_load(&g_b->pid[w]);
        char role[16];
        snprintf(role, sizeof role, "W%d", w + 1);
        xp_role_add(p, role);
        kill(p, SIGKILL);
        /* the kill is done; what the threads were doing is now frozen */
        tc_sleep_ms(20);
        for (int k = 0; k < 2; k++)
            midcall += atomic_load(&g_b->w[w][k].started) !=
                       atomic_load(&g_b->w[w][k].completed);
        atomic_store(&g_b->killed, w + 1);
    }
    int64_t bad = xp_get(t.from, 40000, "writer statuses");
    int64_t st2 = xp_get(t.from, 40000, "T2 status");
    xp_role_add(atomic_load(&g_b->t2_pid), "T2");
    pthread_join(rd, NULL);
    printf("S collect rc=%s\n", tc_errname(r.rc));
    printf("writers not killed by SIGKILL=%ld\n", (long)bad);
    xp_print_exit("T2", (int)st2);
    xp_print_exit("T", xp_wait(t.pid, 20000));
    CHECK(posix_trace_stop(trid));
    xp_drain(&r.c);
    xp_print(&r.c, "S");
    for (int w = 0; w < NW; w++)
        for (int k = 0; k < 2; k++)
            printf("W%d thr=%d started=%" PRIu64 " completed=%" PRIu64 "\n", w + 1, k,
                   atomic_load(&g_b->w[w][k].started), atomic_load(&g_b->w[w][k].completed));
    printf("midcall=%d\n", midcall);
    CHECK(posix_trace_shutdown(trid));
    return 0;
}

int main(int argc, char **argv)
{
    tc_init();
    tc_alarm_watchdog(55); /* not tc_watchdog: see xproc.h */
    xp_shm_list(&g_shm_before);
    if (argc < 2)
        return 2;
    const char *m = argv[1];
    if (strcmp(m, "kill_ctl") == 0)
        return mode_kill_ctl();
    if (strcmp(m, "kill_ctl_otheruser") == 0)
        return mode_kill_ctl_otheruser();
    if (strcmp(m, "exec_ctl") == 0)
        return mode_exec_ctl();
    if (strcmp(m, "kill_ctl_log") == 0 && argc > 2)
        return mode_kill_ctl_log(argv[2]);
    if (strcmp(m, "stuck") == 0)
        return mode_stuck(0);
    if (strcmp(m, "stuck_zombie") == 0)
        return mode_stuck(1);
    if (strcmp(m, "burst") == 0)
        return mode_burst();
    printf("unknown mode %s\n", m);
    return 2;
}
