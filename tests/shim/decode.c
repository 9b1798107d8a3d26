/*
 * decode.c - shared by the shim's test programs (tests/shim/t10N_*.c): a
 * stream of the test process itself, and a generic printer of the shim's
 * system events, driven only by posixtrace_event_descs[] (as the tools are).
 *
 * One line per shim event:
 *   ev name=<fn> epid=<posix_pid> self=<1 if the reader's pid> ktid=<hdr tid> caller=<symbol
 *   of posix_prog_address> h_ret=.. h_err=<errno name> h_flags=<flags but the function>
 *   h_fn=<POSIXTRACE_CALL_FN: the function of the family, 0: none> h_dur=..
 *   <field>=<value> ...
 * Fixed fields in decimal (HEX types as 0x..), strings as "..." with bytes
 * outside printable ASCII, '"' and '\' as \xNN, buffers and sockaddrs as
 * hex, argv as "a|b|c", stack frames as sym<sym<sym.
 * Test programs are linked with -rdynamic so that dladdr names their
 * functions.
 */
#include "tcommon.h"

#include <dlfcn.h>
#include <posixtrace/events.h>

trace_id_t td_start(int inherited);
trace_id_t td_start_pid(pid_t pid, int inherited, size_t size);
void td_dump(trace_id_t trid);
typedef void td_event_fn(const struct posix_trace_event_info *ev, const unsigned char *data,
                         size_t len);
void td_each(trace_id_t trid, td_event_fn *fn);

/* A running stream for process pid (0: this one), UNTIL_FULL so that a
 * lost event shows as an overflow instead of silently older events. */
trace_id_t td_start_pid(pid_t pid, int inherited, size_t size)
{
    trace_attr_t attr;
    trace_id_t trid;
    CHECK(posix_trace_attr_init(&attr));
    CHECK(posix_trace_attr_setstreamsize(&attr, size));
    CHECK(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL));
    if (inherited)
        CHECK(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
    CHECK(posix_trace_create(pid, &attr, &trid));
    CHECK(posix_trace_start(trid));
    posix_trace_attr_destroy(&attr);
    return trid;
}

trace_id_t td_start(int inherited)
{
    return td_start_pid(0, inherited, 16u << 20);
}

/* The function a return address `a` returns into (looked up at a - 1: a
 * call to a noreturn function may be the last instruction of its caller). */
static const char *sym(uint64_t a)
{
    static char buf[128];
    Dl_info di;
    if (a == 0)
        return "0";
    if (dladdr((void *)(uintptr_t)(a - 1), &di) != 0 && di.dli_sname != NULL)
        return di.dli_sname;
    snprintf(buf, sizeof buf, "0x%" PRIx64, a);
    return buf;
}

static void put_str(const unsigned char *p, uint32_t n)
{
    putchar('"');
    for (uint32_t i = 0; i < n; i++) {
        if (p[i] >= 32 && p[i] < 127 && p[i] != '"' && p[i] != '\\')
            putchar(p[i]);
        else
            printf("\\x%02x", p[i]);
    }
    putchar('"');
}

static void put_hex(const unsigned char *p, uint32_t n)
{
    if (n == 0)
        printf("-");
    for (uint32_t i = 0; i < n; i++)
        printf("%02x", p[i]);
}

static void put_var(int type, const unsigned char *p, uint32_t n)
{
    switch (type) {
    case POSIXTRACE_F_STR:
        put_str(p, n);
        break;
    case POSIXTRACE_F_ARGV:
        putchar('"');
        for (uint32_t i = 0; i < n; i++) {
            if (p[i] == 0)
                putchar(i + 1 < n ? '|' : '"');
            else if (p[i] >= 32 && p[i] < 127 && p[i] != '"')
                putchar(p[i]);
            else
                printf("\\x%02x", p[i]);
        }
        if (n == 0)
            putchar('"');
        break;
    case POSIXTRACE_F_ADDRS:
        for (uint32_t i = 0; i + 8 <= n; i += 8) {
            uint64_t a;
            memcpy(&a, p + i, 8);
            printf("%s%s", i ? "<" : "", sym(a));
        }
        if (n == 0)
            printf("-");
        break;
    default:
        put_hex(p, n);
    }
}

