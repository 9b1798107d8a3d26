/*
 * One trapped system call's payload, from its descriptor
 * (<posixtrace/syscalls.def> through posixtrace_event_desc()): field i is
 * argument i. The same layout as the shim's events (header, fixed fields,
 * variable fields), so the tools decode it with the same generic code.
 */
#include "../shim.h"
#include "sud.h"

#include <poll.h>
#include <string.h>
#include <sys/epoll.h>

/* A fixed argument as its display type reads it: int arguments arrive in
 * 64-bit registers whose upper half the kernel ignores. */
static uint64_t fixed_value(int type, long v)
{
    switch (type) {
    case POSIXTRACE_F_FD: case POSIXTRACE_F_PID: case POSIXTRACE_F_SIGNAL:
    case POSIXTRACE_F_WHENCE: case POSIXTRACE_F_SOCKFAM: case POSIXTRACE_F_FCNTLCMD:
    case POSIXTRACE_F_SIGHOW: case POSIXTRACE_F_EPOLLOP:
        return (uint64_t)(int64_t)(int32_t)v;
    case POSIXTRACE_F_OFLAGS: case POSIXTRACE_F_MODE: case POSIXTRACE_F_ATFLAGS:
    case POSIXTRACE_F_SOCKTYPE: case POSIXTRACE_F_MSGFLAGS: case POSIXTRACE_F_IOCTLREQ:
        return (uint32_t)v;
    default:
        return (uint64_t)v;
    }
}

/* A buffer's valid bytes: what the call transferred (its result), at most
 * the size the program gave (the next argument). */
static ssize_t buf_len(const struct posixtrace_event_desc *d, unsigned i, const long *a, long ret)
{
    if (ret < 0)
        return -1;
    if (i + 1 < d->nfields && d->fields[i + 1].type < POSIXTRACE_F_VARIABLE &&
        (unsigned long)a[i + 1] < (unsigned long)ret)
        return (ssize_t)a[i + 1];
    return (ssize_t)ret;
}

/* n bytes at p over probed pages (the call may not have read them), at
 * most what the payload has room for; NULL: an empty field. */
static void probed(struct shim_call *c, const void *p, size_t n)
{
    struct shim_pages pg = SHIM_PAGES_INIT;
    uint32_t room = shim_room(c);
    if (n > room)
        n = room;
    if (p == NULL)
        shim_var(c, NULL, 0, 0);
    else if (shim_readable(&pg, p, n))
        shim_var(c, p, n, n);
    else
        shim_nodata(c);
}

/* poll's array, nfds the next argument: after a successful call as the
 * kernel left it (revents filled), else probed, revents 0. */
static void pollfds(struct shim_call *c, const void *p, unsigned long nfds, long ret, bool before)
{
    uint32_t at = c->n + 4;
    size_t n = nfds < SHIM_PAYLOAD_MAX ? nfds * sizeof(struct pollfd) : SHIM_PAYLOAD_MAX;
    if (before || ret < 0) {
        probed(c, p, n);
        for (uint32_t i = at; i + sizeof(struct pollfd) <= c->n; i += sizeof(struct pollfd))
            memset(c->p.buf + i + offsetof(struct pollfd, revents), 0, sizeof(short));
    } else {
        shim_var(c, p, n, n);
    }
}

/* epoll_wait's array (as many as its result), or epoll_ctl's one event
 * (the last argument; probed: EPOLL_CTL_DEL does not read it). */
static void epollevs(struct shim_call *c, const struct posixtrace_event_desc *d, unsigned i,
                     const void *p, long ret, bool before)
{
    if (i + 1 == d->nfields)
        probed(c, p, sizeof(struct epoll_event));
    else if (before || ret <= 0)
        shim_var(c, NULL, 0, 0);
    else
        shim_var(c, p, (size_t)ret * sizeof(struct epoll_event), SHIM_PAYLOAD_MAX);
}

static void var_field(struct shim_call *c, const struct posixtrace_event_desc *d, unsigned i,
                      const long *a, long ret, bool before)
{
    const void *p = (const void *)a[i];
    switch (d->fields[i].type) {
    case POSIXTRACE_F_STR:
        if (p == NULL)
            shim_nodata(c);
        else if (before)
            shim_str_safe(c, p);
        else
            shim_str_after(c, p, ret >= 0);
        break;
    case POSIXTRACE_F_ARGV:
        if (before || ret < 0)
            shim_argv_safe(c, (char *const *)p);
        else
            shim_argv(c, (char *const *)p);
        break;
    case POSIXTRACE_F_BUF:
        if (before)
            shim_nodata(c);
        else
            shim_buf(c, p, buf_len(d, i, a, ret));
        break;
    case POSIXTRACE_F_POLLFDS:
        pollfds(c, p, (unsigned long)a[i + 1], ret, before);
        break;
    case POSIXTRACE_F_EPOLLEVS:
        epollevs(c, d, i, p, ret, before);
        break;
    case POSIXTRACE_F_TIMESPEC: case POSIXTRACE_F_TIMEVAL:
        probed(c, p, 16);
        break;
    default:
        shim_nodata(c);
        break;
    }
}

void shim_sud_capture(struct shim_call *c, const struct posixtrace_event_desc *d, const long *a,
                      long ret, bool before)
{
    unsigned nf = d->nfields < 6 ? d->nfields : 6;
    int nvar = 0;
    for (unsigned i = 0; i < nf; i++) {
        if (d->fields[i].type >= POSIXTRACE_F_VARIABLE) {
            nvar++;
            continue;
        }
        uint64_t v = fixed_value(d->fields[i].type, a[i]);
        memcpy(c->p.buf + c->n, &v, 8);
        c->n += 8;
    }
    c->vleft = nvar;
    for (unsigned i = 0; i < nf; i++)
        if (d->fields[i].type >= POSIXTRACE_F_VARIABLE)
            var_field(c, d, i, a, ret, before);
}
