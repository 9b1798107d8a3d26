/*
 * t041_log_roundtrip: writes a trace log from three threads, for
 * t048_log_dump to read back.
 *
 *   t041_log_roundtrip PATH
 *
 * Stream with log on PATH: stream-full-policy not set (FLUSH with a log),
 * log APPEND with log-max-size 1 (ignored by APPEND), name "roundtrip log",
 * inheritance INHERITED, max-data-size 256.  Event types "len0", "len1",
 * "len7", "len8", "len9", "len255", "len256", "len300" (data of that many
 * bytes; 300 > max-data-size is truncated when recorded) and the unnamed user
 * event (3 bytes).
 *
 * Phase 0: three threads each record ROUNDS rounds of the nine events; main
 * then calls posix_trace_flush and reads the log through a second,
 * read-only descriptor while the stream is still active.  Phase 1: the same
 * threads record again; main shuts the stream down.
 *
 * Prints "pid=", "main_tid=", "attr ...", "ids name=id ...", one line per
 * event recorded ("rec thr= tid= phase= id= len= t0= t1= data=", t0/t1 the
 * CLOCK_REALTIME before and after the posix_trace_event call), "flush rc=",
 * "midread ..." and "shutdown rc=".
 */
#include "tcommon.h"

#include <fcntl.h>

#define NTHR 3
#define ROUNDS 5
#define NLEN 9

static const size_t lens[NLEN] = { 0, 1, 7, 8, 9, 255, 256, 300, 3 };
static trace_event_id_t ids[NLEN];
static pthread_barrier_t bar;
static trace_id_t trid;

static void *worker(void *arg)
{
    int thr = (int)(intptr_t)arg;
    unsigned char data[300];
    char hex[2 * 300 + 1];
    for (int phase = 0; phase < 2; phase++) {
        pthread_barrier_wait(&bar); /* go */
        for (int r = 0; r < ROUNDS; r++) {
            for (int k = 0; k < NLEN; k++) {
                /* a different order per thread and round */
                int li = (k + thr + r) % NLEN;
                size_t L = lens[li];
                for (size_t j = 0; j < L; j++)
                    data[j] = (unsigned char)(thr * 97 + phase * 53 + r * 13 + li * 7 + j * 3);
                int64_t t0 = tc_now_ns();
                posix_trace_event(ids[li], data, L);
                int64_t t1 = tc_now_ns();
                size_t kept = L > 256 ? 256 : L;
                for (size_t j = 0; j < kept; j++)
                    sprintf(hex + 2 * j, "%02x", data[j]);
                hex[2 * kept] = '\0';
                printf("rec thr=%d tid=%lu phase=%d id=%u len=%zu t0=%" PRId64 " t1=%" PRId64
                       " data=%s\n", thr, (unsigned long)pthread_self(), phase,
                       (unsigned)ids[li], L, t0, t1, hex);
            }
        }
        pthread_barrier_wait(&bar); /* done */
    }
    return NULL;
}

/* The log as it is now, through another descriptor: names in order, user
 * events counted in runs. */
static void midread(const char *path)
{
    static tc_event e;
    trace_id_t rd;
    int fd = open(path, O_RDONLY);
    CHECK(fd < 0);
    int rc = posix_trace_open(fd, &rd);
    printf("midread open rc=%s", tc_errname(rc));
    if (rc != 0) {
        printf("\n");
        close(fd);
        return;
    }
    long user = 0;
    int un = 0;
    printf(" events=");
    for (;;) {
        CHECK(posix_trace_getnext_event(rd, &e.info, e.data, sizeof e.data, &e.len, &un));
        if (un)
            break;
        if (e.info.posix_event_id >= POSIX_TRACE_UNNAMED_USEREVENT) {
            user++;
            continue;
        }
        if (user)
            printf("user*%ld,", user);
        user = 0;
        printf("%u,", (unsigned)e.info.posix_event_id);
    }
    if (user)
        printf("user*%ld,", user);
    printf("end\n");
    CHECK(posix_trace_close(rd));
    close(fd);
}

int main(int argc, char **argv)
{
    trace_attr_t a;
    pthread_t t[NTHR];
    char name[16];
    tc_init();
    tc_watchdog(30);
    if (argc != 2) {
        printf("usage: t041_log_roundtrip PATH\n");
        return 2;
    }
    printf("pid=%ld main_tid=%lu\n", (long)getpid(), (unsigned long)pthread_self());
    for (int i = 0; i < NLEN - 1; i++) {
        snprintf(name, sizeof name, "len%zu", lens[i]);
        ids[i] = tc_open(name);
    }
    ids[NLEN - 1] = POSIX_TRACE_UNNAMED_USEREVENT;
    printf("ids");
    for (int i = 0; i < NLEN; i++)
        printf(" %zu=%u", lens[i], (unsigned)ids[i]);
    printf("\n");

    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd < 0);
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_setname(&a, "roundtrip log"));
    CHECK(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND));
    CHECK(posix_trace_attr_setlogsize(&a, 1));
    CHECK(posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED));
    CHECK(posix_trace_attr_setmaxdatasize(&a, 256));
    CHECK(posix_trace_create_withlog(0, &a, fd, &trid));
    CHECK(posix_trace_attr_destroy(&a));

    /* the attributes of the active stream, as the log must give them back */
    trace_attr_t g;
    char tn[TRACE_NAME_MAX];
    size_t ss = 0, md = 0, ls = 0;
    int sp = 0, lp = 0, inh = 0;
    struct timespec ct;
    CHECK(posix_trace_get_attr(trid, &g));
    CHECK(posix_trace_attr_getname(&g, tn));
    CHECK(posix_trace_attr_getstreamsize(&g, &ss));
    CHECK(posix_trace_attr_getmaxdatasize(&g, &md));
    CHECK(posix_trace_attr_getlogsize(&g, &ls));
    CHECK(posix_trace_attr_getstreamfullpolicy(&g, &sp));
    CHECK(posix_trace_attr_getlogfullpolicy(&g, &lp));
    CHECK(posix_trace_attr_getinherited(&g, &inh));
    CHECK(posix_trace_attr_getcreatetime(&g, &ct));
    printf("attr name=\"%s\" ssize=%zu maxdata=%zu lsize=%zu stream=%s log=%s inherit=%s "
           "create=%" PRId64 "\n", tn, ss, md, ls, tc_policy_name(sp), tc_policy_name(lp),
           tc_inherit_name(inh), tc_ts_ns(&ct));

    pthread_barrier_init(&bar, NULL, NTHR + 1);
    for (int i = 0; i < NTHR; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i));
    CHECK(posix_trace_start(trid));
    pthread_barrier_wait(&bar); /* phase 0 go */
    pthread_barrier_wait(&bar); /* phase 0 done */
    int rc = posix_trace_flush(trid);
    printf("flush rc=%s\n", tc_errname(rc));
    midread(argv[1]);
    pthread_barrier_wait(&bar); /* phase 1 go */
    pthread_barrier_wait(&bar); /* phase 1 done */
    rc = posix_trace_shutdown(trid);
    printf("shutdown rc=%s\n", tc_errname(rc));
    for (int i = 0; i < NTHR; i++)
        pthread_join(t[i], NULL);
    close(fd);
    return 0;
}
