/*
 * vfork and posix_spawn children, for tests/shim/test_vfork.py (run under
 * posixtrace-run with the shim preloaded; no libposixtrace of its own).
 *   t105_vfork vfork    vfork; the child dup2s stdout to 7, closes 7 and
 *                       execs /bin/true; the parent waits. Prints child=PID.
 *   t105_vfork vfail    vfork made to fail with EAGAIN by a seccomp filter
 *                       (even as root); prints ret=R errno=E.
 *   t105_vfork spawn    posix_spawn of /bin/true with file actions (dup2 of
 *                       stdout to 7, close of 7). Prints child=PID.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int reap(pid_t c)
{
    int st;
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "child %d: bad status\n", (int)c);
        return 1;
    }
    return 0;
}

static int do_vfork(void)
{
    pid_t c = vfork();
    if (c < 0)
        return 1;
    if (c == 0) {
        if (dup2(1, 7) != 7 || close(7) != 0)
            _exit(2);
        execl("/bin/true", "true", (char *)NULL);
        _exit(3);
    }
    printf("child=%d\n", (int)c);
    fflush(stdout);
    return reap(c);
}

/* The vfork system call fails with EAGAIN from now on. */
static int refuse_vfork(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vfork, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAGAIN),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int do_vfail(void)
{
    if (refuse_vfork() != 0)
        return 1;
    pid_t c = vfork();
    if (c == 0)
        _exit(0);
    printf("ret=%d errno=%d\n", (int)c, c < 0 ? errno : 0);
    fflush(stdout);
    return c > 0 ? reap(c) : 0;
}

static int do_spawn(void)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, 1, 7);
    posix_spawn_file_actions_addclose(&fa, 7);
    char *argv[] = { "true", NULL };
    pid_t c;
    int rc = posix_spawn(&c, "/bin/true", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return 1;
    printf("child=%d\n", (int)c);
    fflush(stdout);
    return reap(c);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "vfork") == 0)
        return do_vfork();
    if (argc == 2 && strcmp(argv[1], "vfail") == 0)
        return do_vfail();
    if (argc == 2 && strcmp(argv[1], "spawn") == 0)
        return do_spawn();
    fprintf(stderr, "usage: t105_vfork vfork|vfail|spawn\n");
    return 64;
}
