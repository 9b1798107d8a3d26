/*
 * A process's beginning and end: the process-start event when the shim
 * initialises in a new image, and the exits (exit, _exit, _Exit, and the
 * return from main, seen by wrapping main through __libc_start_main, which
 * the executable's start code calls through its PLT).
 */
#include "shim.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* argv when the shim starts before its constructor is called (a call from
 * another object's constructor): /proc/self/cmdline, the same strings
 * NUL-terminated back to back, read with raw system calls (no wrapper). */
static void cmdline_field(struct shim_call *c)
{
    char b[SHIM_PAYLOAD_MAX];
    size_t n = 0;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        shim_nodata(c);
        return;
    }
    long r;
    while (n < sizeof b && (r = syscall(SYS_read, fd, b + n, sizeof b - n)) > 0)
        n += (size_t)r;
    syscall(SYS_close, fd);
    shim_var(c, b, n, n);
}

void shim_process_start(int argc, char **argv)
{
    if (!posixtrace_wanted(POSIXTRACE_EV_PROCESS_START))
        goto fds;
    struct shim_call c;
    shim_begin(&c, POSIXTRACE_EV_PROCESS_START, NULL);
    shim_fix_process_start(&c, syscall(SYS_getpid), getppid());
    shim_str(&c, shim_exe_path());
    if (argc == -1 && argv == NULL)
        cmdline_field(&c);
    else if (argv != NULL && argc >= 0 && argv[argc] == NULL)
        shim_argv(&c, argv);
    else
        shim_nodata(&c);
    shim_emit(&c);
fds:
    if (posixtrace_wanted(POSIXTRACE_EV_FDS))
        shim_report_fds();
    if (posixtrace_wanted(POSIXTRACE_EV_MODULE))
        shim_report_modules();
}

/* how: 0 exit, 1 _exit/_Exit, 2 return from main */
static void record_exit(int status, int how, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_EXIT, ra))
        return;
    shim_noreturn(&c);
    c.tid = shim_tid_fresh(); /* a vfork child shares its parent's thread cache */
    shim_fix_exit(&c, syscall(SYS_getpid), status, how);
    shim_emit(&c);
}

REAL(void, exit, int);
REAL(void, _exit, int);
REAL(void, _Exit, int);

SHIM_API __attribute__((noreturn)) void exit(int status)
{
    if (posixtrace_wanted(POSIXTRACE_EV_EXIT))
        record_exit(status, 0, RA());
    NEXT(exit)(status);
    __builtin_unreachable();
}

SHIM_API __attribute__((noreturn)) void _exit(int status)
{
    if (posixtrace_wanted(POSIXTRACE_EV_EXIT))
        record_exit(status, 1, RA());
    NEXT(_exit)(status);
    __builtin_unreachable();
}

SHIM_API __attribute__((noreturn)) void _Exit(int status)
{
    if (posixtrace_wanted(POSIXTRACE_EV_EXIT))
        record_exit(status, 1, RA());
    NEXT(_Exit)(status);
    __builtin_unreachable();
}

/* ---- main ---- */
typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;

static int main_wrapper(int argc, char **argv, char **envp)
{
    int r = real_main(argc, argv, envp);
    if (posixtrace_wanted(POSIXTRACE_EV_EXIT))
        record_exit(r, 2, (const char *)real_main + 1); /* like a return address */
    return r;
}

REAL(int, __libc_start_main, main_fn, int, char **, void (*)(void), void (*)(void),
     void (*)(void), void *);

SHIM_API int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                               void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    real_main = main;
    return NEXT(__libc_start_main)(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}
