/*
 * t102_shim_proc - run under LD_PRELOAD=libposixtrace-preload.so: processes,
 * threads, signals, stacks and sockets, recorded into a stream of the test
 * process (POSIX_TRACE_INHERITED, so forked children record into it too),
 * then printed (tests/shim/decode.c). Usage: t102_shim_proc <scenario>
 * Lines other than events: "child=<pid>" and "status=<wait status>"; the
 * efault_* scenarios print "r <what> <result> <errno>" for each call, the
 * same with and without the shim.
 */
#include "tcommon.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

trace_id_t td_start(int inherited);
void td_dump(trace_id_t trid);
extern char **environ;

#define NI __attribute__((noinline))

NI void sc_fork(void)
{
    pid_t c = fork();
    if (c == 0)
        _exit(3);
    int st;
    TC_ASSERT(waitpid(c, &st, 0) == c);
    printf("child=%d\nstatus=%d\n", (int)c, st);
}

NI void sc_vfork(void)
{
    pid_t c = vfork();
    if (c == 0)
        _exit(5);
    int st;
    TC_ASSERT(waitpid(c, &st, 0) == c);
    printf("child=%d\nstatus=%d\n", (int)c, st);
}

NI void sc_spawn(void)
{
    pid_t c;
    char *a1[] = { "true", "x", NULL };
    TC_ASSERT(posix_spawn(&c, "/bin/true", NULL, NULL, a1, environ) == 0);
    printf("child=%d\n", (int)c);
    TC_ASSERT(waitpid(c, NULL, 0) == c);
    char *a2[] = { "false", NULL };
    TC_ASSERT(posix_spawnp(&c, "false", NULL, NULL, a2, environ) == 0);
    printf("child=%d\n", (int)c);
    int st;
    TC_ASSERT(wait(&st) == c);
    TC_ASSERT(posix_spawn(&c, "/nonexistent/x", NULL, NULL, a1, environ) != 0 ||
              waitpid(c, NULL, 0) == c);
}

NI void sc_exec(void)
{
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        execl("/nonexistent/x", "x", "a", (char *)NULL);
        execlp("true", "true", "b", (char *)NULL);
        _exit(120);
    }
    int st;
    TC_ASSERT(waitpid(c, &st, 0) == c);
    printf("child=%d\nstatus=%d\n", (int)c, st);
}

/* An explicit environment without LD_PRELOAD: the shim adds it back
 * (unless POSIXTRACE_KEEP_PRELOAD=0); env prints what the child got. */
NI void sc_env(void)
{
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        char *argv[] = { "env", NULL };
        char *envp[] = { "A=1", NULL };
        execve("/usr/bin/env", argv, envp);
        _exit(120);
    }
    int st;
    TC_ASSERT(waitpid(c, &st, 0) == c);
}

NI void sc_waits(void)
{
    pid_t c1 = fork();
    if (c1 == 0)
        _exit(4);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    TC_ASSERT(waitid(P_PID, (id_t)c1, &si, WEXITED) == 0);
    pid_t c2 = fork();
    if (c2 == 0) {
        pause();
        _exit(0);
    }
    TC_ASSERT(kill(c2, SIGTERM) == 0);
    int st;
    TC_ASSERT(wait4(c2, &st, 0, NULL) == c2);
    pid_t c3 = fork();
    if (c3 == 0)
        exit(6);
    TC_ASSERT(wait3(&st, 0, NULL) == c3);
    TC_ASSERT(waitpid(-1, NULL, WNOHANG) == -1);
    TC_ASSERT(kill(c3, 0) == -1);
    printf("child=%d\nchild=%d\nchild=%d\n", (int)c1, (int)c2, (int)c3);
}

static volatile sig_atomic_t usr1_seen;

NI void on_usr1_count(int sig)
{
    (void)sig;
    usr1_seen++;
}

/* Signals to the caller itself (each child in a group of its own): c1
 * raise(SIGUSR1), kill(own pid, SIGUSR1), killpg(0, SIGUSR1), kill(-own group,
 * SIGUSR1), killpg(own group, SIGUSR1) (handled: the calls return),
 * kill(own pid, 0), kill(own pid, 999) (EINVAL), then raise(SIGTERM) (dies
 * in the call);
 * c2 kill(0, SIGKILL) (dies in the call). Prints "child=" for each, then
 * "status=" for each. */
