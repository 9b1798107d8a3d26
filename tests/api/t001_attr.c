/*
 * t001_attr: the trace attributes object on its own (no stream).
 *
 * Modes (argv[1]):
 *   defaults   every attribute of a freshly initialized object
 *   setget     every setter/getter round trip, accepted bounds, EINVAL bounds
 *   name       posix_trace_attr_setname truncation to TRACE_NAME_MAX-1
 *   invalid    NULL / zeroed / garbage / destroyed objects -> EINVAL everywhere
 *   sizes      getmaxusereventsize / getmaxsystemeventsize for several
 *              max-data-size values (the pytest file holds the formula)
 */
#include "tcommon.h"

#include <limits.h>

static void print_all(const char *label, const trace_attr_t *a)
{
    char buf[TRACE_NAME_MAX];
    struct timespec ts;
    size_t sz;
    int v;

    memset(buf, 'x', sizeof buf);
    buf[sizeof buf - 1] = 0;
    CHECK(posix_trace_attr_getname(a, buf));
    printf("%s name=\"%s\"\n", label, buf);
    memset(buf, 'x', sizeof buf);
    buf[sizeof buf - 1] = 0;
    CHECK(posix_trace_attr_getgenversion(a, buf));
    printf("%s genversion=\"%s\"\n", label, buf);
    CHECK(posix_trace_attr_getclockres(a, &ts));
    printf("%s clockres=%ld.%09ld\n", label, (long)ts.tv_sec, ts.tv_nsec);
    CHECK(posix_trace_attr_getstreamsize(a, &sz));
    printf("%s streamsize=%zu\n", label, sz);
    CHECK(posix_trace_attr_getmaxdatasize(a, &sz));
    printf("%s maxdatasize=%zu\n", label, sz);
    CHECK(posix_trace_attr_getlogsize(a, &sz));
    printf("%s logsize=%zu\n", label, sz);
    CHECK(posix_trace_attr_getstreamfullpolicy(a, &v));
    printf("%s streamfullpolicy=%s\n", label, tc_policy_name(v));
    CHECK(posix_trace_attr_getlogfullpolicy(a, &v));
    printf("%s logfullpolicy=%s\n", label, tc_policy_name(v));
    CHECK(posix_trace_attr_getinherited(a, &v));
    printf("%s inherited=%s\n", label, tc_inherit_name(v));
}

static void mode_defaults(void)
{
    trace_attr_t a;
    struct timespec res, clk;

    memset(&a, 0xa5, sizeof a);   /* init must not depend on prior contents */
    SHOW("init", posix_trace_attr_init(&a));
    print_all("default", &a);
    CHECK(posix_trace_attr_getclockres(&a, &res));
    CHECK(clock_getres(CLOCK_REALTIME, &clk));
    printf("clockres_equals_clock_getres_realtime=%d\n",
           res.tv_sec == clk.tv_sec && res.tv_nsec == clk.tv_nsec);
    SHOW("destroy", posix_trace_attr_destroy(&a));
    /* A destroyed object can be reinitialized. */
    SHOW("reinit", posix_trace_attr_init(&a));
    print_all("reinit", &a);
    SHOW("destroy", posix_trace_attr_destroy(&a));
}

static void try_size(trace_attr_t *a, const char *what,
                     int (*set)(trace_attr_t *, size_t),
                     int (*get)(const trace_attr_t *restrict, size_t *restrict),
                     size_t v)
{
    int rc = set(a, v);
    size_t now = 0;
    CHECK(get(a, &now));
    printf("%s %zu rc=%s now=%zu\n", what, v, tc_errname(rc), now);
}

static void try_int(trace_attr_t *a, const char *what,
                    int (*set)(trace_attr_t *, int),
                    int (*get)(const trace_attr_t *restrict, int *restrict),
                    int v, const char *(*nm)(int))
{
    int rc = set(a, v);
    int now = 0;
    CHECK(get(a, &now));
    printf("%s %d rc=%s now=%s\n", what, v, tc_errname(rc), nm(now));
}

