/*
 * t130_syscalls: programs for the shim's system-call mode (posixtrace-run
 * --syscalls; tests/shim/test_syscalls.py). Each mode prints what it saw on
 * stdout; its output and exit status must be the same traced or not.
 *
 *   rawfork     a child made by syscall(SYS_clone, SIGCHLD): it writes
 *               "child <getppid()==parent>" and exits 3 (raw exit_group)
 *   rawvfork    a child made by a raw vfork (inline syscall): it exits 4
 *   rawthread   a thread made by a raw clone (CLONE_VM|CLONE_THREAD..., a
 *               stack of its own, no CLONE_SETTLS) writes "thread" (raw)
 *   threads N   N pthreads, each making 100 getppid and one write
 *   signals     a SIGALRM handler that makes system calls interrupts a
 *               blocking read (no SA_RESTART: EINTR) 5 times; then a read
 *               restarted under SA_RESTART completes
 *   altstack    a SIGUSR1 handler on an alternate stack makes system calls
 *   sigsys      the program's own SIGSYS handler: kill(getpid(), SIGSYS)
 *               reaches it; sigaction(SIGSYS) gives it back as installed
 *   seccomp     a seccomp filter traps getppid (SECCOMP_RET_TRAP); the
 *               program's SIGSYS handler makes it return 4242
 *   blockmask   blocks SIGSYS (sigprocmask, pthread_sigmask SETMASK of a
 *               full set), then makes system calls
 *   rawexec     a fork child execs this program ("getppid 3") with a raw
 *               execve system call; the parent waits
 *   vforkexec   vfork() + execv of this program ("getppid 3"), then the
 *               parent makes 2 getppid of its own
 *   ownsud      the program's own prctl(PR_SET_SYSCALL_USER_DISPATCH, OFF):
 *               prints its result and errno
 *   getppid N   N getppid system calls
 *   selfon      posixtrace_shim_set_syscalls(1) (found with dlsym), 3
 *               getppid, posixtrace_shim_set_syscalls(0), 2 getppid
 *   futex N     2 pthreads, each making N FUTEX_WAKE_PRIVATE on its own word
 *               (result 0: nobody waits)
 *   poll        a pipe holding one byte: poll of its two ends (POLLIN and
 *               POLLOUT ready), then, the byte read and the write end
 *               closed, poll of the read end (POLLHUP); epoll_ctl ADD of
 *               the read end of a second pipe (EPOLLIN, data 7) and
 *               epoll_wait once a byte is there; select of that end with
 *               a zero timeout
 *   spawn       posix_spawn of this program ("getppid 3"), then system() of
 *               it ("getppid 2": libc's own spawn, clone3 with CLONE_VM |
 *               CLONE_VFORK); prints both exit statuses
 *   noprctl PROG ARGS...  execs PROG under a seccomp filter that fails
 *               prctl(PR_SET_SYSCALL_USER_DISPATCH, ...) with EINVAL, as a
 *               kernel without Syscall User Dispatch does
 */
#include <dlfcn.h>
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <poll.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

static void out(const char *s)
{
    (void)!write(1, s, strlen(s));
}

static long raw0(long nr)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr) : "rcx", "r11", "memory");
    return r;
}

static int rawfork(void)
{
    pid_t me = getpid();
    long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) {
        char b[32];
        snprintf(b, sizeof b, "child %d\n", (int)(syscall(SYS_getppid) == me));
        out(b);
        syscall(SYS_exit_group, 3);
    }
    int st;
    if (waitpid((pid_t)pid, &st, 0) != pid)
        return 1;
    printf("parent child-exit %d\n", WEXITSTATUS(st));
    return 0;
}

static int rawvfork(void)
{
    long pid = raw0(SYS_vfork);
    if (pid == 0)
        syscall(SYS_exit_group, 4);
    int st;
    if (pid < 0 || waitpid((pid_t)pid, &st, 0) != pid)
        return 1;
    printf("vfork child-exit %d\n", WEXITSTATUS(st));
    return 0;
}

static volatile int thread_done;
static char tstack[65536] __attribute__((aligned(16)));

static int rawthread(void)
{
    long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
    long r;
    char *top = tstack + sizeof tstack;
    static const char msg[] = "thread\n";
    register long r10 __asm__("r10") = 0;
    register long r8 __asm__("r8") = 0;
    register const char *r9 __asm__("r9") = msg;
    /* the child never returns from this block: it writes and exits */
    __asm__ volatile("syscall\n\t"
                     "testq %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "movq $1, %%rax\n\t"   /* write(1, msg, 7) */
                     "movq $1, %%rdi\n\t"
                     "movq %%r9, %%rsi\n\t"
                     "movq $7, %%rdx\n\t"
                     "syscall\n\t"
                     "movl $1, %[done]\n\t"
                     "movq $60, %%rax\n\t"  /* exit(0): this thread only */
                     "xorq %%rdi, %%rdi\n\t"
                     "syscall\n\t"
                     "1:"
                     : "=a"(r), [done] "=m"(thread_done)
                     : "a"((long)SYS_clone), "D"(flags), "S"(top), "d"(0L), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    if (r < 0)
        return 1;
    for (int i = 0; i < 5000 && !thread_done; i++)
        usleep(1000);
    printf("rawthread done %d\n", thread_done);
    return 0;
}

static void *worker(void *p)
{
    long n = 0;
    for (int i = 0; i < 100; i++)
        n += syscall(SYS_getppid) > 0;
    char b[48];
    snprintf(b, sizeof b, "worker %ld %ld\n", (long)(intptr_t)p, n);
    out(b);
    return NULL;
}

static int threads(int n)
{
    pthread_t t[64];
    if (n > 64)
        n = 64;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) != 0)
            return 1;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("threads %d joined\n", n);
    return 0;
}