NI void sc_selfkill(void)
{
    fflush(stdout);
    pid_t c1 = fork();
    if (c1 == 0) {
        TC_ASSERT(setpgid(0, 0) == 0);
        TC_ASSERT(signal(SIGUSR1, on_usr1_count) != SIG_ERR);
        TC_ASSERT(raise(SIGUSR1) == 0);
        TC_ASSERT(kill(getpid(), SIGUSR1) == 0);
        TC_ASSERT(killpg(0, SIGUSR1) == 0);
        TC_ASSERT(kill(-getpid(), SIGUSR1) == 0); /* its group: it leads it */
        TC_ASSERT(killpg(getpid(), SIGUSR1) == 0);
        TC_ASSERT(kill(getpid(), 0) == 0);
        TC_ASSERT(kill(getpid(), 999) == -1 && errno == EINVAL);
        TC_ASSERT(usr1_seen == 5);
        raise(SIGTERM);
        _exit(120);
    }
    pid_t c2 = fork();
    if (c2 == 0) {
        TC_ASSERT(setpgid(0, 0) == 0);
        kill(0, SIGKILL);
        _exit(121);
    }
    int st1, st2;
    TC_ASSERT(waitpid(c1, &st1, 0) == c1);
    TC_ASSERT(waitpid(c2, &st2, 0) == c2);
    printf("child=%d\nchild=%d\nstatus=%d\nstatus=%d\n", (int)c1, (int)c2, st1, st2);
}

NI void *thr_ret(void *arg)
{
    TC_ASSERT(write(-1, arg, 1) == -1);
    return (void *)0x55;
}

NI void *thr_exit(void *arg)
{
    (void)arg;
    pthread_exit((void *)0x66);
}

NI void sc_threads(void)
{
    pthread_t a, b;
    TC_ASSERT(pthread_create(&a, NULL, thr_ret, (void *)0x1234) == 0);
    void *r;
    TC_ASSERT(pthread_join(a, &r) == 0 && r == (void *)0x55);
    TC_ASSERT(pthread_create(&b, NULL, thr_exit, NULL) == 0);
    TC_ASSERT(pthread_join(b, NULL) == 0);
    printf("thread=0x%lx\nthread=0x%lx\n", (unsigned long)a, (unsigned long)b);
}

static int sig_pipe[2];
NI void on_usr1(int sig);
NI void *thr_ret(void *arg);
NI void *thr_exit(void *arg);

NI void on_usr1(int sig)
{
    (void)sig;
    if (write(sig_pipe[1], "s", 1) != 1)
        _exit(3);
}

static void *sig_sender(void *arg)
{
    tc_sleep_ms(50);
    pthread_kill(*(pthread_t *)arg, SIGUSR1);
    return NULL;
}

/* A signal handler's call, made while the thread is inside an intercepted
 * read, is recorded; the read returns what the handler wrote. */
NI void sc_signal(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    TC_ASSERT(pipe(sig_pipe) == 0);
    pthread_t self = pthread_self(), t;
    TC_ASSERT(pthread_create(&t, NULL, sig_sender, &self) == 0);
    char c;
    TC_ASSERT(read(sig_pipe[0], &c, 1) == 1 && c == 's');
    pthread_join(t, NULL);
}

NI void st_inner(void)
{
    TC_ASSERT(close(-1) == -1);
}

