/*
 * t042_log_write: a scripted writer of a trace log (Trace Log option).
 *
 *   t042_log_write PATH [option=value ...] STEP ...
 *
 * Creates a stream with posix_trace_create_withlog() on PATH (opened O_RDWR |
 * O_CREAT | O_TRUNC unless open=... says otherwise), then runs the steps in
 * order and prints one line per step.  The log is read back by t048_log_dump.
 *
 * Options (before the first step):
 *   stream=LOOP|UNTIL_FULL|FLUSH   stream-full-policy (default: not set)
 *   log=LOOP|UNTIL_FULL|APPEND     log-full-policy (default: not set = LOOP)
 *   ssize=N  maxdata=N  lsize=N    stream-min-size, max-data-size, log-max-size
 *   name=S                         trace name
 *   inherit=1                      POSIX_TRACE_INHERITED
 *   open=append                    open the file with O_APPEND too
 *   watchdog=SEC                   (default 60)
 *
 * Steps:
 *   start | stop | flush | clear | shutdown    the call; prints "<step> rc=.."
 *   status                   prints every field of posix_trace_get_status
 *   e:N                      records N events "seq" (16 bytes: a sequence
 *                            number s then s * K), prints "recorded from=A n=N"
 *   ef:N:K                   records N events "seq", posix_trace_flush after each K
 *                            (prints "recorded ..." and "flushes n= bad=")
 *   paced:N:NS               records N events "seq", one every NS ns at most (busy wait)
 *   w:MS                     sleeps MS ms
 *   running:MS               waits (at most MS ms) for the stream to be RUNNING
 *                            (polling posix_trace_get_status, which resets the
 *                            overrun and flush-error fields); "running yes|TIMEOUT"
 *   fsize:N                  setrlimit(RLIMIT_FSIZE, N), SIGXFSZ ignored
 *   size                     prints the file size
 *   attr                     prints posix_trace_get_attr of the active stream
 *   loop:K:US                forever: K events, posix_trace_flush, sleep US microseconds
 *                            (to be killed); prints "flushed n=F" once flush F has
 *                            returned, for F <= 10 and every 100th
 *   exit                     returns from main now, without shutdown
 *   exec                     execs /bin/true now, without shutdown
 * At the end (no "exit" step), prints "done".
 */
#include "tcommon.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define SEQ_K 0x9E3779B97F4A7C15ULL

static trace_id_t trid;
static trace_event_id_t ev_seq;
static uint64_t seq;
static const char *path;

static int policy_of(const char *s)
{
    if (strcmp(s, "LOOP") == 0)
        return POSIX_TRACE_LOOP;
    if (strcmp(s, "UNTIL_FULL") == 0)
        return POSIX_TRACE_UNTIL_FULL;
    if (strcmp(s, "FLUSH") == 0)
        return POSIX_TRACE_FLUSH;
    if (strcmp(s, "APPEND") == 0)
        return POSIX_TRACE_APPEND;
    printf("bad policy %s\n", s);
    exit(2);
}

static void print_full_status(const char *label)
{
    tc_print_full_status(label, trid);
}

static void record(uint64_t n)
{
    uint64_t d[2];
    for (uint64_t i = 0; i < n; i++, seq++) {
        d[0] = seq;
        d[1] = seq * SEQ_K;
        posix_trace_event(ev_seq, d, sizeof d);
    }
}

static void print_size(void)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        printf("size error\n");
        return;
    }
    printf("size bytes=%lld\n", (long long)sb.st_size);
}

static void print_attr(void)
{
    trace_attr_t a;
    char name[TRACE_NAME_MAX];
    size_t ss = 0, md = 0, ls = 0;
    int sp = 0, lp = 0, inh = 0;
    struct timespec ct;
    CHECK(posix_trace_get_attr(trid, &a));
    CHECK(posix_trace_attr_getname(&a, name));
    CHECK(posix_trace_attr_getstreamsize(&a, &ss));
    CHECK(posix_trace_attr_getmaxdatasize(&a, &md));
    CHECK(posix_trace_attr_getlogsize(&a, &ls));
    CHECK(posix_trace_attr_getstreamfullpolicy(&a, &sp));
    CHECK(posix_trace_attr_getlogfullpolicy(&a, &lp));
    CHECK(posix_trace_attr_getinherited(&a, &inh));
    CHECK(posix_trace_attr_getcreatetime(&a, &ct));
    printf("attr name=\"%s\" ssize=%zu maxdata=%zu lsize=%zu stream=%s log=%s inherit=%s "
           "create=%" PRId64 "\n", name, ss, md, ls, tc_policy_name(sp), tc_policy_name(lp),
           tc_inherit_name(inh), tc_ts_ns(&ct));
    CHECK(posix_trace_attr_destroy(&a));
}

