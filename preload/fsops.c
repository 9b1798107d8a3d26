/*
 * Descriptor and file-system operations: dup, dup2, dup3 ("dup"), pipe,
 * pipe2 ("pipe"), unlink, unlinkat ("unlink"), rename, renameat, renameat2
 * ("rename"), mkdir, mkdirat ("mkdir"), rmdir, ftruncate, ftruncate64, fsync,
 * copy_file_range, sendfile, sendfile64.
 */
#include "shim.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#define WANT(ev) likely(!posixtrace_wanted(POSIXTRACE_EV_##ev))
/* A path argument: read directly if the call succeeded; if it failed, maybe
 * before reading it (EINVAL for bad flags, EBADF, EFAULT...): over probed
 * pages only, NODATA if not readable. */
#define PATH(str) shim_str_after(&c, str, r >= 0)

/* ---- dup ---- */
REAL(int, dup, int);
REAL(int, dup2, int, int);
REAL(int, dup3, int, int, int);

static int call_dup(int k, int o, int n, int f)
{
    return k == 1 ? NEXT(dup)(o) : k == 2 ? NEXT(dup2)(o, n) : NEXT(dup3)(o, n, f);
}

static SHIM_NOINLINE int dup_rec(int k, int o, int n, int f, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_DUP, ra))
        return call_dup(k, o, n, f);
    int r = call_dup(k, o, n, f);
    shim_end(&c, r, r < 0);
    c.flags |= POSIXTRACE_CALL_WITH_FN(k); /* 1 dup, 2 dup2, 3 dup3: POSIXTRACE_FN_DUP... */
    shim_fix_dup(&c, o, n, f);
    shim_emit(&c);
    return r;
}

SHIM_API int dup(int o)
{
    if (WANT(DUP))
        return NEXT(dup)(o);
    return dup_rec(1, o, -1, 0, RA());
}

SHIM_API int dup2(int o, int n)
{
    if (o != n)
        shim_fd_vacate(n);
    if (WANT(DUP))
        return NEXT(dup2)(o, n);
    return dup_rec(2, o, n, 0, RA());
}

SHIM_API int dup3(int o, int n, int f)
{
    if (o != n)
        shim_fd_vacate(n);
    if (WANT(DUP))
        return NEXT(dup3)(o, n, f);
    return dup_rec(3, o, n, f, RA());
}

/* ---- pipe ---- */
REAL(int, pipe, int[2]);
REAL(int, pipe2, int[2], int);

static SHIM_NOINLINE int pipe_rec(int two, int fds[2], int flags, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_PIPE, ra))
        return two ? NEXT(pipe2)(fds, flags) : NEXT(pipe)(fds);
    int r = two ? NEXT(pipe2)(fds, flags) : NEXT(pipe)(fds);
    shim_end(&c, r, r < 0);
    c.flags |= POSIXTRACE_CALL_WITH_FN(two ? POSIXTRACE_FN_PIPE2 : POSIXTRACE_FN_PIPE);
    shim_fix_pipe(&c, flags, r == 0 ? fds[0] : -1, r == 0 ? fds[1] : -1,
                  r == 0 ? shim_fd_ino(fds[0]) : 0);
    shim_emit(&c);
    return r;
}

SHIM_API int pipe(int fds[2])
{
    if (WANT(PIPE))
        return NEXT(pipe)(fds);
    return pipe_rec(0, fds, 0, RA());
}

SHIM_API int pipe2(int fds[2], int flags)
{
    if (WANT(PIPE))
        return NEXT(pipe2)(fds, flags);
    return pipe_rec(1, fds, flags, RA());
}

/* ---- unlink ---- */
REAL(int, unlink, const char *);
REAL(int, unlinkat, int, const char *, int);

static SHIM_NOINLINE int unlink_rec(int at, int dirfd, const char *path, int flags,
                                    const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_UNLINK, ra))
        return at ? NEXT(unlinkat)(dirfd, path, flags) : NEXT(unlink)(path);
    int r = at ? NEXT(unlinkat)(dirfd, path, flags) : NEXT(unlink)(path);
    shim_end(&c, r, r < 0);
    shim_fix_unlink(&c, dirfd, flags);
    PATH(path);
    shim_emit(&c);
    return r;
}

