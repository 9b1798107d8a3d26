/*
 * t201_decode_calls: makes, under the shim, the calls whose decoding
 * tests/tools/test_decode_xlat.py checks (issue 14), in this order, then exits 0:
 *   open("/dev/null", O_RDONLY|O_CLOEXEC)          -> fd A
 *   pipe(p)                                        pipe2(q, O_CLOEXEC)
 *   pipe2(r, 0)
 *   dup2(A, 10)    dup3(A, 11, O_CLOEXEC)          dup3(A, 12, O_CLOEXEC|4): EINVAL
 *   dup(A)
 *   socketpair-free accept4: a listening AF_UNIX socket (abstract name), a
 *   client connect()ed to it, accept4(l, NULL, NULL, SOCK_CLOEXEC)
 *   waitpid(-1, &st, WNOHANG): ECHILD (no child)
 *   fork: the child _exits 3; waitid(P_PID, child, WEXITED|WNOWAIT) (it is
 *   a zombie now), then waitpid(child, &st, WNOHANG) reaps it: exit(3)
 *   write(99, "x", 1): EBADF
 * Any unexpected result: a message on stderr, exit 1.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXPECT(cond) do { \
        if (!(cond)) { \
            fprintf(stderr, "t201: %s:%d: %s (errno %d)\n", __FILE__, __LINE__, #cond, errno); \
            exit(1); \
        } \
    } while (0)

static void fds_calls(void)
{
    int a = open("/dev/null", O_RDONLY | O_CLOEXEC), p[2], q[2], r[2];
    EXPECT(a >= 0 && a != 10 && a != 11 && a != 12);
    EXPECT(pipe(p) == 0);
    EXPECT(pipe2(q, O_CLOEXEC) == 0);
    EXPECT(pipe2(r, 0) == 0);
    EXPECT(dup2(a, 10) == 10);
    EXPECT(dup3(a, 11, O_CLOEXEC) == 11);
    EXPECT(dup3(a, 12, O_CLOEXEC | 4) == -1 && errno == EINVAL);
    EXPECT(dup(a) >= 0);
}

static void accept_call(void)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int n = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "t201-%ld", (long)getpid());
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    int l = socket(AF_UNIX, SOCK_STREAM, 0), c = socket(AF_UNIX, SOCK_STREAM, 0);
    EXPECT(l >= 0 && c >= 0);
    EXPECT(bind(l, (struct sockaddr *)&sa, len) == 0 && listen(l, 1) == 0);
    EXPECT(connect(c, (struct sockaddr *)&sa, len) == 0);
    EXPECT(accept4(l, NULL, NULL, SOCK_CLOEXEC) >= 0);
}

static void wait_calls(void)
{
    int st = -1;
    siginfo_t si;
    EXPECT(waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD);
    pid_t child = fork();
    EXPECT(child >= 0);
    if (child == 0)
        _exit(3);
    memset(&si, 0, sizeof si);
    EXPECT(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT) == 0 && si.si_pid == child);
    EXPECT(waitpid(child, &st, WNOHANG) == child && WIFEXITED(st) && WEXITSTATUS(st) == 3);
}

int main(void)
{
    fds_calls();
    accept_call();
    wait_calls();
    EXPECT(write(99, "x", 1) == -1 && errno == EBADF);
    return 0;
}
