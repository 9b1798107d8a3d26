/*
 * -y / -yy: what each descriptor of each process names, learned from the
 * trace alone (strace's -y shows what /proc says; a log is read later, so
 * here the events tell): the descriptors an image started with (event fds,
 * recorded after process_start when the stream takes it), opens, pipes,
 * sockets (with -yy their protocol and the addresses of bind, connect and
 * accept), dups, fcntl F_DUPFD, closes; a fork child starts with a copy of
 * its parent's table, an exec keeps what is not close-on-exec until the new
 * image's fds event says what it has.
 *
 * Each event is first turned into the changes it makes (changes_of): the
 * text of a result or of an output field (pipe's, fopen's descriptor) is
 * the change's, input fields are named as the table was before the event,
 * and pt_fds_learn applies the changes after the event was written.
 */
#include "ptools.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

enum fd_kind { FD_FILE, FD_PIPE, FD_SOCKET };

struct fd_ent {
    enum fd_kind kind;
    char *name;     /* a path, or a target as /proc/self/fd read it ("pipe:[12]") */
    char *proto;    /* sockets made in the trace: "TCP", "UDPv6", "UNIX"... or NULL */
    char *local, *peer; /* sockets: addresses learned (bind, connect, accept) or NULL */
    char *dev;      /* devices a process started with: "char 136:0" (-yy), or NULL */
    int cloexec;
};

struct proc_fds {
    GHashTable *fd;  /* int fd -> struct fd_ent * */
    int fresh;       /* an image began (process_start): its first fds event replaces all */
    int forked;      /* a fork child whose table was copied from its parent's */
};

struct pt_fds {
    int level;       /* 1: -y, 2: -yy */
    GHashTable *pid; /* pid -> struct proc_fds * */
};

#define CH_MAX 2
struct change {
    int64_t fd;
    struct fd_ent *ent; /* NULL: the descriptor is closed (or no longer known) */
};

static void ent_free(gpointer p)
{
    struct fd_ent *e = p;
    if (e == NULL)
        return;
    g_free(e->name);
    g_free(e->proto);
    g_free(e->local);
    g_free(e->peer);
    g_free(e->dev);
    g_free(e);
}

static struct fd_ent *ent_new(enum fd_kind kind, const char *name, int cloexec)
{
    struct fd_ent *e = g_new0(struct fd_ent, 1);
    e->kind = kind;
    e->name = g_strdup(name);
    e->cloexec = cloexec;
    return e;
}

static struct fd_ent *ent_copy(const struct fd_ent *o, int cloexec)
{
    struct fd_ent *e = ent_new(o->kind, o->name, cloexec);
    e->proto = g_strdup(o->proto);
    e->local = g_strdup(o->local);
    e->peer = g_strdup(o->peer);
    e->dev = g_strdup(o->dev);
    return e;
}

static void proc_free(gpointer p)
{
    struct proc_fds *pf = p;
    g_hash_table_destroy(pf->fd);
    g_free(pf);
}

static struct proc_fds *proc_new(void)
{
    struct proc_fds *pf = g_new0(struct proc_fds, 1);
    pf->fd = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, ent_free);
    return pf;
}

struct pt_fds *pt_fds_new(int level)
{
    struct pt_fds *t = g_new0(struct pt_fds, 1);
    t->level = level;
    t->pid = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, proc_free);
    return t;
}

void pt_fds_free(struct pt_fds *t)
{
    if (t == NULL)
        return;
    g_hash_table_destroy(t->pid);
    g_free(t);
}

int pt_fds_level(const struct pt_fds *t)
{
    return t != NULL ? t->level : 0;
}

static int fd_ok(int64_t fd)
{
    return fd >= 0 && fd <= G_MAXINT;
}

static struct proc_fds *proc_get(struct pt_fds *t, pid_t pid, int create)
{
    struct proc_fds *pf = g_hash_table_lookup(t->pid, GINT_TO_POINTER(pid));
    if (pf == NULL && create) {
        pf = proc_new();
        g_hash_table_insert(t->pid, GINT_TO_POINTER(pid), pf);
    }
    return pf;
}

