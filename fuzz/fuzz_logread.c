/*
 * libFuzzer target for the trace-log reader (libtrace/log/logread*.c): the input
 * is a log file (doc/log-format.md). See fuzz/README.md.
 *
 * Random bytes almost never carry right checksums, which would stop the
 * reader at the first check. So unless the input's last byte is odd, the
 * harness first rewrites the header checksum and the checksum of every block
 * that has a block magic and a payload_len that fits, so that the mutations
 * reach the parsers behind the checksums. The reader itself is unchanged.
 *
 * Per input: write it to a memfd, pt_logr_open, read every event with small
 * and large data buffers in turn, rewind in the middle and read everything
 * again (both full passes must agree), get attributes, status, names, bad
 * block count, missing blocks and closed, close. Any inconsistency aborts (a finding).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "log/xxh.h"

#include "log/logread.h"
#include "log/log_format.h"

/* libtrace/api/names.c brings in the whole library; the reader only needs this. */
const char *pt_sys_name(trace_event_id_t id);
const char *pt_sys_name(trace_event_id_t id)
{
    static const char *const n[] = {
        "posix_trace_start", "posix_trace_stop", "posix_trace_filter",
        "posix_trace_overflow", "posix_trace_resume", "posix_trace_flush_start",
        "posix_trace_flush_stop", "posix_trace_error",
    };
    return id < 8 ? n[id] : NULL;
}

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void fix_sums(unsigned char *d, size_t n)
{
    if (n < 4096)
        return;
    uint64_t s = pt_xxh3(d, 4088);
    memcpy(d + 4088, &s, 8);
    uint32_t B = rd32(d + 16);
    if (B < 4096 || B > (16u << 20) || (B & (B - 1)) != 0)
        return;
    for (size_t off = 4096; off + B <= n; off += B) {
        unsigned char *b = d + off;
        uint32_t plen = rd32(b + 16);
        if (memcmp(b, "PXBK", 4) != 0 || plen > B - 64)
            continue;
        unsigned char *tmp = malloc(56 + (size_t)plen);
        CHECK(tmp != NULL);
        memcpy(tmp, b, 56);
        memcpy(tmp + 56, b + 64, plen);
        s = pt_xxh3(tmp, 56 + (size_t)plen);
        memcpy(b + 56, &s, 8);
        free(tmp);
    }
}

static unsigned char big[65536 + 64];

/* Reads up to max events (all when max < 0); returns the count and a digest. */
static long read_all(struct pt_logr *l, long max, uint64_t *digest)
{
    long n = 0;
    uint64_t h = 1469598103934665603ull;
    while (max < 0 || n < max) {
        struct posix_trace_event_info ev;
        size_t num = (n % 3 == 0) ? 0 : (n % 3 == 1) ? 5 : sizeof big;
        size_t len = (size_t)-1;
        int un = -1;
        CHECK(pt_logr_next(l, &ev, num ? big : NULL, num, &len, &un) == 0);
        if (un)
            break;
        CHECK(len <= num && ev.posix_event_id <= PT_LOGF_ID_MAX);
        CHECK(ev.posix_timestamp.tv_nsec >= 0 && ev.posix_timestamp.tv_nsec < 1000000000);
        CHECK(ev.posix_truncation_status >= 0 && ev.posix_truncation_status <= 2);
        CHECK(ev.posix_truncation_status != 2 || len == num);
        CHECK(num != sizeof big || ev.posix_truncation_status != 2);
        h = (h ^ ev.posix_event_id ^ (uint64_t)ev.posix_timestamp.tv_nsec ^
             ((uint64_t)ev.posix_timestamp.tv_sec << 20) ^ len) * 1099511628211ull;
        for (size_t i = 0; i < len && num; i++)
            h = (h ^ big[i]) * 1099511628211ull;
        n++;
    }
    *digest = h;
    return n;
}

static void inspect(struct pt_logr *l, const uint8_t *data, size_t size)
{
    trace_attr_t a;
    struct posix_trace_status_info st;
    char name[64 + 1];
    long long first;
    static const trace_event_id_t ids[] = { 0, 7, 8, 255, 256, 257, 1280, 1281, 2047, 2048, 0xffffffffu };
    pt_logr_attr(l, &a);
    CHECK(memchr(a.__name, '\0', sizeof a.__name) != NULL);
    pt_logr_status(l, &st);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (pt_logr_name(l, ids[i], name) == 0)
            CHECK(strlen(name) <= 63);
    if (size >= 2) {
        trace_event_id_t id = (trace_event_id_t)(data[0] | data[1] << 8) % 1400;
        if (pt_logr_name(l, id, name) == 0)
            CHECK(strlen(name) <= 63);
    }
    CHECK(pt_logr_bad_blocks(l, &first) >= 0);
    int closed = -1;
    CHECK(pt_logr_missing(l, &closed) >= 0);
    CHECK(closed == 0 || closed == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0)
        fd = memfd_create("fuzz_logread", MFD_CLOEXEC);
    CHECK(fd >= 0);
    unsigned char *copy = malloc(size ? size : 1);
    CHECK(copy != NULL);
    if (size)
        memcpy(copy, data, size);
    if (size == 0 || (data[size - 1] & 1) == 0)
        fix_sums(copy, size);
    CHECK(ftruncate(fd, 0) == 0);
    CHECK(size == 0 || pwrite(fd, copy, size, 0) == (ssize_t)size);
    free(copy);

    struct pt_logr *l = NULL;
    int rc = pt_logr_open(fd, &l);
    CHECK(rc == 0 || rc == EINVAL || rc == ENOMEM);
    if (rc != 0)
        return 0;
    uint64_t d1, d2, d0;
    read_all(l, 2, &d0);
    pt_logr_rewind(l);
    long n1 = read_all(l, -1, &d1);
    pt_logr_rewind(l);
    long n2 = read_all(l, -1, &d2);
    CHECK(n1 == n2 && d1 == d2);
    inspect(l, data, size);
    pt_logr_close(l);
    return 0;
}
