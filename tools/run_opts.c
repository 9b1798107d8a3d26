/*
 * posixtrace-run's command line (GOptionContext; parsing stops at the
 * program's name, so "posixtrace-run ls -l" needs no "--").
 */
#include "run.h"

#include "../libtrace/ring/pt_sizes.h"

#include <posixtrace/control.h>

#include <limits.h>
#include <stdlib.h>
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

static gboolean add_probe(const gchar *n, const gchar *value, gpointer d, GError **err)
{
    (void)d;
    return strcmp(n, "--probes") == 0 ? run_probes_file(value, err) : run_probe_add(value, err);
}

static gboolean set_stack(const gchar *n, const gchar *value, gpointer d, GError **err)
{
    (void)n, (void)d;
    long v;
    if (value == NULL) {
        cur->stack = RUN_STACK_DEFAULT;
        return TRUE;
    }
    if (!pt_int_opt("--stack", value, 0, SHIM_STACK_FRAMES_MAX, &v, err))
        return FALSE;
    cur->stack = (gint)v;
    return TRUE;
}

/* --block[=MS]: blocking writers (posixtrace_attr_setblocking), 1 ms to
 * the library's bound, checked before anything is created. */
static gboolean set_block(const gchar *n, const gchar *value, gpointer d, GError **err)
{
    (void)n, (void)d;
    long v = RUN_BLOCK_DEFAULT_MS;
    if (value != NULL && !pt_int_opt("--block", value, 1, POSIXTRACE_BLOCK_TIMEOUT_MAX_MS, &v, err))
        return FALSE;
    cur->block_ms = (gint)v;
    return TRUE;
}

/* -t, -tt, -ttt: how many times -t was given. */
static gboolean count_t(const gchar *n, const gchar *value, gpointer d, GError **err)
{
    (void)n, (void)value, (void)d, (void)err;
    cur->t_count++;
    return TRUE;
}

/* -y, -yy: how many times -y was given. */
static gboolean count_y(const gchar *n, const gchar *value, gpointer d, GError **err)
{
    (void)n, (void)value, (void)d, (void)err;
    cur->fds++;
    return TRUE;
}

/* -s/--strsize and -p/--pid: whole numbers in their ranges. */
static gboolean set_number(const gchar *n, const gchar *value, gpointer d, GError **err)
{
    (void)d;
    long v;
    int pid = strcmp(n, "-p") == 0 || strcmp(n, "--pid") == 0;
    if (!pt_int_opt(pid ? "--pid" : "--strsize", value, pid ? 1 : 0,
                    pid ? INT_MAX : (long)PT_SYS_DATA_BYTES, &v, err))
        return FALSE;
    *(pid ? &cur->pid : &cur->strsize) = (gint)v;
    return TRUE;
}

#define O(l, s, kind, var, help, arg) { l, s, 0, kind, var, help, arg }

