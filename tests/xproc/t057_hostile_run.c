/*
 * t057_hostile_run: a traced program that attacks every piece of memory it
 * shares with its controller, for posixtrace-run (issue 13, "Tests": "a
 * hostile-target test harness ... the attacks above plus random
 * scribbling").
 *
 *   t057_hostile_run ATTACKS SEED SECONDS
 *
 * Run under posixtrace-run (with or without -o). This process (M) forks a
 * worker W, in a process group of its own, and exits 0 whatever W does: W
 * may crash or hang on what it scribbled (its own business), the controller
 * must not. For SECONDS, W records bursts of user events and calls the shim
 * records (open, read, write, close), each burst followed by one attack
 * drawn (PRNG seeded by SEED) from ATTACKS, a comma-separated list of:
 *   bytes    300 random bytes anywhere in its streams' memory
 *   words    100 aligned 8-byte words: 0, all ones, small numbers, random
 *   page     one whole page of a stream filled with random bytes
 *   lock     the stream's names lock word set to the controller's pid, 1,
 *            a random value, with or without the waiters bit (left so)
 *   members  member table entries made valid with chosen pids (the
 *            controller, init, random) and descriptor numbers (0..1023, -1)
 *   counters the stream's lost count raised by 2^55 (each step within the
 *            bound of libtrace/ring/pt_bounds.h, their sum soon beyond it) and
 *            its pending error set to a value that is no errno
 *   loop     chunk chains made loops: each linked chunk's successor linked
 *            back to it (a consumer that followed them would read the same
 *            records again and again)
 *   inbox    random bytes in its inbox (entries, doorbell, names)
 *   shrink   ftruncate of every posixtrace memfd the controller holds
 *            (/proc/PPID/fd) and of its own inbox, to 0 and to one page
 *   all      every one of them
 * A fifth of the bursts also fork a child that runs three bursts (with
 * attacks) and exits. M waits for W (10 s past the deadline at most, then
 * kills W's group) and prints "W exit=N", "W signal=N" or "W killed at
 * deadline".
 */
#include "tcommon.h"
#include "../libtrace/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

enum { A_BYTES, A_WORDS, A_PAGE, A_LOCK, A_MEMBERS, A_COUNTERS, A_LOOP, A_INBOX, A_SHRINK, A_N };
static const char *const attack_names[A_N] = {
    "bytes", "words", "page", "lock", "members", "counters", "loop", "inbox", "shrink",
};

static uint64_t g_rng;
static unsigned g_attacks; /* bit per attack */
static pid_t g_ctrl;       /* posixtrace-run */

static uint64_t rnd(void)
{
    return tc_rnd(&g_rng);
}

/* ---- the memory shared with the controller ---- */

struct region {
    unsigned char *p;    /* the shared mapping */
    size_t size;
    unsigned char *base; /* where the stream starts (tc_stream_base), or NULL */
};

/* The writable mappings of streams (memfds "posixtrace:NAME", /dev/shm
 * objects "posixtrace-PID-..."), not the controller's alive page. */
static int stream_regions(struct region *r, int max)
{
    struct tc_map m[32];
    int k = tc_find_maps("/memfd:posixtrace:", NULL, m, 32);
    k += tc_find_maps("/dev/shm/posixtrace-", "posixtrace-alive", m + k, 32 - k);
    int n = 0;
    for (int i = 0; i < k && n < max; i++) {
        if (m[i].perms[1] == 'w') {
            r[n].p = (unsigned char *)m[i].lo;
            r[n].size = m[i].hi - m[i].lo;
            r[n].base = (unsigned char *)tc_stream_base(&m[i]);
            n++;
        }
    }
    return n;
}

/* A stream's first page is its struct pt_shm (libtrace/ring/shm_layout.h); in a
 * process that attached it, a private copy just before the shared mapping. */
static struct pt_shm *stream_head(const struct region *r)
{
    struct pt_shm *s = (struct pt_shm *)r->base;
    return s != NULL && r->p + r->size >= (unsigned char *)(s + 1) && s->magic == PT_SHM_MAGIC
               ? s
               : NULL;
}

