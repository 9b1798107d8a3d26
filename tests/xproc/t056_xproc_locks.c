/*
 * t056_xproc_locks: a target that attacks the words it shares with its
 * controller (issue 13: "a hostile traced program must not be able to
 * steer, hang or kill through its controller").
 *
 *   t056_xproc_locks names|inbox|members
 *   t056_xproc_locks xuser_precreate|xuser_fake_alive      (root only)
 *
 * names, inbox, members: M (this process) spawns the hostile target T and
 * the controller R (both children). R creates a stream "xplocks" for T and
 * commands T, which attacks:
 *   names    holds the stream's names lock word with its own (live) tid, then
 *            with a dead process's pid, then garbage words; then a thread of
 *            T writes random values over the word and the 60 bytes after it
 *            (where a robust mutex's list pointers were) while R opens names.
 *   inbox    marks every entry of its inbox BUSY; then a thread flips entry
 *            states at random and writes garbage where the inbox lock was
 *            while R creates, starts and shuts down streams for T.
 *   members  a thread fills the stream's member table with garbage entries
 *            (live state, random pids and descriptors) while R starts and
 *            stops the stream (each rings every member).
 * R prints each call's code and whether it returned within its bound.
 *
 * xuser_*: M (root) traces T (t052_xproc_exec target) running as uid 65534;
 * B, a child running as uid 65533, is a third user:
 *   xuser_precreate   B creates /dev/shm/posixtrace-alive-<M>-<start> (the
 *                     name the alive page used to have) before M's create;
 *                     then tries to open and truncate every posixtrace object
 *                     of M's.
 *   xuser_fake_alive  M's alive page is replaced by B's object (as if B had
 *                     won the name) before T attaches: T must refuse the
 *                     stream; the next stream works.
 */
#include "xproc.h"
#include "../libtrace/internal.h"
#include <dirent.h>
#include <grp.h>
#include <sys/syscall.h>

enum { H_REC = 1, H_DONE, H_NAMES_SET, H_NAMES_OWN, H_DEAD_TID, H_INBOX_STATES, H_STORM, H_STORM_STOP,
       H_INBOX_ABANDONED, H_EXIT };

static uint64_t g_rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
    return tc_rnd(&g_rng);
}

/* ---- the hostile target ---- */

/* The stream "xplocks" as mapped here (tc_stream_base: its first page is
 * this process's private copy, the rest shared). */
static struct pt_shm *find_stream(void)
{
    return (struct pt_shm *)tc_find_stream("posixtrace:xplocks");
}

static struct pt_inbox *inbox(void)
{
    return &pt_inbox_obj.ib;
}

static _Atomic int storm_on;

static void storm_names(void)
{
    struct pt_shm *s = find_stream();
    unsigned char *w = (unsigned char *)s + offsetof(struct pt_shm, names_lock);
    while (atomic_load(&storm_on)) {
        uint64_t v = rnd();
        memcpy(w + (v % 8) * 8, &v, 8); /* the word, and 56 bytes after it */
        sched_yield();
    }
    atomic_store(&s->names_lock, 0);
}

static void storm_inbox(void)
{
    static const uint32_t states[] = { PT_IE_FREE, PT_IE_BUSY, PT_IE_POSTED, 0xffffffffu };
    struct pt_inbox *ib = inbox();
    unsigned char *gap = (unsigned char *)&ib->uid + sizeof ib->uid;
    size_t gaplen = (size_t)((unsigned char *)ib->ent - gap);
    while (atomic_load(&storm_on)) {
        uint64_t v = rnd();
        atomic_store(&ib->ent[v % PT_MAX_ATTACH].state, states[(v >> 8) % 4]);
        gap[(v >> 16) % gaplen] = (unsigned char)(v >> 32);
        sched_yield();
    }
}

