/*
 * The system events of the interposition shim: ids, names, payload fields.
 * <posixtrace/events.h> describes the format; doc/events.md documents each
 * event. Ids are stable once released: add new events at new ids.
 */
#include "internal.h"
#include <posixtrace/events.h>

#define F(n, t) { n, POSIXTRACE_F_##t }

PT_API const struct posixtrace_event_desc posixtrace_event_descs[] = {
    { 8, "posixtrace:process_start", "process", 3,
      { F("ppid", PID), F("exe", STR), F("argv", ARGV) } },
    { 16, "posixtrace:open", "file", 4,
      { F("dirfd", FD), F("flags", OFLAGS), F("mode", MODE), F("path", STR) } },
    { 17, "posixtrace:close", "file", 1, { F("fd", FD) } },
    { 18, "posixtrace:write", "file", 3, { F("fd", FD), F("count", UINT), F("buf", BUF) } },
};

PT_API const unsigned posixtrace_event_ndescs =
    sizeof posixtrace_event_descs / sizeof posixtrace_event_descs[0];

PT_API const struct posixtrace_event_desc *posixtrace_event_desc(unsigned id)
{
    for (unsigned i = 0; i < posixtrace_event_ndescs; i++)
        if (posixtrace_event_descs[i].id == id)
            return &posixtrace_event_descs[i];
    return NULL;
}
