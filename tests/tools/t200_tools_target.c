/*
 * t200_tools_target: a program for posixtrace-run and posixtrace-dump to
 * trace (tests/tools/test_tools*.py). It is linked with libposixtrace and records
 * user events itself, so it is traced even without the shim.
 *
 *   user N       records N "tools/tick" events (data: int i) and one
 *                "tools/text" (data: "hello, trace"), prints "done N"
 *   exit CODE    exits with CODE after one "tools/tick"
 *   raise SIG    records one "tools/tick", then raises SIG (default action)
 *   forks K N    K children each record N "tools/child" events (data: int k);
 *                the parent waits for them, records "tools/parent", prints
 *                "children K"
 *   sigwait      prints "ready"; waits (30 s at most) for SIGTERM/SIGINT,
 *                records "tools/signal" (data: int signo), exits 3
 *   loop         prints its pid and "ready"; records "tools/tick" every
 *                10 ms (data: int i) for 30 s at most, or until SIGTERM,
 *                printing "tick i" after each
 *   bytes N      writes N deterministic bytes (every byte value) to stdout
 *                in odd-sized chunks, records "tools/tick" per chunk
 */
#include "tcommon.h"

#include <sys/wait.h>

static volatile sig_atomic_t got;

static void on_signal(int sig)
{
    got = sig;
}

static trace_event_id_t ev(const char *name)
{
    trace_event_id_t id;
    CHECK(posix_trace_eventid_open(name, &id));
    return id;
}

static int do_user(int n)
{
    trace_event_id_t tick = ev("tools/tick"), text = ev("tools/text");
    for (int i = 0; i < n; i++)
        posix_trace_event(tick, &i, sizeof i);
    posix_trace_event(text, "hello, trace", 12);
    printf("done %d\n", n);
    return 0;
}

static int do_forks(int k, int n)
{
    trace_event_id_t child = ev("tools/child"), parent = ev("tools/parent");
    for (int c = 0; c < k; c++) {
        pid_t p = fork();
        if (p == 0) {
            for (int i = 0; i < n; i++)
                posix_trace_event(child, &c, sizeof c);
            _exit(0);
        }
        TC_ASSERT(p > 0);
    }
    for (int c = 0; c < k; c++)
        TC_ASSERT(wait(NULL) > 0);
    posix_trace_event(parent, &k, sizeof k);
    printf("children %d\n", k);
    return 0;
}

static int do_sigwait(void)
{
    trace_event_id_t sig = ev("tools/signal");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < 3000 && !got; i++)
        tc_sleep_ms(10);
    int s = got;
    posix_trace_event(sig, &s, sizeof s);
    return got ? 3 : 4;
}

static int do_loop(void)
{
    trace_event_id_t tick = ev("tools/tick");
    signal(SIGTERM, on_signal);
    printf("pid %ld\nready\n", (long)getpid());
    fflush(stdout);
    for (int i = 0; i < 3000 && !got; i++) {
        posix_trace_event(tick, &i, sizeof i);
        printf("tick %d\n", i);
        tc_sleep_ms(10);
    }
    return 0;
}

static int do_bytes(long n)
{
    trace_event_id_t tick = ev("tools/tick");
    unsigned char buf[777];
    long done = 0;
    while (done < n) {
        size_t c = (size_t)(n - done < (long)sizeof buf ? n - done : (long)sizeof buf);
        for (size_t j = 0; j < c; j++)
            buf[j] = (unsigned char)((done + (long)j) * 7 + 3);
        TC_ASSERT(fwrite(buf, 1, c, stdout) == c);
        posix_trace_event(tick, &done, sizeof done);
        done += (long)c;
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3 && strcmp(argv[1], "user") == 0)
        return do_user(atoi(argv[2]));
    if (argc >= 3 && strcmp(argv[1], "exit") == 0) {
        int i = 0;
        posix_trace_event(ev("tools/tick"), &i, sizeof i);
        return atoi(argv[2]);
    }
    if (argc >= 3 && strcmp(argv[1], "raise") == 0) {
        int i = 0;
        posix_trace_event(ev("tools/tick"), &i, sizeof i);
        signal(atoi(argv[2]), SIG_DFL);
        raise(atoi(argv[2]));
        return 99;
    }
    if (argc >= 4 && strcmp(argv[1], "forks") == 0)
        return do_forks(atoi(argv[2]), atoi(argv[3]));
    if (argc >= 2 && strcmp(argv[1], "sigwait") == 0)
        return do_sigwait();
    if (argc >= 2 && strcmp(argv[1], "loop") == 0)
        return do_loop();
    if (argc >= 3 && strcmp(argv[1], "bytes") == 0)
        return do_bytes(atol(argv[2]));
    fprintf(stderr, "usage: t200_tools_target user N | exit CODE | raise SIG | forks K N | "
                    "sigwait | loop | bytes N\n");
    return 2;
}
