/*
 * -e SPEC: which event types to keep, as a trace_event_set_t.
 *
 * SPEC is a comma-separated list of items applied left to right; an item is
 * a class (process, thread, file, net, trace, user, syscall, all: the
 * categories of <posixtrace/events.h> and <posixtrace/syscalls.def>, "trace"
 * adding the predefined events 0..7, "user" every user event, "syscall" every
 * system call of the system-call mode) or an event name ("posixtrace:open",
 * "syscall:openat", or either without its prefix; '*' and '?' glob). "!ITEM" removes. When the first item is a
 * removal the list starts from the default set (all events, or what the
 * caller shows by default), else from none.
 */
#include "ptools.h"
#include <posixtrace/record.h>

#include <string.h>

#define SHIM_PREFIX "posixtrace:"
#define SYSCALL_PREFIX "syscall:"

static void add_range(trace_event_set_t *s, trace_event_id_t lo, trace_event_id_t hi)
{
    for (trace_event_id_t i = lo; i <= hi; i++)
        posix_trace_eventset_add(i, s);
}

static void add_category(trace_event_set_t *s, const char *cat)
{
    for (unsigned i = 0; i < posixtrace_event_ndescs; i++)
        if (g_strcmp0(posixtrace_event_descs[i].category, cat) == 0)
            posix_trace_eventset_add(posixtrace_event_descs[i].id, s);
    for (trace_event_id_t id = POSIXTRACE_SYSCALL_FIRST; id <= POSIXTRACE_SYSCALL_LAST; id++) {
        const struct posixtrace_event_desc *d = posixtrace_event_desc(id);
        if (d != NULL && g_strcmp0(d->category, cat) == 0)
            posix_trace_eventset_add(id, s);
    }
}

/* A class name: fills s and returns TRUE. */
static gboolean select_class(const char *w, trace_event_set_t *s)
{
    static const char *const cats[] = { "process", "thread", "file", "net", NULL };
    if (strcmp(w, "all") == 0) {
        posix_trace_eventset_fill(s, POSIX_TRACE_ALL_EVENTS);
        return TRUE;
    }
    if (strcmp(w, "user") == 0) {
        add_range(s, POSIX_TRACE_UNNAMED_USEREVENT, PT_USER_ID_MAX);
        return TRUE;
    }
    if (strcmp(w, "syscall") == 0) {
        add_range(s, POSIXTRACE_SYSCALL_FIRST, POSIXTRACE_SYSCALL_LAST);
        return TRUE;
    }
    if (strcmp(w, "trace") == 0) {
        add_range(s, 0, PT_SYS_FIRST - 1);
        add_category(s, "trace");
        return TRUE;
    }
    for (int i = 0; cats[i] != NULL; i++) {
        if (strcmp(w, cats[i]) == 0) {
            add_category(s, w);
            return TRUE;
        }
    }
    return FALSE;
}

static gboolean name_matches(const char *p, const char *name)
{
    if (g_pattern_match_simple(p, name))
        return TRUE;
    if (g_str_has_prefix(name, SYSCALL_PREFIX))
        return g_pattern_match_simple(p, name + strlen(SYSCALL_PREFIX));
    return g_str_has_prefix(name, SHIM_PREFIX) &&
           g_pattern_match_simple(p, name + strlen(SHIM_PREFIX));
}

/* Adds to s the ids whose names match w; returns how many. */
static int select_names(const char *w, trace_id_t trid, trace_event_set_t *s)
{
    const char *p = w;
    char buf[TRACE_EVENT_NAME_MAX + 1];
    int n = 0, unavailable = 0;
    trace_event_id_t id;
    for (id = 0; id < PT_SYS_FIRST; id++) {
        if (posix_trace_eventid_get_name(trid, id, buf) == 0 && name_matches(p, buf)) {
            posix_trace_eventset_add(id, s);
            n++;
        }
    }
    for (unsigned i = 0; i < posixtrace_event_ndescs; i++) {
        if (name_matches(p, posixtrace_event_descs[i].name)) {
            posix_trace_eventset_add(posixtrace_event_descs[i].id, s);
            n++;
        }
    }
    for (id = POSIXTRACE_SYSCALL_FIRST; id <= POSIXTRACE_SYSCALL_LAST; id++) {
        const struct posixtrace_event_desc *d = posixtrace_event_desc(id);
        if (d != NULL && name_matches(p, d->name)) {
            posix_trace_eventset_add(id, s);
            n++;
        }
    }
    posix_trace_eventtypelist_rewind(trid);
    while (posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable) == 0 && !unavailable) {
        if (id >= POSIX_TRACE_UNNAMED_USEREVENT &&
            posix_trace_eventid_get_name(trid, id, buf) == 0 && name_matches(p, buf)) {
            posix_trace_eventset_add(id, s);
            n++;
        }
    }
    return n;
}

static gboolean select_item(const char *w, trace_id_t trid, pt_user_open_fn user_open, void *ctx,
                            trace_event_set_t *s, GError **err)
{
    trace_event_id_t id;
    if (*w == '\0') {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "-e: empty item");
        return FALSE;
    }
    if (select_class(w, s) || select_names(w, trid, s) > 0)
        return TRUE;
    if (strpbrk(w, "*?") == NULL && user_open != NULL) {
        int rc = user_open(ctx, w, &id);
        if (rc == 0) {
            posix_trace_eventset_add(id, s);
            return TRUE;
        }
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "-e: cannot name user event '%s': %s", w, pt_strerror(rc));
        return FALSE;
    }
    pt_warn("-e: no event type matches '%s'", w);
    return TRUE;
}

gboolean pt_filter_parse(const char *spec, const trace_event_set_t *base, trace_id_t trid,
                         pt_user_open_fn user_open, void *ctx, trace_event_set_t *keep,
                         GError **err)
{
    gchar **items = g_strsplit(spec, ",", -1);
    gboolean ok = TRUE;
    posix_trace_eventset_empty(keep);
    if (items[0] != NULL && items[0][0] == '!') {
        if (base != NULL)
            *keep = *base;
        else
            posix_trace_eventset_fill(keep, POSIX_TRACE_ALL_EVENTS);
    }
    for (int i = 0; ok && items[i] != NULL; i++) {
        int neg = items[i][0] == '!';
        trace_event_set_t sel;
        posix_trace_eventset_empty(&sel);
        ok = select_item(items[i] + neg, trid, user_open, ctx, &sel, err);
        for (trace_event_id_t id = 0; ok && id <= PT_ID_MAX; id++) {
            int m = 0;
            posix_trace_eventset_ismember(id, &sel, &m);
            if (m && neg)
                posix_trace_eventset_del(id, keep);
            else if (m)
                posix_trace_eventset_add(id, keep);
        }
    }
    g_strfreev(items);
    return ok;
}
