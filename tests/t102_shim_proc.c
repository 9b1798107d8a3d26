/*
 * t102_shim_proc - run under LD_PRELOAD=libposixtrace-preload.so: processes,
 * threads, signals, stacks and sockets, recorded into a stream of the test
 * process (POSIX_TRACE_INHERITED, so forked children record into it too),
 * then printed (tests/t100_decode.c). Usage: t102_shim_proc <scenario>
 * Lines other than events: "child=<pid>" and "status=<wait status>".
 */
#include "tcommon.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <spawn.h>
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
        { "net", sc_net },
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
