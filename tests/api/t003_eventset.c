/*
 * t003_eventset: posix_trace_eventset_empty/fill/add/del/ismember.
 * Sets print as member ranges, e.g. "[0-7,256]".
 */
#include "tcommon.h"

static void show_set(const char *label, const trace_event_set_t *s)
{
    printf("%s ", label);
    tc_fprint_set(stdout, s);
    printf("\n");
}

int main(void)
{
    trace_event_set_t s;
    int m;
    tc_init();

    /* empty / fill, each `what` */
    memset(&s, 0xff, sizeof s);
    SHOW("empty", posix_trace_eventset_empty(&s));
    show_set("empty", &s);

    memset(&s, 0, sizeof s);
    SHOW("fill WOPID", posix_trace_eventset_fill(&s, POSIX_TRACE_WOPID_EVENTS));
    show_set("fill WOPID", &s);
    memset(&s, 0, sizeof s);
    SHOW("fill SYSTEM", posix_trace_eventset_fill(&s, POSIX_TRACE_SYSTEM_EVENTS));
    show_set("fill SYSTEM", &s);
    memset(&s, 0, sizeof s);
    SHOW("fill ALL", posix_trace_eventset_fill(&s, POSIX_TRACE_ALL_EVENTS));
    show_set("fill ALL", &s);

    /* fill replaces the previous contents (it initializes the set) */
    CHECK(posix_trace_eventset_fill(&s, POSIX_TRACE_ALL_EVENTS));
    CHECK(posix_trace_eventset_fill(&s, POSIX_TRACE_WOPID_EVENTS));
    show_set("fill ALL then WOPID", &s);

    /* invalid what */
    static const int bad_what[] = { 0, 4, -1, 100 };
    for (size_t i = 0; i < sizeof bad_what / sizeof bad_what[0]; i++) {
        char lbl[64];
        snprintf(lbl, sizeof lbl, "fill what=%d", bad_what[i]);
        SHOW(lbl, posix_trace_eventset_fill(&s, bad_what[i]));
    }

    /* add / del, idempotent */
    CHECK(posix_trace_eventset_empty(&s));
    SHOW("add 300", posix_trace_eventset_add(300, &s));
    SHOW("add 300 again", posix_trace_eventset_add(300, &s));
    SHOW("add 0", posix_trace_eventset_add(0, &s));
    SHOW("add 63", posix_trace_eventset_add(63, &s));
    SHOW("add 64", posix_trace_eventset_add(64, &s));
    SHOW("add 256", posix_trace_eventset_add(256, &s));
    SHOW("add 1280", posix_trace_eventset_add(1280, &s));
    show_set("after add", &s);
    SHOW("del 300", posix_trace_eventset_del(300, &s));
    SHOW("del 300 again", posix_trace_eventset_del(300, &s));
    SHOW("del 301 (never added)", posix_trace_eventset_del(301, &s));
    show_set("after del", &s);

    /* ismember */
    static const trace_event_id_t probe[] = { 0, 1, 63, 64, 65, 256, 300, 1279, 1280 };
    for (size_t i = 0; i < sizeof probe / sizeof probe[0]; i++) {
        m = -1;
        int rc = posix_trace_eventset_ismember(probe[i], &s, &m);
        printf("ismember %u rc=%s member=%d\n", (unsigned)probe[i], tc_errname(rc),
               m != 0);
    }

    /* del from a filled set */
    CHECK(posix_trace_eventset_fill(&s, POSIX_TRACE_ALL_EVENTS));
    CHECK(posix_trace_eventset_del(POSIX_TRACE_STOP, &s));
    CHECK(posix_trace_eventset_del(700, &s));
    show_set("all minus 1,700", &s);

    /* the probe and system call ids are valid ones too (doc/semantics.md) */
    CHECK(posix_trace_eventset_empty(&s));
    SHOW("add 1281", posix_trace_eventset_add(1281, &s));
    SHOW("add 2047", posix_trace_eventset_add(2047, &s));
    show_set("probe and syscall ids", &s);
    /* invalid ids: outside 0..2047 (doc/semantics.md) */
    static const trace_event_id_t bad[] = { 2048, 2049, 100000, 0xffffffffu };
    trace_event_set_t before;
    CHECK(posix_trace_eventset_empty(&s));
    CHECK(posix_trace_eventset_add(5, &s));
    memcpy(&before, &s, sizeof s);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char lbl[64];
        snprintf(lbl, sizeof lbl, "add %u", (unsigned)bad[i]);
        SHOW(lbl, posix_trace_eventset_add(bad[i], &s));
        snprintf(lbl, sizeof lbl, "del %u", (unsigned)bad[i]);
        SHOW(lbl, posix_trace_eventset_del(bad[i], &s));
        snprintf(lbl, sizeof lbl, "ismember %u", (unsigned)bad[i]);
        SHOW(lbl, posix_trace_eventset_ismember(bad[i], &s, &m));
    }
    printf("set unchanged by invalid ids=%d\n", memcmp(&before, &s, sizeof s) == 0);
    show_set("after invalid", &s);

    /* The primitives operate on the object only, not on a stream's filter. */
    trace_id_t trid;
    trace_event_set_t f;
    CHECK(posix_trace_create(0, NULL, &trid));
    CHECK(posix_trace_eventset_fill(&s, POSIX_TRACE_ALL_EVENTS));
    CHECK(posix_trace_eventset_add(7, &s));
    CHECK(posix_trace_get_filter(trid, &f));
    show_set("stream filter", &f);
    CHECK(posix_trace_shutdown(trid));
    return 0;
}