static const GOptionEntry entries[] = {
    O("output", 'o', G_OPTION_ARG_FILENAME, &ro.output,
      "Off-line: write a trace log to FILE instead of printing events", "FILE"),
    O("print-to", 0, G_OPTION_ARG_FILENAME, &ro.print_to, "Print the live events to FILE (default: stderr)",
      "FILE"),
    O("format", 'j', G_OPTION_ARG_STRING, &ro.format,
      "Live output: text (default), json (JSON Lines), chrome; -f FMT still works for these three", "FMT"),
    O("time", 0, G_OPTION_ARG_STRING, &ro.timefmt,
      "Time column (when each call started): rel (default, since the first event), delta (since the "
      "previous line), clock (time of day, seconds), abs (time of day, microseconds), epoch, none",
      "FMT"),
    { "tod", 't', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, count_t,
      "As strace: -t time of day, -tt with microseconds, -ttt seconds since the Epoch", NULL },
    O("relative", 'r', G_OPTION_ARG_NONE, &ro.relative,
      "As strace -r: time since the previous line's call started (--time=delta)", NULL),
    O("failed-only", 'Z', G_OPTION_ARG_NONE, &ro.failed_only, "Show only the calls that failed", NULL),
    O("successful-only", 'z', G_OPTION_ARG_NONE, &ro.successful_only,
      "Show only the calls that did not fail", NULL),
    O("follow", 'f', G_OPTION_ARG_NONE, &ro.follow,
      "Trace the children too (the default; as strace -f)", NULL),
    O("addr", 'a', G_OPTION_ARG_NONE, &ro.addr, "Show each event's program address, symbolized", NULL),
    { "decode-fds", 'y', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, count_y,
      "As strace: show the file, pipe or socket behind each descriptor (3</etc/passwd>), from the "
      "trace (opens, pipes, sockets, dups, and the descriptors each process started with, which "
      "the shim records only with -y); -yy: sockets' protocol and addresses too", NULL },
    O("no-follow", 0, G_OPTION_ARG_NONE, &ro.no_follow, "Trace the first process only, not its children",
      NULL),
    { "events", 'e', 0, G_OPTION_ARG_CALLBACK, add_spec,
      "What to record: classes (" PT_FILTER_CLASSES ") and event names, '!' excludes, globs allowed "
      "(e.g. -e 'file,net,!close'); function names (openat, wait4, clone) select the events "
      "recording them; user:NAME a user event; repeatable", "SPEC" },
    { "probe", 0, 0, G_OPTION_ARG_CALLBACK, add_probe,
      "Record each call of a library function with its arguments and result, e.g. "
      "'libm.so.6:cos(double x)->double', or OBJECT:FUNCTION for ltrace.conf's prototype (doc/tools.md "
      "\"Probes\"); repeatable", "SPEC" },
    { "probes", 0, 0, G_OPTION_ARG_CALLBACK, add_probe,
      "The probes of a file ([OBJECT] groups, FUNCTION=(TYPES)->TYPE keys); repeatable", "FILE" },
    O("summary", 'c', G_OPTION_ARG_NONE, &ro.summary,
      "At the end, a table per event type (count, errors, time) instead of the events", NULL),
    O("summary-with-events", 'C', G_OPTION_ARG_NONE, &ro.summary_too, "Print the events and the table", NULL),
    { "pid", 'p', 0, G_OPTION_ARG_CALLBACK, set_number,
      "Attach to running process PID (libposixtrace loaded), until Ctrl-C or --duration", "PID" },
    O("duration", 0, G_OPTION_ARG_STRING, &ro.duration, "Stop tracing after SEC seconds", "SEC"),
    O("stream-size", 0, G_OPTION_ARG_STRING, &ro.stream_size, "Stream size: 1 byte to 1G (default: live, 1/1024 of the memory from 4M to 64M; "
      "4M with -o)", "SIZE"),
    O("max-data", 0, G_OPTION_ARG_STRING, &ro.max_data, "Largest user event data kept: 0 to 64K (default 256)", "SIZE"),
    O("policy", 0, G_OPTION_ARG_STRING, &ro.policy,
      "Stream full policy: loop, until-full, flush (flush needs -o; default: loop, flush with -o)",
      "POLICY"),
    O("log-policy", 0, G_OPTION_ARG_STRING, &ro.log_policy, "Log full policy: loop, until-full, append (default)",
      "POLICY"),
    { "block", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, set_block,
      "When the stream is full, writers wait up to MS ms (1 to 10000, default 100) for the "
      "reader or the log's flusher to make room, instead of losing events (an extension)",
      "MS" },
    O("log-size", 0, G_OPTION_ARG_STRING, &ro.log_size, "Log size for --log-policy loop/until-full: at least 36K with --max-data 256 (default 16M)",
      "SIZE"),
    { "strsize", 's', 0, G_OPTION_ARG_CALLBACK, set_number,
      "Bytes of each buffer the shim captures: 0 to 1024 (default 32)", "N" },
    { "stack", 'k', G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, set_stack,
      "Record the call stack of each call, up to N frames: 0 to 64 (default 16)", "N" },
    O("syscalls", 0, G_OPTION_ARG_NONE, &ro.syscalls,
      "Record every system call too (Syscall User Dispatch, Linux >= 5.11, x86-64)", NULL),
    O("name", 'n', G_OPTION_ARG_STRING, &ro.name, "Trace name (default: the program's name)", "NAME"),
    O("no-preload", 0, G_OPTION_ARG_NONE, &ro.no_preload,
      "Do not preload the shim (only what a program linked with libposixtrace records)", NULL),
    O("quiet", 'q', G_OPTION_ARG_NONE, &ro.quiet, "No end-of-run line unless events were lost", NULL),
    O("version", 'V', G_OPTION_ARG_NONE, &ro.version, "Print the version and exit", NULL),
    O("info", 0, G_OPTION_ARG_NONE, &ro.info,
      "Print what a trace taken now would use (its clock, and why) and exit", NULL),
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &ro.argv, NULL, "PROGRAM [ARGS...]" },
    { NULL, 0, 0, 0, NULL, NULL, NULL }
};

