/*
 * A child that closes or replaces descriptors before exec, as real programs
 * do (Python's close_fds, closefrom, close_range, daemons), then execs
 * argv[2..]. Run under posixtrace-run: the exec'd program must be traced.
 *
 *   t106_closefds MODE PROG [ARGS...]
 * MODE: close_range   close_range(3, ~0U, 0) through libc
 *       closefrom     closefrom(3)
 *       close_loop    close() of every descriptor from 3 to 1100
 *       dup2_all      dup2(0, fd) over every descriptor from 3 to 1100
 *       raw           the close_range system call itself (no libc wrapper)
 *       raw_exec      raw, then the execve system call itself: no wrapper
 *                     gives the inbox back a descriptor before the exec, so
 *                     the new image finds the streams among its parent's
 *                     descriptors (libtrace/xproc/discover.c)
 *       raw_dup2      dup2 over every descriptor 3..1100 as raw system calls
 *       daemon        fork twice, the middle process exits, the grandchild
 *                     (reparented) calls closefrom(3), then execs
 *       raw_daemon    the same with the close_range system call itself: no
 *                     ancestor holds the streams any more
 *       raw_daemon_dup2  the same with raw dup2 over every descriptor
 *       raw_daemon_spawn raw_daemon, then posix_spawn of PROG (the spawned
 *                     process is the one reported as child=)
 *       raw_daemon_system raw_daemon, then system("exec PROG ARGS") (the
 *                     shell's pid, which execs PROG, reported as child=)
 *
 * Prints "child=PID" (the process that execs PROG) and "inbox_kept=0|1"
 * (whether an inbox descriptor was still open in it right before the exec,
 * as seen in /proc/self/fd), then "status=N" once that process has ended.
 * The exec'd program's stdout and stderr are this program's.
 */
#include <dirent.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int inbox_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char path[300], link[256];
    int found = 0;
    while (d != NULL && (e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n > 0) {
            link[n] = '\0';
            found |= strstr(link, "posixtrace-inbox") != NULL;
        }
    }
    if (d != NULL)
        closedir(d);
    return found;
}

static void close_all(const char *mode)
{
    if (strncmp(mode, "raw_daemon", 10) == 0 || strcmp(mode, "raw_exec") == 0)
        mode = strcmp(mode, "raw_daemon_dup2") == 0 ? "raw_dup2" : "raw";
    if (strcmp(mode, "close_range") == 0 || strcmp(mode, "daemon") == 0) {
        if (strcmp(mode, "daemon") == 0)
            closefrom(3);
        else if (close_range(3, ~0U, 0) != 0)
            _exit(90);
    } else if (strcmp(mode, "closefrom") == 0) {
        closefrom(3);
    } else if (strcmp(mode, "close_loop") == 0) {
        for (int fd = 3; fd <= 1100; fd++)
            close(fd);
    } else if (strcmp(mode, "dup2_all") == 0) {
        for (int fd = 3; fd <= 1100; fd++)
            dup2(0, fd);
    } else if (strcmp(mode, "raw") == 0) {
        if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
            _exit(91);
    } else if (strcmp(mode, "raw_dup2") == 0) {
        for (int fd = 3; fd <= 1100; fd++)
            syscall(SYS_dup2, 0, fd);
    } else {
        _exit(92);
    }
}

extern char **environ;

/* raw_daemon_spawn and raw_daemon_system: start PROG the other ways, report
 * the pid of the process that runs it, wait for it. */
static void start_other(const char *mode, char **argv)
{
    pid_t c = -1;
    if (strcmp(mode, "raw_daemon_spawn") == 0) {
        if (posix_spawn(&c, argv[2], NULL, NULL, argv + 2, environ) != 0)
            _exit(97);
        dprintf(0, "child=%d\n", (int)c);
        int st;
        _exit(waitpid(c, &st, 0) == c && WIFEXITED(st) ? WEXITSTATUS(st) : 98);
    }
    char cmd[1024] = "echo child=$$ >&0; exec";
    for (char **a = argv + 2; *a != NULL; a++)
        snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " '%s'", *a);
    int st = system(cmd);
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 99);
}

/* In the process that execs: report, close, exec. `report` is a pipe. */
static void run(const char *mode, char **argv, int report)
{
    char line[64] = "";
    int n = 0;
    int other = strcmp(mode, "raw_daemon_spawn") == 0 || strcmp(mode, "raw_daemon_system") == 0;
    if (!other)
        n = snprintf(line, sizeof line, "child=%d\n", (int)getpid());
    if (write(report, line, (size_t)n) != n)
        _exit(93);
    int keep = dup2(report, 0); /* stdin: survives the closing (0 < 3) */
    close_all(mode);
    n = snprintf(line, sizeof line, "inbox_kept=%d\n", inbox_open());
    if (keep != 0 || write(0, line, (size_t)n) != n)
        _exit(94);
    if (other)
        start_other(mode, argv);
    if (strcmp(mode, "raw_exec") == 0)
        syscall(SYS_execve, argv[2], argv + 2, environ);
    else
        execv(argv[2], argv + 2);
    _exit(127);
}

int main(int argc, char **argv)
{
    int p[2];
    if (argc < 3 || pipe(p) != 0)
        return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t c = fork();
    if (c == 0) {
        close(p[0]);
        if (strstr(argv[1], "daemon") != NULL) {
            pid_t mid = getpid(), g = fork();
            if (g != 0)
                _exit(g < 0 ? 95 : 0);
            for (int i = 0; i < 10000 && getppid() == mid; i++)
                usleep(1000); /* until reparented: the middle is gone */
            if (getppid() == mid)
                _exit(96);
        }
        run(argv[1], argv, p[1]);
    }
    close(p[1]);
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) != c)
        return 3;
    /* the exec'd program holds the write end as its stdin until it ends */
    char buf[256];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) > 0)
        fwrite(buf, 1, (size_t)n, stdout);
    printf("status=%d\n", st);
    return 0;
}
