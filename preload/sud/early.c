/*
 * Threads that started before the system-call mode was turned on (another
 * library's constructor, which glibc may run before the shim's; a raw
 * clone): Syscall User Dispatch is set per thread, by the thread itself,
 * so each is sent a SIGSYS of the shim's own (rt_tgsigqueueinfo, SI_QUEUE,
 * this process's pid and a cookie), whose handler (handler.c) arms the
 * thread it interrupts. /proc/self/task lists them. The signal interrupts
 * what the thread is doing: the handler has SA_RESTART, so most blocking
 * calls go on, but those Linux never restarts after a handler (poll,
 * epoll_wait, select, nanosleep's relatives with a timeout, see signal(7))
 * return EINTR once, as for any signal. A thread that blocks SIGSYS, or
 * that shares another's thread data (a raw clone without CLONE_SETTLS), is
 * not armed: the shim waits up to 100 ms for the others and says on stderr
 * how many were not.
 */
#include "../shim.h"
#include "sud.h"

#include <asm/prctl.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 100

static int answered; /* threads that took the request (armed or refused) */
static int refused;

/* The cookie of this process's requests: the address of a shim object. */
static void *cookie(void)
{
    return (void *)&answered;
}

bool shim_sud_arm_request(const siginfo_t *si)
{
    return si->si_code == SI_QUEUE && si->si_value.sival_ptr == cookie() &&
           si->si_pid == (pid_t)shim_sud_raw(SYS_getpid, 0, 0, 0, 0, 0, 0);
}

/* Whether the thread's fs points to thread data of glibc's layout (the x86-64
 * TLS ABI: the thread pointer's first word is the thread pointer): a thread
 * of a raw clone with CLONE_SETTLS may have its own, where the shim's
 * initial-exec variables are not. Made from the region: never trapped. */
static bool glibc_tls(void)
{
    uintptr_t base = 0, self;
    if (shim_sud_raw(SYS_arch_prctl, ARCH_GET_FS, (long)&base, 0, 0, 0, 0) != 0 || base == 0)
        return false;
    __asm__ volatile("movq %%fs:0, %0" : "=r"(self));
    return self == base;
}

void shim_sud_arm_requested(void)
{
    if (!glibc_tls() || (!shim_sud_armed && !shim_sud_arm_thread()))
        __atomic_add_fetch(&refused, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&answered, 1, __ATOMIC_RELEASE);
}

static bool ask(pid_t pid, pid_t tid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGSYS;
    si.si_code = SI_QUEUE;
    si.si_pid = pid;
    si.si_uid = getuid();
    si.si_value.sival_ptr = cookie();
    return syscall(SYS_rt_tgsigqueueinfo, pid, tid, SIGSYS, &si) == 0;
}

/* The trace system's own threads ("posixtrace-log"...): never armed. */
static bool tracers(pid_t tid)
{
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    long n = syscall(SYS_read, fd, comm, sizeof comm - 1);
    (void)syscall(SYS_close, fd);
    return n > 0 && strncmp(comm, "posixtrace-", 11) == 0;
}

/* Every other thread of the process asked; how many. */
static int ask_all(void)
{
    char buf[4096];
    pid_t pid = getpid(), me = (pid_t)syscall(SYS_gettid);
    int asked = 0;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/task", O_RDONLY | O_DIRECTORY |
                                                                      O_CLOEXEC);
    if (fd < 0)
        return 0;
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            pid_t tid = (pid_t)strtol(d->d_name, NULL, 10);
            if (tid > 0 && tid != me && !tracers(tid) && ask(pid, tid))
                asked++;
        }
    }
    (void)syscall(SYS_close, fd);
    return asked;
}

static void say(int n)
{
    char m[256];
    int k = snprintf(m, sizeof m, "posixtrace-preload: %d thread%s started before the shim could "
                     "not be armed (SIGSYS blocked, or thread data shared): %s system calls are "
                     "not traced\n", n, n == 1 ? "" : "s", n == 1 ? "its" : "their");
    if (k > 0)
        (void)!write(2, m, (size_t)k < sizeof m ? (size_t)k : sizeof m - 1);
}

void shim_sud_arm_early(void)
{
    unsigned char was = shim_sud_enter(); /* this thread's own calls are the shim's */
    int asked = ask_all();
    struct timespec ms = { 0, 1000000 };
    for (int i = 0; i < WAIT_MS && __atomic_load_n(&answered, __ATOMIC_ACQUIRE) < asked; i++)
        (void)syscall(SYS_nanosleep, &ms, NULL);
    int missing = asked - __atomic_load_n(&answered, __ATOMIC_ACQUIRE) +
                  __atomic_load_n(&refused, __ATOMIC_RELAXED);
    if (missing > 0)
        say(missing);
    shim_sud_restore(was);
}