/* ---- strace habits GOption cannot express, rewritten before parsing ----
 * -k/--stack take an optional N, which GOption would take from the next
 * argument even when it is the program ("-k ls"): N is only a whole number
 * following, else the default depth. "-f text|json|chrome": the output
 * format, as -f meant before it meant follow. */
static const GOptionEntry *entry_of(char c, const char *l, size_t n)
{
    for (const GOptionEntry *e = entries; e->long_name != NULL; e++)
        if (c ? e->short_name == c : strlen(e->long_name) == n && strncmp(e->long_name, l, n) == 0)
            return e;
    return NULL;
}

static gboolean takes_value(const GOptionEntry *e)
{
    return e != NULL && e->arg != G_OPTION_ARG_NONE &&
           !(e->flags & (G_OPTION_FLAG_NO_ARG | G_OPTION_FLAG_OPTIONAL_ARG));
}

static gboolean is_number(const char *s)
{
    return s != NULL && *s != '\0' && strspn(s, "0123456789") == strlen(s);
}

static gboolean is_format(const char *s)
{
    enum pt_format f;
    return s != NULL && pt_parse_format(s, &f) == 0;
}

/* "--stack=N" for -k/--stack at argv[*i] (N attached, following, or the default). */
static char *stack_arg(const char *attached, char **argv, int argc, int *i)
{
    if (is_number(attached))
        return g_strdup_printf("--stack=%s", attached);
    if (*i + 1 < argc && is_number(argv[*i + 1]))
        return g_strdup_printf("--stack=%s", argv[++*i]);
    return g_strdup_printf("--stack=%d", RUN_STACK_DEFAULT);
}

/* A cluster of short options "-abc" (and the value that may follow). */
static void short_cluster(GPtrArray *out, char **argv, int argc, int *i)
{
    const char *a = argv[*i];
    GString *kept = g_string_new("-");
    char *extra = NULL;
    for (size_t j = 1; a[j] != '\0'; j++) {
        const GOptionEntry *e = entry_of(a[j], NULL, 0);
        if (a[j] == 'k' && extra == NULL) {
            extra = stack_arg(is_number(a + j + 1) ? a + j + 1 : NULL, argv, argc, i);
            if (is_number(a + j + 1))
                break;
        } else if (a[j] == 'f' && a[j + 1] == '\0' && *i + 1 < argc && is_format(argv[*i + 1])) {
            extra = g_strdup_printf("--format=%s", argv[++*i]);
        } else {
            g_string_append_c(kept, a[j]);
            if (takes_value(e)) {
                g_string_append(kept, a + j + 1);
                if (a[j + 1] == '\0' && *i + 1 < argc) {
                    g_ptr_array_add(out, g_string_free(kept, FALSE));
                    kept = g_string_new(argv[++*i]);
                }
                break;
            }
        }
    }
    if (kept->len > 1 || kept->str[0] != '-')
        g_ptr_array_add(out, g_string_free(kept, FALSE));
    else
        g_string_free(kept, TRUE);
    if (extra != NULL)
        g_ptr_array_add(out, extra);
}