static const struct fd_ent *lookup(struct pt_fds *t, pid_t pid, int64_t fd)
{
    struct proc_fds *pf = fd_ok(fd) ? proc_get(t, pid, 0) : NULL;
    return pf != NULL ? g_hash_table_lookup(pf->fd, GINT_TO_POINTER((int)fd)) : NULL;
}

/* ---- sockets (-yy) ---- */

static const char *proto_of(int64_t domain, uint64_t type)
{
    int t = (int)(type & 0xf); /* SOCK_CLOEXEC, SOCK_NONBLOCK off */
    switch (domain) {
    case AF_INET: return t == SOCK_STREAM ? "TCP" : t == SOCK_DGRAM ? "UDP" : "INET";
    case AF_INET6: return t == SOCK_STREAM ? "TCPv6" : t == SOCK_DGRAM ? "UDPv6" : "INET6";
    case AF_UNIX: return "UNIX";
    case AF_NETLINK: return "NETLINK";
    default: return NULL;
    }
}

/* "127.0.0.1:80" or "[::1]:80"; NULL for port 0. */
static char *inet_text(int fam, const void *addr, uint16_t port_be)
{
    char b[INET6_ADDRSTRLEN];
    if (port_be == 0 || inet_ntop(fam, addr, b, sizeof b) == NULL)
        return NULL;
    return g_strdup_printf(fam == AF_INET6 ? "[%s]:%u" : "%s:%u", b, ntohs(port_be));
}

/* "127.0.0.1:80", "[::1]:80", a UNIX path ("@name": abstract); NULL if none
 * or, an internet address of port 0 (bind: the kernel picks one the trace
 * does not tell), not known. */
static char *addr_text(const struct pt_field *f)
{
    sa_family_t fam;
    if (f == NULL || f->absent || f->n < sizeof fam)
        return NULL;
    memcpy(&fam, f->p, sizeof fam);
    if (fam == AF_INET && f->n >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in a;
        memcpy(&a, f->p, sizeof a);
        return inet_text(AF_INET, &a.sin_addr, a.sin_port);
    }
    if (fam == AF_INET6 && f->n >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 a;
        memcpy(&a, f->p, sizeof a);
        return inet_text(AF_INET6, &a.sin6_addr, a.sin6_port);
    }
    if (fam == AF_UNIX) {
        size_t off = offsetof(struct sockaddr_un, sun_path);
        const char *p = (const char *)f->p + off;
        size_t n = f->n > off ? f->n - off : 0;
        if (n > 0 && p[0] == '\0')
            return g_strdup_printf("@%.*s", (int)(n - 1), p + 1);
        return n > 0 ? g_strndup(p, n) : NULL;
    }
    return NULL;
}

/* A name from the trace, control bytes and '<', '>' escaped (\x0a): a
 * path may hold anything, and a line of text output stays one line. */
static void name_text(GString *s, const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++) {
        if (*p < 0x20 || *p == 0x7f || *p == '<' || *p == '>' || *p == '\\')
            g_string_append_printf(s, "\\x%02x", *p);
        else
            g_string_append_c(s, (char)*p);
    }
}

/* The text of an entry at the table's level. */
static void ent_text(GString *s, const struct pt_fds *t, const struct fd_ent *e)
{
    if (e->kind != FD_SOCKET || e->proto == NULL) {
        name_text(s, e->name);
        if (t->level >= 2 && e->dev != NULL) /* as strace: /dev/pts/0<char 136:0> */
            g_string_append_printf(s, "<%s>", e->dev);
        return;
    }
    if (t->level < 2) {
        name_text(s, e->name);
        return;
    }
    g_string_append_printf(s, "socket:[%s", e->proto);
    if (e->local != NULL || e->peer != NULL) {
        g_string_append_c(s, ':');
        name_text(s, e->local != NULL ? e->local : "?");
    }
    if (e->peer != NULL) {
        g_string_append(s, "->");
        name_text(s, e->peer);
    }
    g_string_append_c(s, ']');
}

/* ---- what an event changes ---- */

static int64_t ival(const struct pt_event *e, const char *name, int64_t def)
{
    const struct pt_field *f = pt_event_field(e, name);
    return f != NULL && !f->absent ? (int64_t)f->u : def;
}

