/*
 * t204_inflight: threads blocked in calls when the trace ends (issue 18),
 * for tests/tools/test_inflight.py, under the shim. Prints on stdout
 *   "listen FD", "child PID", "ready"
 * once every call below has been started (give them a moment to block):
 *   thread A: accept(FD) on a listening socket nobody connects to
 *   thread B: waitpid(PID, &st, 0) on a child that sleeps
 *   main:     read(0, ...) on its standard input (the test keeps it open)
 *   thread C: close(-1) (returns EBADF), then pause() (not a call the shim
 *             records: its cell must show nothing in flight)
 * and also, before that, one read(0) that returns (the test writes "go\n"
 * first) and a nanosleep that returns: calls that return, never unfinished.
 * It ends by itself: an alarm after SECONDS (argv[1], default 4) exits 0
 * (the child, killed, first), so nothing outlives a test.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int lfd = -1;
static pid_t child = -1;

static void on_alarm(int sig)
{
    (void)sig;
    if (child > 0)
        kill(child, SIGKILL);
    _exit(0);
}

static void *acceptor(void *arg)
{
    (void)arg;
    int c = accept(lfd, NULL, NULL);
    fprintf(stderr, "t204: accept returned %d\n", c);
    return NULL;
}

static void *idler(void *arg)
{
    (void)arg;
    if (close(-1) == 0)
        return NULL;
    pause();
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    int st;
    pid_t r = waitpid(child, &st, 0);
    fprintf(stderr, "t204: waitpid returned %d\n", (int)r);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned secs = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
    signal(SIGALRM, on_alarm);
    alarm(secs);
    char buf[64];
    if (read(0, buf, sizeof buf) <= 0) /* returns: "go\n" */
        return 1;
    struct timespec ts = { 0, 1000000 };
    nanosleep(&ts, NULL);
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 1) != 0)
        return 1;
    child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        sleep(secs + 5); /* killed first */
        _exit(0);
    }
    printf("listen %d\nchild %d\n", lfd, (int)child);
    fflush(stdout);
    pthread_t ta, tb, tc;
    if (pthread_create(&ta, NULL, acceptor, NULL) != 0 ||
        pthread_create(&tb, NULL, waiter, NULL) != 0 ||
        pthread_create(&tc, NULL, idler, NULL) != 0)
        return 1;
    printf("ready\n");
    fflush(stdout);
    ssize_t n = read(0, buf, sizeof buf); /* blocks: the test writes nothing more */
    fprintf(stderr, "t204: read returned %zd\n", n);
    return 0;
}
