/*
 * posixtrace-dump --info: what a log says about itself, through the standard
 * API (posix_trace_get_attr, posix_trace_get_status, the event-type list).
 */
#include "dump.h"

#include <posixtrace/control.h>
#include <time.h>

static void attrs(FILE *fp, const trace_attr_t *a)
{
    char name[TRACE_NAME_MAX], ver[TRACE_NAME_MAX], when[64];
    struct timespec ct = { 0, 0 }, res = { 0, 0 };
    size_t ss = 0, md = 0, ls = 0;
    int sp = 0, lp = 0, inh = 0;
    struct tm tm;
    posix_trace_attr_getname(a, name);
    posix_trace_attr_getgenversion(a, ver);
    posix_trace_attr_getcreatetime(a, &ct);
    posix_trace_attr_getclockres(a, &res);
    posix_trace_attr_getstreamsize(a, &ss);
    posix_trace_attr_getmaxdatasize(a, &md);
    posix_trace_attr_getlogsize(a, &ls);
    posix_trace_attr_getstreamfullpolicy(a, &sp);
    posix_trace_attr_getlogfullpolicy(a, &lp);
    posix_trace_attr_getinherited(a, &inh);
    time_t t = ct.tv_sec;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(fp, "name: %s\ngeneration version: %s\n", name, ver);
    fprintf(fp, "creation time: %s.%09ldZ (%lld.%09ld)\n", when, ct.tv_nsec, (long long)ct.tv_sec,
            ct.tv_nsec);
    fprintf(fp, "clock resolution: %lld ns\n", (long long)res.tv_sec * 1000000000LL + res.tv_nsec);
    fprintf(fp, "stream-min-size: %zu\nmax-data-size: %zu\nlog-max-size: %zu\n", ss, md, ls);
    fprintf(fp, "stream-full-policy: %s\nlog-full-policy: %s\ninheritance: %s\n", pt_policy_name(sp),
            pt_policy_name(lp), inh == POSIX_TRACE_INHERITED ? "inherited" : "close-for-child");
}

/* The clock its stamps came from (<posixtrace/control.h>). */
static void clock_line(FILE *fp, trace_id_t trid)
{
    int src = 0;
    double tpn = 0;
    if (posixtrace_stream_clock(trid, &src, &tpn) != 0)
        return;
    char *t = pt_clock_text(src, tpn);
    fprintf(fp, "%s\n", t);
    g_free(t);
}

static void status(FILE *fp, const struct posix_trace_status_info *s)
{
    fprintf(fp, "status: %s, stream %s, stream %s, %s", 
            s->posix_stream_status == POSIX_TRACE_RUNNING ? "running" : "suspended",
            s->posix_stream_full_status == POSIX_TRACE_FULL ? "full" : "not full",
            s->posix_stream_overrun_status == POSIX_TRACE_OVERRUN ? "overrun" : "no overrun",
            s->posix_stream_flush_status == POSIX_TRACE_FLUSHING ? "flushing" : "not flushing");
    fprintf(fp, ", flush error %d, log %s, log %s\n", s->posix_stream_flush_error,
            s->posix_log_overrun_status == POSIX_TRACE_OVERRUN ? "overrun" : "no overrun",
            s->posix_log_full_status == POSIX_TRACE_FULL ? "full" : "not full");
}

static void types(FILE *fp, trace_id_t trid)
{
    trace_event_id_t id;
    char name[TRACE_EVENT_NAME_MAX + 1];
    int unavailable = 0;
    fprintf(fp, "event types:\n");
    posix_trace_eventtypelist_rewind(trid);
    while (posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable) == 0 && !unavailable) {
        if (posix_trace_eventid_get_name(trid, id, name) != 0)
            g_strlcpy(name, "?", sizeof name);
        fprintf(fp, "  %4u %s\n", (unsigned)id, name);
    }
}

void dump_info(FILE *fp, const char *path, trace_id_t trid)
{
    trace_attr_t a;
    struct posix_trace_status_info st;
    fprintf(fp, "log: %s\n", path);
    if (posix_trace_get_attr(trid, &a) == 0) {
        attrs(fp, &a);
        posix_trace_attr_destroy(&a);
    }
    clock_line(fp, trid);
    if (posix_trace_get_status(trid, &st) == 0)
        status(fp, &st);
    types(fp, trid);
}
