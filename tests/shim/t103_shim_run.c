/*
 * t103_shim_run - a controller that traces an unmodified program from its
 * first instruction (the launcher pattern of cross-process tracing): fork;
 * the child waits on a pipe; the parent creates a POSIX_TRACE_INHERITED
 * stream for the child and starts it, then lets the child execvp the program
 * with LD_PRELOAD=$T103_SHIM added to its environment. When the program
 * has exited, prints "status=<wait status>", its events (tests/shim/decode.c)
 * and "end". Its stdout and stderr go to the given files.
 * Usage: t103_shim_run <stdout-file> <stderr-file> <program> [args...]
 * T103_STREAM_MB: stream size in MiB (default 64).
 */
#include "tcommon.h"

#include <fcntl.h>
#include <sys/wait.h>

trace_id_t td_start_pid(pid_t pid, int inherited, size_t size);
void td_dump(trace_id_t trid);

static void child(int rfd, char **argv)
{
    char c;
    if (read(rfd, &c, 1) != 1)
        _exit(126);
    int o = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
        _exit(126);
    close(o);
    close(e);
    const char *shim = getenv("T103_SHIM");
    if (shim == NULL || setenv("LD_PRELOAD", shim, 1) != 0)
        _exit(126);
    execvp(argv[3], argv + 3);
    _exit(127);
}

int main(int argc, char **argv)
{
    tc_init();
    if (argc < 4)
        return 2;
    tc_alarm_watchdog(240);
    const char *mb = getenv("T103_STREAM_MB");
    size_t size = (size_t)(mb != NULL ? atoi(mb) : 64) << 20;
    int p[2];
    CHECK(pipe(p) != 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        child(p[0], argv);
    }
    close(p[0]);
    trace_id_t trid = td_start_pid(pid, 1, size);
    TC_ASSERT(write(p[1], "g", 1) == 1);
    close(p[1]);
    int st;
    TC_ASSERT(waitpid(pid, &st, 0) == pid);
    printf("status=%d\n", st);
    td_dump(trid);
    return 0;
}
