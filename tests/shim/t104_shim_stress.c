/*
 * t104_shim_stress - under the shim, with a reader thread draining a stream
 * of the process (POSIX_TRACE_INHERITED) while the load runs:
 *   threads <nthreads> <iters> [stream MiB]   each thread open/write/close iters times,
 *                                SIGUSR1 sent to them all the while (the
 *                                handler writes to /dev/null)
 *   forks <n>                    n short children (open/close, _exit)
 * Prints "open=.. write=.. close=.. exit=.. fork=.. sigwrites=.. handled=..
 * overflow=.. threads_handled=.." counted by the reader (handled: the handler's
 * successful writes; threads_handled: the workers that handled at least one
 * SIGUSR1, each waits for one after its loop), then "end".
 */
#include "tcommon.h"

#include <fcntl.h>
#include <posixtrace/events.h>
#include <stdatomic.h>
#include <sys/wait.h>

static trace_id_t trid;
static atomic_int stop_reader, stop_signals, handled;
static long count[256], overflow;
static int devnull;

static void *reader(void *arg)
{
    (void)arg;
    static unsigned char data[2048];
    for (;;) {
        struct posix_trace_event_info ev;
        size_t len;
        int unavailable;
        struct timespec dl = tc_ns_ts(tc_now_ns() + 20 * 1000 * 1000);
        int rc = posix_trace_timedgetnext_event(trid, &ev, data, sizeof data, &len,
                                                &unavailable, &dl);
        if (rc == 0 && !unavailable) {
            if (ev.posix_event_id < 256)
                count[ev.posix_event_id]++;
            if (ev.posix_event_id == POSIX_TRACE_OVERFLOW)
                overflow++;
            if (ev.posix_event_id == POSIXTRACE_EV_WRITE) {
                int64_t fd;
                memcpy(&fd, data + 32, 8);
                if (fd == devnull)
                    count[0]++; /* the handler's writes */
            }
            continue;
        }
        if (atomic_load(&stop_reader))
            break;
    }
    return NULL;
}

static _Thread_local volatile sig_atomic_t handled_here; /* by this thread */
static atomic_int threads_handled; /* workers that handled at least one SIGUSR1 */

static void on_usr1(int sig)
{
    (void)sig;
    if (write(devnull, "h", 1) == 1) {
        atomic_fetch_add(&handled, 1);
        handled_here = 1;
    }
}

static long iters;
static char dir[512];
static atomic_int workers_done;

static void *worker(void *arg)
{
    char path[600];
    snprintf(path, sizeof path, "%s/w%ld", dir, (long)(intptr_t)arg);
    for (long i = 0; i < iters; i++) {
        int fd = open(path, O_WRONLY | O_CREAT, 0600);
        TC_ASSERT(fd >= 0);
        TC_ASSERT(write(fd, "0123456789abcdef", 16) == 16);
        TC_ASSERT(close(fd) == 0);
    }
    /* a signal handled by every worker (bounded by the watchdog): on a fast
     * machine the loop may end before the first one came */
    while (!handled_here)
        tc_sleep_ms(1);
    atomic_fetch_add(&threads_handled, 1);
    atomic_fetch_add(&workers_done, 1);
    return NULL;
}

static pthread_t workers[64];
static int nworkers;

static void *signaller(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_signals)) {
        for (int i = 0; i < nworkers; i++)
            pthread_kill(workers[i], SIGUSR1);
        tc_sleep_ms(1);
    }
    return NULL;
}

static void run_threads(int n)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    nworkers = n;
    for (int i = 0; i < n; i++)
        TC_ASSERT(pthread_create(&workers[i], NULL, worker, (void *)(intptr_t)i) == 0);
    pthread_t s;
    TC_ASSERT(pthread_create(&s, NULL, signaller, NULL) == 0);
    /* signals go to threads not yet joined only */
    while (atomic_load(&workers_done) < n)
        tc_sleep_ms(5);
    atomic_store(&stop_signals, 1);
    pthread_join(s, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(workers[i], NULL);
}

static void run_forks(int n)
{
    char path[600];
    snprintf(path, sizeof path, "%s/f", dir);
    for (int i = 0; i < n; i++) {
        pid_t c = fork();
        TC_ASSERT(c >= 0);
        if (c == 0) {
            close(open(path, O_WRONLY | O_CREAT, 0600));
            _exit(0);
        }
    }
    for (int i = 0; i < n; i++)
        TC_ASSERT(wait(NULL) > 0);
}

int main(int argc, char **argv)
{
    tc_init();
    if (argc < 4)
        return 2;
    tc_watchdog(300);
    snprintf(dir, sizeof dir, "%s", argv[2]);
    devnull = open("/dev/null", O_WRONLY);
    trace_attr_t attr;
    CHECK(posix_trace_attr_init(&attr));
    CHECK(posix_trace_attr_setstreamsize(&attr, (size_t)(argc > 5 ? atoi(argv[5]) : 64) << 20));
    CHECK(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
    CHECK(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL));
    CHECK(posix_trace_create(0, &attr, &trid));
    trace_event_set_t set; /* only the calls under test: the rest of the shim's events out */
    posix_trace_eventset_fill(&set, POSIX_TRACE_ALL_EVENTS);
    posix_trace_eventset_del(POSIXTRACE_EV_OPEN, &set);
    posix_trace_eventset_del(POSIXTRACE_EV_WRITE, &set);
    posix_trace_eventset_del(POSIXTRACE_EV_CLOSE, &set);
    posix_trace_eventset_del(POSIXTRACE_EV_EXIT, &set);
    posix_trace_eventset_del(POSIXTRACE_EV_FORK, &set);
    CHECK(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET));
    CHECK(posix_trace_start(trid));
    pthread_t r;
    TC_ASSERT(pthread_create(&r, NULL, reader, NULL) == 0);
    if (strcmp(argv[1], "threads") == 0) {
        iters = atol(argv[4]);
        run_threads(atoi(argv[3]));
    } else {
        run_forks(atoi(argv[3]));
    }
    CHECK(posix_trace_stop(trid));
    atomic_store(&stop_reader, 1);
    pthread_join(r, NULL);
    printf("open=%ld write=%ld close=%ld exit=%ld fork=%ld sigwrites=%ld handled=%d overflow=%ld "
           "threads_handled=%d\n",
           count[POSIXTRACE_EV_OPEN], count[POSIXTRACE_EV_WRITE], count[POSIXTRACE_EV_CLOSE],
           count[POSIXTRACE_EV_EXIT], count[POSIXTRACE_EV_FORK], count[0],
           atomic_load(&handled), overflow, atomic_load(&threads_handled));
    printf("end\n");
    CHECK(posix_trace_shutdown(trid));
    return 0;
}
