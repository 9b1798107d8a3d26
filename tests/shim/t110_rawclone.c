/*
 * t110_rawclone: children and threads made by a raw clone system call,
 * which runs no pthread_atfork handler (doc/design.md, "Raw clone children").
 *
 *   t110_rawclone child N M K    the process traces itself in two streams,
 *       one INHERITED and one CLOSE_FOR_CHILD; it records N events, makes a
 *       child with syscall(SYS_clone, SIGCHLD) that records M events and
 *       exits, waits for it, records K more; then reads both streams.
 *   t110_rawclone plain N M K    the same with no stream of its own (for
 *       posixtrace-run -o): the child also calls close(-1) M times (the
 *       shim's events).
 *   t110_rawclone thread N       a raw thread (CLONE_VM without CLONE_SETTLS,
 *       on the main thread's TLS) and the main thread record N events each
 *       at once into a stream of the process; then it is read.
 *   t110_rawclone thread-inner N the same with the raw thread's stack a buffer
 *       on the main thread's own stack, inside the range the main thread
 *       records from (glibc's clone(), which the library interposes).
 *   t110_rawclone vfork N M K    like child, the child made with
 *       CLONE_VM|CLONE_VFORK on a stack of its own (the parent waits).
 *   t110_rawclone stacks N       no raw clone: the main thread itself
 *       records N events on its stack (who 1), N from a signal handler on
 *       an alternate stack in static memory (who 2), N from a coroutine on a
 *       stack of its own (makecontext/swapcontext, who 3): all of it the
 *       same thread, which must not be taken for a raw thread.
 *
 * Every event carries (who, seq): who 1 = parent before, 2 = child or raw
 * thread, 3 = parent after. The reader prints, per stream, the events per
 * (who, pid: "parent", "child" or "other") with whether each run of seq was
 * complete and in order, the lost count (OVERFLOW events) and the ERROR
 * events: "stream INH who=2 pid=child n=5 inorder=1".
 */
#include "tcommon.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <ucontext.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

struct payload {
    uint32_t who, seq;
};

static trace_event_id_t ev;
static pid_t child_pid;
static _Atomic int thread_done;

static void record(uint32_t who, uint32_t n, int closes)
{
    for (uint32_t i = 0; i < n; i++) {
        struct payload p = { who, i };
        posix_trace_event(ev, &p, sizeof p);
        if (closes)
            close(-1);
    }
}

static trace_id_t stream(int inherit)
{
    trace_attr_t a;
    trace_id_t t;
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_setinherited(&a, inherit));
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL));
    CHECK(posix_trace_attr_setmaxdatasize(&a, 64));
    CHECK(posix_trace_attr_setstreamsize(&a, (size_t)16 << 20));
    CHECK(posix_trace_create(0, &a, &t));
    CHECK(posix_trace_attr_destroy(&a));
    CHECK(posix_trace_start(t));
    return t;
}

/* who x pid class: count, next expected seq, still in order */
struct tally {
    uint64_t n[4][3];
    uint32_t next[4][3];
    int inorder[4][3];
    uint64_t lost, errors, other;
};

static int pid_class(pid_t pid)
{
    return pid == getpid() ? 0 : pid == child_pid ? 1 : 2;
}

static void count(struct tally *t, const struct posix_trace_event_info *info, const void *data,
                  size_t len)
{
    if (info->posix_event_id == POSIX_TRACE_OVERFLOW && len == 8) {
        uint64_t n;
        memcpy(&n, data, 8);
        t->lost += n;
        return;
    }
    if (info->posix_event_id == POSIX_TRACE_ERROR) {
        t->errors++;
        return;
    }
    if (info->posix_event_id != ev) {
        t->other++;
        return;
    }
    struct payload p;
    if (len != sizeof p) {
        t->other++;
        return;
    }
    memcpy(&p, data, sizeof p);
    int c = pid_class(info->posix_pid);
    if (p.who > 3) {
        t->other++;
        return;
    }
    if (t->n[p.who][c] == 0)
        t->inorder[p.who][c] = p.seq == 0;
    else if (p.seq != t->next[p.who][c])
        t->inorder[p.who][c] = 0;
    t->next[p.who][c] = p.seq + 1;
    t->n[p.who][c]++;
}

/* Every event of the stopped stream, then the tally. */
static void drain(const char *label, trace_id_t trid)
{
    static char data[4096];
    static struct tally t;
    struct posix_trace_event_info info;
    size_t len;
    int un;
    memset(&t, 0, sizeof t);
    CHECK(posix_trace_stop(trid));
    int64_t end = tc_mono_ns() + 10000000000LL;
    for (;;) {
        struct timespec abst = tc_ns_ts(tc_now_ns() + 200000000LL);
        int rc = posix_trace_timedgetnext_event(trid, &info, data, sizeof data, &len, &un, &abst);
        if (rc == ETIMEDOUT || (rc == 0 && un))
            break;
        TC_ASSERT(rc == 0 && tc_mono_ns() < end);
        count(&t, &info, data, len);
    }
    static const char *const cls[] = { "parent", "child", "other" };
    for (int w = 1; w <= 3; w++)
        for (int c = 0; c < 3; c++)
            if (t.n[w][c] != 0)
                printf("stream %s who=%d pid=%s n=%" PRIu64 " inorder=%d\n", label, w, cls[c],
                       t.n[w][c], t.inorder[w][c]);
    printf("stream %s lost=%" PRIu64 " errors=%" PRIu64 " other=%" PRIu64 "\n", label, t.lost,
           t.errors, t.other);
    CHECK(posix_trace_shutdown(trid));
}