NI void st_outer(void)
{
    st_inner();
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

NI void sc_stack(void)
{
    if (getenv("POSIXTRACE_STACK") == NULL) {
        int (*set)(unsigned) = (int (*)(unsigned))dlsym(RTLD_DEFAULT, "posixtrace_shim_set_stack");
        TC_ASSERT(set != NULL && set(3) == 0 && set(65) == EINVAL);
    }
    st_outer();
    __asm__ volatile("" ::: "memory");
}

static socklen_t inet_addr_of(int fd, struct sockaddr_in *a)
{
    socklen_t len = sizeof *a;
    TC_ASSERT(getsockname(fd, (struct sockaddr *)a, &len) == 0);
    return len;
}

NI void sc_net(void)
{
    int srv = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    TC_ASSERT(bind(srv, (struct sockaddr *)&a, sizeof a) == 0);
    TC_ASSERT(listen(srv, 4) == 0);
    socklen_t alen = inet_addr_of(srv, &a);
    printf("port=%d\n", ntohs(a.sin_port));
    int cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    TC_ASSERT(connect(cli, (struct sockaddr *)&a, alen) == 0);
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    int acc = accept(srv, (struct sockaddr *)&peer, &plen);
    TC_ASSERT(acc >= 0);
    struct sockaddr_in me;
    inet_addr_of(cli, &me);
    printf("cliport=%d\n", ntohs(me.sin_port));
    TC_ASSERT(send(cli, "ping", 4, 0) == 4);
    char buf[16];
    TC_ASSERT(recv(acc, buf, sizeof buf, 0) == 4);
    TC_ASSERT(shutdown(cli, SHUT_WR) == 0);
    int cli2 = socket(AF_INET, SOCK_STREAM, 0);
    TC_ASSERT(connect(cli2, (struct sockaddr *)&a, alen) == 0);
    int acc2 = accept4(srv, NULL, NULL, SOCK_NONBLOCK);
    TC_ASSERT(acc2 >= 0);
    /* datagrams over AF_UNIX with addresses */
    int u1 = socket(AF_UNIX, SOCK_DGRAM, 0), u2 = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un un = { .sun_family = AF_UNIX };
    memcpy(un.sun_path, "\0ptshim", 7); /* abstract */
    socklen_t ulen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 7);
    TC_ASSERT(bind(u2, (struct sockaddr *)&un, ulen) == 0);
    TC_ASSERT(sendto(u1, "dgram", 5, 0, (struct sockaddr *)&un, ulen) == 5);
    struct sockaddr_un from;
    socklen_t flen = sizeof from;
    TC_ASSERT(recvfrom(u2, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen) == 5);
    struct iovec iov[2] = { { "ms", 2 }, { "g!", 2 } };
    struct msghdr m = { .msg_name = &un, .msg_namelen = ulen, .msg_iov = iov, .msg_iovlen = 2 };
    TC_ASSERT(sendmsg(u1, &m, 0) == 4);
    char rb[8];
    struct iovec riov = { rb, sizeof rb };
    struct msghdr rm = { .msg_iov = &riov, .msg_iovlen = 1 };
    TC_ASSERT(recvmsg(u2, &rm, 0) == 4);
    close(u1);
    close(u2);
    close(acc2);
    close(cli2);
    close(acc);
    close(cli);
    close(srv);
}

/* ---- invalid pointers: the real calls reject them with EFAULT (or do not
 * read them at all); the shim must not read them either ---- */
static volatile uintptr_t bad_addr = 8; /* not mapped; volatile: no compiler warnings */
#define BAD ((void *)bad_addr)
#define R(what, expr)                                                          \
    do {                                                                       \
        errno = 0;                                                             \
        long r_ = (long)(expr);                                                \
        int e_ = errno;                                                        \
        printf("r %s %ld %d\n", what, r_, e_); /* errno: 0 unless set */        \
        fflush(stdout); /* before an exec that would succeed */                \
    } while (0)
/* An ASan build's own interceptors of some calls (posix_spawn, accept,
 * recvfrom) read these pointers before the call (a crash with or without
 * the shim): those calls are left out. */
#ifdef __SANITIZE_ADDRESS__
#define ASAN_READS 1
#else
#define ASAN_READS 0
#endif
/* descriptors: their numbers may differ under the shim */
#define RFD(what, expr) R(what, (expr) >= 0 ? 0L : -1L)
/* posix_spawn returns an error number */
#define RSP(what, expr) printf("r %s %d 0\n", what, (int)(expr))

/* Two pages, the second PROT_NONE: strings that end at the first's end. */
static char *page_end(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, (size_t)ps * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                   0);
    TC_ASSERT(m != MAP_FAILED && mprotect(m + ps, (size_t)ps, PROT_NONE) == 0);
    return m + ps;
}