int main(int argc, char **argv)
{
    trace_attr_t a;
    int argi = 2, oflags = O_RDWR | O_CREAT | O_TRUNC;
    unsigned wd = 60;
    tc_init();
    if (argc < 2) {
        printf("usage: t042_log_write PATH [opt=val ...] STEP ...\n");
        return 2;
    }
    path = argv[1];
    CHECK(posix_trace_attr_init(&a));
    for (; argi < argc && strchr(argv[argi], '=') != NULL; argi++) {
        const char *o = argv[argi], *v = strchr(o, '=') + 1;
        if (strncmp(o, "stream=", 7) == 0)
            CHECK(posix_trace_attr_setstreamfullpolicy(&a, policy_of(v)));
        else if (strncmp(o, "log=", 4) == 0)
            CHECK(posix_trace_attr_setlogfullpolicy(&a, policy_of(v)));
        else if (strncmp(o, "ssize=", 6) == 0)
            CHECK(posix_trace_attr_setstreamsize(&a, strtoull(v, NULL, 0)));
        else if (strncmp(o, "maxdata=", 8) == 0)
            CHECK(posix_trace_attr_setmaxdatasize(&a, strtoull(v, NULL, 0)));
        else if (strncmp(o, "lsize=", 6) == 0)
            CHECK(posix_trace_attr_setlogsize(&a, strtoull(v, NULL, 0)));
        else if (strncmp(o, "name=", 5) == 0)
            CHECK(posix_trace_attr_setname(&a, v));
        else if (strncmp(o, "inherit=", 8) == 0)
            CHECK(posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED));
        else if (strncmp(o, "open=", 5) == 0)
            oflags |= O_APPEND;
        else if (strncmp(o, "watchdog=", 9) == 0)
            wd = (unsigned)atoi(v);
        else {
            printf("bad option %s\n", o);
            return 2;
        }
    }
    tc_watchdog(wd);
    printf("pid=%ld main_tid=%lu\n", (long)getpid(), (unsigned long)pthread_self());
    ev_seq = tc_open("seq");
    int fd = open(path, oflags, 0644);
    if (fd < 0) {
        printf("open %s failed: errno %d\n", path, errno);
        return 2;
    }
    int rc = posix_trace_create_withlog(0, &a, fd, &trid);
    printf("create rc=%s\n", tc_errname(rc));
    if (rc != 0)
        return 0;
    CHECK(posix_trace_attr_destroy(&a));

    for (; argi < argc; argi++) {
        const char *s = argv[argi];
        if (strcmp(s, "start") == 0) {
            SHOW("start", posix_trace_start(trid));
        } else if (strcmp(s, "stop") == 0) {
            SHOW("stop", posix_trace_stop(trid));
        } else if (strcmp(s, "flush") == 0) {
            int64_t t0 = tc_mono_ns();
            rc = posix_trace_flush(trid);
            printf("flush rc=%s ms=%" PRId64 "\n", tc_errname(rc), (tc_mono_ns() - t0) / 1000000);
        } else if (strcmp(s, "clear") == 0) {
            SHOW("clear", posix_trace_clear(trid));
        } else if (strcmp(s, "shutdown") == 0) {
            int64_t t0 = tc_mono_ns();
            rc = posix_trace_shutdown(trid);
            printf("shutdown rc=%s ms=%" PRId64 "\n", tc_errname(rc),
                   (tc_mono_ns() - t0) / 1000000);
        } else if (strcmp(s, "status") == 0) {
            print_full_status("status");
        } else if (strncmp(s, "e:", 2) == 0) {
            uint64_t n = strtoull(s + 2, NULL, 0), first = seq;
            int64_t t0 = tc_mono_ns();
            record(n);
            int64_t t1 = tc_mono_ns();
            printf("recorded from=%" PRIu64 " n=%" PRIu64 " ms=%" PRId64 "\n", first, n,
                   (t1 - t0) / 1000000);
        } else if (strncmp(s, "ef:", 3) == 0) {
            char *end;
            uint64_t n = strtoull(s + 3, &end, 0), k = strtoull(end + 1, NULL, 0), first = seq;
            long nf = 0, bad = 0;
            int64_t t0 = tc_mono_ns();
            for (uint64_t done = 0; done < n; done += k) {
                record(n - done < k ? n - done : k);
                rc = posix_trace_flush(trid);
                nf++;
                if (rc != 0) {
                    bad++;
                    printf("flush rc=%s\n", tc_errname(rc));
                }
            }
            int64_t t1 = tc_mono_ns();
            printf("recorded from=%" PRIu64 " n=%" PRIu64 " ms=%" PRId64 "\n", first, n,
                   (t1 - t0) / 1000000);
            printf("flushes n=%ld bad=%ld\n", nf, bad);
        } else if (strncmp(s, "paced:", 6) == 0) {
            char *end;
            uint64_t n = strtoull(s + 6, &end, 0), first = seq;
            int64_t gap = strtoll(end + 1, NULL, 0);
            int64_t t0 = tc_mono_ns(), next = t0;
            for (uint64_t i = 0; i < n; i++) {
                while (tc_mono_ns() < next)
                    ;
                next += gap;
                record(1);
            }
            int64_t t1 = tc_mono_ns();
            printf("recorded from=%" PRIu64 " n=%" PRIu64 " ms=%" PRId64 "\n", first, n,
                   (t1 - t0) / 1000000);
        } else if (strncmp(s, "fsize:", 6) == 0) {
            struct rlimit rl;
            rl.rlim_cur = rl.rlim_max = strtoull(s + 6, NULL, 0);
            signal(SIGXFSZ, SIG_IGN);
            SHOW("setrlimit", setrlimit(RLIMIT_FSIZE, &rl) == 0 ? 0 : errno);
        } else if (strncmp(s, "w:", 2) == 0) {
            tc_sleep_ms(atol(s + 2));
            printf("slept\n");
        } else if (strncmp(s, "running:", 8) == 0) {
            /* waits (at most MS ms) for the stream to be RUNNING */
            struct posix_trace_status_info st;
            int64_t deadline = tc_mono_ns() + atol(s + 8) * 1000000LL;
            for (;;) {
                CHECK(posix_trace_get_status(trid, &st));
                if (st.posix_stream_status == POSIX_TRACE_RUNNING || tc_mono_ns() > deadline)
                    break;
                tc_sleep_ms(1);
            }
            printf("running %s\n", st.posix_stream_status == POSIX_TRACE_RUNNING ? "yes" : "TIMEOUT");
        } else if (strcmp(s, "size") == 0) {
            print_size();
        } else if (strcmp(s, "attr") == 0) {
            print_attr();
        } else if (strncmp(s, "loop:", 5) == 0) {
            char *end;
            uint64_t k = strtoull(s + 5, &end, 0);
            long us = *end == ':' ? atol(end + 1) : 0;
            printf("looping\n");
            fflush(stdout);
            for (long nf = 1;; nf++) {
                record(k);
                rc = posix_trace_flush(trid);
                if (rc != 0) {
                    printf("flush rc=%s\n", tc_errname(rc));
                    return 2;
                }
                if (nf <= 10 || nf % 100 == 0) {
                    printf("flushed n=%ld\n", nf);
                    fflush(stdout);
                }
                if (us > 0) {
                    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
                    nanosleep(&ts, NULL);
                }
            }
        } else if (strcmp(s, "exec") == 0) {
            printf("exec without shutdown\n");
            fflush(stdout);
            execl("/bin/true", "true", (char *)NULL);
            printf("exec failed: errno %d\n", errno);
            return 2;
        } else if (strcmp(s, "exit") == 0) {
            printf("exiting without shutdown\n");
            return 0;
        } else {
            printf("bad step %s\n", s);
            return 2;
        }
    }
    printf("done\n");
    return 0;
}
