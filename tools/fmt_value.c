/*
 * Symbolic forms of the values of system event fields (by field type), and
 * of errno values and signals, from the generated tables of xlat.h.
 */
#include "ptools.h"
#include "xlat.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* The name of v in t, else v in decimal. */
static void value_fmt(GString *s, const struct pt_xlat *t, int64_t v)
{
    const char *n = pt_xlat_name(t, (uint64_t)v);
    if (n != NULL)
        g_string_append(s, n);
    else
        pt_append_i64(s, v);
}

/* The flags of v named by t, '|'-separated, unnamed bits in hex; 0 as "0". */
static void flags_fmt(GString *s, const struct pt_xlat *t, uint64_t v)
{
    char b[512];
    g_string_append(s, pt_xlat_flags(b, sizeof b, t, v));
}

/* The access mode once (O_RDONLY is 0), then the other flags; with O_PATH
 * the access mode is ignored by the kernel and not shown. */
static void oflags_fmt(GString *s, uint64_t v)
{
    if ((v & O_PATH) == 0) {
        const char *acc = pt_xlat_name(pt_xlat_open_access, v & O_ACCMODE);
        g_string_append(s, acc != NULL ? acc : "O_ACCMODE");
        v &= ~(uint64_t)O_ACCMODE;
        if (v == 0)
            return;
        g_string_append_c(s, '|');
    }
    flags_fmt(s, pt_xlat_open_flags, v);
}

/* The type (low 4 bits), then SOCK_CLOEXEC, SOCK_NONBLOCK and other bits. */
static void socktype_fmt(GString *s, uint64_t v)
{
    value_fmt(s, pt_xlat_sock_types, (int64_t)(v & 0xf));
    v &= ~(uint64_t)0xf;
    if (v != 0) {
        g_string_append_c(s, '|');
        flags_fmt(s, pt_xlat_sock_flags, v);
    }
}

