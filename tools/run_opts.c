/*
 * posixtrace-run's command line (GOptionContext; parsing stops at the
 * program's name, so "posixtrace-run ls -l" needs no "--").
 */
#include "run.h"

#include <string.h>

static struct run_opts ro; /* what the table below fills */
static struct run_opts *cur = &ro;

static gboolean add_spec(const gchar *n, const gchar *value, gpointer d, GError **err)
{
    (void)n, (void)d, (void)err;
    if (cur->spec->len)
        g_string_append_c(cur->spec, ',');
    g_string_append(cur->spec, value);
    return TRUE;
}

static gboolean set_stack(const gchar *n, const gchar *value, gpointer d, GError **err)
{
    (void)n, (void)d;
    char *end = NULL;
    if (value == NULL) {
        cur->stack = 16;
        return TRUE;
    }
    long v = strtol(value, &end, 10);
    if (end == value || *end != '\0' || v < 0 || v > 64) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--stack: 0..64 frames");
        return FALSE;
    }
    cur->stack = (gint)v;
    return TRUE;
}

#define O(l, s, kind, var, help, arg) { l, s, 0, kind, var, help, arg }

static const GOptionEntry entries[] = {
    O("output", 'o', G_OPTION_ARG_FILENAME, &ro.output,
      "Off-line: write a trace log to FILE instead of printing events", "FILE"),
    O("print-to", 0, G_OPTION_ARG_FILENAME, &ro.print_to, "Print the live events to FILE (default: stderr)",
      "FILE"),
    O("format", 'f', G_OPTION_ARG_STRING, &ro.format, "Live output: text (default), json (JSON Lines), chrome",
      "FMT"),
    O("time", 0, G_OPTION_ARG_STRING, &ro.timefmt, "Time column: rel (default), abs (time of day), epoch, none",
      "FMT"),
    O("addr", 'a', G_OPTION_ARG_NONE, &ro.addr, "Show each event's program address, symbolized", NULL),
    O("no-follow", 0, G_OPTION_ARG_NONE, &ro.no_follow, "Trace the first process only, not its children",
      NULL),
    { "events", 'e', 0, G_OPTION_ARG_CALLBACK, add_spec,
      "What to record: classes (" PT_FILTER_CLASSES ") and event names, '!' excludes, globs allowed "
      "(e.g. -e file,net,!close); repeatable", "SPEC" },
    O("summary", 'c', G_OPTION_ARG_NONE, &ro.summary,
      "At the end, a table per event type (count, errors, time) instead of the events", NULL),
    O("summary-with-events", 'C', G_OPTION_ARG_NONE, &ro.summary_too, "Print the events and the table", NULL),
    O("pid", 'p', G_OPTION_ARG_INT, &ro.pid,
      "Attach to running process PID (libposixtrace loaded), until Ctrl-C or --duration", "PID"),
    O("duration", 0, G_OPTION_ARG_STRING, &ro.duration, "Stop tracing after SEC seconds", "SEC"),
    O("stream-size", 0, G_OPTION_ARG_STRING, &ro.stream_size, "Stream size (default 4M)", "SIZE"),
    O("max-data", 0, G_OPTION_ARG_STRING, &ro.max_data, "Largest user event data kept (default 256)", "SIZE"),
    O("policy", 0, G_OPTION_ARG_STRING, &ro.policy,
      "Stream full policy: loop, until-full, flush (flush needs -o; default: loop, flush with -o)",
      "POLICY"),
    O("log-policy", 0, G_OPTION_ARG_STRING, &ro.log_policy, "Log full policy: loop, until-full, append (default)",
      "POLICY"),
    O("log-size", 0, G_OPTION_ARG_STRING, &ro.log_size, "Log size for --log-policy loop/until-full (default 16M)",
      "SIZE"),
    O("strsize", 's', G_OPTION_ARG_INT, &ro.strsize, "Bytes of each buffer the shim captures (default 32)", "N"),
    { "stack", 'k', G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, set_stack,
      "Record the call stack of each call, up to N frames (default 16)", "N" },
    O("syscalls", 0, G_OPTION_ARG_NONE, &ro.syscalls,
      "Record every system call too (Syscall User Dispatch, Linux >= 5.11, x86-64)", NULL),
    O("name", 'n', G_OPTION_ARG_STRING, &ro.name, "Trace name (default: the program's name)", "NAME"),
    O("no-preload", 0, G_OPTION_ARG_NONE, &ro.no_preload,
      "Do not preload the shim (only what a program linked with libposixtrace records)", NULL),
    O("quiet", 'q', G_OPTION_ARG_NONE, &ro.quiet, "No end-of-run line unless events were lost", NULL),
    O("version", 'V', G_OPTION_ARG_NONE, &ro.version, "Print the version and exit", NULL),
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &ro.argv, NULL, "PROGRAM [ARGS...]" },
    { NULL, 0, 0, 0, NULL, NULL, NULL }
};

static gboolean check(struct run_opts *o, GError **err)
{
    enum pt_format f;
    enum pt_timefmt t;
    if (o->version)
        return TRUE;
    if (o->format != NULL && pt_parse_format(o->format, &f) != 0)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--format: text, json or chrome");
    else if (o->timefmt != NULL && pt_parse_timefmt(o->timefmt, &t) != 0)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--time: rel, abs, epoch or none");
    else if (o->pid < 0)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--pid: a process id");
    else if (o->strsize < -1) /* -1: not given */
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--strsize: a count of bytes");
    else if (o->pid == 0 && (o->argv == NULL || o->argv[0] == NULL))
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "no PROGRAM given (or -p PID)");
    else if (o->pid != 0 && o->argv != NULL && o->argv[0] != NULL)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "-p PID and a PROGRAM: choose one");
    return *err == NULL;
}

gboolean run_parse(int argc, char **argv, struct run_opts *o)
{
    GError *err = NULL;
    memset(&ro, 0, sizeof ro);
    ro.spec = g_string_new(NULL);
    ro.strsize = -1;
    GOptionContext *c = g_option_context_new("- trace a program");
    g_option_context_set_summary(c, "Runs PROGRAM with the posixtrace shim preloaded and traces it from its first\n"
                                 "instruction (its children too), printing its calls as they happen,\n"
                                 "or writing a trace log (-o) for posixtrace-dump.");
    g_option_context_set_description(c, "Exit status: the program's (128+N when it was killed by "
                                     "signal N, which is raised again);\n125 when tracing could not "
                                     "be set up or a write of the log (-o) failed, 126 when PROGRAM cannot be executed, 127 when it\n"
                                     "does not exist. Environment: POSIXTRACE_PRELOAD=PATH names the "
                                     "shim.\nSee posixtrace-run(1).");
    g_option_context_add_main_entries(c, entries, NULL);
    g_option_context_set_strict_posix(c, TRUE);
    gboolean ok = g_option_context_parse(c, &argc, &argv, &err) && check(&ro, &err);
    g_option_context_free(c);
    if (!ok) {
        pt_warn("%s (see --help)", err->message);
        g_error_free(err);
    }
    *o = ro;
    return ok;
}

void run_opts_free(struct run_opts *o)
{
    char **strs[] = { &o->output, &o->print_to, &o->format, &o->timefmt, &o->policy,
                      &o->log_policy, &o->name, &o->stream_size, &o->max_data, &o->log_size,
                      &o->duration };
    for (size_t i = 0; i < G_N_ELEMENTS(strs); i++)
        g_clear_pointer(strs[i], g_free);
    g_string_free(o->spec, TRUE);
    g_strfreev(o->argv);
}
