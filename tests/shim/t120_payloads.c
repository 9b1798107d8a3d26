/*
 * t120_payloads - run under LD_PRELOAD=libposixtrace-preload.so: makes a few
 * calls in a stream of its own, then decodes their events with the
 * declarations generated from <posixtrace/events.def>, <posixtrace/payloads.h>
 * (the fixed part as a struct, the variable fields by position), the way a
 * program reading a stream or a log would. One line per event:
 *   open dirfd=-100 flags=0x80000 mode=0 path="/dev/null"
 * (tests/shim/test_payloads.py compares them with the calls made).
 */
#include "tcommon.h"

#include <fcntl.h>
#include <posixtrace/payloads.h>
#include <string.h>

trace_id_t td_start(int inherited);
typedef void td_event_fn(const struct posix_trace_event_info *ev, const unsigned char *data,
                         size_t len);
void td_each(trace_id_t trid, td_event_fn *fn);

/* The variable field at position k of a payload whose fixed part ends at
 * `at`: its bytes and length (NULL if the payload is shorter). */
static const unsigned char *var_field(const unsigned char *d, size_t len, size_t at, unsigned k,
                                      uint32_t *n)
{
    for (unsigned i = 0;; i++) {
        if (at + 4 > len)
            return NULL;
        memcpy(n, d + at, 4);
        if (*n > len - at - 4)
            return NULL;
        if (i == k)
            return d + at + 4;
        at += 4 + *n;
    }
}

static void print_var(const char *name, const unsigned char *p, uint32_t n)
{
    printf(" %s=\"%.*s\"", name, p != NULL ? (int)n : 0, p != NULL ? (const char *)p : "");
}

static void open_event(const unsigned char *d, size_t len)
{
    struct posixtrace_call_hdr h;
    struct posixtrace_open_fixed f;
    memcpy(&h, d, sizeof h);
    memcpy(&f, d + h.hdr_size, sizeof f);
    uint32_t n = 0;
    const unsigned char *path = var_field(d, len, h.hdr_size + sizeof f,
                                          POSIXTRACE_OPEN_VAR_PATH, &n);
    printf("open dirfd=%lld flags=%#llx mode=%#llo ret=%lld", (long long)f.dirfd,
           (unsigned long long)f.flags, (unsigned long long)f.mode, (long long)h.ret);
    print_var("path", path, n);
    printf(" nvar=%u\n", POSIXTRACE_OPEN_NVAR);
}

static void rename_event(const unsigned char *d, size_t len)
{
    struct posixtrace_call_hdr h;
    struct posixtrace_rename_fixed f;
    memcpy(&h, d, sizeof h);
    memcpy(&f, d + h.hdr_size, sizeof f);
    size_t at = h.hdr_size + sizeof f;
    uint32_t n1 = 0, n2 = 0;
    const unsigned char *o = var_field(d, len, at, POSIXTRACE_RENAME_VAR_OLDPATH, &n1);
    const unsigned char *p = var_field(d, len, at, POSIXTRACE_RENAME_VAR_NEWPATH, &n2);
    printf("rename olddirfd=%lld newdirfd=%lld flags=%#llx err=%d", (long long)f.olddirfd,
           (long long)f.newdirfd, (unsigned long long)f.flags, h.err);
    print_var("oldpath", o, n1);
    print_var("newpath", p, n2);
    printf(" nvar=%u\n", POSIXTRACE_RENAME_NVAR);
}

static void pipe_event(const unsigned char *d)
{
    struct posixtrace_call_hdr h;
    struct posixtrace_pipe_fixed f;
    memcpy(&h, d, sizeof h);
    memcpy(&f, d + h.hdr_size, sizeof f);
    printf("pipe flags=%#llx rfd=%lld wfd=%lld nvar=%u\n", (unsigned long long)f.flags,
           (long long)f.rfd, (long long)f.wfd, POSIXTRACE_PIPE_NVAR);
}

static void one_event(const struct posix_trace_event_info *ev, const unsigned char *data,
                      size_t len)
{
    if (ev->posix_event_id == POSIXTRACE_EV_OPEN)
        open_event(data, len);
    else if (ev->posix_event_id == POSIXTRACE_EV_PIPE)
        pipe_event(data);
    else if (ev->posix_event_id == POSIXTRACE_EV_RENAME)
        rename_event(data, len);
}

int main(void)
{
    trace_id_t trid = td_start(0);
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int p[2];
    TC_ASSERT(pipe2(p, O_NONBLOCK) == 0);
    TC_ASSERT(renameat(AT_FDCWD, "/nonexistent/a", 7, "b") == -1);
    int rename_errno = errno;
    printf("fd=%d p=%d,%d rename_errno=%d\n", fd, p[0], p[1], rename_errno);
    td_each(trid, one_event);
    CHECK(posix_trace_shutdown(trid));
    return 0;
}