static char *sval(const struct pt_event *e, const char *name)
{
    const struct pt_field *f = pt_event_field(e, name);
    return f != NULL && !f->absent && f->n > 0 ? g_strndup((const char *)f->p, f->n) : NULL;
}

/* A path relative to a directory descriptor whose name is known. */
static char *path_at(struct pt_fds *t, const struct pt_event *e, char *path)
{
    const struct fd_ent *d;
    int64_t dirfd = ival(e, "dirfd", AT_FDCWD);
    if (path == NULL || path[0] == '/' || dirfd == AT_FDCWD ||
        (d = lookup(t, e->info.posix_pid, dirfd)) == NULL || d->kind != FD_FILE)
        return path;
    char *j = g_build_filename(d->name, path, NULL);
    g_free(path);
    return j;
}

static int add(struct change *ch, int n, int64_t fd, struct fd_ent *ent)
{
    if (n >= CH_MAX || !fd_ok(fd)) {
        ent_free(ent);
        return n;
    }
    ch[n].fd = fd;
    ch[n].ent = ent;
    return n + 1;
}

/* A copy of oldfd's entry at newfd (unknown: newfd no longer known). */
static int dup_to(struct pt_fds *t, const struct pt_event *e, struct change *ch, int n,
                  int64_t oldfd, int64_t newfd, int cloexec)
{
    const struct fd_ent *o = lookup(t, e->info.posix_pid, oldfd);
    return add(ch, n, newfd, o != NULL ? ent_copy(o, cloexec) : NULL);
}

/* "pipe:[INODE]", "socket:[INODE]" as /proc names them (ino 0: not recorded,
 * logs of earlier versions, system calls: "pipe", "socket"). */
static char *ino_name(const char *kind, int64_t ino)
{
    return ino > 0 ? g_strdup_printf("%s:[%" G_GINT64_FORMAT "]", kind, (gint64)ino)
                   : g_strdup(kind);
}

static struct fd_ent *pipe_ent(int64_t ino, int cloexec)
{
    char *n = ino_name("pipe", ino);
    struct fd_ent *p = ent_new(FD_PIPE, n, cloexec);
    g_free(n);
    return p;
}

static struct fd_ent *socket_ent(const char *proto, int cloexec, int64_t ino)
{
    char *n = ino_name("socket", ino);
    struct fd_ent *s = ent_new(FD_SOCKET, n, cloexec);
    g_free(n);
    s->proto = g_strdup(proto != NULL ? proto : "?");
    return s;
}

/* A socket whose addresses an event tells (bind, connect, accept). */
static int sock_addr(struct pt_fds *t, const struct pt_event *e, struct change *ch, int n,
                     int64_t fd, int peer)
{
    const struct fd_ent *o = lookup(t, e->info.posix_pid, fd);
    char *a = addr_text(pt_event_field(e, "addr"));
    if (o == NULL || o->kind != FD_SOCKET || o->proto == NULL || a == NULL) {
        g_free(a);
        return n;
    }
    struct fd_ent *c = ent_copy(o, o->cloexec);
    char **slot = peer ? &c->peer : &c->local;
    g_free(*slot);
    *slot = a;
    return add(ch, n, fd, c);
}

static int accept_changes(struct pt_fds *t, const struct pt_event *e, struct change *ch,
                          int flags_cloexec)
{
    const struct fd_ent *l = lookup(t, e->info.posix_pid, ival(e, "fd", -1));
    struct fd_ent *c = socket_ent(l != NULL ? l->proto : NULL, flags_cloexec, 0);
    if (l != NULL)
        c->local = g_strdup(l->local);
    c->peer = addr_text(pt_event_field(e, "addr"));
    return add(ch, 0, e->hdr.ret, c);
}

/* open, openat, creat: the result names the path (joined to a known dirfd). */
static int open_change(struct pt_fds *t, const struct pt_event *e, struct change *ch)
{
    char *p = path_at(t, e, sval(e, "path"));
    int n = add(ch, 0, e->hdr.ret, p != NULL ? ent_new(FD_FILE, p, (ival(e, "flags", 0) &
                                                                  O_CLOEXEC) != 0) : NULL);
    g_free(p);
    return n;
}

