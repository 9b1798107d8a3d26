/*
 * Symbolic forms of the values of system event fields (by field type), and
 * of errno values and signals.
 */
#include "ptools.h"

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

struct flagname {
    uint64_t mask;
    const char *name;
};

#define FN(x) { x, #x }

/* Multi-bit flags first: a flag is shown when all its bits are set. */
static const struct flagname oflags[] = {
    FN(O_TMPFILE), FN(O_SYNC), FN(O_CREAT), FN(O_EXCL), FN(O_NOCTTY), FN(O_TRUNC),
    FN(O_APPEND), FN(O_NONBLOCK), FN(O_DSYNC), FN(O_ASYNC), FN(O_DIRECT),
    FN(O_LARGEFILE), FN(O_DIRECTORY), FN(O_NOFOLLOW), FN(O_NOATIME), FN(O_CLOEXEC),
    FN(O_PATH), { 0, NULL }
};

static const struct flagname msgflags[] = {
    FN(MSG_OOB), FN(MSG_PEEK), FN(MSG_DONTROUTE), FN(MSG_CTRUNC), FN(MSG_TRUNC),
    FN(MSG_DONTWAIT), FN(MSG_EOR), FN(MSG_WAITALL), FN(MSG_NOSIGNAL), FN(MSG_MORE),
    FN(MSG_WAITFORONE), FN(MSG_CMSG_CLOEXEC), FN(MSG_ERRQUEUE), FN(MSG_CONFIRM),
    { 0, NULL }
};

static const struct flagname atflags[] = {
    FN(AT_SYMLINK_NOFOLLOW), FN(AT_REMOVEDIR), FN(AT_SYMLINK_FOLLOW), FN(AT_NO_AUTOMOUNT),
    FN(AT_EMPTY_PATH), FN(RENAME_NOREPLACE), FN(RENAME_EXCHANGE), FN(RENAME_WHITEOUT),
    { 0, NULL }
};

static const struct flagname socktypes[] = {
    FN(SOCK_NONBLOCK), FN(SOCK_CLOEXEC), { 0, NULL }
};

/* Appends the names of the flags of v, '|'-separated, and what remains in hex. */
static void flags(GString *s, uint64_t v, const struct flagname *t, int first)
{
    for (; t->name != NULL; t++) {
        if ((v & t->mask) != t->mask)
            continue;
        g_string_append_printf(s, "%s%s", first ? "" : "|", t->name);
        v &= ~t->mask;
        first = 0;
    }
    if (v != 0 || first)
        g_string_append_printf(s, first ? "%#" G_GINT64_MODIFIER "x" : "|%#" G_GINT64_MODIFIER "x",
                               (guint64)v);
}

