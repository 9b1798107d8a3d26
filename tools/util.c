/*
 * Small helpers: messages, sizes ("64M"), times ("1.5", "@1712345678.5"),
 * output format names, policy names.
 */
#include "ptools.h"
#include <posixtrace/control.h>

#include <errno.h>
#include <stdarg.h>
#include <string.h>

const char *pt_prog = "posixtrace";

void pt_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", pt_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A stream-full or log-full policy as the options spell it. */
const char *pt_policy_name(int p)
{
    switch (p) {
    case POSIX_TRACE_LOOP: return "loop";
    case POSIX_TRACE_UNTIL_FULL: return "until-full";
    case POSIX_TRACE_FLUSH: return "flush";
    case POSIX_TRACE_APPEND: return "append";
    default: return "?";
    }
}

char *pt_clock_text(int source, double ticks_per_ns)
{
    if (source == POSIXTRACE_CLOCK_TSC)
        return g_strdup_printf("clock: tsc (the cycle counter, %.6f ticks/ns, converted to "
                               "CLOCK_REALTIME)", ticks_per_ns);
    return g_strdup("clock: realtime (CLOCK_REALTIME read at each event)");
}

const char *pt_strerror(int e)
{
    return g_strerror(e);
}

gboolean pt_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    guint64 v = g_ascii_strtoull(s, &end, 10);
    guint64 mul = 1;
    if (end == s || errno != 0)
        return FALSE;
    switch (g_ascii_toupper(*end)) {
    case 'K': mul = 1024; end++; break;
    case 'M': mul = 1024 * 1024; end++; break;
    case 'G': mul = 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'i' && mul != 1)
        end++;
    if ((*end == 'B' || *end == 'b') && end[1] == '\0')
        end++;
    if (*end != '\0' || v > G_MAXSIZE / mul)
        return FALSE;
    *out = (size_t)(v * mul);
    return TRUE;
}

/* A whole number in [lo, hi], or a message naming the option, the value
 * and the range. */
gboolean pt_int_opt(const char *opt, const char *value, long lo, long hi, long *out,
                    GError **err)
{
    char *end = NULL;
    errno = 0;
    long v = value != NULL ? strtol(value, &end, 10) : 0;
    if (value == NULL || end == value || *end != '\0' || errno != 0 || v < lo || v > hi) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: %s %ld to %ld", opt,
                    value != NULL ? value : "", "expected a whole number from", lo, hi);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

/* A size for messages: "4K (4096 bytes)", "1 byte", "16M (16777216 bytes)". */
char *pt_size_text(size_t n)
{
    static const char units[] = "KMG";
    size_t v = n;
    int u = -1;
    while (v >= 1024 && v % 1024 == 0 && u < 2) {
        v /= 1024;
        u++;
    }
    if (u < 0)
        return g_strdup_printf("%zu byte%s", n, n == 1 ? "" : "s");
    return g_strdup_printf("%zu%c (%zu bytes)", v, units[u], n);
}

/* "SECONDS[.FRACTION]" relative to the first event, or "@EPOCH[.FRACTION]". */
gboolean pt_parse_seconds(const char *s, int64_t *ns, int *absolute)
{
    char *end;
    *absolute = *s == '@';
    s += *absolute;
    errno = 0;
    double d = g_ascii_strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || d != d || d > 9.2e9 || d < -9.2e9)
        return FALSE;
    *ns = (int64_t)(d * 1e9);
    return TRUE;
}

/* ns since the Epoch, saturated at the int64 range (a damaged or hostile
 * trace can hold any timestamp). */
int64_t pt_ts_ns(const struct timespec *ts)
{
    int64_t ns;
    if (__builtin_mul_overflow((int64_t)ts->tv_sec, (int64_t)1000000000, &ns))
        return ts->tv_sec < 0 ? INT64_MIN : INT64_MAX;
    return pt_ns_add(ns, ts->tv_nsec);
}

int pt_parse_format(const char *s, enum pt_format *f)
{
    if (strcmp(s, "text") == 0)
        *f = PT_FMT_TEXT;
    else if (strcmp(s, "json") == 0)
        *f = PT_FMT_JSON;
    else if (strcmp(s, "chrome") == 0)
        *f = PT_FMT_CHROME;
    else
        return -1;
    return 0;
}

int pt_parse_timefmt(const char *s, enum pt_timefmt *t)
{
    if (strcmp(s, "rel") == 0 || strcmp(s, "relative") == 0)
        *t = PT_TIME_REL;
    else if (strcmp(s, "abs") == 0 || strcmp(s, "absolute") == 0)
        *t = PT_TIME_ABS;
    else if (strcmp(s, "epoch") == 0)
        *t = PT_TIME_EPOCH;
    else if (strcmp(s, "none") == 0)
        *t = PT_TIME_NONE;
    else if (strcmp(s, "clock") == 0)
        *t = PT_TIME_CLOCK;
    else if (strcmp(s, "delta") == 0)
        *t = PT_TIME_DELTA;
    else
        return -1;
    return 0;
}

int64_t pt_ns_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

int64_t pt_ns_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}
