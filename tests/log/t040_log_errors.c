/*
 * t040_log_errors: the error cases of the Trace Log functions, and the
 * choices around them (doc/semantics.md).
 *
 *   t040_log_errors DIR CASE
 *
 * DIR is a scratch directory for the log files.  CASE:
 *   badfd      create_withlog on fd -1, on a closed fd, on a read-only fd
 *   filetypes  each log policy on a FIFO, a socket, /dev/null (and a FIFO's
 *              bytes read back as a log)
 *   minsize    log-max-size bounds for LOOP and UNTIL_FULL; APPEND ignores it
 *   badattr    an attributes object never initialized, or destroyed
 *   defaults   the stream-full-policy with a log when none is set
 *   flush      posix_trace_flush without log, after shutdown, bad trid
 *   getnext    the getnext family on an active stream with log
 *   rewind     posix_trace_rewind/close on active streams
 *   flushing   flush status during and outside posix_trace_flush (a FIFO log
 *              that blocks the flush until read)
 *   open       posix_trace_open on files that are not logs
 *   truncate   a regular file holding data, its offset at the end
 *   oappend    a regular file holding data, open with O_APPEND
 */
#include "tcommon.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>

static const char *dir;

static char *pathof(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

static int create_log(int fd, int logpol, size_t lsize, trace_id_t *trid)
{
    trace_attr_t a;
    CHECK(posix_trace_attr_init(&a));
    if (logpol)
        CHECK(posix_trace_attr_setlogfullpolicy(&a, logpol));
    if (lsize)
        CHECK(posix_trace_attr_setlogsize(&a, lsize));
    int rc = posix_trace_create_withlog(0, &a, fd, trid);
    CHECK(posix_trace_attr_destroy(&a));
    return rc;
}

static int open_file(const char *name, int flags)
{
    int fd = open(pathof(name), flags, 0644);
    if (fd < 0) {
        printf("open %s: errno %d\n", name, errno);
        exit(2);
    }
    return fd;
}

/* create, then shutdown when it worked; prints "label create=.. shutdown=.." */
static void try_create(const char *label, int fd, int logpol, size_t lsize)
{
    trace_id_t trid;
    int rc = create_log(fd, logpol, lsize, &trid);
    printf("%s create rc=%s", label, tc_errname(rc));
    if (rc == 0)
        printf(" shutdown rc=%s", tc_errname(posix_trace_shutdown(trid)));
    printf("\n");
}

static void case_badfd(void)
{
    trace_id_t trid;
    SHOW("fd -1", create_log(-1, POSIX_TRACE_APPEND, 0, &trid));
    int fd = open_file("closed", O_RDWR | O_CREAT | O_TRUNC);
    close(fd);
    SHOW("closed fd", create_log(fd, POSIX_TRACE_APPEND, 0, &trid));
    fd = open_file("rdonly", O_RDWR | O_CREAT | O_TRUNC);
    close(fd);
    for (int p = POSIX_TRACE_LOOP; p <= POSIX_TRACE_APPEND; p++) {
        if (p == POSIX_TRACE_FLUSH)
            continue;
        fd = open_file("rdonly", O_RDONLY);
        printf("read-only fd %s", tc_policy_name(p));
        SHOW("", create_log(fd, p, 0, &trid));
        close(fd);
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY);
    SHOW("directory fd", create_log(fd, POSIX_TRACE_APPEND, 0, &trid));
    close(fd);
    /* nothing was written to the read-only file */
    struct stat sb;
    CHECK(stat(pathof("rdonly"), &sb) != 0);
    printf("read-only file size=%lld\n", (long long)sb.st_size);
}

static void case_filetypes(void)
{
    static const int pols[] = { POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND };
    char label[64];
    CHECK(mkfifo(pathof("fifo"), 0644) != 0);
    for (int i = 0; i < 3; i++) {
        int fd = open_file("fifo", O_RDWR);
        snprintf(label, sizeof label, "fifo %s", tc_policy_name(pols[i]));
        try_create(label, fd, pols[i], 65536);
        close(fd);
    }
    for (int i = 0; i < 3; i++) {
        int sv[2];
        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0);
        snprintf(label, sizeof label, "socket %s", tc_policy_name(pols[i]));
        try_create(label, sv[0], pols[i], 65536);
        close(sv[0]);
        close(sv[1]);
    }
    for (int i = 0; i < 3; i++) {
        int fd = open("/dev/null", O_WRONLY);
        CHECK(fd < 0);
        snprintf(label, sizeof label, "/dev/null %s", tc_policy_name(pols[i]));
        try_create(label, fd, pols[i], 65536);
        close(fd);
    }
    for (int i = 0; i < 3; i++) {
        int fd = open_file("regular", O_RDWR | O_CREAT | O_TRUNC);
        snprintf(label, sizeof label, "regular %s", tc_policy_name(pols[i]));
        try_create(label, fd, pols[i], 65536);
        close(fd);
    }

    /* An APPEND log written into a FIFO, read back from it as a log. */
    trace_id_t trid, rd;
    int fd = open_file("fifo", O_RDWR);
    CHECK(create_log(fd, POSIX_TRACE_APPEND, 0, &trid));
    trace_event_id_t ev;
    CHECK(posix_trace_trid_eventid_open(trid, "fifo_event", &ev));
    CHECK(posix_trace_start(trid));
    for (uint32_t i = 0; i < 5; i++)
        posix_trace_event(ev, &i, sizeof i);
    CHECK(posix_trace_shutdown(trid));
    CHECK(fcntl(fd, F_SETFL, O_NONBLOCK) != 0);
    int out = open_file("fromfifo", O_RDWR | O_CREAT | O_TRUNC);
    static unsigned char buf[1 << 16];
    long total = 0;
    for (;;) {
        ssize_t k = read(fd, buf, sizeof buf);
        if (k <= 0)
            break;
        CHECK(write(out, buf, (size_t)k) != k);
        total += k;
    }
    close(fd);
    printf("fifo bytes multiple_of_4096=%d\n", total > 0 && total % 4096 == 0);
    CHECK(posix_trace_open(out, &rd));
    static tc_event e;
    int n = 0, un = 0;
    char name[TRACE_EVENT_NAME_MAX + 1];
    printf("fifo log:");
    for (;;) {
        CHECK(posix_trace_getnext_event(rd, &e.info, e.data, sizeof e.data, &e.len, &un));
        if (un)
            break;
        CHECK(posix_trace_eventid_get_name(rd, e.info.posix_event_id, name));
        printf(" %s", name);
        if (strcmp(name, "fifo_event") == 0) {
            uint32_t v;
            memcpy(&v, e.data, sizeof v);
            printf("(%u)", v);
        }
        n++;
    }
    printf("\n");
    CHECK(posix_trace_close(rd));
    close(out);
}

