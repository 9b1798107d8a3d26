/*
 * stdio streams: fopen, fopen64, fdopen, freopen, freopen64, fclose. libc
 * opens and closes the files of streams with internal calls that the shim
 * does not otherwise see, so these are events of their own, with the
 * stream's descriptor. hdr.ret is the FILE pointer (fopen, fdopen, freopen)
 * or fclose's result. The strings of a call that failed (maybe before
 * reading them: a bad mode, no memory) are read over probed pages only.
 */
#include "shim.h"

#include <stdio.h>

#define WANT(ev) likely(!posixtrace_wanted(POSIXTRACE_EV_##ev))

static int fd_of(FILE *f)
{
    return f != NULL ? fileno(f) : -1;
}

REAL(FILE *, fopen, const char *, const char *);
REAL(FILE *, fopen64, const char *, const char *);

static SHIM_NOINLINE FILE *fopen_rec(int is64, const char *path, const char *mode,
                                     const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_FOPEN, ra))
        return is64 ? NEXT(fopen64)(path, mode) : NEXT(fopen)(path, mode);
    FILE *f = is64 ? NEXT(fopen64)(path, mode) : NEXT(fopen)(path, mode);
    shim_end(&c, (int64_t)(intptr_t)f, f == NULL);
    shim_fix_fopen(&c, fd_of(f));
    shim_str_after(&c, mode, f != NULL);
    shim_str_after(&c, path, f != NULL);
    shim_emit(&c);
    return f;
}

SHIM_API FILE *fopen(const char *path, const char *mode)
{
    if (WANT(FOPEN))
        return NEXT(fopen)(path, mode);
    return fopen_rec(0, path, mode, RA());
}

SHIM_API FILE *fopen64(const char *path, const char *mode)
{
    if (WANT(FOPEN))
        return NEXT(fopen64)(path, mode);
    return fopen_rec(1, path, mode, RA());
}

REAL(FILE *, fdopen, int, const char *);

static SHIM_NOINLINE FILE *fdopen_rec(int fd, const char *mode, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_FDOPEN, ra))
        return NEXT(fdopen)(fd, mode);
    FILE *f = NEXT(fdopen)(fd, mode);
    shim_end(&c, (int64_t)(intptr_t)f, f == NULL);
    shim_fix_fdopen(&c, fd);
    /* libc reads only the first few characters of the mode: probed pages */
    shim_str_safe(&c, mode);
    shim_emit(&c);
    return f;
}

SHIM_API FILE *fdopen(int fd, const char *mode)
{
    if (WANT(FDOPEN))
        return NEXT(fdopen)(fd, mode);
    return fdopen_rec(fd, mode, RA());
}

REAL(FILE *, freopen, const char *, const char *, FILE *);
REAL(FILE *, freopen64, const char *, const char *, FILE *);

static SHIM_NOINLINE FILE *freopen_rec(int is64, const char *path, const char *mode, FILE *s,
                                       const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_FREOPEN, ra))
        return is64 ? NEXT(freopen64)(path, mode, s) : NEXT(freopen)(path, mode, s);
    FILE *f = is64 ? NEXT(freopen64)(path, mode, s) : NEXT(freopen)(path, mode, s);
    shim_end(&c, (int64_t)(intptr_t)f, f == NULL);
    shim_fix_freopen(&c, (uintptr_t)s, fd_of(f));
    shim_str_after(&c, mode, f != NULL);
    shim_str_after(&c, path, f != NULL); /* NULL: the same file, new mode (recorded empty) */
    shim_emit(&c);
    return f;
}

SHIM_API FILE *freopen(const char *path, const char *mode, FILE *s)
{
    if (WANT(FREOPEN))
        return NEXT(freopen)(path, mode, s);
    return freopen_rec(0, path, mode, s, RA());
}

SHIM_API FILE *freopen64(const char *path, const char *mode, FILE *s)
{
    if (WANT(FREOPEN))
        return NEXT(freopen64)(path, mode, s);
    return freopen_rec(1, path, mode, s, RA());
}

REAL(int, fclose, FILE *);

static SHIM_NOINLINE int fclose_rec(FILE *s, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_FCLOSE, ra))
        return NEXT(fclose)(s);
    int fd = fd_of(s);
    int r = NEXT(fclose)(s);
    shim_end(&c, r, r != 0);
    shim_fix_fclose(&c, (uintptr_t)s, fd);
    shim_emit(&c);
    return r;
}

SHIM_API int fclose(FILE *s)
{
    if (WANT(FCLOSE))
        return NEXT(fclose)(s);
    return fclose_rec(s, RA());
}
