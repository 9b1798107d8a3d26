/*
 * The system events of the interposition shim: ids, names, payload fields,
 * expanded from their one definition, <posixtrace/events.def>.
 * <posixtrace/events.h> describes the format; doc/events.md documents each
 * event (its tables generated from the same definition).
 */
#include "../internal.h"
#include <posixtrace/events.h>
#include "../ring/shm_layout.h"

/* The fields of an event: their number is that of the entries before the
 * sentinel (an event with more than POSIXTRACE_MAX_FIELDS does not compile). */
#define POSIXTRACE_F(n, t, note) { #n, POSIXTRACE_F_##t },
#define NFIELDS(...) \
    (unsigned)(sizeof((const struct posixtrace_field[]){ __VA_ARGS__ { NULL, 0 } }) / \
                   sizeof(struct posixtrace_field) - 1)
#define POSIXTRACE_EVENT(ID, id, name, cat, by, fields) \
    { POSIXTRACE_EV_##ID, "posixtrace:" name, cat, NFIELDS(fields), { fields } },

PT_API const struct posixtrace_event_desc posixtrace_event_descs[] = {
#include <posixtrace/events.def>
};

PT_API const unsigned posixtrace_event_ndescs =
    sizeof posixtrace_event_descs / sizeof posixtrace_event_descs[0];

PT_API const struct posixtrace_event_desc *posixtrace_event_desc(unsigned id)
{
    if (id >= PT_SYSCALL_ID_BASE && id <= PT_ID_MAX)
        return pt_syscall_desc(id - PT_SYSCALL_ID_BASE);
    for (unsigned i = 0; i < posixtrace_event_ndescs; i++)
        if (posixtrace_event_descs[i].id == id)
            return &posixtrace_event_descs[i];
    return NULL;
}