static void print_event(const struct posix_trace_event_info *ev, const unsigned char *d,
                        size_t len)
{
    const struct posixtrace_event_desc *desc = posixtrace_event_desc(ev->posix_event_id);
    struct posixtrace_call_hdr h;
    if (desc == NULL || len < sizeof h) {
        printf("ev id=%u short len=%zu\n", (unsigned)ev->posix_event_id, len);
        return;
    }
    memcpy(&h, d, sizeof h);
    printf("ev name=%s epid=%ld self=%d ktid=%u caller=%s h_ret=%" PRId64
           " h_err=%s h_flags=%u h_fn=%u h_ver=%u h_size=%u h_dur_ok=%d h_dur=%" PRIu64
           " ts=%lld%09ld trunc=%d",
           desc->name + strlen("posixtrace:"), (long)ev->posix_pid, ev->posix_pid == getpid(),
           h.tid, sym((uint64_t)(uintptr_t)ev->posix_prog_address), h.ret, tc_errname(h.err),
           h.flags & ~POSIXTRACE_CALL_FN_MASK, POSIXTRACE_CALL_FN(h.flags), h.version, h.hdr_size, h.duration_ns < 10ull * 1000000000ull,
           h.duration_ns, (long long)ev->posix_timestamp.tv_sec, ev->posix_timestamp.tv_nsec,
           ev->posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED);
    size_t off = h.hdr_size;
    for (unsigned i = 0; i < desc->nfields; i++) {
        const struct posixtrace_field *f = &desc->fields[i];
        if (f->type >= POSIXTRACE_F_VARIABLE)
            continue;
        int64_t v;
        if (off + 8 > len)
            break;
        memcpy(&v, d + off, 8);
        off += 8;
        if (f->type == POSIXTRACE_F_HEX)
            printf(" %s=0x%" PRIx64, f->name, (uint64_t)v);
        else if (f->type == POSIXTRACE_F_MODE)
            printf(" %s=0%" PRIo64, f->name, (uint64_t)v);
        else
            printf(" %s=%" PRId64, f->name, v);
    }
    for (unsigned i = 0; i < desc->nfields; i++) {
        const struct posixtrace_field *f = &desc->fields[i];
        if (f->type < POSIXTRACE_F_VARIABLE)
            continue;
        uint32_t n;
        if (off + 4 > len)
            break;
        memcpy(&n, d + off, 4);
        off += 4;
        if (off + n > len)
            n = (uint32_t)(len - off);
        printf(" %s=", f->name);
        put_var(f->type, d + off, n);
        off += n;
    }
    printf(" rest=%zu\n", len - off);
}

/* Stops the stream and hands every event it holds to fn, in order. */
void td_each(trace_id_t trid, td_event_fn *fn)
{
    static unsigned char data[2048];
    CHECK(posix_trace_stop(trid));
    for (;;) {
        struct posix_trace_event_info ev;
        size_t len;
        int unavailable;
        CHECK(posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len, &unavailable));
        if (unavailable)
            break;
        fn(&ev, data, len);
    }
}

static void dump_one(const struct posix_trace_event_info *ev, const unsigned char *data,
                     size_t len)
{
    if (ev->posix_event_id >= 8 && ev->posix_event_id < 256)
        print_event(ev, data, len);
    else if (ev->posix_event_id == POSIX_TRACE_OVERFLOW)
        printf("overflow\n");
}

void td_dump(trace_id_t trid)
{
    td_each(trid, dump_one);
    printf("end\n");
    CHECK(posix_trace_shutdown(trid));
}