static void storm_members(void)
{
    struct pt_shm *s = find_stream();
    const int32_t fds[] = { 0, 1, 2, -1, 999, 1000, 1001, 100000 };
    while (atomic_load(&storm_on)) {
        uint64_t v = rnd();
        struct pt_member *m = &s->members[v % PT_MAX_MEMBERS];
        uint32_t pids[] = { 1, (uint32_t)getppid(), (uint32_t)getpid(), (uint32_t)(v >> 20) };
        m->pid = pids[(v >> 8) % 4];
        m->start = rnd();
        m->inbox_fd = fds[(v >> 12) % 8];
        atomic_store(&m->state, 2);
        sched_yield();
    }
}

static void *storm_main(void *arg)
{
    int kind = (int)(intptr_t)arg;
    if (kind == 1)
        storm_names();
    else if (kind == 2)
        storm_inbox();
    else
        storm_members();
    return NULL;
}

/* The pid of a process that is gone (forked, exited, reaped). */
static pid_t dead_pid(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return p;
}

static int hostile_target(struct xp_link *l, void *arg)
{
    (void)arg;
    trace_event_id_t ev = tc_open("xp/ev"), done = tc_open("xp/done");
    xp_put(l->out, ev);
    uint64_t seq = 0, ndone = 0;
    pthread_t th;
    for (;;) {
        int64_t c = xp_get(l->in, 30000, "a command");
        int64_t a = c >> 8, r = 0;
        switch ((int)(c & 0xff)) {
        case H_REC:
            for (int64_t i = 0; i < a; i++)
                xp_rec(ev, "xp/ev", "T", 0, seq++);
            break;
        case H_DONE:
            xp_rec(done, "xp/done", "T", 0, ndone++);
            break;
        case H_NAMES_SET: /* a: the word */
            atomic_store(&find_stream()->names_lock, (uint32_t)a);
            break;
        case H_NAMES_OWN: /* held by this (live) thread */
            atomic_store(&find_stream()->names_lock, (uint32_t)syscall(SYS_gettid));
            break;
        case H_DEAD_TID:
            r = dead_pid();
            atomic_store(&find_stream()->names_lock, (uint32_t)r);
            break;
        case H_INBOX_STATES:
            for (unsigned i = 0; i < PT_MAX_ATTACH; i++)
                atomic_store(&inbox()->ent[i].state, (uint32_t)a);
            break;
        case H_INBOX_ABANDONED: /* claimed by a controller that died before posting */
            r = dead_pid();
            for (unsigned i = 0; i < PT_MAX_ATTACH; i++)
                atomic_store(&inbox()->ent[i].state, PT_IE_BUSY_BY(r));
            break;
        case H_STORM:
            atomic_store(&storm_on, 1);
            TC_ASSERT(pthread_create(&th, NULL, storm_main, (void *)(intptr_t)a) == 0);
            break;
        case H_STORM_STOP:
            atomic_store(&storm_on, 0);
            pthread_join(th, NULL);
            break;
        case H_EXIT:
            return 0;
        }
        xp_put(l->out, r);
    }
}

/* ---- the controller ---- */

/* a command to T: its answer, or -1 if none within 5 s */
static int64_t tell(const struct xp_proc *t, int cmd, int64_t a)
{
    xp_put(t->to, a << 8 | cmd);
    int64_t v;
    return xp_tryget(t->from, 5000, &v) == 1 ? v : -1;
}

static int64_t ms_since(int64_t t0)
{
    return (tc_mono_ns() - t0) / 1000000;
}

static trace_id_t create_for(pid_t pid, int *rc)
{
    trace_attr_t a;
    trace_id_t trid = 0;
    xp_attr(&a, 1 << 20, 0, POSIX_TRACE_LOOP, 0);
    CHECK(posix_trace_attr_setname(&a, "xplocks"));
    *rc = posix_trace_create(pid, &a, &trid);
    return trid;
}

