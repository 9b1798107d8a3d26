/*
 * Reading and writing descriptors: read (+ __read_chk), write, pread,
 * pread64 (+ __pread_chk, __pread64_chk), pwrite, pwrite64, readv, writev,
 * lseek, lseek64. The first POSIXTRACE_STRSIZE bytes of the data that was
 * actually transferred (the return value, not the requested count) are
 * recorded; nothing is read from the buffer when the call failed.
 */
#include "shim.h"

#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

enum rkind { K_READ, K_READ_CHK, K_PREAD, K_PREAD64, K_PREAD_CHK, K_PREAD64_CHK,
             K_WRITE, K_PWRITE, K_PWRITE64, K_N };
static void *real[K_N];
static const char *const names[K_N] = {
    "read", "__read_chk", "pread", "pread64", "__pread_chk", "__pread64_chk",
    "write", "pwrite", "pwrite64",
};
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*read_chk_fn)(int, void *, size_t, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*pread_chk_fn)(int, void *, size_t, off_t, size_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
#define FN(k) shim_get(&real[k], names[k])

/* inlined at both call sites: a call and a frame less per recorded call */
static inline __attribute__((always_inline)) ssize_t call_rw(enum rkind k, int fd, void *buf,
                                                            size_t n, off_t off,
                                                            size_t buflen)
{
    switch (k) {
    case K_READ: return ((read_fn)FN(k))(fd, buf, n);
    case K_READ_CHK: return ((read_chk_fn)FN(k))(fd, buf, n, buflen);
    case K_PREAD: case K_PREAD64: return ((pread_fn)FN(k))(fd, buf, n, off);
    case K_PREAD_CHK: case K_PREAD64_CHK: return ((pread_chk_fn)FN(k))(fd, buf, n, off, buflen);
    case K_WRITE: return ((write_fn)FN(k))(fd, buf, n);
    default: return ((pwrite_fn)FN(k))(fd, buf, n, off);
    }
}

static unsigned event_of(enum rkind k)
{
    switch (k) {
    case K_READ: case K_READ_CHK: return POSIXTRACE_EV_READ;
    case K_WRITE: return POSIXTRACE_EV_WRITE;
    case K_PWRITE: case K_PWRITE64: return POSIXTRACE_EV_PWRITE;
    default: return POSIXTRACE_EV_PREAD;
    }
}

static void fixed_rw(struct shim_call *c, unsigned ev, int fd, size_t n, off_t off)
{
    switch (ev) {
    case POSIXTRACE_EV_READ: shim_fix_read(c, fd, n); break;
    case POSIXTRACE_EV_WRITE: shim_fix_write(c, fd, n); break;
    case POSIXTRACE_EV_PREAD: shim_fix_pread(c, fd, n, off); break;
    default: shim_fix_pwrite(c, fd, n, off); break;
    }
}

static SHIM_NOINLINE ssize_t rw_rec(enum rkind k, int fd, void *buf, size_t n, off_t off,
                                    size_t buflen, const void *ra)
{
    struct shim_call c;
    unsigned ev = event_of(k);
    if (!shim_begin(&c, ev, ra))
        return call_rw(k, fd, buf, n, off, buflen);
    shim_args(ev == POSIXTRACE_EV_READ || ev == POSIXTRACE_EV_WRITE ? 2 : 3, fd, (int64_t)n, off);
    ssize_t r = call_rw(k, fd, buf, n, off, buflen);
    shim_end(&c, r, r < 0);
    fixed_rw(&c, ev, fd, n, off);
    shim_buf(&c, buf, r);
    shim_emit(&c);
    return r;
}

#define WANT(ev) likely(!posixtrace_wanted(POSIXTRACE_EV_##ev))

SHIM_API ssize_t read(int fd, void *buf, size_t n)
{
    if (WANT(READ))
        return ((read_fn)FN(K_READ))(fd, buf, n);
    return rw_rec(K_READ, fd, buf, n, 0, 0, RA());
}

SHIM_API ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (WANT(READ))
        return ((read_chk_fn)FN(K_READ_CHK))(fd, buf, n, buflen);
    return rw_rec(K_READ_CHK, fd, buf, n, 0, buflen, RA());
}

SHIM_API ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    if (WANT(PREAD))
        return ((pread_fn)FN(K_PREAD))(fd, buf, n, off);
    return rw_rec(K_PREAD, fd, buf, n, off, 0, RA());
}

SHIM_API ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    if (WANT(PREAD))
        return ((pread_fn)FN(K_PREAD64))(fd, buf, n, off);
    return rw_rec(K_PREAD64, fd, buf, n, off, 0, RA());
}

