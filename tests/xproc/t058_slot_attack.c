/*
 * t058_slot_attack: one process of a traced tree attacks another's writing
 * (issue 13, "Writers keep their cursor" in doc/design.md). Run under
 * posixtrace-run (streams inherited: every process of the tree records
 * into the same stream):
 *
 *   t058_slot_attack MODE EVENTS
 *
 * The victim V records EVENTS user events "slot/ev" (data: its sequence
 * number, 8 bytes), then "slot/done"; meanwhile the attacker A, a sibling
 * sharing the stream, attacks according to MODE:
 *   slot   V's writer slots (found by V's pid): everything a writer once
 *          kept there (chunk index, record count, write position, end,
 *          anchor) and the thread word overwritten with random values,
 *          again and again until V is done
 *   pool   the pool's top word and the fresh-chunk counter set to indices
 *          beyond the stream, again and again
 *   head   the stream's shared first page (its geometry: chunk size, number
 *          of chunks, offsets, cap, clock), reached as a new mapping of the
 *          controller's memfd (/proc/<controller>/fd/N, as any process of
 *          the user can); then V forks a child that execs this program in
 *          mode probe, a new image (with the library) that must refuse the
 *          stream rather than write where the scribbled geometry says
 *   probe  record one event "slot/probe" and exit 0
 * The main process M waits for both and prints "V exit=N" or "V signal=N",
 * "A exit=N" or "A signal=N", and, for head, "C exit=N" or "C signal=N"
 * for V's child. Every wait is bounded (30 s).
 */
#include "tcommon.h"
#include "../libtrace/internal.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

static uint64_t g_rng = 0x2545F4914F6CDD1DULL;

static uint64_t rnd(void)
{
    return tc_rnd(&g_rng);
}

/* The stream as mapped here: its first page (private), then the rest. */
static struct pt_shm *find_stream(void)
{
    struct pt_shm *s = (struct pt_shm *)tc_find_stream("/memfd:posixtrace:");
    return s != NULL && s->magic == PT_SHM_MAGIC ? s : NULL;
}

static void attack_slots(struct pt_shm *s, pid_t v)
{
    for (uint32_t i = 0; i < PT_NSLOTS; i++) {
        struct pt_slot *sl = &pt_slots(s)[i];
        if (sl->pid != (uint32_t)v)
            continue;
        /* from wchunk up to the thread word: 8 + 28 + 8 bytes */
        unsigned char *p = (unsigned char *)&sl->wchunk;
        for (size_t k = 0; k + 4 <= offsetof(struct pt_slot, stolen) -
                                     offsetof(struct pt_slot, wchunk); k += 4) {
            uint32_t x = (uint32_t)rnd();
            memcpy(p + k, &x, 4);
        }
    }
}

static void attack_pool(struct pt_shm *s)
{
    uint32_t far = s->nchunks + (uint32_t)(rnd() % 1000000);
    atomic_store(&s->pool_top, ((uint64_t)rnd() << 32) | far);
    atomic_store(&s->fresh_next, (uint32_t)rnd() | 0x80000000u);
}

/* The controller's memfd of the stream, mapped anew: its first page as
 * everyone shares it. Returns 0 if it was scribbled. */
static int attack_head(struct pt_shm *s)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/fd/%d", s->ctrl_pid, s->ctrl_fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct pt_shm *h = mmap(NULL, PT_PAGE0, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (h == MAP_FAILED)
        return -1;
    h->chunk_size = 1u << 30;
    h->nchunks = 0x7fffffffu;
    h->chunks_off = UINT64_C(1) << 44;
    h->cap = UINT64_MAX;
    h->max_data = 1u << 20;
    munmap(h, PT_PAGE0);
    return 0;
}

static void say(const char *who, int st)
{
    if (WIFEXITED(st))
        printf("%s exit=%d\n", who, WEXITSTATUS(st));
    else
        printf("%s signal=%d\n", who, WTERMSIG(st));
    fflush(stdout);
}

static int wait_bounded(pid_t p, int *st)
{
    for (int i = 0; i < 3000; i++) {
        pid_t r = waitpid(p, st, WNOHANG);
        if (r == p)
            return 0;
        tc_sleep_ms(10);
    }
    kill(p, SIGKILL);
    return waitpid(p, st, 0) == p ? 0 : -1;
}

static void victim(long n, int go, int done, const char *mode, const char *self)
{
    trace_event_id_t ev, fin;
    char c;
    if (posix_trace_eventid_open("slot/ev", &ev) != 0 ||
        posix_trace_eventid_open("slot/done", &fin) != 0 || read(go, &c, 1) != 1)
        _exit(3);
    for (uint64_t i = 0; i < (uint64_t)n; i++) {
        posix_trace_event(ev, &i, sizeof i);
        if (i % 64 == 0)
            sched_yield(); /* let the attacker in between */
    }
    posix_trace_event(fin, NULL, 0);
    if (write(done, "d", 1) != 1)
        _exit(4);
    if (strcmp(mode, "head") == 0) {
        if (read(go, &c, 1) != 1) /* the head is scribbled */
            _exit(5);
        pid_t ch = fork();
        if (ch == 0) {
            execl(self, self, "probe", "0", (char *)NULL);
            _exit(127);
        }
        int st = 0;
        if (ch < 0 || wait_bounded(ch, &st) != 0)
            _exit(6);
        say("C", st);
    }
    _exit(0);
}

static void attacker(const char *mode, pid_t v, int go, int done)
{
    struct pt_shm *s = find_stream();
    if (s == NULL)
        _exit(10);
    if (write(go, "g", 1) != 1)
        _exit(11);
    int flags = fcntl(done, F_GETFL);
    fcntl(done, F_SETFL, flags | O_NONBLOCK);
    char c;
    while (read(done, &c, 1) != 1) {
        if (strcmp(mode, "slot") == 0)
            attack_slots(s, v);
        else if (strcmp(mode, "pool") == 0)
            attack_pool(s);
        sched_yield();
    }
    if (strcmp(mode, "head") == 0 && (attack_head(s) != 0 || write(go, "g", 1) != 1))
        _exit(12);
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *mode = argv[1];
    long n = atol(argv[2]);
    if (strcmp(mode, "probe") == 0) {
        trace_event_id_t probe;
        if (posix_trace_eventid_open("slot/probe", &probe) != 0)
            return 3;
        posix_trace_event(probe, NULL, 0);
        return 0;
    }
    int go[2], done[2];
    if (pipe(go) != 0 || pipe(done) != 0)
        return 2;
    pid_t v = fork();
    if (v == 0)
        victim(n, go[0], done[1], mode, argv[0]);
    pid_t a = fork();
    if (a == 0)
        attacker(mode, v, go[1], done[0]);
    int sv = 0, sa = 0;
    if (v < 0 || a < 0 || wait_bounded(v, &sv) != 0 || wait_bounded(a, &sa) != 0)
        return 3;
    say("V", sv);
    say("A", sa);
    return 0;
}
