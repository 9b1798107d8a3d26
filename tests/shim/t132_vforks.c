/*
 * t132_vforks: children that share their parent's memory until they exec
 * (vfork, clone with CLONE_VM | CLONE_VFORK, glibc's posix_spawn), for the
 * shim's system-call mode (tests/shim/test_sud_vfork.py). Each mode prints
 * what it saw on stdout; its output and exit status must be the same traced
 * or not.
 *
 *   spawnfa FILE   posix_spawn of /bin/cat with file actions: open FILE on
 *                  3, dup2 3 onto 0, close 3 (cat prints FILE); then
 *                  "spawnfa exit <status>", or "spawnfa <error>" if the
 *                  spawn failed (FILE missing: the child's open fails)
 *   vforkexec      vfork(); the child execve("/bin/echo", "vforked");
 *                  "vforkexec <pid> exit <status>"
 *   vforkfail      vfork(); the child's execve of a path that does not
 *                  exist fails (ENOENT), it _exit(7)s;
 *                  "vforkfail <pid> exit <status>"
 *   vforkstack N   clone(CLONE_VM | CLONE_VFORK) on a stack of N bytes with
 *                  a guard page below: the child makes getppid 3 times and
 *                  exits 5 (SIGSEGV if it overflows the stack);
 *                  "vforkstack exit <status> sig <signal>"
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int status(pid_t pid)
{
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int spawnfa(const char *file)
{
    posix_spawn_file_actions_t fa;
    char *argv[] = { "cat", NULL };
    pid_t pid;
    if (posix_spawn_file_actions_init(&fa) != 0 ||
        posix_spawn_file_actions_addopen(&fa, 3, file, O_RDONLY, 0) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, 3, 0) != 0 ||
        posix_spawn_file_actions_addclose(&fa, 3) != 0)
        return 1;
    int rc = posix_spawn(&pid, "/bin/cat", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) /* the child's open failed: it has exited (127) already */
        printf("spawnfa %s\n", strerror(rc));
    else
        printf("spawnfa exit %d\n", status(pid));
    return 0;
}

static int vforkexec(const char *path, const char *what, int code)
{
    char *argv[] = { "echo", "vforked", NULL };
    pid_t pid = vfork();
    if (pid == 0) {
        execve(path, argv, environ);
        _exit(code);
    }
    printf("%s %d exit %d\n", what, (int)pid, status(pid));
    return 0;
}

static int child(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++)
        syscall(SYS_getppid);
    syscall(SYS_exit_group, 5);
    return 0;
}

static int vforkstack(size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    n = (n + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
    char *m = mmap(NULL, n + (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                   0);
    if (m == MAP_FAILED || mprotect(m, (size_t)pg, PROT_NONE) != 0)
        return 1;
    pid_t pid = clone(child, m + pg + n, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 1;
    printf("vforkstack exit %d sig %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
           WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *m = argc > 1 ? argv[1] : "";
    if (strcmp(m, "spawnfa") == 0 && argc > 2)
        return spawnfa(argv[2]);
    if (strcmp(m, "vforkexec") == 0)
        return vforkexec("/bin/echo", "vforkexec", 127);
    if (strcmp(m, "vforkfail") == 0)
        return vforkexec("/nonexistent/echo", "vforkfail", 7);
    if (strcmp(m, "vforkstack") == 0 && argc > 2)
        return vforkstack((size_t)atol(argv[2]));
    fprintf(stderr, "usage: t132_vforks MODE\n");
    return 2;
}
