/*
 * Chrome Trace Event format (JSON object with a traceEvents array), as
 * Perfetto UI and chrome://tracing read it: calls are complete events
 * ("ph":"X", with their duration) on their process and thread, other events
 * instants ("ph":"i"); processes and threads are named by metadata events
 * ("ph":"M": one process_name per pid, its program's name after its last
 * exec, and one thread_name per thread), written at the end.
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

static void metadata(struct pt_out *o, const char *what, pid_t pid, int64_t tid, const char *name)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%ld,\"tid\":%" G_GINT64_FORMAT
                           ",\"args\":{\"name\":", what, (long)pid, (gint64)tid);
    pt_esc_json_str(s, name);
    g_string_append(s, "}}");
    sep(o);
    fputs(s->str, o->fp);
    g_string_free(s, TRUE);
}

/* What names processes and threads, written at the end (one process_name
 * per pid, one thread_name per thread): pid -> program (from an event's
 * "exe" field, the last one: after an exec), and the threads seen. */
struct chrome_proc {
    char *exe;                 /* base name, or NULL */
    pid_t parent;              /* forked by (a fork's or vfork's return in it), 0 */
    GArray *tids;              /* int64 */
};

static void proc_free(gpointer p)
{
    struct chrome_proc *c = p;
    g_free(c->exe);
    g_array_free(c->tids, TRUE);
    g_free(c);
}

static struct chrome_proc *proc_of(struct pt_out *o, pid_t pid)
{
    struct chrome_proc *c = g_hash_table_lookup(o->chrome_pids, GINT_TO_POINTER(pid));
    if (c == NULL) {
        c = g_new0(struct chrome_proc, 1);
        c->tids = g_array_new(FALSE, FALSE, sizeof(gint64));
        g_hash_table_insert(o->chrome_pids, GINT_TO_POINTER(pid), c);
    }
    return c;
}

static void note_process(struct pt_out *o, const struct pt_event *e)
{
    pid_t pid = e->info.posix_pid;
    int64_t tid = chrome_tid(e);
    struct chrome_proc *c = proc_of(o, pid);
    if ((e->id == POSIXTRACE_EV_FORK || e->id == POSIXTRACE_EV_VFORK) && pt_call_returns(e) &&
        e->hdr.ret > 0 && e->hdr.ret <= INT32_MAX && e->hdr.ret != pid)
        proc_of(o, (pid_t)e->hdr.ret)->parent = pid;
    guint i = 0;
    while (i < c->tids->len && g_array_index(c->tids, gint64, i) != tid)
        i++;
    if (i == c->tids->len)
        g_array_append_val(c->tids, tid);
    const struct pt_field *f = e->kind == PT_K_CALL ? pt_event_field(e, "exe") : NULL;
    if (f != NULL && f->type == POSIXTRACE_F_STR && !f->absent) {
        char *exe = g_strndup((const char *)f->p, f->n);
        g_free(c->exe);
        c->exe = g_path_get_basename(exe);
        g_free(exe);
    }
}

static gint by_pid(gconstpointer a, gconstpointer b)
{
    int x = GPOINTER_TO_INT(a), y = GPOINTER_TO_INT(b);
    return (x > y) - (x < y);
}

/* A process's program: its own (after an exec), else its parent's (forked). */
static const char *program_of(struct pt_out *o, const struct chrome_proc *c)
{
    for (int hops = 0; c != NULL && hops < 64; hops++) {
        if (c->exe != NULL)
            return c->exe;
        c = c->parent ? g_hash_table_lookup(o->chrome_pids, GINT_TO_POINTER(c->parent)) : NULL;
    }
    return NULL;
}

static void name_all(struct pt_out *o)
{
    GList *pids = g_list_sort(g_hash_table_get_keys(o->chrome_pids), by_pid);
    for (GList *l = pids; l != NULL; l = l->next) {
        pid_t pid = GPOINTER_TO_INT(l->data);
        struct chrome_proc *c = g_hash_table_lookup(o->chrome_pids, GINT_TO_POINTER(pid));
        const char *exe = program_of(o, c);
        char *label = exe != NULL ? g_strdup_printf("%s (%ld)", exe, (long)pid)
                                  : g_strdup_printf("pid %ld", (long)pid);
        metadata(o, "process_name", pid, pid, label);
        g_free(label);
        for (guint j = 0; j < c->tids->len; j++) {
            int64_t tid = g_array_index(c->tids, gint64, j);
            label = tid == pid ? g_strdup_printf("%s (main thread %" G_GINT64_FORMAT ")",
                                                 exe != NULL ? exe : "main", (gint64)tid)
                               : g_strdup_printf("thread %" G_GINT64_FORMAT, (gint64)tid);
            metadata(o, "thread_name", pid, tid, label);
            g_free(label);
        }
    }
    g_list_free(pids);
}

void pt_chrome_begin(struct pt_out *o)
{
    o->chrome_n = 0;
    o->chrome_pids = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, proc_free);
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
    note_process(o, e);
    GString *name = g_string_new(NULL);
    pt_append_event_name(name, e);
    g_string_append(s, "{\"name\":");
    pt_esc_json_str(s, name->str);
    g_string_free(name, TRUE);
    g_string_append(s, ",\"cat\":");
    pt_esc_json_str(s, category(e));
    g_string_append_printf(s, ",\"ph\":\"%s\",\"ts\":", slice ? "X" : e->unfinished ? "B" : "i");
    us(s, pt_ns_sub(pt_event_start_ns(e), o->t0));
    if (e->unfinished) {
        /* an open-ended slice: begun, never ended */
    } else if (slice) {
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
        if (o->fds != NULL && e->kind == PT_K_CALL) {
            g_string_truncate(a, a->len - 1);
            g_string_append(a, a->len > 1 ? ",\"fds\":" : "\"fds\":");
            pt_fds_json(a, o, e);
            g_string_append_c(a, '}');
        }
        if (slice) {
            g_string_truncate(a, a->len - 1); /* the closing brace */
            if (e->probe != NULL) {
                g_string_append(a, a->len > 1 ? ",\"ret\":" : "\"ret\":");
                pt_probe_fmt_ret(a, e, 1);
                g_string_append_printf(a, ",\"errno\":%d}", (int)e->hdr.err);
            } else {
                g_string_append_printf(a, "%s\"ret\":%" G_GINT64_FORMAT ",\"errno\":%d}",
                                       a->len > 1 ? "," : "", (gint64)e->hdr.ret, (int)e->hdr.err);
            }
        }
        if (e->unfinished) {
            g_string_truncate(a, a->len - 1);
            g_string_append(a, a->len > 1 ? ",\"unfinished\":true}" : "\"unfinished\":true}");
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

void pt_chrome_end_event(struct pt_out *o, pid_t pid, int64_t ts, int wstatus)
{
    GString *s = g_string_new("{\"name\":\"+++ ");
    pt_end_text(s, wstatus);
    g_string_append(s, " +++\",\"cat\":\"process\",\"ph\":\"i\",\"s\":\"p\",\"ts\":");
    us(s, pt_ns_sub(ts, o->t0));
    g_string_append_printf(s, ",\"pid\":%ld,\"tid\":%ld,\"args\":{}}", (long)pid, (long)pid);
    proc_of(o, pid);
    sep(o);
    fputs(s->str, o->fp);
    g_string_free(s, TRUE);
}

void pt_chrome_end(struct pt_out *o)
{
    name_all(o);
    fputs("\n]}\n", o->fp);
    g_clear_pointer(&o->chrome_pids, g_hash_table_destroy);
}