static void case_minsize(void)
{
    /* doc: LOOP and UNTIL_FULL need log-max-size >= 4096 + 8 blocks, a block
     * being 4096 bytes with the default attributes */
    static const size_t sizes[] = { 1, 4096, 4096 + 7 * 4096, 4096 + 8 * 4096 - 1,
                                    4096 + 8 * 4096, 4096 + 8 * 4096 + 1 };
    static const int pols[] = { POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND };
    char label[64];
    for (int p = 0; p < 3; p++) {
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            int fd = open_file("min", O_RDWR | O_CREAT | O_TRUNC);
            snprintf(label, sizeof label, "%s lsize=%zu", tc_policy_name(pols[p]), sizes[i]);
            try_create(label, fd, pols[p], sizes[i]);
            close(fd);
        }
    }
}

static void case_badattr(void)
{
    trace_attr_t a;
    trace_id_t trid;
    int fd = open_file("badattr", O_RDWR | O_CREAT | O_TRUNC);
    memset(&a, 0, sizeof a);
    SHOW("zeroed attr", posix_trace_create_withlog(0, &a, fd, &trid));
    memset(&a, 0xa5, sizeof a);
    SHOW("garbage attr", posix_trace_create_withlog(0, &a, fd, &trid));
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_destroy(&a));
    SHOW("destroyed attr", posix_trace_create_withlog(0, &a, fd, &trid));
    CHECK(posix_trace_attr_init(&a));
    SHOW("NULL trid", posix_trace_create_withlog(0, &a, fd, NULL));
    /* FLUSH is for streams with log only */
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH));
    SHOW("create without log FLUSH", posix_trace_create(0, &a, &trid));
    int rc = posix_trace_create_withlog(0, &a, fd, &trid);
    printf("create_withlog FLUSH rc=%s", tc_errname(rc));
    if (rc == 0)
        printf(" shutdown rc=%s", tc_errname(posix_trace_shutdown(trid)));
    printf("\n");
    CHECK(posix_trace_attr_destroy(&a));
    struct stat sb;
    CHECK(fstat(fd, &sb));
    close(fd);
}

