/*
 * Opening and closing descriptors: open, open64, openat, openat64, creat,
 * creat64 and the fortified entry points __open_2, __open64_2, __openat_2,
 * __openat64_2 (what -D_FORTIFY_SOURCE builds call) -> one "open" event
 * (dirfd AT_FDCWD for the non-at forms; creat as O_CREAT|O_WRONLY|O_TRUNC);
 * close -> "close".
 *
 * open's mode is variadic: it is read only when the flags say that there is
 * one (O_CREAT or O_TMPFILE), as libc itself does, and forwarded as given.
 */
#include "shim.h"

#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

enum okind { K_OPEN, K_OPEN64, K_OPENAT, K_OPENAT64, K_CREAT, K_CREAT64,
             K_OPEN2, K_OPEN64_2, K_OPENAT2, K_OPENAT64_2, K_N };
static void *real[K_N];
static const char *const names[K_N] = {
    "open", "open64", "openat", "openat64", "creat", "creat64",
    "__open_2", "__open64_2", "__openat_2", "__openat64_2",
};
typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*creat_fn)(const char *, mode_t);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat2_fn)(int, const char *, int);

#define FN(k) shim_get(&real[k], names[k])
#define NEEDS_MODE(f) (((f) & O_CREAT) != 0 || ((f) & O_TMPFILE) == O_TMPFILE)

/* inlined at both call sites: a call and a frame less per recorded open */
static inline __attribute__((always_inline)) int call_open(enum okind k, int dirfd,
                                                          const char *path, int flags,
                                                          mode_t mode)
{
    switch (k) {
    case K_OPEN: case K_OPEN64:
        return ((open_fn)FN(k))(path, flags, mode);
    case K_OPENAT: case K_OPENAT64:
        return ((openat_fn)FN(k))(dirfd, path, flags, mode);
    case K_CREAT: case K_CREAT64:
        return ((creat_fn)FN(k))(path, mode);
    case K_OPEN2: case K_OPEN64_2:
        return ((open2_fn)FN(k))(path, flags);
    default:
        return ((openat2_fn)FN(k))(dirfd, path, flags);
    }
}

/* The function in the program's source: __open_2... are open... fortified. */
static unsigned open_fn_id(enum okind k)
{
    return k >= K_OPEN2 ? POSIXTRACE_FN_OPEN + (unsigned)(k - K_OPEN2)
                        : POSIXTRACE_FN_OPEN + (unsigned)k;
}

static SHIM_NOINLINE int open_rec(enum okind k, int dirfd, const char *path, int flags,
                                  mode_t mode, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_OPEN, ra))
        return call_open(k, dirfd, path, flags, mode);
    int r = call_open(k, dirfd, path, flags, mode);
    shim_end(&c, r, r < 0);
    c.flags |= POSIXTRACE_CALL_WITH_FN(open_fn_id(k));
    shim_fix_open(&c, dirfd, (unsigned)(k == K_CREAT || k == K_CREAT64
                                            ? O_CREAT | O_WRONLY | O_TRUNC : flags), mode);
    shim_str_after(&c, path, r >= 0); /* a failed open may not have read it */
    shim_emit(&c);
    return r;
}

#define GET_MODE(flags) \
    mode_t mode = 0; \
    if (NEEDS_MODE(flags)) { \
        va_list ap; \
        va_start(ap, flags); \
        mode = (mode_t)va_arg(ap, int); \
        va_end(ap); \
    }
#define WANT likely(!posixtrace_wanted(POSIXTRACE_EV_OPEN))

SHIM_API int open(const char *path, int flags, ...)
{
    GET_MODE(flags);
    if (WANT)
        return ((open_fn)FN(K_OPEN))(path, flags, mode);
    return open_rec(K_OPEN, AT_FDCWD, path, flags, mode, RA());
}

SHIM_API int open64(const char *path, int flags, ...)
{
    GET_MODE(flags);
    if (WANT)
        return ((open_fn)FN(K_OPEN64))(path, flags, mode);
    return open_rec(K_OPEN64, AT_FDCWD, path, flags, mode, RA());
}

SHIM_API int openat(int dirfd, const char *path, int flags, ...)
{
    GET_MODE(flags);
    if (WANT)
        return ((openat_fn)FN(K_OPENAT))(dirfd, path, flags, mode);
    return open_rec(K_OPENAT, dirfd, path, flags, mode, RA());
}

SHIM_API int openat64(int dirfd, const char *path, int flags, ...)
{
    GET_MODE(flags);
    if (WANT)
        return ((openat_fn)FN(K_OPENAT64))(dirfd, path, flags, mode);
    return open_rec(K_OPENAT64, dirfd, path, flags, mode, RA());
}

SHIM_API int creat(const char *path, mode_t mode)
{
    if (WANT)
        return ((creat_fn)FN(K_CREAT))(path, mode);
    return open_rec(K_CREAT, AT_FDCWD, path, 0, mode, RA());
}

SHIM_API int creat64(const char *path, mode_t mode)
{
    if (WANT)
        return ((creat_fn)FN(K_CREAT64))(path, mode);
    return open_rec(K_CREAT64, AT_FDCWD, path, 0, mode, RA());
}

SHIM_API int __open_2(const char *path, int flags)
{
    if (WANT)
        return ((open2_fn)FN(K_OPEN2))(path, flags);
    return open_rec(K_OPEN2, AT_FDCWD, path, flags, 0, RA());
}

SHIM_API int __open64_2(const char *path, int flags)
{
    if (WANT)
        return ((open2_fn)FN(K_OPEN64_2))(path, flags);
    return open_rec(K_OPEN64_2, AT_FDCWD, path, flags, 0, RA());
}

SHIM_API int __openat_2(int dirfd, const char *path, int flags)
{
    if (WANT)
        return ((openat2_fn)FN(K_OPENAT2))(dirfd, path, flags);
    return open_rec(K_OPENAT2, dirfd, path, flags, 0, RA());
}

SHIM_API int __openat64_2(int dirfd, const char *path, int flags)
{
    if (WANT)
        return ((openat2_fn)FN(K_OPENAT64_2))(dirfd, path, flags);
    return open_rec(K_OPENAT64_2, dirfd, path, flags, 0, RA());
}

REAL(int, close, int);

static SHIM_NOINLINE int close_rec(int fd, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_CLOSE, ra))
        return NEXT(close)(fd);
    int r = NEXT(close)(fd);
    shim_end(&c, r, r < 0);
    shim_fix_close(&c, fd);
    shim_emit(&c);
    return r;
}

SHIM_API int close(int fd)
{
    shim_fd_vacate(fd);
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_CLOSE)))
        return NEXT(close)(fd);
    return close_rec(fd, RA());
}