/* trid_eventid_open of `name`: prints "R <label> rc=.. id=.. under_<ms>=.." */
static int open_timed(trace_id_t trid, const char *label, const char *name, int bound_ms)
{
    trace_event_id_t id = 0;
    int64_t t0 = tc_mono_ns();
    int rc = posix_trace_trid_eventid_open(trid, name, &id);
    int64_t ms = ms_since(t0);
    printf("R %s rc=%s id=%u waited_900ms=%d under_%dms=%d\n", label, tc_errname(rc),
           rc == 0 ? (unsigned)id : 0u, ms >= 900, bound_ms, ms < bound_ms);
    return rc;
}

static void names_attacks(const struct xp_proc *t, trace_id_t trid)
{
    tell(t, H_NAMES_OWN, 0);
    open_timed(trid, "held", "xp/held", 2000);
    tell(t, H_NAMES_SET, 0);
    open_timed(trid, "released", "xp/released", 100);
    printf("R dead_holder_pid=%d\n", tell(t, H_DEAD_TID, 0) > 0);
    open_timed(trid, "dead_holder", "xp/dead", 1000);
    static const uint32_t garbage[] = { 0xffffffffu, 0x40000000u, 0xdeadbeefu, 0x7fffffffu };
    for (unsigned i = 0; i < 4; i++) {
        char label[32], name[32];
        snprintf(label, sizeof label, "garbage=%08x", garbage[i]);
        snprintf(name, sizeof name, "xp/g%u", i);
        tell(t, H_NAMES_SET, garbage[i]);
        open_timed(trid, label, name, 1000);
    }
    tell(t, H_NAMES_SET, 0);
    tell(t, H_STORM, 1);
    long ok = 0, again = 0, other = 0, slow = 0;
    for (int i = 0; i < 20; i++) {
        char name[32];
        snprintf(name, sizeof name, "xp/storm%d", i);
        trace_event_id_t id;
        int64_t t0 = tc_mono_ns();
        int rc = posix_trace_trid_eventid_open(trid, name, &id);
        slow += ms_since(t0) >= 2000;
        ok += rc == 0;
        again += rc == EAGAIN;
        other += rc != 0 && rc != EAGAIN;
    }
    tell(t, H_STORM_STOP, 0);
    printf("R storm calls=20 ok_or_eagain=%ld other=%ld slow=%ld\n", ok + again, other, slow);
    open_timed(trid, "after_storm", "xp/after", 1000);
}

static void inbox_attacks(const struct xp_proc *t)
{
    tell(t, H_INBOX_STATES, PT_IE_BUSY);
    int64_t t0 = tc_mono_ns();
    int rc;
    create_for(t->pid, &rc);
    printf("R create all_busy rc=%s under_500ms=%d\n", tc_errname(rc), ms_since(t0) < 500);
    tell(t, H_INBOX_ABANDONED, 0);
    trace_id_t ab = create_for(t->pid, &rc);
    printf("R create abandoned rc=%s\n", tc_errname(rc));
    if (rc == 0)
        CHECK(posix_trace_shutdown(ab));
    tell(t, H_INBOX_STATES, PT_IE_FREE);
    tell(t, H_STORM, 2);
    long made = 0, again = 0, other = 0, bad_ops = 0;
    t0 = tc_mono_ns();
    for (int i = 0; i < 30; i++) {
        trace_id_t trid = create_for(t->pid, &rc);
        made += rc == 0;
        again += rc == EAGAIN;
        other += rc != 0 && rc != EAGAIN;
        if (rc == 0)
            bad_ops += (posix_trace_start(trid) != 0) + (posix_trace_shutdown(trid) != 0);
    }
    tell(t, H_STORM_STOP, 0);
    printf("R storm creates=30 ok_or_eagain=%ld other=%ld bad_ops=%ld under_10s=%d\n",
           made + again, other, bad_ops, ms_since(t0) < 10000);
    /* clean up after the storm: T lets go of what it attached, then frees
     * what it left BUSY; a new stream works */
    tell(t, H_REC, 1);
    tell(t, H_INBOX_STATES, PT_IE_FREE);
    trace_id_t trid = create_for(t->pid, &rc);
    printf("R create after rc=%s\n", tc_errname(rc));
    if (rc != 0)
        return;
    CHECK(posix_trace_start(trid));
    tell(t, H_REC, 100);
    tell(t, H_DONE, 0);
    xp_read_stop_print(trid, "R", 1, 10000);
    printf("R shutdown rc=%s\n", tc_errname(posix_trace_shutdown(trid)));
}