static void print_policies(const char *label, trace_id_t trid)
{
    trace_attr_t a;
    int sp = 0, lp = 0;
    size_t ls = 0;
    CHECK(posix_trace_get_attr(trid, &a));
    CHECK(posix_trace_attr_getstreamfullpolicy(&a, &sp));
    CHECK(posix_trace_attr_getlogfullpolicy(&a, &lp));
    CHECK(posix_trace_attr_getlogsize(&a, &ls));
    printf("%s stream=%s log=%s lsize=%zu\n", label, tc_policy_name(sp), tc_policy_name(lp), ls);
}

static void case_defaults(void)
{
    trace_attr_t a;
    trace_id_t trid;
    int fd = open_file("defaults", O_RDWR | O_CREAT | O_TRUNC);
    CHECK(posix_trace_create_withlog(0, NULL, fd, &trid));
    print_policies("attr NULL", trid);
    CHECK(posix_trace_shutdown(trid));

    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_create_withlog(0, &a, fd, &trid));
    print_policies("attr not set", trid);
    CHECK(posix_trace_shutdown(trid));
    /* the attributes object itself still says LOOP (no log known there) */
    int sp = 0;
    CHECK(posix_trace_attr_getstreamfullpolicy(&a, &sp));
    printf("attr object stream=%s\n", tc_policy_name(sp));

    for (int p = POSIX_TRACE_LOOP; p <= POSIX_TRACE_FLUSH; p++) {
        char label[64];
        CHECK(posix_trace_attr_setstreamfullpolicy(&a, p));
        CHECK(posix_trace_create_withlog(0, &a, fd, &trid));
        snprintf(label, sizeof label, "set %s", tc_policy_name(p));
        print_policies(label, trid);
        CHECK(posix_trace_shutdown(trid));
    }
    CHECK(posix_trace_attr_destroy(&a));
    /* a stream without log keeps LOOP */
    CHECK(posix_trace_create(0, NULL, &trid));
    print_policies("no log", trid);
    CHECK(posix_trace_shutdown(trid));
    close(fd);
}

static void case_flush(void)
{
    trace_id_t trid;
    CHECK(posix_trace_create(0, NULL, &trid));
    SHOW("flush without log", posix_trace_flush(trid));
    CHECK(posix_trace_start(trid));
    SHOW("flush without log running", posix_trace_flush(trid));
    CHECK(posix_trace_shutdown(trid));
    SHOW("flush after shutdown (no log)", posix_trace_flush(trid));

    int fd = open_file("flush", O_RDWR | O_CREAT | O_TRUNC);
    CHECK(posix_trace_create_withlog(0, NULL, fd, &trid));
    SHOW("flush suspended", posix_trace_flush(trid));
    CHECK(posix_trace_start(trid));
    SHOW("flush running", posix_trace_flush(trid));
    SHOW("shutdown", posix_trace_shutdown(trid));
    SHOW("flush after shutdown", posix_trace_flush(trid));
    SHOW("shutdown after shutdown", posix_trace_shutdown(trid));
    SHOW("flush trid 0", posix_trace_flush(0));
    SHOW("flush trid garbage", posix_trace_flush((trace_id_t)0x123456789abcULL));
    /* the fd stays open and the caller's */
    printf("fd still open=%d\n", fcntl(fd, F_GETFD) >= 0);
    close(fd);
}