static void wstatus_fmt(GString *s, int st)
{
    char b[32];
    if (WIFEXITED(st))
        g_string_append_printf(s, "exit(%d)", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        g_string_append_printf(s, "%s%s", pt_signal_name(WTERMSIG(st), b, sizeof b),
                               WCOREDUMP(st) ? "|core" : "");
    else if (WIFSTOPPED(st))
        g_string_append_printf(s, "stopped(%s)", pt_signal_name(WSTOPSIG(st), b, sizeof b));
    else if (WIFCONTINUED(st))
        g_string_append(s, "continued");
    else
        g_string_append_printf(s, "%#x", (unsigned)st);
}

const char *pt_signal_name(int sig, char *buf, size_t size)
{
    const char *n = sig > 0 ? pt_xlat_name(pt_xlat_signals, (uint64_t)sig) : NULL;
    if (n != NULL)
        snprintf(buf, size, "%s", n);
    else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
        snprintf(buf, size, "SIGRTMIN+%d", sig - SIGRTMIN);
    else
        snprintf(buf, size, "%d", sig);
    return buf;
}

const char *pt_errno_name(int e, char *buf, size_t size)
{
    const char *n = e > 0 ? pt_xlat_name(pt_xlat_errnos, (uint64_t)e) : NULL;
    if (n != NULL)
        return n;
    snprintf(buf, size, "E%d", e);
    return buf;
}

int pt_fixed_is_number(int type)
{
    return type == POSIXTRACE_F_INT || type == POSIXTRACE_F_UINT || type == POSIXTRACE_F_FD ||
           type == POSIXTRACE_F_PID || type <= 0 || (type > POSIXTRACE_F_EPOLLOP &&
                                                     type < POSIXTRACE_F_VARIABLE);
}

void pt_fmt_fixed(GString *s, int type, uint64_t v)
{
    int64_t i = (int64_t)v;
    char b[32];
    switch (type) {
    case POSIXTRACE_F_INT: case POSIXTRACE_F_PID:
        pt_append_i64(s, i);
        break;
    case POSIXTRACE_F_UINT:
        pt_append_u64(s, v);
        break;
    case POSIXTRACE_F_FD:
        if (i == AT_FDCWD)
            g_string_append(s, "AT_FDCWD");
        else
            pt_append_i64(s, i);
        break;
    case POSIXTRACE_F_OFLAGS: oflags_fmt(s, v); break;
    case POSIXTRACE_F_MODE: g_string_append_printf(s, "%#" G_GINT64_MODIFIER "o", (guint64)v); break;
    case POSIXTRACE_F_SIGNAL: g_string_append(s, pt_signal_name((int)i, b, sizeof b)); break;
    case POSIXTRACE_F_WHENCE: value_fmt(s, pt_xlat_whence, i); break;
    case POSIXTRACE_F_SOCKFAM: value_fmt(s, pt_xlat_address_families, i); break;
    case POSIXTRACE_F_SOCKTYPE: socktype_fmt(s, v); break;
    case POSIXTRACE_F_MSGFLAGS: flags_fmt(s, pt_xlat_msg_flags, v); break;
    case POSIXTRACE_F_WSTATUS: wstatus_fmt(s, (int)i); break;
    case POSIXTRACE_F_ATFLAGS: flags_fmt(s, pt_xlat_at_flags, v); break;
    case POSIXTRACE_F_PROT:
        if (v == 0)
            g_string_append(s, "PROT_NONE");
        else
            flags_fmt(s, pt_xlat_mmap_prot, v);
        break;
    case POSIXTRACE_F_MAPFLAGS: flags_fmt(s, pt_xlat_mmap_flags, v); break;
    case POSIXTRACE_F_FCNTLCMD: value_fmt(s, pt_xlat_fcntl_cmds, i); break;
    case POSIXTRACE_F_SIGHOW: value_fmt(s, pt_xlat_sig_how, i); break;
    case POSIXTRACE_F_EPOLLOP: value_fmt(s, pt_xlat_epoll_ops, i); break;
    case POSIXTRACE_F_IOCTLREQ:
        if (pt_xlat_name(pt_xlat_ioctl_reqs, v) != NULL)
            g_string_append(s, pt_xlat_name(pt_xlat_ioctl_reqs, v));
        else
            g_string_append_printf(s, "%#" G_GINT64_MODIFIER "x", (guint64)v);
        break;
    case POSIXTRACE_F_HEX:
        g_string_append_printf(s, "%#" G_GINT64_MODIFIER "x", (guint64)v);
        break;
    case POSIXTRACE_F_DOUBLE: {
        double d;
        memcpy(&d, &v, sizeof d);
        g_string_append_printf(s, "%g", d);
        break;
    }
    default: /* types this version does not know: as F_INT (events.h) */
        pt_append_i64(s, i);
        break;
    }
}

void pt_fmt_fixed_field(GString *s, const struct pt_field *f)
{
    switch (f->show) {
    case PT_SHOW_FDFLAGS: flags_fmt(s, pt_xlat_fd_flags, f->u); break;
    case PT_SHOW_SOCKFLAGS: flags_fmt(s, pt_xlat_sock_flags, f->u); break;
    case PT_SHOW_WAITOPTS: flags_fmt(s, pt_xlat_wait_options, f->u); break;
    case PT_SHOW_FDCLOEXEC: flags_fmt(s, pt_xlat_fd_cloexec, f->u); break;
    case PT_SHOW_OFLAGS: oflags_fmt(s, f->u); break;
    default: pt_fmt_fixed(s, f->type, f->u); break;
    }
}

static void inet_fmt(GString *s, int fam, const void *addr, const unsigned char *port)
{
    char b[INET6_ADDRSTRLEN];
    unsigned p = (unsigned)port[0] << 8 | port[1];
    if (inet_ntop(fam, addr, b, sizeof b) == NULL)
        g_strlcpy(b, "?", sizeof b);
    if (fam == AF_INET6)
        g_string_append_printf(s, "AF_INET6 [%s]:%u", b, p);
    else
        g_string_append_printf(s, "AF_INET %s:%u", b, p);
}

void pt_fmt_sockaddr(GString *s, const unsigned char *p, size_t n)
{
    sa_family_t fam;
    if (n < sizeof fam) {
        pt_hex(s, p, n);
        return;
    }
    memcpy(&fam, p, sizeof fam);
    if (fam == AF_INET && n >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in a;
        memcpy(&a, p, sizeof a);
        inet_fmt(s, AF_INET, &a.sin_addr, (const unsigned char *)&a.sin_port);
    } else if (fam == AF_INET6 && n >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 a;
        memcpy(&a, p, sizeof a);
        inet_fmt(s, AF_INET6, &a.sin6_addr, (const unsigned char *)&a.sin6_port);
    } else if (fam == AF_UNIX) {
        size_t off = offsetof(struct sockaddr_un, sun_path), len = n > off ? n - off : 0;
        const unsigned char *path = p + off;
        g_string_append(s, "AF_UNIX ");
        if (len > 0 && path[0] == '\0') { /* abstract */
            g_string_append_c(s, '@');
            path++;
            len--;
        } else if (memchr(path, '\0', len) != NULL) {
            len = (size_t)((const unsigned char *)memchr(path, '\0', len) - path);
        }
        pt_esc_c(s, path, len, 0, 0);
    } else {
        value_fmt(s, pt_xlat_address_families, fam);
        g_string_append_c(s, ' ');
        pt_hex(s, p + sizeof fam, n - sizeof fam);
    }
}