static char **strace_argv(int argc, char **argv)
{
    GPtrArray *out = g_ptr_array_new();
    int i = 0;
    g_ptr_array_add(out, g_strdup(argv[0]));
    for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            break;
        if (a[1] != '-') {
            short_cluster(out, argv, argc, &i);
            continue;
        }
        size_t n = strcspn(a + 2, "=");
        if (strcmp(a, "--stack") == 0) {
            g_ptr_array_add(out, stack_arg(NULL, argv, argc, &i));
            continue;
        }
        g_ptr_array_add(out, g_strdup(a));
        if (a[2 + n] == '\0' && takes_value(entry_of(0, a + 2, n)) && i + 1 < argc)
            g_ptr_array_add(out, g_strdup(argv[++i]));
    }
    for (; i < argc; i++)
        g_ptr_array_add(out, g_strdup(argv[i]));
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

static gboolean check(struct run_opts *o, GError **err)
{
    enum pt_format f;
    enum pt_timefmt t;
    if (o->version || o->info)
        return TRUE;
    if (o->format != NULL && pt_parse_format(o->format, &f) != 0)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--format %s: text, json or chrome", o->format);
    else if (o->timefmt != NULL && pt_parse_timefmt(o->timefmt, &t) != 0)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--time %s: rel, delta, clock, abs, epoch or none", o->timefmt);
    else if (o->output != NULL && (o->format != NULL || o->timefmt != NULL || o->t_count ||
                                   o->relative || o->failed_only || o->successful_only))
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                    "%s: with -o nothing is printed, the log holds every event: "
                    "print it with posixtrace-dump (which takes the same option)",
                    o->format != NULL ? "--format" : o->timefmt != NULL ? "--time"
                    : o->t_count ? "-t" : o->relative ? "-r" : o->failed_only ? "-Z" : "-z");
    else if (o->failed_only && o->successful_only)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "-Z and -z: choose one");
    else if (o->follow && o->no_follow)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "-f and --no-follow: choose one");
    else if ((o->t_count != 0) + o->relative + (o->timefmt != NULL) > 1)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "-t, -r and --time: choose one");
    else if (o->fds > 2)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "-y: at most -yy");
    else if (o->t_count > 3)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "-t: at most -ttt");
    else if (o->pid == 0 && (o->argv == NULL || o->argv[0] == NULL))
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "no PROGRAM given (or -p PID)");
    else if (o->pid != 0 && o->argv != NULL && o->argv[0] != NULL)
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "-p PID and a PROGRAM: choose one");
    else if (o->pid != 0 && (o->stack > 0 || o->strsize >= 0)) /* the shim's, set at its start */
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                    "-p PID: --stack and --strsize cannot change a running process (its shim "
                    "took POSIXTRACE_STACK and POSIXTRACE_STRSIZE from its environment at start)");
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
                                     "be set up (bad options too) or a write of the log (-o) failed, 126 when PROGRAM cannot be executed, 127 when it\n"
                                     "does not exist. Environment: POSIXTRACE_PRELOAD=PATH names the "
                                     "shim.\nSee posixtrace-run(1).");
    g_option_context_add_main_entries(c, entries, NULL);
    g_option_context_set_strict_posix(c, TRUE);
    /* GOption takes the strings it parses out of args: orig frees them */
    char **args = strace_argv(argc, argv);
    char **orig = g_memdup2(args, sizeof(char *) * (g_strv_length(args) + 1));
    argc = (int)g_strv_length(args);
    gboolean ok = g_option_context_parse(c, &argc, &args, &err) && check(&ro, &err);
    g_option_context_free(c);
    g_free(args);
    g_strfreev(orig);
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
    run_probes_free();
}
