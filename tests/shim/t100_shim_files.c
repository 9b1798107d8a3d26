/*
 * t100_shim_files - run under LD_PRELOAD=libposixtrace-preload.so: calls
 * the file and descriptor functions in a stream of its own, then prints the
 * recorded shim events (tests/shim/decode.c). Usage: t100_shim_files <scenario> <dir>
 * Scenarios: files, fdops, paths, errors, errno, stdio, filter, strsize,
 * efault (lines "r <what> <result> <errno>" for each call, the same with
 * and without the shim).
 * Every scenario function is noinline and exported (-rdynamic): the events'
 * caller= must name it.
 */
#include "tcommon.h"

#include <fcntl.h>
#include <pthread.h>
#include <posixtrace/events.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>

trace_id_t td_start(int inherited);
void td_dump(trace_id_t trid);

#define NI __attribute__((noinline))
static char dir[512];

static const char *P(const char *name)
{
    static char bufs[4][600];
    static int k;
    char *b = bufs[k++ & 3];
    snprintf(b, 600, "%s/%s", dir, name);
    return b;
}

NI void sc_files(void)
{
    int fd = open(P("a"), O_CREAT | O_WRONLY | O_TRUNC, 0640);
    TC_ASSERT(write(fd, "hello, world", 12) == 12);
    TC_ASSERT(pwrite(fd, "HE", 2, 0) == 2);
    TC_ASSERT(lseek(fd, 0, SEEK_END) == 12);
    TC_ASSERT(ftruncate(fd, 20) == 0);
    TC_ASSERT(fsync(fd) == 0);
    close(fd);
    fd = open64(P("a"), O_RDONLY);
    char buf[64];
    TC_ASSERT(read(fd, buf, sizeof buf) == 20);
    TC_ASSERT(pread(fd, buf, 5, 7) == 5);
    TC_ASSERT(lseek64(fd, 3, SEEK_SET) == 3);
    struct iovec iov[2] = { { buf, 2 }, { buf + 10, 3 } };
    TC_ASSERT(readv(fd, iov, 2) == 5);
    close(fd);
    fd = openat(AT_FDCWD, P("b"), O_RDWR | O_CREAT | O_EXCL, 0600);
    struct iovec wv[2] = { { "ab", 2 }, { "cde", 3 } };
    TC_ASSERT(writev(fd, wv, 2) == 5);
    TC_ASSERT(pwrite64(fd, "Z", 1, 4) == 1);
    TC_ASSERT(pread64(fd, buf, 5, 0) == 5);
    close(fd);
    fd = creat(P("c"), 0644);
    close(fd);
}

NI void sc_fdops(void)
{
    int fd = open(P("a"), O_CREAT | O_RDWR | O_TRUNC, 0600);
    TC_ASSERT(write(fd, "0123456789", 10) == 10);
    int d1 = dup(fd);
    TC_ASSERT(dup2(fd, 40) == 40);
    TC_ASSERT(dup3(fd, 41, O_CLOEXEC) == 41);
    int p[2];
    TC_ASSERT(pipe(p) == 0);
    int q[2];
    TC_ASSERT(pipe2(q, O_CLOEXEC | O_NONBLOCK) == 0);
    int out = open(P("b"), O_CREAT | O_RDWR | O_TRUNC, 0600);
    off_t oi = 2;
    TC_ASSERT(copy_file_range(fd, &oi, out, NULL, 3, 0) == 3);
    off_t so = 5;
    TC_ASSERT(sendfile(out, fd, &so, 4) == 4);
    close(out);
    close(q[0]);
    close(q[1]);
    close(p[0]);
    close(p[1]);
    close(41);
    close(40);
    close(d1);
    close(fd);
}