static void case_getnext(void)
{
    trace_id_t trid;
    static tc_event e;
    int un = 0;
    int fd = open_file("getnext", O_RDWR | O_CREAT | O_TRUNC);
    CHECK(posix_trace_create_withlog(0, NULL, fd, &trid));
    trace_event_id_t ev = tc_open("ev");
    CHECK(posix_trace_start(trid));
    for (int i = 0; i < 10; i++)
        posix_trace_event(ev, &i, sizeof i);
    int64_t t0 = tc_mono_ns();
    SHOW("getnext", posix_trace_getnext_event(trid, &e.info, e.data, sizeof e.data, &e.len, &un));
    SHOW("trygetnext",
         posix_trace_trygetnext_event(trid, &e.info, e.data, sizeof e.data, &e.len, &un));
    struct timespec abst = tc_ns_ts(tc_now_ns() + 2000000000LL);
    SHOW("timedgetnext", posix_trace_timedgetnext_event(trid, &e.info, e.data, sizeof e.data,
                                                        &e.len, &un, &abst));
    printf("returned at once=%d\n", tc_mono_ns() - t0 < 1000000000LL);
    CHECK(posix_trace_stop(trid));
    SHOW("getnext stopped",
         posix_trace_getnext_event(trid, &e.info, e.data, sizeof e.data, &e.len, &un));
    SHOW("shutdown", posix_trace_shutdown(trid));
    close(fd);
}

static void case_rewind(void)
{
    trace_id_t trid;
    int fd = open_file("rewind", O_RDWR | O_CREAT | O_TRUNC);
    CHECK(posix_trace_create_withlog(0, NULL, fd, &trid));
    SHOW("rewind active with log", posix_trace_rewind(trid));
    SHOW("close active with log", posix_trace_close(trid));
    SHOW("shutdown", posix_trace_shutdown(trid));
    CHECK(posix_trace_create(0, NULL, &trid));
    SHOW("rewind active without log", posix_trace_rewind(trid));
    SHOW("close active without log", posix_trace_close(trid));
    SHOW("shutdown", posix_trace_shutdown(trid));
    close(fd);
}

static trace_id_t fl_trid;
static _Atomic int fl_done;
static int fl_rc = -1;

static void *flush_thread(void *arg)
{
    (void)arg;
    fl_rc = posix_trace_flush(fl_trid);
    atomic_store(&fl_done, 1);
    return NULL;
}

static const char *flush_status_of(trace_id_t trid)
{
    struct posix_trace_status_info st;
    int rc = posix_trace_get_status(trid, &st);
    if (rc != 0)
        return tc_errname(rc);
    return st.posix_stream_flush_status == POSIX_TRACE_FLUSHING ? "FLUSHING" :
           st.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING ? "NOT_FLUSHING" : "?";
}

/*
 * The log is a FIFO nobody reads yet: the flush of ~1 MB of events blocks in
 * write() once the pipe is full, so it is surely under way while main looks at
 * the status; then main reads the FIFO and the flush completes.
 */
