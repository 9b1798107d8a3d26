/*
 * Sockets: socket, bind, listen, accept, accept4, connect, send, sendto,
 * sendmsg, recv (+ __recv_chk), recvfrom (+ __recvfrom_chk), recvmsg,
 * shutdown. Socket addresses are recorded as the struct sockaddr bytes
 * (addrlen of them; for accept and recvfrom the peer address the call
 * returned), decoded by the tools from sa_family (doc/events.md).
 *
 * What the kernel reads or writes is read after a successful call, which
 * proves it valid. Two things must be known before the call: the room of a
 * returned address (*addrlen, msg_namelen), which the call overwrites with
 * the address's true size, read with shim_peek (a probe unless it lies in the
 * wrapper's stack page); a bad one is not read, and the call fails with
 * EFAULT as it would. An address passed in is read after a failure over
 * probed pages only (the call may fail before reading it: EBADF, EINVAL).
 */
#include "shim.h"

#include <string.h>
#include <sys/socket.h>

#define WANT(ev) likely(!posixtrace_wanted(POSIXTRACE_EV_##ev))

/* An address the caller passed in: the call read min(len, 128) bytes of it
 * if it succeeded (a longer len fails with EINVAL); after a failure, read
 * only if its pages are readable. */
static void addr_in(struct shim_call *c, const struct sockaddr *a, socklen_t len, int r)
{
    size_t n = len < sizeof(struct sockaddr_storage) ? len : sizeof(struct sockaddr_storage);
    struct shim_pages pg = SHIM_PAGES_INIT;
    if (a == NULL)
        shim_var(c, NULL, 0, 0); /* no address */
    else if (r < 0 && !shim_readable(&pg, a, n))
        shim_nodata(c);
    else
        shim_var(c, a, len, sizeof(struct sockaddr_storage)); /* reads n at most */
}

/* An address the call filled in: `cap` bytes of room (read before the call,
 * have_cap: it was readable), `*len` the true size (written by the call). */
static void addr_out(struct shim_call *c, const struct sockaddr *a, socklen_t cap,
                     bool have_cap, const socklen_t *len, int ok)
{
    if (a == NULL || len == NULL)
        shim_var(c, NULL, 0, 0); /* not asked for */
    else if (!ok || !have_cap)
        shim_nodata(c);
    else
        shim_var(c, a, *len < cap ? *len : cap, sizeof(struct sockaddr_storage));
}

REAL(int, socket, int, int, int);

static SHIM_NOINLINE int socket_rec(int d, int t, int p, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_SOCKET, ra))
        return NEXT(socket)(d, t, p);
    int r = NEXT(socket)(d, t, p);
    shim_end(&c, r, r < 0);
    shim_fix_socket(&c, d, t, p, shim_fd_ino(r));
    shim_emit(&c);
    return r;
}

SHIM_API int socket(int d, int t, int p)
{
    if (WANT(SOCKET))
        return NEXT(socket)(d, t, p);
    return socket_rec(d, t, p, RA());
}

/* socketpair: the two descriptors are read only after a successful call */
REAL(int, socketpair, int, int, int, int[2]);

static SHIM_NOINLINE int socketpair_rec(int d, int t, int p, int sv[2], const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_SOCKETPAIR, ra))
        return NEXT(socketpair)(d, t, p, sv);
    int r = NEXT(socketpair)(d, t, p, sv);
    shim_end(&c, r, r < 0);
    shim_fix_socketpair(&c, d, t, p, r == 0 ? sv[0] : -1, r == 0 ? sv[1] : -1,
                        r == 0 ? shim_fd_ino(sv[0]) : 0, r == 0 ? shim_fd_ino(sv[1]) : 0);
    shim_emit(&c);
    return r;
}

SHIM_API int socketpair(int d, int t, int p, int sv[2])
{
    if (WANT(SOCKETPAIR))
        return NEXT(socketpair)(d, t, p, sv);
    return socketpair_rec(d, t, p, sv, RA());
}

/* bind and connect */
REAL(int, bind, int, const struct sockaddr *, socklen_t);
REAL(int, connect, int, const struct sockaddr *, socklen_t);