static void members_attacks(const struct xp_proc *t, trace_id_t trid)
{
    tell(t, H_STORM, 3);
    long bad = 0;
    int64_t t0 = tc_mono_ns();
    for (int i = 0; i < 20; i++)
        bad += (posix_trace_stop(trid) != 0) + (posix_trace_start(trid) != 0);
    tell(t, H_STORM_STOP, 0);
    printf("R members cycles=20 rc_bad=%ld under_10s=%d\n", bad, ms_since(t0) < 10000);
}

struct r_arg {
    struct xp_proc t;
    const char *mode;
};

static int controller(struct xp_link *l, void *arg)
{
    struct r_arg *r = arg;
    (void)l;
    if (strcmp(r->mode, "inbox") == 0) {
        inbox_attacks(&r->t);
        return 0;
    }
    int rc;
    trace_id_t trid = create_for(r->t.pid, &rc);
    CHECK(rc);
    CHECK(posix_trace_start(trid));
    printf("T attached=%d\n", tell(&r->t, H_REC, 10) == 0);
    if (strcmp(r->mode, "names") == 0)
        names_attacks(&r->t, trid);
    else
        members_attacks(&r->t, trid);
    printf("R shutdown rc=%s\n", tc_errname(posix_trace_shutdown(trid)));
    return 0;
}

static int mode_hostile(const char *mode)
{
    xp_role_add(getpid(), "M");
    struct r_arg ra;
    ra.t = xp_spawn("T", hostile_target, NULL);
    xp_get(ra.t.from, 20000, "target id");
    ra.mode = mode;
    struct xp_proc r = xp_spawn("R", controller, &ra);
    xp_print_exit("R", xp_wait(r.pid, 40000));
    xp_end_hostile(&ra.t, H_EXIT, 5000, "T");
    return 0;
}

/* ---- another user's process, a third user's objects (root) ---- */

static uint64_t self_start(void)
{
    FILE *f = fopen("/proc/self/stat", "r");
    char buf[1024];
    size_t n = f != NULL ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    for (int field = 2; p != NULL && field < 22; field++)
        p = strchr(p + 1, ' ');
    return p != NULL ? strtoull(p + 1, NULL, 10) : 0;
}

/* The /dev/shm names starting with `prefix`: count, and the first in first. */
static int shm_names(const char *prefix, char *first, size_t size)
{
    DIR *d = opendir("/dev/shm");
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        if (n++ == 0)
            xp_strcpy(first, size, e->d_name);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

enum { B_PRECREATE = 1, B_ATTACK, B_FAKE };

/* names B needs too (M sets g_old_alive after B started: shared memory) */
static char *g_old_alive, g_prefix[64], g_stream_prefix[64];
#define OLD_ALIVE_SIZE 96

/* B, as uid 65533: 0 or an errno */
static int b_precreate(const char *name, int word)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0666);
    if (fd < 0)
        return errno;
    fchmod(fd, word ? 0644 : 0666);
    int rc = ftruncate(fd, 4096) == 0 ? 0 : errno;
    if (rc == 0 && word && pwrite(fd, &word, sizeof word, 0) != (ssize_t)sizeof word)
        rc = EIO;
    close(fd);
    return rc;
}

/* B opens every posixtrace object of M's for writing: how many it could
 * open that are not its own (packed: opened << 16 | denied) */
