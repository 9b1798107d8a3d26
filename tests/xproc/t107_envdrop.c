/*
 * A program that gives its child an environment without what tracing needs,
 * through every exec variant and posix_spawn, then runs /usr/bin/env (which
 * prints the environment it got). Run under posixtrace-run: the child must be
 * traced, and see the environment it was given plus the shim's additions
 * (preload/README.md, "Children's environment").
 *
 *   t107_envdrop MODE
 * MODE: clearenv_execv   clearenv(), setenv A=1 B=2, execv
 *       clearenv_execl   same, execl
 *       clearenv_execlp  same, execlp("env") (no PATH: the default one)
 *       clearenv_execvp  same, execvp("env")
 *       unset_execv      unsetenv("LD_PRELOAD"), execv (the rest of the
 *                        environment is inherited: only A=1 B=2 are checked)
 *       execve           execve with { A=1, B=2 }
 *       execve_null      execve with a NULL envp (an empty environment)
 *       execle, execvpe, fexecve, execveat   with { A=1, B=2 }
 *       vfork_execve     execve { A=1, B=2 } in a vfork child
 *       spawn, spawnp    posix_spawn[p] with { A=1, B=2 }, then waits
 *       spawn_null       posix_spawn with a NULL envp
 *       own_preload      execve { A=1, LD_PRELOAD=libm.so.6, B=2 }
 *       empty_preload    execve { A=1, LD_PRELOAD=, B=2 }
 *       own_strsize      execve { A=1, POSIXTRACE_STRSIZE=7, B=2 }
 * Prints "pid=PID" (the process that runs env): first, or after env's output
 * with " status=N" (vfork_execve; spawn* print "spawned=PID status=N").
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ENV "/usr/bin/env"

static char *argv_env[] = { "env", NULL };
static char *ab[] = { "A=1", "B=2", NULL };
static char *own_preload[] = { "A=1", "LD_PRELOAD=libm.so.6", "B=2", NULL };
static char *empty_preload[] = { "A=1", "LD_PRELOAD=", "B=2", NULL };
static char *own_strsize[] = { "A=1", "POSIXTRACE_STRSIZE=7", "B=2", NULL };

static void say_pid(void)
{
    printf("pid=%d\n", (int)getpid());
    fflush(stdout);
}

static void clear_ab(void)
{
    clearenv();
    setenv("A", "1", 1);
    setenv("B", "2", 1);
}

static int spawn(int search, char **envp)
{
    pid_t pid;
    fflush(stdout);
    int rc = search ? posix_spawnp(&pid, "env", NULL, NULL, argv_env, envp)
                    : posix_spawn(&pid, ENV, NULL, NULL, argv_env, envp);
    if (rc != 0) {
        fprintf(stderr, "posix_spawn: %s\n", strerror(rc));
        return 1;
    }
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return 1;
    printf("spawned=%d status=%d\n", (int)pid, st);
    return 0;
}

static int by_vfork(void)
{
    pid_t pid = vfork();
    if (pid == 0) {
        execve(ENV, argv_env, ab);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 1;
    printf("pid=%d status=%d\n", (int)pid, st);
    return 0;
}

static void run_exec(const char *m)
{
    if (strcmp(m, "execve") == 0)
        execve(ENV, argv_env, ab);
    else if (strcmp(m, "execve_null") == 0)
        execve(ENV, argv_env, NULL);
    else if (strcmp(m, "execle") == 0)
        execle(ENV, "env", (char *)NULL, ab);
    else if (strcmp(m, "execvpe") == 0)
        execvpe("env", argv_env, ab);
    else if (strcmp(m, "fexecve") == 0)
        fexecve(open(ENV, O_RDONLY | O_CLOEXEC), argv_env, ab);
    else if (strcmp(m, "execveat") == 0)
        execveat(open("/usr/bin", O_RDONLY | O_DIRECTORY | O_CLOEXEC), "env", argv_env, ab, 0);
    else if (strcmp(m, "own_preload") == 0)
        execve(ENV, argv_env, own_preload);
    else if (strcmp(m, "empty_preload") == 0)
        execve(ENV, argv_env, empty_preload);
    else if (strcmp(m, "own_strsize") == 0)
        execve(ENV, argv_env, own_strsize);
    else if (strncmp(m, "clearenv_", 9) == 0) {
        clear_ab();
        if (strcmp(m + 9, "execv") == 0)
            execv(ENV, argv_env);
        else if (strcmp(m + 9, "execl") == 0)
            execl(ENV, "env", (char *)NULL);
        else if (strcmp(m + 9, "execlp") == 0)
            execlp("env", "env", (char *)NULL);
        else if (strcmp(m + 9, "execvp") == 0)
            execvp("env", argv_env);
    } else if (strcmp(m, "unset_execv") == 0) {
        unsetenv("LD_PRELOAD");
        setenv("A", "1", 1);
        setenv("B", "2", 1);
        execv(ENV, argv_env);
    } else {
        fprintf(stderr, "unknown mode %s\n", m);
        exit(2);
    }
    perror(m);
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: t107_envdrop MODE\n");
        return 2;
    }
    const char *m = argv[1];
    if (strcmp(m, "spawn") == 0 || strcmp(m, "spawnp") == 0)
        return spawn(m[5] == 'p', ab);
    if (strcmp(m, "spawn_null") == 0)
        return spawn(0, NULL);
    if (strcmp(m, "vfork_execve") == 0)
        return by_vfork();
    say_pid();
    run_exec(m);
    return 1;
}
