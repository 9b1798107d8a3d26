/*
 * The stream's attributes (trace_attr_t) from posixtrace-run's options.
 */
#include "run.h"

#include <posixtrace/control.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_STREAM_SIZE ((size_t)4 << 20)  /* with -o: the flusher empties it */
/* Live: a share of the machine's memory, within these bounds (doc/tools.md). */
#define LIVE_STREAM_MIN ((size_t)4 << 20)
#define LIVE_STREAM_MAX ((size_t)64 << 20)
#define LIVE_STREAM_SHARE 1024                   /* of MemTotal */
#define LIVE_STREAM_AVAIL_SHARE 16               /* of MemAvailable */

/* A /proc/meminfo line's value in bytes (0: not found). */
static uint64_t meminfo(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    unsigned long long kb = 0;
    if (p == NULL || sscanf(p + strlen(key), " %llu kB", &kb) != 1)
        return 0;
    return (uint64_t)kb * 1024;
}

/* The live stream's default: MemTotal/1024, at most MemAvailable/16, from
 * 4M to 64M, in whole MiB (the stream is read as it fills, by a thread that
 * only copies events out: it holds what comes while that thread waits for
 * a CPU or for the printer). */
size_t run_live_stream_size(void)
{
    char *text = NULL;
    uint64_t sz = LIVE_STREAM_MIN;
    if (g_file_get_contents("/proc/meminfo", &text, NULL, NULL)) {
        uint64_t total = meminfo(text, "MemTotal:"), avail = meminfo(text, "MemAvailable:");
        sz = total / LIVE_STREAM_SHARE;
        if (avail != 0 && sz > avail / LIVE_STREAM_AVAIL_SHARE)
            sz = avail / LIVE_STREAM_AVAIL_SHARE;
    }
    g_free(text);
    sz &= ~(uint64_t)((1u << 20) - 1);
    return sz < LIVE_STREAM_MIN ? LIVE_STREAM_MIN : sz > LIVE_STREAM_MAX ? LIVE_STREAM_MAX : (size_t)sz;
}

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

/* A size option: parsed and checked against [min, max] before anything is
 * created, the message naming the option, the value and the range. */
static gboolean size_opt(const char *what, const char *s, size_t def, size_t min, size_t max,
                         size_t *out)
{
    *out = def;
    if (s == NULL)
        return TRUE;
    if (!pt_parse_size(s, out)) {
        pt_warn("%s: not a size: %s (a number, optionally followed by K, M or G)", what, s);
        return FALSE;
    }
    if (*out < min || *out > max) {
        char *lo = pt_size_text(min), *hi = pt_size_text(max);
        pt_warn("%s %s: out of range: %s to %s", what, s, lo, hi);
        g_free(lo);
        g_free(hi);
        return FALSE;
    }
    return TRUE;
}

/* A LOOP or UNTIL_FULL log must hold its header and 8 blocks of the
 * stream's chunk size (posixtrace_attr_getminlogsize). */
static gboolean log_size_ok(const struct run_opts *o, const trace_attr_t *a, int lp, size_t ls)
{
    size_t min = 0;
    if (o->output == NULL || lp == POSIX_TRACE_APPEND || posixtrace_attr_getminlogsize(a, &min) != 0 ||
        ls >= min)
        return TRUE;
    char *lo = pt_size_text(min);
    pt_warn("--log-size %s: too small for log policy %s: at least %s with --max-data %s",
            o->log_size, pt_policy_name(lp), lo,
            o->max_data != NULL ? o->max_data : "256 (the default)");
    g_free(lo);
    return FALSE;
}

/* Every setter's error is reported with the option that caused it. */
static gboolean set(int rc, const char *what)
{
    if (rc != 0)
        pt_warn("%s: %s", what, g_strerror(rc));
    return rc == 0;
}

/* --block[=MS]: writers wait for room (0: the attribute's default, off). */
static int set_block(trace_attr_t *a, int ms)
{
    struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };
    return ms > 0 ? posixtrace_attr_setblocking(a, &t) : 0;
}

gboolean run_attr(const struct run_opts *o, trace_attr_t *a)
{
    size_t ss, md, ls;
    int sp = o->output != NULL ? POSIX_TRACE_FLUSH : POSIX_TRACE_LOOP, lp = POSIX_TRACE_APPEND;
    char *name;
    size_t def = o->output != NULL || o->stream_size != NULL ? DEFAULT_STREAM_SIZE
                                                             : run_live_stream_size();
    if (!size_opt("--stream-size", o->stream_size, def, 1,
                  POSIXTRACE_STREAM_SIZE_MAX, &ss) ||
        !size_opt("--max-data", o->max_data, 256, 0, POSIXTRACE_MAX_DATA_SIZE_MAX, &md) ||
        !size_opt("--log-size", o->log_size, (size_t)16 << 20, 1, SIZE_MAX, &ls))
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
                  set(set_block(a, o->block_ms), "--block") &&
                  set(posix_trace_attr_setinherited(a, o->no_follow ? POSIX_TRACE_CLOSE_FOR_CHILD
                                                                    : POSIX_TRACE_INHERITED),
                      "--no-follow") &&
                  (o->output == NULL ||
                   (set(posix_trace_attr_setlogfullpolicy(a, lp), "--log-policy") &&
                    set(posix_trace_attr_setlogsize(a, ls), "--log-size"))) &&
                  log_size_ok(o, a, lp, ls);
    g_free(name);
    if (!ok)
        posix_trace_attr_destroy(a);
    return ok;
}
