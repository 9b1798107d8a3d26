/*
 * Telling where a damaged log stopped. posix_trace_open skips blocks that
 * fail their checks (doc/log-format.md) and the standard API does not say so;
 * libposixtrace's extension posixtrace_log_damage() does, when the library
 * has it (weak reference). Without it, the one damage the file's size shows
 * is checked: a log whose writer was killed ends in a partial block.
 */
#include "dump.h"

#include <sys/stat.h>
#include <unistd.h>

/* Proposed extension: the count of invalid blocks of a pre-recorded
 * stream and the file offset of the first (-1: none). */
extern int posixtrace_log_damage(trace_id_t trid, long long *bad_blocks,
                                 long long *first_offset) __attribute__((weak));

/* The block size from the log's header (offset 16, little-endian). */
static long long block_size(int fd)
{
    unsigned char b[4];
    if (pread(fd, b, sizeof b, 16) != (ssize_t)sizeof b)
        return 0;
    return (long long)b[0] | (long long)b[1] << 8 | (long long)b[2] << 16 | (long long)b[3] << 24;
}

static int partial_tail(int fd, long long *bad, long long *first)
{
    struct stat sb;
    long long bs = block_size(fd);
    if (fstat(fd, &sb) != 0 || bs <= 0 || sb.st_size < 4096)
        return 0;
    long long tail = (long long)(sb.st_size - 4096) % bs;
    if (tail == 0)
        return 0;
    *bad = 1;
    *first = (long long)sb.st_size - tail;
    return 1;
}

int dump_damage(const char *path, int fd, trace_id_t trid, const struct pt_sink *k,
                uint64_t events_before)
{
    long long bad = 0, first = -1;
    if (posixtrace_log_damage != NULL) {
        if (posixtrace_log_damage(trid, &bad, &first) != 0 || bad == 0)
            return 0;
    } else if (!partial_tail(fd, &bad, &first)) {
        return 0;
    }
    uint64_t n = k->events - events_before;
    if (n > 0)
        pt_warn("%s: damaged log: %lld invalid block(s), the first at byte %lld; read %" G_GUINT64_FORMAT
                " events, the last at %.9f s from the first event", path, bad, first, (guint64)n,
                (double)(k->last_ns - k->out.t0) / 1e9);
    else
        pt_warn("%s: damaged log: %lld invalid block(s), the first at byte %lld; no events before it",
                path, bad, first);
    return 1;
}
