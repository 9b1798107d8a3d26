/*
 * bench/minishim.c - the least an LD_PRELOAD tracer of libc calls can do,
 * the yardstick of bench_run's whole-run figures (bench/README.md). Built
 * by `make bench` only, never installed.
 *
 * It interposes open, write and close; each call is recorded after it
 * returns as one fixed 64-byte record (TSC stamp, function, result, first
 * argument, up to 32 bytes of the path or the buffer) into a ring in a
 * memfd mapped by the process. Each time half of the 1 MiB ring fills,
 * the thread that filled it writes that half to the file named by
 * MINISHIM_OUT, so every record reaches the file and none is lost (the
 * process's last partial half is written by a destructor). One thread
 * only (the bench's loop): no atomics, no reader, no decoding, no
 * timestamps converted: what posixtrace-run does on top of this (another
 * process reading the stream, the log encoder, names, losses, clocks) is
 * the difference bench_run reports.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <x86intrin.h>

#define RING_SIZE ((size_t)1 << 20)
#define HALF (RING_SIZE / 2)

struct mini_rec {
    uint64_t tsc;
    uint32_t fn;     /* 1 open, 2 write, 3 close */
    int32_t ret;
    int64_t arg;     /* open's flags, write's and close's fd */
    char data[40];   /* the path or the buffer, NUL-padded */
};
_Static_assert(sizeof(struct mini_rec) == 64, "64-byte records");

static unsigned char *ring;
static size_t pos;
static int out_fd = -1;
static int (*real_open)(const char *, int, ...);
static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_close)(int);

/* libc's functions; also from a wrapper called before the constructor. */
static void resolve(void)
{
    real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
}

__attribute__((constructor)) static void mini_init(void)
{
    resolve();
    int mfd = memfd_create("minishim-ring", MFD_CLOEXEC);
    if (mfd < 0 || ftruncate(mfd, (off_t)RING_SIZE) != 0)
        return;
    void *p = mmap(NULL, RING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, mfd, 0);
    real_close(mfd);
    if (p == MAP_FAILED)
        return;
    const char *out = getenv("MINISHIM_OUT");
    if (out != NULL)
        out_fd = real_open(out, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    ring = p;
}

static void spill(size_t from, size_t len)
{
    if (out_fd >= 0 && real_write(out_fd, ring + from, len) != (ssize_t)len)
        _exit(99); /* a lost record would make the comparison unfair */
}

static void put(uint32_t fn, int32_t ret, int64_t arg, const void *data, size_t len)
{
    if (ring == NULL)
        return;
    struct mini_rec *r = (struct mini_rec *)(ring + pos);
    r->tsc = __rdtsc();
    r->fn = fn;
    r->ret = ret;
    r->arg = arg;
    memset(r->data, 0, sizeof r->data);
    memcpy(r->data, data, len < sizeof r->data ? len : sizeof r->data);
    pos = (pos + sizeof *r) % RING_SIZE;
    if (pos % HALF == 0)
        spill(pos == 0 ? HALF : 0, HALF);
}

__attribute__((destructor)) static void mini_fini(void)
{
    if (ring != NULL && pos % HALF != 0)
        spill(pos < HALF ? 0 : HALF, pos % HALF);
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;
    va_end(ap);
    if (real_open == NULL)
        resolve();
    int r = real_open(path, flags, mode);
    put(1, r, flags, path, strlen(path));
    return r;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    if (real_write == NULL)
        resolve();
    ssize_t r = real_write(fd, buf, n);
    put(2, (int32_t)r, fd, buf, n);
    return r;
}

int close(int fd)
{
    if (real_close == NULL)
        resolve();
    int r = real_close(fd);
    put(3, r, fd, NULL, 0);
    return r;
}