SHIM_API ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    if (WANT(PREAD))
        return ((pread_chk_fn)FN(K_PREAD_CHK))(fd, buf, n, off, buflen);
    return rw_rec(K_PREAD_CHK, fd, buf, n, off, buflen, RA());
}

SHIM_API ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    if (WANT(PREAD))
        return ((pread_chk_fn)FN(K_PREAD64_CHK))(fd, buf, n, off, buflen);
    return rw_rec(K_PREAD64_CHK, fd, buf, n, off, buflen, RA());
}

SHIM_API ssize_t write(int fd, const void *buf, size_t n)
{
    if (WANT(WRITE))
        return ((write_fn)FN(K_WRITE))(fd, buf, n);
    return rw_rec(K_WRITE, fd, (void *)buf, n, 0, 0, RA());
}

SHIM_API ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (WANT(PWRITE))
        return ((pwrite_fn)FN(K_PWRITE))(fd, buf, n, off);
    return rw_rec(K_PWRITE, fd, (void *)buf, n, off, 0, RA());
}

SHIM_API ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    if (WANT(PWRITE))
        return ((pwrite_fn)FN(K_PWRITE64))(fd, buf, n, off);
    return rw_rec(K_PWRITE64, fd, (void *)buf, n, off, 0, RA());
}

/* ---- readv, writev ---- */
REAL(ssize_t, readv, int, const struct iovec *, int);
REAL(ssize_t, writev, int, const struct iovec *, int);

/* The first bytes of the `len` transferred through iov, gathered. */
static void iov_field(struct shim_call *c, const struct iovec *iov, int cnt, ssize_t len)
{
    if (len < 0 || iov == NULL) {
        shim_nodata(c);
        return;
    }
    unsigned char tmp[SHIM_PAYLOAD_MAX];
    size_t want = (size_t)len < shim_cfg.strsize ? (size_t)len : shim_cfg.strsize;
    size_t n = 0;
    for (int i = 0; i < cnt && n < want; i++) {
        size_t take = iov[i].iov_len < want - n ? iov[i].iov_len : want - n;
        memcpy(tmp + n, iov[i].iov_base, take);
        n += take;
    }
    shim_var(c, tmp, n, SIZE_MAX);
    if (n < (size_t)len)
        c->flags |= POSIXTRACE_CALL_DATA_CUT;
}

static SHIM_NOINLINE ssize_t rwv_rec(int wr, int fd, const struct iovec *iov, int cnt,
                                     const void *ra)
{
    struct shim_call c;
    unsigned ev = wr ? POSIXTRACE_EV_WRITEV : POSIXTRACE_EV_READV;
    if (!shim_begin(&c, ev, ra))
        return wr ? NEXT(writev)(fd, iov, cnt) : NEXT(readv)(fd, iov, cnt);
    shim_args(2, fd, cnt, 0);
    ssize_t r = wr ? NEXT(writev)(fd, iov, cnt) : NEXT(readv)(fd, iov, cnt);
    shim_end(&c, r, r < 0);
    if (wr)
        shim_fix_writev(&c, fd, cnt);
    else
        shim_fix_readv(&c, fd, cnt);
    iov_field(&c, iov, cnt, r);
    shim_emit(&c);
    return r;
}

SHIM_API ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    if (WANT(READV))
        return NEXT(readv)(fd, iov, cnt);
    return rwv_rec(0, fd, iov, cnt, RA());
}

SHIM_API ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    if (WANT(WRITEV))
        return NEXT(writev)(fd, iov, cnt);
    return rwv_rec(1, fd, iov, cnt, RA());
}

/* ---- lseek ---- */
REAL(off_t, lseek, int, off_t, int);
REAL(off_t, lseek64, int, off_t, int);

static SHIM_NOINLINE off_t lseek_rec(int is64, int fd, off_t off, int whence, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_LSEEK, ra))
        return is64 ? NEXT(lseek64)(fd, off, whence) : NEXT(lseek)(fd, off, whence);
    off_t r = is64 ? NEXT(lseek64)(fd, off, whence) : NEXT(lseek)(fd, off, whence);
    shim_end(&c, r, r < 0);
    shim_fix_lseek(&c, fd, off, whence);
    shim_emit(&c);
    return r;
}

SHIM_API off_t lseek(int fd, off_t off, int whence)
{
    if (WANT(LSEEK))
        return NEXT(lseek)(fd, off, whence);
    return lseek_rec(0, fd, off, whence, RA());
}

SHIM_API off_t lseek64(int fd, off_t off, int whence)
{
    if (WANT(LSEEK))
        return NEXT(lseek64)(fd, off, whence);
    return lseek_rec(1, fd, off, whence, RA());
}
