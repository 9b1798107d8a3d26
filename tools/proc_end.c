/*
 * How each process ended, as strace shows it: "+++ exited with 0 +++",
 * "+++ killed by SIGSEGV (core dumped) +++". From the trace: a process's
 * own exit event (exit, _exit, the return from main: recorded as it ends)
 * and a traced parent's wait or waitid that reaped it (a process killed by a
 * signal records nothing itself), or the process_end event a controller
 * records for such a process it reaped (posixtrace-run). Each end is
 * printed once: an exit seen first marks the pid, and the parent's wait for
 * it then only clears the mark.
 */
#include "ptools.h"

#include <string.h>
#include <sys/wait.h>

static int64_t field_u(const struct pt_event *e, const char *name, int *ok)
{
    const struct pt_field *f = pt_event_field(e, name);
    *ok = *ok && f != NULL && f->present && !f->absent;
    return f != NULL ? (int64_t)f->u : 0;
}

void pt_end_text(GString *s, int wstatus)
{
    char b[32];
    if (WIFEXITED(wstatus))
        g_string_append_printf(s, "exited with %d", WEXITSTATUS(wstatus));
    else if (WIFSIGNALED(wstatus))
        g_string_append_printf(s, "killed by %s%s", pt_signal_name(WTERMSIG(wstatus), b, sizeof b),
                               WCOREDUMP(wstatus) ? " (core dumped)" : "");
    else
        g_string_append_printf(s, "ended (status %#x)", (unsigned)wstatus);
}

/* The end's JSON fields: "exit_status":N,"signal":"SIGX","core_dumped":B,"text":"..." */
void pt_end_json_fields(GString *s, int wstatus)
{
    char b[32];
    if (WIFEXITED(wstatus))
        g_string_append_printf(s, "\"exit_status\":%d,\"signal\":null,\"core_dumped\":false",
                               WEXITSTATUS(wstatus));
    else
        g_string_append_printf(s, "\"exit_status\":null,\"signal\":\"%s\",\"core_dumped\":%s",
                               pt_signal_name(WTERMSIG(wstatus), b, sizeof b),
                               WCOREDUMP(wstatus) ? "true" : "false");
    g_string_append(s, ",\"text\":\"");
    pt_end_text(s, wstatus);
    g_string_append(s, "\"");
}

/* A record of its own: the end of a process no event shown tells. */
static void end_json(GString *s, struct pt_out *o, pid_t pid, int64_t ts, int wstatus)
{
    g_string_append_printf(s, "{\"ts_ns\":%" G_GINT64_FORMAT ",\"rel_ns\":%" G_GINT64_FORMAT
                           ",\"ts\":\"%" G_GINT64_FORMAT "\",\"pid\":%ld,\"tid\":null,\"thread\":null,"
                           "\"event\":\"process_end\",\"id\":null,\"kind\":\"end\",\"addr\":null,"
                           "\"truncation\":0,\"data_len\":0,\"process_end\":{\"pid\":%ld,",
                           (gint64)ts, (gint64)pt_ns_sub(ts, o->t0), (gint64)ts, (long)pid, (long)pid);
    pt_end_json_fields(s, wstatus);
    g_string_append(s, "}}\n");
}

void pt_end_print(struct pt_out *o, pid_t pid, int64_t ts, int wstatus, int in_event)
{
    GString *s = g_string_new(NULL);
    switch (o->format) {
    case PT_FMT_TEXT:
        pt_fmt_time(s, o, ts);
        g_string_append_printf(s, "%ld +++ ", (long)pid);
        pt_end_text(s, wstatus);
        g_string_append(s, " +++\n");
        fwrite(s->str, 1, s->len, o->fp);
        break;
    case PT_FMT_JSON:
        if (in_event)
            break; /* a field of the event shown (fmt_json.c) */
        end_json(s, o, pid, ts, wstatus);
        fwrite(s->str, 1, s->len, o->fp);
        break;
    case PT_FMT_CHROME: pt_chrome_end_event(o, pid, ts, wstatus); break;
    }
    g_string_free(s, TRUE);
}

/* The wait status of the child e reaped, or -1 (none reaped, or only
 * stopped or continued, or WNOWAIT: still there). */
static int reaped(const struct pt_event *e, pid_t *child)
{
    int ok = 1;
    if (!pt_call_returns(e) || e->hdr.err != 0)
        return -1;
    if (e->id == POSIXTRACE_EV_WAIT) {
        int st = (int)field_u(e, "status", &ok);
        *child = (pid_t)e->hdr.ret;
        return ok && e->hdr.ret > 0 && (WIFEXITED(st) || WIFSIGNALED(st)) ? st : -1;
    }
    int64_t opts = field_u(e, "options", &ok), code = field_u(e, "si_code", &ok);
    int64_t st = field_u(e, "si_status", &ok);
    *child = (pid_t)field_u(e, "si_pid", &ok);
    if (!ok || *child <= 0 || (opts & WNOWAIT))
        return -1;
    if (code == CLD_EXITED)
        return (int)((st & 0xff) << 8);
    if (code == CLD_KILLED || code == CLD_DUMPED)
        return (int)(st & 0x7f) | (code == CLD_DUMPED ? 0x80 : 0);
    return -1;
}

/* 1 and *wstatus when e tells a process's end (*pid). */
int pt_end_of(GHashTable *ended, const struct pt_event *e, pid_t *pid, int *wstatus)
{
    int ok = 1;
    if (e->kind != PT_K_CALL)
        return 0;
    if (e->id == POSIXTRACE_EV_EXIT) {
        int st = (int)field_u(e, "status", &ok);
        *pid = e->info.posix_pid;
        *wstatus = (st & 0xff) << 8;
        g_hash_table_add(ended, GINT_TO_POINTER(*pid));
        return ok;
    }
    if (e->id == POSIXTRACE_EV_PROCESS_END) { /* from the controller */
        *pid = (pid_t)field_u(e, "pid", &ok);
        *wstatus = (int)field_u(e, "status", &ok);
        return ok && !g_hash_table_remove(ended, GINT_TO_POINTER(*pid));
    }
    if (e->id != POSIXTRACE_EV_WAIT && e->id != POSIXTRACE_EV_WAITID)
        return 0;
    *wstatus = reaped(e, pid);
    if (*wstatus < 0)
        return 0;
    /* its own exit event said it already */
    return !g_hash_table_remove(ended, GINT_TO_POINTER(*pid));
}
