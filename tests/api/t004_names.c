/*
 * t004_names: event names and the event type list of a stream.
 *   posix_trace_eventid_open, posix_trace_trid_eventid_open,
 *   posix_trace_eventid_get_name, posix_trace_eventid_equal,
 *   posix_trace_eventtypelist_getnext_id, posix_trace_eventtypelist_rewind.
 */
#include "tcommon.h"

static void show_open(const char *label, const char *name)
{
    trace_event_id_t id = 0xdeadbeef;
    int rc = posix_trace_eventid_open(name, &id);
    if (rc == 0)
        printf("%s rc=0 id=%u\n", label, (unsigned)id);
    else
        printf("%s rc=%s\n", label, tc_errname(rc));
}

static void show_trid_open(const char *label, trace_id_t trid, const char *name)
{
    trace_event_id_t id = 0xdeadbeef;
    int rc = posix_trace_trid_eventid_open(trid, name, &id);
    if (rc == 0)
        printf("%s rc=0 id=%u\n", label, (unsigned)id);
    else
        printf("%s rc=%s\n", label, tc_errname(rc));
}

static void show_name(trace_id_t trid, trace_event_id_t id)
{
    /* buffer of TRACE_EVENT_NAME_MAX+1 bytes followed by a canary */
    struct {
        char name[TRACE_EVENT_NAME_MAX + 1];
        char canary[16];
    } b;
    memset(&b, '#', sizeof b);
    int rc = posix_trace_eventid_get_name(trid, id, b.name);
    int canary = 1;
    for (size_t i = 0; i < sizeof b.canary; i++)
        if (b.canary[i] != '#')
            canary = 0;
    if (rc == 0) {
        size_t n = strnlen(b.name, sizeof b.name);
        printf("get_name %u rc=0 name=%s len=%zu canary_ok=%d\n", (unsigned)id,
               n < sizeof b.name ? b.name : "<unterminated>", n, canary);
    } else {
        printf("get_name %u rc=%s\n", (unsigned)id, tc_errname(rc));
    }
}

static void show_list(const char *label, trace_id_t trid)
{
    trace_event_id_t id;
    int unavailable;
    printf("%s [", label);
    for (int n = 0; n < 5000; n++) {
        unavailable = -1;
        int rc = posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable);
        if (rc != 0) {
            printf(" rc=%s", tc_errname(rc));
            break;
        }
        if (unavailable != 0)
            break;
        if ((id >= 8 && id < 256) || id >= 1536)
            continue; /* the shim's system events and system calls (tested with the shim) */
        printf("%s%u", n ? "," : "", (unsigned)id);
    }
    printf("]\n");
}