static SHIM_NOINLINE int addr_rec(int conn, int fd, const struct sockaddr *a, socklen_t len,
                                  const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, conn ? POSIXTRACE_EV_CONNECT : POSIXTRACE_EV_BIND, ra))
        return conn ? NEXT(connect)(fd, a, len) : NEXT(bind)(fd, a, len);
    shim_args(1, fd, 0, 0);
    int r = conn ? NEXT(connect)(fd, a, len) : NEXT(bind)(fd, a, len);
    shim_end(&c, r, r < 0);
    if (conn)
        shim_fix_connect(&c, fd);
    else
        shim_fix_bind(&c, fd);
    addr_in(&c, a, len, r);
    shim_emit(&c);
    return r;
}

SHIM_API int bind(int fd, const struct sockaddr *a, socklen_t len)
{
    if (WANT(BIND))
        return NEXT(bind)(fd, a, len);
    return addr_rec(0, fd, a, len, RA());
}

SHIM_API int connect(int fd, const struct sockaddr *a, socklen_t len)
{
    if (WANT(CONNECT))
        return NEXT(connect)(fd, a, len);
    return addr_rec(1, fd, a, len, RA());
}

REAL(int, listen, int, int);

static SHIM_NOINLINE int listen_rec(int fd, int backlog, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_LISTEN, ra))
        return NEXT(listen)(fd, backlog);
    int r = NEXT(listen)(fd, backlog);
    shim_end(&c, r, r < 0);
    shim_fix_listen(&c, fd, backlog);
    shim_emit(&c);
    return r;
}

SHIM_API int listen(int fd, int backlog)
{
    if (WANT(LISTEN))
        return NEXT(listen)(fd, backlog);
    return listen_rec(fd, backlog, RA());
}

REAL(int, accept, int, struct sockaddr *, socklen_t *);
REAL(int, accept4, int, struct sockaddr *, socklen_t *, int);

static SHIM_NOINLINE int accept_rec(int four, int fd, struct sockaddr *a, socklen_t *len,
                                    int flags, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_ACCEPT, ra))
        return four ? NEXT(accept4)(fd, a, len, flags) : NEXT(accept)(fd, a, len);
    shim_args(2, fd, flags, 0);
    socklen_t cap = 0; /* len is used only with an address (the kernel ignores it) */
    bool have_cap = a != NULL && len != NULL && shim_peek(&cap, len, sizeof cap, SHIM_FRAME());
    int r = four ? NEXT(accept4)(fd, a, len, flags) : NEXT(accept)(fd, a, len);
    shim_end(&c, r, r < 0);
    c.flags |= POSIXTRACE_CALL_WITH_FN(four ? POSIXTRACE_FN_ACCEPT4 : POSIXTRACE_FN_ACCEPT);
    shim_fix_accept(&c, fd, flags);
    addr_out(&c, a, cap, have_cap, len, r >= 0);
    shim_emit(&c);
    return r;
}

SHIM_API int accept(int fd, struct sockaddr *a, socklen_t *len)
{
    if (WANT(ACCEPT))
        return NEXT(accept)(fd, a, len);
    return accept_rec(0, fd, a, len, 0, RA());
}

SHIM_API int accept4(int fd, struct sockaddr *a, socklen_t *len, int flags)
{
    if (WANT(ACCEPT))
        return NEXT(accept4)(fd, a, len, flags);
    return accept_rec(1, fd, a, len, flags, RA());
}

/* ---- send, sendto ---- */
REAL(ssize_t, send, int, const void *, size_t, int);
REAL(ssize_t, sendto, int, const void *, size_t, int, const struct sockaddr *, socklen_t);

static SHIM_NOINLINE ssize_t send_rec(int to, int fd, const void *buf, size_t n, int flags,
                                      const struct sockaddr *a, socklen_t alen, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_SEND, ra))
        return to ? NEXT(sendto)(fd, buf, n, flags, a, alen) : NEXT(send)(fd, buf, n, flags);
    shim_args(3, fd, (int64_t)n, flags);
    ssize_t r = to ? NEXT(sendto)(fd, buf, n, flags, a, alen) : NEXT(send)(fd, buf, n, flags);
    shim_end(&c, r, r < 0);
    shim_fix_send(&c, fd, n, flags);
    addr_in(&c, a, alen, (int)r);
    shim_buf(&c, buf, r);
    shim_emit(&c);
    return r;
}

