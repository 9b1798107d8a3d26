/*
 * What /proc says about a process: whether it is alive and its start time,
 * which with the pid identifies a process for good (pids are reused).
 */
#include "../internal.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The fields of /proc/<pid>/stat after the command name (from field 3, the
 * state), in buf. NULL with *err set (ESRCH: no such process). */
static const char *read_stat_at(const char *path, char *buf, size_t size, int *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *err = errno == ENOENT ? ESRCH : errno;
        return NULL;
    }
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    *err = ESRCH;
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold anything */
    *err = EIO;
    return p == NULL || p[1] != ' ' ? NULL : p + 2;
}

static const char *read_stat(pid_t pid, char *buf, size_t size, int *err)
{
    char path[40];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    return read_stat_at(path, buf, size, err);
}

/* Reads /proc/<pid>/stat: the state letter and the start time (field 22,
 * clock ticks after boot). ESRCH if there is no such process. */
int pt_proc_stat(pid_t pid, char *state, uint64_t *start)
{
    char buf[1024];
    int err;
    const char *p = read_stat(pid, buf, sizeof buf, &err);
    if (p == NULL)
        return err;
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

/* The parent of `pid` (field 4). */
int pt_proc_ppid(pid_t pid, pid_t *ppid)
{
    char buf[1024];
    int err, pp;
    const char *p = read_stat(pid, buf, sizeof buf, &err);
    if (p == NULL)
        return err;
    if (sscanf(p, "%*c %d", &pp) != 1)
        return EIO;
    *ppid = (pid_t)pp;
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

/* Is thread tid of process pid still there (not a zombie)? */
bool pt_task_alive(pid_t pid, uint32_t tid)
{
    char path[64], buf[512];
    int err;
    snprintf(path, sizeof path, "/proc/%d/task/%u/stat", (int)pid, tid);
    const char *p = read_stat_at(path, buf, sizeof buf, &err);
    return p != NULL && *p != 'Z' && *p != 'X' && *p != 'x';
}

/* The system call thread tid of pid is blocked in, from
 * /proc/<pid>/task/<tid>/syscall ("NR A1 .. A6 SP PC"; "running", or -1
 * when not in a call): its number (a: its six arguments), or -1. */
long pt_task_syscall(pid_t pid, uint32_t tid, uint64_t a[6])
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/task/%u/syscall", (int)pid, tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    long nr;
    unsigned long long v[6];
    if (sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx", &nr, &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5]) != 7 || nr < 0)
        return -1;
    for (int i = 0; i < 6; i++)
        a[i] = v[i];
    return nr;
}

/* The effective uid of `pid` (the second value of the Uid: line of
 * /proc/<pid>/status, which the kernel writes). */
int pt_proc_euid(pid_t pid, uid_t *euid)
{
    char path[40], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? ESRCH : errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return EIO;
    buf[n] = '\0';
    const char *u = strstr(buf, "\nUid:");
    unsigned r, e;
    if (u == NULL || sscanf(u + 5, "%u %u", &r, &e) != 2)
        return EIO;
    *euid = (uid_t)e;
    return 0;
}