NI void sc_paths(void)
{
    TC_ASSERT(mkdir(P("d1"), 0755) == 0);
    TC_ASSERT(mkdirat(AT_FDCWD, P("d2"), 0700) == 0);
    close(open(P("f1"), O_CREAT | O_WRONLY, 0600));
    TC_ASSERT(rename(P("f1"), P("f2")) == 0);
    TC_ASSERT(renameat(AT_FDCWD, P("f2"), AT_FDCWD, P("f3")) == 0);
    TC_ASSERT(renameat2(AT_FDCWD, P("f3"), AT_FDCWD, P("f4"), RENAME_NOREPLACE) == 0);
    TC_ASSERT(unlink(P("f4")) == 0);
    TC_ASSERT(rmdir(P("d1")) == 0);
    TC_ASSERT(unlinkat(AT_FDCWD, P("d2"), AT_REMOVEDIR) == 0);
}

NI void sc_errors(void)
{
    TC_ASSERT(open(P("missing/x"), O_RDONLY) == -1);
    TC_ASSERT(close(-1) == -1);
    char b[4];
    TC_ASSERT(read(-1, b, 4) == -1);
    TC_ASSERT(write(12345, b, 4) == -1);
    TC_ASSERT(unlink(P("missing")) == -1);
    TC_ASSERT(rmdir(P("missing")) == -1);
    const char *volatile badpath = (const char *)8; /* not mapped */
    TC_ASSERT(open(badpath, O_RDONLY) == -1); /* EFAULT: the shim must not read it */
}

/* Invalid pointers the real calls reject (EFAULT, or EINVAL/EBADF before
 * reading them): the shim must not read them either. */
static volatile uintptr_t bad_addr = 8; /* not mapped; volatile: no compiler warnings */
#define BAD ((void *)bad_addr)
#define R(what, expr)                                                          \
    do {                                                                       \
        errno = 0;                                                             \
        long r_ = (long)(expr);                                                \
        int e_ = errno;                                                        \
        printf("r %s %ld %d\n", what, r_, e_); /* errno: 0 unless set */        \
    } while (0)
static FILE *efault_keep; /* freopen's stream, closed by the failure (no leak) */
/* An ASan build's own interceptors of some calls read these pointers before
 * the call (a crash with or without the shim): those calls are left out. */
#ifdef __SANITIZE_ADDRESS__
#define ASAN_READS 1
#else
#define ASAN_READS 0
#endif

NI void sc_efault(void)
{
    int fd = open(P("a"), O_CREAT | O_RDWR | O_TRUNC, 0600);
    TC_ASSERT(write(fd, "0123456789", 10) == 10);
    int out = open(P("b"), O_CREAT | O_RDWR | O_TRUNC, 0600);
    R("sendfile", sendfile(out, fd, BAD, 4));
    R("sendfile64", sendfile64(out, fd, BAD, 4));
    R("cfr-in", copy_file_range(fd, BAD, out, NULL, 3, 0));
    R("cfr-out", copy_file_range(fd, NULL, out, BAD, 3, 0));
    R("cfr-badfd", copy_file_range(-1, BAD, out, NULL, 3, 0)); /* EBADF first */
    off_t oi = 2, oo = 1;
    R("cfr-ok", copy_file_range(fd, &oi, out, &oo, 3, 0));
    printf("offsets %ld %ld\n", (long)oi, (long)oo);
    R("unlinkat-flags", unlinkat(AT_FDCWD, BAD, 0x7000)); /* EINVAL before the path */
    R("renameat2-flags", renameat2(AT_FDCWD, BAD, AT_FDCWD, BAD, 0x7000));
    R("open-tmpfile", open(BAD, O_TMPFILE | O_RDONLY, 0600)); /* EINVAL: O_TMPFILE needs write */
    R("mkdir", mkdir(BAD, 0700));
    if (!ASAN_READS) {
        R("fopen-mode", fopen(BAD, "z") == NULL ? -1 : 0); /* EINVAL: the mode, before the path */
        FILE *f = fopen(P("a"), "r");
        efault_keep = f;
        R("freopen", freopen(BAD, "r", f) == NULL ? -1 : 0);
    }
    R("pipe", pipe(BAD));
    R("readv", readv(fd, BAD, 2));
    TC_ASSERT(lseek(fd, 0, SEEK_SET) == 0);
    R("read", read(fd, BAD, 4));
    close(out);
    close(fd);
}

