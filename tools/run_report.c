/*
 * The end of every run says how many events were recorded and lost, why
 * they were lost, and which option avoids it. With -o the log is read back
 * (posix_trace_open) for the counts and the -c table.
 */
#include "run.h"
#include "readloop.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <posixtrace/control.h>
#include <posixtrace/log.h>

static char *size_str(size_t n)
{
    if (n % (1u << 30) == 0)
        return g_strdup_printf("%zuG", n >> 30);
    if (n % (1u << 20) == 0)
        return g_strdup_printf("%zuM", n >> 20);
    if (n % 1024 == 0)
        return g_strdup_printf("%zuK", n >> 10);
    return g_strdup_printf("%zu", n);
}

static void stream_loss(uint64_t lost, const trace_attr_t *a, int have_log)
{
    size_t ss = 0;
    int sp = 0;
    struct timespec bt = { 0, 0 };
    posix_trace_attr_getstreamsize(a, &ss);
    posix_trace_attr_getstreamfullpolicy(a, &sp);
    posixtrace_attr_getblocking(a, &bt);
    char *cur = size_str(ss), *more = size_str(ss * 4 > ((size_t)64 << 20) ? ss * 4 : (size_t)64 << 20);
    /* --block: the program waits for the reader instead (or longer) */
    const char *block = bt.tv_sec != 0 || bt.tv_nsec != 0 ? ", a longer --block=MS"
                                                          : ", --block to make it wait";
    if (have_log)
        pt_warn("%" G_GUINT64_FORMAT " events lost: the stream (%s, policy %s) filled faster than "
                "the log was written; use a larger --stream-size (e.g. --stream-size=%s)%s or "
                "record fewer events (-e)", (guint64)lost, cur, pt_policy_name(sp), more, block);
    else
        pt_warn("%" G_GUINT64_FORMAT " events lost: the stream (%s, policy %s) filled faster than "
                "it was read and printed; use a larger --stream-size (e.g. --stream-size=%s)%s, "
                "-o FILE to write a log instead of printing, or fewer events (-e)",
                (guint64)lost, cur, pt_policy_name(sp), more, block);
    g_free(cur);
    g_free(more);
}

/* The stream reported errors (posix_trace_error): records it found corrupt,
 * or its memory taken away by a traced process (doc/semantics.md). */
static void trace_errors(const struct pt_sink *k)
{
    if (k->trace_errors > 0)
        pt_warn("%" G_GUINT64_FORMAT " trace error(s) (posix_trace_error): events are missing "
                "or were found corrupt", (guint64)k->trace_errors);
}

/* Processes not traced: one line each, and ", N not traced" for the
 * summary line ("" when none). Not judged when events were lost (a lost
 * process_start is not a process that did not start tracing). */
static char *untraced_part(struct session *s)
{
    guint n = 0;
    if (s->untraced != NULL && s->sink->lost == 0)
        n = untraced_report(s->untraced);
    return n > 0 ? g_strdup_printf(", %u not traced", n) : g_strdup("");
}

void run_report_live(const struct run_opts *o, struct session *s, const trace_attr_t *a,
                     const struct posix_trace_status_info *st)
{
    struct pt_sink *k = s->sink;
    trace_errors(k);
    if (k->lost > 0)
        stream_loss(k->lost, a, 0);
    else if (st->posix_stream_overrun_status == POSIX_TRACE_OVERRUN)
        pt_warn("events were lost (the stream reported an overrun); use a larger --stream-size");
    char *nt = untraced_part(s);
    if (!o->quiet || k->lost > 0 || *nt)
        pt_warn("%" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT " shown, %" G_GUINT64_FORMAT
                " lost%s", (guint64)k->events, (guint64)k->shown, (guint64)k->lost, nt);
    g_free(nt);
}

static void log_loss(const trace_attr_t *a, const struct posix_trace_status_info *st)
{
    size_t ls = 0;
    posix_trace_attr_getlogsize(a, &ls);
    char *cur = size_str(ls);
    if (st->posix_log_full_status == POSIX_TRACE_FULL && st->posix_log_overrun_status == POSIX_TRACE_OVERRUN)
        pt_warn("the log wrapped or filled (--log-size=%s): events were overwritten or dropped; "
                "use --log-policy=append or a larger --log-size", cur);
    else if (st->posix_log_overrun_status == POSIX_TRACE_OVERRUN)
        pt_warn("the log overflowed (--log-size=%s): events were overwritten or dropped; use "
                "--log-policy=append or a larger --log-size", cur);
    else if (st->posix_log_full_status == POSIX_TRACE_FULL)
        pt_warn("the log is full (--log-size=%s): tracing stopped when it filled; use "
                "--log-policy=append or a larger --log-size", cur);
    g_free(cur);
}

/* A write of the log failed (the stream's error, or the one the log's
 * status records): the events it took are lost, and the log says how many. */