static void case_flushing(void)
{
    trace_attr_t a;
    static unsigned char buf[1 << 16];
    CHECK(mkfifo(pathof("flushfifo"), 0644) != 0);
    int fd = open_file("flushfifo", O_RDWR);
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL));
    CHECK(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND));
    CHECK(posix_trace_create_withlog(0, &a, fd, &fl_trid));
    CHECK(posix_trace_attr_destroy(&a));
    trace_event_id_t ev = tc_open("ev");
    CHECK(posix_trace_start(fl_trid));
    uint64_t d[2] = { 0, 0 };
    for (int i = 0; i < 20000; i++, d[0]++)
        posix_trace_event(ev, d, sizeof d);
    printf("before flush=%s\n", flush_status_of(fl_trid));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, flush_thread, NULL));
    int seen = 0;
    for (int i = 0; i < 5000 && !seen; i++) {
        seen = strcmp(flush_status_of(fl_trid), "FLUSHING") == 0;
        if (!seen)
            tc_sleep_ms(1);
    }
    printf("during flush=%s returned=%d\n", seen ? "FLUSHING" : "not seen",
           atomic_load(&fl_done));
    /* a reader of our own (O_NONBLOCK on fd would reach the writer too) */
    int rfd = open(pathof("flushfifo"), O_RDONLY | O_NONBLOCK);
    CHECK(rfd < 0);
    long total = 0;
    for (;;) {
        ssize_t k = read(rfd, buf, sizeof buf);
        if (k > 0) {
            total += k;
            continue;
        }
        if (atomic_load(&fl_done))
            break;
        tc_sleep_ms(1);
    }
    pthread_join(t, NULL);
    while (read(rfd, buf, sizeof buf) > 0)
        ;
    printf("flush rc=%s fifo_holds_the_events=%d\n", tc_errname(fl_rc), total > 20000 * 16);
    printf("after flush=%s\n", flush_status_of(fl_trid));
    struct posix_trace_status_info st;
    CHECK(posix_trace_get_status(fl_trid, &st));
    printf("flush_error=%s\n", tc_errname(st.posix_stream_flush_error));
    /* the shutdown's flush is small: it fits in the pipe */
    SHOW("shutdown", posix_trace_shutdown(fl_trid));
    close(rfd);
    close(fd);
}

static void case_open(void)
{
    trace_id_t trid;
    int fd = open("/dev/null", O_RDONLY);
    SHOW("open /dev/null", posix_trace_open(fd, &trid));
    close(fd);
    fd = open_file("empty", O_RDWR | O_CREAT | O_TRUNC);
    SHOW("open empty file", posix_trace_open(fd, &trid));
    static unsigned char zeros[8192];
    CHECK(write(fd, zeros, sizeof zeros) != (ssize_t)sizeof zeros);
    SHOW("open zeros", posix_trace_open(fd, &trid));
    close(fd);
    fd = open_file("text", O_RDWR | O_CREAT | O_TRUNC);
    for (int i = 0; i < 500; i++)
        CHECK(write(fd, "this is not a trace log\n", 24) != 24);
    SHOW("open text", posix_trace_open(fd, &trid));
    close(fd);
    fd = open(dir, O_RDONLY | O_DIRECTORY);
    SHOW("open directory", posix_trace_open(fd, &trid));
    close(fd);

    /* a real log, with one byte of its header changed */
    fd = open_file("real", O_RDWR | O_CREAT | O_TRUNC);
    CHECK(posix_trace_create_withlog(0, NULL, fd, &trid));
    CHECK(posix_trace_shutdown(trid));
    SHOW("open real log", posix_trace_open(fd, &trid));
    SHOW("close it", posix_trace_close(trid));
    unsigned char b;
    CHECK(pread(fd, &b, 1, 100) != 1);
    b ^= 0x40;
    CHECK(pwrite(fd, &b, 1, 100) != 1);
    SHOW("open header corrupted", posix_trace_open(fd, &trid));
    close(fd);
}

