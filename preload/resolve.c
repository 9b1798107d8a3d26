/*
 * Finding the next definition of a wrapped function: dlsym(RTLD_NEXT), which
 * from this shim (first in the lookup order) gives libposixtrace's exec
 * family and libc's everything else.
 *
 * dlsym itself must not recurse into a wrapper that is still resolving: a
 * thread-local flag catches that, and the few calls the dynamic loader's
 * helpers could make meanwhile (open, read, write, close) go straight to the
 * kernel. Wrappers resolve lazily, at their first call (which may come
 * before the shim's constructor, from other libraries' constructors); the
 * exec family is resolved at initialisation (exec.c).
 */
#include "shim.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static __thread int resolving __attribute__((tls_model("initial-exec")));

static int sys_open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

static int sys_openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

static ssize_t sys_read(int fd, void *b, size_t n) { return syscall(SYS_read, fd, b, n); }
static ssize_t sys_write(int fd, const void *b, size_t n) { return syscall(SYS_write, fd, b, n); }
static int sys_close(int fd) { return (int)syscall(SYS_close, fd); }

static const struct {
    const char *name;
    void *fn;
} fallbacks[] = {
    { "open", (void *)sys_open },     { "open64", (void *)sys_open },
    { "openat", (void *)sys_openat }, { "openat64", (void *)sys_openat },
    { "read", (void *)sys_read },     { "write", (void *)sys_write },
    { "close", (void *)sys_close },
};

static void *fallback(const char *name)
{
    for (size_t i = 0; i < sizeof fallbacks / sizeof fallbacks[0]; i++)
        if (strcmp(fallbacks[i].name, name) == 0)
            return fallbacks[i].fn;
    return NULL;
}

static void fatal(const char *name)
{
    static const char msg[] = "posixtrace-preload: no next definition of ";
    (void)!syscall(SYS_write, 2, msg, sizeof msg - 1);
    (void)!syscall(SYS_write, 2, name, strlen(name));
    (void)!syscall(SYS_write, 2, "\n", 1);
    abort();
}

void *shim_resolve(void **slot, const char *name)
{
    if (resolving) {
        void *f = fallback(name);
        if (f == NULL)
            fatal(name);
        return f; /* not stored: the real one is found next time */
    }
    int saved = errno;
    resolving = 1;
    void *p = dlsym(RTLD_NEXT, name);
    resolving = 0;
    errno = saved;
    if (p == NULL)
        fatal(name);
    __atomic_store_n(slot, p, __ATOMIC_RELAXED);
    return p;
}
