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
 *
 * The new image's environment gets back what tracing needs (env.c): an
 * explicit envp is replaced by a copy on the stack; where the program's own
 * `environ` lacks it (clearenv, env -i), execv/execvp/execl/execlp go to the
 * next execve/execvpe with such a copy instead (the event is the same).
 * execveat's path is recorded with fd = its directory descriptor.
 */
#include "shim.h"

#include <stdarg.h>
#include "../libtrace/xproc/exec_args.h"
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

enum kind { K_EXECVE, K_EXECV, K_EXECVP, K_EXECVPE, K_FEXECVE, K_EXECVEAT, K_NKINDS };
static void *real_fn[K_NKINDS];
static const char *const names[K_NKINDS] = { "execve", "execv", "execvp", "execvpe", "fexecve",
                                             "execveat" };

/* Resolved at initialisation, not lazily in a vfork child; the probe of
 * payload.c chosen then too, before the program may install a seccomp filter. */
void shim_exec_init(void)
{
    for (int k = 0; k < K_NKINDS; k++)
        shim_get(&real_fn[k], names[k]);
    shim_probe_init();
}

struct exec_args {
    enum kind k;
    unsigned fn;               /* the program's function: POSIXTRACE_FN_EXECVE... */
    int fd, flags;             /* fexecve's descriptor, execveat's directory and flags */
    const char *path;
    char *const *argv, *const *envp;
};

static int call_next(const struct exec_args *a)
{
    enum kind k = a->k;
    int fd = a->fd;
    const char *path = a->path;
    char *const *argv = a->argv, *const *envp = a->envp;
    void *f = shim_get(&real_fn[k], names[k]);
    SHIM_QUIET(posixtrace_before_exec());
    switch (k) {
    case K_EXECV:
    case K_EXECVP:
        return ((int (*)(const char *, char *const[]))f)(path, argv);
    case K_FEXECVE:
        return ((int (*)(int, char *const[], char *const[]))f)(fd, argv, envp);
    case K_EXECVEAT:
        return ((int (*)(int, const char *, char *const[], char *const[], int))f)(fd, path, argv,
                                                                                  envp, a->flags);
    default:
        return ((int (*)(const char *, char *const[], char *const[]))f)(path, argv, envp);
    }
}

static void fill(struct shim_call *c, const struct exec_args *a, int search)
{
    int fd = a->fd;
    const char *path = a->path;
    char *const *argv = a->argv;
    c->flags |= POSIXTRACE_CALL_WITH_FN(a->fn);
    c->tid = shim_tid_fresh();
    shim_fix_exec(c, syscall(SYS_getpid), fd, search);
    shim_str_safe(c, path); /* recorded before the call: not known to be readable */
    shim_argv_safe(c, argv);
}

static SHIM_NOINLINE int exec_rec(const struct exec_args *a, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_EXEC, ra))
        return call_next(a);
    int search = a->k == K_EXECVP || a->k == K_EXECVPE;
    shim_noreturn(&c);
    fill(&c, a, search);
    shim_emit(&c);
    uint64_t t0 = c.t0;
    int r = call_next(a);
    shim_begin(&c, POSIXTRACE_EV_EXEC, ra);
    c.t0 = t0;
    shim_end(&c, r, true);
    fill(&c, a, search);
    shim_emit(&c);
    return r;
}

static int exec_any(const struct exec_args *a, const void *ra)
{
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_EXEC)))
        return call_next(a);
    return exec_rec(a, ra);
}

/* An explicit environment: with what tracing needs put back (env.c). */
static int exec_env(enum kind k, unsigned fn, int fd, int flags, const char *path,
                    char *const argv[], char *const envp[], const void *ra)
{
    SHIM_ENV(envp);
    struct exec_args a = { k, fn, fd, flags, path, argv, envp };
    return exec_any(&a, ra);
}

/* The process's own environment (execv, execvp): passed explicitly, to the
 * next execve/execvpe, when it lacks what tracing needs. */
static int exec_own_env(enum kind k, unsigned fn, const char *path, char *const argv[],
                        const void *ra)
{
    char *const *envp = environ;
    SHIM_ENV(envp);
    struct exec_args a = { k, fn, -1, 0, path, argv, NULL };
    if (envp != environ) {
        a.k = k == K_EXECV ? K_EXECVE : K_EXECVPE;
        a.envp = envp;
    }
    return exec_any(&a, ra);
}

SHIM_API int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_env(K_EXECVE, POSIXTRACE_FN_EXECVE, -1, 0, path, argv, envp, RA());
}

SHIM_API int execv(const char *path, char *const argv[])
{
    return exec_own_env(K_EXECV, POSIXTRACE_FN_EXECV, path, argv, RA());
}

SHIM_API int execvp(const char *file, char *const argv[])
{
    return exec_own_env(K_EXECVP, POSIXTRACE_FN_EXECVP, file, argv, RA());
}

SHIM_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_env(K_EXECVPE, POSIXTRACE_FN_EXECVPE, -1, 0, file, argv, envp, RA());
}

SHIM_API int fexecve(int fd, char *const argv[], char *const envp[])
{
    return exec_env(K_FEXECVE, POSIXTRACE_FN_FEXECVE, fd, 0, NULL, argv, envp, RA());
}

SHIM_API int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                      int flags)
{
    return exec_env(K_EXECVEAT, POSIXTRACE_FN_EXECVEAT, dirfd, flags, path, argv, envp,
                    RA());
}

SHIM_API int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n = pt_exec_count_args(arg, &ap);
    char *v[n + 1];
    pt_exec_fill_args(v, n, arg, &ap);
    va_end(ap);
    return exec_own_env(K_EXECV, POSIXTRACE_FN_EXECL, path, v, RA());
}

SHIM_API int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n = pt_exec_count_args(arg, &ap);
    char *v[n + 1];
    pt_exec_fill_args(v, n, arg, &ap);
    va_end(ap);
    return exec_own_env(K_EXECVP, POSIXTRACE_FN_EXECLP, file, v, RA());
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
    return exec_env(K_EXECVE, POSIXTRACE_FN_EXECLE, -1, 0, path, v, envp, RA());
}
