/*
 * t131_sudapi: a program that uses the trace API itself, run under
 * posixtrace-run --syscalls (tests/shim/test_syscalls.py): the system calls
 * libposixtrace makes for it (creating a stream with a log, its flusher
 * thread, recording, reading, flushing, shutting down: memfd, mmap, futex,
 * the log's writes) are the trace system's and must not be recorded; the
 * program's own getppid before and after are.
 *
 *   t131_sudapi LOG   prints "api N" (N events read back: 40000) and exits 0
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <trace.h>
#include <unistd.h>

static int fail(const char *what, int rc)
{
    fprintf(stderr, "t131: %s: %s\n", what, strerror(rc));
    return 1;
}

/* Records 20000 user events of type ev in the stream: a FLUSH
 * stream of 1 MiB, so posix_trace_event itself wakes the flusher (futex) many times
 * (the one entry point without a gate: preload/sud/gate.S). */
static void *recorder(void *p)
{
    trace_event_id_t ev = *(trace_event_id_t *)p;
    for (int i = 0; i < 20000; i++)
        posix_trace_event(ev, &i, sizeof i);
    return NULL;
}

int main(int argc, char **argv)
{
    trace_attr_t a;
    trace_id_t trid;
    trace_event_id_t ev;
    int rc, logfd;
    if (argc < 2)
        return 2;
    syscall(SYS_getppid); /* the program's own: recorded */
    logfd = creat(argv[1], 0600);
    posix_trace_attr_init(&a);
    posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH);
    posix_trace_attr_setstreamsize(&a, 1 << 20);
    if ((rc = posix_trace_create_withlog(0, &a, logfd, &trid)) != 0)
        return fail("posix_trace_create_withlog", rc);
    if ((rc = posix_trace_eventid_open("t131/tick", &ev)) != 0 ||
        (rc = posix_trace_start(trid)) != 0)
        return fail("start", rc);
    pthread_t t;
    if (pthread_create(&t, NULL, recorder, &ev) != 0) /* the program's thread: armed */
        return 1;
    pthread_join(t, NULL);
    recorder(&ev);
    if ((rc = posix_trace_flush(trid)) != 0)
        return fail("posix_trace_flush", rc);
    posix_trace_stop(trid);
    posix_trace_shutdown(trid);
    syscall(SYS_getppid);

    trace_id_t rd;
    if ((rc = posix_trace_open(open(argv[1], 0), &rd)) != 0)
        return fail("posix_trace_open", rc);
    struct posix_trace_event_info info;
    char data[64];
    size_t len;
    int unavailable = 0, n = 0;
    while (posix_trace_getnext_event(rd, &info, data, sizeof data, &len, &unavailable) == 0 &&
           !unavailable)
        n += info.posix_event_id == ev;
    posix_trace_close(rd);
    syscall(SYS_getppid);
    printf("api %d\n", n);
    return 0;
}