static void make_garbage(const char *name, int extra_flags, int *fdp)
{
    static unsigned char junk[100 * 1024];
    memset(junk, 'x', sizeof junk);
    int fd = open_file(name, O_RDWR | O_CREAT | O_TRUNC);
    CHECK(write(fd, junk, sizeof junk) != (ssize_t)sizeof junk);
    close(fd);
    fd = open_file(name, O_RDWR | extra_flags);
    CHECK(lseek(fd, 0, SEEK_END) < 0);
    *fdp = fd;
}

static void write_read_back(const char *label, const char *name, int extra_flags, int pol)
{
    trace_attr_t a;
    trace_id_t trid, rd;
    int fd;
    make_garbage(name, extra_flags, &fd);
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_setlogfullpolicy(&a, pol));
    CHECK(posix_trace_attr_setlogsize(&a, 65536));
    int rc = posix_trace_create_withlog(0, &a, fd, &trid);
    CHECK(posix_trace_attr_destroy(&a));
    printf("%s %s create rc=%s", label, tc_policy_name(pol), tc_errname(rc));
    if (rc != 0) {
        printf("\n");
        close(fd);
        return;
    }
    trace_event_id_t ev = tc_open("ev");
    CHECK(posix_trace_start(trid));
    for (uint32_t i = 0; i < 3; i++)
        posix_trace_event(ev, &i, sizeof i);
    CHECK(posix_trace_shutdown(trid));
    struct stat sb;
    CHECK(fstat(fd, &sb));
    char magic[9] = { 0 };
    CHECK(pread(fd, magic, 8, 0) != 8);
    printf(" magic_at_0=%d smaller=%d", strcmp(magic, "PXTRACEL") == 0,
           sb.st_size < 100 * 1024);
    close(fd);
    fd = open_file(name, O_RDONLY);
    rc = posix_trace_open(fd, &rd);
    printf(" open rc=%s", tc_errname(rc));
    if (rc == 0) {
        static tc_event e;
        int un = 0, n = 0;
        for (;;) {
            CHECK(posix_trace_getnext_event(rd, &e.info, e.data, sizeof e.data, &e.len, &un));
            if (un)
                break;
            n += e.info.posix_event_id == ev;
        }
        printf(" user_events=%d", n);
        CHECK(posix_trace_close(rd));
    }
    printf("\n");
    close(fd);
}

int main(int argc, char **argv)
{
    tc_init();
    tc_watchdog(30);
    if (argc != 3) {
        printf("usage: t040_log_errors DIR CASE\n");
        return 2;
    }
    dir = argv[1];
    const char *c = argv[2];
    if (strcmp(c, "badfd") == 0)
        case_badfd();
    else if (strcmp(c, "filetypes") == 0)
        case_filetypes();
    else if (strcmp(c, "minsize") == 0)
        case_minsize();
    else if (strcmp(c, "badattr") == 0)
        case_badattr();
    else if (strcmp(c, "defaults") == 0)
        case_defaults();
    else if (strcmp(c, "flush") == 0)
        case_flush();
    else if (strcmp(c, "getnext") == 0)
        case_getnext();
    else if (strcmp(c, "rewind") == 0)
        case_rewind();
    else if (strcmp(c, "flushing") == 0)
        case_flushing();
    else if (strcmp(c, "open") == 0)
        case_open();
    else if (strcmp(c, "truncate") == 0) {
        write_read_back("offset at end", "trunc", 0, POSIX_TRACE_APPEND);
        write_read_back("offset at end", "trunc", 0, POSIX_TRACE_UNTIL_FULL);
        write_read_back("offset at end", "trunc", 0, POSIX_TRACE_LOOP);
    } else if (strcmp(c, "oappend") == 0) {
        write_read_back("O_APPEND", "oapp", O_APPEND, POSIX_TRACE_APPEND);
        write_read_back("O_APPEND", "oapp", O_APPEND, POSIX_TRACE_UNTIL_FULL);
        write_read_back("O_APPEND", "oapp", O_APPEND, POSIX_TRACE_LOOP);
    } else {
        printf("bad case %s\n", c);
        return 2;
    }
    printf("done\n");
    return 0;
}
