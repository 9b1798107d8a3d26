/*
 * Calls unfinished when the trace ended: the event posixtrace:call_unfinished
 * (recorded by the controller, <posixtrace/control.h>
 * posixtrace_stream_unfinished) shown as the call itself, with the
 * arguments its thread had published, at the time it started, marked
 * unfinished (doc/tools.md "Calls unfinished at the end"):
 *   text    posixtrace:read(fd=0, count=131072, <unfinished ...>)
 *   json    "unfinished":true, "returned":false, "ret":null
 *   chrome  an open-ended slice ("ph":"B", no end)
 */
#include "ptools.h"

#include <string.h>

/* The call's view of an unfinished event e (decoded as call_unfinished):
 * its id, name, descriptor, process, and its first fixed fields. Left as it
 * is when the payload names no known call. */
void pt_unfinished_unwrap(struct pt_event *e, struct pt_names *n)
{
    const struct pt_field *pid = pt_event_field(e, "pid"), *ev = pt_event_field(e, "event"),
                          *na = pt_event_field(e, "nargs");
    if (pid == NULL || ev == NULL || na == NULL || ev->u < PT_SYS_FIRST ||
        ev->u > POSIXTRACE_SYSCALL_LAST || ev->u == POSIXTRACE_EV_CALL_UNFINISHED)
        return;
    const struct posixtrace_event_desc *d = posixtrace_event_desc((trace_event_id_t)ev->u);
    if (d == NULL)
        return;
    uint64_t arg[POSIXTRACE_INFLIGHT_ARGS] = { 0 };
    unsigned nargs = na->u < POSIXTRACE_INFLIGHT_ARGS ? (unsigned)na->u : POSIXTRACE_INFLIGHT_ARGS;
    for (unsigned k = 0; k < nargs; k++) {
        char name[8];
        g_snprintf(name, sizeof name, "arg%u", k);
        const struct pt_field *a = pt_event_field(e, name);
        if (a == NULL) {
            nargs = k;
            break;
        }
        arg[k] = a->u;
    }
    e->info.posix_pid = (pid_t)(int64_t)pid->u;
    e->id = (trace_event_id_t)ev->u;
    e->name = pt_names_get(n, e->id);
    e->desc = d;
    e->unfinished = 1;
    e->cut = 0;
    e->nfields = 0;
    memset(e->f, 0, sizeof e->f);
    unsigned nf = d->nfields < POSIXTRACE_MAX_FIELDS ? d->nfields : POSIXTRACE_MAX_FIELDS;
    for (unsigned i = 0, k = 0; i < nf && k < nargs; i++) {
        if (d->fields[i].type >= POSIXTRACE_F_VARIABLE)
            continue;
        e->f[i].name = d->fields[i].name;
        e->f[i].type = d->fields[i].type;
        e->f[i].u = arg[k++];
        e->f[i].present = 1;
        e->nfields++;
    }
}
