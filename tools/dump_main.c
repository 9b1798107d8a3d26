/*
 * posixtrace-dump [OPTIONS] LOG...: reads trace logs with posix_trace_open
 * and the getnext family, and writes their events as text, JSON Lines or a
 * Chrome trace, or a summary table, or what the log says about itself.
 */
#include "config.h"
#include "dump.h"
#include "readloop.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

static struct {
    char *format, *output, *timefmt, *from, *to;
    GString *spec;
    GArray *pids, *tids;
    gboolean summary, summary_too, info, symbolize, addr, version, failed_only, successful_only;
    gboolean relative;
    char *format_j;
    gint strsize;
    gint fds;          /* -y: 1, -yy: 2 */
    gchar **logs;
} opt;

/* -y, -yy: how many times -y was given. */
static gboolean count_y(const gchar *n, const gchar *v, gpointer d, GError **err)
{
    (void)n, (void)v, (void)d, (void)err;
    opt.fds++;
    return TRUE;
}

static gboolean add_spec(const gchar *name, const gchar *value, gpointer data, GError **err)
{
    (void)name, (void)data, (void)err;
    if (opt.spec->len)
        g_string_append_c(opt.spec, ',');
    g_string_append(opt.spec, value);
    return TRUE;
}

/* --pid: a process id; --tid: a kernel tid or a pthread_t (trace id). */
static gboolean add_id(GArray **a, const gchar *value, GError **err, const char *what)
{
    long n;
    if (!pt_int_opt(what, value, 1, strcmp(what, "--pid") == 0 ? INT_MAX : LONG_MAX, &n, err))
        return FALSE;
    gint64 v = n;
    if (*a == NULL)
        *a = g_array_new(FALSE, FALSE, sizeof(gint64));
    g_array_append_val(*a, v);
    return TRUE;
}

static gboolean add_pid(const gchar *n, const gchar *v, gpointer d, GError **err)
{
    (void)n, (void)d;
    return add_id(&opt.pids, v, err, "--pid");
}

static gboolean add_tid(const gchar *n, const gchar *v, gpointer d, GError **err)
{
    (void)n, (void)d;
    return add_id(&opt.tids, v, err, "--tid");
}

static gboolean set_strsize(const gchar *n, const gchar *v, gpointer d, GError **err)
{
    (void)n, (void)d;
    long x;
    if (!pt_int_opt("--strsize", v, 0, INT_MAX, &x, err))
        return FALSE;
    opt.strsize = (gint)x;
    return TRUE;
}