static void wait_child(pid_t pid)
{
    int status;
    TC_ASSERT(pid > 0);
    TC_ASSERT(waitpid(pid, &status, 0) == pid);
    printf("child exited=%d status=%d\n", WIFEXITED(status), WEXITSTATUS(status));
}

/* fork without libc: the child continues here on a copy of the stack */
static void raw_fork_child(uint32_t m, int closes)
{
    pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid == 0) {
        child_pid = (pid_t)syscall(SYS_getpid);
        record(2, m, closes);
        syscall(SYS_exit_group, 0);
    }
    child_pid = pid;
    wait_child(pid);
}

static uint32_t thread_n;

static int raw_thread_main(void *arg)
{
    (void)arg;
    record(2, thread_n, 0);
    atomic_store(&thread_done, 1);
    syscall(SYS_exit, 0); /* this thread only */
    return 0;
}

/* A stack of its own for a CLONE_VM child or thread. */
static void *new_stack(size_t size)
{
    char *st = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                    -1, 0);
    TC_ASSERT(st != MAP_FAILED);
    return st + size;
}

static int mode_thread(uint32_t n, int inner)
{
    trace_id_t t = stream(POSIX_TRACE_CLOSE_FOR_CHILD);
    thread_n = n;
    record(1, 1, 0); /* the main thread has its registry entry and slot */
    int fl = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
    static char *top;
    char local[16 << 10] __attribute__((aligned(16))); /* on this thread's stack */
    top = inner ? local + sizeof local : new_stack(1 << 20);
    TC_ASSERT(clone(raw_thread_main, top, fl, NULL) > 0);
    record(3, n, 0);
    int64_t end = tc_mono_ns() + 20000000000LL;
    while (!atomic_load(&thread_done))
        TC_ASSERT(tc_mono_ns() < end);
    tc_sleep_ms(10); /* past its exit system call */
    drain("T", t);
    return 0;
}

static uint32_t st_n;
static ucontext_t co_main, co_ctx;

static void on_signal(int sig)
{
    (void)sig;
    record(2, st_n, 0);
}

static void coroutine(void)
{
    record(3, st_n, 0);
    swapcontext(&co_ctx, &co_main);
}

static int mode_stacks(uint32_t n)
{
    trace_id_t t = stream(POSIX_TRACE_CLOSE_FOR_CHILD);
    st_n = n;
    record(1, n, 0);
    static char altstack[1 << 16]; /* far from the thread's stack */
    stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack };
    TC_ASSERT(sigaltstack(&ss, NULL) == 0);
    struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_ONSTACK };
    TC_ASSERT(sigaction(SIGUSR1, &sa, NULL) == 0);
    TC_ASSERT(raise(SIGUSR1) == 0);
    TC_ASSERT(getcontext(&co_ctx) == 0);
    co_ctx.uc_stack.ss_sp = (char *)new_stack(1 << 20) - (1 << 20);
    co_ctx.uc_stack.ss_size = 1 << 20;
    co_ctx.uc_link = &co_main;
    makecontext(&co_ctx, coroutine, 0);
    TC_ASSERT(swapcontext(&co_main, &co_ctx) == 0);
    drain("T", t);
    return 0;
}

static uint32_t vf_m;

static int vfork_child_main(void *arg)
{
    (void)arg;
    child_pid = (pid_t)syscall(SYS_getpid);
    record(2, vf_m, 0);
    syscall(SYS_exit, 0);
    return 0;
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(60);
    TC_ASSERT(argc >= 3);
    uint32_t n = (uint32_t)atoi(argv[2]);
    uint32_t m = argc > 3 ? (uint32_t)atoi(argv[3]) : 0;
    uint32_t k = argc > 4 ? (uint32_t)atoi(argv[4]) : 0;
    ev = tc_open("rawclone");
    if (strcmp(argv[1], "thread") == 0 || strcmp(argv[1], "thread-inner") == 0)
        return mode_thread(n, strcmp(argv[1], "thread-inner") == 0);
    if (strcmp(argv[1], "stacks") == 0)
        return mode_stacks(n);
    int plain = strcmp(argv[1], "plain") == 0;
    trace_id_t inh = 0, cfc = 0;
    if (!plain) {
        inh = stream(POSIX_TRACE_INHERITED);
        cfc = stream(POSIX_TRACE_CLOSE_FOR_CHILD);
    }
    record(1, n, plain);
    if (strcmp(argv[1], "vfork") == 0) {
        vf_m = m;
        pid_t pid = clone(vfork_child_main, new_stack(1 << 20), CLONE_VM | CLONE_VFORK | SIGCHLD,
                          NULL);
        child_pid = pid;
        wait_child(pid);
    } else {
        raw_fork_child(m, plain);
    }
    record(3, k, plain);
    if (!plain) {
        drain("INH", inh);
        drain("CFC", cfc);
    }
    printf("parent pid=%d child pid=%d\n", (int)getpid(), (int)child_pid);
    return 0;
}
