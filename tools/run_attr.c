/*
 * The stream's attributes (trace_attr_t) from posixtrace-run's options.
 */
#include "run.h"

#include <string.h>

#define DEFAULT_STREAM_SIZE ((size_t)4 << 20)

static gboolean policy(const char *s, int log, int *out)
{
    if (strcmp(s, "loop") == 0)
        *out = POSIX_TRACE_LOOP;
    else if (strcmp(s, "until-full") == 0)
        *out = POSIX_TRACE_UNTIL_FULL;
    else if (!log && strcmp(s, "flush") == 0)
        *out = POSIX_TRACE_FLUSH;
    else if (log && strcmp(s, "append") == 0)
        *out = POSIX_TRACE_APPEND;
    else
        return FALSE;
    return TRUE;
}

static gboolean size_opt(const char *what, const char *s, size_t def, size_t *out)
{
    *out = def;
    if (s != NULL && !pt_parse_size(s, out)) {
        pt_warn("%s: not a size: %s (a number, optionally followed by K, M or G)", what, s);
        return FALSE;
    }
    return TRUE;
}

/* Every setter's error is reported with the option that caused it. */
static gboolean set(int rc, const char *what)
{
    if (rc != 0)
        pt_warn("%s: %s", what, g_strerror(rc));
    return rc == 0;
}

gboolean run_attr(const struct run_opts *o, trace_attr_t *a)
{
    size_t ss, md, ls;
    int sp = o->output != NULL ? POSIX_TRACE_FLUSH : POSIX_TRACE_LOOP, lp = POSIX_TRACE_APPEND;
    char *name;
    if (!size_opt("--stream-size", o->stream_size, DEFAULT_STREAM_SIZE, &ss) ||
        !size_opt("--max-data", o->max_data, 256, &md) ||
        !size_opt("--log-size", o->log_size, (size_t)16 << 20, &ls))
        return FALSE;
    if (o->policy != NULL && !policy(o->policy, 0, &sp)) {
        pt_warn("--policy: loop, until-full or flush");
        return FALSE;
    }
    if (o->log_policy != NULL && !policy(o->log_policy, 1, &lp)) {
        pt_warn("--log-policy: loop, until-full or append");
        return FALSE;
    }
    if (sp == POSIX_TRACE_FLUSH && o->output == NULL) {
        pt_warn("--policy=flush needs a log (-o FILE)");
        return FALSE;
    }
    if (o->name != NULL)
        name = g_strdup(o->name);
    else if (o->argv != NULL && o->argv[0] != NULL)
        name = g_path_get_basename(o->argv[0]);
    else
        name = g_strdup_printf("pid %d", o->pid);
    posix_trace_attr_init(a);
    gboolean ok = set(posix_trace_attr_setname(a, name), "--name") &&
                  set(posix_trace_attr_setstreamsize(a, ss), "--stream-size") &&
                  set(posix_trace_attr_setmaxdatasize(a, md), "--max-data") &&
                  set(posix_trace_attr_setstreamfullpolicy(a, sp), "--policy") &&
                  set(posix_trace_attr_setinherited(a, o->no_follow ? POSIX_TRACE_CLOSE_FOR_CHILD
                                                                    : POSIX_TRACE_INHERITED),
                      "--no-follow") &&
                  (o->output == NULL ||
                   (set(posix_trace_attr_setlogfullpolicy(a, lp), "--log-policy") &&
                    set(posix_trace_attr_setlogsize(a, ls), "--log-size")));
    g_free(name);
    return ok;
}
