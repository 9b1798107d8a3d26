/*
 * -e SPEC: which event types to keep, as a trace_event_set_t.
 *
 * SPEC is a comma-separated list of items applied left to right; an item is
 * a class (process, thread, file, net, trace, user, syscall, probe, all: the
 * categories of <posixtrace/events.h> and <posixtrace/syscalls.def>, "trace"
 * adding the predefined events 0..7, "user" every user event, "syscall" every
 * system call of the system-call mode, "probe" the run-time probes 1281..1535) or an event name ("posixtrace:open",
 * "syscall:openat", or either without its prefix; '*' and '?' glob), or a C
 * function or system call some events record ("openat": the event open, said
 * on stderr; fn_events.c), or a user event ("user:NAME", or a name with a
 * character other than letters, digits and '_'). A plain word nothing matches
 * is an error. "!ITEM" removes. strace's forms are read too: "trace=ITEM"
 * (its default qualifier) and the classes %file, %process, %network. When
 * the first item is a
 * removal the list starts from the default set (all events, or what the
 * caller shows by default), else from none.
 *
 * The classes (all, syscall, thread, and the default set of posixtrace-run)
 * leave out the system calls that flood a trace (futex: every contended
 * lock, every condition variable); naming one selects it ("-e futex",
 * "-e syscall:futex").
 */
#include "ptools.h"
#include <posixtrace/record.h>

#include <string.h>
#include <sys/syscall.h>

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

void pt_filter_drop_floods(trace_event_set_t *s)
{
#ifdef SYS_futex
    posix_trace_eventset_del(POSIXTRACE_SYSCALL_FIRST + SYS_futex, s);
#endif
}

/* A class name, every event it names: fills s and returns TRUE. */
static gboolean select_class_all(const char *w, trace_event_set_t *s)
{
    static const char *const cats[] = { "process", "thread", "file", "net", NULL };
    if (strcmp(w, "probe") == 0) { /* run-time probes, and their definitions */
        add_range(s, POSIXTRACE_PROBE_FIRST, POSIXTRACE_PROBE_LAST);
        posix_trace_eventset_add(POSIXTRACE_EV_PROBE_DEF, s);
        return TRUE;
    }
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

/* A class name: fills s (without the flooding calls) and returns TRUE. */
static gboolean select_class(const char *w, trace_event_set_t *s)
{
    if (!select_class_all(w, s))
        return FALSE;
    pt_filter_drop_floods(s);
    return TRUE;
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
    for (id = POSIXTRACE_PROBE_FIRST; id <= POSIXTRACE_PROBE_LAST; id++) {
        const struct pt_probe *pr = pt_probe_get(id);
        if (pr != NULL && name_matches(p, pr->name)) {
            posix_trace_eventset_add(id, s);
            n++;
        }
    }
    posix_trace_eventtypelist_rewind(trid);
    while (posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable) == 0 && !unavailable) {
        if (id >= POSIX_TRACE_UNNAMED_USEREVENT && id <= PT_USER_ID_MAX &&
            posix_trace_eventid_get_name(trid, id, buf) == 0 && name_matches(p, buf)) {
            posix_trace_eventset_add(id, s);
            n++;
        }
    }
    return n;
}

/* The event named name ("open"): its id, or 0. */
static trace_event_id_t shim_event_id(const char *name)
{
    for (unsigned i = 0; i < posixtrace_event_ndescs; i++)
        if (strcmp(posixtrace_event_descs[i].name + strlen(SHIM_PREFIX), name) == 0)
            return posixtrace_event_descs[i].id;
    return 0;
}

/* "open, open64, openat ..." : the functions ev records, at most 6 shown. */
static void append_functions(GString *m, const char *ev)
{
    GPtrArray *fns = pt_fn_of_event(ev);
    if (fns == NULL || fns->len == 0) {
        if (fns != NULL)
            g_ptr_array_unref(fns);
        return;
    }
    g_string_append(m, " (");
    for (guint i = 0; i < fns->len && i < 6; i++)
        g_string_append_printf(m, "%s%s", i ? ", " : "", (char *)g_ptr_array_index(fns, i));
    g_string_append(m, fns->len > 6 ? " ...)" : ")");
    g_ptr_array_unref(fns);
}

/* Whether w's note is still to be said (posixtrace-dump parses -e per log). */
static gboolean said_once(const char *w)
{
    static GHashTable *said;
    if (said == NULL)
        said = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    if (g_hash_table_contains(said, w))
        return FALSE;
    g_hash_table_add(said, g_strdup(w));
    return TRUE;
}

/* A function or system call name some events record (-e openat): adds them
 * and says so on stderr. */