SHIM_API int unlink(const char *path)
{
    if (WANT(UNLINK))
        return NEXT(unlink)(path);
    return unlink_rec(0, AT_FDCWD, path, 0, RA());
}

SHIM_API int unlinkat(int dirfd, const char *path, int flags)
{
    if (WANT(UNLINK))
        return NEXT(unlinkat)(dirfd, path, flags);
    return unlink_rec(1, dirfd, path, flags, RA());
}

/* ---- rename ---- */
REAL(int, rename, const char *, const char *);
REAL(int, renameat, int, const char *, int, const char *);
REAL(int, renameat2, int, const char *, int, const char *, unsigned);

static int call_rename(int k, int od, const char *o, int nd, const char *n, unsigned f)
{
    return k == 0 ? NEXT(rename)(o, n)
         : k == 1 ? NEXT(renameat)(od, o, nd, n)
                  : NEXT(renameat2)(od, o, nd, n, f);
}

static SHIM_NOINLINE int rename_rec(int k, int od, const char *o, int nd, const char *n,
                                    unsigned f, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_RENAME, ra))
        return call_rename(k, od, o, nd, n, f);
    int r = call_rename(k, od, o, nd, n, f);
    shim_end(&c, r, r < 0);
    shim_fix_rename(&c, od, nd, f);
    PATH(o);
    PATH(n);
    shim_emit(&c);
    return r;
}

SHIM_API int rename(const char *o, const char *n)
{
    if (WANT(RENAME))
        return NEXT(rename)(o, n);
    return rename_rec(0, AT_FDCWD, o, AT_FDCWD, n, 0, RA());
}

SHIM_API int renameat(int od, const char *o, int nd, const char *n)
{
    if (WANT(RENAME))
        return NEXT(renameat)(od, o, nd, n);
    return rename_rec(1, od, o, nd, n, 0, RA());
}

SHIM_API int renameat2(int od, const char *o, int nd, const char *n, unsigned f)
{
    if (WANT(RENAME))
        return NEXT(renameat2)(od, o, nd, n, f);
    return rename_rec(2, od, o, nd, n, f, RA());
}

/* ---- mkdir, rmdir ---- */
REAL(int, mkdir, const char *, mode_t);
REAL(int, mkdirat, int, const char *, mode_t);
REAL(int, rmdir, const char *);

static SHIM_NOINLINE int mkdir_rec(int at, int dirfd, const char *path, mode_t mode,
                                   const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_MKDIR, ra))
        return at ? NEXT(mkdirat)(dirfd, path, mode) : NEXT(mkdir)(path, mode);
    int r = at ? NEXT(mkdirat)(dirfd, path, mode) : NEXT(mkdir)(path, mode);
    shim_end(&c, r, r < 0);
    shim_fix_mkdir(&c, dirfd, mode);
    PATH(path);
    shim_emit(&c);
    return r;
}

SHIM_API int mkdir(const char *path, mode_t mode)
{
    if (WANT(MKDIR))
        return NEXT(mkdir)(path, mode);
    return mkdir_rec(0, AT_FDCWD, path, mode, RA());
}

SHIM_API int mkdirat(int dirfd, const char *path, mode_t mode)
{
    if (WANT(MKDIR))
        return NEXT(mkdirat)(dirfd, path, mode);
    return mkdir_rec(1, dirfd, path, mode, RA());
}

static SHIM_NOINLINE int rmdir_rec(const char *path, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_RMDIR, ra))
        return NEXT(rmdir)(path);
    int r = NEXT(rmdir)(path);
    shim_end(&c, r, r < 0);
    shim_fix_rmdir(&c);
    PATH(path);
    shim_emit(&c);
    return r;
}

SHIM_API int rmdir(const char *path)
{
    if (WANT(RMDIR))
        return NEXT(rmdir)(path);
    return rmdir_rec(path, RA());
}

/* ---- ftruncate, fsync ---- */
REAL(int, ftruncate, int, off_t);
REAL(int, ftruncate64, int, off_t);
REAL(int, fsync, int);