static int64_t b_attack(void)
{
    DIR *d = opendir("/dev/shm");
    int64_t opened = 0, denied = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, g_prefix, strlen(g_prefix)) != 0 &&
            strncmp(e->d_name, g_stream_prefix, strlen(g_stream_prefix)) != 0)
            continue;
        char name[300];
        snprintf(name, sizeof name, "/%.255s", e->d_name);
        int fd = shm_open(name, O_RDWR, 0);
        struct stat st;
        if (fd < 0) {
            denied += errno == EACCES;
            continue;
        }
        if (fstat(fd, &st) == 0 && st.st_uid != getuid())
            opened++;
        else if (ftruncate(fd, 0) != 0) /* its own: harmless now */
            opened += 1000;
        close(fd);
    }
    if (d != NULL)
        closedir(d);
    return opened << 16 | denied;
}

static int third_user(struct xp_link *l, void *arg)
{
    (void)arg;
    TC_ASSERT(setgroups(0, NULL) == 0 && setgid(XP_UID_B) == 0 && setuid(XP_UID_B) == 0);
    for (;;) {
        int64_t c = xp_get(l->in, 30000, "B command");
        char name[300];
        switch ((int)c) {
        case B_PRECREATE:
            xp_put(l->out, b_precreate(g_old_alive, 0));
            break;
        case B_ATTACK:
            xp_put(l->out, b_attack());
            break;
        case B_FAKE: /* the name M just freed, a page that says "held" */
            snprintf(name, sizeof name, "%.255s", g_old_alive);
            xp_put(l->out, b_precreate(name, 1));
            break;
        default:
            return 0;
        }
    }
}

static void print_alive_objects(void)
{
    DIR *d = opendir("/dev/shm");
    int real = 0, real_ok = 0, pre = 0, pre_ok = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[300];
        struct stat st;
        snprintf(path, sizeof path, "/dev/shm/%.255s", e->d_name);
        if (strncmp(e->d_name, g_prefix, strlen(g_prefix)) != 0 || lstat(path, &st) != 0)
            continue;
        if (strcmp(e->d_name, g_old_alive + 1) == 0) {
            pre++;
            pre_ok += st.st_uid == XP_UID_B && st.st_size == 4096;
        } else {
            real++;
            real_ok += st.st_uid == 0 && (st.st_mode & 07777) == 0644 && st.st_size == 4096;
        }
    }
    if (d != NULL)
        closedir(d);
    printf("M alive real=%d real_root_0644=%d precreated=%d precreated_intact=%d\n", real,
           real_ok, pre, pre_ok);
}

static int xuser_setup(struct xp_proc *t, struct xp_proc *b)
{
    if (geteuid() != 0) {
        printf("skip: not root (needs setuid to scratch uids)\n");
        return -1;
    }
    char t052[4096];
    xp_sibling(t052, sizeof t052, "t052_xproc_exec");
    xp_role_add(getpid(), "M");
    g_old_alive = xp_shared(OLD_ALIVE_SIZE);
    snprintf(g_old_alive, OLD_ALIVE_SIZE, "/posixtrace-alive-%ld-%llu", (long)getpid(),
             (unsigned long long)self_start());
    snprintf(g_prefix, sizeof g_prefix, "posixtrace-alive-%ld-", (long)getpid());
    snprintf(g_stream_prefix, sizeof g_stream_prefix, "posixtrace-%ld-", (long)getpid());
    *t = xp_spawn_target_as(t052, XP_UID_A, "T");
    *b = xp_spawn("B", third_user, NULL);
    return 0;
}