static const uint64_t words[] = { 0, ~0ULL, 1, 7, 64, 4096, 0x7fffffff, 0x80000000ULL };

static void scribble(const struct region *r, int kind)
{
    if (kind == A_BYTES) {
        for (int i = 0; i < 300; i++)
            r->p[rnd() % r->size] = (unsigned char)rnd();
    } else if (kind == A_WORDS) {
        for (int i = 0; i < 100; i++) {
            uint64_t x = rnd(), v = x & 1 ? words[(x >> 1) % 8] : rnd();
            memcpy(r->p + (rnd() % (r->size / 8)) * 8, &v, 8);
        }
    } else {
        size_t pg = (rnd() % (r->size / 4096)) * 4096;
        for (size_t i = 0; i < 4096; i += 8) {
            uint64_t v = rnd();
            memcpy(r->p + pg + i, &v, 8);
        }
    }
}

static void attack_lock(struct pt_shm *s)
{
    static const uint32_t who[] = { 0, 1, 0x3fffffff, 0 };
    uint32_t v = who[rnd() % 4];
    if (v == 0)
        v = rnd() % 3 ? (uint32_t)g_ctrl : (uint32_t)rnd();
    if (rnd() % 2)
        v |= 0x80000000u; /* waiters */
    atomic_store(&s->names_lock, v);
}

static void attack_members(struct pt_shm *s)
{
    static const int32_t fds[] = { 0, 1, 2, -1, 1023, PT_INBOX_FD_MIN };
    for (int i = 0; i < 8; i++) {
        struct pt_member *m = &s->members[rnd() % PT_MAX_MEMBERS];
        uint64_t x = rnd();
        m->pid = x % 4 == 0 ? 1 : x % 4 == 1 ? (uint32_t)g_ctrl : x % 4 == 2 ? (uint32_t)getpid()
                                                                             : (uint32_t)rnd();
        m->start = rnd() % 2 ? 0 : rnd();
        m->inbox_fd = rnd() % 2 ? fds[rnd() % 6] : (int32_t)(rnd() % 1024);
        atomic_store(&m->state, rnd() % 4 ? 2u : (uint32_t)rnd());
    }
}

static void attack_counters(struct pt_shm *s)
{
    atomic_fetch_add(&s->lost, UINT64_C(1) << 55);
    atomic_store(&s->error_pending, 577528422u);
}

static void attack_loop(struct pt_shm *s)
{
    for (uint32_t c = 0; c < s->nchunks; c++) {
        uint32_t next = atomic_load(&pt_chunk(s, c)->next);
        if (next != PT_NONE && next < s->nchunks && next != c)
            atomic_store(&pt_chunk(s, next)->next, c);
    }
}

static void attack_inbox(void)
{
    unsigned char *p = pt_inbox_obj.bytes;
    for (int i = 0; i < 64; i++)
        p[rnd() % sizeof pt_inbox_obj.bytes] = (unsigned char)rnd();
}

/* ftruncate every posixtrace memfd of the controller, and our inbox. */
static void attack_shrink(void)
{
    char dir[64], path[128], link[256];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)g_ctrl);
    DIR *d = opendir(dir);
    while (d != NULL) {
        struct dirent *e = readdir(d);
        if (e == NULL)
            break;
        snprintf(path, sizeof path, "%s/%.40s", dir, e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0)
            continue;
        link[n] = 0;
        if (strstr(link, "posixtrace") == NULL)
            continue;
        int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
            if (ftruncate(fd, rnd() % 2 ? 0 : 4096) != 0) { /* sealed: EPERM */ }
            close(fd);
        }
    }
    if (d != NULL)
        closedir(d);
    if (PT_INBOX->fd >= 0 && ftruncate(PT_INBOX->fd, 0) != 0) { /* sealed */ }
}