/* errno after each call is exactly what libc left: unchanged on success. */
NI void sc_errno(void)
{
    int fd = open(P("a"), O_CREAT | O_WRONLY, 0600);
    errno = 1234;
    ssize_t n = write(fd, "x", 1);
    printf("after-success n=%zd errno=%d\n", n, errno);
    errno = 0;
    n = write(-1, "x", 1);
    printf("after-failure n=%zd errno=%s\n", n, tc_errname(errno));
    errno = 4321;
    close(fd);
    printf("after-close errno=%d\n", errno);
}

NI void sc_stdio(void)
{
    FILE *f = fopen(P("s"), "w");
    fputs("line\n", f);
    f = freopen(P("s"), "r", f);
    fclose(f);
    int fd = open(P("s"), O_RDONLY);
    f = fdopen(fd, "r");
    fclose(f);
    TC_ASSERT(fopen(P("missing/s"), "r") == NULL);
}

NI void sc_filter(trace_id_t trid)
{
    trace_event_set_t set;
    posix_trace_eventset_empty(&set);
    posix_trace_eventset_add(POSIXTRACE_EV_WRITE, &set);
    CHECK(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET));
    int fd = open(P("a"), O_CREAT | O_WRONLY, 0600);
    TC_ASSERT(write(fd, "filtered", 8) == 8);
    close(fd);
}

NI void sc_strsize(void)
{
    int fd = open(P("a"), O_CREAT | O_RDWR | O_TRUNC, 0600);
    static char big[3000];
    memset(big, 'q', sizeof big);
    TC_ASSERT(write(fd, big, sizeof big) == (ssize_t)sizeof big);
    TC_ASSERT(write(fd, "abc", 3) == 3);
    close(fd);
}

/* durations: a read that waits 200 ms for a thread's write, then a close.
 * The read began before the write, which began before the read returned. */
static int dur_pipe[2];

static void *dur_writer(void *arg)
{
    (void)arg;
    tc_sleep_ms(200);
    if (write(dur_pipe[1], "x", 1) != 1)
        abort();
    return NULL;
}

static void sc_durations(void)
{
    char c;
    pthread_t th;
    if (pipe(dur_pipe) != 0)
        abort();
    CHECK(pthread_create(&th, NULL, dur_writer, NULL));
    if (read(dur_pipe[0], &c, 1) != 1)
        abort();
    CHECK(pthread_join(th, NULL));
    close(dur_pipe[0]);
    close(dur_pipe[1]);
}

int main(int argc, char **argv)
{
    tc_init();
    if (argc != 3)
        return 2;
    snprintf(dir, sizeof dir, "%s", argv[2]);
    tc_watchdog(60);
    const char *s = argv[1];
    trace_id_t trid = td_start(0);
    if (strcmp(s, "files") == 0)
        sc_files();
    else if (strcmp(s, "fdops") == 0)
        sc_fdops();
    else if (strcmp(s, "paths") == 0)
        sc_paths();
    else if (strcmp(s, "errors") == 0)
        sc_errors();
    else if (strcmp(s, "errno") == 0)
        sc_errno();
    else if (strcmp(s, "stdio") == 0)
        sc_stdio();
    else if (strcmp(s, "filter") == 0)
        sc_filter(trid);
    else if (strcmp(s, "strsize") == 0)
        sc_strsize();
    else if (strcmp(s, "durations") == 0)
        sc_durations();
    else if (strcmp(s, "efault") == 0)
        sc_efault();
    else
        return 2;
    td_dump(trid);
    return 0;
}
