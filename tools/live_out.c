/*
 * The live view's output: a stdio stream (fopencookie) with a 1 MiB buffer
 * over the descriptor of stderr or --print-to FILE, so that a million lines
 * a second take a few write(2)s rather than one each. What goes out always
 * ends at a line's end, and into a pipe or a terminal in writes of at most
 * PIPE_BUF bytes: the traced program, which usually shares stderr, cannot
 * land in the middle of a line (a write of up to PIPE_BUF bytes to a pipe is
 * not interleaved with another's). A regular file gets one write per flush.
 */
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CARRY_MAX ((size_t)1 << 20) /* a line longer than this goes out in pieces */

struct live_out {
    int fd;
    int whole;                 /* a regular file: no need to cut at PIPE_BUF */
    int err;                   /* the first write error (errno), 0 */
    GString *carry;            /* the start of a line not yet complete */
};

static int write_all(struct live_out *lo, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(lo->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            if (lo->err == 0)
                lo->err = errno;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Whole lines of p[0..n): one write, or pieces of at most PIPE_BUF bytes
 * each ending at a line's end (a longer line alone). */
static int write_lines(struct live_out *lo, const char *p, size_t n)
{
    if (lo->whole)
        return write_all(lo, p, n);
    while (n > 0) {
        size_t k = n <= PIPE_BUF ? n : PIPE_BUF;
        const char *nl = memrchr(p, '\n', k);
        if (n > PIPE_BUF && nl == NULL)
            nl = memchr(p, '\n', n);
        if (n > PIPE_BUF)
            k = nl != NULL ? (size_t)(nl - p) + 1 : n;
        if (write_all(lo, p, k) != 0)
            return -1;
        p += k;
        n -= k;
    }
    return 0;
}

static ssize_t lo_write(void *cookie, const char *buf, size_t size)
{
    struct live_out *lo = cookie;
    if (lo->err != 0) {
        errno = lo->err;
        return -1;
    }
    g_string_append_len(lo->carry, buf, (gssize)size);
    const char *nl = memrchr(lo->carry->str, '\n', lo->carry->len);
    size_t n = nl != NULL ? (size_t)(nl - lo->carry->str) + 1 : 0;
    if (lo->carry->len > CARRY_MAX)
        n = lo->carry->len;
    int rc = write_lines(lo, lo->carry->str, n);
    g_string_erase(lo->carry, 0, (gssize)n);
    if (rc != 0) {
        errno = lo->err;
        return -1;
    }
    return (ssize_t)size;
}

static int lo_close(void *cookie)
{
    struct live_out *lo = cookie;
    int rc = lo->carry->len > 0 ? write_lines(lo, lo->carry->str, lo->carry->len) : 0;
    g_string_free(lo->carry, TRUE);
    g_free(lo);
    return rc;
}

FILE *run_live_out(int fd)
{
    struct stat st;
    struct live_out *lo = g_new0(struct live_out, 1);
    cookie_io_functions_t io = { .write = lo_write, .close = lo_close };
    lo->fd = fd;
    lo->whole = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    lo->carry = g_string_new(NULL);
    FILE *fp = fopencookie(lo, "w", io);
    if (fp == NULL) {
        g_string_free(lo->carry, TRUE);
        g_free(lo);
        return NULL;
    }
    setvbuf(fp, NULL, _IOFBF, RUN_OUT_BUFFER);
    return fp;
}