/* The shim's events (8..255). */
static int shim_changes(struct pt_fds *t, const struct pt_event *e, struct change *ch)
{
    int64_t ret = e->hdr.ret;
    switch (e->id) {
    case POSIXTRACE_EV_OPEN:
        return open_change(t, e, ch);
    case POSIXTRACE_EV_CLOSE:
    case POSIXTRACE_EV_FCLOSE:
        return add(ch, 0, ival(e, "fd", -1), NULL);
    case POSIXTRACE_EV_DUP: {
        int64_t newfd = ival(e, "newfd", -1);
        return dup_to(t, e, ch, 0, ival(e, "oldfd", -1), newfd >= 0 ? newfd : ret,
                      (ival(e, "flags", 0) & O_CLOEXEC) != 0);
    }
    case POSIXTRACE_EV_PIPE: {
        int ce = (ival(e, "flags", 0) & O_CLOEXEC) != 0;
        int64_t ino = ival(e, "ino", 0);
        int n = add(ch, 0, ival(e, "rfd", -1), pipe_ent(ino, ce));
        return add(ch, n, ival(e, "wfd", -1), pipe_ent(ino, ce));
    }
    case POSIXTRACE_EV_FOPEN:
    case POSIXTRACE_EV_FREOPEN: {
        char *path = sval(e, "path"), *mode = sval(e, "mode");
        struct fd_ent *f = path != NULL ? ent_new(FD_FILE, path,
                                                  mode != NULL && strchr(mode, 'e') != NULL)
                                        : NULL;
        g_free(path);
        g_free(mode);
        return add(ch, 0, ival(e, "fd", -1), f);
    }
    case POSIXTRACE_EV_SOCKET:
        return add(ch, 0, ret, socket_ent(proto_of(ival(e, "domain", -1),
                                                   (uint64_t)ival(e, "type", 0)),
                                          (ival(e, "type", 0) & SOCK_CLOEXEC) != 0,
                                          ival(e, "ino", 0)));
    case POSIXTRACE_EV_SOCKETPAIR: {
        const char *proto = proto_of(ival(e, "domain", -1), (uint64_t)ival(e, "type", 0));
        int ce = (ival(e, "type", 0) & SOCK_CLOEXEC) != 0;
        int n = add(ch, 0, ival(e, "sv0", -1), socket_ent(proto, ce, ival(e, "ino0", 0)));
        return add(ch, n, ival(e, "sv1", -1), socket_ent(proto, ce, ival(e, "ino1", 0)));
    }
    case POSIXTRACE_EV_ACCEPT:
        return accept_changes(t, e, ch, (ival(e, "flags", 0) & SOCK_CLOEXEC) != 0);
    case POSIXTRACE_EV_BIND:
        return sock_addr(t, e, ch, 0, ival(e, "fd", -1), 0);
    default:
        return 0;
    }
}

/* System calls (--syscalls), by name. */
static int syscall_changes(struct pt_fds *t, const struct pt_event *e, struct change *ch)
{
    const char *colon = strchr(e->name, ':');
    const char *nm = colon != NULL ? colon + 1 : e->name;
    int64_t ret = e->hdr.ret;
    if (!strcmp(nm, "open") || !strcmp(nm, "openat") || !strcmp(nm, "creat") ||
        !strcmp(nm, "openat2"))
        return open_change(t, e, ch);
    if (!strcmp(nm, "close"))
        return add(ch, 0, ival(e, "fd", -1), NULL);
    if (!strcmp(nm, "dup"))
        return dup_to(t, e, ch, 0, ival(e, "oldfd", -1), ret, 0);
    if (!strcmp(nm, "dup2") || !strcmp(nm, "dup3"))
        return dup_to(t, e, ch, 0, ival(e, "oldfd", -1), ival(e, "newfd", -1),
                      (ival(e, "flags", 0) & O_CLOEXEC) != 0);
    if (!strcmp(nm, "fcntl")) {
        int64_t cmd = ival(e, "cmd", -1);
        if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
            return dup_to(t, e, ch, 0, ival(e, "fd", -1), ret, cmd == F_DUPFD_CLOEXEC);
        return 0;
    }
    if (!strcmp(nm, "socket"))
        return add(ch, 0, ret, socket_ent(proto_of(ival(e, "domain", -1),
                                                   (uint64_t)ival(e, "type", 0)),
                                          (ival(e, "type", 0) & SOCK_CLOEXEC) != 0, 0));
    if (!strcmp(nm, "accept") || !strcmp(nm, "accept4"))
        return accept_changes(t, e, ch, (ival(e, "flags", 0) & SOCK_CLOEXEC) != 0);
    return 0;
}

