/*
 * JSON Lines: one object per event (schema: doc/json-schema.md).
 */
#include "ptools.h"

#include <string.h>

static void argv_json(GString *s, const struct pt_field *f)
{
    const unsigned char *p = f->p, *end = f->p + f->n;
    g_string_append_c(s, '[');
    for (int first = 1; p < end; first = 0) {
        const unsigned char *z = memchr(p, '\0', (size_t)(end - p));
        size_t n = z != NULL ? (size_t)(z - p) : (size_t)(end - p);
        if (!first)
            g_string_append_c(s, ',');
        pt_esc_json(s, p, n);
        p += n + (z != NULL);
    }
    g_string_append_c(s, ']');
}

static void addrs_json(GString *s, const struct pt_field *f)
{
    g_string_append_c(s, '[');
    for (uint32_t i = 0; i + 8 <= f->n; i += 8) {
        uint64_t a;
        memcpy(&a, f->p + i, 8);
        g_string_append_printf(s, "%s\"%#" G_GINT64_MODIFIER "x\"", i ? "," : "", (guint64)a);
    }
    g_string_append_c(s, ']');
}

static void field_json(GString *s, const struct pt_field *f)
{
    GString *t;
    switch (f->type) {
    case POSIXTRACE_F_STR: case POSIXTRACE_F_BUF: pt_esc_json(s, f->p, f->n); return;
    case POSIXTRACE_F_ARGV: argv_json(s, f); return;
    case POSIXTRACE_F_ADDRS: addrs_json(s, f); return;
    case POSIXTRACE_F_SOCKADDR:
        t = g_string_new(NULL);
        pt_fmt_sockaddr(t, f->p, f->n);
        pt_esc_json(s, (const unsigned char *)t->str, t->len);
        g_string_free(t, TRUE);
        return;
    default:
        if (pt_fmt_poll_field(s, f, 1))
            return;
        break;
    }
    if (f->type >= POSIXTRACE_F_VARIABLE) { /* BYTES and unknown variable types */
        g_string_append_c(s, '"');
        pt_hex(s, f->p, f->n);
        g_string_append_c(s, '"');
    } else if (f->show == PT_SHOW_TYPE && pt_fixed_is_number(f->type)) {
        if (f->type == POSIXTRACE_F_UINT)
            g_string_append_printf(s, "%" G_GUINT64_FORMAT, (guint64)f->u);
        else
            g_string_append_printf(s, "%" G_GINT64_FORMAT, (gint64)f->u);
    } else {
        t = g_string_new(NULL);
        pt_fmt_fixed_field(t, f);
        pt_esc_json(s, (const unsigned char *)t->str, t->len);
        g_string_free(t, TRUE);
    }
}

static void predef_json(GString *s, const struct pt_event *e)
{
    char b[32];
    int iv;
    uint64_t u;
    g_string_append(s, "{");
    if (e->id == POSIX_TRACE_STOP && e->len >= sizeof iv) {
        memcpy(&iv, e->data, sizeof iv);
        g_string_append_printf(s, "\"auto\":%d", iv);
    } else if (e->id == POSIX_TRACE_OVERFLOW && e->len >= sizeof u) {
        memcpy(&u, e->data, sizeof u);
        g_string_append_printf(s, "\"lost\":%" G_GUINT64_FORMAT, (guint64)u);
    } else if (e->id == POSIX_TRACE_ERROR && e->len >= sizeof iv) {
        memcpy(&iv, e->data, sizeof iv);
        g_string_append_printf(s, "\"error\":%d,\"error_name\":\"%s\"", iv,
                               pt_errno_name(iv, b, sizeof b));
    }
    g_string_append(s, "}");
}

void pt_json_args(GString *s, const struct pt_out *o, const struct pt_event *e)
{
    (void)o;
    if (e->kind == PT_K_PREDEF) {
        predef_json(s, e);
        return;
    }
    g_string_append_c(s, '{');
    for (unsigned i = 0, k = 0; e->kind == PT_K_CALL && i < e->desc->nfields &&
                                i < POSIXTRACE_MAX_FIELDS; i++) {
        if (!e->f[i].present)
            continue;
        g_string_append(s, k++ ? "," : "");
        pt_esc_json_str(s, e->f[i].name);
        g_string_append_c(s, ':');
        if (e->f[i].absent)
            g_string_append(s, "null");
        else
            field_json(s, &e->f[i]);
    }
    g_string_append_c(s, '}');
}

/* One name of the -y object: "fd":"/etc/passwd". */
static void fds_member(GString *s, int *k, const char *key, GString *t)
{
    g_string_append(s, (*k)++ ? "," : "");
    pt_esc_json_str(s, key);
    g_string_append_c(s, ':');
    pt_esc_json(s, (const unsigned char *)t->str, t->len);
}

void pt_fds_json(GString *s, const struct pt_out *o, const struct pt_event *e)
{
    GString *t = g_string_new(NULL);
    int k = 0;
    g_string_append_c(s, '{');
    for (unsigned i = 0; e->kind == PT_K_CALL && i < e->desc->nfields &&
                         i < POSIXTRACE_MAX_FIELDS; i++) {
        g_string_truncate(t, 0);
        if (pt_fds_field(o->fds, e, &e->f[i], t))
            fds_member(s, &k, e->f[i].name, t);
    }
    g_string_truncate(t, 0);
    if (e->kind == PT_K_CALL && pt_call_returns(e) && e->hdr.err == 0 &&
        pt_fds_result(o->fds, e, t))
        fds_member(s, &k, "ret", t);
    g_string_append_c(s, '}');
    g_string_free(t, TRUE);
}

static const char *kind_name(enum pt_kind k)
{
    static const char *const n[] = { "predefined", "call", "system", "user" };
    return n[k];
}

