/*
 * t002_attr_stream: attributes of a created stream (posix_trace_get_attr).
 *
 * Modes (argv[1]):
 *   createtime  creation-time set by posix_trace_create, between two
 *               CLOCK_REALTIME readings around the call; clockres of the stream
 *   getattr     get_attr returns the attributes given to create; changing or
 *               destroying the attr object afterwards affects nothing (also
 *               behaviourally: max-data-size still the old one); one attr
 *               object used for two creates
 *   nullattr    posix_trace_create(0, NULL, ...) uses the defaults
 *   badattr     create with an uninitialized / destroyed attr object,
 *               stream-full-policy FLUSH without log -> EINVAL
 */
#include "tcommon.h"

static void print_attr(const char *label, trace_id_t trid)
{
    trace_attr_t a;
    char buf[TRACE_NAME_MAX];
    struct timespec ts;
    size_t sz;
    int v;

    CHECK(posix_trace_attr_init(&a));
    SHOW("get_attr", posix_trace_get_attr(trid, &a));
    CHECK(posix_trace_attr_getname(&a, buf));
    printf("%s name=\"%s\"\n", label, buf);
    CHECK(posix_trace_attr_getgenversion(&a, buf));
    printf("%s genversion=\"%s\"\n", label, buf);
    CHECK(posix_trace_attr_getclockres(&a, &ts));
    printf("%s clockres=%ld.%09ld\n", label, (long)ts.tv_sec, ts.tv_nsec);
    CHECK(posix_trace_attr_getstreamsize(&a, &sz));
    printf("%s streamsize=%zu\n", label, sz);
    CHECK(posix_trace_attr_getmaxdatasize(&a, &sz));
    printf("%s maxdatasize=%zu\n", label, sz);
    CHECK(posix_trace_attr_getlogsize(&a, &sz));
    printf("%s logsize=%zu\n", label, sz);
    CHECK(posix_trace_attr_getstreamfullpolicy(&a, &v));
    printf("%s streamfullpolicy=%s\n", label, tc_policy_name(v));
    CHECK(posix_trace_attr_getlogfullpolicy(&a, &v));
    printf("%s logfullpolicy=%s\n", label, tc_policy_name(v));
    CHECK(posix_trace_attr_getinherited(&a, &v));
    printf("%s inherited=%s\n", label, tc_inherit_name(v));
    CHECK(posix_trace_attr_getmaxsystemeventsize(&a, &sz));
    printf("%s maxsystemeventsize=%zu\n", label, sz);
    CHECK(posix_trace_attr_getmaxusereventsize(&a, 10, &sz));
    printf("%s maxusereventsize(10)=%zu\n", label, sz);
    CHECK(posix_trace_attr_destroy(&a));
}

static void mode_createtime(void)
{
    trace_attr_t a;
    trace_id_t t1, t2;
    struct timespec ct, res;

    CHECK(posix_trace_attr_init(&a));
    for (int i = 0; i < 3; i++) {
        int64_t before = tc_now_ns();
        CHECK(posix_trace_create(0, &a, &t1));
        int64_t after = tc_now_ns();
        trace_attr_t got;
        CHECK(posix_trace_attr_init(&got));
        CHECK(posix_trace_get_attr(t1, &got));
        CHECK(posix_trace_attr_getcreatetime(&got, &ct));
        CHECK(posix_trace_attr_getclockres(&got, &res));
        printf("createtime before=%" PRId64 " ct=%" PRId64 " after=%" PRId64 "\n",
               before, tc_ts_ns(&ct), after);
        printf("createtime nsec_valid=%d\n", ct.tv_nsec >= 0 && ct.tv_nsec < 1000000000L);
        printf("clockres=%ld.%09ld\n", (long)res.tv_sec, res.tv_nsec);
        CHECK(posix_trace_attr_destroy(&got));
        /* a second read gives the same creation time */
        struct timespec ct2;
        CHECK(posix_trace_attr_init(&got));
        tc_sleep_ms(2);
        CHECK(posix_trace_get_attr(t1, &got));
        CHECK(posix_trace_attr_getcreatetime(&got, &ct2));
        printf("createtime stable=%d\n", tc_ts_ns(&ct) == tc_ts_ns(&ct2));
        CHECK(posix_trace_attr_destroy(&got));
        /* a stream created later has a later creation time */
        tc_sleep_ms(2);
        CHECK(posix_trace_create(0, &a, &t2));
        CHECK(posix_trace_attr_init(&got));
        CHECK(posix_trace_get_attr(t2, &got));
        CHECK(posix_trace_attr_getcreatetime(&got, &ct2));
        printf("createtime later=%d\n", tc_ts_ns(&ct2) > tc_ts_ns(&ct));
        CHECK(posix_trace_attr_destroy(&got));
        CHECK(posix_trace_shutdown(t1));
        CHECK(posix_trace_shutdown(t2));
    }
    CHECK(posix_trace_attr_destroy(&a));
}