static const GOptionEntry entries[] = {
    { "format", 'j', 0, G_OPTION_ARG_STRING, &opt.format,
      "Output format: text (default), json (JSON Lines), chrome (Chrome Trace Event JSON)", "FMT" },
    { "format-f", 'f', G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &opt.format_j,
      "Output format (-f, as before posixtrace-run's -f meant follow)", "FMT" },
    { "failed-only", 'Z', 0, G_OPTION_ARG_NONE, &opt.failed_only, "Show only the calls that failed", NULL },
    { "successful-only", 'z', 0, G_OPTION_ARG_NONE, &opt.successful_only,
      "Show only the calls that did not fail", NULL },
    { "relative", 'r', 0, G_OPTION_ARG_NONE, &opt.relative,
      "Time column: time since the previous line's call started (--time=delta, as strace -r)", NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &opt.output, "Write to FILE instead of stdout", "FILE" },
    { "summary", 'c', 0, G_OPTION_ARG_NONE, &opt.summary,
      "Print a table per event type (count, errors, time) instead of the events", NULL },
    { "summary-with-events", 'C', 0, G_OPTION_ARG_NONE, &opt.summary_too,
      "Print the events, then the table", NULL },
    { "info", 'i', 0, G_OPTION_ARG_NONE, &opt.info,
      "Print the log's name, attributes, status, creation time and event types", NULL },
    { "events", 'e', 0, G_OPTION_ARG_CALLBACK, add_spec,
      "Event types to show: classes (" PT_FILTER_CLASSES ") and names, '!' excludes, "
      "globs allowed (e.g. -e 'file,!close'), function names (openat, wait4) select the events "
      "recording them", "SPEC" },
    { "pid", 'p', 0, G_OPTION_ARG_CALLBACK, add_pid, "Only events of process PID (repeatable)", "PID" },
    { "tid", 't', 0, G_OPTION_ARG_CALLBACK, add_tid, "Only events of thread TID (repeatable)", "TID" },
    { "from", 0, 0, G_OPTION_ARG_STRING, &opt.from,
      "Only events at or after SEC seconds from the first event (@SEC: absolute, epoch)", "SEC" },
    { "to", 0, 0, G_OPTION_ARG_STRING, &opt.to,
      "Only events at or before SEC seconds from the first event (@SEC: absolute, epoch)", "SEC" },
    { "time", 0, 0, G_OPTION_ARG_STRING, &opt.timefmt,
      "Time column of the text output (when each call started): rel (default, since the first "
      "event), delta (since the previous line), clock (time of day, seconds), abs (time of day, "
      "microseconds), epoch, none", "FMT" },
    { "symbolize", 's', 0, G_OPTION_ARG_NONE, &opt.symbolize,
      "Show program addresses and stacks as function (file:line) or module+offset (inlined "
      "functions too; binaries checked against the build ids the trace recorded)", NULL },
    { "addr", 'a', 0, G_OPTION_ARG_NONE, &opt.addr, "Show the program address of each event", NULL },
    { "decode-fds", 'y', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, count_y,
      "As strace: show the file, pipe or socket behind each descriptor (3</etc/passwd>), learned "
      "from the trace (its opens, pipes, sockets, dups, and the descriptors each process started "
      "with if the log has them: posixtrace-run -y -o); -yy: sockets' protocol and addresses too",
      NULL },
    { "strsize", 0, 0, G_OPTION_ARG_CALLBACK, set_strsize,
      "Show at most N bytes of each captured buffer (text output; 0, the default: all)", "N" },
    { "version", 'V', 0, G_OPTION_ARG_NONE, &opt.version, "Print the version and exit", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt.logs, NULL, "LOG..." },
    { NULL, 0, 0, 0, NULL, NULL, NULL }
};

static gboolean parse(int argc, char **argv, struct pt_sink *k)
{
    GError *err = NULL;
    GOptionContext *c = g_option_context_new("- read posixtrace trace logs");
    g_option_context_set_summary(c, "Reads trace logs written by posixtrace-run -o or "
                                 "posix_trace_create_withlog() with posix_trace_open(),\n"
                                 "and writes their events.");
    g_option_context_set_description(c, "Exit status: 0 when every log was read whole, 1 when a "
                                     "log could not be opened, is damaged\n(its events are written "
                                     "up to the damage, or blocks are missing) or incomplete (a write of it failed),\n"
                                     "2 for bad options. A log not closed (its writer was killed) is read with a warning.\n"
                                     "See posixtrace-dump(1).");
    g_option_context_add_main_entries(c, entries, NULL);
    gboolean ok = g_option_context_parse(c, &argc, &argv, &err);
    if (ok && opt.format_j != NULL && opt.format == NULL) {
        g_free(opt.format);
        opt.format = opt.format_j;
        opt.format_j = NULL;
    }
    if (ok && opt.fds > 2)
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "-y: at most -yy");
    if (ok && opt.relative && opt.timefmt == NULL)
        opt.timefmt = g_strdup("delta");
    if (ok && opt.failed_only && opt.successful_only)
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "-Z and -z: choose one");
    if (ok && opt.format != NULL && pt_parse_format(opt.format, &k->out.format) != 0)
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--format %s: text, json or chrome", opt.format);
    if (ok && opt.timefmt != NULL && pt_parse_timefmt(opt.timefmt, &k->out.timefmt) != 0)
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--time %s: rel, delta, clock, abs, epoch or none", opt.timefmt);
    if (ok && opt.from != NULL && !pt_parse_seconds(opt.from, &k->from_ns, &k->from_abs))
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--from %s: seconds from the first event, or @seconds since the Epoch (within "
                    "+-9.2e9)", opt.from);
    if (ok && opt.to != NULL && !pt_parse_seconds(opt.to, &k->to_ns, &k->to_abs))
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--to %s: seconds from the first event, or @seconds since the Epoch (within "
                    "+-9.2e9)", opt.to);
    if (ok && err == NULL && !opt.version && (opt.logs == NULL || opt.logs[0] == NULL))
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "no LOG given");
    g_option_context_free(c);
    if (err != NULL) {
        pt_warn("%s (see --help)", err->message);
        g_error_free(err);
        return FALSE;
    }
    return TRUE;
}