NI void sc_efault_exec(void)
{
    char *unterminated = page_end() - 3; /* "abc" then the PROT_NONE page */
    memcpy(unterminated, "abc", 3);
    char *edge = page_end() - 15; /* "/nonexistent/x" whose NUL is the page's last byte */
    memcpy(edge, "/nonexistent/x", 15);
    char *a0[] = { "true", NULL };
    char *abad[] = { "true", BAD, NULL };
    char *aunterm[] = { "true", unterminated, NULL };
    char *aedge[] = { edge, "y", NULL };
    char *envbad[] = { "A=1", BAD, NULL };
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        int tfd = open("/bin/true", O_RDONLY | O_CLOEXEC);
        R("execve-path", execve(BAD, a0, environ));
        R("execve-argv", execve("/bin/true", BAD, environ));
        R("execv-string", execv("/bin/true", abad));
        R("execv-unterminated", execv("/bin/true", aunterm));
        R("execve-path-unterminated", execve(unterminated, a0, environ));
        R("execve-edge", execve(edge, aedge, environ));
        R("execve-envp", execve("/bin/true", a0, BAD));
        R("execve-envstring", execve("/bin/true", a0, envbad));
        R("execl-string", execl("/bin/true", "true", BAD, (char *)NULL));
        R("execle-envp", execle("/bin/true", "true", (char *)NULL, BAD));
        R("execvp-argv", execvp("true", BAD));
        R("fexecve-argv", fexecve(tfd, BAD, environ));
        fflush(stdout);
        _exit(0);
    }
    int st;
    TC_ASSERT(waitpid(c, &st, 0) == c);
    printf("child=%d\nstatus=%d\n", (int)c, st);
}

NI void sc_efault_spawn(void)
{
    if (ASAN_READS)
        return;
    pid_t c = 0;
    char *a0[] = { "true", NULL };
    char *abad[] = { "true", BAD, NULL };
    char *envbad[] = { "A=1", BAD, NULL };
    RSP("spawn-path", posix_spawn(&c, BAD, NULL, NULL, a0, environ));
    RSP("spawn-string", posix_spawn(&c, "/bin/true", NULL, NULL, abad, environ));
    RSP("spawnp-string", posix_spawnp(&c, "true", NULL, NULL, abad, environ));
    RSP("spawn-envp", posix_spawn(&c, "/bin/true", NULL, NULL, a0, BAD));
    RSP("spawn-envstring", posix_spawn(&c, "/bin/true", NULL, NULL, a0, envbad));
}

NI void sc_efault_wait(void)
{
    pid_t c = fork();
    if (c == 0)
        _exit(7);
    R("waitpid", waitpid(c, BAD, 0)); /* the child is reaped, then EFAULT */
    R("waitpid-again", waitpid(c, NULL, 0));
    c = fork();
    if (c == 0)
        _exit(8);
    R("wait4", wait4(c, BAD, 0, NULL));
    c = fork();
    if (c == 0)
        _exit(9);
    R("waitid", waitid(P_PID, (id_t)c, BAD, WEXITED));
}

/* Address lengths and a msghdr in static memory: not on the stack page of
 * the shim's frame, so read after a probe. */
static socklen_t s_len;
static struct sockaddr_in s_peer;
static struct sockaddr_un s_from;
static struct msghdr s_msg;

