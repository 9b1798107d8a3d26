/*
 * The text form of an event: one line, strace-like.
 *   TIME PID/TID NAME(ARG=VALUE, ...) = RET [ERRNO (message)] <DURATION> [@ADDRESS]
 */
#include "ptools.h"
#include <posixtrace/record.h>

#include <string.h>
#include <time.h>

/* seconds.micro of a signed ns count ("-0.000012"). */
static void secs_us(GString *s, int64_t d)
{
    if (d < 0)
        g_string_append_c(s, '-');
    pt_append_sec_us(s, pt_ns_abs(d));
    g_string_append_c(s, ' ');
}

static void time_of_day(GString *s, time_t t, int64_t sub, int micro)
{
    struct tm tm;
    if (localtime_r(&t, &tm) == NULL)
        g_string_append(s, micro ? "??:??:??.?????? " : "??:??:?? "); /* no such local time */
    else if (micro)
        g_string_append_printf(s, "%02d:%02d:%02d.%06d ", tm.tm_hour, tm.tm_min, tm.tm_sec,
                               (int)(sub / 1000));
    else
        g_string_append_printf(s, "%02d:%02d:%02d ", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

void pt_fmt_time(GString *s, struct pt_out *o, int64_t ns)
{
    /* floor division: no overflow whatever ns a damaged trace holds */
    int64_t sec = ns / 1000000000, sub = ns % 1000000000;
    if (sub < 0) {
        sec--;
        sub += 1000000000;
    }
    switch (o->timefmt) {
    case PT_TIME_NONE: break;
    case PT_TIME_EPOCH:
        g_string_append_printf(s, "%" G_GINT64_FORMAT ".%09" G_GINT64_FORMAT " ", (gint64)sec,
                               (gint64)sub);
        break;
    case PT_TIME_ABS: time_of_day(s, (time_t)sec, sub, 1); break;
    case PT_TIME_CLOCK: time_of_day(s, (time_t)sec, sub, 0); break;
    case PT_TIME_DELTA:
        secs_us(s, o->have_prev ? pt_ns_sub(ns, o->prev_start) : 0);
        o->prev_start = ns;
        o->have_prev = 1;
        break;
    default: secs_us(s, pt_ns_sub(ns, o->t0)); break;
    }
}

static void argv_text(GString *s, const struct pt_field *f)
{
    const unsigned char *p = f->p, *end = f->p + f->n;
    g_string_append_c(s, '[');
    for (int first = 1; p < end; first = 0) {
        const unsigned char *z = memchr(p, '\0', (size_t)(end - p));
        size_t n = z != NULL ? (size_t)(z - p) : (size_t)(end - p);
        if (!first)
            g_string_append(s, ", ");
        pt_esc_c(s, p, n, 0, z == NULL);
        p += n + (z != NULL);
    }
    g_string_append_c(s, ']');
    if (f->short_read)
        g_string_append(s, "...");
}

static void addrs_text(GString *s, const struct pt_out *o, const struct pt_event *e,
                       const struct pt_field *f)
{
    g_string_append_c(s, '[');
    for (uint32_t i = 0; i + 8 <= f->n; i += 8) {
        uint64_t a;
        memcpy(&a, f->p + i, 8);
        if (i)
            g_string_append(s, ", ");
        if (o->sym != NULL)
            pt_sym_addr(o->sym, s, e->info.posix_pid, a);
        else
            g_string_append_printf(s, "%#" G_GINT64_MODIFIER "x", (guint64)a);
    }
    g_string_append_c(s, ']');
}

/* -y: "3</etc/passwd>" */
static void fd_text(GString *s, const struct pt_out *o, const struct pt_event *e,
                    const struct pt_field *f)
{
    gsize at = s->len;
    g_string_append_c(s, '<');
    if (pt_fds_field(o->fds, e, f, s))
        g_string_append_c(s, '>');
    else
        g_string_truncate(s, at);
}

static void field_text(GString *s, const struct pt_out *o, const struct pt_event *e,
                       const struct pt_field *f)
{
    int cut = f->short_read || (e->hdr.flags & POSIXTRACE_CALL_DATA_CUT);
    switch (f->type) {
    case POSIXTRACE_F_STR: pt_esc_c(s, f->p, f->n, 0, f->short_read); break;
    case POSIXTRACE_F_BUF: pt_esc_c(s, f->p, f->n, o->strsize, cut); break;
    case POSIXTRACE_F_ARGV: argv_text(s, f); break;
    case POSIXTRACE_F_SOCKADDR: pt_fmt_sockaddr(s, f->p, f->n); break;
    case POSIXTRACE_F_ADDRS: addrs_text(s, o, e, f); break;
    default:
        if (f->type < POSIXTRACE_F_VARIABLE) {
            pt_fmt_fixed_field(s, f);
            fd_text(s, o, e, f);
        } else if (!pt_fmt_poll_field(s, f, 0)) { /* BYTES and unknown variable types */
            g_string_append(s, "x'");
            pt_hex(s, f->p, f->n);
            g_string_append_c(s, '\'');
        }
    }
}

static void user_text(GString *s, const struct pt_out *o, const unsigned char *p, size_t n)
{
    if (n == 0)
        return;
    if (pt_is_text(p, n)) {
        pt_esc_c(s, p, p[n - 1] == '\0' ? n - 1 : n, o->strsize, 0);
    } else {
        g_string_append(s, "x'");
        pt_hex(s, p, n);
        g_string_append_c(s, '\'');
    }
}

static void predef_text(GString *s, const struct pt_event *e)
{
    char b[32];
    int iv;
    uint64_t u;
    switch (e->id) {
    case POSIX_TRACE_STOP:
        if (e->len >= sizeof iv) {
            memcpy(&iv, e->data, sizeof iv);
            g_string_append_printf(s, "auto=%d", iv);
        }
        break;
    case POSIX_TRACE_OVERFLOW:
        if (e->len >= sizeof u) {
            memcpy(&u, e->data, sizeof u);
            g_string_append_printf(s, "lost=%" G_GUINT64_FORMAT, (guint64)u);
        }
        break;
    case POSIX_TRACE_ERROR:
        if (e->len >= sizeof iv) {
            memcpy(&iv, e->data, sizeof iv);
            g_string_append_printf(s, "error=%s", pt_errno_name(iv, b, sizeof b));
        }
        break;
    default:
        break;
    }
}

void pt_text_args(GString *s, const struct pt_out *o, const struct pt_event *e)
{
    switch (e->kind) {
    case PT_K_PREDEF: predef_text(s, e); break;
    case PT_K_USER: user_text(s, o, e->data, e->len); break;
    case PT_K_SYS:
        if (e->len) {
            g_string_append(s, "x'");
            pt_hex(s, e->data, e->len);
            g_string_append_c(s, '\'');
        }
        break;
    case PT_K_CALL:
        for (unsigned i = 0, k = 0; i < e->desc->nfields && i < POSIXTRACE_MAX_FIELDS; i++) {
            if (!e->f[i].present || e->f[i].absent)
                continue;
            if (k++)
                g_string_append(s, ", ");
            if (e->id < POSIXTRACE_SYSCALL_FIRST) { /* system calls: by position, as strace */
                g_string_append(s, e->f[i].name);
                g_string_append_c(s, '=');
            }
            field_text(s, o, e, &e->f[i]);
        }
        if (e->cut)
            g_string_append(s, e->nfields ? ", ..." : "...");
        if (e->unfinished)
            g_string_append(s, e->nfields ? ", <unfinished ...>" : "<unfinished ...>");
        break;
    }
}

static void result_fd(GString *s, const struct pt_out *o, const struct pt_event *e)
{
    gsize at = s->len;
    g_string_append_c(s, '<');
    if (pt_fds_result(o->fds, e, s))
        g_string_append_c(s, '>');
    else
        g_string_truncate(s, at);
}

static void result_text(GString *s, const struct pt_out *o, const struct pt_event *e)
{
    char b[32];
    if (!pt_call_returns(e)) {
        g_string_append(s, " = ?");
        return;
    }
    if (e->probe != NULL) {
        g_string_append(s, " = ");
        pt_probe_fmt_ret(s, e, 0);
    } else if (e->hdr.ret > (int64_t)0xffffffff)
        g_string_append_printf(s, " = %#" G_GINT64_MODIFIER "x", (guint64)e->hdr.ret);
    else {
        g_string_append(s, " = ");
        pt_append_i64(s, e->hdr.ret);
    }
    if (e->hdr.err == 0)
        result_fd(s, o, e);
    if (e->hdr.err != 0)
        g_string_append_printf(s, " %s (%s)", pt_errno_name(e->hdr.err, b, sizeof b),
                               pt_strerror(e->hdr.err));
    g_string_append(s, " <");
    pt_append_sec_us(s, e->hdr.duration_ns);
    g_string_append_c(s, '>');
}

void pt_text_event(struct pt_out *o, const struct pt_event *e)
{
    static GString *s; /* one line, reused: the formatting is single-threaded */
    if (s == NULL)
        s = g_string_sized_new(256);
    g_string_truncate(s, 0);
    pt_fmt_time(s, o, pt_event_start_ns(e));
    pt_append_i64(s, e->info.posix_pid);
    if (e->tid >= 0) {
        g_string_append_c(s, '/');
        pt_append_i64(s, e->tid);
    }
    g_string_append_c(s, ' ');
    pt_append_event_name(s, e);
    g_string_append_c(s, '(');
    pt_text_args(s, o, e);
    g_string_append_c(s, ')');
    if (e->kind == PT_K_CALL && !e->unfinished)
        result_text(s, o, e);
    if (e->info.posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED)
        g_string_append(s, e->info.posix_truncation_status == POSIX_TRACE_TRUNCATED_RECORD
                               ? " [truncated]" : " [truncated read]");
    if (o->show_addr && e->info.posix_prog_address != NULL) {
        g_string_append(s, " @");
        if (o->sym != NULL)
            pt_sym_addr(o->sym, s, e->info.posix_pid, (uint64_t)(uintptr_t)e->info.posix_prog_address);
        else
            g_string_append_printf(s, "%p", e->info.posix_prog_address);
    }
    g_string_append_c(s, '\n');
    fwrite(s->str, 1, s->len, o->fp);
    if (s->allocated_len > 65536) /* an event with a long payload: do not keep its size */
        g_string_free(g_steal_pointer(&s), TRUE);
}