static int mode_xuser_precreate(void)
{
    struct xp_proc t, b;
    if (xuser_setup(&t, &b) != 0)
        return 0;
    xp_put(b.to, B_PRECREATE);
    printf("B precreate rc=%s\n", tc_errname((int)xp_get(b.from, 10000, "B")));
    int rc;
    trace_id_t trid = create_for(t.pid, &rc);
    printf("M create rc=%s\n", tc_errname(rc));
    if (rc != 0)
        return 0;
    CHECK(posix_trace_start(trid));
    print_alive_objects();
    xp_cmd(&t, XP_REC, 100);
    xp_put(b.to, B_ATTACK);
    int64_t a = xp_get(b.from, 10000, "B");
    printf("B opened_not_own=%ld denied=%ld\n", (long)(a >> 16), (long)(a & 0xffff));
    xp_cmd(&t, XP_REC, 100);
    xp_cmd(&t, XP_DONE, 0);
    xp_read_stop_print(trid, "M", 1, 20000);
    printf("M shutdown rc=%s\n", tc_errname(posix_trace_shutdown(trid)));
    char first[256];
    printf("M precreated_left=%d\n", shm_names(g_old_alive + 1, first, sizeof first));
    shm_unlink(g_old_alive);
    xp_put(b.to, 0);
    xp_print_exit("B", xp_wait(b.pid, 10000));
    xp_finish(&t, "T");
    return 0;
}

/* Reads for 1.5 s: the user events of the stream. */
static long count_user_events(trace_id_t trid)
{
    static tc_event e;
    long n = 0;
    int64_t deadline = tc_mono_ns() + 1500000000LL;
    while (tc_mono_ns() < deadline) {
        struct timespec abst = tc_ns_ts(tc_now_ns() + 100000000LL);
        int un = -1;
        int rc = posix_trace_timedgetnext_event(trid, &e.info, e.data, sizeof e.data, &e.len,
                                                &un, &abst);
        if (rc == 0 && !un && e.info.posix_event_id > POSIX_TRACE_UNNAMED_USEREVENT)
            n++;
    }
    return n;
}

static int mode_xuser_fake_alive(void)
{
    struct xp_proc t, b;
    if (xuser_setup(&t, &b) != 0)
        return 0;
    int rc;
    trace_id_t trid = create_for(t.pid, &rc);
    printf("M create rc=%s\n", tc_errname(rc));
    if (rc != 0)
        return 0;
    char real[256] = "";
    printf("M alive_names=%d\n", shm_names(g_prefix, real, sizeof real));
    snprintf(g_old_alive, OLD_ALIVE_SIZE, "/%.90s", real);
    shm_unlink(g_old_alive); /* as if B had won the name */
    xp_put(b.to, B_FAKE);
    printf("B fake rc=%s\n", tc_errname((int)xp_get(b.from, 10000, "B")));
    CHECK(posix_trace_start(trid));
    xp_cmd(&t, XP_REC, 100);
    xp_cmd(&t, XP_DONE, 0);
    printf("M fake user_events=%ld\n", count_user_events(trid));
    printf("M shutdown rc=%s\n", tc_errname(posix_trace_shutdown(trid)));
    shm_unlink(g_old_alive);
    trid = create_for(t.pid, &rc);
    printf("M create2 rc=%s\n", tc_errname(rc));
    if (rc != 0)
        return 0;
    CHECK(posix_trace_start(trid));
    xp_cmd(&t, XP_REC, 100);
    xp_cmd(&t, XP_DONE, 0);
    xp_read_stop_print(trid, "M2", 1, 20000);
    printf("M shutdown2 rc=%s\n", tc_errname(posix_trace_shutdown(trid)));
    xp_put(b.to, 0);
    xp_print_exit("B", xp_wait(b.pid, 10000));
    xp_finish(&t, "T");
    return 0;
}

int main(int argc, char **argv)
{
    tc_init();
    tc_alarm_watchdog(55); /* not tc_watchdog: see xproc.h */
    if (argc < 2)
        return 2;
    const char *m = argv[1];
    if (strcmp(m, "names") == 0 || strcmp(m, "inbox") == 0 || strcmp(m, "members") == 0)
        return mode_hostile(m);
    if (strcmp(m, "xuser_precreate") == 0)
        return mode_xuser_precreate();
    if (strcmp(m, "xuser_fake_alive") == 0)
        return mode_xuser_fake_alive();
    return 2;
}
