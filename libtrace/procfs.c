/*
 * What /proc says about a process: whether it is alive and its start time,
 * which with the pid identifies a process for good (pids are reused).
 */
#include "internal.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Reads /proc/<pid>/stat: the state letter and the start time (field 22,
 * clock ticks after boot). ESRCH if there is no such process. */
int pt_proc_stat(pid_t pid, char *state, uint64_t *start)
{
    char path[40], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? ESRCH : errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return ESRCH;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold anything */
    if (p == NULL || p[1] != ' ')
        return EIO;
    p += 2;
    char st = *p;
    /* fields 3 (state) .. 22 (starttime): skip 19 separators */
    for (int f = 3; f < 22 && p != NULL; f++) {
        p = strchr(p, ' ');
        if (p != NULL)
            p++;
    }
    if (p == NULL)
        return EIO;
    if (state != NULL)
        *state = st;
    if (start != NULL)
        *start = strtoull(p, NULL, 10);
    return 0;
}

/* Is the process (pid, start) still running (not a zombie, not reused)? */
bool pt_proc_alive(pid_t pid, uint64_t start)
{
    char st;
    uint64_t s;
    if (pid <= 0 || pt_proc_stat(pid, &st, &s) != 0)
        return false;
    return s == start && st != 'Z' && st != 'X' && st != 'x';
}