int main(void)
{
    char n63[TRACE_EVENT_NAME_MAX + 2], n64[TRACE_EVENT_NAME_MAX + 2];
    trace_id_t trid;
    tc_init();

    for (int i = 0; i < TRACE_EVENT_NAME_MAX + 1; i++)
        n64[i] = (char)('A' + i % 26);
    n64[TRACE_EVENT_NAME_MAX + 1] = 0;
    memcpy(n63, n64, TRACE_EVENT_NAME_MAX);
    n63[TRACE_EVENT_NAME_MAX] = 0;
    n63[0] = 'z';   /* distinct from n64's first 63 characters */
    printf("len n63=%zu n64=%zu\n", strlen(n63), strlen(n64));

    /* No stream yet: recording has no effect and must not crash. */
    posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, "x", 1);

    /* Names opened before any stream exists (kept for future streams). */
    show_open("open foo", "foo");
    show_open("open foo again", "foo");
    show_open("open bar", "bar");
    show_open("open posix_trace_start (user namespace)", "posix_trace_start");
    show_open("open n63", n63);
    show_open("open n64", n64);
    show_open("open foo once more", "foo");

    CHECK(posix_trace_create(0, NULL, &trid));
    show_list("list", trid);

    /* system and predefined names (doc/semantics.md) */
    for (trace_event_id_t id = 0; id <= 7; id++)
        show_name(trid, id);
    show_name(trid, POSIX_TRACE_UNNAMED_USEREVENT);
    for (trace_event_id_t id = 257; id <= 261; id++)
        show_name(trid, id);
    {
        char buf[TRACE_EVENT_NAME_MAX + 1];
        CHECK(posix_trace_eventid_get_name(trid, 260, buf));
        printf("get_name 260 equals n63=%d\n", strcmp(buf, n63) == 0);
    }
    /* the same answer twice */
    show_name(trid, 257);
    static const trace_event_id_t unknown[] = { 1000, 1280, 1281, 2047, 5000, 0xffffffffu };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        show_name(trid, unknown[i]);

    /* trid_eventid_open shares the process's mapping */
    show_trid_open("trid_open baz", trid, "baz");
    show_trid_open("trid_open foo", trid, "foo");
    show_trid_open("trid_open baz again", trid, "baz");
    show_open("open baz", "baz");
    show_trid_open("trid_open n63", trid, n63);
    show_trid_open("trid_open n64", trid, n64);
    /* a name opened after create is known to the stream */
    show_open("open late", "late");
    show_name(trid, 262);
    CHECK(posix_trace_eventtypelist_rewind(trid));
    show_list("list", trid);

    /* the list stays exhausted until rewound */
    {
        trace_event_id_t id;
        int un = 0;
        int rc = posix_trace_eventtypelist_getnext_id(trid, &id, &un);
        printf("exhausted getnext_id rc=%s unavailable=%d\n", tc_errname(rc), un != 0);
        un = 0;
        rc = posix_trace_eventtypelist_getnext_id(trid, &id, &un);
        printf("exhausted getnext_id rc=%s unavailable=%d\n", tc_errname(rc), un != 0);
    }
    SHOW("rewind", posix_trace_eventtypelist_rewind(trid));
    {
        trace_event_id_t id = 99;
        int un = -1;
        int rc = posix_trace_eventtypelist_getnext_id(trid, &id, &un);
        printf("after rewind getnext_id rc=%s unavailable=%d id=%u\n", tc_errname(rc),
               un != 0, (unsigned)id);
        un = -1;
        rc = posix_trace_eventtypelist_getnext_id(trid, &id, &un);
        printf("after rewind getnext_id rc=%s unavailable=%d id=%u\n", tc_errname(rc),
               un != 0, (unsigned)id);
    }
    SHOW("rewind", posix_trace_eventtypelist_rewind(trid));
    show_list("list after rewind", trid);

    /* eventid_equal */
    printf("equal 257 257 = %d\n", posix_trace_eventid_equal(trid, 257, 257) != 0);
    printf("equal 257 258 = %d\n", posix_trace_eventid_equal(trid, 257, 258) != 0);
    printf("equal 0 0 = %d\n", posix_trace_eventid_equal(trid, 0, 0) != 0);
    printf("equal 0 1 = %d\n", posix_trace_eventid_equal(trid, 0, 1) != 0);
    printf("equal 256 256 = %d\n", posix_trace_eventid_equal(trid, 256, 256) != 0);
    printf("equal 256 257 = %d\n", posix_trace_eventid_equal(trid, 256, 257) != 0);

    /* events recorded with these ids come back with them */
    CHECK(posix_trace_start(trid));
    posix_trace_event(257, "f", 1);
    posix_trace_event(262, "l", 1);
    posix_trace_event(259, "s", 1);
    posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, "u", 1);
    CHECK(posix_trace_stop(trid));
    tc_drain_print(trid);

    /* invalid trids: a shut-down stream, and all-ones */
    trace_id_t dead;
    CHECK(posix_trace_create(0, NULL, &dead));
    CHECK(posix_trace_shutdown(dead));
    trace_id_t bad[2] = { dead, ~(trace_id_t)0 };
    for (int i = 0; i < 2; i++) {
        const char *w = i ? "allones" : "shutdown";
        char buf[TRACE_EVENT_NAME_MAX + 1];
        trace_event_id_t id;
        int un;
        printf("%s get_name rc=%s\n", w,
               tc_errname(posix_trace_eventid_get_name(bad[i], 257, buf)));
        printf("%s get_name(0) rc=%s\n", w,
               tc_errname(posix_trace_eventid_get_name(bad[i], 0, buf)));
        printf("%s trid_eventid_open rc=%s\n", w,
               tc_errname(posix_trace_trid_eventid_open(bad[i], "foo", &id)));
        printf("%s getnext_id rc=%s\n", w,
               tc_errname(posix_trace_eventtypelist_getnext_id(bad[i], &id, &un)));
        printf("%s rewind rc=%s\n", w,
               tc_errname(posix_trace_eventtypelist_rewind(bad[i])));
    }
    /* the live stream is unaffected */
    show_name(trid, 257);
    CHECK(posix_trace_shutdown(trid));
    return 0;
}