static gboolean select_function(const char *w, trace_event_set_t *s, gboolean say)
{
    GPtrArray *evs = pt_events_of_fn(w);
    GString *m = g_string_new(NULL);
    guint n = evs->len;
    for (guint i = 0; i < evs->len; i++) {
        const char *ev = g_ptr_array_index(evs, i);
        posix_trace_eventset_add(shim_event_id(ev), s);
        g_string_append_printf(m, "%s'%s'", i ? ", " : "", ev);
        if (evs->len == 1)
            append_functions(m, ev);
    }
    if (n != 0 && say && said_once(w))
        pt_warn("-e %s: traced as event%s %s", w, n > 1 ? "s" : "", m->str);
    g_string_free(m, TRUE);
    g_ptr_array_unref(evs);
    return n != 0;
}

/* Items that selected system calls only ("-e newfstatat"): posixtrace-run
 * says they are recorded with --syscalls only. */
unsigned pt_filter_syscall_items;

/* Whether every event of t is a system call's; adds them to s. */
static gboolean merge_only_syscalls(const trace_event_set_t *t, trace_event_set_t *s)
{
    gboolean only = TRUE;
    for (trace_event_id_t id = 0; id <= PT_ID_MAX; id++) {
        int m = 0;
        if (posix_trace_eventset_ismember(id, t, &m) == 0 && m) {
            posix_trace_eventset_add(id, s);
            only = only && id >= POSIXTRACE_SYSCALL_FIRST;
        }
    }
    return only;
}

/* The message for a name nothing selects: the classes and the events. */
static void unknown_name(const char *w, GError **err)
{
    GString *m = g_string_new(NULL);
    g_string_append_printf(m, "-e %s: no such class, event, function or system call", w);
    g_string_append(m, ".\n  classes: " PT_FILTER_CLASSES "\n  events:");
    for (unsigned i = 0; i < posixtrace_event_ndescs; i++)
        g_string_append_printf(m, "%s %s", i ? "," : "",
                               posixtrace_event_descs[i].name + strlen(SHIM_PREFIX));
    g_string_append(m, "\n  a user event of the program: user:NAME (or a name with '/', '.', "
                       "'-' or ':')");
    g_set_error_literal(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, m->str);
    g_string_free(m, TRUE);
}

/* A plain word ("stat", "nonsense"): never taken for a user event name. */
static gboolean bare_word(const char *w)
{
    for (const char *p = w; *p != '\0'; p++)
        if (!g_ascii_isalnum(*p) && *p != '_')
            return FALSE;
    return TRUE;
}

static gboolean select_item(const char *w, trace_id_t trid, pt_user_open_fn user_open, void *ctx,
                            trace_event_set_t *s, GError **err)
{
    trace_event_id_t id;
    if (*w == '\0') {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "-e: empty item");
        return FALSE;
    }
    if (g_str_has_prefix(w, "user:") && w[5] != '\0') {
        w += 5;
        if (select_names(w, trid, s) > 0)
            return TRUE;
    } else {
        if (select_class(w, s))
            return TRUE;
        /* both: "openat" is the system call's event and the shim's open */
        trace_event_set_t named;
        posix_trace_eventset_empty(&named);
        int n = select_names(w, trid, &named);
        gboolean sys_only = merge_only_syscalls(&named, s);
        gboolean fn = strpbrk(w, "*?") == NULL && select_function(w, s, n == 0 || sys_only);
        if (n > 0 || fn) {
            if (!fn && sys_only)
                pt_filter_syscall_items++;
            return TRUE;
        }
        if (bare_word(w) || g_str_has_prefix(w, SHIM_PREFIX)) {
            unknown_name(w, err);
            return FALSE;
        }
    }
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

/* strace's "-e trace=open,close": the qualifier is the default one. */
static const char *strace_form(const char *w)
{
    return g_str_has_prefix(w, "trace=") ? w + 6 : w;
}

gboolean pt_filter_parse(const char *spec, const trace_event_set_t *base, trace_id_t trid,
                         pt_user_open_fn user_open, void *ctx, trace_event_set_t *keep,
                         GError **err)
{
    gchar **items = g_strsplit(spec, ",", -1);
    gboolean ok = TRUE;
    posix_trace_eventset_empty(keep);
    if (items[0] != NULL && strace_form(items[0])[0] == '!') {
        if (base != NULL)
            *keep = *base;
        else
            posix_trace_eventset_fill(keep, POSIX_TRACE_ALL_EVENTS);
    }
    for (int i = 0; ok && items[i] != NULL; i++) {
        const char *w = strace_form(items[i]);
        int neg = *w == '!';
        trace_event_set_t sel;
        posix_trace_eventset_empty(&sel);
        w += neg;
        if (*w == '%') /* strace's classes: %file, %process, %network */
            w = strcmp(w, "%network") == 0 ? "net" : w + 1;
        ok = select_item(w, trid, user_open, ctx, &sel, err);
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