NI void sc_efault_net(void)
{
    int srv = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    TC_ASSERT(bind(srv, (struct sockaddr *)&a, sizeof a) == 0);
    TC_ASSERT(listen(srv, 8) == 0);
    socklen_t alen = inet_addr_of(srv, &a);
    struct sockaddr_in peer;
    int cli[4];
    for (int i = 0; i < 4; i++) {
        cli[i] = socket(AF_INET, SOCK_STREAM, 0);
        TC_ASSERT(connect(cli[i], (struct sockaddr *)&a, alen) == 0);
    }
    if (!ASAN_READS) {
        R("accept-len", accept(srv, (struct sockaddr *)&peer, BAD)); /* the connection is lost */
        R("accept4-len", accept4(srv, (struct sockaddr *)&peer, BAD, SOCK_CLOEXEC));
    } else { /* the same connections, accepted */
        close(accept(srv, NULL, NULL));
        close(accept(srv, NULL, NULL));
    }
    /* no address: the length is not used (ASan's interceptor reads it) */
    int acc, acc2;
    RFD("accept-noaddr", acc = accept(srv, NULL, ASAN_READS ? NULL : BAD));
    s_len = sizeof s_peer;
    RFD("accept-static", acc2 = accept(srv, (struct sockaddr *)&s_peer, &s_len));
    struct sockaddr_in me;
    inet_addr_of(cli[3], &me);
    printf("cliport=%d\n", ntohs(me.sin_port));
    TC_ASSERT(send(cli[2], "ping", 4, 0) == 4);
    tc_sleep_ms(20);
    R("recv-trunc-stream", recv(acc, BAD, 4, MSG_TRUNC)); /* discarded, not copied */

    int u1 = socket(AF_UNIX, SOCK_DGRAM, 0), u2 = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un un = { .sun_family = AF_UNIX }, un1 = { .sun_family = AF_UNIX };
    memcpy(un.sun_path, "\0ptshim", 7); /* abstract */
    memcpy(un1.sun_path, "\0ptshim1", 8);
    socklen_t ulen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 7);
    TC_ASSERT(bind(u2, (struct sockaddr *)&un, ulen) == 0);
    TC_ASSERT(bind(u1, (struct sockaddr *)&un1, ulen + 1) == 0);
    struct sockaddr_un from;
    char buf[16], two[2];
    if (!ASAN_READS) {
        TC_ASSERT(sendto(u1, "dgram", 5, 0, (struct sockaddr *)&un, ulen) == 5);
        R("recvfrom-len", recvfrom(u2, buf, sizeof buf, 0, (struct sockaddr *)&from, BAD));
    }
    TC_ASSERT(sendto(u1, "dgram", 5, 0, (struct sockaddr *)&un, ulen) == 5);
    R("recvfrom-noaddr", recvfrom(u2, buf, sizeof buf, 0, NULL, BAD));
    TC_ASSERT(sendto(u1, "dgram", 5, 0, (struct sockaddr *)&un, ulen) == 5);
    s_len = sizeof s_from;
    R("recvfrom-static", recvfrom(u2, buf, sizeof buf, 0, (struct sockaddr *)&s_from, &s_len));
    TC_ASSERT(sendto(u1, "dgram", 5, 0, (struct sockaddr *)&un, ulen) == 5);
    R("recv-trunc-dgram", recv(u2, two, sizeof two, MSG_TRUNC)); /* 5: more than the buffer */
    R("sendmsg", sendmsg(u1, BAD, 0));
    R("recvmsg", recvmsg(u2, BAD, 0));
    TC_ASSERT(sendto(u1, "dgram", 5, 0, (struct sockaddr *)&un, ulen) == 5);
    struct iovec iov = { buf, sizeof buf };
    s_msg.msg_name = &s_from;
    s_msg.msg_namelen = sizeof s_from;
    s_msg.msg_iov = &iov;
    s_msg.msg_iovlen = 1;
    R("recvmsg-static", recvmsg(u2, &s_msg, 0));
    R("sendto-addr", sendto(u1, "x", 1, 0, BAD, ulen));
    R("bind-badfd", bind(-1, BAD, sizeof a));                  /* EBADF: not read */
    R("connect-len", connect(cli[0], BAD, 200));                /* EINVAL: not read */
    R("connect-badfd", connect(-1, (struct sockaddr *)&a, alen)); /* readable: recorded */
    close(u1);
    close(u2);
    close(acc2);
    close(acc);
    for (int i = 0; i < 4; i++)
        close(cli[i]);
    close(srv);
}

int main(int argc, char **argv)
{
    tc_init();
    if (argc != 2)
        return 2;
    tc_watchdog(60);
    const char *s = argv[1];
    static const struct {
        const char *name;
        void (*fn)(void);
    } sc[] = {
        { "fork", sc_fork },       { "vfork", sc_vfork },   { "spawn", sc_spawn },
        { "exec", sc_exec },       { "env", sc_env },       { "waits", sc_waits },
        { "threads", sc_threads }, { "signal", sc_signal }, { "stack", sc_stack },
        { "net", sc_net },         { "efault_exec", sc_efault_exec },
        { "efault_spawn", sc_efault_spawn }, { "efault_wait", sc_efault_wait },
        { "efault_net", sc_efault_net }, { "selfkill", sc_selfkill },
    };
    if (strcmp(s, "mainret") == 0) {
        trace_id_t trid = td_start(1);
        pid_t c = fork();
        if (c == 0)
            return 9; /* the child returns from main */
        int st;
        TC_ASSERT(waitpid(c, &st, 0) == c);
        printf("child=%d\nstatus=%d\n", (int)c, st);
        td_dump(trid);
        return 0;
    }
    for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
        if (strcmp(s, sc[i].name) == 0) {
            trace_id_t trid = td_start(1);
            sc[i].fn();
            td_dump(trid);
            return 0;
        }
    }
    return 2;
}
