/*
 * The exec family. Each call is recorded before it is made (flag
 * POSIXTRACE_CALL_NORETURN, ret 0) with the caller's pid and thread id read
 * fresh (a vfork child shares its parent's memory), then made through the
 * next definition, libposixtrace's, which shuts the process's own streams
 * down and hands attachments to the new image. If the exec fails, a second
 * exec event records the failure (ret -1, errno, duration).
 *
 * execl, execlp, execle build their argv on the stack and go to the next
 * execv, execvp, execve (not through this shim's wrappers: one event per call).
 *
 * "Next" must be libposixtrace's definitions even where libc comes before
 * libposixtrace in the lookup order (a program that does not link
 * libposixtrace: the shim brings it in after the program's own libraries),
 * so they are looked up in libposixtrace itself, at initialisation (not
 * lazily in a vfork child).
 *
 * libposixtrace's wrappers find libc's exec with dlsym(RTLD_NEXT), which
 * fails when libc precedes libposixtrace in the lookup order; until they can
 * cope with that, the shim then calls libc's exec directly (no crash, but
 * the streams are not handed to the new image): launchers put libposixtrace
 * in LD_PRELOAD after the shim (preload/README.md).
 */
#include "shim.h"

#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

enum kind { K_EXECVE, K_EXECV, K_EXECVP, K_EXECVPE, K_FEXECVE };
static void *real_fn[5];
static const char *const names[5] = { "execve", "execv", "execvp", "execvpe", "fexecve" };

/* Is the object defining `next` (libc) before libposixtrace in load order? */
struct order_query {
    uintptr_t a, b; /* an address in libc, one in libposixtrace */
    int seen_a, a_first;
};

static int in_object(const struct dl_phdr_info *info, uintptr_t x)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && x >= lo && x - lo < ph->p_memsz)
            return 1;
    }
    return 0;
}

static int order_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct order_query *q = data;
    if (in_object(info, q->a))
        q->seen_a = 1;
    if (in_object(info, q->b)) {
        q->a_first = q->seen_a;
        return 1;
    }
    return 0;
}

static int lib_after_libc(void *next)
{
    struct order_query q = { (uintptr_t)next, (uintptr_t)&posixtrace_sys_event, 0, 0 };
    dl_iterate_phdr(order_cb, &q);
    return q.a_first;
}

void shim_exec_init(void)
{
    Dl_info di;
    void *lib = NULL;
    if (dladdr((void *)&posixtrace_sys_event, &di) != 0 && di.dli_fname != NULL)
        lib = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    for (int k = 0; k < 5; k++) {
        void *f = lib != NULL ? dlsym(lib, names[k]) : NULL;
        void *next = dlsym(RTLD_NEXT, names[k]);
        if (f != NULL && next != NULL && f != next && lib_after_libc(next))
            f = next; /* libposixtrace's wrapper would find no next definition */
        if (f != NULL)
            __atomic_store_n(&real_fn[k], f, __ATOMIC_RELAXED);
    }
    if (lib != NULL)
        dlclose(lib);
}

static int call_next(enum kind k, int fd, const char *path, char *const argv[],
                     char *const envp[])
{
    void *f = shim_get(&real_fn[k], names[k]);
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
    shim_str(c, path, 1);
    shim_argv(c, argv, 0);
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

/* execl, execlp, execle: the arguments into an array on the stack. */
static size_t count_args(const char *arg, va_list ap)
{
    if (arg == NULL)
        return 0;
    size_t n = 1;
    va_list c;
    va_copy(c, ap);
    while (va_arg(c, const char *) != NULL)
        n++;
    va_end(c);
    return n;
}

static void fill_args(char **v, size_t n, const char *arg, va_list ap)
{
    if (n > 0)
        v[0] = (char *)arg;
    for (size_t i = 1; i < n; i++)
        v[i] = va_arg(ap, char *);
    if (n > 0)
        (void)va_arg(ap, char *); /* the terminating NULL */
    v[n] = NULL;
}

SHIM_API int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n = count_args(arg, ap);
    char *v[n + 1];
    fill_args(v, n, arg, ap);
    va_end(ap);
    return exec_any(K_EXECV, -1, path, v, NULL, RA());
}

SHIM_API int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n = count_args(arg, ap);
    char *v[n + 1];
    fill_args(v, n, arg, ap);
    va_end(ap);
    return exec_any(K_EXECVP, -1, file, v, NULL, RA());
}

SHIM_API int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n = count_args(arg, ap);
    char *v[n + 1];
    fill_args(v, n, arg, ap);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    SHIM_ENV(envp);
    return exec_any(K_EXECVE, -1, path, v, envp, RA());
}
