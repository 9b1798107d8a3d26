/*
 * Telling where a damaged log stopped, that blocks are missing from it or
 * that it was not closed, and that a log is incomplete. posix_trace_open
 * skips blocks that fail their checks (doc/log-format.md) and the standard
 * API does not say so; libposixtrace's extensions posixtrace_log_damage()
 * and posixtrace_log_missing() (<posixtrace/log.h>) do.
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

int dump_missing(const char *path, trace_id_t trid)
{
    long long missing = 0;
    int closed = 1;
    if (posixtrace_log_missing(trid, &missing, &closed) != 0)
        return 0;
    if (!closed)
        pt_warn("%s: log not closed: it does not end with the status its writer writes last, "
                "so its end may be missing (the writer was killed or is still writing it, or "
                "its last blocks were removed)", path);
    if (missing > 0)
        pt_warn("%s: damaged log: %lld block(s) missing: their events are not read", path,
                missing);
    return missing > 0;
}

int dump_incomplete(const char *path, trace_id_t trid)
{
    struct posix_trace_status_info st;
    unsigned long long lost = 0;
    if (posix_trace_get_status(trid, &st) != 0 || st.posix_stream_flush_error == 0)
        return 0;
    posixtrace_log_lost(trid, &lost);
    pt_warn("%s: incomplete log: writing it failed (%s); %llu events lost in all", path,
            g_strerror(st.posix_stream_flush_error), lost);
    return 1;
}