static void call_json(GString *s, const struct pt_event *e)
{
    char b[32];
    int noret = !pt_call_returns(e);
    g_string_append(s, ",\"fn\":");
    if (e->fn != NULL)
        pt_esc_json_str(s, e->fn);
    else
        g_string_append(s, "null");
    g_string_append(s, ",\"args\":");
    pt_json_args(s, NULL, e);
    if (noret) {
        g_string_append(s, ",\"ret\":null,\"errno\":null");
    } else if (e->probe != NULL) {
        g_string_append(s, ",\"ret\":");
        pt_probe_fmt_ret(s, e, 1);
        g_string_append_printf(s, ",\"errno\":%d", (int)e->hdr.err);
    } else {
        g_string_append_printf(s, ",\"ret\":%" G_GINT64_FORMAT ",\"errno\":%d",
                               (gint64)e->hdr.ret, (int)e->hdr.err);
    }
    if (e->hdr.err != 0)
        g_string_append_printf(s, ",\"errno_name\":\"%s\"", pt_errno_name(e->hdr.err, b, sizeof b));
    else
        g_string_append(s, ",\"errno_name\":null");
    if (noret)
        g_string_append(s, ",\"duration_ns\":null,\"returned\":false");
    else
        g_string_append_printf(s, ",\"duration_ns\":%" G_GUINT64_FORMAT ",\"returned\":true",
                               (guint64)e->hdr.duration_ns);
    g_string_append_printf(s, ",\"data_cut\":%s",
                           e->cut || (e->hdr.flags & POSIXTRACE_CALL_DATA_CUT) ? "true" : "false");
    if (e->unfinished)
        g_string_append_printf(s, ",\"unfinished\":true,\"start_ns\":%" G_GINT64_FORMAT,
                               (gint64)pt_event_start_ns(e));
}

static void head_json(GString *s, const struct pt_out *o, const struct pt_event *e)
{
    g_string_append_printf(s, "{\"ts_ns\":%" G_GINT64_FORMAT ",\"rel_ns\":%" G_GINT64_FORMAT
                           ",\"ts\":\"%" G_GINT64_FORMAT "\",\"pid\":%ld,",
                           (gint64)e->ts_ns, (gint64)pt_ns_sub(e->ts_ns, o->t0), (gint64)e->ts_ns,
                           (long)e->info.posix_pid);
    if (e->tid >= 0)
        g_string_append_printf(s, "\"tid\":%" G_GINT64_FORMAT, (gint64)e->tid);
    else
        g_string_append(s, "\"tid\":null");
    g_string_append_printf(s, ",\"thread\":%" G_GUINT64_FORMAT ",\"event\":",
                           (guint64)e->info.posix_thread_id);
    pt_esc_json_str(s, e->name);
    g_string_append_printf(s, ",\"id\":%u,\"kind\":\"%s\",", (unsigned)e->id, kind_name(e->kind));
    if (e->info.posix_prog_address != NULL)
        g_string_append_printf(s, "\"addr\":\"%p\"", e->info.posix_prog_address);
    else
        g_string_append(s, "\"addr\":null");
    if (o->sym != NULL && e->info.posix_prog_address != NULL) {
        GString *t = g_string_new(NULL);
        pt_sym_addr(o->sym, t, e->info.posix_pid, (uint64_t)(uintptr_t)e->info.posix_prog_address);
        g_string_append(s, ",\"addr_sym\":");
        pt_esc_json(s, (const unsigned char *)t->str, t->len);
        g_string_free(t, TRUE);
    }
    g_string_append_printf(s, ",\"truncation\":%d,\"data_len\":%zu",
                           e->info.posix_truncation_status, e->len);
}

/* With symbols: each ADDRS field again, symbolized, as "<name>_sym". */
static void addrs_sym_json(GString *s, struct pt_out *o, const struct pt_event *e)
{
    GString *t = g_string_new(NULL);
    for (unsigned i = 0; i < e->desc->nfields && i < POSIXTRACE_MAX_FIELDS; i++) {
        const struct pt_field *f = &e->f[i];
        if (!f->present || f->absent || f->type != POSIXTRACE_F_ADDRS)
            continue;
        g_string_append_printf(s, ",\"%s_sym\":[", f->name);
        for (uint32_t k = 0; k + 8 <= f->n; k += 8) {
            uint64_t a;
            memcpy(&a, f->p + k, 8);
            g_string_truncate(t, 0);
            pt_sym_addr(o->sym, t, e->info.posix_pid, a);
            if (k)
                g_string_append_c(s, ',');
            pt_esc_json(s, (const unsigned char *)t->str, t->len);
        }
        g_string_append_c(s, ']');
    }
    g_string_free(t, TRUE);
}

void pt_json_event(struct pt_out *o, const struct pt_event *e)
{
    GString *s = g_string_sized_new(256);
    head_json(s, o, e);
    if (e->kind == PT_K_CALL) {
        call_json(s, e);
        if (o->fds != NULL) {
            g_string_append(s, ",\"fds\":");
            pt_fds_json(s, o, e);
        }
        if (o->sym != NULL)
            addrs_sym_json(s, o, e);
    } else if (e->kind == PT_K_PREDEF) {
        g_string_append(s, ",\"args\":");
        predef_json(s, e);
    } else {
        g_string_append(s, ",\"data\":\"");
        pt_hex(s, e->data, e->len);
        g_string_append_c(s, '"');
    }
    if (o->end_pending) {
        g_string_append_printf(s, ",\"process_end\":{\"pid\":%ld,", (long)o->end_pid);
        pt_end_json_fields(s, o->end_status);
        g_string_append_c(s, '}');
    }
    g_string_append(s, "}\n");
    fwrite(s->str, 1, s->len, o->fp);
    g_string_free(s, TRUE);
}