static void mode_getattr(void)
{
    trace_attr_t a;
    trace_id_t trid, trid2;
    trace_event_id_t ev = tc_open("ev");

    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_setname(&a, "stream-one"));
    CHECK(posix_trace_attr_setstreamsize(&a, 65536));
    CHECK(posix_trace_attr_setmaxdatasize(&a, 1000));
    CHECK(posix_trace_attr_setlogsize(&a, 12345));
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL));
    CHECK(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND));
    CHECK(posix_trace_attr_setinherited(&a, POSIX_TRACE_CLOSE_FOR_CHILD));
    SHOW("create", posix_trace_create(0, &a, &trid));
    print_attr("stream", trid);

    /* The same attributes object serves a second create. */
    SHOW("create2", posix_trace_create(0, &a, &trid2));
    printf("distinct_trids=%d\n", trid != trid2);
    print_attr("stream2", trid2);
    CHECK(posix_trace_shutdown(trid2));

    /* Modifying, then destroying, the attributes object affects no stream. */
    CHECK(posix_trace_attr_setname(&a, "changed"));
    CHECK(posix_trace_attr_setstreamsize(&a, 2 << 20));
    CHECK(posix_trace_attr_setmaxdatasize(&a, 16));
    CHECK(posix_trace_attr_setlogsize(&a, 999));
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP));
    CHECK(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_LOOP));
    CHECK(posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED));
    print_attr("after_modify", trid);
    CHECK(posix_trace_attr_destroy(&a));
    print_attr("after_destroy", trid);

    /* Behaviour follows the stream's max-data-size (1000), not the 16 set later. */
    unsigned char data[100];
    for (int i = 0; i < 100; i++)
        data[i] = (unsigned char)i;
    CHECK(posix_trace_start(trid));
    posix_trace_event(ev, data, sizeof data);
    CHECK(posix_trace_stop(trid));
    static tc_event e;
    while (tc_try(trid, &e)) {
        if (e.info.posix_event_id == ev)
            printf("user event len=%zu trunc=%d data_ok=%d\n", e.len,
                   e.info.posix_truncation_status,
                   e.len == sizeof data && memcmp(e.data, data, sizeof data) == 0);
    }
    CHECK(posix_trace_shutdown(trid));
}

static void mode_nullattr(void)
{
    trace_id_t trid;
    SHOW("create NULL attr", posix_trace_create(0, NULL, &trid));
    print_attr("null", trid);
    tc_print_status("null", trid);
    CHECK(posix_trace_shutdown(trid));
}

static void mode_badattr(void)
{
    trace_attr_t a;
    trace_id_t trid;

    memset(&a, 0, sizeof a);
    SHOW("create zeroed attr", posix_trace_create(0, &a, &trid));
    memset(&a, 0xa5, sizeof a);
    SHOW("create garbage attr", posix_trace_create(0, &a, &trid));
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_destroy(&a));
    SHOW("create destroyed attr", posix_trace_create(0, &a, &trid));

    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH));
    SHOW("create FLUSH without log", posix_trace_create(0, &a, &trid));
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL));
    SHOW("create UNTIL_FULL", posix_trace_create(0, &a, &trid));
    CHECK(posix_trace_shutdown(trid));
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP));
    SHOW("create LOOP", posix_trace_create(0, &a, &trid));
    CHECK(posix_trace_shutdown(trid));
    CHECK(posix_trace_attr_destroy(&a));
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(30);
    if (argc != 2) {
        printf("usage: t002_attr_stream MODE\n");
        return 2;
    }
    if (!strcmp(argv[1], "createtime"))
        mode_createtime();
    else if (!strcmp(argv[1], "getattr"))
        mode_getattr();
    else if (!strcmp(argv[1], "nullattr"))
        mode_nullattr();
    else if (!strcmp(argv[1], "badattr"))
        mode_badattr();
    else {
        printf("unknown mode %s\n", argv[1]);
        return 2;
    }
    return 0;
}