static int write_loss(const struct run_opts *o, int write_error,
                      const struct posix_trace_status_info *st, uint64_t lost)
{
    int e = write_error != 0 ? write_error : st->posix_stream_flush_error;
    if (e == 0)
        return 0;
    pt_warn("%s: writing the log failed: %s: the log is incomplete, %" G_GUINT64_FORMAT
            " events lost in all; make room on its filesystem or raise the file size limit",
            o->output, g_strerror(e), (guint64)lost);
    return 1;
}

/* Whether the end-of-run checks need event id decoded: losses and trace
 * errors (predefined events), the probes' definitions and calls (counted
 * for the report of probes never bound), the events that tell untraced
 * processes. */
static gboolean report_needs(const struct session *s, trace_event_id_t id)
{
    if (id < POSIXTRACE_SYS_FIRST || id == POSIXTRACE_EV_PROBE_DEF ||
        (id >= POSIXTRACE_PROBE_FIRST && id <= POSIXTRACE_PROBE_LAST))
        return TRUE;
    return s->untraced != NULL && untraced_needs(id);
}

/* The log read back for the end-of-run line. Nothing printed (no -c
 * table, no symbols): only the events report_needs() names go through the
 * sink (decoded); the others are counted, and their pid shown to the
 * untraced-process check. The same counts as the sink's, for a fraction of
 * the time (doc/design.md, "Logs"). */
static int read_back(trace_id_t trid, struct pt_names *names, struct session *s)
{
    static unsigned char buf[PT_DATA_MAX];
    struct pt_sink *k = s->sink;
    if (k->summary != NULL || k->print_events || k->out.sym != NULL)
        return pt_read_all(trid, names, k);
    struct posix_trace_event_info info;
    size_t len;
    int unavailable = 0;
    for (;;) {
        int rc = posix_trace_getnext_event(trid, &info, buf, sizeof buf, &len, &unavailable);
        if (rc != 0 || unavailable)
            return rc;
        if (report_needs(s, info.posix_event_id)) {
            pt_sink_event(k, names, &info, buf, len);
            continue;
        }
        k->events++;
        if (s->untraced != NULL)
            untraced_seen(s->untraced, info.posix_pid);
    }
}

int run_report_log(const struct run_opts *o, struct session *s, const trace_attr_t *a)
{
    struct pt_sink *k = s->sink;
    trace_id_t trid;
    struct pt_names names;
    struct posix_trace_status_info st = { 0 };
    unsigned long long status_lost = 0;
    int fd = open(o->output, O_RDONLY | O_CLOEXEC), rc;
    if (fd < 0 || (rc = posix_trace_open(fd, &trid)) != 0) {
        pt_warn("%s: cannot read the log back: %s", o->output,
                g_strerror(fd < 0 ? errno : rc));
        if (fd >= 0)
            close(fd);
        return write_loss(o, s->write_error, &st, 0);
    }
    pt_names_init(&names, trid);
    pt_sink_begin(k);
    rc = read_back(trid, &names, s);
    if (rc != 0)
        pt_warn("%s: reading the log back: %s", o->output, g_strerror(rc));
    pt_sink_end(k);
    trace_errors(k);
    posixtrace_log_lost(trid, &status_lost);
    uint64_t lost = status_lost > k->lost ? status_lost : k->lost; /* the status: all */
    if (posix_trace_get_status(trid, &st) != 0)
        st = (struct posix_trace_status_info){ 0 };
    int incomplete = write_loss(o, s->write_error, &st, lost);
    if (k->lost > 0 && !incomplete) /* else some are the write's: it said why */
        stream_loss(k->lost, a, 1);
    if (!incomplete) /* the overrun is the write's */
        log_loss(a, &st);
    long long bad = 0, first = -1;
    if (posixtrace_log_damage(trid, &bad, &first) == 0 && bad > 0)
        pt_warn("%s: damaged log: %lld invalid block(s), the first at byte %lld: their events "
                "are missing", o->output, bad, first);
    long long missing = 0;
    int closed = 1;
    if (posixtrace_log_missing(trid, &missing, &closed) == 0 && missing > 0)
        pt_warn("%s: damaged log: %lld block(s) missing: their events are missing", o->output,
                missing);
    bad += missing;
    if (rc == 0 && lost == 0 && bad == 0)
        run_probes_report(); /* the log read back counted each probe's calls */
    char *nt = untraced_part(s);
    if (!o->quiet || lost > 0 || bad > 0 || *nt)
        pt_warn("%" G_GUINT64_FORMAT " events in %s, %" G_GUINT64_FORMAT " lost%s",
                (guint64)k->events, o->output, (guint64)lost, nt);
    g_free(nt);
    pt_names_clear(&names);
    posix_trace_close(trid);
    close(fd);
    return incomplete;
}