static void setup_sink(struct pt_sink *k)
{
    k->out.fp = stdout;
    k->have_from = opt.from != NULL;
    k->have_to = opt.to != NULL;
    k->out.strsize = (size_t)opt.strsize;
    k->out.show_addr = opt.addr || opt.symbolize;
    if (opt.symbolize)
        k->out.sym = pt_sym_new();
    if (opt.fds)
        k->out.fds = pt_fds_new(opt.fds);
    if (opt.summary || opt.summary_too)
        k->summary = pt_summary_new();
    k->print_events = !opt.summary || opt.summary_too;
    k->outcome = opt.failed_only ? PT_SHOW_FAILED
                 : opt.successful_only ? PT_SHOW_SUCCESSFUL : PT_SHOW_ALL_CALLS;
    k->pids = opt.pids;
    k->tids = opt.tids;
    opt.pids = opt.tids = NULL;
}

/* Reads one log into k; 0, or 1 when it could not be opened or is damaged. */
static int dump_one(const char *path, struct pt_sink *k)
{
    trace_id_t trid;
    struct pt_names names;
    GError *err = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc, bad = 0;
    if (fd < 0) {
        pt_warn("%s: %s", path, g_strerror(errno));
        return 1;
    }
    rc = posix_trace_open(fd, &trid);
    if (rc != 0) {
        pt_warn("%s: %s", path, rc == EINVAL ? "not a posixtrace log (or its header is damaged)"
                                              : g_strerror(rc));
        close(fd);
        return 1;
    }
    if (opt.info) {
        dump_info(k->out.fp, path, trid);
    } else if (opt.spec->len && !pt_filter_parse(opt.spec->str, NULL, trid, NULL, NULL, &k->keep, &err)) {
        pt_warn("%s", err->message);
        g_error_free(err);
        bad = 2;
    } else {
        uint64_t before = k->events;
        k->have_keep = opt.spec->len != 0;
        pt_names_init(&names, trid);
        rc = pt_read_all(trid, &names, k);
        if (rc != 0)
            pt_warn("%s: reading stopped after %" G_GUINT64_FORMAT " events: %s", path,
                    (guint64)(k->events - before), g_strerror(rc));
        bad = rc != 0 || dump_damage(path, fd, trid, k, before);
        bad = dump_missing(path, trid) || bad;
        bad = dump_incomplete(path, trid) || bad;
        pt_names_clear(&names);
    }
    posix_trace_close(trid);
    close(fd);
    return bad;
}

int main(int argc, char **argv)
{
    struct pt_sink k;
    int status = 0;
    pt_prog = "posixtrace-dump";
    pt_sink_init(&k);
    opt.spec = g_string_new(NULL);
    if (!parse(argc, argv, &k))
        return 2;
    if (opt.version) {
        printf("posixtrace-dump (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        return 0;
    }
    setup_sink(&k);
    if (opt.output != NULL && (k.out.fp = fopen(opt.output, "w")) == NULL) {
        pt_warn("%s: %s", opt.output, g_strerror(errno));
        return 1;
    }
    if (!opt.info)
        pt_sink_begin(&k);
    for (int i = 0; opt.logs[i] != NULL; i++) {
        int rc = dump_one(opt.logs[i], &k);
        status = rc > status ? rc : status;
    }
    if (!opt.info)
        pt_sink_end(&k);
    if (fflush(k.out.fp) != 0 || (k.out.fp != stdout && fclose(k.out.fp) != 0)) {
        pt_warn("%s: %s", opt.output ? opt.output : "stdout", g_strerror(errno));
        status = 1;
    }
    pt_sink_free(&k);
    pt_tidmap_free();
    g_strfreev(opt.logs);
    g_string_free(opt.spec, TRUE);
    g_free(opt.format);
    g_free(opt.format_j);
    g_free(opt.output);
    g_free(opt.timefmt);
    g_free(opt.from);
    g_free(opt.to);
    return status;
}