/* The changes e makes to its process's table (ch[i].ent owned by the caller). */
static int changes_of(struct pt_fds *t, const struct pt_event *e, struct change *ch)
{
    if (e->kind != PT_K_CALL || !pt_call_returns(e))
        return 0;
    /* a connect in progress has its peer all the same */
    if (e->id == POSIXTRACE_EV_CONNECT && (e->hdr.err == 0 || e->hdr.err == EINPROGRESS))
        return sock_addr(t, e, ch, 0, ival(e, "fd", -1), 1);
    if (e->hdr.err != 0) /* a close that failed with EINTR closed it all the same */
        return e->hdr.err == EINTR && e->id == POSIXTRACE_EV_CLOSE
                   ? add(ch, 0, ival(e, "fd", -1), NULL) : 0;
    if (e->id >= POSIXTRACE_SYSCALL_FIRST)
        return syscall_changes(t, e, ch);
    return shim_changes(t, e, ch);
}

static void changes_free(struct change *ch, int n)
{
    for (int i = 0; i < n; i++)
        ent_free(ch[i].ent);
}

/* ---- naming: what the formats show ---- */

/* Output fields: named by what the event gives them, not as they were. */
static int is_output(const struct pt_event *e, const struct pt_field *f)
{
    return (e->id == POSIXTRACE_EV_PIPE && (!strcmp(f->name, "rfd") || !strcmp(f->name, "wfd"))) ||
           (e->id == POSIXTRACE_EV_SOCKETPAIR && (!strcmp(f->name, "sv0") || !strcmp(f->name, "sv1"))) ||
           ((e->id == POSIXTRACE_EV_FOPEN || e->id == POSIXTRACE_EV_FREOPEN) &&
            !strcmp(f->name, "fd"));
}

/* Whether a result is a new descriptor (open, socket, dup...). */
static int returns_fd(const struct pt_event *e)
{
    static const unsigned ids[] = { POSIXTRACE_EV_OPEN, POSIXTRACE_EV_DUP, POSIXTRACE_EV_SOCKET,
                                    POSIXTRACE_EV_ACCEPT };
    for (size_t i = 0; i < G_N_ELEMENTS(ids); i++)
        if (e->id == ids[i])
            return 1;
    if (e->id < POSIXTRACE_SYSCALL_FIRST)
        return 0;
    const char *colon = strchr(e->name, ':');
    const char *nm = colon != NULL ? colon + 1 : e->name;
    static const char *const names[] = { "open", "openat", "openat2", "creat", "dup", "socket",
                                         "accept", "accept4", "fcntl" };
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
        if (!strcmp(nm, names[i]))
            return 1;
    return 0;
}

static int changed_text(struct pt_fds *t, const struct pt_event *e, int64_t fd, GString *s)
{
    struct change ch[CH_MAX];
    int n = changes_of(t, e, ch), found = 0;
    for (int i = 0; i < n && !found; i++)
        if (ch[i].fd == fd && ch[i].ent != NULL) {
            ent_text(s, t, ch[i].ent);
            found = 1;
        }
    changes_free(ch, n);
    return found;
}

int pt_fds_field(struct pt_fds *t, const struct pt_event *e, const struct pt_field *f,
                 GString *s)
{
    if (t == NULL || f->type != POSIXTRACE_F_FD || !f->present || f->absent)
        return 0;
    if (is_output(e, f))
        return changed_text(t, e, (int64_t)f->u, s);
    const struct fd_ent *x = lookup(t, e->info.posix_pid, (int64_t)f->u);
    if (x == NULL)
        return 0;
    ent_text(s, t, x);
    return 1;
}

