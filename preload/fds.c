/*
 * The descriptors an image starts with (event "fds", right after
 * process_start, only when a stream takes it: posixtrace-run -y), so that
 * the tools can name the descriptors a process inherited. Read from
 * /proc/self/fd with raw system calls (nothing allocated, no wrapper
 * entered): one "N TARGET" string per descriptor, as many events as needed.
 */
#include "shim.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FDS_EVENTS_MAX 64
#define FDS_TARGET_MAX 512
/* the list bytes of one event: the payload less its header, the two fixed
 * fields and the list's length word */
/* the bytes of one event's two lists: the payload less its header, the two
 * fixed fields and the lists' length words */
#define FDS_ROOM (SHIM_PAYLOAD_MAX - sizeof(struct posixtrace_call_hdr) - 16 - 8)

struct fds_batch {
    char list[FDS_ROOM], devs[FDS_ROOM];
    size_t n, dn;   /* bytes in list, in devs */
    unsigned sent;  /* events recorded */
    bool cut;       /* a target of this event was cut to FDS_TARGET_MAX */
    uint64_t unlisted;
};

static void fds_flush(struct fds_batch *b, int more)
{
    struct shim_call c;
    if (shim_begin(&c, POSIXTRACE_EV_FDS, NULL)) {
        shim_fix_fds(&c, more, more ? 0 : b->unlisted);
        shim_var(&c, b->list, b->n, b->n);
        shim_var(&c, b->devs, b->dn, b->dn);
        if (b->cut)
            c.flags |= POSIXTRACE_CALL_DATA_CUT;
        shim_emit(&c);
    }
    b->sent++;
    b->n = b->dn = 0;
    b->cut = false;
}

static size_t fmt_uint(char *p, unsigned long v)
{
    char t[24];
    size_t n = 0;
    do
        t[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    for (size_t i = 0; i < n; i++)
        p[i] = t[n - 1 - i];
    return n;
}

/* "N char MAJ:MIN\0" for a character or block device, else nothing. */
static size_t dev_entry(char *d, unsigned long fd)
{
    struct stat st;
    if (fstat((int)fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
        return 0;
    size_t n = fmt_uint(d, fd);
    const char *k = S_ISCHR(st.st_mode) ? " char " : " block ";
    memcpy(d + n, k, strlen(k));
    n += strlen(k);
    n += fmt_uint(d + n, major(st.st_rdev));
    d[n++] = ':';
    n += fmt_uint(d + n, minor(st.st_rdev));
    d[n++] = '\0';
    return n;
}

/* One descriptor's entries: "N TARGET\0" appended (and its device's), a new
 * event begun first if they do not fit; past the last event, counted as
 * unlisted. */
static void fds_add(struct fds_batch *b, int dirfd, const char *name, unsigned long fd)
{
    char e[24 + FDS_TARGET_MAX + 1], d[80];
    size_t n = fmt_uint(e, fd);
    e[n++] = ' ';
    long t = syscall(SYS_readlinkat, dirfd, name, e + n, (size_t)FDS_TARGET_MAX);
    n += t > 0 ? (size_t)t : 0;
    e[n++] = '\0';
    size_t dn = dev_entry(d, fd);
    if (b->n + b->dn + n + dn > FDS_ROOM) {
        if (b->sent + 1 >= FDS_EVENTS_MAX) {
            b->unlisted++;
            return;
        }
        fds_flush(b, 1);
    }
    if (t >= FDS_TARGET_MAX)
        b->cut = true;
    memcpy(b->list + b->n, e, n);
    b->n += n;
    memcpy(b->devs + b->dn, d, dn);
    b->dn += dn;
}

static int parse_fd(const char *s, unsigned long *fd)
{
    unsigned long v = 0;
    if (*s == '\0')
        return 0;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9' || v > 100000000ul)
            return 0;
        v = v * 10 + (unsigned long)(*s - '0');
    }
    *fd = v;
    return 1;
}

struct dirent64_raw {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

void shim_report_fds(void)
{
    int dirfd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/fd",
                             O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return;
    struct fds_batch b;
    b.n = b.dn = 0;
    b.sent = 0;
    b.cut = false;
    b.unlisted = 0;
    int own = posixtrace_reserved_fd();
    char buf[2048] __attribute__((aligned(8)));
    long got;
    while ((got = syscall(SYS_getdents64, dirfd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < got;) {
            const struct dirent64_raw *d = (const struct dirent64_raw *)(buf + off);
            off += d->reclen;
            unsigned long fd;
            if (parse_fd(d->name, &fd) && (long)fd != dirfd && (long)fd != own)
                fds_add(&b, dirfd, d->name, fd);
        }
    }
    syscall(SYS_close, dirfd);
    fds_flush(&b, 0);
}

uint64_t shim_fd_ino(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}
