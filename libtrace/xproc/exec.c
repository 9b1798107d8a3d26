/*
 * The exec family. posix_trace_create(3p): "If the process exits, invokes a
 * member of the exec family of functions, or is terminated, the trace streams
 * that the process had created and that have not yet been shut down, shall be
 * automatically shut down". A library sees an exec only by interposing it: the
 * functions below shut the process's streams down (logs get their last flush)
 * and call the next definition (libc's, or an LD_PRELOAD shim's). If the exec
 * then fails, the streams stay shut down, as the page's wording implies.
 *
 * Streams other controllers created for this process are not shut down: the
 * wrappers attach any still pending and leave the inbox (inbox.c) open across
 * the exec, so that the new image, if it loads the library, records into them.
 *
 * A vfork child shares the parent's memory: it must not touch the parent's
 * streams, so nothing is done when the pid is not the one cached for this
 * process.
 */
#include "../internal.h"
#include <dlfcn.h>
#include <stdarg.h>
#include "exec_args.h"
#include <unistd.h>

extern _Atomic int pt_live_streams; /* handle.c */
void pt_handles_shutdown_all(void);

static void before_exec(void)
{
    if ((uint32_t)getpid() != pt_pid)
        return; /* a vfork child */
    int saved = errno;
    if (atomic_load_explicit(&pt_live_streams, memory_order_relaxed) != 0)
        pt_handles_shutdown_all();
    pt_inbox_before_exec(); /* streams of other controllers go on in the new image */
    errno = saved;
}

PT_API void posixtrace_before_exec(void)
{
    before_exec();
}

/* The next definition: libc's, or a shim's after us. When the library was
 * brought in by a preloaded shim, it comes after libc in the lookup order
 * and RTLD_NEXT finds nothing: then libc's, by name. */
void *pt_next_fn(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (f == NULL) {
        void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        if (libc != NULL) {
            f = dlsym(libc, name);
            dlclose(libc);
        }
    }
    return f;
}

/* The same, looked up once into *slot (at the first call: no work at
 * start-up, and a call made before the library's constructors ran, from
 * another library's, finds it too). */
void *pt_next_cached(void *_Atomic *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (f == NULL) {
        f = pt_next_fn(name);
        atomic_store_explicit(slot, f, memory_order_release);
    }
    return f;
}

#define NEXT(type, name) ((type)pt_next_fn(name))

typedef int (*execve_t)(const char *, char *const[], char *const[]);
typedef int (*execv_t)(const char *, char *const[]);
typedef int (*fexecve_t)(int, char *const[], char *const[]);
typedef int (*execveat_t)(int, const char *, char *const[], char *const[], int);

PT_API int execve(const char *path, char *const argv[], char *const envp[])
{
    before_exec();
    return NEXT(execve_t, "execve")(path, argv, envp);
}

PT_API int execv(const char *path, char *const argv[])
{
    before_exec();
    return NEXT(execv_t, "execv")(path, argv);
}

PT_API int execvp(const char *file, char *const argv[])
{
    before_exec();
    return NEXT(execv_t, "execvp")(file, argv);
}

PT_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    before_exec();
    return NEXT(execve_t, "execvpe")(file, argv, envp);
}

PT_API int fexecve(int fd, char *const argv[], char *const envp[])
{
    before_exec();
    return NEXT(fexecve_t, "fexecve")(fd, argv, envp);
}

PT_API int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    before_exec();
    return NEXT(execveat_t, "execveat")(dirfd, path, argv, envp, flags);
}

PT_API int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n = pt_exec_count_args(arg, &ap);
    char *v[n + 1];
    pt_exec_fill_args(v, n, arg, &ap);
    va_end(ap);
    return execv(path, v);
}

PT_API int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n = pt_exec_count_args(arg, &ap);
    char *v[n + 1];
    pt_exec_fill_args(v, n, arg, &ap);
    va_end(ap);
    return execvp(file, v);
}

PT_API int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n = pt_exec_count_args(arg, &ap);
    char *v[n + 1];
    pt_exec_fill_args(v, n, arg, &ap);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, v, envp);
}
