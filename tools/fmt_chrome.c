/*
 * Chrome Trace Event format (JSON object with a traceEvents array), as
 * Perfetto UI and chrome://tracing read it: calls are complete events
 * ("ph":"X", with their duration) on their process and thread, other events
 * instants ("ph":"i"); processes are named by metadata events ("ph":"M").
 * Times are microseconds from the first event (keeps ns precision in a double).
 */
#include "ptools.h"

#include <string.h>

static void sep(struct pt_out *o)
{
    fputs(o->chrome_n++ ? ",\n" : "\n", o->fp);
}

static int64_t chrome_tid(const struct pt_event *e)
{
    if (e->tid >= 0)
        return e->tid;
    if (e->info.posix_thread_id == 0)
        return e->info.posix_pid;
    return (int64_t)((uint64_t)e->info.posix_thread_id & 0x7fffffff);
}

static void us(GString *s, int64_t ns)
{
    uint64_t m = pt_ns_abs(ns);
    g_string_append_printf(s, "%s%" G_GUINT64_FORMAT ".%03d", ns < 0 ? "-" : "",
                           (guint64)(m / 1000), (int)(m % 1000));
}

static void process_name(struct pt_out *o, pid_t pid, const char *name)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%ld,\"tid\":%ld,"
                           "\"args\":{\"name\":", (long)pid, (long)pid);
    pt_esc_json_str(s, name);
    g_string_append(s, "}}");
    sep(o);
    fputs(s->str, o->fp);
    g_string_free(s, TRUE);
}

/* Names a process the first time it shows, and again when an event gives its
 * program (a field named "exe"). */
static void name_process(struct pt_out *o, const struct pt_event *e)
{
    pid_t pid = e->info.posix_pid;
    if (!g_hash_table_contains(o->chrome_pids, GINT_TO_POINTER(pid))) {
        char b[32];
        g_snprintf(b, sizeof b, "pid %ld", (long)pid);
        g_hash_table_add(o->chrome_pids, GINT_TO_POINTER(pid));
        process_name(o, pid, b);
    }
    for (unsigned i = 0; e->kind == PT_K_CALL && i < e->desc->nfields && i < POSIXTRACE_MAX_FIELDS; i++) {
        const struct pt_field *f = &e->f[i];
        if (f->present && f->type == POSIXTRACE_F_STR && strcmp(f->name, "exe") == 0) {
            char *exe = g_strndup((const char *)f->p, f->n);
            char *base = g_path_get_basename(exe);
            char *label = g_strdup_printf("%s (%ld)", base, (long)pid);
            process_name(o, pid, label);
            g_free(label);
            g_free(base);
            g_free(exe);
        }
    }
}

void pt_chrome_begin(struct pt_out *o)
{
    o->chrome_n = 0;
    o->chrome_pids = g_hash_table_new(g_direct_hash, g_direct_equal);
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", o->fp);
}

static const char *category(const struct pt_event *e)
{
    if (e->desc != NULL && e->desc->category != NULL)
        return e->desc->category;
    return e->kind == PT_K_USER ? "user" : "trace";
}

void pt_chrome_event(struct pt_out *o, const struct pt_event *e)
{
    int slice = pt_call_returns(e);
    GString *s = g_string_sized_new(256);
    name_process(o, e);
    GString *name = g_string_new(NULL);
    pt_append_event_name(name, e);
    g_string_append(s, "{\"name\":");
    pt_esc_json_str(s, name->str);
    g_string_free(name, TRUE);
    g_string_append(s, ",\"cat\":");
    pt_esc_json_str(s, category(e));
    g_string_append_printf(s, ",\"ph\":\"%s\",\"ts\":", slice ? "X" : "i");
    us(s, pt_ns_sub(pt_event_start_ns(e), o->t0));
    if (slice) {
        g_string_append(s, ",\"dur\":");
        us(s, (int64_t)e->hdr.duration_ns);
    } else {
        g_string_append(s, e->kind == PT_K_USER || e->kind == PT_K_CALL ? ",\"s\":\"t\"" : ",\"s\":\"p\"");
    }
    g_string_append_printf(s, ",\"pid\":%ld,\"tid\":%" G_GINT64_FORMAT ",\"args\":",
                           (long)e->info.posix_pid, (gint64)chrome_tid(e));
    if (e->kind == PT_K_CALL || e->kind == PT_K_PREDEF) {
        GString *a = g_string_new(NULL);
        pt_json_args(a, o, e);
        if (slice) {
            g_string_truncate(a, a->len - 1); /* the closing brace */
            g_string_append_printf(a, "%s\"ret\":%" G_GINT64_FORMAT ",\"errno\":%d}",
                                   a->len > 1 ? "," : "", (gint64)e->hdr.ret, (int)e->hdr.err);
        }
        g_string_append(s, a->str);
        g_string_free(a, TRUE);
    } else {
        g_string_append(s, "{\"data\":\"");
        pt_hex(s, e->data, e->len);
        g_string_append(s, "\"}");
    }
    g_string_append_c(s, '}');
    sep(o);
    fputs(s->str, o->fp);
    g_string_free(s, TRUE);
}

void pt_chrome_end(struct pt_out *o)
{
    fputs("\n]}\n", o->fp);
    g_clear_pointer(&o->chrome_pids, g_hash_table_destroy);
}