SHIM_API ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    if (WANT(SEND))
        return NEXT(send)(fd, buf, n, flags);
    return send_rec(0, fd, buf, n, flags, NULL, 0, RA());
}

SHIM_API ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *a,
                        socklen_t alen)
{
    if (WANT(SEND))
        return NEXT(sendto)(fd, buf, n, flags, a, alen);
    return send_rec(1, fd, buf, n, flags, a, alen, RA());
}

/* ---- recv, recvfrom and their fortified forms ---- */
enum rkind { K_RECV, K_RECV_CHK, K_RECVFROM, K_RECVFROM_CHK, K_N };
static void *real[K_N];
static const char *const names[K_N] = { "recv", "__recv_chk", "recvfrom", "__recvfrom_chk" };
typedef ssize_t (*recv_fn)(int, void *, size_t, int);
typedef ssize_t (*recv_chk_fn)(int, void *, size_t, size_t, int);
typedef ssize_t (*recvfrom_fn)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
typedef ssize_t (*recvfrom_chk_fn)(int, void *, size_t, size_t, int, struct sockaddr *,
                                   socklen_t *);
#define FN(k) shim_get(&real[k], names[k])

static ssize_t call_recv(enum rkind k, int fd, void *buf, size_t n, size_t buflen, int flags,
                         struct sockaddr *a, socklen_t *alen)
{
    switch (k) {
    case K_RECV: return ((recv_fn)FN(k))(fd, buf, n, flags);
    case K_RECV_CHK: return ((recv_chk_fn)FN(k))(fd, buf, n, buflen, flags);
    case K_RECVFROM: return ((recvfrom_fn)FN(k))(fd, buf, n, flags, a, alen);
    default: return ((recvfrom_chk_fn)FN(k))(fd, buf, n, buflen, flags, a, alen);
    }
}

/* The received bytes. With MSG_TRUNC the result is the datagram's true
 * length, which may exceed the buffer, and a stream socket discards the data
 * without touching the buffer: not read (NODATA). */
static void recv_data(struct shim_call *c, const void *buf, ssize_t r, int flags)
{
    if ((flags & MSG_TRUNC) != 0 && r > 0)
        shim_nodata(c);
    else
        shim_buf(c, buf, r);
}

static SHIM_NOINLINE ssize_t recv_rec(enum rkind k, int fd, void *buf, size_t n, size_t buflen,
                                      int flags, struct sockaddr *a, socklen_t *alen,
                                      const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_RECV, ra))
        return call_recv(k, fd, buf, n, buflen, flags, a, alen);
    shim_args(3, fd, (int64_t)n, flags);
    socklen_t cap = 0; /* alen is used only with an address (the kernel ignores it) */
    bool have_cap = a != NULL && alen != NULL && shim_peek(&cap, alen, sizeof cap, SHIM_FRAME());
    ssize_t r = call_recv(k, fd, buf, n, buflen, flags, a, alen);
    shim_end(&c, r, r < 0);
    shim_fix_recv(&c, fd, n, flags);
    addr_out(&c, a, cap, have_cap, alen, r >= 0);
    recv_data(&c, buf, r, flags);
    shim_emit(&c);
    return r;
}

SHIM_API ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    if (WANT(RECV))
        return ((recv_fn)FN(K_RECV))(fd, buf, n, flags);
    return recv_rec(K_RECV, fd, buf, n, 0, flags, NULL, NULL, RA());
}

SHIM_API ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
    if (WANT(RECV))
        return ((recv_chk_fn)FN(K_RECV_CHK))(fd, buf, n, buflen, flags);
    return recv_rec(K_RECV_CHK, fd, buf, n, buflen, flags, NULL, NULL, RA());
}

SHIM_API ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *a,
                          socklen_t *alen)
{
    if (WANT(RECV))
        return ((recvfrom_fn)FN(K_RECVFROM))(fd, buf, n, flags, a, alen);
    return recv_rec(K_RECVFROM, fd, buf, n, 0, flags, a, alen, RA());
}