int pt_fds_result(struct pt_fds *t, const struct pt_event *e, GString *s)
{
    if (t == NULL || e->kind != PT_K_CALL || e->hdr.ret < 0 || !returns_fd(e))
        return 0;
    return changed_text(t, e, e->hdr.ret, s);
}

/* ---- learning ---- */

/* An exec's new image: what was not close-on-exec stays (until its fds
 * event tells the truth). */
static void image_start(struct pt_fds *t, pid_t pid)
{
    struct proc_fds *pf = proc_get(t, pid, 1);
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, pf->fd);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (((struct fd_ent *)v)->cloexec)
            g_hash_table_iter_remove(&it);
    pf->fresh = 1;
}

static enum fd_kind kind_of_target(const char *target)
{
    if (g_str_has_prefix(target, "pipe:"))
        return FD_PIPE;
    if (g_str_has_prefix(target, "socket:"))
        return FD_SOCKET;
    return FD_FILE;
}

/* Calls fn(t, pf, fd, rest) for each "N REST" string of an ARGV field. */
static void each_entry(struct pt_fds *t, struct proc_fds *pf, const struct pt_field *f,
                       void (*fn)(struct pt_fds *, struct proc_fds *, int, const char *))
{
    if (f == NULL)
        return;
    const char *p = (const char *)f->p, *end = p + f->n;
    while (p < end) {
        const char *z = memchr(p, '\0', (size_t)(end - p));
        size_t len = z != NULL ? (size_t)(z - p) : (size_t)(end - p);
        char *item = g_strndup(p, len), *sp = strchr(item, ' '), *stop = NULL;
        gint64 fd = sp != NULL ? g_ascii_strtoll(item, &stop, 10) : -1;
        if (sp != NULL && stop == sp && fd_ok(fd))
            fn(t, pf, (int)fd, sp + 1);
        g_free(item);
        p += len + 1;
    }
}

static void add_target(struct pt_fds *t, struct proc_fds *pf, int fd, const char *target)
{
    (void)t;
    g_hash_table_insert(pf->fd, GINT_TO_POINTER(fd), ent_new(kind_of_target(target), target, 0));
}

static void add_device(struct pt_fds *t, struct proc_fds *pf, int fd, const char *dev)
{
    (void)t;
    struct fd_ent *x = g_hash_table_lookup(pf->fd, GINT_TO_POINTER(fd));
    if (x != NULL) {
        g_free(x->dev);
        x->dev = g_strdup(dev);
    }
}

/* An fds event: "N TARGET" strings, and "N char MAJ:MIN" for devices. */
static void learn_inherited(struct pt_fds *t, const struct pt_event *e)
{
    const struct pt_field *f = pt_event_field(e, "fds");
    struct proc_fds *pf = proc_get(t, e->info.posix_pid, 1);
    if (pf->fresh)
        g_hash_table_remove_all(pf->fd);
    pf->fresh = 0;
    int64_t unlisted = ival(e, "unlisted", 0);
    if (unlisted > 0)
        pt_warn("-y: process %ld started with %" G_GINT64_FORMAT " more descriptors than its "
                "fds events list (64 events' worth): those show as numbers",
                (long)e->info.posix_pid, (gint64)unlisted);
    each_entry(t, pf, f, add_target);
    each_entry(t, pf, pt_event_field(e, "devices"), add_device);
}

/* A fork child: a copy of the parent's table, once: at the child's own fork
 * event (its first; it names its parent), else, in logs of earlier
 * versions, at its parent's fork event (ret = its pid), keeping what the
 * child learned already (its events may come before that one). */
static void fork_child(struct pt_fds *t, pid_t parent, pid_t child)
{
    struct proc_fds *pp = proc_get(t, parent, 0);
    if (pp == NULL || child <= 0 || child == parent)
        return;
    struct proc_fds *pc = proc_get(t, child, 1);
    if (pc->forked)
        return;
    pc->forked = 1;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, pp->fd);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (!g_hash_table_contains(pc->fd, k))
            g_hash_table_insert(pc->fd, k, ent_copy(v, ((struct fd_ent *)v)->cloexec));
}

