/*
 * Event-type names of a stream, looked up once per id with
 * posix_trace_eventid_get_name (which works on live streams and logs); the
 * shim's events, whose ids are fixed, are named even when the stream or log
 * does not name them (a log cut before its name table).
 */
#include "ptools.h"

void pt_names_init(struct pt_names *n, trace_id_t trid)
{
    memset(n, 0, sizeof *n);
    n->trid = trid;
}

void pt_names_clear(struct pt_names *n)
{
    for (unsigned i = 0; i <= PT_ID_MAX; i++)
        g_clear_pointer(&n->name[i], g_free);
}

const char *pt_names_get(struct pt_names *n, trace_event_id_t id)
{
    char buf[TRACE_EVENT_NAME_MAX + 1];
    if (id > PT_ID_MAX)
        return "?";
    if (n->name[id] == NULL) {
        if (posix_trace_eventid_get_name(n->trid, id, buf) == 0)
            n->name[id] = g_strdup(buf);
        else if (posixtrace_event_desc(id) != NULL)
            return posixtrace_event_desc(id)->name; /* the shim's ids are fixed: a log
                                                       cut before its name table */
        else
            return "?"; /* not named (yet): look again next time */
    }
    return n->name[id];
}