static void attack(void)
{
    int kind;
    do
        kind = (int)(rnd() % A_N);
    while (!(g_attacks & 1u << kind));
    struct region r[16];
    int n = stream_regions(r, 16);
    if (kind == A_INBOX)
        attack_inbox();
    else if (kind == A_SHRINK)
        attack_shrink();
    for (int i = 0; i < n && kind <= A_LOOP; i++) {
        struct pt_shm *s = stream_head(&r[i]);
        if (kind <= A_PAGE)
            scribble(&r[i], kind);
        else if (s != NULL && kind == A_LOCK)
            attack_lock(s);
        else if (s != NULL && kind == A_MEMBERS)
            attack_members(s);
        else if (s != NULL && kind == A_COUNTERS)
            attack_counters(s);
        else if (s != NULL)
            attack_loop(s);
    }
}

/* ---- the worker ---- */

static void burst(trace_event_id_t ev, uint64_t *seq)
{
    for (int i = 0; i < 200; i++, (*seq)++)
        posix_trace_event(ev, seq, sizeof *seq);
    char buf[64];
    int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, buf, sizeof buf) < 0) { /* nothing */ }
        close(fd);
    }
    fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, "hostile", 7) < 0) { /* nothing */ }
        close(fd);
    }
}

static void child(trace_event_id_t ev, uint64_t seed)
{
    g_rng ^= seed * 0x9E3779B97F4A7C15ULL;
    uint64_t seq = 0;
    for (int i = 0; i < 3; i++) {
        burst(ev, &seq);
        attack();
    }
    _exit(0);
}

static void worker(int64_t deadline)
{
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
        dup2(null, 2); /* its own crash reports are not the controller's */
    trace_event_id_t ev;
    if (posix_trace_eventid_open("hostile/ev", &ev) != 0)
        _exit(3);
    uint64_t seq = 0;
    while (tc_mono_ns() < deadline) {
        burst(ev, &seq);
        attack();
        if (rnd() % 5 == 0 && fork() == 0)
            child(ev, seq);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        tc_sleep_ms(5);
    }
    _exit(0);
}

static unsigned parse_attacks(const char *spec)
{
    unsigned m = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *sv, *t = strtok_r(buf, ",", &sv); t != NULL; t = strtok_r(NULL, ",", &sv)) {
        for (int k = 0; k < A_N; k++)
            if (strcmp(t, attack_names[k]) == 0 || strcmp(t, "all") == 0)
                m |= 1u << k;
    }
    return m;
}

/* M shares W's streams, which W scribbles over: after the fork M makes no
 * call the shim or the library records (raw system calls only, and no exit
 * handler), so that what W does can only hurt W. */
static void say(const char *msg)
{
    syscall(SYS_write, 1, msg, strlen(msg));
}

static void report(pid_t w, int64_t deadline)
{
    int st = 0;
    char line[64];
    for (;;) {
        if (syscall(SYS_wait4, w, &st, WNOHANG, NULL) == w)
            break;
        if (tc_mono_ns() > deadline + 10000000000LL) {
            syscall(SYS_kill, -w, SIGKILL);
            syscall(SYS_wait4, w, &st, 0, NULL);
            say("W killed at deadline\n");
            return;
        }
        struct timespec ts = { 0, 20000000 };
        syscall(SYS_nanosleep, &ts, NULL);
    }
    syscall(SYS_kill, -w, SIGKILL); /* children it left */
    if (WIFEXITED(st))
        snprintf(line, sizeof line, "W exit=%d\n", WEXITSTATUS(st));
    else
        snprintf(line, sizeof line, "W signal=%d\n", WTERMSIG(st));
    say(line);
}

int main(int argc, char **argv)
{
    tc_init();
    if (argc != 4 || (g_attacks = parse_attacks(argv[1])) == 0) {
        fprintf(stderr, "usage: t057_hostile_run ATTACKS SEED SECONDS\n");
        return 2;
    }
    g_rng = strtoull(argv[2], NULL, 0) * 0x9E3779B97F4A7C15ULL + 1;
    g_ctrl = getppid();
    int64_t deadline = tc_mono_ns() + (int64_t)atoi(argv[3]) * 1000000000LL;
    pid_t w = fork();
    if (w == 0) {
        setpgid(0, 0);
        worker(deadline);
    }
    if (w < 0)
        return 2;
    syscall(SYS_setpgid, w, w);
    report(w, deadline);
    syscall(SYS_exit_group, 0);
    return 0;
}