static SHIM_NOINLINE int ftruncate_rec(int is64, int fd, off_t len, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_FTRUNCATE, ra))
        return is64 ? NEXT(ftruncate64)(fd, len) : NEXT(ftruncate)(fd, len);
    int r = is64 ? NEXT(ftruncate64)(fd, len) : NEXT(ftruncate)(fd, len);
    shim_end(&c, r, r < 0);
    shim_fix_ftruncate(&c, fd, len);
    shim_emit(&c);
    return r;
}

SHIM_API int ftruncate(int fd, off_t len)
{
    if (WANT(FTRUNCATE))
        return NEXT(ftruncate)(fd, len);
    return ftruncate_rec(0, fd, len, RA());
}

SHIM_API int ftruncate64(int fd, off_t len)
{
    if (WANT(FTRUNCATE))
        return NEXT(ftruncate64)(fd, len);
    return ftruncate_rec(1, fd, len, RA());
}

static SHIM_NOINLINE int fsync_rec(int fd, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_FSYNC, ra))
        return NEXT(fsync)(fd);
    int r = NEXT(fsync)(fd);
    shim_end(&c, r, r < 0);
    shim_fix_fsync(&c, fd);
    shim_emit(&c);
    return r;
}

SHIM_API int fsync(int fd)
{
    if (WANT(FSYNC))
        return NEXT(fsync)(fd);
    return fsync_rec(fd, RA());
}

/* ---- copy_file_range, sendfile ----
 * The kernel reads the offsets and, on success, advances them by the bytes
 * transferred: they are read after a successful call (which proves them
 * valid), the value passed in being *off - ret. After a failure they are not
 * read (the pointer may be bad): -2 and flag NODATA; -1 stands for NULL. */
static int64_t off_in_before(struct shim_call *c, const off_t *off, ssize_t r)
{
    if (off == NULL)
        return -1;
    if (r < 0) {
        c->flags |= POSIXTRACE_CALL_NODATA;
        return -2;
    }
    return (int64_t)*off - r;
}

REAL(ssize_t, copy_file_range, int, off_t *, int, off_t *, size_t, unsigned);

static SHIM_NOINLINE ssize_t cfr_rec(int fi, off_t *oi, int fo, off_t *oo, size_t len,
                                     unsigned flags, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_COPY_FILE_RANGE, ra))
        return NEXT(copy_file_range)(fi, oi, fo, oo, len, flags);
    ssize_t r = NEXT(copy_file_range)(fi, oi, fo, oo, len, flags);
    shim_end(&c, r, r < 0);
    shim_fix_copy_file_range(&c, fi, off_in_before(&c, oi, r), fo, off_in_before(&c, oo, r),
                             len, flags);
    shim_emit(&c);
    return r;
}

SHIM_API ssize_t copy_file_range(int fi, off_t *oi, int fo, off_t *oo, size_t len,
                                 unsigned flags)
{
    if (WANT(COPY_FILE_RANGE))
        return NEXT(copy_file_range)(fi, oi, fo, oo, len, flags);
    return cfr_rec(fi, oi, fo, oo, len, flags, RA());
}

REAL(ssize_t, sendfile, int, int, off_t *, size_t);
REAL(ssize_t, sendfile64, int, int, off_t *, size_t);

static SHIM_NOINLINE ssize_t sendfile_rec(int is64, int out, int in, off_t *off, size_t n,
                                          const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_SENDFILE, ra))
        return is64 ? NEXT(sendfile64)(out, in, off, n) : NEXT(sendfile)(out, in, off, n);
    ssize_t r = is64 ? NEXT(sendfile64)(out, in, off, n) : NEXT(sendfile)(out, in, off, n);
    shim_end(&c, r, r < 0);
    shim_fix_sendfile(&c, out, in, off_in_before(&c, off, r), n);
    shim_emit(&c);
    return r;
}

SHIM_API ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
    if (WANT(SENDFILE))
        return NEXT(sendfile)(out, in, off, n);
    return sendfile_rec(0, out, in, off, n, RA());
}

SHIM_API ssize_t sendfile64(int out, int in, off_t *off, size_t n)
{
    if (WANT(SENDFILE))
        return NEXT(sendfile64)(out, in, off, n);
    return sendfile_rec(1, out, in, off, n, RA());
}