SHIM_API ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
                                struct sockaddr *a, socklen_t *alen)
{
    if (WANT(RECV))
        return ((recvfrom_chk_fn)FN(K_RECVFROM_CHK))(fd, buf, n, buflen, flags, a, alen);
    return recv_rec(K_RECVFROM_CHK, fd, buf, n, buflen, flags, a, alen, RA());
}

/* ---- sendmsg, recvmsg ---- */
REAL(ssize_t, sendmsg, int, const struct msghdr *, int);
REAL(ssize_t, recvmsg, int, struct msghdr *, int);

/* The first bytes of the `len` transferred through the message's iovecs. */
static void msg_data(struct shim_call *c, const struct msghdr *m, ssize_t len)
{
    unsigned char tmp[SHIM_PAYLOAD_MAX];
    size_t want = (size_t)len < shim_cfg.strsize ? (size_t)len : shim_cfg.strsize;
    size_t n = 0;
    for (size_t i = 0; i < m->msg_iovlen && n < want; i++) {
        size_t take = m->msg_iov[i].iov_len < want - n ? m->msg_iov[i].iov_len : want - n;
        memcpy(tmp + n, m->msg_iov[i].iov_base, take);
        n += take;
    }
    shim_var(c, tmp, n, SIZE_MAX);
    if (n < (size_t)len)
        c->flags |= POSIXTRACE_CALL_DATA_CUT;
}

static SHIM_NOINLINE ssize_t msg_rec(int rcv, int fd, struct msghdr *m, int flags,
                                     const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, rcv ? POSIXTRACE_EV_RECVMSG : POSIXTRACE_EV_SENDMSG, ra))
        return rcv ? NEXT(recvmsg)(fd, m, flags) : NEXT(sendmsg)(fd, m, flags);
    shim_args(2, fd, flags, 0);
    /* recvmsg overwrites msg_namelen (the room) with the address's size */
    socklen_t cap = 0;
    bool have_cap = !rcv || (m != NULL && shim_peek(&cap, &m->msg_namelen, sizeof cap,
                                                     SHIM_FRAME()));
    ssize_t r = rcv ? NEXT(recvmsg)(fd, m, flags) : NEXT(sendmsg)(fd, m, flags);
    shim_end(&c, r, r < 0);
    bool ok = r >= 0 && m != NULL; /* the call read *m */
    if (ok && !rcv)
        cap = m->msg_namelen;
    int64_t iovlen = ok ? (int64_t)m->msg_iovlen : 0;
    if (rcv)
        shim_fix_recvmsg(&c, fd, flags, iovlen);
    else
        shim_fix_sendmsg(&c, fd, flags, iovlen);
    if (ok && m->msg_name != NULL && have_cap)
        shim_var(&c, m->msg_name, m->msg_namelen < cap ? m->msg_namelen : cap,
                 sizeof(struct sockaddr_storage));
    else if (ok && m->msg_name == NULL)
        shim_var(&c, NULL, 0, 0);
    else
        shim_nodata(&c);
    if (ok && !(rcv && (flags & MSG_TRUNC) != 0))
        msg_data(&c, m, r);
    else
        shim_nodata(&c);
    shim_emit(&c);
    return r;
}

SHIM_API ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    if (WANT(SENDMSG))
        return NEXT(sendmsg)(fd, m, flags);
    return msg_rec(0, fd, (struct msghdr *)m, flags, RA());
}

SHIM_API ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
    if (WANT(RECVMSG))
        return NEXT(recvmsg)(fd, m, flags);
    return msg_rec(1, fd, m, flags, RA());
}

REAL(int, shutdown, int, int);

static SHIM_NOINLINE int shutdown_rec(int fd, int how, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_SHUTDOWN, ra))
        return NEXT(shutdown)(fd, how);
    int r = NEXT(shutdown)(fd, how);
    shim_end(&c, r, r < 0);
    shim_fix_shutdown(&c, fd, how);
    shim_emit(&c);
    return r;
}

SHIM_API int shutdown(int fd, int how)
{
    if (WANT(SHUTDOWN))
        return NEXT(shutdown)(fd, how);
    return shutdown_rec(fd, how, RA());
}