static volatile sig_atomic_t hits;

static void on_alarm(int s)
{
    (void)s;
    hits++;
    (void)syscall(SYS_getppid);
    (void)!write(2, "", 0);
}

static int signals(void)
{
    int p[2];
    if (pipe(p) != 0)
        return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART */
    int eintr = 0;
    char c;
    for (int i = 0; i < 5; i++) {
        struct itimerval it = { { 0, 0 }, { 0, 20000 } };
        setitimer(ITIMER_REAL, &it, NULL);
        if (read(p[0], &c, 1) < 0 && errno == EINTR)
            eintr++;
    }
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    pid_t w = fork();
    if (w == 0) {
        usleep(100000);
        (void)!write(p[1], "x", 1);
        _exit(0);
    }
    struct itimerval it = { { 0, 0 }, { 0, 20000 } };
    setitimer(ITIMER_REAL, &it, NULL);
    ssize_t r = read(p[0], &c, 1);
    waitpid(w, NULL, 0);
    printf("eintr %d restarted %zd %c hits %d\n", eintr, r, r == 1 ? c : '-', (int)hits);
    return 0;
}

static volatile sig_atomic_t alt_ok;

static void on_usr1(int s)
{
    (void)s;
    int here;
    stack_t cur;
    sigaltstack(NULL, &cur);
    alt_ok = (char *)&here >= (char *)cur.ss_sp && (char *)&here < (char *)cur.ss_sp + cur.ss_size &&
             syscall(SYS_getppid) > 0;
}

static int altstack(void)
{
    static char alt[65536];
    stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0 };
    if (sigaltstack(&ss, NULL) != 0)
        return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    printf("altstack %d\n", (int)alt_ok);
    return 0;
}

static volatile sig_atomic_t own_sigsys, own_code;

static void on_sigsys(int s, siginfo_t *si, void *ucv)
{
    (void)s;
    own_sigsys++;
    own_code = si->si_code;
    if (si->si_code == 1 /* SYS_SECCOMP */) {
        ucontext_t *uc = ucv;
        uc->uc_mcontext.gregs[REG_RAX] = 4242;
    }
}

static int install_sigsys(void)
{
    struct sigaction sa, back;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    if (sigaction(SIGSYS, &sa, NULL) != 0 || sigaction(SIGSYS, NULL, &back) != 0)
        return -1;
    return back.sa_sigaction == on_sigsys && (back.sa_flags & SA_SIGINFO);
}

static int sigsys(void)
{
    int same = install_sigsys();
    kill(getpid(), SIGSYS);
    printf("sigsys same=%d calls=%d code=%d\n", same, (int)own_sigsys, (int)own_code);
    return 0;
}

static int seccomp_trap(void)
{
    int same = install_sigsys();
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return 1;
    long r = syscall(SYS_getppid);
    printf("seccomp same=%d getppid=%ld calls=%d code=%d\n", same, r, (int)own_sigsys,
           (int)own_code);
    return 0;
}

static int blockmask(void)
{
    sigset_t s, all, back;
    sigemptyset(&s);
    sigaddset(&s, SIGSYS);
    sigprocmask(SIG_BLOCK, &s, NULL);
    long a = syscall(SYS_getppid);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    long b = syscall(SYS_getppid);
    pthread_sigmask(SIG_SETMASK, NULL, &back);
    sigemptyset(&s);
    pthread_sigmask(SIG_SETMASK, &s, NULL);
    printf("blockmask %d %d usr1-blocked=%d\n", a > 0, b > 0, sigismember(&back, SIGUSR1));
    return 0;
}

extern char **environ;

static int waitchild(pid_t pid, const char *what)
{
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 1;
    printf("%s child-exit %d\n", what, WEXITSTATUS(st));
    return 0;
}

static int rawexec(const char *self)
{
    pid_t pid = fork();
    if (pid == 0) {
        char *const av[] = { (char *)self, "getppid", "3", NULL };
        syscall(SYS_execve, self, av, environ);
        _exit(127);
    }
    return waitchild(pid, "rawexec");
}

