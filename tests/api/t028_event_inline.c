/*
 * t028_event_inline: posix_trace_event() as <trace.h> defines it, a test of
 * the library's want table inline in the caller before the call
 * (doc/semantics.md, "posix_trace_event in the header"), against the
 * function itself. Built twice: as a PIE (the default) and, as
 * t028_event_inline_nopie, as a position-dependent program, whose
 * reference to the want table makes the linker copy it into the program
 * (a copy relocation), which the library must then use too.
 *
 * Modes (argv[1]):
 *   once    each argument evaluated exactly once, with no stream, with a
 *           running stream and with the event filtered out: prints the
 *           counters, then the events recorded
 *   forms   the macro, (posix_trace_event)(...), a pointer to the function
 *           and a call after #undef all record the same event
 *   user N  records N "inline/tick" events (data: int i), prints "done N"
 *           (traced by another process: posixtrace-run --no-preload)
 */
#include "tcommon.h"

static int n_id, n_data, n_len;

static trace_event_id_t id_of(trace_event_id_t id) { n_id++; return id; }
static const void *data_of(const void *p) { n_data++; return p; }
static size_t len_of(size_t n) { n_len++; return n; }

static void three(trace_event_id_t id)
{
    static const char msg[] = "abcdefgh";
    for (size_t i = 1; i <= 3; i++)
        posix_trace_event(id_of(id), data_of(msg), len_of(i));
    printf("counts id=%d data=%d len=%d\n", n_id, n_data, n_len);
}

static void mode_once(void)
{
    trace_event_id_t a = tc_open("inline/a");
    three(a); /* no stream */
    trace_id_t trid;
    CHECK(posix_trace_create(0, NULL, &trid));
    CHECK(posix_trace_start(trid));
    three(a); /* recorded */
    trace_event_set_t set;
    CHECK(posix_trace_eventset_empty(&set));
    CHECK(posix_trace_eventset_add(a, &set));
    CHECK(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET));
    three(a); /* filtered out */
    CHECK(posix_trace_stop(trid));
    tc_drain_print(trid);
    CHECK(posix_trace_shutdown(trid));
}

static void via_undef(trace_event_id_t id, const void *p, size_t n);

static void mode_forms(void)
{
    trace_event_id_t a = tc_open("inline/a");
    void (*fp)(trace_event_id_t, const void *, size_t) = posix_trace_event;
    trace_id_t trid;
    CHECK(posix_trace_create(0, NULL, &trid));
    CHECK(posix_trace_start(trid));
    posix_trace_event(a, "macro", 5);
    (posix_trace_event)(a, "function", 8);
    fp(a, "pointer", 7);
    via_undef(a, "undef", 5);
    CHECK(posix_trace_stop(trid));
    tc_drain_print(trid);
    CHECK(posix_trace_shutdown(trid));
}

static void mode_user(int n)
{
    trace_event_id_t tick = tc_open("inline/tick");
    for (int i = 0; i < n; i++)
        posix_trace_event(tick, &i, sizeof i);
    printf("done %d\n", n);
}

int main(int argc, char **argv)
{
    tc_init();
    tc_alarm_watchdog(30);
    if (argc >= 2 && strcmp(argv[1], "once") == 0)
        mode_once();
    else if (argc >= 2 && strcmp(argv[1], "forms") == 0)
        mode_forms();
    else if (argc >= 3 && strcmp(argv[1], "user") == 0)
        mode_user(atoi(argv[2]));
    else
        return 2;
    return 0;
}

#undef posix_trace_event
static void via_undef(trace_event_id_t id, const void *p, size_t n)
{
    posix_trace_event(id, p, n);
}