static void mode_setget(void)
{
    trace_attr_t a;
    CHECK(posix_trace_attr_init(&a));

    /* stream-min-size: 1 .. 1 GiB (doc/semantics.md) */
    try_size(&a, "setstreamsize", posix_trace_attr_setstreamsize,
             posix_trace_attr_getstreamsize, 65536);
    try_size(&a, "setstreamsize", posix_trace_attr_setstreamsize,
             posix_trace_attr_getstreamsize, 0);
    try_size(&a, "setstreamsize", posix_trace_attr_setstreamsize,
             posix_trace_attr_getstreamsize, 1);
    try_size(&a, "setstreamsize", posix_trace_attr_setstreamsize,
             posix_trace_attr_getstreamsize, (size_t)1 << 30);
    try_size(&a, "setstreamsize", posix_trace_attr_setstreamsize,
             posix_trace_attr_getstreamsize, ((size_t)1 << 30) + 1);
    try_size(&a, "setstreamsize", posix_trace_attr_setstreamsize,
             posix_trace_attr_getstreamsize, SIZE_MAX);

    /* max-data-size: 0 .. 65536 */
    try_size(&a, "setmaxdatasize", posix_trace_attr_setmaxdatasize,
             posix_trace_attr_getmaxdatasize, 1000);
    try_size(&a, "setmaxdatasize", posix_trace_attr_setmaxdatasize,
             posix_trace_attr_getmaxdatasize, 0);
    try_size(&a, "setmaxdatasize", posix_trace_attr_setmaxdatasize,
             posix_trace_attr_getmaxdatasize, 65536);
    try_size(&a, "setmaxdatasize", posix_trace_attr_setmaxdatasize,
             posix_trace_attr_getmaxdatasize, 65537);
    try_size(&a, "setmaxdatasize", posix_trace_attr_setmaxdatasize,
             posix_trace_attr_getmaxdatasize, SIZE_MAX);

    /* log-max-size: 1 .. SIZE_MAX */
    try_size(&a, "setlogsize", posix_trace_attr_setlogsize,
             posix_trace_attr_getlogsize, 12345);
    try_size(&a, "setlogsize", posix_trace_attr_setlogsize,
             posix_trace_attr_getlogsize, 1);
    try_size(&a, "setlogsize", posix_trace_attr_setlogsize,
             posix_trace_attr_getlogsize, SIZE_MAX);
    try_size(&a, "setlogsize", posix_trace_attr_setlogsize,
             posix_trace_attr_getlogsize, 0);

    /* stream-full-policy: LOOP, UNTIL_FULL, FLUSH */
    static const int sp[] = { POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_FLUSH, POSIX_TRACE_LOOP,
                              POSIX_TRACE_APPEND, 0, 5, -1 };
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
        try_int(&a, "setstreamfullpolicy", posix_trace_attr_setstreamfullpolicy,
                posix_trace_attr_getstreamfullpolicy, sp[i], tc_policy_name);

    /* log-full-policy: LOOP, UNTIL_FULL, APPEND */
    static const int lp[] = { POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND, POSIX_TRACE_LOOP,
                              POSIX_TRACE_FLUSH, 0, 5, -1 };
    for (size_t i = 0; i < sizeof lp / sizeof lp[0]; i++)
        try_int(&a, "setlogfullpolicy", posix_trace_attr_setlogfullpolicy,
                posix_trace_attr_getlogfullpolicy, lp[i], tc_policy_name);

    /* inheritance: CLOSE_FOR_CHILD, INHERITED */
    static const int ip[] = { POSIX_TRACE_INHERITED, POSIX_TRACE_CLOSE_FOR_CHILD, 0, 3, -1 };
    for (size_t i = 0; i < sizeof ip / sizeof ip[0]; i++)
        try_int(&a, "setinherited", posix_trace_attr_setinherited,
                posix_trace_attr_getinherited, ip[i], tc_inherit_name);

    /* Setting one attribute leaves the others alone. */
    print_all("final", &a);
    CHECK(posix_trace_attr_destroy(&a));
}

static void mode_name(void)
{
    trace_attr_t a;
    char name[1024];
    char got[TRACE_NAME_MAX + 16];
    static const size_t lens[] = { 0, 1, 8, 254, 255, 256, 257, 300, 1000 };

    CHECK(posix_trace_attr_init(&a));
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        size_t n = lens[k];
        for (size_t i = 0; i < n; i++)
            name[i] = (char)('a' + (i * 7 + k) % 26);
        name[n] = 0;
        int rc = posix_trace_attr_setname(&a, name);
        /* canary after the TRACE_NAME_MAX bytes the page allows */
        memset(got, '#', sizeof got);
        CHECK(posix_trace_attr_getname(&a, got));
        size_t gl = strnlen(got, TRACE_NAME_MAX);
        int canary = 1;
        for (size_t i = TRACE_NAME_MAX; i < sizeof got; i++)
            if (got[i] != '#')
                canary = 0;
        printf("setname len=%zu rc=%s got_len=%zu prefix_ok=%d canary_ok=%d\n", n,
               tc_errname(rc), gl, gl < TRACE_NAME_MAX && memcmp(got, name, gl) == 0,
               canary);
    }
    CHECK(posix_trace_attr_setname(&a, "hello world"));
    CHECK(posix_trace_attr_getname(&a, got));
    printf("name=\"%s\"\n", got);
    CHECK(posix_trace_attr_destroy(&a));
}

