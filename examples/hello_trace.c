/*
 * hello_trace: a process that traces itself with the POSIX Trace API.
 *
 * It creates a trace stream for itself, records three user events of type
 * "hello/greeting", stops the stream, then reads back every event in it
 * (the system events START and STOP included) and prints one line per event:
 *
 *   <sec>.<nsec> pid <pid> <event name> len <n> "<data>"
 *
 * Build (installed library):  cc hello_trace.c $(pkg-config --cflags --libs posixtrace)
 */
#include <trace.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NEVENTS 3
/* Bytes of event data printed per event; longer data ends with "...". */
#define MAX_SHOWN 32

static int fail(const char *what, int err)
{
    fprintf(stderr, "hello_trace: %s: %s\n", what, strerror(err));
    return 1;
}

/* Print data as a C-like quoted string, escaping what is not printable. */
static void print_quoted(const unsigned char *data, size_t len)
{
    size_t shown = len < MAX_SHOWN ? len : MAX_SHOWN;

    putchar('"');
    for (size_t i = 0; i < shown; i++) {
        unsigned char c = data[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (isprint(c))
            putchar(c);
        else
            printf("\\x%02x", c);
    }
    putchar('"');
    if (shown < len)
        fputs("...", stdout);
}

int main(void)
{
    trace_attr_t attr;
    trace_id_t trid;
    trace_event_id_t greeting;
    int rc;

    if ((rc = posix_trace_attr_init(&attr)) != 0)
        return fail("posix_trace_attr_init", rc);
    if ((rc = posix_trace_attr_setname(&attr, "hello")) != 0)
        return fail("posix_trace_attr_setname", rc);
    /* pid 0: trace the calling process. */
    if ((rc = posix_trace_create(0, &attr, &trid)) != 0)
        return fail("posix_trace_create", rc);
    if ((rc = posix_trace_attr_destroy(&attr)) != 0)
        return fail("posix_trace_attr_destroy", rc);

    if ((rc = posix_trace_eventid_open("hello/greeting", &greeting)) != 0)
        return fail("posix_trace_eventid_open", rc);
    if ((rc = posix_trace_start(trid)) != 0)
        return fail("posix_trace_start", rc);

    for (int i = 0; i < NEVENTS; i++) {
        char msg[32];
        int n = snprintf(msg, sizeof msg, "event %d", i);
        posix_trace_event(greeting, msg, (size_t)n);
    }

    if ((rc = posix_trace_stop(trid)) != 0)
        return fail("posix_trace_stop", rc);

    /* Read back everything the stream holds. */
    for (;;) {
        struct posix_trace_event_info info;
        unsigned char data[1024];
        char name[TRACE_EVENT_NAME_MAX + 1];
        size_t len = 0;
        int unavailable = 0;

        rc = posix_trace_trygetnext_event(trid, &info, data, sizeof data,
                                          &len, &unavailable);
        if (rc != 0)
            return fail("posix_trace_trygetnext_event", rc);
        if (unavailable)
            break;

        if ((rc = posix_trace_eventid_get_name(trid, info.posix_event_id, name)) != 0)
            return fail("posix_trace_eventid_get_name", rc);

        printf("%lld.%09ld pid %ld %s len %zu ",
               (long long)info.posix_timestamp.tv_sec,
               (long)info.posix_timestamp.tv_nsec,
               (long)info.posix_pid, name, len);
        print_quoted(data, len);
        if (info.posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED)
            fputs(" (truncated)", stdout);
        putchar('\n');
    }

    if ((rc = posix_trace_shutdown(trid)) != 0)
        return fail("posix_trace_shutdown", rc);
    if (fflush(stdout) != 0)
        return fail("writing standard output", errno);
    return 0;
}