static int is_fork(const struct pt_event *e)
{
    if (e->id == POSIXTRACE_EV_FORK)
        return 1;
    if (e->id < POSIXTRACE_SYSCALL_FIRST)
        return 0;
    const char *colon = strchr(e->name, ':');
    const char *nm = colon != NULL ? colon + 1 : e->name;
    /* a thread (CLONE_THREAD) shares its process's table: its tid names no
     * process (clone3's flags are in memory the event does not hold) */
    return !strcmp(nm, "fork") ||
           (!strcmp(nm, "clone") && (ival(e, "flags", 0) & CLONE_THREAD) == 0);
}

/* A child reaped (its wait status says it ended) or a process_end: its
 * events are all before this one, its table goes (a long run of many
 * processes keeps only the live ones'). */
static void forget_ended(struct pt_fds *t, const struct pt_event *e)
{
    const struct pt_field *st = pt_event_field(e, "status");
    int64_t pid = e->id == POSIXTRACE_EV_PROCESS_END ? ival(e, "pid", 0) : e->hdr.ret;
    if (st == NULL || st->absent || pid <= 0 || pid > G_MAXINT)
        return;
    int w = (int)st->u;
    if (WIFEXITED(w) || WIFSIGNALED(w))
        g_hash_table_remove(t->pid, GINT_TO_POINTER((int)pid));
}

void pt_fds_learn(struct pt_fds *t, const struct pt_event *e)
{
    if (t == NULL || e->kind != PT_K_CALL)
        return;
    pid_t pid = e->info.posix_pid;
    if (e->id == POSIXTRACE_EV_PROCESS_END ||
        (e->id == POSIXTRACE_EV_WAIT && pt_call_returns(e) && e->hdr.err == 0)) {
        forget_ended(t, e);
        return;
    }
    if (e->id == POSIXTRACE_EV_PROCESS_START) {
        image_start(t, pid);
        return;
    }
    if (e->id == POSIXTRACE_EV_FDS) {
        learn_inherited(t, e);
        return;
    }
    if (is_fork(e) && pt_call_returns(e) && e->hdr.err == 0 && e->hdr.ret > 0) {
        fork_child(t, pid, (pid_t)e->hdr.ret);
        return;
    }
    int64_t parent = ival(e, "parent", 0);
    if (e->id == POSIXTRACE_EV_FORK && pt_call_returns(e) && e->hdr.ret == 0 && parent > 0 &&
        parent <= G_MAXINT) {
        fork_child(t, (pid_t)parent, pid);
        return;
    }
    struct change ch[CH_MAX];
    int n = changes_of(t, e, ch);
    if (n == 0)
        return;
    struct proc_fds *pf = proc_get(t, pid, 1);
    for (int i = 0; i < n; i++) {
        if (ch[i].ent != NULL)
            g_hash_table_insert(pf->fd, GINT_TO_POINTER((int)ch[i].fd), ch[i].ent);
        else
            g_hash_table_remove(pf->fd, GINT_TO_POINTER((int)ch[i].fd));
    }
}

/* Events the table needs recorded (posixtrace-run -y lets them through its
 * filter even when -e does not print them). */
void pt_fds_needed(trace_event_set_t *set)
{
    static const trace_event_id_t ids[] = {
        POSIXTRACE_EV_PROCESS_START, POSIXTRACE_EV_FDS, POSIXTRACE_EV_OPEN, POSIXTRACE_EV_CLOSE,
        POSIXTRACE_EV_DUP, POSIXTRACE_EV_PIPE, POSIXTRACE_EV_FOPEN, POSIXTRACE_EV_FREOPEN,
        POSIXTRACE_EV_FCLOSE, POSIXTRACE_EV_FORK, POSIXTRACE_EV_SOCKET, POSIXTRACE_EV_BIND,
        POSIXTRACE_EV_ACCEPT, POSIXTRACE_EV_CONNECT, POSIXTRACE_EV_SOCKETPAIR,
    };
    for (size_t i = 0; i < G_N_ELEMENTS(ids); i++)
        posix_trace_eventset_add(ids[i], set);
}