/* Calls every attr function on a; prints "<label> <function> rc=..." */
static void call_all(const char *label, trace_attr_t *a)
{
    char buf[TRACE_NAME_MAX];
    struct timespec ts;
    size_t sz;
    int v;
#define ONE(fn, ...) printf("%s %s rc=%s\n", label, #fn, tc_errname(fn(__VA_ARGS__)))
    ONE(posix_trace_attr_getclockres, a, &ts);
    ONE(posix_trace_attr_getcreatetime, a, &ts);
    ONE(posix_trace_attr_getgenversion, a, buf);
    ONE(posix_trace_attr_getname, a, buf);
    ONE(posix_trace_attr_setname, a, "x");
    ONE(posix_trace_attr_getinherited, a, &v);
    ONE(posix_trace_attr_setinherited, a, POSIX_TRACE_CLOSE_FOR_CHILD);
    ONE(posix_trace_attr_getlogfullpolicy, a, &v);
    ONE(posix_trace_attr_setlogfullpolicy, a, POSIX_TRACE_LOOP);
    ONE(posix_trace_attr_getstreamfullpolicy, a, &v);
    ONE(posix_trace_attr_setstreamfullpolicy, a, POSIX_TRACE_LOOP);
    ONE(posix_trace_attr_getlogsize, a, &sz);
    ONE(posix_trace_attr_setlogsize, a, 4096);
    ONE(posix_trace_attr_getmaxdatasize, a, &sz);
    ONE(posix_trace_attr_setmaxdatasize, a, 16);
    ONE(posix_trace_attr_getmaxsystemeventsize, a, &sz);
    ONE(posix_trace_attr_getmaxusereventsize, a, 16, &sz);
    ONE(posix_trace_attr_getstreamsize, a, &sz);
    ONE(posix_trace_attr_setstreamsize, a, 65536);
    ONE(posix_trace_attr_destroy, a);
#undef ONE
}

static void mode_invalid(void)
{
    trace_attr_t a;

    SHOW("NULL posix_trace_attr_init", posix_trace_attr_init(NULL));
    call_all("NULL", NULL);

    memset(&a, 0, sizeof a);
    call_all("zeroed", &a);

    memset(&a, 0xa5, sizeof a);
    call_all("garbage", &a);

    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_destroy(&a));
    call_all("destroyed", &a);

    /* and a reinitialized one works again */
    SHOW("reinit", posix_trace_attr_init(&a));
    size_t sz = 0;
    SHOW("reinit getstreamsize", posix_trace_attr_getstreamsize(&a, &sz));
    printf("reinit streamsize=%zu\n", sz);
    SHOW("reinit destroy", posix_trace_attr_destroy(&a));
}

static void mode_sizes(void)
{
    static const size_t maxdata[] = { 256, 0, 1, 100, 65536 };
    static const size_t lens[] = { 0, 1, 7, 8, 9, 15, 16, 17, 99, 100, 101,
                                   255, 256, 257, 1000, 65535, 65536, 65537, 1u << 20 };
    for (size_t m = 0; m < sizeof maxdata / sizeof maxdata[0]; m++) {
        trace_attr_t a;
        size_t sz = 0;
        CHECK(posix_trace_attr_init(&a));
        if (maxdata[m] != 256)
            CHECK(posix_trace_attr_setmaxdatasize(&a, maxdata[m]));
        CHECK(posix_trace_attr_getmaxsystemeventsize(&a, &sz));
        printf("maxdata=%zu system=%zu\n", maxdata[m], sz);
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            CHECK(posix_trace_attr_getmaxusereventsize(&a, lens[i], &sz));
            printf("maxdata=%zu n=%zu user=%zu\n", maxdata[m], lens[i], sz);
        }
        CHECK(posix_trace_attr_destroy(&a));
    }
}

int main(int argc, char **argv)
{
    tc_init();
    if (argc != 2) {
        printf("usage: t001_attr MODE\n");
        return 2;
    }
    if (!strcmp(argv[1], "defaults"))
        mode_defaults();
    else if (!strcmp(argv[1], "setget"))
        mode_setget();
    else if (!strcmp(argv[1], "name"))
        mode_name();
    else if (!strcmp(argv[1], "invalid"))
        mode_invalid();
    else if (!strcmp(argv[1], "sizes"))
        mode_sizes();
    else {
        printf("unknown mode %s\n", argv[1]);
        return 2;
    }
    return 0;
}
