/*
 * Which of the shim's events record a C library function or system call a
 * user names (strace habits: -e openat, -e wait4, -e clone). Derived from
 * the one definition of the events (include/posixtrace/events.def): the
 * functions an event records are the `quoted` names its "recorded by" text
 * starts with. A few system calls have no C function of their name; they
 * are the table below.
 */
#include "ptools.h"

#include <string.h>

struct ev_text {
    const char *name, *recorded_by;
};

static const struct ev_text ev_texts[] = {
#define POSIXTRACE_F(name, type, note)
#define POSIXTRACE_EVENT(ID, id, name, category, recorded_by, fields) { name, recorded_by },
#include <posixtrace/events.def>
#undef POSIXTRACE_EVENT
#undef POSIXTRACE_F
};

/* System calls the C library reaches under other names (x86-64 names and
 * the 32-bit ones strace shows), and the events that record those. */
static const struct {
    const char *syscall, *events;
} aliases[] = {
    { "clone", "fork vfork posix_spawn pthread_create" },
    { "clone3", "fork vfork posix_spawn pthread_create" },
    { "exit_group", "exit" },
    { "_exit", "exit" },
    { "_Exit", "exit" },
    { "_llseek", "lseek" },
    { "tgkill", "raise kill" },
    { "tkill", "raise" },
};

static int ident_char(char c)
{
    return g_ascii_isalnum(c) || c == '_';
}

/* Appends to fns the functions the recorded-by text t starts with: the
 * identifiers in backquotes before the first unquoted '(', ':' or ';'. */
static void recorded_functions(const char *t, GPtrArray *fns)
{
    int quoted = 0;
    for (const char *p = t; *p != '\0'; p++) {
        if (*p == '`') {
            quoted = !quoted;
        } else if (!quoted && strchr("(:;", *p) != NULL) {
            return;
        } else if (quoted && ident_char(*p) && (p == t || !ident_char(p[-1]))) {
            size_t n = 0;
            while (ident_char(p[n]))
                n++;
            if (p[n] == ' ' || p[n] == '`')
                g_ptr_array_add(fns, g_strndup(p, n));
            p += n - 1;
        }
    }
}

static gboolean has(GPtrArray *a, const char *s)
{
    for (guint i = 0; i < a->len; i++)
        if (strcmp(g_ptr_array_index(a, i), s) == 0)
            return TRUE;
    return FALSE;
}

/* The functions an event named ev ("open") records, or NULL; g_ptr_array_unref it. */
GPtrArray *pt_fn_of_event(const char *ev)
{
    for (size_t i = 0; i < G_N_ELEMENTS(ev_texts); i++) {
        if (strcmp(ev_texts[i].name, ev) == 0) {
            GPtrArray *fns = g_ptr_array_new_with_free_func(g_free);
            recorded_functions(ev_texts[i].recorded_by, fns);
            return fns;
        }
    }
    return NULL;
}

GPtrArray *pt_events_of_fn(const char *fn)
{
    GPtrArray *evs = g_ptr_array_new();
    for (size_t i = 0; i < G_N_ELEMENTS(aliases); i++) {
        if (strcmp(aliases[i].syscall, fn) == 0) {
            gchar **v = g_strsplit(aliases[i].events, " ", -1);
            for (int j = 0; v[j] != NULL; j++)
                for (size_t k = 0; k < G_N_ELEMENTS(ev_texts); k++)
                    if (strcmp(ev_texts[k].name, v[j]) == 0)
                        g_ptr_array_add(evs, (gpointer)ev_texts[k].name);
            g_strfreev(v);
            return evs;
        }
    }
    for (size_t i = 0; i < G_N_ELEMENTS(ev_texts); i++) {
        GPtrArray *fns = g_ptr_array_new_with_free_func(g_free);
        recorded_functions(ev_texts[i].recorded_by, fns);
        if (has(fns, fn))
            g_ptr_array_add(evs, (gpointer)ev_texts[i].name);
        g_ptr_array_unref(fns);
    }
    return evs;
}
