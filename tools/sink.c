/*
 * What happens to each event read: decoding, loss accounting, filters
 * (event set, -Z/-z, --pid, --tid, time window), then the summary and the
 * output, and the processes' ends (proc_end.c).
 */
#include "../libtrace/ring/pt_bounds.h"
#include "ptools.h"

#include <string.h>

void pt_sink_init(struct pt_sink *k)
{
    memset(k, 0, sizeof *k);
    k->out.fp = stderr;
    k->print_events = 1;
    k->ended = g_hash_table_new(g_direct_hash, g_direct_equal);
}

void pt_sink_begin(struct pt_sink *k)
{
    if (k->print_events && k->out.format == PT_FMT_CHROME)
        pt_chrome_begin(&k->out);
}

static gboolean in_list(GArray *a, int64_t v)
{
    for (guint i = 0; i < a->len; i++)
        if (g_array_index(a, gint64, i) == v)
            return TRUE;
    return FALSE;
}

/* Losses and trace errors are always shown, whatever -e says. */
static gboolean always_shown(trace_event_id_t id)
{
    return id == POSIX_TRACE_OVERFLOW || id == POSIX_TRACE_RESUME || id == POSIX_TRACE_ERROR;
}

static gboolean in_window(struct pt_sink *k, int64_t ts)
{
    if (k->have_from && ts < (k->from_abs ? k->from_ns : pt_ns_add(k->out.t0, k->from_ns)))
        return FALSE;
    if (k->have_to && ts > (k->to_abs ? k->to_ns : pt_ns_add(k->out.t0, k->to_ns)))
        return FALSE;
    return TRUE;
}

static gboolean selected(struct pt_sink *k, const struct pt_event *e)
{
    int m = 1;
    if (k->have_keep && !always_shown(e->id))
        posix_trace_eventset_ismember(e->id, &k->keep, &m);
    if (!m)
        return FALSE;
    if (k->outcome != PT_SHOW_ALL_CALLS && pt_call_returns(e) &&
        (e->hdr.err != 0) != (k->outcome == PT_SHOW_FAILED))
        return FALSE;
    if (k->pids != NULL && !in_list(k->pids, e->info.posix_pid))
        return FALSE;
    if (k->tids != NULL && !in_list(k->tids, e->tid) &&
        !in_list(k->tids, (int64_t)e->info.posix_thread_id))
        return FALSE;
    return in_window(k, e->ts_ns);
}

/* An OVERFLOW's count of lost events. The library never reports more than
 * PT_LOST_MAX lost in all (libtrace/ring/pt_bounds.h): a count that would take the
 * total past it is corrupt, counted as a trace error, never printed. */
static void add_lost(struct pt_sink *k, const struct pt_event *e)
{
    uint64_t lost;
    if (e->len != sizeof lost) {
        k->trace_errors++;
        return;
    }
    memcpy(&lost, e->data, sizeof lost);
    if (lost > PT_LOST_MAX || k->lost + lost > PT_LOST_MAX)
        k->trace_errors++;
    else
        k->lost += lost;
}

static void print_event(struct pt_sink *k, const struct pt_event *e)
{
    switch (k->out.format) {
    case PT_FMT_TEXT: pt_text_event(&k->out, e); break;
    case PT_FMT_JSON: pt_json_event(&k->out, e); break;
    case PT_FMT_CHROME: pt_chrome_event(&k->out, e); break;
    }
}

void pt_sink_event(struct pt_sink *k, struct pt_names *n, const struct posix_trace_event_info *info,
                   const unsigned char *data, size_t len)
{
    struct pt_event e;
    pt_decode(&e, n, info, data, len);
    if (!k->out.have_t0) {
        k->out.t0 = e.ts_ns;
        k->out.have_t0 = 1;
        k->first_ns = e.ts_ns;
    }
    k->last_ns = e.ts_ns;
    k->events++;
    if (e.id == POSIX_TRACE_OVERFLOW)
        add_lost(k, &e);
    if (e.id == POSIX_TRACE_ERROR)
        k->trace_errors++;
    if (e.kind == PT_K_CALL && e.hdr.err != 0)
        k->errors++;
    if (k->out.sym != NULL)
        pt_sym_learn(k->out.sym, &e);
    if (k->observe != NULL)
        k->observe(k->observe_ctx, &e);
    pid_t end_pid = 0;
    int end_status = 0, ends = pt_end_of(k->ended, &e, &end_pid, &end_status);
    int shown = selected(k, &e);
    if (shown) {
        k->shown++;
        if (k->summary != NULL)
            pt_summary_add(k->summary, &e);
        if (k->print_events) {
            k->out.end_pending = ends;
            k->out.end_pid = end_pid;
            k->out.end_status = end_status;
            print_event(k, &e);
            k->out.end_pending = 0;
        }
    }
    pt_fds_learn(k->out.fds, &e); /* after the event's own line: it shows the table before it */
    /* a process's end is shown whatever -e, -Z/-z say (as strace's +++ lines) */
    if (ends && k->print_events && (k->pids == NULL || in_list(k->pids, end_pid)) &&
        k->tids == NULL && in_window(k, e.ts_ns))
        pt_end_print(&k->out, end_pid, e.ts_ns, end_status, shown);
}

void pt_sink_end(struct pt_sink *k)
{
    if (k->print_events && k->out.format == PT_FMT_CHROME)
        pt_chrome_end(&k->out);
    /* JSON output stays JSON: the table goes to stderr */
    if (k->summary != NULL)
        pt_summary_print(k->summary, k->print_events && k->out.format != PT_FMT_TEXT ? stderr
                                                                                       : k->out.fp);
    fflush(k->out.fp);
}

void pt_sink_free(struct pt_sink *k)
{
    pt_summary_free(k->summary);
    k->summary = NULL;
    g_clear_pointer(&k->ended, g_hash_table_destroy);
    if (k->pids != NULL)
        g_array_free(k->pids, TRUE);
    if (k->tids != NULL)
        g_array_free(k->tids, TRUE);
    k->pids = k->tids = NULL;
    if (k->out.sym != NULL)
        pt_sym_free(k->out.sym);
    k->out.sym = NULL;
    pt_fds_free(k->out.fds);
    k->out.fds = NULL;
}