static int vforkexec(const char *self)
{
    pid_t pid = vfork();
    if (pid == 0) {
        execl(self, self, "getppid", "3", (char *)NULL);
        _exit(127);
    }
    int r = waitchild(pid, "vforkexec");
    long a = syscall(SYS_getppid), b = syscall(SYS_getppid);
    printf("parent getppid %d\n", a > 0 && a == b);
    return r;
}

static void *waker(void *p)
{
    unsigned *w = p;
    for (int i = 0; i < (int)w[1]; i++)
        syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    return NULL;
}

static int futexes(int n)
{
    static unsigned w[2][2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        w[i][1] = (unsigned)n;
        if (pthread_create(&t[i], NULL, waker, w[i]) != 0)
            return 1;
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("futex 2x%d %p %p\n", n, (void *)w[0], (void *)w[1]);
    return 0;
}

static int polls(void)
{
    int p[2], q[2];
    char c;
    if (pipe(p) != 0 || pipe(q) != 0 || write(p[1], "x", 1) != 1)
        return 1;
    struct pollfd two[2] = { { p[0], POLLIN, 0 }, { p[1], POLLOUT, 0 } };
    int r1 = poll(two, 2, 1000);
    if (read(p[0], &c, 1) != 1)
        return 1;
    close(p[1]);
    struct pollfd one = { p[0], POLLIN, 0 };
    int r2 = poll(&one, 1, 1000);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 }, got[4];
    if (epoll_ctl(ep, EPOLL_CTL_ADD, q[0], &ev) != 0 || write(q[1], "y", 1) != 1)
        return 1;
    int r3 = epoll_wait(ep, got, 4, 1000);
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(q[0], &rd);
    struct timeval tv = { 0, 0 };
    int r4 = select(q[0] + 1, &rd, NULL, NULL, &tv);
    printf("poll %d %d %d %d fds %d %d %d %d %d\n", r1, r2, r3, r4, p[0], p[1], q[0], q[1], ep);
    return 0;
}

static int spawns(const char *self)
{
    char *args[] = { (char *)self, "getppid", "3", NULL };
    extern char **environ;
    pid_t pid;
    int st1 = -1, st2;
    if (posix_spawn(&pid, self, NULL, NULL, args, environ) != 0 || waitpid(pid, &st1, 0) != pid)
        return 1;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "exec '%s' getppid 2", self);
    fflush(stdout);
    st2 = system(cmd);
    printf("spawn exit %d %d\n", WEXITSTATUS(st1), WEXITSTATUS(st2));
    return 0;
}

static int getppids(int n)
{
    for (int i = 0; i < n; i++)
        (void)syscall(SYS_getppid);
    printf("getppid %d\n", n);
    return 0;
}

static int selfon(void)
{
    int (*set)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "posixtrace_shim_set_syscalls");
    if (set == NULL) {
        printf("selfon no shim\n");
        return 0;
    }
    int on = set(1);
    for (int i = 0; i < 3; i++)
        (void)syscall(SYS_getppid);
    int off = set(0);
    for (int i = 0; i < 2; i++)
        (void)syscall(SYS_getppid);
    printf("selfon on=%d off=%d\n", on, off);
    return 0;
}

static int noprctl(char **argv)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 59 /* PR_SET_SYSCALL_USER_DISPATCH */, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return 1;
    execvp(argv[0], argv);
    return 127;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *m = argc > 1 ? argv[1] : "";
    if (strcmp(m, "rawfork") == 0)
        return rawfork();
    if (strcmp(m, "rawvfork") == 0)
        return rawvfork();
    if (strcmp(m, "rawthread") == 0)
        return rawthread();
    if (strcmp(m, "threads") == 0)
        return threads(argc > 2 ? atoi(argv[2]) : 4);
    if (strcmp(m, "signals") == 0)
        return signals();
    if (strcmp(m, "altstack") == 0)
        return altstack();
    if (strcmp(m, "sigsys") == 0)
        return sigsys();
    if (strcmp(m, "seccomp") == 0)
        return seccomp_trap();
    if (strcmp(m, "blockmask") == 0)
        return blockmask();
    if (strcmp(m, "rawexec") == 0)
        return rawexec(argv[0]);
    if (strcmp(m, "vforkexec") == 0)
        return vforkexec(argv[0]);
    if (strcmp(m, "ownsud") == 0) {
        int r = prctl(59, 0, 0, 0, 0);
        printf("ownsud %d %s\n", r, r == 0 ? "0" : strerror(errno));
        return 0;
    }
    if (strcmp(m, "selfon") == 0)
        return selfon();
    if (strcmp(m, "noprctl") == 0 && argc > 2)
        return noprctl(argv + 2);
    if (strcmp(m, "futex") == 0)
        return futexes(argc > 2 ? atoi(argv[2]) : 10);
    if (strcmp(m, "spawn") == 0)
        return spawns(argv[0]);
    if (strcmp(m, "poll") == 0)
        return polls();
    if (strcmp(m, "getppid") == 0)
        return getppids(argc > 2 ? atoi(argv[2]) : 1);
    fprintf(stderr, "usage: t130_syscalls MODE\n");
    return 2;
}