static void oflags_fmt(GString *s, uint64_t v)
{
    static const char *acc[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE" };
    if ((v & O_PATH) == 0) {
        g_string_append(s, acc[v & O_ACCMODE]);
        v &= ~(uint64_t)O_ACCMODE;
        if (v == 0)
            return;
        g_string_append_c(s, '|');
    }
    flags(s, v, oflags, 1);
}

static const char *table_name(int v, const char *const *names, int n)
{
    return v >= 0 && v < n ? names[v] : NULL;
}

static void sockfam_fmt(GString *s, int64_t v)
{
    static const char *const fam[] = {
        [AF_UNSPEC] = "AF_UNSPEC", [AF_UNIX] = "AF_UNIX", [AF_INET] = "AF_INET",
        [AF_INET6] = "AF_INET6", [AF_NETLINK] = "AF_NETLINK", [AF_PACKET] = "AF_PACKET",
    };
    const char *n = table_name((int)v, fam, (int)G_N_ELEMENTS(fam));
    if (n != NULL && v == (int)v)
        g_string_append(s, n);
    else
        g_string_append_printf(s, "%" G_GINT64_FORMAT, (gint64)v);
}

static void socktype_fmt(GString *s, uint64_t v)
{
    static const char *const ty[] = {
        [SOCK_STREAM] = "SOCK_STREAM", [SOCK_DGRAM] = "SOCK_DGRAM", [SOCK_RAW] = "SOCK_RAW",
        [SOCK_RDM] = "SOCK_RDM", [SOCK_SEQPACKET] = "SOCK_SEQPACKET",
        [SOCK_PACKET] = "SOCK_PACKET",
    };
    int base = (int)(v & 0xf);
    const char *n = table_name(base, ty, (int)G_N_ELEMENTS(ty));
    if (n != NULL)
        g_string_append(s, n);
    else
        g_string_append_printf(s, "%d", base);
    v &= ~(uint64_t)0xf;
    if (v != 0) {
        g_string_append_c(s, '|');
        flags(s, v, socktypes, 1);
    }
}

static void whence_fmt(GString *s, int64_t v)
{
    static const char *const w[] = { "SEEK_SET", "SEEK_CUR", "SEEK_END", "SEEK_DATA", "SEEK_HOLE" };
    const char *n = table_name((int)v, w, (int)G_N_ELEMENTS(w));
    if (n != NULL && v == (int)v)
        g_string_append(s, n);
    else
        g_string_append_printf(s, "%" G_GINT64_FORMAT, (gint64)v);
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
    const char *a = sig > 0 ? sigabbrev_np(sig) : NULL;
    if (a != NULL)
        snprintf(buf, size, "SIG%s", a);
    else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
        snprintf(buf, size, "SIGRTMIN+%d", sig - SIGRTMIN);
    else
        snprintf(buf, size, "%d", sig);
    return buf;
}

const char *pt_errno_name(int e, char *buf, size_t size)
{
    const char *n = strerrorname_np(e);
    if (n != NULL)
        return n;
    snprintf(buf, size, "E%d", e);
    return buf;
}

int pt_fixed_is_number(int type)
{
    return type == POSIXTRACE_F_INT || type == POSIXTRACE_F_UINT || type == POSIXTRACE_F_FD ||
           type == POSIXTRACE_F_PID || type <= 0 || (type > POSIXTRACE_F_ATFLAGS &&
                                                     type < POSIXTRACE_F_VARIABLE);
}

void pt_fmt_fixed(GString *s, int type, uint64_t v)
{
    int64_t i = (int64_t)v;
    char b[32];
    switch (type) {
    case POSIXTRACE_F_INT: case POSIXTRACE_F_PID:
        g_string_append_printf(s, "%" G_GINT64_FORMAT, (gint64)i);
        break;
    case POSIXTRACE_F_UINT:
        g_string_append_printf(s, "%" G_GUINT64_FORMAT, (guint64)v);
        break;
    case POSIXTRACE_F_FD:
        if (i == AT_FDCWD)
            g_string_append(s, "AT_FDCWD");
        else
            g_string_append_printf(s, "%" G_GINT64_FORMAT, (gint64)i);
        break;
    case POSIXTRACE_F_OFLAGS: oflags_fmt(s, v); break;
    case POSIXTRACE_F_MODE: g_string_append_printf(s, "%#" G_GINT64_MODIFIER "o", (guint64)v); break;
    case POSIXTRACE_F_SIGNAL: g_string_append(s, pt_signal_name((int)i, b, sizeof b)); break;
    case POSIXTRACE_F_WHENCE: whence_fmt(s, i); break;
    case POSIXTRACE_F_SOCKFAM: sockfam_fmt(s, i); break;
    case POSIXTRACE_F_SOCKTYPE: socktype_fmt(s, v); break;
    case POSIXTRACE_F_MSGFLAGS:
        if (v == 0)
            g_string_append_c(s, '0');
        else
            flags(s, v, msgflags, 1);
        break;
    case POSIXTRACE_F_WSTATUS: wstatus_fmt(s, (int)i); break;
    case POSIXTRACE_F_ATFLAGS:
        if (v == 0)
            g_string_append_c(s, '0');
        else
            flags(s, v, atflags, 1);
        break;
    case POSIXTRACE_F_HEX:
        g_string_append_printf(s, "%#" G_GINT64_MODIFIER "x", (guint64)v);
        break;
    default: /* types this version does not know: as F_INT (events.h) */
        g_string_append_printf(s, "%" G_GINT64_FORMAT, (gint64)i);
        break;
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
        sockfam_fmt(s, fam);
        g_string_append_c(s, ' ');
        pt_hex(s, p + sizeof fam, n - sizeof fam);
    }
}
