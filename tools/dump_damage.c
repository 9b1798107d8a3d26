/*
 * Telling where a damaged log stopped. posix_trace_open skips blocks that
 * fail their checks (doc/log-format.md) and the standard API does not say so;
 * libposixtrace's extension posixtrace_log_damage() (<posixtrace/log.h>) does.
 */
#include "dump.h"

#include <posixtrace/log.h>

int dump_damage(const char *path, int fd, trace_id_t trid, const struct pt_sink *k,
                uint64_t events_before)
{
    long long bad = 0, first = -1;
    (void)fd;
    if (posixtrace_log_damage(trid, &bad, &first) != 0 || bad == 0)
        return 0;
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
