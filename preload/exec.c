/*
 * The exec family. Each call is recorded before it is made (flag
 * POSIXTRACE_CALL_NORETURN, ret 0) with the caller's pid and thread id read
 * fresh (a vfork child shares its parent's memory); path and argv are read
 * over probed pages only (payload.c): where the exec would fail with EFAULT
 * the field is empty, flag NODATA, and the exec fails as it would without
 * the shim (envp likewise, in env.c). The call is then made through the
 * next definition (libc's, or libposixtrace's when the program links it)
 * after posixtrace_before_exec(), which shuts the process's own streams down
 * and hands the others to the new image. If the exec fails, a second exec
 * event records the failure (ret -1, errno, duration).
 *
 * execl, execlp, execle build their argv on the stack and go to the next
 * execv, execvp, execve (not through this shim's wrappers: one event per call).
 */
#include "shim.h"

#include <stdarg.h>
#include "../libtrace/exec_args.h"
#include <sys/syscall.h>
#include <unistd.h>

enum kind { K_EXECVE, K_EXECV, K_EXECVP, K_EXECVPE, K_FEXECVE };
static void *real_fn[5];
static const char *const names[5] = { "execve", "execv", "execvp", "execvpe", "fexecve" };

/* Resolved at initialisation, not lazily in a vfork child; the probe of
 * payload.c chosen then too, before the program may install a seccomp filter. */
void shim_exec_init(void)
{
    for (int k = 0; k < 5; k++)
        shim_get(&real_fn[k], names[k]);
    shim_probe_init();
}

static int call_next(enum kind k, int fd, const char *path, char *const argv[],
                     char *const envp[])
{
    void *f = shim_get(&real_fn[k], names[k]);
    posixtrace_before_exec();
    switch (k) {
    case K_EXECV:
    case K_EXECVP:
        return ((int (*)(const char *, char *const[]))f)(path, argv);
    case K_FEXECVE:
        return ((int (*)(int, char *const[], char *const[]))f)(fd, argv, envp);
    default:
        return ((int (*)(const char *, char *const[], char *const[]))f)(path, argv, envp);
    }
}

static void fill(struct shim_call *c, int fd, int search, const char *path, char *const argv[])
{
    c->tid = shim_tid_fresh();
    shim_fix(c, (uint64_t)syscall(SYS_getpid));
    shim_fix(c, (uint64_t)(int64_t)fd);
    shim_fix(c, (uint64_t)search);
    shim_str_safe(c, path, 1); /* recorded before the call: not known to be readable */
    shim_argv_safe(c, argv, 0);
}

static SHIM_NOINLINE int exec_rec(enum kind k, int fd, const char *path, char *const argv[],
                                  char *const envp[], const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_EXEC, ra))
        return call_next(k, fd, path, argv, envp);
    int search = k == K_EXECVP || k == K_EXECVPE;
    shim_noreturn(&c);
    fill(&c, fd, search, path, argv);
    shim_emit(&c);
    uint64_t t0 = c.t0;
    int r = call_next(k, fd, path, argv, envp);
    shim_begin(&c, POSIXTRACE_EV_EXEC, ra);
    c.t0 = t0;
    shim_end(&c, r, true);
    fill(&c, fd, search, path, argv);
    shim_emit(&c);
    return r;
}

static int exec_any(enum kind k, int fd, const char *path, char *const argv[],
                    char *const envp[], const void *ra)
{
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_EXEC)))
        return call_next(k, fd, path, argv, envp);
    return exec_rec(k, fd, path, argv, envp, ra);
}

SHIM_API int execve(const char *path, char *const argv[], char *const envp[])
{
    SHIM_ENV(envp);
    return exec_any(K_EXECVE, -1, path, argv, envp, RA());
}

SHIM_API int execv(const char *path, char *const argv[])
{
    return exec_any(K_EXECV, -1, path, argv, NULL, RA());
}

SHIM_API int execvp(const char *file, char *const argv[])
{
    return exec_any(K_EXECVP, -1, file, argv, NULL, RA());
}

SHIM_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    SHIM_ENV(envp);
    return exec_any(K_EXECVPE, -1, file, argv, envp, RA());
}

SHIM_API int fexecve(int fd, char *const argv[], char *const envp[])
{
    SHIM_ENV(envp);
    return exec_any(K_FEXECVE, fd, NULL, argv, envp, RA());
}

SHIM_API int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n = pt_exec_count_args(arg, &ap);
    char *v[n + 1];
    pt_exec_fill_args(v, n, arg, &ap);
    va_end(ap);
    return exec_any(K_EXECV, -1, path, v, NULL, RA());
}

SHIM_API int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n = pt_exec_count_args(arg, &ap);
    char *v[n + 1];
    pt_exec_fill_args(v, n, arg, &ap);
    va_end(ap);
    return exec_any(K_EXECVP, -1, file, v, NULL, RA());
}

SHIM_API int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n = pt_exec_count_args(arg, &ap);
    char *v[n + 1];
    pt_exec_fill_args(v, n, arg, &ap);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    SHIM_ENV(envp);
    return exec_any(K_EXECVE, -1, path, v, envp, RA());
}
